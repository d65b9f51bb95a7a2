// sort.cu -- stable sorting by CUB's radix sort, and what is built on sorted
// order: sort and argsort along an axis, quantiles along an axis, unique.
//
// Every sort here is an argsort: the elements' keys (sort_keys.cuh) are
// sorted with their linear indices, and the consumers gather through the
// permutation.  Sorting along an axis sorts every segment (the elements of
// one row along that axis, consecutive in C order once the host has moved
// the axis last) in one radix sort: the segment number goes above the key
// bits, so only the bits in use are sorted:
//
//   key bits + segment bits <= 32: 32-bit combined keys, one sort
//                            <= 64: 64-bit combined keys, one sort
//   otherwise (64-bit dtypes, several segments): sort by value, then a
//                 stable sort by segment number, which keeps the value order.
//
// Only two CUB instantiations exist (32- and 64-bit keys with int64 values);
// one- and two-byte keys ride in 32-bit keys with fewer bits sorted.
#include <cub/device/device_radix_sort.cuh>

#include "quantile.cuh"

// ============================== kernels ====================================

// keys[i] = (segment << key_bits) | key(element i); perm[i] = i.  `combine`
// is off when the segment number is sorted by a second pass instead.
template <class KIN, class KOUT>
__global__ void __launch_bounds__(GA_BLOCK)
k_argsort_keys(int64_t n, const char *src, GA_PARAM ga_kshape sh, GA_PARAM ga_kstrides st, int kind,
               int64_t seg_len, int combine, KOUT *keys, int64_t *perm)
{
    GA_GRID_STRIDE(i, n) {
        const KIN bits = *(const KIN *)(src + ga_offset(i, sh, st));
        KOUT key = (KOUT)ga_to_key<KIN>(bits, kind, true);
        if constexpr (sizeof(KIN) < sizeof(KOUT)) {
            if (combine)
                key |= (KOUT)(i / seg_len) << (8 * sizeof(KIN));
        }
        keys[i] = key;
        perm[i] = i;
    }
}

// Second pass of the two-pass segmented sort: the segment of each position.
__global__ void __launch_bounds__(GA_BLOCK)
k_segment_keys(int64_t n, int64_t seg_len, const int64_t *perm, uint64_t *keys)
{
    GA_GRID_STRIDE(j, n) keys[j] = (uint64_t)(perm[j] / seg_len);
}

// dst (position j) = src (linear index perm[j]), both N-d over one shape.
template <class U>
__global__ void __launch_bounds__(GA_BLOCK)
k_sort_gather(int64_t n, const int64_t *perm, const char *src, GA_PARAM ga_kshape ssh,
              GA_PARAM ga_kstrides sst, char *dst, GA_PARAM ga_kshape dsh,
              GA_PARAM ga_kstrides dst_st)
{
    GA_GRID_STRIDE(j, n) {
        *(U *)(dst + ga_offset(j, dsh, dst_st)) = *(const U *)(src + ga_offset(perm[j], ssh, sst));
    }
}

// argsort's answer: the position of perm[j] within its segment.
__global__ void __launch_bounds__(GA_BLOCK)
k_argsort_finish(int64_t n, const int64_t *perm, int64_t seg_len, char *dst, GA_PARAM ga_kshape dsh,
                 GA_PARAM ga_kstrides dst_st)
{
    GA_GRID_STRIDE(j, n) {
        *(int64_t *)(dst + ga_offset(j, dsh, dst_st)) = perm[j] - (j / seg_len) * seg_len;
    }
}

template <class T> __device__ __forceinline__ bool pick_isnan(T x)
{
    if constexpr (ga_is_half<T>) return __hisnan(x);
    else if constexpr (std::is_floating_point<T>::value) return x != x;
    else return false;
}

// One quantile of one sorted segment per work item (q-major output).  NaNs
// sit at the end of each segment: the last element tells whether there are
// any; ignoring them, a binary search finds where they start.
template <class T>
__global__ void __launch_bounds__(GA_BLOCK)
k_quantile_pick(int64_t nseg, int64_t seg_len, const int64_t *perm, const char *src,
                GA_PARAM ga_kshape sh, GA_PARAM ga_kstrides st, GA_PARAM ga_quantile_args args,
                ga_type type, char *out)
{
    const int osize = ga_quantile_out_double(type, args.mode) ? 8 : (int)sizeof(T);
    GA_GRID_STRIDE(w, nseg * args.nq) {
        const int64_t qi = w / nseg, s = w - qi * nseg;
        const int64_t *p = perm + s * seg_len;
        char *o = out + w * osize;
        auto at = [&](int64_t r) { return *(const T *)(src + ga_offset(p[r], sh, st)); };
        int64_t valid = seg_len;
        if (pick_isnan(at(seg_len - 1))) {
            if (!args.ignore_nan) {
                ga_quantile_nan(type, args.mode, o);
                continue;
            }
            int64_t lo = 0, hi = seg_len - 1;
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo) / 2;
                if (pick_isnan(at(mid)))
                    hi = mid;
                else
                    lo = mid + 1;
            }
            valid = lo;
            if (valid == 0) {
                ga_quantile_nan(type, args.mode, o);
                continue;
            }
        }
        int64_t lo, hi;
        double t;
        ga_quantile_ranks(valid, args.q[qi], args.mode, args.method, &lo, &hi, &t);
        ga_quantile_value<T>(args.mode, at(lo), at(hi), lo == hi, t, o);
    }
}

