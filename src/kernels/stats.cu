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
// One row (axis=None) is spread over the whole GPU in one cooperative
// launch (k_clip_grid): each pass is a scan of the data by every block and
// a grid-wide barrier.  A median rarely needs all its digit passes there:
// once the bins picked so far hold few values (at most 16 KB of them), one
// pass gathers them and every block picks the two middle ones out of them
// in shared memory (binned, the middle bins' few keys ranked); and the
// moments pass of each iteration also gathers the values around the last
// median (a bracket sized by what the last clip removed), which usually
// hold the new one -- an iteration is then one pass over the data.  Where
// cooperative launches are not available, one kernel per digit pass
// (k_clip_pass): blocks histogram into shared memory and add the non-zero
// bins to a global histogram; the last block to finish (a ticket) reduces
// the moment partials in a fixed order, picks the digit, updates the row's
// state and clears the histogram for the next pass; every pass first
// checks the state's `done` flag, so the host can queue iterations ahead
// and those after convergence cost only a launch.  Many rows (axis given,
// or a small array) take one block per row and run every iteration inside
// one launch (k_clip_rows).  Only the survivors of
// the one row (masked=False, compressed()) are compacted at the end, by
// compact.cuh's single pass (k_clip_select).
#include "compact.cuh"
#include "last_block.cuh"
#include "radix_select.cuh"
#include "sort_keys.cuh"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

