"""Reductions against NumPy: every function, axis (None, int, negative,
tuple, empty tuple), keepdims, dtype kind and layout (contiguous,
transposed, reversed, sliced), NaN, empty and size-1 inputs, dtype= and
out=, argument errors, and the accuracy and launch-splitting paths of big
inputs.  Device tests are marked gpu; the host-side planning
(_core._plan_reduce) and argument checks that need no device run
everywhere."""
import itertools
import re
import warnings

import numpy as np
import pytest

import gpuarr as gp
from gpuarr import _core
from gpuarr._reductions import _result_dtype

from _arrays import base_layouts


FUNCS = ["sum", "prod", "mean", "var", "std", "min", "max", "ptp", "argmin", "argmax", "all",
         "any", "count_nonzero"]
DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int32, np.uint16, np.int64, np.float16,
                                np.float32, np.float64, np.complex64)]
NAN_FUNCS = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmin", "nanmax",
             "nanargmin", "nanargmax"]
ORDERED = {"argmin", "argmax", "nanargmin", "nanargmax"}          # one axis only
AXES = [None, 0, -1, 1, (0, 2), (), (-1, 0, 1)]

RTOL = {"e": 1e-2, "f": 1e-5, "d": 1e-12, "F": 1e-5, "D": 1e-12}


