// kernel_common.cuh -- what every kernel family shares: the element types,
// NumPy's conversions between them, N-d offset arithmetic and launch sizing.
//
// User kernels compiled at run time (ElementwiseKernel, ReductionKernel,
// fuse, jit) include this header and ufunc_ops.cuh too, through NVRTC,
// which may come without the CUDA toolkit's headers (the pip wheel): the
// host parts (type visitors, launch sizing) are left out there, the
// integer types are declared here, and
// float16 and complex need the toolkit's cuda_fp16.h and libcu++ only when a
// kernel uses them (GA_RTC_HALF, GA_RTC_COMPLEX; otherwise the few half
// functions are only declared).
#ifndef GA_KERNEL_COMMON_CUH
#define GA_KERNEL_COMMON_CUH

#ifdef __CUDACC_RTC__
/* NVRTC has no <stdint.h>: the integer types are declared here, as libcu++'s
 * <cuda/std/cstdint> declares them under NVRTC (reading that costs NVRTC
 * ~11 ms a compile; an alias declared twice with one type is allowed, so
 * kernels that include it too still compile).  A host compiler reading this
 * branch (tests/test_jit.py's emulator) has its own. */
#if __has_include(<stdint.h>)
#include <stdint.h>
#else
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef unsigned long long uintptr_t;
#endif
#if defined(GA_RTC_HALF) || defined(GA_RTC_COMPLEX)   /* libcu++'s complex includes it */
#include <cuda_fp16.h>
#else
struct __half { unsigned short __x; };   // cuda_fp16.h's layout; nothing here computes on it
__device__ float __half2float(__half);
__device__ __half __float2half(float);
__device__ __half __double2half(double);
__device__ bool __hisnan(__half);
#endif
#include "kernel_types.h"
#else
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>
#include "kernels.h"
#endif

// ---------------------------------------------------------------------------
// The few type traits the shared headers need, written here rather than
// taken from <type_traits> or libcu++: NVRTC has no <type_traits>, and
// libcu++'s costs it most of a second on every user-kernel compile.
// ---------------------------------------------------------------------------
template <bool V> struct ga_bool_constant { static constexpr bool value = V; };
using ga_true_type = ga_bool_constant<true>;
using ga_false_type = ga_bool_constant<false>;
template <class A, class B> struct ga_same_t : ga_false_type {};
template <class A> struct ga_same_t<A, A> : ga_true_type {};
template <class A, class B> constexpr bool ga_same = ga_same_t<A, B>::value;

// Integer types: whether signed, and the unsigned type of the same width.
template <class T> struct ga_int_traits { static constexpr bool integral = false, is_signed = false; };
#define GA_INT_TRAITS(T, S, U)                                                  \
    template <> struct ga_int_traits<T> {                                      \
        static constexpr bool integral = true, is_signed = S;                  \
        using unsigned_type = U;                                               \
    };
GA_INT_TRAITS(bool, false, bool)
GA_INT_TRAITS(int8_t, true, uint8_t)
GA_INT_TRAITS(int16_t, true, uint16_t)
GA_INT_TRAITS(int32_t, true, uint32_t)
GA_INT_TRAITS(int64_t, true, uint64_t)
GA_INT_TRAITS(uint8_t, false, uint8_t)
GA_INT_TRAITS(uint16_t, false, uint16_t)
GA_INT_TRAITS(uint32_t, false, uint32_t)
GA_INT_TRAITS(uint64_t, false, uint64_t)
#undef GA_INT_TRAITS
template <class T> constexpr bool ga_integral = ga_int_traits<T>::integral;
template <class T> constexpr bool ga_signed = ga_int_traits<T>::is_signed;
template <class T> using ga_unsigned = typename ga_int_traits<T>::unsigned_type;
template <class T> constexpr bool ga_floating = ga_same<T, float> || ga_same<T, double>;
template <bool C, class A, class B> struct ga_conditional { using type = A; };
template <class A, class B> struct ga_conditional<false, A, B> { using type = B; };

// ---------------------------------------------------------------------------
// Element types.  Complex numbers are plain structs with NumPy's layout and
// alignment (8 for complex128), so a view at any legal offset loads safely.
// ---------------------------------------------------------------------------
struct alignas(8) ga_c64 { float re, im; };
struct alignas(8) ga_c128 { double re, im; };

