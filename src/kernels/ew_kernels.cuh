// ew_kernels.cuh -- the two elementwise kernels (contiguous and N-d
// strided) every loop of ufunc_table.h instantiates, and the per-group
// launcher that maps loop ids to instantiations.
//
// Contiguous kernel: each thread takes V = 16/sizeof(T) consecutive elements
// with one 16-byte load per operand when every pointer is aligned (decided
// on the host, a run-time flag), else element by element.  Scalar operands
// are kernel arguments broadcast in registers.
#ifndef GA_EW_KERNELS_CUH
#define GA_EW_KERNELS_CUH

#include "ufunc_ops.cuh"
#include "ufunc_table.h"

template <class T, int V>
struct alignas(sizeof(T) * V) ga_pack { T v[V]; };

template <class T>
__host__ __device__ __forceinline__ T ga_scalar_as(const ga_kscalar &s)
{
    T v;
    memcpy(&v, s.v.bytes, sizeof(T));
    return v;
}

template <class Op, class T, class O>
__device__ __forceinline__ O ga_apply(T a, T b, T c)
{
    if constexpr (Op::nin == 1) return ga_store<O>(Op()(ga_load(a)));
    else if constexpr (Op::nin == 2) return ga_store<O>(Op()(ga_load(a), ga_load(b)));
    else return ga_store<O>(Op()(ga_load(a), ga_load(b), ga_load(c)));
}

template <class Op, class T, class O>
__global__ void k_ew_contig(int64_t n, const T *__restrict__ a, const T *__restrict__ b,
                            const T *__restrict__ c, O *__restrict__ out, T sa, T sb, T sc,
                            int mask, int vec)
{
    constexpr int V = sizeof(T) >= 16 ? 1 : 16 / sizeof(T);
    int64_t step = (int64_t)gridDim.x * blockDim.x * V;
    for (int64_t base = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V; base < n; base += step) {
        if (vec && base + V <= n) {
            ga_pack<T, V> pa, pb, pc;
            ga_pack<O, V> po;
            if (!(mask & 1)) pa = *(const ga_pack<T, V> *)(a + base);
            if (Op::nin > 1 && !(mask & 2)) pb = *(const ga_pack<T, V> *)(b + base);
            if (Op::nin > 2 && !(mask & 4)) pc = *(const ga_pack<T, V> *)(c + base);
#pragma unroll
            for (int k = 0; k < V; ++k)
                po.v[k] = ga_apply<Op, T, O>((mask & 1) ? sa : pa.v[k], (mask & 2) ? sb : pb.v[k],
                                             (mask & 4) ? sc : pc.v[k]);
            *(ga_pack<O, V> *)(out + base) = po;
        } else {
            for (int64_t i = base; i < base + V && i < n; ++i)
                out[i] = ga_apply<Op, T, O>((mask & 1) ? sa : a[i],
                                            Op::nin > 1 && !(mask & 2) ? b[i] : sb,
                                            Op::nin > 2 && !(mask & 4) ? c[i] : sc);
        }
    }
}

struct ga_ew_strides { ga_kstrides s[4]; };  // in0, in1, in2, out

// Byte offsets of element i for up to four operands over one shape.
template <int N>
__device__ __forceinline__ void ga_offsets(int64_t i, const ga_kshape &sh, const ga_ew_strides &st,
                                           int64_t *off)
{
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = sh.ndim - 1; d > 0; --d) {
        int64_t len = sh.shape[d];
        int64_t q = i / len;
        int64_t r = i - q * len;
#pragma unroll
        for (int k = 0; k < N; ++k) off[k] += r * st.s[k].s[d];
        i = q;
    }
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += i * st.s[k].s[0];
}

template <class Op, class T, class O>
__global__ void k_ew_strided(int64_t n, ga_kshape sh, ga_ew_strides st, const char *a,
                             const char *b, const char *c, char *out, T sa, T sb, T sc, int mask)
{
    GA_GRID_STRIDE(i, n) {
        int64_t off[4];
        ga_offsets<4>(i, sh, st, off);
        T va = (mask & 1) ? sa : *(const T *)(a + off[0]);
        T vb = Op::nin > 1 && !(mask & 2) ? *(const T *)(b + off[1]) : sb;
        T vc = Op::nin > 2 && !(mask & 4) ? *(const T *)(c + off[2]) : sc;
        *(O *)(out + off[3]) = ga_apply<Op, T, O>(va, vb, vc);
    }
}

template <class Op, class T, class O>
cudaError_t ga_ew_launch(const ga_ew_args *x, cudaStream_t stream)
{
    T sa = ga_scalar_as<T>(x->scalar[0]), sb = ga_scalar_as<T>(x->scalar[1]),
      sc = ga_scalar_as<T>(x->scalar[2]);
    if (x->n == 0) return cudaSuccess;
    if (x->contiguous) {
        constexpr int V = sizeof(T) >= 16 ? 1 : 16 / sizeof(T);
        uintptr_t al = (uintptr_t)x->out % (sizeof(O) * V);
        for (int k = 0; k < Op::nin; ++k)
            if (!(x->scalar_mask & (1 << k))) al |= (uintptr_t)x->in[k] % (sizeof(T) * V);
        int64_t work = (x->n + V - 1) / V;
        k_ew_contig<Op, T, O><<<ga_grid(work), GA_BLOCK, 0, stream>>>(
            x->n, (const T *)x->in[0], (const T *)x->in[1], (const T *)x->in[2], (O *)x->out,
            sa, sb, sc, x->scalar_mask, al == 0);
    } else {
        ga_ew_strides st;
        for (int k = 0; k < 3; ++k) st.s[k] = x->in_strides[k];
        st.s[3] = x->out_strides;
        k_ew_strided<Op, T, O><<<ga_grid(x->n), GA_BLOCK, 0, stream>>>(
            x->n, x->shape, st, x->in[0], x->in[1], x->in[2], x->out, sa, sb, sc, x->scalar_mask);
    }
    return cudaGetLastError();
}

// ga_ew_group<G> runs the loops of group G (a letter of ufunc_table.h) and
// instantiates only those; GA_EW_DEFINE_GROUP(X) in ew_x.cu exports it as
// ga_ew_launch_X.
#define GA_EW_NOU(name, nin, flags)
#define GA_EW_CASE(g, op, in, out)                                                   \
    case GA_LOOP_##op##_##in:                                                        \
        if constexpr (G == #g[0])                                                    \
            return ga_ew_launch<op_##op, ga_t_##in, ga_t_##out>(args, stream);       \
        else                                                                         \
            return cudaErrorInvalidValue;

template <char G>
cudaError_t ga_ew_group(int loop, const ga_ew_args *args, cudaStream_t stream)
{
    switch (loop) {
        GA_UFUNC_TABLE(GA_EW_NOU, GA_EW_CASE)
    default:
        return cudaErrorInvalidValue;
    }
}

#define GA_EW_DEFINE_GROUP(X)                                                        \
    extern "C" cudaError_t ga_ew_launch_##X(int loop, const ga_ew_args *args,        \
                                            cudaStream_t stream)                     \
    {                                                                                \
        return ga_ew_group<#X[0]>(loop, args, stream);                               \
    }

#endif
