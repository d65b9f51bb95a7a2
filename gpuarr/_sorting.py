"""Sorting, selection, searching, counting and compaction, with NumPy's
names, signatures, dtypes and errors: sort, argsort (with the array API's
descending=), partition, argpartition, unique and the array API's
unique_all/unique_counts/unique_inverse/unique_values, median, nanmedian,
percentile, nanpercentile, quantile, nanquantile, nonzero, flatnonzero,
argwhere, compress, extract, take, take_along_axis, put, searchsorted,
digitize, bincount, histogram, and one-argument where (through the
"nonzero" helper).

The work is the C core's (sort.c, compact.c, take.c); this module parses
arguments.  ndarray.sort and ndarray.argsort are C methods (sort.c).

Differences from NumPy, all to avoid synchronising with the host:

- median, percentile and quantile return 0-d device arrays, like the
  reductions; the all-NaN slice warning of nanmedian is not given.
- Only operations whose result size depends on the data synchronise, once:
  compress, extract, nonzero, flatnonzero, argwhere, unique, boolean-mask
  indexing, bincount.  take and fancy indexing with indices in device memory
  synchronise once to raise IndexError for an out-of-range index (take with
  mode='wrap' or 'clip' does not).
- histogram(range=None) computes the edges on the device, so non-finite
  data gives NaN edges and zero counts instead of ValueError; device bins
  are not checked for monotonicity (digitize, histogram).
- An assignment that repeats a destination (a[idx] = v, put) leaves one of
  its values there, which one is unspecified (NumPy: the last one); making
  it the last would take a pass over the destinations to order the writes.
- Sorting is stable whatever `kind` says; partition sorts.  Complex arrays
  cannot be ordered; unique supports axis=None only; quantiles take every
  method but no weights.
"""
import collections
import math
import operator
import warnings

import numpy
from numpy.lib.array_utils import normalize_axis_tuple

from . import _core
from ._core import ndarray, full
from ._creation import asarray, arange
from ._manipulation import _device, _axis

__all__ = ["sort", "argsort", "partition", "argpartition", "unique", "unique_all",
           "unique_counts", "unique_inverse", "unique_values", "median", "nanmedian",
           "percentile", "nanpercentile", "quantile", "nanquantile", "nonzero", "flatnonzero",
           "argwhere", "compress", "extract", "take", "take_along_axis", "put", "searchsorted",
           "digitize", "bincount", "histogram"]

# Quantile modes of the C core (kernels.h GA_Q_*) and NumPy's methods with
# their GA_QM_* codes, as the C core exports them; the picking ones return
# an element.
_MEDIAN, _WEAK, _STRONG, _PICK = (_core.GA_Q_MEDIAN, _core.GA_Q_LINEAR_WEAK,
                                  _core.GA_Q_LINEAR_STRONG, _core.GA_Q_PICK)
_METHODS = {name: getattr(_core, "GA_QM_" + name.upper()) for name in (
    "linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "averaged_inverted_cdf",
    "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
    "normal_unbiased")}
_PICKING = {_METHODS[name] for name in ("lower", "higher", "nearest", "inverted_cdf",
                                        "closest_observation")}
_TAKE_MODES = {"raise": _core.GA_TAKE_RAISE, "wrap": _core.GA_TAKE_WRAP,
               "clip": _core.GA_TAKE_CLIP}


def _no_order(order):
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")


def _orderable(a, name="a"):
    if a.dtype.kind == "c":
        raise TypeError(f"{name}: gpuarr does not order complex numbers")


def _host_or_device(x, name):
    """A device array, or a host sequence/scalar left for the C core to
    check and move (index arrays); NumPy arrays are refused."""
    if isinstance(x, numpy.ndarray):
        raise _core._host_array_error(name)
    return x


# ------------------------------------------------------------------ sorting

def _reversed(a, axis):
    """a reversed along axis (a view); None: the flattened a reversed."""
    if axis is None:
        return a.reshape(-1)[::-1]
    index = [slice(None)] * a.ndim
    index[_axis(axis, a.ndim)] = slice(None, None, -1)
    return a[tuple(index)]


def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """A sorted copy (stable radix sort; NaN last, or first when
    descending).  axis=None sorts the flattened array."""
    a = _device(a)
    _no_order(order)
    _orderable(a)
    if not descending or a.ndim == 0:
        return _core._sort(a, axis, False)
    # the ascending sort of the reversed array, reversed: equal elements
    # keep their order
    return _reversed(_core._sort(_reversed(a, axis), axis, False), axis)


