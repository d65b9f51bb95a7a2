// ew_f.cu -- elementwise loops of group F of ufunc_table.h (see ew_kernels.cuh).
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(F)

// ============================== where =====================================
// out = cond ? x : y: a select, so type-blind (keyed by element size).

template <class T>
__global__ void k_where(int64_t n, ga_kshape sh, ga_ew_strides st, const bool *cond,
                        const char *x, const char *y, char *out, bool sc, T sx, T sy, int mask)
{
    GA_GRID_STRIDE(i, n) {
        int64_t off[4];
        ga_offsets<4>(i, sh, st, off);
        bool c = (mask & 1) ? sc : *((const char *)cond + off[0]);
        T v = c ? ((mask & 2) ? sx : *(const T *)(x + off[1])) : ((mask & 4) ? sy : *(const T *)(y + off[2]));
        *(T *)(out + off[3]) = v;
    }
}

// Contiguous operands: V elements a thread, 16-byte stores of the output
// (the common where(x > t, 1, 0) writes 8-byte integers from 1-byte conditions).
template <class T>
__global__ void k_where_contig(int64_t n, const bool *cond, const T *x, const T *y, T *out,
                               bool sc, T sx, T sy, int mask, int vec)
{
    constexpr int V = sizeof(T) >= 16 ? 1 : 16 / sizeof(T);
    int64_t step = (int64_t)gridDim.x * blockDim.x * V;
    for (int64_t base = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V; base < n; base += step) {
        if (vec && base + V <= n) {
            ga_pack<bool, V> pc;
            ga_pack<T, V> px, py, po;
            if (!(mask & 1)) pc = *(const ga_pack<bool, V> *)(cond + base);
            if (!(mask & 2)) px = *(const ga_pack<T, V> *)(x + base);
            if (!(mask & 4)) py = *(const ga_pack<T, V> *)(y + base);
#pragma unroll
            for (int k = 0; k < V; ++k) {
                bool c = (mask & 1) ? sc : pc.v[k];
                po.v[k] = c ? ((mask & 2) ? sx : px.v[k]) : ((mask & 4) ? sy : py.v[k]);
            }
            *(ga_pack<T, V> *)(out + base) = po;
        } else {
            for (int64_t i = base; i < base + V && i < n; ++i) {
                bool c = (mask & 1) ? sc : cond[i];
                out[i] = c ? ((mask & 2) ? sx : x[i]) : ((mask & 4) ? sy : y[i]);
            }
        }
    }
}

namespace {
struct WhereLaunch {
    const ga_ew_args *x; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        if (x->n == 0) return cudaSuccess;
        bool sc = ga_scalar_as<bool>(x->scalar[0]);
        T sx = ga_scalar_as<T>(x->scalar[1]), sy = ga_scalar_as<T>(x->scalar[2]);
        if (x->contiguous) {
            constexpr int V = sizeof(T) >= 16 ? 1 : 16 / sizeof(T);
            uintptr_t al = (uintptr_t)x->out % (sizeof(T) * V);
            if (!(x->scalar_mask & 1)) al |= (uintptr_t)x->in[0] % V;
            if (!(x->scalar_mask & 2)) al |= (uintptr_t)x->in[1] % (sizeof(T) * V);
            if (!(x->scalar_mask & 4)) al |= (uintptr_t)x->in[2] % (sizeof(T) * V);
            k_where_contig<T><<<ga_grid((x->n + V - 1) / V), GA_BLOCK, 0, stream>>>(
                x->n, (const bool *)x->in[0], (const T *)x->in[1], (const T *)x->in[2], (T *)x->out,
                sc, sx, sy, x->scalar_mask, al == 0);
        } else {
            ga_ew_strides st;
            for (int k = 0; k < 3; ++k) st.s[k] = x->in_strides[k];
            st.s[3] = x->out_strides;
            k_where<T><<<ga_grid(x->n), GA_BLOCK, 0, stream>>>(
                x->n, x->shape, st, (const bool *)x->in[0], x->in[1], x->in[2], x->out, sc, sx, sy,
                x->scalar_mask);
        }
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
extern "C" cudaError_t ga_ew_launch_G(int, const ga_ew_args *, cudaStream_t);
extern "C" cudaError_t ga_ew_launch_H(int, const ga_ew_args *, cudaStream_t);
extern "C" cudaError_t ga_ew_launch_I(int, const ga_ew_args *, cudaStream_t);
extern "C" cudaError_t ga_ew_launch_J(int, const ga_ew_args *, cudaStream_t);
extern "C" cudaError_t ga_ew_launch_K(int, const ga_ew_args *, cudaStream_t);
extern "C" cudaError_t ga_ew_launch_M(int, const ga_ew_args *, cudaStream_t);
extern "C" cudaError_t ga_ew_launch_N(int, const ga_ew_args *, cudaStream_t);

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
    case 'G': return ga_ew_launch_G(loop, args, stream);
    case 'H': return ga_ew_launch_H(loop, args, stream);
    case 'I': return ga_ew_launch_I(loop, args, stream);
    case 'J': return ga_ew_launch_J(loop, args, stream);
    case 'K': return ga_ew_launch_K(loop, args, stream);
    case 'M': return ga_ew_launch_M(loop, args, stream);
    case 'N': return ga_ew_launch_N(loop, args, stream);
    default: return ga_ew_launch_F(loop, args, stream);
    }
}
