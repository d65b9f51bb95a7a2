"""Failures in the middle of an operation (issue 20).

Injected allocation failures: gpuarr.cuda._fail_allocation(n) makes the
n-th device allocation from then on fail as if the device were out of
memory.  For each operation below and every n up to the number of
allocations it makes, the call must raise OutOfMemoryError, leak nothing
(the pool's used bytes back where they were), leave its out= array (or
the array it writes in place) as it was, and leave gpuarr working: the
same call then gives the same answer.  The loop stops at the first n the
call gets through without using up the hook, so a call that swallowed a
failed allocation fails the test.  Each test prints how many faults it
injected; the module's total is written at its end.

Then what cannot be tested in this process: a fork after CUDA was
initialised, multiprocessing with spawn, and a kernel that faults (which
leaves the CUDA context unusable), each in a fresh interpreter with a
timeout, so a hang fails the test instead of stopping the suite.
"""
import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gpuarr as gp
from gpuarr import cuda
from conftest import requires_nvrtc

pytestmark = pytest.mark.gpu

MAX_ALLOCATIONS = 200       # more than any operation here makes
INJECTED = {}               # operation -> faults injected, for the summary


@pytest.fixture(scope="module", autouse=True)
def summary(request):
    yield
    if INJECTED:
        line = (f"test_faults: {sum(INJECTED.values())} injected allocation faults over "
                f"{len(INJECTED)} operations")
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(line)
        else:
            print(line)


# --------------------------------------------------------------- helpers --

def host(r):
    """A result as host values (device arrays read back, containers kept)."""
    if isinstance(r, gp.ndarray):
        return r.get()
    if isinstance(r, gp.stats.ClippedArray):
        return (r.data.get(), r.mask.get())
    if isinstance(r, (tuple, list)):
        return type(r)(host(x) for x in r)
    return r


def assert_same(got, want, where):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), where
        for g, w in zip(got, want):
            assert_same(g, w, where)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, where
    if want.dtype.kind in "fc":
        # float sums may add in another order from one run to the next
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-12, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def pattern_for(target, rng):
    """Host values for `target` (an out= array, or an array written in
    place) that the operation's answer is unlikely to match anywhere."""
    if target.dtype.kind == "c":
        v = rng.standard_normal(target.shape) + 1j * rng.standard_normal(target.shape)
    elif target.dtype.kind == "f":
        v = rng.standard_normal(target.shape) * 1e3
    else:
        v = rng.integers(-50, 50, target.shape)
    return np.ascontiguousarray(v.astype(target.dtype))


def used_after(pool, baseline):
    """The pool's used bytes, after collecting garbage cycles when they
    differ from `baseline` (a failed call's traceback may hold temporaries
    in a cycle: that is not a leak)."""
    used = pool.used_bytes()
    if used != baseline:
        gc.collect()
        used = pool.used_bytes()
    return used


def inject(name, op, target, rng):
    """Fail each allocation of op() in turn; see the module docstring.
    Returns the number of faults injected."""
    pool = gp.get_default_memory_pool()
    pattern = None if target is None else pattern_for(target, rng)
    if target is not None:
        target.set(pattern)
    want = host(op())               # warm-up (caches, plans) and the answer
    gc.collect()
    gc.disable()                    # no collection of older garbage mid-count
    try:
        for n in range(1, MAX_ALLOCATIONS + 1):
            faults = n - 1
            where = f"{name}, allocation {n}"
            if target is not None:
                target.set(pattern)
            used = pool.used_bytes()
            message = None
            cuda._fail_allocation(n)
            try:
                result = op()
            except cuda.OutOfMemoryError as exc:
                message = str(exc)
            finally:
                left = cuda._fail_allocation(None)
            if message is None:
                # fewer than n allocations, or the call swallowed the failure
                assert left > 0, f"{where}: the allocation failed but the call succeeded"
                assert_same(host(result), want, where)
                del result
                kept = used_after(pool, used) - used
                assert kept == 0, f"{where}: {kept} bytes kept after a successful call"
                assert faults > 0, f"{name} made no device allocation: nothing was tested"
                INJECTED[name] = faults
                print(f"{name}: {faults} allocations, each failed once")
                return faults
            assert left == 0 and "_fail_allocation" in message, f"{where}: {message}"
            leaked = used_after(pool, used) - used
            assert leaked == 0, f"{where}: {leaked} bytes leaked"
            if target is not None:
                np.testing.assert_array_equal(target.get(), pattern,
                                              err_msg=f"{where}: the array written was changed")
            assert_same(host(op()), want, f"{where}, the call after the failure")
    finally:
        gc.enable()
    pytest.fail(f"{name}: more than {MAX_ALLOCATIONS} allocations")


