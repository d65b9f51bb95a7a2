"""ndarray methods that are NumPy functions with the array first: the C
type forwards each to the function registered here (ga_forward_method)."""

from . import _core
from ._manipulation import repeat
from ._ufuncs import around, clip


def _conj(a):
    return _core.ufuncs["conjugate"](a)


def _clip(a, min=None, max=None, out=None, **kwargs):  # noqa: A002
    return clip(a, min, max, out, **kwargs)


def _round(a, decimals=0, out=None):
    return around(a, decimals, out)


def _repeat(a, repeats, axis=None):
    return repeat(a, repeats, axis)


def _tobytes(a, order="C"):
    """The bytes of the host copy, as numpy.ndarray.tobytes."""
    return a.get().tobytes(order)


def _tofile(a, fid, sep="", format="%s"):  # noqa: A002
    """Write the host copy to a file, as numpy.ndarray.tofile."""
    a.get().tofile(fid, sep=sep, format=format)


def _contains(a, value):
    """`value in a`: (a == value).any(), as NumPy."""
    return bool(_core.ufuncs["equal"](a, value).any())


for _name, _f in (("conj", _conj), ("conjugate", _conj), ("clip", _clip), ("round", _round),
                  ("repeat", _repeat), ("tobytes", _tobytes), ("tofile", _tofile),
                  ("__contains__", _contains)):
    _core._register_helper(f"ndarray.{_name}", _f)
