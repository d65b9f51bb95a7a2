// gemm_host_bench.cu -- the host's cost of one small cuBLAS product, without
// gpuarr around it: is matmul_overhead_64 (a 64 x 64 float32 a @ b, issue
// 24's goal <= 6 us per call) bounded by cuBLAS's own enqueue time?
//
//   nvcc -O2 -std=c++17 -arch=sm_90 -Isrc/kernels -o /tmp/gemm_host_bench \
//        src/kernels/dev/gemm_host_bench.cu -lcublas
//   /tmp/gemm_host_bench
//
// For each way of asking for the product (cublasGemmEx as src/blas.c calls
// it, in the default and the pedantic math mode; cublasSgemm) and, for
// scale, an empty kernel launch: the enqueue time per call (200 calls
// before a synchronisation, so the host never waits for the GPU), the time
// per call of 20,000 calls with one synchronisation (the benchmark's loop),
// and the GPU time per product back to back.  Median and min of 15 samples.
#include "bench_common.cuh"

#include <chrono>
#include <cublas_v2.h>

#define CB(call)                                                                   \
    do {                                                                           \
        cublasStatus_t s_ = (call);                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                         \
            fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #call,    \
                    (int)s_);                                                      \
            exit(2);                                                               \
        }                                                                          \
    } while (0)

__global__ void k_empty() {}

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

template <class F> static void report(const char *name, F call)
{
    for (int i = 0; i < 200; ++i) call();
    CK(cudaDeviceSynchronize());
    std::vector<double> enq, loop, gpu;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int s = 0; s < 15; ++s) {
        CK(cudaEventRecord(a));
        for (int i = 0; i < 1000; ++i) call();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        gpu.push_back(ms * 1e3 / 1000);
        double t0 = now();
        for (int i = 0; i < 200; ++i) call();
        enq.push_back((now() - t0) * 1e6 / 200);
        CK(cudaDeviceSynchronize());
        t0 = now();
        for (int i = 0; i < 20000; ++i) call();
        CK(cudaDeviceSynchronize());
        loop.push_back((now() - t0) * 1e6 / 20000);
    }
    auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    auto mn = [](std::vector<double> v) { return *std::min_element(v.begin(), v.end()); };
    printf("%-34s enqueue %6.2f us (min %6.2f)  20k loop %6.2f us (min %6.2f)  GPU %6.2f us\n",
           name, med(enq), mn(enq), med(loop), mn(loop), med(gpu));
}

int main()
{
    const int n = 64;
    float *A, *B, *C;
    CK(cudaMalloc(&A, n * n * sizeof(float)));
    CK(cudaMalloc(&B, n * n * sizeof(float)));
    CK(cudaMalloc(&C, n * n * sizeof(float)));
    CK(cudaMemset(A, 0, n * n * sizeof(float)));
    CK(cudaMemset(B, 0, n * n * sizeof(float)));
    cublasHandle_t h;
    CB(cublasCreate(&h));
    const float one = 1.0f, zero = 0.0f;
    report("empty kernel launch", [&] { k_empty<<<1, 32>>>(); });
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    report("cublasGemmEx 64^2 f32 (default)", [&] {
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, CUDA_R_32F, n, A,
                     CUDA_R_32F, n, &zero, C, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT);
    });
    CB(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    report("cublasGemmEx 64^2 f32 (pedantic)", [&] {
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, CUDA_R_32F, n, A,
                     CUDA_R_32F, n, &zero, C, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT);
    });
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    report("cublasSgemm 64^2", [&] {
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, n, A, n, &zero, C, n);
    });
    CB(cublasDestroy(h));
    return 0;
}
