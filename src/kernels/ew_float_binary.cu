// ew_float_binary.cu -- the elementwise loops of group float_binary of
// ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(float_binary)
