// matmul.cu -- the tiled matrix product: every bool and integer product,
// and small real floating ones.
//
// cuBLAS has no exact integer GEMM (its int8 path accumulates in int32 and
// saturates or needs particular layouts), so NumPy's integer matmul -- the
// sum of products wrapping modulo 2**bits in the operand type -- is this
// kernel.  Signed and unsigned types of one width share an instantiation:
// two's-complement products and sums modulo 2**bits are the same bits.
// Bool products are NumPy's: any(a[i, :] & b[:, j]).
// Real floating products small enough that the host's call is the cost
// (src/blas.c decides; cuBLAS's own cublasGemmEx takes ~9 us of host time
// for a 64 x 64 product on the lent H100, a launch of this kernel ~4 us)
// accumulate in float (float16, float32) or double with fused multiply-adds,
// as cuBLAS's COMPUTE_32F/64F do.
//
// Each block of 16 x 16 threads computes a 64 x 64 tile of one product of
// the batch, each thread a 4 x 4 grid of it (rows ty + 16 i, columns
// tx + 16 j: a warp reads two rows of A's slab, a broadcast, and 16
// consecutive columns of B's), staging 16-deep slabs of A and B in shared
// memory; operands take any byte strides (transposed, negative, broadcast),
// so the host never copies.  (The first version, one output per thread in
// 16 x 16 tiles, took 377 us for 1024^2 int32 on the lent H100, CuPy 270.)
// A product with fewer 64 x 64 tiles than the GPU has multiprocessors
// takes 16 x 16 tiles, one output a thread (PER = 1), so that more blocks
// share it: a 64^3 float32 product ran 10.5 us back to back as one 64 x 64
// block, and this form (16 blocks, one output a thread, 16-deep slabs)
// 4.3 us; 128^3 17.9 against 5.5 us (src/kernels/dev/matmul_small_bench.cu's
// "library" rows on the lent H100, 2026-11-27).
#include "kernel_common.cuh"

