// reduce_nan.cu -- the nan* reductions of float and complex inputs
// (mode | GA_RED_SKIPNAN): nansum, nanprod, nanmin/nanmax, nanargmin/
// nanargmax, nanmean/nanvar/nanstd.  The operations are reduce.cuh's with
// NaN elements left out (SkipNan and the Nan*Op forms); integer and bool
// inputs hold no NaN and take the plain kernels (the host clears the flag).
#include "reduce.cuh"

namespace ga_red {

// ============================== launchers ==================================

template <class T>
static cudaError_t nan_kind(const ga_reduce_args &a, cudaStream_t s)
{
    constexpr bool cx = ga_is_complex<T>::value;
    using W = typename std::conditional<cx, ga_c128, double>::type;
    switch (a.kind) {
    case GA_RED_SUM: return launch<SkipNan<SumOp<W>>, T>(a, s);
    case GA_RED_PROD: return launch<SkipNan<ProdOp<W>>, T>(a, s);
    case GA_RED_MINMAX: return launch<NanMinMaxOp<W>, T>(a, s);
    case GA_RED_ARG: return launch<NanArgOp<W>, T>(a, s);
    case GA_RED_MOMENTS: return launch<NanMomentsOp<cx>, T>(a, s);
    default: return cudaErrorInvalidValue;
    }
}

cudaError_t launch_nan(const ga_reduce_args &a, cudaStream_t stream)
{
    switch (a.in_type) {   // dtype -> instantiation table (reduce.cuh: why a switch)
    case GA_FLOAT16: return nan_kind<__half>(a, stream);
    case GA_FLOAT32: return nan_kind<float>(a, stream);
    case GA_FLOAT64: return nan_kind<double>(a, stream);
    case GA_COMPLEX64: return nan_kind<ga_c64>(a, stream);
    case GA_COMPLEX128: return nan_kind<ga_c128>(a, stream);
    default: return cudaErrorInvalidValue;
    }
}

} // namespace ga_red
