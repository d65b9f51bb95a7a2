// reduce_minmax.cu -- min / max / ptp (one pass computes both extremes) and
// argmin / argmax.  Values widen to int64, uint64, double or complex128 on
// load (exact), so the finishing kernels exist once per wide type; bool
// reads as uint8.
#include "reduce.cuh"

namespace ga_red {

// ============================== launchers ==================================

template <template <class> class Op>
static cudaError_t extreme_like(const ga_reduce_args &a, cudaStream_t s)
{
    switch (a.in_type) {   // dtype -> instantiation table (reduce.cuh: why a switch)
    case GA_BOOL:
    case GA_UINT8: return launch<Op<uint64_t>, uint8_t>(a, s);
    case GA_UINT16: return launch<Op<uint64_t>, uint16_t>(a, s);
    case GA_UINT32: return launch<Op<uint64_t>, uint32_t>(a, s);
    case GA_UINT64: return launch<Op<uint64_t>, uint64_t>(a, s);
    case GA_INT8: return launch<Op<int64_t>, int8_t>(a, s);
    case GA_INT16: return launch<Op<int64_t>, int16_t>(a, s);
    case GA_INT32: return launch<Op<int64_t>, int32_t>(a, s);
    case GA_INT64: return launch<Op<int64_t>, int64_t>(a, s);
    case GA_FLOAT16: return launch<Op<double>, __half>(a, s);
    case GA_FLOAT32: return launch<Op<double>, float>(a, s);
    case GA_FLOAT64: return launch<Op<double>, double>(a, s);
    case GA_COMPLEX64: return launch<Op<ga_c128>, ga_c64>(a, s);
    case GA_COMPLEX128: return launch<Op<ga_c128>, ga_c128>(a, s);
    default: return cudaErrorInvalidValue;
    }
}

cudaError_t launch_minmax_arg(const ga_reduce_args &a, cudaStream_t stream)
{
    return a.kind == GA_RED_MINMAX ? extreme_like<MinMaxOp>(a, stream)
                                   : extreme_like<ArgOp>(a, stream);
}

} // namespace ga_red
