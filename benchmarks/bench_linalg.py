#!/usr/bin/env python3
"""Benchmarks of gpuarr.linalg (issue 24), side by side with CuPy, on the
runner of benchmarks/run.py (its registry, CUDA-event timing, checks and
result files):

    python3 benchmarks/bench_linalg.py              # the issue-24 cases
    python3 benchmarks/bench_linalg.py --list       # needs no GPU
    python3 benchmarks/bench_linalg.py --only svd --quick

Each case is one 4096 x 4096 float64 problem: solve (LU and one
right-hand side), svd (full U and Vh) and eigh (eigenvalues and vectors).
The goal is CuPy's time or better.  GPU figures are CUDA events on the
legacy default stream around one call, median and min of at least three
runs after two warm-up calls (more where they fit in run.py's budget); the
decompositions take seconds, so this script allows 900 s.

solve is checked against NumPy's result; svd and eigh, whose factors are
unique only up to signs, by their invariants on the host: U diag(S) Vh
and V diag(w) Vᵀ rebuild the matrix, the factors are orthonormal, S
descends and w ascends.  Results go to benchmarks/results/<gpu>-linalg.json
and .md (another --tag writes elsewhere; run.py's own results are left
alone).
"""
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

N = 4096
SIZE = f"{N}^2 f64"
ISSUE = 24


@functools.lru_cache(maxsize=None)
def _general():
    """A well-conditioned general matrix: uniform entries plus N on the diagonal."""
    rng = np.random.default_rng(24)
    return rng.random((N, N)) + N * np.eye(N)


@functools.lru_cache(maxsize=None)
def _symmetric():
    rng = np.random.default_rng(25)
    r = rng.standard_normal((N, N))
    return (r + r.T) / 2


def _orthonormal(q, rows):
    """||QᴴQ - I|| (columns) or ||QQᴴ - I|| (rows), relative to sqrt(N)."""
    g = q @ q.conj().T if rows else q.conj().T @ q
    return np.linalg.norm(g - np.eye(g.shape[0])) / np.sqrt(g.shape[0])


def check_svd(got, _ref):
    u, s, vh = got
    a = _general()
    if u.shape != (N, N) or s.shape != (N,) or vh.shape != (N, N):
        return f"shapes {u.shape}, {s.shape}, {vh.shape}"
    if np.any(np.diff(s) > 0):
        return "S is not descending"
    err = np.linalg.norm((u * s) @ vh - a) / np.linalg.norm(a)
    if err > 1e-11:
        return f"||U S Vh - A|| / ||A|| = {err:.3g}"
    worst = max(_orthonormal(u, False), _orthonormal(vh, True))
    if worst > 1e-11:
        return f"U or Vh is not orthonormal ({worst:.3g})"
    return None


def check_eigh(got, _ref):
    w, v = got
    a = _symmetric()
    if w.shape != (N,) or v.shape != (N, N):
        return f"shapes {w.shape}, {v.shape}"
    if np.any(np.diff(w) < 0):
        return "eigenvalues are not ascending"
    err = np.linalg.norm(a @ v - v * w) / np.linalg.norm(a)
    if err > 1e-11:
        return f"||A V - V diag(w)|| / ||A|| = {err:.3g}"
    if _orthonormal(v, False) > 1e-11:
        return "V is not orthonormal"
    return None


@run.case("linalg_solve_4096_f64", issue=ISSUE, desc="linalg.solve(a, b), b one vector; goal: "
          "not slower than CuPy", size=SIZE, goal="<= 1x CuPy", flops=2 / 3 * N ** 3,
          tol=(1e-9, 1e-12), requires=("linalg.solve",),
          setup=lambda: (_general(), np.random.default_rng(26).random(N)))
def linalg_solve(xp, a, b):
    return lambda: xp.linalg.solve(a, b)


def decomposition(name):
    """The build function of a case: xp.linalg.<name>(a)."""
    def build(xp, a):
        fn = getattr(xp.linalg, name)
        return lambda: fn(a)
    return build


# (name, what it computes, flops in LAPACK's counts, matrix, check)
for _name, _what, _flops, _matrix, _check in (
        ("svd", "full U, Vh", 22 * N ** 3, _general, check_svd),
        ("eigh", "values and vectors", 9 * N ** 3, _symmetric, check_eigh)):
    run.case(f"linalg_{_name}_4096_f64", issue=ISSUE, desc=f"linalg.{_name}(a) ({_what}); "
             "goal: not slower than CuPy", size=SIZE, goal="<= 1x CuPy", flops=_flops,
             reference=False, check=_check, requires=(f"linalg.{_name}",),
             setup=lambda m=_matrix: (m(),))(decomposition(_name))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--issue" not in argv:
        argv += ["--issue", str(ISSUE)]
    if "--tag" not in argv:
        argv += ["--tag", "linalg"]
    if "--time-limit" not in argv:
        argv += ["--time-limit", "900"]
    return run.main(argv)


if __name__ == "__main__":
    sys.exit(main())
