/*
 * ufunc_table.h -- the one declarative list of elementwise loops.
 *
 * Each ufunc is declared once with GA_UFUNC(name, nin, flags) followed by its
 * loops, in NumPy's order of preference.  A loop names its input type (all
 * inputs of a loop share one type: mixed dtypes are cast on the host first)
 * and its output type, with the short type names of kernel_common.cuh:
 *   b i8 i16 i32 i64 u8 u16 u32 u64 f16 f32 f64 c64 c128
 * The table is expanded at the end of this header to number the loops and
 * the ufuncs (enum ga_loop_id, enum ga_ufunc_id), in elementwise.c to
 * register ufuncs and their loops, and in ew_kernels.cuh, which the ew_*.cu
 * files include, to instantiate one kernel pair per loop (each .cu takes its
 * own group letter, so nvcc builds the groups in parallel, and the first
 * call of a ufunc loads only its group's module, a few hundred kilobytes).
 *
 * L(group, op, in, out): one loop.  The type-list helpers expand a loop for
 * a set of types with output = input (SAME) or output = bool (PRED).
 */
#ifndef GA_UFUNC_TABLE_H
#define GA_UFUNC_TABLE_H

#define GA_INTS(L, g, op, O) O(L, g, op, i8) O(L, g, op, i16) O(L, g, op, i32) O(L, g, op, i64) \
    O(L, g, op, u8) O(L, g, op, u16) O(L, g, op, u32) O(L, g, op, u64)
#define GA_FLOATS(L, g, op, O) O(L, g, op, f16) O(L, g, op, f32) O(L, g, op, f64)
#define GA_CPLX(L, g, op, O) O(L, g, op, c64) O(L, g, op, c128)
#define GA_SAME(L, g, op, t) L(g, op, t, t)
#define GA_PRED(L, g, op, t) L(g, op, t, b)

#define GA_I(L, g, op) GA_INTS(L, g, op, GA_SAME)
#define GA_F(L, g, op) GA_FLOATS(L, g, op, GA_SAME)
#define GA_C(L, g, op) GA_CPLX(L, g, op, GA_SAME)
#define GA_IF(L, g, op) GA_I(L, g, op) GA_F(L, g, op)
#define GA_IFC(L, g, op) GA_IF(L, g, op) GA_C(L, g, op)
#define GA_FC(L, g, op) GA_F(L, g, op) GA_C(L, g, op)
#define GA_BIFC(L, g, op) L(g, op, b, b) GA_IFC(L, g, op)
#define GA_ALL_PRED(L, g, op) L(g, op, b, b) GA_INTS(L, g, op, GA_PRED) \
    GA_FLOATS(L, g, op, GA_PRED) GA_CPLX(L, g, op, GA_PRED)
#define GA_F_PRED(L, g, op) GA_FLOATS(L, g, op, GA_PRED)

/* Flags of a ufunc (elementwise.c):
 *   0                    plain
 *   GA_UF_TO_BOOL        inputs of any type are read as truth values (logical ops)
 */
#define GA_UF_TO_BOOL 1

