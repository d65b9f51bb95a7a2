"""Sigma clipping on the device: astropy.stats' sigma_clip and
sigma_clipped_stats, and the lesson's kappa-sigma clipper.

    >>> import gpuarr as gp
    >>> from gpuarr.stats import sigma_clip, sigma_clipped_stats
    >>> mean, median, std = sigma_clipped_stats(image)          # astropy's defaults
    >>> bg = gp.stats.kappa_sigma_clip(image.ravel())           # the lesson's clipper

How it runs (src/stats.c, src/kernels/stats.cu): after every clip the
survivors are the values inside one interval -- the intersection of all
bounds so far -- so no iteration ever compacts the data.  Each iteration
reads the data once for the count, mean and spread of the values inside
the interval (float64 sums, shifted by the previous centre) and the median:
a large single array runs every iteration in one cooperative launch over
the whole GPU (a grid-wide barrier after each pass), where that same pass
gathers the values near the last median, which usually hold the new one
(else the median takes a radix histogram of the first digit and a pass
gathering the few values left in its bin).  Rows (``axis`` given) and small
arrays run every iteration of a row inside one block, all rows in one
launch.  The synchronisations are the size of a compacted result
(``masked=False`` without ``axis``, ``compressed()``) and, with
``maxiters=None`` where no cooperative launch is possible, a convergence
check every few queued iterations.

Semantics.  ``sigma_clip`` follows astropy's documented behaviour for the
arguments it shares: clipped values are those below ``centre - sigma_lower
* std`` or above ``centre + sigma_upper * std``, centre the median (or
mean) and std the standard deviation (or MAD-based std) of the current
survivors; NaN and infinities are always clipped; iteration stops after
``maxiters`` clips or when one clips nothing (``maxiters=None``); a
``sigma_lower``/``sigma_upper`` of None (or 0) means ``sigma``.  Bounds are
formed in the data's precision as NumPy forms ``med - 3 * std``.

``inclusive=False`` (gpuarr only) keeps values strictly inside the bounds,
which with ``maxiters=None`` is exactly the lesson's clipper::

    while True:
        med, std = np.median(d), np.std(d)
        c = d.compress(d > med - 3 * std); c = c.compress(c < med + 3 * std)
        if len(c) == len(d): break
        d = c

Differences from astropy:

* Results are device arrays.  ``masked=True`` returns a :class:`ClippedArray`
  (``.data``, ``.mask``, ``.compressed()``, ``.filled()``, ``.get()`` -> a
  numpy.ma.MaskedArray) since gpuarr has no masked array type; bounds and
  the statistics of ``sigma_clipped_stats`` are 0-d device arrays (arrays
  with ``axis``) in the data's floating dtype (float64 for integer data).
* ``cenfunc`` and ``stdfunc`` take the names only ('median'/'mean',
  'std'/'mad_std'); callables raise TypeError.  ``grow`` is not supported.
* The median and std are exact selections and float64 sums; NumPy's float32
  std sums in float32, so a bound can differ from NumPy's in the last bit
  (a value sitting exactly there may then be clipped differently).
* ``masked=False`` never modifies the input (``copy`` only matters for
  ``masked=True``, where ``copy=False`` shares the data).
* ``sigma_clipped_stats`` with ``axis`` returns the statistics of each row's
  survivors of every clip (as with ``axis=None``); astropy's fast path uses
  the values inside each row's last bounds, which differ only when a later
  bound is looser than an earlier one.
* With ``axis``, astropy (its per-row C code) computes in float64 whatever
  the data type, so float32 bounds differ from it by a rounding; a row whose
  values are all clipped keeps the bounds that clipped them, as astropy's
  does (without ``axis`` the bounds become NaN, as astropy's do).
"""
import math
import operator

import numpy
from numpy.lib.array_utils import normalize_axis_tuple

from . import _core
from ._core import ndarray
from ._creation import ascontiguousarray
from ._manipulation import _device, moveaxis
from ._ufuncs import where, isnan

__all__ = ["sigma_clip", "sigma_clipped_stats", "kappa_sigma_clip", "ClippedArray"]

# One launch per pass instead of the single cooperative launch for a large
# array (tools/probe_stats.py compares the two).
_PER_PASS = False

# _clip_extract fields (kernels.h's GA_CLIP_*)
_LOWER, _UPPER, _MEAN, _MEDIAN, _STD, _ITERATIONS = (
    _core.GA_CLIP_LOWER, _core.GA_CLIP_UPPER, _core.GA_CLIP_MEAN, _core.GA_CLIP_MEDIAN,
    _core.GA_CLIP_STD, _core.GA_CLIP_ITERATIONS)


