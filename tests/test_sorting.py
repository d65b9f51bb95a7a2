"""Sorting and order statistics against NumPy on fresh random data: sort,
argsort (stable, ties), partition / argpartition (the partition property),
unique (index, inverse, counts, NaN as NumPy 2.x), searchsorted, digitize,
bincount, histogram, median, nanmedian, percentile, quantile; every one
across dtypes, axes, keepdims, non-contiguous inputs, NaN and empty
inputs.  The lesson's kappa-sigma clipper keeps the same pixels as NumPy's.
Argument checks and the radix keys' order need no device and run
everywhere; device tests are marked gpu."""
import warnings

import numpy as np
import pytest

import gpuarr as gp
from gpuarr import _core

from _arrays import view_layouts
from _lesson import lesson_clipper


ORDERED = [np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                 np.uint32, np.int64, np.uint64, np.float16, np.float32,
                                 np.float64)]
FLOATS = [np.dtype(t) for t in (np.float16, np.float32, np.float64)]
RTOL = {"e": 2e-3, "f": 2e-6, "d": 1e-12}


def values(rng, shape, dtype, ties=False, nan=False):
    """Random values of dtype; with ties, few distinct values; with nan,
    some NaN, infinities and signed zeros among floats."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if ties:
            lo = max(info.min, -5)
            return rng.integers(lo, lo + 10, size=shape).astype(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    a = rng.integers(-6, 6, size=shape) / 2 if ties else rng.standard_normal(shape) * 100
    a = np.asarray(a, dtype=dtype)
    if nan and a.size:
        flat = a.reshape(-1)
        specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=dtype)
        pos = rng.integers(0, flat.size, size=max(1, flat.size // 10))
        flat[pos] = rng.choice(specials, size=pos.size)
    return a


def get(x):
    return x.get() if isinstance(x, gp.ndarray) else np.asarray(x)


def assert_close(got, want):
    got, want = get(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    np.testing.assert_allclose(got, want, rtol=RTOL[want.dtype.char], atol=0, equal_nan=True)


# ================================================================ host only

@pytest.mark.parametrize("dtype", ORDERED)
def test_radix_keys_order_like_numpy_sort(rng, dtype):
    h = values(rng, 500, dtype, nan=True)
    keys = _core._sort_keys(h, True)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(h[order], np.sort(h))
    np.testing.assert_array_equal(order, np.argsort(h, kind="stable"))


def test_radix_keys_refuse_complex():
    with pytest.raises(TypeError, match="complex"):
        _core._sort_keys(np.zeros(3, np.complex64), True)


def test_host_arrays_are_refused_with_the_remedy():
    for f, args in ((gp.sort, ()), (gp.argsort, ()), (gp.median, ()), (gp.unique, ()),
                    (gp.quantile, (0.5,)), (gp.bincount, ()), (gp.histogram, ())):
        with pytest.raises(TypeError, match="asarray"):
            f(np.arange(5), *args)


def test_unknown_quantile_methods_are_value_errors_as_numpy():
    with pytest.raises(ValueError, match="not a valid method"):
        np.quantile(np.arange(3.0), 0.5, method="bogus")
    with pytest.raises(ValueError, match="not a valid method"):
        gp.quantile(None, 0.5, method="bogus")


def test_quantile_weights_are_a_clear_error():
    with pytest.raises(ValueError, match="inverted_cdf"):
        gp.percentile(None, 50, weights=[1.0])
    with pytest.raises(NotImplementedError, match="weights"):
        gp.quantile(None, 0.5, method="inverted_cdf", weights=[1.0])


@pytest.mark.parametrize("q", [-0.1, 1.5, [0.2, 2.0], np.nan])
def test_quantile_out_of_range_is_value_error(q):
    with pytest.raises(ValueError, match="range"):
        gp.quantile(None, q)


def test_percentile_out_of_range_is_value_error():
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        gp.percentile(None, 101)


def test_histogram_estimator_names_are_a_clear_error():
    with pytest.raises(NotImplementedError, match="auto"):
        gp.histogram(None, bins="auto")


# ===================================================================== sort

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ORDERED)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sort_matches_numpy(rng, dtype, axis):
    h = values(rng, (5, 7, 33), dtype, nan=True)
    for name, hv, dv in view_layouts(h):
        got = gp.sort(dv, axis=axis).get()
        want = np.sort(hv, axis=axis)
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ORDERED)
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_argsort_is_stable_like_numpy(rng, dtype, axis):
    h = values(rng, (6, 300), dtype, ties=True, nan=True)
    for name, hv, dv in view_layouts(h):
        got = gp.argsort(dv, axis=axis)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.get(), np.argsort(hv, axis=axis, kind="stable"),
                                      err_msg=name)


@pytest.mark.gpu
def test_sort_large_and_many_segments(rng):
    h = values(rng, (3000, 700), np.float64, nan=True)
    np.testing.assert_array_equal(gp.sort(gp.asarray(h), axis=1).get(), np.sort(h, axis=1))
    np.testing.assert_array_equal(gp.argsort(gp.asarray(h), axis=0).get(),
                                  np.argsort(h, axis=0, kind="stable"))
    big = values(rng, 3_000_001, np.float32, nan=True)
    np.testing.assert_array_equal(gp.sort(gp.asarray(big)).get(), np.sort(big))


@pytest.mark.gpu
def test_sort_method_sorts_in_place_and_accepts_kind(rng):
    h = values(rng, (4, 50), np.int32, ties=True)
    d = gp.asarray(h)
    assert d.sort(axis=0, kind="quicksort") is None
    h.sort(axis=0)
    np.testing.assert_array_equal(d.get(), h)
    np.testing.assert_array_equal(d.argsort(kind="mergesort").get(),
                                  np.argsort(h, kind="stable"))


@pytest.mark.gpu
def test_sort_edge_shapes(rng):
    for shape in [(0,), (3, 0), (0, 4), (1,), (1, 1)]:
        h = values(rng, shape, np.float32)
        np.testing.assert_array_equal(gp.sort(gp.asarray(h)).get(), np.sort(h))
        np.testing.assert_array_equal(gp.argsort(gp.asarray(h), axis=0).get(),
                                      np.argsort(h, axis=0))
    d0 = gp.asarray(np.float32(3))
    with pytest.raises(np.exceptions.AxisError):
        gp.sort(d0)
    np.testing.assert_array_equal(gp.sort(d0, axis=None).get(), np.sort(np.float32(3), axis=None))


def test_quantile_methods_are_the_c_cores():
    from gpuarr import _core, _sorting
    # NumPy's method names are listed in Python, their codes come from C
    assert sorted(_sorting._METHODS.values()) == list(range(_core.GA_QM_COUNT))
    assert _sorting._METHODS["linear"] == _core.GA_QM_LINEAR


@pytest.mark.gpu
def test_sort_bad_arguments():
    d = gp.arange(10)
    with pytest.raises(np.exceptions.AxisError):
        gp.sort(d, axis=1)
    with pytest.raises(np.exceptions.AxisError):
        gp.argsort(d, axis=-2)
    with pytest.raises(ValueError, match="order"):
        gp.sort(d, order="x")
    with pytest.raises(TypeError, match="complex"):
        gp.sort(gp.zeros(3, dtype=np.complex64))


@pytest.mark.gpu
def test_sort_method_errors_are_numpys():
    d = gp.arange(10)[::-1]
    with pytest.raises(ValueError, match="order"):
        d.sort(order="x")
    with pytest.raises(ValueError, match="order"):
        d.argsort(order="x")
    with pytest.raises(TypeError, match="integer"):
        d.sort(axis=None)  # NumPy's ndarray.sort takes no None either
    with pytest.raises(np.exceptions.AxisError):
        d.sort(axis=1)
    with pytest.raises(np.exceptions.AxisError):
        gp.asarray(np.float32(3)).sort()
    with pytest.raises(TypeError, match="complex"):
        gp.zeros(3, dtype=np.complex64).sort()
    np.testing.assert_array_equal(d.argsort(axis=None).get(), np.arange(10)[::-1])
    np.testing.assert_array_equal(gp.asarray(np.float32(3)).argsort().get(), [0])
    d.sort(stable=True)
    np.testing.assert_array_equal(d.get(), np.arange(10))
    with pytest.raises(ValueError, match="read-only"):
        gp.broadcast_to(gp.arange(3), (2, 3)).sort()


# ================================================================ partition

def check_partition(part, hv, kth, axis):
    """part is a partition of hv along axis around every k in kth."""
    srt = np.sort(hv, axis=axis)
    part = np.asarray(part)
    np.testing.assert_array_equal(np.sort(part, axis=axis), srt)
    n = srt.shape[axis]
    for k in np.atleast_1d(kth):
        k = k % n
        pk = np.take(part, [k], axis=axis)
        np.testing.assert_array_equal(pk, np.take(srt, [k], axis=axis))
        before = np.take(part, np.arange(k), axis=axis)
        after = np.take(part, np.arange(k + 1, n), axis=axis)
        with np.errstate(invalid="ignore"):
            assert np.all((before <= pk) | np.isnan(pk))
            assert np.all((after >= pk) | np.isnan(after))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int16, np.uint32, np.float32, np.float64])
@pytest.mark.parametrize("kth", [0, 5, -1, [2, 9]])
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_partition_property(rng, dtype, kth, axis):
    h = values(rng, (11, 13), dtype, ties=True, nan=True)
    for name, hv, dv in view_layouts(h):
        part = gp.partition(dv, kth, axis=axis).get()
        flat = hv.ravel() if axis is None else hv
        check_partition(part, flat, kth, -1 if axis is None else axis)
        idx = gp.argpartition(dv, kth, axis=axis).get()
        ax = -1 if axis is None else axis
        gathered = np.take_along_axis(flat, idx, axis=ax)
        check_partition(gathered, flat, kth, ax)
        np.testing.assert_array_equal(np.sort(idx, axis=ax),
                                      np.broadcast_to(np.arange(flat.shape[ax]).reshape(
                                          [-1 if d == ax % flat.ndim else 1
                                           for d in range(flat.ndim)]), idx.shape))


@pytest.mark.gpu
def test_partition_bad_kth_and_method():
    d = gp.arange(10)
    with pytest.raises(ValueError, match="out of bounds"):
        gp.partition(d, 10)
    with pytest.raises(ValueError, match="out of bounds"):
        gp.argpartition(d, -11)
    m = gp.asarray(np.array([3, 1, 2]))
    assert m.partition(1) is None
    np.testing.assert_array_equal(m.get()[1], 2)


# =================================================================== unique

def np_unique(h, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.unique(h, **kw)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ORDERED)
def test_unique_matches_numpy(rng, dtype):
    h = values(rng, (7, 41), dtype, ties=True, nan=True)
    for name, hv, dv in view_layouts(h):
        got = gp.unique(dv, return_index=True, return_inverse=True, return_counts=True)
        want = np_unique(hv, return_index=True, return_inverse=True, return_counts=True)
        for g, w, what in zip(got, want, ("values", "index", "inverse", "counts")):
            g = g.get()
            assert g.shape == w.shape, (name, what, g.shape, w.shape)
            np.testing.assert_array_equal(g, w, err_msg=f"{name} {what}")
        np.testing.assert_array_equal(gp.unique(dv).get(), want[0])


@pytest.mark.gpu
def test_unique_nan_handling_as_numpy_2(rng):
    h = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, np.inf, np.nan, 1.0])
    d = gp.asarray(h)
    for equal_nan in (True, False):
        got = gp.unique(d, return_index=True, return_counts=True, equal_nan=equal_nan)
        want = np.unique(h, return_index=True, return_counts=True, equal_nan=equal_nan)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.get(), w)


@pytest.mark.gpu
def test_unique_single_outputs_and_empty(rng):
    h = values(rng, 1000, np.int8, ties=True)
    d = gp.asarray(h)
    for kw in ({"return_index": True}, {"return_inverse": True}, {"return_counts": True}):
        got, want = gp.unique(d, **kw), np.unique(h, **kw)
        assert len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.get(), w)
    e = gp.unique(gp.zeros((0, 3), dtype=np.float32), return_counts=True)
    assert e[0].shape == (0,) and e[0].dtype == np.float32 and e[1].shape == (0,)
    with pytest.raises(NotImplementedError, match="axis"):
        gp.unique(d, axis=0)


# ============================================================== searchsorted

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float16, np.float32,
                                   np.float64])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(rng, dtype, side):
    a = np.sort(values(rng, 200, dtype, ties=True, nan=True))
    v = values(rng, (3, 50), dtype, ties=True, nan=True)
    got = gp.searchsorted(gp.asarray(a), gp.asarray(v), side=side)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.get(), np.searchsorted(a, v, side=side))
    np.testing.assert_array_equal(gp.asarray(a).searchsorted(gp.asarray(v[0]), side).get(),
                                  np.searchsorted(a, v[0], side))
    s = gp.searchsorted(gp.asarray(a), 1, side=side)
    assert isinstance(s, gp.ndarray) and s.shape == ()
    assert int(s) == np.searchsorted(a, 1, side=side)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.uint32, np.int64,
                                   np.uint64, np.float16, np.float32, np.float64])
def test_searchsorted_python_scalar_type(rng, dtype):
    """The comparison dtype for a Python scalar v: NumPy's searchsorted on
    a and v cast to it gives NumPy's own answer, for values that round in
    a's dtype (1e-300 in float16, 0.1 in float32) and beyond its range."""
    from gpuarr._sorting import _scalar_type
    if np.dtype(dtype).kind == "f":
        a = np.sort((rng.standard_normal(20) * 3).astype(dtype))
        a[:2] = [-0.5, 0.0]
        a[2] = np.float32(0.1).astype(dtype)
        a.sort()
    else:
        a = np.sort(rng.integers(0, 2 if dtype == np.bool_ else 5, 20).astype(dtype))
    for v in (0, 1, -1, 300, -300, 2**63, 2**63 - 1, -2**63, 2**70, 0.1, -1e-300, 1e-300,
              2.5, float("inf"), float("nan"), True, False):
        common = _scalar_type(a.dtype, v)
        for side in ("left", "right"):
            want = np.searchsorted(a, v, side=side)
            got = np.searchsorted(a.astype(common), np.asarray(v, common), side=side)
            assert got == want, (v, side, common)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,v", [(np.uint8, -1), (np.uint8, 256), (np.int8, 300),
                                     (np.int8, -129), (np.uint64, -1), (np.int64, 2**63),
                                     (np.int64, -2**70)])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_python_int_beyond_the_type(dtype, v, side):
    """A Python int outside a's integer type keeps its value (NumPy widens
    the common type): -1 goes before every uint8, 300 after every int8."""
    info = np.iinfo(dtype)
    a = np.array([info.min, 0, 1, info.max], dtype)
    got = gp.searchsorted(gp.asarray(a), v, side=side)
    assert int(got) == np.searchsorted(a, v, side=side)


