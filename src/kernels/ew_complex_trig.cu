// ew_complex_trig.cu -- the elementwise loops of group complex_trig of
// ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(complex_trig)
