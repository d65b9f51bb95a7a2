"""gpuarr.scipy.signal against scipy.signal on fresh random data: convolve2d
and correlate2d (every mode x boundary x fillvalue, odd, even and one-sided
filter sizes, filters larger than the image, every dtype kind,
non-contiguous inputs), N-d convolve/correlate with every method,
fftconvolve, choose_conv_method, and SciPy's errors.  Each comparison runs
over the NumPy model of the engine (CPU, CI) and on the device; the
argument checks run without a GPU."""
import numpy as np
import pytest

scipy_signal = pytest.importorskip("scipy.signal")

import gpuarr
from gpuarr.scipy import signal

from _conv_compare import check_close, rand, same
from _conv_emulation import backend  # noqa: F401 -- the fixture

MODES = ["full", "same", "valid"]
BOUNDARIES = ["fill", "wrap", "symm"]
DTYPES_2D = [np.float32, np.float64, np.int32, np.uint8, np.int64, np.complex64, np.complex128]
# (image, filter): odd, even, one-sided, filter larger than the image in one
# axis and in both.
SHAPES_2D = [((9, 11), (3, 3)), ((8, 7), (4, 2)), ((6, 13), (1, 5)), ((12, 5), (6, 1)),
             ((5, 4), (7, 9)), ((5, 12), (7, 3)), ((1, 1), (2, 3)), ((40, 70), (15, 15))]


# ------------------------------------------------------------ 2-d --------

@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("shapes", SHAPES_2D, ids=str)
def test_2d_modes_boundaries_shapes(backend, rng, name, mode, boundary, shapes):
    a = rand(rng, shapes[0], np.float64)
    k = rand(rng, shapes[1], np.float64)
    same(backend, getattr(signal, name), getattr(scipy_signal, name), a, k, mode=mode,
         boundary=boundary)


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
@pytest.mark.parametrize("dtype", DTYPES_2D, ids=str)
@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("mode", MODES)
def test_2d_dtypes(backend, rng, name, dtype, boundary, mode):
    a = rand(rng, (10, 9), dtype)
    k = rand(rng, (3, 4), dtype)
    same(backend, getattr(signal, name), getattr(scipy_signal, name), a, k, mode=mode,
         boundary=boundary)


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
@pytest.mark.parametrize("dtypes", [(np.float32, np.float64), (np.int16, np.float32),
                                    (np.uint8, np.int8), (np.float64, np.complex64),
                                    (np.int32, np.complex128), (np.float16, np.float32)], ids=str)
def test_2d_mixed_dtypes(backend, rng, name, dtypes):
    a = rand(rng, (7, 8), dtypes[0])
    k = rand(rng, (3, 2), dtypes[1])
    same(backend, getattr(signal, name), getattr(scipy_signal, name), a, k)
    same(backend, getattr(signal, name), getattr(scipy_signal, name), k, a, mode="same")


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
@pytest.mark.parametrize("fillvalue", [0, 2.5, -3, 1 + 2j, np.float32(7)], ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex128], ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_2d_fillvalue(backend, rng, name, fillvalue, dtype, mode):
    a = rand(rng, (6, 7), dtype)
    k = rand(rng, (3, 4), dtype)
    same(backend, getattr(signal, name), getattr(scipy_signal, name), a, k, mode=mode,
         boundary="fill", fillvalue=fillvalue)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
@pytest.mark.parametrize("boundary", ["wrap", "symm"])
@pytest.mark.parametrize("fillvalue", [-2, 300, 1 + 2j, [1, 2]], ids=str)
def test_2d_fillvalue_unused_by_the_boundary_is_not_checked(backend, rng, name, boundary,
                                                             fillvalue):
    """SciPy reads fillvalue only for boundary='fill': with 'wrap' or 'symm'
    one that does not fit the output type (uint8 here) is no error."""
    a = rand(rng, (6, 7), np.bool_)
    k = rand(rng, (3, 4), np.uint8)
    same(backend, getattr(signal, name), getattr(scipy_signal, name), a, k,
         boundary=boundary, fillvalue=fillvalue)


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_2d_non_contiguous(backend, rng, name, boundary):
    a = rand(rng, (30, 40), np.float64)
    k = rand(rng, (10, 8), np.float64)
    da, dk = backend.asarray(a), backend.asarray(k)
    views = [(a[::2, 1::3], k[::3, ::2], da[::2, 1::3], dk[::3, ::2]),
             (a.T, k.T, da.T, dk.T),
             (a[::-1, 5:30], k[:, ::-1], da[::-1, 5:30], dk[:, ::-1])]
    for ha, hk, va, vk in views:
        for mode in MODES:
            want = getattr(scipy_signal, name)(ha, hk, mode=mode, boundary=boundary)
            got = getattr(signal, name)(va, vk, mode=mode, boundary=boundary)
            check_close(backend.get(got), want)


