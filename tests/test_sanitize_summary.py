"""tools/sanitize_summary.py (no GPU needed): compute-sanitizer's reports
in the forms its versions print, attributed to kernels; summaries; shards
of several device calls added up into one markdown table."""
import pytest

from _repo import load_script


@pytest.fixture(scope="module")
def summary():
    return load_script("sanitize_summary", "tools", "sanitize_summary.py")


@pytest.mark.parametrize("location, name", [
    ("0x000001a0 in kernel_function(float*, int)", "kernel_function"),
    ("0x120 in unsafe.cu:17:oob_kernel(float*)", "oob_kernel"),
    ("/home/u/vector.cu:9:KrnlDmmy(int*)", "KrnlDmmy"),
    ("k_label_local+0x140", "k_label_local"),
    ("k_label_local(int *, int)+0x140 in label.cu:88", "k_label_local"),
    ("void ga_reduce<float, (int)256>(const float *, float *)+0x50",
     "ga_reduce<float, (int)256>"),
    ("race.cu:21:race_kernel(float*)", "race_kernel"),
])
def test_kernel_names(summary, location, name):
    assert summary.kernel_name(location) == name


MEMCHECK = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at k_scatter(float *, const long *, long)+0x1b0
=========     by thread (31,0,0) in block (1,0,0)
=========     Address 0x7f3c89200800 is out of bounds
=========     and is 4 bytes after the nearest allocation at 0x7f3c89200000 of size 2048 bytes
=========
========= Invalid __global__ write of size 4 bytes
=========     at 0x000001a0 in k_scatter(float*, long const*, long)
=========     by thread (32,0,0) in block (1,0,0)
=========
========= Program hit cudaErrorMemoryAllocation (error 2) due to "out of memory" on CUDA API \
call to cudaMalloc.
=========     Saved host backtrace up to driver entry point at error
=========     Host Frame: [0x333] in libcuda.so.1
=========
========= Leaked 512 bytes at 0x7f0000000000
=========
========= LEAK SUMMARY: 512 bytes leaked in 1 allocations
========= ERROR SUMMARY: 4 errors
"""

RACECHECK_ANALYSIS = """\
========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at k_label_local+0x140
=========     and Read access at k_label_local+0xe0 [4 hazards]
=========     and Write access at k_label_local+0x140 [5 hazards]
=========
========= Warning: Race reported between Read access at k_label_local(int*)+0x90 in label.cu:40
=========     and Write access at k_label_local+0x140 [1 hazard]
=========
========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
"""

RACECHECK_HAZARD = """\
========= COMPUTE-SANITIZER
========= ERROR: Potential WAW hazard detected at __shared__ 0x0 in block (0,0,0) :
=========     Write Thread (0,0,0) at 0x000000b0 in /src/kernels/label.cu:12:k_flatten(int*)
=========     Write Thread (1,0,0) at 0x000000b0 in /src/kernels/label.cu:12:k_flatten(int*)
=========     Current Value : 0, Incoming Value : 1
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""

INITCHECK = """\
========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 8 bytes
=========     at void k_sum<double>(const double *, double *, long)+0x70
=========     by thread (0,0,0) in block (0,0,0)
=========
========= ERROR SUMMARY: 1 error
"""

SYNCCHECK = """\
========= COMPUTE-SANITIZER
========= Barrier error detected. Divergent thread(s) in warp
=========     at k_scan+0x2f0 in scan.cu:101
=========     by thread (1,0,0) in block (0,0,0)
=========
========= ERROR SUMMARY: 1 error
"""


def test_memcheck_reports(summary):
    reports, totals = summary.parse_log(MEMCHECK)
    kinds = [(r[0], r[2]) for r in reports]
    assert kinds == [("Invalid __global__ write of size N bytes", "k_scatter"),
                     ("Invalid __global__ write of size N bytes", "k_scatter"),
                     ("API error", "cudaMalloc: cudaErrorMemoryAllocation"),
                     ("leak", "(device allocation)")]
    assert totals == {"errors": 4, "leaked_bytes": 512, "leaked_allocations": 1}


def test_racecheck_reports_both_forms(summary):
    reports, totals = summary.parse_log(RACECHECK_ANALYSIS)
    assert [(r[0], r[1], r[2], r[4]) for r in reports] == [
        ("race", "error", "k_label_local", 9), ("race", "warning", "k_label_local", 1)]
    assert totals == {"hazards": 2, "errors": 1, "warnings": 1}
    reports, totals = summary.parse_log(RACECHECK_HAZARD)
    assert [(r[0], r[1], r[2]) for r in reports] == [("Potential WAW hazard detected", "error",
                                                      "k_flatten")]
    assert totals == {"hazards": 1, "errors": 1, "warnings": 0}


def test_initcheck_and_synccheck_reports(summary):
    reports, totals = summary.parse_log(INITCHECK)
    assert [(r[0], r[2]) for r in reports] == [("Uninitialized __global__ memory read", "k_sum<double>")]
    assert totals == {"errors": 1}
    reports, totals = summary.parse_log(SYNCCHECK)
    assert [(r[0], r[2]) for r in reports] == [("Barrier error detected. Divergent thread", "k_scan")]
    assert totals == {"errors": 1}


