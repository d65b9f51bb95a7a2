/*
 * kernels.h -- the only interface between the C extension and CUDA code.
 *
 * Every launcher is a plain extern "C" function that takes device pointers,
 * a layout (shape and byte strides, already collapsed on the host), a dtype
 * code and a stream, launches its kernel(s) and returns the cudaError_t of
 * the launch.  Launchers never throw, never exit and never synchronise.
 * Planning -- which launcher, which layout -- happens in host C code.
 */
#ifndef GA_KERNELS_H
#define GA_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#include "kernel_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- copy.cu: type-blind kernels keyed by element size (1,2,4,8,16) ---- */

/* dst[idx] = src[idx] over `shape`, any strides (0 allowed on src). */
cudaError_t ga_launch_copy(int itemsize, const ga_kshape *shape,
                           char *dst, const ga_kstrides *dst_strides,
                           const char *src, const ga_kstrides *src_strides,
                           cudaStream_t stream);

/* dst[idx] = value over `shape`; a contiguous dst (strides NULL) takes the
 * 16-byte store path. */
cudaError_t ga_launch_fill(int itemsize, const ga_kshape *shape,
                           char *dst, const ga_kstrides *dst_strides,
                           const ga_kscalar *value, cudaStream_t stream);

/* ---- cast.cu: conversion between element types ---- */

/* dst[idx] = (dst_type) src[idx], NumPy's conversion rules (see README for
 * the out-of-range float->int case). */
cudaError_t ga_launch_cast(ga_type dst_type, const ga_kshape *shape,
                           char *dst, const ga_kstrides *dst_strides,
                           ga_type src_type,
                           const char *src, const ga_kstrides *src_strides,
                           cudaStream_t stream);

/* ---- sequence.cu: arange / linspace ---- */

/* Contiguous dst[i] for i < n.
 * mode 0 (arange): start + i*delta in the element type's own arithmetic
 *   (as NumPy's fill loops), with start/delta given as double pairs (real,
 *   imag) for floating types and in .i for integer types.
 * mode 1 (linspace): start + i*delta computed in double (complex: per part),
 *   then converted; when `last` is set, dst[n-1] = stop exactly. */
cudaError_t ga_launch_sequence(ga_type type, int mode, int64_t n, char *dst,
                               const ga_kscalar *start, const ga_kscalar *delta,
                               int last, const ga_kscalar *stop,
                               cudaStream_t stream);

/* ---- ew_*.cu: elementwise loops (ufunc_table.h numbers them) ---- */

/* Operands of one elementwise launch.  Inputs share the loop's input type;
 * an input whose bit is set in scalar_mask is the value scalar[k] instead of
 * an array.  `contiguous`: every array operand is contiguous in the same
 * order, so element i is at byte i*itemsize (shape/strides unused); there an
 * input whose bit k + GA_EW_DEVICE_SCALAR is set is one element in device
 * memory at in[k] (a 0-d or size-1 array broadcast, like the lesson's
 * `data > lower` with lower a 0-d result), which every thread reads once and
 * then uses as scalar[k].  Otherwise shape and strides describe the
 * collapsed N-d iteration. */
#define GA_EW_DEVICE_SCALAR 3
typedef struct {
    int64_t n;
    int contiguous;
    int scalar_mask;
    const char *in[3];
    char *out;
    ga_kscalar scalar[3];
    ga_kshape shape;
    ga_kstrides in_strides[3];
    ga_kstrides out_strides;
} ga_ew_args;

/* Run loop `loop` (an enum ga_loop_id). */
cudaError_t ga_launch_ufunc(int loop, const ga_ew_args *args, cudaStream_t stream);

/* out = cond ? x : y, keyed by the element size of x/y/out (cond is bool;
 * in[0] cond, in[1] x, in[2] y, any of them scalars). */
cudaError_t ga_launch_where(int itemsize, const ga_ew_args *args, cudaStream_t stream);

/* ---- random.cu: counter-based random numbers (Philox4x32-10) ---- */

/* Where a launch draws from: block b of the launch is Philox4x32-10 of the
 * 128-bit counter (ctr_hi:ctr_lo) + b under `key`, four 32-bit words (the
 * stream of cuRAND's Philox state after curand_init(key, ctr_hi, 4*ctr_lo)).
 * Every launcher sets *used to the blocks it consumed, for the caller to
 * add to ctr_lo; values depend only on the stream, not on the launch. */
typedef struct {
    uint64_t key;
    uint64_t ctr_hi;
    uint64_t ctr_lo;
} ga_philox;

/* Contiguous dst[i] = low + scale*u, u uniform on [0, 1) (24 or 53 random
 * bits, never 1.0); type GA_FLOAT32 (4 values a block) or GA_FLOAT64 (2). */
cudaError_t ga_launch_random_uniform(ga_type type, int64_t n, char *dst, double low,
                                     double scale, const ga_philox *g, uint64_t *used,
                                     cudaStream_t stream);

/* Contiguous dst[i] = loc + scale*z, z standard normal (Box-Muller);
 * GA_FLOAT32 (4 values a block) or GA_FLOAT64 (2). */
cudaError_t ga_launch_random_normal(ga_type type, int64_t n, char *dst, double loc,
                                    double scale, const ga_philox *g, uint64_t *used,
                                    cudaStream_t stream);

