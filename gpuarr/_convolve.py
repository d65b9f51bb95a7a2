"""Convolution and correlation (issue 7): gp.convolve and gp.correlate, and
what gpuarr.scipy.signal and gpuarr.scipy.ndimage share.

``gp.convolve(a, v, mode='full')`` and ``gp.correlate(a, v, mode='valid')``
are NumPy's 1-d functions (also reached as ``np.convolve(dev, dev)`` through
``__array_function__``), each one C call (src/convolve.c): NumPy's result
dtype, lengths and lags, either input the longer, computed directly on the
device by the line kernel (src/kernels/convolve.cu): each warp stages a
stretch of the signal in shared memory (for filters up to 64 taps; a block
does for longer ones) and each thread slides a window of 8 outputs along
it, reading the taps through the read-only cache.  There is no FFT
path: for the filters these functions meet (tens of taps) the direct sum is
memory bound and faster than three FFTs.  Bool and integer inputs are
computed in wrapping int64 (exact, as NumPy), float16 in float32.

Every SciPy filter in gpuarr.scipy is the same engine, ``_core._correlate``:
    out[p] = sum over q of w[q] * X[p + q + offsets]
with X the input extended past its edges by one of the modes below and the
taps optionally reversed (a convolution).  The SciPy modules turn their
arguments into the output shape and the offsets; the C planner merges the
axes that are not filtered and picks the line kernel (filtering along the
contiguous axis), the column kernel (one filtered outer axis) or the tile
kernel (2-d planes in shared memory, leading axes looped inside the kernel);
a 2-d float filter that factors as an outer product u v^T (a Gaussian) is
found so on the device and computed in a horizontal and a vertical pass, the
choice made there without a copy of the filter to the host.
"""
import numbers

import numpy

from . import _core
from ._core import ndarray, convolve, correlate

__all__ = ["convolve", "correlate"]

# ga_ext_mode codes (src/kernels/kernels.h), as the C core exports them.
EXT_CONSTANT, EXT_REFLECT, EXT_MIRROR, EXT_NEAREST, EXT_WRAP = (
    _core.GA_EXT_CONSTANT, _core.GA_EXT_REFLECT, _core.GA_EXT_MIRROR, _core.GA_EXT_NEAREST,
    _core.GA_EXT_WRAP)


class SciPyValueError(ValueError, RuntimeError):
    """A bad argument where SciPy raises RuntimeError (an unknown ndimage
    mode, no filter weights, a sequence of the wrong length): a ValueError,
    and a RuntimeError too so code written against SciPy still catches it."""


class SciPyTypeError(TypeError, RuntimeError):
    """An unsupported dtype where SciPy raises RuntimeError: a TypeError that
    code written against SciPy still catches as RuntimeError."""


def as_operand(x, fname, argname):
    """An argument checked before any device work: a device array as it is,
    a Python scalar or sequence as a host NumPy array (to_device uploads it
    once every check has passed); NumPy arrays are refused, since moving data
    to the device is the caller's decision."""
    if isinstance(x, ndarray):
        return x
    if isinstance(x, numpy.ndarray):
        raise _core._host_array_error(argname, fname)
    try:
        return numpy.asarray(x)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{fname}: {argname} must be a device array, a scalar or a sequence "
                        f"of numbers ({exc})") from None


def to_device(x):
    """A checked operand on the device."""
    return x if isinstance(x, ndarray) else _core.array(x)


def host_structure(x, fname, argname, dtype=None):
    """A small structural argument (a footprint) as a NumPy array on the
    host: a sequence, or a device array copied back (one small synchronising
    copy; its values decide the plan).  NumPy arrays are refused, as for
    every gpuarr function."""
    if isinstance(x, ndarray):
        return x.get().astype(dtype) if dtype is not None else x.get()
    if isinstance(x, numpy.ndarray):
        raise _core._host_array_error(argname, fname)
    return numpy.asarray(x, dtype=dtype)


def real_ctype(dtype):
    """The compute type of a real filter whose input is `dtype`: float32 for
    float16/float32, float64 otherwise."""
    return numpy.dtype(numpy.float32) if dtype.kind == "f" and dtype.itemsize <= 4 \
        else numpy.dtype(numpy.float64)


def is_int(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def correlate_parts(run, x, w, out, cval, conj_taps):
    """out (complex) = a correlation of complex x and/or w computed as real
    correlations, linear in the extended input:
        (xr + i xi) * (wr + i wi) = (xr wr - xi wi) + i (xr wi + xi wr)
    with wi negated when conj_taps.  ``run(xpart, wpart, out_real, cval)``
    writes one real correlation into a real device array."""
    cval = complex(cval)
    xc, wc = x.dtype.kind == "c", w.dtype.kind == "c"
    xr = x.real if xc else x
    xi = x.imag if xc else None
    if xi is None and cval.imag != 0:
        xi = _core.zeros(x.shape, dtype=xr.dtype)
    wr = w.real if wc else w
    wi = w.imag if wc else None
    rdt = out.real.dtype
    terms_re, terms_im = [], []
    terms_re.append((xr, wr, cval.real, 1))
    if wi is not None:
        terms_im.append((xr, wi, cval.real, -1 if conj_taps else 1))
    if xi is not None:
        terms_im.append((xi, wr, cval.imag, 1))
        if wi is not None:
            terms_re.append((xi, wi, cval.imag, 1 if conj_taps else -1))
    import gpuarr
    sums = []
    for terms in (terms_re, terms_im):
        acc = None
        for xp, wp, cv, sign in terms:
            part = _core.empty(out.shape, dtype=rdt)
            run(xp, wp, part, cv)
            if acc is None:
                acc = part if sign > 0 else gpuarr.negative(part)
            elif sign > 0:
                gpuarr.add(acc, part, out=acc)
            else:
                gpuarr.subtract(acc, part, out=acc)
        sums.append(acc)
    # out is written only now: running out of memory above leaves it as it was
    for dest, acc in zip((out.real, out.imag), sums):
        dest[...] = 0 if acc is None else acc
    return out