template <class T> struct ga_is_complex : ga_false_type {};
template <> struct ga_is_complex<ga_c64> : ga_true_type {};
template <> struct ga_is_complex<ga_c128> : ga_true_type {};

template <class T> struct ga_complex_part { using type = T; };
template <> struct ga_complex_part<ga_c64> { using type = float; };
template <> struct ga_complex_part<ga_c128> { using type = double; };

template <class T>
constexpr bool ga_is_half = ga_same<T, __half>;
template <class T>
constexpr bool ga_is_float = ga_floating<T> || ga_is_half<T>;

#ifndef __CUDACC_RTC__
// Visit the C++ type behind a ga_type code: f.template operator()<T>().
template <class F>
__host__ inline cudaError_t ga_visit_type(ga_type t, F &&f)
{
    switch (t) {
    case GA_BOOL: return f.template operator()<bool>();
    case GA_INT8: return f.template operator()<int8_t>();
    case GA_INT16: return f.template operator()<int16_t>();
    case GA_INT32: return f.template operator()<int32_t>();
    case GA_INT64: return f.template operator()<int64_t>();
    case GA_UINT8: return f.template operator()<uint8_t>();
    case GA_UINT16: return f.template operator()<uint16_t>();
    case GA_UINT32: return f.template operator()<uint32_t>();
    case GA_UINT64: return f.template operator()<uint64_t>();
    case GA_FLOAT16: return f.template operator()<__half>();
    case GA_FLOAT32: return f.template operator()<float>();
    case GA_FLOAT64: return f.template operator()<double>();
    case GA_COMPLEX64: return f.template operator()<ga_c64>();
    case GA_COMPLEX128: return f.template operator()<ga_c128>();
    default: return cudaErrorInvalidValue;
    }
}

// f restricted to the types Ts: a visitor (ga_visit_type, ga_visit_size)
// given ga_only<Ts...>(f) instantiates f for those alone and answers
// cudaErrorInvalidValue for any other type, so a launcher that serves a few
// dtypes states them once: ga_visit_type(t, ga_only<float, double>(f)).
template <class F, class... Ts>
struct ga_only_visitor {
    F &f;
    template <class T> cudaError_t operator()()
    {
        if constexpr ((ga_same<T, Ts> || ...))
            return f.template operator()<T>();
        else
            return cudaErrorInvalidValue;
    }
};
template <class... Ts, class F>
__host__ inline ga_only_visitor<std::remove_reference_t<F>, Ts...> ga_only(F &&f)
{
    return {f};
}
#endif

// ---------------------------------------------------------------------------
// Conversions, following NumPy (C casts between integers wrap; real ->
// complex has zero imaginary part; complex -> real drops it; -> bool tests
// for non-zero).  Floating -> integer: NumPy leaves out-of-range values
// undefined; on x86 NumPy's small-integer casts go through int32, so we do
// the same (-1.0 -> uint8 gives 255 as on the CPU).  Out-of-range values
// and NaN saturate as the GPU's conversion instructions do.
// ---------------------------------------------------------------------------
template <class D, class S>
__device__ __forceinline__ D ga_float_to_int(S s)
{
    if constexpr (sizeof(D) < 4 || ga_same<D, int32_t>)
        return (D)(int32_t)s;
    else if constexpr (ga_same<D, uint32_t> || ga_same<D, int64_t>)
        return (D)(int64_t)s;
    else /* uint64 */
        return s >= (S)9223372036854775808.0 ? (D)s : (D)(int64_t)s;
}

template <class D, class S>
__device__ __forceinline__ D ga_convert(S s)
{
    if constexpr (ga_same<D, S>) {
        return s;
    } else if constexpr (ga_same<D, bool>) {
        if constexpr (ga_is_complex<S>::value) return s.re != 0 || s.im != 0;
        else if constexpr (ga_is_half<S>) return __half2float(s) != 0.0f;
        else return s != S(0);
    } else if constexpr (ga_is_complex<D>::value) {
        using P = typename ga_complex_part<D>::type;
        if constexpr (ga_is_complex<S>::value) return D{(P)s.re, (P)s.im};
        else return D{ga_convert<P>(s), (P)0};
    } else if constexpr (ga_is_complex<S>::value) {
        return ga_convert<D>(s.re);
    } else if constexpr (ga_is_half<S>) {
        return ga_convert<D>(__half2float(s));
    } else if constexpr (ga_is_half<D>) {
        if constexpr (ga_same<S, double>) return __double2half(s);
        else return __float2half((float)s);
    } else if constexpr (ga_floating<S> && ga_integral<D>) {
        return ga_float_to_int<D>(s);
    } else {
        return (D)s;
    }
}

