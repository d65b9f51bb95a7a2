// stats.cu -- sigma clipping (astropy's sigma_clip, and the lesson's
// kappa-sigma clipper) without ever compacting the data.
//
// After every clip the survivors are the data inside one interval (the
// intersection of all the bounds so far), so an iteration needs only
// statistics of the values inside [lo, hi]: their count, mean and sum of
// squared deviations (one pass: sums of x - shift and (x - shift)^2 in
// float64, shift = the previous centre so nothing cancels) and their median
// (radix selection: histograms of 11-bit digits of order-preserving keys
// of the in-interval values, 3 passes for float32 and 6 for float64, the
// two middle elements tracked together so even counts average them exactly
// as NumPy does).  With the 'mad_std' spread a second selection finds the
// median of |x - centre| inside the interval.  The bounds are formed in the
// data's own precision without fused multiply-adds, as NumPy forms
// `med - 3 * std`.
//
// One row (axis=None) is spread over the whole GPU: each pass is a kernel
// whose blocks histogram into shared memory and add the non-zero bins to a
// global histogram; the last block to finish (a ticket) reduces the moment
// partials in a fixed order, picks the digit, updates the row's state and
// clears the histogram for the next pass.  Every pass first checks the
// state's `done` flag, so the host can queue iterations ahead and those
// after convergence cost only a launch.  Many rows (axis given, or a small
// array) take one block per row and run every iteration inside one launch.
#include "kernel_common.cuh"

#include <cooperative_groups.h>
#include <cub/block/block_scan.cuh>

namespace cg = cooperative_groups;

