// measure.cu -- per-label statistics (scipy.ndimage's measurements): every
// statistic of every requested label in one pass over the data.
//
// A pixel's label selects a slot (ga_slotmap): all pixels, positive labels,
// a range of consecutive integers (slot = label - lo) or a sorted table of
// keys searched by bisection (a table of consecutive integers, like the
// usual arange(1, n + 1) index, is taken as a range).  Each pass reads the
// labels once, as wide loads a round ahead, and tests them against the
// bounds of the measured labels; the few that pass (a sky image's sources)
// go to a queue per block, which all the block's threads then take
// together, a candidate each: the values are read only there (the
// background costs no value traffic), and a window of the image waits for
// memory once, not once per candidate, whichever warp found it.
// Neighbouring candidates of one slot are summed by a warp's segmented
// scan before their total is added to the slot's accumulators: a per-block
// copy in shared memory when every slot fits there, else the global
// float64/uint64 accumulators.  The last block to finish (last_block.cuh)
// turns the accumulators into the requested statistics.  One
// launch before the passes clears the accumulators and, for an index of up
// to a few thousand labels, builds its slot table without a sort, so a
// statistic costs two launches.
//
// Passes: moments (count, sum, coordinate-weighted sums), centred squares
// (variance: needs the means first, computed by the previous pass's last
// block, as SciPy's two-pass formula), extrema (min and max as order-
// preserving 64-bit keys so atomicMin does both), positions (first raster
// index holding the extreme).  Medians and grouping (labeled_comprehension)
// sort (slot, value) pairs with CUB's radix sort; histograms count into
// (slot, bin) cells; value_indices sorts positions by value.
#include "last_block.cuh"
#include "sort_keys.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace {

constexpr int MS_THREADS = 256;
constexpr int MS_ITEMS = 4;                    // labels per lane and load group
// Load groups in flight per lane: 64 bytes of labels (fewer registers for
// 8-byte labels would cost spills), and the elements a warp takes at a time.
template <class L> __host__ __device__ constexpr int ms_groups() { return sizeof(L) == 4 ? 4 : 2; }
template <class L> __host__ __device__ constexpr int ms_window() { return 32 * MS_ITEMS * ms_groups<L>(); }
constexpr int MS_WINDOW = 32 * MS_ITEMS * 4;  // the largest window
// The block's queue of candidates: entries (round << MS_QTAG_SHIFT | warp
// << MS_QWARP_SHIFT | offset in the window).
constexpr int MS_QUEUE = 5120;
constexpr int MS_QWARP_SHIFT = 9;
constexpr int MS_QTAG_SHIFT = 12;
static_assert(MS_WINDOW == 1 << MS_QWARP_SHIFT && MS_THREADS / 32 == 1 << (MS_QTAG_SHIFT - MS_QWARP_SHIFT),
              "queue entry layout");
constexpr int MS_BLOCKS_PER_SM = GA_MEASURE_BLOCKS_PER_SM;  // resident blocks of k_ms_accumulate
constexpr size_t MS_SMEM = 48 * 1024;          // shared memory a launch gets by default
// k_ms_accumulate's own __shared__ memory: the warps' queues and a flag.
constexpr size_t MS_ACC_STATIC_SMEM = MS_QUEUE * sizeof(uint32_t) + 16;
constexpr int64_t MS_SMEM_TABLE = 2048;  // table entries copied to shared memory
constexpr int MS_INDEX_SMALL = GA_MEASURE_INDEX_SMALL;  // indexes up to this size: no sort
constexpr int MS_PREP_THREADS = 256;

// Moment accumulators: components of nslots doubles each.
enum { C_COUNT = 0, C_SUM = 1, C_CSS = 2, C_COORD = 3 };
// Extrema accumulators: components of nslots uint64 each, all reduced with
// atomicMin from all-ones: min key, ~max key, first min / max position.
enum { E_MIN = 0, E_MAXINV = 1, E_MINPOS = 2, E_MAXPOS = 3, E_NCOMP = 4 };
// What an accumulating pass does.
enum { K_MOMENTS = 0, K_CENTRED = 1, K_EXTREMA = 2, K_POSITIONS = 3 };
// What the last block of a pass does.
enum { LAST_NOTHING = 0, LAST_CENTRES = 1, LAST_FINALIZE = 2 };

constexpr uint64_t MS_SIGN = 0x8000000000000000ull;
constexpr uint64_t MS_NONE = ~0ull;

// ============================== keys and slots =============================

// Order-preserving 64-bit keys (sort_keys.cuh) of labels and values: int32
// widened to int64 first, so every label type shares one key space, and
// -0.0 folded onto +0.0 so they match.
__device__ __forceinline__ uint64_t ms_key(int32_t v)
{
    return ga_bits_to_key<uint64_t>((uint64_t)(int64_t)v, GA_KEY_SIGNED);
}
__device__ __forceinline__ uint64_t ms_key(int64_t v)
{
    return ga_bits_to_key<uint64_t>((uint64_t)v, GA_KEY_SIGNED);
}
__device__ __forceinline__ uint64_t ms_key(double v)
{
    return ga_bits_to_key<uint64_t>(v == 0.0 ? 0ull : ga_bits_as<uint64_t>(v), GA_KEY_FLOAT);
}
__device__ __forceinline__ double ms_unkey(uint64_t k)
{
    return ga_bits_as<double>(ga_from_key<uint64_t>(k, GA_KEY_FLOAT));
}

