// scan.cu -- inclusive scans along the middle axis of a C-contiguous
// (outer, n, inner) array: cumsum and cumprod (NumPy's add.accumulate /
// multiply.accumulate along any axis, the host having collapsed the axes
// before and after it).
//
// Reduce-then-scan, both layouts:
//
//   1. each scanned line is cut into chunks; each chunk is folded to a
//      total (k_scan_total, k_col_total);
//   2. the totals, laid out (outer, chunks, inner) in the temporary buffer,
//      are scanned the same way in place (recursively, a level per factor
//      of the chunk length);
//   3. each chunk is scanned again, starting from the scanned total of the
//      chunks before it (k_scan, k_col_scan).
//
// Lines of at most one chunk skip steps 1-2.  Rows (inner == 1): a warp per
// chunk of GA_SCAN_CHUNK elements walks tiles of 32 x ITEMS; each lane scans
// its ITEMS consecutive elements in registers, the lanes' totals are
// scanned with shuffles, and a running carry joins the tiles.  Columns
// (inner > 1): a thread per (chunk of COL_CHUNK, column), consecutive
// threads on consecutive columns so that every step of their sequential
// walk is one coalesced access.  Two reads and one write per element for
// long lines, one read and one write for short ones; the order of the
// additions differs from NumPy's sequential loop, so float results agree to
// rounding, not bit for bit.
//
// Types are keyed by what the operation needs: integers by size (two's
// complement addition and multiplication wrap the same whatever the sign),
// bool as a byte (add is logical or, multiply logical and, as NumPy's bool
// loops), float16 computed in float and rounded at every step as NumPy's
// half loops, float, double and both complex types.
#include "kernel_common.cuh"

