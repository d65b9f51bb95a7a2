"""A NumPy model of cuFFT under gpuarr.fft, so the transform planning
(padding, dtypes, which axes go into which plan, embeds, strides, batch
distances, in-place steps, the copies for layouts cuFFT cannot take) is
checked against numpy.fft in CI, without a GPU.

The model replaces only the device: array creation (host arrays standing
for device arrays), the few ufuncs the layer calls, and the execution of a
cuFFT plan, which it interprets from cuFFT's documented advanced data
layout: element x of transform b is at b * dist + sum_j x_j * stride *
prod(embed[j+1:]) of the array passed.  It is strict where cuFFT is:
each layout must visit every element of its input and output array exactly
once (a wrong embed or distance fails even where it would happen to give
the right numbers), a C2R input must be Hermitian, to rounding, where
cuFFT's result would be undefined (the imaginary parts of the zero and
Nyquist terms of a 1-d C2R; the zero/Nyquist planes of a multi-axis one),
and a C2R input is overwritten, as cuFFT overwrites it.
"""
import numpy as np
import pytest

import gpuarr
import gpuarr._convolve as gconv
import gpuarr.fft._fft as gfft
from gpuarr.cuda import cufft

import _conv_emulation
from _conv_emulation import ModelArray, _ModelCore, _host_ufunc, _m

REAL_IN = (cufft.R2C, cufft.D2Z)
REAL_OUT = (cufft.C2R, cufft.Z2D)
executed = []          # the layouts run since the last reset (tests inspect them)


def _address(a):
    return np.asarray(a).__array_interface__["data"][0]


def _element_offsets(a):
    """Byte offsets from a's first element of all its elements."""
    a = np.asarray(a)
    off = np.zeros((), dtype=np.int64)
    for n, st in zip(a.shape, a.strides):
        off = off[..., None] + np.arange(n, dtype=np.int64) * st
    return np.sort(off.ravel())


def _view(a, shape, dims, batch, dist, stride, embed):
    """a's memory read as cuFFT's layout: (batch, *dims), checked to visit
    each element of a exactly once."""
    a = np.asarray(a)
    isz = a.dtype.itemsize
    el = [stride * int(np.prod(embed[j + 1:], dtype=np.int64)) for j in range(len(dims))]
    strides = [dist * isz] + [s * isz for s in el]
    off = np.zeros((), dtype=np.int64)
    for n, st in zip((batch,) + tuple(dims), strides):
        off = off[..., None] + np.arange(n, dtype=np.int64) * st
    layout_offsets = np.sort(off.ravel())
    assert np.array_equal(layout_offsets, _element_offsets(a)), \
        f"layout {shape}: does not visit every element of the {a.shape} array once"
    return np.lib.stride_tricks.as_strided(a, (batch,) + tuple(dims), strides)


def _hermitian(plane, axes):
    """Whether plane (complex) equals its conjugate reflected over axes."""
    ref = np.conj(plane)
    for ax in axes:
        ref = np.roll(np.flip(ref, axis=ax), 1, axis=ax)
    scale = max(float(np.max(np.abs(plane), initial=0.0)), 1e-30)
    return np.allclose(plane, ref, rtol=0, atol=1e-6 * scale)


def model_execute(layout, x, y, forward):
    executed.append(layout)
    n = tuple(layout.n)
    rank = len(n)
    half = n[:-1] + (n[-1] // 2 + 1,)
    in_dims = half if layout.type in REAL_OUT else n
    out_dims = half if layout.type in REAL_IN else n
    assert layout.type in (cufft.C2C, cufft.Z2Z) or forward == (layout.type in REAL_IN)
    single = layout.type in (cufft.C2C, cufft.R2C, cufft.C2R)
    want_in = {True: np.complex64, False: np.complex128} if layout.type not in REAL_IN else \
        {True: np.float32, False: np.float64}
    want_out = {True: np.complex64, False: np.complex128} if layout.type not in REAL_OUT else \
        {True: np.float32, False: np.float64}
    assert np.asarray(x).dtype == want_in[single], (layout, np.asarray(x).dtype)
    assert np.asarray(y).dtype == want_out[single], (layout, np.asarray(y).dtype)
    for dim, e in zip(in_dims[1:], layout.inembed[1:]):
        assert e >= dim
    for dim, e in zip(out_dims[1:], layout.onembed[1:]):
        assert e >= dim
    vi = _view(x, layout, in_dims, layout.batch, layout.idist, layout.istride, layout.inembed)
    vo = _view(y, layout, out_dims, layout.batch, layout.odist, layout.ostride, layout.onembed)
    axes = tuple(range(1, rank + 1))
    data = np.array(vi)
    if layout.type in (cufft.C2C, cufft.Z2Z):
        res = np.fft.fftn(data, axes=axes) if forward else np.fft.ifftn(data, axes=axes,
                                                                        norm="forward")
    elif layout.type in REAL_IN:
        res = np.fft.rfftn(data, axes=axes)
    else:
        last = n[-1]
        edges = [0] + ([last // 2] if last % 2 == 0 else [])
        scale = max(float(np.max(np.abs(data), initial=0.0)), 1e-30)
        for k in edges:
            plane = data[..., k]
            if rank == 1:
                assert np.max(np.abs(plane.imag), initial=0.0) <= 1e-6 * scale, \
                    "1-d C2R input with an imaginary zero/Nyquist term: cuFFT's result is undefined"
            else:
                assert _hermitian(plane, tuple(range(1, rank))), \
                    "multi-axis C2R input that is not Hermitian: cuFFT's result is undefined"
        res = np.fft.irfftn(data, s=n, axes=axes, norm="forward")
        vi[...] = np.nan                     # cuFFT's C2R overwrites its input
    vo[...] = res.astype(vo.dtype)


def _arange(*args, dtype=None):
    return _m(np.arange(*args, dtype=dtype))


def install_fft_model(monkeypatch):
    """Run gpuarr.fft (and the FFT convolutions) over the model."""
    core = _ModelCore()
    monkeypatch.setattr(gfft, "_core", core)
    monkeypatch.setattr(gfft, "_execute", model_execute)
    monkeypatch.setattr(gfft, "_address", _address)
    monkeypatch.setattr(gfft, "_layouts", {})
    import gpuarr.fft._helper as ghelper
    monkeypatch.setattr(ghelper, "_core", core)
    monkeypatch.setattr(gconv, "_core", core)
    monkeypatch.setattr(gconv, "ndarray", ModelArray)
    for name in ("multiply", "conjugate", "rint"):
        monkeypatch.setattr(gpuarr, name, _host_ufunc(getattr(np, name)))
    monkeypatch.setattr(gpuarr, "arange", _arange)
    executed.clear()


class Backend(_conv_emulation.Backend):
    """The convolution tests' backend, plus zero-stride views."""

    def broadcast(self, a, shape):
        """A read-only view of a with zero strides."""
        if self.device:
            return gpuarr.broadcast_to(gpuarr.asarray(a), shape)
        return np.broadcast_to(_m(np.array(a)), shape).view(ModelArray)


@pytest.fixture(params=["model", pytest.param("device", marks=pytest.mark.gpu)])
def fft_backend(request, monkeypatch):
    """Each test twice: over the NumPy model of cuFFT (CPU, CI) and on the
    device."""
    if request.param == "model":
        install_fft_model(monkeypatch)
    return Backend(request.param)
