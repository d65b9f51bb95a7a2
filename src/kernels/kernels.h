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

#include <stdint.h>
#include <cuda_runtime_api.h>

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
 * order, so element i is at byte i*itemsize (shape/strides unused).
 * Otherwise shape and strides describe the collapsed N-d iteration. */
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

/* Row gather: dst row r = src row index[r] for r < nrows, both C-contiguous
 * with rows of row_bytes bytes; indices must be in range (not checked). */
cudaError_t ga_launch_gather_rows(int64_t nrows, int64_t row_bytes, char *dst,
                                  const char *src, const int64_t *index, cudaStream_t stream);

/* Block `block` of stream g computed on the host (known-answer tests). */
void ga_random_philox_host(const ga_philox *g, uint64_t block, uint32_t out[4]);

/* ---- spin.cu: test helper ---- */

/* One thread busy-waits `cycles` SM clock cycles (clock64) on `stream`. */
cudaError_t ga_launch_spin(int64_t cycles, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif /* GA_KERNELS_H */
