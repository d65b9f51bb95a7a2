"""Host-side logic that needs no GPU, so it runs everywhere: collapsing and
broadcasting kernel layouts, the memory-limit parser and the pool's size
classes, pool-limit argument checks, and what happens on a machine without
a GPU (is_available() never raises; the first device operation raises
NoDeviceError naming the cause)."""
import itertools
import re

import numpy as np
import pytest

import gpuarr as gp
from gpuarr import _core

plan_collapse = _core._plan_collapse
plan_broadcast = _core._plan_broadcast


def element_offsets(shape, strides_per_operand):
    """Sorted (offset in operand 0, offset in operand 1, ...) of every element."""
    return sorted(tuple(sum(i * s for i, s in zip(index, strides)) for strides in strides_per_operand)
                  for index in itertools.product(*map(range, shape)))


# ------------------------------------------------------------ _plan_collapse

@pytest.mark.parametrize("shape, strides, want", [
    ((2, 3, 4), [(96, 32, 8)], ((24,), [(8,)])),                         # C-contiguous
    ((2, 3, 4), [(8, 16, 48)], ((24,), [(8,)])),                         # F-contiguous
    ((3, 4), [(-32, -8)], ((12,), [(-8,)])),                             # both axes reversed
    ((1, 5, 1, 3, 1), [(999, 24, 7, 8, 5)], ((15,), [(8,)])),            # size-1 dims dropped
    ((4, 5), [(40, 8), (0, 0)], ((20,), [(8,), (0,)])),                  # a broadcast scalar
    ((4, 5), [(40, 8), (0, 8)], ((4, 5), [(40, 8), (0, 8)])),            # a broadcast row
    ((4, 5), [(40, 8), (8, 32)], ((4, 5), [(40, 8), (8, 32)])),          # transposed source
    ((2, 3, 4), [(192, 64, 8)], ((6, 4), [(64, 8)])),                    # sliced last axis
    ((3, 0, 2), [(48, 16, 8)], ((0,), [(0,)])),                          # zero-size
    ((), [()], ((1,), [(0,)])),                                          # 0-d
    ((1, 1), [(8, 8), (4, 4)], ((1,), [(0,), (0,)])),                    # all size-1
], ids=str)
def test_plan_collapse_merges_what_every_operand_allows(shape, strides, want):
    assert plan_collapse(shape, strides) == (want[0], [tuple(s) for s in want[1]])


def test_plan_collapse_orders_dims_by_the_first_operand(rng):
    # A Fortran-ordered destination gets its unit-stride dim innermost.
    shape, strides = plan_collapse((3, 4), [(8, 24), (32, 8)])
    assert shape == (4, 3) and strides == [(24, 8), (8, 32)]


def test_plan_collapse_keeps_every_element_offset(rng):
    for _ in range(300):
        ndim = int(rng.integers(0, 5))
        shape = tuple(int(n) for n in rng.integers(0, 4, ndim))
        operands = []
        for _ in range(int(rng.integers(1, 4))):
            # a strided view of a random permutation of a C-ordered block
            order = rng.permutation(ndim)
            extent = [n * int(rng.integers(1, 3)) for n in shape]
            stride, strides = 8, [0] * ndim
            for axis in order[::-1]:
                strides[axis] = stride * int(rng.choice([1, 1, 2, -1]))
                stride *= max(extent[axis], 1)
            for axis in range(ndim):
                if rng.random() < 0.15:
                    strides[axis] = 0  # broadcast
            operands.append(tuple(strides))
        kshape, kstrides = plan_collapse(shape, operands)
        assert len(kstrides) == len(operands)
        assert all(len(s) == len(kshape) for s in kstrides)
        assert int(np.prod(kshape)) == int(np.prod(shape))
        if 0 not in shape:
            assert element_offsets(kshape, kstrides) == element_offsets(shape, operands)


def test_plan_collapse_rejects_too_many_dims_and_bad_arguments():
    shape = (2,) * 17
    strides = tuple(8 * 3 ** (16 - i) for i in range(17))   # nothing can merge
    with pytest.raises(ValueError, match="16"):
        plan_collapse(shape, [strides])
    assert len(plan_collapse(shape[:16], [strides[1:]])[0]) == 16
    with pytest.raises(ValueError):
        plan_collapse((2, 3), [(24,)])
    with pytest.raises(ValueError):
        plan_collapse((2, 3), [])
    with pytest.raises(ValueError):
        plan_collapse((2, 3), [(24, 8)] * 5)


# ------------------------------------------------------------ _plan_broadcast

@pytest.mark.parametrize("shape, strides, target, want", [
    ((3,), (8,), (3,), (8,)),
    ((3, 1), (8, 8), (2, 3, 4), (0, 8, 0)),
    ((1,), (8,), (5,), (0,)),
    ((1,), (8,), (0,), (0,)),
    ((), (), (2, 2), (0, 0)),
    ((2, 1, 3), (-48, 24, -8), (2, 7, 3), (-48, 0, -8)),
], ids=str)
def test_plan_broadcast_gives_zero_strides_where_stretched(shape, strides, target, want):
    assert plan_broadcast(shape, strides, target) == want


