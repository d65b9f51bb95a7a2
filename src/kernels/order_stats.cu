// order_stats.cu -- order statistics without sorting: radix selection (median,
// percentile, quantile of a whole array), binary search (searchsorted,
// digitize), and counting into bins (histogram, bincount).
//
// Radix selection
// ---------------
// The k-th smallest element is found digit by digit on the order-preserving
// keys (sort_keys.cuh), most significant digit first, 11 bits at a time
// (radix_select.cuh)
// (32-bit keys: 11+11+10, three passes; 64-bit: six; 16-bit: two; 8-bit:
// one).  Each pass reads the whole array (it stays in L2 between passes on
// large-L2 GPUs), counts the next digit of the elements whose higher digits
// match the prefix found so far in a shared-memory histogram per block,
// merges the block histograms into a global one with atomics, and the last
// block to finish (last_block.cuh) scans that histogram to pick the bucket holding the wanted rank,
// appends it to the prefix and clears the histogram for the next pass.
// Nothing returns to the host: the rank itself is computed on the device in
// the first pass (nanmedian's rank depends on the number of NaNs), and the
// last pass writes the answer into the 0-d result.
//
// Two ranks are tracked at once (the two order statistics that median and
// 'linear' interpolate between).  While they share a prefix only one
// histogram is counted.  A pass is: memset (first pass only) + one kernel,
// so a float32 median is four launches and three reads of the data.
#include "last_block.cuh"
#include "quantile.cuh"
#include "radix_select.cuh"

// ============================== radix selection ============================

#define SEL_THREADS 512

// Selection state in device memory, zeroed before the first pass.
struct SelState {
    unsigned long long hist[2][GA_RADIX_BINS];
    unsigned long long nan_count;
    unsigned long long prefix[2];
    long long rank[2];
    double t;
    unsigned int ticket;
    int shared;     // both ranks follow one prefix (one histogram counted)
    int same;       // the two ranks are equal (odd median, last element)
    int done;       // the answer is written (NaN found, or no valid element)
};

// The answer for a type of a key width.
template <class T, class K>
__device__ __forceinline__ void sel_answer_t(int mode, K a, K b, bool same, double t, char *out)
{
    ga_quantile_value<T>(mode, ga_bits_as<T>(a), ga_bits_as<T>(b), same, t, out);
}

// A device-side choice among the dtypes that share the key width K (the
// launch was specialised on K by ga_visit_key): the host visitors cannot
// run here, and three types a width are an if-chain.
template <class K>
__device__ void sel_answer(ga_type type, int mode, K a, K b, bool same, double t, char *out)
{
    if constexpr (sizeof(K) == 1) {
        if (type == GA_BOOL) sel_answer_t<bool>(mode, a, b, same, t, out);
        else if (type == GA_INT8) sel_answer_t<int8_t>(mode, a, b, same, t, out);
        else sel_answer_t<uint8_t>(mode, a, b, same, t, out);
    } else if constexpr (sizeof(K) == 2) {
        if (type == GA_FLOAT16) sel_answer_t<__half>(mode, a, b, same, t, out);
        else if (type == GA_INT16) sel_answer_t<int16_t>(mode, a, b, same, t, out);
        else sel_answer_t<uint16_t>(mode, a, b, same, t, out);
    } else if constexpr (sizeof(K) == 4) {
        if (type == GA_FLOAT32) sel_answer_t<float>(mode, a, b, same, t, out);
        else if (type == GA_INT32) sel_answer_t<int32_t>(mode, a, b, same, t, out);
        else sel_answer_t<uint32_t>(mode, a, b, same, t, out);
    } else {
        if (type == GA_FLOAT64) sel_answer_t<double>(mode, a, b, same, t, out);
        else if (type == GA_INT64) sel_answer_t<int64_t>(mode, a, b, same, t, out);
        else sel_answer_t<uint64_t>(mode, a, b, same, t, out);
    }
}

