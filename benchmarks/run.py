#!/usr/bin/env python3
"""Side-by-side benchmarks: gpuarr, CuPy and NumPy/SciPy, one registry of cases.

    python3 benchmarks/run.py                  # every case; results to benchmarks/results/
    python3 benchmarks/run.py --out DIR        # ... and to DIR as well
    python3 benchmarks/run.py --issue 3 --only 'add|where' --quick
    python3 benchmarks/run.py --list           # the registry (needs no GPU)

A case names the issue it belongs to, the goal from that issue and its
workload.  Its body is one function, build(xp, *inputs), returning the
zero-argument callable to time; xp is the library under test (gpuarr, CuPy or
NumPy, with xp.ndimage / xp.signal its SciPy), so one body serves all three.
gpuarr's first result is checked against NumPy's before it is timed; a case
that fails the check is reported and not timed.  A case whose gpuarr function
does not exist yet is reported as not implemented ("n/i"); a library that
cannot be loaded is "n/a".

The floor of a case is the bytes it must move over the device-to-device copy
rate measured at the start of the run (bytes read + written over one 1 GiB
copy), or its flops over the chip's peak, whichever is larger, plus any bus
bytes over the pinned host<->device rate.  Reads and writes share the memory
bus, so a write-only case (ones) counts its written bytes at the full copy
rate, as shared/ANCHORS.md does (1.6 GB / 2969 GB/s = 0.54 ms).

Without --baseline, CuPy and NumPy are not run where gpuarr lacks the
operation, which keeps the run short while issues are open.  Results go to
benchmarks/results/<gpu>.json and .md (and --out); the console gets the table.

How each kind of case is timed (gpuarr and CuPy in this one process):
  gpu       CUDA events on the legacy default stream around one call, waiting
            for the end event after each (as cupyx.profiler.benchmark does);
            median and min of >= 20 runs after warm-up, more for fast cases,
            about 0.8 s per library.
  host      host overhead: 20,000 calls, one synchronisation, time per call.
  transfer  perf_counter around one call and a device synchronisation.
  fresh     a new Python process per run, timed inside the child, with an
            empty kernel cache (CuPy's and gpuarr's), or one filled by an
            untimed child first (warm_cache).
  NumPy/SciPy on the CPU: perf_counter, as many runs as fit in a second.

Adding a case: write its build function under its issue below, decorated with
@case(...) (or call fresh_case(...)); tests/test_benchmark_coverage.py checks
that names are unique and that every case names an issue and a goal.
"""
import argparse
import dataclasses
import datetime
import functools
import gc
import importlib
import json
import os
import pathlib
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import types
from typing import Callable, Optional

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO / "tests") not in sys.path:
    sys.path.append(str(REPO / "tests"))  # _lesson: the lesson's code, shared with tests/ and tools/
from _lesson import lesson_clipper  # noqa: E402
RESULTS = REPO / "benchmarks" / "results"
GiB = 1 << 30
N4M = 2048 * 2048        # the lesson's image, as a vector
NOISE = 0.0133           # the lesson's background sigma, Jy/beam
EXACT = (0, 0)           # tol: results must be equal
LIBS = ("gpuarr", "cupy", "numpy")


# ------------------------------------------------------------------ goals ---

_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}
_GOAL = re.compile(r"(<=|>=)\s*([0-9]*\.?[0-9]+)\s*(s|ms|us|GB/s|% copy|x CuPy)")


@dataclasses.dataclass(frozen=True)
class Goal:
    """A target from an issue: "<= 0.6 ms", ">= 25 GB/s", ">= 95% copy"
    (a fraction of the device copy rate measured in this run), or
    "<= 1x CuPy" (gpuarr's median over CuPy's, measured in this run)."""
    op: str
    value: float
    unit: str

    @classmethod
    def parse(cls, text):
        m = _GOAL.fullmatch(text.strip())
        if m is None:
            raise ValueError(f"goal {text!r} is not '<= or >=, a number, a unit' "
                             "with unit s, ms, us, GB/s, '% copy' or 'x CuPy'")
        return cls(m[1], float(m[2]), m[3])

    @property
    def is_rate(self):
        return self.unit not in _SECONDS and not self.is_relative

    @property
    def is_relative(self):
        return self.unit == "x CuPy"

    def target(self, copy_rate):
        """Seconds for time goals, bytes per second for rates (None if unknown
        or relative to CuPy)."""
        if self.unit in _SECONDS:
            return self.value * _SECONDS[self.unit]
        if self.unit == "GB/s":
            return self.value * 1e9
        if self.is_relative:
            return None
        return self.value / 100 * copy_rate if copy_rate else None

    def met(self, seconds, moved, copy_rate, ratio=None):
        """Whether the goal is met (None if it cannot be told); ratio is
        gpuarr's median over CuPy's, for goals relative to CuPy."""
        if self.is_relative:
            if ratio is None:
                return None
            return ratio <= self.value if self.op == "<=" else ratio >= self.value
        target = self.target(copy_rate)
        if target is None:
            return None
        measured = moved / seconds if self.is_rate else seconds
        return measured <= target if self.op == "<=" else measured >= target

    def describe(self, copy_rate=None):
        text = f"{self.op} {self.value:g}{'' if self.unit in ('% copy', 'x CuPy') else ' '}" \
            f"{self.unit}"
        if self.unit == "% copy" and copy_rate:
            text += f" ({fmt_rate(self.target(copy_rate))})"
        return text


# ------------------------------------------------------------ the registry ---

KINDS = ("gpu", "host", "transfer", "fresh")


@dataclasses.dataclass
class Case:
    name: str
    issue: int
    desc: str
    size: str
    goal: str                         # parsed by Goal
    build: Optional[Callable] = None  # build(xp, *inputs) -> the callable to time
    setup: Callable = tuple           # () -> host inputs; NumPy arrays go to each library
    kind: str = "gpu"
    bytes: float = 0                  # device memory read + written per call
    h2d: float = 0                    # bytes over the bus per call, each way
    d2h: float = 0
    flops: float = 0
    flop_dtype: str = "f64"
    floor_note: str = ""              # the floor in words where it is not computed
    cupy_ref: str = ""                # CuPy's figure in shared/ANCHORS.md
    requires: tuple = ()              # gpuarr names used: "where", "scipy.ndimage.label"
    cpu: bool = False                 # time NumPy/SciPy on the CPU as well
    tol: tuple = (1e-5, 1e-8)         # rtol, atol against NumPy; EXACT: equal
    check: Optional[Callable] = None  # check(got, ref) -> None or what is wrong
    reference: bool = True            # compute NumPy's result for the check
    ref_key: str = ""                 # cases that share one NumPy result
    prep: str = ""                    # fresh: untimed statements after context creation
    steps: tuple = ()                 # fresh: (label, statement) pairs, each timed
    warm_cache: bool = False          # fresh: one untimed child fills the kernel cache first
    calls: int = 0                    # host: calls per sample (0: the config's)
    repeats: int = 1                  # host: units of work per call (the figure is per unit)

    @property
    def moved(self):
        """Bytes moved per call, device and bus: what GB/s figures count."""
        return self.bytes + self.h2d + self.d2h


CASES = []


def case(name, **fields):
    """Register the decorated build function as a case."""
    def register(build):
        CASES.append(Case(name=name, build=build, **fields))
        return build
    return register