@pytest.mark.gpu
def test_searchsorted_with_sorter_and_non_contiguous(rng):
    a = values(rng, 300, np.float64, ties=True, nan=True)
    sorter = np.argsort(a, kind="stable")
    v = values(rng, 100, np.float64, ties=True)
    got = gp.searchsorted(gp.asarray(a), gp.asarray(v), side="right", sorter=gp.asarray(sorter))
    np.testing.assert_array_equal(got.get(), np.searchsorted(a, v, side="right", sorter=sorter))
    big = np.sort(values(rng, 400, np.int32))
    got = gp.searchsorted(gp.asarray(big)[::2], gp.asarray(v).astype(np.int32)[::-1])
    np.testing.assert_array_equal(got.get(), np.searchsorted(big[::2], v.astype(np.int32)[::-1]))
    with pytest.raises(ValueError, match="side"):
        gp.searchsorted(gp.asarray(big), 3, side="middle")
    with pytest.raises(ValueError):
        gp.searchsorted(gp.zeros((2, 2)), 1)
    e = gp.searchsorted(gp.zeros(0), gp.asarray([1.0, 2.0]))
    np.testing.assert_array_equal(e.get(), [0, 0])


# ================================================================= digitize

@pytest.mark.gpu
@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("decreasing", [False, True])
def test_digitize_matches_numpy(rng, right, decreasing):
    x = values(rng, (4, 100), np.float64, ties=True, nan=True)
    bins = np.unique(values(rng, 12, np.float64, ties=True))
    if decreasing:
        bins = bins[::-1].copy()
    want = np.digitize(x, bins, right=right)
    dx = gp.asarray(x)
    # gpuarr's own function takes device bins or a host sequence ...
    for b in (gp.asarray(bins), bins.tolist()):
        got = gp.digitize(dx, b, right=right)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.get(), want)
    # ... and refuses a NumPy array, as every gp.* function
    with pytest.raises(TypeError, match="asarray"):
        gp.digitize(dx, bins, right=right)
    # NumPy's entry point, given a device array, moves the host bins over
    got = np.digitize(dx, bins, right=right)
    assert isinstance(got, gp.ndarray)
    np.testing.assert_array_equal(got.get(), want)
    xi = values(rng, 50, np.int16, ties=True)
    np.testing.assert_array_equal(gp.digitize(gp.asarray(xi), bins.tolist(), right=right).get(),
                                  np.digitize(xi, bins, right=right))


