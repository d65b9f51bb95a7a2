// ufunc_ops.cuh -- the elementwise operations as functors over a compute
// type C: the element type itself for bool and integers, float for float16
// and float32, double for float64, a complex class for complex types
// (thrust::complex in the package's kernels; libcu++'s cuda::std::complex in
// kernels compiled at run time, since Thrust's header needs the host's
// <cmath>, which NVRTC lacks).
// Each functor follows NumPy's definition of the operation (integer division
// by zero gives 0 as NumPy does, floor division and remainder take the sign
// of the divisor, NaN propagates through maximum/minimum and not through
// fmax/fmin, comparisons of complex numbers are lexicographic).
#ifndef GA_UFUNC_OPS_CUH
#define GA_UFUNC_OPS_CUH

#include "kernel_common.cuh"
#if defined(__CUDACC_RTC__) && defined(GA_RTC_COMPLEX)
#include <cuda/std/complex>
namespace ga_cx_ns = ::cuda::std;
#elif defined(__CUDACC_RTC__)
// A run-time kernel without complex operands: declarations only, so the
// complex branches of the functors (never instantiated) name something,
// without the second it takes NVRTC to read <cuda/std/complex>.  The
// generator defines GA_RTC_COMPLEX when a complex dtype is involved.
namespace ga_cx_ns {
template <class T> struct complex;
#define GA_CX_DECL(f) template <class T> __device__ complex<T> f(const complex<T> &);
GA_CX_DECL(sqrt) GA_CX_DECL(exp) GA_CX_DECL(log) GA_CX_DECL(log10) GA_CX_DECL(sin)
GA_CX_DECL(cos) GA_CX_DECL(tan) GA_CX_DECL(asin) GA_CX_DECL(acos) GA_CX_DECL(atan)
GA_CX_DECL(sinh) GA_CX_DECL(cosh) GA_CX_DECL(tanh) GA_CX_DECL(asinh) GA_CX_DECL(acosh)
GA_CX_DECL(atanh) GA_CX_DECL(conj)
#undef GA_CX_DECL
template <class T> __device__ T abs(const complex<T> &);
template <class T> __device__ complex<T> pow(const complex<T> &, const complex<T> &);
}
#else
#include <thrust/complex.h>
namespace ga_cx_ns = ::thrust;
#endif

typedef bool ga_t_b;
typedef int8_t ga_t_i8;
typedef int16_t ga_t_i16;
typedef int32_t ga_t_i32;
typedef int64_t ga_t_i64;
typedef uint8_t ga_t_u8;
typedef uint16_t ga_t_u16;
typedef uint32_t ga_t_u32;
typedef uint64_t ga_t_u64;
typedef __half ga_t_f16;
typedef float ga_t_f32;
typedef double ga_t_f64;
typedef ga_c64 ga_t_c64;
typedef ga_c128 ga_t_c128;

// ---- compute types, loading and storing -----------------------------------
template <class T> struct ga_compute { using type = T; };
template <> struct ga_compute<__half> { using type = float; };
template <> struct ga_compute<ga_c64> { using type = ga_cx_ns::complex<float>; };
template <> struct ga_compute<ga_c128> { using type = ga_cx_ns::complex<double>; };

template <class T> struct ga_is_tcomplex : ga_false_type {};
template <class P> struct ga_is_tcomplex<ga_cx_ns::complex<P>> : ga_true_type {};

template <class T>
__device__ __forceinline__ typename ga_compute<T>::type ga_load(T v)
{
    if constexpr (ga_is_half<T>) return __half2float(v);
    else if constexpr (ga_is_complex<T>::value) return typename ga_compute<T>::type(v.re, v.im);
    else return v;
}

template <class O, class R>
__device__ __forceinline__ O ga_store(R r)
{
    if constexpr (ga_is_half<O>) return __float2half((float)r);
    else if constexpr (ga_is_complex<O>::value) {
        using P = typename ga_complex_part<O>::type;
        if constexpr (ga_is_tcomplex<R>::value) return O{(P)r.real(), (P)r.imag()};
        else return O{(P)r, (P)0};
    } else return (O)r;
}

