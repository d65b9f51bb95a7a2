// random.cu -- counter-based random numbers (Philox4x32-10) and the radix
// sort behind random permutations (take.cu's row gather applies them).
//
// Philox is a keyed bijection on 128-bit counters: block b of a stream is
// philox(key, counter + b), four 32-bit words, computed independently by any
// thread.  A launch therefore needs no per-thread state and no set-up: value
// i comes from block (counter + i / per_block), whatever the grid, so the
// same (key, counter) gives the same values on every GPU and launch shape.
// Each launcher reports in *used how many blocks it consumed; the host adds
// that to its counter so the next draw continues the stream.  The stream is
// the one cuRAND's curandStatePhilox4_32_10_t gives after
// curand_init(key, ctr_hi, 4 * ctr_lo) followed by curand4() calls; it is
// written out here (a dozen lines) so no per-thread state or skip-ahead is
// needed and the function also runs on the host for known-answer tests.
//
// Each thread fills one 16-byte group of the output (4 float32, 2 float64,
// 16 int8, ...) from consecutive blocks and writes it with one vector store;
// a misaligned destination or the tail of the array takes scalar stores,
// chosen at run time.  Integer kernels are keyed by element size: the value
// is computed as a 64-bit two's complement number and truncated, which gives
// the same bytes for signed, unsigned and bool types.
#include <cub/device/device_radix_sort.cuh>

#include "kernel_common.cuh"

// ============================== Philox =====================================

__host__ __device__ __forceinline__ uint32_t philox_mulhi(uint32_t a, uint32_t b)
{
#ifdef __CUDA_ARCH__
    return __umulhi(a, b);
#else
    return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}

