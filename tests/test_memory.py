"""The device and pinned memory pools: accounting (used, total, free,
cached blocks) as arrays come and go, free_all_blocks, limits from
set_limit and GPUARR_GPU_MEMORY_LIMIT, and the out-of-memory error and
recovery.  Every test measures differences, so arrays kept alive by other
tests do not matter; limits are always removed again."""
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuarr as gp
from gpuarr import _core

pytestmark = pytest.mark.gpu

MiB = 1 << 20

# Tests of cached blocks need caching, which GPUARR_POOL=0 turns off (what
# the statistics mean then: test_uncached_pool_statistics).
needs_caching = pytest.mark.skipif(not _core._pool_caching(),
                                   reason="GPUARR_POOL=0: the pool caches nothing")


@pytest.fixture
def pool():
    gc.collect()  # arrays held by other tests' reference cycles must not go mid-test
    p = gp.get_default_memory_pool()
    p.free_all_blocks()
    yield p
    p.set_limit(size=0)


def test_pool_objects_are_the_defaults():
    assert gp.get_default_memory_pool() is gp.cuda.get_default_memory_pool()
    assert gp.get_default_pinned_memory_pool() is gp.cuda.get_default_pinned_memory_pool()
    assert isinstance(gp.get_default_memory_pool(), gp.cuda.MemoryPool)
    assert isinstance(gp.get_default_pinned_memory_pool(), gp.cuda.PinnedMemoryPool)


@needs_caching
@pytest.mark.parametrize("nbytes", [1, 512, 1000, 3 * MiB + 5, 7 * MiB])
def test_deleted_arrays_return_their_block_to_the_pool(pool, nbytes):
    used, total = pool.used_bytes(), pool.total_bytes()
    assert pool.n_free_blocks() == 0 and pool.free_bytes() == 0 and total == used
    a = gp.empty(nbytes, dtype=np.uint8)
    size = _core._round_size(nbytes)
    assert pool.used_bytes() == used + size
    assert pool.total_bytes() == total + size
    del a
    assert pool.used_bytes() == used
    assert pool.total_bytes() == total + size
    assert pool.n_free_blocks() == 1 and pool.free_bytes() == size
    b = gp.empty(nbytes, dtype=np.uint8)  # served from the cache
    assert pool.total_bytes() == total + size and pool.n_free_blocks() == 0
    del b
    pool.free_all_blocks()
    assert pool.total_bytes() == total and pool.n_free_blocks() == 0 and pool.free_bytes() == 0


def test_views_keep_the_owner_allocated_and_do_not_allocate(pool):
    used = pool.used_bytes()
    a = gp.zeros((256, 256))
    grown = pool.used_bytes()
    assert grown == used + _core._round_size(a.nbytes)
    v = a[::2, ::-1].T[1:, None]
    assert pool.used_bytes() == grown
    del a
    assert pool.used_bytes() == grown
    del v
    assert pool.used_bytes() == used


def test_empty_arrays_allocate_nothing(pool):
    used, total = pool.used_bytes(), pool.total_bytes()
    arrays = [gp.empty(0), gp.zeros((3, 0)), gp.ones((0, 5), np.int8), gp.asarray(np.empty((0, 2)))]
    assert pool.used_bytes() == used and pool.total_bytes() == total
    assert all(a.size == 0 for a in arrays)


@needs_caching
def test_free_all_blocks_releases_many_cached_blocks(pool):
    total = pool.total_bytes()
    arrays = [gp.empty(k * 1024 + 1, dtype=np.uint8) for k in range(1, 9)]
    grown = pool.total_bytes()
    assert grown == total + sum(_core._round_size(k * 1024 + 1) for k in range(1, 9))
    del arrays
    assert pool.total_bytes() == grown and pool.n_free_blocks() == 8
    pool.free_all_blocks()
    assert pool.total_bytes() == total and pool.n_free_blocks() == 0


@needs_caching
def test_out_of_memory_error_names_the_sizes_and_the_pool_recovers(pool):
    base = pool.total_bytes()
    limit = base + 4 * MiB
    pool.set_limit(size=limit)
    assert pool.get_limit() == limit
    a = gp.empty(3 * MiB, dtype=np.uint8)
    with pytest.raises(gp.cuda.OutOfMemoryError) as exc:
        gp.empty(2 * MiB, dtype=np.uint8)
    err = exc.value
    assert isinstance(err, MemoryError) and isinstance(err, gp.cuda.CUDARuntimeError)
    message = str(err)
    assert str(2 * MiB) in message
    assert str(pool.used_bytes()) in message
    assert str(limit) in message
    # Freeing the first array leaves its block cached; the pool releases
    # cached blocks before giving up, so the same request now succeeds.
    del a
    assert pool.n_free_blocks() == 1
    b = gp.empty(2 * MiB, dtype=np.uint8)
    assert pool.n_free_blocks() == 0 and b.nbytes == 2 * MiB
    # Raising the limit makes room as well.
    with pytest.raises(gp.cuda.OutOfMemoryError):
        gp.zeros(3 * MiB, dtype=np.uint8)
    pool.set_limit(size=limit + 4 * MiB)
    c = gp.zeros(3 * MiB, dtype=np.uint8)
    assert c.get().sum() == 0
    pool.set_limit(size=0)
    assert pool.get_limit() == 0
    del b, c


