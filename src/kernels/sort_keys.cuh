// sort_keys.cuh -- NumPy's sort order as unsigned integers.
//
// Radix sort, radix selection, binary search and min/max all work on an
// unsigned key of the element's width whose integer order is NumPy's order
// of the values: unsigned integers and bool as they are, signed integers with
// the sign bit flipped, floats with the sign bit flipped for positives and
// every bit flipped for negatives.  Every NaN becomes the key of the
// canonical quiet NaN, above +inf, so NaNs sort last and compare equal to
// each other, as in NumPy.  With `canon_zero`, -0.0 takes the key of +0.0
// (sorting, searching and unique treat them as equal, so a stable sort
// keeps their order); selection leaves it off, so a key decodes back to the
// exact element.
//
// A key depends only on the element's bits, its width and its kind, so the
// kernels are instantiated per width (1, 2, 4, 8 bytes) with the kind a
// run-time argument -- four instantiations serve all eleven real dtypes.
// Everything here is __host__ __device__ so the host tests can run it.
#ifndef GA_SORT_KEYS_CUH
#define GA_SORT_KEYS_CUH

#include "kernel_common.cuh"

enum ga_key_kind { GA_KEY_UNSIGNED = 0, GA_KEY_SIGNED = 1, GA_KEY_FLOAT = 2 };

// Kind and width of a real type code; kind -1 for complex (not orderable
// here) and unknown codes.
__host__ __device__ inline int ga_key_kind_of(ga_type t)
{
    switch (t) {
    case GA_BOOL: case GA_UINT8: case GA_UINT16: case GA_UINT32: case GA_UINT64:
        return GA_KEY_UNSIGNED;
    case GA_INT8: case GA_INT16: case GA_INT32: case GA_INT64:
        return GA_KEY_SIGNED;
    case GA_FLOAT16: case GA_FLOAT32: case GA_FLOAT64:
        return GA_KEY_FLOAT;
    default:
        return -1;
    }
}

__host__ __device__ inline int ga_key_width_of(ga_type t)
{
    switch (t) {
    case GA_BOOL: case GA_INT8: case GA_UINT8: return 1;
    case GA_INT16: case GA_UINT16: case GA_FLOAT16: return 2;
    case GA_INT32: case GA_UINT32: case GA_FLOAT32: return 4;
    case GA_INT64: case GA_UINT64: case GA_FLOAT64: return 8;
    default: return 0;
    }
}

template <class K> struct ga_float_bits;
template <> struct ga_float_bits<uint16_t> {
    static constexpr uint16_t exp = 0x7c00u, qnan = 0x7e00u;
};
template <> struct ga_float_bits<uint32_t> {
    static constexpr uint32_t exp = 0x7f800000u, qnan = 0x7fc00000u;
};
template <> struct ga_float_bits<uint64_t> {
    static constexpr uint64_t exp = 0x7ff0000000000000ull, qnan = 0x7ff8000000000000ull;
};

template <class K> __host__ __device__ constexpr K ga_sign_bit() { return (K)((K)1 << (8 * sizeof(K) - 1)); }

// Whether raw bits of a float of width K are a NaN (false for other kinds
// and for one-byte keys, which are never floats).
template <class K> __host__ __device__ inline bool ga_key_isnan(K bits, int kind)
{
    if constexpr (sizeof(K) == 1) {
        return false;
    } else {
        const K mag = (K)(bits & (K)~ga_sign_bit<K>());
        return kind == GA_KEY_FLOAT && mag > ga_float_bits<K>::exp;
    }
}

// The key of a float's raw bits (sign and magnitude): positives above
// negatives, the magnitude's order reversed for negatives.
template <class K> __host__ __device__ __forceinline__ K ga_float_bits_key(K bits)
{
    constexpr K sign = ga_sign_bit<K>();
    return (bits & sign) ? (K)~bits : (K)(bits | sign);
}

// The key of raw bits taken as they are: the order-preserving bijection
// alone, every NaN payload and both zeros keeping keys of their own.
// Sigma clipping (stats.cu) and per-label statistics (measure.cu) encode
// with it directly, where no NaN is counted and -0.0 is folded (or not) by
// the caller; ga_to_key canonicalises first.
template <class K> __host__ __device__ __forceinline__ K ga_bits_to_key(K bits, int kind)
{
    if constexpr (sizeof(K) > 1) {
        if (kind == GA_KEY_FLOAT)
            return ga_float_bits_key<K>(bits);
    }
    return kind == GA_KEY_SIGNED ? (K)(bits ^ ga_sign_bit<K>()) : bits;
}

// The key of an element's raw bits.
template <class K> __host__ __device__ inline K ga_to_key(K bits, int kind, bool canon_zero)
{
    if constexpr (sizeof(K) > 1) {
        if (kind == GA_KEY_FLOAT) {
            if (ga_key_isnan(bits, kind))
                bits = ga_float_bits<K>::qnan;
            else if (canon_zero && (K)(bits & (K)~ga_sign_bit<K>()) == 0)
                bits = 0;
            return ga_float_bits_key<K>(bits);
        }
    }
    return kind == GA_KEY_SIGNED ? (K)(bits ^ ga_sign_bit<K>()) : bits;
}

// The raw bits of a key (the inverse of ga_bits_to_key, and of ga_to_key up
// to NaN payloads and, with canon_zero, the sign of zero).
template <class K> __host__ __device__ inline K ga_from_key(K key, int kind)
{
    constexpr K sign = ga_sign_bit<K>();
    if constexpr (sizeof(K) > 1) {
        if (kind == GA_KEY_FLOAT)
            return (key & sign) ? (K)(key & (K)~sign) : (K)~key;
    }
    return kind == GA_KEY_SIGNED ? (K)(key ^ sign) : key;
}

// The same bits as another type of the same width (a key's element, an
// element's key).
template <class T, class K> __host__ __device__ __forceinline__ T ga_bits_as(K bits)
{
    static_assert(sizeof(T) == sizeof(K), "width");
    union {
        K k;
        T t;
    } u;
    u.k = bits;
    return u.t;
}

// Visit the unsigned key type of a width: f.template operator()<K>().
template <class F> __host__ inline cudaError_t ga_visit_key(int width, F &&f)
{
    return ga_visit_size(width, ga_only<uint8_t, uint16_t, uint32_t, uint64_t>(f));
}

#endif
