"""What every test shares.

GPU tests: the one spelling is the marker `gpu` (`@pytest.mark.gpu` on a
test, `pytestmark = pytest.mark.gpu` on a module, `marks=pytest.mark.gpu` on
a parameter); `@pytest.mark.gpu(devices=2)` marks a test that needs two
devices.  GPU tests are skipped when no device can be used, unless
GPUARR_REQUIRE_GPU=1, in which case a missing GPU ends the run with an error
(a GPU run cannot pass by skipping); tests needing more devices than the
machine has are skipped either way.

Random data: one seed per run, GPUARR_TEST_SEED (a fresh one from
os.urandom when it is unset), printed in the header, at the end of the run
and with every failure.  Each test's randomness derives from that seed and
the test's node id, so a test draws the same data whether it runs alone, in
a subset, or on any xdist worker, and a failure is replayed with

    GPUARR_TEST_SEED=<seed> python -m pytest '<node id>'

An autouse fixture seeds NumPy's global generator and gpuarr.random's global
state from the test's seed, so tests drawing from np.random.* or
gp.random.* replay too; the `rng` fixture is a NumPy Generator seeded from
it.  (Hypothesis draws its own examples and prints how to reproduce them.)

Splitting a run (tools/sanitize.sh):
  GPUARR_TEST_SHARD=k/n     every n-th test of the collection, from the k-th
                            (1 <= k <= n): n runs share the suite evenly
  GPUARR_TEST_DEADLINE=T    no test starts after the UNIX time T; the run
                            ends cleanly, reporting how far it got
  GPUARR_TEST_IDS_LOG=P     the node ids selected go to P.selected, each
                            test's as it finishes to P.done: what a run cut
                            short did not reach is the difference
The shard is not passed on to the pytest runs some tests start themselves.

Compute-sanitizer runs set GPUARR_SANITIZER to the tool (memcheck,
racecheck, initcheck, synccheck).  Tests marked
`sanitizer_skip(reason, tools=...)`, and those in SANITIZER_SKIPS below,
are skipped there: under every tool, or only under the tools named.  With
GPUARR_SANITIZER_BACKTRACE=host too, the tests that count the pool's bytes
in use (HOST_BACKTRACE_SKIPS) are skipped.

Timing tests (those SANITIZER_SKIPS lists as TIMING) are skipped on
pytest-xdist workers too: the workers' processes share the GPU by time
slices, so a test measuring microseconds measures the other workers; the
serial run (tools/gpu-check.sh) runs them."""
import fnmatch
import hashlib
import os
import time

import numpy
import pytest

import gpuarr

REQUIRE_GPU = os.environ.get("GPUARR_REQUIRE_GPU") == "1"
SANITIZER = os.environ.get("GPUARR_SANITIZER", "")
DEADLINE = os.environ.get("GPUARR_TEST_DEADLINE", "")
SHARD = os.environ.pop("GPUARR_TEST_SHARD", "")
IDS_LOG = os.environ.pop("GPUARR_TEST_IDS_LOG", "")

# Tests that cannot mean under compute-sanitizer what they mean on their
# own (node id patterns, fnmatch): a deliberate fault would be reported as
# a finding; the sanitizer serialises kernels and slows launches, so
# timings and overlap of streams are not what these tests measure.
TIMING = "times host or device work, which the sanitizer slows"
SANITIZER_SKIPS = {
    "tests/test_faults.py::test_faulting_kernel_*":
        "faults on purpose: the out-of-bounds write would be a finding",
    "tests/test_faults.py::test_fork_*": "forks a process the sanitizer instruments",
    "tests/test_select.py::test_only_data_dependent_sizes_wait_for_the_device": TIMING,
    "tests/test_runtime.py::test_events_time_a_spin_kernel_against_the_clock_rate": TIMING,
    "tests/test_runtime.py::test_events_on_a_non_blocking_stream_time_its_work": TIMING,
    "tests/test_runtime.py::test_benchmark_gpu_time_of_a_spin_kernel": TIMING,
    "tests/test_runtime.py::test_benchmark_host_overhead_per_repeat": TIMING,
    "tests/test_runtime.py::test_benchmark_fairer_comparison_and_host_only_functions": TIMING,
    "tests/test_runtime.py::test_query_is_false_while_a_spin_runs":
        "needs a launch to return while its kernel runs",
    "tests/test_runtime.py::test_wait_event_orders_two_streams":
        "needs kernels of two streams to overlap; the sanitizer serialises them",
    "tests/test_main.py::test_self_check_without_gpu":
        "its child hides the GPU, and under the sanitizer (which instruments child processes "
        "too) the child did not exit 0; the normal suite runs it",
    "tests/test_main.py::test_cpu_half_without_a_gpu":
        "its child hides the GPU, and under the sanitizer (which instruments child processes "
        "too) the child still ran the GPU half (sweep at eeda51f)",
}