namespace {

constexpr int CL_THREADS = 256;
// The grid-wide kernel's blocks: CL_GRID_SM_THREADS threads a
// multiprocessor (up to 128 registers each) as one block, not two of
// CL_THREADS, so after each grid-wide barrier half as many blocks read the
// same partials, histogram and candidates from L2, and twice the threads
// share each block's pick (faster in each of three alternating pairs on
// the H100: benchmarks/results/<GPU>-session-2026-11-27h.md).
constexpr int CL_GRID_SM_THREADS = 512;
constexpr int CL_GRID_THREADS = 512;
constexpr int CL_ITEMS = 8;
constexpr int CL_VITEMS = 4;
constexpr double CL_MAD_STD = 1.482602218505602;  // 1 / Phi^-1(3/4)

// ============================== keys and arithmetic ========================

template <class T> struct ClipKey;
template <> struct ClipKey<float> {
    using K = uint32_t;
    static constexpr int BITS = 32;
    __device__ static K enc(float x) { return ga_bits_to_key<K>(ga_bits_as<K>(x), GA_KEY_FLOAT); }
    __device__ static float dec(K k) { return ga_bits_as<float>(ga_from_key<K>(k, GA_KEY_FLOAT)); }
    __device__ static float add(float a, float b) { return __fadd_rn(a, b); }
    __device__ static float sub(float a, float b) { return __fsub_rn(a, b); }
    __device__ static float mul(float a, float b) { return __fmul_rn(a, b); }
    __device__ static float div(float a, float b) { return __fdiv_rn(a, b); }
    __device__ static float maxval() { return 3.402823466e+38f; }
};
template <> struct ClipKey<double> {
    using K = uint64_t;
    static constexpr int BITS = 64;
    __device__ static K enc(double x) { return ga_bits_to_key<K>(ga_bits_as<K>(x), GA_KEY_FLOAT); }
    __device__ static double dec(K k) { return ga_bits_as<double>(ga_from_key<K>(k, GA_KEY_FLOAT)); }
    __device__ static double add(double a, double b) { return __dadd_rn(a, b); }
    __device__ static double sub(double a, double b) { return __dsub_rn(a, b); }
    __device__ static double mul(double a, double b) { return __dmul_rn(a, b); }
    __device__ static double div(double a, double b) { return __ddiv_rn(a, b); }
    __device__ static double maxval() { return 1.7976931348623157e+308; }
};

template <class T> constexpr int clip_passes() { return ga_radix_passes(ClipKey<T>::BITS); }

template <class T>
__device__ __forceinline__ void clip_digit(int p, int *shift, int *width)
{
    ga_radix_digit(ClipKey<T>::BITS, p, shift, width);
}

template <class T>
__device__ __forceinline__ bool clip_in(T x, T lo, T hi, int inclusive)
{
    return inclusive ? (x >= lo && x <= hi) : (x > lo && x < hi);
}

// ============================== one pass over values =======================

// What a pass needs to know, read from the state once per block.  The
// grid kernel may also gather candidates: the values (|x - centre| in phase
// 1) inside the interval whose keys lie in [klo, khi], appended to `cand`
// (at most `cap`; *ncand counts them all), and with `bracket` count the
// values below klo among the moments.
template <class T>
struct ClipPass {
    T lo, hi, centre;  // centre: of |x - centre| in phase 1 (the median)
    double shift;
    int inclusive, phase, pass, moments, split;
    int dshift, width;
    typename ClipKey<T>::K prefix[2];
    int hist, collect, bracket, cap;
    typename ClipKey<T>::K klo, khi;
    T *cand;
    unsigned int *ncand;
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
    c.hist = 1;
    c.collect = c.bracket = c.cap = 0;
    c.klo = c.khi = 0;
    c.cand = nullptr;
    c.ncand = nullptr;
    return c;
}

// below: values under the bracket (grid kernel)
struct __align__(16) Moments {  // 16: clip_sum_partials loads halves
    double n, s1, s2, below;
};

// Append the lanes' values that `take` to the candidates: one atomic per
// warp.
template <class T>
__device__ __forceinline__ void clip_gather(T y, bool take, const ClipPass<T> &c)
{
    const unsigned int active = __activemask();
    const unsigned int want = __ballot_sync(active, take);
    if (want == 0)
        return;
    const int lane = threadIdx.x & 31, leader = __ffs(want) - 1;
    unsigned int at = 0;
    if (lane == leader)
        at = atomicAdd(c.ncand, (unsigned int)__popc(want));
    at = __shfl_sync(active, at, leader) + __popc(want & ((1u << lane) - 1));
    if (take && at < (unsigned int)c.cap)
        c.cand[at] = y;
}

// What a pass does with each value, known at compile time for the grid
// kernel's common passes (clip_scan picks the instantiation) so the loop
// over the values tests no flag: moments (and the count under the bracket),
// candidates gathered, a histogram of the first or of a later digit, |x -
// centre| (phase 1).  CV_RUNTIME reads every flag from the pass instead.
enum {
    CV_MOM = 1, CV_BRK = 2, CV_COL = 4, CV_H0 = 8, CV_HD = 16, CV_PH1 = 32, CV_RUNTIME = 64
};

template <class T>
__device__ __forceinline__ int clip_flags(const ClipPass<T> &c)
{
    return (c.moments ? CV_MOM : 0) | (c.bracket ? CV_BRK : 0) | (c.collect ? CV_COL : 0) |
           (c.hist ? (c.pass == 0 ? CV_H0 : CV_HD) : 0) | (c.phase == 1 ? CV_PH1 : 0);
}

// Count one value into the block's histograms (and moments, candidates).
// Plain shared-memory atomics, also for the first digit where the values
// crowd: aggregating a warp's equal bins with __match_any_sync cost more
// than the conflicts it saved (src/kernels/dev/clip_bench.cu: 34 us against
// 15 us for a first pass over the 2048^2 sky on an H100).
template <class T, int F>
__device__ __forceinline__ void clip_visit(T x, bool valid, const ClipPass<T> &c, Moments &m,
                                           unsigned int *hist)
{
    using K = typename ClipKey<T>::K;
    constexpr bool RT = F == CV_RUNTIME;
    const bool phase1 = RT ? c.phase == 1 : (F & CV_PH1) != 0;
    const bool moments = RT ? c.moments != 0 : (F & CV_MOM) != 0;
    const bool bracket = RT ? c.bracket != 0 : (F & CV_BRK) != 0;
    const bool collect = RT ? c.collect != 0 : (F & CV_COL) != 0;
    const bool h0 = RT ? c.hist && c.pass == 0 : (F & CV_H0) != 0;
    const bool hd = RT ? c.hist && c.pass > 0 : (F & CV_HD) != 0;
    const bool in = valid && clip_in(x, c.lo, c.hi, c.inclusive);
    T y = x;
    if (phase1) {
        y = ClipKey<T>::sub(x, c.centre);
        y = y < (T)0 ? -y : y;
    }
    const K key = ClipKey<T>::enc(y);
    if (moments && in) {
        const double d = (double)x - c.shift;
        m.n += 1.0;
        m.s1 += d;
        m.s2 += d * d;
        if (bracket && key < c.klo)
            m.below += 1.0;
    }
    if (collect)
        clip_gather<T>(y, in && key >= c.klo && key <= c.khi, c);
    if (!in)
        return;
    if (h0)
        atomicAdd(hist + (unsigned int)(key >> c.dshift), 1u);
    if (!hd)
        return;
    const K pre = key >> (c.dshift + c.width);
    const unsigned int d = (unsigned int)(key >> c.dshift) & ((1u << c.width) - 1);
    if (pre == c.prefix[0])
        atomicAdd(hist + d, 1u);
    if (c.split && pre == c.prefix[1])
        atomicAdd(hist + GA_RADIX_BINS + d, 1u);
}

// 16-byte loads of the data.
template <class T> struct ClipVec;
template <> struct ClipVec<float> {
    using V = float4;
    static constexpr int N = 4;
    __device__ static void get(const V &v, float *e) { e[0] = v.x; e[1] = v.y; e[2] = v.z; e[3] = v.w; }
};
template <> struct ClipVec<double> {
    using V = double2;
    static constexpr int N = 2;
    __device__ static void get(const V &v, double *e) { e[0] = v.x; e[1] = v.y; }
};

// Values [begin, end) with the given thread start and stride (in 16-byte
// vectors where data + begin is 16-byte aligned, the last few values and
// unaligned data one by one): CL_VITEMS vectors or CL_ITEMS values of
// independent loads in flight per thread, each load coalesced over the warp.
template <class T, int F>
__device__ void clip_scan_values(const T *data, int64_t begin, int64_t end, int64_t first,
                                 int64_t stride, const ClipPass<T> &c, Moments &m,
                                 unsigned int *hist)
{
    using Vec = ClipVec<T>;
    if (((uintptr_t)(data + begin) & 15) == 0) {
        const typename Vec::V *vec = (const typename Vec::V *)(data + begin);
        const int64_t nv = (end - begin) / Vec::N;
        for (int64_t base = first; base < nv; base += stride * CL_VITEMS) {
            typename Vec::V w[CL_VITEMS];
#pragma unroll
            for (int k = 0; k < CL_VITEMS; ++k)
                w[k] = base + k * stride < nv ? vec[base + k * stride] : typename Vec::V{};
#pragma unroll
            for (int k = 0; k < CL_VITEMS; ++k) {
                T e[Vec::N];
                Vec::get(w[k], e);
#pragma unroll
                for (int j = 0; j < Vec::N; ++j)
                    clip_visit<T, F>(e[j], base + k * stride < nv, c, m, hist);
            }
        }
        begin += nv * Vec::N;
    }
    for (int64_t base = begin + first; base < end; base += stride * CL_ITEMS) {
        T v[CL_ITEMS];
#pragma unroll
        for (int k = 0; k < CL_ITEMS; ++k)
            v[k] = base + k * stride < end ? data[base + k * stride] : (T)0;
#pragma unroll
        for (int k = 0; k < CL_ITEMS; ++k)
            clip_visit<T, F>(v[k], base + k * stride < end, c, m, hist);
    }
}

// clip_scan_values for pass c: the single row's common passes specialised
// (moments with the first digit; the bracket pass; gathering; a later
// digit), any other with the flags read at run time.
template <class T>
__device__ void clip_scan(const T *data, int64_t begin, int64_t end, int64_t first, int64_t stride,
                          const ClipPass<T> &c, Moments &m, unsigned int *hist)
{
    switch (clip_flags(c)) {
    case CV_MOM | CV_H0:
        clip_scan_values<T, CV_MOM | CV_H0>(data, begin, end, first, stride, c, m, hist);
        break;
    case CV_MOM | CV_BRK | CV_COL | CV_H0:
        clip_scan_values<T, CV_MOM | CV_BRK | CV_COL | CV_H0>(data, begin, end, first, stride, c,
                                                               m, hist);
        break;
    case CV_COL:
        clip_scan_values<T, CV_COL>(data, begin, end, first, stride, c, m, hist);
        break;
    case CV_HD:
        clip_scan_values<T, CV_HD>(data, begin, end, first, stride, c, m, hist);
        break;
    default:
        clip_scan_values<T, CV_RUNTIME>(data, begin, end, first, stride, c, m, hist);
    }
}

// ============================== block-level pieces =========================

template <int THREADS = CL_THREADS>
__device__ Moments block_sum(Moments m)
{
    __shared__ double part[4][THREADS / 32];
    for (int off = 16; off > 0; off >>= 1) {
        m.n += __shfl_down_sync(0xffffffffu, m.n, off);
        m.s1 += __shfl_down_sync(0xffffffffu, m.s1, off);
        m.s2 += __shfl_down_sync(0xffffffffu, m.s2, off);
        m.below += __shfl_down_sync(0xffffffffu, m.below, off);
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();
    if (lane == 0) {
        part[0][warp] = m.n;
        part[1][warp] = m.s1;
        part[2][warp] = m.s2;
        part[3][warp] = m.below;
    }
    __syncthreads();
    Moments r{0.0, 0.0, 0.0, 0.0};
    if (threadIdx.x == 0) {
        for (int w = 0; w < THREADS / 32; ++w) {
            r.n += part[0][w];
            r.s1 += part[1][w];
            r.s2 += part[2][w];
            r.below += part[3][w];
        }
    }
    return r;
}

// The moments of every block of a pass, summed in a fixed order: the same
// sums every run, and in every block that computes them.  A thread's two
// partials (b, b + blockDim.x) are loaded together: after the grid-wide
// barrier every block reads the same lines, and each trip to L2 waits
// ~1 us.  Whole block; thread 0 gets the total.
template <int THREADS = CL_THREADS>
__device__ Moments clip_sum_partials(const Moments *p, unsigned int n)
{
    Moments m{0.0, 0.0, 0.0, 0.0};
    for (unsigned int b0 = threadIdx.x; b0 < n; b0 += 2 * blockDim.x) {
        double2 v[2][2];
#pragma unroll
        for (int u = 0; u < 2; ++u) {
            const unsigned int b = b0 + u * blockDim.x;
            const double2 *q = (const double2 *)(p + b);
            v[u][0] = b < n ? __ldcg(q) : make_double2(0.0, 0.0);
            v[u][1] = b < n ? __ldcg(q + 1) : make_double2(0.0, 0.0);
        }
#pragma unroll
        for (int u = 0; u < 2; ++u) {
            m.n += v[u][0].x;
            m.s1 += v[u][0].y;
            m.s2 += v[u][1].x;
            m.below += v[u][1].y;
        }
    }
    return block_sum<THREADS>(m);
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
// middle has its own histogram once the prefixes differ); counts (thread 0,
// if given) receives the number of elements in each picked bin.  ONE_SCAN:
// both middles from one scan of a shared histogram (the grid kernel, where
// each read of the histogram waits on L2; one block a row keeps to one
// rank a scan, which needs fewer registers).  Whole block.
template <class T, int THREADS = CL_THREADS, bool ONE_SCAN = false, class C>
__device__ void clip_pick(ga_clip_state &st, const C *hist, int pass, int64_t *counts = nullptr)
{
    int shift, width;
    clip_digit<T>(pass, &shift, &width);
    const bool split = pass > 0 && st.prefix[0] != st.prefix[1];
    ga_block_select_two<THREADS>(hist, hist + (split ? GA_RADIX_BINS : 0), ONE_SCAN && !split,
                                 1 << width, st.rank,
                                 [&](int t, int bin, int64_t below, int64_t count) {
                                     if (threadIdx.x == 0) {
                                         st.prefix[t] = (st.prefix[t] << width) | (uint64_t)bin;
                                         st.rank[t] -= below;
                                         if (counts != nullptr)
                                             counts[t] = count;
                                     }
                                 });
    __syncthreads();
}

// ============================== kernels ====================================


// Scratch of the one-row passes: hist[3][2][GA_RADIX_BINS] (rotated by the
// grid-wide kernel; the pass-per-launch path uses the first) |
// partials[2][grid] | ticket, ncand[3] | cand[2] (grid kernel).
constexpr int CL_HIST_BUFFERS = 3;

// Candidates gathered by one pass of the grid kernel: CL_CAND_BYTES of
// values (4096 float32, 2048 float64), binned in shared memory by every
// block after the pass (clip_pick_candidates).
constexpr int CL_CAND_BYTES = 16384;

struct ClipScratch {
    unsigned long long *hist;
    Moments *partials;
    unsigned int *ticket, *ncand;
    void *cand;
    __host__ __device__ static size_t round_up(size_t n) { return (n + 255) & ~(size_t)255; }
    __host__ __device__ static size_t hist_bytes()
    {
        return round_up((size_t)CL_HIST_BUFFERS * 2 * GA_RADIX_BINS * sizeof(unsigned long long));
    }
    static size_t bytes(const ga_clip_args *a)
    {
        return hist_bytes() + round_up(2 * (size_t)a->grid * sizeof(Moments)) + 256 +
               2 * (size_t)CL_CAND_BYTES;
    }
    __host__ __device__ ClipScratch(const ga_clip_args &a)
    {
        char *c = (char *)a.scratch;
        hist = (unsigned long long *)c;
        c += hist_bytes();
        partials = (Moments *)c;
        c += round_up(2 * (size_t)a.grid * sizeof(Moments));
        ticket = (unsigned int *)c;
        ncand = ticket + 1;
        c += 256;
        cand = c;
    }
};

// Every row's state; with a single row's scratch, its counters cleared.
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
    // The single row's scratch: histograms and tickets cleared by block 0.
    if (a.scratch != nullptr && blockIdx.x == 0) {
        ClipScratch s(a);
        for (int k = threadIdx.x; k < CL_HIST_BUFFERS * 2 * GA_RADIX_BINS; k += blockDim.x)
            s.hist[k] = 0;
        if (threadIdx.x <= CL_HIST_BUFFERS)
            s.ticket[threadIdx.x] = 0;
    }
}

// One digit pass of the single row over the whole grid.
template <class T>
__global__ void __launch_bounds__(CL_THREADS)
k_clip_pass(ga_clip_args a, int phase, int pass, int final)
{
    __shared__ ga_clip_state st;
    __shared__ unsigned int hist[2 * GA_RADIX_BINS];
    __shared__ bool finished;
    ClipScratch s(a);
    if (threadIdx.x == 0) {
        st = *a.state;
        finished = false;
    }
    for (int k = threadIdx.x; k < 2 * GA_RADIX_BINS; k += blockDim.x)
        hist[k] = 0;
    __syncthreads();
    if (st.done)
        return;
    const ClipPass<T> c = clip_pass_of<T>(st, a, phase, pass);
    Moments m{0.0, 0.0, 0.0, 0.0};
    clip_scan_values<T, CV_RUNTIME>((const T *)a.data, 0, a.rowlen,
                                    (int64_t)blockIdx.x * blockDim.x + threadIdx.x,
                                    (int64_t)gridDim.x * blockDim.x, c, m, hist);
    if (c.moments)
        m = block_sum(m);
    __syncthreads();
    const int nb = c.split ? 2 * GA_RADIX_BINS : GA_RADIX_BINS;
    for (int k = threadIdx.x; k < nb; k += blockDim.x)
        if (hist[k])
            atomicAdd(s.hist + k, (unsigned long long)hist[k]);
    if (threadIdx.x == 0 && c.moments)
        s.partials[blockIdx.x] = m;
    if (!ga_last_block(s.ticket))
        return;

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
    for (int k = threadIdx.x; k < 2 * GA_RADIX_BINS; k += blockDim.x)
        s.hist[k] = 0;
    if (threadIdx.x == 0) {
        *a.state = st;
        *s.ticket = 0;
    }
}

// How the grid kernel finds a median: histogram passes over digits of the
// keys, or one pass gathering the candidates of a key range [klo, khi]
// (CL_COLLECT: the range of the bins picked so far, once they hold at most
// the buffer's capacity; CL_BRACKET: a guess around the last median, made
// by the moments pass, which also histograms the first digit in case the
// guess misses).
enum { CL_HIST = 0, CL_COLLECT = 1, CL_BRACKET = 2 };

// Middle candidates ranked among themselves by counting when their bins
// hold at most this many (else every candidate is sorted).
constexpr int CL_FEW = 256;
static_assert(CL_FEW <= CL_THREADS && CL_FEW <= CL_GRID_THREADS, "one few key a thread");

template <class K>
struct ClipSelect {
    int mode, pass, done, nfew;
    K klo, khi;
    int64_t below;    // values of the interval with keys under klo
    int64_t count[2]; // values in the bins just picked
    int bracket;      // bk_lo, bk_hi: the guess for the next median
    K bk_lo, bk_hi;
};

// Sort n keys in shared memory (n a power of two, unused places ~0):
// bitonic network, the pairs of each step spread over the block.  Whole
// block.
template <class K>
__device__ void block_sort_keys(K *keys, int n)
{
    for (int k = 2; k <= n; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int p = threadIdx.x; p < n / 2; p += blockDim.x) {
                const int i = ((p & ~(j - 1)) << 1) | (p & (j - 1));
                const K x = keys[i], y = keys[i | j];
                if ((x > y) == ((i & k) == 0)) {
                    keys[i] = y;
                    keys[i | j] = x;
                }
            }
            __syncthreads();
        }
    }
}

