"""gpuarr.scipy.ndimage's filters against scipy.ndimage on fresh random
data: correlate, convolve, correlate1d, convolve1d (every mode, cval,
origin, axis), gaussian_filter(1d) (sigma scalar and per axis, order 0-2,
truncate, mode, radius), uniform_filter(1d), minimum/maximum_filter(1d)
(size and footprint), median, rank and percentile filters, in 1-d, 2-d and
3-d; output dtypes (output= array or dtype), non-contiguous inputs, and
SciPy's errors.  Each comparison runs over the NumPy model of the engine
(CPU, CI) and on the device; the argument checks run without a GPU."""
import numpy as np
import pytest

ndi = pytest.importorskip("scipy.ndimage")

from gpuarr.scipy import ndimage

from _conv_compare import check_close, rand, same
from _conv_emulation import backend  # noqa: F401 -- the fixture

MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]
SHAPES = [(17,), (9, 11), (5, 6, 7)]
FLOAT_DTYPES = [np.float32, np.float64]


def _ints_slack(got, want):
    # SciPy and gpuarr both sum in floating point and truncate to integers:
    # a sum that lands within rounding of an integer may truncate either way.
    check_close(got, want, int_slack=1)


def _rtol32(got, want):
    # float32 inputs: gpuarr sums in float32, SciPy in float64.
    check_close(got, want, rtol=1e-5 if want.dtype in (np.float32, np.complex64) else None)


# ------------------------------------------------------------ correlate --

