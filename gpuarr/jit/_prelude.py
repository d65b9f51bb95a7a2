"""C++ helpers that generated kernels include when they use them.

Python's and NumPy's operators differ from C's for floor division,
remainder, powers of integers and shifts; these helpers follow NumPy's
definitions, the same ones gpuarr's precompiled functors implement
(src/kernels/ufunc_ops.cuh).  They are restated here because that header
is built on thrust/complex.h, which NVRTC cannot compile without the host
C++ library, and because a jit kernel should compile in tens of
milliseconds: each helper is a few lines, emitted only when used.

Complex numbers are two-field structs with NumPy's layout, 8-byte aligned
as gpuarr's ga_c64/ga_c128 (not cuda::std::complex: that needs the CCCL
headers, which the NVRTC wheel does not ship, and costs ~0.8 s of
compilation per kernel).
"""

__all__ = ["SNIPPETS", "assemble"]

_COMPLEX = r"""
struct __align__(8) jt_complex64 {
    float re, im;
    __device__ jt_complex64() {}
    __device__ jt_complex64(float r, float i = 0.0f) : re(r), im(i) {}
};
struct __align__(16) jt_complex128 {
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

_FLOORDIV = r"""
template <class T> __device__ __forceinline__ T jt_floordiv_s(T a, T b)
{   /* NumPy: division by zero gives 0; rounds towards minus infinity */
    if (b == 0) return 0;
    if (b == (T)-1) return (T)(0 - (unsigned long long)a);
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}
template <class T> __device__ __forceinline__ T jt_mod_s(T a, T b)
{   /* NumPy: the sign of the divisor; by zero gives 0 */
    if (b == 0 || b == (T)-1) return 0;
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
template <class T> __device__ __forceinline__ T jt_floordiv_u(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); }
template <class T> __device__ __forceinline__ T jt_mod_u(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }
template <class T> __device__ __forceinline__ T jt_divmod_f(T a, T b, T *modulus)
{   /* NumPy's npy_divmod */
    T mod = fmod(a, b);
    if (b == 0) { *modulus = mod; return a / b; }
    T div = (a - mod) / b;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) { mod += b; div -= (T)1; }
    } else {
        mod = copysign((T)0, b);
    }
    T floordiv;
    if (div != 0) {
        floordiv = floor(div);
        if (div - floordiv > (T)0.5) floordiv += (T)1;
    } else {
        floordiv = copysign((T)0, a / b);
    }
    *modulus = mod;
    return floordiv;
}
template <class T> __device__ __forceinline__ T jt_floordiv_f(T a, T b) { T m; return jt_divmod_f(a, b, &m); }
template <class T> __device__ __forceinline__ T jt_mod_f(T a, T b) { T m; jt_divmod_f(a, b, &m); return m; }
"""

_IPOW = r"""
template <class T> __device__ __forceinline__ T jt_ipow(T a, T b)
{   /* by squaring; a negative exponent gives 0 (1 or -1 for bases 1 and -1), as gpuarr */
    if (b < 0) return (T)(a == 1 ? 1 : (a == (T)-1 ? ((b & 1) ? -1 : 1) : 0));
    T r = 1;
    unsigned long long e = (unsigned long long)b;
    while (e) {
        if (e & 1) r = (T)(r * a);
        a = (T)(a * a);
        e >>= 1;
    }
    return r;
}
"""

_SHIFT = r"""
template <class T> __device__ __forceinline__ T jt_lshift(T a, T b)
{   /* NumPy: shifting by the width or more gives 0 */
    return (b < 0 || (unsigned long long)b >= 8 * sizeof(T)) ? (T)0 : (T)(a << b);
}
template <class T> __device__ __forceinline__ T jt_rshift(T a, T b)
{   /* NumPy: by the width or more gives 0, or -1 for a negative a */
    if (b < 0 || (unsigned long long)b >= 8 * sizeof(T)) return (T)(a < 0 ? -1 : 0);
    return (T)(a >> b);
}
"""

_MINMAX = r"""
template <class T> __device__ __forceinline__ T jt_maximum(T a, T b)
{   /* NumPy: NaN wins (a != a only for NaN) */
    return a != a ? a : (b != b ? b : (a >= b ? a : b));
}
template <class T> __device__ __forceinline__ T jt_minimum(T a, T b)
{
    return a != a ? a : (b != b ? b : (a <= b ? a : b));
}
template <class T> __device__ __forceinline__ T jt_sign(T a) { return (T)(a > 0 ? 1 : (a < 0 ? -1 : a)); }
template <class T> __device__ __forceinline__ T jt_iabs(T a) { return (T)(a < 0 ? -a : a); }
"""

SNIPPETS = {"complex": _COMPLEX, "floordiv": _FLOORDIV, "ipow": _IPOW, "shift": _SHIFT,
            "minmax": _MINMAX}
_ORDER = ("complex", "floordiv", "ipow", "shift", "minmax")


def assemble(used):
    """The helper source for the set of snippet names ``used``, in a fixed
    order."""
    return "".join(SNIPPETS[name] for name in _ORDER if name in used)