template <class K>
__device__ void block_pad_keys(K *keys, int n, int *size)
{
    int p = 1;
    while (p < n)
        p <<= 1;
    for (int i = n + threadIdx.x; i < p; i += blockDim.x)
        keys[i] = ~(K)0;
    *size = p;
    __syncthreads();
}

// The two middle elements from the n gathered candidates (keys in [klo,
// khi]), `below` values of the interval lying under them.  The keys go to
// shared memory and into GA_RADIX_BINS bins of equal key width over [klo, khi];
// the bins holding ranks (count - 1) / 2 - below and count / 2 - below are
// picked as in the histogram passes (one scan for all the ranks), and
// their few keys ranked by counting (when many keys share a bin, all of
// them are sorted).  After the median of the survivors
// (phase 0), bracket the next one: the bins holding the candidates h ranks
// either side of the middle, h = half the values the last clip removed
// (the next clip is expected to remove fewer, and a median moves by at
// most half of what a clip removes) plus 16, at least 64 and at most what
// the buffer holds less GA_RADIX_BINS / 8; where the candidates end first, the
// bracket goes on past [klo, khi] as far as the missing ranks would take
// at the keys' density inside it.  A guess only: a pass that finds the
// median outside, or too many values inside, falls back to histograms.
// Whole block; hist: 2 * GA_RADIX_BINS counters, 16-byte aligned.
template <class T, int THREADS>
__device__ void clip_pick_candidates(ga_clip_state &st, ClipSelect<typename ClipKey<T>::K> &sel,
                                     const T *cand, int n, int64_t below,
                                     typename ClipKey<T>::K *keys, unsigned int *hist, int phase)
{
    using K = typename ClipKey<T>::K;
    constexpr int64_t HMAX = CL_CAND_BYTES / (int)sizeof(T) / 2 - GA_RADIX_BINS / 8;
    K *few = (K *)(hist + GA_RADIX_BINS);  // CL_FEW keys in the second half
    const K span = sel.khi - sel.klo;
    int shift = 0;
    while ((span >> shift) >= (K)GA_RADIX_BINS)
        ++shift;
    for (int k = threadIdx.x; k < GA_RADIX_BINS; k += blockDim.x)
        hist[k] = 0;
    if (threadIdx.x == 0)
        sel.nfew = 0;
    __syncthreads();
    // A full buffer's loads in flight together (one trip to L2, which
    // every block is reading after the grid-wide barrier).
    constexpr int U = CL_CAND_BYTES / (int)sizeof(T) / THREADS;
    for (int i0 = threadIdx.x; i0 < n; i0 += U * blockDim.x) {
        T v[U];
#pragma unroll
        for (int u = 0; u < U; ++u)
            v[u] = i0 + u * (int)blockDim.x < n ? __ldcg(cand + i0 + u * blockDim.x) : (T)0;
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int i = i0 + u * blockDim.x;
            if (i < n) {
                const K key = ClipKey<T>::enc(v[u]);
                keys[i] = key;
                atomicAdd(hist + (unsigned int)((key - sel.klo) >> shift), 1u);
            }
        }
    }
    __syncthreads();
    const int64_t r0 = (st.count - 1) / 2 - below, r1 = st.count / 2 - below;
    // The middles and, after the median of the survivors, the bracket's
    // ends: one scan of the histogram for the four ranks.
    int64_t h = 0;
    if (phase == 0) {
        const int64_t removed = st.prev_count - st.count;
        h = st.prev_count < 0 ? HMAX : removed / 2 + 16;
        h = h < 64 ? 64 : (h > HMAX ? HMAX : h);
    }
    const int64_t ranks[4] = {r0, r1, r0 - h, r1 + h};
    int bins[4];
    int64_t under[4], in[4];
    ga_block_select_bins<THREADS>(hist, GA_RADIX_BINS, ranks, bins, under, in);
    const int b0 = bins[0], b1 = bins[1];
    const int64_t u0 = under[0], c0 = in[0], c1 = in[1];
    if (phase == 0) {
        // Past the range's ends, keys as thinly spread as inside it.
        const double width = ((double)span + 1.0) / (double)n;
        const K top = ~(K)0;
        K lo, hi;
        if (r0 - h >= 0) {
            lo = sel.klo + ((K)bins[2] << shift);
        } else {
            const double ext = (double)(h - r0) * width;
            lo = ext >= (double)sel.klo ? (K)0 : sel.klo - (K)ext;
        }
        if (r1 + h < n) {
            const K off = (K)bins[3] << shift, rest = ((K)1 << shift) - 1;
            hi = span - off > rest ? sel.klo + off + rest : sel.khi;
        } else {
            const double ext = (double)(r1 + h + 1 - n) * width;
            hi = ext >= (double)(top - sel.khi) ? top : sel.khi + (K)ext;
        }
        if (threadIdx.x == 0) {
            sel.bk_lo = lo;
            sel.bk_hi = hi;
            sel.bracket = 1;
        }
    }
    // b1 is b0 or the next non-empty bin: no value lies between the middles
    const int64_t m = b1 == b0 ? c0 : c0 + c1;
    if (shift == 0) {
        if (threadIdx.x == 0) {
            st.prefix[0] = sel.klo + (K)b0;
            st.prefix[1] = sel.klo + (K)b1;
        }
    } else if (m <= CL_FEW) {
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            const int bin = (int)((keys[i] - sel.klo) >> shift);
            if (bin >= b0 && bin <= b1)
                few[atomicAdd(&sel.nfew, 1)] = keys[i];
        }
        __syncthreads();
        // Each of the m <= CL_FEW keys finds its own place among them (ties
        // in gathering order): the keys at the two middles' places are the
        // answers.
        if (threadIdx.x < m) {
            const int t = threadIdx.x;
            const K key = few[t];
            int64_t at = 0;
            for (int j = 0; j < (int)m; ++j) {
                const K o = few[j];
                at += o < key || (o == key && j < t);
            }
            if (at == r0 - u0)
                st.prefix[0] = key;
            if (at == r1 - u0)
                st.prefix[1] = key;
        }
    } else {
        int size;
        block_pad_keys(keys, n, &size);
        block_sort_keys(keys, size);
        if (threadIdx.x == 0) {
            st.prefix[0] = keys[r0];
            st.prefix[1] = keys[r1];
        }
    }
    __syncthreads();
}

