"""Array creation beyond the C core's empty/zeros/ones/full/array:
asarray and friends, *_like, arange, linspace, eye, identity, meshgrid,
tri, tril, triu, and moving data back with asnumpy.

device= (the array API's): None is the calling thread's current device, a
gpuarr.cuda.Device or a device number makes that one current for the call
(the C constructors take it too).  *_like functions use the current device
too, not their prototype's."""
import contextlib
import math
import operator

import numpy

from . import _core
from ._core import ndarray, array, empty, zeros, ones, full
from .cuda import Device


def _on(device):
    """The `with` block of a device= argument: that device made current
    (nothing for None)."""
    return contextlib.nullcontext() if device is None else Device(operator.index(device))


def asarray(a, dtype=None, order=None, *, device=None, copy=None):
    """A device array from ``a``: device arrays pass through unless a dtype,
    layout or device change needs a copy; NumPy arrays (any strides or byte
    order), nested sequences, scalars and buffers are copied to the device."""
    return array(a, dtype=dtype, copy=copy, order=order or "K", device=device)


def asanyarray(a, dtype=None, order=None):
    return array(a, dtype=dtype, copy=None, order=order or "K")


def ascontiguousarray(a, dtype=None):
    return array(a, dtype=dtype, copy=None, order="C", ndmin=1)


def asfortranarray(a, dtype=None):
    return array(a, dtype=dtype, copy=None, order="F", ndmin=1)


def asnumpy(a, out=None, stream=None, blocking=True):
    """Copy a device array to the host (a numpy.ndarray).  Large results live
    in pinned memory from gpuarr's pinned pool, so the copy runs at bus
    speed.  Host arrays and other objects go through numpy.asarray."""
    if isinstance(a, ndarray):
        return a.get(out=out, stream=stream, blocking=blocking)
    if out is not None:
        out[...] = a
        return out
    return numpy.asarray(a)


def _like(a, dtype, order, shape):
    if not isinstance(a, ndarray):
        a = asarray(a)
    if shape is None:
        shape = a.shape
    if dtype is None:
        dtype = a.dtype
    if order in (None, "K", "A"):
        order = "F" if (a.flags.f_contiguous and not a.flags.c_contiguous) else "C"
    return shape, dtype, order


def empty_like(prototype, dtype=None, order="K", subok=None, shape=None, *, device=None):
    return empty(*_like(prototype, dtype, order, shape), device=device)


def zeros_like(a, dtype=None, order="K", subok=None, shape=None, *, device=None):
    return zeros(*_like(a, dtype, order, shape), device=device)


def ones_like(a, dtype=None, order="K", subok=None, shape=None, *, device=None):
    return ones(*_like(a, dtype, order, shape), device=device)


def full_like(a, fill_value, dtype=None, order="K", subok=None, shape=None, *, device=None):
    shape, dtype, order = _like(a, dtype, order, shape)
    return full(shape, fill_value, dtype, order, device=device)


