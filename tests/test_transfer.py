"""Moving data between host and device: gp.asarray from every kind of host
input, gp.asnumpy / x.get (into new arrays and into out=), x.set.  Every
transfer must be bit-exact, on both sides of the 1 MiB small-copy limit and
of the 8 MiB staging chunk, and from or into any layout and byte order."""
import gc
import types

import numpy as np
import pytest

import gpuarr as gp
from gpuarr import _core
from _arrays import ALL_DTYPES, KINDS, assert_same, random_array

pytestmark = pytest.mark.gpu

MiB = 1 << 20
# float64 element counts: small, pinned-result but direct (> 64 KiB), just
# past the 1 MiB small-copy limit, exactly two 8 MiB staging chunks, and
# 24 MB (not a multiple of the chunk).
SIZES = [1000, 20_000, MiB // 8 + 1, 2 * MiB, 3_000_000]


@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 0, 2), (5, 6), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_asarray_then_get_round_trips_every_dtype_bit_exactly(rng, dtype, shape):
    h = random_array(rng, shape, dtype)
    d = gp.asarray(h)
    assert isinstance(d, gp.ndarray)
    assert d.shape == h.shape and d.dtype == h.dtype
    if h.size:
        assert d.strides == h.strides
    assert_same(d.get(), h)
    assert_same(gp.asnumpy(d), h)


@pytest.mark.parametrize("layout", ["T", "step", "negative_step", "fortran", "mixed", "broadcast",
                                    "unaligned"])
@pytest.mark.parametrize("dtype", KINDS, ids=str)
def test_asarray_of_strided_host_views_copies_their_values(rng, dtype, layout):
    base = random_array(rng, (6, 10), dtype)
    if layout == "unaligned":
        raw = np.zeros(base.nbytes + 1, np.uint8)[1:]
        h = raw.view(dtype).reshape(base.shape)
        h[...] = base
    else:
        h = {"T": base.T, "step": base[::2, 1::3], "negative_step": base[::-1, ::-2],
             "fortran": np.asfortranarray(base), "mixed": base.T[::-2, 1:],
             "broadcast": np.broadcast_to(base[:1], (4, 10))}[layout]
    d = gp.asarray(h)
    assert d.shape == h.shape and d.dtype == h.dtype
    assert d.flags.c_contiguous or d.flags.f_contiguous
    if layout in ("T", "fortran"):
        assert d.flags.f_contiguous and d.strides == h.strides
    assert_same(d.get(), h)


@pytest.mark.parametrize("dtype", [">i2", ">u4", ">i8", ">f2", ">f4", ">f8", ">c8", ">c16"])
def test_asarray_converts_big_endian_host_arrays_to_native(rng, dtype):
    big = np.dtype(dtype)
    h = random_array(rng, (4, 5), big.newbyteorder("=")).astype(big)
    for view in (h, h[::-1, ::2], h.T):
        d = gp.asarray(view)
        assert d.dtype == big.newbyteorder("=") and d.dtype.isnative
        assert_same(d.get(), view)


@pytest.mark.parametrize("obj", [
    [1, 2, 3], [[1.5, 2], [3, 4]], ((1, 2), (3, 4)), [True, False, True], [1 + 2j, 3],
    [[[1], [2]], [[3], [4]]], [], [[]], 5, -2.5, True, 1j, np.float32(1.5), np.int16(-7),
    np.uint64(2**63 + 5), np.bool_(False), np.complex64(1 - 1j), [np.float16(1), np.float16(2)],
    np.arange(3, dtype=np.int8),
], ids=repr)
def test_asarray_of_sequences_and_scalars_matches_numpy(obj):
    d = gp.asarray(obj)
    want = np.asarray(obj)
    assert d.shape == want.shape and d.dtype == want.dtype
    assert_same(d.get(), want)


@pytest.mark.parametrize("obj, dtype", [
    ([1, 2, 3], np.float32), ([1.5, -2.5, 3.25], np.int32), ([0, 2, 0], np.bool_),
    (np.arange(10.0), np.float16), (np.arange(6).reshape(2, 3), np.complex64),
    (2.75, np.uint8), ([[1, 2], [3, 4]], ">f8"),
], ids=repr)
def test_asarray_with_dtype_converts_like_numpy(obj, dtype):
    d = gp.asarray(obj, dtype=dtype)
    want = np.asarray(obj, dtype=dtype)
    assert d.dtype == want.dtype.newbyteorder("=")
    assert_same(d.get(), want)


