// last_block.cuh -- the last-block ticket (CUDA's threadFenceReduction
// sample): every block of a grid writes its share of a result, then takes
// a ticket from a counter in device memory; the block that takes the last
// one (gridDim.x - 1) sees every other block's writes and finishes the
// result in the same launch -- it also sets the counter back to 0 for the
// next launch.  Two forms, for who wrote the block's share.
#ifndef GA_LAST_BLOCK_CUH
#define GA_LAST_BLOCK_CUH

#include "kernel_common.cuh"

// Whole block, after every thread's writes: true in every thread of the
// last block to arrive, whose reads then see all blocks' writes.
__device__ __forceinline__ bool ga_last_block(unsigned int *ticket)
{
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last)
        return false;
    __threadfence();
    return true;
}

// Thread 0 alone, after its own writes of the block's share: true in the
// last block's thread 0, with no barrier, so the other threads can go on
// with their work meanwhile (share the answer as the caller needs, and
// fence with __threadfence() before reading other blocks' writes).
__device__ __forceinline__ bool ga_last_block_thread0(unsigned int *ticket)
{
    __threadfence();
    return atomicAdd(ticket, 1u) == gridDim.x - 1;
}

#endif
