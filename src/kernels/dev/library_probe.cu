// library_probe.cu -- what gpuarr's user kernels rely on in the CUDA
// runtime's library API, checked on a real GPU before building on it:
//
//   - NVRTC compiles a kernel with a __constant__ table to a cubin for the
//     device's exact architecture (time: cold compile of the lesson's vector
//     add, and of the constant-memory kernel);
//   - cudaLibraryLoadData loads it without a context of our own (time);
//   - cudaLibraryGetKernel's handle works with cudaFuncGetAttributes,
//     cudaFuncSetAttribute and cudaLaunchKernel (host time per launch);
//   - cudaLibraryGetGlobal gives the __constant__ symbol's address, and a
//     cudaMemcpyAsync device-to-device into it from stream-ordered pool
//     memory is seen by the kernel.
//
// nvcc -O2 -std=c++17 -o /tmp/library_probe src/kernels/dev/library_probe.cu -lnvrtc
#include "bench_common.cuh"

#include <chrono>
#include <vector>

#include <nvrtc.h>

#define NK(call)                                                                   \
    do {                                                                           \
        nvrtcResult r_ = (call);                                                   \
        if (r_ != NVRTC_SUCCESS) {                                                 \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,           \
                    nvrtcGetErrorString(r_));                                      \
            exit(3);                                                               \
        }                                                                          \
    } while (0)

static double now_ms()
{
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

static const char *vadd_src = R"(
extern "C" __global__ void vector_add(const float *A, const float *B, float *C, const int size)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    if (item < size) C[item] = A[item] + B[item];
}
)";

static const char *const_src = R"(
extern "C" {
#define BLOCKS 2
__constant__ float factors[BLOCKS];
__global__ void sum_and_multiply(const float *A, const float *B, float *C, const int size)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    C[item] = (A[item] + B[item]) * factors[blockIdx.x];
}
}
)";

static std::vector<char> compile(const char *src, const char *arch, double *ms)
{
    double t0 = now_ms();
    nvrtcProgram prog;
    NK(nvrtcCreateProgram(&prog, src, "probe.cu", 0, nullptr, nullptr));
    const char *opts[] = {arch};
    nvrtcResult r = nvrtcCompileProgram(prog, 1, opts);
    if (r != NVRTC_SUCCESS) {
        size_t n;
        nvrtcGetProgramLogSize(prog, &n);
        std::vector<char> log(n);
        nvrtcGetProgramLog(prog, log.data());
        fprintf(stderr, "compile failed: %s\n", log.data());
        exit(3);
    }
    size_t n;
    NK(nvrtcGetCUBINSize(prog, &n));
    std::vector<char> bin(n);
    NK(nvrtcGetCUBIN(prog, bin.data()));
    NK(nvrtcDestroyProgram(&prog));
    *ms = now_ms() - t0;
    return bin;
}