def sample(rng, shape, dtype, func=""):
    """Fresh random data: integers over their whole range (sums and
    products wrap exactly as NumPy's), floats of magnitude ~100 (~4 for
    float16, whose NumPy variance would overflow), values near 1 for prod."""
    dtype = np.dtype(dtype)
    func = {"nanprod": "prod"}.get(func, func)
    if dtype.kind == "b":
        return rng.random(shape) < (0.9 if func == "all" else 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    real = np.float64 if dtype.kind == "f" else np.complex128

    def part():
        if func == "prod":
            return rng.uniform(0.9, 1.1, shape) * rng.choice([-1, 1], shape)
        return rng.standard_normal(shape) * (4 if dtype.char in "e" else 100)
    a = part() if dtype.kind == "f" else part() + 1j * part()
    return np.asarray(a, dtype=real).astype(dtype)


def scale_of(func, x, axis, keepdims):
    """The size of the rounding error to allow: NumPy and the device add in
    different orders (and the device in double), so sums differ by a few
    units of sum(|x|), means of mean(|x|).  Integer sums are exact, but
    integer means add in float64 too: where the values cancel, the mean is
    far smaller than the rounding of the sum (int64 over its whole range)."""
    if x.dtype.kind not in "fciu" or x.size == 0:
        return 0.0
    ax = np.abs(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
    if func in ("sum", "nansum") and x.dtype.kind in "fc":
        return np.nansum(ax, axis=axis, keepdims=keepdims)
    if func in ("mean", "nanmean"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.nanmean(ax, axis=axis, keepdims=keepdims)
    return 0.0


def assert_matches(got, want, rtol=None, atol=0.0):
    """`got` (a device array) holds NumPy's answer `want`: same dtype and
    shape; integers and bools exactly, floats within rtol (by dtype) plus
    atol (an array or scalar); NaN where NumPy has NaN."""
    assert isinstance(got, gp.ndarray), type(got)
    want = np.asarray(want)
    host = got.get()
    assert host.dtype == want.dtype, (host.dtype, want.dtype)
    assert host.shape == want.shape, (host.shape, want.shape)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(host, want)
        return
    rtol = RTOL[want.dtype.char] if rtol is None else rtol
    h, w = host.astype(np.complex128), want.astype(np.complex128)
    nan_h, nan_w = np.isnan(h), np.isnan(w)
    np.testing.assert_array_equal(nan_h, nan_w)
    inf_w = np.isinf(w)
    np.testing.assert_array_equal(h[inf_w], w[inf_w])
    ok = ~nan_w & ~inf_w
    err = np.abs(h - w)[ok]
    bound = (np.broadcast_to(atol, w.shape)[ok] * rtol * 4 + rtol * np.abs(w[ok]))
    assert np.all(err <= bound), (host, want, np.max(err - bound))


def numpy_call(func, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(getattr(np, func)(x, **kw))


def reference(func, x, **kw):
    """NumPy's answer, computed from float64 (complex128) data for the
    accumulating functions of narrower floats: NumPy sums float32 strided
    axes one element after the other in float32 (relative errors of 1e-4 on
    200,000 elements), the device in double.  The dtype stays NumPy's."""
    want = numpy_call(func, x, **kw)
    if x.dtype.char in "efF" and func.removeprefix("nan") in ("sum", "prod", "mean", "var",
                                                              "std"):
        wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
        want = numpy_call(func, wide, **kw).astype(want.dtype)
    return want


def device_call(func, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(gp, func)(x, **kw)


# ======================================================= host-side planning

def enumerate_plan(plan, base=0):
    """{output offset: [input offsets, in reduction order]} from a plan."""
    out = {}
    kept = list(itertools.product(*map(range, plan["kept_shape"])))
    red = list(itertools.product(*map(range, plan["red_shape"])))
    for k in kept:
        i0 = base + plan["offset"] + sum(i * s for i, s in zip(k, plan["kept_strides"]))
        o = sum(i * s for i, s in zip(k, plan["out_strides"]))
        out[o] = [i0 + sum(i * s for i, s in zip(r, plan["red_strides"])) for r in red]
    return out


def enumerate_expected(shape, strides, axes, itemsize):
    """The same map computed directly from the N-d input."""
    nd = len(shape)
    if axes is None:
        axes = tuple(range(nd))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(a % nd for a in axes) if nd else ()
    kept = [d for d in range(nd) if d not in axes]
    ostride, ostrides = itemsize, {}
    for d in reversed(kept):
        ostrides[d] = ostride
        ostride *= max(shape[d], 1)
    out = {}
    for idx in itertools.product(*map(range, shape)):
        o = sum(idx[d] * ostrides[d] for d in kept)
        out.setdefault(o, []).append(sum(i * s for i, s in zip(idx, strides)))
    return out


def random_layout(rng, ndim):
    shape = tuple(int(n) for n in rng.integers(1, 5, ndim))
    order = rng.permutation(ndim)
    stride, strides = 8, [0] * ndim
    for axis in order[::-1]:
        strides[axis] = stride * int(rng.choice([1, -1]))
        stride *= shape[axis] * int(rng.integers(1, 3))
    return shape, tuple(strides)


def test_plan_reduce_covers_every_element_once(rng):
    for _ in range(300):
        ndim = int(rng.integers(0, 5))
        shape, strides = random_layout(rng, ndim)
        k = int(rng.integers(0, ndim + 1))
        axes = tuple(int(a) for a in rng.choice(ndim, k, replace=False)) if ndim else ()
        if rng.random() < 0.2:
            axes = None
        plan = _core._plan_reduce(shape, strides, axes, itemsize=8)
        got = {o: sorted(v) for o, v in enumerate_plan(plan).items()}
        want = {o: sorted(v) for o, v in enumerate_expected(shape, strides, axes, 8).items()}
        assert got == want, (shape, strides, axes, plan)
        assert plan["n_red"] == max(len(v) for v in want.values())


def test_plan_reduce_ordered_keeps_c_order(rng):
    # argmin/argmax count positions: the reduction order is the C order of
    # the original axes, whatever the strides.
    for _ in range(200):
        ndim = int(rng.integers(1, 5))
        shape, strides = random_layout(rng, ndim)
        for axes in [None] + list(range(ndim)):
            plan = _core._plan_reduce(shape, strides, axes, itemsize=8, ordered=True)
            got = enumerate_plan(plan)
            want = enumerate_expected(shape, strides, axes, 8)
            assert got == want, (shape, strides, axes, plan)


@pytest.mark.parametrize("shape, strides, axes, want", [
    # full reductions of contiguous, reversed and transposed inputs read one
    # contiguous run with 16-byte loads
    ((1000,), (4,), None, dict(contiguous=True, rows=True, red_shape=(1000,), splits=1)),
    ((1000,), (-4,), None, dict(contiguous=True, offset=-3996, red_strides=(4,))),
    ((30, 40), (4, 120), None, dict(contiguous=True, red_shape=(1200,))),
    # rows: the reduced axis is the dense one
    ((2048, 2048), (8192, 4), 1, dict(rows=True, contiguous=True, block=(256, 1), splits=1)),
    # columns: lanes across outputs, the reduction split among blocks
    ((2048, 2048), (8192, 4), 0, dict(rows=False, contiguous=False, block=(32, 8))),
    # many short rows: several outputs a block
    ((100000, 3), (12, 4), 1, dict(rows=True, block=(1, 256), splits=1)),
], ids=str)
def test_plan_reduce_layouts(shape, strides, axes, want):
    plan = _core._plan_reduce(shape, strides, axes, itemsize=4)
    for key, value in want.items():
        assert plan[key] == value, (key, plan)


@pytest.mark.parametrize("n", [1, 100, 8192, 8193, 4 << 20, 1 << 28])
def test_plan_reduce_full_reduction_splits(n):
    plan = _core._plan_reduce((n,), (4,), None, itemsize=4, sm_count=132)
    bx, by = plan["block"]
    assert bx * by == 256 and plan["rows"]
    if n * 4 <= 32 * 1024:
        assert plan["splits"] == 1          # a small reduction is one launch
    if n * 4 >= 64 * 1024:
        assert 1 < plan["splits"] <= 132 * 8
    # each lane reads at least eight 16-byte vectors
    assert plan["splits"] == 1 or n * 4 // (plan["splits"] * 256) >= 128
    fbx, fby = plan["finish_block"]
    assert fbx * fby == 256 and plan["finish_rows"]


def test_plan_reduce_blocks_are_sane(rng):
    for _ in range(300):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.choice([1, 2, 3, 7, 64, 1000, 5000], ndim))
        strides, s = [0] * ndim, 4
        for d in reversed(range(ndim)):
            strides[d] = s
            s *= shape[d]
        axes = tuple(int(a) for a in rng.choice(ndim, int(rng.integers(1, ndim + 1)),
                                                replace=False))
        p = _core._plan_reduce(shape, tuple(strides), axes, itemsize=4, sm_count=100)
        bx, by = p["block"]
        assert bx * by == 256 and bx & (bx - 1) == 0 and by & (by - 1) == 0
        nu = by if p["rows"] else bx
        assert p["tiles"] * nu >= p["n_out"] > (p["tiles"] - 1) * nu
        assert 1 <= p["splits"] <= 65535
        assert p["splits"] == 1 or p["tiles"] < 100 * 8
        fbx, fby = p["finish_block"]
        assert fbx * fby == 256


def test_plan_reduce_rejects_bad_axes():
    with pytest.raises(np.exceptions.AxisError):
        _core._plan_reduce((3, 4), (32, 8), 2)
    with pytest.raises(ValueError, match="duplicate"):
        _core._plan_reduce((3, 4), (32, 8), (0, -2))


# ======================================================= host-side checks

def test_every_reduction_is_a_function_and_a_method():
    for name in FUNCS + NAN_FUNCS + ["amin", "amax", "average", "diff"]:
        assert callable(getattr(gp, name)), name
    for name in ["sum", "prod", "mean", "var", "std", "min", "max", "ptp", "argmin", "argmax",
                 "all", "any"]:
        assert callable(getattr(gp.ndarray, name)), name
    assert gp.amin is gp.min and gp.amax is gp.max


@pytest.mark.parametrize("func", FUNCS + NAN_FUNCS + ["average", "diff"])
def test_host_array_refused(func):
    with pytest.raises(TypeError, match="gpuarr.asarray"):
        getattr(gp, func)(np.ones(3))


def test_bad_arguments_are_type_errors():
    with pytest.raises(TypeError, match="unexpected keyword"):
        gp.sum(np.ones(3), bogus=1)
    with pytest.raises(TypeError, match="positional"):
        gp.argmin(np.ones(3), None, None, True)
    with pytest.raises(TypeError, match="multiple values"):
        gp.sum(np.ones(3), None, axis=0)


@pytest.mark.parametrize("dtype", [np.dtype(t) for t in "?bhilBHILefdFD"])
def test_result_dtypes_are_numpys(dtype):
    x = np.zeros(3, dtype)
    for name in ["sum", "prod", "mean", "var", "std"]:
        assert _result_dtype(name, dtype, None, None) == numpy_call(name, x).dtype
    for name in ["nansum", "nanprod", "nanmean", "nanvar", "nanstd"]:
        assert _result_dtype(name, dtype, None, None) == numpy_call(name, x).dtype
    for arg in [np.dtype("f4"), np.dtype("i8"), np.dtype("u1")]:
        assert _result_dtype("sum", dtype, arg, None) == numpy_call("sum", x, dtype=arg).dtype
        assert _result_dtype("nansum", dtype, arg, None) == \
            numpy_call("nansum", x, dtype=arg).dtype
    # out= takes part in choosing sum's loop (float32 data summed into a
    # float64 out= adds in float64)
    assert _result_dtype("sum", np.dtype("f4"), None, np.dtype("f8")) == np.dtype("f8")


# ============================================================ on the device

@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["c", "t", "neg", "slice"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("func", FUNCS)
def test_against_numpy(func, dtype, layout, rng):
    if func == "ptp" and dtype.kind == "b":
        pytest.skip("NumPy refuses ptp of bool (tested below)")
    host = sample(rng, (5, 6, 7), dtype, func)
    base, view = base_layouts(host)[layout]
    x = view(gp.asarray(base))
    assert x.shape == host.shape
    for axis, keepdims in itertools.product(AXES, [False, True]):
        if func in ORDERED and isinstance(axis, tuple):
            continue
        kw = {"axis": axis, "keepdims": keepdims}
        want = reference(func, host, **kw)
        got = device_call(func, x, **kw)
        assert_matches(got, want, atol=scale_of(func, host, axis, keepdims))
        if func != "count_nonzero":
            assert_matches(getattr(x, func)(**kw), want, atol=scale_of(func, host, axis, keepdims))


@pytest.mark.gpu
@pytest.mark.parametrize("func", FUNCS)
def test_axis_none_gives_a_0d_device_array(func, rng):
    x = gp.asarray(sample(rng, (4, 5), np.float32, func))
    r = getattr(gp, func)(x)
    assert isinstance(r, gp.ndarray) and r.ndim == 0 and r.shape == ()
    host = numpy_call(func, x.get())
    assert float(r) == pytest.approx(float(host), rel=1e-5, abs=1e-3)


@pytest.mark.gpu
def test_scalars_read_on_demand(rng):
    x = gp.asarray(np.array([1.5, 2.5, -1.0]))
    assert float(x.sum()) == 3.0
    assert bool(x.all()) is True and bool((x > 2).all()) is False
    assert int(x.argmax()) == 1
    assert gp.allclose(x, x + 1e-9) and not gp.array_equal(x, x + 1)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64])
def test_nan_propagates_and_argmin_finds_the_first(dtype, rng):
    host = sample(rng, (6, 50), dtype)
    host[2, 7] = np.nan
    host[2, 30] = np.nan
    host[4, 1] = np.nan
    x = gp.asarray(host)
    for func in ["sum", "mean", "var", "std", "min", "max", "ptp", "argmin", "argmax", "any",
                 "count_nonzero"]:
        for axis in [None, 0, 1]:
            assert_matches(device_call(func, x, axis=axis), reference(func, host, axis=axis),
                           atol=scale_of(func, host, axis, False))


@pytest.mark.gpu
def test_argmin_first_index_across_blocks(rng):
    # many equal extremes and NaNs far apart: the reduction is split among
    # blocks, and the first index must still win
    host = rng.integers(0, 3, 3_000_001).astype(np.float32)
    x = gp.asarray(host)
    assert int(x.argmin()) == int(np.argmin(host))
    assert int(x.argmax()) == int(np.argmax(host))
    host[2_900_000] = np.nan
    host[1_500_000] = np.nan
    x = gp.asarray(host)
    assert int(x.argmin()) == 1_500_000 and int(x.argmax()) == 1_500_000
    cols = rng.integers(0, 2, (200_000, 3)).astype(np.int8)
    assert_matches(gp.asarray(cols).argmax(axis=0), np.argmax(cols, axis=0))
    assert_matches(gp.asarray(cols.T.copy()).argmin(axis=1), np.argmin(cols.T, axis=1))


@pytest.mark.gpu
@pytest.mark.parametrize("func", ["sum", "mean", "var", "std", "min", "max", "argmin", "all",
                                  "count_nonzero", "prod"])
@pytest.mark.parametrize("shape, axis", [((3_000_000,), None), ((200_000, 5), 0),
                                         ((5, 200_000), 1), ((300, 400, 50), (0, 2)),
                                         ((2048, 2048), 0), ((2048, 2048), 1)])
def test_big_inputs_take_the_split_paths(func, shape, axis, rng):
    if func == "argmin" and isinstance(axis, tuple):
        axis = axis[1]
    host = sample(rng, shape, np.float32 if func != "all" else np.bool_, func)
    want = reference(func, host, axis=axis)
    atol = scale_of(func, host, axis, False)
    x = gp.asarray(host)
    assert_matches(device_call(func, x, axis=axis), want, atol=atol)
    xt = gp.asarray(np.ascontiguousarray(host.T)).T     # the same values, transposed layout
    assert_matches(device_call(func, xt, axis=axis), want, atol=atol)


@pytest.mark.gpu
def test_float32_accuracy(rng):
    # std of the lesson's 4.2M-element float32 vector, with an offset that
    # punishes a naive sum of squares
    host = (rng.standard_normal(4_194_304) * 3 + 1000).astype(np.float32)
    x = gp.asarray(host)
    exact = np.std(host.astype(np.float64))
    assert abs(float(x.std()) / float(np.std(host)) - 1) < 1e-6
    assert abs(float(x.std()) / exact - 1) < 1e-6
    assert abs(float(x.var(ddof=1)) / np.var(host.astype(np.float64), ddof=1) - 1) < 1e-6
    assert abs(float(x.mean()) / np.mean(host.astype(np.float64)) - 1) < 1e-7
    big = rng.standard_normal(10_000_000).astype(np.float32)
    s = gp.asarray(big).sum()
    assert s.dtype == np.float32
    assert abs(float(s) - np.sum(big.astype(np.float64))) <= 1e-6 * np.sum(np.abs(big))
    half = rng.standard_normal(100_000).astype(np.float16)
    assert abs(float(gp.asarray(half).sum()) - np.sum(half.astype(np.float64))) <= \
        1e-3 * np.sum(np.abs(half.astype(np.float64)))


@pytest.mark.gpu
@pytest.mark.parametrize("func", FUNCS)
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex64, np.bool_])
def test_zero_d_and_size_one(func, dtype, rng):
    if func == "ptp" and dtype is np.bool_:
        return
    for host in [sample(rng, (), dtype, func), sample(rng, (1,), dtype, func),
                 sample(rng, (1, 1, 1), dtype, func)]:
        x = gp.asarray(host)
        for kw in [{}, {"keepdims": True}, {"axis": 0}, {"axis": -1}]:
            if host.ndim == 0 and "axis" in kw and func in ("mean", "var", "std"):
                with pytest.raises(np.exceptions.AxisError):
                    device_call(func, x, **kw)
                continue
            assert_matches(device_call(func, x, **kw), reference(func, host, **kw))


@pytest.mark.gpu
@pytest.mark.parametrize("func", NAN_FUNCS)
@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.float64, np.complex64, np.bool_])
@pytest.mark.parametrize("axis", [0, -1])
def test_nan_functions_of_0d_with_axis_0(func, dtype, axis, rng):
    """NumPy's nan* functions of a 0-d array take axis 0 or -1 as ufunc
    reductions do, except nanmean/nanvar/nanstd of non-float data, which are
    mean/var/std (AxisError)."""
    host = sample(rng, (), dtype, func)
    try:
        want = reference(func, host, axis=axis)
    except np.exceptions.AxisError:
        with pytest.raises(np.exceptions.AxisError):
            device_call(func, gp.asarray(host), axis=axis)
        return
    assert_matches(device_call(func, gp.asarray(host), axis=axis), want)


