// matmul.cu -- exact matrix products of bool and integer matrices.
//
// cuBLAS has no exact integer GEMM (its int8 path accumulates in int32 and
// saturates or needs particular layouts), so NumPy's integer matmul -- the
// sum of products wrapping modulo 2**bits in the operand type -- is this
// kernel.  Signed and unsigned types of one width share an instantiation:
// two's-complement products and sums modulo 2**bits are the same bits.
// Bool products are NumPy's: any(a[i, :] & b[:, j]).
//
// Each 16 x 16 block computes a 16 x 16 tile of one product of the batch,
// staging 16-wide slabs of A and B in shared memory; operands take any byte
// strides (transposed, negative, broadcast), so the host never copies.
#include "kernel_common.cuh"

namespace {

constexpr int TILE = 16;

// The accumulator: the operand width, at least 32 bits (uint16 * uint16
// would promote to int and overflow, which is undefined).
template <class T> struct acc_of { using type = uint32_t; };
template <> struct acc_of<uint64_t> { using type = uint64_t; };

template <class T, class A>
__device__ __forceinline__ A load(const char *p)
{
    if constexpr (ga_same<T, bool>)
        return *(const uint8_t *)p != 0;
    else
        return (A)*(const T *)p;
}

// ============================== kernels ====================================

template <class T>
__global__ void k_matmul_exact(ga_matmul_args g, int64_t batch, int64_t row_blocks)
{
    using A = typename acc_of<T>::type;
    __shared__ A ta[TILE][TILE + 1], tb[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t col = (int64_t)blockIdx.x * TILE + tx;
    for (int64_t bt = blockIdx.z; bt < batch; bt += gridDim.z) {
        const char *pa = g.a + ga_offset(bt, g.batch, g.a_bs);
        const char *pb = g.b + ga_offset(bt, g.batch, g.b_bs);
        char *pc = g.c + ga_offset(bt, g.batch, g.c_bs);
        for (int64_t rb = blockIdx.y; rb < row_blocks; rb += gridDim.y) {
            const int64_t row = rb * TILE + ty;
            A acc = 0;
            for (int64_t k0 = 0; k0 < g.k; k0 += TILE) {
                ta[ty][tx] = row < g.m && k0 + tx < g.k
                    ? load<T, A>(pa + row * g.a_rs + (k0 + tx) * g.a_cs) : A(0);
                tb[ty][tx] = k0 + ty < g.k && col < g.n
                    ? load<T, A>(pb + (k0 + ty) * g.b_rs + col * g.b_cs) : A(0);
                __syncthreads();
#pragma unroll
                for (int kk = 0; kk < TILE; ++kk) {
                    if constexpr (ga_same<T, bool>)
                        acc |= ta[ty][kk] & tb[kk][tx];
                    else
                        acc += ta[ty][kk] * tb[kk][tx];
                }
                __syncthreads();
            }
            if (row < g.m && col < g.n) {
                if constexpr (ga_same<T, bool>)
                    *(uint8_t *)(pc + row * g.c_rs + col * g.c_cs) = acc != 0;
                else
                    *(T *)(pc + row * g.c_rs + col * g.c_cs) = (T)acc;
            }
        }
    }
}

template <class T>
cudaError_t matmul_exact(const ga_matmul_args *g, cudaStream_t stream)
{
    const int64_t batch = ga_kshape_size(&g->batch);
    const int64_t col_blocks = (g->n + TILE - 1) / TILE;
    const int64_t row_blocks = (g->m + TILE - 1) / TILE;
    if (col_blocks > INT32_MAX)
        return cudaErrorInvalidValue;
    const dim3 grid((unsigned)col_blocks, (unsigned)(row_blocks < 65535 ? row_blocks : 65535),
                    (unsigned)(batch < 65535 ? batch : 65535));
    k_matmul_exact<T><<<grid, dim3(TILE, TILE), 0, stream>>>(*g, batch, row_blocks);
    return cudaGetLastError();
}

} // namespace

// ============================== launchers ==================================

extern "C" cudaError_t ga_launch_matmul_exact(ga_type type, const ga_matmul_args *args,
                                              cudaStream_t stream)
{
    if (args->m == 0 || args->n == 0 || ga_kshape_size(&args->batch) == 0)
        return cudaSuccess;
    switch (type) {
    case GA_BOOL: return matmul_exact<bool>(args, stream);
    case GA_INT8:
    case GA_UINT8: return matmul_exact<uint8_t>(args, stream);
    case GA_INT16:
    case GA_UINT16: return matmul_exact<uint16_t>(args, stream);
    case GA_INT32:
    case GA_UINT32: return matmul_exact<uint32_t>(args, stream);
    case GA_INT64:
    case GA_UINT64: return matmul_exact<uint64_t>(args, stream);
    default: return cudaErrorInvalidValue;
    }
}
