// quantile.cuh -- NumPy's median and quantile methods from two order
// statistics, shared by radix selection (order_stats.cu) and the sorted-order
// pick along an axis (sort.cu).
//
// NumPy computes these with separate ufunc calls, so every operation is
// rounded in its own dtype: the intrinsics below stop nvcc from contracting
// a multiply and an add into one FMA, which would round differently.
//
// median:  (a + b) / 2 in the array's float type (float16 through float32,
//          as numpy.mean does), in float64 for integers and bool; a alone
//          when the count is odd.
// linear:  virtual index v = (n - 1) q, lo = floor(v), hi = lo + 1, weight
//          t = v - lo; when v >= n - 1 both are the last element and t is
//          v + 1 (NumPy's index -1).  diff = b - a in the array's dtype
//          (integers wrap), then a + diff t, or b - diff (1 - t) for t >= 0.5.
//          'weak' q (a Python scalar) keeps float arrays in their dtype;
//          'strong' q (an array) and integer arrays compute in float64.
//          The other interpolating methods differ only in v and t
//          (ga_quantile_ranks); lower, higher, nearest, inverted_cdf and
//          closest_observation pick one element (GA_Q_PICK).
#ifndef GA_QUANTILE_CUH
#define GA_QUANTILE_CUH

#include <math.h>
#include "sort_keys.cuh"

// Correctly rounded single operations (no FMA contraction).
__device__ __forceinline__ float q_add(float x, float y) { return __fadd_rn(x, y); }
__device__ __forceinline__ float q_sub(float x, float y) { return __fsub_rn(x, y); }
__device__ __forceinline__ float q_mul(float x, float y) { return __fmul_rn(x, y); }
__device__ __forceinline__ double q_add(double x, double y) { return __dadd_rn(x, y); }
__device__ __forceinline__ double q_sub(double x, double y) { return __dsub_rn(x, y); }
__device__ __forceinline__ double q_mul(double x, double y) { return __dmul_rn(x, y); }

// Ranks and weight for n > 0 valid (non-NaN) elements, as NumPy's
// _quantile computes them: a virtual index v in float64 (NumPy 2.4 on, q's
// kind only changes the dtype of the interpolation), the neighbouring
// ranks clamped to the ends, and the weight t, which some methods fix.
// Methods that pick an element give lo == hi.
__device__ inline void ga_quantile_ranks(int64_t n, double q, int mode, int method, int64_t *lo,
                                         int64_t *hi, double *t)
{
    if (mode == GA_Q_MEDIAN) {
        *lo = (n - 1) / 2;
        *hi = n / 2;
        *t = 0.5;
        return;
    }
    const double nd = (double)n, last = (double)(n - 1);
    double v, alpha = 0.0, beta = 0.0;
    *t = 0.0;
    switch (method) {
    case GA_QM_LOWER:
    case GA_QM_HIGHER:
    case GA_QM_NEAREST: {
        v = q_mul(last, q);
        v = method == GA_QM_LOWER ? floor(v) : method == GA_QM_HIGHER ? ceil(v) : rint(v);
        *lo = *hi = (int64_t)v;
        return;
    }
    case GA_QM_INVERTED_CDF:
    case GA_QM_CLOSEST_OBSERVATION: {
        v = q_sub(q_mul(nd, q), 1.0);
        if (method == GA_QM_CLOSEST_OBSERVATION)
            v = q_sub(v, 0.5);
        const double p = floor(v);
        const bool at_previous = v - p == 0.0 &&
                                 (method == GA_QM_INVERTED_CDF || fmod(p, 2.0) != 0.0);
        int64_t r = (int64_t)(at_previous ? p : p + 1.0);
        r = r < 0 ? 0 : r > n - 1 ? n - 1 : r;
        *lo = *hi = r;
        return;
    }
    case GA_QM_MIDPOINT: {
        const double w = q_mul(last, q);
        v = q_mul(0.5, q_add(floor(w), ceil(w)));
        break;
    }
    case GA_QM_AVERAGED_INVERTED_CDF:
        v = q_sub(q_mul(nd, q), 1.0);
        break;
    case GA_QM_INTERPOLATED_INVERTED_CDF: alpha = 0.0; beta = 1.0; goto continuous;
    case GA_QM_HAZEN: alpha = 0.5; beta = 0.5; goto continuous;
    case GA_QM_WEIBULL: alpha = 0.0; beta = 0.0; goto continuous;
    case GA_QM_MEDIAN_UNBIASED: alpha = 1 / 3.0; beta = 1 / 3.0; goto continuous;
    case GA_QM_NORMAL_UNBIASED: alpha = 3 / 8.0; beta = 3 / 8.0; goto continuous;
    continuous:
        // n q + (alpha + q (1 - alpha - beta)) - 1, operation by operation
        v = q_sub(q_add(q_mul(nd, q), q_add(alpha, q_mul(q, q_sub(q_sub(1.0, alpha), beta)))),
                  1.0);
        break;
    default:
        v = q_mul(last, q);
        break;
    }
    double p;
    if (v >= last) {
        *lo = *hi = n - 1;
        p = -1.0;
    } else if (v < 0.0) {
        *lo = *hi = 0;
        p = 0.0;
    } else {
        p = floor(v);
        *lo = (int64_t)p;
        *hi = *lo + 1;
    }
    double g = q_sub(v, p);
    if (method == GA_QM_AVERAGED_INVERTED_CDF)
        g = g == 0.0 ? 0.5 : 1.0;
    else if (method == GA_QM_MIDPOINT)
        g = fmod(v, 1.0) == 0.0 ? 0.0 : 0.5;
    *t = g;
}

