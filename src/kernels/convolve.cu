// convolve.cu -- direct correlation: np.convolve / np.correlate,
// scipy.signal's convolutions and scipy.ndimage's linear filters.
//
// Every linear filter in gpuarr is one correlation, per axis
//     out[p] = sum over q < k of  w[q] * X[p + q + off]
// with X the input extended past its edges (ga_ext_mode); a convolution is
// the same sum with the taps read last to first.  Three kernels cover
// every shape once the host (src/convolve.c) has merged the axes that pass
// through unfiltered:
//
// * line: filtering along the contiguous axis (np.convolve, the last axis
//   of a separable filter).  A stretch of a line is staged in shared
//   memory, extended at load time; each thread then slides a window of
//   GA_CONV_LINE_C registers along it, so every staged value is read once
//   per thread and feeds C outputs.  Thread t owns outputs t*C .. t*C+C-1;
//   one pad word after every C staged values turns that stride-C pattern
//   into distinct banks.  Results go back through shared memory so the
//   stores are 16-byte and contiguous.  Filters up to 64 taps: each warp
//   stages its own tiles (no block barrier), the next one's copies in
//   flight while it computes the current one; longer filters: block tiles,
//   the taps staged in chunks.  Memory bound by design.
// * cols: one filtered axis between unfiltered ones (every pass of a
//   separable filter but the last-axis one: gaussian_filter, uniform_filter,
//   correlate1d along an outer axis).  A thread owns 16 bytes of adjacent
//   columns (4 floats, 2 doubles; 1 element when the columns or pointers do
//   not allow it) and slides the register window down them for a run of
//   outputs, reading global memory directly: a warp reads 512 contiguous
//   bytes of a row, and the k - 1 rows that neighbouring windows share come
//   from L1/L2.  Runs are long (the host plans ~2^18 threads), so halo
//   rows between runs cost little DRAM traffic.  Memory bound by design.
// * tile: filtering 2-D planes (the last two merged axes; leading axes,
//   filtered or not, are looped inside the kernel): signal.convolve2d,
//   ndimage.correlate/convolve in 2-D and 3-D.  A block stages an input
//   tile with its halo, extended at load time (cp.async copies, so a
//   thread waits for memory once, not once a value: 153 -> 121 us for
//   2048^2 x 15x15 float64), so the inner loop has no
//   bounds checks; each thread slides a window of GA_CONV_TILE_R (16)
//   registers down one column, so each shared-memory load feeds up to 16
//   multiply-adds and a warp reads 32 consecutive words (no conflicts).
//   The taps of the staged chunk sit in shared memory column by column and
//   are read as 16-byte broadcasts.  With R = 8 a float64 warp needed ~52
//   shared-memory wavefronts per 60 cycles of FP64 work, so both pipes
//   were saturated (149 us for 2048^2 x 15x15, 2.6x the FP64 floor); R = 16
//   halves the loads per multiply-add, leaving the FP64 units the limit
//   (2048^2 x 15x15 in float64 is ~57 us of the H100's FP64 rate).
// * sep: a 2-d filter that is an outer product u v^T (a Gaussian), found
//   so on the device, runs as a horizontal and a vertical pass over one
//   staged tile, kh + kw multiply-adds an output (see its section): 2048^2
//   x 15x15 float64 in 64 us, all launches included, against 121 us.
//
// The taps stay in device memory: they are a device array, so staging them
// in __constant__ would cost a copy per call, and one constant bank shared
// by every stream would let concurrent launches overwrite each other's taps.
//
// The per-thread work of each phase is a __host__ __device__ function, so
// src/kernels/dev/convolve_emu.cu runs the same code block by block on the
// CPU against a naive reference.
#include <cstring>

#include <cuda_pipeline_primitives.h>

#include "kernel_common.cuh"
#include "extend.cuh"

// ============================== element math ===============================

__host__ __device__ __forceinline__ void cv_mac(float &a, float w, float x) { a += w * x; }
__host__ __device__ __forceinline__ void cv_mac(double &a, double w, double x) { a += w * x; }
__host__ __device__ __forceinline__ void cv_mac(int64_t &a, int64_t w, int64_t x)
{
    a = (int64_t)((uint64_t)a + (uint64_t)w * (uint64_t)x);   // wraps, as NumPy's loops
}
template <class C>
__host__ __device__ __forceinline__ void cv_mac_c(C &a, C w, C x)
{
    a.re += w.re * x.re - w.im * x.im;
    a.im += w.re * x.im + w.im * x.re;
}
__host__ __device__ __forceinline__ void cv_mac(ga_c64 &a, ga_c64 w, ga_c64 x) { cv_mac_c(a, w, x); }
__host__ __device__ __forceinline__ void cv_mac(ga_c128 &a, ga_c128 w, ga_c128 x) { cv_mac_c(a, w, x); }

template <class T> __host__ __device__ __forceinline__ T cv_zero() { return T{}; }

template <class T> __host__ __device__ __forceinline__ T cv_conj(T v)
{
    if constexpr (ga_is_complex<T>::value) v.im = -v.im;
    return v;
}

// v / d for floating types (uniform filters divide the sum by the size).
template <class T> __host__ __device__ __forceinline__ T cv_divide(T v, double d)
{
    if constexpr (std::is_same<T, float>::value) return v / (float)d;
    else if constexpr (std::is_same<T, double>::value) return v / d;
    else return v;
}

// Taps are read by every thread of a block at once: the read-only path.
template <class T> __host__ __device__ __forceinline__ T cv_ldg(const T *p)
{
#ifdef __CUDA_ARCH__
    if constexpr (std::is_same<T, ga_c64>::value) {
        float2 v = __ldg(reinterpret_cast<const float2 *>(p));
        return T{v.x, v.y};
    } else if constexpr (std::is_same<T, ga_c128>::value) {
        double2 v = __ldg(reinterpret_cast<const double2 *>(p));
        return T{v.x, v.y};
    } else if constexpr (std::is_same<T, int64_t>::value) {
        return (int64_t)__ldg(reinterpret_cast<const long long *>(p));
    } else {
        return __ldg(p);
    }
#else
    return *p;
#endif
}

// *dst (shared memory) = *src (global memory), asynchronously on the device:
// cp.async takes the value to shared memory without a register, so a thread
// issues all its copies before waiting once (cv_async_commit closes the
// thread's group of copies, cv_async_wait<n> waits until at most n groups
// are in flight).  A plain copy on the host (the emulation harness).
template <class T>
__host__ __device__ __forceinline__ void cv_async_copy(T *dst, const T *src)
{
#ifdef __CUDA_ARCH__
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "cp.async sizes");
    __pipeline_memcpy_async(dst, src, sizeof(T));
#else
    *dst = *src;
#endif
}

__device__ __forceinline__ void cv_async_commit() { __pipeline_commit(); }

template <int N>
__device__ __forceinline__ void cv_async_wait() { __pipeline_wait_prior(N); }

// V values of T from 16 aligned bytes (V = 16 / sizeof(T)).
template <class T, int V>
__host__ __device__ __forceinline__ void cv_load16(const T *p, T (&v)[V])
{
    static_assert(V * sizeof(T) == 16, "one 16-byte access");
#ifdef __CUDA_ARCH__
    uint4 u = __ldg(reinterpret_cast<const uint4 *>(p));
    memcpy(v, &u, 16);
#else
    memcpy(v, p, 16);
#endif
}

