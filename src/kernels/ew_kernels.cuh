// ew_kernels.cuh -- the two elementwise kernels (contiguous and N-d
// strided) every loop of ufunc_table.h instantiates, and the per-group
// launcher that maps loop ids to instantiations.
//
// Contiguous kernel: each thread takes V consecutive elements, V chosen so
// that the narrowest operand moves 16 bytes a thread (a float32 comparison:
// 16 elements, four 16-byte loads of each input and one 16-byte store of the
// bools), capped at 64 bytes of the widest operand (registers).  Every
// operand moves in accesses of min(16, V * its size) bytes when every
// pointer is aligned to its access size (decided on the host, a run-time
// flag), else element by element.  The output is never wider than the
// inputs, so it is one access a thread and a warp's store is contiguous;
// the inputs' wider accesses are 64 bytes apart across a warp, and the
// sectors each one leaves are read from L1 by the next.  Scalar operands
// are kernel arguments broadcast in registers.
#ifndef GA_EW_KERNELS_CUH
#define GA_EW_KERNELS_CUH

#include "ufunc_ops.cuh"
#include "ufunc_table.h"
#include "vec_access.cuh"

// Elements a thread takes when operands of sizes A and B (bytes) move
// together: 16 bytes of the narrower, at most 64 bytes of the wider.
__host__ __device__ constexpr int ga_ew_vec(int a, int b)
{
    int narrow = a < b ? a : b, wide = a < b ? b : a;
    int v = narrow >= 16 ? 1 : 16 / narrow;
    while (v > 1 && v * wide > 64)
        v /= 2;
    return v;
}

// ga_vload, or V copies of the scalar s when `scalar` is set (uniform).
template <int V, class X>
__device__ __forceinline__ void ga_vload_or(const X *__restrict__ p, int scalar, X s, X (&v)[V])
{
    if (scalar) {
#pragma unroll
        for (int k = 0; k < V; ++k)
            v[k] = s;
    } else {
        ga_vload<V>(p, v);
    }
}

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

// Inputs given as one element in device memory (ga_ew_args'
// GA_EW_DEVICE_SCALAR bits) read once into their scalars, whose mask bits
// the rest of the kernel then sees set.
template <int NIN, class A, class B, class C, class SA, class SB, class SC>
__device__ __forceinline__ void ga_device_scalars(int &mask, const A *a, const B *b, const C *c,
                                                  SA &sa, SB &sb, SC &sc)
{
    const int dev = mask >> GA_EW_DEVICE_SCALAR;
    if (!dev)
        return;
    if (dev & 1) sa = *a;
    if (NIN > 1 && (dev & 2)) sb = *b;
    if (NIN > 2 && (dev & 4)) sc = *c;
    mask |= dev;
}

// The scalar_mask bits of inputs that are not read as arrays.
__host__ __forceinline__ int ga_ew_not_arrays(int scalar_mask)
{
    return scalar_mask | (scalar_mask >> GA_EW_DEVICE_SCALAR);
}

template <class Op, class T, class O>
__global__ void k_ew_contig(int64_t n, const T *__restrict__ a, const T *__restrict__ b,
                            const T *__restrict__ c, O *__restrict__ out, T sa, T sb, T sc,
                            int mask, int vec)
{
    constexpr int V = ga_ew_vec(sizeof(T), sizeof(O));
    static_assert(sizeof(O) <= sizeof(T), "one output access a thread needs O no wider than T");
    ga_device_scalars<Op::nin>(mask, a, b, c, sa, sb, sc);
    int64_t step = (int64_t)gridDim.x * blockDim.x * V;
    for (int64_t base = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * V; base < n; base += step) {
        if (vec && base + V <= n) {
            T va[V], vb[V], vc[V];
            O vo[V];
            if (!(mask & 1)) ga_vload<V>(a + base, va);
            if (Op::nin > 1 && !(mask & 2)) ga_vload<V>(b + base, vb);
            if (Op::nin > 2 && !(mask & 4)) ga_vload<V>(c + base, vc);
#pragma unroll
            for (int k = 0; k < V; ++k)
                vo[k] = ga_apply<Op, T, O>((mask & 1) ? sa : va[k], (mask & 2) ? sb : vb[k],
                                           (mask & 4) ? sc : vc[k]);
            ga_vstore<V>(out + base, vo);
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
__global__ void k_ew_strided(int64_t n, GA_PARAM ga_kshape sh, GA_PARAM ga_ew_strides st,
                             const char *a, const char *b, const char *c, char *out, T sa, T sb,
                             T sc, int mask)
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
        constexpr int V = ga_ew_vec(sizeof(T), sizeof(O));
        uintptr_t al = ga_misaligned<V, O>(x->out);
        const int not_arrays = ga_ew_not_arrays(x->scalar_mask);
        for (int k = 0; k < Op::nin; ++k)
            if (!(not_arrays & (1 << k))) al |= ga_misaligned<V, T>(x->in[k]);
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

// ga_ew_group<G> runs the loops of group G (GA_EWG_<group> of
// ufunc_table.h) and instantiates only those; GA_EW_DEFINE_GROUP(group) in
// ew_<group>.cu exports it as ga_ew_launch_<group>.
#define GA_EW_NOU(name, nin, flags)
#define GA_EW_CASE(g, op, in, out)                                                   \
    case GA_LOOP_##op##_##in:                                                        \
        if constexpr (G == GA_EWG_##g)                                               \
            return ga_ew_launch<op_##op, ga_t_##in, ga_t_##out>(args, stream);       \
        else                                                                         \
            return cudaErrorInvalidValue;

template <int G>
cudaError_t ga_ew_group(int loop, const ga_ew_args *args, cudaStream_t stream)
{
    switch (loop) {
        GA_UFUNC_TABLE(GA_EW_NOU, GA_EW_CASE)
    default:
        return cudaErrorInvalidValue;
    }
}

#define GA_EW_DEFINE_GROUP(g)                                                        \
    extern "C" cudaError_t ga_ew_launch_##g(int loop, const ga_ew_args *args,        \
                                            cudaStream_t stream)                     \
    {                                                                                \
        return ga_ew_group<GA_EWG_##g>(loop, args, stream);                          \
    }

#endif
