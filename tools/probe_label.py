#!/usr/bin/env python3
"""Probe for issue 8 (label, measurements): where the time of the two
benchmark cases goes, on the benchmark's own inputs (benchmarks/_inputs.py).

    python3 tools/probe_label.py            # the probe (< 60 s)
    python3 tools/probe_label.py --inner    # the kernels only, for nsys

For every step: GPU time between two CUDA events around the call (median
and min of many runs after warm-up) and the host time of the call alone
(perf_counter, no synchronisation added; calls that synchronise themselves,
like label's count read or center_of_mass's copy, include the wait).  Then,
if nsys is installed, a kernel table of the --inner run (each launch's own
GPU time), cut short after 35 s.
"""
import os
import pathlib
import shutil
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
from probe_measure import bench_inputs, row  # noqa: E402  (same folder: shared timing)

T0 = time.perf_counter()


def probe_label(seg):
    print("\n== label of the segmented 2048^2 sky ==")
    import scipy.ndimage as snd
    want, nwant = snd.label(seg)
    d64 = gp.asarray(seg)
    dbool = gp.asarray(seg.astype(bool))
    d32 = gp.asarray(seg.astype(np.int32))
    got, n = gnd.label(d64)
    print(f"  components: gpuarr {n}, SciPy {nwant}, labels equal: "
          f"{np.array_equal(got.get(), want)}; foreground {seg.mean() * 100:.2f} %")
    out32 = gp.empty(seg.shape, np.int32)
    out64f = gp.empty(seg.shape, np.float64)
    row("label(int64 mask)                  [benchmark]", lambda: gnd.label(d64))
    row("label(bool mask)", lambda: gnd.label(dbool))
    row("label(int32 mask)", lambda: gnd.label(d32))
    row("label(int64, output=int32 array)", lambda: gnd.label(d64, output=out32))
    row("label(int64, output=float64 array) [lesson]", lambda: gnd.label(d64, output=out64f))
    row("label(int64, structure=zeros: no merge pass)",
        lambda: gnd.label(d64, np.zeros((3, 3))))
    row("label(int64, 8-connectivity)", lambda: gnd.label(d64, np.ones((3, 3))))
    row("_core._label(int64, cross, None)  [no Python layer]",
        lambda: _core._label(d64, gm._CROSS[2], None))
    empty = gp.zeros(seg.shape, np.int64)
    full = gp.ones(seg.shape, np.int64)
    row("label(all zeros int64)", lambda: gnd.label(empty))
    row("label(all ones int64)", lambda: gnd.label(full))
    rnd = gp.asarray((np.random.default_rng(0).random(seg.shape) < 0.5).astype(np.int64))
    row("label(random 50 % int64)", lambda: gnd.label(rnd), n=50)
    # Floors: the bytes label must move, at the copy rate.
    row("copy int64 2048^2 (read 32 MB + write 32 MB)", lambda: d64.copy())
    row("copy int32 2048^2", lambda: d32.copy())
    row("empty int32 2048^2 (pool)", lambda: gp.empty(seg.shape, np.int32))


