// spin.cu -- a test-only kernel that busy-waits a known number of SM clock
// cycles, so tests can check event timing against the device's clock rate
// (cudaDevAttrClockRate) and hold a stream busy for a known time.
#include "kernel_common.cuh"

// ============================== kernels ====================================

// One thread reads the SM's 64-bit cycle counter until `cycles` have passed.
// clock64() is volatile, so the loop is never folded away.
__global__ void k_spin(int64_t cycles)
{
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

// ============================== launchers ==================================

extern "C" cudaError_t ga_launch_spin(int64_t cycles, cudaStream_t stream)
{
    k_spin<<<1, 1, 0, stream>>>(cycles);
    return cudaGetLastError();
}