def test_plan_broadcast_matches_numpy(rng):
    for _ in range(300):
        shape = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(0, 4))))
        target = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(0, 4))))
        shape = tuple(1 if rng.random() < 0.3 else n for n in shape)
        x = np.empty(shape)
        try:
            want = np.broadcast_to(x, target).strides
        except ValueError:
            with pytest.raises(ValueError):
                plan_broadcast(shape, x.strides, target)
        else:
            assert plan_broadcast(shape, x.strides, target) == want


def test_plan_broadcast_errors_name_both_shapes():
    with pytest.raises(ValueError, match=re.escape("(2,)") + ".*" + re.escape("(3,)")):
        plan_broadcast((2,), (8,), (3,))
    with pytest.raises(ValueError, match=re.escape("(2, 3)") + ".*" + re.escape("(3,)")):
        plan_broadcast((2, 3), (24, 8), (3,))
    with pytest.raises(ValueError):
        plan_broadcast((2, 3), (8,), (2, 3))


# ------------------------------------------------------------ memory limits and size classes

@pytest.mark.parametrize("text, total, want", [
    ("1073741824", 0, 1073741824), ("1e9", 0, 10**9), ("0", 5, 0), ("1.5", 0, 1),
    ("50%", 1000, 500), ("100%", 8, 8), ("12.5%", 1000, 125), ("0%", 10, 0),
    ("25 %", 400, 100), ("50%", 81559420928, 40779710464),
])
def test_parse_limit_reads_bytes_and_percentages(text, total, want):
    assert _core._parse_limit(text, total) == want


@pytest.mark.parametrize("text", ["", "abc", "-1", "150%", "10 MB", "nan", "inf", "50%%", "%", " ", "1e30",
                                  "5 5"])
def test_parse_limit_rejects_bad_strings(text):
    with pytest.raises(ValueError, match="GPUARR_GPU_MEMORY_LIMIT"):
        _core._parse_limit(text, 1000)


only_with_caching = pytest.mark.skipif(
    not _core._pool_caching(), reason="size classes exist only with caching (GPUARR_POOL=0 "
    "allocates each request's exact size)")


@only_with_caching
@pytest.mark.parametrize("n, want", [
    (0, 0), (1, 512), (511, 512), (512, 512), (513, 1024), (1 << 20, 1 << 20),
    ((1 << 20) + 1, (1 << 20) + (1 << 17)), (3 << 20, 3 << 20), ((1 << 30) - 1, 1 << 30),
])
def test_round_size_classes(n, want):
    assert _core._round_size(n) == want


@only_with_caching
def test_round_size_wastes_at_most_an_eighth(rng):
    for n in rng.integers(1, 1 << 40, 2000):
        n = int(n)
        r = _core._round_size(n)
        assert r >= n
        if n <= 1 << 20:
            assert r % 512 == 0 and r - n < 512
        else:
            step = (1 << (n.bit_length() - 1)) // 8
            assert r % step == 0 and r - n < step and r - n <= n // 8


def test_set_limit_validates_its_arguments():
    pool = gp.get_default_memory_pool()
    try:
        with pytest.raises(ValueError):
            pool.set_limit(size=1 << 20, fraction=0.5)
        with pytest.raises(ValueError):
            pool.set_limit(fraction=1.5)
        with pytest.raises(ValueError):
            pool.set_limit(fraction=-0.1)
        with pytest.raises(ValueError):
            pool.set_limit(size=-1)
        pool.set_limit(size=12345)
        assert pool.get_limit() == 12345
    finally:
        pool.set_limit(size=0)
    assert pool.get_limit() == 0


# ------------------------------------------------------------ no GPU

def test_is_available_never_raises():
    for _ in range(2):
        assert gp.is_available() in (True, False)
        assert gp.cuda.is_available() is gp.is_available()


@pytest.mark.skipif(gp.is_available(), reason="a GPU is available here")
def test_device_operations_without_a_gpu_raise_no_device_error_naming_the_cause():
    for operation in (lambda: gp.zeros(3), lambda: gp.asarray(np.ones(3)), lambda: gp.arange(4),
                      lambda: gp.empty((2, 2), dtype=np.int8)):
        with pytest.raises(gp.cuda.NoDeviceError) as exc:
            operation()
        assert isinstance(exc.value, gp.cuda.CUDARuntimeError)
        assert isinstance(exc.value, RuntimeError)
        assert re.search(r"no NVIDIA driver|no CUDA device|driver is too old|could not be "
                         r"initiali[sz]ed", str(exc.value)), str(exc.value)
    assert gp.is_available() is False


def test_argument_errors_come_before_any_device_work():
    # These fail the same way with or without a GPU.
    with pytest.raises(ValueError, match="negative"):
        gp.zeros(-1)
    with pytest.raises(TypeError, match="does not support dtype"):
        gp.zeros(3, dtype="U4")
    with pytest.raises(TypeError, match="does not support dtype"):
        gp.asarray(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="does not support dtype"):
        gp.empty(2, dtype=[("x", "f4")])
