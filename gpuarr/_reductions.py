"""Reductions: sum, prod, mean, var, std, min/amin, max/amax, ptp, argmin,
argmax, all, any and count_nonzero, their nan* forms (nansum, nanprod,
nanmean, nanvar, nanstd, nanmin, nanmax, nanargmin, nanargmax), average,
cumsum, cumprod (and the array API's cumulative_sum, cumulative_prod) and
diff, with NumPy's signatures and dtypes.

The reductions are the C core's (gpuarr._core, reduction.c); the plain ones
are ndarray methods too.  Where NumPy returns a scalar (axis=None), gpuarr
returns a 0-d device array, as CuPy does: the value stays on the device
until it is read (``float(x.sum())``, ``bool(x.all())``, ``.get()``), so a
reduction never synchronises with the host by itself -- except where NumPy's
answer depends on the data in a way the host must see: nanargmin/nanargmax
raise for an all-NaN slice, nanmin/nanmax/nanmean/nanvar/nanstd warn for
one, and average raises when weights sum to zero; each reads one flag back.

Dtypes come from NumPy: ``_result_dtype`` asks NumPy once per combination
of function, input dtype, ``dtype=`` and ``out=`` dtype (the C core caches
the answer).
"""
import builtins
import math
import operator
import warnings

import numpy
from numpy.exceptions import AxisError
from numpy.lib.array_utils import normalize_axis_tuple

from . import _core
from ._core import (sum, prod, mean, var, std, min, max, ptp, argmin, argmax,  # noqa: A004
                    all, any, count_nonzero, nansum, nanprod, nanmean, nanvar, nanstd, nanmin,
                    nanmax, nanargmin, nanargmax, cumsum, cumprod, ndarray)
from ._manipulation import concatenate

amin = min
amax = max

__all__ = ["sum", "prod", "mean", "var", "std", "min", "max", "amin", "amax", "ptp", "argmin",
           "argmax", "all", "any", "count_nonzero", "nansum", "nanprod", "nanmean", "nanvar",
           "nanstd", "nanmin", "nanmax", "nanargmin", "nanargmax", "average", "cumsum", "cumprod",
           "cumulative_sum", "cumulative_prod", "diff"]

_u = _core.ufuncs


def _result_dtype(name, dtype, arg_dtype, out_dtype):
    """The dtype NumPy gives `name` (sum/prod: the loop dtype, which is
    the result's unless out= has another; mean/var/std: the result's) for
    an input of `dtype` with dtype=`arg_dtype` and an out= of `out_dtype`
    (None when not given).  NumPy's own error when it refuses."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name in ("sum", "prod", "nansum", "nanprod"):
            ufunc = numpy.add if name.endswith("sum") else numpy.multiply
            kwargs = {} if arg_dtype is None else {"signature": (arg_dtype, None, None)}
            return ufunc.resolve_dtypes((out_dtype, dtype, None), casting="unsafe",
                                        reduction=True, **kwargs)[0]
        return getattr(numpy, name)(numpy.zeros(1, dtype), dtype=arg_dtype).dtype


def _device(a, name):
    if isinstance(a, ndarray):
        return a
    if isinstance(a, numpy.ndarray):
        raise _core._host_array_error(name)
    return _core.asarray(a)


def _replace_nan(a):
    """a with NaNs made 0 (nansum/nanprod of floats with an integer dtype=,
    where NumPy replaces before casting)."""
    return _core.where(_u["isnan"](a), 0, a)


def _nan_check(name, res, a, axis, ddof):
    """NumPy's all-NaN rules, after the kernel: nanargmin/nanargmax raise
    (the kernel stored -1 for such a slice), nanmin/nanmax warn when a
    result is NaN, nanmean/nanvar/nanstd warn where the count of non-NaN
    elements (less ddof) is not positive -- counted only when some result is
    NaN, so the common case costs one small read."""
    if name in ("nanargmin", "nanargmax"):
        if bool(_u["less"](res, 0).any()):
            raise ValueError("All-NaN slice encountered")
        return
    if not bool(_u["isnan"](res).any()):
        return
    if name in ("nanmin", "nanmax"):
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=2)
        return
    count = count_nonzero(_u["logical_not"](_u["isnan"](a)), axis=axis)
    if name == "nanmean":
        if bool(_u["equal"](count, 0).any()):
            warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=2)
    elif bool(_u["less_equal"](count, ddof).any()):
        warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning, stacklevel=2)


def _nanarg_tuple_axis(a, axis):
    """nanargmin/nanargmax of inexact, non-empty data given a tuple axis,
    which they refuse (TypeError, as argmin does): first NumPy's errors that
    come before, since it reduces the NaN mask over `axis` (np.all) before
    it calls argmin -- a bad or repeated axis, then an all-NaN slice."""
    if bool(all(_u["isnan"](a), axis=axis).any()):
        raise ValueError("All-NaN slice encountered")


def _integer_var(name, a, axis, dtype, out, ddof, keepdims):
    """var/std with an integer or bool result dtype: NumPy's steps, each
    truncating in that dtype (the mean, the squared deviations' sum, the
    division)."""
    axes = tuple(range(a.ndim)) if axis is None else normalize_axis_tuple(axis, a.ndim)
    count = math.prod(a.shape[d] for d in axes)
    m = sum(a, axis=axis, dtype=dtype, keepdims=True)
    m = _u["true_divide"](m, count, out=m, casting="unsafe")
    x = _u["subtract"](a, m)
    if x.dtype.kind == "c":
        x = _u["multiply"](x, _u["conjugate"](x)).real
    else:
        x = _u["multiply"](x, x, out=x)
    # out= is written once, at the end: the steps in between allocate, and
    # one that fails for memory must leave out as it was
    tmp = None if out is None else _core.empty(out.shape, dtype=out.dtype)
    r = sum(x, axis=axis, dtype=dtype, out=tmp, keepdims=keepdims)
    dof = builtins.max(count - ddof, 0)
    if r.ndim == 0 and out is None:
        # NumPy divides a scalar and converts back to its type
        r = _u["true_divide"](r, dof).astype(r.dtype)
        return _u["sqrt"](r).astype(r.dtype) if name.endswith("std") else r
    r = _u["true_divide"](r, dof, out=r, casting="unsafe")
    if name.endswith("std"):
        r = _u["sqrt"](r, out=r)
    if out is None:
        return r
    out[...] = r
    return out


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average along axis (numpy.average): without weights the mean;
    with weights sum(a * w) / sum(w) in NumPy's result dtype.  Weights that
    sum to zero raise ZeroDivisionError (one synchronisation to check).
    With returned=True the sum of weights comes too, shaped as the average,
    as NumPy gives it: without weights the count in the average's dtype, a
    NumPy scalar for a 0-d average and a device array otherwise."""
    a = _device(a, "a")
    if axis is not None:
        axis = normalize_axis_tuple(axis, a.ndim, argname="axis")
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        scl = avg.dtype.type(a.size / avg.size)
    else:
        wgt = _device(weights, "weights")
        if a.dtype.kind in "biu":
            result_dtype = numpy.result_type(a.dtype, wgt.dtype, "f8")
        else:
            result_dtype = numpy.result_type(a.dtype, wgt.dtype)
        if a.shape != wgt.shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if wgt.shape != tuple(a.shape[ax] for ax in axis):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            wgt = wgt.transpose(tuple(int(i) for i in numpy.argsort(axis)))
            wgt = wgt.reshape(tuple(s if ax in axis else 1 for ax, s in enumerate(a.shape)))
        scl = sum(wgt, axis=axis, dtype=result_dtype, keepdims=keepdims)
        if bool(_u["equal"](scl, 0.0).any()):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = _u["true_divide"](sum(_u["multiply"](a, wgt, dtype=result_dtype), axis=axis,
                                    keepdims=keepdims), scl)
    if returned:
        if scl.shape != avg.shape:
            # the count (a NumPy scalar) or the sum of 1-d weights, made the
            # average's shape as NumPy broadcasts it
            scl = (scl._broadcast_to(avg.shape).copy() if isinstance(scl, ndarray)
                   else _core.full(avg.shape, scl, dtype=scl.dtype))
        return avg, scl
    return avg