// The last block's share of a pass: ranks (first pass), bucket choice,
// prefix update, clearing, and the answer (last pass).
template <class K>
__device__ void sel_step(SelState *st, int64_t n, int kind, ga_type type, int mode, int method,
                         int ignore_nan, double q, int pass, int last_pass, int width, char *out)
{
    __shared__ int s_done;
    const int nbins = 1 << width;
    const bool shared = pass == 0 || st->shared;
    if (threadIdx.x == 0) {
        s_done = 0;
        if (pass == 0) {
            const long long nans = (long long)__ldcg(&st->nan_count);
            const long long valid = n - (ignore_nan ? nans : 0);
            if ((nans > 0 && !ignore_nan) || valid == 0) {
                ga_quantile_nan(type, mode, out);
                st->done = 1;
                s_done = 1;
            } else {
                int64_t lo, hi;
                double t;
                ga_quantile_ranks(valid, q, mode, method, &lo, &hi, &t);
                st->rank[0] = lo;
                st->rank[1] = hi;
                st->same = lo == hi;
                st->t = t;
            }
        }
    }
    __syncthreads();
    if (s_done)
        return;
    int bucket[2];
    int64_t below[2];
    const int64_t ranks[2] = {st->rank[0], st->rank[1]};
    ga_block_select_two<SEL_THREADS>(st->hist[0], st->hist[1], shared, nbins, ranks,
                                     [&](int t, int bin, int64_t under, int64_t) {
                                         bucket[t] = bin;
                                         below[t] = under;
                                     });
    for (int b = threadIdx.x; b < nbins; b += SEL_THREADS) {
        st->hist[0][b] = 0;
        st->hist[1][b] = 0;
    }
    if (threadIdx.x == 0) {
        for (int tg = 0; tg < 2; ++tg) {
            st->prefix[tg] = (pass == 0 ? 0ull : st->prefix[tg] << width) |
                             (unsigned long long)bucket[tg];
            st->rank[tg] -= below[tg];
        }
        st->shared = shared && bucket[0] == bucket[1];
        st->ticket = 0;
        if (last_pass)
            sel_answer<K>(type, mode, ga_from_key<K>((K)st->prefix[0], kind),
                          ga_from_key<K>((K)st->prefix[1], kind), st->same != 0, st->t, out);
    }
}

// One pass: histogram the digit [shift, shift + width) of the elements whose
// higher bits equal the prefix of either rank.
template <class K>
__global__ void __launch_bounds__(SEL_THREADS)
k_select_pass(const K *src, int64_t n, int vector, int kind, ga_type type, int mode, int method,
              int ignore_nan, double q, SelState *st, int pass, int last_pass, int shift,
              int width, char *out)
{
    __shared__ unsigned int sh[2][GA_RADIX_BINS];
    if (pass > 0 && st->done)
        return;
    const bool shared = pass == 0 || st->shared;
    const K p0 = pass ? (K)st->prefix[0] : (K)0, p1 = pass ? (K)st->prefix[1] : (K)0;
    const int nbins = 1 << width, hi_shift = shift + width;
    const unsigned mask = (unsigned)nbins - 1;
    for (int b = threadIdx.x; b < nbins; b += SEL_THREADS) {
        sh[0][b] = 0;
        sh[1][b] = 0;
    }
    __syncthreads();

    unsigned long long nans = 0;
    auto visit = [&](K bits) {
        if (pass == 0) {
            nans += ga_key_isnan<K>(bits, kind);
            atomicAdd(&sh[0][(unsigned)(ga_to_key<K>(bits, kind, false) >> shift) & mask], 1u);
            return;
        }
        const K key = ga_to_key<K>(bits, kind, false);
        const unsigned d = (unsigned)(key >> shift) & mask;
        const K hi = (K)(key >> hi_shift);
        if (hi == p0)
            atomicAdd(&sh[0][d], 1u);
        if (!shared && hi == p1)
            atomicAdd(&sh[1][d], 1u);
    };
    const int64_t nthreads = (int64_t)gridDim.x * SEL_THREADS;
    const int64_t tid = (int64_t)blockIdx.x * SEL_THREADS + threadIdx.x;
    int64_t tail = 0;
    if (vector) {
        // 16-byte loads, four in flight per thread.
        constexpr int V = 16 / sizeof(K);
        union Vec {
            uint4 u;
            K k[V];
        };
        const uint4 *v = (const uint4 *)src;
        const int64_t nvec = n / V;
        int64_t i = tid;
        for (; i + 3 * nthreads < nvec; i += 4 * nthreads) {
            Vec r[4];
#pragma unroll
            for (int u = 0; u < 4; ++u)
                r[u].u = v[i + u * nthreads];
#pragma unroll
            for (int u = 0; u < 4; ++u)
#pragma unroll
                for (int e = 0; e < V; ++e)
                    visit(r[u].k[e]);
        }
        for (; i < nvec; i += nthreads) {
            Vec r;
            r.u = v[i];
#pragma unroll
            for (int e = 0; e < V; ++e)
                visit(r.k[e]);
        }
        tail = nvec * V;
    }
    for (int64_t i = tail + tid; i < n; i += nthreads)
        visit(src[i]);
    __syncthreads();

    for (int b = threadIdx.x; b < nbins; b += SEL_THREADS) {
        if (sh[0][b])
            atomicAdd(&st->hist[0][b], (unsigned long long)sh[0][b]);
        if (!shared && sh[1][b])
            atomicAdd(&st->hist[1][b], (unsigned long long)sh[1][b]);
    }
    if (pass == 0 && kind == GA_KEY_FLOAT) {
        for (int o = 16; o > 0; o >>= 1)
            nans += __shfl_down_sync(0xffffffffu, nans, o);
        if ((threadIdx.x & 31) == 0 && nans)
            atomicAdd(&st->nan_count, nans);
    }
    if (!ga_last_block(&st->ticket))
        return;
    sel_step<K>(st, n, kind, type, mode, method, ignore_nan, q, pass, last_pass, width, out);
}