// The single row to the end in one cooperative launch: every pass is a
// scan of the whole grid followed by a grid-wide barrier, after which every
// block reads the summed histogram, partial moments and gathered candidates
// and updates its own copy of the state -- the same numbers in the same
// order, so all copies agree and every block takes the same branches (and
// barriers).  Pass q adds into histogram and candidate count q % 3,
// candidates q % 2 and partials q % 2: a buffer is rewritten only after
// every block has passed the barrier that ends its readers, and block 0
// clears the histogram and count of pass q + 1 during pass q.  No launch,
// no host synchronisation between iterations.
//
// A median takes one pass when the last one's bracket holds it (the
// moments pass gathers the bracket), else a histogram of the first digit
// (made by that same pass) and more digits until the picked bins hold few
// enough values to gather in one more pass.
template <class T>
__global__ void __launch_bounds__(CL_GRID_THREADS, CL_GRID_SM_THREADS / CL_GRID_THREADS)
    k_clip_grid(ga_clip_args a, int final_stats)
{
    using K = typename ClipKey<T>::K;
    constexpr int NP = clip_passes<T>();
    constexpr int CAP = CL_CAND_BYTES / (int)sizeof(T);
    __shared__ ga_clip_state st;
    __shared__ __align__(16) unsigned int hist[2 * GA_RADIX_BINS];
    __shared__ K keys[CAP];
    __shared__ ClipSelect<K> sel;
    __shared__ bool stop;
    cg::grid_group grid = cg::this_grid();
    ClipScratch s(a);
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    if (threadIdx.x == 0) {
        st = *a.state;
        sel.bracket = 0;
    }
    __syncthreads();
    unsigned int round = 0;
    for (int final = 0; final <= final_stats; ++final) {
        for (;;) {
            __syncthreads();  // every thread has read stop's last value (a break reaches here)
            if (threadIdx.x == 0)
                stop = st.done || (!final && a.maxiters >= 0 && st.iterations >= a.maxiters);
            __syncthreads();
            if (stop)
                break;
            const int phases = !final && a.std_mad ? 2 : 1;
            for (int phase = 0; phase < phases; ++phase) {
                if (threadIdx.x == 0) {
                    sel.mode = phase == 0 && sel.bracket ? CL_BRACKET : CL_HIST;
                    sel.klo = sel.bk_lo;
                    sel.khi = sel.bk_hi;
                    sel.pass = sel.done = 0;
                    if (phase == 0)
                        sel.bracket = 0;
                }
                __syncthreads();
                for (;;) {
                    const unsigned int q = round++;
                    ClipPass<T> c = clip_pass_of<T>(st, a, phase, sel.pass);
                    c.hist = sel.mode != CL_COLLECT;
                    c.collect = sel.mode != CL_HIST;
                    c.bracket = sel.mode == CL_BRACKET;
                    c.klo = sel.klo;
                    c.khi = sel.khi;
                    c.cap = CAP;
                    c.cand = (T *)s.cand + (size_t)(q & 1) * CAP;
                    c.ncand = s.ncand + q % CL_HIST_BUFFERS;
                    unsigned long long *gh = s.hist + (size_t)(q % CL_HIST_BUFFERS) * 2 * GA_RADIX_BINS;
                    Moments *gp = s.partials + (size_t)(q & 1) * a.grid;
                    if (c.hist)
                        for (int k = threadIdx.x; k < 2 * GA_RADIX_BINS; k += blockDim.x)
                            hist[k] = 0;
                    if (blockIdx.x == 0) {
                        unsigned long long *next =
                            s.hist + (size_t)((q + 1) % CL_HIST_BUFFERS) * 2 * GA_RADIX_BINS;
                        for (int k = threadIdx.x; k < 2 * GA_RADIX_BINS; k += blockDim.x)
                            next[k] = 0;
                        if (threadIdx.x == 0)
                            s.ncand[(q + 1) % CL_HIST_BUFFERS] = 0;
                    }
                    __syncthreads();
                    Moments m{0.0, 0.0, 0.0, 0.0};
                    clip_scan<T>((const T *)a.data, 0, a.rowlen, first, stride, c, m, hist);
                    if (c.moments)
                        m = block_sum<CL_GRID_THREADS>(m);
                    __syncthreads();
                    if (c.hist) {
                        const int nb = c.split ? 2 * GA_RADIX_BINS : GA_RADIX_BINS;
                        for (int k = threadIdx.x; k < nb; k += blockDim.x)
                            if (hist[k])
                                atomicAdd(gh + k, (unsigned long long)hist[k]);
                    }
                    if (threadIdx.x == 0 && c.moments)
                        gp[blockIdx.x] = m;
                    grid.sync();
                    if (c.moments) {
                        const Moments t = clip_sum_partials<CL_GRID_THREADS>(gp, gridDim.x);
                        if (threadIdx.x == 0) {
                            stop = clip_after_moments(st, a, t, final);
                            if (c.bracket)
                                sel.below = (int64_t)t.below;
                        }
                        __syncthreads();
                        if (stop)
                            break;
                    }
                    if (c.collect) {
                        const int64_t n = (int64_t)__ldcg(c.ncand);
                        if (n <= CAP && sel.below <= (st.count - 1) / 2 &&
                            st.count / 2 < sel.below + n) {
                            clip_pick_candidates<T, CL_GRID_THREADS>(st, sel, c.cand, (int)n,
                                                                     sel.below, keys, hist, phase);
                            break;
                        }
                    }
                    clip_pick<T, CL_GRID_THREADS, true>(st, gh, sel.pass, sel.count);
                    if (threadIdx.x == 0) {
                        if (sel.pass == NP - 1) {
                            sel.done = 1;
                        } else {
                            int shift, width;
                            clip_digit<T>(sel.pass, &shift, &width);
                            const bool split = st.prefix[0] != st.prefix[1];
                            sel.pass++;
                            sel.mode = CL_HIST;
                            if (sel.count[0] + (split ? sel.count[1] : 0) <= CAP) {
                                sel.mode = CL_COLLECT;
                                sel.klo = (K)(st.prefix[0] << shift);
                                sel.khi = (K)((st.prefix[1] << shift) |
                                              (((uint64_t)1 << shift) - 1));
                                sel.below = (st.count - 1) / 2 - st.rank[0];
                            }
                        }
                    }
                    __syncthreads();
                    if (sel.done)
                        break;
                }
                if (stop)
                    break;
                if (threadIdx.x == 0)
                    clip_after_phase<T>(st, a, phase, final);
                __syncthreads();
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
    __shared__ unsigned int hist[2 * GA_RADIX_BINS];
    __shared__ bool stop;
    constexpr int NP = clip_passes<T>();
    for (int64_t r = blockIdx.x; r < a.nrows; r += gridDim.x) {
        const T *row = (const T *)a.data + r * a.rowlen;
        if (threadIdx.x == 0)
            st = a.state[r];
        __syncthreads();
        for (int final = 0; final < 2; ++final) {
            for (;;) {
                __syncthreads();  // every thread has read stop's last value (a break reaches here)
                if (threadIdx.x == 0)
                    stop = st.done || (!final && a.maxiters >= 0 && st.iterations >= a.maxiters);
                __syncthreads();
                if (stop)
                    break;
                const int phases = !final && a.std_mad ? 2 : 1;
                for (int phase = 0; phase < phases && !stop; ++phase) {
                    for (int pass = 0; pass < NP && !stop; ++pass) {
                        const ClipPass<T> c = clip_pass_of<T>(st, a, phase, pass);
                        for (int k = threadIdx.x; k < 2 * GA_RADIX_BINS; k += blockDim.x)
                            hist[k] = 0;
                        __syncthreads();
                        Moments m{0.0, 0.0, 0.0, 0.0};
                        clip_scan_values<T, CV_RUNTIME>(row, 0, a.rowlen, threadIdx.x,
                                                        blockDim.x, c, m, hist);
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

// The one row's survivors, in order, by compact.cuh's single pass:
// inside the interval (every clip so far), or with use_bounds finite and
// inside the last bounds (the values a mask leaves).
template <class T>
struct ClipKeep {
    T lo, hi;
    int inclusive, finite;
    __device__ __forceinline__ bool operator()(int64_t, T x) const
    {
        return clip_in(x, lo, hi, inclusive) && (!finite || isfinite(x));
    }
};

template <class T>
__global__ void __launch_bounds__(CP_THREADS)
k_clip_select(ga_clip_args a, int use_bounds, T *out, unsigned long long *state,
              long long *count)
{
    const ga_clip_state &st = *a.state;
    const bool no_bounds = isnan(st.bound_lo) || isnan(st.bound_hi);
    ClipKeep<T> keep;
    keep.lo = use_bounds ? (no_bounds ? -ClipKey<T>::maxval() : (T)st.bound_lo) : (T)st.lo;
    keep.hi = use_bounds ? (no_bounds ? ClipKey<T>::maxval() : (T)st.bound_hi) : (T)st.hi;
    keep.inclusive = use_bounds && no_bounds ? 1 : a.inclusive;
    keep.finite = use_bounds;  // an infinite bound would pass an infinity
    ga_compact_tile<T, false>(a.rowlen, (const T *)a.data, keep, out, state, count);
}

template <class T>
__global__ void k_clip_extract(ga_clip_args a, int field, void *out)
{
    GA_GRID_STRIDE(r, a.nrows) {
        const ga_clip_state &st = a.state[r];
        if (field == GA_CLIP_ITERATIONS) {
            ((int64_t *)out)[r] = st.iterations;
            continue;
        }
        const double v = field == GA_CLIP_LOWER ? st.bound_lo
                       : field == GA_CLIP_UPPER ? st.bound_hi
                       : field == GA_CLIP_MEAN ? st.mean
                       : field == GA_CLIP_MEDIAN ? st.median : st.std;
        ((T *)out)[r] = (T)v;
    }
}

// ============================== launchers ==================================

// The clipped data are float32 or float64.
template <class F>
cudaError_t clip_visit_type(ga_type t, F &&f)
{
    return ga_visit_type(t, ga_only<float, double>(f));
}

struct InitLaunch {
    const ga_clip_args *a; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        k_clip_init<T><<<ga_grid(a->nrows), GA_BLOCK, 0, stream>>>(*a);
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
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k_clip_grid<T>,
                                                            CL_GRID_THREADS, 0);
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
                                           dim3(CL_GRID_THREADS), params, 0, stream);
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

struct SelectLaunch {
    const ga_clip_args *a; int use_bounds; void *out; void *state; int64_t *count;
    cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        unsigned int tiles;
        cudaError_t err = ga_compact_begin(state, a->rowlen, stream, &tiles);
        if (err != cudaSuccess)
            return err;
        k_clip_select<T><<<tiles, CP_THREADS, 0, stream>>>(
            *a, use_bounds, (T *)out, (unsigned long long *)state, (long long *)count);
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

extern "C" size_t ga_clip_select_state_bytes(const ga_clip_args *a)
{
    return ga_compact_state_bytes(a->rowlen);
}

extern "C" cudaError_t ga_launch_clip_select(const ga_clip_args *a, int use_bounds, void *out,
                                             void *state, int64_t *count, cudaStream_t stream)
{
    if (a->nrows != 1 || a->rowlen < 1)
        return cudaErrorInvalidValue;
    return clip_visit_type(a->type, SelectLaunch{a, use_bounds, out, state, count, stream});
}

extern "C" cudaError_t ga_launch_clip_extract(const ga_clip_args *a, int field, void *out,
                                              cudaStream_t stream)
{
    return clip_visit_type(a->type, ExtractLaunch{a, field, out, stream});
}