template <class T, int V>
__host__ __device__ __forceinline__ void cv_store16(T *p, const T (&v)[V])
{
    static_assert(V * sizeof(T) == 16, "one 16-byte access");
#ifdef __CUDA_ARCH__
    uint4 u;
    memcpy(&u, v, 16);
    *reinterpret_cast<uint4 *>(p) = u;
#else
    memcpy(p, v, 16);
#endif
}

// Elements [0, len) of a stretch of global memory split for 16-byte
// accesses: a head up to src's first 16-byte boundary, `nvec` groups of
// V = 16 / sizeof(T) elements, and a tail.  Types of 16 bytes or more
// (complex128) are all head.
template <class T>
struct CvSplit {
    static constexpr int V = sizeof(T) < 16 ? (int)(16 / sizeof(T)) : 1;
    int head, nvec;

    __host__ __device__ __forceinline__ CvSplit(const T *src, int len)
    {
        if (V == 1) {
            head = len;
            nvec = 0;
            return;
        }
        head = (int)(((16 - (uintptr_t)src % 16) % 16) / sizeof(T));
        if (head > len) head = len;
        nvec = (len - head) / V;
    }
};

// ============================== sliding window =============================
//
// acc[c] += sum over j < k of tap[j] * in[c + j], c < C, for a source whose
// in[g*C + s] is src.ld(g, s) (s < 2C - 1 a compile-time constant, so the
// source can fold its address arithmetic) and whose taps come C at a time:
// src.taps(g, t) fills t[m] = tap[g*C + m]; src.taps_tail(g, t, n) the first
// n of them.  Value in[i] lives in win[i % C]: every index below is a
// compile-time constant once the loops unroll, so the window stays in
// registers and sliding it costs one load per tap, no moves.

template <int C, class T, class Src>
__host__ __device__ __forceinline__ void cv_window(T (&acc)[C], int k, const Src &src)
{
    T win[C];
#pragma unroll
    for (int s = 0; s < C - 1; ++s)
        win[s] = src.ld(0, s);
    int g = 0;
    for (; (g + 1) * C <= k; ++g) {
        T t[C];
        src.taps(g, t);
#pragma unroll
        for (int m = 0; m < C; ++m) {
            win[(m + C - 1) % C] = src.ld(g, m + C - 1);
#pragma unroll
            for (int c = 0; c < C; ++c)
                cv_mac(acc[c], t[m], win[(m + c) % C]);
        }
    }
    const int rest = k - g * C;
    if (rest > 0) {
        T t[C];
        src.taps_tail(g, t, rest);
#pragma unroll
        for (int m = 0; m < C - 1; ++m) {
            if (m < rest) {
                win[(m + C - 1) % C] = src.ld(g, m + C - 1);
#pragma unroll
                for (int c = 0; c < C; ++c)
                    cv_mac(acc[c], t[m], win[(m + c) % C]);
            }
        }
    }
}

// ============================== line kernel ================================

constexpr int LC = GA_CONV_LINE_C;

// Staged element e of a slot lives at e + e / LC.
__host__ __device__ __forceinline__ int64_t line_phys(int64_t e) { return e + e / LC; }

// Taps [k0, k0 + n) of a line launch, with its flip and conjugation.
template <class T>
struct LineTaps {
    const T *w;
    int64_t k;      // all taps
    int flags;

    __host__ __device__ __forceinline__ T at(int64_t j) const
    {
        T v = cv_ldg(w + ((flags & GA_CONV_FLIP) ? k - 1 - j : j));
        return (flags & GA_CONV_CONJ_TAPS) ? cv_conj(v) : v;
    }
};

template <class T>
struct LineSrc {
    const T *slot;      // the thread's first staged value: slot + tx * (LC + 1)
    LineTaps<T> taps_;
    int64_t k0;         // first tap of the chunk

    __host__ __device__ __forceinline__ T ld(int g, int s) const
    {
        return slot[g * (LC + 1) + s + s / LC];
    }
    __host__ __device__ __forceinline__ void taps(int g, T (&t)[LC]) const
    {
#pragma unroll
        for (int m = 0; m < LC; ++m)
            t[m] = taps_.at(k0 + g * LC + m);
    }
    __host__ __device__ __forceinline__ void taps_tail(int g, T (&t)[LC], int n) const
    {
#pragma unroll
        for (int m = 0; m < LC; ++m)
            t[m] = m < n ? taps_.at(k0 + g * LC + m) : cv_zero<T>();
    }
};

// Fill phase: the slot of line `row` gets X[base + e] for e < len, thread
// tx of bx taking every bx-th element.  Lines past the last are zeroed.
// Async: inside the line, cp.async copies (the caller commits and waits);
// else 16-byte loads through registers.
template <bool Async = false, class T>
__host__ __device__ __forceinline__ void line_fill(const ga_conv_line &p, const T *x, T *slot,
                                                   int64_t row, int64_t base, int len, int tx)
{
    const T cval = *reinterpret_cast<const T *>(&p.cval);
    if (row >= p.rows) {
        for (int e = tx; e < len; e += p.bx)
            slot[line_phys(e)] = cv_zero<T>();
        return;
    }
    const T *xr = x + row * p.ax.n_in;
    if (Async && base >= 0 && base + len <= p.ax.n_in) {
        const T *src = xr + base;
#pragma unroll 4
        for (int e = tx; e < len; e += p.bx)
            cv_async_copy(&slot[line_phys(e)], &src[e]);
    } else if (base >= 0 && base + len <= p.ax.n_in) {
        // 16 bytes a load where the stretch allows: a warp reads 512
        // contiguous bytes per instruction.
        const T *src = xr + base;
        const CvSplit<T> sp(src, len);
        constexpr int V = CvSplit<T>::V;
        for (int e = tx; e < sp.head; e += p.bx)
            slot[line_phys(e)] = src[e];
        if constexpr (V > 1) {
#pragma unroll 4
            for (int q = tx; q < sp.nvec; q += p.bx) {
                const int e = sp.head + q * V;
                T v[V];
                cv_load16(src + e, v);
#pragma unroll
                for (int m = 0; m < V; ++m)
                    slot[line_phys(e + m)] = v[m];
            }
        }
        for (int e = sp.head + sp.nvec * V + tx; e < len; e += p.bx)
            slot[line_phys(e)] = src[e];
    } else {
        for (int e = tx; e < len; e += p.bx) {
            int64_t m = ga_ext_index<int64_t>(base + e, p.ax.n_in, p.mode);
            slot[line_phys(e)] = m < 0 ? cval : xr[m];
        }
    }
}

// Accumulate phase: thread tx adds taps [k0, k0 + kc) to its LC outputs.
template <class T>
__host__ __device__ __forceinline__ void line_accumulate(const ga_conv_line &p, const T *w,
                                                         const T *slot, int tx, int64_t k0,
                                                         int kc, T (&acc)[LC])
{
    LineSrc<T> src{slot + tx * (LC + 1), LineTaps<T>{w, p.ax.k, p.flags}, k0};
    cv_window<LC>(acc, kc, src);
}

