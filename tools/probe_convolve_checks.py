"""Probe (issue 7): correctness of gpuarr's convolutions and filters at the
lesson's sizes and beyond the test suite's small arrays, against SciPy/NumPy
on the CPU (and CuPy's cupyx.scipy where SciPy would be too slow), plus
first-call and steady-state timings beside CuPy.  Prints one line per check:
OK/FAIL, the max abs difference over the result's scale, and times.  Stops
starting new checks after 45 s so it ends within a minute."""
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

T0 = time.perf_counter()
t = time.perf_counter()
import gpuarr as gp  # noqa: E402
from gpuarr.scipy import ndimage, signal  # noqa: E402
from _probe import timed  # noqa: E402
IMPORT_S = time.perf_counter() - t

import scipy.ndimage as ndi  # noqa: E402
import scipy.signal as ss  # noqa: E402

try:
    import cupy as cp
    import cupyx.scipy.ndimage as cndi
    import cupyx.scipy.signal as css
except Exception:  # noqa: BLE001 -- CuPy is optional here
    cp = None

BUDGET_S = 45.0
rng = np.random.default_rng(int.from_bytes(np.random.bytes(4), "little"))
failures = 0


def report(name, got, want, tol):
    global failures
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        failures += 1
        print(f"FAIL {name}: shape/dtype {got.shape} {got.dtype} vs {want.shape} {want.dtype}")
        return
    scale = float(np.max(np.abs(want))) if want.size else 1.0
    err = float(np.max(np.abs(got.astype(np.complex128) - want))) / (scale or 1.0) \
        if want.size else 0.0
    ok = err <= tol
    failures += not ok
    print(f"{'OK  ' if ok else 'FAIL'} {name}: rel err {err:.2e} (tol {tol:.0e})")


def seconds(f, n=20, xp=None):
    """(median, min) GPU seconds per call: _probe.timed (the library's benchmark())."""
    med, best, _ = timed(f, n, 3, xp=xp)
    return med / 1e6, best / 1e6


def check(fn):
    if time.perf_counter() - T0 > BUDGET_S:
        print(f"SKIP {fn.__name__}: time budget spent")
        return
    try:
        fn()
    except Exception:  # noqa: BLE001 -- a probe reports and goes on
        global failures
        failures += 1
        print(f"FAIL {fn.__name__}: exception")
        traceback.print_exc(file=sys.stdout)


def lesson_arrays(n=2048):
    deltas = np.zeros((n, n))
    deltas[8::16, 8::16] = 1
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    gauss = np.exp(-(np.sqrt(x * x + y * y) ** 2 / 2.0))
    return deltas, gauss


def first_call():
    deltas, gauss = lesson_arrays(256)
    d, g = gp.asarray(deltas), gp.asarray(gauss)
    gp.cuda.Device().synchronize()
    t = time.perf_counter()
    r = signal.convolve2d(d, g)
    gp.cuda.Device().synchronize()
    print(f"INFO import gpuarr {IMPORT_S * 1e3:.1f} ms; first convolve2d (256^2) "
          f"{(time.perf_counter() - t) * 1e3:.2f} ms")
    report("first convolve2d", r.get(), ss.convolve2d(deltas, gauss), 1e-12)


def lesson_2d():
    deltas, gauss = lesson_arrays()
    d, g = gp.asarray(deltas), gp.asarray(gauss)
    got = signal.convolve2d(d, g)
    if cp is not None:
        want = css.convolve2d(cp.asarray(deltas), cp.asarray(gauss)).get()
        report("lesson convolve2d 2048^2 x 15^2 full vs cupyx", got.get(), want, 1e-12)
    # SciPy on the host: the valid middle band only (the full image takes seconds).
    band = deltas[:256]
    report("lesson convolve2d band vs SciPy", signal.convolve2d(gp.asarray(band), g).get(),
           ss.convolve2d(band, gauss), 1e-12)
    print("INFO lesson np.allclose(gpu, cpu) on the band:",
          repr(np.allclose(signal.convolve2d(gp.asarray(band), g), ss.convolve2d(band, gauss))))
    med, mn = seconds(lambda: signal.convolve2d(d, g))
    line = f"TIME convolve2d 2048^2 f64 x 15^2 full: gpuarr {med * 1e6:.1f} us (min {mn * 1e6:.1f})"
    if cp is not None:
        cd, cg = cp.asarray(deltas), cp.asarray(gauss)
        cmed, _ = seconds(lambda: css.convolve2d(cd, cg), xp=cp)
        line += f", CuPy {cmed * 1e6:.1f} us"
    print(line + " (goal <= 100 us)")


