// reduce_sum.cu -- sum and prod.  Every integer input accumulates in
// uint64: two's complement sums and products wrap identically whatever the
// signedness, so the host's narrower result dtypes (dtype=int8) come out as
// NumPy's by truncation.  bool reads as uint8 and uint64 as int64 (same
// bits), floats accumulate in double, complex in complex128.  The mean of
// an integer input (GA_RED_MEAN) sums in double instead, as NumPy's does.
#include "reduce.cuh"

namespace ga_red {

// ============================== launchers ==================================

template <template <class> class Op>
static cudaError_t sum_like(const ga_reduce_args &a, cudaStream_t s)
{
    switch (a.in_type) {   // dtype -> instantiation table (reduce.cuh: why a switch)
    case GA_BOOL:
    case GA_UINT8: return launch<Op<uint64_t>, uint8_t>(a, s);
    case GA_INT8: return launch<Op<uint64_t>, int8_t>(a, s);
    case GA_INT16: return launch<Op<uint64_t>, int16_t>(a, s);
    case GA_UINT16: return launch<Op<uint64_t>, uint16_t>(a, s);
    case GA_INT32: return launch<Op<uint64_t>, int32_t>(a, s);
    case GA_UINT32: return launch<Op<uint64_t>, uint32_t>(a, s);
    case GA_INT64:
    case GA_UINT64: return launch<Op<uint64_t>, uint64_t>(a, s);
    case GA_FLOAT16: return launch<Op<double>, __half>(a, s);
    case GA_FLOAT32: return launch<Op<double>, float>(a, s);
    case GA_FLOAT64: return launch<Op<double>, double>(a, s);
    case GA_COMPLEX64: return launch<Op<ga_c128>, ga_c64>(a, s);
    case GA_COMPLEX128: return launch<Op<ga_c128>, ga_c128>(a, s);
    default: return cudaErrorInvalidValue;
    }
}

cudaError_t launch_sum_prod(const ga_reduce_args &a, cudaStream_t stream)
{
    if (a.kind == GA_RED_SUM && (a.mode & GA_RED_MEAN))
        return launch_integer<SumOp<double>>(a, stream);  // in double, then divided
    return a.kind == GA_RED_SUM ? sum_like<SumOp>(a, stream) : sum_like<ProdOp>(a, stream);
}

} // namespace ga_red
