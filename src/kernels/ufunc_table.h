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
 * register ufuncs and their loops, and in ew_kernels.cuh, which the
 * ew_<group>.cu files include, to instantiate one kernel pair per loop (each
 * file takes the loops of its own group, so nvcc builds the groups in
 * parallel, and the first call of a ufunc loads only its group's module, a
 * few hundred kilobytes).
 *
 * L(group, op, in, out): one loop, of one of the groups of GA_EW_GROUPS.  The type-list helpers expand a loop for
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
#define GA_UFUNC_TABLE(U, L)                                                                       \
    /* ---- arithmetic; div_pow: division and powers ---- */                                       \
    U(add, 2, 0) GA_BIFC(L, arith, add)                                                            \
    U(subtract, 2, 0) GA_IFC(L, arith, subtract)                                                   \
    U(multiply, 2, 0) GA_BIFC(L, arith, multiply)                                                  \
    U(true_divide, 2, 0) GA_FC(L, arith, true_divide)                                              \
    U(floor_divide, 2, 0) GA_IF(L, div_pow, floor_divide)                                          \
    U(remainder, 2, 0) GA_IF(L, div_pow, remainder)                                                \
    U(fmod, 2, 0) GA_IF(L, div_pow, fmod)                                                          \
    U(power, 2, 0) GA_IFC(L, div_pow, power)                                                       \
    U(float_power, 2, 0) L(div_pow, float_power, f64, f64) L(div_pow, float_power, c128, c128)     \
    /* ---- compare: comparisons; extrema ---- */                                                  \
    U(equal, 2, 0) GA_ALL_PRED(L, compare, equal)                                                  \
    U(not_equal, 2, 0) GA_ALL_PRED(L, compare, not_equal)                                          \
    U(less, 2, 0) GA_ALL_PRED(L, compare, less)                                                    \
    U(less_equal, 2, 0) GA_ALL_PRED(L, compare, less_equal)                                        \
    U(greater, 2, 0) GA_ALL_PRED(L, compare, greater)                                              \
    U(greater_equal, 2, 0) GA_ALL_PRED(L, compare, greater_equal)                                  \
    U(maximum, 2, 0) GA_BIFC(L, extrema, maximum)                                                  \
    U(minimum, 2, 0) GA_BIFC(L, extrema, minimum)                                                  \
    U(fmax, 2, 0) GA_BIFC(L, extrema, fmax)                                                        \
    U(fmin, 2, 0) GA_BIFC(L, extrema, fmin)                                                        \
    /* ---- bit_logic: bits and logic; float_binary: two-argument float functions ---- */          \
    U(bitwise_and, 2, 0) L(bit_logic, bitwise_and, b, b) GA_I(L, bit_logic, bitwise_and)           \
    U(bitwise_or, 2, 0) L(bit_logic, bitwise_or, b, b) GA_I(L, bit_logic, bitwise_or)              \
    U(bitwise_xor, 2, 0) L(bit_logic, bitwise_xor, b, b) GA_I(L, bit_logic, bitwise_xor)           \
    U(left_shift, 2, 0) GA_I(L, bit_logic, left_shift)                                             \
    U(right_shift, 2, 0) GA_I(L, bit_logic, right_shift)                                           \
    U(logical_and, 2, GA_UF_TO_BOOL) L(bit_logic, logical_and, b, b)                               \
    U(logical_or, 2, GA_UF_TO_BOOL) L(bit_logic, logical_or, b, b)                                 \
    U(logical_xor, 2, GA_UF_TO_BOOL) L(bit_logic, logical_xor, b, b)                               \
    U(logical_not, 1, GA_UF_TO_BOOL) L(bit_logic, logical_not, b, b)                               \
    U(arctan2, 2, 0) GA_F(L, float_binary, arctan2)                                                \
    U(hypot, 2, 0) GA_F(L, float_binary, hypot)                                                    \
    U(logaddexp, 2, 0) GA_F(L, float_binary, logaddexp)                                            \
    U(logaddexp2, 2, 0) GA_F(L, float_binary, logaddexp2)                                          \
    U(copysign, 2, 0) GA_F(L, float_binary, copysign)                                              \
    U(nextafter, 2, 0) L(float_binary, nextafter, f32, f32) L(float_binary, nextafter, f64, f64)   \
    U(heaviside, 2, 0) GA_F(L, float_binary, heaviside)                                            \
    /* ---- unary: one-argument arithmetic; classify_round: predicates, rounding ---- */           \
    U(negative, 1, 0) GA_IFC(L, unary, negative)                                                   \
    U(positive, 1, 0) GA_IFC(L, unary, positive)                                                   \
    U(absolute, 1, 0) L(unary, absolute, b, b) GA_IF(L, unary, absolute)                           \
        L(unary, absolute, c64, f32) L(unary, absolute, c128, f64)                                 \
    U(fabs, 1, 0) GA_F(L, unary, fabs)                                                             \
    U(sign, 1, 0) GA_IFC(L, unary, sign)                                                           \
    U(square, 1, 0) GA_IFC(L, unary, square)                                                       \
    U(reciprocal, 1, 0) GA_IFC(L, unary, reciprocal)                                               \
    U(conjugate, 1, 0) GA_IFC(L, unary, conjugate)                                                 \
    U(invert, 1, 0) L(unary, invert, b, b) GA_I(L, unary, invert)                                  \
    U(isnan, 1, 0) GA_ALL_PRED(L, classify_round, isnan)                                           \
    U(isinf, 1, 0) GA_ALL_PRED(L, classify_round, isinf)                                           \
    U(isfinite, 1, 0) GA_ALL_PRED(L, classify_round, isfinite)                                     \
    U(signbit, 1, 0) GA_F_PRED(L, classify_round, signbit)                                         \
    U(floor, 1, 0) L(classify_round, floor, b, b) GA_IF(L, classify_round, floor)                  \
    U(ceil, 1, 0) L(classify_round, ceil, b, b) GA_IF(L, classify_round, ceil)                     \
    U(trunc, 1, 0) L(classify_round, trunc, b, b) GA_IF(L, classify_round, trunc)                  \
    U(rint, 1, 0) GA_FC(L, classify_round, rint)                                                   \
    U(deg2rad, 1, 0) GA_F(L, classify_round, deg2rad)                                              \
    U(rad2deg, 1, 0) GA_F(L, classify_round, rad2deg)                                              \
    /* ---- exp_log, trig (real) and complex_exp_log, complex_trig: transcendental ---- */         \
    U(sqrt, 1, 0) GA_F(L, exp_log, sqrt) GA_C(L, complex_exp_log, sqrt)                            \
    U(cbrt, 1, 0) GA_F(L, exp_log, cbrt)                                                           \
    U(exp, 1, 0) GA_F(L, exp_log, exp) GA_C(L, complex_exp_log, exp)                               \
    U(exp2, 1, 0) GA_F(L, exp_log, exp2) GA_C(L, complex_exp_log, exp2)                            \
    U(expm1, 1, 0) GA_F(L, exp_log, expm1) GA_C(L, complex_exp_log, expm1)                         \
    U(log, 1, 0) GA_F(L, exp_log, log) GA_C(L, complex_exp_log, log)                               \
    U(log2, 1, 0) GA_F(L, exp_log, log2) GA_C(L, complex_exp_log, log2)                            \
    U(log10, 1, 0) GA_F(L, exp_log, log10) GA_C(L, complex_exp_log, log10)                         \
    U(log1p, 1, 0) GA_F(L, exp_log, log1p) GA_C(L, complex_exp_log, log1p)                         \
    U(sin, 1, 0) GA_F(L, trig, sin) GA_C(L, complex_trig, sin)                                     \
    U(cos, 1, 0) GA_F(L, trig, cos) GA_C(L, complex_trig, cos)                                     \
    U(tan, 1, 0) GA_F(L, trig, tan) GA_C(L, complex_trig, tan)                                     \
    U(arcsin, 1, 0) GA_F(L, trig, arcsin) GA_C(L, complex_trig, arcsin)                            \
    U(arccos, 1, 0) GA_F(L, trig, arccos) GA_C(L, complex_trig, arccos)                            \
    U(arctan, 1, 0) GA_F(L, trig, arctan) GA_C(L, complex_trig, arctan)                            \
    U(sinh, 1, 0) GA_F(L, trig, sinh) GA_C(L, complex_trig, sinh)                                  \
    U(cosh, 1, 0) GA_F(L, trig, cosh) GA_C(L, complex_trig, cosh)                                  \
    U(tanh, 1, 0) GA_F(L, trig, tanh) GA_C(L, complex_trig, tanh)                                  \
    U(arcsinh, 1, 0) GA_F(L, trig, arcsinh) GA_C(L, complex_trig, arcsinh)                         \
    U(arccosh, 1, 0) GA_F(L, trig, arccosh) GA_C(L, complex_trig, arccosh)                         \
    U(arctanh, 1, 0) GA_F(L, trig, arctanh) GA_C(L, complex_trig, arctanh)                         \
    /* ---- clip_where: three-argument loops ---- */                                               \
    U(clip, 3, 0) GA_BIFC(L, clip_where, clip)

