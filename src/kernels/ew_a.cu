// ew_a.cu -- elementwise loops of group A of ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(A)