# ------------------------------------------------------------- operations --
# Each builds its data and returns (op, target): target is the out= array or
# the array the operation writes in place (None when it writes none).

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def floats(rng, shape, dtype=np.float32):
    return gp.asarray(rng.standard_normal(shape).astype(dtype))


@case
def add_mixed_dtypes_out(rng):
    a, b = floats(rng, (64, 48)), floats(rng, (64, 48), np.float64)
    out = gp.empty((64, 48), np.float32)
    return (lambda: gp.add(a, b, out=out)), out


@case
def operators(rng):
    a, b = floats(rng, (64, 48)), floats(rng, (48,), np.float64)
    return (lambda: (a * 2.5 + b) / (b * b + 1)), None


@case
def inplace_operator(rng):
    a = gp.empty((64, 48), np.float32)
    b = floats(rng, (64, 48), np.float64)

    def op():
        a.__iadd__(b)               # float64 into float32: cast through a temporary
        return a
    return op, a


@case
def ufunc_where_out(rng):
    a = floats(rng, (64, 48), np.float64)
    mask = a > 0
    out = gp.empty((64, 48), np.float32)
    return (lambda: gp.sin(a, out=out, where=mask)), out


@case
def clip_out(rng):
    a = floats(rng, (64, 48))
    out = gp.empty((64, 48), np.float64)
    return (lambda: gp.clip(a, -0.5, 0.5, out=out)), out


@case
def astype(rng):
    a = floats(rng, (64, 48))
    return (lambda: a.astype(np.float64)), None


@case
def copy_strided(rng):
    a = floats(rng, (64, 48))
    return (lambda: a[::2, ::-1].copy()), None


@case
def reshape_copy(rng):
    a = floats(rng, (64, 48))
    return (lambda: a.T.reshape(-1)), None


@case
def setitem_from_host(rng):
    a = gp.empty((64, 48), np.float32)
    h = rng.standard_normal((10, 48))                     # float64: converted on the way

    def op():
        a[5:15] = h
        return a
    return op, a


@case
def sum_axis_out(rng):
    a = floats(rng, (64, 48), np.float64)
    out = gp.empty(48, np.float32)
    return (lambda: a.sum(axis=0, out=out)), out


@case
def sum_large(rng):
    a = floats(rng, (1 << 22,))                            # split: a partials block
    return (lambda: gp.sum(a)), None


@case
def mean_axis(rng):
    a = floats(rng, (64, 48))
    return (lambda: a.mean(axis=1)), None


@case
def integer_mean_out(rng):
    a = gp.asarray(rng.integers(-100, 100, (64, 48)).astype(np.int16))
    out = gp.empty(48, np.int16)
    return (lambda: a.mean(axis=0, dtype=np.int16, out=out)), out


@case
def std_axis(rng):
    a = floats(rng, (64, 48))
    return (lambda: a.std(axis=0, ddof=1)), None


@case
def var_integer_out(rng):
    a = gp.asarray(rng.integers(-100, 100, (64, 48)).astype(np.int32))
    out = gp.empty(64, np.int64)
    return (lambda: gp.var(a, axis=1, dtype=np.int64, out=out)), out


@case
def min_axis(rng):
    a = floats(rng, (64, 48))
    return (lambda: a.min(axis=1)), None


@case
def max_keepdims(rng):
    a = floats(rng, (64, 48))
    return (lambda: a.max(axis=0, keepdims=True)), None


@case
def argmax_axis(rng):
    a = floats(rng, (64, 48))
    return (lambda: a.argmax(axis=0)), None