int main()
{
    CK(cudaFree(0));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    char arch[32];
    snprintf(arch, sizeof arch, "-arch=sm_%d%d", p.major, p.minor);
    int major, minor;
    NK(nvrtcVersion(&major, &minor));
    printf("device %s, %s, NVRTC %d.%d\n", p.name, arch, major, minor);

    double ms;
    std::vector<char> vbin = compile(vadd_src, arch, &ms);
    printf("NVRTC cold compile vector_add: %.2f ms (%zu bytes)\n", ms, vbin.size());
    vbin = compile(vadd_src, arch, &ms);
    printf("NVRTC second compile vector_add: %.2f ms\n", ms);

    double t0 = now_ms();
    cudaLibrary_t lib;
    CK(cudaLibraryLoadData(&lib, vbin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    cudaKernel_t k;
    CK(cudaLibraryGetKernel(&k, lib, "vector_add"));
    printf("load + get kernel: %.3f ms\n", now_ms() - t0);

    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, (const void *)k));
    printf("attrs: maxThreadsPerBlock %d numRegs %d sharedSizeBytes %zu ptx %d binary %d "
           "maxDynamicShared %d\n", fa.maxThreadsPerBlock, fa.numRegs, fa.sharedSizeBytes,
           fa.ptxVersion, fa.binaryVersion, fa.maxDynamicSharedSizeBytes);
    CK(cudaFuncSetAttribute((const void *)k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            100 * 1024));
    CK(cudaFuncGetAttributes(&fa, (const void *)k));
    printf("after set: maxDynamicShared %d\n", fa.maxDynamicSharedSizeBytes);

    const int n = 1000;
    float *a, *b, *c;
    CK(cudaMalloc(&a, n * 4));
    CK(cudaMalloc(&b, n * 4));
    CK(cudaMalloc(&c, n * 4));
    std::vector<float> ha(n), hb(n), hc(n);
    for (int i = 0; i < n; ++i) { ha[i] = (float)i; hb[i] = 2.0f * i; }
    CK(cudaMemcpy(a, ha.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), n * 4, cudaMemcpyHostToDevice));
    int size = n;
    void *args[] = {&a, &b, &c, &size};
    t0 = now_ms();
    CK(cudaLaunchKernel((const void *)k, dim3(4), dim3(256), args, 0, 0));
    CK(cudaDeviceSynchronize());
    printf("first launch + sync: %.3f ms\n", now_ms() - t0);
    const int reps = 20000;
    t0 = now_ms();
    for (int r = 0; r < reps; ++r)
        CK(cudaLaunchKernel((const void *)k, dim3(4), dim3(256), args, 0, 0));
    double per = (now_ms() - t0) * 1e3 / reps;
    CK(cudaDeviceSynchronize());
    printf("host time per cudaLaunchKernel (library kernel): %.2f us\n", per);
    CK(cudaMemcpy(hc.data(), c, n * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += hc[i] != 3.0f * i;
    printf("vector_add %s\n", bad ? "WRONG" : "ok");

    std::vector<char> cbin = compile(const_src, arch, &ms);
    printf("NVRTC compile const kernel: %.2f ms\n", ms);
    cudaLibrary_t clib;
    CK(cudaLibraryLoadData(&clib, cbin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    cudaKernel_t ck;
    CK(cudaLibraryGetKernel(&ck, clib, "sum_and_multiply"));
    void *gptr = nullptr;
    size_t gbytes = 0;
    CK(cudaLibraryGetGlobal(&gptr, &gbytes, clib, "factors"));
    printf("factors at %p, %zu bytes\n", gptr, gbytes);
    cudaPointerAttributes pa;
    cudaError_t e = cudaPointerGetAttributes(&pa, gptr);
    printf("cudaPointerGetAttributes(factors): %s type %d device %d\n", cudaGetErrorName(e),
           (int)pa.type, pa.device);
    (void)cudaGetLastError();
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    float *pool;
    CK(cudaMallocAsync(&pool, 8, s));
    float hf[2] = {3.0f, 5.0f};
    CK(cudaMemcpyAsync(pool, hf, 8, cudaMemcpyHostToDevice, s));
    e = cudaMemcpyAsync(gptr, pool, 8, cudaMemcpyDeviceToDevice, s);
    printf("cudaMemcpyAsync D2D pool -> __constant__: %s\n", cudaGetErrorName(e));
    (void)cudaGetLastError();
    e = cudaMemcpyAsync(gptr, pool, 8, cudaMemcpyDefault, s);
    printf("cudaMemcpyAsync Default pool -> __constant__: %s\n", cudaGetErrorName(e));
    (void)cudaGetLastError();
    int sz = 512;
    void *cargs[] = {&a, &b, &c, &sz};
    CK(cudaLaunchKernel((const void *)ck, dim3(2), dim3(256), cargs, 0, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(hc.data(), c, 512 * 4, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < 512; ++i) bad += hc[i] != 3.0f * i * (i < 256 ? 3.0f : 5.0f);
    printf("constant-memory kernel %s\n", bad ? "WRONG" : "ok");

    // Device-independence of the handle: the same cudaKernel_t on device 1.
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    if (ndev > 1) {
        CK(cudaSetDevice(1));
        e = cudaFuncGetAttributes(&fa, (const void *)k);
        printf("device 1 attrs: %s\n", cudaGetErrorName(e));
    }
    CK(cudaLibraryUnload(lib));
    CK(cudaLibraryUnload(clib));
    printf("probe done\n");
    return 0;
}