namespace {

constexpr int THREADS = 16;           // per side of the block
constexpr int DEPTH = 16;             // the k-slab staged per step
// PER (a template parameter): outputs per thread per side, 4 or 1; the
// block's tile is THREADS * PER per side.

// The accumulator: the operand width, at least 32 bits (uint16 * uint16
// would promote to int and overflow, which is undefined).
// Floating types: float (float16 and float32) or double.
template <class T> struct acc_of { using type = uint32_t; };
template <> struct acc_of<uint64_t> { using type = uint64_t; };
template <> struct acc_of<__half> { using type = float; };
template <> struct acc_of<float> { using type = float; };
template <> struct acc_of<double> { using type = double; };

template <class T, class A>
__device__ __forceinline__ A load(const char *p)
{
    if constexpr (ga_same<T, bool>)
        return *(const uint8_t *)p != 0;
    else if constexpr (ga_is_half<T>)
        return __half2float(*(const T *)p);
    else
        return (A)*(const T *)p;
}

// ============================== kernels ====================================

template <class T, int PER>
__global__ void __launch_bounds__(THREADS * THREADS)
k_matmul_tiled(ga_matmul_args g, int64_t batch, int64_t row_blocks)
{
    constexpr int TILE = THREADS * PER;
    using A = typename acc_of<T>::type;
    __shared__ A ta[DEPTH][TILE + 1], tb[DEPTH][TILE + 1];   // [k][row], [k][column]
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * THREADS + tx;
    const int64_t col0 = (int64_t)blockIdx.x * TILE;
    for (int64_t bt = blockIdx.z; bt < batch; bt += gridDim.z) {
        const char *pa = g.a + ga_offset(bt, g.batch, g.a_bs);
        const char *pb = g.b + ga_offset(bt, g.batch, g.b_bs);
        char *pc = g.c + ga_offset(bt, g.batch, g.c_bs);
        for (int64_t rb = blockIdx.y; rb < row_blocks; rb += gridDim.y) {
            const int64_t row0 = rb * TILE;
            A acc[PER][PER];
#pragma unroll
            for (int i = 0; i < PER; ++i)
#pragma unroll
                for (int j = 0; j < PER; ++j)
                    acc[i][j] = 0;
            for (int64_t k0 = 0; k0 < g.k; k0 += DEPTH) {
                // TILE x DEPTH elements of each slab, TILE * DEPTH / 256 per
                // thread: consecutive threads take consecutive k of A's rows
                // and consecutive columns of B
#pragma unroll
                for (int r = 0; r < TILE * DEPTH / (THREADS * THREADS); ++r) {
                    const int e = tid + r * THREADS * THREADS;
                    const int i = e / DEPTH, ka = e % DEPTH;
                    ta[ka][i] = row0 + i < g.m && k0 + ka < g.k
                        ? load<T, A>(pa + (row0 + i) * g.a_rs + (k0 + ka) * g.a_cs) : A(0);
                    const int kb = e / TILE, j = e % TILE;
                    tb[kb][j] = k0 + kb < g.k && col0 + j < g.n
                        ? load<T, A>(pb + (k0 + kb) * g.b_rs + (col0 + j) * g.b_cs) : A(0);
                }
                __syncthreads();
#pragma unroll
                for (int kk = 0; kk < DEPTH; ++kk) {
                    A av[PER], bv[PER];
#pragma unroll
                    for (int i = 0; i < PER; ++i)
                        av[i] = ta[kk][ty + THREADS * i];
#pragma unroll
                    for (int j = 0; j < PER; ++j)
                        bv[j] = tb[kk][tx + THREADS * j];
#pragma unroll
                    for (int i = 0; i < PER; ++i)
#pragma unroll
                        for (int j = 0; j < PER; ++j) {
                            if constexpr (ga_same<T, bool>)
                                acc[i][j] |= av[i] & bv[j];
                            else
                                acc[i][j] += av[i] * bv[j];
                        }
                }
                __syncthreads();
            }
#pragma unroll
            for (int i = 0; i < PER; ++i) {
                const int64_t row = row0 + ty + THREADS * i;
#pragma unroll
                for (int j = 0; j < PER; ++j) {
                    const int64_t col = col0 + tx + THREADS * j;
                    if (row >= g.m || col >= g.n)
                        continue;
                    if constexpr (ga_same<T, bool>)
                        *(uint8_t *)(pc + row * g.c_rs + col * g.c_cs) = acc[i][j] != 0;
                    else
                        *(T *)(pc + row * g.c_rs + col * g.c_cs) = ga_convert<T>(acc[i][j]);
                }
            }
        }
    }
}

template <class T, int PER>
cudaError_t matmul_tiles(const ga_matmul_args *g, int64_t batch, cudaStream_t stream)
{
    constexpr int TILE = THREADS * PER;
    const int64_t col_blocks = (g->n + TILE - 1) / TILE;
    const int64_t row_blocks = (g->m + TILE - 1) / TILE;
    if (col_blocks > INT32_MAX)
        return cudaErrorInvalidValue;
    const dim3 grid((unsigned)col_blocks, (unsigned)(row_blocks < 65535 ? row_blocks : 65535),
                    (unsigned)(batch < 65535 ? batch : 65535));
    k_matmul_tiled<T, PER><<<grid, dim3(THREADS, THREADS), 0, stream>>>(*g, batch, row_blocks);
    return cudaGetLastError();
}

// 64 x 64 tiles, or 16 x 16 ones when the 64 x 64 tiles of the whole batch
// are fewer than the device's multiprocessors.
template <class T>
cudaError_t matmul_tiled(const ga_matmul_args *g, int sms, cudaStream_t stream)
{
    const int64_t batch = ga_kshape_size(&g->batch);
    constexpr int64_t BIG = THREADS * 4;      // the 64 x 64 tiles' side
    const int64_t tiles = ((g->n + BIG - 1) / BIG) * ((g->m + BIG - 1) / BIG) * batch;
    return tiles < sms ? matmul_tiles<T, 1>(g, batch, stream) : matmul_tiles<T, 4>(g, batch, stream);
}

// bool, or an integer type as the unsigned one of its width (a wrapping
// product and sum give the same bits whatever the sign); a real floating
// type as itself.
struct MatmulLaunch {
    const ga_matmul_args *args; int sms; cudaStream_t stream;
    template <class T> cudaError_t operator()()
    {
        if constexpr (ga_integral<T>)
            return matmul_tiled<ga_unsigned<T>>(args, sms, stream);
        else if constexpr (ga_is_float<T>)
            return matmul_tiled<T>(args, sms, stream);
        else
            return cudaErrorInvalidValue;
    }
};
} // namespace

// ============================== launchers ==================================

extern "C" cudaError_t ga_launch_matmul_tiled(ga_type type, const ga_matmul_args *args,
                                              int sms, cudaStream_t stream)
{
    if (args->m == 0 || args->n == 0 || ga_kshape_size(&args->batch) == 0)
        return cudaSuccess;
    return ga_visit_type(type, MatmulLaunch{args, sms, stream});
}