def _cumulative(func, identity, x, axis, dtype, out, include_initial):
    """cumsum/cumprod as the array API's cumulative_sum/cumulative_prod: a
    0-d x is taken as 1-d, axis may be omitted only for 1-d x, and
    include_initial puts the identity first (the scan writes the rest of
    one new array)."""
    x = _device(x, "x")
    if x.ndim == 0:
        x = x.reshape(1)
    if axis is None:
        if x.ndim >= 2:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                             "is required.")
        axis = 0
    if not include_initial:
        return func(x, axis=axis, dtype=dtype, out=out)
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise AxisError(axis, x.ndim)
    axis %= x.ndim
    shape = list(x.shape)
    shape[axis] += 1
    if out is None:
        name = "cumsum" if func is cumsum else "cumprod"
        out = _core.empty(tuple(shape), _result_dtype(name, x.dtype, dtype, None))
    elif tuple(out.shape) != tuple(shape):
        raise ValueError(f"out has shape {out.shape}, but the result has shape {tuple(shape)}")
    index = [slice(None)] * x.ndim
    index[axis] = slice(1, None)
    func(x, axis=axis, dtype=dtype, out=out[tuple(index)])
    index[axis] = slice(0, 1)
    out[tuple(index)] = identity
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Running sums along axis (the array API's cumsum; include_initial: a
    leading 0)."""
    return _cumulative(cumsum, 0, x, axis, dtype, out, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Running products along axis (include_initial: a leading 1)."""
    return _cumulative(cumprod, 1, x, axis, dtype, out, include_initial)


def diff(a, n=1, axis=-1, prepend=numpy._NoValue, append=numpy._NoValue):
    """n-th discrete difference along axis (numpy.diff): not_equal for bool,
    subtract otherwise; prepend/append (scalars broadcast) joined first."""
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    a = _device(a, "a")
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    nd = a.ndim
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise AxisError(axis, nd)
    axis %= nd

    def edge(value, name):
        value = _device(value, name)
        if value.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            value = value._broadcast_to(tuple(shape))
        return value

    combined = [a]
    if prepend is not numpy._NoValue:
        combined.insert(0, edge(prepend, "prepend"))
    if append is not numpy._NoValue:
        combined.append(edge(append, "append"))
    if len(combined) > 1:
        a = concatenate(combined, axis)
    lo = [slice(None)] * nd
    hi = [slice(None)] * nd
    hi[axis] = slice(1, None)
    lo[axis] = slice(None, -1)
    lo, hi = tuple(lo), tuple(hi)
    op = _u["not_equal"] if a.dtype == numpy.bool_ else _u["subtract"]
    for _ in range(n):
        a = op(a[hi], a[lo])
    return a


_core._register_helper("reduce_result_dtype", _result_dtype)
_core._register_helper("replace_nan", _replace_nan)
_core._register_helper("reduce_nan_check", _nan_check)
_core._register_helper("nanarg_tuple_axis", _nanarg_tuple_axis)
_core._register_helper("reduce_integer_var", _integer_var)