@pytest.mark.gpu
def test_digitize_bad_bins():
    with pytest.raises(ValueError, match="monotonically"):
        gp.digitize(gp.arange(5), [1, 3, 2])
    with pytest.raises(TypeError, match="complex"):
        gp.digitize(gp.zeros(3, dtype=np.complex64), [0, 1])


# ================================================================= bincount

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.int64, np.uint32])
def test_bincount_matches_numpy(rng, dtype):
    x = rng.integers(0, 60, 5000).astype(dtype)
    w = rng.standard_normal(5000)
    d = gp.asarray(x)
    got = gp.bincount(d)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.get(), np.bincount(x))
    np.testing.assert_allclose(gp.bincount(d, weights=gp.asarray(w)).get(),
                               np.bincount(x, weights=w), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(gp.bincount(d, minlength=100).get(),
                                  np.bincount(x, minlength=100))
    np.testing.assert_array_equal(gp.bincount(d[::3]).get(), np.bincount(x[::3]))
    wf = w.astype(np.float32)
    np.testing.assert_allclose(gp.bincount(d, gp.asarray(wf)).get(), np.bincount(x, wf),
                               rtol=1e-6, atol=1e-5)


@pytest.mark.gpu
def test_bincount_large_range_and_errors(rng):
    x = rng.integers(0, 100_000, 3000)
    np.testing.assert_array_equal(gp.bincount(gp.asarray(x)).get(), np.bincount(x))
    e = gp.bincount(gp.zeros(0, dtype=np.int64), minlength=4)
    np.testing.assert_array_equal(e.get(), np.bincount(np.zeros(0, np.int64), minlength=4))
    with pytest.raises(ValueError, match="negative"):
        gp.bincount(gp.asarray([1, -1, 2]))
    with pytest.raises(ValueError, match="minlength"):
        gp.bincount(gp.asarray([1, 2]), minlength=-1)
    with pytest.raises(ValueError, match="same length"):
        gp.bincount(gp.asarray([1, 2]), weights=gp.ones(3))
    with pytest.raises(TypeError, match="safe"):
        gp.bincount(gp.asarray([1.0, 2.0]))
    with pytest.raises(ValueError, match="depth|deep"):
        gp.bincount(gp.zeros((2, 2), dtype=np.int64))


# ================================================================ histogram

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("bins", [1, 10, 257, "edges", "device_edges"])
def test_histogram_matches_numpy(rng, dtype, bins):
    h = values(rng, (50, 80), dtype)
    edges = np.sort(rng.standard_normal(9) * 80)
    # host edges: a sequence for gp.histogram (a NumPy array is refused, as
    # by every gp.* function), a NumPy array for NumPy's entry point
    b = edges.tolist() if bins == "edges" else gp.asarray(edges) if bins == "device_edges" \
        else bins
    hb = edges if isinstance(bins, str) else bins
    for name, hv, dv in view_layouts(h):
        want_n, want_e = np.histogram(hv, bins=hb)
        results = [gp.histogram(dv, bins=b)]
        if bins == "edges":
            results.append(np.histogram(dv, bins=edges))
        for got_n, got_e in results:
            assert isinstance(got_n, gp.ndarray) and isinstance(got_e, gp.ndarray)
            np.testing.assert_array_equal(got_n.get(), want_n, err_msg=name)
            assert got_n.dtype == want_n.dtype
            np.testing.assert_allclose(got_e.get(), want_e,
                                       rtol=RTOL.get(want_e.dtype.char, 1e-12))
    if bins == "edges":
        with pytest.raises(TypeError, match="asarray"):
            gp.histogram(gp.asarray(h), bins=edges)


@pytest.mark.gpu
def test_histogram_range_weights_density(rng):
    h = rng.standard_normal(10_000).astype(np.float32)
    w = rng.random(10_000)
    d, dw = gp.asarray(h), gp.asarray(w)
    for kw in ({"range": (-1, 2)}, {"range": (0.5, 0.5)}, {"bins": 7, "range": (-3.0, 3.0)}):
        gn, ge = gp.histogram(d, **kw)
        wn, we = np.histogram(h, **kw)
        np.testing.assert_array_equal(gn.get(), wn)
        np.testing.assert_allclose(ge.get(), we, rtol=1e-6)
    gn, _ = gp.histogram(d, bins=20, weights=dw)
    np.testing.assert_allclose(gn.get(), np.histogram(h, bins=20, weights=w)[0], rtol=1e-10)
    gn, _ = gp.histogram(d, bins=20, density=True)
    np.testing.assert_allclose(gn.get(), np.histogram(h, bins=20, density=True)[0], rtol=1e-5)
    gn, _ = gp.histogram(d, bins=[-1, 0, 0.5, 3], density=True, weights=dw)
    np.testing.assert_allclose(gn.get(), np.histogram(h, bins=[-1, 0, 0.5, 3], density=True,
                                                      weights=w)[0], rtol=1e-10)
    en, ee = gp.histogram(gp.zeros(0, dtype=np.float64), bins=4)
    wn, we = np.histogram(np.zeros(0), bins=4)
    np.testing.assert_array_equal(en.get(), wn)
    np.testing.assert_allclose(ee.get(), we)


@pytest.mark.gpu
def test_histogram_bad_arguments():
    d = gp.arange(10.0)
    with pytest.raises(ValueError, match="monotonically"):
        gp.histogram(d, bins=[0, 2, 1])
    with pytest.raises(ValueError, match="positive"):
        gp.histogram(d, bins=0)
    with pytest.raises(ValueError, match="larger"):
        gp.histogram(d, range=(2, 1))
    with pytest.raises(ValueError, match="finite"):
        gp.histogram(d, range=(0, np.inf))
    with pytest.raises(ValueError, match="same shape"):
        gp.histogram(d, weights=gp.ones(3))


# ================================================================ quantiles

def np_call(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kw)


QUANTILE_DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint16, np.int32, np.int64,
                                         np.uint64, np.float16, np.float32, np.float64)]
