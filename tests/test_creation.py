"""Making device arrays and what they report about themselves: empty,
zeros, ones, full and *_like, arange, linspace, eye, identity, meshgrid,
array/asarray/ascontiguousarray with copy=, gpuarr.ndarray over existing
memory, and the attributes (shape, strides, flags, base, device, data, T,
len, repr) compared with NumPy's."""
import math

import numpy as np
import pytest

import gpuarr as gp
from _arrays import ALL_DTYPES, KINDS, assert_close, assert_same, is_view_of, random_array

pytestmark = pytest.mark.gpu


def assert_like_numpy_attributes(d, h):
    assert isinstance(d, gp.ndarray)
    assert isinstance(d.dtype, np.dtype)
    assert (d.shape, d.ndim, d.size, d.dtype, d.itemsize, d.nbytes) == \
        (h.shape, h.ndim, h.size, h.dtype, h.itemsize, h.nbytes)
    if h.size:  # NumPy 2.4 gives empty arrays zero strides; older versions do not
        assert d.strides == h.strides
    assert d.flags.c_contiguous == h.flags.c_contiguous
    assert d.flags.f_contiguous == h.flags.f_contiguous


# ------------------------------------------------------------ empty / zeros / ones / full

@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 1, 5)], ids=str)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_empty_zeros_ones_match_numpy(dtype, shape, order):
    for name in ("empty", "zeros", "ones"):
        d = getattr(gp, name)(shape, dtype=dtype, order=order)
        h = getattr(np, name)(shape, dtype=dtype, order=order)
        assert_like_numpy_attributes(d, h)
        assert d.flags.owndata and d.flags.writeable and d.base is None
        if name != "empty":
            assert_same(d.get(), h)


@pytest.mark.parametrize("shape", [4, (4,), [2, 3], np.int64(3), (np.int32(2), 2)], ids=repr)
def test_shape_arguments_accept_ints_and_sequences(shape):
    assert gp.zeros(shape).shape == np.zeros(shape).shape
    assert gp.zeros(shape).dtype == np.float64


def test_creation_rejects_bad_shapes_and_orders():
    with pytest.raises(ValueError, match="negative"):
        gp.zeros(-1)
    with pytest.raises(ValueError, match="negative"):
        gp.empty((2, -3))
    with pytest.raises(TypeError):
        gp.zeros((2, 1.5))
    with pytest.raises(TypeError):
        gp.ones("abc")
    with pytest.raises(ValueError):
        gp.zeros(3, order="X")


@pytest.mark.parametrize("fill, dtype", [
    (2.5, None), (7, None), (True, None), (1 - 2j, None), (np.float32(1.25), None),
    (np.uint8(200), None), (3.7, np.int32), (-1, np.int8), (0.1, np.float16), (2, np.complex64),
    (0, np.bool_), (5, np.bool_), (-3.5, np.float64), ([1, 2, 3], None), ([[1.5], [2.5]], np.int16),
], ids=repr)
def test_full_matches_numpy(fill, dtype):
    d = gp.full((2, 3), fill, dtype=dtype)
    assert_same(d.get(), np.full((2, 3), fill, dtype=dtype))


def test_full_with_a_device_fill_value_broadcasts_it():
    row = gp.arange(3.0)
    assert_same(gp.full((2, 3), row).get(), np.full((2, 3), np.arange(3.0)))
    assert_same(gp.full((2, 3), gp.asarray(np.int8(4))).get(), np.full((2, 3), np.int8(4)))


@pytest.mark.parametrize("order", ["C", "F"])
def test_like_functions_follow_the_prototype(rng, order):
    h = np.asarray(random_array(rng, (3, 5), np.float32), order=order)
    d = gp.asarray(h)
    for name, args in [("empty_like", ()), ("zeros_like", ()), ("ones_like", ()),
                       ("full_like", (7,)), ("full_like", (2.5,))]:
        got, want = getattr(gp, name)(d, *args), getattr(np, name)(h, *args)
        assert_like_numpy_attributes(got, want)
        assert got.flags.owndata
        if name != "empty_like":
            assert_same(got.get(), want)
    assert_same(gp.zeros_like(d, dtype=np.int16).get(), np.zeros_like(h, dtype=np.int16))
    assert_same(gp.ones_like(d, shape=(2, 2)).get(), np.ones_like(h, shape=(2, 2)))
    assert_same(gp.full_like(d, 3, dtype=np.complex64).get(), np.full_like(h, 3, dtype=np.complex64))