// Stage phase: the thread's outputs into the slot (over the input).
template <class T>
__host__ __device__ __forceinline__ void line_stage(const ga_conv_line &p, T *slot, int tx,
                                                    const T (&acc)[LC])
{
#pragma unroll
    for (int c = 0; c < LC; ++c) {
        T v = (p.flags & GA_CONV_CONJ_OUT) ? cv_conj(acc[c]) : acc[c];
        if (p.divisor != 0.0) v = cv_divide(v, p.divisor);
        slot[tx * (LC + 1) + c] = v;
    }
}

// Store phase: outputs i0 .. i0 + bx*LC of line `row`, coalesced.
template <class T>
__host__ __device__ __forceinline__ void line_store(const ga_conv_line &p, T *out, const T *slot,
                                                    int64_t row, int64_t i0, int tx)
{
    if (row >= p.rows) return;
    const int64_t n = p.ax.n_out;
    T *orow = out + row * n;
    const int len = (int)((int64_t)p.bx * LC < n - i0 ? (int64_t)p.bx * LC : n - i0);
    if (p.flags & GA_CONV_REVERSE_OUT) {
        for (int e = tx; e < len; e += p.bx)
            orow[n - 1 - (i0 + e)] = slot[line_phys(e)];
        return;
    }
    T *dst = orow + i0;
    const CvSplit<T> sp(dst, len);
    constexpr int V = CvSplit<T>::V;
    for (int e = tx; e < sp.head; e += p.bx)
        dst[e] = slot[line_phys(e)];
    if constexpr (V > 1) {
        for (int q = tx; q < sp.nvec; q += p.bx) {
            const int e = sp.head + q * V;
            T v[V];
#pragma unroll
            for (int m = 0; m < V; ++m)
                v[m] = slot[line_phys(e + m)];
            cv_store16(dst + e, v);
        }
    }
    for (int e = sp.head + sp.nvec * V + tx; e < len; e += p.bx)
        dst[e] = slot[line_phys(e)];
}

// Which line group and tile a block works on.
__host__ __device__ __forceinline__ void line_block(const ga_conv_line &p, int64_t b,
                                                    int64_t *tile, int64_t *group)
{
    int64_t tilew = (int64_t)p.bx * LC;
    int64_t ntiles = (p.ax.n_out + tilew - 1) / tilew;
    *tile = b % ntiles;
    *group = b / ntiles;
}

template <class T>
__global__ void __launch_bounds__(256) k_conv_line(const ga_conv_line p, const T *__restrict__ x,
                                                   const T *__restrict__ w, T *__restrict__ out)
{
    extern __shared__ __align__(16) unsigned char cv_smem[];
    // Slots as ga_conv_line_slot sizes them: room for bx*LC + kchunk - 1 values.
    T *slot = reinterpret_cast<T *>(cv_smem) +
              threadIdx.y * (line_phys((int64_t)p.bx * LC + p.kchunk - 2) + 1);
    int64_t tile, group;
    line_block(p, blockIdx.x, &tile, &group);
    const int64_t row = group * p.by + threadIdx.y;
    const int64_t i0 = tile * p.bx * LC;
    const int tx = threadIdx.x;
    T acc[LC];
#pragma unroll
    for (int c = 0; c < LC; ++c) acc[c] = cv_zero<T>();
    for (int64_t k0 = 0; k0 < p.ax.k; k0 += p.kchunk) {
        const int kc = (int)min((int64_t)p.kchunk, p.ax.k - k0);
        if (k0 > 0) __syncthreads();
        line_fill(p, x, slot, row, i0 + p.ax.off + k0, p.bx * LC + kc - 1, tx);
        __syncthreads();
        line_accumulate(p, w, slot, tx, k0, kc, acc);
    }
    __syncthreads();
    line_stage(p, slot, tx, acc);
    __syncthreads();
    line_store(p, out, slot, row, i0, tx);
}

// Warp variant (p.warp = tiles a warp): the staged kernel's phases with
// each warp a "block" of bx 32, by 1 on its own slots, separated by
// __syncwarp: no block barrier, so a warp waiting for its loads never holds
// up the others, and its outputs leave as 16-byte stores of contiguous
// stretches.  A warp takes tiles b, b + stride, ... (up to p.warp of them)
// with two slots: the cp.async copies of the next tile are in flight while
// it computes and stores the current one.  For np.convolve of 4.2M float64
// by 15 taps: 32.4 us with 4 tiles a warp, 34.9 with one, against 39.5 for
// the block-staged kernel and 53.3 for a variant reading windows straight
// from global memory, each thread storing its 8 outputs itself (8-byte
// stores 64 bytes apart: removed); the device copy of the same bytes takes
// 27.4 us (src/kernels/dev/convolve_bench.cu).
template <class T>
__global__ void __launch_bounds__(32 * GA_CONV_LINE_WARPS) k_conv_line_warp(
    const ga_conv_line p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out)
{
    // cp.async for 8-byte elements; 4-byte ones take 16-byte loads through
    // registers (a 4-byte cp.async a value is slower than those: 933 against
    // 545 us for gaussian_filter's last-axis pass of 100x1024x1024 float32),
    // so for them the next tile's loads are not in flight behind the
    // current one.
    constexpr bool Async = sizeof(T) == 8;
    extern __shared__ __align__(16) unsigned char cv_smem[];
    const int lane = threadIdx.x % 32, wib = threadIdx.x / 32;
    // Two slots a warp, each as ga_conv_line_slot(32, kchunk) sizes it.
    const int slot_len = (int)line_phys(32 * LC + p.kchunk - 2) + 1;
    T *slots = reinterpret_cast<T *>(cv_smem) + 2 * wib * slot_len;
    const int64_t total = (p.ax.n_out + 32 * LC - 1) / (32 * LC) * p.rows;   // tiles
    const int64_t stride = (int64_t)gridDim.x * GA_CONV_LINE_WARPS;
    const int len = 32 * LC + p.kchunk - 1;
    int64_t b = (int64_t)blockIdx.x * GA_CONV_LINE_WARPS + wib;
    if (b >= total) return;         // the whole warp
    int64_t tile, row;
    line_block(p, b, &tile, &row);
    line_fill<Async>(p, x, slots, row, tile * 32 * LC + p.ax.off, len, lane);
    cv_async_commit();
    for (int cur = 0;; cur ^= 1) {
        T *slot = slots + cur * slot_len;
        const int64_t next = b + stride;
        int64_t ntile, nrow;
        if (next < total) {
            line_block(p, next, &ntile, &nrow);
            line_fill<Async>(p, x, slots + (cur ^ 1) * slot_len, nrow,
                             ntile * 32 * LC + p.ax.off, len, lane);
        }
        cv_async_commit();
        cv_async_wait<1>();         // this tile's copies have landed
        __syncwarp();
        T acc[LC];
#pragma unroll
        for (int c = 0; c < LC; ++c) acc[c] = cv_zero<T>();
        line_accumulate(p, w, slot, lane, 0, p.kchunk, acc);
        __syncwarp();
        line_stage(p, slot, lane, acc);
        __syncwarp();
        line_store(p, out, slot, row, tile * 32 * LC, lane);
        __syncwarp();               // the slot is filled again two tiles on
        if (next >= total) break;
        b = next;
        tile = ntile;
        row = nrow;
    }
}

// ============================== tile kernel ================================

constexpr int TBX = GA_CONV_TILE_BX, TBY = GA_CONV_TILE_BY, TR = GA_CONV_TILE_R;
constexpr int TH = TBY * TR;

