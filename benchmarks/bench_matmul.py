#!/usr/bin/env python3
"""Benchmarks of gpuarr's matrix products (issue 24), side by side with CuPy
on the runner of benchmarks/run.py, and against cuBLAS called directly:

    python3 benchmarks/bench_matmul.py              # the cases, then the cuBLAS table
    python3 benchmarks/bench_matmul.py --list       # needs no GPU
    python3 benchmarks/bench_matmul.py --quick --only overhead
    python3 benchmarks/bench_matmul.py --no-cublas  # the cases only

The cases (run.py's registry, its CUDA-event timing, checks and result
files, here benchmarks/results/<gpu>-matmul.json and .md):
  matmul_{f32,f64}_8192      8192^2 a @ b; goal: not slower than CuPy
                             (and >= 90% of cuBLAS's rate: the table below)
  matmul_batch_4096x64_f32   4096 products of 64 x 64 (one strided-batched GEMM)
  matmul_overhead_64         host time per 64 x 64 float32 a @ b; goal <= 6 us
  matmul_int32_1024          gpuarr's exact integer kernel beside CuPy's
  einsum_bij_bjk_256         einsum of a batched product

The cuBLAS table: gpuarr's @ (and CuPy's) beside cublasSgemm_v2 /
cublasDgemm_v2 / cublasSgemmStridedBatched called through ctypes on the
same device buffers, on their own handle with the default math mode (no
TF32, as gpuarr), from the library gpuarr loaded; the ctypes cost is host
time, outside what the events measure.  TFLOP/s and gpuarr's rate as a
fraction of cuBLAS's (goal >= 90%).  GPU times are run.py's time_gpu
(events around each call, median and min of many runs after warm-up).
"""
import argparse
import ctypes
import functools
import importlib.util
import pathlib
import sys

import numpy as np

# run.py loaded afresh, not imported: each load has its own CASES, which this
# file's cases join once (the tests load this file more than once).
_RUN = pathlib.Path(__file__).resolve().parent / "run.py"
_spec = importlib.util.spec_from_file_location("gpuarr_benchmarks_run", _RUN)
run = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = run
_spec.loader.exec_module(run)

ISSUE = 24
N = 8192


@functools.lru_cache(maxsize=None)
def matrix_pair(shape, dtype=np.float32):
    """Two arrays of shape and dtype: floats on [-0.5, 0.5), integers on
    [-100, 100)."""
    n = int(np.prod(shape))

    def one(seed):
        x = run.host_random(n, np.float64, seed).reshape(shape) - 0.5
        return (x * 200 if np.dtype(dtype).kind in "iu" else x).astype(dtype)
    return one(0), one(1)


def rows_checked(n, dtype, rows=4):
    """Check the first rows of a big product against NumPy's (the whole
    product would take NumPy minutes): sums of n products of [-0.5, 0.5)
    values, each within n eps of the sum of their magnitudes."""
    def check(got, _ref):
        a, b = matrix_pair((n, n), dtype)
        want = a[:rows].astype(np.float64) @ b.astype(np.float64)
        bound = n * np.finfo(dtype).eps * (np.abs(a[:rows]).astype(np.float64) @ np.abs(b))
        err = np.abs(got[:rows] - want)
        return None if np.all(err <= bound) else f"max error {err.max():.3g} above n eps |a||b|"
    return check


def product(xp, a, b):
    return lambda: a @ b


def einsum_batched(xp, a, b):
    return lambda: xp.einsum("bij,bjk->bik", a, b)


# (name, description, size, goal, flops, bytes, shape, dtype, extra fields)
for _name, _desc, _size, _goal, _shape, _dt, _extra in (
        ("matmul_f32_8192", "a @ b; goal: not slower than CuPy, >= 90% of cuBLAS (its table)",
         "8192^2 f32", "<= 1x CuPy", (N, N), np.float32,
         {"reference": False, "check": rows_checked(N, np.float32)}),
        ("matmul_f64_8192", "a @ b; goal: not slower than CuPy, >= 90% of cuBLAS (its table)",
         "8192^2 f64", "<= 1x CuPy", (N, N), np.float64,
         {"reference": False, "check": rows_checked(N, np.float64)}),
        ("matmul_batch_4096x64_f32", "a @ b over a batch (one strided-batched GEMM)",
         "4096 x 64^2 f32", "<= 1x CuPy", (4096, 64, 64), np.float32, {"tol": (1e-4, 1e-4)}),
        ("matmul_overhead_64", "host time per a @ b (20,000 calls, one sync)", "64^2 f32",
         "<= 6 us", (64, 64), np.float32,
         {"kind": "host", "tol": (1e-4, 1e-4), "floor_note": "~3.5 us (a launch)",
          "cupy_ref": "~6 us (the issue's figure)"}),
        ("matmul_int32_1024", "a @ b of int32 (gpuarr's exact kernel; CuPy's own)", "1024^2 i32",
         "<= 1x CuPy", (1024, 1024), np.int32, {"tol": run.EXACT})):
    _flops = 2 * int(np.prod(_shape)) * _shape[-1]
    _gpu = {} if _extra.get("kind") == "host" else {
        "flops": _flops, "flop_dtype": "f64" if _dt == np.float64 else "f32",
        "bytes": 3 * int(np.prod(_shape)) * np.dtype(_dt).itemsize}
    run.case(_name, issue=ISSUE, desc=_desc, size=_size, goal=_goal, requires=("matmul",),
             setup=functools.partial(matrix_pair, _shape, _dt), **_gpu, **_extra)(product)

