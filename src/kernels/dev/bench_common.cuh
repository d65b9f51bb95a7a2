// bench_common.cuh -- what the standalone device harnesses in this folder
// share: the check macro that stops a harness at the first failing CUDA call,
// naming the call and its line, and the event timer (each launch after an L2
// flush, and back to back).  (The package's own code never exits: its
// launchers return cudaError_t; these harnesses are programs run by hand.)
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CK(call)                                                                   \
    do {                                                                           \
        cudaError_t e_ = (call);                                                   \
        if (e_ != cudaSuccess) {                                                   \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,           \
                    cudaGetErrorString(e_));                                       \
            exit(2);                                                               \
        }                                                                          \
    } while (0)

struct Timing {
    double med_us, min_us, b2b_us;
};

// Median/min of `runs` launches each after an L2 flush (a memset of 256 MB,
// allocated on the first call), and the mean of `runs` launches back to back.
template <class F>
static Timing timeit(F launch, int runs = 30)
{
    static const size_t FLUSH_BYTES = (size_t)256 << 20;
    static char *flush = nullptr;
    if (flush == nullptr)
        CK(cudaMalloc(&flush, FLUSH_BYTES));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; ++i) launch();
    CK(cudaDeviceSynchronize());
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
        CK(cudaMemsetAsync(flush, i, FLUSH_BYTES));
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1e3);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    CK(cudaEventRecord(a));
    for (int i = 0; i < runs; ++i) launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return Timing{t[t.size() / 2], t[0], ms * 1e3 / runs};
}

// Prints the device, and returns its copy rate (bytes read + written per
// second, device to device) measured on a copy of `nbytes`: the floor that
// bandwidth-bound kernels are compared with.
static inline double device_copy_rate(size_t nbytes)
{
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    char *a, *b;
    CK(cudaMalloc(&a, nbytes));
    CK(cudaMalloc(&b, nbytes));
    Timing t = timeit([&] { CK(cudaMemcpyAsync(b, a, nbytes, cudaMemcpyDeviceToDevice)); });
    const double rate = 2.0 * nbytes / (t.med_us * 1e-6);
    printf("copy of %.1f MB: median %.2f us (back to back %.2f us) = %.0f GB/s read+write\n",
           nbytes * 1e-6, t.med_us, t.b2b_us, rate * 1e-9);
    CK(cudaFree(a));
    CK(cudaFree(b));
    return rate;
}