def probe_measure(data, labels, n):
    print(f"\n== center_of_mass + sum_labels, 2048^2 f32, {n} labels (int32) ==")
    import scipy.ndimage as snd
    dd = gp.asarray(data)
    dl = gp.asarray(labels)
    index = gp.arange(1, n + 1)
    rng_index = range(1, n + 1)
    pos_cpu = snd.center_of_mass(data, labels, rng_index)
    flux_cpu = snd.sum_labels(data, labels, rng_index)
    pos = gnd.center_of_mass(dd, dl, index)
    flux = gnd.sum_labels(dd, dl, index)
    print(f"  allclose positions {np.allclose(np.array(pos), np.array(pos_cpu))}, "
          f"fluxes {np.allclose(flux.get(), flux_cpu)}")
    row("com + sum_labels, index=gp.arange   [benchmark]",
        lambda: (gnd.center_of_mass(dd, dl, index), gnd.sum_labels(dd, dl, index)))
    row("com + sum_labels, index=range",
        lambda: (gnd.center_of_mass(dd, dl, rng_index), gnd.sum_labels(dd, dl, rng_index)))
    row("center_of_mass, index=gp.arange", lambda: gnd.center_of_mass(dd, dl, index))
    row("sum_labels, index=gp.arange", lambda: gnd.sum_labels(dd, dl, index))
    row("center_of_mass, index=range", lambda: gnd.center_of_mass(dd, dl, rng_index))
    row("sum_labels, index=range", lambda: gnd.sum_labels(dd, dl, rng_index))
    row("sum_labels, index=None (labels > 0)", lambda: gnd.sum_labels(dd, dl))
    row("sum_labels, labels=None (whole sum)", lambda: gnd.sum_labels(dd))
    row("gp.sum(data)", lambda: gp.sum(dd))
    # Pieces of center_of_mass with a device index.
    row("_plan(device index) [_measure_index: sort]", lambda: gm._plan(dd, dl, index))
    row("_plan(range)", lambda: gm._plan(dd, dl, rng_index))
    _, plan_t = gm._plan(dd, dl, index)
    _, plan_r = gm._plan(dd, dl, rng_index)
    row("_core._measure(COM) table plan, no get",
        lambda: _core._measure(*plan_t.args(dd), 1 << gm._COM))
    row("_core._measure(COM) range plan, no get",
        lambda: _core._measure(*plan_r.args(dd), 1 << gm._COM))
    row("_core._measure(SUM) table plan",
        lambda: _core._measure(*plan_t.args(dd), 1 << gm._SUM))
    row("_core._measure(SUM) range plan",
        lambda: _core._measure(*plan_r.args(dd), 1 << gm._SUM))
    row("_core._measure(SUM|COM) range plan (one pass for both)",
        lambda: _core._measure(*plan_r.args(dd), (1 << gm._SUM) | (1 << gm._COM)))
    (c,) = _core._measure(*plan_r.args(dd), 1 << gm._COM)
    row("c.get() of (n, 2) float64", lambda: c.get())
    host = c.get()
    t = time.perf_counter()
    for _ in range(200):
        list(zip(*host.T.tolist()))
    print(f"  {'list of tuples from host (n, 2)':<58s} host {(time.perf_counter() - t) / 200 * 1e6:8.1f} us")
    row("copy f32 2048^2 (16 MB + 16 MB)", lambda: dd.copy())
    dl64 = gp.asarray(labels.astype(np.int64))
    dlf = gp.asarray(labels.astype(np.float64))
    row("com + sum_labels, int64 labels, gp.arange",
        lambda: (gnd.center_of_mass(dd, dl64, index), gnd.sum_labels(dd, dl64, index)))
    row("com + sum_labels, float64 labels (lesson), gp.arange",
        lambda: (gnd.center_of_mass(dd, dlf, index), gnd.sum_labels(dd, dlf, index)))


def inner():
    """The benchmark calls only, for a kernel table under nsys."""
    b = bench_inputs()
    seg = b.segmented()
    d64 = gp.asarray(seg)
    labels, n = b.labelled()
    dd, dl, index = gp.asarray(b.sky()), gp.asarray(labels), gp.arange(1, n + 1)
    for _ in range(20):
        gnd.label(d64)
        gnd.center_of_mass(dd, dl, index)
        gnd.sum_labels(dd, dl, index)
    gp.cuda.Device().synchronize()


def nsys_table():
    nsys = shutil.which("nsys")
    if nsys is None:
        for cand in ("/usr/local/cuda/bin/nsys", "/opt/nvidia/nsight-systems/bin/nsys"):
            if os.path.exists(cand):
                nsys = cand
    print(f"\n== kernel table (nsys: {nsys}) ==", flush=True)
    if nsys is None:
        return
    left = 55 - (time.perf_counter() - T0)
    if left < 15:
        print("  skipped: not enough time left")
        return
    rep = "/tmp/probe_label_nsys"
    try:
        r = subprocess.run([nsys, "profile", "--force-overwrite", "true", "-t", "cuda",
                            "--stats=true", "-o", rep, sys.executable, __file__, "--inner"],
                           capture_output=True, text=True, timeout=min(35, left))
        text = r.stdout + r.stderr
        keep = False
        for line in text.splitlines():
            if "cuda_gpu_kern_sum" in line or "cuda_api_sum" in line or "cuda_gpu_mem_time_sum" in line:
                keep = True
            if keep:
                print("  " + line[:200])
    except subprocess.TimeoutExpired:
        print("  nsys timed out")


def main():
    if "--inner" in sys.argv:
        inner()
        return
    if not gp.is_available():
        print("no GPU: nothing to probe")
        return
    b = bench_inputs()
    seg = b.segmented()
    labels, n = b.labelled()
    print(f"device: {gp.cuda.Device().name if hasattr(gp.cuda.Device(), 'name') else '?'}; "
          f"setup {time.perf_counter() - T0:.1f} s")
    probe_label(seg)
    probe_measure(b.sky(), labels, n)
    print(f"\nprobe time so far {time.perf_counter() - T0:.1f} s")
    nsys_table()
    print(f"total {time.perf_counter() - T0:.1f} s")


if __name__ == "__main__":
    main()