/* Contiguous integers in [low, low + range) (two's complement, truncated to
 * itemsize 1, 2, 4 or 8 bytes; range 0 means 2^64, itemsize 8 only).
 * range <= 2^32: 64 random bits a value (bias < 2^-32); wider: 128. */
cudaError_t ga_launch_random_integers(int itemsize, int64_t n, char *dst, uint64_t low,
                                      uint64_t range, const ga_philox *g, uint64_t *used,
                                      cudaStream_t stream);

/* dst = a random permutation of 0..n-1 (int64): random 64-bit keys sorted
 * with their indices by CUB's radix sort.  Two phases: with temp NULL, sets
 * *temp_bytes and launches nothing; then call with a device block of that
 * size, which must live until the work on `stream` is done. */
cudaError_t ga_launch_random_permutation(int64_t n, int64_t *dst, void *temp,
                                         size_t *temp_bytes, const ga_philox *g,
                                         uint64_t *used, cudaStream_t stream);

/* Block `block` of stream g computed on the host (known-answer tests). */
void ga_random_philox_host(const ga_philox *g, uint64_t block, uint32_t out[4]);

/* ---- reduce*.cu: reductions (sum, prod, min/max/ptp, argmin/argmax,
 * all/any/count_nonzero, mean/var/std) ---- */

/* The reduction types (kinds, flags, ga_reduce_grid, ga_reduce_args) are in
 * kernel_types.h: user reductions compiled at run time use them too. */
cudaError_t ga_launch_reduce(const ga_reduce_args *args, cudaStream_t stream);

/* ---- scan.cu: inclusive scans along rows (cumsum, cumprod) ---- */

enum { GA_SCAN_ADD = 0, GA_SCAN_MUL = 1 };
/* Elements a warp scans in one piece of a row (inner == 1); longer rows
 * are scanned in chunks of this many, their totals scanned first (in a
 * temporary buffer). */
#define GA_SCAN_CHUNK 1024

/* Bytes of the temporary buffer ga_launch_scan needs for an (outer, n,
 * inner) scan of `itemsize`-byte elements (0 when the lines are short). */
size_t ga_scan_tmp_bytes(int itemsize, int64_t outer, int64_t n, int64_t inner);
/* out[o, :, j] = inclusive scan (GA_SCAN_ADD / GA_SCAN_MUL) of in[o, :, j]
 * for C-contiguous (outer, n, inner) arrays of `type` (in may be out);
 * `tmp` holds ga_scan_tmp_bytes bytes (alive until the work on the stream
 * is done). */
cudaError_t ga_launch_scan(ga_type type, int op, const char *in, char *out, int64_t outer,
                           int64_t n, int64_t inner, void *tmp, cudaStream_t stream);

/* ---- label.cu: connected components (scipy.ndimage.label) ---- */

/* One labelling.  The array is C-contiguous with shape (nz, ny, nx) (1-d
 * and 2-d arrays have leading 1s).  Bit p of `neighbours` (p < 13) says the
 * backward offset p = 9*(dz+1) + 3*(dy+1) + (dx+1) of the 3x3x3 cube is
 * connected (the structure is centrosymmetric, so these 13 bits say all).
 * Foreground = any bit of a mask element set (itemsize 1, 2, 4 or 8). */
typedef struct {
    int64_t dims[3];
    uint32_t neighbours;
    int mask_itemsize;
    const void *mask;
    void *scratch;       /* ga_label_scratch_bytes(n) bytes, 256-byte aligned */
    int64_t *count;      /* device: the number of components */
} ga_label_args;

/* Scratch bytes for n elements (int32 indices below 2^31 - 2, else int64). */
size_t ga_label_scratch_bytes(int64_t n);
/* Union-find, flatten and numbering; writes *count.  Components are
 * numbered 1.. in the raster order of their first element, as SciPy. */
cudaError_t ga_launch_label(const ga_label_args *a, cudaStream_t stream);
/* After ga_launch_label: the labels into a C-contiguous array of out_type
 * (any integer type, GA_FLOAT32 or GA_FLOAT64), 0 for background. */
cudaError_t ga_launch_label_write(const ga_label_args *a, ga_type out_type, void *out,
                                  cudaStream_t stream);

/* ---- convolve.cu: direct correlation (np.convolve, scipy.signal, ndimage) ---- */

/* How an input is extended past its edges (one rule for every axis of a
 * launch); reflections and wraps repeat, so any offset reads a value.
 *   CONSTANT  k k k | a b c d | k k k   cval: signal 'fill', ndimage 'constant'
 *   REFLECT   c b a | a b c d | d c b   signal 'symm', ndimage 'reflect'
 *   MIRROR    d c b | a b c d | c b a   ndimage 'mirror'
 *   NEAREST   a a a | a b c d | d d d   ndimage 'nearest'
 *   WRAP      b c d | a b c d | a b c   signal 'wrap', ndimage 'wrap' */
typedef enum {
    GA_EXT_CONSTANT = 0, GA_EXT_REFLECT, GA_EXT_MIRROR, GA_EXT_NEAREST, GA_EXT_WRAP
} ga_ext_mode;

/* Flags of a correlation launch.  FLIP reads the taps last to first (a
 * convolution); the others exist for the line kernel only (np.correlate). */