// Shared-memory layout of a tile launch (see ga_conv_tile_smem): `rows` x
// `pitch` staged inputs, then from `taps_at` the chunk's taps column by
// column, `kcol` per column.
struct TileGeom {
    int pitch, rows, kcol;
    int64_t taps_at;
    int64_t ntaps;      // taps of every axis, outer ones included
};

__host__ __device__ __forceinline__ TileGeom tile_geom(const ga_conv_tile &p)
{
    TileGeom g;
    g.pitch = TBX + p.kw_chunk - 1;
    g.rows = TH + p.kh_chunk - 1;
    g.kcol = (p.kh_chunk + TR - 1) / TR * TR;
    g.taps_at = ((int64_t)g.rows * g.pitch + 3) / 4 * 4;    // 16-byte aligned
    g.ntaps = p.h.k * p.w.k;
    for (int d = 0; d < p.nouter; ++d)
        g.ntaps *= p.outer[d].k;
    return g;
}

// Block b's tile: first column, first row and outer output position.
__host__ __device__ __forceinline__ void tile_block(const ga_conv_tile &p, int64_t b,
                                                    int64_t *c0, int64_t *r0, int64_t *po)
{
    int64_t ntw = (p.w.n_out + TBX - 1) / TBX, nth = (p.h.n_out + TH - 1) / TH;
    *c0 = (b % ntw) * TBX;
    b /= ntw;
    *r0 = (b % nth) * TH;
    *po = b / nth;
}

// Offset (in elements) of the input plane that outer output position po
// reads for outer tap o, or -1 when that plane lies in the constant.
__host__ __device__ __forceinline__ int64_t tile_plane(const ga_conv_tile &p, int64_t po, int64_t o)
{
    int64_t off = 0, stride = p.h.n_in * p.w.n_in;
    for (int d = p.nouter - 1; d >= 0; --d) {
        const ga_conv_axis &a = p.outer[d];
        int64_t g = ga_ext_index<int64_t>(po % a.n_out + o % a.k + a.off, a.n_in, p.mode);
        if (g < 0) return -1;
        off += g * stride;
        stride *= a.n_in;
        po /= a.n_out;
        o /= a.k;
    }
    return off;
}

// Staging: rows r < nrows, columns c < ncols of `tile` (row pitch `pitch`,
// column c at col(c)) hold X[row0 + r, col0 + c] of the plane (NULL: all
// constant), thread (tx, ty) of a BX x BY block taking every BY-th row and
// BX-th column, so a warp reads contiguous stretches of a row.  The values
// come by cp.async: a thread issues every copy of its share at once (one
// round trip to memory, not one a value); the caller commits and waits
// before its barrier.
struct TileCols {
    __host__ __device__ __forceinline__ int operator()(int c) const { return c; }
};

template <int BX, int BY, class T, class Col>
__host__ __device__ __forceinline__ void stage_plane(const ga_conv_tile &p, const T *plane, T *tile,
                                                     int pitch, Col col, int row0, int col0,
                                                     int nrows, int ncols, int tx, int ty)
{
    const T cval = *reinterpret_cast<const T *>(&p.cval);
    const int h = (int)p.h.n_in, w = (int)p.w.n_in;
    const bool inside = col0 >= 0 && col0 + ncols <= w;
    for (int r = ty; r < nrows; r += BY) {
        int gr = plane ? ga_ext_index<int>(row0 + r, h, p.mode) : -1;
        T *dst = tile + r * pitch;
        if (gr < 0) {
            for (int c = tx; c < ncols; c += BX) dst[col(c)] = cval;
        } else if (inside) {
            const T *src = plane + (int64_t)gr * w + col0;
            for (int c = tx; c < ncols; c += BX) cv_async_copy(&dst[col(c)], &src[c]);
        } else {
            const T *src = plane + (int64_t)gr * w;
            for (int c = tx; c < ncols; c += BX) {
                int gc = ga_ext_index<int>(col0 + c, w, p.mode);
                if (gc < 0) dst[col(c)] = cval;
                else cv_async_copy(&dst[col(c)], &src[gc]);
            }
        }
    }
}

// Fill phase of the tile kernel, thread (tx, ty).
template <class T>
__host__ __device__ __forceinline__ void tile_fill(const ga_conv_tile &p, const TileGeom &g,
                                                   const T *plane, T *tile, int row0, int col0,
                                                   int nrows, int ncols, int tx, int ty)
{
    stage_plane<TBX, TBY>(p, plane, tile, g.pitch, TileCols{}, row0, col0, nrows, ncols, tx, ty);
}

// Fill phase, thread `tid`: taps (i, j), i < kh, j < kw of the chunk whose
// first tap has flat index tap0 (flipped for a convolution), at
// taps[j * kcol + i].
template <class T>
__host__ __device__ __forceinline__ void tile_fill_taps(const ga_conv_tile &p, const TileGeom &g,
                                                        const T *w, T *taps, int64_t tap0,
                                                        int kh, int kw, int tid)
{
    for (int e = tid; e < kh * kw; e += TBX * TBY) {
        int i = e / kw, j = e - (e / kw) * kw;
        int64_t idx = tap0 + (int64_t)i * p.w.k + j;
        if (p.flags & GA_CONV_FLIP) idx = g.ntaps - 1 - idx;
        taps[j * g.kcol + i] = cv_ldg(w + idx);
    }
}

// R taps as 16-byte broadcast loads from shared memory (16-byte aligned,
// padded to a multiple of R taps).
template <int R, class T>
__host__ __device__ __forceinline__ void cv_taps16(const T *t0, T (&t)[R])
{
    constexpr int per = 16 / sizeof(T);
    static_assert(R % per == 0, "taps are read 16 bytes at a time");
    const uint4 *v = reinterpret_cast<const uint4 *>(t0);
#pragma unroll
    for (int q = 0; q < R / per; ++q) {
        uint4 u = v[q];
        memcpy(&t[q * per], &u, 16);
    }
}

// A window sliding down a staged column, R outputs, taps staged per column.
template <class T, int R = TR>
struct TileSrc {
    const T *col;       // the thread's column at its first row
    int pitch;
    const T *tcol;      // the staged taps of the column

    __host__ __device__ __forceinline__ T ld(int g, int s) const
    {
        return col[(g * R + s) * pitch];
    }
    __host__ __device__ __forceinline__ void taps(int g, T (&t)[R]) const
    {
        cv_taps16<R>(tcol + g * R, t);
    }
    __host__ __device__ __forceinline__ void taps_tail(int g, T (&t)[R], int) const
    {
        taps(g, t);     // the pad past the column's last tap is never used
    }
};

// Accumulate phase: the staged kh x kw taps into the thread's TR outputs.
template <class T>
__host__ __device__ __forceinline__ void tile_accumulate(const TileGeom &g, const T *tile,
                                                         const T *taps, int kh, int kw, int tx,
                                                         int ty, T (&acc)[TR])
{
    const T *col = tile + ty * TR * g.pitch + tx;
    for (int j = 0; j < kw; ++j) {
        TileSrc<T> src{col + j, g.pitch, taps + j * g.kcol};
        cv_window<TR>(acc, kh, src);
    }
}

