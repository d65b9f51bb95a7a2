"""gp.convolve and gp.correlate against np.convolve / np.correlate on fresh
random data: every mode (names and NumPy's integer codes), lengths from 1
up, either input the longer, every dtype kind and mixed dtypes (NumPy's
result dtype), non-contiguous inputs, and the same calls through NumPy
(np.convolve(dev, dev) runs on the device via __array_function__).  The
planning (output lengths and lags) and the argument errors are checked
without a GPU."""
import itertools

import numpy as np
import pytest

import gpuarr as gp
from gpuarr import _core

from _conv_compare import check_close, rand

MODES = ["full", "same", "valid", 0, 1, 2]
DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128]


def _full_range(rng, n, dtype):
    """Integers over their whole range (NumPy's results wrap; so must ours)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    return rand(rng, n, dtype)


def _check(got, want):
    assert isinstance(got, gp.ndarray), type(got)
    check_close(got.get(), want,
                rtol=5e-3 if want.dtype == np.float16 else None)


# ------------------------------------------------------------ device -----

@pytest.mark.gpu
@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES, ids=str)
def test_lengths(rng, name, mode):
    """Every pair of lengths up to 12 and some longer, either the longer."""
    lengths = list(itertools.product(range(1, 13), repeat=2)) + \
        [(100, 7), (7, 100), (1000, 64), (33, 1000), (5000, 1), (1, 5000)]
    for na, nv in lengths:
        a = rand(rng, na, np.float64)
        v = rand(rng, nv, np.float64)
        _check(getattr(gp, name)(gp.asarray(a), gp.asarray(v), mode),
               getattr(np, name)(a, v, mode))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_dtypes(rng, name, dtype, mode):
    for na, nv in ((50, 7), (6, 31), (1, 1), (300, 300)):
        if np.dtype(dtype) == np.float16:
            a, v = rand(rng, na, dtype), rand(rng, nv, dtype)
        else:
            a, v = _full_range(rng, na, dtype), _full_range(rng, nv, dtype)
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a, v, mode)
        _check(getattr(gp, name)(gp.asarray(a), gp.asarray(v), mode=mode), want)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("dtypes", [(np.int8, np.float32), (np.uint8, np.int8), (np.bool_, np.int16),
                                    (np.float32, np.float64), (np.int64, np.complex64),
                                    (np.float16, np.int8), (np.complex64, np.float64),
                                    (np.uint64, np.int64)], ids=str)
def test_mixed_dtypes(rng, name, dtypes):
    a = rand(rng, 40, dtypes[0])
    v = rand(rng, 9, dtypes[1])
    for x, y in ((a, v), (v, a)):
        for mode in ("full", "same", "valid"):
            _check(getattr(gp, name)(gp.asarray(x), gp.asarray(y), mode),
                   getattr(np, name)(x, y, mode))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_non_contiguous_and_scalars(rng, name):
    a = rand(rng, 301, np.complex128)
    v = rand(rng, 40, np.float64)
    da, dv = gp.asarray(a), gp.asarray(v)
    for mode in ("full", "same", "valid"):
        _check(getattr(gp, name)(da[::3], dv[::-2], mode), getattr(np, name)(a[::3], v[::-2], mode))
        _check(getattr(gp, name)(da[5:100], dv[1:2], mode),
               getattr(np, name)(a[5:100], v[1:2], mode))
    # Python sequences are taken.
    _check(getattr(gp, name)(da, [1, 2j]), getattr(np, name)(a, [1, 2j]))
    # 0-d inputs (device arrays or Python scalars): convolve takes them as one
    # element (ndmin=1); correlate refuses them with NumPy's ValueError.
    zero_d = [((gp.asarray(a[3]), dv), (a[3], v)), (([1.0, 2.0, 3.0], 2.5), ([1.0, 2.0, 3.0], 2.5)),
              ((2.5, da[:7]), (2.5, a[:7]))]
    for ours, theirs in zero_d:
        if name == "convolve":
            _check(gp.convolve(*ours), np.convolve(*theirs))
        else:
            with pytest.raises(ValueError) as np_err:
                np.correlate(*theirs)
            with pytest.raises(ValueError, match="too small depth") as gp_err:
                gp.correlate(*ours)
            assert str(gp_err.value) == str(np_err.value)


@pytest.mark.gpu
def test_long_signal_many_taps(rng):
    """The lesson's 1-d case, and filters long enough to be staged in chunks."""
    a = rand(rng, 1 << 18, np.float64)
    for k in (15, 257, 3000):
        v = rand(rng, k, np.float64)
        for mode in ("full", "same", "valid"):
            _check(gp.convolve(gp.asarray(a), gp.asarray(v), mode), np.convolve(a, v, mode))
    af = a.astype(np.float32)
    vf = rand(rng, 15, np.float32)
    _check(gp.correlate(gp.asarray(af), gp.asarray(vf), "same"), np.correlate(af, vf, "same"))