class ClippedArray:
    """The masked result of :func:`sigma_clip` (gpuarr's stand-in for
    numpy.ma.MaskedArray): ``data`` (the input, or a copy), ``mask`` (True
    where clipped), both device arrays of the input's shape."""

    def __init__(self, data, mask, _survivors=None):
        self.data = data
        self.mask = mask
        self._survivors = _survivors   # (rows, state, inclusive) of a single row

    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)
    size = property(lambda self: self.data.size)

    def filled(self, fill_value=numpy.nan):
        """The data with clipped values replaced by fill_value."""
        return where(self.mask, fill_value, self.data)

    def compressed(self):
        """The unclipped values as a 1-d device array (raster order;
        synchronises: their number)."""
        if self._survivors is not None:
            return _core._clip_compress(*self._survivors, True).astype(self.data.dtype,
                                                                        copy=False)
        return self.data[~self.mask]

    def count(self):
        """The number of unclipped values (synchronises)."""
        return int(self.size - int(self.mask.astype(numpy.int64).sum()))

    def get(self):
        """A numpy.ma.MaskedArray copy on the host."""
        return numpy.ma.MaskedArray(self.data.get(), self.mask.get())

    def __repr__(self):
        return f"ClippedArray(shape={self.shape}, dtype={self.dtype})"