enum { GA_CONV_FLIP = 1, GA_CONV_CONJ_TAPS = 2, GA_CONV_CONJ_OUT = 4, GA_CONV_REVERSE_OUT = 8 };

/* One axis of a correlation: out[p] = sum over q < k of w[q] * X[p + q + off],
 * p < n_out, X the input (n_in long) extended by the launch's mode. */
typedef struct { int64_t n_in, n_out, k, off; } ga_conv_axis;

/* Line kernel: `rows` independent lines, input rows n_in long and output
 * rows n_out long, both contiguous one after another.  Blocks are bx x by
 * threads (bx along a line, by lines); each thread computes GA_CONV_LINE_C
 * consecutive outputs; taps are staged `kchunk` at a time.  Element types:
 * GA_FLOAT32, GA_FLOAT64, GA_INT64 (wrapping), GA_COMPLEX64, GA_COMPLEX128. */
#define GA_CONV_LINE_C 8
#define GA_CONV_LINE_WARPS 8
typedef struct {
    int64_t rows;
    ga_conv_axis ax;
    int32_t mode, flags;
    int32_t bx, by, kchunk;
    int32_t warp;            /* 0, or the warp variant: each warp stages and stores
                              * its own tiles, up to `warp` of them, in two slots (bx
                              * 32, by 1, kchunk k; GA_CONV_LINE_WARPS warps a block,
                              * 2 * GA_CONV_LINE_WARPS slots of shared memory) */
    double divisor;          /* floating results are divided by it when nonzero */
    ga_kscalar cval;         /* in the element type */
} ga_conv_line;

/* Shared memory of one line slot (a line of a block), in elements: the
 * staged input with one pad element after every GA_CONV_LINE_C. */
static inline int64_t ga_conv_line_slot(int32_t bx, int32_t kchunk)
{
    int64_t len = (int64_t)bx * GA_CONV_LINE_C + kchunk - 1;
    return len + (len - 1) / GA_CONV_LINE_C;
}
static inline int64_t ga_conv_line_smem(const ga_conv_line *p)
{
    return (int64_t)p->by * ga_conv_line_slot(p->bx, p->kchunk);
}
static inline int64_t ga_conv_line_blocks(const ga_conv_line *p)
{
    int64_t tile = (int64_t)p->bx * GA_CONV_LINE_C;
    return ((p->ax.n_out + tile - 1) / tile) * ((p->rows + p->by - 1) / p->by);
}

/* Tile kernel: planes (h, w) of C-contiguous arrays whose leading `nouter`
 * axes are looped inside the kernel (their taps too).  A block of
 * GA_CONV_TILE_BX x GA_CONV_TILE_BY threads computes a tile of
 * GA_CONV_TILE_BY*GA_CONV_TILE_R rows by GA_CONV_TILE_BX columns, each thread
 * GA_CONV_TILE_R outputs down one column; the (h, w) taps are staged in
 * blocks of kh_chunk x kw_chunk.  Element types: GA_FLOAT32, GA_FLOAT64,
 * GA_INT64. */
#define GA_CONV_MAX_OUTER 6
#define GA_CONV_TILE_BX 64
#define GA_CONV_TILE_BY 2
#define GA_CONV_TILE_R 16
typedef struct {
    int32_t nouter;
    ga_conv_axis outer[GA_CONV_MAX_OUTER];
    ga_conv_axis h, w;
    int32_t mode, flags;
    int32_t kh_chunk, kw_chunk;
    double divisor;
    ga_kscalar cval;
    const void *sep;         /* NULL, or the factors of a separable launch (see
                              * ga_launch_conv_tile_sep): the tile kernel then returns
                              * at once where the separable kernel runs */
} ga_conv_tile;

/* Shared memory of a tile launch, in elements: the input tile (rounded up
 * to 4 elements, so what follows is 16-byte aligned), then the taps of a
 * chunk column by column, each column padded to a multiple of
 * GA_CONV_TILE_R. */
static inline int64_t ga_conv_tile_smem(const ga_conv_tile *p)
{
    int64_t rows = GA_CONV_TILE_BY * GA_CONV_TILE_R + p->kh_chunk - 1;
    int64_t cols = GA_CONV_TILE_BX + p->kw_chunk - 1;
    int64_t kcol = (p->kh_chunk + GA_CONV_TILE_R - 1) / GA_CONV_TILE_R * GA_CONV_TILE_R;
    return (rows * cols + 3) / 4 * 4 + kcol * p->kw_chunk;
}
static inline int64_t ga_conv_tile_blocks(const ga_conv_tile *p)
{
    int64_t th = GA_CONV_TILE_BY * GA_CONV_TILE_R, n = 1;
    for (int d = 0; d < p->nouter; ++d)
        n *= p->outer[d].n_out;
    return n * ((p->h.n_out + th - 1) / th) *
           ((p->w.n_out + GA_CONV_TILE_BX - 1) / GA_CONV_TILE_BX);
}

/* Column kernel: one filtered axis h between unfiltered ones, `outer`
 * planes of h.n_in x cols inputs -> h.n_out x cols outputs (cols the
 * merged contiguous axes after h).  A block of GA_CONV_COLS_BX threads
 * spans GA_CONV_COLS_BX * vec columns (vec: 16 bytes of elements, or 1
 * when the columns or pointers do not allow 16-byte access; the launcher
 * falls back to 1 by itself); each thread computes `run` outputs down its
 * columns, GA_CONV_COLS_C at a time.  Element types: GA_FLOAT32,
 * GA_FLOAT64, GA_INT64. */
