"""Reductions: sum, prod, mean, var, std, min/amin, max/amax, ptp, argmin,
argmax, all, any and count_nonzero, with NumPy's signatures and dtypes.

The functions are the C core's (gpuarr._core, reduction.c); the same
reductions are ndarray methods.  Where NumPy returns a scalar (axis=None),
gpuarr returns a 0-d device array, as CuPy does: the value stays on the
device until it is read (``float(x.sum())``, ``bool(x.all())``, ``.get()``),
so a reduction never synchronises with the host by itself.

Dtypes come from NumPy: ``_result_dtype`` asks NumPy once per combination
of function, input dtype, ``dtype=`` and ``out=`` dtype (the C core caches
the answer).
"""
import warnings

import numpy

from . import _core
from ._core import (sum, prod, mean, var, std, min, max, ptp, argmin, argmax,  # noqa: A004
                    all, any, count_nonzero)

amin = min
amax = max

__all__ = ["sum", "prod", "mean", "var", "std", "min", "max", "amin", "amax", "ptp", "argmin",
           "argmax", "all", "any", "count_nonzero"]


def _result_dtype(name, dtype, arg_dtype, out_dtype):
    """The dtype NumPy gives `name` (sum/prod: the loop dtype, which is
    the result's unless out= has another; mean/var/std: the result's) for
    an input of `dtype` with dtype=`arg_dtype` and an out= of `out_dtype`
    (None when not given).  NumPy's own error when it refuses."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name in ("sum", "prod"):
            ufunc = numpy.add if name == "sum" else numpy.multiply
            kwargs = {} if arg_dtype is None else {"signature": (arg_dtype, None, None)}
            return ufunc.resolve_dtypes((out_dtype, dtype, None), casting="unsafe",
                                        reduction=True, **kwargs)[0]
        return getattr(numpy, name)(numpy.zeros(1, dtype), dtype=arg_dtype).dtype


_core._register_helper("reduce_result_dtype", _result_dtype)
