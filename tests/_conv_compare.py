"""Comparisons shared by the convolution tests (test_convolve.py,
test_signal.py, test_filters.py): random inputs of every kind, and a check
that a gpuarr call gives SciPy's/NumPy's result (dtype, shape, values) or
raises SciPy's/NumPy's exception."""
import functools
import warnings

import numpy as np

from _arrays import random_array


# The convolution tests' data: random_array's small values.
rand = functools.partial(random_array, small=True)


def tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        dtype = np.dtype(dtype.char.lower())
    if dtype in (np.float16,):
        return 2e-3
    if dtype in (np.float32, np.complex64):
        return 2e-5
    return 1e-11


def check_close(got, want, *, int_slack=0, rtol=None):
    """got (host) equals want: same dtype and shape; integers exact (or within
    int_slack where both sides truncate float sums); floats within the
    dtype's tolerance of the result's scale."""
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype}, SciPy/NumPy {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, SciPy/NumPy {want.shape}"
    if want.size == 0:
        return
    if want.dtype.kind in "biu":
        if int_slack:
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            assert diff.max() <= int_slack, (got, want)
        else:
            np.testing.assert_array_equal(got, want)
        return
    tol = tolerance(want.dtype) if rtol is None else rtol
    finite = np.isfinite(want)
    np.testing.assert_array_equal(np.isfinite(got), finite)
    scale = float(np.max(np.abs(want[finite]))) if finite.any() else 0.0
    np.testing.assert_allclose(got[finite], want[finite], rtol=tol, atol=tol * max(scale, 1e-30))


def same(backend, ours, theirs, *args, host_args=None, check=check_close, **kwargs):
    """Call theirs(*host args) and ours(*device args): the same result, or
    an exception of the same class where SciPy/NumPy raises.  Arguments
    that are NumPy arrays go to the device for ours; host_args overrides
    the positional arguments SciPy/NumPy gets."""
    dev = [backend.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    dkw = {k: backend.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = theirs(*(args if host_args is None else host_args), **kwargs)
        except Exception as exc:          # noqa: BLE001 -- the reference's error is the spec
            expected = exc
        else:
            expected = None
        if expected is not None:
            try:
                ours(*dev, **dkw)
            except type(expected):
                return None
            except Exception as exc:      # noqa: BLE001
                raise AssertionError(f"SciPy/NumPy raise {type(expected).__name__}({expected}), "
                                     f"gpuarr {type(exc).__name__}({exc})") from exc
            raise AssertionError(f"SciPy/NumPy raise {type(expected).__name__}({expected}), "
                                 "gpuarr returns")
        got = ours(*dev, **dkw)
    check(backend.get(got), want)
    return want