@pytest.mark.parametrize("name", ["correlate1d", "convolve1d"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("k", [1, 2, 3, 4, 7, 30])
def test_1d_filters_modes_sizes(backend, rng, name, mode, shape, k):
    x = rand(rng, shape, np.float64)
    w = rand(rng, (k,), np.float64)
    for axis in range(-len(shape), len(shape)):
        same(backend, getattr(ndimage, name), getattr(ndi, name), x, w, axis=axis, mode=mode,
             cval=1.5)


@pytest.mark.parametrize("name", ["correlate1d", "convolve1d"])
@pytest.mark.parametrize("k", [1, 2, 4, 5])
def test_1d_filters_origins(backend, rng, name, k):
    x = rand(rng, (8, 13), np.float64)
    w = rand(rng, (k,), np.float64)
    for origin in range(-(k // 2) - 1, (k - 1) // 2 + 2):
        for mode in ("reflect", "constant"):
            same(backend, getattr(ndimage, name), getattr(ndi, name), x, w, axis=0,
                 mode=mode, origin=origin)


@pytest.mark.parametrize("name", ["correlate1d", "convolve1d", "correlate", "convolve"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint8, np.int64,
                                   np.complex64, np.complex128, np.bool_], ids=str)
@pytest.mark.parametrize("wdtype", [np.float64, np.int32, np.complex128], ids=str)
def test_correlate_dtypes(backend, rng, name, dtype, wdtype):
    x = rand(rng, (7, 9), dtype)
    if name.endswith("1d"):
        w = rand(rng, (3,), wdtype)
    else:
        w = rand(rng, (3, 2), wdtype)
    check = _ints_slack if np.dtype(dtype).kind in "biu" else _rtol32
    same(backend, getattr(ndimage, name), getattr(ndi, name), x, w, check=check)


@pytest.mark.parametrize("name", ["correlate", "convolve"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", [((17,), (4,)), ((9, 11), (3, 3)), ((9, 11), (4, 1)),
                                    ((8, 10), (2, 5)), ((4, 5), (9, 12)), ((5, 6, 7), (3, 2, 3)),
                                    ((5, 6, 7), (1, 1, 4)), ((3, 4, 5), (5, 5, 5)),
                                    ((40, 70), (15, 15))], ids=str)
def test_nd_filters_modes_shapes(backend, rng, name, mode, shapes):
    x = rand(rng, shapes[0], np.float64)
    w = rand(rng, shapes[1], np.float64)
    same(backend, getattr(ndimage, name), getattr(ndi, name), x, w, mode=mode, cval=-0.5)


@pytest.mark.parametrize("name", ["correlate", "convolve"])
def test_nd_filters_origins(backend, rng, name):
    x = rand(rng, (9, 10), np.float64)
    w = rand(rng, (3, 4), np.float64)
    for o0 in range(-2, 3):
        for o1 in range(-3, 3):
            same(backend, getattr(ndimage, name), getattr(ndi, name), x, w, origin=(o0, o1),
                 mode="nearest")
    same(backend, getattr(ndimage, name), getattr(ndi, name), x, w, origin=1)
    same(backend, getattr(ndimage, name), getattr(ndi, name), x, w, origin=-1)


@pytest.mark.parametrize("name", ["correlate", "convolve"])
def test_nd_filters_axes(backend, rng, name):
    x = rand(rng, (5, 6, 7), np.float64)
    for axes, wshape in (((0, 2), (3, 2)), ((1,), (4,)), ((-1, 0), (2, 3)), ((2, 1, 0), (2, 3, 2))):
        w = rand(rng, wshape, np.float64)
        same(backend, getattr(ndimage, name), getattr(ndi, name), x, w, axes=axes, mode="wrap")


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["correlate", "convolve"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_separable_weights_every_mode(rng, name, dtype):
    """2-d weights that factor as u v^T on an image big enough for the
    separable kernel (chosen on the device): every mode, cval and origins,
    as the general kernel gives them."""
    import gpuarr
    x = rand(rng, (1000, 900), dtype)
    u, v = rng.standard_normal(13), rng.standard_normal(10)
    w = np.outer(u, v).astype(dtype)
    for mode in MODES:
        for origin in (0, (-3, 2)):
            want = getattr(ndi, name)(x, w, mode=mode, cval=0.75, origin=origin)
            got = getattr(ndimage, name)(gpuarr.asarray(x), gpuarr.asarray(w), mode=mode,
                                         cval=0.75, origin=origin)
            _rtol32(got.get(), want)


@pytest.mark.parametrize("name", ["correlate", "convolve", "correlate1d", "gaussian_filter",
                                  "uniform_filter", "median_filter", "minimum_filter"])
def test_non_contiguous_inputs(backend, rng, name):
    x = rand(rng, (20, 18, 6), np.float64)
    dx = backend.asarray(x)
    args = {"correlate": (rand(rng, (3, 2, 2), np.float64),),
            "convolve": (rand(rng, (2, 3, 3), np.float64),),
            "correlate1d": (rand(rng, (4,), np.float64),),
            "gaussian_filter": (1.3,), "uniform_filter": (3,), "median_filter": (3,),
            "minimum_filter": ((2, 3, 2),)}[name]
    dargs = tuple(backend.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    for sl in ((slice(None, None, 2), slice(1, None, 3), slice(None)),
               (slice(None, None, -1), slice(None), slice(None, None, -2))):
        want = getattr(ndi, name)(x[sl], *args)
        got = getattr(ndimage, name)(dx[sl], *dargs)
        check_close(backend.get(got), want)
    want = getattr(ndi, name)(x.transpose(2, 0, 1), *args)
    got = getattr(ndimage, name)(dx.transpose(2, 0, 1), *dargs)
    check_close(backend.get(got), want)


@pytest.mark.parametrize("output", [np.float32, np.float64, np.int32, np.complex128, "array"],
                         ids=str)
def test_output_argument(backend, rng, output):
    x = rand(rng, (8, 9), np.float64)
    w = rand(rng, (3, 3), np.float64)
    if output == "array":
        out = backend.asarray(np.zeros((8, 9), np.float32))
        res = ndimage.correlate(backend.asarray(x), backend.asarray(w), output=out)
        assert res is out
        check_close(backend.get(out), ndi.correlate(x, w, output=np.float32), rtol=1e-5)
        return
    check = _ints_slack if np.dtype(output).kind == "i" else _rtol32
    for name, args in (("correlate", (w,)), ("convolve1d", (w[0],)), ("gaussian_filter", (1.5,)),
                       ("uniform_filter", (3,)), ("median_filter", (3,))):
        theirs = getattr(ndi, name)
        if np.dtype(output).kind == "c":
            if name == "median_filter":
                continue
            # SciPy refuses a complex output for a real input (RuntimeError,
            # "array type not supported"); gpuarr writes the real result
            # into it (a documented difference).

            def theirs(*a, output=None, f=theirs):
                return f(*a).astype(output)
        same(backend, getattr(ndimage, name), theirs, x, *args, output=output, check=check)


# ------------------------------------------------------------ gaussian ---

@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.5])
def test_gaussian_filter1d(backend, rng, order, mode, sigma):
    x = rand(rng, (6, 40), np.float64)
    for axis in (0, -1):
        same(backend, ndimage.gaussian_filter1d, ndi.gaussian_filter1d, x, sigma, axis=axis,
             order=order, mode=mode, cval=0.7)
    same(backend, ndimage.gaussian_filter1d, ndi.gaussian_filter1d, x, sigma, order=order,
         truncate=2.0)
    same(backend, ndimage.gaussian_filter1d, ndi.gaussian_filter1d, x, sigma, order=order,
         radius=3)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8, np.int32, np.complex128],
                         ids=str)
def test_gaussian_filter(backend, rng, shape, dtype):
    x = rand(rng, shape, dtype, high=200)
    check = _ints_slack if np.dtype(dtype).kind in "iu" else _rtol32
    nd = len(shape)
    cases = [dict(sigma=1.0), dict(sigma=2.0, mode="constant", cval=3.0),
             dict(sigma=[0.5, 1.5, 2.0][:nd]), dict(sigma=1.2, order=[0, 1, 2][:nd]),
             dict(sigma=1.0, order=2, mode="mirror"), dict(sigma=1.5, truncate=1.5, mode="wrap"),
             dict(sigma=1.0, radius=[1, 4, 2][:nd], mode="nearest"),
             dict(sigma=[0, 1.0, 0][:nd]), dict(sigma=1.0, mode=["reflect", "wrap", "mirror"][:nd])]
    if nd > 1:
        cases.append(dict(sigma=1.0, axes=(0, -1)))
    for kw in cases:
        same(backend, ndimage.gaussian_filter, ndi.gaussian_filter, x, check=check, **kw)


def test_gaussian_filter_3d_stack(backend, rng):
    """The pyclesperanto page's blur, small: a float32 stack, sigma 2."""
    x = rand(rng, (4, 64, 80), np.float32)
    same(backend, ndimage.gaussian_filter, ndi.gaussian_filter, x, 2, check=_rtol32)


# ------------------------------------------------------------ uniform ----

@pytest.mark.parametrize("size", [1, 2, 3, 6])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.uint8], ids=str)
def test_uniform_filter1d(backend, rng, size, mode, dtype):
    x = rand(rng, (5, 23), dtype)
    check = _ints_slack if np.dtype(dtype).kind in "iu" else _rtol32
    for axis in (0, 1):
        for origin in {-(size // 2), 0, (size - 1) // 2}:
            same(backend, ndimage.uniform_filter1d, ndi.uniform_filter1d, x, size, axis=axis,
                 mode=mode, cval=2.0, origin=origin, check=check)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.complex64], ids=str)