/* U(name, nin, flags, loops...): loops expand with L. */
#define GA_UFUNC_TABLE(U, L)                                                     \
    /* ---- group A: arithmetic ---- */                                          \
    U(add, 2, 0) GA_BIFC(L, A, add)                                              \
    U(subtract, 2, 0) GA_IFC(L, A, subtract)                                     \
    U(multiply, 2, 0) GA_BIFC(L, A, multiply)                                    \
    U(true_divide, 2, 0) GA_FC(L, A, true_divide)                                \
    U(floor_divide, 2, 0) GA_IF(L, I, floor_divide)                              \
    U(remainder, 2, 0) GA_IF(L, I, remainder)                                    \
    U(fmod, 2, 0) GA_IF(L, I, fmod)                                              \
    U(power, 2, 0) GA_IFC(L, I, power)                                           \
    U(float_power, 2, 0) L(I, float_power, f64, f64) L(I, float_power, c128, c128) \
    /* ---- group B: comparisons and extrema ---- */                             \
    U(equal, 2, 0) GA_ALL_PRED(L, B, equal)                                      \
    U(not_equal, 2, 0) GA_ALL_PRED(L, B, not_equal)                              \
    U(less, 2, 0) GA_ALL_PRED(L, B, less)                                        \
    U(less_equal, 2, 0) GA_ALL_PRED(L, B, less_equal)                            \
    U(greater, 2, 0) GA_ALL_PRED(L, B, greater)                                  \
    U(greater_equal, 2, 0) GA_ALL_PRED(L, B, greater_equal)                      \
    U(maximum, 2, 0) GA_BIFC(L, J, maximum)                                      \
    U(minimum, 2, 0) GA_BIFC(L, J, minimum)                                      \
    U(fmax, 2, 0) GA_BIFC(L, J, fmax)                                            \
    U(fmin, 2, 0) GA_BIFC(L, J, fmin)                                            \
    /* ---- group C: bits, logic and two-argument float functions ---- */        \
    U(bitwise_and, 2, 0) L(C, bitwise_and, b, b) GA_I(L, C, bitwise_and)         \
    U(bitwise_or, 2, 0) L(C, bitwise_or, b, b) GA_I(L, C, bitwise_or)            \
    U(bitwise_xor, 2, 0) L(C, bitwise_xor, b, b) GA_I(L, C, bitwise_xor)         \
    U(left_shift, 2, 0) GA_I(L, C, left_shift)                                   \
    U(right_shift, 2, 0) GA_I(L, C, right_shift)                                 \
    U(logical_and, 2, GA_UF_TO_BOOL) L(C, logical_and, b, b)                     \
    U(logical_or, 2, GA_UF_TO_BOOL) L(C, logical_or, b, b)                       \
    U(logical_xor, 2, GA_UF_TO_BOOL) L(C, logical_xor, b, b)                     \
    U(logical_not, 1, GA_UF_TO_BOOL) L(C, logical_not, b, b)                     \
    U(arctan2, 2, 0) GA_F(L, K, arctan2)                                         \
    U(hypot, 2, 0) GA_F(L, K, hypot)                                             \
    U(logaddexp, 2, 0) GA_F(L, K, logaddexp)                                     \
    U(logaddexp2, 2, 0) GA_F(L, K, logaddexp2)                                   \
    U(copysign, 2, 0) GA_F(L, K, copysign)                                       \
    U(nextafter, 2, 0) L(K, nextafter, f32, f32) L(K, nextafter, f64, f64)                                     \
    U(heaviside, 2, 0) GA_F(L, K, heaviside)                                     \
    /* ---- group D: one-argument arithmetic and predicates ---- */              \
    U(negative, 1, 0) GA_IFC(L, D, negative)                                     \
    U(positive, 1, 0) GA_IFC(L, D, positive)                                     \
    U(absolute, 1, 0) L(D, absolute, b, b) GA_IF(L, D, absolute)                 \
        L(D, absolute, c64, f32) L(D, absolute, c128, f64)                       \
    U(fabs, 1, 0) GA_F(L, D, fabs)                                               \
    U(sign, 1, 0) GA_IFC(L, D, sign)                                             \
    U(square, 1, 0) GA_IFC(L, D, square)                                         \
    U(reciprocal, 1, 0) GA_IFC(L, D, reciprocal)                                 \
    U(conjugate, 1, 0) GA_IFC(L, D, conjugate)                                   \
    U(invert, 1, 0) L(D, invert, b, b) GA_I(L, D, invert)                        \
    U(isnan, 1, 0) GA_ALL_PRED(L, H, isnan)          \
    U(isinf, 1, 0) GA_ALL_PRED(L, H, isinf)          \
    U(isfinite, 1, 0) GA_ALL_PRED(L, H, isfinite) \
    U(signbit, 1, 0) GA_F_PRED(L, H, signbit)                                    \
    U(floor, 1, 0) L(H, floor, b, b) GA_IF(L, H, floor)                                             \
    U(ceil, 1, 0) L(H, ceil, b, b) GA_IF(L, H, ceil)                                               \
    U(trunc, 1, 0) L(H, trunc, b, b) GA_IF(L, H, trunc)                                             \
    U(rint, 1, 0) GA_FC(L, H, rint)                                              \
    U(deg2rad, 1, 0) GA_F(L, H, deg2rad)                                         \
    U(rad2deg, 1, 0) GA_F(L, H, rad2deg)                                         \
    /* ---- groups E, G (real) and N, M (complex): transcendental functions ---- */                            \
    U(sqrt, 1, 0) GA_F(L, E, sqrt) GA_C(L, N, sqrt)                                              \
    U(cbrt, 1, 0) GA_F(L, E, cbrt)                                               \
    U(exp, 1, 0) GA_F(L, E, exp) GA_C(L, N, exp)                                                \
    U(exp2, 1, 0) GA_F(L, E, exp2) GA_C(L, N, exp2)                                              \
    U(expm1, 1, 0) GA_F(L, E, expm1) GA_C(L, N, expm1)                                            \
    U(log, 1, 0) GA_F(L, E, log) GA_C(L, N, log)                                                \
    U(log2, 1, 0) GA_F(L, E, log2) GA_C(L, N, log2)                                              \
    U(log10, 1, 0) GA_F(L, E, log10) GA_C(L, N, log10)                                            \
    U(log1p, 1, 0) GA_F(L, E, log1p) GA_C(L, N, log1p)                                            \
    U(sin, 1, 0) GA_F(L, G, sin) GA_C(L, M, sin)                                                \
    U(cos, 1, 0) GA_F(L, G, cos) GA_C(L, M, cos)                                                \
    U(tan, 1, 0) GA_F(L, G, tan) GA_C(L, M, tan)                                                \
    U(arcsin, 1, 0) GA_F(L, G, arcsin) GA_C(L, M, arcsin)                                          \
    U(arccos, 1, 0) GA_F(L, G, arccos) GA_C(L, M, arccos)                                          \
    U(arctan, 1, 0) GA_F(L, G, arctan) GA_C(L, M, arctan)                                          \
    U(sinh, 1, 0) GA_F(L, G, sinh) GA_C(L, M, sinh)                                              \
    U(cosh, 1, 0) GA_F(L, G, cosh) GA_C(L, M, cosh)                                              \
    U(tanh, 1, 0) GA_F(L, G, tanh) GA_C(L, M, tanh)                                              \
    U(arcsinh, 1, 0) GA_F(L, G, arcsinh) GA_C(L, M, arcsinh)                                        \
    U(arccosh, 1, 0) GA_F(L, G, arccosh) GA_C(L, M, arccosh)                                        \
    U(arctanh, 1, 0) GA_F(L, G, arctanh) GA_C(L, M, arctanh)                                        \
    /* ---- group F: three-argument loops ---- */                                \
    U(clip, 3, 0) GA_BIFC(L, F, clip)

/* Loop ids: GA_LOOP_<op>_<in>. */
#define GA_LOOP_ID_U(name, nin, flags)
#define GA_LOOP_ID_L(g, op, in, out) GA_LOOP_##op##_##in,
enum ga_loop_id { GA_UFUNC_TABLE(GA_LOOP_ID_U, GA_LOOP_ID_L) GA_NLOOPS };

/* Ufunc ids: GA_UF_<name>. */
#define GA_UF_ID_U(name, nin, flags) GA_UF_##name,
#define GA_UF_ID_L(g, op, in, out)
enum ga_ufunc_id { GA_UFUNC_TABLE(GA_UF_ID_U, GA_UF_ID_L) GA_NUFUNCS };

#endif
