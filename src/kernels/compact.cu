// compact.cu -- stream compaction: compress, boolean-mask indexing,
// nonzero and unique's group starts (positions of the true flags), and mask
// assignment; and the coordinates of flat positions (nonzero's per-axis
// indices, value_indices).
//
// Compaction is one kernel launch after one memset: a single pass with
// decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix
// Scan with Decoupled Look-back", 2016).  Each block takes the next tile of
// 4096 elements from an atomic counter (so every tile it waits for has
// started), each of its eight warps owns 512 consecutive elements as 16 rows
// of 32: a warp loads its rows of flags (32 bytes each) and of values
// (coalesced), and counts each row with a ballot.  The tile
// publishes its count, warp 0 looks back over the tiles before it 32 at a
// time until it meets one that knows its inclusive prefix, and every warp
// writes its kept values row by row at the tile's offset: the lanes of a row
// write consecutive positions, so the stores are coalesced without staging
// through shared memory.  The total goes to `count`, which may be pinned
// host memory (the host then only waits for the stream: no copy).
//
// CUB's DeviceSelect::Flagged (the first implementation: two launches and
// its own temporary storage) is compared with it in
// src/kernels/dev/compact_bench.cu.
//
// Values are moved by element size (1, 2, 4, 8, 16 bytes), so five
// instantiations serve every dtype; a sixth writes positions (int64).
#include "kernel_common.cuh"

// ============================== kernels ====================================

#define CP_WARPS 8
#define CP_ROWS 16
#define CP_THREADS (32 * CP_WARPS)
#define CP_TILE (CP_THREADS * CP_ROWS)

// Tile status words: the count in the low 62 bits, the status in the top two.
#define CP_AGGREGATE (1ull << 62)
#define CP_INCLUSIVE (2ull << 62)
#define CP_VALUE (CP_AGGREGATE - 1)

__device__ __forceinline__ unsigned long long cp_load_status(const unsigned long long *p)
{
    return *(const volatile unsigned long long *)p;
}

__device__ __forceinline__ void cp_store_status(unsigned long long *p, unsigned long long v)
{
    *(volatile unsigned long long *)p = v;
}

// The number of kept elements in the tiles before `tile` (warp 0 calls it,
// after publishing the tile's own aggregate).
__device__ unsigned long long cp_look_back(const unsigned long long *status, long long tile)
{
    const int lane = threadIdx.x & 31;
    unsigned long long before = 0;
    for (long long top = tile - 1;; top -= 32) {
        const long long j = top - lane;
        unsigned long long s;
        do {
            s = j >= 0 ? cp_load_status(status + j) : CP_INCLUSIVE;
        } while (__any_sync(0xffffffffu, (s >> 62) == 0));
        const unsigned inclusive = __ballot_sync(0xffffffffu, (s >> 62) == 2);
        const int stop = inclusive ? __ffs(inclusive) - 1 : 31;
        unsigned long long v = lane <= stop ? (s & CP_VALUE) : 0;
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_xor_sync(0xffffffffu, v, o);
        before += v;
        if (inclusive)
            return before;
    }
}

// dst = src[i] where flags[i] (INDEX: dst = i), i < n.  `state`: a zeroed
// tile counter followed by one zeroed status word per tile.
template <class U, bool INDEX>
__global__ void __launch_bounds__(CP_THREADS)
k_compact(int64_t n, const U *src, const uint8_t *flags, U *dst, unsigned long long *state,
          long long *count)
{
    __shared__ long long s_tile;
    __shared__ unsigned int s_warp[CP_WARPS];
    __shared__ unsigned long long s_prefix;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (threadIdx.x == 0)
        s_tile = (long long)atomicAdd(state, 1ull);
    __syncthreads();
    const long long tile = s_tile;
    const int64_t base = (int64_t)tile * CP_TILE + (int64_t)warp * (32 * CP_ROWS) + lane;

    bool keep[CP_ROWS];
    unsigned rows[CP_ROWS];
    U v[CP_ROWS];
    unsigned total = 0;
    // Values are loaded whatever their flags say, so both loads are in
    // flight at once (one memory round trip; CUB does the same).
#pragma unroll
    for (int r = 0; r < CP_ROWS; ++r) {
        const int64_t i = base + 32 * r;
        keep[r] = i < n && flags[i] != 0;
        if constexpr (!INDEX) {
            if (i < n)
                v[r] = src[i];
        }
    }
#pragma unroll
    for (int r = 0; r < CP_ROWS; ++r) {
        rows[r] = __ballot_sync(0xffffffffu, keep[r]);
        total += __popc(rows[r]);
    }
    if (lane == 0)
        s_warp[warp] = total;
    __syncthreads();
    if (warp == 0) {
        unsigned long long tile_total = 0;
        for (int w = 0; w < CP_WARPS; ++w)
            tile_total += s_warp[w];
        unsigned long long *status = state + 1;
        unsigned long long before = 0;
        if (tile == 0) {
            if (lane == 0)
                cp_store_status(status, CP_INCLUSIVE | tile_total);
        } else {
            if (lane == 0)
                cp_store_status(status + tile, CP_AGGREGATE | tile_total);
            before = cp_look_back(status, tile);
            if (lane == 0)
                cp_store_status(status + tile, CP_INCLUSIVE | (before + tile_total));
        }
        if (lane == 0) {
            s_prefix = before;
            if ((int64_t)(tile + 1) * CP_TILE >= n)
                *(volatile long long *)count = (long long)(before + tile_total);
        }
    }
    __syncthreads();
    unsigned long long at = s_prefix;
    for (int w = 0; w < warp; ++w)
        at += s_warp[w];
    const unsigned below = (1u << lane) - 1u;
#pragma unroll
    for (int r = 0; r < CP_ROWS; ++r) {
        if (keep[r]) {
            const unsigned long long o = at + __popc(rows[r] & below);
            if constexpr (INDEX)
                dst[o] = (U)(base + 32 * r);
            else
                dst[o] = v[r];
        }
        at += __popc(rows[r]);
    }
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

int64_t cp_tiles(int64_t n) { return (n + CP_TILE - 1) / CP_TILE; }

// One compaction: the size query (temp NULL), else the tile states zeroed
// and the single-pass kernel, keeping values of U or (INDEX, U = int64_t)
// writing their positions.
template <class U, bool INDEX>
cudaError_t compact_lookback(int64_t n, const char *src, const uint8_t *flags, char *dst,
                             int64_t *count, void *temp, size_t *temp_bytes, cudaStream_t stream)
{
    const size_t state = 8 * (size_t)(1 + cp_tiles(n));
    if (temp == nullptr) {
        *temp_bytes = state;
        return cudaSuccess;
    }
    cudaError_t err = cudaMemsetAsync(temp, 0, state, stream);
    if (err != cudaSuccess)
        return err;
    k_compact<U, INDEX><<<(unsigned)cp_tiles(n), CP_THREADS, 0, stream>>>(
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
    if (cp_tiles(n) > 0x7fffffff)
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