def test_clean_log(summary):
    assert summary.parse_log("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n") \
        == ([], {"errors": 0})
    assert summary.parse_log("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, "
                             "0 warnings)\n") == ([], {"hazards": 0, "errors": 0, "warnings": 0})


def write_shard(root, tool, k, n, logs, started="2026-11-26T10:00:00", pytest_line=None,
                selected=None, done=(), **meta):
    d = root / "sanitize" / tool / f"shard-{k}-of-{n}"
    d.mkdir(parents=True)
    if selected is not None:      # what tests/conftest.py writes under GPUARR_TEST_IDS_LOG
        (d / "ids.selected").write_text("".join(f"{i}\n" for i in selected))
        (d / "ids.done").write_text("".join(f"{i}\n" for i in done))
    fields = dict(tool=tool, shard=f"{k}/{n}", rc=0, seconds=100, started=started, timed_out=0,
                  gpu="NVIDIA H100 80GB HBM3", commit="abc1234", seed=7)
    fields.update(meta)
    (d / "meta.txt").write_text("".join(f"{key}={value}\n" for key, value in fields.items()))
    (d / "pytest.log").write_text((pytest_line or "10 passed, 2 skipped, 30 deselected in 90.00s")
                                  + "\n")
    for pid, text in logs.items():
        (d / f"sanitizer-{pid}.log").write_text(text)


def test_shards_of_several_calls_add_up(summary, tmp_path):
    call1, call2 = tmp_path / "call1", tmp_path / "call2"
    write_shard(call1, "memcheck", 1, 2, {100: MEMCHECK, 101: "========= COMPUTE-SANITIZER\n"
                "========= Error: Target application terminated before first instrumented "
                "API call\n"})
    write_shard(call2, "memcheck", 2, 2, {200: "========= Invalid __global__ read of size 4 "
                                               "bytes\n=========     at k_take+0x10\n"},
                pytest_line="!!! Interrupted: GPUARR_TEST_DEADLINE passed after t !!!", timed_out=1)
    write_shard(call1, "racecheck", 1, 1, {300: RACECHECK_ANALYSIS})
    write_shard(call2, "racecheck", 1, 1, {301: RACECHECK_HAZARD}, started="2026-11-26T11:00:00")
    tools = summary.collect([str(call1), str(call2)])
    assert sorted(tools) == ["memcheck", "racecheck"]
    assert sorted(tools["memcheck"]) == [(1, 2, ""), (2, 2, "")]
    assert list(tools["racecheck"]) == [(1, 1, "")]
    assert tools["racecheck"][(1, 1, "")]["processes"][0][0] == "sanitizer-301.log"  # the later
    text = summary.markdown(tools)
    assert "| memcheck | 2 of 2 | 4 | 3 |  | 512 B in 1 | 1 | 2 |" in text
    assert "| racecheck | 1 of 1 |  | 1 | 1 (1, 0) |  | 0 | 0 |" in text
    assert "| `k_scatter` | Invalid __global__ write of size N bytes | error | 2 |  |" in text
    assert "| `k_take` | Invalid __global__ read of size N bytes | error | 1 |  |" in text
    assert "| `k_flatten` | Potential WAW hazard detected | error | 1 |  |" in text
    assert "| `(device allocation)` | leak | error | 1 |  | 512 bytes |" in text
    assert "(stopped at the deadline)" in text and "(killed at the time limit)" in text
    assert "cut short): 2/2 sanitizer-200.log" in text
    out = tmp_path / "summary.md"
    assert summary.main([str(call1), str(call2), "--out", str(out)]) == 0
    assert out.read_text() == text


def test_tests_no_call_finished_are_listed_for_the_next(summary, tmp_path):
    """A test counts as run when any call finished it: call 2 ran call 1's
    unreached tests by name (-- @FILE), finishing all but one."""
    clean = {1: "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"}
    call1, call2 = tmp_path / "call1", tmp_path / "call2"
    write_shard(call1, "racecheck", 1, 2, clean, selected="abcd", done="ab", timed_out=1)
    write_shard(call1, "racecheck", 2, 2, clean, selected="ef", done="ef")
    write_shard(call2, "racecheck", 1, 1, clean, selected="cd", done="c",
                pytest_args="@unreached.txt", started="2026-11-26T11:00:00")
    write_shard(call2, "synccheck", 1, 1, {1: "========= ERROR SUMMARY: 0 errors\n"})
    tools = summary.collect([str(call1), str(call2)])
    assert sorted(tools["racecheck"]) == [(1, 1, "@unreached.txt"), (1, 2, ""), (2, 2, "")]
    assert summary.unreached(tools["racecheck"]) == ["d"]
    text = summary.markdown(tools)
    assert "| racecheck | 2 of 2, 1 of 1 (named tests) |" in text
    assert "racecheck: 1 of the 6 tests the shards selected did not finish in any call." in text
    assert "synccheck: " not in text               # its shard logged no ids
    assert "| 1/1 (named tests) |" in text
    out = tmp_path / "summary.md"
    assert summary.main([str(call1), str(call2), "--out", str(out)]) == 0
    assert (tmp_path / "summary-unreached-racecheck.txt").read_text() == "d\n"
    assert not (tmp_path / "summary-unreached-synccheck.txt").exists()
