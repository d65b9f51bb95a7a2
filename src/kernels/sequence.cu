// sequence.cu -- arange and linspace, written straight into the output
// dtype so no temporary array and no cast pass are needed.
#include "kernel_common.cuh"

// ============================== kernels ====================================

// The arithmetic type NumPy's fill loop uses for T: the type itself, float
// for half, int64 for integers (wrapping on the final conversion).
template <class T> struct SeqArith { using type = T; };
template <> struct SeqArith<__half> { using type = float; };

template <class T>
__device__ __forceinline__ T seq_value(int mode, int64_t i, const ga_kscalar &a, const ga_kscalar &d)
{
    if constexpr (ga_is_complex<T>::value) {
        using P = typename ga_complex_part<T>::type;
        if (mode == 0)
            return T{(P)a.v.f[0] + (P)i * (P)d.v.f[0], (P)a.v.f[1] + (P)i * (P)d.v.f[1]};
        return T{(P)(a.v.f[0] + (double)i * d.v.f[0]), (P)(a.v.f[1] + (double)i * d.v.f[1])};
    } else if constexpr (ga_is_float<T>) {
        using A = typename SeqArith<T>::type;
        if (mode == 0)
            return ga_convert<T>((A)a.v.f[0] + (A)i * (A)d.v.f[0]);
        return ga_convert<T>(a.v.f[0] + (double)i * d.v.f[0]);
    } else if constexpr (std::is_same<T, bool>::value) {
        return mode == 0 ? (a.v.i + i * d.v.i) != 0 : (a.v.f[0] + (double)i * d.v.f[0]) != 0.0;
    } else {
        if (mode == 0)
            return (T)(int64_t)((uint64_t)a.v.i + (uint64_t)i * (uint64_t)d.v.i);
        return ga_convert<T>(floor(a.v.f[0] + (double)i * d.v.f[0])); // NumPy 2: floor
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
