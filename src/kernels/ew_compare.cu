// ew_compare.cu -- the elementwise loops of group compare of
// ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(compare)