namespace {

constexpr int ITEMS = 8;
constexpr int TILE = 32 * ITEMS;
constexpr int WARPS = 8;  // per block
constexpr int COL_CHUNK = 32;  // elements one thread walks down a column

// ------------------------------------------------------------ operations --

template <class T> struct Add {
    static __device__ __forceinline__ T id() { return T(0); }
    static __device__ __forceinline__ T op(T a, T b) { return (T)(a + b); }
};
template <class T> struct Mul {
    static __device__ __forceinline__ T id() { return T(1); }
    // products of narrow unsigned types in 32 bits: no promotion to int
    static __device__ __forceinline__ T op(T a, T b)
    {
        if constexpr (sizeof(T) < 4) return (T)((uint32_t)a * (uint32_t)b);
        else return a * b;
    }
};
struct BoolOr {  // bool + bool
    static __device__ __forceinline__ uint8_t id() { return 0; }
    static __device__ __forceinline__ uint8_t op(uint8_t a, uint8_t b) { return a | b; }
};
struct BoolAnd {  // bool * bool
    static __device__ __forceinline__ uint8_t id() { return 1; }
    static __device__ __forceinline__ uint8_t op(uint8_t a, uint8_t b) { return a & b; }
};
struct HalfAdd {
    static __device__ __forceinline__ __half id() { return __float2half(0.0f); }
    static __device__ __forceinline__ __half op(__half a, __half b)
    {
        return __float2half(__half2float(a) + __half2float(b));
    }
};
struct HalfMul {
    static __device__ __forceinline__ __half id() { return __float2half(1.0f); }
    static __device__ __forceinline__ __half op(__half a, __half b)
    {
        return __float2half(__half2float(a) * __half2float(b));
    }
};
template <class C> struct CxAdd {
    static __device__ __forceinline__ C id() { return C{0, 0}; }
    static __device__ __forceinline__ C op(C a, C b) { return C{a.re + b.re, a.im + b.im}; }
};
template <class C> struct CxMul {
    static __device__ __forceinline__ C id() { return C{1, 0}; }
    static __device__ __forceinline__ C op(C a, C b)
    {
        return C{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    }
};

// ---------------------------------------------------------------- warps --

// Shuffles of any element type, as 32-bit words.
template <class T>
__device__ __forceinline__ T shfl_up(T x, int d)
{
    constexpr int N = (sizeof(T) + 3) / 4;
    unsigned w[N] = {};
    memcpy(w, &x, sizeof(T));
#pragma unroll
    for (int k = 0; k < N; ++k) w[k] = __shfl_up_sync(0xffffffffu, w[k], d);
    T r;
    memcpy(&r, w, sizeof(T));
    return r;
}

template <class T>
__device__ __forceinline__ T shfl_idx(T x, int src)
{
    constexpr int N = (sizeof(T) + 3) / 4;
    unsigned w[N] = {};
    memcpy(w, &x, sizeof(T));
#pragma unroll
    for (int k = 0; k < N; ++k) w[k] = __shfl_sync(0xffffffffu, w[k], src);
    T r;
    memcpy(&r, w, sizeof(T));
    return r;
}

// Inclusive scan of one value per lane.
template <class Op, class T>
__device__ __forceinline__ T warp_scan(T x, int lane)
{
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        T y = shfl_up(x, d);
        if (lane >= d) x = Op::op(y, x);
    }
    return x;
}

// ---------------------------------------------------------------- kernels --

// Warp task w: row w / nc, chunk w % nc, elements [c * chunk, ...) of the
// row, at most `chunk` of them.
struct Task {
    int64_t row, c, begin, len;
};

__device__ __forceinline__ Task task_of(int64_t w, int64_t n, int64_t nc, int64_t chunk)
{
    Task t;
    t.row = w / nc;
    t.c = w - t.row * nc;
    t.begin = t.c * chunk;
    t.len = n - t.begin < chunk ? n - t.begin : chunk;
    return t;
}

// tot[w] = fold of warp task w's chunk.
template <class Op, class T>
__global__ void __launch_bounds__(32 * WARPS)
k_scan_total(const T *__restrict__ in, T *__restrict__ tot, int64_t rows, int64_t n, int64_t nc,
             int64_t chunk)
{
    const int lane = threadIdx.x & 31;
    const int64_t nwarps = (int64_t)gridDim.x * WARPS;
    for (int64_t w = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32; w < rows * nc; w += nwarps) {
        const Task t = task_of(w, n, nc, chunk);
        const T *p = in + t.row * n + t.begin;
        T acc = Op::id();
        for (int64_t i = lane; i < t.len; i += 32) acc = Op::op(acc, p[i]);
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) {
            T y = shfl_idx(acc, (lane + d) & 31);
            acc = Op::op(acc, y);
        }
        if (lane == 0) tot[w] = acc;
    }
}

// out = inclusive scan of in along each chunk, starting from the scanned
// totals of the chunks before (carry[w - 1] within the row) when carry is
// given.  in may be out.
template <class Op, class T>
__global__ void __launch_bounds__(32 * WARPS)
k_scan(const T *in, T *out, const T *__restrict__ carry, int64_t rows, int64_t n, int64_t nc,
       int64_t chunk)
{
    const int lane = threadIdx.x & 31;
    const int64_t nwarps = (int64_t)gridDim.x * WARPS;
    for (int64_t w = (int64_t)blockIdx.x * WARPS + threadIdx.x / 32; w < rows * nc; w += nwarps) {
        const Task t = task_of(w, n, nc, chunk);
        const T *p = in + t.row * n + t.begin;
        T *q = out + t.row * n + t.begin;
        T run = carry != nullptr && t.c > 0 ? carry[w - 1] : Op::id();
        for (int64_t t0 = 0; t0 < t.len; t0 += TILE) {
            const int64_t i0 = t0 + (int64_t)lane * ITEMS;
            T v[ITEMS];
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) v[k] = i0 + k < t.len ? p[i0 + k] : Op::id();
#pragma unroll
            for (int k = 1; k < ITEMS; ++k) v[k] = Op::op(v[k - 1], v[k]);
            const T incl = warp_scan<Op>(v[ITEMS - 1], lane);
            T before = shfl_up(incl, 1);
            before = lane == 0 ? run : Op::op(run, before);
#pragma unroll
            for (int k = 0; k < ITEMS; ++k)
                if (i0 + k < t.len) q[i0 + k] = Op::op(before, v[k]);
            run = Op::op(run, shfl_idx(incl, 31));
        }
    }
}