FLOAT_ROWS = [
    [1.5, -2.0, float("nan"), float("inf"), -0.0], (1.5,), [(1.5, 2.5), (3.0, -0.0)],
    ((1.5, 2.5), [3.0, 4.0]), [(0.5 * i, -1.0 * i, 2.0) for i in range(600)],
    # near misses, which go NumPy's way
    [(1.5, 2), (3.0, 4.0)], [(1.5, np.float64(2.0))], [(1.5, True)], [[(1.5,)], [(2.5,)]],
    [(), ()], [(1.5, 1j)], [1.5, 2], [np.float64(1.5), 2.5],
]


@pytest.mark.parametrize("obj", FLOAT_ROWS, ids=lambda o: repr(o)[:40])
def test_asarray_of_float_rows_matches_numpy(obj):
    """Lists of Python floats and of equal rows of them (center_of_mass's
    result, which the lesson turns into an array) are read in one pass;
    anything else is left to NumPy: same shape, dtype and values either way."""
    d = gp.asarray(obj)
    want = np.asarray(obj)
    assert d.shape == want.shape and d.dtype == want.dtype
    assert_same(d.get(), want)


@pytest.mark.parametrize("obj", [[(1.5, 2.5), (3.0,)], [1.5, (2.0,)], [(1.5, 2.5), 3.0]],
                         ids=repr)
def test_asarray_of_ragged_float_rows_raises_like_numpy(obj):
    with pytest.raises(ValueError):
        np.asarray(obj)
    with pytest.raises(ValueError):
        gp.asarray(obj)


def test_asarray_of_a_list_of_0d_device_arrays_stacks_them_on_the_device():
    values = [gp.asarray(np.float32(v)) for v in (1.5, -2.0, 3.25)]
    d = gp.asarray(values)
    assert isinstance(d, gp.ndarray)
    assert_same(d.get(), np.array([1.5, -2.0, 3.25], np.float32))
    nested = gp.asarray([[values[0], values[1]], [values[2], values[0]]])
    assert_same(nested.get(), np.array([[1.5, -2.0], [3.25, 1.5]], np.float32))
    rows = gp.asarray([gp.arange(3), gp.arange(3, 6)])
    assert_same(rows.get(), np.arange(6).reshape(2, 3))
    assert_same(gp.asarray(values, dtype=np.float64).get(), np.array([1.5, -2.0, 3.25]))


@pytest.mark.parametrize("n", SIZES)
def test_transfers_of_every_size_are_exact(rng, n):
    h = rng.standard_normal(n)
    d = gp.asarray(h)
    assert_same(d.get(), h)
    assert_same(gp.asnumpy(d), h)
    assert_same(d[::-3].get(), h[::-3])
    out = np.empty_like(h)
    assert d.get(out=out) is out
    assert_same(out, h)
    out32 = np.zeros(n, np.float32)
    assert gp.asnumpy(d, out=out32) is out32
    assert_same(out32, h.astype(np.float32))
    h2 = rng.standard_normal(n)
    assert d.set(h2) is None
    assert_same(d.get(), h2)


@pytest.mark.parametrize("n", SIZES)
def test_host_arrays_can_change_as_soon_as_asarray_returns(rng, n):
    # get() results of 64 KiB and more live in pinned memory, which the DMA
    # reads directly: asarray must be done with them when it returns.
    h = rng.standard_normal(n)
    pinned_copy = gp.asarray(h).get()
    d = gp.asarray(pinned_copy)
    pinned_copy[:] = 0
    h_again = h.copy()
    d2 = gp.asarray(h_again)
    h_again[:] = 0
    assert_same(d.get(), h)
    assert_same(d2.get(), h)


@pytest.mark.parametrize("out_kind", ["fortran", "strided", "big_endian", "int32", "complex"])
def test_get_into_out_of_another_layout_or_dtype(rng, out_kind):
    h = rng.standard_normal((1000, 3000)) * 100
    d = gp.asarray(h)
    out = {"fortran": np.zeros((1000, 3000), order="F"),
           "strided": np.zeros((1000, 6000))[:, ::2],
           "big_endian": np.zeros((1000, 3000), ">f8"),
           "int32": np.zeros((1000, 3000), np.int32),
           "complex": np.zeros((1000, 3000), np.complex64)}[out_kind]
    with np.errstate(all="ignore"):
        want = h.astype(out.dtype)
    assert d.get(out=out) is out
    assert out.dtype == want.dtype
    assert_same(out.astype(out.dtype.newbyteorder("=")), want)


