"""Probe for the elementwise area (run by tools/gpu-batch.sh on a GPU machine).

1. where_2048 taken apart: gp.where(img > t, 1, 0) on a 2048x2048 float32
   image as the benchmark times it (events around the call), then greater()
   and where() each alone, each 20 times back to back (pure GPU time), host
   time per call, the pool's allocation of the int64 result; CuPy beside it.
2. The kernel harness src/kernels/dev/ew_bench.cu (compiled here with nvcc):
   kernel variants of greater/where, the copy rate at these sizes, the CUDA
   cost of benchmark()'s event pair per repeat phase by phase, the host cost
   of a launch (runtime and driver API), and sincos_1e7's float64 kernels.
3. benchmark() overhead per repeat on a no-op function (gpuarr and CuPy).
4. Import time of gpuarr: wall time in fresh processes and the top entries
   of python -X importtime.
5. Host time of x + y on 1000 float64 taken apart by elimination: the same
   call on empty arrays (everything but the launch and the pool), with
   out= (no allocation), empty() alone, a C attribute read (the Python
   floor), scalar operands.
6. sincos_1e7's kernels one by one (sin, cos, sqrt, divide, add on 1e7
   float64), back to back, against the copy rate.
Finishes in well under 60 s.  Parts can be named on the command line
(where harness bench host sincos import).
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from _probe import back_to_back, per_call  # noqa: E402


def section(title):
    print(f"\n=== {title} ===", flush=True)


def stats_us(samples):
    return f"median {statistics.median(samples) * 1e6:8.2f} us  min {min(samples) * 1e6:8.2f} us"


def event_time(gp, fn, runs=300, inner=1):
    """GPU seconds per call of fn, one per run: _probe.per_call (the library's benchmark())."""
    return per_call(fn, runs, 10, inner, xp=gp)[0]


def where_breakdown():
    import numpy as np
    import gpuarr as gp
    section("where_2048 breakdown (gpuarr)")
    rng = np.random.default_rng(0)
    host = rng.normal(0, 1, (2048, 2048)).astype(np.float32)
    t = 2.0
    img = gp.asarray(host)
    cond = img > t
    want = np.where(host > t, 1, 0)
    got = gp.where(img > t, 1, 0)
    print("correct:", got.dtype == want.dtype and bool((got.get() == want).all()), got.dtype)
    n = host.size
    rate = lambda s, b: f"{b / statistics.median(s) / 1e9:7.0f} GB/s"
    sync = gp.cuda.Device().synchronize
    s = event_time(gp, lambda: gp.where(img > t, 1, 0))
    print(f"where(img > t, 1, 0), events around the call: {stats_us(s)}")
    s = event_time(gp, lambda: img > t)
    print(f"greater alone:                   {stats_us(s)}")
    s = event_time(gp, lambda: img > t, runs=100, inner=20)
    print(f"greater x20 back to back, per:   {stats_us(s)} {rate(s, 5 * n)}")
    s = event_time(gp, lambda: gp.where(cond, 1, 0))
    print(f"where alone:                     {stats_us(s)}")
    s = event_time(gp, lambda: gp.where(cond, 1, 0), runs=100, inner=20)
    print(f"where x20 back to back, per:     {stats_us(s)} {rate(s, 9 * n)}")
    s = event_time(gp, lambda: gp.where(img > t, 1, 0), runs=100, inner=20)
    print(f"pair x20 back to back, per:      {stats_us(s)} {rate(s, 14 * n)}")
    print(f"host per greater call:           "
          f"{stats_us(back_to_back(lambda: img > t, sync=sync))}")
    print(f"host per where call:             "
          f"{stats_us(back_to_back(lambda: gp.where(cond, 1, 0), sync=sync))}")
    print(f"host per where(img > t, 1, 0):   "
          f"{stats_us(back_to_back(lambda: gp.where(img > t, 1, 0), sync=sync))}")
    print(f"host per empty(4M, int64):       "
          f"{stats_us(back_to_back(lambda: gp.empty(n, gp.int64), sync=sync))}")
    s = event_time(gp, lambda: gp.empty(n, gp.int64))
    print(f"events around empty(4M, int64):  {stats_us(s)}")
    s = event_time(gp, lambda: None)
    print(f"events around nothing:           {stats_us(s)}")
    s = event_time(gp, lambda: gp.where(cond, img, 0.0))
    print(f"where(cond, img, 0.0) f32->f64:  {stats_us(s)}")
    s = event_time(gp, lambda: gp.where(cond, img, gp.float32(0)))
    print(f"where(cond, img, float32(0)):    {stats_us(s)}")
    try:
        import cupy as cp
    except Exception as e:  # noqa: BLE001
        print("cupy not importable:", e)
        return
    section("where_2048 breakdown (CuPy)")
    cimg = cp.asarray(host)
    ccond = cimg > t

    def cev(fn, runs=300, inner=1):
        return event_time(cp, fn, runs, inner)
    print(f"where(img > t, 1, 0):            {stats_us(cev(lambda: cp.where(cimg > t, 1, 0)))}")
    s = cev(lambda: cimg > t, runs=100, inner=20)
    print(f"greater x20 back to back, per:   {stats_us(s)} {rate(s, 5 * n)}")
    s = cev(lambda: cp.where(ccond, 1, 0), runs=100, inner=20)
    print(f"where x20 back to back, per:     {stats_us(s)} {rate(s, 9 * n)}")


def harness():
    section("kernel harness src/kernels/dev/ew_bench.cu")
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        print("no nvcc")
        return
    exe = "/tmp/gpuarr_ew_bench"
    src = os.path.join(ROOT, "src", "kernels", "dev", "ew_bench.cu")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        r = subprocess.run([nvcc, "-O3", "-std=c++17", "-arch=sm_90", "-o", exe, src],
                           capture_output=True, text=True, timeout=90)
        if r.returncode != 0:
            print("compile failed:", r.stderr[-2000:])
            return
    r = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    print(r.stdout, r.stderr[-2000:], "rc", r.returncode)


def bench_overhead():
    import gpuarr as gp
    section("benchmark() overhead per repeat on a no-op")

    def noop():
        pass
    for lib, bench in (("gpuarr", gp.profiler.benchmark), ("cupy", None)):
        if bench is None:
            try:
                import cupyx.profiler
                bench = cupyx.profiler.benchmark
            except Exception as e:  # noqa: BLE001
                print("cupy:", e)
                continue
        bench(noop, n_repeat=200, n_warmup=0)
        per = []
        for _ in range(5):
            t0 = time.perf_counter()
            r = bench(noop, n_repeat=2000, n_warmup=0)
            per.append((time.perf_counter() - t0) / 2000)
        print(f"{lib}: host per repeat {stats_us(per)}; mean cpu_times "
              f"{r.cpu_times.mean() * 1e6:.3f} us, mean gpu_times {r.gpu_times.mean() * 1e6:.3f} us")


def host_breakdown():
    import numpy as np
    import gpuarr as gp
    section("host time per call, 1000 float64 (by elimination)")
    sync = gp.cuda.Device().synchronize
    x = gp.asarray(np.random.default_rng(0).random(1000))
    y = gp.asarray(np.random.default_rng(1).random(1000))
    z = gp.empty_like(x)
    x0, y0 = gp.empty(0), gp.empty(0)
    add = gp.add
    rows = [
        ("x + y", lambda: x + y),
        ("add(x, y)", lambda: add(x, y)),
        ("add(x, y, out=z)", lambda: add(x, y, out=z)),
        ("x0 + y0 (size 0: no launch, no pool)", lambda: x0 + y0),
        ("empty(1000)", lambda: gp.empty(1000)),
        ("x.ndim (Python floor)", lambda: x.ndim),
        ("x + 1.0", lambda: x + 1.0),
        ("x > 0.5", lambda: x > 0.5),
        ("maximum(0, x)", lambda: gp.maximum(0, x)),
        ("where(x > 0.5, 1, 0) (two calls)", lambda: gp.where(x > 0.5, 1, 0)),
        ("sin(x)", lambda: gp.sin(x)),
    ]
    for name, fn in rows:
        print(f"{name:<40s} {stats_us(back_to_back(fn, calls=20000, reps=5, sync=sync))}")


def sincos_kernels():
    import numpy as np
    import gpuarr as gp
    section("sincos_1e7 kernel by kernel (1e7 float64, 20 back to back)")
    rng = np.random.default_rng(0)
    x, y, z = (gp.asarray(rng.random(10 ** 7) + 0.5) for _ in range(3))
    a, b = gp.sin(x), gp.cos(y)
    n = 10 ** 7

    def rate(s, nbytes):
        return f"{nbytes / statistics.median(s) / 1e9:7.0f} GB/s"
    for name, fn, nbytes in (("sin(x)", lambda: gp.sin(x), 16 * n), ("cos(y)", lambda: gp.cos(y), 16 * n),
                             ("sqrt(z)", lambda: gp.sqrt(z), 16 * n),
                             ("a / b", lambda: a / b, 24 * n), ("a + b", lambda: a + b, 24 * n),
                             ("copy(x)", lambda: x.copy(), 16 * n),
                             ("sin(x) + cos(y) / sqrt(z)", lambda: gp.sin(x) + gp.cos(y) / gp.sqrt(z),
                              96 * n)):
        s = event_time(gp, fn, runs=20, inner=20)
        print(f"{name:<28s} {stats_us(s)} {rate(s, nbytes)}")
    s = event_time(gp, lambda: gp.sin(x) + gp.cos(y) / gp.sqrt(z), runs=100)
    print(f"sincos as the benchmark times it: {stats_us(s)}")


def import_time():
    section("import time")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="0")
    for mod in ("numpy", "gpuarr"):
        ts = []
        for _ in range(5):
            r = subprocess.run([sys.executable, "-c", f"import time; t=time.perf_counter(); "
                                f"import {mod}; print(time.perf_counter()-t)"],
                               capture_output=True, text=True, timeout=30, cwd=ROOT, env=env)
            if r.returncode == 0:
                ts.append(float(r.stdout.strip()))
            else:
                print(r.stderr[-500:])
        if ts:
            print(f"import {mod}: median {statistics.median(ts) * 1e3:.1f} ms min {min(ts) * 1e3:.1f} ms")
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", "import gpuarr"],
                       capture_output=True, text=True, timeout=30, cwd=ROOT, env=env)
    rows = []
    for line in r.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), int(parts[0].split(":")[1]), parts[2].rstrip()))
    top = [x for x in rows if not x[2].strip().startswith("numpy")]
    print("cumulative us | self us | module (modules outside numpy, top 30 by cumulative)")
    for cum, self_, name in sorted(top, reverse=True)[:30]:
        print(f"{cum:12d} | {self_:7d} | {name}")


PARTS = {"where": where_breakdown, "harness": harness, "bench": bench_overhead,
         "host": host_breakdown, "sincos": sincos_kernels, "import": import_time}


def main():
    names = sys.argv[1:] or list(PARTS)
    for name in names:
        part = PARTS[name]
        t0 = time.perf_counter()
        try:
            part()
        except Exception as e:  # noqa: BLE001
            print(f"{part.__name__} failed: {type(e).__name__}: {e}")
        print(f"({part.__name__}: {time.perf_counter() - t0:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