#define GA_CONV_COLS_BX 128
#define GA_CONV_COLS_C 8
typedef struct {
    int64_t outer, cols;
    ga_conv_axis h;
    int32_t mode, flags;
    int32_t run, vec;
    double divisor;
    ga_kscalar cval;
} ga_conv_cols;
static inline int64_t ga_conv_cols_blocks(const ga_conv_cols *p)
{
    int64_t span = (int64_t)GA_CONV_COLS_BX * p->vec;
    return p->outer * ((p->h.n_out + p->run - 1) / p->run) * ((p->cols + span - 1) / span);
}

/* x, w and out are C-contiguous in the launch's element type; w holds the
 * taps of every axis (outer..., h, w) in C order. */
cudaError_t ga_launch_conv_line(ga_type type, const ga_conv_line *p, const char *x,
                                const char *w, char *out, cudaStream_t stream);
cudaError_t ga_launch_conv_tile(ga_type type, const ga_conv_tile *p, const char *x,
                                const char *w, char *out, cudaStream_t stream);
cudaError_t ga_launch_conv_cols(ga_type type, const ga_conv_cols *p, const char *x,
                                const char *w, char *out, cudaStream_t stream);

/* A 2-d tile launch (nouter 0, h.k and w.k at most GA_CONV_SEP_K, the whole
 * filter one chunk) whose filter may be an outer product u v^T, decided on
 * the device: one block factors the taps into `fac` (1 + h.k + w.k elements
 * of the launch's type: a flag, u, v), then the separable kernel (a
 * horizontal pass with v and a vertical one with u, kh + kw multiply-adds an
 * output) and the tile kernel are both launched, and the one the flag does
 * not choose returns at once.  No host synchronisation.  Float types only. */
#define GA_CONV_SEP_K 24
cudaError_t ga_launch_conv_tile_sep(ga_type type, const ga_conv_tile *p, const char *x,
                                    const char *w, char *fac, char *out, cudaStream_t stream);

/* ---- filters.cu: order-statistic filters (median, rank, minimum, maximum) ---- */

/* out[p] = the rank-th smallest (0-based) of X[p + t] over the taps t,
 * X the input extended by `mode`; x and out C-contiguous of one shape and
 * element size.  Values order by `kind`: 0 unsigned or bool, 1 signed
 * integer, 2 IEEE float (NaN above +inf, -NaN below -inf).  `taps` holds
 * ntaps rows of ndim + 1 int64: the offsets per axis, then the flat element
 * offset; lo/hi are the smallest and largest offset per axis.  Minimum and
 * maximum (rank 0 and ntaps - 1) take any number of taps; other ranks keep
 * up to GA_RANK_LOCAL values a thread and select by counting, beyond that
 * they bisect the value bits. */
#define GA_RANK_LOCAL 64
typedef struct {
    int32_t ndim;
    int64_t shape[GA_KMAX_DIMS];
    int64_t lo[GA_KMAX_DIMS], hi[GA_KMAX_DIMS];
    int64_t ntaps, rank;
    int32_t mode, kind;
    ga_kscalar cval;         /* in the element type */
} ga_rank_filter;

cudaError_t ga_launch_rank_filter(int itemsize, const ga_rank_filter *p, const char *x,
                                  const int64_t *taps, char *out, cudaStream_t stream);

/* ---- measure.cu: per-label statistics (scipy.ndimage measurements) ---- */

#define GA_MEASURE_MAXDIM 8

/* How an element's label selects its slot (a row of accumulators). */
enum {
    GA_SLOT_ALL = 0,       /* every element: slot 0 (labels unused, may be NULL) */
    GA_SLOT_POSITIVE = 1,  /* label > 0: slot 0 */
    GA_SLOT_RANGE = 2,     /* integral label in [lo, lo + nslots): slot label - lo */
    GA_SLOT_TABLE = 3,     /* label's key in table: the index of its first occurrence */
};
typedef struct {
    int mode;
    int64_t lo;
    int64_t nslots;
    const uint64_t *table;   /* TABLE: nslots sorted keys from ga_launch_measure_index */
} ga_slotmap;

/* Statistics (bit k of `what` asks for statistic k). */
enum {
    GA_MS_SUM = 0, GA_MS_COUNT, GA_MS_MEAN, GA_MS_VAR, GA_MS_STD, GA_MS_COM,
    GA_MS_MIN, GA_MS_MAX, GA_MS_MINPOS, GA_MS_MAXPOS, GA_MS_NSTATS
};

/* Indexes up to this size get their slot table from one parallel launch
 * (no sort); ga_launch_measure makes it itself from the raw index. */
#define GA_MEASURE_INDEX_SMALL 2048
/* Blocks of the one-pass kernels resident per multiprocessor: `grid` is at
 * most this many per multiprocessor (one wave). */
#define GA_MEASURE_BLOCKS_PER_SM 2