def test_get_of_fortran_and_strided_device_arrays(rng):
    h = rng.standard_normal((300, 500))
    d = gp.asarray(np.asfortranarray(h))
    assert d.flags.f_contiguous
    got = d.get()
    assert got.flags.f_contiguous
    assert_same(got, h)
    out = np.empty((300, 500))
    d.get(out=out)
    assert_same(out, h)
    assert_same(d[::-2, 3::7].get(), h[::-2, 3::7])
    assert_same(d.T.get(), h.T)


@pytest.mark.parametrize("dtype", KINDS, ids=str)
def test_get_into_out_for_0d_and_empty_arrays(rng, dtype):
    for shape in [(), (0,), (4, 0)]:
        h = random_array(rng, shape, dtype)
        out = np.empty(shape, dtype)
        assert gp.asarray(h).get(out=out) is out
        assert_same(out, h)


def test_large_results_live_in_pinned_memory_returned_on_delete(rng):
    pinned = gp.get_default_pinned_memory_pool()
    h = rng.standard_normal(3_000_000)
    d = gp.asarray(h)
    gc.collect()  # pinned results held by other tests' reference cycles must not go mid-test
    before = pinned.used_bytes()
    got = d.get()
    assert pinned.used_bytes() >= before + got.nbytes
    assert got.flags.c_contiguous and got.flags.writeable and got.flags.aligned
    assert_same(got, h)
    free_before = pinned.n_free_blocks()
    del got
    assert pinned.used_bytes() == before
    # the block is cached for reuse, unless GPUARR_POOL=0 turned caching off
    # (the pinned pool too: n_free_blocks stays 0)
    assert pinned.n_free_blocks() == free_before + (1 if _core._pool_caching() else 0)


@pytest.mark.parametrize("n", [4096, 3_000_000])
def test_get_and_asnumpy_accept_a_stream(rng, n):
    h = rng.standard_normal(n)
    d = gp.asarray(h)
    for stream in (types.SimpleNamespace(ptr=0), gp.cuda.Stream()):
        assert_same(d.get(stream=stream), h)
        out = np.empty_like(h)
        assert gp.asnumpy(d, out=out, stream=stream) is out
        assert_same(out, h)


def test_set_copies_host_arrays_of_any_layout_and_byte_order(rng):
    d = gp.zeros((6, 8), np.float32)
    h = rng.standard_normal((8, 6)).astype(">f4").T
    d.set(h)
    assert_same(d.get(), h)
    base = gp.zeros((6, 16), np.float32)
    base[:, ::2].set(h)
    want = np.zeros((6, 16), np.float32)
    want[:, ::2] = h
    assert_same(base.get(), want)


def test_set_and_get_reject_bad_arguments():
    d = gp.zeros((6, 8), np.float32)
    with pytest.raises(ValueError, match="shape"):
        d.set(np.zeros((8, 6), np.float32))
    with pytest.raises(TypeError):
        d.set([[0.0] * 8] * 6)
    with pytest.raises(ValueError, match="shape"):
        d.get(out=np.empty((6, 9), np.float32))
    readonly = np.empty((6, 8), np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        d.get(out=readonly)
    with pytest.raises(TypeError):
        d.get(out=[0.0] * 48)


def test_numpy_refuses_to_copy_a_device_array_implicitly():
    d = gp.zeros(3)
    with pytest.raises(TypeError, match="get"):
        np.asarray(d)


def test_asnumpy_passes_host_values_through():
    h = np.arange(5)
    assert gp.asnumpy(h) is h
    assert_same(gp.asnumpy([1, 2]), np.array([1, 2]))


@pytest.mark.parametrize("value, dtype, spec", [
    (3.14159, np.float32, ".3e"), (-2.5, np.float64, "8.2f"), (42, np.int16, "05d"),
    (7, np.uint64, "x"), (True, np.bool_, ""), (1 - 2j, np.complex128, ".1f")])
def test_format_of_0d_arrays_formats_the_element_like_numpy(value, dtype, spec):
    h = np.asarray(value, dtype=dtype)
    assert format(gp.asarray(h), spec) == format(h, spec)
    assert f"{gp.asarray(h):{spec}}" == f"{h:{spec}}"


def test_format_of_nd_arrays_takes_only_the_empty_spec():
    d = gp.arange(3)
    assert format(d, "") == str(d)
    with pytest.raises(TypeError, match="format"):
        format(d, ".3e")
    with pytest.raises(TypeError, match="format"):
        format(np.arange(3), ".3e")     # the reference refuses too
