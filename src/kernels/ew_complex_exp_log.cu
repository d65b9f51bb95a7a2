// ew_complex_exp_log.cu -- the elementwise loops of group complex_exp_log of
// ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(complex_exp_log)