AXES = [None, 0, -1, 1, (0, 2), (2, 0, 1)]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", QUANTILE_DTYPES)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_median_matches_numpy(rng, dtype, axis, keepdims):
    h = values(rng, (4, 6, 9), dtype, ties=dtype.kind != "f")
    for name, hv, dv in view_layouts(h):
        got = gp.median(dv, axis=axis, keepdims=keepdims)
        assert isinstance(got, gp.ndarray)
        assert_close(got, np.median(hv, axis=axis, keepdims=keepdims))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_median_with_nan_is_nan_and_nanmedian_ignores_it(rng, dtype, axis):
    h = values(rng, (8, 5, 7), dtype, nan=True)
    h[0, 0, :] = np.nan                     # an all-NaN row for nanmedian
    d = gp.asarray(h)
    assert_close(gp.median(d, axis=axis), np_call(np.median, h, axis=axis))
    assert_close(gp.nanmedian(d, axis=axis), np_call(np.nanmedian, h, axis=axis))
    assert np.isnan(float(gp.median(d)))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.float64])
def test_median_of_large_arrays_by_selection(rng, dtype):
    h = values(rng, 4_194_304 + 7, dtype, ties=dtype == np.int16)
    d = gp.asarray(h)
    assert_close(gp.median(d), np.median(h))
    assert_close(gp.median(d[1:]), np.median(h[1:]))
    assert_close(gp.percentile(d, [1, 50, 99.9]), np.percentile(h, [1, 50, 99.9]))