def _real(value, name):
    if isinstance(value, (bool, numpy.bool_)) or not isinstance(
            value, (int, float, numpy.integer, numpy.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return value


def _sigmas(sigma, sigma_lower, sigma_upper):
    # astropy: `sigma_lower or sigma` (None and 0 both mean sigma)
    sigma = _real(sigma, "sigma")
    lower = sigma if sigma_lower is None else _real(sigma_lower, "sigma_lower") or sigma
    upper = sigma if sigma_upper is None else _real(sigma_upper, "sigma_upper") or sigma
    return lower, upper


def _maxiters(maxiters):
    """-1 (until nothing is clipped) for None, 0 or inf, as astropy."""
    if maxiters is None:
        return -1
    if isinstance(maxiters, (float, numpy.floating)) and math.isinf(maxiters) and maxiters > 0:
        return -1
    if isinstance(maxiters, (bool, numpy.bool_)):
        raise TypeError("maxiters must be None or an integer, got bool")
    try:
        maxiters = operator.index(maxiters)
    except TypeError:
        raise TypeError(f"maxiters must be None or an integer, got "
                        f"{type(maxiters).__name__}") from None
    if maxiters < 0:
        raise ValueError(f"maxiters must be None or a non-negative integer, got {maxiters}")
    return -1 if maxiters == 0 else maxiters


def _functions(cenfunc, stdfunc):
    if callable(cenfunc) or callable(stdfunc):
        raise TypeError("cenfunc and stdfunc must be given by name ('median' or 'mean'; "
                        "'std' or 'mad_std'): gpuarr's sigma clipping does not take callables")
    if cenfunc not in ("median", "mean"):
        raise ValueError(f"cenfunc must be 'median' or 'mean', got {cenfunc!r}")
    if stdfunc not in ("std", "mad_std"):
        raise ValueError(f"stdfunc must be 'std' or 'mad_std', got {stdfunc!r}")
    return cenfunc == "median", stdfunc == "mad_std"


def _check(sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc, std_ddof=0):
    """Every scalar argument checked before the data is touched (so the
    errors name the argument, on any machine): (cen_median, std_mad,
    sigma_lower, sigma_upper, maxiters, std_ddof)."""
    cen_median, std_mad = _functions(cenfunc, stdfunc)
    lower, upper = _sigmas(sigma, sigma_lower, sigma_upper)
    maxiters = _maxiters(maxiters)
    if isinstance(std_ddof, (bool, numpy.bool_)):
        raise TypeError("std_ddof must be an integer, got bool")
    try:
        std_ddof = operator.index(std_ddof)
    except TypeError:
        raise TypeError(f"std_ddof must be an integer, got {type(std_ddof).__name__}") from None
    if std_ddof < 0:
        raise ValueError(f"std_ddof must be non-negative, got {std_ddof}")
    return cen_median, std_mad, lower, upper, maxiters, std_ddof


def _work_dtype(dtype):
    if dtype.kind == "f":
        return numpy.dtype(numpy.float32) if dtype.itemsize <= 4 else numpy.dtype(numpy.float64)
    if dtype.kind == "c":
        raise TypeError("sigma clipping of complex data is not supported")
    return numpy.dtype(numpy.float64)


def _layout(data, axis):
    """(rows array C-contiguous in the working dtype, row length, the
    shape of the moved array, the axes moved last, the reduced shape)."""
    work = data.astype(_work_dtype(data.dtype), copy=False)
    if axis is None:
        flat = ascontiguousarray(work).reshape(-1)
        return flat, max(flat.size, 1), None, None, ()
    axes = normalize_axis_tuple(tuple(axis) if isinstance(axis, list) else axis, data.ndim)
    dest = tuple(range(data.ndim - len(axes), data.ndim))
    moved = moveaxis(work, axes, dest)
    rowlen = 1
    for a in axes:
        rowlen *= data.shape[a]
    reduced = tuple(n for i, n in enumerate(data.shape) if i not in axes)
    rows = ascontiguousarray(moved).reshape(-1)
    return rows, max(rowlen, 1), moved.shape, (axes, dest), reduced


def _unmove(flat, moved_shape, axes):
    if moved_shape is None:
        return flat
    axes_from, dest = axes
    return moveaxis(flat.reshape(moved_shape), dest, axes_from)


def _run(data, checked, axis, inclusive, final_stats=False):
    cen_median, std_mad, lower, upper, maxiters, std_ddof = checked
    flat, rowlen, moved_shape, axes, reduced = _layout(data, axis)
    state = _core._clip_run(flat, rowlen, lower, upper, maxiters, bool(inclusive), cen_median,
                            std_mad, std_ddof, bool(final_stats), _PER_PASS, axis is not None)
    return flat, rowlen, state, moved_shape, axes, reduced


def _field(flat, rowlen, state, field, reduced):
    return _core._clip_extract(flat, rowlen, state, field).reshape(reduced)


def sigma_clip(data, sigma=3, sigma_lower=None, sigma_upper=None, maxiters=5,
               cenfunc="median", stdfunc="std", axis=None, masked=True, return_bounds=False,
               copy=True, *, inclusive=True):
    """Sigma-clip ``data`` on the device (astropy.stats.sigma_clip).

    Returns a :class:`ClippedArray` (``masked=True``: the mask is True for
    non-finite values and values outside the last bounds), or with
    ``masked=False`` the 1-d survivors of every clip (``axis=None``) or a
    copy of the data with NaN where clipped (``axis`` given; integer data
    becomes float32 as in astropy).  ``return_bounds=True`` adds the last
    lower and upper bounds (0-d device arrays, or arrays over the other
    axes).  ``inclusive=False`` keeps values strictly inside the bounds
    (with ``maxiters=None``: the lesson's kappa-sigma clipper).
    """
    checked = _check(sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc)
    data = _device(data, "data")
    if data.size == 0:
        nan = numpy.asarray(numpy.nan)
        result = ClippedArray(data, data.astype(numpy.bool_)) if masked else data
        return (result, nan, nan) if return_bounds else result
    flat, rowlen, state, moved_shape, axes, reduced = _run(data, checked, axis, inclusive)
    if masked:
        mask = _core._clip_mask(flat, rowlen, state, bool(inclusive), False)
        mask = _unmove(mask, moved_shape, axes).reshape(data.shape)
        single = (flat, state, bool(inclusive)) if axis is None else None
        result = ClippedArray(data.copy() if copy else data, mask, single)
    elif axis is None:
        result = _core._clip_compress(flat, state, bool(inclusive), False)
        result = result.astype(data.dtype, copy=False)
    else:
        filled = _core._clip_mask(flat, rowlen, state, bool(inclusive), True)
        result = _unmove(filled, moved_shape, axes).reshape(data.shape)
        if data.dtype.kind != "f":
            result = result.astype(numpy.float32)
        elif result.dtype != data.dtype:
            result = result.astype(data.dtype)
        else:
            result = ascontiguousarray(result)
    if return_bounds:
        return (result, _field(flat, rowlen, state, _LOWER, reduced),
                _field(flat, rowlen, state, _UPPER, reduced))
    return result


def sigma_clipped_stats(data, mask=None, mask_value=None, sigma=3.0, sigma_lower=None,
                        sigma_upper=None, maxiters=5, cenfunc="median", stdfunc="std",
                        std_ddof=0, axis=None, *, inclusive=True):
    """(mean, median, std) of the values surviving sigma clipping
    (astropy.stats.sigma_clipped_stats), as 0-d device arrays (arrays over
    the other axes with ``axis``) in the data's floating dtype.  ``mask``
    (a device bool array, True = ignore) and ``mask_value`` exclude values
    before clipping.  No synchronisation unless ``maxiters=None`` on a
    large array (convergence checks)."""
    checked = _check(sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc, std_ddof)
    data = _device(data, "data")
    if mask is not None or mask_value is not None:
        data = data.astype(_work_dtype(data.dtype), copy=False)
        if mask is not None:
            data = where(_device(mask, "mask"), numpy.nan, data)
        if mask_value is not None:
            data = where(data == mask_value, numpy.nan, data)
        if bool(isnan(data).all()):
            raise ValueError("input data is all masked")
    if data.size == 0:
        nan = numpy.asarray(numpy.nan)
        return nan, nan, nan
    flat, rowlen, state, _, _, reduced = _run(data, checked, axis, inclusive, True)
    return tuple(_field(flat, rowlen, state, f, reduced) for f in (_MEAN, _MEDIAN, _STD))


def kappa_sigma_clip(data, kappa=3.0):
    """The lesson's kappa-sigma clipper: repeatedly drop the values not
    strictly within median +- kappa * std of the survivors until nothing is
    dropped; returns the survivors (1-d, in order), as the lesson's
    ``kappa_sigma_clipper(data.ravel())`` does."""
    return sigma_clip(data, sigma=kappa, maxiters=None, masked=False, inclusive=False)
