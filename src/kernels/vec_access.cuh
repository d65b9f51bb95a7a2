// vec_access.cuh -- V consecutive elements in the widest aligned accesses
// (up to 16 bytes each): the loads and stores of the contiguous elementwise
// kernels and of label's flatten and write passes.  The caller checks the
// alignment (ga_misaligned) and takes another path when it fails.  The
// pointers are not __restrict__ here: a kernel states that of its own
// parameters (the elementwise kernels do; label's write pass reads the
// forest through plain loads).
#ifndef GA_VEC_ACCESS_CUH
#define GA_VEC_ACCESS_CUH

#include <stdint.h>

template <class T, int V>
struct alignas(sizeof(T) * V) ga_pack { T v[V]; };

// Bytes of one access when V elements of `size` bytes move: the alignment
// each pointer needs for the vector path.
__host__ __device__ constexpr int ga_ew_access(int size, int v)
{
    return size * v < 16 ? size * v : (size >= 16 ? size : 16);
}

// V elements at p in accesses of ga_ew_access(sizeof(X), V) bytes.
template <int V, class X>
__device__ __forceinline__ void ga_vload(const X *p, X (&v)[V])
{
    constexpr int C = ga_ew_access(sizeof(X), V) / sizeof(X);
#pragma unroll
    for (int j = 0; j < V; j += C) {
        ga_pack<X, C> q = *(const ga_pack<X, C> *)(p + j);
#pragma unroll
        for (int k = 0; k < C; ++k)
            v[j + k] = q.v[k];
    }
}

// V elements to p, as ga_vload reads them.
template <int V, class X>
__device__ __forceinline__ void ga_vstore(X *p, const X (&v)[V])
{
    constexpr int C = ga_ew_access(sizeof(X), V) / sizeof(X);
#pragma unroll
    for (int j = 0; j < V; j += C) {
        ga_pack<X, C> q;
#pragma unroll
        for (int k = 0; k < C; ++k)
            q.v[k] = v[j + k];
        *(ga_pack<X, C> *)(p + j) = q;
    }
}

// 0 when `p` is aligned for V-element accesses of X (or unused).
template <int V, class X>
__host__ __device__ static inline uintptr_t ga_misaligned(const void *p)
{
    return p == nullptr ? 0 : (uintptr_t)p % ga_ew_access(sizeof(X), V);
}

#endif
