"""cumsum and cumprod against NumPy: every dtype kind, axis None / int /
negative, layouts (transposed, reversed, sliced), rows short and long
(one chunk, chunked, two levels of chunk totals), dtype= and out=, NaN,
empty and 0-d inputs, argument errors; the ndarray methods and NumPy's
dispatch (np.cumsum, np.add.accumulate).  Host-side checks (argument
parsing, result dtypes) run without a GPU."""
import warnings

import numpy as np
import pytest

import gpuarr as gp
from gpuarr._reductions import _result_dtype

from _arrays import base_layouts


DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int32, np.uint16, np.int64, np.uint64,
                                np.float16, np.float32, np.float64, np.complex64,
                                np.complex128)]


def sample(rng, shape, dtype, func):
    """Fresh data: bools, integers over their whole range (sums and products
    wrap exactly), floats of magnitude ~10 (cumsum) or near +-1 (cumprod;
    complex factors of modulus near 1 too, so that running products of
    millions of them stay far from overflow and underflow)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < (0.97 if func == "cumprod" else 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)

    def part():
        if func == "cumprod":
            return rng.uniform(0.99, 1.01, shape) * rng.choice([-1, 1], shape)
        return rng.standard_normal(shape) * 10
    a = part() if dtype.kind == "f" else part() + 1j * part()
    if dtype.kind == "c" and func == "cumprod":
        a /= np.sqrt(2)
    return a.astype(dtype)


def reference(func, host, **kw):
    """NumPy's result, and the error to allow: integers exactly; floats from
    the float64 (complex128) scan, within a few units of rounding of the
    running sum of magnitudes (NumPy adds in order, the device in a tree);
    products within one rounding per factor (in any order, element i of a
    running product is i - 1 multiplications)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np, func)(host, **kw)
        if want.dtype.kind not in "fc":
            return want, None
        wide = np.complex128 if want.dtype.kind == "c" else np.float64
        exact = getattr(np, func)(host.astype(wide), **kw)
        eps = np.finfo(want.dtype).eps
        axis = kw.get("axis")
        n = host.size if axis is None else host.shape[axis]
        if func == "cumsum":
            scale = np.cumsum(np.abs(host.astype(wide)), **kw)
            tol = scale * eps * (8 + 2 * np.log2(max(n, 2)))
            if want.dtype == np.float16:
                tol = scale * eps * (4 + n)   # NumPy's float16 loop rounds every step
        else:
            # the position along the scan: the number of factors
            shape = [1] * exact.ndim
            if exact.ndim:
                shape[0 if axis is None else axis] = -1
            count = np.arange(1, n + 1).reshape(shape) if exact.ndim else 1
            tol = np.abs(exact) * eps * (4 + 2 * count)
        return exact.astype(want.dtype), tol


def assert_scan(got, want, tol):
    assert isinstance(got, gp.ndarray), type(got)
    host = got.get()
    assert host.dtype == want.dtype, (host.dtype, want.dtype)
    assert host.shape == want.shape, (host.shape, want.shape)
    if tol is None:
        np.testing.assert_array_equal(host, want)
        return
    h, w = host.astype(np.complex128), want.astype(np.complex128)
    np.testing.assert_array_equal(np.isnan(h), np.isnan(w))
    ok = np.isfinite(w)
    np.testing.assert_array_equal(h[~ok & ~np.isnan(w)], w[~ok & ~np.isnan(w)])
    err = np.abs(h - w)[ok]
    bound = np.broadcast_to(tol, w.shape)[ok]
    assert np.all(err <= bound), np.max(err - bound)


# ============================================================ host side

def test_functions_and_methods_exist():
    for name in ["cumsum", "cumprod"]:
        assert callable(getattr(gp, name))
        assert callable(getattr(gp.ndarray, name))


@pytest.mark.parametrize("func", ["cumsum", "cumprod"])
def test_host_arrays_and_bad_arguments_are_refused(func):
    f = getattr(gp, func)
    with pytest.raises(TypeError, match="gpuarr.asarray"):
        f(np.ones(3))
    with pytest.raises(TypeError, match="out must be a gpuarr.ndarray"):
        f(np.ones(3), out=np.zeros(3))
    with pytest.raises(TypeError):
        f(np.ones(3), bogus=1)
    with pytest.raises(TypeError):
        f(np.ones(3), None, None, None, None)


@pytest.mark.parametrize("dtype", [np.dtype(t) for t in "?bhilBHILefdFD"])
def test_result_dtypes_are_numpys(dtype):
    x = np.zeros(3, dtype)
    for name in ["cumsum", "cumprod"]:
        assert _result_dtype(name, dtype, None, None) == getattr(np, name)(x).dtype
        for arg in [np.dtype("f4"), np.dtype("i1"), np.dtype("?")]:
            assert _result_dtype(name, dtype, arg, None) == \
                getattr(np, name)(x, dtype=arg).dtype


# ============================================================ on the device