/* One measurement over C-contiguous values (GA_FLOAT32/GA_FLOAT64) and
 * labels (GA_INT32, GA_INT64 or GA_FLOAT64; NULL for GA_SLOT_ALL) of n
 * elements with C-ordered shape[ndim].  Output entry k reads slot
 * inverse[k] (inverse NULL: slot k).  `grid`: blocks of the one-pass
 * kernels (a few per multiprocessor).  `index` (ga_launch_measure only):
 * GA_SLOT_TABLE with table and inverse NULL hands over the raw index
 * instead, nslots <= GA_MEASURE_INDEX_SMALL C-contiguous entries of
 * index_type (GA_INT64; or GA_FLOAT64 with GA_FLOAT64 labels), whose
 * table the launcher makes in its scratch. */
typedef struct {
    ga_type value_type, label_type;
    const void *values, *labels;
    int64_t n;
    int ndim;
    int64_t shape[GA_MEASURE_MAXDIM];
    ga_slotmap map;
    const int64_t *inverse;
    int64_t nout;
    int grid;
    const void *index;
    ga_type index_type;
} ga_measure_args;

/* Scratch for ga_launch_measure (accumulators, means, a ticket, the table
 * of a raw index). */
size_t ga_measure_scratch_bytes(const ga_measure_args *a);
/* The statistics in `what`, out[k] receiving statistic k: double[nout]
 * (COM: double[nout][ndim]; MINPOS/MAXPOS: int64[nout] linear indices).
 * Empty slots give sum 0, mean/var/std/com NaN, min/max/positions 0. */
cudaError_t ga_launch_measure(const ga_measure_args *a, unsigned int what, void *scratch,
                              void *const *out, cudaStream_t stream);

/* Grouping: element positions (int64[n]) sorted by slot, within a slot by
 * value when `by_value` (else in raster order), and offsets[nslots + 1]
 * where each slot's run starts (the last entry counts the elements that
 * have a slot). */
size_t ga_measure_group_scratch_bytes(int64_t n);
cudaError_t ga_launch_measure_group(const ga_measure_args *a, int by_value, void *scratch,
                                    int64_t *pos_out, int64_t *offsets, cudaStream_t stream);
/* Medians (double[nout], NaN for empty slots) from a by-value grouping. */
cudaError_t ga_launch_measure_median(const ga_measure_args *a, const int64_t *pos,
                                     const int64_t *offsets, double *out, cudaStream_t stream);

/* A slot table from m index values (GA_INT64 for integer labels, else
 * GA_FLOAT64): table = the sorted keys, inverse[k] = the slot of entry k. */
size_t ga_measure_index_scratch_bytes(int64_t m);
cudaError_t ga_launch_measure_index(ga_type index_type, const void *index, int64_t m,
                                    void *scratch, uint64_t *table, int64_t *inverse,
                                    cudaStream_t stream);

/* Histograms with nbins bins between edges[0..nbins] (device doubles, NumPy's
 * rules): out = int64[nout][nbins]. */
size_t ga_measure_histogram_scratch_bytes(const ga_measure_args *a, int nbins);
cudaError_t ga_launch_measure_histogram(const ga_measure_args *a, const double *edges, int nbins,
                                        void *scratch, int64_t *out, cudaStream_t stream);

/* value_indices: positions (int64[n]) sorted by value (GA_INT32/GA_INT64
 * array), stable; the *nseg runs of equal values start at starts[j] with
 * key start_keys[j] (unordered; keys are the value with its sign bit
 * flipped).  starts/start_keys hold n entries. */
size_t ga_value_indices_scratch_bytes(int64_t n);
cudaError_t ga_launch_value_sort(ga_type type, const void *arr, int64_t n, void *scratch,
                                 int64_t *pos_out, int64_t *starts, uint64_t *start_keys,
                                 unsigned long long *nseg, cudaStream_t stream);

/* *out = max(0, largest label) of a GA_INT32/GA_INT64 array. */
cudaError_t ga_launch_label_max(ga_type type, const void *labels, int64_t n, int grid,
                                int64_t *out, cudaStream_t stream);
/* Bounding boxes of labels 1..max_label: bbox[((l-1)*ndim + d)*2] = lowest
 * coordinate, [... + 1] = ~highest; all-ones where a label is absent. */
cudaError_t ga_launch_find_objects(ga_type type, const void *labels, int64_t n, int ndim,
                                   const int64_t *shape, int64_t max_label, int grid,
                                   unsigned long long *bbox, cudaStream_t stream);

/* ---- sort.cu, order_stats.cu: ordering (NumPy's order: NaN last) ---- */

/* Which quantile: NumPy's median; an interpolating method with q a Python
 * scalar ("weak": float arrays keep their dtype) or an array ("strong":
 * float64 results), integer and bool arrays giving float64; or a method
 * that picks one element (PICK: the array's own dtype). */
enum { GA_Q_MEDIAN = 0, GA_Q_LINEAR_WEAK = 1, GA_Q_LINEAR_STRONG = 2, GA_Q_PICK = 3 };
/* NumPy's quantile methods (the `method` argument), in NumPy's terms. */
enum {
    GA_QM_LINEAR = 0, GA_QM_LOWER, GA_QM_HIGHER, GA_QM_NEAREST, GA_QM_MIDPOINT,
    GA_QM_INVERTED_CDF, GA_QM_AVERAGED_INVERTED_CDF, GA_QM_CLOSEST_OBSERVATION,
    GA_QM_INTERPOLATED_INVERTED_CDF, GA_QM_HAZEN, GA_QM_WEIBULL, GA_QM_MEDIAN_UNBIASED,
    GA_QM_NORMAL_UNBIASED, GA_QM_COUNT
};
#define GA_QMAX 16

