"""Probe for issue 4's compaction, selection and sorting on the GPU: where
compress_4M's time goes and how the compaction kernel scales.

Prints, each figure the median / min of many runs after warm-up (CUDA
events from gpuarr.cuda.Event, host times from perf_counter):

1. the pieces of x.compress(x > t) on 4.2M float32: the comparison alone,
   the compaction of a ready mask (events around the call, which waits for
   the count), its host wall time, an empty stream round trip (launch +
   synchronise), and a bandwidth reference (x.copy(), a masked fill);
2. the compaction kernel over sizes 1K..16M and densities 0..1: the
   intercept is the fixed cost, the slope the bandwidth;
3. median, std, the lesson's kappa-sigma clipper, sort, unique, nonzero,
   take, beside CuPy when it is installed;
4. correctness spot checks against NumPy.

The comparison with CUB's DeviceSelect::Flagged (the first implementation)
is src/kernels/dev/compact_bench.cu.

Usage: python tools/probe_select.py   (finishes in well under 60 s)
"""
import signal
import statistics
import sys
import time

import numpy as np

signal.alarm(58)       # never hang the batch

import gpuarr as gp    # noqa: E402
from gpuarr import _core  # noqa: E402
from _probe import host_time, per_call  # noqa: E402

sys.path.insert(0, "tests")
from _lesson import lesson_clipper  # noqa: E402  the lesson's clipper, shared with the tests

try:
    import cupy as cp
except Exception:      # noqa: BLE001 - CuPy is optional
    cp = None

T0 = time.perf_counter()
N4M = 2048 * 2048
NOISE = 1.0


def fmt(s):
    return f"{s * 1e6:8.1f} us" if s < 1e-3 else f"{s * 1e3:8.3f} ms"


def events_time(fn, runs=100, warm=5, xp=gp):
    """Median and min GPU seconds of fn: _probe.per_call (the library's benchmark())."""
    samples = per_call(fn, runs, warm, xp=xp)[0]
    return statistics.median(samples), min(samples)


def line(name, t, extra=""):
    print(f"  {name:44s} {fmt(t[0])} / {fmt(t[1])}  {extra}", flush=True)


