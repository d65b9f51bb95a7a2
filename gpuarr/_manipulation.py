"""Shape and joining functions (NumPy's names), built on the views and
copies of the C core."""
import operator

import numpy
from numpy.exceptions import AxisError

from ._core import ndarray, empty
from ._creation import asarray


def _device(a, name="a"):
    """A device array from a device array, scalar or sequence; host NumPy
    arrays are refused (moving data is the user's decision)."""
    if isinstance(a, ndarray):
        return a
    if isinstance(a, numpy.ndarray):
        raise TypeError(f"{name} is a numpy.ndarray, which lives in host memory: move it to "
                        "the device with gpuarr.asarray() first")
    return asarray(a)


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim)
    return axis % ndim


def reshape(a, shape, order="C", *, newshape=None):
    if newshape is not None:
        shape = newshape
    return _device(a).reshape(shape, order=order)


def ravel(a, order="C"):
    return _device(a).ravel(order)


def transpose(a, axes=None):
    return _device(a).transpose(axes)


def swapaxes(a, axis1, axis2):
    return _device(a).swapaxes(axis1, axis2)


def moveaxis(a, source, destination):
    a = _device(a)
    src = [source] if not isinstance(source, (tuple, list)) else list(source)
    dst = [destination] if not isinstance(destination, (tuple, list)) else list(destination)
    src = [_axis(s, a.ndim) for s in src]
    dst = [_axis(d, a.ndim) for d in dst]
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("repeated axis in `source` or `destination` argument")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


def squeeze(a, axis=None):
    return _device(a).squeeze(axis)


def expand_dims(a, axis):
    a = _device(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out_ndim = a.ndim + len(axes)
    axes = [_axis(ax, out_ndim) for ax in axes]
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    it = iter(a.shape)
    shape = tuple(1 if i in axes else next(it) for i in range(out_ndim))
    return a.reshape(shape)


def diagonal(a, offset=0, axis1=0, axis2=1):
    return _device(a).diagonal(offset, axis1, axis2)


def copy(a, order="K"):
    return _device(a).copy(order)


def broadcast_to(array, shape):
    if isinstance(shape, (int, numpy.integer)):
        shape = (shape,)
    return _device(array, "array")._broadcast_to(tuple(shape))


def flip(m, axis=None):
    m = _device(m, "m")
    if axis is None:
        axes = range(m.ndim)
    else:
        axes = [_axis(ax, m.ndim) for ax in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    index = [slice(None)] * m.ndim
    for ax in axes:
        index[ax] = slice(None, None, -1)
    return m[tuple(index)]


def fliplr(m):
    m = _device(m, "m")
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


def flipud(m):
    m = _device(m, "m")
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1, ...]


def atleast_1d(*arys):
    res = [a if a.ndim >= 1 else a.reshape(1) for a in map(_device, arys)]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_2d(*arys):
    res = []
    for a in map(_device, arys):
        if a.ndim == 0:
            a = a.reshape(1, 1)
        elif a.ndim == 1:
            a = a[None, :]
        res.append(a)
    return res[0] if len(res) == 1 else tuple(res)


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along an existing axis (axis=None flattens them first)."""
    arrays = [_device(a, "arrays") for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays = [a.reshape(-1) for a in arrays]
        axis = 0
    first = arrays[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    axis = _axis(axis, first.ndim)
    for i, a in enumerate(arrays[1:], 1):
        if a.ndim != first.ndim:
            raise ValueError("all the input arrays must have same number of dimensions, but the "
                             f"array at index 0 has {first.ndim} dimension(s) and the array at "
                             f"index {i} has {a.ndim} dimension(s)")
        for d in range(first.ndim):
            if d != axis and a.shape[d] != first.shape[d]:
                raise ValueError("all the input array dimensions except for the concatenation "
                                 f"axis must match exactly, but along dimension {d}, the array "
                                 f"at index 0 has size {first.shape[d]} and the array at index "
                                 f"{i} has size {a.shape[d]}")
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both "
                        "were provided.")
    if dtype is None:
        dtype = out.dtype if out is not None else numpy.result_type(*[a.dtype for a in arrays])
    dtype = numpy.dtype(dtype)
    for a in arrays:
        if not numpy.can_cast(a.dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {a.dtype!r} to {dtype!r} according to "
                            f"the rule '{casting}'")
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    if out is None:
        out = empty(tuple(shape), dtype)
    elif tuple(out.shape) != tuple(shape):
        raise ValueError(f"Output array has wrong shape: expected {tuple(shape)}, got {out.shape}")
    index = [slice(None)] * len(shape)
    start = 0
    for a in arrays:
        index[axis] = slice(start, start + a.shape[axis])
        out[tuple(index)] = a
        start += a.shape[axis]
    return out


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = [_device(a, "arrays") for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    if any(a.shape != arrays[0].shape for a in arrays):
        raise ValueError("all input arrays must have the same shape")
    axis = _axis(axis, arrays[0].ndim + 1)
    expanded = [expand_dims(a, axis) for a in arrays]
    return concatenate(expanded, axis=axis, out=out, dtype=dtype, casting=casting)


def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = atleast_1d(*tup)
    if not isinstance(arrs, tuple):
        arrs = (arrs,)
    axis = 0 if arrs and arrs[0].ndim == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


def vstack(tup, *, dtype=None, casting="same_kind"):
    arrs = atleast_2d(*tup)
    if not isinstance(arrs, tuple):
        arrs = (arrs,)
    return concatenate(arrs, 0, dtype=dtype, casting=casting)


def _stack_sequence(seq, dtype):
    """asarray of a (nested) list holding device arrays: stacked on the
    device (the lesson's asarray(list_of_0d_results))."""
    items = [_stack_sequence(x, None) if isinstance(x, (list, tuple)) else _device(x)
             for x in seq]
    if not items:
        return asarray(numpy.asarray(seq), dtype=dtype)
    out = stack(items)
    return out if dtype is None else out.astype(dtype, copy=False)