typedef struct {
    int mode;            /* GA_Q_* */
    int method;          /* GA_QM_* (ignored by the median) */
    int ignore_nan;      /* nanmedian / nanquantile: NaNs are left out */
    int nq;              /* quantiles in q (1..GA_QMAX; 1 for the median) */
    double q[GA_QMAX];   /* each in [0, 1] */
} ga_quantile_args;

/* Stable sort order of every segment of an N-d layout (not complex):
 * segment s is the elements seg_len*s .. seg_len*(s+1)-1 in C order over
 * `shape` (the host collapses without reordering), and perm[seg_len*s + r]
 * is the C-order linear index of the element of rank r in segment s.  NaNs
 * last, -0.0 == 0.0, ties in their original order.  Two phases: with temp
 * NULL, sets *temp_bytes and launches nothing; then call with a device block
 * of that size, which must live until the work on `stream` is done. */
cudaError_t ga_launch_argsort(ga_type type, int64_t seg_len, const char *src,
                              const ga_kshape *shape, const ga_kstrides *strides,
                              int64_t *perm, void *temp, size_t *temp_bytes,
                              cudaStream_t stream);

/* The sort keys of n contiguous elements of a real type, computed on the
 * host (known-answer tests of NumPy's order; no device needed). */
void ga_sort_keys_host(ga_type type, int canon_zero, const void *src, int64_t n,
                       uint64_t *keys);

/* dst at C-order position j = src at C-order linear index perm[j]; both
 * layouts over the same logical shape (collapsed without reordering). */
cudaError_t ga_launch_sort_gather(int itemsize, const int64_t *perm, const char *src,
                                  const ga_kshape *src_shape, const ga_kstrides *src_strides,
                                  char *dst, const ga_kshape *dst_shape,
                                  const ga_kstrides *dst_strides, cudaStream_t stream);

/* argsort's result: int64 dst at position j = perm[j] - seg_len * (j / seg_len). */
cudaError_t ga_launch_argsort_finish(const int64_t *perm, int64_t seg_len, char *dst,
                                     const ga_kshape *dst_shape,
                                     const ga_kstrides *dst_strides, cudaStream_t stream);

/* Quantiles of sorted segments (perm from ga_launch_argsort over src's
 * layout): contiguous out[k * nseg + s] = quantile k of segment s, of the
 * element type or float64 (see GA_Q_*). */
cudaError_t ga_launch_quantile_pick(ga_type type, const ga_quantile_args *args, int64_t nseg,
                                    int64_t seg_len, const int64_t *perm, const char *src,
                                    const ga_kshape *shape, const ga_kstrides *strides,
                                    char *out, cudaStream_t stream);

/* unique: flags[j] = 1 where sorted position j starts a new value (src
 * contiguous, perm its argsort); NaNs are one value when equal_nan. */
cudaError_t ga_launch_unique_flags(ga_type type, int64_t n, const int64_t *perm,
                                   const char *src, int equal_nan, uint8_t *flags,
                                   cudaStream_t stream);

/* unique, from the groups' sorted start positions: first[g] = perm[starts[g]]
 * (the first occurrence), counts[g] (may be NULL), and inverse[i] = the
 * group of element i (may be NULL). */
cudaError_t ga_launch_unique_finish(int64_t n, int64_t ngroups, const int64_t *starts,
                                    const int64_t *perm, int64_t *first, int64_t *counts,
                                    int64_t *inverse, cudaStream_t stream);

/* out[k] = quantile q[k] of n contiguous elements by radix selection,
 * written on the device (no host synchronisation, NaN rules as NumPy);
 * `sm_count` sizes the grid.  Two phases for temp, as ga_launch_argsort. */
cudaError_t ga_launch_quantile_select(ga_type type, int64_t n, const char *src,
                                      const ga_quantile_args *args, char *out, int sm_count,
                                      void *temp, size_t *temp_bytes, cudaStream_t stream);

/* Contiguous out[i] = insertion point of v[i] (N-d over vshape) in the
 * sorted 1-d a (na elements, byte stride a_stride), both of `type`;
 * side_right: after equal elements.  direction 0: a ascending; 1: a
 * descending (answers na - position in reversed a, as numpy.digitize);
 * 2: decided on the device from a's first and last elements. */
cudaError_t ga_launch_searchsorted(ga_type type, int64_t na, const char *a, int64_t a_stride,
                                   const char *v, const ga_kshape *vshape,
                                   const ga_kstrides *vstrides, int64_t *out, int side_right,
                                   int direction, cudaStream_t stream);

/* range[0] = max(range[0], ~min key), range[1] = max(range[1], max key)
 * over n contiguous elements (keys as in sorting; zero range first). */
cudaError_t ga_launch_key_range(ga_type type, int64_t n, const char *src, uint64_t *range,
                                cudaStream_t stream);

/* histogram(range=None) edges from a key range of an array of `type`:
 * numpy.linspace(min, max, nbins + 1) in the array's float type (float64
 * for integers), min and max widened by 0.5 when equal; the same values as
 * float64 in edges64. */