@pytest.mark.gpu
def test_empty_inputs():
    e = gp.zeros((0,), np.int32)
    assert_matches(gp.sum(e), np.int64(0))
    assert_matches(gp.prod(e), np.int64(1))
    assert_matches(gp.all(e), np.True_)
    assert_matches(gp.any(e), np.False_)
    assert_matches(gp.count_nonzero(e), np.int64(0))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        assert_matches(gp.mean(e), np.float64(np.nan))
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        assert_matches(gp.var(gp.zeros((0,))), np.float64(np.nan))
    with pytest.raises(ValueError, match="zero-size array to reduction operation minimum which "
                                         "has no identity"):
        gp.min(e)
    with pytest.raises(ValueError, match="operation maximum"):
        e.max()
    with pytest.raises(ValueError, match="operation maximum"):
        gp.ptp(e)
    with pytest.raises(ValueError, match="attempt to get argmin of an empty sequence"):
        gp.argmin(e)
    assert_matches(gp.min(e, initial=3), np.min(np.zeros(0, np.int32), initial=3))
    e2 = gp.zeros((0, 3), np.float32)
    assert_matches(e2.sum(axis=0), np.zeros(3, np.float32))
    assert_matches(e2.max(axis=1), np.zeros(0, np.float32))
    assert_matches(e2.argmax(axis=1), np.zeros(0, np.int64))
    with pytest.raises(ValueError, match="no identity"):
        e2.max(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_matches(e2.mean(axis=0), np.mean(np.zeros((0, 3), np.float32), axis=0))
        assert_matches(gp.var(gp.ones(3), ddof=5), np.var(np.ones(3), ddof=5))
        assert_matches(gp.var(gp.asarray([1.0, 2.0, 4.0]), ddof=5),
                       np.var(np.array([1.0, 2.0, 4.0]), ddof=5))


@pytest.mark.gpu
def test_ptp_of_bool_is_refused():
    """NumPy's ptp is max - min: TypeError at the subtraction, with no out=
    or a bool one, but an empty reduction fails in max first (ValueError;
    found by the gpu profile of test_properties)."""
    with pytest.raises(TypeError, match="boolean subtract"):
        gp.ptp(gp.ones(3, bool))
    with pytest.raises(TypeError, match="boolean subtract"):
        gp.ptp(gp.ones((0, 3), bool), axis=1)
    out = gp.ones((2,), bool)
    with pytest.raises(TypeError, match="boolean subtract"):
        np.ptp(np.ones((2, 3), bool), axis=1, out=np.ones((2,), bool))
    with pytest.raises(TypeError, match="boolean subtract"):
        gp.ptp(gp.ones((2, 3), bool), axis=1, out=out)
    assert out.get().all()
    for shape, axis in [((0,), None), ((3, 0), 1), ((0, 2), 0)]:
        with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
            np.ptp(np.ones(shape, bool), axis=axis)
        with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
            gp.ptp(gp.ones(shape, bool), axis=axis)
        out_shape = np.max(np.ones(shape, bool), axis=axis, initial=False).shape
        with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
            np.ptp(np.ones(shape, bool), axis=axis, out=np.zeros(out_shape, np.int64))
        with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
            gp.ptp(gp.ones(shape, bool), axis=axis, out=gp.zeros(out_shape, np.int64))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.uint64, np.float16,
                                   np.float32, np.float64, np.complex64, np.complex128], ids=str)
