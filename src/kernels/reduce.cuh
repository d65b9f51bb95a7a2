// reduce.cuh -- the reduction kernels: one template over an operation
// functor and the input type, plus a finishing kernel per accumulator type.
//
// The host (reduction.c) has already split the iteration into kept dims
// (one output each) and reduced dims, and chosen a thread layout
// (ga_reduce_grid in kernels.h).  Every kernel here runs the same four
// steps for each tile of outputs a block owns:
//
//   1. each thread folds its share of the reduction into a per-thread State
//      (16-byte vector loads when the reduced run is contiguous, four loads
//      in flight per iteration, a scalar head and tail for alignment);
//   2. the State becomes a mergeable accumulator (Acc);
//   3. the block merges the Accs of each output: warp shuffles when the
//      reduction lanes are consecutive threads, shared memory otherwise;
//   4. lane 0 stores the final value converted to the output dtype, or, when
//      the reduction is split among several blocks, writes its Acc to the
//      partial buffer for the finishing kernel, which runs steps 3-4 over
//      the partials.  No float atomics: results are deterministic.
//
// Inputs are converted to a wide accumulator type on load (integers to
// 64 bits, floats to double, complex to complex128), so the number of
// instantiations is (operation, input type) for the first kernel and
// (operation, accumulator type) for the finishing one.  The output dtype is
// a run-time switch executed once per output.
#ifndef GA_REDUCE_CUH
#define GA_REDUCE_CUH

#ifndef __CUDACC_RTC__
#include <math.h>
#include <string.h>
#endif
#include "kernel_common.cuh"