@pytest.mark.parametrize("boundary", BOUNDARIES)
def test_2d_large_filter_and_image(backend, rng, boundary):
    """Sizes that span several tiles and staged chunks of taps."""
    a = rand(rng, (70, 150), np.float64)
    k = rand(rng, (31, 27), np.float64)
    for mode in MODES:
        same(backend, signal.convolve2d, scipy_signal.convolve2d, a, k, mode=mode,
             boundary=boundary)


def test_2d_lesson_case(backend):
    """The lesson's image of deltas and 15x15 Gaussian, smaller: np.allclose
    of the two results is True."""
    deltas = np.zeros((256, 256))
    deltas[8::16, 8::16] = 1
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    gauss = np.exp(-(np.sqrt(x * x + y * y) ** 2 / 2.0))
    want = scipy_signal.convolve2d(deltas, gauss)
    got = signal.convolve2d(backend.asarray(deltas), backend.asarray(gauss))
    assert np.allclose(backend.get(got), want)
    check_close(backend.get(got), want)


def _lesson_gauss(n=15):
    x, y = np.meshgrid(np.linspace(-2, 2, n), np.linspace(-2, 2, n))
    return np.exp(-(np.sqrt(x * x + y * y) ** 2 / 2.0))


def _separable_filters(rng):
    """Filters that factor as u v^T (the lesson's Gaussian, products of
    random vectors, one with a zero row), and ones that do not: a random
    filter, and the Gaussian with one tap 1e-9 off (about 2e5 ulps from rank
    1 in float64, the general kernel; in float32 that is below rounding, so
    it factors)."""
    u9, v5 = rng.standard_normal(9), rng.standard_normal(5)
    u9[3] = 0.0
    gauss = _lesson_gauss()
    near = gauss.copy()
    near[4, 9] *= 1 + 1e-9
    return [gauss, np.outer(u9, v5), np.outer(rng.standard_normal(2), rng.standard_normal(24)),
            near, rng.standard_normal((7, 7))]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=str)
def test_2d_separable_path(rng, dtype):
    """Images big enough for the separable kernel (the device factors the
    filter and picks it or the general tile kernel, no host sync): every
    mode and boundary, convolve2d and correlate2d, against SciPy; the
    filters that do not factor go through the general kernel."""
    a = rand(rng, (1100, 700), dtype)
    calls = [("convolve2d", "full", "fill", 0), ("correlate2d", "same", "symm", 0),
             ("convolve2d", "valid", "wrap", 0), ("convolve2d", "same", "fill", 1.5),
             ("correlate2d", "full", "wrap", 0)]
    for k in _separable_filters(rng):
        k = k.astype(dtype)
        for fname, mode, boundary, fill in calls:
            want = getattr(scipy_signal, fname)(a, k, mode=mode, boundary=boundary,
                                                fillvalue=fill)
            got = getattr(signal, fname)(gpuarr.asarray(a), gpuarr.asarray(k), mode=mode,
                                         boundary=boundary, fillvalue=fill)
            check_close(got.get(), want, rtol=2e-5 if dtype == np.float32 else None)


@pytest.mark.gpu
def test_2d_separable_non_finite(rng):
    """inf and nan in the image: the separable passes give the direct sum's
    pattern (0 * inf is nan where a tap row or column of the filter is 0)."""
    a = rand(rng, (900, 800), np.float64)
    a[100, 200] = np.inf
    a[500, 500] = -np.inf
    a[700, 30] = np.nan
    a[40, 41] = np.inf
    a[40, 47] = -np.inf
    u, v = rng.standard_normal(11), rng.standard_normal(13)
    u[2] = 0.0
    v[7] = 0.0
    for k in (np.outer(u, v), _lesson_gauss()):
        for mode in MODES:
            want = scipy_signal.convolve2d(a, k, mode=mode)
            got = signal.convolve2d(gpuarr.asarray(a), gpuarr.asarray(k), mode=mode)
            check_close(got.get(), want)
            np.testing.assert_array_equal(np.isnan(got.get()), np.isnan(want))


@pytest.mark.gpu
def test_2d_lesson_full_size():
    """The benchmark's case: 2048^2 deltas with the 15x15 Gaussian, full."""
    deltas = np.zeros((2048, 2048))
    deltas[8::16, 8::16] = 1
    gauss = _lesson_gauss()
    want = scipy_signal.convolve2d(deltas, gauss)
    got = signal.convolve2d(gpuarr.asarray(deltas), gpuarr.asarray(gauss)).get()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_2d_swaps_for_valid(backend, rng):
    a = rand(rng, (3, 4), np.float64)
    k = rand(rng, (6, 9), np.float64)
    for name in ("convolve2d", "correlate2d"):
        same(backend, getattr(signal, name), getattr(scipy_signal, name), a, k, mode="valid")