// Store phase: the thread's TR outputs, column c0 + tx, rows r0 + ty*TR...
template <class T>
__host__ __device__ __forceinline__ void tile_store(const ga_conv_tile &p, T *out, int64_t po,
                                                    int64_t r0, int64_t c0, int tx, int ty,
                                                    const T (&acc)[TR])
{
    const int64_t c = c0 + tx;
    if (c >= p.w.n_out) return;
    T *o = out + po * p.h.n_out * p.w.n_out + c;
#pragma unroll
    for (int rr = 0; rr < TR; ++rr) {
        int64_t r = r0 + ty * TR + rr;
        if (r < p.h.n_out)
            o[r * p.w.n_out] = p.divisor != 0.0 ? cv_divide(acc[rr], p.divisor) : acc[rr];
    }
}

// Four blocks an SM (up to 128 registers: TR accumulators, the TR-value
// window and TR taps): one block's fill is covered by the others' compute.
template <class T>
__global__ void __launch_bounds__(TBX * TBY, 4) k_conv_tile(const ga_conv_tile p,
                                                         const T *__restrict__ x,
                                                         const T *__restrict__ w,
                                                         T *__restrict__ out)
{
    if (p.sep != nullptr && *static_cast<const T *>(p.sep) != T(0))
        return;     // separable: k_conv_sep computes this launch
    extern __shared__ __align__(16) unsigned char cv_smem[];
    const TileGeom g = tile_geom(p);
    T *tile = reinterpret_cast<T *>(cv_smem);
    T *taps = tile + g.taps_at;
    int64_t c0, r0, po;
    tile_block(p, blockIdx.x, &c0, &r0, &po);
    const int tx = threadIdx.x, ty = threadIdx.y;
    T acc[TR];
#pragma unroll
    for (int r = 0; r < TR; ++r) acc[r] = cv_zero<T>();
    const int64_t plane_taps = p.h.k * p.w.k;
    bool first = true;
    for (int64_t o = 0; o < g.ntaps / plane_taps; ++o) {
        const int64_t plane = tile_plane(p, po, o);
        const T *pl = plane < 0 ? nullptr : x + plane;
        for (int64_t i0 = 0; i0 < p.h.k; i0 += p.kh_chunk) {
            const int kh = (int)min((int64_t)p.kh_chunk, p.h.k - i0);
            for (int64_t j0 = 0; j0 < p.w.k; j0 += p.kw_chunk) {
                const int kw = (int)min((int64_t)p.kw_chunk, p.w.k - j0);
                if (!first) __syncthreads();
                first = false;
                tile_fill(p, g, pl, tile, (int)(r0 + p.h.off + i0), (int)(c0 + p.w.off + j0),
                          TH + kh - 1, TBX + kw - 1, tx, ty);
                tile_fill_taps(p, g, w, taps, o * plane_taps + i0 * p.w.k + j0, kh, kw,
                               ty * TBX + tx);
                cv_async_commit();
                cv_async_wait<0>();
                __syncthreads();
                tile_accumulate(g, tile, taps, kh, kw, tx, ty, acc);
            }
        }
    }
    tile_store(p, out, po, r0, c0, tx, ty, acc);
}

// ============================== separable kernel ===========================
//
// A 2-d filter that is an outer product, w[i][j] = u[i] v[j], costs kh + kw
// multiply-adds an output instead of kh * kw: for 15x15 that turns the
// FP64-bound tile kernel into a memory-bound one.  Whether the taps factor
// is decided on the device, so no copy of the filter reaches the host:
//
// * k_conv_factor (one block) takes the pivot (p, q), the largest |w|, and
//   u[i] = w[i][q], v[j] = w[p][j] / w[p][q]; the flag is set when every
//   |w[i][j] - u[i] v[j]| <= SEP_TOL * |w[p][q]| and every tap is finite.
//   SEP_TOL (16 ulp of the type) is far above the rounding of a product of
//   two vectors or a Gaussian made by exp (about 1 ulp measured), and far
//   below any filter that is not one, so the result differs from the
//   direct sum by no more than that sum's own rounding.
// * k_conv_sep: a block stages its input tile once (extended, as the tile
//   kernel), each half-warp then runs a row of it through v, SC outputs a
//   lane sliding a register window (one pad word after every SC staged
//   values keeps the 16 lanes on distinct banks), and writes the row's
//   sums over its first SBX values; each thread then slides a window of SR
//   registers down one column of those sums through u and stores SR
//   outputs, a warp writing 32 consecutive outputs of a row.
// * k_conv_tile, launched after both, returns at once when the flag is set;
//   k_conv_sep returns at once when it is not.

constexpr int SBX = 64;     // output columns of a separable block
constexpr int SC = 4;       // outputs a lane of the horizontal pass: 16 lanes a row
constexpr double SEP_ULPS = 16;

__host__ __device__ __forceinline__ int sep_phys(int c) { return c + c / SC; }

// Shared-memory layout of a separable block of TH = SR * SBY rows: u
// (padded to a multiple of SR taps), v (padded to a multiple of SC), then
// the tile of nr x nc staged values, row pitch `pitch`, column c at
// sep_phys(c).
struct SepGeom {
    int nr, nc, pitch, ku, kv;
    int tile_at;
};

template <int SR, int SBY>
__host__ __device__ __forceinline__ SepGeom sep_geom(const ga_conv_tile &p)
{
    SepGeom g;
    g.nr = SR * SBY + (int)p.h.k - 1;
    g.nc = SBX + (int)p.w.k - 1;
    g.pitch = sep_phys(g.nc - 1) + 1;
    g.ku = ((int)p.h.k + SR - 1) / SR * SR;
    g.kv = ((int)p.w.k + SC - 1) / SC * SC;
    g.tile_at = g.ku + g.kv;
    return g;
}

template <int SR, int SBY>
__host__ __device__ __forceinline__ int64_t sep_smem(const ga_conv_tile &p)
{
    const SepGeom g = sep_geom<SR, SBY>(p);
    return g.tile_at + (int64_t)g.nr * g.pitch;
}

// Tap t of the correlation's (kh, kw) filter, flat index e (reversed for a
// convolution).
template <class T>
__host__ __device__ __forceinline__ T sep_tap(const T *w, int64_t n, int flags, int64_t e)
{
    return w[(flags & GA_CONV_FLIP) ? n - 1 - e : e];
}

// The factor block, thread tid of nt: fac = (flag, u[kh], v[kw]).  Phases
// between barriers: sep_pivot_local (then a block argmax), sep_check_local
// (then a block AND), sep_write.
template <class T>
__host__ __device__ __forceinline__ void sep_pivot_local(const ga_conv_tile &p, const T *w,
                                                         int tid, int nt, double *best,
                                                         int64_t *at, bool *finite)
{
    const int64_t n = p.h.k * p.w.k;
    *best = -1.0;
    *at = 0;
    *finite = true;
    for (int64_t e = tid; e < n; e += nt) {
        const double a = fabs((double)sep_tap(w, n, p.flags, e));
        if (!(a <= 1.7976931348623157e308)) *finite = false;    // inf or nan
        else if (a > *best) { *best = a; *at = e; }
    }
}

