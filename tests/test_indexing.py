"""Basic indexing: integers, slices with any step, Ellipsis and None make
views (nothing moves), and assignment through the same indexing from
scalars, host arrays and device arrays, with broadcasting, dtype conversion
and overlapping source and destination -- all compared with NumPy."""
import numpy as np
import pytest

import gpuarr as gp
from _arrays import (ALL_DTYPES, KINDS, assert_same, assert_view_like, cast_source, is_view_of,
                     random_array)

pytestmark = pytest.mark.gpu

SHAPE = (5, 6, 7)
INDICES = [
    0, -1, 4, np.int64(2), np.uint8(1), slice(None), slice(1, 4), slice(None, None, 2),
    slice(None, None, -1), slice(-2, None, -3), slice(5, 1, -2), slice(10, 20), slice(3, 3),
    slice(-100, 100, 7), (1, 2), (-1, slice(None, None, -2)), (slice(1, None), 0, slice(None, None, 3)),
    Ellipsis, (Ellipsis, 1), (0, Ellipsis), (None,), (None, 0, None, Ellipsis, None),
    (slice(None), None, 2), (Ellipsis, None), (1, 2, 3), (-5, -6, -7), (np.int32(4), -1, np.int16(0)),
    (Ellipsis, slice(2, -1), None), (), (slice(None, None, -4), Ellipsis, slice(None, None, -3)),
    (2, slice(4, 0, -1), Ellipsis, None),
]