cudaError_t ga_launch_histogram_edges(ga_type type, const uint64_t *range, int64_t nbins,
                                      char *edges, double *edges64, cudaStream_t stream);

/* counts[b] += weights[i] (or 1) for each of n contiguous x[i] (any real
 * type) in [edges[b], edges[b+1]), the last bin closed; counts[nbins] gets
 * the total.  counts: nbins + 1 zeroed int64 (no weights) or float64. */
cudaError_t ga_launch_histogram(ga_type type, int64_t n, const char *x, const double *weights,
                                int64_t nbins, const double *edges, void *counts,
                                cudaStream_t stream);

/* counts[x[i]] += weights[i] (or 1), x in [0, nbins) (checked by the
 * caller); counts zeroed int64 (no weights) or float64. */
cudaError_t ga_launch_bincount(int64_t n, const int64_t *x, const double *weights,
                               int64_t nbins, void *counts, cudaStream_t stream);

/* ---- compact.cu: compaction; flat positions to coordinates ---- */

/* dst = the src[i] (i < n, contiguous) with flags[i] != 0, in order
 * (itemsize 1, 2, 4, 8 or 16), or with itemsize 0 their positions i
 * (int64); *count = how many, where count may point to device memory or to
 * pinned host memory.  Two phases for temp, as ga_launch_argsort; the
 * launcher initialises temp itself. */
cudaError_t ga_launch_compact(int itemsize, int64_t n, const char *src, const uint8_t *flags,
                              char *dst, int64_t *count, void *temp, size_t *temp_bytes,
                              cudaStream_t stream);

/* *first = min(*first, smallest i < n with flags[i] != 0). */
cudaError_t ga_launch_first_flag(int64_t n, const uint8_t *flags, uint64_t *first,
                                 cudaStream_t stream);

/* dst[idx] = value where mask[idx] (bool), over an N-d layout. */
cudaError_t ga_launch_masked_fill(int itemsize, const ga_kshape *shape, char *dst,
                                  const ga_kstrides *dst_strides, const uint8_t *mask,
                                  const ga_kstrides *mask_strides, const ga_kscalar *value,
                                  cudaStream_t stream);

/* coords[d][k] = coordinate d of linear index pos[k] in a C-ordered shape. */
cudaError_t ga_launch_unravel(const int64_t *pos, int64_t n, int ndim, const int64_t *shape,
                              int64_t *coords, cudaStream_t stream);

/* ---- take.cu: gather / scatter through int64 index arrays ---- */

#define GA_TAKE_MAX 8
enum { GA_TAKE_RAISE = 0, GA_TAKE_WRAP = 1, GA_TAKE_CLIP = 2, GA_TAKE_TRUSTED = 3 };
enum { GA_TAKE_GATHER = 0, GA_TAKE_SCATTER = 1, GA_TAKE_CHECK = 2 };

/* The iteration space R and every operand's byte strides over it.  Index
 * k is an int64 array addressing an axis of length axis_len[k] and byte
 * stride axis_stride[k] of the indexed array.  mode GA_TAKE_RAISE checks
 * (negative indices count from the end); WRAP and CLIP as numpy.take;
 * TRUSTED: already in [0, len). */
typedef struct {
    ga_kshape shape;
    ga_kstrides base_strides;   /* the indexed array, non-indexed dims */
    ga_kstrides other_strides;  /* the gathered result or the values scattered */
    int nindex;
    int mode;
    const int64_t *index[GA_TAKE_MAX];
    ga_kstrides index_strides[GA_TAKE_MAX];
    int64_t axis_len[GA_TAKE_MAX];
    int64_t axis_stride[GA_TAKE_MAX];
} ga_take_args;

/* GATHER: other[r] = base[r, indices]; SCATTER: base[r, indices] =
 * other[r]; CHECK: only validates.  With GA_TAKE_RAISE, error (two zeroed
 * int64 in device memory) receives {k + 1, value} of the first bad index
 * found, and that element is skipped. */
cudaError_t ga_launch_take(int itemsize, int direction, const ga_take_args *args, char *base,
                           char *other, int64_t *error, cudaStream_t stream);

/* Row gather: dst row r = src row index[r] for r < nrows, both C-contiguous
 * with rows of row_bytes bytes; indices must be in range (not checked). */
cudaError_t ga_launch_gather_rows(int64_t nrows, int64_t row_bytes, char *dst,
                                  const char *src, const int64_t *index, cudaStream_t stream);

/* ---- stats.cu: sigma clipping by interval-restricted statistics ---- */

/* The survivors of sigma clipping are always the data inside one interval,
 * so an iteration needs only the median (radix selection) and the count,
 * mean and spread of the values inside it.  One state per clipped row. */
typedef struct {
    double lo, hi;              /* survivors: lo <= x <= hi (inclusive) or lo < x < hi */
    double bound_lo, bound_hi;  /* the last bounds computed (NaN before the first) */
    double centre, spread;      /* the last centre and standard deviation used */
    double median, mean, std;   /* statistics of the final survivors */
    double shift;               /* offset for the shifted sums (the last centre) */
    double m2;                  /* sum of squared deviations of the last moments pass */
    int64_t count;              /* survivors counted by the last moments pass */
    int64_t prev_count;         /* survivors before the last clip */
    int64_t iterations;         /* bounds computed so far */
    int64_t done;               /* converged, emptied or finished: passes return at once
                                 * (every field 8 bytes: no padding, so copies of a whole
                                 * state read only bytes that were written) */
    uint64_t prefix[2];         /* radix selection in progress: key prefixes of the */
    int64_t rank[2];            /*   two middle elements and their ranks within them */
} ga_clip_state;

