// ew_n.cu -- elementwise loops of group N of ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

#define GA_EW_CASE_A GA_EW_SKIP
#define GA_EW_CASE_B GA_EW_SKIP
#define GA_EW_CASE_C GA_EW_SKIP
#define GA_EW_CASE_D GA_EW_SKIP
#define GA_EW_CASE_E GA_EW_SKIP
#define GA_EW_CASE_F GA_EW_SKIP
#define GA_EW_CASE_G GA_EW_SKIP
#define GA_EW_CASE_H GA_EW_SKIP
#define GA_EW_CASE_I GA_EW_SKIP
#define GA_EW_CASE_J GA_EW_SKIP
#define GA_EW_CASE_K GA_EW_SKIP
#define GA_EW_CASE_M GA_EW_SKIP
#define GA_EW_CASE_N GA_EW_EMIT

GA_EW_GROUP(N)