@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["c", "t", "neg", "slice"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("func", ["cumsum", "cumprod"])
def test_against_numpy(func, dtype, layout, rng):
    host = sample(rng, (5, 6, 7), dtype, func)
    base, view = base_layouts(host)[layout]
    x = view(gp.asarray(base))
    for axis in [None, 0, 1, 2, -1, -3]:
        want, tol = reference(func, host, axis=axis)
        assert_scan(getattr(gp, func)(x, axis=axis), want, tol)
        assert_scan(getattr(x, func)(axis=axis), want, tol)


@pytest.mark.gpu
@pytest.mark.parametrize("func", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("shape, axis", [
    ((1023,), None), ((1024,), None), ((1025,), None),    # one chunk and just over
    ((3, 5000), 1), ((5000, 3), 0), ((7, 3), 1),          # chunked rows; short rows
    ((100_000, 3), 1), ((2048, 2048), 0),                 # many short rows; columns
    ((3_000_000,), None),                                 # two levels of chunk totals
    ((2, 1_100_000), -1),
])
def test_long_and_short_rows(func, dtype, shape, axis, rng):
    host = sample(rng, shape, dtype, func)
    want, tol = reference(func, host, axis=axis)
    assert_scan(getattr(gp, func)(gp.asarray(host), axis=axis), want, tol)


@pytest.mark.gpu
@pytest.mark.parametrize("shape, axis", [((20_000,), None), ((3, 5000), 1), ((5000, 3), 0)])
def test_complex_products_overflow_where_numpys_do(shape, axis, rng):
    # factors +-1, +-1j and +-1 +-1j: every running product is exact in
    # complex64 in any order (parts 0 or +-2**k) until its modulus leaves
    # the range, so the device's tree of products must give NumPy's
    # sequential values bit for bit up to the same element and a non-finite
    # value (inf or NaN: which one depends on the order) from there on
    units = np.array([1, -1, 1j, -1j], np.complex64)
    roots = np.array([1 + 1j, 1 - 1j, -1 + 1j, -1 - 1j], np.complex64)
    host = np.where(rng.random(shape) < 0.1, rng.choice(roots, shape), rng.choice(units, shape))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.cumprod(host, axis=axis)
    got = gp.cumprod(gp.asarray(host), axis=axis).get()
    finite = np.isfinite(want)
    assert not finite.all() and finite.any()    # the rows overflow past a few chunks
    np.testing.assert_array_equal(np.isfinite(got), finite)
    np.testing.assert_array_equal(got[finite], want[finite])


@pytest.mark.gpu
def test_dtype_and_out(rng):
    # small integers: the float products stay finite, so a float64
    # reference holds for every dtype= (full-range wrapping is tested above)
    host = rng.integers(-3, 4, (20, 30)).astype(np.int8)
    x = gp.asarray(host)
    for arg in [np.int8, np.int16, np.float32, np.uint64, np.bool_, np.complex64]:
        for func in ["cumsum", "cumprod"]:
            want, tol = reference(func, host, axis=1, dtype=arg)
            assert_scan(getattr(gp, func)(x, axis=1, dtype=arg), want, tol)
    out = gp.empty((20, 30), np.float64)
    r = gp.cumsum(x, axis=0, out=out)
    assert r is out
    assert_scan(out, np.cumsum(host, axis=0).astype(np.float64), None)
    flat = gp.empty((600,), np.int64)
    assert gp.cumprod(x, out=flat) is flat
    assert_scan(flat, np.cumprod(host), None)
    # strided out=, and out= that is the input
    big = gp.zeros((20, 60), np.int64)
    gp.cumsum(x, axis=1, out=big[:, ::2])
    assert_scan(big[:, ::2], np.cumsum(host, axis=1), None)
    assert not big[:, 1::2].any()
    y = gp.asarray(host.astype(np.int64))
    gp.cumsum(y, axis=1, out=y)
    assert_scan(y, np.cumsum(host.astype(np.int64), axis=1), None)


@pytest.mark.gpu
def test_out_errors_leave_out_unchanged(rng):
    x = gp.asarray(sample(rng, (4, 5), np.float64, "cumsum"))
    out = gp.full((4, 5), 7.0)
    with pytest.raises(ValueError, match="shape"):
        gp.cumsum(x, out=out)                 # axis=None: the result is 1-d
    with pytest.raises(ValueError, match="shape"):
        gp.cumsum(x, axis=0, out=gp.full((5, 4), 7.0))
    with pytest.raises(np.exceptions.AxisError):
        gp.cumsum(x, axis=2, out=out)
    with pytest.raises(np.exceptions.AxisError):
        x.cumprod(axis=-3)
    with pytest.raises(TypeError):
        gp.cumsum(x, axis=(0, 1))
    assert (out.get() == 7.0).all()


@pytest.mark.gpu
def test_nan_empty_and_0d(rng):
    for func in ["cumsum", "cumprod"]:
        host = sample(rng, (6, 9), np.float32, func)
        host[2, 3] = np.nan
        host[4, 0] = np.inf
        x = gp.asarray(host)
        for axis in [None, 0, 1]:
            want, tol = reference(func, host, axis=axis)
            assert_scan(getattr(gp, func)(x, axis=axis), want, tol)
    for shape in [(0,), (3, 0), (0, 4)]:
        e = np.zeros(shape, np.int32)
        for axis in [None, 0, -1]:
            assert_scan(gp.cumsum(gp.asarray(e), axis=axis), np.cumsum(e, axis=axis), None)
            assert_scan(gp.cumprod(gp.asarray(e), axis=axis), np.cumprod(e, axis=axis), None)
    z = np.float32(2.5)
    assert_scan(gp.cumsum(gp.asarray(z)), np.cumsum(z), np.zeros(1))
    assert_scan(gp.cumprod(gp.asarray(z), axis=0), np.cumprod(z, axis=0), np.zeros(1))
    assert_scan(gp.cumsum([1, 2, 3]), np.cumsum([1, 2, 3]), None)


@pytest.mark.gpu
def test_numpy_dispatch(rng):
    host = sample(rng, (7, 8), np.float64, "cumsum")
    x = gp.asarray(host)
    want, tol = reference("cumsum", host, axis=0)
    assert_scan(np.cumsum(x, axis=0), want, tol)
    want, tol = reference("cumprod", host, axis=None)
    assert_scan(np.cumprod(x), want, tol)
