// ew_a.cu -- elementwise loops of group A of ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

#define GA_EW_CASE_A GA_EW_EMIT
#define GA_EW_CASE_B GA_EW_SKIP
#define GA_EW_CASE_C GA_EW_SKIP
#define GA_EW_CASE_D GA_EW_SKIP
#define GA_EW_CASE_E GA_EW_SKIP
#define GA_EW_CASE_F GA_EW_SKIP

GA_EW_GROUP(A)