def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """Indices that sort `a` along `axis` (stable; int64; descending=True:
    largest first, equal elements in their order, NaN first)."""
    a = _device(a)
    _no_order(order)
    _orderable(a)
    if a.ndim == 0:  # NumPy's argsort takes a 0-d array as 1-d (its sort does not)
        a = a.reshape(1)
    if not descending:
        return _core._sort(a, axis, True)
    n = a.size if axis is None else a.shape[_axis(axis, a.ndim)]
    rev = _reversed(_core._sort(_reversed(a, axis), axis, True), axis)
    return _core.ufuncs["subtract"](n - 1, rev)


def _check_kth(a, kth, axis):
    n = a.size if axis is None else a.shape[_axis(axis, a.ndim)]
    for k in numpy.atleast_1d(numpy.asarray(kth)).ravel():
        k = operator.index(k)
        if not -n <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """NumPy's partition; gpuarr sorts, which satisfies it for every kth."""
    a = _device(a)
    _no_order(order)
    _check_kth(a, kth, axis)
    return sort(a, axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """NumPy's argpartition; gpuarr argsorts (stable)."""
    a = _device(a)
    _no_order(order)
    _check_kth(a, kth, axis)
    return argsort(a, axis)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):  # noqa: A002
    """Sorted distinct values (NaNs one value when equal_nan), and
    optionally the first occurrences, the inverse (of ar's shape) and the
    counts.  Synchronises once."""
    if axis is not None:
        raise NotImplementedError("gpuarr.unique supports axis=None only")
    ar = _device(ar, "ar")
    _orderable(ar, "ar")
    values, index, inverse, counts = _core._unique(ar, return_index, return_inverse,
                                                   return_counts, equal_nan)
    ret = (values,) + tuple(x for flag, x in ((return_index, index), (return_inverse, inverse),
                                              (return_counts, counts)) if flag)
    return ret[0] if len(ret) == 1 else ret


UniqueAllResult = collections.namedtuple("UniqueAllResult",
                                         ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = collections.namedtuple("UniqueInverseResult",
                                             ["values", "inverse_indices"])


def unique_all(x, /):
    """The array API's unique_all: (values, indices, inverse_indices,
    counts) of the flattened x as named fields; NaNs are distinct, the
    inverse has x's shape.  Synchronises once."""
    return UniqueAllResult(*unique(x, True, True, True, equal_nan=False))


def unique_counts(x, /):
    """(values, counts), NaNs distinct."""
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False))


def unique_inverse(x, /):
    """(values, inverse_indices), NaNs distinct; the inverse has x's shape."""
    return UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False))


def unique_values(x, /):
    """The distinct values of x (sorted), NaNs distinct."""
    return unique(x, equal_nan=False)


# ---------------------------------------------------------------- quantiles

def _quantile_dtype(dtype, mode):
    if mode == _PICK:
        return dtype
    if mode == _STRONG or dtype.kind not in "f":
        return numpy.dtype(numpy.float64)
    return dtype


def _quantile(a, q, mode, ignore_nan, axis, out, keepdims, method=0):
    """Shared by median, percentile, quantile and their nan* forms: q is
    None (median) or a host float array in [0, 1]; method a GA_QM_* code."""
    a = _device(a)
    if a.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    nd = a.ndim
    axes = None if axis is None else normalize_axis_tuple(axis, nd)
    if axes is not None and len(axes) == nd and nd != 1:
        axes = None
    work, cax = a, None
    if axes is not None:
        if len(axes) == 1:
            cax = axes[0]
        else:
            keep = [d for d in range(nd) if d not in axes]
            moved = a.transpose(keep + list(axes))
            work = moved.reshape(moved.shape[:len(keep)] + (math.prod(moved.shape[len(keep):]),))
            cax = len(keep)
    if a.size == 0 and axes is not None and len(axes) != 1:
        # NumPy moves the kept axes first and reshapes to kept + (-1,), which
        # an empty array whose kept part is empty too cannot take (axis=(),
        # or several axes beside an empty kept one)
        kept = [n for d, n in enumerate(a.shape) if d not in axes]
        if math.prod(kept) == 0:
            raise ValueError(f"cannot reshape array of size 0 into shape "
                             f"({','.join(str(n) for n in kept)},newaxis)")
    reduced = () if cax is None else tuple(n for d, n in enumerate(work.shape) if d != cax)
    qshape = () if q is None else q.shape
    length = a.size if cax is None else work.shape[cax]
    if length == 0:
        if q is not None:
            raise IndexError("index -1 is out of bounds for axis 0 with size 0")
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=3)
        res = full(reduced, numpy.nan, _quantile_dtype(a.dtype, mode))
    elif q is None:
        res = _core._quantile(work, None, mode, ignore_nan, cax)
    else:
        res = _core._quantile(work, [float(x) for x in q.ravel()], mode, ignore_nan, cax,
                              method)
        res = res.reshape(qshape + reduced)
    if keepdims:
        kept = list(res.shape[len(qshape):]) if cax is not None else []
        full_shape = []
        it = iter(kept)
        for d in range(nd):
            full_shape.append(1 if axes is None or d in axes else next(it))
        res = res.reshape(qshape + tuple(full_shape))
    if out is not None:
        out[...] = res
        return out
    return res


