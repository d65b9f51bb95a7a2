// ew_e.cu -- elementwise loops of group E of ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(E)