# ------------------------------------------------------------ N-d --------

ND_SHAPES = [((20,), (5,)), ((7,), (12,)), ((9, 8), (3, 4)), ((4, 5), (6, 7)), ((5, 6, 7), (2, 3, 3)),
             ((3, 4, 5), (4, 5, 6)), ((6, 1, 5), (2, 1, 3)), ((2, 3, 4, 5), (1, 2, 3, 2))]


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["direct", "fft", "auto"])
@pytest.mark.parametrize("shapes", ND_SHAPES, ids=str)
def test_nd_modes_methods(backend, rng, name, mode, method, shapes):
    a = rand(rng, shapes[0], np.float64)
    k = rand(rng, shapes[1], np.float64)
    same(backend, getattr(signal, name), getattr(scipy_signal, name), a, k, mode=mode,
         method=method)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.int64, np.uint8,
                                   np.complex64, np.complex128, np.bool_, np.float16], ids=str)
@pytest.mark.parametrize("method", ["direct", "fft", "auto"])
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_nd_dtypes(backend, rng, name, dtype, method, ndim):
    if dtype == np.bool_ and method == "fft":
        pytest.skip("SciPy's FFT answer for bool is its float result's rounding noise cast "
                    "to bool")
    a = rand(rng, (9, 7, 5)[:ndim], dtype)
    k = rand(rng, (3, 4, 2)[:ndim], dtype)
    if method == "fft" and np.dtype(dtype).kind in "biu":
        # SciPy's FFT result of integers is float64 and rounded; gpuarr's is exact.
        def check(got, want):
            check_close(got, want, rtol=1e-9)
    else:
        check = check_close
    theirs = getattr(scipy_signal, name)
    if dtype == np.float16 and method == "auto":
        # SciPy's 'auto' may pick its direct method, which refuses float16
        # N-d; gpuarr's choose_conv_method answers 'fft' for float16, so
        # 'auto' gives SciPy's 'fft' result (a documented difference).
        def theirs(*args, method=None, **kwargs):
            return getattr(scipy_signal, name)(*args, method="fft", **kwargs)
    same(backend, getattr(signal, name), theirs, a, k, method=method, check=check)
    same(backend, getattr(signal, name), theirs, k, a, mode="same", method=method, check=check)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_nd_non_contiguous(backend, rng, name):
    a = rand(rng, (12, 10, 8), np.complex128)
    k = rand(rng, (4, 6, 4), np.float64)
    da, dk = backend.asarray(a), backend.asarray(k)
    for mode in MODES:
        want = getattr(scipy_signal, name)(a[::2, ::-1, 1:], k[::-1, ::2, :3], mode=mode)
        got = getattr(signal, name)(da[::2, ::-1, 1:], dk[::-1, ::2, :3], mode=mode)
        check_close(backend.get(got), want)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_nd_zero_dimensional(backend, rng, name):
    for a, k in ((np.array(2.5), np.array(3.0)), (np.array(1 + 2j), np.array(3 - 1j))):
        same(backend, getattr(signal, name), getattr(scipy_signal, name), a, k)


FFT_CASES = [((20,), (7,), None), ((9, 8), (3, 4), None), ((9, 8), (3, 8), [0]),
             ((9, 8), (9, 3), 1), ((4, 9, 8), (1, 3, 3), [1, 2]), ((4, 9, 8), (4, 3, 3), [-1, -2]),
             ((3, 5), (6, 7), None), ((5, 1, 6), (5, 3, 2), [2])]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", FFT_CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.complex128], ids=str)
def test_fftconvolve(backend, rng, mode, case, dtype):
    s1, s2, axes = case
    a = rand(rng, s1, dtype)
    k = rand(rng, s2, dtype)

    def check(got, want):
        check_close(got, want, rtol=max(1e-9, 10 * (1e-5 if np.dtype(dtype).itemsize <= 4 and
                                                    np.dtype(dtype).kind != "i" else 1e-10)))
    same(backend, signal.fftconvolve, scipy_signal.fftconvolve, a, k, mode=mode, axes=axes,
         check=check)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.complex64], ids=str)
def test_choose_conv_method(backend, rng, dtype):
    a = rand(rng, (30, 30), dtype)
    k = rand(rng, (5, 5), dtype)
    method = signal.choose_conv_method(backend.asarray(a), backend.asarray(k))
    assert method in ("direct", "fft")
    # The chosen method gives SciPy's result for that method.
    same(backend, signal.convolve, scipy_signal.convolve, a, k, method=method)


@pytest.mark.gpu
def test_choose_conv_method_measure(rng):
    a = gpuarr.asarray(rand(rng, (64, 64), np.float64))
    k = gpuarr.asarray(rand(rng, (5, 5), np.float64))
    method, times = signal.choose_conv_method(a, k, measure=True)
    assert method in ("direct", "fft")
    assert set(times) == {"direct", "fft"} and all(t > 0 for t in times.values())