template <class C> constexpr bool ga_cx = ga_is_tcomplex<C>::value;
template <class C> constexpr bool ga_int = ga_integral<C> && !ga_same<C, bool>;
template <class C> constexpr bool ga_sint = ga_int<C> && ga_signed<C>;
template <class C> constexpr bool ga_flt = ga_floating<C>;

#define GA_BINOP(name) struct op_##name { static constexpr int nin = 2; \
    template <class C> __device__ __forceinline__ auto operator()(C a, C b) const
#define GA_UNOP(name) struct op_##name { static constexpr int nin = 1; \
    template <class C> __device__ __forceinline__ auto operator()(C a) const
#define GA_END };

// ---- arithmetic ------------------------------------------------------------
GA_BINOP(add) { if constexpr (ga_same<C, bool>) return (bool)(a || b); else return (C)(a + b); } GA_END
GA_BINOP(subtract) { return (C)(a - b); } GA_END
GA_BINOP(multiply) { if constexpr (ga_same<C, bool>) return (bool)(a && b); else return (C)(a * b); } GA_END
GA_BINOP(true_divide) { return (C)(a / b); } GA_END

// NumPy's divmod for floats (npy_divmod): floor quotient and remainder with
// the sign of the divisor, exact for representable results.
template <class C>
__device__ __forceinline__ C ga_fdivmod(C a, C b, C *modulus)
{
    C mod = fmod(a, b);
    if (b == 0) {
        *modulus = mod;
        return a / b;
    }
    C div = (a - mod) / b;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) {
            mod += b;
            div -= (C)1;
        }
    } else {
        mod = copysign((C)0, b);
    }
    C floordiv;
    if (div != 0) {
        floordiv = floor(div);
        if (div - floordiv > (C)0.5) floordiv += (C)1;
    } else {
        floordiv = copysign((C)0, a / b);
    }
    *modulus = mod;
    return floordiv;
}

GA_BINOP(floor_divide)
{
    if constexpr (ga_flt<C>) { C m; return ga_fdivmod(a, b, &m); }
    else if constexpr (ga_sint<C>) {
        if (b == 0) return (C)0;
        if (b == (C)-1) return (C)(0 - (ga_unsigned<C>)a);
        C q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
        return q;
    } else return (C)(b == 0 ? 0 : a / b);
}
GA_END
GA_BINOP(remainder)
{
    if constexpr (ga_flt<C>) { C m; ga_fdivmod(a, b, &m); return m; }
    else if constexpr (ga_sint<C>) {
        if (b == 0 || b == (C)-1) return (C)0;
        C r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    } else return (C)(b == 0 ? 0 : a % b);
}
GA_END
GA_BINOP(fmod)
{
    if constexpr (ga_flt<C>) return (C)fmod(a, b);
    else if constexpr (ga_sint<C>) return (C)(b == 0 || b == (C)-1 ? 0 : a % b);
    else return (C)(b == 0 ? 0 : a % b);
}
GA_END

// Integer powers by squaring; a negative exponent gives 0 (NumPy raises
// ValueError on the host; a kernel cannot).
GA_BINOP(power)
{
    if constexpr (ga_int<C>) {
        if constexpr (ga_sint<C>) if (b < 0) return (C)(a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0));
        C r = 1;
        ga_unsigned<C> e = b;
        while (e) {
            if (e & 1) r = (C)(r * a);
            a = (C)(a * a);
            e >>= 1;
        }
        return r;
    } else if constexpr (ga_cx<C>) {
        if (b.imag() == 0 && b.real() == 2) return a * a;
        if (b.imag() == 0 && b.real() == 1) return a;
        if (b.imag() == 0 && b.real() == 0) return C(1);
        return ga_cx_ns::pow(a, b);
    } else return (C)pow(a, b);
}
GA_END
GA_BINOP(float_power) { if constexpr (ga_cx<C>) return ga_cx_ns::pow(a, b); else return (C)pow(a, b); } GA_END

