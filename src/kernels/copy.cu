// copy.cu -- type-blind kernels keyed by element size: strided copy and fill.
//
// A copy or fill never looks at values, so one instantiation per element
// size (1, 2, 4, 8, 16 bytes) serves every dtype.  Contiguous fills take a
// 16-byte store path when the destination is 16-byte aligned; contiguous
// copies go to cudaMemcpyAsync.
#include "kernel_common.cuh"

// ============================== kernels ====================================

template <class T>
__global__ void k_copy_nd(int64_t n, GA_PARAM ga_kshape sh, char *dst, GA_PARAM ga_kstrides ds,
                          const char *src, GA_PARAM ga_kstrides ss)
{
    GA_GRID_STRIDE(i, n) {
        int64_t od, os;
        ga_offset2(i, sh, ds, ss, &od, &os);
        *(T *)(dst + od) = *(const T *)(src + os);
    }
}

template <class T>
__global__ void k_fill_nd(int64_t n, GA_PARAM ga_kshape sh, char *dst, GA_PARAM ga_kstrides ds,
                          T value)
{
    GA_GRID_STRIDE(i, n) {
        *(T *)(dst + ga_offset(i, sh, ds)) = value;
    }
}

// Contiguous fill: 16-byte stores for the body, element stores for the tail.
template <class T>
__global__ void k_fill_contig(int64_t n, T *dst, uint4 pattern, int vector)
{
    if (vector) {
        int64_t nvec = n * (int64_t)sizeof(T) / 16;
        uint4 *v = (uint4 *)dst;
        GA_GRID_STRIDE(i, nvec) v[i] = pattern;
        int64_t done = nvec * 16 / (int64_t)sizeof(T);
        T value = *(const T *)&pattern;
        for (int64_t i = done + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
             i += (int64_t)gridDim.x * blockDim.x)
            dst[i] = value;
    } else {
        T value = *(const T *)&pattern;
        GA_GRID_STRIDE(i, n) dst[i] = value;
    }
}

// ============================== launchers ==================================

namespace {
struct CopyLaunch {
    const ga_kshape *sh; char *dst; const ga_kstrides *ds; const char *src;
    const ga_kstrides *ss; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        int64_t n = ga_kshape_size(sh);
        if (n == 0) return cudaSuccess;
        if (sh->ndim == 1 && ds->s[0] == (int64_t)sizeof(T) && ss->s[0] == (int64_t)sizeof(T))
            return cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice, stream);
        k_copy_nd<T><<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, *sh, dst, *ds, src, *ss);
        return cudaGetLastError();
    }
};

struct FillLaunch {
    const ga_kshape *sh; char *dst; const ga_kstrides *ds; const ga_kscalar *value;
    cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        int64_t n = ga_kshape_size(sh);
        if (n == 0) return cudaSuccess;
        T v;
        memcpy(&v, value->v.bytes, sizeof(T));
        if (ds == NULL) {
            uint4 pattern;
            for (size_t k = 0; k < 16 / sizeof(T); ++k)
                memcpy((char *)&pattern + k * sizeof(T), &v, sizeof(T));
            int vector = ((uintptr_t)dst % 16) == 0;
            int64_t work = vector ? (n * (int64_t)sizeof(T) + 15) / 16 : n;
            k_fill_contig<T><<<ga_grid(work), GA_BLOCK, 0, stream>>>(n, (T *)dst, pattern, vector);
        } else {
            k_fill_nd<T><<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, *sh, dst, *ds, v);
        }
        return cudaGetLastError();
    }
};
} // namespace

extern "C" cudaError_t ga_launch_copy(int itemsize, const ga_kshape *shape,
                                      char *dst, const ga_kstrides *dst_strides,
                                      const char *src, const ga_kstrides *src_strides,
                                      cudaStream_t stream)
{
    return ga_visit_size(itemsize, CopyLaunch{shape, dst, dst_strides, src, src_strides, stream});
}

extern "C" cudaError_t ga_launch_fill(int itemsize, const ga_kshape *shape,
                                      char *dst, const ga_kstrides *dst_strides,
                                      const ga_kscalar *value, cudaStream_t stream)
{
    return ga_visit_size(itemsize, FillLaunch{shape, dst, dst_strides, value, stream});
}