def numpy_view(h, index):
    """h[index] as an array view (NumPy gives a scalar when every axis gets an
    integer; an Ellipsis turns that into a 0-d view)."""
    v = h[index]
    if not isinstance(v, np.ndarray):
        v = h[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
    return v


@pytest.mark.parametrize("index", INDICES, ids=repr)
@pytest.mark.parametrize("dtype", KINDS, ids=str)
def test_basic_indexing_gives_the_numpy_view(rng, dtype, index):
    h = random_array(rng, SHAPE, dtype)
    d = gp.asarray(h)
    hv = numpy_view(h, index)
    dv = d[index]
    assert isinstance(dv, gp.ndarray)
    assert is_view_of(dv, d) and not dv.flags.owndata and dv.flags.writeable
    assert_view_like(dv, d, hv, h)


def test_chained_indexing_of_views_matches_numpy(rng):
    h = random_array(rng, (8, 9, 10), np.float32)
    d = gp.asarray(h)
    dv, hv = d, h
    for index in [slice(None, None, -1), (Ellipsis, slice(1, None, 2)), (None, 3), (0, slice(6, 0, -2)),
                  slice(None, None, -1)]:
        dv, hv = dv[index], hv[index]
        assert dv.base is d
        assert dv.strides == hv.strides
        assert dv.data.ptr - d.data.ptr == hv.ctypes.data - h.ctypes.data
        assert_same(dv.get(), hv)


def test_integer_indexing_gives_0d_device_arrays(rng):
    h = random_array(rng, (4, 3), np.float64)
    d = gp.asarray(h)
    x = d[2, 1]
    assert isinstance(x, gp.ndarray) and x.shape == () and x.base is d
    assert float(x) == h[2, 1]
    assert d[gp.asarray(3)].shape == (3,)
    assert_same(d[gp.asarray(np.int8(-1)), gp.asarray(np.uint32(2))].get(), h[-1, 2])
    z = gp.asarray(np.float32(2.5))
    assert z[()].shape == () and z[...].shape == () and z[None].shape == (1,)
    assert float(z[()]) == 2.5 and z[None].get().tolist() == [2.5]


@pytest.mark.parametrize("index", [np.array(0), [0], (None, np.array(0), Ellipsis),
                                   slice(0, 1), 0], ids=repr)
def test_python_scalars_assign_by_numpys_conversion(rng, index):
    """A Python scalar converts as np.asarray(value, dtype) does, whatever
    the index: TypeError for a complex into integers, OverflowError for an
    int beyond the type, truncation for a float; nothing written on error."""
    h = random_array(rng, (3,), np.int8)
    d = gp.asarray(h)
    for value, error in ((1j, TypeError), (300, OverflowError), (-129, OverflowError)):
        with pytest.raises(error):
            h[index] = value
        with pytest.raises(error):
            d[index] = value
        assert_same(d.get(), h)
    h[index] = 1.5
    d[index] = 1.5
    assert_same(d.get(), h)
    with pytest.raises(OverflowError):
        gp.asarray(-1, dtype=np.uint8)
    with pytest.raises(TypeError):
        gp.asarray([1j], dtype=np.int16)


@pytest.mark.parametrize("device_index", [False, True])
def test_out_of_range_array_index_raises_where_the_result_is_empty(device_index):
    """Every index is checked even when an empty axis beside the indexed
    one makes the result empty (NumPy raises IndexError)."""
    h = np.zeros((2, 0), np.bool_)
    d = gp.asarray(h)
    idx = np.array([2])
    didx = gp.asarray(idx) if device_index else idx
    with pytest.raises(IndexError):
        h[idx, ...]
    with pytest.raises(IndexError, match="out of bounds"):
        d[didx, ...]
    with pytest.raises(IndexError, match="out of bounds"):
        d[didx, ...] = True
    assert d[(gp.asarray([1]) if device_index else np.array([1])), ...].shape == (1, 0)


# Index arrays that broadcast to no element beside one out of range: NumPy
# reads, and so checks, no index then (get and set); a plain integer is
# checked all the same.  The first was hypothesis's find (test_properties).
EMPTY_BROADCASTS = [((1, 0, 2), lambda xp: (xp.zeros((1, 0), bool), np.array([2]))),
                    ((3, 4), lambda xp: (xp.asarray(np.array([], np.int64)), np.array([9]))),
                    ((3, 4), lambda xp: (xp.zeros(3, bool), [9])),
                    ((3, 4), lambda xp: (np.array([9]), xp.asarray(np.array([], np.int64)))),
                    ((3, 4), lambda xp: (slice(None), np.array([[9]])[:0]))]


@pytest.mark.parametrize("xp", [np, gp], ids=["host", "device"])
@pytest.mark.parametrize("shape, index", EMPTY_BROADCASTS)
def test_out_of_range_host_index_beside_an_empty_broadcast(shape, index, xp):
    h = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    d = gp.asarray(h)
    want = h[index(np)]
    got = d[index(xp)]
    assert_same(got.get(), want)
    h[index(np)] = -1
    d[index(xp)] = -1
    assert_same(d.get(), h)
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 1"):
        d[np.array([0]), np.array([9])]
    with pytest.raises(IndexError, match="out of bounds"):
        d[xp.asarray(np.array([], np.int64)), 9]


@pytest.mark.parametrize("index", [5, -6, (0, 6), (0, 0, 7), (0, 0, -8), (slice(None), -7)], ids=repr)
def test_out_of_range_integers_raise_index_error(index):
    d = gp.zeros(SHAPE)
    with pytest.raises(IndexError, match="out of bounds"):
        d[index]
    with pytest.raises(IndexError, match="out of bounds"):
        d[index] = 1


@pytest.mark.parametrize("index", [(0, 0, 0, 0), (Ellipsis, 0, 0, 0, 0), (None, 1, 2, 3, 4)], ids=repr)
def test_too_many_indices_raise_index_error(index):
    with pytest.raises(IndexError, match="too many indices"):
        gp.zeros(SHAPE)[index]


def test_invalid_indices_raise_like_numpy():
    d = gp.zeros(SHAPE)
    with pytest.raises(IndexError, match="too many indices"):
        gp.zeros(())[0]
    with pytest.raises(IndexError, match="single ellipsis"):
        d[..., ...]
    for bad in (1.0, "a", 2.5j, 10**20, (0, -10**30)):
        with pytest.raises(IndexError):
            d[bad]
    with pytest.raises(IndexError):
        d[gp.asarray(1.0)]
    with pytest.raises(ValueError):
        d[::0]
    with pytest.raises(ValueError):
        del d[0]


# ------------------------------------------------------------ assignment

@pytest.mark.parametrize("value", [1, 2.75, True, np.int8(-3), np.float32(0.5)], ids=repr)
@pytest.mark.parametrize("index", [(slice(8, None, 16), slice(8, None, 16)), Ellipsis, 3,
                                   (slice(None, None, -3), 5), (None, slice(2, 9), Ellipsis),
                                   (-1, -1), (slice(30, 2, -7), slice(None, None, 5))], ids=repr)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_scalar_assignment_matches_numpy(dtype, index, value):
    h = np.zeros((32, 32), dtype)
    d = gp.zeros((32, 32), dtype)
    h[index] = value
    d[index] = value
    assert_same(d.get(), h)


def test_lesson_delta_grid_assignment():
    deltas = gp.zeros((2048, 2048))
    deltas[8::16, 8::16] = 1
    want = np.zeros((2048, 2048))
    want[8::16, 8::16] = 1
    assert_same(deltas.get(), want)


@pytest.mark.parametrize("dtype", KINDS, ids=str)
def test_assignment_from_host_values_broadcasts(rng, dtype):
    h = random_array(rng, (6, 8), dtype)
    d = gp.asarray(h)
    cases = [
        (np.s_[:, 1:5], random_array(rng, (4,), dtype)),
        (np.s_[::2], random_array(rng, (3, 1), dtype)),
        (np.s_[2], random_array(rng, (1, 8), dtype)),
        (np.s_[...], cast_source(rng, (8,), np.int16, dtype)),
        (np.s_[1:3, ::-1], random_array(rng, (8, 2), dtype).T),
        (np.s_[0, 0], np.asarray(random_array(rng, (), dtype))),
        (np.s_[:, 2], [1, 0, 1, 0, 1, 1]),
        (np.s_[4:, :3], cast_source(rng, (2, 3), np.float64, dtype)),
        (np.s_[::-1, 7], random_array(rng, (6,), dtype).astype(dtype.newbyteorder(">"))),
        (np.s_[None, 1, None], random_array(rng, (1, 1, 8), dtype)),
        (np.s_[5], random_array(rng, (16,), dtype)[::-2]),
    ]
    for index, value in cases:
        h[index] = value
        d[index] = value
        assert_same(d.get(), h)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("dst", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("src", ALL_DTYPES, ids=str)
def test_assignment_from_device_arrays_broadcasts_and_converts(rng, src, dst):
    h = np.zeros((4, 6), dst)
    d = gp.zeros((4, 6), dst)
    value = cast_source(rng, (1, 3), src, dst)
    dvalue = gp.asarray(value)
    h[:, ::-2] = value
    d[:, ::-2] = dvalue
    h[1] = value[0, ::-1].repeat(2)
    d[1] = gp.asarray(value[0, ::-1].repeat(2))
    row = cast_source(rng, (6,), src, dst)
    h[2:, :] = row
    d[2:, :] = gp.asarray(row)
    assert_same(d.get(), h)


@pytest.mark.parametrize("statement", [
    "a[1:] = a[:-1]", "a[:-1] = a[1:]", "a[::-1] = a", "a[::2] = a[1::2]", "a[2:8] = a[0:6]",
    "a[3:] = a[:-3][::-1]", "a[:] = a", "a[1::3] = a[::3]",
])
@pytest.mark.parametrize("dtype", [np.int8, np.float64, np.complex128], ids=str)
def test_overlapping_self_assignment_1d(rng, dtype, statement):
    h = random_array(rng, (12,), dtype)
    d = gp.asarray(h)
    exec(statement, {"a": h})
    exec(statement, {"a": d})
    assert_same(d.get(), h)


@pytest.mark.parametrize("statement", [
    "a[1:, :] = a[:-1, :]", "a[...] = a.T", "a[:, ::-1] = a", "a[1:, 1:] = a[:-1, :-1]",
    "a[0] = a[:, 0]", "a[::2] = a[1::2, ::-1]", "a[:, 2] = a[3]", "a[...] = a[::-1, ::-1].T",
])
def test_overlapping_self_assignment_2d(rng, statement):
    h = random_array(rng, (6, 6), np.float32)
    d = gp.asarray(h)
    exec(statement, {"a": h})
    exec(statement, {"a": d})
    assert_same(d.get(), h)


def test_assignment_to_0d_arrays():
    z = gp.zeros((), np.int32)
    z[()] = 5
    assert int(z) == 5
    z[...] = gp.asarray(np.int64(7))
    assert int(z) == 7
    z[...] = np.array(9.9)
    assert z.item() == 9


def test_assignment_shape_mismatch_raises_value_error():
    d = gp.zeros(5)
    with pytest.raises(ValueError, match="broadcast"):
        d[:2] = np.ones(3)
    with pytest.raises(ValueError, match="broadcast"):
        d[...] = gp.ones((2, 5))
    with pytest.raises(ValueError, match="broadcast"):
        gp.zeros((3, 4))[:, 1] = gp.ones(4)
    with pytest.raises(ValueError):
        d[0] = [1, 2]


def test_assignment_to_read_only_views_raises():
    source = gp.arange(3.0)
    b = gp.broadcast_to(source, (4, 3))
    m = gp.zeros((3, 3))
    diag = m.diagonal()
    for ro in (b, diag, b[1:], b.T, diag[::-1]):
        assert not ro.flags.writeable
    for ro in (b, diag):
        with pytest.raises(ValueError, match="read-only"):
            ro[0] = 1
        with pytest.raises(ValueError, match="read-only"):
            ro[...] = np.ones(ro.shape)
        with pytest.raises(ValueError, match="read-only"):
            ro[...] = gp.ones(ro.shape)
        with pytest.raises(ValueError, match="read-only"):
            ro.fill(2)
        with pytest.raises(ValueError, match="read-only"):
            ro.set(np.ones(ro.shape))
    with pytest.raises(ValueError, match="read-only"):
        b[1:][0, 0] = 5
    assert_same(source.get(), np.arange(3.0))
    assert_same(m.get(), np.zeros((3, 3)))
