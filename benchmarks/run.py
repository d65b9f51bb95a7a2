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

The runner's pieces, each in a module of this folder named for what it holds:
  _registry.py  a case, its goal, the registry's checks
  _cases_*.py   the cases, a module per issue (or pair of issues)
  _inputs.py    the lesson's sizes and images;  _checks.py  the checks against NumPy
  _backends.py  the libraries under test;  _timing.py  how each kind is timed
  _machine.py   the machine and the floors' rates;  _runner.py  one case on every library
  _report.py    Markdown and JSON;  _format.py  numbers in words
tests/_lesson.py holds the lesson's clipper, which the tests and tools/ share.

Adding a case: write its build function in its issue's _cases_*.py, decorated
with @case(...) (or call fresh_case(...)); a new module goes into CASES below.
tests/test_benchmark_coverage.py checks that names are unique, that every case
names an issue and a goal, and that every operation the lesson uses has a case.
"""
import argparse
import dataclasses
import datetime
import os
import pathlib
import re
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))                  # the runner's modules
if str(HERE.parent / "tests") not in sys.path:
    sys.path.append(str(HERE.parent / "tests"))    # _lesson: the lesson's code, shared

# The names below are run.py's interface: bench_matmul.py, bench_linalg.py,
# the tests and tools/ use them.
import _cases_convolution  # noqa: E402
import _cases_elementwise  # noqa: E402
import _cases_fft  # noqa: E402
import _cases_foundation  # noqa: E402
import _cases_labels  # noqa: E402
import _cases_reductions  # noqa: E402
import _cases_user_kernels  # noqa: E402
from _backends import gpuarr_lacks, load_backends  # noqa: E402,F401
from _checks import EXACT  # noqa: E402,F401
from _format import fmt_rate  # noqa: E402
from _inputs import host_random, labelled, sky  # noqa: E402,F401
from _machine import probe_machine  # noqa: E402
from _registry import Case, Goal, Registry  # noqa: E402,F401
from _report import fmt_cell, markdown, write_results  # noqa: E402
from _runner import Cell, Env, record, run_case  # noqa: E402
from _timing import QUICK, REPO, Config, event_timer, time_gpu  # noqa: E402,F401

RESULTS = REPO / "benchmarks" / "results"

# Every case in the order it runs: a fresh list each time this file is
# loaded, which bench_matmul.py and bench_linalg.py add their own cases to.
CASES = Registry([*_cases_foundation.CASES, *_cases_elementwise.CASES, *_cases_reductions.CASES,
                  *_cases_convolution.CASES, *_cases_labels.CASES, *_cases_user_kernels.CASES,
                  *_cases_fft.CASES])
case, fresh_case, check_coverage = CASES.case, CASES.fresh_case, CASES.check_coverage


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
