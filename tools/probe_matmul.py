"""Probe of a small a @ b (64 x 64 float32), gpuarr beside CuPy: is
bench_matmul's matmul_overhead_64 (20,000 calls, one sync: 8.9 us per call
for gpuarr, 16.2 us for CuPy on the lent H100) host time or GPU time?

1. GPU time of one product: CUDA events around 1000 back-to-back calls
   (the device's time per product when the host keeps it fed).
2. Enqueue time: 200 calls timed before the synchronisation (fewer than
   the launch queue holds, so the host never waits for the GPU), after a
   synchronised start: the host's own cost per call.
3. The same 20,000-call loop as the benchmark, for reference.
Each figure: median and min of 15 samples.  Finishes in a few seconds.
"""
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import gpuarr as gp  # noqa: E402


def stats_us(samples):
    return f"median {statistics.median(samples) * 1e6:7.2f} us  min {min(samples) * 1e6:7.2f} us"


def probe(name, xp, sync, event):
    rng = np.random.default_rng(0)
    a = xp.asarray(rng.random((64, 64), dtype=np.float32))
    b = xp.asarray(rng.random((64, 64), dtype=np.float32))
    for _ in range(200):
        a @ b
    sync()
    gpu, enqueue, loop = [], [], []
    for _ in range(15):
        start, stop = event(), event()
        start.record()
        for _ in range(1000):
            a @ b
        stop.record()
        stop.synchronize()
        gpu.append(xp.cuda.get_elapsed_time(start, stop) * 1e-3 / 1000)
        sync()
        t0 = time.perf_counter()
        for _ in range(200):
            a @ b
        enqueue.append((time.perf_counter() - t0) / 200)
        sync()
        t0 = time.perf_counter()
        for _ in range(20000):
            a @ b
        sync()
        loop.append((time.perf_counter() - t0) / 20000)
    print(f"{name:7s} GPU time per product (1000 back to back): {stats_us(gpu)}")
    print(f"{name:7s} enqueue time per call (200, before sync):  {stats_us(enqueue)}")
    print(f"{name:7s} 20,000 calls, one sync (the benchmark):    {stats_us(loop)}")


def main():
    probe("gpuarr", gp, gp.cuda.Device().synchronize, gp.cuda.Event)
    try:
        import cupy as cp
    except ImportError:
        print("CuPy is not installed")
        return
    probe("cupy", cp, cp.cuda.Device().synchronize, cp.cuda.Event)


if __name__ == "__main__":
    main()
