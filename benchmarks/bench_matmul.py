#!/usr/bin/env python3
"""Matrix products (issue 24): gpuarr's @ against cuBLAS called directly and
against CuPy's @, in one process, on one GPU.

    python3 benchmarks/bench_matmul.py            # the table on stdout
    python3 benchmarks/bench_matmul.py --quick    # fewer runs
    python3 benchmarks/bench_matmul.py --json F   # the figures to F as well

Workloads and goals (the issue's):
  8192^2 float32 and float64 a @ b   >= 90% of cuBLAS's own rate, and not
                                     slower than CuPy's @ (TFLOP/s printed);
  a batch of 4096 64x64 float32      the same (one strided-batched GEMM);
  host time per small a @ b (64^2)   <= 6 us, and CuPy's beside it.

"cuBLAS direct" is cublasSgemm_v2 / cublasDgemm_v2 /
cublasSgemmStridedBatched on the same device buffers through ctypes, on its
own handle with the default math mode (no TF32, as gpuarr), the library
being the one gpuarr loaded; its ctypes cost is host time only, outside
what the CUDA events measure.  GPU times: CUDA events on the legacy
default stream around each call, median and min of many runs after
warm-up (benchmarks/run.py's time_gpu); host times: many calls between two
synchronisations, per call (run.py's time_host)."""
import argparse
import ctypes
import importlib.util
import json
import pathlib
import sys

import numpy as np

_RUN = pathlib.Path(__file__).resolve().parent / "run.py"
_spec = importlib.util.spec_from_file_location("gpuarr_benchmarks_run", _RUN)
run = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = run
_spec.loader.exec_module(run)
sys.path.insert(0, str(run.REPO))        # gpuarr from this checkout, as run.py does


class DirectCublas:
    """cuBLAS's own GEMMs on gpuarr's library, through ctypes."""

    def __init__(self):
        from gpuarr.cuda import cublas
        self.lib = ctypes.CDLL(cublas.find_cublas())
        self.handle = ctypes.c_void_p()
        self._ok(self.lib.cublasCreate_v2(ctypes.byref(self.handle)), "cublasCreate")
        self._ok(self.lib.cublasSetMathMode(self.handle, 0), "cublasSetMathMode")

    @staticmethod
    def _ok(status, what):
        if status != 0:
            raise RuntimeError(f"{what} failed: cublasStatus_t {status}")

    def gemm(self, a, b, c):
        """c = a @ b for C-ordered float32/float64 device arrays (n x n)."""
        n = a.shape[0]
        f, scalar = ((self.lib.cublasSgemm_v2, ctypes.c_float) if a.dtype == np.float32
                     else (self.lib.cublasDgemm_v2, ctypes.c_double))
        one, zero = scalar(1), scalar(0)
        args = (self.handle, 0, 0, n, n, n, ctypes.byref(one), ctypes.c_void_p(b.data.ptr), n,
                ctypes.c_void_p(a.data.ptr), n, ctypes.byref(zero), ctypes.c_void_p(c.data.ptr),
                n)
        return lambda: self._ok(f(*args), "cublas?gemm")

    def gemm_batched(self, a, b, c):
        """c[i] = a[i] @ b[i] for C-ordered float32 batches (batch, n, n)."""
        batch, n = a.shape[0], a.shape[1]
        one, zero = ctypes.c_float(1), ctypes.c_float(0)
        s = ctypes.c_longlong(n * n)
        args = (self.handle, 0, 0, n, n, n, ctypes.byref(one), ctypes.c_void_p(b.data.ptr), n, s,
                ctypes.c_void_p(a.data.ptr), n, s, ctypes.byref(zero),
                ctypes.c_void_p(c.data.ptr), n, s, batch)
        f = self.lib.cublasSgemmStridedBatched
        return lambda: self._ok(f(*args), "cublasSgemmStridedBatched")

    def close(self):
        self.lib.cublasDestroy_v2(self.handle)


def _fmt_time(t):
    return f"{t * 1e3:8.3f} ms" if t >= 1e-3 else f"{t * 1e6:8.1f} us"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs")
    ap.add_argument("--json", help="write the figures to this file too")
    args = ap.parse_args()
    cfg = run.QUICK if args.quick else run.Config()
    backends, missing = run.load_backends()
    if "gpuarr" not in backends:
        sys.exit(f"gpuarr cannot run here: {missing['gpuarr']}")
    gp = backends["gpuarr"]
    cp = backends.get("cupy")
    source, measure = run.event_timer()
    direct = DirectCublas()
    rows = []
    print(f"events: {source}; CuPy: {'yes' if cp else missing.get('cupy')}")

    def gpu_row(name, flops, pairs, direct_fn):
        """Time x @ y for each library's (x, y) in pairs, and the direct call."""
        row = {"case": name, "flops": flops}
        fns = [("cublas", gp, direct_fn)] + [
            (lib, backends[lib], (lambda x, y: lambda: x @ y)(*pairs[lib])) for lib in pairs]
        for label, xp, fn in fns:
            t = run.time_gpu(fn, xp, measure, cfg)
            row[label] = {"median_s": t.median, "min_s": t.min, "runs": len(t.samples),
                          "tflops": flops / t.median / 1e12}
        row["gpuarr_vs_cublas"] = row["cublas"]["median_s"] / row["gpuarr"]["median_s"]
        if "cupy" in row:
            row["gpuarr_over_cupy"] = row["gpuarr"]["median_s"] / row["cupy"]["median_s"]
        rows.append(row)
        cells = "  ".join(f"{k} {_fmt_time(row[k]['median_s'])} (min {_fmt_time(row[k]['min_s'])}"
                          f", {row[k]['tflops']:6.1f} TFLOP/s)"
                          for k in ("cublas", "gpuarr", "cupy") if k in row)
        print(f"{name:28s} {cells}  gpuarr = {100 * row['gpuarr_vs_cublas']:.1f}% of cuBLAS"
              + (f", {row['gpuarr_over_cupy']:.2f}x CuPy's time" if "cupy" in row else ""))

    def on_devices(*host):
        return {lib: tuple(backends[lib].asarray(h) for h in host)
                for lib in ("gpuarr", "cupy") if lib in backends}

    for dtype in (np.float32, np.float64):
        n = run.N8K
        pairs = on_devices(*run.matrix_pair((n, n), dtype))
        c = gp.empty((n, n), dtype=dtype)
        gpu_row(f"matmul {np.dtype(dtype).name} {n}^2", 2 * n ** 3, pairs,
                direct.gemm(*pairs["gpuarr"], c))
        del pairs, c
        for b in backends.values():
            b.free()

    pairs = on_devices(*run.matrix_pair((4096, 64, 64)))
    c = gp.empty((4096, 64, 64), dtype=np.float32)
    gpu_row("matmul batch 4096 x 64^2 f32", 2 * 4096 * 64 ** 3, pairs,
            direct.gemm_batched(*pairs["gpuarr"], c))
    del pairs, c

    small = run.matrix_pair((64, 64))[0]
    host = {"case": "host time per 64^2 f32 a @ b"}
    for xp in (gp, cp):
        if xp is None:
            continue
        a = xp.asarray(small)
        t = run.time_host(lambda a=a: a @ a, xp, cfg)
        host[xp.name] = {"median_s": t.median, "min_s": t.min}
    rows.append(host)
    print(f"{host['case']:28s} " + "  ".join(
        f"{k} {_fmt_time(host[k]['median_s'])} (min {_fmt_time(host[k]['min_s'])})"
        for k in ("gpuarr", "cupy") if k in host) + "   goal <= 6 us")
    direct.close()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