// unique: flags[j] = 1 where sorted position j starts a new value.
template <class K>
__global__ void __launch_bounds__(GA_BLOCK)
k_unique_flags(int64_t n, const int64_t *perm, const K *src, int kind, int equal_nan,
               uint8_t *flags)
{
    GA_GRID_STRIDE(j, n) {
        const K cur = src[perm[j]];
        uint8_t f = 1;
        if (j > 0) {
            const K prev = src[perm[j - 1]];
            f = ga_to_key<K>(cur, kind, true) != ga_to_key<K>(prev, kind, true) ||
                (!equal_nan && ga_key_isnan<K>(cur, kind));
        }
        flags[j] = f;
    }
}

// unique: per group g starting at sorted position starts[g], the first
// occurrence (stable sort: the smallest original index) and the count.
__global__ void __launch_bounds__(GA_BLOCK)
k_unique_groups(int64_t ngroups, int64_t n, const int64_t *starts, const int64_t *perm,
                int64_t *first, int64_t *counts)
{
    GA_GRID_STRIDE(g, ngroups) {
        first[g] = perm[starts[g]];
        if (counts != nullptr)
            counts[g] = (g + 1 < ngroups ? starts[g + 1] : n) - starts[g];
    }
}

// unique: inverse[perm[j]] = the group holding sorted position j.
__global__ void __launch_bounds__(GA_BLOCK)
k_unique_inverse(int64_t n, int64_t ngroups, const int64_t *starts, const int64_t *perm,
                 int64_t *inverse)
{
    GA_GRID_STRIDE(j, n) {
        int64_t lo = 0, hi = ngroups;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (starts[mid] <= j)
                lo = mid + 1;
            else
                hi = mid;
        }
        inverse[perm[j]] = lo - 1;
    }
}

// ============================== launchers ==================================

namespace {

size_t round_up(size_t n) { return (n + 255) & ~(size_t)255; }

int bit_length(uint64_t v)
{
    int b = 0;
    while (v) {
        ++b;
        v >>= 1;
    }
    return b;
}

// How one argsort runs: key width in and out, bits sorted, passes.
struct SortPlan {
    int64_t n, nseg;
    int kin, kout;      // bytes
    int key_bits, seg_bits;
    int combine, two_pass;
    int end_bit;        // bits of the first sort
};

SortPlan plan_sort(ga_type type, int64_t n, int64_t seg_len)
{
    SortPlan p;
    p.n = n;
    p.nseg = seg_len > 0 ? n / seg_len : 0;
    p.kin = ga_key_width_of(type);
    p.key_bits = 8 * p.kin;
    p.seg_bits = p.nseg > 1 ? bit_length((uint64_t)(p.nseg - 1)) : 0;
    const int total = p.key_bits + p.seg_bits;
    p.kout = total <= 32 ? 4 : 8;
    p.two_pass = total > 64;
    p.combine = p.seg_bits > 0 && !p.two_pass;
    p.end_bit = p.combine ? total : p.key_bits;
    return p;
}

// CUB's temporary storage for the plan's sort(s): the larger of the passes.
template <class KOUT>
cudaError_t cub_sort_bytes(const SortPlan &p, size_t *bytes)
{
    cub::DoubleBuffer<KOUT> k(nullptr, nullptr);
    cub::DoubleBuffer<int64_t> v(nullptr, nullptr);
    cudaError_t err = cub::DeviceRadixSort::SortPairs(nullptr, *bytes, k, v, p.n, 0, p.end_bit);
    if (err != cudaSuccess || !p.two_pass)
        return err;
    size_t second = 0;
    err = cub::DeviceRadixSort::SortPairs(nullptr, second, k, v, p.n, 0, p.seg_bits);
    if (second > *bytes)
        *bytes = second;
    return err;
}

// The key-making launch of run_sort for the input's key width K.
template <class KOUT>
struct ArgsortKeysLaunch {
    int64_t n;
    const char *src;
    const ga_kshape *sh;
    const ga_kstrides *st;
    int kind;
    int64_t seg_len;
    int combine;
    KOUT *keys;
    int64_t *perm;
    cudaStream_t stream;
    template <class K> cudaError_t operator()()
    {
        k_argsort_keys<K, KOUT><<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, src, *sh, *st, kind,
                                                                     seg_len, combine, keys, perm);
        return cudaGetLastError();
    }
};