@case
def nanmax_out(rng):
    h = rng.standard_normal((64, 48)).astype(np.float32)
    h[rng.random((64, 48)) < 0.1] = np.nan
    a = gp.asarray(h)
    out = gp.empty(64, np.float32)
    return (lambda: gp.nanmax(a, axis=1, out=out)), out


@case
def where3(rng):
    a, b = floats(rng, (64, 48)), floats(rng, (64, 48), np.float64)
    return (lambda: gp.where(a > 0, a, b)), None


@case
def boolean_index(rng):
    a = floats(rng, (64, 48))
    return (lambda: a[a > 0.5]), None


@case
def compress_axis(rng):
    a = floats(rng, (64, 48))
    cond = gp.asarray(rng.random(64) < 0.5)
    return (lambda: gp.compress(cond, a, axis=0)), None


@case
def fancy_get(rng):
    a = floats(rng, (64, 48))
    idx = gp.asarray(rng.integers(0, 64, 100).astype(np.int32))   # checked on the device
    return (lambda: a[idx]), None


@case
def take_axis(rng):
    a = floats(rng, (64, 48))
    return (lambda: gp.take(a, [3, 1, 4, 1, 5, 9, 2, 6], axis=1)), None


@case
def fancy_set(rng):
    a = gp.empty((64, 48), np.float64)
    idx = gp.asarray(rng.permutation(64)[:20].astype(np.int32))
    v = floats(rng, (20, 48))

    def op():
        a[idx] = v
        return a
    return op, a


@case
def mask_set(rng):
    a = gp.empty((64, 48), np.float32)
    mask = floats(rng, (64, 48)) > 0.3
    v = floats(rng, (64, 48), np.float64)

    def op():
        a[mask] = v[mask]
        return a
    return op, a


@case
def sort_axis(rng):
    a = floats(rng, (64, 48))
    return (lambda: gp.sort(a, axis=0)), None


@case
def argsort_flat(rng):
    a = floats(rng, (64, 48))
    return (lambda: gp.argsort(a, axis=None)), None


@case
def sort_in_place(rng):
    a = gp.empty((64, 48), np.float32)

    def op():
        a.sort(axis=1)
        return a
    return op, a


@case
def unique(rng):
    a = gp.asarray(rng.integers(0, 50, (64, 48)))
    return (lambda: gp.unique(a, return_inverse=True, return_counts=True)), None


@case
def median(rng):
    a = floats(rng, (64, 48))
    return (lambda: gp.median(a)), None


@case
def percentile_axis_out(rng):
    a = floats(rng, (64, 48))
    out = gp.empty((3, 48), np.float32)
    return (lambda: gp.percentile(a, [10, 50, 90], axis=0, out=out)), out


@case
def cumsum_out(rng):
    a = gp.asarray(rng.integers(-9, 9, (64, 48)).astype(np.int16))
    out = gp.empty((64, 48), np.int64)
    return (lambda: gp.cumsum(a, axis=1, out=out)), out


@case
def concatenate_out(rng):
    a, b = floats(rng, (64, 48)), floats(rng, (20, 30))
    out = gp.empty(64 * 48 + 20 * 30, np.float64)
    return (lambda: gp.concatenate([a.T, b[:, ::-1]], axis=None, out=out)), out


@case
def convolve2d(rng):
    from gpuarr.scipy import signal
    img, k = floats(rng, (128, 96)), floats(rng, (7, 5))
    return (lambda: signal.convolve2d(img, k, mode="same")), None


@case
def gaussian_filter_out(rng):
    from gpuarr.scipy import ndimage
    img = floats(rng, (128, 96))
    out = gp.empty((128, 96), np.float32)
    return (lambda: ndimage.gaussian_filter(img, 2.0, output=out)), out


@case
def gaussian_filter_3d_out(rng):
    from gpuarr.scipy import ndimage
    vol = floats(rng, (24, 20, 16))
    out = gp.empty((24, 20, 16), np.float32)
    return (lambda: ndimage.gaussian_filter(vol, (1.0, 1.5, 2.0), output=out)), out


