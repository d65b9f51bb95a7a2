// reduce_stats.cu -- all / any / count_nonzero (a count of truthy
// elements) and mean / var / std (one pass of shifted sums merged with
// Chan's formula, see MomentsOp).  Truthiness does not depend on the sign,
// so signed integers read as the unsigned type of their size.
#include "reduce.cuh"

namespace ga_red {

// ============================== launchers ==================================

static cudaError_t count(const ga_reduce_args &a, cudaStream_t s)
{
    switch (a.in_type) {   // dtype -> instantiation table (reduce.cuh: why a switch)
    case GA_BOOL:
    case GA_INT8:
    case GA_UINT8: return launch<CountOp, uint8_t>(a, s);
    case GA_INT16:
    case GA_UINT16: return launch<CountOp, uint16_t>(a, s);
    case GA_INT32:
    case GA_UINT32: return launch<CountOp, uint32_t>(a, s);
    case GA_INT64:
    case GA_UINT64: return launch<CountOp, uint64_t>(a, s);
    case GA_FLOAT16: return launch<CountOp, __half>(a, s);
    case GA_FLOAT32: return launch<CountOp, float>(a, s);
    case GA_FLOAT64: return launch<CountOp, double>(a, s);
    case GA_COMPLEX64: return launch<CountOp, ga_c64>(a, s);
    case GA_COMPLEX128: return launch<CountOp, ga_c128>(a, s);
    default: return cudaErrorInvalidValue;
    }
}

static cudaError_t moments(const ga_reduce_args &a, cudaStream_t s)
{
    using R = MomentsOp<false>;
    switch (a.in_type) {
    case GA_FLOAT16: return launch<R, __half>(a, s);
    case GA_FLOAT32: return launch<R, float>(a, s);
    case GA_FLOAT64: return launch<R, double>(a, s);
    case GA_COMPLEX64: return launch<MomentsOp<true>, ga_c64>(a, s);
    case GA_COMPLEX128: return launch<MomentsOp<true>, ga_c128>(a, s);
    default: return launch_integer<R>(a, s);
    }
}

cudaError_t launch_count_moments(const ga_reduce_args &a, cudaStream_t stream)
{
    return a.kind == GA_RED_COUNT ? count(a, stream) : moments(a, stream);
}

} // namespace ga_red
