// filters.cu -- order-statistic filters over a footprint: median, rank,
// minimum and maximum (scipy.ndimage), for every dtype.
//
// Values are compared as unsigned keys: each element's bits mapped so that
// unsigned order is value order (signed integers flip the sign bit; IEEE
// floats flip the sign bit of positives and every bit of negatives).  One
// instantiation per element size serves every dtype, and the selected key
// maps back to the input's exact bits.
//
// One thread computes one output.  Away from the edges a tap is one load at
// a precomputed flat offset; near them each axis is extended (extend.cuh).
// Minimum and maximum keep one running key.  Other ranks with up to
// GA_RANK_LOCAL taps keep the keys in a per-thread array and select by
// counting (no data-dependent branches, so warps do not diverge); larger
// footprints build the answer bit by bit, counting the keys below each
// candidate, which needs no storage at all.
//
// The per-output work is a __host__ __device__ function, so
// src/kernels/dev/convolve_emu.cu checks it on the CPU.
#include "kernel_common.cuh"
#include "extend.cuh"

// ============================== kernels ====================================

template <class U>
__host__ __device__ __forceinline__ U rk_key(U bits, int kind)
{
    const U sign = (U)((U)1 << (sizeof(U) * 8 - 1));
    if (kind == 1) return (U)(bits ^ sign);
    if (kind == 2) return (bits & sign) ? (U)~bits : (U)(bits | sign);
    return bits;
}

template <class U>
__host__ __device__ __forceinline__ U rk_unkey(U key, int kind)
{
    const U sign = (U)((U)1 << (sizeof(U) * 8 - 1));
    if (kind == 1) return (U)(key ^ sign);
    if (kind == 2) return (key & sign) ? (U)(key ^ sign) : (U)~key;
    return key;
}

// The window of output i: visit(key) for every tap, in tap order.
template <class U>
struct RankWindow {
    const ga_rank_filter &p;
    const U *x;
    const int64_t *taps;
    int64_t i;
    int64_t coord[GA_KMAX_DIMS];
    bool inside;

    __host__ __device__ __forceinline__ RankWindow(const ga_rank_filter &p_, const U *x_,
                                                   const int64_t *taps_, int64_t i_)
        : p(p_), x(x_), taps(taps_), i(i_), inside(true)
    {
        int64_t r = i;
        for (int d = p.ndim - 1; d >= 0; --d) {
            coord[d] = r % p.shape[d];
            r /= p.shape[d];
            inside = inside && coord[d] + p.lo[d] >= 0 && coord[d] + p.hi[d] < p.shape[d];
        }
    }

    __host__ __device__ __forceinline__ U key(int64_t t) const
    {
        const int64_t *tap = taps + t * (p.ndim + 1);
        if (inside)
            return rk_key(x[i + tap[p.ndim]], p.kind);
        int64_t off = 0;
        for (int d = 0; d < p.ndim; ++d) {
            int64_t c = ga_ext_index<int64_t>(coord[d] + tap[d], p.shape[d], p.mode);
            if (c < 0)
                return rk_key(*reinterpret_cast<const U *>(&p.cval), p.kind);
            off = off * p.shape[d] + c;
        }
        return rk_key(x[off], p.kind);
    }
};

// The rank-th smallest key of output i's window.
template <class U>
__host__ __device__ __forceinline__ U rank_select(const ga_rank_filter &p, const U *x,
                                                  const int64_t *taps, int64_t i)
{
    RankWindow<U> win(p, x, taps, i);
    const int64_t n = p.ntaps;
    if (p.rank == 0 || p.rank == n - 1) {
        const bool lowest = p.rank == 0;
        U best = win.key(0);
        for (int64_t t = 1; t < n; ++t) {
            U k = win.key(t);
            best = lowest ? (k < best ? k : best) : (k > best ? k : best);
        }
        return best;
    }
    if (n <= GA_RANK_LOCAL) {
        U keys[GA_RANK_LOCAL];
        for (int t = 0; t < (int)n; ++t)
            keys[t] = win.key(t);
        U found = keys[0];
        for (int a = 0; a < (int)n; ++a) {
            int below = 0, upto = 0;
            for (int b = 0; b < (int)n; ++b) {
                below += keys[b] < keys[a];
                upto += keys[b] <= keys[a];
            }
            if (below <= p.rank && p.rank < upto) found = keys[a];
        }
        return found;
    }
    // The largest v with fewer than rank + 1 keys below it, bit by bit.
    U v = 0;
    for (int bit = (int)sizeof(U) * 8 - 1; bit >= 0; --bit) {
        const U cand = (U)(v | ((U)1 << bit));
        int64_t below = 0;
        for (int64_t t = 0; t < n; ++t)
            below += win.key(t) < cand;
        if (below <= p.rank) v = cand;
    }
    return v;
}

template <class U>
__global__ void k_rank_filter(const ga_rank_filter p, const U *__restrict__ x,
                              const int64_t *__restrict__ taps, U *__restrict__ out, int64_t n)
{
    GA_GRID_STRIDE(i, n) {
        out[i] = rk_unkey(rank_select(p, x, taps, i), p.kind);
    }
}

// ============================== launchers ==================================

namespace {
template <class U>
cudaError_t launch_rank(const ga_rank_filter *p, const char *x, const int64_t *taps, char *out,
                        cudaStream_t stream)
{
    int64_t n = 1;
    for (int d = 0; d < p->ndim; ++d) n *= p->shape[d];
    if (n == 0) return cudaSuccess;
    k_rank_filter<U><<<ga_grid(n), GA_BLOCK, 0, stream>>>(*p, (const U *)x, taps, (U *)out, n);
    return cudaGetLastError();
}

struct RankLaunch {
    const ga_rank_filter *p; const char *x; const int64_t *taps; char *out; cudaStream_t stream;
    template <class U> cudaError_t operator()() { return launch_rank<U>(p, x, taps, out, stream); }
};
} // namespace

extern "C" cudaError_t ga_launch_rank_filter(int itemsize, const ga_rank_filter *p, const char *x,
                                             const int64_t *taps, char *out, cudaStream_t stream)
{
    if (p->ntaps < 1 || p->rank < 0 || p->rank >= p->ntaps)
        return cudaErrorInvalidValue;
    return ga_visit_size(itemsize, ga_only<uint8_t, uint16_t, uint32_t, uint64_t>(
                                       RankLaunch{p, x, taps, out, stream}));
}
