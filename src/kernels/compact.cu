// compact.cu -- stream compaction: compress, boolean-mask indexing,
// nonzero (its coordinates come from measure.cu's ga_launch_unravel), and
// mask assignment.
//
// Compaction is CUB's DeviceSelect::Flagged: one pass that reads values and
// flags, scans the flags with decoupled look-back and writes the kept
// values in order, with the count left in device memory for the host's one
// synchronising read.  Values are moved by element size (1, 2, 4, 8, 16
// bytes), so five instantiations serve every dtype; a sixth selects
// indices (a counting iterator) for nonzero and unique.
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "kernel_common.cuh"

// ============================== kernels ====================================

// *first = min(*first, smallest i with flags[i] != 0).
__global__ void __launch_bounds__(GA_BLOCK)
k_first_flag(int64_t n, const uint8_t *flags, unsigned long long *first)
{
    GA_GRID_STRIDE(i, n) {
        if (flags[i]) {
            atomicMin(first, (unsigned long long)i);
            return;
        }
    }
}

// dst[idx] = value where mask[idx], N-d.
template <class U>
__global__ void __launch_bounds__(GA_BLOCK)
k_masked_fill(int64_t n, ga_kshape sh, char *dst, ga_kstrides ds, const uint8_t *mask,
              ga_kstrides ms, U value)
{
    GA_GRID_STRIDE(i, n) {
        int64_t od, om;
        ga_offset2(i, sh, ds, ms, &od, &om);
        if (mask[om])
            *(U *)(dst + od) = value;
    }
}

// ============================== launchers ==================================

namespace {

struct CompressLaunch {
    int64_t n; const char *src; const uint8_t *flags; char *dst; int64_t *count; void *temp;
    size_t *temp_bytes; cudaStream_t stream;
    template <class U> cudaError_t operator()()
    {
        return cub::DeviceSelect::Flagged(temp, *temp_bytes, (const U *)src, flags, (U *)dst,
                                          count, n, stream);
    }
};

struct MaskedFillLaunch {
    const ga_kshape *sh; char *dst; const ga_kstrides *ds; const uint8_t *mask;
    const ga_kstrides *ms; const ga_kscalar *value; cudaStream_t stream;
    template <class U> cudaError_t operator()()
    {
        const int64_t n = ga_kshape_size(sh);
        U v;
        memcpy(&v, value->v.bytes, sizeof(U));
        k_masked_fill<U><<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, *sh, dst, *ds, mask, *ms, v);
        return cudaGetLastError();
    }
};

} // namespace

extern "C" cudaError_t ga_launch_compress(int itemsize, int64_t n, const char *src,
                                          const uint8_t *flags, char *dst, int64_t *count,
                                          void *temp, size_t *temp_bytes, cudaStream_t stream)
{
    return ga_visit_size(itemsize, CompressLaunch{n, src, flags, dst, count, temp, temp_bytes,
                                                  stream});
}

extern "C" cudaError_t ga_launch_flag_indices(int64_t n, const uint8_t *flags, int64_t *dst,
                                              int64_t *count, void *temp, size_t *temp_bytes,
                                              cudaStream_t stream)
{
    return cub::DeviceSelect::Flagged(temp, *temp_bytes, thrust::counting_iterator<int64_t>(0),
                                      flags, dst, count, n, stream);
}

extern "C" cudaError_t ga_launch_first_flag(int64_t n, const uint8_t *flags, uint64_t *first,
                                            cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    k_first_flag<<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, flags, (unsigned long long *)first);
    return cudaGetLastError();
}

extern "C" cudaError_t ga_launch_masked_fill(int itemsize, const ga_kshape *shape, char *dst,
                                             const ga_kstrides *dst_strides,
                                             const uint8_t *mask,
                                             const ga_kstrides *mask_strides,
                                             const ga_kscalar *value, cudaStream_t stream)
{
    if (ga_kshape_size(shape) == 0)
        return cudaSuccess;
    return ga_visit_size(itemsize, MaskedFillLaunch{shape, dst, dst_strides, mask, mask_strides,
                                                    value, stream});
}
