"""Probe: reductions and scans (issue 4's goals: sum of 1 GiB float32 at
>= 95% of the copy rate, std of 4.2M float32 <= 30 us), the nan* forms
beside their plain kernels, and cumsum/cumprod, CuPy side by side.  Prints
device time (median / min of CUDA-event runs after warm-up), GB/s, and a
correctness check of each against NumPy.

    python tools/probe_reduce.py
"""
import faulthandler
import time
import warnings

import numpy as np

faulthandler.dump_traceback_later(55, exit=True)

import gpuarr as gp  # noqa: E402
from _probe import timed  # noqa: E402

try:
    import cupy as cp
except ImportError:  # CuPy is optional
    cp = None


def host_us(fn, n=200):
    fn()
    gp.cuda.device_synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    gp.cuda.device_synchronize()
    return 1e6 * (time.perf_counter() - t) / n


def line(name, t, nbytes=None, cupy_t=None, check=None):
    text = f"{name:44s} {t[0]:9.1f} / {t[1]:9.1f} us"
    if nbytes:
        text += f"  {nbytes / (t[0] * 1e-6) / 1e9:7.0f} GB/s"
    if cupy_t is not None:
        text += f"   cupy {cupy_t[0]:9.1f} us"
    if check is not None:
        text += f"   {'ok' if check else 'MISMATCH'}"
    print(text, flush=True)


def close(got, want, rtol):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    return bool(np.all(np.isclose(got, want, rtol=rtol, atol=0, equal_nan=True)))


def main():
    rng = np.random.default_rng(1)
    print("device 0:", gp.cuda.Device(0).name)

    # ---- copy rate and the 1 GiB sum
    n = (1 << 30) // 4
    big = gp.random.standard_normal(n, dtype=np.float32)
    dst = gp.empty_like(big)
    copy = timed(lambda: dst.__setitem__(Ellipsis, big), n=10)
    copy_rate = 2 * big.nbytes / (copy[0] * 1e-6)
    line("copy 1 GiB f32 (read + write)", copy, 2 * big.nbytes)
    t = timed(lambda: big.sum(), n=10)
    line("sum 1 GiB f32", t, big.nbytes,
         check=close(float(big.sum()), float(np.sum(big.get().astype(np.float64))), 1e-5))
    print(f"    sum rate / copy rate: {big.nbytes / (t[0] * 1e-6) / copy_rate * 100:.1f}% "
          "(goal >= 95%)")
    del big, dst
    gp.get_default_memory_pool().free_all_blocks()

    # ---- the lesson's 4.2M vector
    host = (rng.standard_normal(4_194_304) * 3 + 1000).astype(np.float32)
    x = gp.asarray(host)
    c = cp.asarray(host) if cp else None
    nb = host.nbytes
    std_t = timed(lambda: x.std(), n=100)
    line("std 4.2M f32", std_t, nb, timed(lambda: c.std(), n=20, xp=cp) if cp else None,
         close(float(x.std()), np.std(host.astype(np.float64)), 1e-6))
    print(f"    std goal <= 30 us: {'met' if std_t[0] <= 30 else 'MISSED'}")
    line("sum 4.2M f32", timed(lambda: x.sum(), n=100), nb,
         timed(lambda: c.sum(), n=20, xp=cp) if cp else None)
    line("mean 4.2M f32", timed(lambda: x.mean(), n=100), nb)
    line("min 4.2M f32", timed(lambda: x.min(), n=100), nb)
    line("argmax 4.2M f32", timed(lambda: x.argmax(), n=100), nb)

    # ---- nan* forms: the kernel alone (no NaN: nothing to check on the host)
    # and the whole call with NaNs present
    hn = host.copy()
    hn[rng.random(hn.size) < 0.1] = np.nan
    xn = gp.asarray(hn)
    cn = cp.asarray(hn) if cp else None
    for name in ["nansum", "nanmean", "nanstd", "nanmin", "nanmax", "nanargmin"]:
        f = getattr(gp, name)
        want = getattr(np, name)(hn.astype(np.float64) if name != "nanargmin" else hn)
        got = f(xn)
        ok = int(got) == int(want) if name == "nanargmin" else close(float(got), want, 1e-5)
        cupy_t = timed(lambda: getattr(cp, name)(cn), n=10, xp=cp) if cp else None
        line(f"{name} 4.2M f32 (10% NaN)", timed(lambda: f(xn), n=50), nb, cupy_t, ok)
    line("nanstd 4.2M f32, host us per call", (host_us(lambda: gp.nanstd(xn)),) * 2)
    line("std 4.2M f32, host us per call", (host_us(lambda: gp.std(x)),) * 2)

    # nan* on 2-d slices (the split and column paths)
    img = rng.standard_normal((2048, 2048)).astype(np.float32)
    img[rng.random(img.shape) < 0.05] = np.nan
    d = gp.asarray(img)
    for axis in (0, 1):
        got = gp.nanmean(d, axis=axis).get()
        line(f"nanmean 2048^2 f32 axis={axis}", timed(lambda: gp.nanmean(d, axis=axis), n=30),
             img.nbytes, check=close(got, np.nanmean(img.astype(np.float64), axis=axis), 1e-5))

    # ---- scans
    for name in ["cumsum", "cumprod"]:
        f = getattr(gp, name)
        src = host if name == "cumsum" else (1 + 1e-7 * rng.standard_normal(host.size)).astype(
            np.float32)
        xs = gp.asarray(src)
        cs = cp.asarray(src) if cp else None
        want = getattr(np, name)(src.astype(np.float64))
        got = f(xs).get()
        ok = close(got, want, 1e-4)
        line(f"{name} 4.2M f32", timed(lambda: f(xs), n=30), 2 * nb,
             timed(lambda: getattr(cp, name)(cs), n=10, xp=cp) if cp else None, ok)
    for shape, axis in [((2048, 2048), 1), ((2048, 2048), 0), ((100_000, 3), 1),
                        ((4, 1_048_576), 1)]:
        a = rng.standard_normal(shape).astype(np.float32)
        xa = gp.asarray(a)
        ca = cp.asarray(a) if cp else None
        got = gp.cumsum(xa, axis=axis).get()
        want = np.cumsum(a.astype(np.float64), axis=axis)
        scale = np.cumsum(np.abs(a.astype(np.float64)), axis=axis)
        ok = bool(np.all(np.abs(got - want) <= 1e-5 * scale + 1e-6))
        line(f"cumsum {shape} f32 axis={axis}", timed(lambda: gp.cumsum(xa, axis=axis), n=30),
             2 * a.nbytes, timed(lambda: cp.cumsum(ca, axis=axis), n=10, xp=cp) if cp else None, ok)
    ints = rng.integers(-100, 100, 4_194_304).astype(np.int32)
    xi = gp.asarray(ints)
    line("cumsum 4.2M int32 -> int64", timed(lambda: gp.cumsum(xi), n=30), ints.nbytes * 3,
         check=bool(np.array_equal(gp.cumsum(xi).get(), np.cumsum(ints))))

    # ---- integer-dtype mean (sum, then a division, as NumPy)
    h8 = rng.integers(-128, 128, (40, 30)).astype(np.int8)
    ok = all(np.array_equal(gp.mean(gp.asarray(h8), axis=ax, dtype=np.int64).get(),
                            np.mean(h8, axis=ax, dtype=np.int64)) for ax in (None, 0, 1))
    print(f"mean int8 dtype=int64 matches NumPy: {ok}")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        main()
