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

#ifdef __cplusplus
}
#endif

#endif
