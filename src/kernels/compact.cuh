// compact.cuh -- single-pass stream compaction with decoupled look-back
// (Merrill and Garland, "Single-pass Parallel Prefix Scan with Decoupled
// Look-back", 2016), shared by compaction proper (compact.cu: compress,
// boolean masks, nonzero) and sigma clipping's survivors (stats.cu).
//
// Each block takes the next tile of 4096 elements from an atomic counter
// (so every tile it waits for has started), each of its eight warps owns
// 512 consecutive elements as 16 rows of 32: a warp loads its rows (the
// values and whatever the keep test reads, all in flight at once) and
// counts each row with a ballot.  The tile publishes its count, warp 0
// looks back over the tiles before it 32 at a time until it meets one that
// knows its inclusive prefix, and every warp writes its kept values row by
// row at the tile's offset: the lanes of a row write consecutive positions,
// so the stores are coalesced without staging through shared memory.  The
// total goes to `count`, which may be pinned host memory (the host then
// only waits for the stream: no copy).
#ifndef GA_COMPACT_CUH
#define GA_COMPACT_CUH

#include "kernel_common.cuh"

#define CP_WARPS 8
#define CP_ROWS 16
#define CP_THREADS (32 * CP_WARPS)
#define CP_TILE (CP_THREADS * CP_ROWS)

// Tile status words: the count in the low 62 bits, the status in the top two.
#define CP_AGGREGATE (1ull << 62)
#define CP_INCLUSIVE (2ull << 62)
#define CP_VALUE (CP_AGGREGATE - 1)

// Tiles of n elements, and the bytes of the state a compaction needs
// (zeroed before the launch): the tile counter and a status word a tile.
__host__ __device__ inline int64_t ga_compact_tiles(int64_t n)
{
    return (n + CP_TILE - 1) / CP_TILE;
}
__host__ __device__ inline size_t ga_compact_state_bytes(int64_t n)
{
    return 8 * (size_t)(1 + ga_compact_tiles(n));
}

// Before a compaction of n elements: its state zeroed on `stream` and the
// grid (one block a tile) in *tiles; cudaErrorInvalidValue past 2^31 - 1
// tiles.
inline cudaError_t ga_compact_begin(void *state, int64_t n, cudaStream_t stream,
                                    unsigned int *tiles)
{
    const int64_t t = ga_compact_tiles(n);
    if (t > 0x7fffffff)
        return cudaErrorInvalidValue;
    *tiles = (unsigned int)t;
    return cudaMemsetAsync(state, 0, ga_compact_state_bytes(n), stream);
}

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
__device__ inline unsigned long long cp_look_back(const unsigned long long *status, long long tile)
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

// One block of a compaction (CP_THREADS threads, one block a tile): dst
// gets src[i] for the i < n that keep(i, src[i]) accepts, in order (INDEX:
// dst gets i, src is not read and keep sees U{}).  `state`: the zeroed
// tile counter followed by one zeroed status word per tile.
template <class U, bool INDEX, class Keep>
__device__ __forceinline__ void ga_compact_tile(int64_t n, const U *src, const Keep &keep, U *dst,
                                                unsigned long long *state, long long *count)
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

    bool kept[CP_ROWS];
    unsigned rows[CP_ROWS];
    U v[CP_ROWS];
    unsigned total = 0;
    // Values are loaded whatever the test says, so the loads of both are
    // in flight at once (one memory round trip; CUB does the same).
#pragma unroll
    for (int r = 0; r < CP_ROWS; ++r) {
        const int64_t i = base + 32 * r;
        v[r] = U{};
        if constexpr (!INDEX) {
            if (i < n)
                v[r] = src[i];
        }
        kept[r] = i < n && keep(i, v[r]);
    }
#pragma unroll
    for (int r = 0; r < CP_ROWS; ++r) {
        rows[r] = __ballot_sync(0xffffffffu, kept[r]);
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
        if (kept[r]) {
            const unsigned long long o = at + __popc(rows[r] & below);
            if constexpr (INDEX)
                dst[o] = (U)(base + 32 * r);
            else
                dst[o] = v[r];
        }
        at += __popc(rows[r]);
    }
}

#endif
