"""Shape and joining functions (NumPy's names, and the array API's beside
them: concat, permute_dims, matrix_transpose, unstack), built on the views
and copies of the C core; roll, tile and repeat as copies into one new
array (repeat with array repeats through a scan and a gather)."""
import itertools
import operator

import numpy
from numpy import broadcast_shapes
from numpy.exceptions import AxisError

from . import _core
from ._core import ndarray, empty
from ._creation import asarray, arange


def _device(a, name="a"):
    """A device array from a device array, scalar or sequence; host NumPy
    arrays are refused (moving data is the user's decision)."""
    if isinstance(a, ndarray):
        return a
    if isinstance(a, numpy.ndarray):
        raise _core._host_array_error(name)
    return asarray(a)


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim)
    return axis % ndim


def reshape(a, shape, order="C", *, newshape=None, copy=None):
    """a's elements in `shape`: a view when the layout allows, else a copy
    (copy=True: always a copy; copy=False: a view or ValueError)."""
    if newshape is not None:
        shape = newshape
    a = _device(a)
    r = a.reshape(shape, order=order)
    if copy is None:
        return r
    copied = not {id(b) for b in _bases(r)} & {id(b) for b in _bases(a)}
    if copy and not copied:
        return r.copy()
    if not copy and copied:
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    return r


def _bases(a):
    """a and the objects its memory comes through (its views' bases, and the
    memory object last)."""
    chain = [a]
    while chain[-1].base is not None:
        chain.append(chain[-1].base)
        if not isinstance(chain[-1], ndarray):
            break
    return chain


def ravel(a, order="C"):
    return _device(a).ravel(order)


def transpose(a, axes=None):
    return _device(a).transpose(axes)


permute_dims = transpose


def matrix_transpose(x, /):
    """The last two axes swapped (a view; x.mT)."""
    x = _device(x, "x")
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return x.mT


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


concat = concatenate


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


def unstack(x, /, *, axis=0):
    """A tuple of views, x split along `axis` into its slices."""
    x = _device(x, "x")
    if x.ndim == 0:
        raise ValueError("Input array must be at least 1-d.")
    return tuple(moveaxis(x, axis, 0))


def broadcast_arrays(*args, subok=False):
    """The arrays broadcast against each other: a tuple of read-only views
    (the arrays themselves when their shapes already agree)."""
    args = [_device(a, "args") for a in args]
    shape = broadcast_shapes(*(a.shape for a in args))
    return tuple(a if a.shape == shape else a._broadcast_to(shape) for a in args)


def roll(a, shift, axis=None):
    """Elements shifted along axes, those leaving one end coming back at
    the other (NumPy's roll: at most two copies per rolled axis into one
    new array)."""
    a = _device(a)
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    axes = [_axis(ax, a.ndim) for ax in axes]
    shifts = [operator.index(sh) for sh in shifts]
    broadcast = numpy.broadcast(axes, shifts)
    if broadcast.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    offsets = [0] * a.ndim
    for ax, sh in broadcast:
        offsets[ax] += sh
    rolls = [((slice(None), slice(None)),)] * a.ndim
    for ax, off in enumerate(offsets):
        off %= a.shape[ax] or 1
        if off:
            rolls[ax] = ((slice(None, -off), slice(off, None)),
                         (slice(-off, None), slice(None, off)))
    result = empty(a.shape, a.dtype)
    for pieces in itertools.product(*rolls):
        src, dst = zip(*pieces)
        result[dst] = a[src]
    return result


def tile(A, reps):  # noqa: N803  (NumPy's name)
    """A repeated `reps` times along each axis (NumPy's tile): a broadcast
    view of A copied once into the result."""
    A = _device(A, "A")
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    reps = tuple(operator.index(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError("negative dimensions are not allowed")
    ndim = max(len(reps), A.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - A.ndim) + A.shape
    out = empty(tuple(s * r for s, r in zip(shape, reps)), A.dtype)
    # out seen as (r0, s0, r1, s1, ...) takes A seen as (1, s0, 1, s1, ...)
    pairs = tuple(itertools.chain.from_iterable(zip(reps, shape)))
    ones = tuple(itertools.chain.from_iterable((1, s) for s in shape))
    out.reshape(pairs)[...] = A.reshape(ones)
    return out


def repeat(a, repeats, axis=None):
    """Each element of `a` (flattened when axis is None) repeated along
    `axis`: `repeats` times, or repeats[i] times for element i.  Scalar
    repeats: a broadcast view copied once into the result.  Array repeats:
    the result's length is their sum (read once when they are a device
    array, with their minimum, as negative counts raise), and each result
    element finds its source by a search in their running sum, then one
    gather."""
    a = _device(a)
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    before, after = a.shape[:axis], a.shape[axis + 1:]
    if isinstance(repeats, ndarray):
        if not numpy.can_cast(repeats.dtype, numpy.intp, "safe"):
            raise TypeError(f"Cannot cast array data from {repeats.dtype!r} to "
                            f"{numpy.dtype(numpy.intp)!r} according to the rule 'safe'")
        counts = repeats.astype(numpy.intp, copy=False).reshape(-1)
    elif isinstance(repeats, numpy.ndarray):
        raise _core._host_array_error("repeats")
    else:
        counts = numpy.asarray(repeats).astype(numpy.intp)
        if counts.ndim == 0:
            r = int(counts)
            if r < 0:
                raise ValueError("repeats may not contain negative values.")
            out = empty(before + (n * r,) + after, a.dtype)
            out.reshape(before + (n, r) + after)[...] = a.reshape(before + (n, 1) + after)
            return out
        counts = counts.reshape(-1)
    if counts.shape[0] not in (1, n):
        raise ValueError(f"operands could not be broadcast together with shape ({n},) "
                         f"({counts.shape[0]},)")
    if n == 0:
        return empty(before + (0,) + after, a.dtype)
    if isinstance(counts, ndarray):
        total, low = (int(v) for v in _core.array([counts.sum(), counts.min()]).get())
    else:
        total, low = int(counts.sum()), int(counts.min())
        counts = asarray(counts)
    if low < 0:
        raise ValueError("repeats may not contain negative values.")
    if counts.shape[0] != n:
        total *= n
        counts = counts._broadcast_to((n,))
    source = counts.cumsum().searchsorted(arange(total), "right")
    return a.take(source, axis=axis, mode="clip")


def _stack_sequence(seq, dtype):
    """asarray of a (nested) list holding device arrays: stacked on the
    device (the lesson's asarray(list_of_0d_results))."""
    items = [_stack_sequence(x, None) if isinstance(x, (list, tuple)) else _device(x)
             for x in seq]
    if not items:
        return asarray(numpy.asarray(seq), dtype=dtype)
    out = stack(items)
    return out if dtype is None else out.astype(dtype, copy=False)
