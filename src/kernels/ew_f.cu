// ew_f.cu -- elementwise loops of group F of ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

#define GA_EW_CASE_A GA_EW_SKIP
#define GA_EW_CASE_B GA_EW_SKIP
#define GA_EW_CASE_C GA_EW_SKIP
#define GA_EW_CASE_D GA_EW_SKIP
#define GA_EW_CASE_E GA_EW_SKIP
#define GA_EW_CASE_F GA_EW_EMIT

GA_EW_GROUP(F)

// ============================== where =====================================
// out = cond ? x : y: a select, so type-blind (keyed by element size).

template <class T>
__global__ void k_where(int64_t n, int contiguous, ga_kshape sh, ga_ew_strides st, const bool *cond,
                        const char *x, const char *y, char *out, bool sc, T sx, T sy, int mask)
{
    GA_GRID_STRIDE(i, n) {
        int64_t off[4];
        if (contiguous) {
            off[0] = i;
            off[1] = off[2] = off[3] = i * (int64_t)sizeof(T);
        } else {
            ga_offsets<4>(i, sh, st, off);
        }
        bool c = (mask & 1) ? sc : *((const char *)cond + off[0]);
        T v = c ? ((mask & 2) ? sx : *(const T *)(x + off[1])) : ((mask & 4) ? sy : *(const T *)(y + off[2]));
        *(T *)(out + off[3]) = v;
    }
}

namespace {
struct WhereLaunch {
    const ga_ew_args *x; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        if (x->n == 0) return cudaSuccess;
        ga_ew_strides st;
        for (int k = 0; k < 3; ++k) st.s[k] = x->in_strides[k];
        st.s[3] = x->out_strides;
        k_where<T><<<ga_grid(x->n), GA_BLOCK, 0, stream>>>(
            x->n, x->contiguous, x->shape, st, (const bool *)x->in[0], x->in[1], x->in[2], x->out,
            ga_scalar_as<bool>(x->scalar[0]), ga_scalar_as<T>(x->scalar[1]),
            ga_scalar_as<T>(x->scalar[2]), x->scalar_mask);
        return cudaGetLastError();
    }
};
} // namespace

extern "C" cudaError_t ga_launch_where(int itemsize, const ga_ew_args *args, cudaStream_t stream)
{
    return ga_visit_size(itemsize, WhereLaunch{args, stream});
}

// ============================== dispatch ==================================

extern "C" cudaError_t ga_ew_launch_A(int, const ga_ew_args *, cudaStream_t);
extern "C" cudaError_t ga_ew_launch_B(int, const ga_ew_args *, cudaStream_t);
extern "C" cudaError_t ga_ew_launch_C(int, const ga_ew_args *, cudaStream_t);
extern "C" cudaError_t ga_ew_launch_D(int, const ga_ew_args *, cudaStream_t);
extern "C" cudaError_t ga_ew_launch_E(int, const ga_ew_args *, cudaStream_t);

#define GA_EW_GROUP_OF(g, op, in, out) #g[0],
static const char loop_group[GA_NLOOPS] = {GA_UFUNC_TABLE(GA_EW_NOU, GA_EW_GROUP_OF)};

extern "C" cudaError_t ga_launch_ufunc(int loop, const ga_ew_args *args, cudaStream_t stream)
{
    if (loop < 0 || loop >= GA_NLOOPS) return cudaErrorInvalidValue;
    switch (loop_group[loop]) {
    case 'A': return ga_ew_launch_A(loop, args, stream);
    case 'B': return ga_ew_launch_B(loop, args, stream);
    case 'C': return ga_ew_launch_C(loop, args, stream);
    case 'D': return ga_ew_launch_D(loop, args, stream);
    case 'E': return ga_ew_launch_E(loop, args, stream);
    default: return ga_ew_launch_F(loop, args, stream);
    }
}
