"""Dtypes on the device: the fourteen supported ones (as numpy.dtype
objects, always native byte order), refusal of everything else with a
TypeError naming the dtype, NumPy's re-exported names, conversions with
astype (casting=, copy=, order=), view(dtype), fill, and 0-d arrays as
Python numbers."""
import math

import numpy as np
import pytest

import gpuarr as gp
from _arrays import ALL_DTYPES, KINDS, assert_same, cast_source, is_view_of, random_array

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("spec, want", [
    (np.bool_, np.bool_), (bool, np.bool_), ("?", np.bool_), (np.int8, np.int8), ("i2", np.int16),
    ("<i4", np.int32), (int, np.int64), ("int64", np.int64), (np.uint8, np.uint8), ("u2", np.uint16),
    ("uint32", np.uint32), (np.uint64, np.uint64), ("e", np.float16), ("f4", np.float32),
    (float, np.float64), (">f8", np.float64), ("c8", np.complex64), (complex, np.complex128),
    (">c16", np.complex128), (np.dtype("float32"), np.float32), (">i2", np.int16),
], ids=repr)
def test_supported_dtype_specifications(spec, want):
    d = gp.zeros(3, dtype=spec)
    assert isinstance(d.dtype, np.dtype)
    assert d.dtype == np.dtype(want) and d.dtype.isnative
    assert d.itemsize == np.dtype(want).itemsize


@pytest.mark.parametrize("dtype", ["U3", "S4", object, "M8[ns]", "m8[s]", [("a", "i4"), ("b", "f8")],
                                   "V8", np.longdouble, np.clongdouble], ids=repr)
def test_non_numeric_dtypes_raise_type_error_naming_the_dtype(dtype):
    dt = np.dtype(dtype)
    calls = [
        lambda: gp.zeros(3, dtype=dtype), lambda: gp.empty((2, 2), dtype=dtype),
        lambda: gp.ones(1, dtype=dtype), lambda: gp.full(2, 0, dtype=dtype),
        lambda: gp.asarray(np.zeros(3, dtype=dt)), lambda: gp.asarray([1, 2], dtype=dtype),
        lambda: gp.arange(3, dtype=dtype), lambda: gp.zeros(3).astype(dtype),
        lambda: gp.zeros(3).view(dtype), lambda: gp.zeros_like(gp.zeros(3), dtype=dtype),
        lambda: gp.eye(2, dtype=dtype),
    ]
    for call in calls:
        with pytest.raises(TypeError) as exc:
            call()
        assert repr(dt) in str(exc.value)


def test_host_values_of_unsupported_dtypes_are_refused():
    for value in (["a", "b"], np.array([b"xy"]), np.array([np.datetime64("2024-01-01")]),
                  np.array([None, 1], dtype=object)):
        with pytest.raises(TypeError, match="does not support dtype"):
            gp.asarray(value)


def test_numpy_names_are_re_exported():
    assert gp.dtype is np.dtype
    for name in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64", "complex64", "complex128", "intp", "number",
                 "integer", "floating", "complexfloating"):
        assert getattr(gp, name) is getattr(np, name), name
    # finfo and iinfo are gpuarr's own (they take device arrays too) and give NumPy's answers
    assert gp.finfo(gp.float32) == np.finfo(np.float32) and gp.finfo("f8").eps == np.finfo("f8").eps
    assert (gp.iinfo(gp.int8).min, gp.iinfo(gp.int8).max, gp.iinfo("u2").max) == (-128, 127, 65535)
    assert gp.bool is np.bool
    assert gp.newaxis is None
    assert gp.pi == math.pi and gp.e == math.e and gp.inf == math.inf and math.isnan(gp.nan)
    assert gp.zeros(2, dtype=gp.float32).dtype == gp.dtype("float32")


# ------------------------------------------------------------ astype