# ------------------------------------------------------------ arange / linspace

@pytest.mark.parametrize("args, kwargs", [
    ((10,), {}), ((2, 20, 3), {}), ((10, 0, -3), {}), ((-5, 5), {}), ((3, 3), {}), ((5, 0), {}),
    ((0, 10, 2), {"dtype": np.int8}), ((0, 200, 7), {"dtype": np.uint8}),
    ((10,), {"dtype": np.int32}), ((0.5, 5, 1.5), {"dtype": np.int64}),
    ((-0.5, 5, 1.5), {"dtype": np.int16}), ((0, 2), {"dtype": np.bool_}),
    ((np.int16(3), 9), {}), ((1, 11, 2), {"dtype": np.uint64}),
], ids=repr)
def test_integer_arange_matches_numpy_exactly(args, kwargs):
    assert_same(gp.arange(*args, **kwargs).get(), np.arange(*args, **kwargs))


@pytest.mark.parametrize("args, kwargs", [
    ((0, 1, 0.1), {}), ((1.5, 7.3, 0.7), {}), ((10.0,), {}), ((5,), {"dtype": np.float32}),
    ((0, 1, 0.1), {"dtype": np.float32}), ((-1, 1, 0.25), {"dtype": np.float16}),
    ((3, -2, -0.5), {}), ((0, 5, 0.5), {"dtype": np.complex128}), ((2.5, 2.5), {}),
    ((0, 1000, 0.37), {}), ((0.1, 100, 7), {"dtype": np.float16}), ((1, 2, 0.01), {"dtype": np.float16}),
    ((0.3, 9, 0.7), {"dtype": np.float32}),
], ids=repr)
def test_float_arange_matches_numpy(args, kwargs):
    got = gp.arange(*args, **kwargs).get()
    want = np.arange(*args, **kwargs)
    assert_close(got, want)
    if want.size:
        assert got[0] == want[0]


def test_arange_rejects_a_zero_step_and_non_numeric_dtypes():
    with pytest.raises(ZeroDivisionError):
        gp.arange(0, 10, 0)
    with pytest.raises(TypeError, match="U3"):
        gp.arange(3, dtype="U3")


@pytest.mark.parametrize("args, kwargs", [
    ((0, 1, 5), {}), ((0, 1, 5), {"endpoint": False}), ((-1, 10, 4), {"dtype": int}),
    ((0, 1, 5), {"dtype": int}), ((2.5, -3.5, 7), {}), ((0, 1, 1), {}), ((0, 1, 0), {}),
    ((1 + 1j, 2 + 3j, 4), {}), ((0, 1, 50), {"dtype": np.float32}), ((np.float32(0), 1, 9), {}),
    ((5, 5, 3), {}), ((0, 100, 11), {"dtype": np.uint8}), ((-2, 2, 9), {"dtype": np.float16}),
    ((0.1, 0.7, 1000), {}), ((3, 4, 6), {"endpoint": False, "dtype": np.float32}),
], ids=repr)
def test_linspace_matches_numpy(args, kwargs):
    got = gp.linspace(*args, **kwargs).get()
    want = np.linspace(*args, **kwargs)
    assert_close(got, want)
    if want.size:
        assert got[0] == want[0] and got[-1] == want[-1]


def test_linspace_retstep_matches_numpy():
    for args, kwargs in [((0, 1, 5), {}), ((2, 3, 4), {"endpoint": False}), ((0, 1, 1), {})]:
        d, step = gp.linspace(*args, retstep=True, **kwargs)
        h, want = np.linspace(*args, retstep=True, **kwargs)
        assert_close(d.get(), h)
        assert step == want or (math.isnan(step) and math.isnan(want))
    with pytest.raises(ValueError):
        gp.linspace(0, 1, -1)


# ------------------------------------------------------------ eye / identity / meshgrid