// ============================== searching ==================================

// Insertion points of v's elements in the sorted a (NumPy's order through
// the keys, -0.0 == 0.0, NaN last).  `direction` 1 reads a backwards and
// answers na - position (digitize with decreasing bins); 2 decides that on
// the device from a's ends.
template <class K>
__global__ void __launch_bounds__(GA_BLOCK)
k_searchsorted(int64_t na, const char *a, int64_t a_stride, int kind, int64_t nv, const char *v,
               GA_PARAM ga_kshape vsh, GA_PARAM ga_kstrides vst, int64_t *out, int right,
               int direction)
{
    bool rev = direction == 1;
    if (direction == 2 && na > 1)
        rev = ga_to_key<K>(*(const K *)a, kind, true) >
              ga_to_key<K>(*(const K *)(a + (na - 1) * a_stride), kind, true);
    GA_GRID_STRIDE(i, nv) {
        const K kv = ga_to_key<K>(*(const K *)(v + ga_offset(i, vsh, vst)), kind, true);
        int64_t lo = 0, hi = na;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            const int64_t j = rev ? na - 1 - mid : mid;
            const K ka = ga_to_key<K>(*(const K *)(a + j * a_stride), kind, true);
            if (right ? ka <= kv : ka < kv)
                lo = mid + 1;
            else
                hi = mid;
        }
        out[i] = rev ? na - lo : lo;
    }
}

// range[0] = max(~key), range[1] = max(key) over n contiguous elements:
// the complement of the minimum key and the maximum key (NaN is the
// largest key).  Combined with what range holds, so zero it first.
template <class K>
__global__ void __launch_bounds__(GA_BLOCK)
k_key_range(int64_t n, const K *src, int kind, unsigned long long *range)
{
    __shared__ unsigned long long s_lo[GA_BLOCK / 32], s_hi[GA_BLOCK / 32];
    unsigned long long lo = 0, hi = 0;
    GA_GRID_STRIDE(i, n) {
        const unsigned long long k = ga_to_key<K>(src[i], kind, true);
        lo = max(lo, ~k);
        hi = max(hi, k);
    }
    for (int o = 16; o > 0; o >>= 1) {
        lo = max(lo, __shfl_down_sync(0xffffffffu, lo, o));
        hi = max(hi, __shfl_down_sync(0xffffffffu, hi, o));
    }
    if ((threadIdx.x & 31) == 0) {
        s_lo[threadIdx.x >> 5] = lo;
        s_hi[threadIdx.x >> 5] = hi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < GA_BLOCK / 32; ++w) {
            lo = max(lo, s_lo[w]);
            hi = max(hi, s_hi[w]);
        }
        atomicMax(&range[0], lo);
        atomicMax(&range[1], hi);
    }
}