def test_ptp_of_bool_into_a_numeric_out(dtype, rng):
    """With a numeric out= NumPy's ptp of bool data is max - min in out's
    dtype (the max goes into out=, then out - min): 1 where a slice holds
    both values, else 0, for every axis, keepdims and layout; a 0-d input
    gives 0, and an empty output is no error."""
    host = sample(rng, (5, 6, 7), np.bool_)
    host[:, :, 0] = True              # slices along axes 0 and 1 all True there,
    host[:, :, 1] = False             # all False here, and every slice along axis 2 mixed
    for layout, (base, view) in base_layouts(host).items():
        x = view(gp.asarray(base))
        for axis, keepdims in itertools.product(AXES, [False, True]):
            shape = np.max(host, axis=axis, keepdims=keepdims).shape
            want = np.ptp(host, axis=axis, keepdims=keepdims, out=np.zeros(shape, dtype))
            out = gp.full(shape, 7, dtype)
            assert gp.ptp(x, axis=axis, keepdims=keepdims, out=out) is out
            assert_matches(out, want)
            out = gp.full(shape, 7, dtype)
            assert x.ptp(axis=axis, keepdims=keepdims, out=out) is out
            assert_matches(out, want)
    for h in [np.array(True), np.ones((1, 1), bool)]:
        out = gp.full((), 7, dtype)
        assert gp.ptp(gp.asarray(h), out=out) is out
        assert_matches(out, np.ptp(h, out=np.zeros((), dtype)))
    e = gp.zeros((3, 0), bool)
    out = gp.zeros((0,), dtype)
    assert gp.ptp(e, axis=0, out=out) is out
    assert_matches(out, np.ptp(np.zeros((3, 0), bool), axis=0, out=np.zeros((0,), dtype)))


