// bench_common.cuh -- what the standalone device harnesses in this folder
// share: the check macro that stops a harness at the first failing CUDA call,
// naming the call and its line.  (The package's own code never exits: its
// launchers return cudaError_t; these harnesses are programs run by hand.)
#pragma once

#include <cstdio>
#include <cstdlib>

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