// histogram(range=None) edges, as numpy.linspace(min, max, nbins + 1) in the
// array's float type (float64 for integers), after widening an empty range
// by 0.5 each way; edges64 gets the same values as float64.
template <class T>
__global__ void __launch_bounds__(GA_BLOCK)
k_histogram_edges(const unsigned long long *range, int kind, int64_t nbins, char *edges,
                  double *edges64)
{
    using K = typename ga_sized<sizeof(T)>::type;
    using D = typename std::conditional<ga_is_float<T>, T, double>::type;
    using A = QArith<D>;
    using C = typename A::C;
    auto value = [&](unsigned long long key) {
        const T x = ga_bits_as<T>(ga_from_key<K>((K)key, kind));
        if constexpr (ga_is_float<T>) return A::up(x);
        else return (C)x;
    };
    C first = value(~range[0]), last = value(range[1]);
    if (last != last)
        first = last;
    if (first == last) {
        first = A::up(A::down(q_sub(first, (C)0.5)));
        last = A::up(A::down(q_add(last, (C)0.5)));
    }
    const C delta = A::up(A::down(q_sub(last, first)));
    const C step = A::up(A::down(delta / (C)nbins));
    GA_GRID_STRIDE(i, nbins + 1) {
        C y = A::up(A::down((C)i));
        if (step == (C)0)
            y = A::up(A::down(q_mul(A::up(A::down(y / (C)nbins)), delta)));
        else
            y = A::up(A::down(q_mul(y, step)));
        y = A::up(A::down(q_add(y, first)));
        if (i == nbins)
            y = last;
        *(D *)(edges + i * sizeof(D)) = A::down(y);
        edges64[i] = q_to_double(A::down(y));
    }
}

// ============================== counting ===================================

// Add `w` to bin b: block-private bins in shared memory when they fit.
template <class Acc>
__device__ __forceinline__ void bin_add(Acc *bins, int64_t b, Acc w)
{
    atomicAdd(bins + b, w);
}

template <class Acc>
__device__ __forceinline__ Acc *bins_begin(bool private_bins, int64_t nslots, Acc *global)
{
    extern __shared__ unsigned long long bin_smem[];
    if (!private_bins)
        return global;
    Acc *s = (Acc *)bin_smem;
    for (int64_t b = threadIdx.x; b < nslots; b += blockDim.x)
        s[b] = (Acc)0;
    __syncthreads();
    return s;
}

template <class Acc>
__device__ __forceinline__ void bins_end(bool private_bins, int64_t nslots, const Acc *s,
                                         Acc *global)
{
    if (!private_bins)
        return;
    __syncthreads();
    for (int64_t b = threadIdx.x; b < nslots; b += blockDim.x)
        if (s[b] != (Acc)0)
            atomicAdd(global + b, s[b]);
}

// counts[b] += w[i] (or 1) for x[i] in [edges[b], edges[b+1]), the last bin
// closed; counts[nbins] accumulates the total (density's denominator).
template <class T, class Acc>
__global__ void __launch_bounds__(GA_BLOCK)
k_histogram(int64_t n, const T *x, const double *w, int64_t nbins, const double *edges,
            int private_bins, Acc *counts)
{
    Acc *bins = bins_begin<Acc>(private_bins, nbins + 1, counts);
    const double e0 = edges[0], elast = edges[nbins];
    GA_GRID_STRIDE(i, n) {
        double xv;
        if constexpr (ga_is_half<T>) xv = (double)__half2float(x[i]);
        else xv = (double)x[i];
        if (!(xv >= e0 && xv <= elast))
            continue;
        int64_t lo = 0, hi = nbins + 1;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (edges[mid] <= xv)
                lo = mid + 1;
            else
                hi = mid;
        }
        const int64_t b = lo - 1 < nbins ? lo - 1 : nbins - 1;
        const Acc add = w != nullptr ? (Acc)w[i] : (Acc)1;
        bin_add<Acc>(bins, b, add);
        bin_add<Acc>(bins, nbins, add);
    }
    bins_end<Acc>(private_bins, nbins + 1, bins, counts);
}