def boundaries_large():
    x = rng.standard_normal((300, 517))
    for kshape in ((15, 15), (31, 9), (4, 40)):
        k = rng.standard_normal(kshape)
        for boundary in ("fill", "wrap", "symm"):
            for mode in ("full", "same", "valid"):
                for name in ("convolve2d", "correlate2d"):
                    got = getattr(signal, name)(gp.asarray(x), gp.asarray(k), mode=mode,
                                                boundary=boundary, fillvalue=0.5)
                    want = getattr(ss, name)(x, k, mode=mode, boundary=boundary, fillvalue=0.5)
                    report(f"{name} 300x517 {kshape} {mode} {boundary}", got.get(), want, 1e-12)
    xf, kf = x.astype(np.float32), rng.standard_normal((15, 15)).astype(np.float32)
    report("convolve2d float32 300x517 15x15",
           signal.convolve2d(gp.asarray(xf), gp.asarray(kf)).get(), ss.convolve2d(xf, kf), 1e-5)
    xi = rng.integers(-1000, 1000, size=(300, 517)).astype(np.int32)
    ki = rng.integers(-50, 50, size=(7, 7)).astype(np.int32)
    report("convolve2d int32 300x517 7x7 symm",
           signal.convolve2d(gp.asarray(xi), gp.asarray(ki), boundary="symm").get(),
           ss.convolve2d(xi, ki, boundary="symm"), 0)


def np_convolve_1d():
    a = rng.standard_normal(4_200_000)
    v = rng.standard_normal(15)
    da, dv = gp.asarray(a), gp.asarray(v)
    for mode in ("full", "same", "valid"):
        report(f"np.convolve 4.2M x 15 {mode}", np.convolve(da, dv, mode).get(),
               np.convolve(a, v, mode), 1e-12)
    report("np.correlate 4.2M x 15 full", np.correlate(da, dv, "full").get(),
           np.correlate(a, v, "full"), 1e-12)
    v2 = rng.standard_normal(4000)
    report("np.convolve 200k x 4000 same", np.convolve(da[:200_000], gp.asarray(v2), "same").get(),
           np.convolve(a[:200_000], v2, "same"), 1e-11)
    med, mn = seconds(lambda: np.convolve(da, dv))
    line = f"TIME np.convolve 4.2M f64 x 15: gpuarr {med * 1e6:.1f} us (min {mn * 1e6:.1f})"
    if cp is not None:
        ca, cv = cp.asarray(a), cp.asarray(v)
        cmed, _ = seconds(lambda: cp.convolve(ca, cv), xp=cp)
        line += f", CuPy {cmed * 1e6:.1f} us"
    print(line + " (goal <= 30 us)")


def nd_signal():
    x = rng.standard_normal((20, 60, 70))
    k = rng.standard_normal((3, 9, 5))
    for mode in ("full", "same", "valid"):
        for name in ("convolve", "correlate"):
            report(f"signal.{name} 3-d {mode}",
                   getattr(signal, name)(gp.asarray(x), gp.asarray(k), mode=mode).get(),
                   getattr(ss, name)(x, k, mode=mode, method="direct"), 1e-11)
    report("fftconvolve 3-d axes=(1,2)",
           signal.fftconvolve(gp.asarray(x), gp.asarray(k[:1]), axes=(1, 2)).get(),
           ss.fftconvolve(x, k[:1], axes=(1, 2)), 1e-10)


