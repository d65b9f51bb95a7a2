"""Probe: gpuarr.stats.sigma_clip on the 2048^2 sky (issue 8's goal: the
lesson's mode in <= 0.3 ms).  Prints, for the single cooperative launch and
for one launch per pass: the whole call, the clipping alone (_clip_run),
its cost per iteration (maxiters = 1..8), the compaction, the host time of
a call, and checks the survivors against the lesson's NumPy clipper.

    python tools/probe_stats.py
"""
import faulthandler
import sys

import numpy as np

faulthandler.dump_traceback_later(80, exit=True)

import gpuarr as gp  # noqa: E402
from gpuarr import datasets, stats  # noqa: E402
from _probe import host_time, timed  # noqa: E402

sys.path.insert(0, "tests")
from _lesson import lesson_clipper  # noqa: E402  the lesson's clipper, shared with the tests


def fmt(t):
    return f"{t[0]:8.1f} / {t[1]:8.1f} us"


def main():
    print(gp.cuda.runtime.getDeviceProperties(0)["name"]
          if hasattr(gp.cuda.runtime, "getDeviceProperties") else "device 0")
    sky = datasets.synthetic_sky(2048)
    passes = []
    want = lesson_clipper(sky.ravel(), trace=passes)
    iters = len(passes)
    print(f"lesson clipper (NumPy): {want.size} survivors, {iters} iterations, "
          f"std {np.std(want)!r}")
    dev = gp.asarray(sky)
    flat = dev.ravel()
    dev64 = gp.asarray(sky.astype(np.float64)).ravel()
    for per_pass in (False, True):
        stats._PER_PASS = per_pass
        name = "one launch per pass" if per_pass else "one cooperative launch"
        print(f"\n== {name}")
        got = stats.sigma_clip(dev, sigma=3, maxiters=None, masked=False, inclusive=False)
        ok = got.size == want.size and np.array_equal(got.get(), want)
        print(f"survivors {got.size} (NumPy {want.size}), identical: {ok}")
        st = gp._core._clip_run(flat, flat.size, 3.0, 3.0, -1, False, True, False, 0, False,
                                per_pass)
        n_it = int(gp._core._clip_extract(flat, flat.size, st, 5).get()[0])
        print(f"iterations recorded: {n_it}")
        print("sigma_clip lesson mode (whole call)  med/min", fmt(timed(
            lambda: stats.sigma_clip(dev, sigma=3, maxiters=None, masked=False,
                                     inclusive=False))))
        call = 1e6 * host_time(lambda: stats.sigma_clip(dev, sigma=3, maxiters=None,
                                                        masked=False, inclusive=False),
                               runs=40)[1]
        print(f"  host time of the call (best)         {call:8.1f} us")
        run = lambda m, x=flat: gp._core._clip_run(x, x.size, 3.0, 3.0, m, False, True,  # noqa
                                                   False, 0, False, per_pass)
        print("_clip_run to convergence             med/min", fmt(timed(lambda: run(-1))))
        print("_clip_run float64 to convergence     med/min",
              fmt(timed(lambda: run(-1, dev64))))
        prev = None
        for m in range(0, 9):
            t = timed(lambda: run(m), n=20)
            extra = f"   (+{t[0] - prev:.1f})" if prev is not None else ""
            print(f"_clip_run maxiters={m}                med/min {fmt(t)}{extra}")
            prev = t[0]
        st = run(-1)
        print("_clip_compress (count, sync, compact) med/min",
              fmt(timed(lambda: gp._core._clip_compress(flat, st, False, False))))
        print("sigma_clipped_stats lesson mode      med/min", fmt(timed(
            lambda: stats.sigma_clipped_stats(dev, maxiters=None, inclusive=False))))
        print("sigma_clipped_stats astropy defaults med/min", fmt(timed(
            lambda: stats.sigma_clipped_stats(dev))))
        print("sigma_clip masked, astropy defaults  med/min", fmt(timed(
            lambda: stats.sigma_clip(dev))))
        print("sigma_clip axis=1 (2048 rows)        med/min", fmt(timed(
            lambda: stats.sigma_clip(dev, axis=1, masked=False), n=10)))
    stats._PER_PASS = False
    try:
        import cupy as cp
        cflat = cp.asarray(sky.ravel())

        med, best, _ = timed(lambda: lesson_clipper(cflat, xp=cp), n=5, warmup=1, xp=cp)
        print(f"\nCuPy, the lesson's clipper: {med:.1f} / {best:.1f} us")
    except Exception as exc:  # CuPy is optional here
        print(f"\nCuPy not measured: {type(exc).__name__}: {exc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
