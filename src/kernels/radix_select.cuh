// radix_select.cuh -- the block-level pieces of radix selection: which
// digit a pass looks at, and which histogram bin holds a given rank.
//
// Radix selection finds the k-th smallest of many values without sorting
// them: on order-preserving keys (sort_keys.cuh), most significant digit
// first, count the digits of the values whose higher digits match the
// prefix chosen so far into a histogram, pick the bin that holds rank k,
// append it to the prefix and subtract the counts below it from k.  The
// whole-array quantiles (order_stats.cu) and sigma clipping's medians
// (stats.cu) are built from these two pieces.
#ifndef GA_RADIX_SELECT_CUH
#define GA_RADIX_SELECT_CUH

#include "kernel_common.cuh"

#include <cub/block/block_scan.cuh>

// Bits a pass selects on: a histogram of 2048 bins fits a block's shared
// memory, and 32-bit keys take three passes (11 + 11 + 10), 64-bit six.
#define GA_RADIX_DIGIT 11
#define GA_RADIX_BINS (1 << GA_RADIX_DIGIT)

// Passes over keys of `bits` bits.
__host__ __device__ constexpr int ga_radix_passes(int bits)
{
    return (bits + GA_RADIX_DIGIT - 1) / GA_RADIX_DIGIT;
}

// Pass p covers key bits [shift, shift + width), from the top.
__host__ __device__ __forceinline__ void ga_radix_digit(int bits, int p, int *shift, int *width)
{
    const int hi = bits - GA_RADIX_DIGIT * p;
    *width = hi < GA_RADIX_DIGIT ? hi : GA_RADIX_DIGIT;
    *shift = hi - *width;
}

// Histogram counters: the block's own in shared memory, or the global one
// other blocks added to (read through L2).
__device__ __forceinline__ long long ga_radix_count(const unsigned int *p) { return *p; }
__device__ __forceinline__ long long ga_radix_count(const unsigned long long *p)
{
    return (long long)__ldcg(p);
}

// The bins of a histogram of nbins <= GA_RADIX_BINS counters holding the
// elements of ranks rank[0..R) (0-based), all from one block-wide scan:
// every thread gets each bin, the count of elements in lower bins and in
// the bin (bin nbins - 1 and counts 0 for a rank outside [0, total)).
// Whole block of THREADS threads; C is the counter type (shared uint32 or
// global uint64).
template <int THREADS, int R, class C>
__device__ void ga_block_select_bins(const C *hist, int nbins, const int64_t (&rank)[R],
                                     int (&bin)[R], int64_t (&below)[R], int64_t (&count)[R])
{
    static_assert(R <= THREADS, "a rank a thread when the answers are reset");
    using Scan = cub::BlockScan<long long, THREADS>;
    __shared__ typename Scan::TempStorage tmp;
    __shared__ int s_bin[R];
    __shared__ long long s_below[R], s_count[R];
    constexpr int PER = GA_RADIX_BINS / THREADS;
    long long c[PER], sum = 0;
    const int first = threadIdx.x * PER;
#pragma unroll
    for (int k = 0; k < PER; ++k) {
        c[k] = first + k < nbins ? ga_radix_count(hist + first + k) : 0;
        sum += c[k];
    }
    long long before;
    __syncthreads();
    Scan(tmp).ExclusiveSum(sum, before);
    if (threadIdx.x < R) {
        s_bin[threadIdx.x] = nbins - 1;
        s_below[threadIdx.x] = s_count[threadIdx.x] = 0;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r) {
        if (rank[r] >= before && rank[r] < before + sum) {
            long long at = before;
#pragma unroll
            for (int k = 0; k < PER; ++k) {
                if (rank[r] < at + c[k]) {
                    s_bin[r] = first + k;
                    s_below[r] = at;
                    s_count[r] = c[k];
                    break;
                }
                at += c[k];
            }
        }
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r) {
        bin[r] = s_bin[r];
        below[r] = s_below[r];
        count[r] = s_count[r];
    }
}

// The bin holding one rank (ga_block_select_bins with R = 1).
template <int THREADS, class C>
__device__ void ga_block_select_bin(const C *hist, int nbins, int64_t rank, int *bin,
                                    int64_t *below, int64_t *count)
{
    const int64_t ranks[1] = {rank};
    int b[1];
    int64_t u[1], n[1];
    ga_block_select_bins<THREADS>(hist, nbins, ranks, b, u, n);
    *bin = b[0];
    *below = u[0];
    *count = n[0];
}

// The bins of two ranks (the two middles of a median, a quantile's two
// neighbours): from one scan of hist0 while both are in one histogram
// (`shared`), else rank t's from its own histogram (hist0, hist1), one
// scan each.  take(t, bin, below, count) is called by every thread as each
// rank's bin is known (after the other's scan has read its rank, so take
// may update rank t in place).  Whole block.
template <int THREADS, class C, class Take>
__device__ void ga_block_select_two(const C *hist0, const C *hist1, bool shared, int nbins,
                                    const int64_t (&rank)[2], Take take)
{
    if (shared) {
        int bin[2];
        int64_t below[2], count[2];
        ga_block_select_bins<THREADS>(hist0, nbins, rank, bin, below, count);
        take(0, bin[0], below[0], count[0]);
        take(1, bin[1], below[1], count[1]);
        return;
    }
    for (int t = 0; t < 2; ++t) {
        int bin;
        int64_t below, count;
        ga_block_select_bin<THREADS>(t ? hist1 : hist0, nbins, rank[t], &bin, &below, &count);
        take(t, bin, below, count);
    }
}

#endif