__device__ __forceinline__ int64_t ms_lower_bound(const uint64_t *t, int64_t n, uint64_t key)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = (lo + hi) >> 1;
        if (t[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

// The slot of a label, or -1.  `table` is the slot map's table, possibly a
// shared-memory copy.
template <class L>
__device__ __forceinline__ int64_t ms_slot(const ga_slotmap &m, const uint64_t *table, L lab)
{
    switch (m.mode) {
    case GA_SLOT_ALL:
        return 0;
    case GA_SLOT_POSITIVE:
        return lab > (L)0 ? 0 : -1;
    case GA_SLOT_RANGE:
        if constexpr (std::is_integral<L>::value) {
            const int64_t d = (int64_t)lab - m.lo;
            return (uint64_t)d < (uint64_t)m.nslots ? d : -1;
        } else {
            if (!(lab >= (double)m.lo && lab < (double)m.lo + (double)m.nslots))
                return -1;
            const int64_t li = (int64_t)lab;
            return (double)li == lab ? li - m.lo : -1;
        }
    default: {
        const uint64_t key = ms_key(lab);
        if (key < table[0] || key > table[m.nslots - 1])
            return -1;
        const int64_t s = ms_lower_bound(table, m.nslots, key);
        return table[s] == key ? s : -1;
    }
    }
}

// Bounds [lo, hi] of the keys (ms_key) of the labels that can have a slot:
// a quick test that rejects most background labels; ms_slot decides.
template <class L>
__device__ __forceinline__ void ms_key_bounds(const ga_slotmap &m, const uint64_t *table,
                                              uint64_t &lo, uint64_t &hi)
{
    lo = 0;
    hi = ~0ull;
    if (m.mode == GA_SLOT_POSITIVE) {
        lo = std::is_integral<L>::value ? ms_key((int64_t)1) : ms_key(0.0) + 1;
    } else if (m.mode == GA_SLOT_RANGE) {
        if constexpr (std::is_integral<L>::value) {
            lo = ms_key((int64_t)m.lo);
            hi = ms_key((int64_t)(m.lo + m.nslots - 1));
        } else {
            lo = ms_key((double)m.lo);
            hi = ms_key((double)(m.lo + m.nslots - 1));
        }
    } else if (m.mode == GA_SLOT_TABLE) {
        lo = table[0];
        hi = table[m.nslots - 1];
    }
}

// Coordinates of linear index i in a C-ordered shape.
__device__ __forceinline__ void ms_coords(int64_t i, int ndim, const int64_t *shape, int64_t *c)
{
#pragma unroll
    for (int d = GA_MEASURE_MAXDIM - 1; d >= 0; --d) {
        if (d < ndim) {
            const int64_t q = d > 0 ? i / shape[d] : 0;
            c[d] = d > 0 ? i - q * shape[d] : i;
            i = q;
        }
    }
}

// ============================== accumulating passes ========================

struct MsPass {
    ga_measure_args a;
    int kind;             // K_*
    int last;             // LAST_*
    unsigned int what;    // statistics to write at LAST_FINALIZE (bit GA_MS_*)
    int priv;             // per-block accumulators in shared memory
    int table_smem;       // table copied to shared memory
    int ncomp;            // components in the accumulator array (shared copy: same layout)
    int nrun;             // components of a run (MsRun)
    const uint64_t *range;  // [is a range, first key] of a raw index's table, or null
    int vec;              // labels 16-byte aligned: vector loads
    double *mom;          // [3 + ndim][nslots]
    uint64_t *ext;        // [E_NCOMP][nslots]
    double *centre;       // [nslots]
    unsigned int *ticket;
    void *out[GA_MS_NSTATS];
};

__device__ __forceinline__ void ms_add(double *p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void ms_min(uint64_t *p, uint64_t v)
{
    atomicMin((unsigned long long *)p, (unsigned long long)v);
}

// A run: the partial results of one slot, as the pass's components
// (MsPass::nrun of them):
//   moments    count, sum, then the coordinate-weighted sums (ndim, for COM)
//   centred    count, sum of squared deviations from the mean
//   extrema    count, min, max
//   positions  first position of the min, of the max (uint64 bits, MS_NONE: none)
constexpr int MS_NRUN = 2 + GA_MEASURE_MAXDIM;
struct MsRun {
    int64_t slot;
    double c[MS_NRUN];
};

__device__ __forceinline__ double ms_bits(uint64_t v) { return __longlong_as_double((long long)v); }
__device__ __forceinline__ uint64_t ms_unbits(double v) { return (uint64_t)__double_as_longlong(v); }

__device__ __forceinline__ void ms_run_reset(const MsPass &p, MsRun &r, int64_t slot)
{
    r.slot = slot;
#pragma unroll
    for (int k = 0; k < MS_NRUN; ++k)
        r.c[k] = 0.0;
    if (p.kind == K_EXTREMA) {
        r.c[1] = INFINITY;
        r.c[2] = -INFINITY;
    } else if (p.kind == K_POSITIONS) {
        r.c[0] = r.c[1] = ms_bits(MS_NONE);
    }
}

// Component k of two runs of one slot combined (every operation is
// commutative).
__device__ __forceinline__ double ms_combine(const MsPass &p, int k, double a, double b)
{
    if (p.kind == K_POSITIONS)
        return ms_bits(min(ms_unbits(a), ms_unbits(b)));
    if (p.kind == K_EXTREMA && k == 1)
        return fmin(a, b);
    if (p.kind == K_EXTREMA && k == 2)
        return fmax(a, b);
    return a + b;
}

// a += b, for two runs of one slot.
__device__ __forceinline__ void ms_run_merge(const MsPass &p, MsRun &a, const MsRun &b)
{
#pragma unroll
    for (int k = 0; k < MS_NRUN; ++k)
        if (k < p.nrun)
            a.c[k] = ms_combine(p, k, a.c[k], b.c[k]);
}

// Add a run to the accumulators (shared or global, same layout).
__device__ __forceinline__ void ms_run_flush(const MsPass &p, const MsRun &r, double *mom,
                                             uint64_t *ext, int64_t ns)
{
    if (r.slot < 0)
        return;
    const int64_t s = r.slot;
    if (p.kind == K_MOMENTS) {
        ms_add(mom + C_COUNT * ns + s, r.c[0]);
        ms_add(mom + C_SUM * ns + s, r.c[1]);
#pragma unroll
        for (int d = 0; d < GA_MEASURE_MAXDIM; ++d)
            if (2 + d < p.nrun)
                ms_add(mom + (C_COORD + d) * ns + s, r.c[2 + d]);
    } else if (p.kind == K_CENTRED) {
        ms_add(mom + C_CSS * ns + s, r.c[1]);
    } else if (p.kind == K_EXTREMA) {
        if (r.c[0] > 0) {
            ms_min(ext + E_MIN * ns + s, ms_key(r.c[1]));
            ms_min(ext + E_MAXINV * ns + s, ~ms_key(r.c[2]));
        }
    } else {
        if (ms_unbits(r.c[0]) != MS_NONE) ms_min(ext + E_MINPOS * ns + s, ms_unbits(r.c[0]));
        if (ms_unbits(r.c[1]) != MS_NONE) ms_min(ext + E_MAXPOS * ns + s, ms_unbits(r.c[1]));
    }
}

// Turn accumulators into the requested statistics for every output entry.
__device__ void ms_finalize(const MsPass &p)
{
    const int64_t ns = p.a.map.nslots;
    const int nd = p.a.ndim;
    for (int64_t k = threadIdx.x; k < p.a.nout; k += blockDim.x) {
        const int64_t s = p.a.inverse ? p.a.inverse[k] : k;
        const double count = p.mom ? __ldcg(p.mom + C_COUNT * ns + s) : 0.0;
        const double sum = p.mom ? __ldcg(p.mom + C_SUM * ns + s) : 0.0;
        if (p.what & (1u << GA_MS_SUM)) ((double *)p.out[GA_MS_SUM])[k] = sum;
        if (p.what & (1u << GA_MS_COUNT)) ((double *)p.out[GA_MS_COUNT])[k] = count;
        if (p.what & (1u << GA_MS_MEAN)) ((double *)p.out[GA_MS_MEAN])[k] = sum / count;
        if (p.what & ((1u << GA_MS_VAR) | (1u << GA_MS_STD))) {
            const double var = __ldcg(p.mom + C_CSS * ns + s) / count;
            if (p.what & (1u << GA_MS_VAR)) ((double *)p.out[GA_MS_VAR])[k] = var;
            if (p.what & (1u << GA_MS_STD)) ((double *)p.out[GA_MS_STD])[k] = sqrt(var);
        }
        if (p.what & (1u << GA_MS_COM))
            for (int d = 0; d < nd; ++d)
                ((double *)p.out[GA_MS_COM])[k * nd + d] = __ldcg(p.mom + (C_COORD + d) * ns + s) / sum;
        if (p.what & (1u << GA_MS_MIN)) {
            const uint64_t key = __ldcg((const unsigned long long *)p.ext + E_MIN * ns + s);
            ((double *)p.out[GA_MS_MIN])[k] = key == MS_NONE ? 0.0 : ms_unkey(key);
        }
        if (p.what & (1u << GA_MS_MAX)) {
            const uint64_t inv = __ldcg((const unsigned long long *)p.ext + E_MAXINV * ns + s);
            ((double *)p.out[GA_MS_MAX])[k] = inv == MS_NONE ? 0.0 : ms_unkey(~inv);
        }
        if (p.what & (1u << GA_MS_MINPOS)) {
            const uint64_t pos = __ldcg((const unsigned long long *)p.ext + E_MINPOS * ns + s);
            ((int64_t *)p.out[GA_MS_MINPOS])[k] = pos == MS_NONE ? 0 : (int64_t)pos;
        }
        if (p.what & (1u << GA_MS_MAXPOS)) {
            const uint64_t pos = __ldcg((const unsigned long long *)p.ext + E_MAXPOS * ns + s);
            ((int64_t *)p.out[GA_MS_MAXPOS])[k] = pos == MS_NONE ? 0 : (int64_t)pos;
        }
    }
}

// One element's contribution (value x at linear index i, slot s) as a run
// of its own; s < 0 (no slot, or no element) gives an empty run.
__device__ __forceinline__ void ms_run_one(const MsPass &p, MsRun &r, int64_t i, int64_t s,
                                           double x)
{
    ms_run_reset(p, r, s);
    if (s < 0)
        return;
    const int64_t ns = p.a.map.nslots;
    if (p.kind == K_POSITIONS) {
        const uint64_t key = ms_key(x);
        if (key == __ldg((const unsigned long long *)p.ext + E_MIN * ns + s))
            r.c[0] = ms_bits((uint64_t)i);
        if (~key == __ldg((const unsigned long long *)p.ext + E_MAXINV * ns + s))
            r.c[1] = ms_bits((uint64_t)i);
        return;
    }
    r.c[0] = 1.0;
    if (p.kind == K_MOMENTS) {
        r.c[1] = x;
        if (p.nrun > 2) {
            int64_t c[GA_MEASURE_MAXDIM];
            ms_coords(i, p.a.ndim, p.a.shape, c);
#pragma unroll
            for (int d = 0; d < GA_MEASURE_MAXDIM; ++d)
                if (d < p.a.ndim)
                    r.c[2 + d] = x * (double)c[d];
        }
    } else if (p.kind == K_CENTRED) {
        const double dx = x - __ldg(p.centre + s);
        r.c[1] = dx * dx;
    } else {
        r.c[1] = fmin(r.c[1], x);  // a NaN leaves min and max empty, as fmin does
        r.c[2] = fmax(r.c[2], x);
    }
}

__device__ __forceinline__ double ms_shfl_up(double v, int o)
{
    return __shfl_up_sync(0xffffffffu, v, o);
}
__device__ __forceinline__ uint64_t ms_shfl_up(uint64_t v, int o)
{
    return (uint64_t)__shfl_up_sync(0xffffffffu, (unsigned long long)v, o);
}

// The warp's runs, one per lane in raster order, summed per segment of
// neighbouring lanes holding the same slot (an inclusive segmented scan):
// true on the last lane of each segment, whose run is then the segment's
// total.
__device__ __forceinline__ bool ms_warp_segments(const MsPass &p, MsRun &r)
{
    const int lane = threadIdx.x & 31;
    const int64_t prev = (int64_t)ms_shfl_up((uint64_t)r.slot, 1);
    const unsigned int heads = __ballot_sync(0xffffffffu, lane == 0 || prev != r.slot);
    const int start = 31 - __clz(heads & (0xffffffffu >> (31 - lane)));
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
#pragma unroll
        for (int k = 0; k < MS_NRUN; ++k) {
            if (k < p.nrun) {
                const double t = ms_shfl_up(r.c[k], o);
                if (lane - o >= start)
                    r.c[k] = ms_combine(p, k, r.c[k], t);
            }
        }
    }
    return lane == 31 || ((heads >> (lane + 1)) & 1u);
}

// Four consecutive elements (16-byte aligned) in one or two 16-byte loads.
template <class T>
__device__ __forceinline__ void ms_load4(const T *p, T (&v)[MS_ITEMS])
{
    static_assert(MS_ITEMS == 4 && (sizeof(T) == 4 || sizeof(T) == 8), "16-byte loads");
    const uint4 a = __ldg((const uint4 *)p);
    memcpy(v, &a, 16);
    if constexpr (sizeof(T) == 8) {
        const uint4 b = __ldg((const uint4 *)p + 1);
        memcpy(v + 2, &b, 16);
    }
}

// The labels of the group of MS_ITEMS elements at `base` (zeros past n or
// without labels), in one or two 16-byte loads when aligned and whole.
template <class L>
__device__ __forceinline__ void ms_load_labels(const L *labels, int64_t base, int64_t n, int vec,
                                               L (&l)[MS_ITEMS])
{
    if (labels && vec && base + MS_ITEMS <= n) {
        ms_load4(labels + base, l);
    } else {
#pragma unroll
        for (int k = 0; k < MS_ITEMS; ++k)
            l[k] = labels && base + k < n ? labels[base + k] : (L)0;
    }
}

__device__ __forceinline__ void ms_prefetch_l2(const void *p)
{
    asm volatile("prefetch.global.L2 [%0];" : : "l"(p));
}

// A warp's window of G * 32 * MS_ITEMS labels at `win`: lane l's group g
// holds elements win + (g * 32 + l) * MS_ITEMS + k, k < MS_ITEMS.
template <int G, class L>
__device__ __forceinline__ void ms_load_window(const L *labels, int64_t win, int64_t n, int vec,
                                               L (&l)[G][MS_ITEMS])
{
    const int64_t base = win + (threadIdx.x & 31) * MS_ITEMS;
    if (labels && vec && win + G * 32 * MS_ITEMS <= n) {
#pragma unroll
        for (int g = 0; g < G; ++g)
            ms_load4(labels + base + g * 32 * MS_ITEMS, l[g]);
    } else {
#pragma unroll
        for (int g = 0; g < G; ++g)
            ms_load_labels(labels, base + g * 32 * MS_ITEMS, n, vec, l[g]);
    }
}

// The quick test of the labels that can have a slot (ms_key_bounds), in
// the label's own width for int32 labels: key - lo <= span, unsigned.
template <class L>
struct MsCandidates {
    uint64_t lo, span;
    bool none;
    __device__ __forceinline__ MsCandidates(const ga_slotmap &m, const uint64_t *table)
    {
        uint64_t klo, khi;
        ms_key_bounds<L>(m, table, klo, khi);
        if constexpr (std::is_same<L, int32_t>::value) {
            const uint64_t base = MS_SIGN - 0x80000000ull;  // the key of INT32_MIN
            klo = klo < base ? base : klo;
            khi = khi > base + 0xffffffffull ? base + 0xffffffffull : khi;
            klo -= base;
            khi -= base;
        }
        none = klo > khi;
        lo = klo;
        span = khi - klo;
    }
    __device__ __forceinline__ bool operator()(L l) const
    {
        if constexpr (std::is_same<L, int32_t>::value)
            return ((uint32_t)l ^ 0x80000000u) - (uint32_t)lo <= (uint32_t)span;
        else
            return ms_key(l) - lo <= span;
    }
};

template <class V, class L>
__global__ void __launch_bounds__(MS_THREADS, MS_BLOCKS_PER_SM) k_ms_accumulate(MsPass p)
{
    extern __shared__ unsigned long long ms_smem[];
    __shared__ uint32_t ms_queue[MS_QUEUE];
    __shared__ int ms_qcount;
    const int64_t ns = p.a.map.nslots;
    const int64_t n = p.a.n;
    const V *values = (const V *)p.a.values;
    const L *labels = (const L *)p.a.labels;

    // A table of consecutive integers (k_ms_prepare says so) is a range:
    // no table, no bisection.
    ga_slotmap map = p.a.map;
    if (p.range != nullptr && __ldcg((const unsigned long long *)p.range) != 0) {
        map.mode = GA_SLOT_RANGE;
        map.lo = (int64_t)ga_from_key<uint64_t>(__ldcg((const unsigned long long *)p.range + 1),
                                                GA_KEY_SIGNED);
    }
    uint64_t *s_table = (uint64_t *)ms_smem;
    unsigned long long *s_acc = ms_smem + (p.table_smem ? ns : 0);
    const uint64_t *table = map.table;
    if (p.table_smem && map.mode == GA_SLOT_TABLE) {
        for (int64_t k = threadIdx.x; k < ns; k += blockDim.x)
            s_table[k] = table[k];
        table = s_table;
    }
    if (threadIdx.x == 0)
        ms_qcount = 0;
    if (p.priv) {
        const unsigned long long fill = p.kind == K_EXTREMA ? MS_NONE : 0ull;
        for (int64_t k = threadIdx.x; k < p.ncomp * ns; k += blockDim.x)
            s_acc[k] = fill;
    }
    __syncthreads();
    double *mom = p.priv ? (double *)s_acc : p.mom;
    uint64_t *ext = p.priv ? (uint64_t *)s_acc : p.ext;

    // The warps of a block read windows of W consecutive elements in
    // rounds: in round r, warp w of block b takes window (r * warps + w *
    // blocks + b) (neighbouring windows, often crossing the same label,
    // fall to different multiprocessors), as G loads of MS_ITEMS labels
    // per lane, all in flight together, and a test per element against
    // the bounds of the measured labels.  The next round's loads are
    // issued before this round's candidates are queued, and the
    // candidates' values are prefetched to L2.  Most windows of a label
    // image hold no candidate.  The candidates go to the block's queue
    // (raster order within a window: one warp scan of the per-group counts
    // packed in bytes), which the whole block takes at the end, or when
    // it could overflow: a lane a candidate, so the values, the labels'
    // slots and the contributions of 256 candidates are computed side by
    // side, whichever warps found them.  Neighbouring lanes of one slot
    // are summed by a segmented scan whose last lanes add the totals to
    // the accumulators.  Without labels (every element in slot 0) a
    // thread adds its own elements to its run.
    constexpr int G = ms_groups<L>(), W = ms_window<L>();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const MsCandidates<L> candidate(map, table);
    const int64_t nwarps = (int64_t)gridDim.x * (MS_THREADS / 32);
    const int64_t gw = (int64_t)warp * gridDim.x + blockIdx.x;
    const int64_t rounds = map.mode == GA_SLOT_ALL || candidate.none ? 0
                                                                     : (n + nwarps * W - 1) / (nwarps * W);
    L l[G][MS_ITEMS];
    if (rounds > 0 && gw * W < n)
        ms_load_window(labels, gw * W, n, p.vec, l);
    for (int64_t rd = 0; rd < rounds; ++rd) {
        const int64_t win = (rd * nwarps + gw) * W;
        const bool whole = win + W <= n;
        unsigned int cand = 0;  // bit g * MS_ITEMS + k: element k of the lane's group g
        if (win < n) {
#pragma unroll
            for (int g = 0; g < G; ++g)
#pragma unroll
                for (int k = 0; k < MS_ITEMS; ++k)
                    if (candidate(l[g][k]) && (whole || win + (g * 32 + lane) * MS_ITEMS + k < n))
                        cand |= 1u << (g * MS_ITEMS + k);
#pragma unroll
            for (int g = 0; g < G; ++g)
                if ((cand >> (g * MS_ITEMS)) & 0xfu)
                    ms_prefetch_l2(values + win + (g * 32 + lane) * MS_ITEMS);
        }
        if (win + nwarps * W < n)
            ms_load_window(labels, win + nwarps * W, n, p.vec, l);
        if (__any_sync(0xffffffffu, cand != 0)) {
            // Byte g: the lane's candidates in group g (at most 4, a
            // warp's at most 128: the bytes of the scan never carry).
            unsigned int packed = 0;
#pragma unroll
            for (int g = 0; g < G; ++g)
                packed |= (unsigned int)__popc((cand >> (g * MS_ITEMS)) & 0xfu) << (8 * g);
            const unsigned int incl = ga_warp_inclusive_sum(packed);
            const unsigned int totals = __shfl_sync(0xffffffffu, incl, 31);
            const unsigned int excl = incl - packed;
            int total = 0;
#pragma unroll
            for (int g = 0; g < G; ++g)
                total += (int)((totals >> (8 * g)) & 0xffu);
            int at0 = 0;
            if (lane == 0)
                at0 = atomicAdd(&ms_qcount, total);
            at0 = __shfl_sync(0xffffffffu, at0, 0);
            const uint32_t tag = (uint32_t)rd << MS_QTAG_SHIFT | (uint32_t)warp << MS_QWARP_SHIFT;
#pragma unroll
            for (int g = 0; g < G; ++g) {
                int at = at0 + (int)((excl >> (8 * g)) & 0xffu);
#pragma unroll
                for (int k = 0; k < MS_ITEMS; ++k)
                    if (cand & (1u << (g * MS_ITEMS + k)))
                        ms_queue[at++] = tag | (uint32_t)((g * 32 + lane) * MS_ITEMS + k);
                at0 += (int)((totals >> (8 * g)) & 0xffu);
            }
        }
        __syncthreads();
        const int queued = ms_qcount;
        // The barrier in __syncthreads_or keeps every warp from queueing the
        // next round's candidates (and raising ms_qcount) before all have
        // read it: a warp that read a later count took other barriers
        // (compute-sanitizer's synccheck: divergent threads at a barrier).
        if (__syncthreads_or(queued > MS_QUEUE - MS_THREADS / 32 * W || rd == rounds - 1)) {
            for (int j = warp * 32; j < queued; j += MS_THREADS) {
                int64_t i = 0, s = -1;
                double x = 0.0;
                if (j + lane < queued) {
                    const uint32_t e = ms_queue[j + lane];
                    const int64_t w = (int64_t)((e >> MS_QWARP_SHIFT) & (MS_THREADS / 32 - 1));
                    i = ((int64_t)(e >> MS_QTAG_SHIFT) * nwarps + w * gridDim.x + blockIdx.x) * W +
                        (e & (MS_WINDOW - 1));
                    x = (double)__ldg(values + i);
                    s = ms_slot(map, table, __ldg(labels + i));
                }
                MsRun e;
                ms_run_one(p, e, i, s, x);
                if (ms_warp_segments(p, e))
                    ms_run_flush(p, e, mom, ext, ns);
            }
            __syncthreads();
            if (threadIdx.x == 0)
                ms_qcount = 0;
            __syncthreads();
        }
    }
    if (map.mode == GA_SLOT_ALL) {
        MsRun r;
        ms_run_reset(p, r, -1);
        const int64_t stride = (int64_t)gridDim.x * MS_THREADS;
        for (int64_t i = (int64_t)blockIdx.x * MS_THREADS + threadIdx.x; i < n; i += stride) {
            MsRun e;
            ms_run_one(p, e, i, 0, (double)__ldg(values + i));
            if (r.slot == 0)
                ms_run_merge(p, r, e);
            else
                r = e;
        }
        ms_run_flush(p, r, mom, ext, ns);
    }
    __syncthreads();
    if (p.priv) {
        for (int64_t k = threadIdx.x; k < p.ncomp * ns; k += blockDim.x) {
            const unsigned long long v = s_acc[k];
            if (p.kind == K_EXTREMA) {
                if (v != MS_NONE)
                    ms_min(p.ext + k, v);
            } else if (v != 0ull) {
                ms_add(p.mom + k, __longlong_as_double((long long)v));
            }
        }
    }
    if (p.last == LAST_NOTHING || !ga_last_block(p.ticket))
        return;
    if (threadIdx.x == 0)
        *p.ticket = 0;
    if (p.last == LAST_CENTRES) {
        for (int64_t s = threadIdx.x; s < ns; s += blockDim.x)
            p.centre[s] = __ldcg(p.mom + C_SUM * ns + s) / __ldcg(p.mom + C_COUNT * ns + s);
    } else {
        ms_finalize(p);
    }
}

// ============================== grouping (median, comprehension) ===========

template <class V, class L>
__global__ void k_ms_group_keys(ga_measure_args a, int by_value, uint64_t *keys, int64_t *pos)
{
    const V *values = (const V *)a.values;
    const L *labels = (const L *)a.labels;
    GA_GRID_STRIDE(i, a.n) {
        if (by_value) {
            keys[i] = ms_key((double)values[i]);
        } else {
            const int64_t s = ms_slot(a.map, a.map.table, labels ? labels[i] : (L)0);
            keys[i] = s < 0 ? (uint64_t)a.map.nslots : (uint64_t)s;
        }
        pos[i] = i;
    }
}

template <class L>
__global__ void k_ms_slot_keys(ga_measure_args a, const int64_t *pos, uint64_t *keys)
{
    const L *labels = (const L *)a.labels;
    GA_GRID_STRIDE(k, a.n) {
        const int64_t s = ms_slot(a.map, a.map.table, labels ? labels[pos[k]] : (L)0);
        keys[k] = s < 0 ? (uint64_t)a.map.nslots : (uint64_t)s;
    }
}

__global__ void k_ms_offsets(const uint64_t *keys, int64_t n, int64_t nslots, int64_t *offsets)
{
    GA_GRID_STRIDE(s, nslots + 1) offsets[s] = ms_lower_bound(keys, n, (uint64_t)s);
}

// SciPy's median: the mean of the two middle values (one for odd counts).
template <class V>
__global__ void k_ms_median(const V *values, const int64_t *pos, const int64_t *offsets,
                            const int64_t *inverse, int64_t nout, double *out)
{
    GA_GRID_STRIDE(k, nout) {
        const int64_t s = inverse ? inverse[k] : k;
        const int64_t first = offsets[s], c = offsets[s + 1] - first;
        if (c == 0) {
            out[k] = NAN;
        } else {
            const double lo = (double)values[pos[first + (c - 1) / 2]];
            const double hi = (double)values[pos[first + c / 2]];
            out[k] = (lo + hi) / 2.0;
        }
    }
}

// ============================== index tables ===============================

// The keys of m index entries (or labels, for value_indices) and their
// positions, to sort.
template <class T>
__global__ void k_ms_keys(const T *index, int64_t m, uint64_t *keys, int64_t *pos)
{
    GA_GRID_STRIDE(k, m) {
        keys[k] = ms_key(index[k]);
        pos[k] = k;
    }
}

// The warp's sum of v (every lane gets it).
__device__ __forceinline__ int ms_warp_sum(int v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// What every measurement needs before its first pass, in one launch: the
// moment accumulators and the ticket zeroed (`zero`, nzero words), the
// extrema accumulators all ones (`ones`, nones words), and the slot table
// of a small index (m <= MS_INDEX_SMALL entries, 0: none) whose keys are
// compared as float64 (float_keys: float labels) or int64.  An entry's
// rank among the keys (ties by position) places its key in the sorted
// table; its count of smaller keys is the first slot holding its key.
// Each block copies the keys to shared memory, then one warp ranks one
// entry at a time, its lanes splitting the comparisons: a few hundred
// labels cost one short launch, no sort.  With `range` (integer keys),
// block 0 also writes range[0] = 1 and range[1] = the first key when the
// keys are consecutive integers, each once (arange(1, n + 1), the usual
// index), else range[0] = 0: the passes then compute slots as a range.
template <class T>
__global__ void __launch_bounds__(MS_PREP_THREADS)
k_ms_prepare(unsigned long long *zero, int64_t nzero, unsigned long long *ones, int64_t nones,
             const T *index, int m, int float_keys, uint64_t *table, int64_t *inverse,
             uint64_t *range)
{
    __shared__ uint64_t s_keys[MS_INDEX_SMALL];
    __shared__ unsigned int s_seen[MS_INDEX_SMALL / 32];
    __shared__ unsigned long long s_lo, s_hi;
    __shared__ int s_distinct;
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t nthreads = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = tid; i < nzero; i += nthreads)
        zero[i] = 0ull;
    for (int64_t i = tid; i < nones; i += nthreads)
        ones[i] = MS_NONE;
    if (m == 0)
        return;
    for (int k = threadIdx.x; k < m; k += blockDim.x)
        s_keys[k] = float_keys ? ms_key((double)index[k]) : ms_key((int64_t)index[k]);
    __syncthreads();
    const int lane = threadIdx.x & 31;
    for (int64_t k = tid >> 5; k < m; k += nthreads >> 5) {
        const uint64_t key = s_keys[k];
        int less = 0, tie = 0;
        for (int j = lane; j < m; j += 32) {
            const uint64_t o = s_keys[j];
            less += o < key;
            tie += (o == key) & (j < k);
        }
        less = ms_warp_sum(less);
        tie = ms_warp_sum(tie);
        if (lane == 0) {
            table[less + tie] = key;
            inverse[k] = less;
        }
    }
    if (blockIdx.x != 0 || range == nullptr)
        return;
    if (threadIdx.x == 0) {
        s_lo = ~0ull;
        s_hi = 0;
        s_distinct = 0;
    }
    for (int k = threadIdx.x; k < MS_INDEX_SMALL / 32; k += blockDim.x)
        s_seen[k] = 0;
    __syncthreads();
    unsigned long long lo = ~0ull, hi = 0;
    for (int k = threadIdx.x; k < m; k += blockDim.x) {
        lo = min(lo, (unsigned long long)s_keys[k]);
        hi = max(hi, (unsigned long long)s_keys[k]);
    }
    atomicMin(&s_lo, lo);
    atomicMax(&s_hi, hi);
    __syncthreads();
    const bool span = !float_keys && s_hi - s_lo == (unsigned long long)(m - 1);
    if (span)
        for (int k = threadIdx.x; k < m; k += blockDim.x) {
            const unsigned int d = (unsigned int)(s_keys[k] - s_lo);
            atomicOr(&s_seen[d >> 5], 1u << (d & 31));
        }
    __syncthreads();
    if (span)
        for (int k = threadIdx.x; k < (m + 31) / 32; k += blockDim.x)
            atomicAdd(&s_distinct, __popc(s_seen[k]));
    __syncthreads();
    if (threadIdx.x == 0) {
        range[0] = span && s_distinct == m;
        range[1] = s_lo;
    }
}

// The launch of k_ms_prepare: enough blocks for one warp per index entry
// and for the words to fill.  The index: GA_INT64, or GA_FLOAT64 with
// float_keys (int64 values are exact as float64 keys up to 2**53).
cudaError_t ms_prepare(unsigned long long *zero, int64_t nzero, unsigned long long *ones,
                       int64_t nones, ga_type index_type, int float_keys, const void *index,
                       int64_t m, uint64_t *table, int64_t *inverse, uint64_t *range,
                       cudaStream_t stream)
{
    if (m > MS_INDEX_SMALL)
        return cudaErrorInvalidValue;
    const int64_t warps = MS_PREP_THREADS / 32;
    const int64_t words = nzero > nones ? nzero : nones;
    int64_t blocks = (m + warps - 1) / warps;
    const int64_t fill = (words + MS_PREP_THREADS * 4 - 1) / (MS_PREP_THREADS * 4);
    blocks = blocks > fill ? blocks : fill;
    blocks = blocks < 1 ? 1 : blocks > 1024 ? 1024 : blocks;
    // Two index types only (the host converts every other index to int64,
    // and float64 stays float64 where labels are float keys): an if, not a
    // dtype visitor.
    if (m == 0 || index_type == GA_INT64)
        k_ms_prepare<int64_t><<<(unsigned)blocks, MS_PREP_THREADS, 0, stream>>>(
            zero, nzero, ones, nones, (const int64_t *)index, (int)m, float_keys, table, inverse,
            range);
    else if (index_type == GA_FLOAT64 && float_keys)
        k_ms_prepare<double><<<(unsigned)blocks, MS_PREP_THREADS, 0, stream>>>(
            zero, nzero, ones, nones, (const double *)index, (int)m, 1, table, inverse, range);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

// Entry pos[k] of the index reads the first table slot holding its key.
__global__ void k_ms_index_inverse(const uint64_t *table, const int64_t *pos, int64_t m,
                                   int64_t *inverse)
{
    GA_GRID_STRIDE(k, m) inverse[pos[k]] = ms_lower_bound(table, m, table[k]);
}

// ============================== histogram ==================================

// NumPy's histogram with explicit edges: bin b holds edges[b] <= x <
// edges[b+1], the last bin also x == edges[nbins]; values outside are
// dropped.
template <class V, class L>
__global__ void __launch_bounds__(MS_THREADS)
k_ms_histogram(ga_measure_args a, const double *edges, int nbins, int priv,
               unsigned long long *counts)
{
    extern __shared__ unsigned long long ms_smem[];
    const int64_t ns = a.map.nslots;
    const int64_t cells = ns * nbins;
    const V *values = (const V *)a.values;
    const L *labels = (const L *)a.labels;
    double *s_edges = (double *)ms_smem;
    unsigned long long *s_cnt = ms_smem + nbins + 1;
    for (int k = threadIdx.x; k <= nbins; k += blockDim.x)
        s_edges[k] = edges[k];
    if (priv)
        for (int64_t k = threadIdx.x; k < cells; k += blockDim.x)
            s_cnt[k] = 0;
    __syncthreads();
    unsigned long long *cnt = priv ? s_cnt : counts;
    const double lo = s_edges[0], hi = s_edges[nbins];
    GA_GRID_STRIDE(i, a.n) {
        const double x = (double)values[i];
        if (!(x >= lo && x <= hi))
            continue;
        const int64_t s = ms_slot(a.map, a.map.table, labels ? labels[i] : (L)0);
        if (s < 0)
            continue;
        int b0 = 0, b1 = nbins + 1;  // upper bound of x in the edges
        while (b0 < b1) {
            const int mid = (b0 + b1) >> 1;
            if (s_edges[mid] <= x)
                b0 = mid + 1;
            else
                b1 = mid;
        }
        const int b = b0 - 1 < nbins ? b0 - 1 : nbins - 1;
        atomicAdd(cnt + s * nbins + b, 1ull);
    }
    if (!priv)
        return;
    __syncthreads();
    for (int64_t k = threadIdx.x; k < cells; k += blockDim.x)
        if (s_cnt[k])
            atomicAdd(counts + k, s_cnt[k]);
}

__global__ void k_ms_hist_gather(const unsigned long long *counts, const int64_t *inverse,
                                 int64_t nout, int nbins, int64_t *out)
{
    GA_GRID_STRIDE(j, nout * nbins) {
        const int64_t k = j / nbins, b = j - k * nbins;
        const int64_t s = inverse ? inverse[k] : k;
        out[j] = (int64_t)counts[s * nbins + b];
    }
}

// ============================== value_indices, find_objects ================

// Where each run of equal sorted keys starts (in no particular order).
__global__ void k_ms_segments(const uint64_t *keys, int64_t n, unsigned long long *count,
                              int64_t *starts, uint64_t *start_keys)
{
    GA_GRID_STRIDE(k, n) {
        if (k == 0 || keys[k] != keys[k - 1]) {
            const unsigned long long j = atomicAdd(count, 1ull);
            starts[j] = k;
            start_keys[j] = keys[k];
        }
    }
}

template <class L>
__global__ void __launch_bounds__(MS_THREADS)
k_ms_label_max(const L *labels, int64_t n, int64_t *out)
{
    __shared__ long long s_max;
    if (threadIdx.x == 0)
        s_max = 0;
    __syncthreads();
    long long m = 0;
    GA_GRID_STRIDE(i, n) m = max(m, (long long)labels[i]);
    if (m > 0)
        atomicMax(&s_max, m);
    __syncthreads();
    if (threadIdx.x == 0 && s_max > 0)
        atomicMax((long long *)out, s_max);
}

// Bounding boxes: for label l in [1, max_label] and dimension d,
// bbox[((l-1)*ndim + d)*2] = min coordinate and [... + 1] = ~max, both by
// atomicMin from all-ones.  A thread merges a run of equal labels first.
template <class L>
__global__ void __launch_bounds__(MS_THREADS)
k_ms_bbox(const L *labels, int64_t n, int ndim, GA_PARAM ga_kshape shape, int64_t max_label,
          unsigned long long *bbox)
{
    int64_t run = 0;
    int64_t lo[GA_MEASURE_MAXDIM], hi[GA_MEASURE_MAXDIM];
    auto flush = [&]() {
        if (run <= 0)
            return;
        unsigned long long *b = bbox + (run - 1) * ndim * 2;
#pragma unroll
        for (int d = 0; d < GA_MEASURE_MAXDIM; ++d) {
            if (d < ndim) {
                atomicMin(b + 2 * d, (unsigned long long)lo[d]);
                atomicMin(b + 2 * d + 1, ~(unsigned long long)hi[d]);
            }
        }
    };
    const int64_t stride = (int64_t)gridDim.x * blockDim.x * MS_ITEMS;
    for (int64_t base = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * MS_ITEMS; base < n;
         base += stride) {
        for (int k = 0; k < MS_ITEMS && base + k < n; ++k) {
            const int64_t l = (int64_t)labels[base + k];
            if (l < 1 || l > max_label)
                continue;
            int64_t c[GA_MEASURE_MAXDIM];
            ms_coords(base + k, ndim, shape.shape, c);
            if (l != run) {
                flush();
                run = l;
#pragma unroll
                for (int d = 0; d < GA_MEASURE_MAXDIM; ++d) {
                    lo[d] = INT64_MAX;
                    hi[d] = INT64_MIN;
                }
            }
#pragma unroll
            for (int d = 0; d < GA_MEASURE_MAXDIM; ++d) {
                if (d < ndim) {
                    lo[d] = min(lo[d], c[d]);
                    hi[d] = max(hi[d], c[d]);
                }
            }
        }
    }
    flush();
}

// ============================== launchers ==================================

size_t round_up(size_t n) { return (n + 255) & ~(size_t)255; }

// The measurement hands over its index raw: the launcher makes the table.
bool ms_raw_index(const ga_measure_args *a)
{
    return a->map.mode == GA_SLOT_TABLE && a->map.table == nullptr;
}

// Visit the label type L: int32, int64 or float64.
template <class F>
cudaError_t ms_visit_labels(ga_type t, F &&f)
{
    return ga_visit_type(t, ga_only<int32_t, int64_t, double>(f));
}

// Visit the value type V: float32 or float64.
template <class F>
cudaError_t ms_visit_values(ga_type t, F &&f)
{
    return ga_visit_type(t, ga_only<float, double>(f));
}

// f.template operator()<V, L>() for a value type V already chosen.
template <class F, class V>
struct MsWithValue {
    F &f;
    template <class L> cudaError_t operator()() { return f.template operator()<V, L>(); }
};
template <class F>
struct MsWithLabels {
    ga_type lt;
    F &f;
    template <class V> cudaError_t operator()() { return ms_visit_labels(lt, MsWithValue<F, V>{f}); }
};

// Visit (V, L) for a measurement (int32 also stands for "no labels").
template <class F>
cudaError_t ms_visit(const ga_measure_args *a, F &&f)
{
    const ga_type lt = a->labels ? a->label_type : GA_INT32;
    return ms_visit_values(a->value_type, MsWithLabels<std::remove_reference_t<F>>{lt, f});
}

struct AccumulateLaunch {
    const MsPass *p; size_t smem; cudaStream_t stream;
    template <class V, class L> cudaError_t operator()()
    {
        k_ms_accumulate<V, L><<<p->a.grid, MS_THREADS, smem, stream>>>(*p);
        return cudaGetLastError();
    }
};

// Scratch layout of ga_launch_measure: moments | ticket | extrema | centres
// [| table | inverse of a raw index] (moments and ticket next to each
// other: one fill clears both).
struct MsScratch {
    double *mom;
    uint64_t *ext;
    double *centre;
    unsigned int *ticket;
    uint64_t *table;
    uint64_t *range;  // table + nslots: [is a range, first key]
    int64_t *inverse;
    size_t mom_bytes, ext_bytes, total;
    MsScratch(const ga_measure_args *a, void *base)
    {
        const int64_t ns = a->map.nslots;
        mom_bytes = round_up((size_t)(C_COORD + a->ndim) * ns * sizeof(double));
        ext_bytes = round_up((size_t)E_NCOMP * ns * sizeof(uint64_t));
        char *c = (char *)base;
        mom = (double *)c;
        ticket = (unsigned int *)(c + mom_bytes);
        ext = (uint64_t *)(c + mom_bytes + 256);
        centre = (double *)(c + mom_bytes + 256 + ext_bytes);
        total = mom_bytes + 256 + ext_bytes + round_up(ns * sizeof(double));
        table = nullptr;
        inverse = nullptr;
        range = nullptr;
        if (ms_raw_index(a)) {
            const size_t tb = round_up((ns + 2) * sizeof(uint64_t));
            table = (uint64_t *)(c + total);
            range = table + ns;
            inverse = (int64_t *)(c + total + tb);
            total += tb + round_up(ns * sizeof(int64_t));
        }
    }
};

constexpr unsigned int MS_MOMENT_STATS = (1u << GA_MS_SUM) | (1u << GA_MS_COUNT) |
    (1u << GA_MS_MEAN) | (1u << GA_MS_VAR) | (1u << GA_MS_STD) | (1u << GA_MS_COM);
constexpr unsigned int MS_CENTRED_STATS = (1u << GA_MS_VAR) | (1u << GA_MS_STD);
constexpr unsigned int MS_EXTREMA_STATS = (1u << GA_MS_MIN) | (1u << GA_MS_MAX) |
    (1u << GA_MS_MINPOS) | (1u << GA_MS_MAXPOS);
constexpr unsigned int MS_POSITION_STATS = (1u << GA_MS_MINPOS) | (1u << GA_MS_MAXPOS);

cudaError_t ms_pass(MsPass p, cudaStream_t stream)
{
    const int64_t ns = p.a.map.nslots;
    size_t table = p.a.map.mode == GA_SLOT_TABLE && ns <= MS_SMEM_TABLE ? ns * sizeof(uint64_t) : 0;
    p.table_smem = table > 0;
    const size_t acc = (size_t)p.ncomp * ns * sizeof(uint64_t);
    p.priv = p.kind != K_POSITIONS && table + acc + MS_ACC_STATIC_SMEM <= MS_SMEM;
    const size_t smem = table + (p.priv ? acc : 0);
    return ms_visit(&p.a, AccumulateLaunch{&p, smem, stream});
}

struct GroupLaunch {
    const ga_measure_args *a; int by_value; uint64_t *keys; int64_t *pos; cudaStream_t stream;
    template <class V, class L> cudaError_t operator()()
    {
        k_ms_group_keys<V, L><<<ga_grid(a->n), GA_BLOCK, 0, stream>>>(*a, by_value, keys, pos);
        return cudaGetLastError();
    }
};

struct SlotKeysLaunch {
    const ga_measure_args *a; const int64_t *pos; uint64_t *keys; cudaStream_t stream;
    template <class L> cudaError_t operator()()
    {
        k_ms_slot_keys<L><<<ga_grid(a->n), GA_BLOCK, 0, stream>>>(*a, pos, keys);
        return cudaGetLastError();
    }
};

struct HistogramLaunch {
    const ga_measure_args *a; const double *edges; int nbins; int priv; size_t smem;
    unsigned long long *counts; cudaStream_t stream;
    template <class V, class L> cudaError_t operator()()
    {
        k_ms_histogram<V, L><<<a->grid, MS_THREADS, smem, stream>>>(*a, edges, nbins, priv, counts);
        return cudaGetLastError();
    }
};

struct MedianLaunch {
    const ga_measure_args *a; const int64_t *pos; const int64_t *offsets; double *out;
    cudaStream_t stream;
    template <class V> cudaError_t operator()()
    {
        k_ms_median<V><<<ga_grid(a->nout), GA_BLOCK, 0, stream>>>(
            (const V *)a->values, pos, offsets, a->inverse, a->nout, out);
        return cudaGetLastError();
    }
};

struct KeysLaunch {
    const void *src; int64_t n; uint64_t *keys; int64_t *pos; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        k_ms_keys<T><<<ga_grid(n), GA_BLOCK, 0, stream>>>((const T *)src, n, keys, pos);
        return cudaGetLastError();
    }
};

struct LabelMaxLaunch {
    const void *labels; int64_t n; int grid; int64_t *out; cudaStream_t stream;
    template <class L> cudaError_t operator()()
    {
        k_ms_label_max<L><<<grid, MS_THREADS, 0, stream>>>((const L *)labels, n, out);
        return cudaGetLastError();
    }
};

struct BboxLaunch {
    const void *labels; int64_t n; int ndim; ga_kshape sh; int64_t max_label; int grid;
    unsigned long long *bbox; cudaStream_t stream;
    template <class L> cudaError_t operator()()
    {
        k_ms_bbox<L><<<grid, MS_THREADS, 0, stream>>>((const L *)labels, n, ndim, sh, max_label,
                                                      bbox);
        return cudaGetLastError();
    }
};

int sort_bits(int64_t max_key)
{
    int bits = 1;
    while (bits < 64 && ((uint64_t)max_key >> bits) != 0)
        bits++;
    return bits;
}

cudaError_t sort_pairs(void *temp, size_t *temp_bytes, const uint64_t *kin, uint64_t *kout,
                       const int64_t *vin, int64_t *vout, int64_t n, int end_bit,
                       cudaStream_t stream)
{
    return cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, kin, kout, vin, vout, n, 0, end_bit,
                                           stream);
}

size_t sort_temp_bytes(int64_t n)
{
    size_t bytes = 0;
    sort_pairs(nullptr, &bytes, nullptr, nullptr, nullptr, nullptr, n, 64, 0);
    return bytes;
}

} // namespace