@pytest.mark.gpu
@pytest.mark.parametrize("func, dtype, arg", [
    ("sum", np.int8, np.int8), ("sum", np.int32, np.float32), ("sum", np.float32, np.float64),
    ("sum", np.int64, np.float64), ("sum", np.int8, np.bool_), ("sum", np.float64, np.float16),
    ("sum", np.complex64, np.complex128), ("sum", np.uint8, np.int16), ("sum", np.bool_, np.bool_),
    ("prod", np.int16, np.int16), ("prod", np.bool_, np.bool_), ("prod", np.float32, np.float64),
    ("mean", np.int32, np.float32), ("mean", np.float16, np.float64), ("mean", np.int8, np.int64),
    ("var", np.float32, np.float64), ("std", np.int16, np.float32), ("var", np.bool_, None),
], ids=str)
def test_dtype_argument(func, dtype, arg, rng):
    host = sample(rng, (40, 30), dtype, func)
    if np.dtype(dtype).kind == "f" and arg is np.float16:
        host = (host / 10).astype(dtype)
    x = gp.asarray(host)
    for axis in [None, 0, 1]:
        want = numpy_call(func, host, axis=axis, dtype=arg)
        rtol = 2e-2 if want.dtype == np.float16 else None
        # integers summed in a float dtype= round like floats: NumPy adds
        # int32 data in float32 (errors of 1e-5 of the result where the
        # terms cancel), the device in double, so the error allowed scales
        # with sum(|x|), as for float inputs
        summed = host.astype(want.dtype) if want.dtype.kind in "fc" else host
        assert_matches(device_call(func, x, axis=axis, dtype=arg), want, rtol=rtol,
                       atol=scale_of(func, summed, axis, False))


@pytest.mark.gpu
def test_out_argument(rng):
    host = sample(rng, (20, 30), np.float32)
    x = gp.asarray(host)
    out = gp.empty((30,), np.float32)
    r = gp.sum(x, axis=0, out=out)
    assert r is out
    assert_matches(out, np.sum(host, axis=0), atol=scale_of("sum", host, 0, False))
    # another dtype: NumPy adds float32 data in float64 when out= is float64
    out64 = gp.empty((), np.float64)
    assert x.sum(out=out64) is out64
    assert_matches(out64, np.sum(host, out=np.empty((), np.float64)),
                   atol=scale_of("sum", host, None, False))
    # a strided out= (every other element of a bigger array)
    big = gp.zeros((20, 2), np.float64)
    x.mean(axis=1, out=big[:, 1])
    assert_matches(big[:, 1], np.mean(host, axis=1, dtype=np.float64).astype(np.float64),
                   rtol=1e-6, atol=scale_of("mean", host, 1, False))
    assert not big[:, 0].any()
    # keepdims, argmin into int32, all into int, a tuple out=
    outk = gp.empty((1, 30), np.float32)
    assert_matches(x.max(axis=0, keepdims=True, out=outk), np.max(host, axis=0, keepdims=True))
    o32 = gp.empty((20,), np.int32)
    assert_matches(x.argmin(axis=1, out=o32), np.argmin(host, axis=1).astype(np.int32))
    oi = gp.empty((30,), np.int64)
    assert_matches(gp.any(x > 0, axis=0, out=oi), np.any(host > 0, axis=0).astype(np.int64))
    ot = gp.empty((30,), np.float32)
    assert gp.sum(x, axis=0, out=(ot,)) is ot
    # out= overlapping the input goes through a temporary
    y = gp.asarray(host.copy())
    gp.sum(y, axis=1, out=y[:, 0])
    want = host.copy()
    np.sum(want, axis=1, out=want[:, 0])
    assert_matches(y, want, atol=np.sum(np.abs(host)))


@pytest.mark.gpu
def test_out_errors_leave_out_unchanged(rng):
    x = gp.asarray(sample(rng, (4, 5), np.float64))
    out = gp.full((4,), 7.0)
    with pytest.raises(ValueError, match="wrong number of dimensions"):
        gp.sum(x, out=out)
    with pytest.raises(ValueError, match="shape"):
        gp.sum(x, axis=1, out=gp.full((5,), 7.0))
    with pytest.raises(ValueError, match="keepdims"):
        gp.sum(x, axis=1, keepdims=True, out=out)
    with pytest.raises(TypeError, match="gpuarr.ndarray"):
        gp.sum(x, axis=1, out=np.zeros(4))
    with pytest.raises(np.exceptions.AxisError):
        gp.sum(x, axis=2, out=out)
    assert (out.get() == 7.0).all()


@pytest.mark.gpu
def test_axis_errors(rng):
    x = gp.asarray(sample(rng, (3, 4), np.float32))
    for func in FUNCS:
        with pytest.raises(np.exceptions.AxisError):
            getattr(gp, func)(x, axis=2)
        with pytest.raises(np.exceptions.AxisError):
            getattr(gp, func)(x, axis=-3)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        gp.sum(x, axis=(0, -2))
    with pytest.raises(TypeError, match="'tuple' object cannot be interpreted as an integer"):
        gp.argmin(x, axis=(0, 1))
    with pytest.raises(TypeError):
        gp.sum(x, axis=[0, 1])
    with pytest.raises(NotImplementedError, match="where"):
        gp.sum(x, where=x > 0)


