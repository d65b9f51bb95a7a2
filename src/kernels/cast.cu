// cast.cu -- conversion between element types (astype, mixed-dtype copies).
//
// One strided kernel per (destination, source) pair; the conversion itself is
// ga_convert in kernel_common.cuh.  The contiguous 1-d case is a run-time
// branch inside the same kernel, not a second instantiation.
#include "kernel_common.cuh"

// ============================== kernels ====================================

template <class D, class S>
__global__ void k_cast(int64_t n, GA_PARAM ga_kshape sh, char *dst, GA_PARAM ga_kstrides ds,
                       const char *src, GA_PARAM ga_kstrides ss)
{
    if (sh.ndim == 1 && ds.s[0] == (int64_t)sizeof(D) && ss.s[0] == (int64_t)sizeof(S)) {
        D *d = (D *)dst;
        const S *s = (const S *)src;
        GA_GRID_STRIDE(i, n) d[i] = ga_convert<D>(s[i]);
    } else {
        GA_GRID_STRIDE(i, n) {
            int64_t od, os;
            ga_offset2(i, sh, ds, ss, &od, &os);
            *(D *)(dst + od) = ga_convert<D>(*(const S *)(src + os));
        }
    }
}

// ============================== launchers ==================================

namespace {
template <class D>
struct CastFrom {
    int64_t n; const ga_kshape *sh; char *dst; const ga_kstrides *ds;
    const char *src; const ga_kstrides *ss; cudaStream_t stream;
    template <class S> cudaError_t operator()()
    {
        k_cast<D, S><<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, *sh, dst, *ds, src, *ss);
        return cudaGetLastError();
    }
};

struct CastTo {
    ga_type src_type; int64_t n; const ga_kshape *sh; char *dst; const ga_kstrides *ds;
    const char *src; const ga_kstrides *ss; cudaStream_t stream;
    template <class D> cudaError_t operator()()
    {
        return ga_visit_type(src_type, CastFrom<D>{n, sh, dst, ds, src, ss, stream});
    }
};
} // namespace

extern "C" cudaError_t ga_launch_cast(ga_type dst_type, const ga_kshape *shape,
                                      char *dst, const ga_kstrides *dst_strides,
                                      ga_type src_type,
                                      const char *src, const ga_kstrides *src_strides,
                                      cudaStream_t stream)
{
    int64_t n = ga_kshape_size(shape);
    if (n == 0) return cudaSuccess;
    return ga_visit_type(dst_type, CastTo{src_type, n, shape, dst, dst_strides, src,
                                          src_strides, stream});
}