template <class T>
__host__ __device__ __forceinline__ bool sep_check_local(const ga_conv_tile &p, const T *w,
                                                         int64_t pivot, int tid, int nt)
{
    const int64_t n = p.h.k * p.w.k, kw = p.w.k;
    const int64_t pr = pivot / kw, pc = pivot % kw;
    const T g = sep_tap(w, n, p.flags, pivot);
    const double tol = SEP_ULPS * (sizeof(T) == 4 ? 1.1920928955078125e-07 : 2.220446049250313e-16) *
                       fabs((double)g);
    bool ok = true;
    for (int64_t e = tid; e < n; e += nt) {
        const int64_t i = e / kw, j = e % kw;
        const T u = sep_tap(w, n, p.flags, i * kw + pc);
        const T v = sep_tap(w, n, p.flags, pr * kw + j) / g;
        if (!(fabs((double)sep_tap(w, n, p.flags, e) - (double)u * (double)v) <= tol))
            ok = false;
    }
    return ok;
}

template <class T>
__host__ __device__ __forceinline__ void sep_write(const ga_conv_tile &p, const T *w,
                                                   int64_t pivot, bool ok, T *fac, int tid, int nt)
{
    const int64_t n = p.h.k * p.w.k, kh = p.h.k, kw = p.w.k;
    const int64_t pr = pivot / kw, pc = pivot % kw;
    const T g = sep_tap(w, n, p.flags, pivot);
    for (int64_t e = tid; e < kh + kw; e += nt)
        fac[1 + e] = e < kh ? sep_tap(w, n, p.flags, e * kw + pc)
                            : ok ? sep_tap(w, n, p.flags, pr * kw + (e - kh)) / g : T(0);
    if (tid == 0) fac[0] = ok ? T(1) : T(0);
}

template <class T>
__global__ void __launch_bounds__(256) k_conv_factor(const ga_conv_tile p, const T *__restrict__ w,
                                                     T *__restrict__ fac)
{
    __shared__ double s_best[256];
    __shared__ int64_t s_at[256];
    const int tid = threadIdx.x;
    double best;
    int64_t at;
    bool finite;
    sep_pivot_local(p, w, tid, 256, &best, &at, &finite);
    s_best[tid] = best;
    s_at[tid] = at;
    finite = __syncthreads_and(finite);
    for (int half = 128; half > 0; half /= 2) {
        if (tid < half) {
            const double b = s_best[tid + half];
            const int64_t a = s_at[tid + half];
            if (b > s_best[tid] || (b == s_best[tid] && a < s_at[tid])) {
                s_best[tid] = b;
                s_at[tid] = a;
            }
        }
        __syncthreads();
    }
    const int64_t pivot = s_at[0];
    const bool usable = finite && s_best[0] > 0.0;
    const bool ok = __syncthreads_and(usable && sep_check_local(p, w, pivot, tid, 256));
    sep_write(p, w, pivot, ok, fac, tid, 256);
}

// The horizontal pass's window: a lane's SC outputs of a staged row.
template <class T>
struct SepRowSrc {
    const T *in;        // the row at sep_phys(SC * group)
    const T *v;         // the v taps, 16-byte aligned, padded to SC

    __host__ __device__ __forceinline__ T ld(int g, int s) const
    {
        return in[(SC + 1) * g + s + s / SC];
    }
    __host__ __device__ __forceinline__ void taps(int g, T (&t)[SC]) const
    {
        cv_taps16<SC>(v + g * SC, t);
    }
    __host__ __device__ __forceinline__ void taps_tail(int g, T (&t)[SC], int) const
    {
        taps(g, t);
    }
};

// Block b's tile: first output column and row.
template <int SR, int SBY>
__host__ __device__ __forceinline__ void sep_block(const ga_conv_tile &p, int64_t b, int64_t *c0,
                                                   int64_t *r0)
{
    const int64_t ntw = (p.w.n_out + SBX - 1) / SBX;
    *c0 = (b % ntw) * SBX;
    *r0 = (b / ntw) * (SR * SBY);
}

template <int SR, int SBY>
__host__ __device__ __forceinline__ int64_t sep_blocks(const ga_conv_tile &p)
{
    return ((p.w.n_out + SBX - 1) / SBX) * ((p.h.n_out + SR * SBY - 1) / (SR * SBY));
}

// Fill phase, thread (tx, ty): the taps from fac, the input tile.
template <int SR, int SBY, class T>
__host__ __device__ __forceinline__ void sep_fill(const ga_conv_tile &p, const SepGeom &g,
                                                  const T *x, const T *fac, T *smem, int64_t r0,
                                                  int64_t c0, int tx, int ty)
{
    const int tid = ty * SBX + tx;
    for (int e = tid; e < g.ku + g.kv; e += SBX * SBY) {
        T t = T(0);
        if (e < g.ku) { if (e < p.h.k) t = fac[1 + e]; }
        else if (e - g.ku < p.w.k) t = fac[1 + p.h.k + (e - g.ku)];
        smem[e] = t;
    }
    struct Phys {
        __host__ __device__ __forceinline__ int operator()(int c) const { return sep_phys(c); }
    };
    stage_plane<SBX, SBY>(p, x, smem + g.tile_at, g.pitch, Phys{}, (int)(r0 + p.h.off),
                          (int)(c0 + p.w.off), g.nr, g.nc, tx, ty);
}

// Horizontal pass of staged row r, lane `grp` of its half-warp: SC sums
// (read phase; the write phase stores them once the half-warp has read).
template <class T>
__host__ __device__ __forceinline__ void sep_row_sums(const ga_conv_tile &p, const SepGeom &g,
                                                      const T *smem, int r, int grp, T (&acc)[SC])
{
#pragma unroll
    for (int c = 0; c < SC; ++c) acc[c] = cv_zero<T>();
    SepRowSrc<T> src{smem + g.tile_at + r * g.pitch + sep_phys(SC * grp), smem + g.ku};
    cv_window<SC>(acc, (int)p.w.k, src);
}

template <class T>
__host__ __device__ __forceinline__ void sep_row_write(const SepGeom &g, T *smem, int r, int grp,
                                                       const T (&acc)[SC])
{
#pragma unroll
    for (int c = 0; c < SC; ++c) smem[g.tile_at + r * g.pitch + SC * grp + c] = acc[c];
}

// Vertical pass and store, thread (tx, ty): SR outputs of column c0 + tx.
template <int SR, class T>
__host__ __device__ __forceinline__ void sep_columns(const ga_conv_tile &p, const SepGeom &g,
                                                     const T *smem, T *out, int64_t r0, int64_t c0,
                                                     int tx, int ty)
{
    T acc[SR];
#pragma unroll
    for (int r = 0; r < SR; ++r) acc[r] = cv_zero<T>();
    TileSrc<T, SR> src{smem + g.tile_at + ty * SR * g.pitch + tx, g.pitch, smem};
    cv_window<SR>(acc, (int)p.h.k, src);
    const int64_t c = c0 + tx;
    if (c >= p.w.n_out) return;
#pragma unroll
    for (int rr = 0; rr < SR; ++rr) {
        const int64_t r = r0 + ty * SR + rr;
        if (r < p.h.n_out)
            out[r * p.w.n_out + c] = p.divisor != 0.0 ? cv_divide(acc[rr], p.divisor) : acc[rr];
    }
}