// counts[x[i]] += w[i] (or 1); x already checked to lie in [0, nbins).
template <class Acc>
__global__ void __launch_bounds__(GA_BLOCK)
k_bincount(int64_t n, const int64_t *x, const double *w, int64_t nbins, int private_bins,
           Acc *counts)
{
    Acc *bins = bins_begin<Acc>(private_bins, nbins, counts);
    GA_GRID_STRIDE(i, n) bin_add<Acc>(bins, x[i], w != nullptr ? (Acc)w[i] : (Acc)1);
    bins_end<Acc>(private_bins, nbins, bins, counts);
}

// ============================== launchers ==================================

namespace {

// Private (shared-memory) bins when this many fit: 32 KiB of counters.
constexpr int64_t PRIVATE_BINS = 4096;

// Blocks for a pass that ends in per-block atomics (reductions, private
// bins): a few per multiprocessor on any GPU, each looping over many items.
unsigned int atomic_grid(int64_t n)
{
    const unsigned int g = ga_grid(n);
    return g < 1024 ? g : 1024;
}

struct SelectLaunch {
    ga_type type; int64_t n; const char *src; const ga_quantile_args *args; char *out;
    int sm_count; SelState *st; cudaStream_t stream;
    template <class K> cudaError_t operator()()
    {
        const int kind = ga_key_kind_of(type);
        const int bits = 8 * (int)sizeof(K);
        const int passes = ga_radix_passes(bits);
        const int osize = ga_quantile_out_double(type, args->mode) ? 8 : (int)sizeof(K);
        const int vector = ((uintptr_t)src & 15) == 0;
        const int64_t work = vector ? n / (16 / (int64_t)sizeof(K)) : n;
        int64_t blocks = (work + SEL_THREADS * 4 - 1) / (SEL_THREADS * 4);
        const int64_t cap = 2 * (int64_t)(sm_count > 0 ? sm_count : 1);
        blocks = blocks < 1 ? 1 : blocks > cap ? cap : blocks;
        for (int k = 0; k < args->nq; ++k) {
            cudaError_t err = cudaMemsetAsync(st, 0, sizeof(SelState), stream);
            if (err != cudaSuccess)
                return err;
            for (int p = 0; p < passes; ++p) {
                int shift, width;
                ga_radix_digit(bits, p, &shift, &width);
                k_select_pass<K><<<(unsigned)blocks, SEL_THREADS, 0, stream>>>(
                    (const K *)src, n, vector, kind, type, args->mode, args->method,
                    args->ignore_nan,
                    args->q[k], st, p, p == passes - 1, shift, width, out + k * osize);
                if ((err = cudaGetLastError()) != cudaSuccess)
                    return err;
            }
        }
        return cudaSuccess;
    }
};

struct SearchLaunch {
    ga_type type; int64_t na; const char *a; int64_t a_stride; const char *v;
    const ga_kshape *vsh; const ga_kstrides *vst; int64_t *out; int right, direction;
    cudaStream_t stream;
    template <class K> cudaError_t operator()()
    {
        const int64_t nv = ga_kshape_size(vsh);
        k_searchsorted<K><<<ga_grid(nv), GA_BLOCK, 0, stream>>>(
            na, a, a_stride, ga_key_kind_of(type), nv, v, *vsh, *vst, out, right, direction);
        return cudaGetLastError();
    }
};

struct RangeLaunch {
    ga_type type; int64_t n; const char *src; unsigned long long *range; cudaStream_t stream;
    template <class K> cudaError_t operator()()
    {
        k_key_range<K><<<atomic_grid(n), GA_BLOCK, 0, stream>>>(n, (const K *)src,
                                                            ga_key_kind_of(type), range);
        return cudaGetLastError();
    }
};

struct EdgesLaunch {
    const unsigned long long *range; int kind; int64_t nbins; char *edges; double *edges64;
    cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        if constexpr (ga_is_complex<T>::value || std::is_same<T, bool>::value) {
            return cudaErrorInvalidValue;
        } else {
            k_histogram_edges<T><<<ga_grid(nbins + 1), GA_BLOCK, 0, stream>>>(
                range, kind, nbins, edges, edges64);
            return cudaGetLastError();
        }
    }
};