@pytest.mark.gpu
def test_numpy_dispatch_runs_on_device(rng):
    a = rand(rng, 1000, np.float64)
    v = rand(rng, 15, np.float64)
    da, dv = gp.asarray(a), gp.asarray(v)
    got = np.convolve(da, dv)
    assert isinstance(got, gp.ndarray)
    _check(got, np.convolve(a, v))
    _check(np.convolve(da, dv, mode="same"), np.convolve(a, v, mode="same"))
    _check(np.correlate(da, dv), np.correlate(a, v))
    _check(np.correlate(dv, da, "full"), np.correlate(v, a, "full"))
    # A host array next to a device array is moved to the device (issue 5).
    _check(np.convolve(da, v), np.convolve(a, v))
    # The lesson's check: np.allclose of the device and host results.
    same = np.allclose(np.convolve(da, dv), np.convolve(a, v))
    assert isinstance(same, gp.ndarray) and same.shape == () and bool(same)
    assert repr(same).startswith("array(True")


@pytest.mark.gpu
def test_lesson_1d_cells():
    """The lesson's 1-d cells: deltas raveled, the Gaussian's diagonal."""
    deltas = np.zeros((256, 256))
    deltas[8::16, 8::16] = 1
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    gauss = np.exp(-(np.sqrt(x * x + y * y) ** 2 / 2.0))
    deltas_1d, gauss_1d = deltas.ravel(), gauss.diagonal()
    cpu = np.convolve(deltas_1d, gauss_1d)
    gpu = np.convolve(gp.asarray(deltas_1d), gp.asarray(gauss_1d))
    assert bool(np.allclose(gpu, cpu))
    _check(gpu, cpu)


@pytest.mark.gpu
def test_device_errors():
    d = gp.asarray(np.ones(4))
    with pytest.raises(ValueError, match="v cannot be empty"):
        gp.convolve(d, gp.asarray(np.ones(0)))
    with pytest.raises(ValueError, match="too deep"):
        gp.convolve(gp.asarray(np.ones((2, 2))), d)
    with pytest.raises(ValueError, match="mode"):
        np.convolve(d, d, mode="bogus")


# ------------------------------------------------------------ no GPU -----

@pytest.mark.parametrize("correlate", [False, True])
@pytest.mark.parametrize("mode", MODES, ids=str)
def test_plan_lengths_and_lags(correlate, mode):
    """np.convolve's plan (_conv1d_plan): NumPy's output length, and the lag
    of its first output, for every pair of lengths up to 20."""
    for na, nv in itertools.product(range(1, 21), repeat=2):
        swap, (n_in, n_out, k, off), flags = _core._conv1d_plan(na, nv, mode, correlate)
        a = np.arange(1, na + 1, dtype=np.float64)
        v = np.arange(1, nv + 1, dtype=np.float64) ** 2
        want = (np.correlate if correlate else np.convolve)(a, v, mode)
        assert n_out == want.size, (na, nv, mode)
        assert bool(swap) == (nv > na)
        assert (n_in, k) == ((nv, na) if swap else (na, nv))
        # Recompute NumPy's answer from the plan: out[p] = sum_q w[q] x[p+q+off]
        # (taps reversed for a convolution; the swapped correlation reversed).
        x, w = (v, a) if swap else (a, v)
        if not correlate:
            w = w[::-1]
        xp = np.concatenate([np.zeros(max(0, -off)), x, np.zeros(n_out + k)])
        base = max(0, -off) + off
        got = np.array([np.dot(w, xp[base + p:base + p + k]) for p in range(n_out)])
        if correlate and swap:
            got = got[::-1]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("f", [gp.convolve, gp.correlate])
def test_argument_errors(f):
    """Checked before any device work (these run without a GPU), with
    NumPy's exception classes."""
    for bad, exc in (("bogus", ValueError), (3, ValueError), (-1, ValueError), (None, TypeError),
                     (1.5, TypeError)):
        with pytest.raises(exc) as ours:
            f([1.0, 2.0], [1.0], mode=bad)
        with pytest.raises(exc):
            getattr(np, f.__name__)([1.0, 2.0], [1.0], mode=bad)
        assert "mode" in str(ours.value)
    with pytest.raises(ValueError, match="a cannot be empty"):
        f([], [1.0])
    with pytest.raises(ValueError, match="v cannot be empty"):
        f([1.0], [])
    with pytest.raises(ValueError, match="too deep"):
        f([[1.0, 2.0]], [1.0])
    if f is gp.correlate:      # NumPy's correlate wants 1-d inputs; convolve takes 0-d
        for args in ((2.0, [1.0, 2.0]), ([1.0, 2.0], 2.0), (2.0, 3.0)):
            with pytest.raises(ValueError, match="object of too small depth"):
                np.correlate(*args)
            with pytest.raises(ValueError, match="object of too small depth"):
                f(*args)
    with pytest.raises(TypeError, match=r"a is a numpy\.ndarray.*gpuarr\.asarray"):
        f(np.ones(3), [1.0])
    with pytest.raises(TypeError, match=r"v is a numpy\.ndarray.*gpuarr\.asarray"):
        f([1.0], np.ones(3))
    with pytest.raises(TypeError):
        f(["a", "b"], [1.0])