/* The groups of loops, each compiled by its file ew_<group>.cu: ids
 * GA_EWG_<group>. */
#define GA_EW_GROUPS(X) X(arith) X(div_pow) X(compare) X(extrema) X(bit_logic) \
    X(float_binary) X(unary) X(classify_round) X(exp_log) X(trig) X(complex_exp_log) \
    X(complex_trig) X(clip_where)
#define GA_EW_GROUP_ID(g) GA_EWG_##g,
enum ga_ew_group { GA_EW_GROUPS(GA_EW_GROUP_ID) GA_EW_NGROUPS };

/* Loop ids: GA_LOOP_<op>_<in>. */
#define GA_LOOP_ID_U(name, nin, flags)
#define GA_LOOP_ID_L(g, op, in, out) GA_LOOP_##op##_##in,
enum ga_loop_id { GA_UFUNC_TABLE(GA_LOOP_ID_U, GA_LOOP_ID_L) GA_NLOOPS };

/* Ufunc ids: GA_UF_<name>. */
#define GA_UF_ID_U(name, nin, flags) GA_UF_##name,
#define GA_UF_ID_L(g, op, in, out)
enum ga_ufunc_id { GA_UFUNC_TABLE(GA_UF_ID_U, GA_UF_ID_L) GA_NUFUNCS };

#endif