// ---- comparisons -----------------------------------------------------------
template <class C>
__device__ __forceinline__ bool ga_lt(C a, C b)
{
    if constexpr (ga_cx<C>)
        return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
    else return a < b;
}
template <class C>
__device__ __forceinline__ bool ga_le(C a, C b)
{
    if constexpr (ga_cx<C>)
        return a.real() < b.real() || (a.real() == b.real() && a.imag() <= b.imag());
    else return a <= b;
}
GA_BINOP(equal) { return (bool)(a == b); } GA_END
GA_BINOP(not_equal) { return (bool)(a != b); } GA_END
GA_BINOP(less) { return ga_lt(a, b); } GA_END
GA_BINOP(less_equal) { return ga_le(a, b); } GA_END
GA_BINOP(greater) { return ga_lt(b, a); } GA_END
GA_BINOP(greater_equal) { return ga_le(b, a); } GA_END

template <class C>
__device__ __forceinline__ bool ga_isnan_any(C a)
{
    if constexpr (ga_cx<C>) return isnan(a.real()) || isnan(a.imag());
    else if constexpr (ga_flt<C>) return isnan(a);
    else return false;
}
GA_BINOP(maximum) { return ga_isnan_any(a) ? a : (ga_isnan_any(b) ? b : (ga_le(b, a) ? a : b)); } GA_END
GA_BINOP(minimum) { return ga_isnan_any(a) ? a : (ga_isnan_any(b) ? b : (ga_le(a, b) ? a : b)); } GA_END
GA_BINOP(fmax) { return ga_isnan_any(b) ? a : (ga_isnan_any(a) ? b : (ga_le(b, a) ? a : b)); } GA_END
GA_BINOP(fmin) { return ga_isnan_any(b) ? a : (ga_isnan_any(a) ? b : (ga_le(a, b) ? a : b)); } GA_END

// ---- bits and logic --------------------------------------------------------
GA_BINOP(bitwise_and) { return (C)(a & b); } GA_END
GA_BINOP(bitwise_or) { return (C)(a | b); } GA_END
GA_BINOP(bitwise_xor) { return (C)(a ^ b); } GA_END
// Shifts by the type's width or more give 0 (or -1 for negative right shifts), as NumPy.
GA_BINOP(left_shift)
{
    using U = ga_unsigned<C>;
    if ((uint64_t)(ga_unsigned<C>)b >= sizeof(C) * 8 || (ga_sint<C> && b < 0)) return (C)0;
    return (C)((U)a << (U)b);
}
GA_END
GA_BINOP(right_shift)
{
    if ((uint64_t)(ga_unsigned<C>)b >= sizeof(C) * 8 || (ga_sint<C> && b < 0))
        return (C)(ga_sint<C> && a < 0 ? -1 : 0);
    return (C)(a >> b);
}
GA_END
GA_BINOP(logical_and) { return (bool)(a && b); } GA_END
GA_BINOP(logical_or) { return (bool)(a || b); } GA_END
GA_BINOP(logical_xor) { return (bool)((bool)a != (bool)b); } GA_END
GA_UNOP(logical_not) { return (bool)!a; } GA_END