namespace ga_red {

// ----------------------------------------------------------- wide values --

template <class T>
using wide_int = typename ga_conditional<ga_signed<T>, int64_t, uint64_t>::type;

// T converted to the accumulator type W (exact for every pair used).
template <class W, class T>
__device__ __forceinline__ W widen(T x)
{
    if constexpr (ga_is_half<T>) return (W)__half2float(x);
    else if constexpr (ga_is_complex<T>::value) return ga_c128{(double)x.re, (double)x.im};
    else return (W)x;
}

template <class W> __device__ __forceinline__ bool is_nan(W x)
{
    if constexpr (ga_same<W, ga_c128>) return isnan(x.re) || isnan(x.im);
    else if constexpr (ga_floating<W>) return isnan(x);
    else return false;
}

// NumPy's order: complex numbers compare lexicographically.
template <class W> __device__ __forceinline__ bool less(W a, W b)
{
    if constexpr (ga_same<W, ga_c128>)
        return a.re < b.re || (a.re == b.re && a.im < b.im);
    else return a < b;
}

__device__ __forceinline__ ga_c128 operator+(ga_c128 a, ga_c128 b) { return {a.re + b.re, a.im + b.im}; }
__device__ __forceinline__ ga_c128 operator-(ga_c128 a, ga_c128 b) { return {a.re - b.re, a.im - b.im}; }
__device__ __forceinline__ ga_c128 operator*(ga_c128 a, ga_c128 b)
{
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// The result converted to the output dtype (NumPy's casts, kernel_common).
template <class V>
__device__ __noinline__ void store_any(char *p, ga_type t, V v)
{
    switch (t) {
    case GA_BOOL: *(bool *)p = ga_convert<bool>(v); break;
    case GA_INT8: *(int8_t *)p = ga_convert<int8_t>(v); break;
    case GA_INT16: *(int16_t *)p = ga_convert<int16_t>(v); break;
    case GA_INT32: *(int32_t *)p = ga_convert<int32_t>(v); break;
    case GA_INT64: *(int64_t *)p = ga_convert<int64_t>(v); break;
    case GA_UINT8: *(uint8_t *)p = ga_convert<uint8_t>(v); break;
    case GA_UINT16: *(uint16_t *)p = ga_convert<uint16_t>(v); break;
    case GA_UINT32: *(uint32_t *)p = ga_convert<uint32_t>(v); break;
    case GA_UINT64: *(uint64_t *)p = ga_convert<uint64_t>(v); break;
    case GA_FLOAT16: *(__half *)p = ga_convert<__half>(v); break;
    case GA_FLOAT32: *(float *)p = ga_convert<float>(v); break;
    case GA_FLOAT64: *(double *)p = ga_convert<double>(v); break;
    case GA_COMPLEX64: *(ga_c64 *)p = ga_convert<ga_c64>(v); break;
    case GA_COMPLEX128: *(ga_c128 *)p = ga_convert<ga_c128>(v); break;
    default: break;
    }
}

// ------------------------------------------------------------ operations --
//
// An operation defines State (per thread, folded element by element), Acc
// (mergeable, what goes through shuffles and the partial buffer), and:
//   init()                    an empty State
//   add(State&, T x, idx, a)  fold element number idx of the reduction
//   acc(State)                State -> Acc
//   identity()                the empty Acc
//   merge(Acc, Acc, a)        combine two disjoint parts
//   store(char*, a, Acc)      write the final value as a.out_type

template <class W>
struct SumOp {
    using State = W;
    using Acc = W;
    static __device__ __forceinline__ W init() { return W{}; }
    template <class T>
    static __device__ __forceinline__ void add(W &s, T x, int64_t, const ga_reduce_args &)
    {
        s = s + widen<W>(x);
    }
    static __device__ __forceinline__ W acc(W s) { return s; }
    static __device__ __forceinline__ W identity() { return W{}; }
    static __device__ __forceinline__ W merge(W a, W b, const ga_reduce_args &) { return a + b; }
    static __device__ __forceinline__ void store(char *p, const ga_reduce_args &a, W v)
    {
        if constexpr (ga_same<W, double>) {
            if (a.mode & GA_RED_MEAN) v /= (double)a.n_red;
        }
        store_any(p, a.out_type, v);
    }
};

template <class W>
struct ProdOp {
    using State = W;
    using Acc = W;
    static __device__ __forceinline__ W one()
    {
        if constexpr (ga_same<W, ga_c128>) return ga_c128{1.0, 0.0};
        else return W(1);
    }
    static __device__ __forceinline__ W init() { return one(); }
    template <class T>
    static __device__ __forceinline__ void add(W &s, T x, int64_t, const ga_reduce_args &)
    {
        s = s * widen<W>(x);
    }
    static __device__ __forceinline__ W acc(W s) { return s; }
    static __device__ __forceinline__ W identity() { return one(); }
    static __device__ __forceinline__ W merge(W a, W b, const ga_reduce_args &) { return a * b; }
    static __device__ __forceinline__ void store(char *p, const ga_reduce_args &a, W v)
    {
        store_any(p, a.out_type, v);
    }
};

// min, max and ptp at once: the pair costs two compares an element, which
// a memory-bound loop hides, and saves a third of the instantiations.
template <class W>
struct MinMaxOp {
    struct Acc { W lo, hi; };
    using State = Acc;
    static __device__ __forceinline__ W pick_min(W a, W b)
    {
        if (is_nan(a)) return a;
        if (is_nan(b)) return b;
        return less(b, a) ? b : a;
    }
    static __device__ __forceinline__ W pick_max(W a, W b)
    {
        if (is_nan(a)) return a;
        if (is_nan(b)) return b;
        return less(a, b) ? b : a;
    }
    static __device__ __forceinline__ Acc identity()
    {
        if constexpr (ga_same<W, ga_c128>)
            return Acc{{INFINITY, INFINITY}, {-INFINITY, -INFINITY}};
        else if constexpr (ga_floating<W>)
            return Acc{INFINITY, -INFINITY};
        else if constexpr (ga_signed<W>)
            return Acc{INT64_MAX, INT64_MIN};
        else
            return Acc{UINT64_MAX, 0};
    }
    static __device__ __forceinline__ Acc init() { return identity(); }
    template <class T>
    static __device__ __forceinline__ void add(Acc &s, T x, int64_t, const ga_reduce_args &)
    {
        W w = widen<W>(x);
        s.lo = pick_min(s.lo, w);
        s.hi = pick_max(s.hi, w);
    }
    static __device__ __forceinline__ Acc acc(Acc s) { return s; }
    static __device__ __forceinline__ Acc merge(Acc a, Acc b, const ga_reduce_args &)
    {
        return Acc{pick_min(a.lo, b.lo), pick_max(a.hi, b.hi)};
    }
    static __device__ __forceinline__ void store(char *p, const ga_reduce_args &a, Acc v)
    {
        const int m = a.mode & 3;
        if (m == 0) {
            store_any(p, a.out_type, v.lo);
        } else if (m == 1) {
            store_any(p, a.out_type, v.hi);
        } else if constexpr (ga_integral<W>) {
            // wraps in the output type, as NumPy's subtract does
            store_any(p, a.out_type, (W)((uint64_t)v.hi - (uint64_t)v.lo));
        } else {
            store_any(p, a.out_type, v.hi - v.lo);
        }
    }
};

// argmin / argmax: (value, index).  Within a thread indices only grow, so a
// strict comparison keeps the first extremum; merges break ties by index.
// A NaN beats everything and the first NaN wins, as in NumPy.
template <class W>
struct ArgOp {
    struct Acc { W v; int64_t i; };
    using State = Acc;
    static __device__ __forceinline__ bool better(W x, W cur, int is_max)
    {
        if (is_nan(x)) return !is_nan(cur);
        return !is_nan(cur) && (is_max ? less(cur, x) : less(x, cur));
    }
    static __device__ __forceinline__ Acc identity() { return Acc{W{}, -1}; }
    static __device__ __forceinline__ Acc init() { return identity(); }
    template <class T>
    static __device__ __forceinline__ void add(Acc &s, T x, int64_t idx, const ga_reduce_args &a)
    {
        W w = widen<W>(x);
        if (s.i < 0 || better(w, s.v, a.mode & 1)) {
            s.v = w;
            s.i = idx;
        }
    }
    static __device__ __forceinline__ Acc acc(Acc s) { return s; }
    static __device__ __forceinline__ Acc merge(Acc x, Acc y, const ga_reduce_args &a)
    {
        if (x.i < 0) return y;
        if (y.i < 0) return x;
        if (y.i < x.i) {
            Acc t = x;
            x = y;
            y = t;
        }
        return better(y.v, x.v, a.mode & 1) ? y : x;
    }
    static __device__ __forceinline__ void store(char *p, const ga_reduce_args &a, Acc v)
    {
        store_any(p, a.out_type, v.i);
    }
};

// all / any / count_nonzero: a count of truthy elements (NaN is truthy).
struct CountOp {
    using State = int64_t;
    using Acc = int64_t;
    static __device__ __forceinline__ int64_t init() { return 0; }
    template <class T>
    static __device__ __forceinline__ void add(int64_t &s, T x, int64_t, const ga_reduce_args &)
    {
        s += ga_convert<bool>(x) ? 1 : 0;
    }
    static __device__ __forceinline__ int64_t acc(int64_t s) { return s; }
    static __device__ __forceinline__ int64_t identity() { return 0; }
    static __device__ __forceinline__ int64_t merge(int64_t a, int64_t b, const ga_reduce_args &)
    {
        return a + b;
    }
    static __device__ __forceinline__ void store(char *p, const ga_reduce_args &a, int64_t v)
    {
        if (a.mode == 0) store_any(p, a.out_type, v);
        else store_any(p, a.out_type, a.mode == 1 ? v != 0 : v == a.n_red);
    }
};

// mean / var / std in one pass.  Each thread sums deviations from a shift k
// (its first finite element): s1 = sum(x - k), s2 = sum(|x - k|^2), in
// double, which loses nothing to cancellation while k is within a few
// standard deviations of the mean.  Threads then merge (n, mean, M2) with
// Chan et al.'s formula.  Complex inputs carry a complex mean and a real M2
// (the variance of a complex array is that of its real and imaginary parts
// added), as NumPy defines it.
template <bool Cx>
struct MomentsOp {
    struct State { double kr, ki, s1r, s1i, s2; int64_t n; };
    struct Acc { double n, mr, mi, m2; };
    static __device__ __forceinline__ State init() { return State{0, 0, 0, 0, 0, 0}; }
    template <class T>
    static __device__ __forceinline__ void add(State &s, T x, int64_t, const ga_reduce_args &)
    {
        double xr, xi = 0.0;
        if constexpr (ga_is_complex<T>::value) {
            xr = (double)x.re;
            xi = (double)x.im;
        } else if constexpr (ga_is_half<T>) {
            xr = (double)__half2float(x);
        } else {
            xr = (double)x;
        }
        if (s.n == 0) {
            s.kr = isfinite(xr) ? xr : 0.0;
            if constexpr (Cx) s.ki = isfinite(xi) ? xi : 0.0;
        }
        double dr = xr - s.kr;
        s.s1r += dr;
        s.s2 = fma(dr, dr, s.s2);
        if constexpr (Cx) {
            double di = xi - s.ki;
            s.s1i += di;
            s.s2 = fma(di, di, s.s2);
        }
        s.n += 1;
    }
    static __device__ __forceinline__ Acc acc(State s)
    {
        if (s.n == 0) return Acc{0, 0, 0, 0};
        double n = (double)s.n;
        double m2 = s.s2 - s.s1r * (s.s1r / n);
        if constexpr (Cx) m2 -= s.s1i * (s.s1i / n);
        if (m2 < 0) m2 = 0;  // rounding; a NaN stays NaN
        return Acc{n, s.kr + s.s1r / n, Cx ? s.ki + s.s1i / n : 0.0, m2};
    }
    static __device__ __forceinline__ Acc identity() { return Acc{0, 0, 0, 0}; }
    static __device__ __forceinline__ Acc merge(Acc a, Acc b, const ga_reduce_args &)
    {
        if (a.n == 0) return b;
        if (b.n == 0) return a;
        double n = a.n + b.n, wa = a.n / n, wb = b.n / n;
        double dr = b.mr - a.mr, d2 = dr * dr;
        double mi = 0.0;
        if constexpr (Cx) {
            double di = b.mi - a.mi;
            d2 += di * di;
            mi = a.mi * wa + b.mi * wb;
        }
        // weighted means rather than a.m + d*wb: an infinite mean stays
        // infinite instead of becoming inf - inf
        return Acc{n, a.mr * wa + b.mr * wb, mi, a.m2 + b.m2 + d2 * (a.n * wb)};
    }
    static __device__ __forceinline__ void store(char *p, const ga_reduce_args &a, Acc v)
    {
        const int m = a.mode & 3;
        if (m == 0) {
            double mr = v.n > 0 ? v.mr : NAN, mi = v.n > 0 ? v.mi : NAN;
            if constexpr (Cx) store_any(p, a.out_type, ga_c128{mr, mi});
            else store_any(p, a.out_type, mr);
            return;
        }
        // NumPy's divisor: max(n - ddof, 0).  A non-finite mean makes every
        // deviation of an infinite element NaN in NumPy's two passes.
        double div = v.n - a.ddof;
        double var = v.m2 / (div > 0 ? div : 0.0);
        if (v.n == 0 || !isfinite(v.mr) || (Cx && !isfinite(v.mi))) var = NAN;
        store_any(p, a.out_type, m == 2 ? sqrt(var) : var);
    }
};

// ------------------------------------------------------------ nan* forms --
//
// mode | GA_RED_SKIPNAN, float and complex inputs only: the operations
// above with NaN elements left out, so folds, merges and the partial buffer
// serve unchanged (NumPy's nansum/nanprod replace NaN by the identity,
// nanmin/nanmax use fmin/fmax, nanmean/nanvar count the other elements).

template <class T> __device__ __forceinline__ bool elem_is_nan(T x)
{
    if constexpr (ga_is_half<T>) return __hisnan(x);
    else if constexpr (ga_is_complex<T>::value) return isnan(x.re) || isnan(x.im);
    else return isnan(x);
}

template <class Op>
struct SkipNan : Op {
    template <class T>
    static __device__ __forceinline__ void add(typename Op::State &s, T x, int64_t idx,
                                               const ga_reduce_args &a)
    {
        if (!elem_is_nan(x)) Op::add(s, x, idx, a);
    }
};

// nanmin / nanmax: a slice with nothing left keeps the identity, lo > hi,
// and gives NaN (the host then warns, as NumPy does).
template <class W>
struct NanMinMaxOp : SkipNan<MinMaxOp<W>> {
    using Acc = typename MinMaxOp<W>::Acc;
    static __device__ __forceinline__ void store(char *p, const ga_reduce_args &a, Acc v)
    {
        if (!less(v.hi, v.lo)) MinMaxOp<W>::store(p, a, v);
        else if constexpr (ga_same<W, ga_c128>) store_any(p, a.out_type, ga_c128{NAN, NAN});
        else store_any(p, a.out_type, (double)NAN);
    }
};

// nanvar / nanstd: NaN where count - ddof <= 0 (np.var divides by 0 there).
template <bool Cx>
struct NanMomentsOp : SkipNan<MomentsOp<Cx>> {
    using Acc = typename MomentsOp<Cx>::Acc;
    static __device__ __forceinline__ void store(char *p, const ga_reduce_args &a, Acc v)
    {
        if ((a.mode & 3) != 0 && v.n - a.ddof <= 0) store_any(p, a.out_type, (double)NAN);
        else MomentsOp<Cx>::store(p, a, v);
    }
};

// nanargmin / nanargmax: NumPy replaces NaN by +inf (argmin) or -inf
// (argmax) and raises for a slice that was all NaN, so NaNs take part as
// infinities (first index on ties) and `seen` tells whether any element
// was not NaN; without one the index stored is -1.
template <class W>
struct NanArgOp {
    using Base = ArgOp<W>;
    struct Acc { typename Base::Acc b; int64_t seen; };
    using State = Acc;
    static __device__ __forceinline__ Acc identity() { return Acc{Base::identity(), 0}; }
    static __device__ __forceinline__ Acc init() { return identity(); }
    template <class T>
    static __device__ __forceinline__ void add(Acc &s, T x, int64_t idx, const ga_reduce_args &a)
    {
        if (elem_is_nan(x)) {
            const double inf = (a.mode & 1) ? -INFINITY : INFINITY;
            if constexpr (ga_same<W, ga_c128>) Base::add(s.b, ga_c128{inf, 0.0}, idx, a);
            else Base::add(s.b, (W)inf, idx, a);
        } else {
            Base::add(s.b, x, idx, a);
            s.seen = 1;
        }
    }
    static __device__ __forceinline__ Acc acc(Acc s) { return s; }
    static __device__ __forceinline__ Acc merge(Acc x, Acc y, const ga_reduce_args &a)
    {
        return Acc{Base::merge(x.b, y.b, a), x.seen | y.seen};
    }
    static __device__ __forceinline__ void store(char *p, const ga_reduce_args &a, Acc v)
    {
        store_any(p, a.out_type, v.seen ? v.b.i : (int64_t)-1);
    }
};

// ---------------------------------------------------------- block merges --

// Shuffle any Acc (a whole number of 8-byte words) down by `delta` lanes
// within segments of `width` lanes.
template <class A>
__device__ __forceinline__ A shfl_down(const A &x, int delta, int width)
{
    static_assert(sizeof(A) % 8 == 0, "accumulators are made of 8-byte words");
    constexpr int N = sizeof(A) / 8;
    unsigned long long w[N];
    memcpy(w, &x, sizeof(A));
#pragma unroll
    for (int k = 0; k < N; ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], delta, width);
    A r;
    memcpy(&r, w, sizeof(A));
    return r;
}

// Merge the accumulators of the nv lanes of each output; the result is
// valid in lane v == 0.  `smem` holds GA_REDUCE_THREADS accumulators.
template <class Op>
__device__ __forceinline__ typename Op::Acc
block_merge(typename Op::Acc acc, int rows, int u, int v, int nu, int nv,
            typename Op::Acc *smem, const ga_reduce_args &a)
{
    if (rows) {
        // lanes of one output are consecutive threads: shuffles within
        // warps, then once more across the warps of the output
        const int width = nv < 32 ? nv : 32;
        for (int s = width / 2; s > 0; s >>= 1)
            acc = Op::merge(acc, shfl_down(acc, s, width), a);
        if (nv > 32) {
            const int nw = nv / 32;
            if ((v & 31) == 0) smem[u * nw + v / 32] = acc;
            __syncthreads();
            if (v < nw) acc = smem[u * nw + v];
            for (int s = nw / 2; s > 0; s >>= 1)
                acc = Op::merge(acc, shfl_down(acc, s, nw), a);
        }
    } else {
        // lanes of one output are nu threads apart: a tree in shared memory
        smem[v * nu + u] = acc;
        __syncthreads();
        for (int s = nv / 2; s > 0; s >>= 1) {
            if (v < s) {
                acc = Op::merge(acc, smem[(v + s) * nu + u], a);
                smem[v * nu + u] = acc;
            }
            __syncthreads();
        }
    }
    return acc;
}

// Steps 3-4 for every tile of outputs the block owns; `fold(o, lane,
// nlanes)` gives this thread's Acc for output o, and `store(p, acc)`
// writes a final value at p (Op::store, or a user reduction's post-map).
template <class Op, class Fold, class Store>
__device__ __forceinline__ void reduce_tiles(const ga_reduce_args &a, const ga_reduce_grid &g,
                                             bool final, Fold fold, Store store)
{
    using Acc = typename Op::Acc;
    __shared__ Acc smem[GA_REDUCE_THREADS];
    const int u = g.rows ? threadIdx.y : threadIdx.x;
    const int v = g.rows ? threadIdx.x : threadIdx.y;
    const int nu = g.rows ? blockDim.y : blockDim.x;
    const int nv = g.rows ? blockDim.x : blockDim.y;
    const int64_t lane = (int64_t)blockIdx.y * nv + v;
    const int64_t nlanes = (int64_t)gridDim.y * nv;
    for (int64_t tile = blockIdx.x; tile < g.tiles; tile += gridDim.x) {
        const int64_t o = tile * nu + u;
        Acc acc = o < a.n_out ? fold(o, lane, nlanes) : Op::identity();
        acc = block_merge<Op>(acc, g.rows, u, v, nu, nv, smem, a);
        if (v == 0 && o < a.n_out) {
            if (final)
                store(a.out + ga_offset(o, a.kept, a.kept_out), acc);
            else
                ((Acc *)a.partial)[blockIdx.y * a.n_out + o] = acc;
        }
        __syncthreads();
    }
}

// --------------------------------------------------------- thread folds --

template <class T, int V>
struct alignas(sizeof(T) * V) pack { T v[V]; };

// Fold p[i] for i = lane, lane + nlanes, ... < n (p contiguous) with
// add(st, x, i).  Whole 16-byte vectors are dealt to lanes, four at a time
// so four loads are in flight; the elements before the first 16-byte
// boundary and after the last whole vector are dealt one by one.  Each
// lane sees growing indices.
template <class State, class T, class Add>
__device__ __forceinline__ void fold_contiguous(State &st, const T *__restrict__ p, int64_t n,
                                                int64_t lane, int64_t nlanes, Add add)
{
    constexpr int V = sizeof(T) >= 16 ? 1 : 16 / (int)sizeof(T);
    if constexpr (V == 1) {
        // complex128 is only 8-byte aligned in general: element loads
        for (int64_t i = lane; i < n; i += nlanes) add(st, p[i], i);
        return;
    }
    int64_t head = (int64_t)(((16 - ((uintptr_t)p & 15)) & 15) / sizeof(T));
    if (head > n) head = n;
    for (int64_t i = lane; i < head; i += nlanes) add(st, p[i], i);
    const pack<T, V> *vp = (const pack<T, V> *)(p + head);
    const int64_t nvec = (n - head) / V;
    int64_t j = lane;
    for (; j + 3 * nlanes < nvec; j += 4 * nlanes) {
        pack<T, V> x[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) x[k] = vp[j + k * nlanes];
#pragma unroll
        for (int k = 0; k < 4; ++k)
#pragma unroll
            for (int e = 0; e < V; ++e)
                add(st, x[k].v[e], head + (j + k * nlanes) * V + e);
    }
    for (; j < nvec; j += nlanes) {
        pack<T, V> x = vp[j];
#pragma unroll
        for (int e = 0; e < V; ++e) add(st, x.v[e], head + j * V + e);
    }
    for (int64_t i = head + nvec * V + lane; i < n; i += nlanes) add(st, p[i], i);
}

// ---------------------------------------------------------------- kernels --

// Op::store as reduce_tiles' store.
template <class Op>
struct OpStore {
    const ga_reduce_args &a;
    __device__ __forceinline__ void operator()(char *p, const typename Op::Acc &v) const
    {
        Op::store(p, a, v);
    }
};

template <class Op, class T>
__global__ void __launch_bounds__(GA_REDUCE_THREADS)
k_reduce(GA_PARAM ga_reduce_args a)
{
    reduce_tiles<Op>(a, a.main, gridDim.y == 1, [&](int64_t o, int64_t lane, int64_t nlanes) {
        const char *base = a.in + ga_offset(o, a.kept, a.kept_in);
        typename Op::State st = Op::init();
        if (a.contiguous) {
            fold_contiguous(st, (const T *)base, a.n_red, lane, nlanes,
                            [&](typename Op::State &s, T x, int64_t i) { Op::add(s, x, i, a); });
        } else if (a.red.ndim == 1) {
            // unrolled so that several independent loads are in flight
            const int64_t s = a.red_in.s[0];
#pragma unroll 4
            for (int64_t i = lane; i < a.n_red; i += nlanes)
                Op::add(st, *(const T *)(base + i * s), i, a);
        } else {
            for (int64_t i = lane; i < a.n_red; i += nlanes)
                Op::add(st, *(const T *)(base + ga_offset(i, a.red, a.red_in)), i, a);
        }
        return Op::acc(st);
    }, OpStore<Op>{a});
}

// Combine the `splits` partial accumulators of each output.
template <class Op>
__global__ void __launch_bounds__(GA_REDUCE_THREADS)
k_reduce_finish(GA_PARAM ga_reduce_args a)
{
    using Acc = typename Op::Acc;
    reduce_tiles<Op>(a, a.finish, true, [&](int64_t o, int64_t lane, int64_t nlanes) {
        const Acc *part = (const Acc *)a.partial;
        Acc acc = Op::identity();
        for (int64_t s = lane; s < a.splits; s += nlanes) acc = Op::merge(acc, part[s * a.n_out + o], a);
        return acc;
    }, OpStore<Op>{a});
}

// --------------------------------------------------------------- launchers --
#ifndef __CUDACC_RTC__

template <class Op, class T>
cudaError_t launch(const ga_reduce_args &a, cudaStream_t stream)
{
    static_assert(sizeof(typename Op::Acc) <= GA_REDUCE_ACC_BYTES, "partial buffer too small");
    dim3 grid((unsigned)a.main.grid_x, (unsigned)a.splits);
    k_reduce<Op, T><<<grid, dim3(a.main.bx, a.main.by), 0, stream>>>(a);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || a.splits <= 1) return err;
    k_reduce_finish<Op><<<a.finish.grid_x, dim3(a.finish.bx, a.finish.by), 0, stream>>>(a);
    return cudaGetLastError();
}