@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("dst", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("src", ALL_DTYPES, ids=str)
def test_astype_converts_like_numpy(rng, src, dst):
    h = cast_source(rng, (5, 7), src, dst)
    d = gp.asarray(h)
    got = d.astype(dst)
    assert got.dtype == dst and got.flags.owndata
    assert_same(got.get(), h.astype(dst))
    assert_same(d[::-2, 1::3].astype(dst).get(), h[::-2, 1::3].astype(dst))


@pytest.mark.parametrize("src, dst, casting, allowed", [
    (np.int32, np.float64, "safe", True), (np.float64, np.int32, "safe", False),
    (np.float64, np.float32, "same_kind", True), (np.float64, np.int64, "same_kind", False),
    (np.float32, np.float32, "no", True), (np.float32, np.float64, "no", False),
    (np.int8, np.uint8, "safe", False), (np.uint8, np.int16, "safe", True),
    (np.complex128, np.float64, "same_kind", False), (np.bool_, np.float16, "safe", True),
    (np.float64, np.bool_, "unsafe", True), (np.int64, np.int64, "equiv", True),
])
def test_astype_casting_rules_match_numpy(src, dst, casting, allowed):
    assert np.can_cast(src, dst, casting) == allowed
    h = np.arange(6).astype(src)
    d = gp.asarray(h)
    if allowed:
        assert_same(d.astype(dst, casting=casting).get(), h.astype(dst, casting=casting))
    else:
        with pytest.raises(TypeError, match="Cannot cast"):
            d.astype(dst, casting=casting)
    with pytest.raises(ValueError):
        d.astype(dst, casting="sometimes")


def test_astype_copy_and_order(rng):
    h = random_array(rng, (3, 4), np.float32)
    d = gp.asarray(h)
    assert d.astype(np.float32, copy=False) is d
    c = d.astype(np.float32)
    assert c is not d and not is_view_of(c, d)
    f = d.astype(np.float64, order="F")
    assert f.flags.f_contiguous and not f.flags.c_contiguous
    assert_same(f.get(), h.astype(np.float64))
    k = d.T.astype(np.int16)
    assert k.flags.f_contiguous
    assert d.T.astype(np.float32, copy=False).base is d


# ------------------------------------------------------------ view, fill, real/imag

@pytest.mark.parametrize("src, dst", [
    (np.float64, np.int64), (np.float64, np.uint8), (np.float32, np.complex64), (np.int16, np.float16),
    (np.uint8, np.int32), (np.complex128, np.float64), (np.int64, np.int64), (np.bool_, np.int8),
    (np.complex64, np.uint16),
], ids=str)
def test_view_reinterprets_the_bytes(rng, src, dst):
    h = random_array(rng, (3, 8), src)
    d = gp.asarray(h)
    for dv, hv in [(d.view(dst), h.view(dst)), (d[1:, :].view(dst), h[1:, :].view(dst)),
                   (d[::-1].view(dst), h[::-1].view(dst))]:
        assert dv.dtype == hv.dtype and dv.shape == hv.shape and dv.strides == hv.strides
        assert is_view_of(dv, d)
        assert_same(dv.get(), hv)


def test_invalid_views_raise():
    d = gp.zeros((3, 5), np.int16)
    with pytest.raises(ValueError):
        d.view(np.int32)
    with pytest.raises(ValueError):
        gp.zeros((3, 4))[:, ::2].view(np.float32)
    with pytest.raises(ValueError):
        gp.zeros(()).view(np.float32)
    assert gp.zeros(()).view(np.int64).shape == ()
    column = gp.zeros((3, 4))[:, ::4]  # a last axis of length 1 need not be contiguous
    assert column.view(np.int32).shape == (3, 2) and column.view(np.int32).strides == (32, 4)


@pytest.mark.parametrize("value", [0, 1, -2, 3.75, True, False, np.float32(-1.5), np.int16(7)], ids=repr)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_fill_matches_numpy(dtype, value):
    if dtype.kind == "u" and value in (-2, np.float32(-1.5)):
        pytest.skip("negative values do not convert to unsigned types the same way everywhere")
    h = np.empty((5, 6), dtype)
    d = gp.empty((5, 6), dtype)
    h.fill(value)
    d.fill(value)
    assert_same(d.get(), h)
    h[::2, 1::3].fill(not value)
    d[::2, 1::3].fill(not value)
    assert_same(d.get(), h)


def test_fill_with_complex_and_0d_device_values():
    d = gp.zeros(4, np.complex64)
    d.fill(1 - 2j)
    assert_same(d.get(), np.full(4, 1 - 2j, np.complex64))
    d.fill(gp.asarray(np.float64(3.5)))
    assert_same(d.get(), np.full(4, 3.5, np.complex64))
    with pytest.raises(ValueError):
        d.fill(gp.zeros(2))


def test_real_and_imag(rng):
    h = random_array(rng, (3, 4), np.complex64)
    d = gp.asarray(h)
    assert_same(d.real.get(), h.real)
    assert_same(d.imag.get(), h.imag)
    assert is_view_of(d.real, d) and is_view_of(d.imag, d)
    assert d.imag.strides == h.imag.strides
    r = gp.asarray(random_array(rng, (3,), np.float32))
    assert_same(r.imag.get(), np.zeros(3, np.float32))


# ------------------------------------------------------------ 0-d arrays as numbers

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_0d_arrays_convert_to_python_numbers_like_numpy(rng, dtype):
    h = random_array(rng, (), dtype)
    d = gp.asarray(h)
    assert d.shape == () and d.ndim == 0 and d.size == 1
    item = d.item()
    assert item == h.item() and type(item) is type(h.item())
    assert d.tolist() == h.tolist() and type(d.tolist()) is type(h.tolist())
    assert complex(d) == complex(h)
    assert bool(d) == bool(h)
    if dtype.kind != "c":
        assert float(d) == float(h)
        assert int(d) == int(h)


def test_tolist_of_n_d_arrays_matches_numpy(rng):
    for dtype in KINDS:
        h = random_array(rng, (2, 3, 2), dtype)
        assert gp.asarray(h).tolist() == h.tolist()
        assert gp.asarray(h)[:, ::-2].tolist() == h[:, ::-2].tolist()
    assert gp.zeros((2, 0)).tolist() == [[], []]


def test_truth_values_of_arrays():
    assert bool(gp.asarray([3])) is True
    assert bool(gp.zeros(())) is False
    with pytest.raises(ValueError, match="ambiguous"):
        bool(gp.zeros(2))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(gp.zeros(0))
    with pytest.raises(TypeError):
        float(gp.zeros(3))
    with pytest.raises(TypeError):
        int(gp.zeros((2, 2)))