// ---------------------------------------------------------------------------
// N-d offsets: linear index -> byte offset for one operand, innermost
// dimension last (C order), as the host collapsed it.
// ---------------------------------------------------------------------------
__device__ __forceinline__ int64_t ga_offset(int64_t i, const ga_kshape &sh, const ga_kstrides &st)
{
    int64_t off = 0;
    for (int d = sh.ndim - 1; d > 0; --d) {
        int64_t n = sh.shape[d];
        int64_t q = i / n;
        off += (i - q * n) * st.s[d];
        i = q;
    }
    return off + i * st.s[0];
}

__device__ __forceinline__ void ga_offset2(int64_t i, const ga_kshape &sh,
                                           const ga_kstrides &a, const ga_kstrides &b,
                                           int64_t *oa, int64_t *ob)
{
    int64_t x = 0, y = 0;
    for (int d = sh.ndim - 1; d > 0; --d) {
        int64_t n = sh.shape[d];
        int64_t q = i / n;
        int64_t r = i - q * n;
        x += r * a.s[d];
        y += r * b.s[d];
        i = q;
    }
    *oa = x + i * a.s[0];
    *ob = y + i * b.s[0];
}

#ifndef __CUDACC_RTC__
static inline int64_t ga_kshape_size(const ga_kshape *sh)
{
    int64_t n = 1;
    for (int d = 0; d < sh->ndim; ++d)
        n *= sh->shape[d];
    return n;
}

// Launch sizing: a grid-stride loop over n work items with 256 threads a
// block; the grid is capped (each thread then takes several items) so huge
// arrays do not need more blocks than the hardware schedules usefully.
#define GA_BLOCK 256
static inline unsigned int ga_grid(int64_t n)
{
    int64_t blocks = (n + GA_BLOCK - 1) / GA_BLOCK;
    const int64_t cap = 1 << 16;
    if (blocks > cap) blocks = cap;
    return (unsigned int)(blocks < 1 ? 1 : blocks);
}

#endif

// A kernel parameter that is a struct indexed by a run-time dimension
// (ga_kshape, ga_kstrides and the structs holding them): read in place from
// the parameter space.  Without __grid_constant__ ptxas copies such a struct
// to every thread's stack when its address is taken (k_copy_nd: 256 bytes a
// thread, and a 2048^2 float64 copy into a padded buffer took 395 us on the
// H100 instead of ~25).
#define GA_PARAM const __grid_constant__

#define GA_GRID_STRIDE(i, n) \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (int64_t)gridDim.x * blockDim.x)

// The warp's inclusive sum of x: lane l gets the sum over lanes 0..l (all
// 32 lanes must call it).
template <class T>
__device__ __forceinline__ T ga_warp_inclusive_sum(T x)
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const T y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o)
            x += y;
    }
    return x;
}

// Type of a given size, for type-blind kernels.
struct alignas(8) ga_bytes16 { uint64_t a, b; };
template <int N> struct ga_sized;
template <> struct ga_sized<1> { using type = uint8_t; };
template <> struct ga_sized<2> { using type = uint16_t; };
template <> struct ga_sized<4> { using type = uint32_t; };
template <> struct ga_sized<8> { using type = uint64_t; };
template <> struct ga_sized<16> { using type = ga_bytes16; };

#ifndef __CUDACC_RTC__
template <class F>
__host__ inline cudaError_t ga_visit_size(int itemsize, F &&f)
{
    switch (itemsize) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    case 8: return f.template operator()<uint64_t>();
    case 16: return f.template operator()<ga_bytes16>();
    default: return cudaErrorInvalidValue;
    }
}
#endif

#endif