def _q_array(q, scale, name):
    """q on the host as float64 in [0, 1], and its dtype as NumPy sees it:
    None for a Python scalar ('weak': float inputs keep their dtype), else
    the dtype of the array NumPy makes of it."""
    weak = type(q) in (int, float)
    if isinstance(q, ndarray):
        q = q.get()
    qh = numpy.asarray(q)
    qtype = None if weak else qh.dtype
    qa = numpy.true_divide(qh.astype(numpy.float64), scale)
    if qa.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    if qa.size and not (numpy.all(qa >= 0) and numpy.all(qa <= 1)):
        raise ValueError(f"{name} must be in the range [0, {100 if scale == 100 else 1}]")
    return qa, qtype


def _check_method(method, weights, interpolation):
    """The GA_QM_* code of NumPy's `method` (or the deprecated
    `interpolation`)."""
    if interpolation is not None:
        warnings.warn("the `interpolation=` argument to quantile was renamed to `method=`, "
                      "which has additional options.", DeprecationWarning, stacklevel=4)
        method = interpolation
    if method not in _METHODS:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {tuple(_METHODS)}")
    if weights is not None:
        if method != "inverted_cdf":
            raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
        raise NotImplementedError("gpuarr quantiles do not support weights")
    return _METHODS[method]


def _nan_of_empty(a, axis, out, keepdims):
    """NumPy's nan* quantiles of an empty array: nanmean(a, axis), whatever
    q and method (numpy.nanmedian and _nanquantile_unchecked say so)."""
    from ._reductions import nanmean
    return nanmean(a, axis=axis, out=out, keepdims=keepdims)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median by radix selection (no sort): a 0-d device array for
    axis=None; NaN if any element is NaN."""
    return _quantile(a, None, _MEDIAN, False, axis, out, keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median ignoring NaNs (NaN for an all-NaN slice, without NumPy's
    warning)."""
    a = _device(a)
    if a.size == 0:
        return _nan_of_empty(a, axis, out, keepdims)
    return _quantile(a, None, _MEDIAN, True, axis, out, keepdims)


def _percentile_like(a, q, axis, out, keepdims, method, weights, interpolation, scale,
                     ignore_nan, name):
    code = _check_method(method, weights, interpolation)
    qa, qtype = _q_array(q, scale, name)
    a = _device(a)
    if ignore_nan and a.size == 0:
        if a.dtype.kind == "c":
            raise TypeError("a must be an array of real numbers")
        return _nan_of_empty(a, axis, out, keepdims)
    # NumPy interpolates in q's dtype: a Python scalar or q of a float
    # array's own dtype keeps that dtype ('weak'); float64 q computes in
    # float64; other q dtypes give result_type(a, q), computed in float64.
    # The picking methods return elements, in a's dtype.
    want = None
    if code in _PICKING:
        mode = _PICK
    elif qtype is None or (a.dtype.kind == "f" and qtype == a.dtype):
        mode = _WEAK
    else:
        mode = _STRONG
        if qtype.kind == "f" and a.dtype.kind != "b":
            want = numpy.result_type(a.dtype, qtype)
    if numpy.ndim(qa) == 0:
        res = _quantile(a, qa.reshape(1), mode, ignore_nan, axis, None, keepdims, code)
        res = res.reshape(res.shape[1:])
    else:
        res = _quantile(a, qa, mode, ignore_nan, axis, None, keepdims, code)
    if want is not None and res.dtype != want:
        res = res.astype(want)
    if out is not None:
        out[...] = res
        return out
    return res


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """NumPy's percentile (every method; no weights), by selection for
    axis=None and up to four q."""
    return _percentile_like(a, q, axis, out, keepdims, method, weights, interpolation, 100,
                            False, "Percentiles")


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None, interpolation=None):
    return _percentile_like(a, q, axis, out, keepdims, method, weights, interpolation, 100,
                            True, "Percentiles")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    return _percentile_like(a, q, axis, out, keepdims, method, weights, interpolation, 1,
                            False, "Quantiles")


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    return _percentile_like(a, q, axis, out, keepdims, method, weights, interpolation, 1,
                            True, "Quantiles")


