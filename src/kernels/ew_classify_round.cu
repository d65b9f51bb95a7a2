// ew_classify_round.cu -- the elementwise loops of group classify_round of
// ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(classify_round)
