// measure.cu -- per-label statistics (scipy.ndimage's measurements): every
// statistic of every requested label in one pass over the data.
//
// A pixel's label selects a slot (ga_slotmap): all pixels, positive labels,
// a range of consecutive integers (slot = label - lo) or a sorted table of
// keys searched by bisection.  Each pass reads the labels once and a value
// only where its label has a slot (a sky image's background, most of it,
// costs no value traffic); a thread keeps the running sums of the current
// slot in registers and adds them to the slot's accumulators only when the
// slot changes (label images come in runs), into a per-block copy in
// shared memory when every slot fits there, else straight into global
// float64/uint64 accumulators.  The last block to finish (a ticket
// counter) turns the accumulators into the requested statistics.  One
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
#include "kernel_common.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace {

constexpr int MS_THREADS = 256;
constexpr int MS_ITEMS = 4;
constexpr int MS_BLOCKS_PER_SM = GA_MEASURE_BLOCKS_PER_SM;  // resident blocks of k_ms_accumulate
constexpr size_t MS_SMEM = 48 * 1024;          // shared memory a launch gets by default
constexpr size_t MS_ACC_STATIC_SMEM = 16;       // k_ms_accumulate's own __shared__ flag
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

// Order-preserving 64-bit keys: integers by flipping the sign bit, doubles
// by the usual sign-magnitude flip (-0.0 is folded onto +0.0 so they match).
__device__ __forceinline__ uint64_t ms_key(int32_t v) { return (uint64_t)(int64_t)v ^ MS_SIGN; }
__device__ __forceinline__ uint64_t ms_key(int64_t v) { return (uint64_t)v ^ MS_SIGN; }
__device__ __forceinline__ uint64_t ms_key(double v)
{
    const uint64_t b = v == 0.0 ? 0ull : (uint64_t)__double_as_longlong(v);
    return (b & MS_SIGN) ? ~b : b | MS_SIGN;
}
__device__ __forceinline__ double ms_unkey(uint64_t k)
{
    return __longlong_as_double((long long)((k & MS_SIGN) ? k ^ MS_SIGN : ~k));
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
    int flags;            // moments: bit c set = accumulate component c (C_COORD: all dims)
    int last;             // LAST_*
    unsigned int what;    // statistics to write at LAST_FINALIZE (bit GA_MS_*)
    int priv;             // per-block accumulators in shared memory
    int table_smem;       // table copied to shared memory
    int ncomp;            // components in the accumulator array (shared copy: same layout)
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

// The per-thread run: partial results for one slot.
struct MsRun {
    int64_t slot;
    double count, sum, css;
    double coord[GA_MEASURE_MAXDIM];
    double vmin, vmax;
    uint64_t pmin, pmax;
};

__device__ __forceinline__ void ms_run_reset(MsRun &r, int64_t slot)
{
    r.slot = slot;
    r.count = r.sum = r.css = 0.0;
#pragma unroll
    for (int d = 0; d < GA_MEASURE_MAXDIM; ++d)
        r.coord[d] = 0.0;
    r.vmin = INFINITY;
    r.vmax = -INFINITY;
    r.pmin = r.pmax = MS_NONE;
}

// Add a run to the accumulators (shared or global, same layout).
__device__ __forceinline__ void ms_run_flush(const MsPass &p, const MsRun &r, double *mom,
                                             uint64_t *ext, int64_t ns)
{
    if (r.slot < 0)
        return;
    const int64_t s = r.slot;
    if (p.kind == K_MOMENTS) {
        if (p.flags & (1 << C_COUNT)) ms_add(mom + C_COUNT * ns + s, r.count);
        if (p.flags & (1 << C_SUM)) ms_add(mom + C_SUM * ns + s, r.sum);
        if (p.flags & (1 << C_COORD)) {
#pragma unroll
            for (int d = 0; d < GA_MEASURE_MAXDIM; ++d)
                if (d < p.a.ndim)
                    ms_add(mom + (C_COORD + d) * ns + s, r.coord[d]);
        }
    } else if (p.kind == K_CENTRED) {
        ms_add(mom + C_CSS * ns + s, r.css);
    } else if (p.kind == K_EXTREMA) {
        if (r.count > 0) {
            ms_min(ext + E_MIN * ns + s, ms_key(r.vmin));
            ms_min(ext + E_MAXINV * ns + s, ~ms_key(r.vmax));
        }
    } else {
        if (r.pmin != MS_NONE) ms_min(ext + E_MINPOS * ns + s, r.pmin);
        if (r.pmax != MS_NONE) ms_min(ext + E_MAXPOS * ns + s, r.pmax);
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

// Add element i (slot s, value x) to the thread's run, flushing the run
// first when the slot changes.
__device__ __forceinline__ void ms_take(const MsPass &p, MsRun &r, double *mom, uint64_t *ext,
                                        int64_t i, int64_t s, double x)
{
    const int64_t ns = p.a.map.nslots;
    if (s != r.slot) {
        ms_run_flush(p, r, mom, ext, ns);
        ms_run_reset(r, s);
    }
    r.count += 1.0;
    if (p.kind == K_MOMENTS) {
        r.sum += x;
        if (p.flags & (1 << C_COORD)) {
            int64_t c[GA_MEASURE_MAXDIM];
            ms_coords(i, p.a.ndim, p.a.shape, c);
#pragma unroll
            for (int d = 0; d < GA_MEASURE_MAXDIM; ++d)
                if (d < p.a.ndim)
                    r.coord[d] += x * (double)c[d];
        }
    } else if (p.kind == K_CENTRED) {
        const double dx = x - __ldg(p.centre + s);
        r.css += dx * dx;
    } else if (p.kind == K_EXTREMA) {
        r.vmin = fmin(r.vmin, x);
        r.vmax = fmax(r.vmax, x);
    } else {
        const uint64_t key = ms_key(x);
        if (r.pmin == MS_NONE &&
            key == __ldg((const unsigned long long *)p.ext + E_MIN * ns + s))
            r.pmin = (uint64_t)i;
        if (r.pmax == MS_NONE &&
            ~key == __ldg((const unsigned long long *)p.ext + E_MAXINV * ns + s))
            r.pmax = (uint64_t)i;
    }
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

template <class V, class L>
__global__ void __launch_bounds__(MS_THREADS, MS_BLOCKS_PER_SM) k_ms_accumulate(MsPass p)
{
    extern __shared__ unsigned long long ms_smem[];
    __shared__ bool last;
    const int64_t ns = p.a.map.nslots;
    const int64_t n = p.a.n;
    const V *values = (const V *)p.a.values;
    const L *labels = (const L *)p.a.labels;

    uint64_t *s_table = (uint64_t *)ms_smem;
    unsigned long long *s_acc = ms_smem + (p.table_smem ? ns : 0);
    const uint64_t *table = p.a.map.table;
    if (p.table_smem) {
        for (int64_t k = threadIdx.x; k < ns; k += blockDim.x)
            s_table[k] = table[k];
        table = s_table;
    }
    if (p.priv) {
        const unsigned long long fill = p.kind == K_EXTREMA ? MS_NONE : 0ull;
        for (int64_t k = threadIdx.x; k < p.ncomp * ns; k += blockDim.x)
            s_acc[k] = fill;
    }
    __syncthreads();
    double *mom = p.priv ? (double *)s_acc : p.mom;
    uint64_t *ext = p.priv ? (uint64_t *)s_acc : p.ext;

    MsRun r;
    ms_run_reset(r, -1);
    // A thread's groups of MS_ITEMS elements are `stride` apart (a warp
    // reads 32 consecutive groups).  The labels of G groups are loaded
    // together: with two blocks per multiprocessor (the registers of the
    // run allow no more) 32 bytes of labels in flight per thread would not
    // cover the memory's latency; 64 do.  The loop body stays small (one
    // key test per element): the elements that pass are taken one at a
    // time by a loop that is not unrolled, so the code of ms_take exists
    // once (copies of it per element filled the instruction cache), and
    // their values are the only ones read (the background of a label
    // image costs no value traffic).
    constexpr int G = sizeof(L) == 4 ? 4 : 2;
    uint64_t klo, khi;
    ms_key_bounds<L>(p.a.map, table, klo, khi);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x * MS_ITEMS;
    for (int64_t base0 = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * MS_ITEMS; base0 < n;
         base0 += G * stride) {
        L l[G][MS_ITEMS];
#pragma unroll
        for (int g = 0; g < G; ++g)
            ms_load_labels(labels, base0 + g * stride, n, p.vec, l[g]);
        unsigned int cand = 0;  // bit g * MS_ITEMS + k: element k of group g may have a slot
#pragma unroll
        for (int g = 0; g < G; ++g) {
#pragma unroll
            for (int k = 0; k < MS_ITEMS; ++k) {
                const uint64_t key = ms_key(l[g][k]);
                if (key >= klo && key <= khi && base0 + g * stride + k < n)
                    cand |= 1u << (g * MS_ITEMS + k);
            }
        }
#pragma unroll 1
        while (cand != 0) {
            const int b = __ffs(cand) - 1;
            cand &= cand - 1;
            const int64_t i = base0 + (b / MS_ITEMS) * stride + b % MS_ITEMS;
            const int64_t s = ms_slot(p.a.map, table, labels ? __ldg(labels + i) : (L)0);
            if (s >= 0)
                ms_take(p, r, mom, ext, i, s, (double)__ldg(values + i));
        }
    }
    ms_run_flush(p, r, mom, ext, ns);
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
    if (p.last == LAST_NOTHING)
        return;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicAdd(p.ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence();
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

template <class T>
__global__ void k_ms_index_keys(const T *index, int64_t m, uint64_t *keys, int64_t *pos)
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
// labels cost one short launch, no sort.
template <class T>
__global__ void __launch_bounds__(MS_PREP_THREADS)
k_ms_prepare(unsigned long long *zero, int64_t nzero, unsigned long long *ones, int64_t nones,
             const T *index, int m, int float_keys, uint64_t *table, int64_t *inverse)
{
    __shared__ uint64_t s_keys[MS_INDEX_SMALL];
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
}

// The launch of k_ms_prepare: enough blocks for one warp per index entry
// and for the words to fill.  The index: GA_INT64, or GA_FLOAT64 with
// float_keys (int64 values are exact as float64 keys up to 2**53).
cudaError_t ms_prepare(unsigned long long *zero, int64_t nzero, unsigned long long *ones,
                       int64_t nones, ga_type index_type, int float_keys, const void *index,
                       int64_t m, uint64_t *table, int64_t *inverse, cudaStream_t stream)
{
    if (m > MS_INDEX_SMALL)
        return cudaErrorInvalidValue;
    const int64_t warps = MS_PREP_THREADS / 32;
    const int64_t words = nzero > nones ? nzero : nones;
    int64_t blocks = (m + warps - 1) / warps;
    const int64_t fill = (words + MS_PREP_THREADS * 4 - 1) / (MS_PREP_THREADS * 4);
    blocks = blocks > fill ? blocks : fill;
    blocks = blocks < 1 ? 1 : blocks > 1024 ? 1024 : blocks;
    if (m == 0 || index_type == GA_INT64)
        k_ms_prepare<int64_t><<<(unsigned)blocks, MS_PREP_THREADS, 0, stream>>>(
            zero, nzero, ones, nones, (const int64_t *)index, (int)m, float_keys, table, inverse);
    else if (index_type == GA_FLOAT64 && float_keys)
        k_ms_prepare<double><<<(unsigned)blocks, MS_PREP_THREADS, 0, stream>>>(
            zero, nzero, ones, nones, (const double *)index, (int)m, 1, table, inverse);
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

template <class L>
__global__ void k_ms_value_keys(const L *arr, int64_t n, uint64_t *keys, int64_t *pos)
{
    GA_GRID_STRIDE(i, n) {
        keys[i] = ms_key(arr[i]);
        pos[i] = i;
    }
}

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

__global__ void k_ms_unravel(const int64_t *pos, int64_t n, int ndim, ga_kshape shape,
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
k_ms_bbox(const L *labels, int64_t n, int ndim, ga_kshape shape, int64_t max_label,
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

// Visit (V, L) for a measurement: V float/double, L int32/int64/double
// (int32 also stands for "no labels").
template <class F>
cudaError_t ms_visit(const ga_measure_args *a, F &&f)
{
    const ga_type lt = a->labels ? a->label_type : GA_INT32;
    if (a->value_type == GA_FLOAT32) {
        if (lt == GA_INT32) return f.template operator()<float, int32_t>();
        if (lt == GA_INT64) return f.template operator()<float, int64_t>();
        if (lt == GA_FLOAT64) return f.template operator()<float, double>();
    } else if (a->value_type == GA_FLOAT64) {
        if (lt == GA_INT32) return f.template operator()<double, int32_t>();
        if (lt == GA_INT64) return f.template operator()<double, int64_t>();
        if (lt == GA_FLOAT64) return f.template operator()<double, double>();
    }
    return cudaErrorInvalidValue;
}

template <class F>
cudaError_t ms_visit_labels(ga_type t, F &&f)
{
    if (t == GA_INT32) return f.template operator()<int32_t>();
    if (t == GA_INT64) return f.template operator()<int64_t>();
    if (t == GA_FLOAT64) return f.template operator()<double>();
    return cudaErrorInvalidValue;
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
        if (ms_raw_index(a)) {
            table = (uint64_t *)(c + total);
            inverse = (int64_t *)(c + total + round_up(ns * sizeof(uint64_t)));
            total += round_up(ns * sizeof(uint64_t)) + round_up(ns * sizeof(int64_t));
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
        s.table, s.inverse, stream);
    if (err != cudaSuccess)
        return err;
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
        switch (p.kind) {
        case K_MOMENTS:
            p.flags = (1 << C_COUNT) | (1 << C_SUM) |
                      ((what & (1u << GA_MS_COM)) ? (1 << C_COORD) : 0);
            p.ncomp = (what & (1u << GA_MS_COM)) ? C_COORD + a->ndim : C_SUM + 1;
            break;
        case K_CENTRED: p.ncomp = C_CSS + 1; break;
        default: p.ncomp = E_NCOMP; break;
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
    if (a->value_type == GA_FLOAT32)
        k_ms_median<float><<<ga_grid(a->nout), GA_BLOCK, 0, stream>>>(
            (const float *)a->values, pos, offsets, a->inverse, a->nout, out);
    else if (a->value_type == GA_FLOAT64)
        k_ms_median<double><<<ga_grid(a->nout), GA_BLOCK, 0, stream>>>(
            (const double *)a->values, pos, offsets, a->inverse, a->nout, out);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
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
                          m, table, inverse, stream);
    char *c = (char *)scratch;
    uint64_t *keys = (uint64_t *)c;
    int64_t *pos = (int64_t *)(c + round_up(m * sizeof(uint64_t)));
    int64_t *pos_sorted = (int64_t *)(c + round_up(m * sizeof(uint64_t)) +
                                      round_up(m * sizeof(int64_t)));
    void *temp = c + round_up(m * sizeof(uint64_t)) + 2 * round_up(m * sizeof(int64_t));
    size_t temp_bytes = sort_temp_bytes(m);
    if (index_type == GA_INT64)
        k_ms_index_keys<int64_t><<<ga_grid(m), GA_BLOCK, 0, stream>>>((const int64_t *)index, m,
                                                                      keys, pos);
    else if (index_type == GA_FLOAT64)
        k_ms_index_keys<double><<<ga_grid(m), GA_BLOCK, 0, stream>>>((const double *)index, m,
                                                                     keys, pos);
    else
        return cudaErrorInvalidValue;
    cudaError_t err = cudaGetLastError();
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
    if (type == GA_INT32)
        k_ms_value_keys<int32_t><<<ga_grid(n), GA_BLOCK, 0, stream>>>((const int32_t *)arr, n,
                                                                      keys_a, pos);
    else if (type == GA_INT64)
        k_ms_value_keys<int64_t><<<ga_grid(n), GA_BLOCK, 0, stream>>>((const int64_t *)arr, n,
                                                                      keys_a, pos);
    else
        return cudaErrorInvalidValue;
    cudaError_t err = cudaGetLastError();
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
    k_ms_unravel<<<ga_grid(n), GA_BLOCK, 0, stream>>>(pos, n, ndim, sh, coords);
    return cudaGetLastError();
}

extern "C" cudaError_t ga_launch_label_max(ga_type type, const void *labels, int64_t n, int grid,
                                           int64_t *out, cudaStream_t stream)
{
    cudaError_t err = cudaMemsetAsync(out, 0, sizeof(*out), stream);
    if (err != cudaSuccess)
        return err;
    if (type == GA_INT32)
        k_ms_label_max<int32_t><<<grid, MS_THREADS, 0, stream>>>((const int32_t *)labels, n, out);
    else if (type == GA_INT64)
        k_ms_label_max<int64_t><<<grid, MS_THREADS, 0, stream>>>((const int64_t *)labels, n, out);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
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
    if (type == GA_INT32)
        k_ms_bbox<int32_t><<<grid, MS_THREADS, 0, stream>>>((const int32_t *)labels, n, ndim, sh,
                                                            max_label, bbox);
    else if (type == GA_INT64)
        k_ms_bbox<int64_t><<<grid, MS_THREADS, 0, stream>>>((const int64_t *)labels, n, ndim, sh,
                                                            max_label, bbox);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}