def test_set_limit_by_fraction_of_device_memory(pool):
    pool.set_limit(fraction=1.0)
    whole = pool.get_limit()
    pool.set_limit(fraction=0.25)
    quarter = pool.get_limit()
    assert whole > 0 and abs(4 * quarter - whole) <= 4
    pool.set_limit()
    assert pool.get_limit() == 0


@needs_caching
def test_pinned_pool_accounting(rng):
    pinned = gp.get_default_pinned_memory_pool()
    d = gp.asarray(rng.standard_normal(1_000_000))
    gc.collect()
    pinned.free_all_blocks()
    used, total = pinned.used_bytes(), pinned.total_bytes()
    assert pinned.n_free_blocks() == 0 and pinned.free_bytes() == 0 and total == used
    host = d.get()
    size = _core._round_size(host.nbytes)
    assert pinned.used_bytes() == used + size and pinned.total_bytes() == total + size
    del host
    assert pinned.used_bytes() == used and pinned.n_free_blocks() == 1
    assert pinned.free_bytes() == size
    pinned.free_all_blocks()
    assert pinned.total_bytes() == total and pinned.n_free_blocks() == 0


def run_python(code, **env):
    """Run `code` in a fresh interpreter importing this gpuarr, with extra
    environment variables."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(gp.__file__)))
    environ = dict(os.environ, **env)
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    result = subprocess.run([sys.executable, "-c", code], env=environ, cwd=root,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split("\n")


LIMIT_PROBE = """
import gpuarr as gp
pool = gp.get_default_memory_pool()
try:
    gp.zeros(1)
except Exception as e:
    print(type(e).__name__); print(e)
    raise SystemExit
print(pool.get_limit())
try:
    gp.empty(20 * 2**20, dtype='u1')
    print('allocated')
except gp.cuda.OutOfMemoryError as e:
    print('OutOfMemoryError')
pool.set_limit(fraction=0.5)
print(pool.get_limit())
"""


def test_memory_limit_from_the_environment_in_bytes():
    out = run_python(LIMIT_PROBE, GPUARR_GPU_MEMORY_LIMIT=str(16 * MiB))
    assert out[0] == str(16 * MiB)
    assert out[1] == "OutOfMemoryError"


def test_memory_limit_from_the_environment_as_a_percentage():
    out = run_python(LIMIT_PROBE, GPUARR_GPU_MEMORY_LIMIT="50%")
    assert int(out[0]) > 0
    assert out[1] == "allocated"
    assert out[0] == out[2]  # the same as set_limit(fraction=0.5)


def test_bad_memory_limit_in_the_environment_raises_value_error():
    out = run_python(LIMIT_PROBE, GPUARR_GPU_MEMORY_LIMIT="lots")
    assert out[0] == "ValueError"
    assert "GPUARR_GPU_MEMORY_LIMIT" in out[1] and "lots" in out[1]


UNCACHED_PROBE = """
import gpuarr as gp
from gpuarr import _core
pool = gp.get_default_memory_pool()
gp.zeros(1)
used, total = pool.used_bytes(), pool.total_bytes()
print(_core._pool_caching(), _core._round_size(1000), used == total)
a = gp.empty(1000, dtype='u1')
print(pool.used_bytes() - used, pool.total_bytes() - total, pool.n_free_blocks())
del a
print(pool.used_bytes() - used, pool.total_bytes() - total, pool.n_free_blocks(),
      pool.free_bytes())
pool.free_all_blocks()
print(pool.total_bytes() - total)
pool.set_limit(size=total + 3000)
b = gp.empty(2000, dtype='u1')
try:
    gp.empty(2000, dtype='u1')
except gp.cuda.OutOfMemoryError:
    print('OutOfMemoryError')
del b
c = gp.empty(2000, dtype='u1')
print(pool.used_bytes() - used)
"""


def test_uncached_pool_statistics():
    """GPUARR_POOL=0: nothing is cached and each block is exactly the bytes
    asked for, so used_bytes == total_bytes == the live bytes, no free
    blocks, and the limit counts live bytes."""
    out = run_python(UNCACHED_PROBE, GPUARR_POOL="0")
    assert out[0] == "False 1000 True"
    assert out[1] == "1000 1000 0"
    assert out[2] == "0 0 0 0"
    assert out[3] == "0"
    assert out[4] == "OutOfMemoryError"
    assert out[5] == "2000"