def main():
    print(f"gpuarr {gp.__version__}, numpy {np.__version__}, cupy "
          f"{cp.__version__ if cp else 'absent'}", flush=True)
    rng = np.random.default_rng(4)
    host = rng.normal(0.0, NOISE, N4M).astype(np.float32)
    x = gp.asarray(host)
    t = -3 * NOISE
    m = x > t
    copy_rate = None

    print("\n1. compress_4M, piece by piece (median / min)")
    tc = events_time(lambda: x > t)
    line("x > t (comparison, 21 MB)", tc)
    tcopy = events_time(lambda: x.copy())
    copy_rate = 2 * 4 * N4M / tcopy[0]
    line("x.copy() (33.5 MB moved)", tcopy, f"{copy_rate / 1e9:.0f} GB/s")
    line("x[m] = 0 (masked fill, no sync)", events_time(lambda: x.copy().__setitem__(m, 0.0)),
         "(includes a copy)")
    stream_rt = events_time(lambda: (_core._spin(0), gp.cuda.Device().synchronize()))
    line("empty kernel + synchronize (round trip)", stream_rt)
    tk = events_time(lambda: x.compress(m))
    line("x.compress(m) (ready mask)", tk,
         f"floor {8 * N4M / copy_rate * 1e6:.1f} us (4 B read + 4 B written each)")
    line("x.compress(m) host wall time", host_time(lambda: x.compress(m)))
    line("x.compress(x > t) (the benchmark)", events_time(lambda: x.compress(x > t)))
    line("flatnonzero(m)", events_time(lambda: gp.flatnonzero(m)))
    line("x[m] (mask indexing)", events_time(lambda: x[m]))
    small = gp.asarray(host[:1000])
    sm = small > t
    line("x.compress(m), 1000 elements (fixed cost)", events_time(lambda: small.compress(sm)))
    line("  host wall time", host_time(lambda: small.compress(sm)))
    if cp is not None:
        cx = cp.asarray(host)
        cm = cx > t
        line("CuPy x.compress(x > t)", events_time(lambda: cx.compress(cx > t),
                                                    xp=cp))
        line("CuPy x.compress(m)", events_time(lambda: cx.compress(cm), xp=cp))

    print("\n2. the kernel over sizes and densities: x.compress(m), float32, events")
    print(f"  {'n':>10s} {'density':>8s} {'time':>12s}")
    for n in (1000, 65536, 1 << 20, N4M, 4 * N4M):
        hv = rng.standard_normal(n).astype(np.float32)
        for density in ((0.0, 0.5, 0.999) if n == N4M else (0.999,)):
            hm = rng.random(n) < density
            dv, dm = gp.asarray(hv), gp.asarray(hm)
            ts = events_time(lambda: dv.compress(dm), runs=40)[0]
            print(f"  {n:10d} {density:8.3f} {fmt(ts):>12s}", flush=True)
        del dv, dm

    print("\n3. the lesson's operations")
    sys.path.insert(0, "benchmarks")
    try:
        from _inputs import sky
        image = sky().ravel()
    except Exception as exc:  # noqa: BLE001
        print(f"  benchmarks/_inputs.py unavailable ({exc}); using Gaussian noise")
        image = host
    xs = gp.asarray(image)
    ops = {
        "median 4.2M f32": (lambda xp, a, ix: xp.median(a)),
        "std 4.2M f32": (lambda xp, a, ix: xp.std(a)),
        "percentile [5, 95]": (lambda xp, a, ix: xp.percentile(a, [5, 95])),
        "kappa-sigma clipper": (lambda xp, a, ix: lesson_clipper(a, xp=xp)),
        "sort 4.2M f32": (lambda xp, a, ix: xp.sort(a)),
        "argsort 4.2M f32": (lambda xp, a, ix: xp.argsort(a)),
        "unique of 4.2M int16": (lambda xp, a, ix: xp.unique((a * 100).astype(xp.int16))),
        "nonzero 2048^2 (5 sigma)": (lambda xp, a, ix: xp.nonzero(a.reshape(2048, 2048) > 5)),
        "take 1M random": (lambda xp, a, ix: xp.take(a, ix)),
    }
    idx = rng.integers(0, N4M, 1 << 20)
    gidx = gp.asarray(idx)
    runs = {"kappa-sigma clipper": 20, "sort 4.2M f32": 20, "argsort 4.2M f32": 20,
            "unique of 4.2M int16": 20}
    cxs = cp.asarray(image) if cp is not None else None
    cidx = cp.asarray(idx) if cp is not None else None
    for name, op in ops.items():
        g = events_time(lambda: op(gp, xs, gidx), runs=runs.get(name, 100))
        extra = ""
        if cp is not None and time.perf_counter() - T0 < 30:
            try:
                c = events_time(lambda: op(cp, cxs, cidx), runs=min(20, runs.get(name, 100)),
                                warm=2, xp=cp)
                extra = f"CuPy {fmt(c[0])} / {fmt(c[1])}"
            except Exception as exc:  # noqa: BLE001
                extra = f"CuPy failed: {type(exc).__name__}"
        line(name, g, extra)
    kept_gp = lesson_clipper(xs, xp=gp)
    kept_np = lesson_clipper(image)
    print(f"  clipper keeps {len(kept_gp)} pixels (NumPy {len(kept_np)}), std "
          f"{float(gp.std(kept_gp)):.7g} (NumPy {float(np.std(kept_np)):.7g})")

    print("\n4. correctness spot checks")
    bad = 0
    for n in (1, 4095, 4096, 4097, 3 * 4096 + 5, N4M + 3):
        hv = rng.standard_normal(n).astype(np.float32)
        for density in (0.0, 0.3, 1.0):
            hm = rng.random(n) < density
            want = hv[hm]
            got = gp.asarray(hv).compress(gp.asarray(hm)).get()
            gotf = gp.flatnonzero(gp.asarray(hm)).get()
            ok = np.array_equal(got, want) and np.array_equal(gotf, np.flatnonzero(hm))
            if not ok:
                bad += 1
                print(f"  MISMATCH n={n} density={density}: {got.size} vs {want.size}")
    print(f"  {'all match' if bad == 0 else f'{bad} mismatches'}")


if __name__ == "__main__":
    main()