namespace {

constexpr int CL_THREADS = 256;
constexpr int CL_RADIX = 11;
constexpr int CL_BINS = 1 << CL_RADIX;
constexpr int CL_ITEMS = 8;
constexpr int CL_TILE_ITEMS = 16;
constexpr int64_t CL_TILE = (int64_t)CL_THREADS * CL_TILE_ITEMS;
constexpr double CL_MAD_STD = 1.482602218505602;  // 1 / Phi^-1(3/4)

// ============================== keys and arithmetic ========================

template <class T> struct ClipKey;
template <> struct ClipKey<float> {
    using K = uint32_t;
    static constexpr int BITS = 32;
    __device__ static K enc(float x)
    {
        const K b = __float_as_uint(x);
        return (b & 0x80000000u) ? ~b : b | 0x80000000u;
    }
    __device__ static float dec(K k)
    {
        return __uint_as_float((k & 0x80000000u) ? k ^ 0x80000000u : ~k);
    }
    __device__ static float add(float a, float b) { return __fadd_rn(a, b); }
    __device__ static float sub(float a, float b) { return __fsub_rn(a, b); }
    __device__ static float mul(float a, float b) { return __fmul_rn(a, b); }
    __device__ static float div(float a, float b) { return __fdiv_rn(a, b); }
    __device__ static float maxval() { return 3.402823466e+38f; }
};
template <> struct ClipKey<double> {
    using K = uint64_t;
    static constexpr int BITS = 64;
    __device__ static K enc(double x)
    {
        const K b = (K)__double_as_longlong(x);
        return (b & 0x8000000000000000ull) ? ~b : b | 0x8000000000000000ull;
    }
    __device__ static double dec(K k)
    {
        return __longlong_as_double(
            (long long)((k & 0x8000000000000000ull) ? k ^ 0x8000000000000000ull : ~k));
    }
    __device__ static double add(double a, double b) { return __dadd_rn(a, b); }
    __device__ static double sub(double a, double b) { return __dsub_rn(a, b); }
    __device__ static double mul(double a, double b) { return __dmul_rn(a, b); }
    __device__ static double div(double a, double b) { return __ddiv_rn(a, b); }
    __device__ static double maxval() { return 1.7976931348623157e+308; }
};

template <class T> constexpr int clip_passes() { return (ClipKey<T>::BITS + CL_RADIX - 1) / CL_RADIX; }

// Digit p covers key bits [shift, shift + width), from the top.
template <class T>
__device__ __forceinline__ void clip_digit(int p, int *shift, int *width)
{
    const int hi = ClipKey<T>::BITS - CL_RADIX * p;
    *width = hi < CL_RADIX ? hi : CL_RADIX;
    *shift = hi - *width;
}

template <class T>
__device__ __forceinline__ bool clip_in(T x, T lo, T hi, int inclusive)
{
    return inclusive ? (x >= lo && x <= hi) : (x > lo && x < hi);
}

// ============================== one pass over values =======================

// What a pass needs to know, read from the state once per block.
template <class T>
struct ClipPass {
    T lo, hi, centre;  // centre: of |x - centre| in phase 1 (the median)
    double shift;
    int inclusive, phase, pass, moments, split;
    int dshift, width;
    typename ClipKey<T>::K prefix[2];
};

template <class T>
__device__ ClipPass<T> clip_pass_of(const ga_clip_state &st, const ga_clip_args &a, int phase,
                                    int pass)
{
    ClipPass<T> c;
    c.lo = (T)st.lo;
    c.hi = (T)st.hi;
    c.centre = (T)st.median;  // the MAD is taken about the median, whatever the centre
    c.shift = st.shift;
    c.inclusive = a.inclusive;
    c.phase = phase;
    c.pass = pass;
    c.moments = phase == 0 && pass == 0;
    c.prefix[0] = (typename ClipKey<T>::K)st.prefix[0];
    c.prefix[1] = (typename ClipKey<T>::K)st.prefix[1];
    c.split = pass > 0 && st.prefix[0] != st.prefix[1];
    clip_digit<T>(pass, &c.dshift, &c.width);
    return c;
}

struct Moments {
    double n, s1, s2;
};

// Count one value into the block's histograms (and moments).  Lanes that
// take the same bin of the first digit add once (warp aggregation): that
// digit is where the values crowd.
template <class T>
__device__ __forceinline__ void clip_visit(T x, bool valid, const ClipPass<T> &c, Moments &m,
                                           unsigned int *hist)
{
    using K = typename ClipKey<T>::K;
    const bool in = valid && clip_in(x, c.lo, c.hi, c.inclusive);
    if (c.moments && in) {
        const double d = (double)x - c.shift;
        m.n += 1.0;
        m.s1 += d;
        m.s2 += d * d;
    }
    T y = x;
    if (c.phase == 1) {
        y = ClipKey<T>::sub(x, c.centre);
        y = y < (T)0 ? -y : y;
    }
    const K key = ClipKey<T>::enc(y);
    if (c.pass == 0) {
        const unsigned int bin = in ? (unsigned int)(key >> c.dshift) : 0xffffffffu;
        const unsigned int active = __activemask();
        const unsigned int peers = __match_any_sync(active, bin);
        if (in && (threadIdx.x & 31) == __ffs(peers) - 1)
            atomicAdd(hist + bin, (unsigned int)__popc(peers));
        return;
    }
    if (!in)
        return;
    const K pre = key >> (c.dshift + c.width);
    const unsigned int d = (unsigned int)(key >> c.dshift) & ((1u << c.width) - 1);
    if (pre == c.prefix[0])
        atomicAdd(hist + d, 1u);
    if (c.split && pre == c.prefix[1])
        atomicAdd(hist + CL_BINS + d, 1u);
}

// Values [begin, end) with the given thread start and stride: CL_ITEMS
// independent loads in flight per thread, each of them coalesced over the
// warp.
template <class T>
__device__ void clip_scan_values(const T *data, int64_t begin, int64_t end, int64_t first,
                                 int64_t stride, const ClipPass<T> &c, Moments &m,
                                 unsigned int *hist)
{
    for (int64_t base = begin + first; base < end; base += stride * CL_ITEMS) {
        T v[CL_ITEMS];
#pragma unroll
        for (int k = 0; k < CL_ITEMS; ++k)
            v[k] = base + k * stride < end ? data[base + k * stride] : (T)0;
#pragma unroll
        for (int k = 0; k < CL_ITEMS; ++k)
            clip_visit<T>(v[k], base + k * stride < end, c, m, hist);
    }
}

// ============================== block-level pieces =========================

__device__ Moments block_sum(Moments m)
{
    __shared__ double part[3][CL_THREADS / 32];
    for (int off = 16; off > 0; off >>= 1) {
        m.n += __shfl_down_sync(0xffffffffu, m.n, off);
        m.s1 += __shfl_down_sync(0xffffffffu, m.s1, off);
        m.s2 += __shfl_down_sync(0xffffffffu, m.s2, off);
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();
    if (lane == 0) {
        part[0][warp] = m.n;
        part[1][warp] = m.s1;
        part[2][warp] = m.s2;
    }
    __syncthreads();
    Moments r{0.0, 0.0, 0.0};
    if (threadIdx.x == 0) {
        for (int w = 0; w < CL_THREADS / 32; ++w) {
            r.n += part[0][w];
            r.s1 += part[1][w];
            r.s2 += part[2][w];
        }
    }
    return r;
}

// The moments of every block of a pass, summed in a fixed order: the same
// sums every run, and in every block that computes them.  Whole block;
// thread 0 gets the total.
__device__ Moments clip_sum_partials(const Moments *p, unsigned int n)
{
    Moments m{0.0, 0.0, 0.0};
    for (unsigned int b = threadIdx.x; b < n; b += blockDim.x) {
        const double *q = (const double *)(p + b);
        m.n += __ldcg(q);
        m.s1 += __ldcg(q + 1);
        m.s2 += __ldcg(q + 2);
    }
    return block_sum(m);
}

// Histogram counters: the block's own in shared memory, or the global one
// other blocks added to (read through L2).
__device__ __forceinline__ long long hist_load(const unsigned int *p) { return *p; }
__device__ __forceinline__ long long hist_load(const unsigned long long *p)
{
    return (long long)__ldcg(p);
}

// The bin of a histogram holding the element of rank `rank` (0-based):
// every thread gets the bin and the count of elements in lower bins.  Whole
// block; C is the counter type (shared uint32 or global uint64).
template <class C>
__device__ void block_select(const C *hist, int nbins, int64_t rank, int *bin, int64_t *below)
{
    using Scan = cub::BlockScan<long long, CL_THREADS>;
    __shared__ typename Scan::TempStorage tmp;
    __shared__ int s_bin;
    __shared__ long long s_below;
    constexpr int PER = CL_BINS / CL_THREADS;
    long long c[PER], sum = 0;
    const int first = threadIdx.x * PER;
#pragma unroll
    for (int k = 0; k < PER; ++k) {
        c[k] = first + k < nbins ? hist_load(hist + first + k) : 0;
        sum += c[k];
    }
    long long before;
    __syncthreads();
    Scan(tmp).ExclusiveSum(sum, before);
    if (threadIdx.x == 0) {
        s_bin = nbins - 1;
        s_below = 0;
    }
    __syncthreads();
    if (rank >= before && rank < before + sum) {
#pragma unroll
        for (int k = 0; k < PER; ++k) {
            if (rank < before + c[k]) {
                s_bin = first + k;
                s_below = before;
                break;
            }
            before += c[k];
        }
    }
    __syncthreads();
    *bin = s_bin;
    *below = s_below;
}

// After the moments pass: record them, detect convergence.  Thread 0.
// Returns true when the row is finished.
__device__ bool clip_after_moments(ga_clip_state &st, const ga_clip_args &a, Moments m, int final)
{
    const double count = m.n;
    const double mean = st.shift + m.s1 / count;
    const double m2 = m.s2 - m.s1 * (m.s1 / count);
    const bool converged = !final && st.iterations > 0 && (int64_t)count == st.prev_count;
    st.count = (int64_t)count;
    st.mean = count > 0 ? mean : NAN;
    st.m2 = count > 0 ? (m2 > 0.0 ? m2 : 0.0) : NAN;
    st.std = sqrt(st.m2 / (count - a.std_ddof));
    if (count == 0) {
        // Everything clipped: astropy's next bounds come from an empty
        // array (NaN) and that iteration changes nothing -- or, with
        // keep_last (astropy's per-row path, axis given), the row ends with
        // the bounds that emptied it.
        st.median = NAN;
        if (!final && !a.keep_last) {
            st.bound_lo = st.bound_hi = NAN;
            st.iterations++;
        }
        st.done = 1;
        return true;
    }
    if (converged) {
        st.done = 1;
        return true;
    }
    st.rank[0] = (st.count - 1) / 2;
    st.rank[1] = st.count / 2;
    st.prefix[0] = st.prefix[1] = 0;
    return false;
}

// After the last digit of a phase: the median, then (if the phase ends the
// iteration) the bounds and the new interval.  Thread 0.
template <class T>
__device__ void clip_after_phase(ga_clip_state &st, const ga_clip_args &a, int phase, int final)
{
    using Key = ClipKey<T>;
    const T lo = Key::dec((typename Key::K)st.prefix[0]);
    const T hi = Key::dec((typename Key::K)st.prefix[1]);
    const T mid = Key::div(Key::add(lo, hi), (T)2);
    T centre, spread;
    if (phase == 0) {
        st.median = (double)mid;
        if (final) {
            st.done = 1;
            return;
        }
        centre = a.cen_median ? mid : (T)st.mean;
        st.centre = (double)centre;
        if (a.std_mad) {
            st.rank[0] = (st.count - 1) / 2;
            st.rank[1] = st.count / 2;
            st.prefix[0] = st.prefix[1] = 0;
            return;
        }
        spread = (T)sqrt(st.m2 / (double)st.count);
    } else {
        centre = (T)st.centre;
        spread = Key::mul((T)CL_MAD_STD, mid);
    }
    const T blo = Key::sub(centre, Key::mul(spread, (T)a.sigma_lower));
    const T bhi = Key::add(centre, Key::mul(spread, (T)a.sigma_upper));
    st.spread = (double)spread;
    st.bound_lo = (double)blo;
    st.bound_hi = (double)bhi;
    st.lo = st.lo > (double)blo ? st.lo : (double)blo;
    st.hi = st.hi < (double)bhi ? st.hi : (double)bhi;
    st.prev_count = st.count;
    st.iterations++;
    st.shift = (double)centre;
}

// Pick this digit of both middle elements from the histograms (the second
// middle has its own histogram once the prefixes differ).  Whole block.
template <class T, class C>
__device__ void clip_pick(ga_clip_state &st, const C *hist, int pass)
{
    int shift, width;
    clip_digit<T>(pass, &shift, &width);
    const bool split = pass > 0 && st.prefix[0] != st.prefix[1];
    for (int t = 0; t < 2; ++t) {
        int bin;
        int64_t below;
        block_select(hist + (t == 1 && split ? CL_BINS : 0), 1 << width, st.rank[t], &bin, &below);
        if (threadIdx.x == 0) {
            st.prefix[t] = (st.prefix[t] << width) | (uint64_t)bin;
            st.rank[t] -= below;
        }
        __syncthreads();
    }
}

// ============================== kernels ====================================

template <class T>
__global__ void k_clip_init(ga_clip_args a)
{
    GA_GRID_STRIDE(r, a.nrows) {
        ga_clip_state st;
        memset(&st, 0, sizeof(st));
        const T first = a.rowlen > 0 ? ((const T *)a.data)[r * a.rowlen] : (T)0;
        const T big = a.inclusive ? ClipKey<T>::maxval() : (T)INFINITY;
        st.lo = -(double)big;
        st.hi = (double)big;
        st.bound_lo = st.bound_hi = NAN;
        st.centre = st.spread = st.median = st.mean = st.std = NAN;
        st.shift = isfinite((double)first) ? (double)first : 0.0;
        st.prev_count = -1;
        a.state[r] = st;
    }
}

// Scratch of the one-row passes: hist[3][2][CL_BINS] (rotated by the
// grid-wide kernel; the pass-per-launch path uses the first) |
// partials[2][grid] | ticket | tile counts and offsets (compaction).
constexpr int CL_HIST_BUFFERS = 3;

struct ClipScratch {
    unsigned long long *hist;
    Moments *partials;
    unsigned int *ticket;
    int64_t *tile_count, *tile_offset;
    __host__ __device__ static size_t round_up(size_t n) { return (n + 255) & ~(size_t)255; }
    __host__ __device__ static size_t hist_bytes()
    {
        return round_up((size_t)CL_HIST_BUFFERS * 2 * CL_BINS * sizeof(unsigned long long));
    }
    __host__ __device__ static int64_t tiles(const ga_clip_args *a)
    {
        return (a->rowlen + CL_TILE - 1) / CL_TILE;
    }
    static size_t bytes(const ga_clip_args *a)
    {
        return hist_bytes() + round_up(2 * (size_t)a->grid * sizeof(Moments)) + 256 +
               2 * round_up((size_t)tiles(a) * sizeof(int64_t));
    }
    __host__ __device__ ClipScratch(const ga_clip_args &a)
    {
        char *c = (char *)a.scratch;
        hist = (unsigned long long *)c;
        c += hist_bytes();
        partials = (Moments *)c;
        c += round_up(2 * (size_t)a.grid * sizeof(Moments));
        ticket = (unsigned int *)c;
        c += 256;
        tile_count = (int64_t *)c;
        c += round_up((size_t)tiles(&a) * sizeof(int64_t));
        tile_offset = (int64_t *)c;
    }
};

__global__ void k_clip_clear(ga_clip_args a)
{
    ClipScratch s(a);
    for (int k = threadIdx.x; k < CL_HIST_BUFFERS * 2 * CL_BINS; k += blockDim.x)
        s.hist[k] = 0;
    if (threadIdx.x == 0)
        *s.ticket = 0;
}

// One digit pass of the single row over the whole grid.
template <class T>
__global__ void __launch_bounds__(CL_THREADS)
k_clip_pass(ga_clip_args a, int phase, int pass, int final)
{
    __shared__ ga_clip_state st;
    __shared__ unsigned int hist[2 * CL_BINS];
    __shared__ bool last, finished;
    ClipScratch s(a);
    if (threadIdx.x == 0) {
        st = *a.state;
        finished = false;
    }
    for (int k = threadIdx.x; k < 2 * CL_BINS; k += blockDim.x)
        hist[k] = 0;
    __syncthreads();
    if (st.done)
        return;
    const ClipPass<T> c = clip_pass_of<T>(st, a, phase, pass);
    Moments m{0.0, 0.0, 0.0};
    clip_scan_values<T>((const T *)a.data, 0, a.rowlen,
                        (int64_t)blockIdx.x * blockDim.x + threadIdx.x,
                        (int64_t)gridDim.x * blockDim.x, c, m, hist);
    if (c.moments)
        m = block_sum(m);
    __syncthreads();
    const int nb = c.split ? 2 * CL_BINS : CL_BINS;
    for (int k = threadIdx.x; k < nb; k += blockDim.x)
        if (hist[k])
            atomicAdd(s.hist + k, (unsigned long long)hist[k]);
    if (threadIdx.x == 0 && c.moments)
        s.partials[blockIdx.x] = m;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicAdd(s.ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence();

    if (c.moments) {
        const Moments t = clip_sum_partials(s.partials, gridDim.x);
        if (threadIdx.x == 0)
            finished = clip_after_moments(st, a, t, final);
        __syncthreads();
    }
    if (!finished) {
        clip_pick<T>(st, (const unsigned long long *)s.hist, pass);
        if (threadIdx.x == 0 && pass == clip_passes<T>() - 1)
            clip_after_phase<T>(st, a, phase, final);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < 2 * CL_BINS; k += blockDim.x)
        s.hist[k] = 0;
    if (threadIdx.x == 0) {
        *a.state = st;
        *s.ticket = 0;
    }
}

// The single row to the end in one cooperative launch: every pass is a
// scan of the whole grid followed by a grid-wide barrier, after which every
// block reads the summed histogram and partial moments and updates its own
// copy of the state -- the same numbers in the same order, so all copies
// agree and every block takes the same branches (and barriers).  Pass q
// adds into histogram q % 3 and partials q % 2: a buffer is rewritten only
// after every block has passed the barrier that ends its readers, and
// block 0 clears the histogram of pass q + 1 during pass q.  No launch, no
// host synchronisation between iterations.
template <class T>
__global__ void __launch_bounds__(CL_THREADS) k_clip_grid(ga_clip_args a, int final_stats)
{
    __shared__ ga_clip_state st;
    __shared__ unsigned int hist[2 * CL_BINS];
    __shared__ bool stop;
    constexpr int NP = clip_passes<T>();
    cg::grid_group grid = cg::this_grid();
    ClipScratch s(a);
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    if (threadIdx.x == 0)
        st = *a.state;
    __syncthreads();
    unsigned int round = 0;
    for (int final = 0; final <= final_stats; ++final) {
        for (;;) {
            if (threadIdx.x == 0)
                stop = st.done || (!final && a.maxiters >= 0 && st.iterations >= a.maxiters);
            __syncthreads();
            if (stop)
                break;
            const int phases = !final && a.std_mad ? 2 : 1;
            for (int phase = 0; phase < phases && !stop; ++phase) {
                for (int pass = 0; pass < NP && !stop; ++pass) {
                    const unsigned int q = round++;
                    const ClipPass<T> c = clip_pass_of<T>(st, a, phase, pass);
                    unsigned long long *gh = s.hist + (size_t)(q % CL_HIST_BUFFERS) * 2 * CL_BINS;
                    Moments *gp = s.partials + (size_t)(q & 1) * a.grid;
                    for (int k = threadIdx.x; k < 2 * CL_BINS; k += blockDim.x)
                        hist[k] = 0;
                    if (blockIdx.x == 0) {
                        unsigned long long *next =
                            s.hist + (size_t)((q + 1) % CL_HIST_BUFFERS) * 2 * CL_BINS;
                        for (int k = threadIdx.x; k < 2 * CL_BINS; k += blockDim.x)
                            next[k] = 0;
                    }
                    __syncthreads();
                    Moments m{0.0, 0.0, 0.0};
                    clip_scan_values<T>((const T *)a.data, 0, a.rowlen, first, stride, c, m,
                                        hist);
                    if (c.moments)
                        m = block_sum(m);
                    __syncthreads();
                    const int nb = c.split ? 2 * CL_BINS : CL_BINS;
                    for (int k = threadIdx.x; k < nb; k += blockDim.x)
                        if (hist[k])
                            atomicAdd(gh + k, (unsigned long long)hist[k]);
                    if (threadIdx.x == 0 && c.moments)
                        gp[blockIdx.x] = m;
                    grid.sync();
                    if (c.moments) {
                        const Moments t = clip_sum_partials(gp, gridDim.x);
                        if (threadIdx.x == 0)
                            stop = clip_after_moments(st, a, t, final);
                        __syncthreads();
                        if (stop)
                            break;
                    }
                    clip_pick<T>(st, gh, pass);
                    if (threadIdx.x == 0 && pass == NP - 1)
                        clip_after_phase<T>(st, a, phase, final);
                    __syncthreads();
                }
            }
            if (final)
                break;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        *a.state = st;
}

// Every row to the end, one block per row.
template <class T>
__global__ void __launch_bounds__(CL_THREADS) k_clip_rows(ga_clip_args a)
{
    __shared__ ga_clip_state st;
    __shared__ unsigned int hist[2 * CL_BINS];
    __shared__ bool stop;
    constexpr int NP = clip_passes<T>();
    for (int64_t r = blockIdx.x; r < a.nrows; r += gridDim.x) {
        const T *row = (const T *)a.data + r * a.rowlen;
        if (threadIdx.x == 0)
            st = a.state[r];
        __syncthreads();
        for (int final = 0; final < 2; ++final) {
            for (;;) {
                if (threadIdx.x == 0)
                    stop = st.done || (!final && a.maxiters >= 0 && st.iterations >= a.maxiters);
                __syncthreads();
                if (stop)
                    break;
                const int phases = !final && a.std_mad ? 2 : 1;
                for (int phase = 0; phase < phases && !stop; ++phase) {
                    for (int pass = 0; pass < NP && !stop; ++pass) {
                        const ClipPass<T> c = clip_pass_of<T>(st, a, phase, pass);
                        for (int k = threadIdx.x; k < 2 * CL_BINS; k += blockDim.x)
                            hist[k] = 0;
                        __syncthreads();
                        Moments m{0.0, 0.0, 0.0};
                        clip_scan_values<T>(row, 0, a.rowlen, threadIdx.x, blockDim.x, c, m, hist);
                        __syncthreads();
                        if (c.moments) {
                            m = block_sum(m);
                            if (threadIdx.x == 0)
                                stop = clip_after_moments(st, a, m, final);
                            __syncthreads();
                            if (stop)
                                break;
                        }
                        clip_pick<T>(st, hist, pass);
                        if (threadIdx.x == 0 && pass == NP - 1)
                            clip_after_phase<T>(st, a, phase, final);
                        __syncthreads();
                    }
                }
                if (final)
                    break;
            }
        }
        if (threadIdx.x == 0)
            a.state[r] = st;
        __syncthreads();
    }
}

// Mask (or NaN-filled copy) from each row's last bounds.
template <class T>
__global__ void k_clip_mask(ga_clip_args a, int nan_fill, void *out)
{
    const T *data = (const T *)a.data;
    const int64_t n = a.nrows * a.rowlen;
    GA_GRID_STRIDE(i, n) {
        const ga_clip_state &st = a.state[i / a.rowlen];
        const T x = data[i];
        const double blo = st.bound_lo, bhi = st.bound_hi;
        bool clipped = !isfinite((double)x);
        if (!clipped && !isnan(blo) && !isnan(bhi))
            clipped = a.inclusive ? ((double)x < blo || (double)x > bhi)
                                  : !((double)x > blo && (double)x < bhi);
        if (nan_fill)
            ((T *)out)[i] = clipped ? (T)NAN : x;
        else
            ((bool *)out)[i] = clipped;
    }
}

// Compaction of the one row's survivors, in order: per-tile counts, the
// last tile scanning them into offsets.
// Survivors: inside the interval (every clip so far), or with use_bounds
// finite and inside the last bounds (the values a mask leaves).
template <class T>
__device__ int clip_tile_flags(const ga_clip_args &a, const ga_clip_state &st, int use_bounds,
                               bool *f)
{
    const T *data = (const T *)a.data;
    const int64_t base = (int64_t)blockIdx.x * CL_TILE + (int64_t)threadIdx.x * CL_TILE_ITEMS;
    const bool no_bounds = isnan(st.bound_lo) || isnan(st.bound_hi);
    const T lo = use_bounds ? (no_bounds ? -ClipKey<T>::maxval() : (T)st.bound_lo) : (T)st.lo;
    const T hi = use_bounds ? (no_bounds ? ClipKey<T>::maxval() : (T)st.bound_hi) : (T)st.hi;
    const int inclusive = use_bounds && no_bounds ? 1 : a.inclusive;
    int c = 0;
#pragma unroll
    for (int k = 0; k < CL_TILE_ITEMS; ++k) {
        f[k] = base + k < a.rowlen && clip_in(data[base + k], lo, hi, inclusive);
        c += f[k];
    }
    return c;
}

template <class T>
__global__ void __launch_bounds__(CL_THREADS)
k_clip_count(ga_clip_args a, int use_bounds, int64_t *total)
{
    using Scan = cub::BlockScan<long long, CL_THREADS>;
    __shared__ typename Scan::TempStorage tmp;
    __shared__ bool last;
    ClipScratch s(a);
    const ga_clip_state st = *a.state;
    bool f[CL_TILE_ITEMS];
    long long c = clip_tile_flags<T>(a, st, use_bounds, f), before, sum;
    Scan(tmp).ExclusiveSum(c, before, sum);
    if (threadIdx.x == 0) {
        s.tile_count[blockIdx.x] = sum;
        __threadfence();
        last = atomicAdd(s.ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    const int64_t ntiles = gridDim.x;
    long long carry = 0;
    for (int64_t start = 0; start < ntiles; start += CL_THREADS) {
        const int64_t t = start + threadIdx.x;
        const long long v = t < ntiles ? (long long)__ldcg(s.tile_count + t) : 0;
        long long b, chunk;
        __syncthreads();
        Scan(tmp).ExclusiveSum(v, b, chunk);
        if (t < ntiles)
            s.tile_offset[t] = carry + b;
        carry += chunk;
    }
    if (threadIdx.x == 0) {
        *total = carry;
        *s.ticket = 0;
    }
}

template <class T>
__global__ void __launch_bounds__(CL_THREADS)
k_clip_compact(ga_clip_args a, int use_bounds, T *out)
{
    using Scan = cub::BlockScan<long long, CL_THREADS>;
    __shared__ typename Scan::TempStorage tmp;
    ClipScratch s(a);
    const ga_clip_state st = *a.state;
    bool f[CL_TILE_ITEMS];
    long long c = clip_tile_flags<T>(a, st, use_bounds, f), before;
    Scan(tmp).ExclusiveSum(c, before);
    int64_t o = s.tile_offset[blockIdx.x] + before;
    const T *data = (const T *)a.data;
    const int64_t base = (int64_t)blockIdx.x * CL_TILE + (int64_t)threadIdx.x * CL_TILE_ITEMS;
#pragma unroll
    for (int k = 0; k < CL_TILE_ITEMS; ++k)
        if (f[k])
            out[o++] = data[base + k];
}

template <class T>
__global__ void k_clip_extract(ga_clip_args a, int field, void *out)
{
    GA_GRID_STRIDE(r, a.nrows) {
        const ga_clip_state &st = a.state[r];
        if (field == 5) {
            ((int64_t *)out)[r] = st.iterations;
            continue;
        }
        const double v = field == 0 ? st.bound_lo : field == 1 ? st.bound_hi
                       : field == 2 ? st.mean : field == 3 ? st.median : st.std;
        ((T *)out)[r] = (T)v;
    }
}

// ============================== launchers ==================================

template <class F>
cudaError_t clip_visit_type(ga_type t, F &&f)
{
    if (t == GA_FLOAT32) return f.template operator()<float>();
    if (t == GA_FLOAT64) return f.template operator()<double>();
    return cudaErrorInvalidValue;
}

struct InitLaunch {
    const ga_clip_args *a; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        k_clip_init<T><<<ga_grid(a->nrows), GA_BLOCK, 0, stream>>>(*a);
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess || a->scratch == nullptr)
            return err;
        k_clip_clear<<<1, CL_THREADS, 0, stream>>>(*a);
        return cudaGetLastError();
    }
};

struct IterationLaunch {
    const ga_clip_args *a; int final; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        const int phases = !final && a->std_mad ? 2 : 1;
        for (int phase = 0; phase < phases; ++phase) {
            for (int pass = 0; pass < clip_passes<T>(); ++pass) {
                k_clip_pass<T><<<a->grid, CL_THREADS, 0, stream>>>(*a, phase, pass, final);
                cudaError_t err = cudaGetLastError();
                if (err != cudaSuccess)
                    return err;
            }
        }
        return cudaSuccess;
    }
};

// Blocks of k_clip_grid<T> that fit on one multiprocessor of `device`
// (cached; 0 when the device cannot launch cooperative kernels).
template <class T>
cudaError_t clip_grid_fit(int device, int *per_sm)
{
    static int cache[64];  // +1, so 0 means not yet asked
    if (device >= 0 && device < 64 && cache[device] > 0) {
        *per_sm = cache[device] - 1;
        return cudaSuccess;
    }
    int coop = 0, blocks = 0;
    cudaError_t err = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device);
    if (err == cudaSuccess && coop)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_clip_grid<T>, CL_THREADS, 0);
    if (err != cudaSuccess)
        return err;
    *per_sm = coop ? blocks : 0;
    if (device >= 0 && device < 64)
        cache[device] = *per_sm + 1;
    return cudaSuccess;
}

struct GridLaunch {
    const ga_clip_args *a; int final_stats; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        int device = 0, per_sm = 0, sms = 0;
        cudaError_t err = cudaGetDevice(&device);
        if (err == cudaSuccess)
            err = clip_grid_fit<T>(device, &per_sm);
        if (err == cudaSuccess)
            err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        if (err != cudaSuccess)
            return err;
        if (per_sm < 1)
            return cudaErrorNotSupported;
        const int64_t fit = (int64_t)per_sm * sms;
        const unsigned int grid = (unsigned int)(a->grid < fit ? a->grid : fit);
        ga_clip_args args = *a;
        int final = final_stats;
        void *params[] = {&args, &final};
        return cudaLaunchCooperativeKernel((const void *)k_clip_grid<T>, dim3(grid),
                                           dim3(CL_THREADS), params, 0, stream);
    }
};

struct RowsLaunch {
    const ga_clip_args *a; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        const int64_t cap = 1 << 16;
        const unsigned int grid = (unsigned int)(a->nrows < cap ? a->nrows : cap);
        k_clip_rows<T><<<grid, CL_THREADS, 0, stream>>>(*a);
        return cudaGetLastError();
    }
};

