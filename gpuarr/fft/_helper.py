"""numpy.fft's helpers on the device: fftfreq, rfftfreq, fftshift,
ifftshift.  The frequencies are made on the device (arange and one
multiply, NumPy's formula and dtypes); the shifts are one pass of block
copies, as numpy.roll moves the two halves of every shifted axis."""
import numbers

import numpy

from .. import _core
from .._convolve import as_operand, to_device
from ._fft import _axis

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _window(n, device):
    if device is not None:
        raise ValueError("device= is for NumPy's Array-API interoperability; gpuarr creates the "
                         "array on the current device (use `with gpuarr.cuda.Device(i):`)")
    if not isinstance(n, (numbers.Integral, numpy.integer)) or isinstance(n, bool):
        raise ValueError("n should be an integer")
    return int(n)


def _freq_dtype(dtype):
    """dtype= of fftfreq/rfftfreq (the array API's): None or a real
    floating dtype."""
    if dtype is None:
        return None
    dt = numpy.dtype(dtype)
    if dt.kind != "f":
        raise ValueError(f"dtype must be a real floating dtype, got {dt}")
    return dt


def _freqs(k, val, dtype):
    f = k * val
    return f if dtype is None else f.astype(dtype, copy=False)


def fftfreq(n, d=1.0, device=None, *, dtype=None):
    """The sample frequencies of an n-point DFT (numpy.fft.fftfreq):
    [0, 1, ..., -(n // 2), ..., -1] / (d * n), a float64 device array
    (complex128 for a complex d; `dtype`, the array API's keyword, casts)."""
    import gpuarr
    n = _window(n, device)
    dtype = _freq_dtype(dtype)
    val = 1.0 / (n * d)
    k = gpuarr.arange(n, dtype=numpy.int64)
    half = (n - 1) // 2 + 1
    if half < n:
        k[half:] -= n
    return _freqs(k, val, dtype)


def rfftfreq(n, d=1.0, device=None, *, dtype=None):
    """The sample frequencies of rfft's n // 2 + 1 outputs
    (numpy.fft.rfftfreq): [0, 1, ..., n // 2] / (d * n)."""
    import gpuarr
    n = _window(n, device)
    dtype = _freq_dtype(dtype)
    val = 1.0 / (n * d)
    return _freqs(gpuarr.arange(n // 2 + 1, dtype=numpy.int64), val, dtype)


def _roll(fname, x, axes, sign):
    """x rolled by sign * (length // 2) along axes (None: all axes, an int
    or a sequence, repeated axes adding up as in numpy.roll)."""
    x = to_device(as_operand(x, fname, "x"))
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (numbers.Integral, numpy.integer)):
        axes = (axes,)
    shift = {}
    for ax in axes:
        ax = _axis(ax, x.ndim)
        shift[ax] = shift.get(ax, 0) + sign * (x.shape[ax] // 2)
    moves = [(ax, k % x.shape[ax]) for ax, k in shift.items() if x.shape[ax] and k % x.shape[ax]]
    if not moves:
        out = _core.empty(x.shape, dtype=x.dtype)
        out[...] = x
        return out
    # Up to three axes a pass, one block copy per combination of their
    # halves: a shifted axis of length n moves [0, n - k) to [k, n) and
    # [n - k, n) to [0, k).
    for first in range(0, len(moves), 3):
        part = moves[first:first + 3]
        out = _core.empty(x.shape, dtype=x.dtype)
        for combo in range(1 << len(part)):
            src = [slice(None)] * x.ndim
            dst = [slice(None)] * x.ndim
            for bit, (ax, k) in enumerate(part):
                n = x.shape[ax]
                if combo >> bit & 1:
                    src[ax], dst[ax] = slice(n - k, n), slice(0, k)
                else:
                    src[ax], dst[ax] = slice(0, n - k), slice(k, n)
            out[tuple(dst)] = x[tuple(src)]
        x = out
    return out


def fftshift(x, axes=None):
    """The zero frequency moved to the centre (numpy.fft.fftshift): a new
    array, every shifted axis rolled by length // 2."""
    return _roll("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of fftshift (numpy.fft.ifftshift)."""
    return _roll("ifftshift", x, axes, -1)
