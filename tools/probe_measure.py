#!/usr/bin/env python3
"""Probe for the measurements (issue 8): where the time of the benchmark
case com_sum_labels goes (center_of_mass + sum_labels of every label of
the segmented 2048^2 sky, benchmarks/_inputs.py), step by step.

    python3 tools/probe_measure.py            # the probe (~30 s)
    python3 tools/probe_measure.py --ncu      # and a kernel table from ncu
    python3 tools/probe_measure.py --inner    # the benchmark calls only (for ncu)

Each row: GPU time between two CUDA events around the call (median / min
of many runs after warm-up; calls that wait for the GPU, like
center_of_mass's copy of its result, include the host time up to the
wait) and the host time of the call alone.  "pipelined" rows run the call
back to back K times between the events: the time per call is the GPU's
when the GPU is the bottleneck, the host's when the host is.  With --ncu,
a table of the kernels of the benchmark's calls (duration, DRAM bytes,
registers, occupancy) from Nsight Compute.
"""
import importlib.util
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gpuarr as gp  # noqa: E402
from gpuarr import _core  # noqa: E402
from gpuarr.scipy import ndimage as gnd  # noqa: E402
from gpuarr.scipy import _measurements as gm  # noqa: E402
from _probe import timed  # noqa: E402


def bench_inputs():
    """benchmarks/_inputs.py: the benchmark cases' own inputs (sky, segmented, labelled)."""
    spec = importlib.util.spec_from_file_location("bench_inputs",
                                                  ROOT / "benchmarks" / "_inputs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def row(name, fn, n=300, k=1):
    try:
        med, mn, h = timed(fn, n, 20, inner=k)
        print(f"  {name:<62s} gpu {med:7.1f} / {mn:7.1f} us   host {h:7.1f} us", flush=True)
    except Exception as exc:  # a probe reports, it does not stop
        print(f"  {name:<62s} FAILED {type(exc).__name__}: {exc}", flush=True)


def host_only(name, fn, n=2000):
    """Host time per call, the GPU synchronised every 50 calls."""
    try:
        for _ in range(20):
            fn()
        gp.cuda.Device().synchronize()
        ts = []
        for i in range(n):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
            if i % 50 == 49:
                gp.cuda.Device().synchronize()
        print(f"  {name:<62s} host {statistics.median(ts) * 1e6:7.1f} / "
              f"{min(ts) * 1e6:7.1f} us", flush=True)
    except Exception as exc:
        print(f"  {name:<62s} FAILED {type(exc).__name__}: {exc}", flush=True)


def inputs():
    b = bench_inputs()
    labels, n = b.labelled()
    return b.sky(), labels, n


def probe(data, labels, n):
    import scipy.ndimage as snd
    dd = gp.asarray(data)
    dl = gp.asarray(labels)                       # int32, as the benchmark passes them
    dl64 = gp.asarray(labels.astype(np.int64))
    dlf = gp.asarray(labels.astype(np.float64))   # the lesson's float64 output array
    index = gp.arange(1, n + 1)
    rng_index = range(1, n + 1)
    fg = (labels > 0).mean() * 100
    print(f"\n== center_of_mass + sum_labels, 2048^2 f32, {n} labels; foreground {fg:.2f} % ==")

    t = time.perf_counter()
    pos_cpu = snd.center_of_mass(data, labels, rng_index)
    flux_cpu = snd.sum_labels(data, labels, rng_index)
    cpu = time.perf_counter() - t
    for lab, idx, what in ((dl, index, "int32 labels, device index"),
                           (dlf, rng_index, "float64 labels, range"),
                           (dlf, index, "float64 labels, device index")):
        pos = gnd.center_of_mass(dd, lab, idx)
        flux = gnd.sum_labels(dd, lab, idx)
        print(f"  check {what}: positions allclose "
              f"{np.allclose(np.array(pos), np.array(pos_cpu))}, fluxes allclose "
              f"{np.allclose(flux.get(), flux_cpu)}, list of tuples of float "
              f"{isinstance(pos, list) and type(pos[0]) is tuple and type(pos[0][0]) is float}")
    print(f"  (SciPy on the CPU: {cpu * 1e3:.0f} ms)")

    print("\n-- whole calls --")
    row("com + sum_labels, int32 labels, gp.arange        [benchmark]",
        lambda: (gnd.center_of_mass(dd, dl, index), gnd.sum_labels(dd, dl, index)))
    row("com + sum_labels, float64 labels, range          [lesson]",
        lambda: (gnd.center_of_mass(dd, dlf, rng_index), gnd.sum_labels(dd, dlf, rng_index)))
    row("com + sum_labels, float64 labels, gp.arange",
        lambda: (gnd.center_of_mass(dd, dlf, index), gnd.sum_labels(dd, dlf, index)))
    row("com + sum_labels, int64 labels, gp.arange",
        lambda: (gnd.center_of_mass(dd, dl64, index), gnd.sum_labels(dd, dl64, index)))
    row("com + sum_labels, int32 labels, range",
        lambda: (gnd.center_of_mass(dd, dl, rng_index), gnd.sum_labels(dd, dl, rng_index)))
    row("center_of_mass, int32, gp.arange (waits: copy of the result)",
        lambda: gnd.center_of_mass(dd, dl, index))
    row("sum_labels, int32, gp.arange (no wait)", lambda: gnd.sum_labels(dd, dl, index))
    row("sum_labels, int32, gp.arange, pipelined x20", lambda: gnd.sum_labels(dd, dl, index),
        n=50, k=20)
    row("sum_labels, float64 labels, range, pipelined x20",
        lambda: gnd.sum_labels(dd, dlf, rng_index), n=50, k=20)
    row("sum_labels, int32 labels, range, pipelined x20",
        lambda: gnd.sum_labels(dd, dl, rng_index), n=50, k=20)
    row("sum_labels, labels=None, pipelined x20", lambda: gnd.sum_labels(dd), n=50, k=20)
    row("minimum_position, int32, gp.arange (two passes, waits)",
        lambda: gnd.minimum_position(dd, dl, index))

    print("\n-- pieces --")
    _, plan_i = gm._plan(dd, dl, index)
    _, plan_r = gm._plan(dd, dl, rng_index)
    com, sm = 1 << gm._COM, 1 << gm._SUM
    host_only("_plan(input, labels, gp.arange)", lambda: gm._plan(dd, dl, index))
    host_only("_plan(input, labels, range)", lambda: gm._plan(dd, dl, rng_index))
    host_only("_core._measure(SUM), device index", lambda: _core._measure(*plan_i.args(dd), sm))
    host_only("_core._measure(COM), device index", lambda: _core._measure(*plan_i.args(dd), com))
    host_only("sum_labels(int32, gp.arange)", lambda: gnd.sum_labels(dd, dl, index))
    host_only("gp.add(small, small) (a plain launch, for scale)",
              lambda: gp.add(index, index))
    row("_core._measure(SUM), device index, pipelined x20",
        lambda: _core._measure(*plan_i.args(dd), sm), n=50, k=20)
    row("_core._measure(COM), device index, pipelined x20",
        lambda: _core._measure(*plan_i.args(dd), com), n=50, k=20)
    row("_core._measure(SUM), range, pipelined x20",
        lambda: _core._measure(*plan_r.args(dd), sm), n=50, k=20)
    row("_core._measure(SUM|COM), device index, pipelined x20",
        lambda: _core._measure(*plan_i.args(dd), sm | com), n=50, k=20)
    (c,) = _core._measure(*plan_i.args(dd), com)
    gp.cuda.Device().synchronize()
    row("_core._measure_com, device index (launch, copy, list of tuples)",
        lambda: _core._measure_com(*plan_i.args(dd)))
    row("c.get() (copy of the (n, 2) float64 result)", lambda: c.get())
    h = c.get()
    host_only("list of tuples from a host (n, 2) array (tolist)", lambda: list(map(tuple, h.tolist())))
    row("_core._measure_index(gp.arange) (old path's extra call)",
        lambda: _core._measure_index(index, False))

    print("\n-- floors --")
    row("gp.sum(int32 labels) (reads 16 MB), pipelined x20", lambda: gp.sum(dl), n=50, k=20)
    row("copy int32 labels (16 MB + 16 MB), pipelined x20", lambda: dl.copy(), n=50, k=20)
    row("copy float32 data (16 MB + 16 MB), pipelined x20", lambda: dd.copy(), n=50, k=20)
    row("empty event pair", lambda: None)


def inner():
    """The benchmark's calls only, a few times (for ncu)."""
    data, labels, n = inputs()
    dd, dl, index = gp.asarray(data), gp.asarray(labels), gp.arange(1, n + 1)
    dlf = gp.asarray(labels.astype(np.float64))
    for _ in range(3):
        gnd.center_of_mass(dd, dl, index)
        gnd.sum_labels(dd, dl, index)
    gnd.center_of_mass(dd, dlf, range(1, n + 1))
    gnd.sum_labels(dd, dlf, range(1, n + 1))
    gp.cuda.Device().synchronize()


def ncu_table():
    ncu = shutil.which("ncu") or next((p for p in ("/usr/local/cuda/bin/ncu",
                                                   "/opt/nvidia/nsight-compute/ncu")
                                       if os.path.exists(p)), None)
    print(f"\n== kernel table (ncu: {ncu}) ==", flush=True)
    if ncu is None:
        return
    cmd = [ncu, "--clock-control", "none", "--metrics",
           "gpu__time_duration.sum,dram__bytes_read.sum,launch__registers_per_thread,"
           "sm__warps_active.avg.pct_of_peak_sustained_active",
           "--csv", "--kernel-name-base", "function", sys.executable, __file__, "--inner"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        print("  ncu timed out")
        return
    import csv
    import io
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith('"')]
    if not lines:
        print("  no ncu output:", (r.stdout + r.stderr)[-1500:])
        return
    table = {}
    for rec in csv.DictReader(io.StringIO("\n".join(lines))):
        key = (rec["ID"], rec["Kernel Name"][:60])
        table.setdefault(key, {})[rec["Metric Name"]] = (rec["Metric Value"], rec["Metric Unit"])
    for (kid, name), m in table.items():
        dur = m.get("gpu__time_duration.sum", ("?", ""))
        rd = m.get("dram__bytes_read.sum", ("?", ""))
        regs = m.get("launch__registers_per_thread", ("?", ""))
        occ = m.get("sm__warps_active.avg.pct_of_peak_sustained_active", ("?", ""))
        print(f"  {kid:>3s} {name:<60s} {dur[0]:>9s} {dur[1]:<5s} dram read {rd[0]:>8s} "
              f"{rd[1]:<6s} regs {regs[0]:>4s} warps active {occ[0]:>6s} %")


def main():
    if "--inner" in sys.argv:
        inner()
        return
    if not gp.is_available():
        print("no GPU: nothing to probe")
        return
    t0 = time.perf_counter()
    data, labels, n = inputs()
    print(f"tree {ROOT}; setup {time.perf_counter() - t0:.1f} s")
    probe(data, labels, n)
    if "--ncu" in sys.argv:
        ncu_table()
    print(f"total {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
