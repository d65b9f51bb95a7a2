// ew_b.cu -- elementwise loops of group B of ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(B)