# ------------------------------------------------------------ compaction

def nonzero(a):
    """Indices of the non-zero elements, one int64 array per dimension.
    Synchronises once.  Also gpuarr.where(condition)."""
    a = _device(a)
    coords = _core._nonzero(a)
    return tuple(coords[d] for d in range(a.ndim))


def flatnonzero(a):
    """Indices of the non-zero elements of the flattened array."""
    a = _device(a)
    return _core._flatnonzero(a, a.size)


def argwhere(a):
    """(count, ndim) indices of the non-zero elements."""
    a = _device(a)
    if a.ndim == 0:
        return _core._nonzero(a.reshape(1)).T[:, :0]
    return _core._nonzero(a).T


def _condition(condition):
    c = _device(condition, "condition")
    if c.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    return c


def compress(condition, a, axis=None, out=None):
    """The elements (axis=None: of the flattened array) or slices along
    `axis` where `condition` is true.  One compaction and one
    synchronisation."""
    a = _device(a)
    cond = _condition(condition)
    if axis is None:
        res = _core._compress(cond, a)
    else:
        ax = _axis(axis, a.ndim)
        idx = _core._flatnonzero(cond, a.shape[ax])
        res = _core._take(a, idx, ax, _TAKE_MODES["clip"])
    if out is not None:
        out[...] = res
        return out
    return res


def extract(condition, arr):
    """arr's elements where condition (both read flattened) is true."""
    return _core._compress(_device(condition, "condition"), _device(arr, "arr"))


# ------------------------------------------------------------ take / put

def _take_mode(mode):
    try:
        return _TAKE_MODES[mode]
    except (KeyError, TypeError):
        raise ValueError("clipmode must be one of 'clip', 'raise', or 'wrap'") from None


def take(a, indices, axis=None, out=None, mode="raise"):
    """Elements of `a` (flattened when axis is None) at `indices` along
    `axis`.  Indices in device memory are checked on the device (one
    synchronisation for mode='raise')."""
    m = _take_mode(mode)
    a = _device(a)
    res = _core._take(a, _host_or_device(indices, "indices"), axis, m)
    if out is not None:
        out[...] = res
        return out
    return res


def take_along_axis(arr, indices, axis=-1):
    """arr's elements at `indices` along `axis` (same number of dimensions,
    the others broadcast; axis=None: the flattened arr and 1-d indices):
    one advanced-indexing gather."""
    arr = _device(arr, "arr")
    indices = _device(indices, "indices")
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr = arr.reshape(-1)
        axis = 0
    elif indices.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = _axis(axis, arr.ndim)
    index = []
    for d, n in enumerate(arr.shape):
        if d == axis:
            index.append(indices)
        else:
            shape = [1] * arr.ndim
            shape[d] = n
            index.append(arange(n).reshape(shape))
    return arr[tuple(index)]


def put(a, ind, v, mode="raise"):
    """a.flat[ind] = v, v repeated as needed (no values: nothing to do, as
    NumPy).  Repeated indices: each of those elements gets one of its
    values, which one is unspecified (NumPy: the last).  mode='raise'
    checks every index before writing any, so an IndexError leaves `a` as
    it was (NumPy writes the elements before the bad index)."""
    if not isinstance(a, ndarray):
        raise TypeError(f"put() argument 1 must be gpuarr.ndarray, not {type(a).__name__}")
    m = _take_mode(mode)
    ind = _host_or_device(ind, "ind")
    ind = ind.ravel() if isinstance(ind, ndarray) else numpy.asarray(ind).ravel()
    v = asarray(_host_or_device(v, "v"), dtype=a.dtype).ravel()
    if ind.size == 0:
        return
    if a.size == 0:
        raise IndexError("cannot replace elements of an empty array")
    if v.size == 0:
        return
    if v.size not in (1, ind.size):
        v = _core._take(v, arange(ind.size), None, _TAKE_MODES["wrap"])
    _core._put(a, ind, v, m)


