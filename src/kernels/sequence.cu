// sequence.cu -- arange and linspace, written straight into the output
// dtype so no temporary array and no cast pass are needed.
#include "kernel_common.cuh"

// ============================== kernels ====================================

// The arithmetic type NumPy's fill loop uses for T: the type itself, float
// for half, int64 for integers (wrapping on the final conversion).
template <class T> struct SeqArith { using type = T; };
template <> struct SeqArith<__half> { using type = float; };

// start + i*delta rounded twice, as NumPy's loops do: the explicit _rn
// intrinsics stop nvcc from contracting it into one fused multiply-add,
// which would differ from NumPy in the last bit.
__device__ __forceinline__ double seq_d(double a, int64_t i, double d) { return __dadd_rn(a, __dmul_rn((double)i, d)); }
__device__ __forceinline__ float seq_f(float a, int64_t i, float d) { return __fadd_rn(a, __fmul_rn((float)i, d)); }
template <class A>
__device__ __forceinline__ A seq_t(A a, int64_t i, A d)
{
    if constexpr (std::is_same<A, float>::value) return seq_f(a, i, d);
    else return seq_d(a, i, d);
}

template <class T>
__device__ __forceinline__ T seq_value(int mode, int64_t i, const ga_kscalar &a, const ga_kscalar &d)
{
    if constexpr (ga_is_complex<T>::value) {
        using P = typename ga_complex_part<T>::type;
        if (mode == 0)
            return T{seq_t<P>((P)a.v.f[0], i, (P)d.v.f[0]), seq_t<P>((P)a.v.f[1], i, (P)d.v.f[1])};
        return T{(P)seq_d(a.v.f[0], i, d.v.f[0]), (P)seq_d(a.v.f[1], i, d.v.f[1])};
    } else if constexpr (ga_is_float<T>) {
        using A = typename SeqArith<T>::type;
        if (mode == 0)
            return ga_convert<T>(seq_t<A>((A)a.v.f[0], i, (A)d.v.f[0]));
        return ga_convert<T>(seq_d(a.v.f[0], i, d.v.f[0]));
    } else if constexpr (std::is_same<T, bool>::value) {
        return mode == 0 ? (a.v.i + i * d.v.i) != 0 : seq_d(a.v.f[0], i, d.v.f[0]) != 0.0;
    } else {
        if (mode == 0)
            return (T)(int64_t)((uint64_t)a.v.i + (uint64_t)i * (uint64_t)d.v.i);
        return ga_convert<T>(floor(seq_d(a.v.f[0], i, d.v.f[0]))); // NumPy 2: floor
    }
}

template <class T>
__global__ void k_sequence(int mode, int64_t n, T *dst, ga_kscalar start, ga_kscalar delta,
                           int last, ga_kscalar stop)
{
    GA_GRID_STRIDE(i, n) {
        if (last && i == n - 1)
            dst[i] = seq_value<T>(1, 0, stop, delta);
        else
            dst[i] = seq_value<T>(mode, i, start, delta);
    }
}

// ============================== launchers ==================================

namespace {
struct SeqLaunch {
    int mode; int64_t n; char *dst; const ga_kscalar *start, *delta; int last;
    const ga_kscalar *stop; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        k_sequence<T><<<ga_grid(n), GA_BLOCK, 0, stream>>>(mode, n, (T *)dst, *start, *delta,
                                                          last, *stop);
        return cudaGetLastError();
    }
};
} // namespace

extern "C" cudaError_t ga_launch_sequence(ga_type type, int mode, int64_t n, char *dst,
                                          const ga_kscalar *start, const ga_kscalar *delta,
                                          int last, const ga_kscalar *stop,
                                          cudaStream_t stream)
{
    if (n == 0) return cudaSuccess;
    return ga_visit_type(type, SeqLaunch{mode, n, dst, start, delta, last, stop, stream});
}