@case
def uniform_filter_complex_out(rng):
    from gpuarr.scipy import ndimage
    h = rng.standard_normal((64, 48)) + 1j * rng.standard_normal((64, 48))
    z = gp.asarray(h.astype(np.complex64))
    out = gp.empty((64, 48), np.complex64)
    return (lambda: ndimage.uniform_filter(z, 3, output=out)), out


@case
def label_out(rng):
    from gpuarr.scipy import ndimage
    mask = floats(rng, (128, 96)) > 1.0
    out = gp.empty((128, 96), np.float64)                  # the lesson's float64 output
    return (lambda: (ndimage.label(mask, output=out), out)), out


@case
def center_of_mass(rng):
    from gpuarr.scipy import ndimage
    img = floats(rng, (128, 96))
    labels, n = ndimage.label(img > 1.0)
    index = list(range(n, 0, -2))          # not a range of labels: a slot table
    return (lambda: ndimage.center_of_mass(img, labels, index)), None


@case
def sum_labels(rng):
    from gpuarr.scipy import ndimage
    img = floats(rng, (128, 96))
    labels, n = ndimage.label(img > 1.0)
    index = list(range(1, n + 1))
    return (lambda: ndimage.sum_labels(img, labels, index)), None


@case
def sigma_clip(rng):
    h = rng.standard_normal((256, 256)).astype(np.float32)
    h[rng.random((256, 256)) < 0.01] = 50.0
    data = gp.asarray(h)
    return (lambda: gp.stats.sigma_clip(data, sigma=3, maxiters=None)), None


@case
def asarray_from_host(rng):
    h = rng.standard_normal((64, 48))[:, ::2]              # strided, converted
    return (lambda: gp.asarray(h, dtype=np.float32)), None


@case
def asnumpy_strided(rng):
    a = floats(rng, (64, 48))
    return (lambda: gp.asnumpy(a[::2, ::-1])), None


@case
def random_normal(rng):
    return (lambda: gp.random.default_rng(7).standard_normal((256, 64), dtype=np.float32)), None


@case
def random_permutation(rng):
    return (lambda: gp.random.RandomState(3).permutation(1000)), None


def need_cufft():
    from gpuarr.cuda import cufft
    try:
        cufft.find_cufft()
    except cufft.CUFFTError:
        pytest.skip("cuFFT is not installed here")


@case
def fft_out(rng):
    need_cufft()
    z = gp.asarray((rng.standard_normal((32, 64)) + 1j * rng.standard_normal((32, 64))))
    out = gp.empty((32, 64), np.complex128)
    return (lambda: gp.fft.fft(z[:, ::-1], axis=1, out=out)), out


@case
def fft2_out(rng):
    need_cufft()
    z = gp.asarray((rng.standard_normal((32, 64)) + 1j * rng.standard_normal((32, 64))))
    out = gp.empty((32, 64), np.complex128)
    return (lambda: gp.fft.fft2(z, norm="ortho", out=out)), out


@case
def rfft(rng):
    need_cufft()
    a = floats(rng, (16, 100), np.float64)
    return (lambda: gp.fft.rfft(a, axis=0)), None


@case
def searchsorted(rng):
    a = gp.sort(floats(rng, 1000))
    v = floats(rng, (30, 20), np.float64)
    return (lambda: gp.searchsorted(a, v)), None


@case
def histogram(rng):
    a = floats(rng, 10000)
    return (lambda: gp.histogram(a, bins=20)), None


@pytest.mark.parametrize("name", list(CASES))
def test_every_allocation_failing_in_turn(name, rng):
    op, target = CASES[name](rng)
    inject(name, op, target, rng)


# ----------------------------------------------------------------- the hook --