@pytest.mark.gpu
def test_median_empty_and_out(rng):
    with pytest.warns(RuntimeWarning):
        e = gp.median(gp.zeros(0, dtype=np.float32))
    assert e.shape == () and e.dtype == np.float32 and np.isnan(float(e))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = np.zeros((0, 4))
        assert_close(gp.median(gp.asarray(z), axis=0), np.median(z, axis=0))
        assert_close(gp.median(gp.asarray(z), axis=1), np.median(z, axis=1))
    h = values(rng, (5, 6), np.float64)
    out = gp.empty(6)
    r = gp.median(gp.asarray(h), axis=0, out=out)
    assert r is out
    assert_close(out, np.median(h, axis=0))
    with pytest.raises(np.exceptions.AxisError):
        gp.median(gp.asarray(h), axis=2)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", QUANTILE_DTYPES[1:])
@pytest.mark.parametrize("q", [0.5, 0.0, 1.0, 0.3, [0.1, 0.25, 0.9], [[0.2, 0.8], [0.5, 1.0]]])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_quantile_matches_numpy(rng, dtype, q, axis):
    h = values(rng, (3, 10, 7), dtype)
    for name, hv, dv in view_layouts(h):
        assert_close(gp.quantile(dv, q, axis=axis), np.quantile(hv, q, axis=axis))
    qa = np.asarray(q) * 100
    qp = float(qa) if qa.ndim == 0 else qa
    assert_close(gp.percentile(gp.asarray(h), qp, axis=axis, keepdims=True),
                 np.percentile(h, qp, axis=axis, keepdims=True))


