"""What generated kernels put before their code, only when they use it.

Python's and NumPy's operators differ from C's for floor division,
remainder, powers of integers, shifts, maximum/minimum (NaN) and sign;
kernels that use one call gpuarr's functors for it (``op_floor_divide()(a,
b)``, ...) from src/kernels/ufunc_ops.cuh, the header the package's own
ufuncs are built from, so jit follows gpuarr's definitions rather than a
copy of them.  The header compiles under NVRTC with gpuarr's headers only
(``-I`` ``gpuarr.cuda.compiler.include_dir()``, which the translation's
``options`` carry) and adds some 20 ms to a kernel's compilation (half of
it <cuda/std/cstdint>, which kernel_common.cuh takes from the toolkit when
its headers are found), so only kernels that need it include it: the rest
compile without a header.

Complex numbers are jit's own two-field structs with NumPy's layout, and
their few operations are written here.
"""

__all__ = ["SNIPPETS", "assemble"]

# jit's own complex, not ufunc_ops.cuh's (libcu++'s: ~0.7 s more NVRTC time a kernel)
_COMPLEX = r"""
struct __align__(8) jt_complex64 {
    float re, im;
    __device__ jt_complex64() {}
    __device__ jt_complex64(float r, float i = 0.0f) : re(r), im(i) {}
};
struct __align__(8) jt_complex128 {     /* 8, as NumPy and ga_c128: views at any legal offset load safely */
    double re, im;
    __device__ jt_complex128() {}
    __device__ jt_complex128(double r, double i = 0.0) : re(r), im(i) {}
};
#define JT_COMPLEX_OPS(C, R, HYPOT, FABS)                                               \
__device__ __forceinline__ C operator+(C a, C b) { return C(a.re + b.re, a.im + b.im); } \
__device__ __forceinline__ C operator-(C a, C b) { return C(a.re - b.re, a.im - b.im); } \
__device__ __forceinline__ C operator-(C a) { return C(-a.re, -a.im); }                 \
__device__ __forceinline__ C operator*(C a, C b)                                         \
{ return C(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }                      \
__device__ __forceinline__ C operator/(C a, C b)                                         \
{   /* Smith's algorithm, as NumPy */                                                   \
    if (FABS(b.re) >= FABS(b.im)) {                                                      \
        if (b.re == 0 && b.im == 0) return C(a.re / FABS(b.re), a.im / FABS(b.re));      \
        R rat = b.im / b.re, scl = (R)1 / (b.re + b.im * rat);                          \
        return C((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);                  \
    }                                                                                    \
    R rat = b.re / b.im, scl = (R)1 / (b.im + b.re * rat);                              \
    return C((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);                      \
}                                                                                        \
__device__ __forceinline__ bool operator==(C a, C b) { return a.re == b.re && a.im == b.im; } \
__device__ __forceinline__ bool operator!=(C a, C b) { return !(a == b); }              \
__device__ __forceinline__ R jt_abs(C a) { return HYPOT(a.re, a.im); }                   \
__device__ __forceinline__ C jt_conj(C a) { return C(a.re, -a.im); }                     \
__device__ __forceinline__ bool jt_truth(C a) { return a.re != 0 || a.im != 0; }
JT_COMPLEX_OPS(jt_complex64, float, hypotf, fabsf)
JT_COMPLEX_OPS(jt_complex128, double, hypot, fabs)
"""

SNIPPETS = {"ufunc_ops": '#include "ufunc_ops.cuh"\n', "complex": _COMPLEX}
_ORDER = ("ufunc_ops", "complex")


def assemble(used):
    """The helper source for the set of snippet names ``used``, in a fixed
    order."""
    return "".join(SNIPPETS[name] for name in _ORDER if name in used)
