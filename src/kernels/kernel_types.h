/*
 * kernel_types.h -- the plain-C types that cross from the host to kernels:
 * element type codes, an N-d layout (shape, byte strides) and a scalar's
 * bytes.  Included by kernels.h (the launcher interface) and by
 * kernel_common.cuh, which user kernels compiled at run time by NVRTC also
 * include (so nothing here may need a host header under NVRTC).
 */
#ifndef GA_KERNEL_TYPES_H
#define GA_KERNEL_TYPES_H

#ifndef __CUDACC_RTC__
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Largest number of dimensions a kernel layout carries after collapsing. */
#define GA_KMAX_DIMS 16

/* Element types as kernels know them (independent of NumPy's numbering). */
typedef enum {
    GA_BOOL = 0, GA_INT8, GA_INT16, GA_INT32, GA_INT64,
    GA_UINT8, GA_UINT16, GA_UINT32, GA_UINT64,
    GA_FLOAT16, GA_FLOAT32, GA_FLOAT64, GA_COMPLEX64, GA_COMPLEX128,
    GA_NTYPES
} ga_type;

/* Shape of an N-d iteration space, outermost dimension first. */
typedef struct {
    int32_t ndim;
    int64_t shape[GA_KMAX_DIMS];
} ga_kshape;

/* Byte strides of one operand over a ga_kshape. */
typedef struct {
    int64_t s[GA_KMAX_DIMS];
} ga_kstrides;

/* A scalar passed by value: 16 bytes of raw element data. */
typedef struct {
    union {
        unsigned char bytes[16];
        double f[2];
        int64_t i;
        uint64_t u;
    } v;
} ga_kscalar;

/* ---- reductions (reduce*.cu, and ReductionKernel's generated kernels) ---- */

/* Reduction kinds; each has one accumulator type per input type class. */
typedef enum {
    GA_RED_SUM = 0,   /* integers in uint64 (wrapping), floats in double, complex in complex128 */
    GA_RED_PROD,      /* the same accumulators */
    GA_RED_MINMAX,    /* mode 0 min, 1 max, 2 max - min (NaN propagates) */
    GA_RED_ARG,       /* mode 0 argmin, 1 argmax: first index, first NaN wins */
    GA_RED_COUNT,     /* nonzero count; mode 0 the count, 1 any, 2 all */
    GA_RED_MOMENTS,   /* one pass (count, mean, M2); mode 0 mean, 1 var, 2 std (ddof) */
    GA_RED_NKINDS
} ga_reduce_kind;

/* A flag added to `mode` for float and complex inputs (nansum, nanprod,
 * nanmin/nanmax, nanmean/nanvar/nanstd, nanargmin/nanargmax): NaN elements
 * are left out (nanarg*: count as +-inf, and a slice with no other value
 * gives index -1; nanmin/nanmax of such a slice give NaN, nanvar NaN where
 * count - ddof <= 0). */
#define GA_RED_SKIPNAN 0x10
/* A flag for GA_RED_SUM of a bool or integer input: the sum in float64,
 * divided by n_red when stored (NumPy's mean of integers, exact for sums
 * below 2**53, where a running mean would leave rounding noise). */
#define GA_RED_MEAN 0x20

/* Largest accumulator of a partial result, in bytes. */
#define GA_REDUCE_ACC_BYTES 32
/* Threads of every reduction block. */
#define GA_REDUCE_THREADS 256

/* How one kernel maps threads onto (output, reduction lane) pairs.  Blocks
 * are bx x by = GA_REDUCE_THREADS threads, both powers of two.  rows = 1:
 * threadIdx.x walks the reduction (bx lanes per output, by outputs a block);
 * rows = 0: threadIdx.x walks consecutive outputs (bx a block) and
 * threadIdx.y the reduction (by lanes).  Blocks walk `tiles` groups of
 * outputs with a stride of grid_x. */
typedef struct {
    int32_t rows, bx, by, grid_x;
    int64_t tiles;
} ga_reduce_grid;

/* One reduction: out[o] = reduce over r of in[o, r].  Input element (o, r)
 * is at in + offset(o over kept, kept_in) + offset(r over red, red_in),
 * output o at out + offset(o over kept, kept_out), r in C order over `red`
 * (argmin/argmax report it).  `contiguous`: red is one dim of stride
 * itemsize (16-byte loads).  The result is converted to out_type.  With
 * splits > 1 the reduction of each output is cut among `splits` blocks whose
 * accumulators go to `partial` (splits * n_out * GA_REDUCE_ACC_BYTES bytes,
 * alive until the work on the stream is done) and a second kernel laid out
 * by `finish` combines them; otherwise one kernel writes the result. */
typedef struct {
    int32_t kind, mode;
    ga_type in_type, out_type;
    double ddof;
    const char *in;
    char *out;
    int64_t n_out, n_red;
    ga_kshape kept;
    ga_kstrides kept_in, kept_out;
    ga_kshape red;
    ga_kstrides red_in;
    int32_t contiguous;
    int32_t splits;
    ga_reduce_grid main, finish;
    void *partial;
} ga_reduce_args;

#ifdef __cplusplus
}
#endif

#endif
