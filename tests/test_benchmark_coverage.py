"""The benchmark registry (benchmarks/run.py) is sound: names unique, every
case names an issue and a goal the runner understands, and every operation
the lesson uses has a row (or a reason in NO_ROW).  CPU only: the runner
imports without a GPU and without CuPy."""
import importlib.util
import pathlib
import subprocess
import sys

import pytest

from _lesson import LESSON_OPERATIONS

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


# Operations of the lesson with no benchmark row of their own, and why.
NO_ROW = {
    "allclose": "the lesson's check of a result, not a step it times",
    "ndarray.mean": "printed once by the statistics cell; std_4M times the same pass",
    "amax": "printed once by the statistics cell; sum_f32_1GiB times the reduction",
}


def missing_rows(cases, operations, no_row):
    """What keeps `cases` from covering `operations` (dotted gpuarr names,
    matched against each case's requires), given the excuses in no_row."""
    covered = {name for c in cases for name in c.requires}
    problems = [f"{op}: no benchmark row requires it, and NO_ROW gives no reason"
                for op in operations if op not in covered and op not in no_row]
    problems += [f"{op}: excused in NO_ROW, yet a row requires it" for op in no_row if op in covered]
    problems += [f"{op}: excused in NO_ROW, yet the lesson does not use it"
                 for op in no_row if op not in operations]
    return problems


def test_every_lesson_operation_has_a_benchmark_row(bench):
    import gpuarr
    assert bench.gpuarr_lacks(gpuarr, LESSON_OPERATIONS) is None
    assert missing_rows(bench.CASES, LESSON_OPERATIONS, NO_ROW) == []


def test_row_check_catches_a_missing_row_and_stale_excuses(bench):
    median = bench.Case("m", issue=4, desc="d", size="s", goal="<= 1 ms", requires=("median",))
    problems = missing_rows([median], ("median", "std", "amax"), {"median": "r", "sort": "r"})
    assert problems == ["std: no benchmark row requires it, and NO_ROW gives no reason",
                        "amax: no benchmark row requires it, and NO_ROW gives no reason",
                        "median: excused in NO_ROW, yet a row requires it",
                        "sort: excused in NO_ROW, yet the lesson does not use it"]


def test_the_probes_find_the_cases_inputs(monkeypatch):
    """tools/probe_label.py and probe_measure.py time the cases' own inputs
    through probe_measure.bench_inputs(): each name they read exists there
    (they read benchmarks/run.py's until its inputs moved to _inputs.py)."""
    import _repo
    monkeypatch.syspath_prepend(str(pathlib.Path(_repo.REPO) / "tools"))
    probe = _repo.load_script("gpuarr_probe_measure", "tools", "probe_measure.py")
    inputs = probe.bench_inputs()
    for name in ("sky", "segmented", "labelled"):
        assert callable(getattr(inputs, name)), name