// Columns: thread task t = ((o * nc) + c) * inner + j walks chunk c of the
// line (o, :, j), elements (o, c * COL_CHUNK + i, j).
template <class Op, class T>
__global__ void __launch_bounds__(256)
k_col_total(const T *__restrict__ in, T *__restrict__ tot, int64_t outer, int64_t n,
            int64_t inner, int64_t nc)
{
    const int64_t tasks = outer * nc * inner;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < tasks;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t j = t % inner, oc = t / inner, o = oc / nc, c = oc - o * nc;
        const int64_t i0 = c * COL_CHUNK, i1 = n < i0 + COL_CHUNK ? n : i0 + COL_CHUNK;
        const T *p = in + (o * n + i0) * inner + j;
        T acc = Op::id();
        for (int64_t i = i0; i < i1; ++i, p += inner) acc = Op::op(acc, *p);
        tot[t] = acc;
    }
}

// carry: the scanned totals (outer, nc, inner), or null for one chunk.
template <class Op, class T>
__global__ void __launch_bounds__(256)
k_col_scan(const T *in, T *out, const T *__restrict__ carry, int64_t outer, int64_t n,
           int64_t inner, int64_t nc)
{
    const int64_t tasks = outer * nc * inner;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < tasks;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t j = t % inner, oc = t / inner, o = oc / nc, c = oc - o * nc;
        const int64_t i0 = c * COL_CHUNK, i1 = n < i0 + COL_CHUNK ? n : i0 + COL_CHUNK;
        const int64_t off = (o * n + i0) * inner + j;
        T run = carry != nullptr && c > 0 ? carry[t - inner] : Op::id();
        for (int64_t i = i0, k = 0; i < i1; ++i, k += inner) {
            run = Op::op(run, in[off + k]);
            out[off + k] = run;
        }
    }
}

// --------------------------------------------------------------- launchers --

int64_t blocks_for(int64_t warps)
{
    int64_t b = (warps + WARPS - 1) / WARPS;
    return b < ((int64_t)1 << 30) ? b : ((int64_t)1 << 30);
}

size_t align16(size_t b) { return (b + 15) & ~(size_t)15; }

int64_t col_blocks(int64_t tasks)
{
    int64_t b = (tasks + 255) / 256;
    return b < ((int64_t)1 << 30) ? b : ((int64_t)1 << 30);
}

template <class Op, class T>
cudaError_t scan_cols(const T *in, T *out, int64_t outer, int64_t n, int64_t inner, char *tmp,
                      cudaStream_t s)
{
    if (n <= COL_CHUNK) {
        k_col_scan<Op, T><<<(unsigned)col_blocks(outer * inner), 256, 0, s>>>(in, out, nullptr,
                                                                             outer, n, inner, 1);
        return cudaGetLastError();
    }
    const int64_t nc = (n + COL_CHUNK - 1) / COL_CHUNK;
    T *tot = (T *)tmp;
    const unsigned blocks = (unsigned)col_blocks(outer * nc * inner);
    k_col_total<Op, T><<<blocks, 256, 0, s>>>(in, tot, outer, n, inner, nc);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    err = scan_cols<Op, T>(tot, tot, outer, nc, inner,
                           tmp + align16((size_t)(outer * nc * inner) * sizeof(T)), s);
    if (err != cudaSuccess) return err;
    k_col_scan<Op, T><<<blocks, 256, 0, s>>>(in, out, tot, outer, n, inner, nc);
    return cudaGetLastError();
}