template <class T, int SR, int SBY>
__global__ void __launch_bounds__(SBX * SBY) k_conv_sep(const ga_conv_tile p,
                                                       const T *__restrict__ x,
                                                       const T *__restrict__ fac,
                                                       T *__restrict__ out)
{
    if (fac[0] == T(0))
        return;     // not separable: k_conv_tile computes this launch
    extern __shared__ __align__(16) unsigned char cv_smem[];
    T *smem = reinterpret_cast<T *>(cv_smem);
    const SepGeom g = sep_geom<SR, SBY>(p);
    int64_t c0, r0;
    sep_block<SR, SBY>(p, blockIdx.x, &c0, &r0);
    const int tx = threadIdx.x, ty = threadIdx.y;
    sep_fill<SR, SBY>(p, g, x, fac, smem, r0, c0, tx, ty);
    cv_async_commit();
    cv_async_wait<0>();
    __syncthreads();
    // Rows two a warp at a time, one per half-warp.
    const int warp = (ty * SBX + tx) / 32, lane = tx % 32;
    const int nwarps = SBX * SBY / 32;
    for (int r = 2 * warp + lane / 16; r - lane / 16 < g.nr; r += 2 * nwarps) {
        T acc[SC];
        if (r < g.nr) sep_row_sums(p, g, smem, r, lane % 16, acc);
        __syncwarp();
        if (r < g.nr) sep_row_write(g, smem, r, lane % 16, acc);
    }
    __syncthreads();
    sep_columns<SR>(p, g, smem, out, r0, c0, tx, ty);
}

// ============================== column kernel ==============================

constexpr int CC = GA_CONV_COLS_C, CBX = GA_CONV_COLS_BX;

// V adjacent columns of one row, as one 16-byte access when V > 1.
template <class T, int V>
struct alignas(sizeof(T) * V) cv_vec {
    T v[V];
};
template <class T, int V>
__host__ __device__ __forceinline__ void cv_mac(cv_vec<T, V> &a, cv_vec<T, V> w, cv_vec<T, V> x)
{
#pragma unroll
    for (int i = 0; i < V; ++i) cv_mac(a.v[i], w.v[i], x.v[i]);
}
template <class T, int V>
__host__ __device__ __forceinline__ cv_vec<T, V> cv_splat(T s)
{
    cv_vec<T, V> r;
#pragma unroll
    for (int i = 0; i < V; ++i) r.v[i] = s;
    return r;
}

// The window source of a column thread: rows row0 + g*C + s of its V
// columns, read straight from global memory (neighbouring windows overlap
// by k - 1 rows: those reads hit L1/L2).  Inside: every row of the group
// lies in [0, n_in), so no extension is looked up.
template <class T, int V, bool Inside>
struct ColSrc {
    const T *col;       // the thread's first column in its input plane
    int64_t pitch, row0, n_in;
    int mode;
    T cval;
    const T *w;
    int64_t k;
    int flags;

    __host__ __device__ __forceinline__ cv_vec<T, V> ld(int g, int s) const
    {
        const int64_t r = row0 + g * CC + s;
        if constexpr (Inside) {
            return *reinterpret_cast<const cv_vec<T, V> *>(col + r * pitch);
        } else {
            const int64_t m = ga_ext_index<int64_t>(r, n_in, mode);
            if (m < 0) return cv_splat<T, V>(cval);
            return *reinterpret_cast<const cv_vec<T, V> *>(col + m * pitch);
        }
    }
    __host__ __device__ __forceinline__ cv_vec<T, V> tap(int64_t j) const
    {
        return cv_splat<T, V>(cv_ldg(w + ((flags & GA_CONV_FLIP) ? k - 1 - j : j)));
    }
    __host__ __device__ __forceinline__ void taps(int g, cv_vec<T, V> (&t)[CC]) const
    {
#pragma unroll
        for (int m = 0; m < CC; ++m) t[m] = tap((int64_t)g * CC + m);
    }
    __host__ __device__ __forceinline__ void taps_tail(int g, cv_vec<T, V> (&t)[CC], int n) const
    {
#pragma unroll
        for (int m = 0; m < CC; ++m) t[m] = m < n ? tap((int64_t)g * CC + m) : cv_vec<T, V>{};
    }
};

// Which plane, run and column block a block works on: runs vary fastest,
// so blocks running together share the rows where their runs meet.
__host__ __device__ __forceinline__ void cols_block(const ga_conv_cols &p, int64_t b, int vec,
                                                    int64_t *po, int64_t *i0, int64_t *c0)
{
    const int64_t nruns = (p.h.n_out + p.run - 1) / p.run;
    const int64_t span = (int64_t)CBX * vec;
    const int64_t ncb = (p.cols + span - 1) / span;
    *i0 = (b % nruns) * p.run;
    b /= nruns;
    *c0 = (b % ncb) * span;
    *po = b / ncb;
}

// Thread tx of a block at (po, i0, c0): outputs i0 .. i0 + run - 1 of its
// V columns, CC at a time.
template <class T, int V>
__host__ __device__ __forceinline__ void cols_thread(const ga_conv_cols &p, const T *x,
                                                     const T *w, T *out, int64_t po, int64_t i0,
                                                     int64_t c0, int tx)
{
    const int64_t c = c0 + (int64_t)tx * V;
    if (c >= p.cols) return;
    const T *col = x + po * p.h.n_in * p.cols + c;
    T *ocol = out + po * p.h.n_out * p.cols + c;
    const T cval = *reinterpret_cast<const T *>(&p.cval);
    const int64_t end = i0 + p.run < p.h.n_out ? i0 + p.run : p.h.n_out;
    for (int64_t i = i0; i < end; i += CC) {
        cv_vec<T, V> acc[CC];
#pragma unroll
        for (int r = 0; r < CC; ++r) acc[r] = cv_vec<T, V>{};
        const int64_t row0 = i + p.h.off;
        if (row0 >= 0 && row0 + CC + p.h.k - 1 <= p.h.n_in) {
            ColSrc<T, V, true> src{col, p.cols, row0, p.h.n_in, p.mode, cval, w, p.h.k, p.flags};
            cv_window<CC>(acc, (int)p.h.k, src);
        } else {
            ColSrc<T, V, false> src{col, p.cols, row0, p.h.n_in, p.mode, cval, w, p.h.k, p.flags};
            cv_window<CC>(acc, (int)p.h.k, src);
        }
#pragma unroll
        for (int r = 0; r < CC; ++r) {
            if (i + r < end) {
                cv_vec<T, V> v = acc[r];
                if (p.divisor != 0.0) {
#pragma unroll
                    for (int e = 0; e < V; ++e) v.v[e] = cv_divide(v.v[e], p.divisor);
                }
                *reinterpret_cast<cv_vec<T, V> *>(ocol + (i + r) * p.cols) = v;
            }
        }
    }
}

// One instantiation per type: the 16-byte and the scalar paths are chosen
// per launch (p.vec), uniformly for the whole grid.
template <class T>
__global__ void __launch_bounds__(CBX) k_conv_cols(const ga_conv_cols p, const T *__restrict__ x,
                                                   const T *__restrict__ w, T *__restrict__ out)
{
    constexpr int V = 16 / sizeof(T);
    int64_t po, i0, c0;
    if (p.vec == V) {
        cols_block(p, blockIdx.x, V, &po, &i0, &c0);
        cols_thread<T, V>(p, x, w, out, po, i0, c0, threadIdx.x);
    } else {
        cols_block(p, blockIdx.x, 1, &po, &i0, &c0);
        cols_thread<T, 1>(p, x, w, out, po, i0, c0, threadIdx.x);
    }
}