def test_the_hook_fails_the_nth_allocation_and_counts():
    before = cuda._faults_injected()
    a = gp.empty(10)
    assert cuda._fail_allocation(3) == 0
    b = gp.empty(100)                       # 1
    c = gp.empty(0)                         # an empty array allocates nothing
    d = gp.empty(7)                         # 2
    with pytest.raises(cuda.OutOfMemoryError, match="_fail_allocation") as exc:
        gp.empty(1000, dtype=np.uint8)      # 3
    assert "1000 bytes" in str(exc.value)
    assert isinstance(exc.value, MemoryError)
    assert cuda._faults_injected() == before + 1
    e = gp.empty(1000, dtype=np.uint8)      # disarmed once it fired
    assert cuda._fail_allocation(5) == 0
    assert cuda._fail_allocation(None) == 5
    assert cuda._fail_allocation(None) == 0
    with pytest.raises(ValueError):
        cuda._fail_allocation(0)
    del a, b, c, d, e


def test_a_failed_draw_does_not_advance_the_generator():
    want = gp.random.default_rng(11).standard_normal(1000).get()
    g = gp.random.default_rng(11)
    cuda._fail_allocation(1)
    try:
        with pytest.raises(cuda.OutOfMemoryError):
            g.standard_normal(1000)
    finally:
        cuda._fail_allocation(None)
    np.testing.assert_array_equal(g.standard_normal(1000).get(), want)


# ------------------------------------------------ separate interpreters --

def run_python(code, *, timeout=120, env=None, cwd=None):
    """Run `code` in a fresh interpreter importing this gpuarr; a hang
    fails the test (subprocess.TimeoutExpired)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(gp.__file__)))
    environ = dict(os.environ, **(env or {}))
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environ,
                          cwd=cwd or root, capture_output=True, text=True, timeout=timeout)


FORK_AFTER_USE = """
    import os, sys
    import gpuarr as gp

    a = gp.arange(10)
    assert int(a.sum()) == 45                  # CUDA initialised in the parent
    pid = os.fork()
    if pid == 0:
        checks = [("zeros", lambda: gp.zeros(3)), ("add", lambda: a + 1),
                  ("iadd", lambda: a.__iadd__(1)), ("sum", lambda: a.sum()),
                  ("get", lambda: a.get()), ("setitem", lambda: a.__setitem__(0, 5)),
                  ("synchronize", lambda: gp.cuda.Device().synchronize()),
                  ("stream", lambda: gp.cuda.Stream()),
                  ("free_all_blocks", lambda: gp.get_default_memory_pool().free_all_blocks())]
        for name, call in checks:
            try:
                call()
            except gp.cuda.CUDARuntimeError as e:
                ok = "fork" in str(e) and "'spawn'" in str(e)
                print(name, "raised" if ok else "raised another error: " + str(e))
            else:
                print(name, "did not raise")
        print("is_available", gp.is_available())
        sys.stdout.flush()
        del a                                  # teardown makes no CUDA call
        if os.environ.get("CHILD_EXIT") == "normal":
            sys.exit(0)
        os._exit(0)                            # as multiprocessing's fork children exit
    _, status = os.waitpid(pid, 0)
    print("child exit", os.waitstatus_to_exitcode(status))
    print("parent", int((a * 2).sum()))
"""


@pytest.mark.parametrize("child_exit", ["os._exit", "normal"])
def test_fork_after_cuda_use_raises_in_the_child(child_exit):
    r = run_python(FORK_AFTER_USE, env={"CHILD_EXIT": child_exit})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for name in ("zeros", "add", "iadd", "sum", "get", "setitem", "synchronize", "stream",
                 "free_all_blocks"):
        assert f"{name} raised" in lines, (name, r.stdout, r.stderr)
    assert "is_available False" in lines
    assert "child exit 0" in lines
    assert "parent 90" in lines
    assert "Traceback" not in r.stderr, r.stderr


def test_fork_before_cuda_use_works_in_the_child():
    r = run_python("""
        import os
        import gpuarr as gp
        import numpy as np
        x = np.arange(100.0)                   # no device operation before the fork
        pid = os.fork()
        if pid == 0:
            ok = float(gp.asarray(x).sum()) == 4950.0 and gp.is_available()
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        print("child exit", os.waitstatus_to_exitcode(status))
        print("parent", float(gp.asarray(x).sum()))
    """)
    assert r.returncode == 0, r.stderr
    assert "child exit 0" in r.stdout.splitlines(), (r.stdout, r.stderr)
    assert "parent 4950.0" in r.stdout.splitlines()


SPAWN = """
import multiprocessing as mp