// ---- two-argument float functions -----------------------------------------
GA_BINOP(arctan2) { return (C)atan2(a, b); } GA_END
GA_BINOP(hypot) { return (C)hypot(a, b); } GA_END
GA_BINOP(logaddexp)
{
    if (a == b) return (C)(a + (C)0.693147180559945309417232121458176568);
    C t = a - b;
    if (t > 0) return (C)(a + log1p(exp(-t)));
    if (t <= 0) return (C)(b + log1p(exp(t)));
    return t;
}
GA_END
GA_BINOP(logaddexp2)
{
    const C ln2 = (C)0.693147180559945309417232121458176568;
    if (a == b) return (C)(a + 1);
    C t = a - b;
    if (t > 0) return (C)(a + log1p(exp2(-t)) / ln2);
    if (t <= 0) return (C)(b + log1p(exp2(t)) / ln2);
    return t;
}
GA_END
GA_BINOP(copysign) { return (C)copysign(a, b); } GA_END
GA_BINOP(nextafter) { return (C)nextafter(a, b); } GA_END
GA_BINOP(heaviside) { return (C)(isnan(a) ? a : (a == 0 ? b : (a < 0 ? (C)0 : (C)1))); } GA_END

// ---- one-argument arithmetic -----------------------------------------------
GA_UNOP(negative) { if constexpr (ga_int<C>) return (C)(0 - (ga_unsigned<C>)a); else return (C)(-a); } GA_END
GA_UNOP(positive) { return a; } GA_END
GA_UNOP(absolute)
{
    if constexpr (ga_cx<C>) return ga_cx_ns::abs(a);
    else if constexpr (ga_flt<C>) return (C)fabs(a);
    else if constexpr (ga_sint<C>) return (C)(a < 0 ? (C)(0 - (ga_unsigned<C>)a) : a);
    else return a;
}
GA_END
GA_UNOP(fabs) { return (C)fabs(a); } GA_END
GA_UNOP(sign)
{
    if constexpr (ga_cx<C>) {
        // NumPy 2: z / |z| (0 for 0, NaN propagates)
        if (a.real() == 0 && a.imag() == 0) return C(0);
        return a / ga_cx_ns::abs(a);
    } else if constexpr (ga_flt<C>) return (C)(isnan(a) ? a : (a > 0 ? (C)1 : (a < 0 ? (C)-1 : (C)0)));
    else if constexpr (ga_sint<C>) return (C)(a > 0 ? 1 : (a < 0 ? -1 : 0));
    else return (C)(a > 0 ? 1 : 0);
}
GA_END
GA_UNOP(square) { return (C)(a * a); } GA_END
GA_UNOP(reciprocal)
{
    if constexpr (ga_int<C>) {
        // NumPy: 1/a in integer arithmetic (0 for |a| > 1; division by zero gives 0 here)
        return (C)(a == 0 ? 0 : (C)1 / a);
    } else return (C)((C)1 / a);
}
GA_END
GA_UNOP(conjugate) { if constexpr (ga_cx<C>) return ga_cx_ns::conj(a); else return a; } GA_END
GA_UNOP(invert) { if constexpr (ga_same<C, bool>) return (bool)!a; else return (C)~a; } GA_END
GA_UNOP(isnan) { return ga_isnan_any(a); } GA_END
GA_UNOP(isinf)
{
    if constexpr (ga_cx<C>) return (bool)(isinf(a.real()) || isinf(a.imag()));
    else if constexpr (ga_flt<C>) return (bool)isinf(a);
    else return false;
}
GA_END
GA_UNOP(isfinite)
{
    if constexpr (ga_cx<C>) return (bool)(isfinite(a.real()) && isfinite(a.imag()));
    else if constexpr (ga_flt<C>) return (bool)isfinite(a);
    else return true;
}
GA_END
GA_UNOP(signbit) { return (bool)signbit(a); } GA_END
GA_UNOP(floor) { if constexpr (ga_flt<C>) return (C)floor(a); else return a; } GA_END
GA_UNOP(ceil) { if constexpr (ga_flt<C>) return (C)ceil(a); else return a; } GA_END
GA_UNOP(trunc) { if constexpr (ga_flt<C>) return (C)trunc(a); else return a; } GA_END
GA_UNOP(rint) { if constexpr (ga_cx<C>) return C(rint(a.real()), rint(a.imag())); else return (C)rint(a); } GA_END
GA_UNOP(deg2rad) { return (C)(a * (C)0.017453292519943295769236907684886127); } GA_END
GA_UNOP(rad2deg) { return (C)(a * (C)57.295779513082320876798154814105170); } GA_END