struct MaskLaunch {
    const ga_clip_args *a; int nan_fill; void *out; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        k_clip_mask<T><<<ga_grid(a->nrows * a->rowlen), GA_BLOCK, 0, stream>>>(*a, nan_fill, out);
        return cudaGetLastError();
    }
};

struct CountLaunch {
    const ga_clip_args *a; int use_bounds; int64_t *total; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        k_clip_count<T><<<(unsigned int)ClipScratch::tiles(a), CL_THREADS, 0, stream>>>(
            *a, use_bounds, total);
        return cudaGetLastError();
    }
};

struct CompactLaunch {
    const ga_clip_args *a; int use_bounds; void *out; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        k_clip_compact<T><<<(unsigned int)ClipScratch::tiles(a), CL_THREADS, 0, stream>>>(
            *a, use_bounds, (T *)out);
        return cudaGetLastError();
    }
};

struct ExtractLaunch {
    const ga_clip_args *a; int field; void *out; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        k_clip_extract<T><<<ga_grid(a->nrows), GA_BLOCK, 0, stream>>>(*a, field, out);
        return cudaGetLastError();
    }
};

} // namespace

extern "C" size_t ga_clip_scratch_bytes(const ga_clip_args *a)
{
    return ClipScratch::bytes(a);
}

extern "C" cudaError_t ga_launch_clip_init(const ga_clip_args *a, cudaStream_t stream)
{
    return clip_visit_type(a->type, InitLaunch{a, stream});
}

