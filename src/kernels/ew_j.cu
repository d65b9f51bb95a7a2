// ew_j.cu -- elementwise loops of group J of ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(J)
