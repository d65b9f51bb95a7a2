// ew_exp_log.cu -- the elementwise loops of group exp_log of
// ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(exp_log)