def _scalar(value, name):
    if isinstance(value, ndarray):
        if value.ndim != 0:
            raise TypeError(f"{name} must be a scalar, not an array of shape {value.shape}")
        return value.item()
    if isinstance(value, numpy.ndarray):
        raise _core._host_array_error(name)
    if isinstance(value, numpy.generic):
        return value.item()
    if not isinstance(value, (int, float, complex)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    return value


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """Evenly spaced values in [start, stop), NumPy's rules for the length,
    the default dtype and the values (computed on the device)."""
    with _on(device):
        return _arange(start, stop, step, dtype)


def _arange(start, stop, step, dtype):
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    start, stop, step = (_scalar(v, n) for v, n in ((start, "start"), (stop, "stop"),
                                                     (step, "step")))
    if step == 0:
        raise ZeroDivisionError("division by zero")
    if dtype is None:
        dtype = numpy.result_type(start, stop, step)
    dtype = numpy.dtype(dtype)
    if dtype.kind not in "biufc":
        empty(0, dtype)  # raises the core's TypeError naming the dtype
    if isinstance(stop - start, complex) or isinstance(step, complex):
        length = math.ceil(((stop - start) / step).real)
    else:
        length = math.ceil((stop - start) / step)
    length = max(length, 0)
    if dtype.kind in "iub":
        if dtype.kind == "b" and length > 2:
            raise TypeError("arange() is only supported for booleans when the result has at "
                            "most length 2.")
        # NumPy writes int(start) and int(start + step), then steps by their
        # difference: arange(0.5, 5, 1.5, dtype=int) is [0, 2, 4].
        first = int(start)
        return _core._sequence(length, dtype, 0, first, int(start + step) - first, None)
    # NumPy's fill loop: the first two values in the target type, their
    # difference as the step, then start + i*delta in the type's arithmetic
    # (float32 for float16, whose difference is not rounded to float16).
    first, second = dtype.type(start), dtype.type(start + step)
    if dtype == numpy.float16:
        first, second = numpy.float32(first), numpy.float32(second)
    delta = second - first
    return _core._sequence(length, dtype, 0, complex(first), complex(delta), None)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    """``num`` evenly spaced values from start to stop, as numpy.linspace
    (integer dtypes are floored, as NumPy 2 does)."""
    with _on(device):
        return _linspace(start, stop, num, endpoint, retstep, dtype, axis)


def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    # NumPy scalars and 0-d arrays keep their dtype (float32 stays float32).
    kinds = [v.dtype if isinstance(v, (ndarray, numpy.generic)) else v for v in (start, stop)]
    start = _scalar(start, "start")
    stop = _scalar(stop, "stop")
    if axis not in (0, -1):
        raise NotImplementedError("linspace of scalars takes axis=0")
    div = num - 1 if endpoint else num
    result_dtype = numpy.result_type(*kinds, float(num))
    if dtype is None:
        dtype = result_dtype
    dtype = numpy.dtype(dtype)
    delta = stop - start
    step = delta / div if div > 0 else math.nan
    kernel_step = step if div > 0 else 0.0
    last = stop if (endpoint and num > 1) else None
    out = _core._sequence(num, dtype, 1, complex(start), complex(kernel_step),
                          None if last is None else complex(last))
    if retstep:
        return out, step
    return out


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None):
    """Ones on the k-th diagonal of an N x M matrix, zeros elsewhere."""
    with _on(device):
        return _eye(N, M, k, dtype, order)


def _eye(N, M, k, dtype, order):
    if M is None:
        M = N
    m = zeros((N, M), dtype=dtype)
    if k < M and N > 0 and M > 0:
        i = k if k >= 0 else (-k) * M
        m[:M - k].reshape(-1)[i::M + 1] = 1
    if order == "F":
        m = asfortranarray(m)
    return m


def identity(n, dtype=float):
    return eye(n, dtype=dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    xs = [asarray(x).reshape(-1) for x in xi]
    shapes = []
    for i, x in enumerate(xs):
        shape = [1] * ndim
        shape[i] = x.size
        shapes.append(shape)
    if indexing == "xy" and ndim > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    out = [x.reshape(tuple(s)) for x, s in zip(xs, shapes)]
    if not sparse:
        full_shape = tuple(max(s[d] for s in shapes) for d in range(ndim))
        out = [o._broadcast_to(full_shape) for o in out]
    if copy:
        out = [o.copy() for o in out]
    return tuple(out)


def tri(N, M=None, k=0, dtype=float, *, device=None):
    """An N x M array with ones at and below the k-th diagonal (j <= i + k),
    zeros elsewhere."""
    with _on(device):
        if M is None:
            M = N
        rows = arange(N).reshape(N, 1)
        mask = _core.ufuncs["greater_equal"](rows + k, arange(M))
        return mask if numpy.dtype(dtype) == numpy.bool_ else mask.astype(dtype)


def _triangle(m, k, lower):
    if not isinstance(m, ndarray):
        if isinstance(m, numpy.ndarray):
            raise _core._host_array_error("m")
        m = asarray(m)
    if m.ndim == 0:
        raise ValueError("tril and triu need an array of at least one dimension (got a 0-d "
                         "array)")
    with _on(m.device):
        mask = tri(*m.shape[-2:], k=k if lower else k - 1, dtype=bool)
        if not lower:
            mask = _core.ufuncs["logical_not"](mask)
        return _core.where(mask, m, zeros((), m.dtype))


def tril(m, k=0):
    """m with the elements above the k-th diagonal zeroed (over the last two
    axes; a 1-d m is taken as each row of a square matrix, as NumPy does)."""
    return _triangle(m, k, True)


def triu(m, k=0):
    """m with the elements below the k-th diagonal zeroed (over the last two
    axes)."""
    return _triangle(m, k, False)
