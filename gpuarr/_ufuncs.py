"""The ufuncs (C objects from gpuarr._core, NumPy's names and aliases,
with the array API's names beside them: acos, asin, atan, atan2, acosh,
asinh, atanh, bitwise_left_shift, bitwise_right_shift, bitwise_invert, pow)
and the elementwise functions composed from them: around, angle, real,
imag, conj, isclose, allclose, array_equal, clip, divmod."""
import numpy
from numpy.lib.array_utils import normalize_axis_tuple

from . import _core
from ._core import ndarray, where

_u = _core.ufuncs
globals().update(_u)

divide = _u["true_divide"]
mod = _u["remainder"]
abs = absolute = _u["absolute"]  # noqa: A001
conj = conjugate = _u["conjugate"]
radians = _u["deg2rad"]
degrees = _u["rad2deg"]
bitwise_not = bitwise_invert = invert = _u["invert"]
bitwise_left_shift = _u["left_shift"]
bitwise_right_shift = _u["right_shift"]
acos, asin, atan, atan2 = _u["arccos"], _u["arcsin"], _u["arctan"], _u["arctan2"]
acosh, asinh, atanh = _u["arccosh"], _u["arcsinh"], _u["arctanh"]
pow = _u["power"]  # noqa: A001

__all__ = sorted(list(_u) + ["divide", "mod", "abs", "absolute", "conj", "conjugate", "radians",
                             "degrees", "bitwise_not", "bitwise_invert", "invert", "where",
                             "around", "round", "angle", "real", "imag", "isclose", "allclose",
                             "array_equal", "clip", "divmod", "acos", "asin", "atan", "atan2",
                             "acosh", "asinh", "atanh", "bitwise_left_shift",
                             "bitwise_right_shift"])


def divmod(x1, x2, out=None):  # noqa: A001
    """(floor_divide(x1, x2), remainder(x1, x2))."""
    q = _u["floor_divide"](x1, x2, out=None if out is None else out[0])
    r = _u["remainder"](x1, x2, out=None if out is None else out[1])
    return q, r


def around(a, decimals=0, out=None):
    """Round to the given number of decimals, as numpy.around (half to even,
    through a scaled rint for non-zero decimals)."""
    if not isinstance(a, ndarray):
        a = _core.array(a, copy=None)
    if a.dtype.kind in "iub":
        if decimals >= 0:
            return a.copy() if out is None else _u["positive"](a, out=out)
        scale = 10 ** (-decimals)
        y = _u["multiply"](_u["rint"](_u["true_divide"](a, scale)), scale)
        return y.astype(a.dtype) if out is None else _u["positive"](y, out=out, casting="unsafe")
    if decimals == 0:
        return _u["rint"](a, out=out)
    scale = 10.0 ** decimals
    if decimals > 0:
        y = _u["rint"](_u["multiply"](a, scale))
        return _u["true_divide"](y, scale, out=out)
    y = _u["rint"](_u["true_divide"](a, 10.0 ** -decimals))
    return _u["multiply"](y, 10.0 ** -decimals, out=out)


round = around  # noqa: A001


def clip(a, min=None, max=None, out=None, *, a_min=None, a_max=None, **kwargs):  # noqa: A002
    """Clip values to [min, max] (either may be None; both None: a copy).
    The bounds are the second and third arguments, as in NumPy; by keyword
    they are min/max (the array API's names) or a_min/a_max (NumPy's)."""
    if a_min is not None or a_max is not None:
        if min is not None or max is not None:
            raise ValueError("Passing `min` or `max` keyword argument when `a_min` and "
                             "`a_max` are provided is forbidden.")
        min, max = a_min, a_max
    if min is None and max is None:
        if out is None:
            return _core.array(a, copy=True)
        out[...] = a
        return out
    if min is None:
        return _u["minimum"](a, max, out=out, **kwargs)
    if max is None:
        return _u["maximum"](a, min, out=out, **kwargs)
    return _u["clip"](a, min, max, out=out, **kwargs)


def real(val):
    return val.real if isinstance(val, ndarray) else _core.array(val).real


def imag(val):
    return val.imag if isinstance(val, ndarray) else _core.array(val).imag


def angle(z, deg=False):
    z = z if isinstance(z, ndarray) else _core.array(z)
    if z.dtype.kind == "c":
        a = _u["arctan2"](z.imag, z.real)
    else:
        a = _u["arctan2"](_core.zeros(z.shape, numpy.result_type(z.dtype, numpy.float16)), z)
    return _u["rad2deg"](a) if deg else a


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """abs(a - b) <= atol + rtol * abs(b), elementwise, with NumPy's handling
    of infinities and NaN."""
    a = a if isinstance(a, ndarray) else _core.array(a, copy=None)
    b = b if isinstance(b, ndarray) else _core.array(b, copy=None)
    dt = numpy.result_type(a.dtype, b.dtype, 1.0)
    x = a.astype(dt, copy=False)
    y = b.astype(dt, copy=False)
    finite = _u["isfinite"](y)
    close = _u["less_equal"](_u["absolute"](x - y), atol + rtol * _u["absolute"](y))
    result = _u["logical_or"](_u["logical_and"](close, finite), x == y)
    if equal_nan:
        result = _u["logical_or"](result, _u["logical_and"](_u["isnan"](x), _u["isnan"](y)))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """A 0-d device bool: whether every element is close (see isclose).  Like
    CuPy, the answer stays on the device; bool() reads it."""
    return isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan).all()


