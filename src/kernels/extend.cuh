// extend.cuh -- reading past the edges of an axis (ga_ext_mode), shared by
// the correlation kernels (convolve.cu) and the order-statistic filters
// (filters.cu).
#ifndef GA_EXTEND_CUH
#define GA_EXTEND_CUH

#include "kernels.h"

// Index i of an axis of length n extended by `mode`: an index in [0, n),
// or -1 where the constant is read.  Reflections and wraps repeat, so any
// i maps.  I is int64_t or, where the caller knows its axes are short, int
// (64-bit division costs registers and time).
template <class I>
__host__ __device__ __forceinline__ I ga_ext_index(I i, I n, int mode)
{
    if (i >= 0 && i < n)
        return i;
    switch (mode) {
    case GA_EXT_NEAREST:
        return i < 0 ? 0 : n - 1;
    case GA_EXT_WRAP: {
        I r = i % n;
        return r < 0 ? r + n : r;
    }
    case GA_EXT_REFLECT: {
        I r = i % (2 * n);
        if (r < 0) r += 2 * n;
        return r < n ? r : 2 * n - 1 - r;
    }
    case GA_EXT_MIRROR: {
        if (n == 1) return 0;
        I r = i % (2 * n - 2);
        if (r < 0) r += 2 * n - 2;
        return r < n ? r : 2 * n - 2 - r;
    }
    default:
        return -1;
    }
}

#endif