@pytest.mark.gpu
def test_quantile_many_and_device_q(rng):
    h = values(rng, 1000, np.float32)
    q = np.linspace(0, 1, 11)
    assert_close(gp.quantile(gp.asarray(h), q), np.quantile(h, q))
    assert_close(gp.quantile(gp.asarray(h), gp.asarray(q)), np.quantile(h, q))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
def test_nanquantile_and_nanpercentile(rng, dtype):
    h = values(rng, (6, 40), dtype, nan=True)
    h[2] = np.nan
    d = gp.asarray(h)
    for axis in (None, 1, 0):
        assert_close(gp.nanquantile(d, [0.2, 0.7], axis=axis),
                     np_call(np.nanquantile, h, [0.2, 0.7], axis=axis))
        assert_close(gp.nanpercentile(d, 40, axis=axis),
                     np_call(np.nanpercentile, h, 40, axis=axis))
        assert_close(gp.quantile(d, 0.5, axis=axis), np_call(np.quantile, h, 0.5, axis=axis))


METHODS = ["linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf",
           "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
           "weibull", "median_unbiased", "normal_unbiased"]


@pytest.mark.gpu
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", [np.int16, np.uint8, np.float32, np.float64])
def test_every_quantile_method_matches_numpy(rng, method, dtype):
    h = values(rng, (5, 12), dtype, ties=dtype != np.float64)
    d = gp.asarray(h)
    for q in (0.0, 0.1, 0.25, 0.5, 0.8, 1.0, [0.0, 0.33, 0.5, 0.71, 1.0], np.linspace(0, 1, 21)):
        for axis in (None, 1, 0):
            assert_close(gp.quantile(d, q, axis=axis, method=method),
                         np.quantile(h, q, axis=axis, method=method))
    assert_close(gp.percentile(d, 37.5, method=method), np.percentile(h, 37.5, method=method))
    if dtype == np.float32:
        hn = h.copy()
        hn[1, 3] = np.nan
        dn = gp.asarray(hn)
        for axis in (None, 1):
            assert_close(gp.nanquantile(dn, [0.2, 0.9], axis=axis, method=method),
                         np_call(np.nanquantile, hn, [0.2, 0.9], axis=axis, method=method))
            assert_close(gp.quantile(dn, 0.3, axis=axis, method=method),
                         np_call(np.quantile, hn, 0.3, axis=axis, method=method))


