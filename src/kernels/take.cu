// take.cu -- gather and scatter through integer index arrays: take, put,
// and NumPy's integer-array ("fancy") indexing in get and set.
//
// One kernel serves all of them.  The host reduces an indexing expression
// to an iteration space R (the result's shape) in which every operand has
// byte strides: the indexed array's non-indexed dims, the other side (the
// result for a gather, the broadcast values for a scatter), and each int64
// index array (broadcast over R, stride 0 elsewhere).  Element r of R reads
// index k at its offset, checks or wraps it against the length of the axis
// it indexes, and adds index * axis_stride to the indexed array's offset.
//
// Out-of-range indices never touch memory: in GA_TAKE_RAISE mode the first
// bad index (which array, what value) is recorded in `error` and the element
// is skipped; the host reads the record and raises IndexError.  Indices the
// host already checked (host-side index arrays, nonzero's output, and device
// indices a GA_TAKE_CHECK launch has validated before a scatter) run in
// GA_TAKE_TRUSTED mode, without the record and without a synchronisation;
// they are in [-len, len), and negative ones still count from the end.
// Keyed by element size, as every type-blind kernel.
//
// A row gather (random permutations, shuffle) moves whole rows of a
// C-contiguous array, in the widest units (up to 16 bytes) that the
// pointers and the row length allow.
#include "kernel_common.cuh"

// ============================== kernels ====================================

template <class U>
__global__ void __launch_bounds__(GA_BLOCK)
k_take(int64_t n, int direction, GA_PARAM ga_take_args args, char *base, char *other,
       unsigned long long *error)
{
    GA_GRID_STRIDE(r, n) {
        int64_t ob = 0, oo = 0, oi[GA_TAKE_MAX];
        for (int k = 0; k < args.nindex; ++k)
            oi[k] = 0;
        int64_t i = r;
        for (int d = args.shape.ndim - 1; d >= 0; --d) {
            const int64_t len = args.shape.shape[d];
            const int64_t q = d > 0 ? i / len : 0;
            const int64_t c = d > 0 ? i - q * len : i;
            ob += c * args.base_strides.s[d];
            oo += c * args.other_strides.s[d];
            for (int k = 0; k < args.nindex; ++k)
                oi[k] += c * args.index_strides[k].s[d];
            i = q;
        }
        bool ok = true;
        for (int k = 0; k < args.nindex; ++k) {
            int64_t idx = *(const int64_t *)((const char *)args.index[k] + oi[k]);
            const int64_t len = args.axis_len[k];
            if (args.mode == GA_TAKE_WRAP) {
                idx %= len;
                if (idx < 0)
                    idx += len;
            } else if (args.mode == GA_TAKE_CLIP) {
                idx = idx < 0 ? 0 : idx >= len ? len - 1 : idx;
            } else {
                // RAISE and TRUSTED: negative indices count from the end
                if (idx < 0)
                    idx += len;
                if (args.mode == GA_TAKE_RAISE && (idx < 0 || idx >= len)) {
                    if (atomicCAS(error, 0ull, (unsigned long long)(k + 1)) == 0ull)
                        error[1] = (unsigned long long)*(const int64_t *)(
                            (const char *)args.index[k] + oi[k]);
                    ok = false;
                    break;
                }
            }
            ob += idx * args.axis_stride[k];
        }
        if (!ok || direction == GA_TAKE_CHECK)
            continue;
        if (direction == GA_TAKE_GATHER)
            *(U *)(other + oo) = *(const U *)(base + ob);
        else
            *(U *)(base + ob) = *(const U *)(other + oo);
    }
}

// dst row r = src row index[r], rows of `row_units` units of type U.
template <class U>
__global__ void __launch_bounds__(GA_BLOCK)
k_gather_rows(int64_t nrows, int64_t row_units, U *dst, const U *src, const int64_t *index)
{
    GA_GRID_STRIDE(t, nrows * row_units) {
        const int64_t r = t / row_units;
        dst[t] = src[index[r] * row_units + (t - r * row_units)];
    }
}

// ============================== launchers ==================================

namespace {
struct TakeLaunch {
    int direction; const ga_take_args *args; char *base; char *other;
    unsigned long long *error; cudaStream_t stream;
    template <class U> cudaError_t operator()()
    {
        const int64_t n = ga_kshape_size(&args->shape);
        k_take<U><<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, direction, *args, base, other, error);
        return cudaGetLastError();
    }
};
template <class U>
cudaError_t launch_gather(int64_t nrows, int64_t row_bytes, char *dst, const char *src,
                          const int64_t *index, cudaStream_t stream)
{
    const int64_t units = row_bytes / (int64_t)sizeof(U);
    k_gather_rows<U><<<ga_grid(nrows * units), GA_BLOCK, 0, stream>>>(
        nrows, units, (U *)dst, (const U *)src, index);
    return cudaGetLastError();
}
} // namespace

extern "C" cudaError_t ga_launch_take(int itemsize, int direction, const ga_take_args *args,
                                      char *base, char *other, int64_t *error,
                                      cudaStream_t stream)
{
    if (args->nindex < 0 || args->nindex > GA_TAKE_MAX)
        return cudaErrorInvalidValue;
    if (args->mode == GA_TAKE_RAISE && error == nullptr)
        return cudaErrorInvalidValue;
    if (ga_kshape_size(&args->shape) == 0)
        return cudaSuccess;
    return ga_visit_size(itemsize, TakeLaunch{direction, args, base, other,
                                              (unsigned long long *)error, stream});
}

extern "C" cudaError_t ga_launch_gather_rows(int64_t nrows, int64_t row_bytes, char *dst,
                                             const char *src, const int64_t *index,
                                             cudaStream_t stream)
{
    if (nrows == 0 || row_bytes == 0)
        return cudaSuccess;
    const uintptr_t bits = (uintptr_t)dst | (uintptr_t)src | (uintptr_t)row_bytes;
    if ((bits & 15) == 0) return launch_gather<uint4>(nrows, row_bytes, dst, src, index, stream);
    if ((bits & 7) == 0) return launch_gather<uint64_t>(nrows, row_bytes, dst, src, index, stream);
    if ((bits & 3) == 0) return launch_gather<uint32_t>(nrows, row_bytes, dst, src, index, stream);
    if ((bits & 1) == 0) return launch_gather<uint16_t>(nrows, row_bytes, dst, src, index, stream);
    return launch_gather<uint8_t>(nrows, row_bytes, dst, src, index, stream);
}
