// ew_k.cu -- elementwise loops of group K of ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(K)