def array_equal(a1, a2, equal_nan=False):
    """A 0-d device bool: same shape and equal elements."""
    a1 = a1 if isinstance(a1, ndarray) else _core.array(a1, copy=None)
    a2 = a2 if isinstance(a2, ndarray) else _core.array(a2, copy=None)
    if a1.shape != a2.shape:
        return _core.array(False)
    eq = a1 == a2
    if equal_nan and a1.dtype.kind in "fc":
        eq = _u["logical_or"](eq, _u["logical_and"](_u["isnan"](a1), _u["isnan"](a2)))
    return eq.all()


# ------------------------------------------------------- ufunc methods ---
# ufunc.outer / reduce / accumulate (the C ufunc type's methods call these).

def _operand(x, name):
    if isinstance(x, ndarray):
        return x
    if isinstance(x, numpy.ndarray):
        raise _core._host_array_error("the argument", name)
    return _core.array(x, copy=None)


def _outer(uf, A, B, /, **kwargs):
    """uf(A[..., None, ..., None], B): every pair of elements of A and B."""
    name = f"{uf.__name__}.outer"
    if uf.nin != 2:
        raise ValueError(f"{name}: outer product only supported for binary functions")
    A, B = _operand(A, name), _operand(B, name)
    return uf(A.reshape(A.shape + (1,) * B.ndim), B, **kwargs)


# The reduction behind each ufunc's reduce, and the running one behind accumulate.
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
               "logical_and": "all", "logical_or": "any"}
_ACCUMULATIONS = {"add": "cumsum", "multiply": "cumprod"}


def _reduce(uf, array, axis=0, dtype=None, out=None, keepdims=False,
            initial=numpy._NoValue, where=True):
    """ufunc.reduce with NumPy's defaults (axis=0), through gpuarr's
    reductions; `initial` is folded in with the ufunc afterwards."""
    from . import _reductions
    name = uf.__name__
    if uf.nin != 2:
        raise ValueError(f"{name}.reduce: reduce only supported for binary functions")
    if name not in _REDUCTIONS:
        raise NotImplementedError(f"gpuarr: {name}.reduce is not implemented (reduce exists "
                                  f"for {', '.join(_REDUCTIONS)})")
    if where is not True:
        raise NotImplementedError(f"gpuarr: {name}.reduce does not take where=")
    a = _operand(array, f"{name}.reduce")
    fn = getattr(_reductions, _REDUCTIONS[name])
    kwargs = {"axis": axis, "keepdims": keepdims}
    if name in ("add", "multiply"):
        kwargs["dtype"] = dtype
    elif dtype is not None and name in ("maximum", "minimum"):
        a = a.astype(dtype, copy=False)
    if initial is numpy._NoValue:
        return fn(a, out=out, **kwargs)
    axes = range(a.ndim) if axis is None else normalize_axis_tuple(axis, a.ndim)
    if name in ("maximum", "minimum") and any(a.shape[d] == 0 for d in axes):
        shape = tuple(1 if d in axes else n for d, n in enumerate(a.shape) if keepdims or d not in axes)
        r = _core.full(shape, initial, dtype=a.dtype)
        return r if out is None else _u["positive"](r, out=out)
    return uf(fn(a, **kwargs), initial, out=out, **({} if dtype is None else {"dtype": dtype}))


def _accumulate(uf, array, axis=0, dtype=None, out=None):
    """ufunc.accumulate with NumPy's defaults (axis=0): cumsum, cumprod."""
    from . import _reductions
    name = uf.__name__
    if uf.nin != 2:
        raise ValueError(f"{name}.accumulate: accumulate only supported for binary functions")
    if name not in _ACCUMULATIONS or not hasattr(_reductions, _ACCUMULATIONS[name]):
        raise NotImplementedError(f"gpuarr: {name}.accumulate is not implemented (accumulate "
                                  f"exists for {', '.join(_ACCUMULATIONS)})")
    a = _operand(array, f"{name}.accumulate")
    if a.ndim == 0:
        raise ValueError(f"{name}.accumulate: cannot accumulate on a scalar")
    return getattr(_reductions, _ACCUMULATIONS[name])(a, axis=axis, dtype=dtype, out=out)


_core._register_helper("ufunc.outer", _outer)
_core._register_helper("ufunc.reduce", _reduce)
_core._register_helper("ufunc.accumulate", _accumulate)