extern "C" cudaError_t ga_launch_clip_iteration(const ga_clip_args *a, int final,
                                                cudaStream_t stream)
{
    if (a->nrows != 1 || a->grid < 1)
        return cudaErrorInvalidValue;
    return clip_visit_type(a->type, IterationLaunch{a, final, stream});
}

extern "C" cudaError_t ga_launch_clip_grid(const ga_clip_args *a, int final_stats,
                                           cudaStream_t stream)
{
    if (a->nrows != 1 || a->grid < 1)
        return cudaErrorInvalidValue;
    return clip_visit_type(a->type, GridLaunch{a, final_stats, stream});
}

extern "C" cudaError_t ga_launch_clip_rows(const ga_clip_args *a, cudaStream_t stream)
{
    if (a->nrows < 1)
        return cudaSuccess;
    return clip_visit_type(a->type, RowsLaunch{a, stream});
}

extern "C" cudaError_t ga_launch_clip_mask(const ga_clip_args *a, int nan_fill, void *out,
                                           cudaStream_t stream)
{
    if (a->nrows * a->rowlen == 0)
        return cudaSuccess;
    return clip_visit_type(a->type, MaskLaunch{a, nan_fill, out, stream});
}

extern "C" cudaError_t ga_launch_clip_count(const ga_clip_args *a, int use_bounds,
                                            int64_t *total, cudaStream_t stream)
{
    if (a->nrows != 1 || a->rowlen < 1)
        return cudaErrorInvalidValue;
    return clip_visit_type(a->type, CountLaunch{a, use_bounds, total, stream});
}

extern "C" cudaError_t ga_launch_clip_compact(const ga_clip_args *a, int use_bounds, void *out,
                                              cudaStream_t stream)
{
    if (a->nrows != 1 || a->rowlen < 1)
        return cudaErrorInvalidValue;
    return clip_visit_type(a->type, CompactLaunch{a, use_bounds, out, stream});
}

extern "C" cudaError_t ga_launch_clip_extract(const ga_clip_args *a, int field, void *out,
                                              cudaStream_t stream)
{
    return clip_visit_type(a->type, ExtractLaunch{a, field, out, stream});
}
