"""The benchmark registry (benchmarks/run.py) is sound: names unique, every
case names an issue and a goal the runner understands.  CPU only: the runner
imports without a GPU and without CuPy."""
import importlib.util
import pathlib
import subprocess
import sys

import pytest

RUN_PY = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("gpuarr_benchmarks_run", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def test_every_case_is_unique_and_names_an_issue_and_a_goal(bench):
    assert bench.CASES
    assert bench.check_coverage() == []


def test_coverage_check_catches_bad_cases(bench):
    good = bench.Case("a", issue=2, desc="d", size="s", goal="<= 1 ms", build=lambda xp: None)
    bad = [good,
           bench.Case("a", issue=0, desc="d", size="s", goal="fast", build=lambda xp: None),
           bench.Case("b", issue=3, desc="d", size="s", goal=">= 95% copy", build=lambda xp: None)]
    problems = bench.check_coverage(bad)
    assert any("name used twice" in p for p in problems)
    assert any("no issue number" in p for p in problems)
    assert any("goal 'fast'" in p for p in problems)
    assert any(p.startswith("b: a rate goal needs bytes") for p in problems)


def test_goals(bench):
    g = bench.Goal.parse(">= 95% copy")
    assert g.met(1.0, 2.9e12, copy_rate=3e12) and not g.met(1.0, 2.8e12, copy_rate=3e12)
    assert bench.Goal.parse("<= 20 us").met(19e-6, 0, None)
    assert not bench.Goal.parse(">= 25 GB/s").met(1.0, 24e9, None)
    assert bench.Goal.parse("<= 0.6 ms").describe() == "<= 0.6 ms"
    rel = bench.Goal.parse("<= 1x CuPy")           # gpuarr's median over CuPy's
    assert rel.is_relative and not rel.is_rate and rel.describe() == "<= 1x CuPy"
    assert rel.met(1.0, 0, None, ratio=0.9) and not rel.met(1.0, 0, None, ratio=1.1)
    assert rel.met(1.0, 0, None) is None


def test_list_runs_without_a_gpu():
    proc = subprocess.run([sys.executable, str(RUN_PY), "--list", "--issue", "2"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "h2d_32MB" in proc.stdout and "add_f32_1GiB" not in proc.stdout