extern "C" size_t ga_measure_scratch_bytes(const ga_measure_args *a)
{
    return MsScratch(a, nullptr).total;
}

extern "C" cudaError_t ga_launch_measure(const ga_measure_args *a, unsigned int what,
                                         void *scratch, void *const *out, cudaStream_t stream)
{
    if (a->ndim < 1 || a->ndim > GA_MEASURE_MAXDIM || a->map.nslots < 1 || a->grid < 1)
        return cudaErrorInvalidValue;
    MsScratch s(a, scratch);
    const bool moments = what & MS_MOMENT_STATS, centred = what & MS_CENTRED_STATS;
    const bool extrema = what & MS_EXTREMA_STATS, positions = what & MS_POSITION_STATS;
    MsPass p;
    memset(&p, 0, sizeof(p));
    p.a = *a;
    if (ms_raw_index(a)) {
        if (a->index == nullptr || a->map.nslots > MS_INDEX_SMALL)
            return cudaErrorInvalidValue;
        p.a.map.table = s.table;
        p.a.inverse = s.inverse;
        p.a.nout = a->map.nslots;
    }
    cudaError_t err = ms_prepare(
        (unsigned long long *)s.mom, (int64_t)((s.mom_bytes + 256) / 8),
        (unsigned long long *)s.ext, extrema ? (int64_t)(s.ext_bytes / 8) : 0, a->index_type,
        a->labels && a->label_type == GA_FLOAT64, a->index, ms_raw_index(a) ? a->map.nslots : 0,
        s.table, s.inverse, s.range, stream);
    if (err != cudaSuccess)
        return err;
    p.range = s.range;
    p.what = what;
    p.vec = ((uintptr_t)a->labels & 15) == 0;
    p.mom = s.mom;
    p.ext = s.ext;
    p.centre = s.centre;
    p.ticket = s.ticket;
    for (int k = 0; k < GA_MS_NSTATS; ++k)
        p.out[k] = out[k];
    // The passes in order; the last one finalises.
    int kinds[4], nk = 0;
    if (moments) kinds[nk++] = K_MOMENTS;
    if (centred) kinds[nk++] = K_CENTRED;
    if (extrema) kinds[nk++] = K_EXTREMA;
    if (positions) kinds[nk++] = K_POSITIONS;
    for (int j = 0; j < nk; ++j) {
        p.kind = kinds[j];
        p.last = j == nk - 1 ? LAST_FINALIZE : p.kind == K_MOMENTS && centred ? LAST_CENTRES
                                                                            : LAST_NOTHING;
        const bool com = what & (1u << GA_MS_COM);
        switch (p.kind) {
        case K_MOMENTS:
            p.ncomp = com ? C_COORD + a->ndim : C_SUM + 1;
            p.nrun = com ? 2 + a->ndim : 2;
            break;
        case K_CENTRED: p.ncomp = C_CSS + 1; p.nrun = 2; break;
        case K_EXTREMA: p.ncomp = E_NCOMP; p.nrun = 3; break;
        default: p.ncomp = E_NCOMP; p.nrun = 2; break;
        }
        if ((err = ms_pass(p, stream)) != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" size_t ga_measure_group_scratch_bytes(int64_t n)
{
    return 2 * round_up(n * sizeof(uint64_t)) + round_up(n * sizeof(int64_t)) +
           round_up(sort_temp_bytes(n));
}

extern "C" cudaError_t ga_launch_measure_group(const ga_measure_args *a, int by_value,
                                               void *scratch, int64_t *pos_out, int64_t *offsets,
                                               cudaStream_t stream)
{
    const int64_t n = a->n;
    char *c = (char *)scratch;
    uint64_t *keys_a = (uint64_t *)c;
    uint64_t *keys_b = (uint64_t *)(c + round_up(n * sizeof(uint64_t)));
    int64_t *pos_tmp = (int64_t *)(c + 2 * round_up(n * sizeof(uint64_t)));
    void *temp = c + 2 * round_up(n * sizeof(uint64_t)) + round_up(n * sizeof(int64_t));
    size_t temp_bytes = sort_temp_bytes(n);
    const int slot_bits = sort_bits(a->map.nslots);
    cudaError_t err;
    if (by_value) {
        if ((err = ms_visit(a, GroupLaunch{a, 1, keys_a, pos_out, stream})) != cudaSuccess)
            return err;
        if ((err = sort_pairs(temp, &temp_bytes, keys_a, keys_b, pos_out, pos_tmp, n, 64,
                              stream)) != cudaSuccess)
            return err;
        const ga_type lt = a->labels ? a->label_type : GA_INT32;
        if ((err = ms_visit_labels(lt, SlotKeysLaunch{a, pos_tmp, keys_a, stream})) != cudaSuccess)
            return err;
    } else {
        if ((err = ms_visit(a, GroupLaunch{a, 0, keys_a, pos_tmp, stream})) != cudaSuccess)
            return err;
    }
    if ((err = sort_pairs(temp, &temp_bytes, keys_a, keys_b, pos_tmp, pos_out, n, slot_bits,
                          stream)) != cudaSuccess)
        return err;
    k_ms_offsets<<<ga_grid(a->map.nslots + 1), GA_BLOCK, 0, stream>>>(keys_b, n, a->map.nslots,
                                                                      offsets);
    return cudaGetLastError();
}

extern "C" cudaError_t ga_launch_measure_median(const ga_measure_args *a, const int64_t *pos,
                                                const int64_t *offsets, double *out,
                                                cudaStream_t stream)
{
    return ms_visit_values(a->value_type, MedianLaunch{a, pos, offsets, out, stream});
}

extern "C" size_t ga_measure_index_scratch_bytes(int64_t m)
{
    if (m <= MS_INDEX_SMALL)
        return 0;
    return round_up(m * sizeof(uint64_t)) + 2 * round_up(m * sizeof(int64_t)) +
           round_up(sort_temp_bytes(m));
}

extern "C" cudaError_t ga_launch_measure_index(ga_type index_type, const void *index, int64_t m,
                                               void *scratch, uint64_t *table, int64_t *inverse,
                                               cudaStream_t stream)
{
    if (m <= MS_INDEX_SMALL)
        return ms_prepare(nullptr, 0, nullptr, 0, index_type, index_type == GA_FLOAT64, index,
                          m, table, inverse, nullptr, stream);
    char *c = (char *)scratch;
    uint64_t *keys = (uint64_t *)c;
    int64_t *pos = (int64_t *)(c + round_up(m * sizeof(uint64_t)));
    int64_t *pos_sorted = (int64_t *)(c + round_up(m * sizeof(uint64_t)) +
                                      round_up(m * sizeof(int64_t)));
    void *temp = c + round_up(m * sizeof(uint64_t)) + 2 * round_up(m * sizeof(int64_t));
    size_t temp_bytes = sort_temp_bytes(m);
    cudaError_t err = ga_visit_type(index_type, ga_only<int64_t, double>(
                                            KeysLaunch{index, m, keys, pos, stream}));
    if (err != cudaSuccess)
        return err;
    if ((err = sort_pairs(temp, &temp_bytes, keys, table, pos, pos_sorted, m, 64, stream)) !=
        cudaSuccess)
        return err;
    k_ms_index_inverse<<<ga_grid(m), GA_BLOCK, 0, stream>>>(table, pos_sorted, m, inverse);
    return cudaGetLastError();
}

extern "C" size_t ga_measure_histogram_scratch_bytes(const ga_measure_args *a, int nbins)
{
    return round_up((size_t)a->map.nslots * nbins * sizeof(uint64_t));
}

extern "C" cudaError_t ga_launch_measure_histogram(const ga_measure_args *a, const double *edges,
                                                   int nbins, void *scratch, int64_t *out,
                                                   cudaStream_t stream)
{
    if (nbins < 1 || a->map.nslots < 1 || a->grid < 1)
        return cudaErrorInvalidValue;
    unsigned long long *counts = (unsigned long long *)scratch;
    const size_t cells = (size_t)a->map.nslots * nbins;
    cudaError_t err = cudaMemsetAsync(counts, 0, cells * sizeof(uint64_t), stream);
    if (err != cudaSuccess)
        return err;
    const size_t edge_bytes = (size_t)(nbins + 1) * sizeof(double);
    if (edge_bytes > MS_SMEM)
        return cudaErrorInvalidValue;
    const int priv = edge_bytes + cells * sizeof(uint64_t) <= MS_SMEM;
    const size_t smem = edge_bytes + (priv ? cells * sizeof(uint64_t) : 0);
    if ((err = ms_visit(a, HistogramLaunch{a, edges, nbins, priv, smem, counts, stream})) !=
        cudaSuccess)
        return err;
    k_ms_hist_gather<<<ga_grid(a->nout * nbins), GA_BLOCK, 0, stream>>>(counts, a->inverse,
                                                                        a->nout, nbins, out);
    return cudaGetLastError();
}

extern "C" size_t ga_value_indices_scratch_bytes(int64_t n)
{
    return 2 * round_up(n * sizeof(uint64_t)) + round_up(n * sizeof(int64_t)) +
           round_up(sort_temp_bytes(n)) + 256;
}

extern "C" cudaError_t ga_launch_value_sort(ga_type type, const void *arr, int64_t n,
                                            void *scratch, int64_t *pos_out, int64_t *starts,
                                            uint64_t *start_keys, unsigned long long *nseg,
                                            cudaStream_t stream)
{
    char *c = (char *)scratch;
    uint64_t *keys_a = (uint64_t *)c;
    uint64_t *keys_b = (uint64_t *)(c + round_up(n * sizeof(uint64_t)));
    int64_t *pos = (int64_t *)(c + 2 * round_up(n * sizeof(uint64_t)));
    void *temp = c + 2 * round_up(n * sizeof(uint64_t)) + round_up(n * sizeof(int64_t));
    size_t temp_bytes = sort_temp_bytes(n);
    cudaError_t err = ga_visit_type(type, ga_only<int32_t, int64_t>(
                                            KeysLaunch{arr, n, keys_a, pos, stream}));
    if (err != cudaSuccess)
        return err;
    if ((err = sort_pairs(temp, &temp_bytes, keys_a, keys_b, pos, pos_out, n, 64, stream)) !=
        cudaSuccess)
        return err;
    if ((err = cudaMemsetAsync(nseg, 0, sizeof(*nseg), stream)) != cudaSuccess)
        return err;
    k_ms_segments<<<ga_grid(n), GA_BLOCK, 0, stream>>>(keys_b, n, nseg, starts, start_keys);
    return cudaGetLastError();
}

extern "C" cudaError_t ga_launch_label_max(ga_type type, const void *labels, int64_t n, int grid,
                                           int64_t *out, cudaStream_t stream)
{
    cudaError_t err = cudaMemsetAsync(out, 0, sizeof(*out), stream);
    if (err != cudaSuccess)
        return err;
    return ga_visit_type(type, ga_only<int32_t, int64_t>(LabelMaxLaunch{labels, n, grid, out,
                                                                        stream}));
}

extern "C" cudaError_t ga_launch_find_objects(ga_type type, const void *labels, int64_t n,
                                              int ndim, const int64_t *shape, int64_t max_label,
                                              int grid, unsigned long long *bbox,
                                              cudaStream_t stream)
{
    if (ndim < 1 || ndim > GA_MEASURE_MAXDIM || max_label < 1)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaMemsetAsync(bbox, 0xff, (size_t)max_label * ndim * 2 * sizeof(*bbox),
                                      stream);
    if (err != cudaSuccess)
        return err;
    ga_kshape sh;
    sh.ndim = ndim;
    for (int d = 0; d < ndim; ++d)
        sh.shape[d] = shape[d];
    return ga_visit_type(type, ga_only<int32_t, int64_t>(BboxLaunch{labels, n, ndim, sh,
                                                                    max_label, grid, bbox,
                                                                    stream}));
}
