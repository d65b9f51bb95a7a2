"""What the probes share: the time of a call, from the library's own
benchmark() (gpuarr.profiler.benchmark, or CuPy's cupyx.profiler.benchmark,
whose signature it copies): CUDA events around each repeat, the host time
of each call; and the host's own clock where the question is the host's
time (host_time, back_to_back).  The probes run as scripts (python
tools/probe_*.py), so this directory is on sys.path."""
import statistics
import time

import numpy as np


def _device_sync():
    import gpuarr
    return gpuarr.cuda.Device().synchronize


def host_time(fn, runs=100, warmup=5, sync=None):
    """(median, min) host seconds of one call made with the device idle
    (synchronised before each call; the call's own time to return)."""
    sync = sync or _device_sync()
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        sync()
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    sync()
    return statistics.median(samples), min(samples)


def back_to_back(fn, calls=2000, reps=5, sync=None, include_sync=True):
    """Seconds a call of `calls` calls made back to back (no
    synchronisation between them), one figure per repeat: to the
    synchronisation after the last call (include_sync: the rate the host
    and the GPU together sustain), or to the host's return from it (the
    host's rate alone, while the GPU queue absorbs the work)."""
    sync = sync or _device_sync()
    fn()
    sync()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        sync()
        out.append(((time.perf_counter() if include_sync else t1) - t0) / calls)
    return out


def per_call(fn, n, warmup=5, inner=1, xp=None):
    """(GPU seconds, host seconds) per call of fn, one of each per repeat
    (NumPy arrays), over n repeats after `warmup` untimed ones; with
    inner > 1 a repeat is that many calls back to back (the GPU's time per
    call when the GPU is the bottleneck, the host's when the host is).
    xp: gpuarr (the default) or cupy."""
    if xp is None or xp.__name__ == "gpuarr":
        from gpuarr.profiler import benchmark
    else:
        from cupyx.profiler import benchmark

    def repeat():
        for _ in range(inner):
            fn()
    result = benchmark(fn if inner == 1 else repeat, n_repeat=n, n_warmup=warmup)
    return result.gpu_times[0] / inner, result.cpu_times / inner


def timed(fn, n=40, warmup=5, inner=1, xp=None):
    """(GPU median, GPU min, host median) microseconds per call: per_call's."""
    gpu, host = per_call(fn, n, warmup, inner, xp)
    return float(np.median(gpu)) * 1e6, float(gpu.min()) * 1e6, float(np.median(host)) * 1e6
