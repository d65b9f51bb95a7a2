// ew_bit_logic.cu -- the elementwise loops of group bit_logic of
// ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(bit_logic)
