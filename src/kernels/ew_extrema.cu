// ew_extrema.cu -- the elementwise loops of group extrema of
// ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(extrema)
