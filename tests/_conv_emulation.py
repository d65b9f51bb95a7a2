"""The convolution tests' two backends: the device, and a NumPy model of
the device engine, so the Python layer's planning (offsets, output shapes,
dtypes, swaps, origins, complex parts, separable passes) is checked against
SciPy in CI on machines without a GPU.

The model replaces only what gpuarr.scipy.signal, gpuarr.scipy.ndimage's
filters and gpuarr._convolve call on the device: array creation,
``_core._correlate`` (out[p] = sum_q w[q] X[p + q + off], X the input
extended by one ga_ext_mode, the taps reversed when flip, computed in the
compute type, divided by a nonzero divisor, cast into out),
``_core._rank_filter`` (the rank-th smallest over a tap table), and the few
ufuncs the layer calls.  It is written from the engine's contract
(src/convolve.c, src/kernels/extend.cuh), independently of SciPy, so a test
comparing the layer over the model with SciPy fails where the layer plans
wrongly.  The device backend runs the same tests on the real kernels.
"""
import numpy as np
import pytest

import gpuarr
import gpuarr._convolve as gconv
import gpuarr.scipy._filters as gfilters
import gpuarr.scipy.signal as gsignal

EXT_CONSTANT, EXT_REFLECT, EXT_MIRROR, EXT_NEAREST, EXT_WRAP = range(5)


class ModelArray(np.ndarray):
    """A host array standing for a device array in the model."""

    def get(self):
        return np.array(self.view(np.ndarray))


def _m(a):
    return np.asarray(a).view(ModelArray)


def ext_index(i, n, mode):
    """extend.cuh's ga_ext_index, vectorised: indices in [0, n), -1 where
    the constant is read."""
    i = np.asarray(i, dtype=np.int64)
    inside = (i >= 0) & (i < n)
    if mode == EXT_CONSTANT:
        r = np.full_like(i, -1)
    elif mode == EXT_NEAREST:
        r = np.clip(i, 0, n - 1)
    elif mode == EXT_WRAP:
        r = i % n
    elif mode == EXT_REFLECT:
        r = i % (2 * n)
        r = np.where(r < n, r, 2 * n - 1 - r)
    elif mode == EXT_MIRROR:
        if n == 1:
            r = np.zeros_like(i)
        else:
            r = i % (2 * n - 2)
            r = np.where(r < n, r, 2 * n - 2 - r)
    else:
        raise ValueError(f"unknown extension mode {mode}")
    return np.where(inside, i, r)


def _extended(x, starts, lengths, mode, cval):
    """x read at start_d + [0, length_d) on every axis, extended."""
    idx = [ext_index(np.arange(s, s + n), x.shape[d], mode)
           for d, (s, n) in enumerate(zip(starts, lengths))]
    safe = [np.where(ix < 0, 0, ix) for ix in idx]
    res = x[np.ix_(*safe)] if x.ndim else x.copy()
    if mode == EXT_CONSTANT:
        mask = np.zeros(res.shape, dtype=bool)
        for d, ix in enumerate(idx):
            shape = [1] * x.ndim
            shape[d] = -1
            mask |= (ix < 0).reshape(shape)
        res = np.where(mask, np.asarray(cval).astype(res.dtype), res)
    return res


def model_correlate(x, w, out, offsets, mode, cval, flip, ctype, divisor=0.0):
    ctype = np.dtype(ctype)
    assert ctype in (np.float32, np.float64, np.int64), ctype
    assert x.ndim == w.ndim == out.ndim >= 1, (x.shape, w.shape, out.shape)
    assert x.size and w.size
    assert len(offsets) == x.ndim
    xc = np.asarray(x).astype(ctype)
    wc = np.asarray(w).astype(ctype)
    if flip:
        wc = wc[(slice(None, None, -1),) * wc.ndim]
    lengths = [n + k - 1 for n, k in zip(out.shape, w.shape)]
    with np.errstate(all="ignore"):
        xe = _extended(xc, offsets, lengths, mode, cval)
        win = np.lib.stride_tricks.sliding_window_view(xe, w.shape)
        axes = tuple(range(x.ndim, 2 * x.ndim))
        res = np.tensordot(win, wc, axes=(axes, tuple(range(x.ndim)))).astype(ctype)
        if divisor:
            res = (res / divisor).astype(ctype)
        out[...] = res
    return out


def model_rank_filter(x, out, taps, lo, hi, rank, mode, cval):
    taps = np.asarray(taps)
    assert taps.dtype == np.int64 and taps.shape[1] == x.ndim + 1
    assert 0 <= rank < taps.shape[0]
    assert out.shape == x.shape
    assert x.dtype.kind != "c"
    xs = np.asarray(x)
    vals = []
    for t in taps:
        rel = t[:-1]
        vals.append(_extended(xs, rel, xs.shape, mode, cval))
    with np.errstate(all="ignore"):
        out[...] = np.sort(np.stack(vals), axis=0)[rank]
    return out


class _ModelCore:
    ndarray = ModelArray

    @staticmethod
    def empty(shape, dtype=float):
        return _m(np.empty(shape, dtype=dtype))

    @staticmethod
    def zeros(shape, dtype=float):
        return _m(np.zeros(shape, dtype=dtype))

    @staticmethod
    def ones(shape, dtype=float):
        return _m(np.ones(shape, dtype=dtype))

    @staticmethod
    def array(x):
        return _m(np.array(x))

    _correlate = staticmethod(model_correlate)
    _rank_filter = staticmethod(model_rank_filter)


def _host_ufunc(f):
    def run(*args, **kwargs):
        if "out" in kwargs:
            f(*args, **kwargs)
            return kwargs["out"]
        return _m(f(*args, **kwargs))
    return run


def _np1d(f):
    def run(a, v, mode):
        return _m(f(np.asarray(a), np.asarray(v), mode))
    return run


class Backend:
    """asarray(host) -> the backend's array, get(arr) -> host array."""

    def __init__(self, name):
        self.name = name
        self.device = name == "device"

    def asarray(self, a):
        return gpuarr.asarray(a) if self.device else _m(np.array(a))

    def get(self, a):
        cls = gpuarr.ndarray if self.device else ModelArray
        assert isinstance(a, cls), f"expected a {cls.__name__}, got {type(a).__name__}"
        return a.get()


def install_model(monkeypatch):
    from _fft_emulation import install_fft_model
    install_fft_model(monkeypatch)
    core = _ModelCore()
    for mod in (gconv, gsignal, gfilters):
        monkeypatch.setattr(mod, "_core", core)
    monkeypatch.setattr(gconv, "ndarray", ModelArray)
    for name in ("negative", "add", "subtract", "conjugate"):
        monkeypatch.setattr(gpuarr, name, _host_ufunc(getattr(np, name)))
    monkeypatch.setattr(gpuarr, "ascontiguousarray", lambda a: _m(np.ascontiguousarray(a)))
    monkeypatch.setattr(gpuarr, "convolve", _np1d(np.convolve))
    monkeypatch.setattr(gpuarr, "correlate", _np1d(np.correlate))


@pytest.fixture(params=["model", pytest.param("device", marks=pytest.mark.gpu)])
def backend(request, monkeypatch):
    """Each test twice: over the NumPy model of the engine (CPU, CI) and on
    the device."""
    if request.param == "model":
        install_model(monkeypatch)
    return Backend(request.param)
