"""Stress: 16 Python threads share the device and its memory pool for
GPUARR_STRESS_SECONDS (3 by default, a part of the normal suite; 60 for a
minute), each drawing operations at random: transfers both ways,
elementwise arithmetic and in-place updates, reductions, scans, sorting,
selections that synchronise, the median, random numbers, reads of one
array all threads share, and work on a short-lived stream of its own.
Every result is checked against NumPy.

Four threads run on the legacy default stream, four on a blocking stream
of their own and eight on a non-blocking one, so the pool hands blocks to
many streams at once and frees them from many threads.  A thread that does
not finish within a generous margin fails the test with every thread's
stack (the threads are daemons, so a hang cannot keep the suite alive);
afterwards the device and pinned pools hold exactly the bytes they held
before."""
import contextlib
import gc
import os
import sys
import threading
import time
import traceback
from collections import Counter

import numpy as np
import pytest

import gpuarr as gp

pytestmark = pytest.mark.gpu

THREADS = 16
SECONDS = float(os.environ.get("GPUARR_STRESS_SECONDS", "3"))
START = 60.0        # seconds the threads may take to start together
SLACK = 120.0       # seconds a thread may take past the end for its last operation


def _sizes(rng, hi=1 << 16):
    return int(rng.integers(1, hi))


def transfer(rng, shared):
    dtype = [np.float32, np.float64, np.int16, np.int64, np.complex64][int(rng.integers(5))]
    h = (rng.standard_normal(_sizes(rng, 1 << 18)) * 100).astype(dtype)
    d = gp.asarray(h)
    np.testing.assert_array_equal(d.get(), h)
    np.testing.assert_array_equal(d[::-3].get(), h[::-3])
    out = np.empty_like(h)
    assert d.get(out=out) is out
    np.testing.assert_array_equal(out, h)


def elementwise(rng, shared):
    h = rng.standard_normal((_sizes(rng, 2048), 33)).astype(np.float32)
    g = rng.standard_normal(33).astype(np.float32)
    d, e = gp.asarray(h), gp.asarray(g)
    np.testing.assert_array_equal((d * 2 + e).get(), h * np.float32(2) + g)
    np.testing.assert_array_equal(gp.maximum(d, e).get(), np.maximum(h, g))
    np.testing.assert_array_equal((d.T[::2] < 0.25).get(), h.T[::2] < np.float32(0.25))


def in_place(rng, shared):
    h = rng.integers(-1000, 1000, (_sizes(rng, 4096), 7))
    d = gp.asarray(h)
    d += 3
    d[::2] = -1
    gp.multiply(d, 2, out=d)
    h = h + 3
    h[::2] = -1
    np.testing.assert_array_equal(d.get(), h * 2)


def reduce(rng, shared):
    h = rng.integers(-1000, 1000, (_sizes(rng, 8192), 9))
    d = gp.asarray(h)
    assert int(d.sum()) == int(h.sum())
    np.testing.assert_array_equal(d.max(axis=0).get(), h.max(axis=0))
    np.testing.assert_array_equal(d.argmin(axis=1).get(), h.argmin(axis=1))
    f = rng.standard_normal(_sizes(rng, 1 << 18))
    s = float(gp.asarray(f).sum())
    assert abs(s - f.sum()) <= 1e-12 * np.abs(f).sum()


def scan(rng, shared):
    h = rng.integers(-50, 50, _sizes(rng, 1 << 17)).astype(np.int32)
    np.testing.assert_array_equal(gp.cumsum(gp.asarray(h)).get(), np.cumsum(h))


def sort(rng, shared):
    h = rng.standard_normal(_sizes(rng, 1 << 17)).astype(np.float32)
    d = gp.asarray(h)
    np.testing.assert_array_equal(gp.sort(d).get(), np.sort(h))
    k = rng.integers(0, 20, _sizes(rng, 1 << 15))
    np.testing.assert_array_equal(gp.argsort(gp.asarray(k)).get(), np.argsort(k, kind="stable"))


def select(rng, shared):
    h = rng.standard_normal(_sizes(rng, 1 << 17))
    d = gp.asarray(h)
    np.testing.assert_array_equal(d[d > 0.5].get(), h[h > 0.5])
    np.testing.assert_array_equal(gp.flatnonzero(d < -1).get(), np.flatnonzero(h < -1))
    k = rng.integers(0, 50, _sizes(rng, 4096))
    np.testing.assert_array_equal(gp.unique(gp.asarray(k)).get(), np.unique(k))


def median(rng, shared):
    h = rng.standard_normal(_sizes(rng, 1 << 17))
    assert float(gp.median(gp.asarray(h))) == np.median(h)


def random_numbers(rng, shared):
    seed = int(rng.integers(1 << 62))
    n = _sizes(rng, 1 << 17)
    a = gp.random.default_rng(seed).random(n, dtype=np.float32).get()
    b = gp.random.default_rng(seed).random(n, dtype=np.float32).get()
    np.testing.assert_array_equal(a, b)
    assert (a >= 0).all() and (a < 1).all()


