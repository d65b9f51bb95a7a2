// compact.cu -- stream compaction: compress, boolean-mask indexing,
// nonzero and unique's group starts (positions of the true flags), and mask
// assignment; and the coordinates of flat positions (nonzero's per-axis
// indices, value_indices).
//
// Compaction is one kernel launch after one memset: the single pass with
// decoupled look-back of compact.cuh, keeping the elements whose flag is
// set.
//
// CUB's DeviceSelect::Flagged (the first implementation: two launches and
// its own temporary storage) is compared with it in
// src/kernels/dev/compact_bench.cu.
//
// Values are moved by element size (1, 2, 4, 8, 16 bytes), so five
// instantiations serve every dtype; a sixth writes positions (int64).
#include "compact.cuh"

// ============================== kernels ====================================

// The flags' test of compaction proper.
struct FlagKeep {
    const uint8_t *flags;
    template <class U> __device__ __forceinline__ bool operator()(int64_t i, const U &) const
    {
        return flags[i] != 0;
    }
};

// dst = src[i] where flags[i] (INDEX: dst = i), i < n.  `state`: a zeroed
// tile counter followed by one zeroed status word per tile.
template <class U, bool INDEX>
__global__ void __launch_bounds__(CP_THREADS)
k_compact(int64_t n, const U *src, const uint8_t *flags, U *dst, unsigned long long *state,
          long long *count)
{
    ga_compact_tile<U, INDEX>(n, src, FlagKeep{flags}, dst, state, count);
}

// *first = min(*first, smallest i with flags[i] != 0).
__global__ void __launch_bounds__(GA_BLOCK)
k_first_flag(int64_t n, const uint8_t *flags, unsigned long long *first)
{
    GA_GRID_STRIDE(i, n) {
        if (flags[i]) {
            atomicMin(first, (unsigned long long)i);
            return;
        }
    }
}

// dst[idx] = value where mask[idx], N-d.
template <class U>
__global__ void __launch_bounds__(GA_BLOCK)
k_masked_fill(int64_t n, GA_PARAM ga_kshape sh, char *dst, GA_PARAM ga_kstrides ds,
              const uint8_t *mask, GA_PARAM ga_kstrides ms, U value)
{
    GA_GRID_STRIDE(i, n) {
        int64_t od, om;
        ga_offset2(i, sh, ds, ms, &od, &om);
        if (mask[om])
            *(U *)(dst + od) = value;
    }
}

// coords[d][k] = coordinate d of flat position pos[k] in a C-ordered shape.
__global__ void k_unravel(const int64_t *pos, int64_t n, int ndim, GA_PARAM ga_kshape shape,
                             int64_t *coords)
{
    GA_GRID_STRIDE(k, n) {
        int64_t i = pos[k];
        for (int d = ndim - 1; d >= 0; --d) {
            const int64_t q = i / shape.shape[d];
            coords[d * n + k] = i - q * shape.shape[d];
            i = q;
        }
    }
}

// ============================== launchers ==================================

namespace {

// One compaction: the size query (temp NULL), else the tile states zeroed
// and the single-pass kernel, keeping values of U or (INDEX, U = int64_t)
// writing their positions.
template <class U, bool INDEX>
cudaError_t compact_lookback(int64_t n, const char *src, const uint8_t *flags, char *dst,
                             int64_t *count, void *temp, size_t *temp_bytes, cudaStream_t stream)
{
    const size_t state = ga_compact_state_bytes(n);
    if (temp == nullptr) {
        *temp_bytes = state;
        return cudaSuccess;
    }
    unsigned int tiles;
    cudaError_t err = ga_compact_begin(temp, n, stream, &tiles);
    if (err != cudaSuccess)
        return err;
    k_compact<U, INDEX><<<tiles, CP_THREADS, 0, stream>>>(
        n, (const U *)src, flags, (U *)dst, (unsigned long long *)temp, (long long *)count);
    return cudaGetLastError();
}

struct CompactLaunch {
    int64_t n; const char *src; const uint8_t *flags; char *dst; int64_t *count;
    void *temp; size_t *temp_bytes; cudaStream_t stream;
    template <class U> cudaError_t operator()()
    {
        return compact_lookback<U, false>(n, src, flags, dst, count, temp, temp_bytes, stream);
    }
};

struct MaskedFillLaunch {
    const ga_kshape *sh; char *dst; const ga_kstrides *ds; const uint8_t *mask;
    const ga_kstrides *ms; const ga_kscalar *value; cudaStream_t stream;
    template <class U> cudaError_t operator()()
    {
        const int64_t n = ga_kshape_size(sh);
        U v;
        memcpy(&v, value->v.bytes, sizeof(U));
        k_masked_fill<U><<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, *sh, dst, *ds, mask, *ms, v);
        return cudaGetLastError();
    }
};

} // namespace

extern "C" cudaError_t ga_launch_compact(int itemsize, int64_t n, const char *src,
                                         const uint8_t *flags, char *dst, int64_t *count,
                                         void *temp, size_t *temp_bytes, cudaStream_t stream)
{
    if (n <= 0) {
        if (temp == nullptr)
            *temp_bytes = 0;
        return n < 0 ? cudaErrorInvalidValue : cudaSuccess;
    }
    if (ga_compact_tiles(n) > 0x7fffffff)
        return cudaErrorInvalidValue;
    if (itemsize == 0)
        return compact_lookback<int64_t, true>(n, nullptr, flags, dst, count, temp, temp_bytes,
                                               stream);
    return ga_visit_size(itemsize, CompactLaunch{n, src, flags, dst, count, temp, temp_bytes,
                                                 stream});
}

extern "C" cudaError_t ga_launch_first_flag(int64_t n, const uint8_t *flags, uint64_t *first,
                                            cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    k_first_flag<<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, flags, (unsigned long long *)first);
    return cudaGetLastError();
}

extern "C" cudaError_t ga_launch_masked_fill(int itemsize, const ga_kshape *shape, char *dst,
                                             const ga_kstrides *dst_strides,
                                             const uint8_t *mask,
                                             const ga_kstrides *mask_strides,
                                             const ga_kscalar *value, cudaStream_t stream)
{
    if (ga_kshape_size(shape) == 0)
        return cudaSuccess;
    return ga_visit_size(itemsize, MaskedFillLaunch{shape, dst, dst_strides, mask, mask_strides,
                                                    value, stream});
}

extern "C" cudaError_t ga_launch_unravel(const int64_t *pos, int64_t n, int ndim,
                                         const int64_t *shape, int64_t *coords,
                                         cudaStream_t stream)
{
    if (ndim < 1 || ndim > GA_KMAX_DIMS)
        return cudaErrorInvalidValue;
    ga_kshape sh;
    sh.ndim = ndim;
    for (int d = 0; d < ndim; ++d)
        sh.shape[d] = shape[d];
    k_unravel<<<ga_grid(n), GA_BLOCK, 0, stream>>>(pos, n, ndim, sh, coords);
    return cudaGetLastError();
}