@pytest.mark.parametrize("args", [(4,), (3, 5), (5, 3), (4, 4, 1), (4, 4, -2), (3, 5, 2), (5, 3, -1),
                                  (3, 5, 5), (4, 4, -4), (4, 4, 10), (0,), (3, 0), (1,), (6, 2, -5)],
                         ids=str)
@pytest.mark.parametrize("dtype", [float, np.int32, np.bool_, np.complex64], ids=str)
def test_eye_matches_numpy(args, dtype):
    assert_same(gp.eye(*args, dtype=dtype).get(), np.eye(*args, dtype=dtype))


def test_eye_order_and_identity():
    f = gp.eye(3, 4, k=1, order="F")
    assert f.flags.f_contiguous
    assert_same(f.get(), np.eye(3, 4, k=1))
    for dtype in (float, np.uint8, np.bool_):
        assert_same(gp.identity(4, dtype=dtype).get(), np.identity(4, dtype=dtype))


@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_meshgrid_matches_numpy(rng, n, indexing, sparse, copy):
    hs = [random_array(rng, (k,), np.float32) for k in (3, 4, 5)[:n]]
    got = gp.meshgrid(*[gp.asarray(h) for h in hs], indexing=indexing, sparse=sparse, copy=copy)
    want = np.meshgrid(*hs, indexing=indexing, sparse=sparse, copy=copy)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g.get(), w)
        if copy:
            assert g.flags.writeable and g.flags.c_contiguous


def test_meshgrid_rejects_unknown_indexing():
    with pytest.raises(ValueError):
        gp.meshgrid(gp.arange(2), gp.arange(3), indexing="yx")


# ------------------------------------------------------------ array / asarray and copy=

def test_array_and_asarray_copy_only_when_asked_or_needed(rng):
    h = random_array(rng, (4, 6), np.int32)
    d = gp.asarray(h)
    assert gp.asarray(d) is d
    assert gp.asarray(d, dtype=np.int32) is d
    assert gp.array(d, copy=None) is d
    assert gp.array(d, copy=False) is d
    c = gp.array(d)
    assert c is not d and c.flags.owndata and c.base is None and c.data.ptr != d.data.ptr
    c.fill(0)
    assert_same(d.get(), h)
    f = gp.asarray(d, dtype=np.float64)
    assert f.flags.owndata
    assert_same(f.get(), h.astype(np.float64))
    with pytest.raises(ValueError, match="copy"):
        gp.asarray(d, dtype=np.float64, copy=False)
    with pytest.raises(ValueError, match="copy"):
        gp.asarray(h, copy=False)
    with pytest.raises(ValueError, match="copy"):
        gp.array(d.T, order="C", copy=False)
    f = gp.asarray(d, order="F")
    assert f.flags.f_contiguous and not f.flags.c_contiguous
    assert_same(f.get(), h)
    assert gp.asarray(f, order="F") is f and gp.asarray(f, order="K") is f


def test_ascontiguousarray_and_asfortranarray(rng):
    h = random_array(rng, (4, 6), np.float64)
    d = gp.asarray(h)
    assert gp.ascontiguousarray(d) is d
    c = gp.ascontiguousarray(d.T)
    assert c.flags.c_contiguous and c.flags.owndata
    assert_same(c.get(), np.ascontiguousarray(h.T))
    f = gp.asfortranarray(d)
    assert f.flags.f_contiguous and not f.flags.c_contiguous
    assert_same(f.get(), h)
    t = d.T
    assert gp.asfortranarray(t) is t and gp.asfortranarray(f) is f
    s = gp.ascontiguousarray(d[:, ::-2], dtype=np.float32)
    assert s.flags.c_contiguous
    assert_same(s.get(), np.ascontiguousarray(h[:, ::-2], dtype=np.float32))
    zero_d = gp.ascontiguousarray(gp.asarray(5.0))
    assert zero_d.shape == np.ascontiguousarray(np.asarray(5.0)).shape
    assert_same(gp.ascontiguousarray([[1, 2], [3, 4]]).get(), np.ascontiguousarray([[1, 2], [3, 4]]))


def test_array_ndmin_pads_leading_dimensions(rng):
    h = random_array(rng, (3,), np.int16)
    d = gp.asarray(h)
    for ndmin in (0, 1, 2, 4):
        got = gp.array(d, ndmin=ndmin)
        want = np.array(h, ndmin=ndmin)
        assert got.shape == want.shape
        assert_same(got.get(), want)