def shared_input(rng, shared):
    """Every thread reads the same device array (written before the
    threads started); the ranges overlap."""
    host, dev = shared
    lo = int(rng.integers(0, host.size - 1))
    hi = int(rng.integers(lo + 1, host.size + 1))
    np.testing.assert_array_equal((dev[lo:hi] * 3).get(), host[lo:hi] * 3)
    assert float(dev[lo:hi].max()) == host[lo:hi].max()


def own_short_lived_stream(rng, shared):
    """Work on a stream that lives for this operation only; half the time
    its last arrays are dropped while their kernels may still run, and the
    stream goes with them (the pool must not hand those blocks to a later
    stream before that work is done)."""
    with gp.cuda.Stream(non_blocking=bool(rng.integers(2))) as s:
        h = rng.standard_normal(_sizes(rng, 1 << 18))
        d = gp.asarray(h)
        np.testing.assert_array_equal((d - 1).get(), h - 1)
        if rng.integers(2):
            gp.sort(d * 2)                      # dropped at once, its kernels queued
        else:
            s.synchronize()
    del s, d


OPERATIONS = [transfer, elementwise, in_place, reduce, scan, sort, select, median,
              random_numbers, shared_input, own_short_lived_stream]


class Run:
    """What the threads report: errors (formatted, so no frame keeps an
    array alive), operations done, and each thread's current operation."""

    def __init__(self):
        self.lock = threading.Lock()
        self.errors = []
        self.done = Counter()
        self.current = {}


def worker(k, seed, shared, start, run):
    rng = np.random.default_rng(seed)
    kind = ("default", "blocking", "non-blocking", "non-blocking")[k % 4]
    done, name = Counter(), "start"
    try:
        stream = None if kind == "default" else gp.cuda.Stream(non_blocking=kind == "non-blocking")
        start.wait(timeout=START)
        stop_at = time.monotonic() + SECONDS
        with stream if stream is not None else contextlib.nullcontext():
            expected = stream if stream is not None else gp.cuda.Stream.null
            while time.monotonic() < stop_at:
                op = OPERATIONS[int(rng.integers(len(OPERATIONS)))]
                name = op.__name__
                run.current[k] = name
                assert gp.cuda.get_current_stream() is expected, "the current stream changed"
                op(rng, shared)
                done[name] += 1
            name = "synchronize"
            gp.cuda.get_current_stream().synchronize()
    except BaseException:  # noqa: BLE001 -- reported by the test, with the thread and operation
        with run.lock:
            run.errors.append(f"thread {k} ({kind} stream), {name} after "
                              f"{sum(done.values())} operations:\n{traceback.format_exc()}")
    finally:
        run.current[k] = "finished"
        with run.lock:
            run.done.update(done)


def test_threads_share_the_device_and_the_pool(rng):
    pool, pinned = gp.get_default_memory_pool(), gp.get_default_pinned_memory_pool()
    gp.cuda.Device().synchronize()
    gc.collect()
    used, pinned_used = pool.used_bytes(), pinned.used_bytes()

    host = rng.standard_normal(1 << 20)
    shared = (host, gp.asarray(host))
    gp.cuda.Device().synchronize()          # written before any stream reads it
    run, start = Run(), threading.Barrier(THREADS)
    seeds = rng.integers(0, 1 << 62, THREADS)
    threads = [threading.Thread(target=worker, name=f"stress-{k}", daemon=True,
                                args=(k, int(seeds[k]), shared, start, run))
               for k in range(THREADS)]
    give_up = time.monotonic() + START + SECONDS + SLACK
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.0, give_up - time.monotonic()))
    hung = [(k, t) for k, t in enumerate(threads) if t.is_alive()]
    if hung:
        frames = sys._current_frames()
        stacks = "\n".join(f"thread {k} in {run.current.get(k)}:\n" +
                           "".join(traceback.format_stack(frames[t.ident]))
                           for k, t in hung if t.ident in frames)
        pytest.fail(f"{len(hung)} of {THREADS} threads still running {SLACK:.0f} s after the "
                    f"end (a deadlock?):\n{stacks}", pytrace=False)

    total = sum(run.done.values())
    print(f"{total} operations in {SECONDS:g} s by {THREADS} threads: "
          + ", ".join(f"{name} {n}" for name, n in sorted(run.done.items())))
    errors = sorted(run.errors, key=lambda e: "BrokenBarrierError" in e)   # the cause first
    assert not errors, f"{len(errors)} threads failed; the first:\n{errors[0]}"
    assert total >= THREADS

    del shared
    gp.cuda.Device().synchronize()
    gc.collect()
    assert pool.used_bytes() == used, "device memory still in use after every array went"
    assert pinned.used_bytes() == pinned_used, "pinned memory still in use"