@pytest.mark.gpu
def test_picking_quantile_methods_accept_bool():
    h = np.array([True, False, True, True])
    for method in ("lower", "higher", "nearest", "inverted_cdf", "closest_observation"):
        assert_close(gp.quantile(gp.asarray(h), 0.4, method=method),
                     np.quantile(h, 0.4, method=method))


@pytest.mark.gpu
def test_quantile_errors_as_numpy():
    with pytest.raises(IndexError):
        gp.quantile(gp.zeros(0), 0.5)
    with pytest.raises(TypeError):
        gp.quantile(gp.asarray([True, False]), 0.5)
    with pytest.raises(TypeError):
        gp.median(gp.zeros(3, dtype=np.complex64))
    with pytest.raises(ValueError, match="not a valid method"):
        gp.quantile(gp.arange(5.0), 0.5, method="nearst")


# ========================================================= the lesson's clip

@pytest.mark.gpu
def test_kappa_sigma_clipper_keeps_the_same_pixels_as_numpy():
    from gpuarr.datasets import synthetic_sky
    image = synthetic_sky(size=512)
    want = lesson_clipper(image.ravel())
    got = lesson_clipper(gp.asarray(image).ravel(), xp=gp)
    assert isinstance(got, gp.ndarray)
    assert len(got) == len(want)
    np.testing.assert_allclose(float(gp.std(got)), float(np.std(want)), rtol=1e-5)
    np.testing.assert_array_equal(np.sort(got.get()), np.sort(want))