@pytest.mark.gpu
def test_initial_and_sequences(rng):
    host = sample(rng, (6, 7), np.int8)
    x = gp.asarray(host)
    assert_matches(gp.sum(x, initial=300), np.sum(host, initial=300))
    assert_matches(gp.max(x, axis=0, initial=100), np.max(host, axis=0, initial=100))
    assert_matches(gp.prod(x, axis=1, initial=2), np.prod(host, axis=1, initial=2))
    assert_matches(gp.sum([1, 2, 3]), np.sum([1, 2, 3]))
    assert_matches(gp.max(2.5), np.max(2.5))


@pytest.mark.gpu
def test_var_ddof_and_correction(rng):
    host = sample(rng, (30, 40), np.float64)
    x = gp.asarray(host)
    for ddof in [0, 1, 2.5]:
        assert_matches(x.var(ddof=ddof, axis=0), np.var(host, ddof=ddof, axis=0))
        assert_matches(gp.std(x, axis=1, ddof=ddof), np.std(host, axis=1, ddof=ddof))
    assert_matches(gp.var(x, correction=1), np.var(host, ddof=1))
    with pytest.raises(ValueError, match="simultaneously"):
        gp.var(x, ddof=1, correction=1)


@pytest.mark.gpu
def test_numpy_functions_dispatch_to_the_device(rng):
    host = sample(rng, (8, 9), np.float64)
    x = gp.asarray(host)
    r = np.sum(x, axis=0)
    assert isinstance(r, gp.ndarray)
    assert_matches(r, np.sum(host, axis=0), atol=scale_of("sum", host, 0, False))
    assert_matches(np.std(x), np.std(host))
    assert_matches(np.argmax(x, axis=1), np.argmax(host, axis=1))


def test_nan_functions_check_arguments_before_the_device():
    with pytest.raises(TypeError, match="unexpected keyword"):
        gp.nanmin(np.ones(3), ddof=1)
    with pytest.raises(TypeError, match="positional"):
        gp.nanargmax(np.ones(3), None, None, True)
    with pytest.raises(ValueError, match="order must be non-negative"):
        gp.diff([1, 2, 3], n=-1)


# ================================================== nan*, average, diff

def with_nans(rng, host, frac=0.25):
    """A copy of host with about `frac` of its elements NaN (floats and
    complex; other dtypes unchanged)."""
    host = host.copy()
    if host.dtype.kind in "fc" and host.size:
        host[rng.random(host.shape) < frac] = np.nan
    return host


def numpy_or_error(func, host, **kw):
    """NumPy's answer, or the ValueError it raises (nanarg* of an all-NaN
    slice, min of an empty one)."""
    try:
        return reference(func, host, **kw), None
    except ValueError as exc:
        return None, exc


def check_nan_func(func, host, x, **kw):
    want, err = numpy_or_error(func, host, **kw)
    if err is not None:
        with pytest.raises(ValueError, match=str(err)):
            device_call(func, x, **kw)
        return
    got = device_call(func, x, **kw)
    assert_matches(got, want, atol=scale_of(func, host, kw.get("axis"),
                                            kw.get("keepdims", False)))


NAN_DTYPES = [np.dtype(t) for t in (np.bool_, np.int16, np.uint8, np.int64, np.float16,
                                    np.float32, np.float64, np.complex64, np.complex128)]


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["c", "t", "neg", "slice"])
@pytest.mark.parametrize("dtype", NAN_DTYPES, ids=str)
@pytest.mark.parametrize("func", NAN_FUNCS)
def test_nan_functions_against_numpy(func, dtype, layout, rng):
    host = with_nans(rng, sample(rng, (5, 6, 7), dtype, func))
    base, view = base_layouts(host)[layout]
    x = view(gp.asarray(base))
    for axis, keepdims in itertools.product(AXES, [False, True]):
        if func in ORDERED and isinstance(axis, tuple):
            continue
        check_nan_func(func, host, x, axis=axis, keepdims=keepdims)


@pytest.mark.gpu
@pytest.mark.parametrize("func", NAN_FUNCS)
def test_nan_functions_big_inputs(func, rng):
    # the split (two-kernel) paths, with NaNs; whole NaN columns where
    # NumPy warns or raises
    for shape, axis in [((3_000_000,), None), ((200_000, 5), 0), ((5, 200_000), 1),
                        ((2048, 2048), 0)]:
        host = with_nans(rng, sample(rng, shape, np.float32, func), 0.3)
        check_nan_func(func, host, gp.asarray(host), axis=axis)
    host = with_nans(rng, sample(rng, (64, 4096), np.float64, func), 0.5)
    host[:, 7] = np.nan
    check_nan_func(func, host, gp.asarray(host), axis=0)


@pytest.mark.gpu
def test_all_nan_slices_follow_numpy():
    host = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    x = gp.asarray(host)
    for func in ["nanmin", "nanmax", "nanmean"]:
        msg = "All-NaN slice" if func != "nanmean" else "Mean of empty slice"
        with pytest.warns(RuntimeWarning, match=msg):
            got = getattr(gp, func)(x, axis=1)
        assert_matches(got, numpy_call(func, host, axis=1))
    for func in ["nanvar", "nanstd"]:
        with pytest.warns(RuntimeWarning, match=r"Degrees of freedom <= 0 for slice\."):
            got = getattr(gp, func)(x, axis=1, ddof=2)
        assert_matches(got, numpy_call(func, host, axis=1, ddof=2))
    for func in ["nanargmin", "nanargmax"]:
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            getattr(gp, func)(x, axis=1)
        out = gp.full((2,), 7, np.int64)
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            getattr(gp, func)(x, axis=1, out=out)
        assert (out.get() == 7).all()
        assert_matches(getattr(gp, func)(x[:1], axis=1), numpy_call(func, host[:1], axis=1))
    # sums of all-NaN slices are the identity, silently
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_matches(gp.nansum(x, axis=1), np.nansum(host, axis=1))
        assert_matches(gp.nanprod(x, axis=1), np.nanprod(host, axis=1))
        # no all-NaN slice: no warning, no error (columns 0 and 2 have a
        # number each; column 1 is all NaN and warns, as NumPy's does)
        assert_matches(gp.nanmin(x[:, ::2], axis=0), np.nanmin(host[:, ::2], axis=0))
        assert_matches(gp.nanmax(x[0]), np.nanmax(host[0]))
        assert_matches(gp.nanargmax(x[0]), np.nanargmax(host[0]))
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        got = gp.nanmin(x, axis=0)
    assert_matches(got, numpy_call("nanmin", host, axis=0))
    # a NaN mean from inf - inf is not an empty slice: NumPy does not say
    # "Mean of empty slice" (its own add warns about the invalid value)
    inf = np.array([np.inf, -np.inf, np.nan])
    want = numpy_call("nanmean", inf)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_matches(gp.nanmean(gp.asarray(inf)), want)