template <class KOUT>
cudaError_t run_sort(const SortPlan &p, ga_type type, const char *src, const ga_kshape *sh,
                     const ga_kstrides *st, int64_t seg_len, int64_t *perm, char *base,
                     size_t cub_bytes, cudaStream_t stream)
{
    const size_t kbytes = round_up((size_t)p.n * sizeof(KOUT));
    KOUT *k0 = (KOUT *)base, *k1 = (KOUT *)(base + kbytes);
    int64_t *p1 = (int64_t *)(base + 2 * kbytes);
    void *cub_temp = base + 2 * kbytes + round_up((size_t)p.n * 8);
    cudaError_t err = ga_visit_key(p.kin, ArgsortKeysLaunch<KOUT>{p.n, src, sh, st,
                                                                  ga_key_kind_of(type), seg_len,
                                                                  p.combine, k0, perm, stream});
    if (err != cudaSuccess)
        return err;
    cub::DoubleBuffer<KOUT> keys(k0, k1);
    cub::DoubleBuffer<int64_t> vals(perm, p1);
    size_t bytes = cub_bytes;
    err = cub::DeviceRadixSort::SortPairs(cub_temp, bytes, keys, vals, p.n, 0, p.end_bit, stream);
    if (err != cudaSuccess)
        return err;
    if constexpr (sizeof(KOUT) == 8) {
        if (p.two_pass) {
            k_segment_keys<<<ga_grid(p.n), GA_BLOCK, 0, stream>>>(p.n, seg_len, vals.Current(),
                                                                  (uint64_t *)keys.Current());
            if ((err = cudaGetLastError()) != cudaSuccess)
                return err;
            bytes = cub_bytes;
            err = cub::DeviceRadixSort::SortPairs(cub_temp, bytes, keys, vals, p.n, 0,
                                                  p.seg_bits, stream);
            if (err != cudaSuccess)
                return err;
        }
    }
    if (vals.Current() != perm)
        return cudaMemcpyAsync(perm, vals.Current(), (size_t)p.n * 8, cudaMemcpyDeviceToDevice,
                               stream);
    return cudaSuccess;
}

struct GatherLaunch {
    int64_t n; const int64_t *perm; const char *src; const ga_kshape *ssh; const ga_kstrides *sst;
    char *dst; const ga_kshape *dsh; const ga_kstrides *dst_st; cudaStream_t stream;
    template <class U> cudaError_t operator()()
    {
        k_sort_gather<U><<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, perm, src, *ssh, *sst, dst,
                                                              *dsh, *dst_st);
        return cudaGetLastError();
    }
};

struct PickLaunch {
    int64_t nseg, seg_len; const int64_t *perm; const char *src; const ga_kshape *sh;
    const ga_kstrides *st; const ga_quantile_args *args; ga_type type; char *out;
    cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        if constexpr (ga_is_complex<T>::value) {
            return cudaErrorInvalidValue;
        } else {
            const int64_t work = nseg * args->nq;
            k_quantile_pick<T><<<ga_grid(work), GA_BLOCK, 0, stream>>>(nseg, seg_len, perm, src,
                                                                       *sh, *st, *args, type, out);
            return cudaGetLastError();
        }
    }
};

struct UniqueFlagsLaunch {
    int64_t n; const int64_t *perm; const char *src; int kind, equal_nan; uint8_t *flags;
    cudaStream_t stream;
    template <class K> cudaError_t operator()()
    {
        k_unique_flags<K><<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, perm, (const K *)src, kind,
                                                               equal_nan, flags);
        return cudaGetLastError();
    }
};

} // namespace