@pytest.mark.gpu
@pytest.mark.parametrize("func, args", [("median", ()), ("nanmedian", ()),
                                        ("percentile", (10.0,)), ("nanpercentile", ([0.0],)),
                                        ("quantile", (0.5,)), ("nanquantile", ([0.5, 0.25],))])
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float32])
def test_quantiles_of_empty_arrays_follow_numpy(func, args, dtype):
    """NumPy's empty-array rules: the nan forms return nanmean(a, axis),
    whatever q; the others raise ValueError where NumPy's reshape of the
    kept axes + (-1,) fails (axis=(), or several axes beside an empty kept
    one: (0, 1, 1) over (1, 2), found by the gpu profile of
    test_properties), IndexError for a q of an empty slice, NaN for a median."""
    for shape, axis in [((0,), None), ((0,), ()), ((1, 0), 0), ((2, 0), 1), ((2, 0), ()),
                        ((0, 3), 0), ((0, 1, 1), (1, 2)), ((0, 1, 2), (1, 2)),
                        ((2, 0, 3), (0, 2)), ((1, 2, 0), (0, 1)), ((0, 2, 3), (0, 2)),
                        ((3, 0, 0, 2), (1, 3)), ((3, 0, 0, 2), (0, 3))]:
        h = np.zeros(shape, dtype)
        kw = {"axis": axis}
        if "percentile" in func or "quantile" in func:
            kw["method"] = "lower" if dtype == np.bool_ else "linear"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want, exc = getattr(np, func)(h, *args, **kw), None
            except (ValueError, IndexError, TypeError) as e:
                want, exc = None, e
            if exc is not None:
                with pytest.raises(type(exc)):
                    getattr(gp, func)(gp.asarray(h), *args, **kw)
                continue
            got = getattr(gp, func)(gp.asarray(h), *args, **kw).get()
        want = np.asarray(want)
        assert (got.shape, got.dtype) == (want.shape, want.dtype), (shape, axis)
        np.testing.assert_array_equal(got, want)
