"""What the probes share: the time of a call, from the library's own
benchmark() (gpuarr.profiler.benchmark, or CuPy's cupyx.profiler.benchmark,
whose signature it copies): CUDA events around each repeat, the host time
of each call.  The probes run as scripts (python tools/probe_*.py), so this
directory is on sys.path."""
import numpy as np


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
