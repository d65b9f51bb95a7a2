// ew_clip_where.cu -- elementwise loops of group clip_where of ufunc_table.h (see
// ew_kernels.cuh), where(), and the dispatch of a loop to its group.
#include "ew_kernels.cuh"

GA_EW_DEFINE_GROUP(clip_where)

// ============================== where =====================================
// out = cond ? x : y: a select, so type-blind (keyed by element size).

template <class T>
__global__ void k_where(int64_t n, GA_PARAM ga_kshape sh, GA_PARAM ga_ew_strides st,
                        const bool *cond, const char *x, const char *y, char *out, bool sc,
                        T sx, T sy, int mask)
{
    GA_GRID_STRIDE(i, n) {
        int64_t off[4];
        ga_offsets<4>(i, sh, st, off);
        bool c = (mask & 1) ? sc : *((const char *)cond + off[0]);
        T v = c ? ((mask & 2) ? sx : *(const T *)(x + off[1])) : ((mask & 4) ? sy : *(const T *)(y + off[2]));
        *(T *)(out + off[3]) = v;
    }
}

// Contiguous operands: each thread takes V elements (ga_ew_vec of the
// 1-byte condition and T) as V / U units of U elements, U filling one
// 16-byte access of T, and a block's units are interleaved (unit j of thread
// t is unit j * blockDim + t of the block's tile), so each store of a warp
// writes 512 contiguous bytes: the common where(x > t, 1, 0) takes 8 int64
// a thread, four 2-byte condition loads and four 16-byte stores.  All the
// units' loads are issued before the first store, and scalar operands are
// spread into the registers of the loaded ones, so the select is one
// branch-free instruction whatever the operands.  (Giving a thread V
// contiguous elements instead makes each store instruction write half
// sectors 64 bytes apart: twice as slow, src/kernels/dev/ew_bench.cu.)
template <class T>
__global__ void k_where_contig(int64_t n, const bool *__restrict__ cond, const T *__restrict__ x,
                               const T *__restrict__ y, T *__restrict__ out, bool sc, T sx, T sy,
                               int mask, int vec)
{
    constexpr int V = ga_ew_vec(1, sizeof(T));
    constexpr int U = ga_ew_access(sizeof(T), V) / sizeof(T);
    constexpr int NU = V / U;
    const int64_t tile = (int64_t)blockDim.x * V;
    ga_device_scalars<3>(mask, cond, x, y, sc, sx, sy);
    for (int64_t t0 = (int64_t)blockIdx.x * tile; t0 < n; t0 += (int64_t)gridDim.x * tile) {
        if (vec && t0 + tile <= n) {
            bool vc[NU][U];
            T vx[NU][U], vy[NU][U];
#pragma unroll
            for (int j = 0; j < NU; ++j) {
                int64_t i = t0 + ((int64_t)j * blockDim.x + threadIdx.x) * U;
                ga_vload_or<U>(cond + i, mask & 1, sc, vc[j]);
                ga_vload_or<U>(x + i, mask & 2, sx, vx[j]);
                ga_vload_or<U>(y + i, mask & 4, sy, vy[j]);
            }
#pragma unroll
            for (int j = 0; j < NU; ++j) {
                T vo[U];
#pragma unroll
                for (int k = 0; k < U; ++k)
                    vo[k] = vc[j][k] ? vx[j][k] : vy[j][k];
                ga_vstore<U>(out + t0 + ((int64_t)j * blockDim.x + threadIdx.x) * U, vo);
            }
        } else {
            for (int j = 0; j < NU; ++j) {
                int64_t u = t0 + ((int64_t)j * blockDim.x + threadIdx.x) * U;
                for (int64_t i = u; i < u + U && i < n; ++i) {
                    bool c = (mask & 1) ? sc : cond[i];
                    out[i] = c ? ((mask & 2) ? sx : x[i]) : ((mask & 4) ? sy : y[i]);
                }
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
            constexpr int V = ga_ew_vec(1, sizeof(T));
            constexpr int U = ga_ew_access(sizeof(T), V) / sizeof(T);
            uintptr_t al = ga_misaligned<U, T>(x->out);
            const int not_arrays = ga_ew_not_arrays(x->scalar_mask);
            if (!(not_arrays & 1)) al |= ga_misaligned<U, bool>(x->in[0]);
            if (!(not_arrays & 2)) al |= ga_misaligned<U, T>(x->in[1]);
            if (!(not_arrays & 4)) al |= ga_misaligned<U, T>(x->in[2]);
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

#define GA_EW_DECLARE(g) \
    extern "C" cudaError_t ga_ew_launch_##g(int, const ga_ew_args *, cudaStream_t);
GA_EW_GROUPS(GA_EW_DECLARE)

#define GA_EW_GROUP_OF(g, op, in, out) GA_EWG_##g,
static const unsigned char loop_group[GA_NLOOPS] = {GA_UFUNC_TABLE(GA_EW_NOU, GA_EW_GROUP_OF)};

extern "C" cudaError_t ga_launch_ufunc(int loop, const ga_ew_args *args, cudaStream_t stream)
{
#define GA_EW_CALL(g) case GA_EWG_##g: return ga_ew_launch_##g(loop, args, stream);
    if (loop < 0 || loop >= GA_NLOOPS) return cudaErrorInvalidValue;
    switch (loop_group[loop]) {
    GA_EW_GROUPS(GA_EW_CALL)
    default: return cudaErrorInvalidValue;
    }
}