extern "C" cudaError_t ga_launch_argsort(ga_type type, int64_t seg_len, const char *src,
                                         const ga_kshape *shape, const ga_kstrides *strides,
                                         int64_t *perm, void *temp, size_t *temp_bytes,
                                         cudaStream_t stream)
{
    if (ga_key_kind_of(type) < 0)
        return cudaErrorInvalidValue;
    const int64_t n = ga_kshape_size(shape);
    if (n == 0 || seg_len <= 0) {
        if (temp == nullptr)
            *temp_bytes = 0;
        return cudaSuccess;
    }
    const SortPlan p = plan_sort(type, n, seg_len);
    size_t cub_bytes = 0;
    cudaError_t err = p.kout == 4 ? cub_sort_bytes<uint32_t>(p, &cub_bytes)
                                  : cub_sort_bytes<uint64_t>(p, &cub_bytes);
    if (err != cudaSuccess)
        return err;
    if (temp == nullptr) {
        *temp_bytes = 2 * round_up((size_t)n * p.kout) + round_up((size_t)n * 8) + cub_bytes;
        return cudaSuccess;
    }
    if (p.kout == 4)
        return run_sort<uint32_t>(p, type, src, shape, strides, seg_len, perm, (char *)temp,
                                  cub_bytes, stream);
    return run_sort<uint64_t>(p, type, src, shape, strides, seg_len, perm, (char *)temp,
                              cub_bytes, stream);
}

extern "C" cudaError_t ga_launch_sort_gather(int itemsize, const int64_t *perm, const char *src,
                                             const ga_kshape *src_shape,
                                             const ga_kstrides *src_strides, char *dst,
                                             const ga_kshape *dst_shape,
                                             const ga_kstrides *dst_strides, cudaStream_t stream)
{
    const int64_t n = ga_kshape_size(dst_shape);
    if (n == 0)
        return cudaSuccess;
    return ga_visit_size(itemsize, GatherLaunch{n, perm, src, src_shape, src_strides, dst,
                                                dst_shape, dst_strides, stream});
}

extern "C" cudaError_t ga_launch_argsort_finish(const int64_t *perm, int64_t seg_len, char *dst,
                                                const ga_kshape *dst_shape,
                                                const ga_kstrides *dst_strides,
                                                cudaStream_t stream)
{
    const int64_t n = ga_kshape_size(dst_shape);
    if (n == 0)
        return cudaSuccess;
    k_argsort_finish<<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, perm, seg_len, dst, *dst_shape,
                                                          *dst_strides);
    return cudaGetLastError();
}

extern "C" cudaError_t ga_launch_quantile_pick(ga_type type, const ga_quantile_args *args,
                                               int64_t nseg, int64_t seg_len,
                                               const int64_t *perm, const char *src,
                                               const ga_kshape *shape,
                                               const ga_kstrides *strides, char *out,
                                               cudaStream_t stream)
{
    if (nseg == 0 || args->nq == 0)
        return cudaSuccess;
    if (seg_len <= 0 || args->nq > GA_QMAX)
        return cudaErrorInvalidValue;
    return ga_visit_type(type, PickLaunch{nseg, seg_len, perm, src, shape, strides, args, type,
                                          out, stream});
}

extern "C" cudaError_t ga_launch_unique_flags(ga_type type, int64_t n, const int64_t *perm,
                                              const char *src, int equal_nan, uint8_t *flags,
                                              cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    const int kind = ga_key_kind_of(type);
    if (kind < 0)
        return cudaErrorInvalidValue;
    return ga_visit_key(ga_key_width_of(type),
                        UniqueFlagsLaunch{n, perm, src, kind, equal_nan, flags, stream});
}

extern "C" cudaError_t ga_launch_unique_finish(int64_t n, int64_t ngroups, const int64_t *starts,
                                               const int64_t *perm, int64_t *first,
                                               int64_t *counts, int64_t *inverse,
                                               cudaStream_t stream)
{
    if (ngroups > 0) {
        k_unique_groups<<<ga_grid(ngroups), GA_BLOCK, 0, stream>>>(ngroups, n, starts, perm,
                                                                   first, counts);
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess)
            return err;
    }
    if (inverse != nullptr && n > 0) {
        k_unique_inverse<<<ga_grid(n), GA_BLOCK, 0, stream>>>(n, ngroups, starts, perm, inverse);
        return cudaGetLastError();
    }
    return cudaSuccess;
}

namespace {

// ga_sort_keys_host's loop for the key width K.
struct HostKeys {
    int kind, canon_zero;
    const void *src;
    int64_t n;
    uint64_t *keys;
    template <class K> cudaError_t operator()()
    {
        for (int64_t i = 0; i < n; ++i)
            keys[i] = ga_to_key<K>(((const K *)src)[i], kind, canon_zero);
        return cudaSuccess;
    }
};

} // namespace

extern "C" void ga_sort_keys_host(ga_type type, int canon_zero, const void *src, int64_t n,
                                  uint64_t *keys)
{
    (void)ga_visit_key(ga_key_width_of(type),
                       HostKeys{ga_key_kind_of(type), canon_zero, src, n, keys});
}