def test_uniform_filter(backend, rng, shape, dtype):
    x = rand(rng, shape, dtype)
    check = _ints_slack if np.dtype(dtype).kind in "iu" else _rtol32
    nd = len(shape)
    for kw in (dict(size=3), dict(size=[2, 4, 1][:nd]), dict(size=4, mode="constant", cval=1.0),
               dict(size=3, origin=[1, -1, 0][:nd], mode="wrap"), dict(size=5, mode="mirror"),
               dict(size=2, mode=["nearest", "reflect", "wrap"][:nd]),
               dict(size=[0, 3, 1][:nd], origin=[5, 1, 3][:nd])):   # SciPy skips sizes <= 1
        same(backend, ndimage.uniform_filter, ndi.uniform_filter, x, check=check, **kw)


# ------------------------------------------------------------ order stats

FOOTPRINTS = [np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool),
              np.array([[1, 0, 1, 1]], bool), np.array([[1], [0], [1]], bool),
              np.ones((2, 2), bool)]


@pytest.mark.parametrize("name", ["minimum_filter", "maximum_filter", "median_filter"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.uint8, np.int64],
                         ids=str)
def test_order_filters_size(backend, rng, name, mode, dtype):
    for shape, size in (((30,), 4), ((9, 11), 3), ((9, 11), (2, 5)), ((5, 6, 7), (3, 1, 2)),
                        ((4, 5), (7, 9)), ((6, 7), (0, 3))):
        x = rand(rng, shape, dtype, low=0 if np.dtype(dtype).kind == "u" else -50, high=50)
        same(backend, getattr(ndimage, name), getattr(ndi, name), x, size=size, mode=mode,
             cval=5)