// Op over an integer or bool input (bool reads as uint8); other types are
// the caller's.  The reductions' dispatch stays a switch, not ga_visit_type:
// each case maps several dtypes onto one instantiation and its accumulator
// (a table per family in reduce_*.cu), which a visitor over every dtype
// would instantiate once per dtype.
template <class Op>
cudaError_t launch_integer(const ga_reduce_args &a, cudaStream_t s)
{
    switch (a.in_type) {
    case GA_BOOL:
    case GA_UINT8: return launch<Op, uint8_t>(a, s);
    case GA_INT8: return launch<Op, int8_t>(a, s);
    case GA_INT16: return launch<Op, int16_t>(a, s);
    case GA_UINT16: return launch<Op, uint16_t>(a, s);
    case GA_INT32: return launch<Op, int32_t>(a, s);
    case GA_UINT32: return launch<Op, uint32_t>(a, s);
    case GA_INT64: return launch<Op, int64_t>(a, s);
    case GA_UINT64: return launch<Op, uint64_t>(a, s);
    default: return cudaErrorInvalidValue;
    }
}

// Per-family launchers (reduce_*.cu), dispatched by ga_launch_reduce.
cudaError_t launch_sum_prod(const ga_reduce_args &a, cudaStream_t stream);
cudaError_t launch_minmax_arg(const ga_reduce_args &a, cudaStream_t stream);
cudaError_t launch_count_moments(const ga_reduce_args &a, cudaStream_t stream);
cudaError_t launch_nan(const ga_reduce_args &a, cudaStream_t stream);
#endif

} // namespace ga_red

#endif