# ------------------------------------------------------------ searching

def _side(side):
    if side in ("left", "l", "L") or (isinstance(side, str) and side.lower() == "left"):
        return False
    if side in ("right", "r", "R") or (isinstance(side, str) and side.lower() == "right"):
        return True
    raise ValueError(f"side must be 'left' or 'right' (got {side!r})")


def _scalar_type(base_dtype, v):
    """The dtype NumPy's searchsorted compares base_dtype with the Python
    scalar v in: v taken at its own default dtype (bool, int64 or uint64,
    float64; float64 for ints beyond them), not as a weak scalar (NEP 50),
    so -1e-300 sorts before a float16 0 and 300 after every int8."""
    if type(v) is int and not -2**63 <= v < 2**64:
        return numpy.dtype(numpy.float64)
    return numpy.result_type(base_dtype, numpy.asarray(v).dtype)


def _values_and_type(base_dtype, v, name):
    """v as a device array of the dtype searchsorted compares base_dtype
    and v in (NumPy's: _scalar_type for Python scalars)."""
    if isinstance(v, ndarray):
        common = numpy.result_type(base_dtype, v.dtype)
    elif isinstance(v, (int, float, bool)):
        common = _scalar_type(base_dtype, v)
    else:
        common = numpy.result_type(base_dtype, numpy.asarray(_host_or_device(v, name)).dtype)
    return asarray(v, dtype=common), common


def searchsorted(a, v, side="left", sorter=None):
    """Insertion points of v in the sorted 1-d a (int64, v's shape; a 0-d
    device array for scalar v)."""
    right = _side(side)
    a = _device(a)
    if a.ndim != 1:
        raise ValueError("object too deep for desired array" if a.ndim > 1 else
                         "object of too small depth for desired array")
    _orderable(a)
    if sorter is not None:
        a = take(a, sorter)
    vd, common = _values_and_type(a.dtype, v, "v")
    if common.kind == "c":
        raise TypeError("gpuarr does not order complex numbers")
    return _core._searchsorted(a.astype(common, copy=False), vd, right, 0)


def _monotonicity(bins):
    d = numpy.diff(bins)
    if numpy.all(d >= 0):
        return 0
    if numpy.all(d <= 0):
        return 1
    raise ValueError("bins must be monotonically increasing or decreasing")


def digitize(x, bins, right=False):
    """numpy.digitize: bins increasing or decreasing (decided on the device
    for device bins, which are not checked for monotonicity)."""
    hb = None
    if not isinstance(bins, ndarray):
        hb = numpy.asarray(_host_or_device(bins, "bins"))
        if hb.ndim != 1:
            raise ValueError("object too deep for desired array" if hb.ndim > 1 else
                             "object of too small depth for desired array")
        direction = _monotonicity(hb)
    x = _device(x, "x")
    if x.dtype.kind == "c":
        raise TypeError("x may not be complex")
    if hb is None:
        b, direction = bins, 2
    else:
        b = asarray(hb)
    if b.ndim != 1:
        raise ValueError("bins must be one-dimensional")
    if b.dtype.kind == "c":
        raise TypeError("bins may not be complex")
    common = numpy.result_type(x.dtype, b.dtype)
    return _core._searchsorted(b.astype(common, copy=False), x.astype(common, copy=False),
                               not right, direction)


# ------------------------------------------------------------- counting

def bincount(x, weights=None, minlength=0):
    """Occurrences of each value of the non-negative integer array x (or
    sums of weights).  Synchronises once (the length depends on max(x))."""
    x = _device(x, "x")
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else
                         "object of too small depth for desired array")
    if not numpy.can_cast(x.dtype, numpy.intp, "safe"):
        raise TypeError(f"Cannot cast array data from {x.dtype!r} to {numpy.dtype(numpy.intp)!r} "
                        "according to the rule 'safe'")
    if minlength is None:
        minlength = 0
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    w = None
    if weights is not None:
        w = _device(weights, "weights")
        if w.shape != x.shape:
            raise ValueError("The weights and list don't have the same length.")
        if w.dtype.kind == "c":
            raise TypeError("gpuarr.bincount does not take complex weights")
    return _core._bincount(x, w, minlength)