import gpuarr as gp


def gpu_sum(n):
    return float(gp.arange(n, dtype=gp.float64).sum())


if __name__ == "__main__":
    assert int(gp.arange(10).sum()) == 45      # CUDA initialised in the parent first
    with mp.get_context("spawn").Pool(2) as pool:
        print(pool.map(gpu_sum, [10, 1000, 100000]))
"""


def test_multiprocessing_with_spawn_works(tmp_path):
    script = tmp_path / "spawn_sum.py"
    script.write_text(SPAWN)
    root = os.path.dirname(os.path.dirname(os.path.abspath(gp.__file__)))
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    r = subprocess.run([sys.executable, str(script)], env=environ, cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[45.0, 499500.0, 4999950000.0]", (r.stdout, r.stderr)


FAULTING_KERNEL = """
    import sys
    import gpuarr as gp

    far = gp.RawKernel(r'''
    extern "C" __global__ void write_far(float *p)
    {
        p[(size_t)1 << 40] = 1.0f;                 /* 4 TiB past the array */
    }''', "write_far")
    a = gp.zeros(16, dtype=gp.float32)
    far.compile()
    try:
        far((1,), (1,), (a,))
        print("launch returned")
        sys.stdout.flush()
        if sys.argv[1] == "synchronize":
            gp.cuda.Device().synchronize()
        else:
            a.get()
        print("no error")
    except gp.cuda.CUDARuntimeError as e:
        print("FIRST", e.error_name, e.operation)
        print("FIRST MESSAGE", e)
    sys.stdout.flush()
    for name, call in [("add", lambda: (a + 1).get()), ("zeros", lambda: gp.zeros(4).get()),
                       ("synchronize", lambda: gp.cuda.Device().synchronize())]:
        try:
            call()
            print("LATER", name, "no error")
        except gp.cuda.CUDARuntimeError as e:
            print("LATER", name, e.error_name, "|", e)
        sys.stdout.flush()
"""


def faulting_kernel(tmp_path, sync_launch, sync_with):
    code = textwrap.dedent(FAULTING_KERNEL).replace("sys.argv[1]", repr(sync_with))
    env = {"GPUARR_CACHE_DIR": str(tmp_path / "kernels"), "GPUARR_SYNC_LAUNCH": sync_launch}
    r = run_python(code, env=env, timeout=180)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    first = [ln for ln in lines if ln.startswith("FIRST ")]
    assert first, (r.stdout, r.stderr)
    message = next(ln for ln in lines if ln.startswith("FIRST MESSAGE"))
    assert "cudaErrorIllegalAddress" in first[0] or "cudaErrorLaunchFailure" in first[0], r.stdout
    assert "unusable" in message and "restart the process" in message, message
    later = [ln for ln in lines if ln.startswith("LATER")]
    assert len(later) == 3, (r.stdout, r.stderr)
    for ln in later:
        assert "no error" not in ln and "unusable" in ln and "restart" in ln, ln
    return lines


@requires_nvrtc
def test_faulting_kernel_with_sync_launch_names_the_launch(tmp_path):
    lines = faulting_kernel(tmp_path, "1", "synchronize")
    assert "launch returned" not in lines
    assert any(ln.startswith("FIRST cudaError") and ln.endswith("launching user kernel "
                                                             "'write_far'") for ln in lines), lines
    later = [ln for ln in lines if ln.startswith("LATER")]
    assert all("launching user kernel 'write_far'" in ln for ln in later), later


@requires_nvrtc
@pytest.mark.parametrize("sync_with", ["synchronize", "get"])
def test_faulting_kernel_surfaces_at_the_next_synchronisation(tmp_path, sync_with):
    lines = faulting_kernel(tmp_path, "0", sync_with)
    # (the launch itself may already see the fault when it is that quick)
    assert "no error" not in lines
    message = next(ln for ln in lines if ln.startswith("FIRST MESSAGE"))
    assert "GPUARR_SYNC_LAUNCH=1" in message