// Whether the result of `mode` for element type `type` is float64 (else the
// element type itself).
__host__ __device__ inline bool ga_quantile_out_double(ga_type type, int mode)
{
    return mode == GA_Q_LINEAR_STRONG ||
           (mode != GA_Q_PICK && ga_key_kind_of(type) != GA_KEY_FLOAT);
}

// Arithmetic in the array's float type: float16 rounds each result.
template <class T> struct QArith {
    using C = T;
    static __device__ __forceinline__ C up(T x) { return x; }
    static __device__ __forceinline__ T down(C x) { return x; }
};
template <> struct QArith<__half> {
    using C = float;
    static __device__ __forceinline__ float up(__half x) { return __half2float(x); }
    static __device__ __forceinline__ __half down(float x) { return __float2half_rn(x); }
};

// A double rounded once to T.
template <class T> __device__ __forceinline__ T q_round(double x)
{
    if constexpr (ga_is_half<T>) return __double2half(x);
    else return (T)x;
}

template <class T> __device__ __forceinline__ double q_to_double(T x)
{
    if constexpr (ga_is_half<T>) return (double)__half2float(x);
    else return (double)x;
}

// diff = b - a in T's own arithmetic, as double.
template <class T> __device__ __forceinline__ double q_diff(T a, T b)
{
    if constexpr (std::is_same<T, bool>::value) {
        return (double)((int)b - (int)a);
    } else if constexpr (ga_is_float<T>) {
        using A = QArith<T>;
        return q_to_double(A::down(q_sub(A::up(b), A::up(a))));
    } else {
        using U = typename std::make_unsigned<T>::type;
        return (double)(T)(U)((U)b - (U)a);
    }
}

// NaN of the result type.
__device__ __forceinline__ void ga_quantile_nan(ga_type type, int mode, char *out)
{
    if (ga_quantile_out_double(type, mode))
        *(double *)out = __longlong_as_double(0x7ff8000000000000ll);
    else if (type == GA_FLOAT16)
        *(__half *)out = __ushort_as_half((unsigned short)0x7e00u);
    else if (type == GA_FLOAT32)
        *(float *)out = __int_as_float(0x7fc00000);
    else
        *(double *)out = __longlong_as_double(0x7ff8000000000000ll);
}

// The result from order statistics a (rank lo) and b (rank hi) of an array
// of T; `same`: lo == hi.  Writes T or double (ga_quantile_out_double).
template <class T>
__device__ void ga_quantile_value(int mode, T a, T b, bool same, double t, char *out)
{
    if (mode == GA_Q_PICK) {
        *(T *)out = a;
        return;
    }
    if constexpr (ga_is_float<T>) {
        using A = QArith<T>;
        using C = typename A::C;
        const C ca = A::up(a), cb = A::up(b);
        if (mode == GA_Q_MEDIAN) {
            // numpy.mean of the one or two middle elements.
            *(T *)out = same ? a : A::down(q_mul(q_add(ca, cb), (C)0.5));
        } else if (mode == GA_Q_LINEAR_WEAK) {
            // q a Python scalar: t and 1 - t become T (weak promotion).
            const C diff = A::up(A::down(q_sub(cb, ca)));
            C r = A::up(A::down(q_add(ca, A::up(A::down(q_mul(diff, A::up(q_round<T>(t))))))));
            if (t >= 0.5)
                r = A::up(A::down(q_sub(cb, A::up(A::down(q_mul(diff, A::up(q_round<T>(q_sub(1.0, t)))))))));
            *(T *)out = A::down(r);
        } else {
            const double diff = q_to_double(A::down(q_sub(cb, ca)));
            double r = q_add(q_to_double(a), q_mul(diff, t));
            if (t >= 0.5)
                r = q_sub(q_to_double(b), q_mul(diff, q_sub(1.0, t)));
            *(double *)out = r;
        }
    } else {
        const double da = (double)a, db = (double)b;
        if (mode == GA_Q_MEDIAN) {
            *(double *)out = same ? da : q_mul(q_add(da, db), 0.5);
        } else {
            const double diff = q_diff(a, b);
            double r = q_add(da, q_mul(diff, t));
            if (t >= 0.5)
                r = q_sub(db, q_mul(diff, q_sub(1.0, t)));
            *(double *)out = r;
        }
    }
}

#endif