def fresh_case(name, **fields):
    """Register a case timed in fresh processes: with no steps, the import
    of the library; with steps, context creation and then each step's first
    call, synchronised (the figure is the slowest step)."""
    CASES.append(Case(name=name, kind="fresh", **fields))


class Host:
    """A setup value kept on the host, for cases that time their own transfers."""

    def __init__(self, value):
        self.value = value


def check_coverage(cases=None):
    """What is wrong with the registry, as a list of strings (empty when
    sound): names unique, an issue and a goal the runner understands per case,
    bytes for GB/s goals, a body for every non-fresh case."""
    problems, seen = [], set()
    for c in CASES if cases is None else cases:
        if c.name in seen:
            problems.append(f"{c.name}: name used twice")
        seen.add(c.name)
        if not isinstance(c.issue, int) or isinstance(c.issue, bool) or c.issue <= 0:
            problems.append(f"{c.name}: no issue number")
        try:
            goal = Goal.parse(c.goal or "")
        except ValueError as exc:
            problems.append(f"{c.name}: {exc}")
        else:
            if goal.is_rate and not c.moved:
                problems.append(f"{c.name}: a rate goal needs bytes, h2d or d2h")
        if c.kind not in KINDS:
            problems.append(f"{c.name}: kind {c.kind!r} is not one of {KINDS}")
        if (c.kind == "fresh") != (c.build is None):
            problems.append(f"{c.name}: fresh cases have steps, the others a build function")
        if not c.desc or not c.size:
            problems.append(f"{c.name}: no description or size")
    return problems


# ---------------------------------------------------------------- backends ---

class Backend:
    """A library under test.  Attributes fall through to its array module, and
    xp.ndimage / xp.signal are its SciPy-shaped namespaces, so a case body
    reads like the lesson: xp.where(...), xp.ndimage.label(...)."""

    def __init__(self, name, module, scipy, asnumpy, sync, free):
        self.name, self.module, self.scipy = name, module, scipy
        self.asnumpy, self.sync, self.free = asnumpy, sync, free

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr in ("ndimage", "signal"):
            value = importlib.import_module(f"{self.scipy}.{attr}")
        else:
            value = getattr(self.module, attr)
        self.__dict__[attr] = value
        return value


def _free_pools(lib):
    gc.collect()
    lib.get_default_memory_pool().free_all_blocks()
    lib.get_default_pinned_memory_pool().free_all_blocks()


def _why(exc):
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:160]


def load_backends():
    """({name: Backend}, {name: why it cannot be used}); NumPy is always there."""
    found = {"numpy": Backend("numpy", np, "scipy", np.asarray, lambda: None, gc.collect)}
    missing = {}
    try:
        import gpuarr
        if not gpuarr.is_available():
            gpuarr.zeros(1)  # raises the reason
            raise RuntimeError("gpuarr.is_available() is False")
        found["gpuarr"] = Backend("gpuarr", gpuarr, "gpuarr.scipy", gpuarr.asnumpy,
                                  gpuarr.cuda.device_synchronize,
                                  functools.partial(_free_pools, gpuarr))
    except Exception as exc:
        missing["gpuarr"] = _why(exc)
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        found["cupy"] = Backend("cupy", cupy, "cupyx.scipy", cupy.asnumpy,
                                cupy.cuda.runtime.deviceSynchronize,
                                functools.partial(_free_pools, cupy))
    except Exception as exc:
        missing["cupy"] = _why(exc)
    return found, missing


def gpuarr_lacks(gpuarr, paths):
    """The first dotted name in paths that gpuarr does not have, else None."""
    for path in paths:
        obj = gpuarr
        for part in path.split("."):
            if hasattr(obj, part):
                obj = getattr(obj, part)
                continue
            if isinstance(obj, types.ModuleType):
                try:
                    obj = importlib.import_module(f"{obj.__name__}.{part}")
                    continue
                except ImportError:
                    pass
            return path
    return None


def not_implemented(exc):
    """Whether an exception means "no such operation yet" (a module that fails
    to load for another reason is an error, not a missing feature)."""
    return (isinstance(exc, (AttributeError, NotImplementedError, ModuleNotFoundError))
            or (isinstance(exc, TypeError) and "unsupported operand" in str(exc)))


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


# ------------------------------------------------------------------ timing ---

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


# ----------------------------------------------------------------- machine ---

# (FP64, FP32) flops per SM per clock, by compute capability: A100, H100/H200.
FLOPS_PER_SM_CLOCK = {(8, 0): (128, 128), (9, 0): (128, 256)}


@dataclasses.dataclass
class Machine:
    gpu: str = "unknown GPU"
    driver: str = "?"
    events: str = ""
    copy_rate: Optional[float] = None   # bytes/s, read + written
    copy_by: dict = dataclasses.field(default_factory=dict)
    h2d: Optional[float] = None         # pinned bus rates, bytes/s
    d2h: Optional[float] = None
    fp64: Optional[float] = None        # peak flop/s
    fp32: Optional[float] = None
    versions: dict = dataclasses.field(default_factory=dict)

    def floor(self, c):
        """Lower bound on one call of case c, in seconds, or None."""
        bus = [(c.h2d, self.h2d), (c.d2h, self.d2h)]
        if any(n and not rate for n, rate in bus + [(c.bytes, self.copy_rate)]):
            return None
        device = c.bytes / self.copy_rate if c.bytes else 0.0
        peak = self.fp64 if c.flop_dtype == "f64" else self.fp32
        if c.flops and peak:
            device = max(device, c.flops / peak)
        return device + sum(n / rate for n, rate in bus if n) or None


def nvidia_smi(fields):
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits",
                              "-i", "0"], capture_output=True, text=True, timeout=30).stdout
        return [v.strip() for v in out.splitlines()[0].split(",")]
    except (OSError, IndexError, subprocess.SubprocessError):
        return None