// Philox4x32 with 10 rounds (Salmon et al., SC'11), the Random123 constants.
// The fixed trip count is unrolled by the compiler without a pragma (which
// the host compiler would warn about).
__host__ __device__ __forceinline__ uint4 philox4x32_10(uint4 c, uint32_t k0, uint32_t k1)
{
    for (int round = 0; round < 10; ++round) {
        const uint32_t hi0 = philox_mulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
        const uint32_t hi1 = philox_mulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
        c = make_uint4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return c;
}

// Block b of stream g: the 128-bit counter (ctr_hi:ctr_lo) + b, encrypted.
__host__ __device__ __forceinline__ uint4 philox_block(const ga_philox &g, uint64_t b)
{
    const uint64_t lo = g.ctr_lo + b;
    const uint64_t hi = g.ctr_hi + (lo < b);
    return philox4x32_10(make_uint4((uint32_t)lo, (uint32_t)(lo >> 32), (uint32_t)hi,
                                    (uint32_t)(hi >> 32)),
                         (uint32_t)g.key, (uint32_t)(g.key >> 32));
}

__device__ __forceinline__ uint64_t join64(uint32_t hi, uint32_t lo)
{
    return ((uint64_t)hi << 32) | lo;
}

// ============================== distributions ==============================
// A distribution turns one block (four words) into per_block values.

// [0, 1): the top 24 bits of a word times 2^-24 (float32) or 53 bits of two
// words times 2^-53 (float64); every value is exact and 1.0 never occurs.
// low + scale * u is computed in the output type.
template <class T> struct Uniform;

template <> struct Uniform<float> {
    static constexpr int per_block = 4;
    float low, scale;
    __device__ __forceinline__ float one(uint32_t w) const
    {
        return low + scale * ((float)(w >> 8) * 0x1p-24f);
    }
    __device__ __forceinline__ void operator()(uint4 r, float *v) const
    {
        v[0] = one(r.x); v[1] = one(r.y); v[2] = one(r.z); v[3] = one(r.w);
    }
};

template <> struct Uniform<double> {
    static constexpr int per_block = 2;
    double low, scale;
    __device__ __forceinline__ double one(uint64_t w) const
    {
        return low + scale * ((double)(w >> 11) * 0x1p-53);
    }
    __device__ __forceinline__ void operator()(uint4 r, double *v) const
    {
        v[0] = one(join64(r.x, r.y));
        v[1] = one(join64(r.z, r.w));
    }
};

// Box-Muller: a radius from u1 in (0, 1] and an angle from u2 in [0, 1) give
// two independent normals.  The smallest u1 bounds the tails: float32 uses
// u1 = (w + 1/2) 2^-32 (|z| <= 6.7), float64 53 bits (|z| <= 8.6).
template <class T> struct Normal;

template <> struct Normal<float> {
    static constexpr int per_block = 4;
    float loc, scale;
    __device__ __forceinline__ void pair(uint32_t a, uint32_t b, float *v) const
    {
        const float u1 = fmaf((float)a, 0x1p-32f, 0x1p-33f);
        const float radius = scale * sqrtf(-2.0f * logf(u1));
        float s, c;
        sincospif((float)b * 0x1p-31f, &s, &c);
        v[0] = loc + radius * c;
        v[1] = loc + radius * s;
    }
    __device__ __forceinline__ void operator()(uint4 r, float *v) const
    {
        pair(r.x, r.y, v);
        pair(r.z, r.w, v + 2);
    }
};

template <> struct Normal<double> {
    static constexpr int per_block = 2;
    double loc, scale;
    __device__ __forceinline__ void operator()(uint4 r, double *v) const
    {
        const double u1 = ((double)(join64(r.x, r.y) >> 11) + 0.5) * 0x1p-53;
        const double radius = scale * sqrt(-2.0 * log(u1));
        double s, c;
        sincospi((double)(join64(r.z, r.w) >> 11) * 0x1p-52, &s, &c);
        v[0] = loc + radius * c;
        v[1] = loc + radius * s;
    }
};

// Integers in [low, low + range).  floor(w * range / 2^k) for k random bits
// is off from uniform by at most range / 2^k relative (some values get one
// more of the 2^k inputs than others): k = 64 for range <= 2^32, so the
// bias is below 2^-32; k = 128 for wider ranges (below 2^-64).  range == 0
// stands for 2^64 (the full 64-bit range).
template <class U> struct IntNarrow {
    static constexpr int per_block = 2;
    uint64_t low, range;
    __device__ __forceinline__ void operator()(uint4 r, U *v) const
    {
        v[0] = (U)(low + __umul64hi(join64(r.x, r.y), range));
        v[1] = (U)(low + __umul64hi(join64(r.z, r.w), range));
    }
};

struct IntWide {
    static constexpr int per_block = 1;
    uint64_t low, range;
    __device__ __forceinline__ void operator()(uint4 r, uint64_t *v) const
    {
        const uint64_t hi = join64(r.x, r.y), lo = join64(r.z, r.w);
        if (range == 0) {
            v[0] = low + hi;
            return;
        }
        // Top 64 bits of (hi:lo) * range, a 192-bit product, over 2^128.
        const uint64_t mid = hi * range;
        const uint64_t sum = mid + __umul64hi(lo, range);
        v[0] = low + __umul64hi(hi, range) + (sum < mid);
    }
};

// ============================== kernels ====================================

template <class T, class Dist>
__global__ void __launch_bounds__(GA_BLOCK)
k_random(int64_t n, T *dst, int vector_store, Dist dist, ga_philox g)
{
    constexpr int V = 16 / sizeof(T);
    constexpr int P = Dist::per_block;
    static_assert(V % P == 0, "a 16-byte group takes whole blocks");
    const int64_t groups = (n + V - 1) / V;
    GA_GRID_STRIDE(t, groups) {
        union {
            T v[V];
            uint4 u;
        } out;
        const int64_t i0 = t * V;
#pragma unroll
        for (int b = 0; b < V / P; ++b)
            dist(philox_block(g, (uint64_t)(i0 / P + b)), out.v + b * P);
        if (vector_store && i0 + V <= n) {
            *reinterpret_cast<uint4 *>(dst + i0) = out.u;
        } else {
            for (int k = 0; k < V && i0 + k < n; ++k)
                dst[i0 + k] = out.v[k];
        }
    }
}

// Sort keys for a permutation: 64 random bits for each index, beside the
// index itself.  One thread a block, two indices a block.
__global__ void __launch_bounds__(GA_BLOCK)
k_permutation_keys(int64_t n, uint64_t *keys, int64_t *index, ga_philox g)
{
    GA_GRID_STRIDE(t, (n + 1) / 2) {
        const uint4 r = philox_block(g, (uint64_t)t);
        const int64_t i = 2 * t;
        keys[i] = join64(r.x, r.y);
        index[i] = i;
        if (i + 1 < n) {
            keys[i + 1] = join64(r.z, r.w);
            index[i + 1] = i + 1;
        }
    }
}

// ============================== launchers ==================================

namespace {

template <class T, class Dist>
cudaError_t launch_random(int64_t n, char *dst, const Dist &dist, const ga_philox *g,
                          uint64_t *used, cudaStream_t stream)
{
    constexpr int V = 16 / sizeof(T);
    *used = (uint64_t)((n + Dist::per_block - 1) / Dist::per_block);
    if (n == 0)
        return cudaSuccess;
    const int vector_store = ((uintptr_t)dst & 15) == 0;
    k_random<T, Dist><<<ga_grid((n + V - 1) / V), GA_BLOCK, 0, stream>>>(n, (T *)dst, vector_store,
                                                                         dist, *g);
    return cudaGetLastError();
}

// The distributions as visitors of the element type (float32/float64), or
// of the integer width.
struct UniformLaunch {
    int64_t n; char *dst; double low, scale; const ga_philox *g; uint64_t *used;
    cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        return launch_random<T>(n, dst, Uniform<T>{(T)low, (T)scale}, g, used, stream);
    }
};

struct NormalLaunch {
    int64_t n; char *dst; double loc, scale; const ga_philox *g; uint64_t *used;
    cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        return launch_random<T>(n, dst, Normal<T>{(T)loc, (T)scale}, g, used, stream);
    }
};

