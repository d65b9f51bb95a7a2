"""Probe for the elementwise area (run by tools/gpu-batch.sh on a GPU machine).

1. where_2048 taken apart: gp.where(img > t, 1, 0) on a 2048x2048 float32
   image as the benchmark times it (events around the call), then greater()
   and where() each alone, each 20 times back to back (pure GPU time), host
   time per call, the pool's allocation of the int64 result; CuPy beside it.
2. The kernel harness src/kernels/dev/ew_bench.cu (compiled here with nvcc):
   kernel variants of greater/where, the copy rate at these sizes, and the
   CUDA cost of benchmark()'s event pair per repeat.
3. benchmark() overhead per repeat on a no-op function (gpuarr and CuPy).
4. Import time of gpuarr: wall time in fresh processes and the top entries
   of python -X importtime.
Finishes in well under 60 s; every part has its own time limit.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def section(title):
    print(f"\n=== {title} ===", flush=True)


def stats_us(samples):
    return f"median {statistics.median(samples) * 1e6:8.2f} us  min {min(samples) * 1e6:8.2f} us"


def event_time(gp, fn, runs=300, inner=1):
    """GPU seconds per call of fn: events around `inner` calls, many runs."""
    start, end = gp.cuda.Event(), gp.cuda.Event()
    for _ in range(10):
        fn()
    gp.cuda.Device().synchronize()
    out = []
    for _ in range(runs):
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        out.append(gp.cuda.get_elapsed_time(start, end) / 1e3 / inner)
    return out


def host_time(sync, fn, calls=2000, reps=5):
    out = []
    fn()
    sync()
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        out.append((time.perf_counter() - t0) / calls)
    return out


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
    print(f"host per greater call:           {stats_us(host_time(sync, lambda: img > t))}")
    print(f"host per where call:             {stats_us(host_time(sync, lambda: gp.where(cond, 1, 0)))}")
    print(f"host per where(img > t, 1, 0):   "
          f"{stats_us(host_time(sync, lambda: gp.where(img > t, 1, 0)))}")
    print(f"host per empty(4M, int64):       "
          f"{stats_us(host_time(sync, lambda: gp.empty(n, gp.int64)))}")
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
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def cev(fn, runs=300, inner=1):
        for _ in range(10):
            fn()
        cp.cuda.Device().synchronize()
        out = []
        for _ in range(runs):
            start.record()
            for _ in range(inner):
                fn()
            end.record()
            end.synchronize()
            out.append(cp.cuda.get_elapsed_time(start, end) / 1e3 / inner)
        return out
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
    r = subprocess.run([nvcc, "-O3", "-std=c++17", "-arch=sm_90", "-o", exe, src],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        print("compile failed:", r.stderr[-2000:])
        return
    r = subprocess.run([exe], capture_output=True, text=True, timeout=30)
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


def main():
    for part in (where_breakdown, harness, bench_overhead, import_time):
        t0 = time.perf_counter()
        try:
            part()
        except Exception as e:  # noqa: BLE001
            print(f"{part.__name__} failed: {type(e).__name__}: {e}")
        print(f"({part.__name__}: {time.perf_counter() - t0:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