typedef struct {
    ga_type type;               /* GA_FLOAT32 or GA_FLOAT64, C-contiguous data */
    const void *data;
    int64_t nrows, rowlen;      /* rows clipped independently (axis=None: one row) */
    double sigma_lower, sigma_upper;
    int inclusive;              /* 1: keep lo <= x <= hi (astropy); 0: lo < x < hi */
    int cen_median;             /* centre: 1 median, 0 mean */
    int std_mad;                /* spread: 1 MAD * 1.482602218505602, 0 standard deviation */
    int std_ddof;               /* delta degrees of freedom of the final std */
    int keep_last;              /* a clip that empties a row ends it with its bounds
                                 * (astropy with axis); 0: the next bounds are NaN */
    int64_t maxiters;           /* row kernel: at most this many clips, -1 until convergence */
    ga_clip_state *state;       /* device, nrows entries */
    void *scratch;              /* ga_clip_scratch_bytes(): the one row's passes; cleared
                                   by ga_launch_clip_init */
    int grid;                   /* blocks of the one-row passes */
} ga_clip_args;

size_t ga_clip_scratch_bytes(const ga_clip_args *a);
/* Initial states: the whole finite range, nothing computed; with
 * a->scratch set, the one row's scratch cleared too (needed before
 * ga_launch_clip_grid and ga_launch_clip_iteration). */
cudaError_t ga_launch_clip_init(const ga_clip_args *a, cudaStream_t stream);
/* One clipping iteration of the single row, spread over the whole GPU
 * (final: compute the statistics of the current survivors, no clip); a
 * no-op once the state is done. */
cudaError_t ga_launch_clip_iteration(const ga_clip_args *a, int final, cudaStream_t stream);
/* The single row to the end (maxiters or convergence; final_stats: then
 * the statistics of the survivors) in one cooperative launch over the
 * whole GPU; cudaErrorNotSupported where cooperative launches are not
 * (use ga_launch_clip_iteration then). */
cudaError_t ga_launch_clip_grid(const ga_clip_args *a, int final_stats, cudaStream_t stream);
/* Every row to the end (maxiters or convergence) and its final statistics,
 * one block per row, in one launch. */
cudaError_t ga_launch_clip_rows(const ga_clip_args *a, cudaStream_t stream);
/* mask[i] = x not finite, or outside the row's last bounds. */
cudaError_t ga_launch_clip_mask(const ga_clip_args *a, int nan_fill, void *out,
                                cudaStream_t stream);
/* The survivors of the one row in order -- inside the interval, or with
 * use_bounds the finite values inside the last bounds (what a mask keeps):
 * one single-pass compaction (compact.cuh) into out, which has room for
 * the whole row, their number written to *count (pinned host memory or
 * device memory); `state` is device scratch of ga_clip_select_state_bytes
 * (zeroed by the launch). */
size_t ga_clip_select_state_bytes(const ga_clip_args *a);
cudaError_t ga_launch_clip_select(const ga_clip_args *a, int use_bounds, void *out, void *state,
                                  int64_t *count, cudaStream_t stream);
/* out[r] = a field of row r's state as the data type (iterations: int64). */
enum { GA_CLIP_LOWER, GA_CLIP_UPPER, GA_CLIP_MEAN, GA_CLIP_MEDIAN, GA_CLIP_STD,
       GA_CLIP_ITERATIONS, GA_CLIP_NFIELDS };
cudaError_t ga_launch_clip_extract(const ga_clip_args *a, int field, void *out,
                                   cudaStream_t stream);

/* ---- matmul.cu: exact products of bool and integer matrices ---- */

/* One batch of products c[b] = a[b] @ b[b] (m x k times k x n), every
 * operand given by byte strides: rows (*_rs) and columns (*_cs) of each
 * matrix, and the batch (collapsed on the host, C's strides first; ndim 1
 * with shape 1 for a single product). */
typedef struct {
    int64_t m, n, k;
    const char *a, *b;
    char *c;
    int64_t a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
    ga_kshape batch;
    ga_kstrides a_bs, b_bs, c_bs;
} ga_matmul_args;

/* NumPy's matmul of bool (any of ands) and integer types (sums of products
 * wrapping modulo 2**bits), and of float16/32/64 (fused multiply-adds in
 * float or double: src/blas.c sends only small products); k == 0 writes
 * zeros (false).  sms: the device's multiprocessor count; a batch of
 * fewer 64 x 64 tiles takes 16 x 16 tiles. */
cudaError_t ga_launch_matmul_tiled(ga_type type, const ga_matmul_args *args, int sms,
                                   cudaStream_t stream);

/* ---- spin.cu: test helper ---- */

/* One thread busy-waits `cycles` SM clock cycles (clock64) on `stream`. */
cudaError_t ga_launch_spin(int64_t cycles, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* GA_KERNELS_H */
