// ew_arith.cu -- the elementwise loops of group arith of
// ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(arith)