def probe_machine(backends, events, measure, cfg):
    """Name, driver, versions, and the rates floors are made of; what cannot
    be probed stays None and is said on stderr."""
    m = Machine(events=events or "none", versions=library_versions(backends))
    smi = nvidia_smi("name,driver_version,clocks.max.sm")
    if smi:
        m.gpu, m.driver = smi[0], smi[1]
    for lib in ("gpuarr", "cupy"):
        if lib in backends:
            xp = backends[lib]
            try:
                src = xp.empty(GiB // 4, dtype=np.float32)
                m.copy_by[lib] = 2 * GiB / time_gpu(src.copy, xp, measure, cfg).median
            except Exception as exc:
                print(f"copy rate with {lib}: {_why(exc)}", file=sys.stderr)
            src = None
            xp.free()
    m.copy_rate = max(m.copy_by.values(), default=None)
    cupy = backends.get("cupy")
    if cupy:
        try:
            if not smi:
                m.gpu = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
            m.h2d, m.d2h = bus_rates(cupy.module)
            attrs = cupy.cuda.Device().attributes
            per_clock = FLOPS_PER_SM_CLOCK.get((attrs["ComputeCapabilityMajor"],
                                                attrs["ComputeCapabilityMinor"]))
            if per_clock and smi and smi[2].replace(".", "").isdigit():
                sm_clock = attrs["MultiProcessorCount"] * float(smi[2]) * 1e6
                m.fp64, m.fp32 = (sm_clock * f for f in per_clock)
        except Exception as exc:
            print(f"name, bus and flop rates with cupy: {_why(exc)}", file=sys.stderr)
        cupy.free()
    return m


def bus_rates(cupy):
    """Best pinned host->device and device->host rates (bytes/s), 256 MiB copies."""
    import cupyx
    n, rt = 256 << 20, cupy.cuda.runtime
    host = cupyx.empty_pinned((n,), dtype=np.uint8)
    dev = cupy.empty((n,), dtype=np.uint8)

    def best(kind, dst, src):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            rt.memcpy(dst, src, n, kind)
            times.append(time.perf_counter() - t0)
        return n / min(times)

    return (best(rt.memcpyHostToDevice, dev.data.ptr, host.ctypes.data),
            best(rt.memcpyDeviceToHost, host.ctypes.data, dev.data.ptr))


def library_versions(backends):
    v = {"python": platform.python_version(), "numpy": np.__version__}
    try:
        import scipy
        v["scipy"] = scipy.__version__
    except ImportError:
        pass
    try:
        import gpuarr
        v["gpuarr"] = gpuarr.__version__
        if "gpuarr" in backends:
            v["gpuarr CUDA runtime"] = gpuarr._core._versions()[1]
    except Exception:
        pass
    if "cupy" in backends:
        try:
            cupy = backends["cupy"].module
            v["cupy"] = cupy.__version__
            v["cupy CUDA runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        except Exception:
            pass
    return v


# ------------------------------------------------------------------ checks ---

def to_host(x):
    """A result as NumPy values: device arrays copied back, sequences kept."""
    if isinstance(x, (list, tuple)):
        return [to_host(v) for v in x]
    if isinstance(x, (np.ndarray, np.generic, int, float, complex)):
        return x
    if hasattr(x, "get"):
        return x.get()
    return np.asarray(x)


def compare(got, ref, tol):
    """None when got matches NumPy's ref (shape, dtype where NumPy gives one,
    values within tol = (rtol, atol)), else what differs."""
    if isinstance(ref, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(ref):
            return f"expected a sequence of {len(ref)}, got {type(got).__name__}"
        for i, (g, r) in enumerate(zip(got, ref)):
            problem = compare(g, r, tol)
            if problem:
                return f"[{i}] {problem}"
        return None
    g, r = np.asarray(got), np.asarray(ref)
    if g.shape != r.shape:
        return f"shape {g.shape}, NumPy {r.shape}"
    if isinstance(ref, (np.ndarray, np.generic)) and g.dtype != r.dtype:
        return f"dtype {g.dtype}, NumPy {r.dtype}"
    if tol == EXACT or r.dtype.kind in "biu":
        bad = ~((g == r) | (np.isnan(g) & np.isnan(r)) if r.dtype.kind in "fc" else (g == r))
    else:
        bad = ~np.isclose(g, r, rtol=tol[0], atol=tol[1], equal_nan=True)
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
        return f"{np.count_nonzero(bad)} of {bad.size} differ; at {i}: {g[i]!r}, NumPy {r[i]!r}"
    return None


def same_clip(got, ref):
    """The clipper keeps the same pixels up to a few where float32 median/std
    round differently: compare how many it keeps and their spread."""
    got, ref = np.asarray(got), np.asarray(ref)
    if abs(got.size - ref.size) > 1e-4 * ref.size:
        return f"keeps {got.size} pixels, NumPy {ref.size}"
    if not np.isclose(got.std(), ref.std(), rtol=1e-3):
        return f"std of the kept pixels {got.std():.6g}, NumPy {ref.std():.6g}"
    return None


def uniform_f32(n):
    def check(got, _ref):
        got = np.asarray(got)
        if got.shape != (n,) or got.dtype != np.float32:
            return f"shape {got.shape} dtype {got.dtype}, expected ({n},) float32"
        lo, hi, mean = got.min(), got.max(), got.mean(dtype=np.float64)
        if lo < 0 or hi >= 1 or abs(mean - 0.5) > 1e-3:
            return f"min {lo}, max {hi}, mean {mean}: not uniform on [0, 1)"
        return None
    return check


# ------------------------------------------------------------------ inputs ---

def host_random(n, dtype=np.float32, seed=0):
    """n values uniform on [0, 1): a 4M-element random block tiled, so 1 GiB
    inputs take a fraction of a second to make."""
    block = np.random.default_rng(seed).random(min(n, 1 << 22)).astype(dtype)
    return np.resize(block, n)


@functools.lru_cache(maxsize=None)
def sky():
    """A synthetic 2048x2048 float32 radio image like the lesson's GMRT one:
    Gaussian noise of sigma NOISE plus 500 Gaussian sources of 8 to 200 sigma."""
    rng = np.random.default_rng(2048)
    img = rng.normal(0.0, NOISE, (2048, 2048)).astype(np.float32)
    r, n = 12, 500
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    ys, xs = rng.integers(r, 2048 - r, (2, n))
    peaks = NOISE * 10 ** rng.uniform(0.9, 2.3, n)
    widths = rng.uniform(1.0, 3.0, n)
    for y, x, peak, w in zip(ys, xs, peaks, widths):
        img[y - r:y + r + 1, x - r:x + r + 1] += peak * np.exp(-(xx * xx + yy * yy) / (2 * w * w))
    return img


@functools.lru_cache(maxsize=None)
def segmented():
    return np.where(sky() > 5 * NOISE, 1, 0)


@functools.lru_cache(maxsize=None)
def labelled():
    import scipy.ndimage
    return scipy.ndimage.label(segmented())


def deltas_and_gauss():
    """The lesson's convolution inputs: a Dirac every 16 pixels, 15x15 Gaussian."""
    deltas = np.zeros((2048, 2048))
    deltas[8::16, 8::16] = 1
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    dst = np.sqrt(x * x + y * y)
    sigma, muu = 1, 0.000
    gauss = np.exp(-((dst - muu) ** 2 / (2.0 * sigma ** 2)))
    return deltas, gauss


def check_clipped(got):
    """sigma_clip's survivors against the lesson's clipper run by NumPy."""
    want = lesson_clipper(sky().ravel())
    if got.size != want.size:
        return f"{got.size} survivors, NumPy's clipper {want.size}"
    if not np.isclose(got.std(), want.std(), rtol=1e-5):
        return f"std {got.std()}, NumPy {want.std()}"
    return None


def four_steps(xp, data_host):
    """The lesson's whole pipeline, transfers included: background by
    clipping, segmentation at 5 sigma, labelling, positions and fluxes."""
    data = xp.asarray(data_host)
    clipped = lesson_clipper(data.ravel(), xp=xp)
    threshold = 5 * xp.std(clipped)
    segmented_image = xp.where(data > threshold, 1, 0)
    labels, n = xp.ndimage.label(segmented_image)
    index = xp.arange(1, n + 1)
    positions = xp.ndimage.center_of_mass(data, labels, index)
    fluxes = xp.ndimage.sum_labels(data, labels, index)
    return xp.asnumpy(xp.asarray(positions)), xp.asnumpy(fluxes)


# ---------------------------------------------------- issue 2: foundation ---

@case("h2d_32MB", issue=2, kind="transfer", desc="gp.asarray(pageable host array)",
      size="4M f64 (32 MiB)", goal=">= 25 GB/s", h2d=8 << 22, cupy_ref="8.8 GB/s", tol=EXACT,
      requires=("asarray",),
      setup=lambda: (Host(host_random(1 << 22, np.float64)),))
def h2d(xp, host):
    return lambda: xp.asarray(host)


@case("d2h_32MB", issue=2, kind="transfer", desc="gp.asnumpy(device array), a new NumPy array",
      size="4M f64 (32 MiB)", goal=">= 25 GB/s", d2h=8 << 22, cupy_ref="2.9 GB/s", tol=EXACT,
      requires=("asnumpy",),
      setup=lambda: (host_random(1 << 22, np.float64),))
def d2h(xp, x):
    return lambda: xp.asnumpy(x)


@case("ones_1000x1000x200", issue=2, desc="ones((1000, 1000, 200)); the pool reuses the block",
      size="200M f64 (1.6 GB)", goal="<= 0.6 ms", bytes=1.6e9, cupy_ref="0.96 ms", tol=EXACT)
def ones(xp):
    return lambda: xp.ones((1000, 1000, 200))


fresh_case("import_time", issue=2, desc="import in a fresh process (NumPy column: import numpy)",
           size="-", goal="<= 0.1 s", cupy_ref="0.5-1.1 s")

fresh_case("first_op", issue=2, size="-", goal="<= 5 ms",
           desc="fresh process: context (first zeros(1)), then first ones, first arange",
           steps=(("ones((1000,))", "xp.ones((1000,))"),
                  ("arange(f32)", "xp.arange(10, dtype=xp.float32)")))


def _noop():
    pass


@case("benchmark_overhead", issue=6, kind="host", calls=20, repeats=1000,
      desc="benchmark(noop, n_repeat=1000): host time per repeat", size="-", goal="<= 3 us",
      requires=("profiler.benchmark",),
      floor_note="2 event records + 1 sync", reference=False,
      check=lambda got, ref: (None if np.shape(np.asarray(got).item().cpu_times) == (1000,)
                              else "benchmark() did not return 1000 CPU times"))
def benchmark_overhead(xp):
    if xp.name == "cupy":
        import cupyx.profiler
        bench = cupyx.profiler.benchmark
    else:
        bench = xp.profiler.benchmark
    return lambda: bench(_noop, n_repeat=1000, n_warmup=0)


# ------------------------------------------------ issue 3: elementwise ops ---

@case("add_f32_1GiB", issue=3, desc="x + y", size="2 x 2^28 f32 (1 GiB each)",
      goal=">= 95% copy", bytes=3 * GiB, cupy_ref="2526 GB/s", requires=("add",), tol=EXACT,
      setup=lambda: (host_random(GiB // 4), host_random(GiB // 4, seed=1)))
def add_1gib(xp, x, y):
    return lambda: x + y


@case("where_2048", issue=3, desc="segmentation where(img > t, 1, 0)", size="2048^2 f32 -> i64",
      goal="<= 20 us", bytes=N4M * 12, cupy_ref="63 us", cpu=True, tol=EXACT,
      requires=("where", "greater"), setup=lambda: (sky(),))
def where(xp, img):
    return lambda: xp.where(img > 5 * NOISE, 1, 0)


@case("add_overhead_1000", issue=3, kind="host", desc="host time per x + y (20,000 calls, one sync)",
      size="1000 f64", goal="<= 4 us", cupy_ref="12.5 us", floor_note="~3.5 us (a launch)",
      requires=("add",), setup=lambda: (host_random(1000, np.float64), host_random(1000, np.float64, 1)))
def add_overhead(xp, x, y):
    return lambda: x + y


@case("softplus_1e5", issue=3, desc="maximum(0, x) + log1p(exp(-abs(x)))", size="1e5 f64",
      goal="<= 35 us", cupy_ref="97 us", floor_note="launch-bound",
      requires=("maximum", "log1p", "exp", "abs", "negative", "add"),
      setup=lambda: (10 * host_random(10 ** 5, np.float64) - 5,))
def softplus(xp, x):
    return lambda: xp.maximum(0, x) + xp.log1p(xp.exp(-xp.abs(x)))


@case("sincos_1e7", issue=3, desc="sin(x) + cos(y) / sqrt(z), separate calls", size="1e7 f64",
      goal="<= 0.3 ms", bytes=4 * 8e7, cupy_ref="0.344 ms (fused 0.138)",
      requires=("sin", "cos", "sqrt", "divide", "add"),
      setup=lambda: tuple(host_random(10 ** 7, np.float64, s) + 0.5 for s in range(3)))
def sincos(xp, x, y, z):
    return lambda: xp.sin(x) + xp.cos(y) / xp.sqrt(z)


fresh_case("first_add", issue=3, desc="fresh process: first a + b after context creation",
           size="1000 f64", goal="<= 5 ms", cupy_ref="137 ms", requires=("add",),
           prep="a = xp.ones(1000); b = xp.ones(1000)", steps=(("add", "a + b"),))

fresh_case("first_sin", issue=3, desc="fresh process: first sin(a) after context creation",
           size="1000 f64", goal="<= 5 ms", cupy_ref="157 ms", requires=("sin",),
           prep="a = xp.ones(1000)", steps=(("sin", "xp.sin(a)"),))


@case("random_f32_2e28", issue=3, desc="random.random(2**28, dtype=float32)",
      size="2^28 f32 (1 GiB)", goal=">= 80% copy", bytes=GiB, requires=("random.random",),
      reference=False, check=uniform_f32(1 << 28))
def random_f32(xp):
    return lambda: xp.random.random(1 << 28, dtype=xp.float32)


# --------------------------------------------------- issue 4: reductions ---

@case("sum_f32_1GiB", issue=4, desc="sum(x)", size="2^28 f32 (1 GiB)", goal=">= 95% copy",
      bytes=GiB, cupy_ref="3003 GB/s", requires=("sum",), tol=(1e-4, 0),
      setup=lambda: (host_random(GiB // 4),))
def sum_1gib(xp, x):
    return lambda: xp.sum(x)


@case("median_4M", issue=4, desc="median of the sky image's pixels", size="4.2M f32",
      goal="<= 60 us", bytes=4 * N4M, cupy_ref="0.23 ms", requires=("median",), tol=(1e-6, 0),
      setup=lambda: (sky().ravel(),))
def median(xp, x):
    return lambda: xp.median(x)


@case("std_4M", issue=4, desc="std of the sky image's pixels", size="4.2M f32", goal="<= 30 us",
      bytes=4 * N4M, cupy_ref="1.41 ms", requires=("std",), tol=(1e-4, 0),
      setup=lambda: (sky().ravel(),))
def std(xp, x):
    return lambda: xp.std(x)


@case("compress_4M", issue=4, desc="x.compress(x > t), keeping 99.9%", size="4.2M f32",
      goal="<= 40 us", bytes=8 * N4M, cupy_ref="0.13 ms", tol=EXACT,
      requires=("greater", "ndarray.compress"), setup=lambda: (sky().ravel(),))
def compress(xp, x):
    return lambda: x.compress(x > -3 * NOISE)


@case("kappa_sigma_2048", issue=4, desc="the lesson's kappa-sigma clipper on the sky",
      size="2048^2 f32", goal="<= 1.5 ms", cupy_ref="16.2 ms", cpu=True,
      floor_note="~0.3 ms", check=same_clip,
      requires=("median", "std", "greater", "less", "add", "subtract", "multiply",
                "ndarray.compress"),
      setup=lambda: (sky().ravel(),))
def kappa_sigma(xp, data_flat):
    return lambda: lesson_clipper(data_flat, xp=xp)


fresh_case("first_median", issue=4, desc="fresh process: first median after context creation",
           size="4.2M f32", goal="<= 10 ms", cupy_ref="4.56 s", requires=("median",),
           prep="x = xp.arange(4194304, dtype=xp.float32)", steps=(("median", "xp.median(x)"),))


# -------------------------------------------------- issue 7: convolution ---

fresh_case("first_convolve2d", issue=7, desc="fresh process: first signal.convolve2d",
           size="2048^2 f64 * 15x15", goal="<= 10 ms", cupy_ref="2.1 s",
           requires=("scipy.signal.convolve2d",),
           prep=("import importlib; signal = importlib.import_module(sp.__name__ + '.signal'); "
                 "d = xp.zeros((2048, 2048)); d[8::16, 8::16] = 1; g = xp.ones((15, 15)) / 225"),
           steps=(("convolve2d", "signal.convolve2d(d, g)"),))

CONV2D_FULL = 2062 * 2062  # 2048 + 15 - 1 squared


@case("convolve2d_2048_15", issue=7, desc="signal.convolve2d(deltas, gauss), mode full",
      size="2048^2 f64 * 15x15", goal="<= 0.1 ms", bytes=8 * (N4M + CONV2D_FULL),
      flops=2 * 225 * CONV2D_FULL, cupy_ref="1.63 ms", cpu=True, tol=(1e-9, 1e-12),
      ref_key="convolve2d", requires=("scipy.signal.convolve2d",), setup=deltas_and_gauss)
def convolve2d(xp, image, kernel):
    return lambda: xp.signal.convolve2d(image, kernel)


@case("convolve2d_2048_15_xfer", issue=7, desc="the same with both transfers, as the lesson times",
      size="2048^2 f64 * 15x15", goal="<= 3 ms", bytes=8 * (N4M + CONV2D_FULL),
      flops=2 * 225 * CONV2D_FULL, h2d=8 * (N4M + 225), d2h=8 * CONV2D_FULL,
      cupy_ref="20.2 ms", tol=(1e-9, 1e-12), ref_key="convolve2d",
      requires=("scipy.signal.convolve2d",),
      setup=lambda: tuple(map(Host, deltas_and_gauss())))
def convolve2d_xfer(xp, image, kernel):
    return lambda: xp.asnumpy(xp.signal.convolve2d(xp.asarray(image), xp.asarray(kernel)))


@case("convolve_4M_15", issue=7, desc="np.convolve(deltas.ravel(), gauss.diagonal())",
      size="4.2M f64 * 15", goal="<= 30 us", bytes=8 * 2 * N4M, flops=2 * 15 * N4M,
      cupy_ref="0.52 ms (FFT)", cpu=True, tol=(1e-9, 1e-12), requires=("convolve",),
      setup=lambda: (deltas_and_gauss()[0].ravel(), deltas_and_gauss()[1].diagonal().copy()))
def convolve(xp, signal, taps):
    return lambda: xp.convolve(signal, taps)


@case("gaussian_filter_100x1024x1024", issue=7, desc="ndimage.gaussian_filter(x, sigma=2)",
      size="100x1024^2 f32", goal="<= 2 ms", bytes=2 * 4 * 100 * 1024 * 1024,
      cupy_ref="10.5 ms", tol=(1e-4, 1e-6), requires=("scipy.ndimage.gaussian_filter",),
      setup=lambda: (host_random(100 * 1024 * 1024).reshape(100, 1024, 1024),))
def gaussian_filter(xp, x):
    return lambda: xp.ndimage.gaussian_filter(x, sigma=2)


@case("sigma_clip_2048", issue=8, desc="stats.sigma_clip, the lesson's mode (strict, to convergence)",
      size="2048^2 f32", goal="<= 0.3 ms", bytes=4 * N4M * 6, requires=("stats.sigma_clip",),
      reference=False, setup=lambda: (sky(),), check=lambda got, ref: check_clipped(got))
def sigma_clip(xp, data):
    return lambda: xp.stats.sigma_clip(data, sigma=3, maxiters=None, masked=False,
                                       inclusive=False)


# ------------------------------------------- issue 8: labels and measures ---

@case("label_2048", issue=8, desc="ndimage.label of the segmented sky", size="2048^2 i64",
      goal="<= 0.1 ms", bytes=N4M * (8 + 4), cupy_ref="0.51 ms", cpu=True, tol=EXACT,
      requires=("scipy.ndimage.label",), setup=lambda: (segmented(),))
def label(xp, segmented_image):
    return lambda: xp.ndimage.label(segmented_image)


@case("com_sum_labels", issue=8, desc="center_of_mass + sum_labels for every label",
      size="2048^2 f32, ~500 labels", goal="<= 50 us", bytes=N4M * 8, cupy_ref="4.18 ms",
      cpu=True, tol=(1e-4, 1e-6),
      requires=("arange", "scipy.ndimage.center_of_mass", "scipy.ndimage.sum_labels"),
      setup=lambda: (sky(), *labelled()))
def measure_sources(xp, data, labels, n):
    index = xp.arange(1, n + 1)
    return lambda: (xp.ndimage.center_of_mass(data, labels, index),
                    xp.ndimage.sum_labels(data, labels, index))


@case("pipeline_4step", issue=8, desc="clip, segment, label, measure; transfers included",
      size="2048^2 f32", goal="<= 2 ms", h2d=4 * N4M, cupy_ref="26.6 ms", cpu=True,
      tol=(1e-4, 1e-6),
      requires=("median", "std", "greater", "less", "add", "subtract", "multiply", "where",
                "arange", "ndarray.compress", "scipy.ndimage.label",
                "scipy.ndimage.center_of_mass", "scipy.ndimage.sum_labels"),
      setup=lambda: (Host(sky()),))
def pipeline(xp, data):
    return lambda: four_steps(xp, data)


# ----------------------------------------------------------------- running ---

# ------------------------------------------- issues 17, 18: user kernels ---

VECTOR_ADD = r"""
extern "C" __global__ void vector_add(const float *A, const float *B, float *C, const int size)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    if (item < size) C[item] = A[item] + B[item];
}
"""
# Arrays made without compiling anything in CuPy either (empty, no fill
# kernel), so the timed step pays NVRTC's first compile in both libraries.
_KPREP = ("a = xp.empty(1024, dtype=xp.float32); b = xp.empty(1024, dtype=xp.float32); "
          "c = xp.empty(1024, dtype=xp.float32)")
_RAW_STEP = (f"k = xp.RawKernel({VECTOR_ADD!r}, 'vector_add'); "
             "k((2,), (512,), (a, b, c, xp.int32(1024)))")
_EW_STEP = ("k = xp.ElementwiseKernel('float32 x, float32 y', 'float32 z', "
            "'z = (x - y) * (x - y)', 'squared_diff'); k(a, b)")
_RED_STEP = ("k = xp.ReductionKernel('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', "
             "'l2norm'); k(a)")
_FUSE_STEP = ("f = xp.fuse(kernel_name='squared_diff')(lambda x, y: (x - y) * (x - y)); f(a, b)")

# (label, issue, what, step, gpuarr name, (cold goal, CuPy), (warm goal, CuPy))
_FIRST_CALLS = (
    ("rawkernel", 17, "RawKernel(vector add)", _RAW_STEP, "RawKernel",
     ("<= 30 ms", "32 ms"), ("<= 0.5 ms", "0.49 ms")),
    ("elementwise", 18, "ElementwiseKernel", _EW_STEP, "ElementwiseKernel",
     ("<= 40 ms", "87 ms"), ("<= 1 ms", "0.42 ms")),
    ("reduction", 18, "ReductionKernel (L2 norm)", _RED_STEP, "ReductionKernel",
     ("<= 40 ms", "3.30 s"), ("<= 1 ms", "31 ms")),
    ("fuse", 18, "fuse (squared diff)", _FUSE_STEP, "fuse",
     ("<= 40 ms", "127 ms"), ("<= 1 ms", "1.2 ms")),
)
for _label, _issue, _what, _step, _name, _cold, _warm in _FIRST_CALLS:
    for _w, (_goal, _ref) in (("cold", _cold), ("warm", _warm)):
        fresh_case(f"first_{_label}_{_w}", issue=_issue, size="1024 f32",
                   warm_cache=_w == "warm", goal=_goal, cupy_ref=_ref, requires=(_name,),
                   desc=f"fresh process, {_w} kernel cache: {_what} + first call",
                   prep=_KPREP, steps=((_label, _step),))


@case("rawkernel_overhead", issue=17, kind="host", desc="host time per RawKernel call, 4 args",
      size="1000 f32", goal="<= 4.5 us", cupy_ref="6.9 us", floor_note="~3 us (a launch)",
      requires=("RawKernel",), reference=False, check=lambda got, ref: None,
      setup=lambda: (host_random(1000), host_random(1000, seed=1)))
def rawkernel_overhead(xp, a, b):
    c = xp.empty_like(a)
    k = xp.RawKernel(VECTOR_ADD, "vector_add")
    n = np.int32(1000)
    return lambda: k((4,), (256,), (a, b, c, n))


@case("elementwise_overhead", issue=18, kind="host",
      desc="host time per ElementwiseKernel call (output allocated)", size="1000 f32",
      goal="<= 5 us", cupy_ref="11.3 us", floor_note="~3 us (a launch)",
      requires=("ElementwiseKernel",), tol=(1e-6, 1e-7),
      setup=lambda: (host_random(1000), host_random(1000, seed=1)))
def elementwise_overhead(xp, a, b):
    if xp.name == "numpy":
        return lambda: (a - b) * (a - b)
    k = xp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)",
                             "squared_diff")
    return lambda: k(a, b)


@case("fuse_overhead", issue=18, kind="host", desc="host time per fused call (output allocated)",
      size="1000 f32", goal="<= 5 us", cupy_ref="13.6 us", floor_note="~3 us (a launch)",
      requires=("fuse",), tol=(1e-6, 1e-7),
      setup=lambda: (host_random(1000), host_random(1000, seed=1)))
def fuse_overhead(xp, a, b):
    if xp.name == "numpy":
        return lambda: (a - b) * (a - b)
    f = xp.fuse(kernel_name="squared_diff")(lambda x, y: (x - y) * (x - y))
    return lambda: f(a, b)


@case("fused_sincos_1e7", issue=18, desc="fuse: sin(x) + cos(y) / sqrt(x + 1)", size="1e7 f64",
      goal="<= 65 us", bytes=3 * 8e7, cupy_ref="77.7 us (separate ops 396 us)",
      requires=("fuse",), tol=(1e-12, 1e-12),
      setup=lambda: tuple(host_random(10 ** 7, np.float64, s) for s in range(2)))
def fused_sincos(xp, x, y):
    # a def, not a lambda (CuPy 14 cannot fuse a lambda), and not named sincos
    # (CuPy names the kernel after it, and CUDA has a sincos function)
    def sin_cos_sqrt(x, y):
        return xp.sin(x) + xp.cos(y) / xp.sqrt(x + 1)

    if xp.name == "numpy":
        return lambda: sin_cos_sqrt(x, y)
    f = xp.fuse()(sin_cos_sqrt)
    return lambda: f(x, y)


@case("l2norm_1GiB", issue=18, desc="ReductionKernel L2 norm (the course's), full reduction",
      size="2^28 f32 (1 GiB)", goal=">= 90% copy", bytes=GiB, requires=("ReductionKernel",),
      tol=(1e-4, 0), setup=lambda: (host_random(GiB // 4),))
def l2norm_1gib(xp, x):
    if xp.name == "numpy":
        return lambda: np.sqrt(np.sum(x.astype(np.float64) ** 2)).astype(np.float32)
    k = xp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    return lambda: k(x)


# ---------------------------------------------------------- issue 22: FFT ---

def image_and_filter(k):
    """The lesson's image size in float64 and a random k x k filter."""
    def setup():
        rng = np.random.default_rng(22)
        return rng.random((2048, 2048)), rng.random((k, k))
    return setup


def fftconvolve_same(xp, image, kernel):
    return lambda: xp.signal.fftconvolve(image, kernel, mode="same")


def convolve_auto_same(xp, image, kernel):
    return lambda: xp.signal.convolve(image, kernel, mode="same", method="auto")


for _k, _cupy in ((31, "705 us"), (63, "648 us"), (127, "548 us")):
    case(f"fftconvolve_2048_{_k}", issue=22, desc="signal.fftconvolve(image, filter, mode='same')",
         size=f"2048^2 f64 * {_k}^2", goal="<= 0.4 ms", bytes=8 * 2 * N4M, cupy_ref=_cupy,
         tol=(1e-9, 1e-8), ref_key=f"conv_same_{_k}", requires=("scipy.signal.fftconvolve",),
         setup=image_and_filter(_k))(fftconvolve_same)
    case(f"convolve_auto_2048_{_k}", issue=22,
         desc="signal.convolve(image, filter, mode='same', method='auto')",
         size=f"2048^2 f64 * {_k}^2", goal="<= 0.4 ms", bytes=8 * 2 * N4M, tol=(1e-9, 1e-8),
         ref_key=f"conv_same_{_k}", requires=("scipy.signal.convolve",),
         setup=image_and_filter(_k))(convolve_auto_same)


@case("fft2_2048_c128", issue=22, desc="fft.fft2(x); goal: not slower than CuPy",
      size="2048^2 c128", goal="<= 1x CuPy", bytes=2 * 16 * N4M, tol=(1e-9, 1e-7),
      requires=("fft.fft2",),
      setup=lambda: (host_random(N4M, np.float64).reshape(2048, 2048)
                     + 1j * host_random(N4M, np.float64, seed=1).reshape(2048, 2048),))
def fft2(xp, x):
    return lambda: xp.fft.fft2(x)


@case("rfft_2e24_f32", issue=22, desc="fft.rfft(x); goal: not slower than CuPy",
      size="2^24 f32", goal="<= 1x CuPy", bytes=4 * (1 << 24) + 8 * ((1 << 23) + 1),
      tol=(1e-4, 0.05), requires=("fft.rfft",),
      setup=lambda: (host_random(1 << 24) - 0.5,))
def rfft(xp, x):
    return lambda: xp.fft.rfft(x)


@dataclasses.dataclass
class Cell:
    """One library's outcome on one case."""
    status: str                      # ok, n/i, n/a, error, check failed, skipped
    detail: str = ""
    timing: Optional[Timing] = None
    note: str = ""


@dataclasses.dataclass
class Env:
    cfg: Config
    backends: dict
    missing: dict
    measure: Optional[Callable]
    machine: Machine
    baseline: bool
    refs: dict = dataclasses.field(default_factory=dict)


def on_device(xp, inputs):
    """Setup values as xp takes them: NumPy arrays moved with xp.asarray,
    Host(...) unwrapped, anything else as it is."""
    values = [v.value if isinstance(v, Host) else xp.asarray(v) if isinstance(v, np.ndarray) else v
              for v in inputs]
    xp.sync()
    return values


def failed(exc, lib, case):
    """The cell for an exception: gpuarr lacking an operation is "n/i",
    another library lacking one "n/a"; anything else is an error, with its
    traceback on stderr."""
    if not_implemented(exc):
        return Cell("n/i" if lib == "gpuarr" else "n/a", _why(exc))
    print(f"--- {case.name} on {lib}:", file=sys.stderr)
    traceback.print_exc()
    return Cell("error", _why(exc))


def time_call(case, fn, xp, env):
    if case.kind == "host":
        return time_host(fn, xp, env.cfg, case.calls, case.repeats)
    if case.kind == "transfer":
        return time_transfer(fn, xp, env.cfg)
    return time_gpu(fn, xp, env.measure, env.cfg)


def reference(case, env, inputs):
    """(NumPy's result, seconds it took); shared between cases with one ref_key."""
    if case.ref_key in env.refs:
        return env.refs[case.ref_key]
    xp = env.backends["numpy"]
    fn = case.build(xp, *on_device(xp, inputs))
    t0 = time.perf_counter()
    result = (to_host(fn()), time.perf_counter() - t0)
    if case.ref_key:
        env.refs[case.ref_key] = result
    return result


def measure_checked(case, env, inputs, state):
    """gpuarr: first call, check against NumPy, then time."""
    xp = env.backends["gpuarr"]
    try:
        fn = case.build(xp, *on_device(xp, inputs))
        got = to_host(fn())
        ref = None
        if case.reference:
            ref, state["ref_seconds"] = reference(case, env, inputs)
        problem = case.check(got, ref) if case.check else compare(got, ref, case.tol)
        del got, ref
        if problem:
            return Cell("check failed", problem)
        return Cell("ok", timing=time_call(case, fn, xp, env))
    except Exception as exc:
        return failed(exc, "gpuarr", case)


def measure_plain(case, env, lib, inputs, state):
    xp = env.backends[lib]
    try:
        fn = case.build(xp, *on_device(xp, inputs))
        if lib == "numpy":
            return Cell("ok", timing=time_cpu(fn, env.cfg, state.get("ref_seconds")))
        return Cell("ok", timing=time_call(case, fn, xp, env))
    except Exception as exc:
        return failed(exc, lib, case)


def measure_fresh(case, env, lib):
    try:
        timing, note = time_fresh(case, lib, env.cfg)
        return Cell("ok", timing=timing, note=note)
    except ChildFailed as exc:
        msg = str(exc)[:160]
        if re.match(r"(AttributeError|NotImplementedError|ModuleNotFoundError)\b", msg):
            return Cell("n/i" if lib == "gpuarr" else "n/a", msg)
        return Cell("error", msg)
    except Exception as exc:
        return failed(exc, lib, case)


def run_case(case, env):
    """{library: Cell} for one case.  Without --baseline, CuPy and NumPy are
    skipped where gpuarr lacks the operation (the run stays short)."""
    cells = {}
    if "gpuarr" not in env.backends:
        cells["gpuarr"] = Cell("n/a", env.missing["gpuarr"])
    else:
        lacking = gpuarr_lacks(env.backends["gpuarr"].module, case.requires)
        if lacking:
            cells["gpuarr"] = Cell("n/i", f"needs gpuarr.{lacking}")
    others = cells.get("gpuarr", Cell("ok")).status != "n/i" or env.baseline
    libs = [lib for lib in LIBS if lib not in cells and (lib == "gpuarr" or others)]
    if case.kind == "fresh":
        libs = [lib for lib in libs if lib != "numpy" or not case.steps]
    elif not case.cpu:
        libs = [lib for lib in libs if lib != "numpy"]
    inputs = case.setup() if case.kind != "fresh" and libs else ()
    state = {}
    for lib in libs:
        if lib not in env.backends:
            cells[lib] = Cell("n/a", env.missing.get(lib, ""))
            continue
        if case.kind == "fresh":
            cells[lib] = measure_fresh(case, env, lib)
        elif lib == "gpuarr":
            cells[lib] = measure_checked(case, env, inputs, state)
        else:
            cells[lib] = measure_plain(case, env, lib, inputs, state)
        env.backends[lib].free()
    return cells


def record(case, cells, machine):
    """The case's result as plain data for the JSON file and the table."""
    goal = Goal.parse(case.goal)
    gp, cp = (c if c is not None and c.status == "ok" else None
              for c in (cells.get("gpuarr"), cells.get("cupy")))
    ratio = gp.timing.median / cp.timing.median if gp and cp else None
    return {
        "name": case.name, "issue": case.issue, "kind": case.kind, "description": case.desc,
        "size": case.size, "goal": case.goal, "bytes": case.moved or None,
        "floor_s": machine.floor(case), "floor_note": case.floor_note, "cupy_ref": case.cupy_ref,
        "met": goal.met(gp.timing.min if case.kind == "fresh" else gp.timing.median, case.moved,
                        machine.copy_rate, ratio) if gp else None,
        "ratio": ratio,
        "cells": {lib: {"status": c.status, "detail": c.detail, "note": c.note,
                        "median_s": c.timing.median if c.timing else None,
                        "min_s": c.timing.min if c.timing else None,
                        "runs": len(c.timing.samples) if c.timing else 0}
                  for lib, c in cells.items()},
    }


# --------------------------------------------------------------- reporting ---

def num(v):
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _time_unit(s):
    return ("s", 1.0) if s >= 1 else ("ms", 1e-3) if s >= 1e-3 else ("us", 1e-6)


def fmt_time(s):
    unit, scale = _time_unit(s)
    return f"{num(s / scale)} {unit}"


def fmt_rate(bytes_per_s):
    return f"{num(bytes_per_s / 1e9)} GB/s"


def fmt_cell(cell, rec, both=True):
    if cell is None:
        return "-"
    if cell["status"] != "ok":
        return cell["status"]
    med, best = cell["median_s"], cell["min_s"]
    if Goal.parse(rec["goal"]).is_rate:
        moved = rec["bytes"]
        return f"{num(moved / med / 1e9)} / {num(moved / best / 1e9)} GB/s" if both else \
            fmt_rate(moved / med)
    unit, scale = _time_unit(med)
    return f"{num(med / scale)} / {num(best / scale)} {unit}" if both else fmt_time(med)


def fmt_floor(rec):
    if rec["floor_s"] is None:
        return rec["floor_note"] or "-"
    if Goal.parse(rec["goal"]).is_rate:
        return fmt_rate(rec["bytes"] / rec["floor_s"])
    return fmt_time(rec["floor_s"])


def markdown(run, full=True):
    """The results as Markdown.  full=False is the console copy, read from
    its last lines: notes come before the table, shortened, without those
    that only say which operation a library lacks."""
    m, v = run["machine"], run["machine"]["versions"]
    copy = m["copy_rate"]
    intro = [
        f"# gpuarr benchmarks: {m['gpu']}",
        "",
        f"{run['date']} | driver {m['driver']} | "
        + (f"code {run['commit']} | " if run.get("commit") else "")
        + ", ".join(f"{k} {val}" for k, val in v.items()),
        "",
        "Device copy rate (1 GiB, bytes read + written): "
        + (fmt_rate(copy) if copy else "not measured")
        + "".join(f"; {k} {fmt_rate(r)}" for k, r in m["copy_by"].items())
        + (f". Pinned bus: h2d {fmt_rate(m['h2d'])}, d2h {fmt_rate(m['d2h'])}" if m["h2d"] else "")
        + (f". Peak FP64 {m['fp64'] / 1e12:.1f} TFLOP/s" if m["fp64"] else "") + ".",
        "",
        f"GPU times: CUDA events ({m['events']}), median / min after warm-up; NumPy: CPU "
        "median. Floor: bytes / copy rate (+ bus bytes / pinned rate) or flops / peak. "
        "met?: gpuarr median (fresh processes: best run) against the goal. gp/CuPy: ratio of medians (< 1: gpuarr faster)."
        + (f" Selection: {run['selection']}." if run["selection"] else ""),
        "",
    ]
    table = ["| case | # | size | gpuarr med / min | CuPy med / min | NumPy | floor | goal | met? "
             "| gp/CuPy |", "|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for rec in run["cases"]:
        cells = rec["cells"]
        met = {True: "yes", False: "no", None: "-"}[rec["met"]]
        ratio = f"{rec['ratio']:.2f}x" if rec["ratio"] else "-"
        table.append(
            f"| {rec['name']} | {rec['issue']} | {rec['size']} | {fmt_cell(cells.get('gpuarr'), rec)} "
            f"| {fmt_cell(cells.get('cupy'), rec)} | {fmt_cell(cells.get('numpy'), rec, both=False)} "
            f"| {fmt_floor(rec)} | {Goal.parse(rec['goal']).describe(copy)} | {met} | {ratio} |")
        for lib, c in cells.items():
            text = c["note"] or c["detail"]
            if text and (full or c["status"] not in ("n/i", "n/a")):
                note = f"- {rec['name']} {lib}: {c['status'] + ': ' if c['detail'] else ''}{text}"
                notes.append(note if full else note[:150])
    notes = ["Notes:"] + notes if notes else []
    lines = intro + table + [""] + notes if full else intro + notes + [""] * bool(notes) + table
    return "\n".join(lines).rstrip("\n") + "\n"


def write_results(run, out_dirs, tag=None):
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", run["machine"]["gpu"]).strip("_") or "unknown_gpu"
    if tag:
        stem += "-" + re.sub(r"[^A-Za-z0-9_-]+", "_", tag)
    written = []
    for d in dict.fromkeys(pathlib.Path(p).resolve() for p in out_dirs):
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{stem}.json").write_text(json.dumps(run, indent=1) + "\n")
        (d / f"{stem}.md").write_text(markdown(run))
        written += [d / f"{stem}.json", d / f"{stem}.md"]
    return written


# --------------------------------------------------------------------- CLI ---

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", help="also write <gpu>.json and <gpu>.md here")
    p.add_argument("--only", help="cases whose name matches this regular expression")
    p.add_argument("--issue", type=int, help="cases of this issue")
    p.add_argument("--tag", help="write <gpu>-<tag>.json/.md instead of <gpu>.json/.md (a "
                   "partial run beside the full one)")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--quick", action="store_true", help="fewer repeats")
    p.add_argument("--baseline", action="store_true",
                   help="time CuPy and NumPy even where gpuarr lacks the operation")
    p.add_argument("--time-limit", type=float, default=270,
                   help="skip the cases left after this many seconds (default 270)")
    return p.parse_args(argv)


def select(args):
    return [c for c in CASES if (args.issue is None or c.issue == args.issue)
            and (args.only is None or re.search(args.only, c.name))]


def print_list(cases):
    print(f"{'case':<30} {'#':>2} {'kind':<8} {'goal':<13} {'size':<24} description")
    for c in cases:
        print(f"{c.name:<30} {c.issue:>2} {c.kind:<8} {c.goal:<13} {c.size:<24} {c.desc}")
    print(f"{len(cases)} cases")


def main(argv=None):
    args = parse_args(argv)
    cases = select(args)
    if args.list:
        print_list(cases)
        return 0
    if not cases:
        print("no case matches", file=sys.stderr)
        return 2
    started = time.perf_counter()
    sys.path.insert(0, str(REPO))
    cfg = QUICK if args.quick else Config()
    backends, missing = load_backends()
    if "gpuarr" not in backends and "cupy" not in backends:
        print(f"no GPU library can be used: gpuarr: {missing['gpuarr']}; cupy: {missing['cupy']}",
              file=sys.stderr)
        return 2
    events, measure = event_timer()
    machine = probe_machine(backends, events, measure, cfg)
    print(f"{machine.gpu}, driver {machine.driver}; events: {machine.events}; device copy rate "
          + (fmt_rate(machine.copy_rate) if machine.copy_rate else "not measured")
          + "".join(f" ({k} {fmt_rate(r)})" for k, r in machine.copy_by.items()), flush=True)
    for lib, why in missing.items():
        print(f"{lib} n/a: {why}", flush=True)
    env = Env(cfg, backends, missing, measure, machine, args.baseline)
    selection = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()
                         if k in ("only", "issue") and v is not None)
    run = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           # the commit measured, where the caller names it (a lent GPU machine
           # gets a copy of the working tree without its history)
           "commit": os.environ.get("GPUARR_COMMIT", ""),
           "machine": dataclasses.asdict(machine),
           "selection": (selection + " --quick" * args.quick + " --baseline" * args.baseline).strip(),
           "config": dataclasses.asdict(cfg), "cases": []}
    out_dirs = [RESULTS] + ([args.out] if args.out else [])
    for i, c in enumerate(cases, 1):
        t0 = time.perf_counter()
        if t0 - started > args.time_limit:
            cells = {"gpuarr": Cell("skipped", f"time limit {args.time_limit:g} s")}
        else:
            cells = run_case(c, env)
        rec = record(c, cells, machine)
        run["cases"].append(rec)
        print(f"[{i:2d}/{len(cases)}] {c.name:<30} "
              + "  ".join(f"{lib} {fmt_cell(cell, rec, both=False)}" for lib, cell in rec["cells"].items())
              + f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
        write_results(run, out_dirs, args.tag)
    written = write_results(run, out_dirs, args.tag)
    print(f"\ntotal {time.perf_counter() - started:.0f} s; wrote "
          + ", ".join(str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p) for p in written))
    print()
    print(markdown(run, full=False), end="")
    bad = [r["name"] for r in run["cases"]
           if r["cells"].get("gpuarr", {}).get("status") in ("error", "check failed")]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