// ---- transcendental functions ----------------------------------------------
// C99 Annex G special values the complex library gets wrong, as NumPy (and the
// array API's special cases) give them: log(+-inf + NaN j) = log(NaN +- inf j)
// = +inf + NaN j; tanh(+-0 + inf j) = tanh(+-0 + NaN j) = +-0 + NaN j;
// acosh(+-0 + NaN j) = NaN + pi/2 j.  Other inputs: the library's function.
template <class C> __device__ __forceinline__ C ga_cx_log(C a)
{
    auto re = a.real(), im = a.imag();
    if ((isinf(re) && isnan(im)) || (isnan(re) && isinf(im)))
        return C(isinf(re) ? fabs(re) : fabs(im), re + im);
    return ga_cx_ns::log(a);
}
template <class C> __device__ __forceinline__ C ga_cx_tanh(C a)
{
    auto re = a.real(), im = a.imag();
    if (re == 0 && !isfinite(im))
        return C(re, im - im);
    return ga_cx_ns::tanh(a);
}
template <class C> __device__ __forceinline__ C ga_cx_acosh(C a)
{
    auto re = a.real(), im = a.imag();
    if (re == 0 && isnan(im))
        return C(im, (typename C::value_type)1.5707963267948966192313216916397514);
    return ga_cx_ns::acosh(a);
}
#define GA_MATH1(name, real_fn, cx_expr)                                       \
    GA_UNOP(name) { if constexpr (ga_cx<C>) return (C)(cx_expr); else return (C)real_fn(a); } GA_END
GA_MATH1(sqrt, sqrt, ga_cx_ns::sqrt(a))
GA_UNOP(cbrt) { return (C)cbrt(a); } GA_END
GA_MATH1(exp, exp, ga_cx_ns::exp(a))
GA_MATH1(exp2, exp2, ga_cx_ns::exp(a * (typename C::value_type)0.693147180559945309417232121458176568))
GA_MATH1(expm1, expm1, ga_cx_ns::exp(a) - (typename C::value_type)1)
GA_MATH1(log, log, ga_cx_log(a))
GA_MATH1(log2, log2, ga_cx_log(a) / (typename C::value_type)0.693147180559945309417232121458176568)
GA_MATH1(log10, log10, ga_cx_ns::log10(a))
GA_MATH1(log1p, log1p, ga_cx_log(a + (typename C::value_type)1))
GA_MATH1(sin, sin, ga_cx_ns::sin(a))
GA_MATH1(cos, cos, ga_cx_ns::cos(a))
GA_MATH1(tan, tan, ga_cx_ns::tan(a))
GA_MATH1(arcsin, asin, ga_cx_ns::asin(a))
GA_MATH1(arccos, acos, ga_cx_ns::acos(a))
GA_MATH1(arctan, atan, ga_cx_ns::atan(a))
GA_MATH1(sinh, sinh, ga_cx_ns::sinh(a))
GA_MATH1(cosh, cosh, ga_cx_ns::cosh(a))
GA_MATH1(tanh, tanh, ga_cx_tanh(a))
GA_MATH1(arcsinh, asinh, ga_cx_ns::asinh(a))
GA_MATH1(arccosh, acosh, ga_cx_acosh(a))
GA_MATH1(arctanh, atanh, ga_cx_ns::atanh(a))

// ---- three arguments ---------------------------------------------------------
// clip(x, lo, hi) = minimum(maximum(x, lo), hi), NaN-propagating as NumPy.
struct op_clip {
    static constexpr int nin = 3;
    template <class C> __device__ __forceinline__ C operator()(C x, C lo, C hi) const
    {
        return op_minimum()(op_maximum()(x, lo), hi);
    }
};

#endif