struct IntegersLaunch {
    int64_t n; char *dst; uint64_t low, range; bool wide; const ga_philox *g; uint64_t *used;
    cudaStream_t stream;
    template <class U> cudaError_t operator()()
    {
        if constexpr (sizeof(U) == 8) {
            if (wide)
                return launch_random<U>(n, dst, IntWide{low, range}, g, used, stream);
        }
        return launch_random<U>(n, dst, IntNarrow<U>{low, range}, g, used, stream);
    }
};

size_t round_up(size_t n) { return (n + 255) & ~(size_t)255; }

} // namespace

extern "C" cudaError_t ga_launch_random_uniform(ga_type type, int64_t n, char *dst, double low,
                                                double scale, const ga_philox *g, uint64_t *used,
                                                cudaStream_t stream)
{
    return ga_visit_type(type, ga_only<float, double>(UniformLaunch{n, dst, low, scale, g, used,
                                                                    stream}));
}

extern "C" cudaError_t ga_launch_random_normal(ga_type type, int64_t n, char *dst, double loc,
                                               double scale, const ga_philox *g, uint64_t *used,
                                               cudaStream_t stream)
{
    return ga_visit_type(type, ga_only<float, double>(NormalLaunch{n, dst, loc, scale, g, used,
                                                                   stream}));
}

extern "C" cudaError_t ga_launch_random_integers(int itemsize, int64_t n, char *dst, uint64_t low,
                                                 uint64_t range, const ga_philox *g,
                                                 uint64_t *used, cudaStream_t stream)
{
    const bool wide = range == 0 || range > ((uint64_t)1 << 32);
    if (wide && itemsize != 8)
        return cudaErrorInvalidValue;
    return ga_visit_size(itemsize, ga_only<uint8_t, uint16_t, uint32_t, uint64_t>(
                                       IntegersLaunch{n, dst, low, range, wide, g, used, stream}));
}

extern "C" cudaError_t ga_launch_random_permutation(int64_t n, int64_t *dst, void *temp,
                                                    size_t *temp_bytes, const ga_philox *g,
                                                    uint64_t *used, cudaStream_t stream)
{
    const size_t part = round_up((size_t)n * 8);
    size_t sort_bytes = 0;
    cudaError_t err = cub::DeviceRadixSort::SortPairs(
        nullptr, sort_bytes, (const uint64_t *)nullptr, (uint64_t *)nullptr,
        (const int64_t *)nullptr, (int64_t *)nullptr, n, 0, 64, stream);
    if (err != cudaSuccess)
        return err;
    *used = (uint64_t)((n + 1) / 2);
    if (temp == nullptr) {
        *temp_bytes = 3 * part + sort_bytes;
        return cudaSuccess;
    }
    if (n == 0)
        return cudaSuccess;
    char *base = (char *)temp;
    uint64_t *keys_in = (uint64_t *)base, *keys_out = (uint64_t *)(base + part);
    int64_t *index = (int64_t *)(base + 2 * part);
    k_permutation_keys<<<ga_grid((n + 1) / 2), GA_BLOCK, 0, stream>>>(n, keys_in, index, *g);
    err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    return cub::DeviceRadixSort::SortPairs(base + 3 * part, sort_bytes, keys_in, keys_out, index,
                                           dst, n, 0, 64, stream);
}

extern "C" void ga_random_philox_host(const ga_philox *g, uint64_t block, uint32_t out[4])
{
    const uint4 r = philox_block(*g, block);
    out[0] = r.x;
    out[1] = r.y;
    out[2] = r.z;
    out[3] = r.w;
}