template <class Op, class T>
cudaError_t scan_rows(const T *in, T *out, int64_t rows, int64_t n, char *tmp, cudaStream_t s)
{
    if (n <= GA_SCAN_CHUNK) {
        k_scan<Op, T><<<(unsigned)blocks_for(rows), 32 * WARPS, 0, s>>>(in, out, nullptr, rows, n,
                                                                         1, n);
        return cudaGetLastError();
    }
    const int64_t nc = (n + GA_SCAN_CHUNK - 1) / GA_SCAN_CHUNK;
    T *tot = (T *)tmp;
    const unsigned blocks = (unsigned)blocks_for(rows * nc);
    k_scan_total<Op, T><<<blocks, 32 * WARPS, 0, s>>>(in, tot, rows, n, nc, GA_SCAN_CHUNK);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    err = scan_rows<Op, T>(tot, tot, rows, nc, tmp + align16((size_t)(rows * nc) * sizeof(T)), s);
    if (err != cudaSuccess) return err;
    k_scan<Op, T><<<blocks, 32 * WARPS, 0, s>>>(in, out, tot, rows, n, nc, GA_SCAN_CHUNK);
    return cudaGetLastError();
}

// One (outer, n, inner) scan of element type T: rows or columns.
template <class Op, class T>
cudaError_t scan_any(const char *in, char *out, int64_t outer, int64_t n, int64_t inner,
                     char *tmp, cudaStream_t s)
{
    if (inner == 1) return scan_rows<Op>((const T *)in, (T *)out, outer, n, tmp, s);
    return scan_cols<Op>((const T *)in, (T *)out, outer, n, inner, tmp, s);
}

// The operation of each element type: bool as or / and of uint8, integers
// in the unsigned type of their width (wrapping, the same bits whatever the
// sign), float16 and complex with their own arithmetic.
struct ScanLaunch {
    bool add; const char *in; char *out; int64_t outer, n, inner; char *tmp; cudaStream_t s;
    template <class A, class M, class T> cudaError_t run()
    {
        return add ? scan_any<A, T>(in, out, outer, n, inner, tmp, s)
                   : scan_any<M, T>(in, out, outer, n, inner, tmp, s);
    }
    template <class T> cudaError_t operator()()
    {
        if constexpr (ga_same<T, bool>)
            return run<BoolOr, BoolAnd, uint8_t>();
        else if constexpr (ga_is_half<T>)
            return run<HalfAdd, HalfMul, __half>();
        else if constexpr (ga_is_complex<T>::value)
            return run<CxAdd<T>, CxMul<T>, T>();
        else if constexpr (ga_integral<T>)
            return run<Add<ga_unsigned<T>>, Mul<ga_unsigned<T>>, ga_unsigned<T>>();
        else
            return run<Add<T>, Mul<T>, T>();
    }
};

} // namespace

// ============================== launchers ==================================

extern "C" size_t ga_scan_tmp_bytes(int itemsize, int64_t outer, int64_t n, int64_t inner)
{
    const int64_t chunk = inner == 1 ? GA_SCAN_CHUNK : COL_CHUNK;
    size_t bytes = 0;
    while (n > chunk) {
        n = (n + chunk - 1) / chunk;
        bytes += align16((size_t)(outer * n * inner) * (size_t)itemsize);
    }
    return bytes;
}

extern "C" cudaError_t ga_launch_scan(ga_type type, int op, const char *in, char *out,
                                      int64_t outer, int64_t n, int64_t inner, void *tmp,
                                      cudaStream_t stream)
{
    if (outer == 0 || n == 0 || inner == 0) return cudaSuccess;
    return ga_visit_type(type, ScanLaunch{op == GA_SCAN_ADD, in, out, outer, n, inner,
                                          (char *)tmp, stream});
}