def _run_seed_from_environment():
    text = os.environ.get("GPUARR_TEST_SEED", "").strip()
    if not text:
        return int.from_bytes(os.urandom(4), "little"), False
    try:
        seed = int(text, 0)
    except ValueError:
        seed = -1
    if seed < 0:
        raise pytest.UsageError(f"GPUARR_TEST_SEED must be a non-negative integer, not {text!r}")
    return seed, True


def _shard(text):
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        k = n = 0
    if not 1 <= k <= n:
        raise pytest.UsageError(f"GPUARR_TEST_SHARD must be k/n with 1 <= k <= n, not {text!r}")
    return k, n


def pytest_configure(config):
    worker = getattr(config, "workerinput", None)    # an xdist worker: the controller's values
    if worker is not None and "gpuarr_test_seed" in worker:
        config.gpuarr_test_seed = worker["gpuarr_test_seed"], worker["gpuarr_seed_given"]
        config.gpuarr_shard = worker["gpuarr_shard"]
    else:
        config.gpuarr_test_seed = _run_seed_from_environment()
        config.gpuarr_shard = _shard(SHARD) if SHARD else None
    config.addinivalue_line(
        "markers", "sanitizer_skip(reason, tools=(...)): skipped under compute-sanitizer "
        "(GPUARR_SANITIZER=<tool>), under every tool or those named")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist: every worker draws from the controller's seed and
    collects the same shard."""
    node.workerinput["gpuarr_test_seed"], node.workerinput["gpuarr_seed_given"] = \
        node.config.gpuarr_test_seed
    node.workerinput["gpuarr_shard"] = node.config.gpuarr_shard


def pytest_report_header(config):
    seed, given = config.gpuarr_test_seed
    how = "from the environment" if given else "fresh"
    lines = [f"random data: GPUARR_TEST_SEED={seed} ({how}; set it to replay this run's draws)"]
    if config.gpuarr_shard:
        lines.append("shard: GPUARR_TEST_SHARD=%d/%d" % config.gpuarr_shard)
    if SANITIZER:
        lines.append(f"under compute-sanitizer: GPUARR_SANITIZER={SANITIZER}")
    return lines


def seed_of_test(run_seed, nodeid):
    """A test's 64-bit seed: the run's seed mixed with its node id."""
    digest = hashlib.blake2b(nodeid.encode(), digest_size=8).digest()
    words = numpy.random.SeedSequence([run_seed, int.from_bytes(digest, "little")])
    lo, hi = words.generate_state(2, numpy.uint32)
    return int(lo) | int(hi) << 32


# Tests that count the pool's bytes in use, skipped under host backtraces
# (GPUARR_SANITIZER_BACKTRACE=host, set by tools/sanitize.sh): the sanitizer
# then keeps the Python frames of the backtraces it records, and with them
# arrays that are otherwise gone (tests/test_fft.py + test_sorting.py ended
# with 810 MB in use under memcheck and host backtraces, 0 without the
# sanitizer: sweep at eeda51f), so "nothing kept" cannot hold there.
HOST_BACKTRACE_SKIPS = {
    "tests/test_faults.py::test_every_allocation_failing_in_turn*":
        "counts the pool's bytes kept after each injected fault",
    "tests/test_stress.py::test_threads_share_the_device_and_the_pool":
        "checks that the pool is back to its baseline",
}
# as tools/sanitize.sh reads --show-backtrace: all but device (and no) record host frames
HOST_BACKTRACES = os.environ.get("GPUARR_SANITIZER_BACKTRACE", "device") not in ("device", "no")


def _sanitizer_skip_reason(item):
    if HOST_BACKTRACES:
        for pattern, reason in HOST_BACKTRACE_SKIPS.items():
            if fnmatch.fnmatchcase(item.nodeid, pattern):
                return f"{reason}; host backtraces keep arrays alive"
    for mark in item.iter_markers("sanitizer_skip"):
        if SANITIZER in mark.kwargs.get("tools", (SANITIZER,)):
            return mark.kwargs.get("reason") or (mark.args[0] if mark.args else "marked")
    for pattern, reason in SANITIZER_SKIPS.items():
        if fnmatch.fnmatchcase(item.nodeid, pattern):
            return reason
    return None


def _devices_needed(item):
    """How many devices a test marked `gpu` needs (0 for a CPU test)."""
    return max((mark.kwargs.get("devices", 1) for mark in item.iter_markers("gpu")), default=0)


def pytest_collection_modifyitems(config, items):
    if config.gpuarr_shard:
        k, n = config.gpuarr_shard
        config.hook.pytest_deselected(items=[t for i, t in enumerate(items) if i % n != k - 1])
        items[:] = items[k - 1::n]
    if SANITIZER:
        for item in items:
            reason = _sanitizer_skip_reason(item)
            if reason is not None:
                item.add_marker(pytest.mark.skip(reason=f"under {SANITIZER}: {reason}"))
    elif hasattr(config, "workerinput"):
        for item in items:
            if any(fnmatch.fnmatchcase(item.nodeid, pattern) and reason == TIMING
                   for pattern, reason in SANITIZER_SKIPS.items()):
                item.add_marker(pytest.mark.skip(reason="on an xdist worker: the other "
                                                        "workers share the GPU's time"))
    if gpuarr.is_available():
        count = gpuarr.cuda.get_device_count()
        for item in items:
            needed = _devices_needed(item)
            if needed > count:
                item.add_marker(pytest.mark.skip(reason=f"needs {needed} GPUs"))
        return
    if REQUIRE_GPU:
        try:
            gpuarr.zeros(1)
        except Exception as exc:  # the reason, as the user would see it
            reason = f"{type(exc).__name__}: {exc}"
        else:
            reason = "is_available() is False"
        pytest.exit(f"GPUARR_REQUIRE_GPU=1 but no GPU can be used ({reason})", returncode=3)
    skip = pytest.mark.skip(reason="no CUDA device (set GPUARR_REQUIRE_GPU=1 to make this an error)")
    for item in items:
        if _devices_needed(item):
            item.add_marker(skip)


def pytest_collection_finish(session):
    if IDS_LOG:
        with open(IDS_LOG + ".selected", "w", encoding="utf-8") as f:
            f.writelines(item.nodeid + "\n" for item in session.items)


def pytest_runtest_logfinish(nodeid, location):
    if IDS_LOG:
        with open(IDS_LOG + ".done", "a", encoding="utf-8") as f:
            f.write(nodeid + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    yield
    if DEADLINE and time.time() > float(DEADLINE) and not item.session.shouldstop:
        item.session.shouldstop = f"GPUARR_TEST_DEADLINE passed after {item.nodeid}"


@pytest.fixture(autouse=True)
def seeded(request):
    """The test's seed; NumPy's global generator and gpuarr.random's global
    state start from it."""
    seed = seed_of_test(request.config.gpuarr_test_seed[0], request.node.nodeid)
    numpy.random.seed(numpy.random.SeedSequence([seed, 1]).generate_state(4))
    gpuarr.random.seed([seed, 2])
    return seed


@pytest.fixture
def rng(request, seeded):
    """A NumPy Generator seeded from the test's seed (the module's docstring
    says how to replay a failure)."""
    print(f"random seed: {seeded} (GPUARR_TEST_SEED={request.config.gpuarr_test_seed[0]})")
    return numpy.random.default_rng(seeded)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        seed = item.config.gpuarr_test_seed[0]
        report.sections.append((
            "random data", f"GPUARR_TEST_SEED={seed} (this test's seed "
            f"{seed_of_test(seed, item.nodeid)}); replay: GPUARR_TEST_SEED={seed} "
            f"python -m pytest '{item.nodeid}'"))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    terminalreporter.write_line(
        f"random data of this run: GPUARR_TEST_SEED={config.gpuarr_test_seed[0]}")


@pytest.fixture
def private_kernel_cache(tmp_path, monkeypatch):
    """User kernels compile into a fresh kernel cache of the test's own."""
    monkeypatch.setenv("GPUARR_CACHE_DIR", str(tmp_path / "kernels"))
    return tmp_path / "kernels"


def _have_nvrtc():
    from gpuarr.cuda import compiler
    try:
        compiler.find_nvrtc()
        return True
    except compiler.NVRTCError:
        return False


requires_nvrtc = pytest.mark.skipif(not _have_nvrtc(), reason="NVRTC is not installed here")


def pytest_sessionfinish(session, exitstatus):
    """Give back the device memory that the other libraries the interop
    tests use keep cached after their arrays are gone: CuPy's pools,
    PyTorch's caching allocator.  compute-sanitizer's leak check counts what
    is allocated at exit, and at b46a402 its only 'leaks' were these (2 MiB
    and 512 B) and Numba's own arrays (16 + 8 B, which numba-cuda never
    freed: its test now gives Numba gpuarr memory only), one process per
    interop test."""
    import sys
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