@pytest.mark.parametrize("name", ["minimum_filter", "maximum_filter", "median_filter"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fp", range(len(FOOTPRINTS)))
def test_order_filters_footprint(backend, rng, name, mode, fp):
    x = rand(rng, (10, 12), np.float64)
    same(backend, getattr(ndimage, name), getattr(ndi, name), x, footprint=FOOTPRINTS[fp],
         mode=mode, cval=-1.0)
    # A device footprint is accepted too.
    want = getattr(ndi, name)(x, footprint=FOOTPRINTS[fp], mode=mode)
    got = getattr(ndimage, name)(backend.asarray(x), footprint=backend.asarray(FOOTPRINTS[fp]),
                                 mode=mode)
    check_close(backend.get(got), want)


@pytest.mark.parametrize("name", ["minimum_filter", "maximum_filter", "median_filter"])
def test_order_filters_origin_3d(backend, rng, name):
    x = rand(rng, (6, 7, 8), np.int32)
    fp = rng.random((3, 2, 3)) < 0.6
    fp[1, 1, 1] = True
    for origin in (0, (1, 0, -1), (-1, 0, 1)):
        same(backend, getattr(ndimage, name), getattr(ndi, name), x, footprint=fp,
             origin=origin, mode="nearest")
        same(backend, getattr(ndimage, name), getattr(ndi, name), x, size=3, origin=origin)


@pytest.mark.parametrize("name", ["minimum_filter1d", "maximum_filter1d"])
@pytest.mark.parametrize("mode", MODES)
def test_min_max_filter1d(backend, rng, name, mode):
    x = rand(rng, (7, 15), np.float64)
    for size in (1, 2, 3, 8):
        for axis in (0, -1):
            same(backend, getattr(ndimage, name), getattr(ndi, name), x, size, axis=axis,
                 mode=mode, cval=0.25, origin=-(size // 2))


def test_rank_and_percentile_filters(backend, rng):
    x = rand(rng, (9, 10), np.float64)
    for rank in (0, 3, -1, 8):
        same(backend, ndimage.rank_filter, ndi.rank_filter, x, rank, size=3)
    for pct in (0, 20, 50, 77.5, 100, -30):
        same(backend, ndimage.percentile_filter, ndi.percentile_filter, x, pct, size=(2, 3))


def test_median_filter_large_footprint(backend, rng):
    """More than 64 taps: the bitwise selection."""
    x = rand(rng, (20, 25), np.float32)
    same(backend, ndimage.median_filter, ndi.median_filter, x, size=9)
    same(backend, ndimage.median_filter, ndi.median_filter, x, size=(1, 70), mode="wrap")


# ------------------------------------------------------------ errors -----
# Raised before any device work: these run without a GPU.

def _raises_like(ours, theirs, *args, match=None, **kwargs):
    with pytest.raises(Exception) as want:
        theirs(np.asarray(args[0], dtype=float) if args else None, *args[1:], **kwargs)
    with pytest.raises(type(want.value), match=match):
        ours(*args, **kwargs)


X2 = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]


def test_mode_errors():
    for ours, theirs, args in ((ndimage.correlate, ndi.correlate, ([[1.0]],)),
                               (ndimage.correlate1d, ndi.correlate1d, ([1.0],)),
                               (ndimage.gaussian_filter, ndi.gaussian_filter, (1.0,)),
                               (ndimage.gaussian_filter1d, ndi.gaussian_filter1d, (1.0,)),
                               (ndimage.uniform_filter, ndi.uniform_filter, (3,)),
                               (ndimage.uniform_filter1d, ndi.uniform_filter1d, (3,))):
        _raises_like(ours, theirs, X2, *args, mode="bogus", match="mode")
    for ours, theirs in ((ndimage.median_filter, ndi.median_filter),
                         (ndimage.minimum_filter, ndi.minimum_filter)):
        _raises_like(ours, theirs, X2, size=3, mode="bogus", match="mode")


def test_weights_errors():
    _raises_like(ndimage.correlate1d, ndi.correlate1d, X2, [], match="weights")
    _raises_like(ndimage.convolve1d, ndi.convolve1d, X2, [[1.0]], match="weights")
    _raises_like(ndimage.correlate, ndi.correlate, X2, [1.0, 2.0], match="weights")
    _raises_like(ndimage.convolve, ndi.convolve, X2, [[[1.0]]], match="weights")


def test_origin_errors():
    _raises_like(ndimage.correlate1d, ndi.correlate1d, X2, [1.0, 2.0, 3.0], origin=2,
                 match="origin")
    _raises_like(ndimage.convolve1d, ndi.convolve1d, X2, [1.0, 2.0], origin=-2, match="origin")
    _raises_like(ndimage.correlate, ndi.correlate, X2, [[1.0, 2.0]], origin=(0, 1),
                 match="origin")
    _raises_like(ndimage.correlate, ndi.correlate, X2, [[1.0, 2.0]], origin=(0, 0, 0))
    _raises_like(ndimage.uniform_filter1d, ndi.uniform_filter1d, X2, 3, origin=2,
                 match="origin")
    _raises_like(ndimage.minimum_filter, ndi.minimum_filter, X2, size=3, origin=2,
                 match="origin")
    _raises_like(ndimage.median_filter, ndi.median_filter, X2, size=3, origin=(5, 0),
                 match="origin")


def test_axis_and_sequence_errors():
    from numpy.exceptions import AxisError
    with pytest.raises(AxisError):
        ndimage.correlate1d(X2, [1.0], axis=2)
    with pytest.raises(AxisError):
        ndimage.gaussian_filter1d(X2, 1.0, axis=-3)
    _raises_like(ndimage.gaussian_filter, ndi.gaussian_filter, X2, [1.0, 2.0, 3.0],
                 match="sequence|length")
    _raises_like(ndimage.uniform_filter, ndi.uniform_filter, X2, [1, 2, 3])
    _raises_like(ndimage.gaussian_filter, ndi.gaussian_filter, X2, 1.0, axes=(0, 0),
                 match="axes")
    _raises_like(ndimage.gaussian_filter, ndi.gaussian_filter, X2, 1.0, axes=(2,))


def test_size_footprint_errors():
    _raises_like(ndimage.uniform_filter1d, ndi.uniform_filter1d, X2, 0, match="size")
    _raises_like(ndimage.minimum_filter, ndi.minimum_filter, X2, match="footprint")
    _raises_like(ndimage.median_filter, ndi.median_filter, X2, size=0)
    _raises_like(ndimage.median_filter, ndi.median_filter, X2, size=-1)
    _raises_like(ndimage.median_filter, ndi.median_filter, X2, footprint=[[0, 0], [0, 0]])
    _raises_like(ndimage.minimum_filter1d, ndi.minimum_filter1d, X2, 0, match="size")
    _raises_like(ndimage.rank_filter, ndi.rank_filter, X2, 9, size=3, match="rank")
    _raises_like(ndimage.percentile_filter, ndi.percentile_filter, X2, 101, size=3,
                 match="percentile")


def test_gaussian_errors():
    _raises_like(ndimage.gaussian_filter1d, ndi.gaussian_filter1d, X2, 1.0, order=-1,
                 match="order")
    _raises_like(ndimage.gaussian_filter, ndi.gaussian_filter, X2, 1.0, radius=-1,
                 match="adius")
    _raises_like(ndimage.gaussian_filter, ndi.gaussian_filter, X2, 1.0, radius=1.5,
                 match="adius")


def test_complex_errors():
    cx = [[1 + 1j, 2.0], [3.0, 4.0]]
    with pytest.raises(Exception) as want:
        ndi.median_filter(np.asarray(cx), size=2)
    with pytest.raises(type(want.value), match="omplex"):
        ndimage.median_filter(cx, size=2)
    # A complex cval for a real input: TypeError with real weights (SciPy's C
    # filters), ValueError with complex weights (SciPy's complex path).
    _raises_like(ndimage.correlate, ndi.correlate, X2, [[1.0]], mode="constant", cval=1j)
    _raises_like(ndimage.correlate, ndi.correlate, X2, [[1j]], mode="constant", cval=1j,
                 match="cval")
    _raises_like(ndimage.correlate1d, ndi.correlate1d, X2, [1.0, 2.0], cval=1j)
    _raises_like(ndimage.correlate1d, ndi.correlate1d, X2, [1j, 2.0], cval=1j, match="cval")
    for f, g, args in ((ndimage.gaussian_filter, ndi.gaussian_filter, (1.0,)),
                       (ndimage.uniform_filter, ndi.uniform_filter, (3,)),
                       (ndimage.median_filter, ndi.median_filter, (3,)),
                       (ndimage.minimum_filter, ndi.minimum_filter, (3,))):
        _raises_like(f, g, X2, *args, cval=1j, match="cval|complex")


def test_host_arrays_refused():
    a = np.ones((4, 4))
    for f, args in ((ndimage.correlate, ([[1.0]],)), (ndimage.convolve1d, ([1.0],)),
                    (ndimage.gaussian_filter, (1.0,)), (ndimage.uniform_filter, (3,)),
                    (ndimage.median_filter, (3,)), (ndimage.maximum_filter, (3,))):
        with pytest.raises(TypeError, match=r"input.*gpuarr\.asarray"):
            f(a, *args)
    with pytest.raises(TypeError, match=r"weights.*gpuarr\.asarray"):
        ndimage.correlate(X2, np.ones((2, 2)))
    with pytest.raises(TypeError, match=r"output"):
        ndimage.correlate(X2, [[1.0]], output=np.empty((3, 3)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_1d_filters_outer_axes_long(backend, rng, mode, dtype):
    """Passes along an outer axis over long columns: runs of many outputs
    per thread, 16-byte column groups and a ragged remainder."""
    for shape, axis, k in (((700, 12), 0, 31), ((1000, 3), 0, 5), ((3, 300, 10), 1, 9),
                           ((257, 6, 4), 0, 2), ((2, 129, 16), -2, 64)):
        x = rand(rng, shape, dtype)
        w = rand(rng, (k,), np.float64)
        same(backend, ndimage.correlate1d, ndi.correlate1d, x, w, axis=axis, mode=mode,
             cval=0.5, check=_rtol32)
        same(backend, ndimage.gaussian_filter1d, ndi.gaussian_filter1d, x, 3.0, axis=axis,
             mode=mode, check=_rtol32)


def test_signatures_match_scipy():
    """Same parameter names, kinds and defaults as the installed SciPy."""
    import inspect
    import scipy.signal as ss
    from gpuarr.scipy import signal
    from gpuarr.scipy._filters import __all__ as filters
    for ours, theirs, names in ((ndimage, ndi, filters), (signal, ss, signal.__all__)):
        for name in names:
            a = inspect.signature(getattr(ours, name)).parameters
            b = inspect.signature(getattr(theirs, name)).parameters
            assert [(p.name, p.kind, p.default) for p in a.values()] == \
                [(p.name, p.kind, p.default) for p in b.values()], name