def _outer_edges(range_):  # noqa: A002
    first, last = range_
    if first > last:
        raise ValueError("max must be larger than min in range parameter.")
    if not (numpy.isfinite(first) and numpy.isfinite(last)):
        raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """numpy.histogram with bins an int or edges (not the estimator
    names).  Values in [edges[i], edges[i+1]) count in bin i, the last bin
    is closed, values outside the edges are left out.  No synchronisation."""
    if isinstance(bins, str):
        raise NotImplementedError("gpuarr.histogram does not implement the bin estimators "
                                  f"({bins!r}): give the number of bins or the edges")
    a = _device(a)
    if a.dtype.kind == "c":
        raise TypeError("gpuarr.histogram does not take complex data")
    if a.dtype.kind == "b":
        warnings.warn(f"Converting input from {a.dtype} to {numpy.uint8} for compatibility.",
                      RuntimeWarning, stacklevel=2)
        a = a.astype(numpy.uint8)
    w = None
    if weights is not None:
        w = _device(weights, "weights")
        if w.shape != a.shape:
            raise ValueError("weights should have the same shape as a.")
        if w.dtype.kind == "c":
            raise TypeError("gpuarr.histogram does not take complex weights")
    if isinstance(bins, ndarray) or numpy.ndim(bins) == 1:
        if isinstance(bins, ndarray):
            if bins.ndim != 1:
                raise ValueError("`bins` must be 1d, when an array")
            edges = bins
        else:
            hb = numpy.asarray(_host_or_device(bins, "bins"))
            if numpy.any(hb[:-1] > hb[1:]):
                raise ValueError("`bins` must increase monotonically, when an array")
            edges = asarray(hb)
        edges64 = edges.astype(numpy.float64)
    else:
        if numpy.ndim(bins) != 0:
            raise ValueError("`bins` must be 1d, when an array")
        try:
            nbins = operator.index(bins)
        except TypeError:
            raise TypeError("`bins` must be an integer, a string, or an array") from None
        if nbins < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range is not None or a.size == 0:
            first, last = _outer_edges(range if range is not None else (0, 1))
            bin_type = numpy.result_type(first, last, a.dtype)
            if numpy.issubdtype(bin_type, numpy.integer):
                bin_type = numpy.result_type(bin_type, float)
            host = numpy.linspace(first, last, nbins + 1, endpoint=True, dtype=bin_type)
            edges = asarray(host)
            edges64 = asarray(host.astype(numpy.float64))
        else:
            edges, edges64 = _core._histogram_edges(a, nbins)
    if edges64.size < 2:
        raise ValueError("`bins` must have at least two edges")
    counts = _core._histogram_counts(a, edges64, w)
    n = counts[:-1]
    if density:
        db = edges64[1:] - edges64[:-1]
        return n / db / counts[-1], edges
    if w is not None and w.dtype != numpy.float64:
        n = n.astype(w.dtype)
    return n, edges


# ------------------------------------------------------------ methods

def _method_partition(self, kth, axis=-1, kind="introselect", order=None):
    self[...] = partition(self, kth, operator.index(axis), kind, order)


def _method_argpartition(self, kth, axis=-1, kind="introselect", order=None):
    return argpartition(self, kth, axis, kind, order)


def _method_searchsorted(self, v, side="left", sorter=None):
    return searchsorted(self, v, side, sorter)


def _method_compress(self, condition, axis=None, out=None):
    return compress(condition, self, axis, out)


def _method_take(self, indices, axis=None, out=None, mode="raise"):
    return take(self, indices, axis, out, mode)


def _method_put(self, indices, values, mode="raise"):
    put(self, indices, values, mode)


_core._register_helper("nonzero", nonzero)
_core._register_helper("ndarray.partition", _method_partition)
_core._register_helper("ndarray.argpartition", _method_argpartition)
_core._register_helper("ndarray.searchsorted", _method_searchsorted)
_core._register_helper("ndarray.compress", _method_compress)
_core._register_helper("ndarray.take", _method_take)
_core._register_helper("ndarray.put", _method_put)
