"""Running one case on every library: gpuarr first, checked against NumPy,
then CuPy and NumPy where they are wanted; and the case's record."""
import dataclasses
import re
import sys
import time
import traceback
from typing import Callable, Optional

import numpy as np

from _backends import gpuarr_lacks, not_implemented, why
from _checks import compare, to_host
from _machine import Machine
from _registry import Goal, Host
from _timing import (ChildFailed, Config, Timing, time_cpu, time_fresh, time_gpu, time_host,
                     time_transfer)

LIBS = ("gpuarr", "cupy", "numpy")


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
        return Cell("n/i" if lib == "gpuarr" else "n/a", why(exc))
    print(f"--- {case.name} on {lib}:", file=sys.stderr)
    traceback.print_exc()
    return Cell("error", why(exc))


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
