// kernel_common.cuh -- what every kernel family shares: the element types,
// NumPy's conversions between them, N-d offset arithmetic and launch sizing.
#ifndef GA_KERNEL_COMMON_CUH
#define GA_KERNEL_COMMON_CUH

#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>
#include "kernels.h"

// ---------------------------------------------------------------------------
// Element types.  Complex numbers are plain structs with NumPy's layout and
// alignment (8 for complex128), so a view at any legal offset loads safely.
// ---------------------------------------------------------------------------
struct alignas(8) ga_c64 { float re, im; };
struct alignas(8) ga_c128 { double re, im; };

template <class T> struct ga_is_complex : std::false_type {};
template <> struct ga_is_complex<ga_c64> : std::true_type {};
template <> struct ga_is_complex<ga_c128> : std::true_type {};

template <class T> struct ga_complex_part { using type = T; };
template <> struct ga_complex_part<ga_c64> { using type = float; };
template <> struct ga_complex_part<ga_c128> { using type = double; };

template <class T>
constexpr bool ga_is_half = std::is_same<T, __half>::value;
template <class T>
constexpr bool ga_is_float = std::is_floating_point<T>::value || ga_is_half<T>;

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
    if constexpr (sizeof(D) < 4 || std::is_same<D, int32_t>::value)
        return (D)(int32_t)s;
    else if constexpr (std::is_same<D, uint32_t>::value || std::is_same<D, int64_t>::value)
        return (D)(int64_t)s;
    else /* uint64 */
        return s >= (S)9223372036854775808.0 ? (D)s : (D)(int64_t)s;
}

template <class D, class S>
__device__ __forceinline__ D ga_convert(S s)
{
    if constexpr (std::is_same<D, S>::value) {
        return s;
    } else if constexpr (std::is_same<D, bool>::value) {
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
        if constexpr (std::is_same<S, double>::value) return __double2half(s);
        else return __float2half((float)s);
    } else if constexpr (std::is_floating_point<S>::value && std::is_integral<D>::value) {
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
