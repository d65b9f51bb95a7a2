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

#ifdef __cplusplus
}
#endif
#endif /* GA_KERNELS_H */