@pytest.mark.gpu
def test_nanargmin_counts_nan_as_infinity():
    # NumPy replaces NaN by +inf (argmin) / -inf (argmax): ties go to the
    # first index, even a NaN's
    for host in [np.array([np.nan, np.inf, 1.0]), np.array([np.nan, np.inf]),
                 np.array([np.inf, np.nan]), np.array([-np.inf, np.nan, 2.0]),
                 np.array([np.nan, -np.inf])]:
        x = gp.asarray(host)
        assert int(gp.nanargmin(x)) == np.nanargmin(host), host
        assert int(gp.nanargmax(x)) == np.nanargmax(host), host


@pytest.mark.gpu
@pytest.mark.parametrize("func", ["nanargmin", "nanargmax"])
@pytest.mark.parametrize("axis", [(), (0,), (-1,), (5,), (0, 0)], ids=str)
@pytest.mark.parametrize("data", [[1.0, 2.0], [np.nan, np.nan], [1.0, np.nan], [1j, np.nan],
                                  [1, 2], np.zeros(0)], ids=str)
def test_nanarg_of_a_tuple_axis_raises_numpys_error(func, axis, data):
    """nanargmin/nanargmax refuse a tuple axis as argmin does (TypeError),
    but NumPy's first look at the NaNs along it (np.all of the mask, for
    inexact non-empty data) raises first: AxisError, a repeated axis, an
    all-NaN slice.  hypothesis found the all-NaN case (test_properties)."""
    host = np.asarray(data)
    with pytest.raises(Exception) as want:  # noqa: PT011 -- NumPy's error is the spec
        getattr(np, func)(host, axis=axis)
    # AxisError's wording differs between NumPy versions: its class only
    match = None if want.type is np.exceptions.AxisError else re.escape(str(want.value))
    with pytest.raises(want.type, match=match):
        getattr(gp, func)(gp.asarray(host), axis=axis)


@pytest.mark.gpu
def test_nan_functions_empty_and_errors(rng):
    e = gp.zeros((0,), np.float32)
    assert_matches(gp.nansum(e), np.nansum(np.zeros(0, np.float32)))
    assert_matches(gp.nanprod(e), np.nanprod(np.zeros(0, np.float32)))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        assert_matches(gp.nanmean(e), np.float32(np.nan))
    with pytest.raises(ValueError, match="reduction operation fmin which has no identity"):
        gp.nanmin(e)
    with pytest.raises(ValueError, match="reduction operation maximum which has no identity"):
        gp.nanmax(gp.zeros((0,), np.int32))
    with pytest.raises(ValueError, match="attempt to get argmin of an empty sequence"):
        gp.nanargmin(e)
    x = gp.asarray(with_nans(rng, sample(rng, (4, 5), np.float64)))
    with pytest.raises(TypeError, match="If a is inexact, then dtype must be inexact"):
        gp.nanmean(x, dtype=np.int32)
    with pytest.raises(TypeError, match="If a is inexact, then out must be inexact"):
        gp.nanmean(x, axis=0, out=gp.empty((5,), np.int64))
    with pytest.raises(np.exceptions.AxisError):
        gp.nanmax(x, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        gp.nanargmin(x, axis=-3)
    with pytest.raises(TypeError, match="'tuple' object cannot be interpreted as an integer"):
        gp.nanargmin(x, axis=(0, 1))


@pytest.mark.gpu
def test_nan_functions_dtype_out_initial(rng):
    host = with_nans(rng, sample(rng, (30, 40), np.float64))
    x = gp.asarray(host)
    # NaNs are zero before the cast to an integer dtype=
    for axis in [None, 0]:
        assert_matches(gp.nansum(x, axis=axis, dtype=np.int32),
                       np.nansum(host, axis=axis, dtype=np.int32))
        assert_matches(gp.nanmean(x, axis=axis, dtype=np.float32),
                       np.nanmean(host, axis=axis, dtype=np.float32), rtol=1e-5,
                       atol=scale_of("nanmean", host, axis, False))
    out = gp.empty((40,), np.float32)
    assert gp.nanstd(x, axis=0, out=out) is out
    assert_matches(out, np.nanstd(host, axis=0).astype(np.float32))
    assert_matches(gp.nanmax(x, axis=1, initial=150.0), np.nanmax(host, axis=1, initial=150.0))
    assert_matches(gp.nansum(x, initial=3.0), np.nansum(host, initial=3.0),
                   atol=scale_of("sum", host, None, False))
    o32 = gp.empty((40,), np.int32)
    assert_matches(gp.nanargmin(x, axis=0, out=o32), np.nanargmin(host, axis=0).astype(np.int32))
    assert_matches(gp.nanvar(x, ddof=1, axis=1), np.nanvar(host, ddof=1, axis=1))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float32, np.float64, np.complex64])
