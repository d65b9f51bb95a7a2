"""How each kind of case is timed (run.py's docstring says it in words):
CUDA events, host loops, transfers, the CPU, and fresh processes."""
import dataclasses
import functools
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

from _format import fmt_time

REPO = pathlib.Path(__file__).resolve().parent.parent   # fresh processes import gpuarr from here


def event_timer():
    """(source, measure): measure(fn) calls fn between two CUDA events on the
    legacy default stream, waits for the second, returns GPU seconds.  gpuarr's
    events if it has them, else CuPy's, else PyTorch's; (None, None) if none."""
    def gpuarr_events():
        from gpuarr.cuda import Event, get_elapsed_time
        return Event(), Event(), lambda e: e.record(), get_elapsed_time

    def cupy_events():
        import cupy
        null = cupy.cuda.Stream.null
        return cupy.cuda.Event(), cupy.cuda.Event(), lambda e: e.record(null), \
            cupy.cuda.get_elapsed_time

    def torch_events():
        import torch
        new = functools.partial(torch.cuda.Event, enable_timing=True)
        return new(), new(), lambda e: e.record(), lambda a, b: a.elapsed_time(b)

    for source, make in (("gpuarr.cuda.Event", gpuarr_events), ("cupy.cuda.Event", cupy_events),
                         ("torch.cuda.Event", torch_events)):
        try:
            start, end, record, elapsed = make()

            def measure(fn, start=start, end=end, record=record, elapsed=elapsed):
                record(start)
                fn()
                record(end)
                end.synchronize()
                return elapsed(start, end) / 1e3

            measure(lambda: None)
            return source, measure
        except Exception:
            continue
    return None, None


@dataclasses.dataclass
class Config:
    budget: float = 0.8        # seconds of timed GPU runs per library and case
    min_runs: int = 20
    max_runs: int = 5000
    host_calls: int = 20000
    host_reps: int = 5
    transfer_runs: int = 20
    cpu_budget: float = 1.0
    import_runs: int = 5
    fresh_runs: int = 3


QUICK = Config(budget=0.2, min_runs=5, host_calls=5000, host_reps=3, transfer_runs=5,
               cpu_budget=0.2, import_runs=2, fresh_runs=1)


@dataclasses.dataclass
class Timing:
    samples: list              # seconds

    @property
    def median(self):
        return statistics.median(self.samples)

    @property
    def min(self):
        return min(self.samples)


def time_gpu(fn, xp, measure, cfg):
    if measure is None:
        raise RuntimeError("no CUDA event source (gpuarr.cuda.Event, CuPy or PyTorch)")
    fn()
    xp.sync()                  # the first call: CuPy compiles here, outside the estimate
    t0 = time.perf_counter()
    measure(fn)
    measure(fn)
    per_run = (time.perf_counter() - t0) / 2
    runs = max(cfg.min_runs, min(cfg.max_runs, int(cfg.budget / per_run)))
    deadline = time.perf_counter() + 3 * cfg.budget
    samples = []
    while len(samples) < runs and (len(samples) < 3 or time.perf_counter() < deadline):
        samples.append(measure(fn))
    return Timing(samples)


def time_host(fn, xp, cfg, calls=0, repeats=1):
    """Host time per unit of work: `calls` calls of fn (each doing `repeats`
    units) between synchronisations, per sample."""
    calls = calls or cfg.host_calls
    fn()
    xp.sync()
    samples = []
    for _ in range(cfg.host_reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        xp.sync()
        samples.append((time.perf_counter() - t0) / (calls * repeats))
    return Timing(samples)


def time_transfer(fn, xp, cfg):
    fn()
    xp.sync()
    samples = []
    for _ in range(cfg.transfer_runs):
        t0 = time.perf_counter()
        fn()
        xp.sync()
        samples.append(time.perf_counter() - t0)
    return Timing(samples)


def time_cpu(fn, cfg, first=None):
    """CPU runs until cfg.cpu_budget is spent (at least one); `first` is the
    time of a run already made (the reference)."""
    samples = [] if first is None else [first]
    while not samples or (sum(samples) < cfg.cpu_budget and len(samples) < 50):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return Timing(samples)


CHILD = """\
import importlib, json, sys, time
spec = json.loads(sys.argv[1])
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
xp = importlib.import_module(spec["module"])
t2 = time.perf_counter()
out = {"import": t2 - t0, "numpy part": t1 - t0, "own part": t2 - t1}
if spec["steps"]:
    sync = (xp.cuda.runtime.deviceSynchronize if spec["module"] == "cupy"
            else xp.cuda.device_synchronize)
    ns = {"xp": xp, "sp": importlib.import_module(
        "cupyx.scipy" if spec["module"] == "cupy" else spec["module"] + ".scipy")}
    t0 = time.perf_counter(); xp.zeros(1); sync(); out["context"] = time.perf_counter() - t0
    exec(spec["prep"], ns); sync()
    for label, stmt in spec["steps"]:
        code = compile(stmt, label, "exec")
        t0 = time.perf_counter(); exec(code, ns); sync(); out[label] = time.perf_counter() - t0
print(json.dumps(out))
"""


class ChildFailed(Exception):
    pass


def time_fresh(case, lib, cfg):
    """(Timing, note): the case's figure over fresh processes.  CuPy gets an
    empty kernel cache each time, so its first calls compile as on a first run."""
    spec = json.dumps({"module": lib, "prep": case.prep, "steps": case.steps})
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    runs = []
    for _ in range(cfg.fresh_runs if case.steps else cfg.import_runs):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, PYTHONPATH=path, CUPY_CACHE_DIR=cache,
                       GPUARR_CACHE_DIR=cache)
            for child in range(2 if case.warm_cache else 1):
                proc = subprocess.run([sys.executable, "-c", CHILD, spec], cwd=REPO, env=env,
                                      capture_output=True, text=True, timeout=180)
                if proc.returncode:
                    lines = proc.stderr.strip().splitlines()
                    raise ChildFailed(lines[-1] if lines else f"exit status {proc.returncode}")
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    labels = [label for label, _ in case.steps]
    figure = [max(r[k] for k in labels) if labels else r["import"] for r in runs]
    keys = ["context"] + labels if labels else ["numpy part", "own part"]
    note = ", ".join(f"{k} {fmt_time(statistics.median(r[k] for r in runs))}" for k in keys)
    return Timing(figure), note