run.case("einsum_bij_bjk_256", issue=ISSUE, desc="einsum('bij,bjk->bik') (one batched GEMM)",
         size="64 x 256^2 f32", goal="<= 1x CuPy", flops=2 * 64 * 256 ** 3, flop_dtype="f32",
         bytes=3 * 64 * 256 * 256 * 4, tol=(1e-4, 1e-4), requires=("einsum",),
         setup=functools.partial(matrix_pair, (64, 256, 256)))(einsum_batched)


# ------------------------------------------------------ against cuBLAS ---

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
        """c = a @ b for C-ordered n x n float32/float64 device arrays."""
        n = a.shape[0]
        f, scalar = ((self.lib.cublasSgemm_v2, ctypes.c_float) if a.dtype == np.float32
                     else (self.lib.cublasDgemm_v2, ctypes.c_double))
        one, zero = scalar(1), scalar(0)
        args = (self.handle, 0, 0, n, n, n, ctypes.byref(one), ctypes.c_void_p(b.data.ptr), n,
                ctypes.c_void_p(a.data.ptr), n, ctypes.byref(zero), ctypes.c_void_p(c.data.ptr),
                n)
        return lambda: self._ok(f(*args), "cublas?gemm")

    def gemm_batched(self, a, b, c):
        """c[i] = a[i] @ b[i] for C-ordered (batch, n, n) float32 arrays."""
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


def cublas_table(quick=False):
    """gpuarr's and CuPy's @ beside cuBLAS's own call: rows printed, and
    returned as dicts."""
    sys.path.insert(0, str(run.REPO))
    cfg = run.QUICK if quick else run.Config()
    backends, missing = run.load_backends()
    if "gpuarr" not in backends:
        print(f"cuBLAS table: gpuarr cannot run here ({missing['gpuarr']})")
        return []
    gp = backends["gpuarr"]
    _, measure = run.event_timer()
    direct = DirectCublas()
    rows = []
    print(f"\ngpuarr's @ against cuBLAS called directly (CuPy: "
          f"{'yes' if 'cupy' in backends else missing.get('cupy')})")

    def on_devices(*host):
        return {lib: tuple(backends[lib].asarray(h) for h in host)
                for lib in ("gpuarr", "cupy") if lib in backends}

    for name, shape, dtype, call in (("8192^2 f32", (N, N), np.float32, direct.gemm),
                                     ("8192^2 f64", (N, N), np.float64, direct.gemm),
                                     ("4096 x 64^2 f32", (4096, 64, 64), np.float32,
                                      direct.gemm_batched)):
        pairs = on_devices(*matrix_pair(shape, dtype))
        c = gp.empty(shape, dtype=dtype)
        flops = 2 * int(np.prod(shape)) * shape[-1]
        row = {"case": name, "flops": flops}
        timed = [("cublas", gp, call(*pairs["gpuarr"], c))]
        timed += [(lib, backends[lib], product(None, *pairs[lib])) for lib in pairs]
        for label, xp, fn in timed:
            t = run.time_gpu(fn, xp, measure, cfg)
            row[label] = {"median_s": t.median, "min_s": t.min, "tflops": flops / t.median / 1e12}
        row["gpuarr_of_cublas"] = row["cublas"]["median_s"] / row["gpuarr"]["median_s"]
        rows.append(row)
        print(f"  {name:16s} " + "  ".join(
            f"{k} {_fmt_time(row[k]['median_s'])} (min {_fmt_time(row[k]['min_s'])}, "
            f"{row[k]['tflops']:5.1f} TFLOP/s)" for k in ("cublas", "gpuarr", "cupy") if k in row)
            + f"   gpuarr at {100 * row['gpuarr_of_cublas']:.1f}% of cuBLAS (goal >= 90%)")
        del pairs, c, timed
        for b in backends.values():
            b.free()
    direct.close()
    return rows


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    ours = argparse.ArgumentParser(add_help=False)
    ours.add_argument("--no-cublas", action="store_true")
    mine, rest = ours.parse_known_args(argv)
    if "--issue" not in rest:
        rest += ["--issue", str(ISSUE)]
    if "--tag" not in rest:
        rest += ["--tag", "matmul"]
    rc = run.main(rest)
    if not mine.no_cublas and "--list" not in rest:
        cublas_table(quick="--quick" in rest)
    return rc


if __name__ == "__main__":
    sys.exit(main())