def test_average_against_numpy(dtype, rng):
    host = sample(rng, (4, 5, 6), dtype)
    x = gp.asarray(host)
    w = rng.uniform(0.5, 2.0, (4, 5, 6)).astype(np.float32)
    for axis in [None, 0, -1, (0, 2)]:
        for keepdims in [False, True]:
            want = np.average(host, axis=axis, keepdims=keepdims)
            assert_matches(gp.average(x, axis=axis, keepdims=keepdims), want,
                           atol=scale_of("mean", host.astype(want.dtype), axis, keepdims))
            want, wsum = np.average(host, axis=axis, weights=w, returned=True,
                                    keepdims=keepdims)
            got, gsum = gp.average(x, axis=axis, weights=gp.asarray(w), returned=True,
                                   keepdims=keepdims)
            assert_matches(got, want, atol=scale_of("mean", host.astype(want.dtype) *
                                                    w.max(), axis, keepdims))
            assert_matches(gsum, wsum, rtol=1e-5)
    # 1-d weights along one axis, tuple axes with weights of those axes
    w1 = rng.uniform(0.5, 2.0, 5)
    assert_matches(gp.average(x, axis=1, weights=gp.asarray(w1)),
                   np.average(host, axis=1, weights=w1),
                   atol=scale_of("mean", host.astype(np.complex128 if host.dtype.kind == "c"
                                                     else np.float64), 1, False) * 2)
    w2 = rng.uniform(0.5, 2.0, (6, 4))
    assert_matches(gp.average(x, axis=(2, 0), weights=gp.asarray(w2)),
                   np.average(host, axis=(2, 0), weights=w2),
                   atol=scale_of("mean", host.astype(np.complex128 if host.dtype.kind == "c"
                                                     else np.float64), (0, 2), False) * 2)
    # without weights the count comes shaped as the average (a scalar only
    # for a 0-d average), in the average's dtype
    for axis, keepdims in [(0, False), ((0, 2), True), (None, True)]:
        avg, count = gp.average(x, axis=axis, returned=True, keepdims=keepdims)
        want = np.average(host, axis=axis, returned=True, keepdims=keepdims)[1]
        assert_matches(count, want)
    avg, count = gp.average(x, returned=True)
    want = np.average(host, returned=True)[1]
    assert type(count) is type(want) and count == want
    # the sum of 1-d weights, broadcast to the average's shape
    avg, wsum = gp.average(x, axis=1, weights=gp.asarray(w1), returned=True)
    assert_matches(wsum, np.average(host, axis=1, weights=w1, returned=True)[1])


@pytest.mark.gpu
def test_average_errors(rng):
    x = gp.asarray(sample(rng, (3, 4), np.float64))
    with pytest.raises(TypeError, match="Axis must be specified"):
        gp.average(x, weights=gp.ones(4))
    with pytest.raises(ValueError, match="Shape of weights must be consistent"):
        gp.average(x, axis=0, weights=gp.ones(4))
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        gp.average(x, axis=1, weights=gp.zeros(4))
    with pytest.raises(np.exceptions.AxisError):
        gp.average(x, axis=2)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float32,
                                   np.complex64])
def test_diff_against_numpy(dtype, rng):
    host = sample(rng, (5, 6, 7), dtype)
    base, view = base_layouts(host)["t"]
    x = view(gp.asarray(base))
    for n in [0, 1, 2, 3]:
        for axis in [-1, 0, 1]:
            assert_matches(gp.diff(x, n=n, axis=axis), np.diff(host, n=n, axis=axis))
    assert_matches(gp.diff(x, n=7), np.diff(host, n=7))   # more than the axis: empty
    one = np.ones((), dtype)
    assert_matches(gp.diff(x, axis=0, prepend=gp.asarray(one), append=gp.asarray(one)),
                   np.diff(host, axis=0, prepend=one, append=one))
    edge = sample(rng, (5, 2, 7), dtype)
    assert_matches(gp.diff(x, axis=1, append=gp.asarray(edge)),
                   np.diff(host, axis=1, append=edge))
    assert_matches(gp.diff(x, axis=1, n=2, prepend=gp.asarray(edge)),
                   np.diff(host, axis=1, n=2, prepend=edge))
    with pytest.raises(np.exceptions.AxisError):
        gp.diff(x, axis=3)
    with pytest.raises(ValueError, match="at least one dimensional"):
        gp.diff(gp.asarray(one))


@pytest.mark.gpu
def test_numpy_dispatch_of_the_new_functions(rng):
    host = with_nans(rng, sample(rng, (8, 9), np.float64))
    x = gp.asarray(host)
    for func in ["nansum", "nanmean", "nanstd", "nanmax", "nanargmin"]:
        r = getattr(np, func)(x, axis=0)
        assert isinstance(r, gp.ndarray), func
        assert_matches(r, numpy_call(func, host, axis=0), atol=scale_of(func, host, 0, False))
    clean = sample(rng, (8, 9), np.float64)
    c = gp.asarray(clean)
    w = np.arange(1.0, 10.0)
    # weighted sums cancel: rounding is relative to the average of |x|
    assert_matches(np.average(c, axis=1, weights=gp.asarray(w)),
                   np.average(clean, axis=1, weights=w),
                   atol=np.average(np.abs(clean), axis=1, weights=w))
    assert_matches(np.diff(c, axis=0), np.diff(clean, axis=0))
    assert_matches(np.cumsum(c, axis=1), np.cumsum(clean, axis=1),
                   atol=np.cumsum(np.abs(clean), axis=1))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32,
                                   np.int64, np.uint64], ids=str)
def test_integer_mean_is_numpys_exact_quotient(dtype, rng):
    # NumPy sums integers in float64 and divides once, so a slice that sums
    # to zero has mean exactly 0.0 and every other mean is the correctly
    # rounded quotient; a running mean would leave rounding noise.
    hi = 2 if dtype == np.bool_ else 100
    host = rng.integers(0, hi, size=(7, 3001)).astype(dtype)
    if np.dtype(dtype).kind == "i":
        host[:3, 1500:3000] = -host[:3, :1500]               # rows 0-2 sum to zero
    x = gp.asarray(host)
    for axis in (None, 0, 1, (0, 1)):
        got = x.mean(axis=axis)
        want = np.asarray(host.mean(axis=axis))
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(got.get()), want)
    assert_matches(x.mean(axis=1, dtype=np.float32), host.mean(axis=1, dtype=np.float32))
    f = gp.empty(7, dtype=np.float32)
    x.mean(axis=1, out=f)
    np.testing.assert_array_equal(f.get(), host.mean(axis=1).astype(np.float32))
