// reduce.cu -- the one entry point of the reduction kernels: dispatch by
// kind to the family files (reduce_sum.cu, reduce_minmax.cu,
// reduce_stats.cu, reduce_nan.cu for the nan* forms), which nvcc compiles
// in parallel.  The kernels
// themselves are in reduce.cuh.
#include "reduce.cuh"

// ============================== launchers ==================================

extern "C" cudaError_t ga_launch_reduce(const ga_reduce_args *args, cudaStream_t stream)
{
    if (args->n_out == 0) return cudaSuccess;
    if (args->mode & GA_RED_SKIPNAN) return ga_red::launch_nan(*args, stream);
    switch (args->kind) {
    case GA_RED_SUM:
    case GA_RED_PROD: return ga_red::launch_sum_prod(*args, stream);
    case GA_RED_MINMAX:
    case GA_RED_ARG: return ga_red::launch_minmax_arg(*args, stream);
    case GA_RED_COUNT:
    case GA_RED_MOMENTS: return ga_red::launch_count_moments(*args, stream);
    default: return cudaErrorInvalidValue;
    }
}