# ------------------------------------------------------------ attributes

def test_attributes_of_views_match_numpy(rng):
    h = random_array(rng, (4, 6, 5), np.float32)
    d = gp.asarray(h)
    assert d.flags.owndata and d.base is None
    for index in [(), (slice(None, None, 2),), (1,), (Ellipsis, slice(None, None, -1)),
                  (None, slice(1, 3), Ellipsis, 2), (slice(3, 0, -2), slice(None), 4)]:
        dv, hv = d[index], h[index]
        assert_like_numpy_attributes(dv, hv)
        assert not dv.flags.owndata and dv.flags.writeable
        assert dv.base is d
        assert dv.data.ptr - d.data.ptr == hv.ctypes.data - h.ctypes.data
        assert_same(dv.get(), hv)


@pytest.mark.parametrize("dtype", KINDS, ids=str)
def test_T_len_device_and_data(rng, dtype):
    h = random_array(rng, (3, 5, 2), dtype)
    d = gp.asarray(h)
    assert_like_numpy_attributes(d.T, h.T)
    assert d.T.base is d and d.T.data.ptr == d.data.ptr
    assert_same(d.T.get(), h.T)
    assert len(d) == 3 and len(d[0]) == 5
    with pytest.raises(TypeError):
        len(gp.asarray(h[0, 0, 0]))
    assert d.device == gp.cuda.Device(gp.cuda.get_device_id())
    assert d.device.id == gp.cuda.get_device_id()
    assert isinstance(d.data.ptr, int) and d.data.ptr != 0
    assert d.data.device_id == d.device.id
    assert [x.get().tolist() for x in d] == [row.tolist() for row in h]


def test_flags_support_numpy_style_keys():
    d = gp.zeros((3, 4))
    assert d.flags["C_CONTIGUOUS"] and d.flags["C"] and not d.flags["F_CONTIGUOUS"]
    assert d.flags["OWNDATA"] and d.flags["WRITEABLE"] and d.flags["W"]
    with pytest.raises(KeyError):
        d.flags["ALIGNED_TO_MARS"]


def test_ndarray_over_existing_memory_shares_it(rng):
    h = random_array(rng, (4, 6), np.float64)
    d = gp.asarray(h)
    v = gp.ndarray((6, 4), np.float64, memptr=d.data, strides=(8, 48))
    assert not v.flags.owndata and v.flags.f_contiguous
    assert_same(v.get(), h.T)
    v[0, 1] = 42.0
    h[1, 0] = 42.0
    assert_same(d.get(), h)
    del d
    assert_same(v.get(), h.T)
    e = gp.ndarray((2, 3), dtype=np.int8)
    assert e.shape == (2, 3) and e.dtype == np.int8 and e.flags.owndata
    with pytest.raises(ValueError, match="negative"):
        gp.ndarray((-1, 4), np.float64, memptr=v.data)
    with pytest.raises(TypeError, match="memptr"):
        gp.ndarray((2,), np.float64, memptr=object())


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_repr_and_str_print_values_like_numpy(rng, dtype):
    for shape in [(), (5,), (3, 4), (0, 2), (2000,)]:
        h = random_array(rng, shape, dtype)
        d = gp.asarray(h)
        assert repr(d) == repr(h)
        assert str(d) == str(h)
    h = random_array(rng, (6, 8), dtype)[::-2, 1::3]
    assert repr(gp.asarray(h)[...]) == repr(h)


@pytest.mark.gpu(devices=2)
def test_repr_names_the_device_when_not_device_0():
    with gp.cuda.Device(1):
        d = gp.arange(3)
    assert d.device.id == 1
    assert repr(d) == "array([0, 1, 2], device=1)"
    assert str(d) == "[0 1 2]"
    assert repr(gp.zeros(2)) == "array([0., 0.])"


def test_views_keep_their_memory_alive(rng):
    h = random_array(rng, (100,), np.int64)
    d = gp.asarray(h)
    v = d[10:20]
    w = v[::-1]
    assert is_view_of(w, d)
    del d
    assert_same(w.get(), h[10:20][::-1])