// ============================== launchers ==================================

namespace {

// Launches keep to the 48 KiB of shared memory every block may use
// without an opt-in; the host sizes chunks accordingly.
constexpr size_t CV_SMEM_MAX = 48 * 1024;

template <class T>
cudaError_t launch_line(const ga_conv_line *p, const char *x, const char *w, char *out,
                        cudaStream_t stream)
{
    int64_t blocks = ga_conv_line_blocks(p);
    size_t smem = (size_t)ga_conv_line_smem(p) * sizeof(T);
    if (blocks == 0) return cudaSuccess;
    if (p->warp) {
        const int64_t per_block = (int64_t)GA_CONV_LINE_WARPS * p->warp;
        blocks = (blocks + per_block - 1) / per_block;
        smem *= 2 * GA_CONV_LINE_WARPS;
        if (blocks > INT32_MAX || smem > CV_SMEM_MAX || p->bx != 32 || p->by != 1 ||
            p->kchunk != p->ax.k)
            return cudaErrorInvalidConfiguration;
        k_conv_line_warp<T><<<(unsigned)blocks, 32 * GA_CONV_LINE_WARPS, smem, stream>>>(
            *p, (const T *)x, (const T *)w, (T *)out);
        return cudaGetLastError();
    }
    if (blocks > INT32_MAX || smem > CV_SMEM_MAX || p->bx * p->by > 256)
        return cudaErrorInvalidConfiguration;
    k_conv_line<T><<<(unsigned)blocks, dim3(p->bx, p->by), smem, stream>>>(
        *p, (const T *)x, (const T *)w, (T *)out);
    return cudaGetLastError();
}

template <class T>
cudaError_t launch_tile(const ga_conv_tile *p, const char *x, const char *w, char *out,
                        cudaStream_t stream)
{
    int64_t blocks = ga_conv_tile_blocks(p);
    size_t smem = (size_t)ga_conv_tile_smem(p) * sizeof(T);
    if (blocks == 0) return cudaSuccess;
    if (blocks > INT32_MAX || smem > CV_SMEM_MAX)
        return cudaErrorInvalidConfiguration;
    k_conv_tile<T><<<(unsigned)blocks, dim3(TBX, TBY), smem, stream>>>(
        *p, (const T *)x, (const T *)w, (T *)out);
    return cudaGetLastError();
}

// The separable block: SR outputs a thread down a column, SBY rows of
// threads (see the harness, src/kernels/dev/convolve_bench.cu, for the
// shapes tried).
constexpr int SEP_R = 8, SEP_BY = 4;

template <class T, int SR = SEP_R, int SBY = SEP_BY>
cudaError_t launch_tile_sep(const ga_conv_tile *p, const char *x, const char *w, char *fac,
                            char *out, cudaStream_t stream)
{
    if (p->nouter != 0 || p->h.k < 1 || p->w.k < 1 || p->h.k > GA_CONV_SEP_K ||
        p->w.k > GA_CONV_SEP_K || p->kh_chunk != p->h.k || p->kw_chunk != p->w.k)
        return cudaErrorInvalidValue;
    const int64_t blocks = sep_blocks<SR, SBY>(*p);
    if (blocks == 0) return cudaSuccess;
    const size_t smem = (size_t)sep_smem<SR, SBY>(*p) * sizeof(T);
    if (blocks > INT32_MAX) return cudaErrorInvalidConfiguration;
    if (smem > CV_SMEM_MAX) {
        cudaError_t err = cudaFuncSetAttribute(k_conv_sep<T, SR, SBY>,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)smem);
        if (err != cudaSuccess) return err;
    }
    k_conv_factor<T><<<1, 256, 0, stream>>>(*p, (const T *)w, (T *)fac);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    k_conv_sep<T, SR, SBY><<<(unsigned)blocks, dim3(SBX, SBY), smem, stream>>>(
        *p, (const T *)x, (const T *)fac, (T *)out);
    if ((err = cudaGetLastError()) != cudaSuccess) return err;
    ga_conv_tile q = *p;
    q.sep = fac;
    return launch_tile<T>(&q, x, w, out, stream);
}

template <class T>
cudaError_t launch_cols(const ga_conv_cols *p, const char *x, const char *w, char *out,
                        cudaStream_t stream)
{
    ga_conv_cols q = *p;
    constexpr int V = 16 / sizeof(T);
    if (q.vec != 1 && (q.vec != V || q.cols % V != 0 || (uintptr_t)x % 16 != 0 ||
                       (uintptr_t)out % 16 != 0))
        q.vec = 1;
    if (q.run < 1 || q.h.k < 1 || q.h.k > INT32_MAX)
        return cudaErrorInvalidValue;
    int64_t blocks = ga_conv_cols_blocks(&q);
    if (blocks == 0) return cudaSuccess;
    if (blocks > INT32_MAX)
        return cudaErrorInvalidConfiguration;
    k_conv_cols<T><<<(unsigned)blocks, CBX, 0, stream>>>(q, (const T *)x, (const T *)w, (T *)out);
    return cudaGetLastError();
}

// The launchers above as visitors of the element type.
struct ColsLaunch {
    const ga_conv_cols *p; const char *x, *w; char *out; cudaStream_t stream;
    template <class T> cudaError_t operator()() { return launch_cols<T>(p, x, w, out, stream); }
};
struct LineLaunch {
    const ga_conv_line *p; const char *x, *w; char *out; cudaStream_t stream;
    template <class T> cudaError_t operator()() { return launch_line<T>(p, x, w, out, stream); }
};
struct TileSepLaunch {
    const ga_conv_tile *p; const char *x, *w; char *fac, *out; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        return launch_tile_sep<T>(p, x, w, fac, out, stream);
    }
};
struct TileLaunch {
    const ga_conv_tile *p; const char *x, *w; char *out; cudaStream_t stream;
    template <class T> cudaError_t operator()() { return launch_tile<T>(p, x, w, out, stream); }
};

} // namespace

extern "C" cudaError_t ga_launch_conv_cols(ga_type type, const ga_conv_cols *p, const char *x,
                                           const char *w, char *out, cudaStream_t stream)
{
    return ga_visit_type(type, ga_only<float, double, int64_t>(ColsLaunch{p, x, w, out, stream}));
}

extern "C" cudaError_t ga_launch_conv_line(ga_type type, const ga_conv_line *p, const char *x,
                                           const char *w, char *out, cudaStream_t stream)
{
    return ga_visit_type(type, ga_only<float, double, int64_t, ga_c64, ga_c128>(
                                   LineLaunch{p, x, w, out, stream}));
}

extern "C" cudaError_t ga_launch_conv_tile_sep(ga_type type, const ga_conv_tile *p,
                                               const char *x, const char *w, char *fac,
                                               char *out, cudaStream_t stream)
{
    return ga_visit_type(type, ga_only<float, double>(TileSepLaunch{p, x, w, fac, out, stream}));
}

extern "C" cudaError_t ga_launch_conv_tile(ga_type type, const ga_conv_tile *p, const char *x,
                                           const char *w, char *out, cudaStream_t stream)
{
    return ga_visit_type(type, ga_only<float, double, int64_t>(TileLaunch{p, x, w, out, stream}));
}
