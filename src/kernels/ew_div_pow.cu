// ew_div_pow.cu -- the elementwise loops of group div_pow of
// ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(div_pow)