struct HistogramLaunch {
    int64_t n; const char *x; const double *w; int64_t nbins; const double *edges; void *counts;
    cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        if constexpr (ga_is_complex<T>::value) {
            return cudaErrorInvalidValue;
        } else {
            const int priv = nbins + 1 <= PRIVATE_BINS;
            const size_t smem = priv ? (size_t)(nbins + 1) * 8 : 0;
            if (w != nullptr)
                k_histogram<T, double><<<atomic_grid(n), GA_BLOCK, smem, stream>>>(
                    n, (const T *)x, w, nbins, edges, priv, (double *)counts);
            else
                k_histogram<T, unsigned long long><<<atomic_grid(n), GA_BLOCK, smem, stream>>>(
                    n, (const T *)x, w, nbins, edges, priv, (unsigned long long *)counts);
            return cudaGetLastError();
        }
    }
};

} // namespace

extern "C" cudaError_t ga_launch_quantile_select(ga_type type, int64_t n, const char *src,
                                                 const ga_quantile_args *args, char *out,
                                                 int sm_count, void *temp, size_t *temp_bytes,
                                                 cudaStream_t stream)
{
    const int width = ga_key_width_of(type);
    if (ga_key_kind_of(type) < 0 || args->nq > GA_QMAX)
        return cudaErrorInvalidValue;
    if (temp == nullptr) {
        *temp_bytes = sizeof(SelState);
        return cudaSuccess;
    }
    if (n == 0 || args->nq == 0)
        return cudaSuccess;
    return ga_visit_key(width, SelectLaunch{type, n, src, args, out, sm_count, (SelState *)temp,
                                            stream});
}

extern "C" cudaError_t ga_launch_searchsorted(ga_type type, int64_t na, const char *a,
                                              int64_t a_stride, const char *v,
                                              const ga_kshape *vshape,
                                              const ga_kstrides *vstrides, int64_t *out,
                                              int side_right, int direction,
                                              cudaStream_t stream)
{
    if (ga_key_kind_of(type) < 0)
        return cudaErrorInvalidValue;
    if (ga_kshape_size(vshape) == 0)
        return cudaSuccess;
    return ga_visit_key(ga_key_width_of(type), SearchLaunch{type, na, a, a_stride, v, vshape,
                                                            vstrides, out, side_right,
                                                            direction, stream});
}

extern "C" cudaError_t ga_launch_key_range(ga_type type, int64_t n, const char *src,
                                           uint64_t *range, cudaStream_t stream)
{
    if (ga_key_kind_of(type) < 0)
        return cudaErrorInvalidValue;
    if (n == 0)
        return cudaSuccess;
    return ga_visit_key(ga_key_width_of(type),
                        RangeLaunch{type, n, src, (unsigned long long *)range, stream});
}

extern "C" cudaError_t ga_launch_histogram_edges(ga_type type, const uint64_t *range,
                                                 int64_t nbins, char *edges, double *edges64,
                                                 cudaStream_t stream)
{
    if (ga_key_kind_of(type) < 0 || nbins < 1)
        return cudaErrorInvalidValue;
    return ga_visit_type(type, EdgesLaunch{(const unsigned long long *)range,
                                           ga_key_kind_of(type), nbins, edges, edges64, stream});
}

extern "C" cudaError_t ga_launch_histogram(ga_type type, int64_t n, const char *x,
                                           const double *weights, int64_t nbins,
                                           const double *edges, void *counts,
                                           cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (nbins < 1)
        return cudaErrorInvalidValue;
    return ga_visit_type(type, HistogramLaunch{n, x, weights, nbins, edges, counts, stream});
}

extern "C" cudaError_t ga_launch_bincount(int64_t n, const int64_t *x, const double *weights,
                                          int64_t nbins, void *counts, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    const int priv = nbins <= PRIVATE_BINS;
    const size_t smem = priv ? (size_t)nbins * 8 : 0;
    if (weights != nullptr)
        k_bincount<double><<<atomic_grid(n), GA_BLOCK, smem, stream>>>(n, x, weights, nbins, priv,
                                                                   (double *)counts);
    else
        k_bincount<unsigned long long><<<atomic_grid(n), GA_BLOCK, smem, stream>>>(
            n, x, weights, nbins, priv, (unsigned long long *)counts);
    return cudaGetLastError();
}