# ------------------------------------------------------------ errors -----
# Raised before any device work: these run without a GPU (sequences are
# accepted as inputs, as SciPy accepts them).

def _raises_like(ours, theirs, *args, match=None, **kwargs):
    with pytest.raises(Exception) as want:
        theirs(*args, **kwargs)
    with pytest.raises(type(want.value), match=match):
        ours(*args, **kwargs)


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d"])
def test_2d_errors(name):
    ours, theirs = getattr(signal, name), getattr(scipy_signal, name)
    img, k = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[1.0, 2.0], [3.0, 4.0]]
    _raises_like(ours, theirs, img, k, mode="bad", match="mode")
    _raises_like(ours, theirs, img, k, mode=1, match="mode")
    _raises_like(ours, theirs, img, k, boundary="reflect", match="boundary")
    _raises_like(ours, theirs, img, k, fillvalue=[1, 2], match="fillvalue")
    _raises_like(ours, theirs, [[1, 2], [3, 4]], [[1, 2]], fillvalue=1 + 1j, match="fillvalue")
    _raises_like(ours, theirs, [1.0, 2.0, 3.0], k, match="2-D|2-d|2D")
    _raises_like(ours, theirs, img, [[[1.0]]], match="2-D|2-d|2D")
    # 'valid' with neither input containing the other.
    _raises_like(ours, theirs, [[1.0, 2.0, 3.0]], [[1.0], [2.0]], mode="valid",
                 match="valid")
    _raises_like(ours, theirs, [[True, False]], [[True]], match="type")


def test_2d_host_arrays_refused():
    a = np.ones((4, 4))
    with pytest.raises(TypeError, match=r"in1.*gpuarr\.asarray"):
        signal.convolve2d(a, [[1.0]])
    with pytest.raises(TypeError, match=r"in2.*gpuarr\.asarray"):
        signal.correlate2d([[1.0]], a)
    for f in (signal.convolve, signal.correlate, signal.fftconvolve,
              signal.choose_conv_method):
        with pytest.raises(TypeError, match="gpuarr.asarray"):
            f(a, a)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_nd_errors(name):
    ours, theirs = getattr(signal, name), getattr(scipy_signal, name)
    a, k = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[1.0, 2.0]]
    _raises_like(ours, theirs, a, k, mode="bad", match="mode")
    _raises_like(ours, theirs, a, k, method="bad", match="method")
    _raises_like(ours, theirs, a, [1.0, 2.0], match="dimensionality")
    _raises_like(ours, theirs, [[1.0, 2.0, 3.0]], [[1.0], [2.0]], mode="valid", match="valid")
    _raises_like(ours, theirs, [[True, False]], [[True, True]], method="direct")


def test_fftconvolve_errors():
    a, k = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[1.0, 2.0]]
    _raises_like(signal.fftconvolve, scipy_signal.fftconvolve, a, k, mode="bad", match="mode")
    _raises_like(signal.fftconvolve, scipy_signal.fftconvolve, a, [1.0], match="dimensionality")
    _raises_like(signal.fftconvolve, scipy_signal.fftconvolve, a, k, axes=[], match="axes")
    _raises_like(signal.fftconvolve, scipy_signal.fftconvolve, a, k, axes=[0, 0], match="axes")
    _raises_like(signal.fftconvolve, scipy_signal.fftconvolve, a, k, axes=2)
    _raises_like(signal.fftconvolve, scipy_signal.fftconvolve, a, [[1.0, 2.0], [3.0, 4.0]],
                 axes=0, match="shapes")


def test_choose_conv_method_errors():
    _raises_like(signal.choose_conv_method, scipy_signal.choose_conv_method, [1.0, 2.0],
                 [1.0], mode="bad", match="mode")


@pytest.mark.gpu
def test_scipy_convolve2d_on_device_arrays_raises():
    d = gpuarr.asarray(np.ones((8, 8)))
    g = gpuarr.asarray(np.ones((3, 3)))
    with pytest.raises(TypeError, match=r"Implicit conversion to a NumPy array is not allowed.*"
                                        r"\.get\(\)"):
        scipy_signal.convolve2d(d, g)
    with pytest.raises(TypeError, match=r"\.get\(\)"):
        scipy_signal.correlate2d(d, g)


@pytest.mark.parametrize("name", ["convolve2d", "correlate2d", "convolve", "correlate",
                                  "fftconvolve"])
def test_empty_inputs(backend, name):
    e, k = np.zeros((0, 3)), np.ones((2, 2))
    for a, b in ((e, k), (k, e)):
        same(backend, getattr(signal, name), getattr(scipy_signal, name), a, b)