def gaussian_stack():
    small = rng.standard_normal((16, 200, 230)).astype(np.float32)
    for mode in ("reflect", "constant", "nearest", "mirror", "wrap"):
        report(f"gaussian_filter 16x200x230 f32 sigma 2 {mode}",
               ndimage.gaussian_filter(gp.asarray(small), 2, mode=mode).get(),
               ndi.gaussian_filter(small, 2, mode=mode), 2e-5)
    report("gaussian_filter order (0,1,2) f64",
           ndimage.gaussian_filter(gp.asarray(small[:4].astype(np.float64)), 1.5,
                                   order=(0, 1, 2)).get(),
           ndi.gaussian_filter(small[:4].astype(np.float64), 1.5, order=(0, 1, 2)), 1e-11)
    stack = rng.random((100, 1024, 1024), dtype=np.float32)
    ds = gp.asarray(stack)
    got = ndimage.gaussian_filter(ds, 2)
    if cp is not None:
        cs = cp.asarray(stack)
        report("gaussian_filter 100x1024^2 f32 vs cupyx", got.get(), cndi.gaussian_filter(cs, 2).get(),
               2e-5)
    else:
        report("gaussian_filter 100x1024^2 f32 slab vs SciPy", got[40:60].get()[8:12],
               ndi.gaussian_filter(stack[32:68], 2)[16:20], 2e-5)
    med, mn = seconds(lambda: ndimage.gaussian_filter(ds, 2), n=10)
    line = f"TIME gaussian_filter 100x1024^2 f32 sigma 2: gpuarr {med * 1e3:.2f} ms (min {mn * 1e3:.2f})"
    if cp is not None:
        cmed, _ = seconds(lambda: cndi.gaussian_filter(cs, 2), n=10, xp=cp)
        line += f", CuPy {cmed * 1e3:.2f} ms"
    print(line + " (goal <= 2 ms)")


def ndimage_large():
    x = rng.standard_normal((40, 128, 130))
    w = rng.standard_normal((5, 5, 5))
    for mode in ("reflect", "constant", "wrap"):
        report(f"ndimage.correlate 40x128x130 5^3 {mode}",
               ndimage.correlate(gp.asarray(x), gp.asarray(w), mode=mode, cval=0.3).get(),
               ndi.correlate(x, w, mode=mode, cval=0.3), 1e-11)
    report("ndimage.convolve1d axis 0, 40 taps",
           ndimage.convolve1d(gp.asarray(x), gp.asarray(w.ravel()[:40]), axis=0).get(),
           ndi.convolve1d(x, w.ravel()[:40], axis=0), 1e-11)
    report("uniform_filter 3-d size 7 f64", ndimage.uniform_filter(gp.asarray(x), 7).get(),
           ndi.uniform_filter(x, 7), 1e-11)
    img = rng.standard_normal((512, 512)).astype(np.float32)
    report("median_filter 512^2 size 5", ndimage.median_filter(gp.asarray(img), 5).get(),
           ndi.median_filter(img, 5), 0)
    report("median_filter 256^2 size 9 (81 taps)",
           ndimage.median_filter(gp.asarray(img[:256, :256]), 9).get(),
           ndi.median_filter(img[:256, :256], 9), 0)
    report("maximum_filter 512^2 size (3, 11)",
           ndimage.maximum_filter(gp.asarray(img), (3, 11)).get(),
           ndi.maximum_filter(img, (3, 11)), 0)
    fp = rng.random((5, 5)) < 0.5
    fp[2, 2] = True
    report("minimum_filter footprint 5x5", ndimage.minimum_filter(gp.asarray(img), footprint=fp,
                                                                  mode="mirror").get(),
           ndi.minimum_filter(img, footprint=fp, mode="mirror"), 0)


for fn in (first_call, lesson_2d, np_convolve_1d, boundaries_large, nd_signal, ndimage_large,
           gaussian_stack):
    check(fn)
print(f"DONE {failures} failure(s) in {time.perf_counter() - T0:.1f} s")
