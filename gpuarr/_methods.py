"""ndarray methods that are NumPy functions with the array first: the C
type forwards each to the function registered here (ga_forward_method)."""

from . import _core
from ._manipulation import repeat
from ._ufuncs import around, clip


def _tobytes(a, order="C"):
    """The bytes of the host copy, as numpy.ndarray.tobytes."""
    return a.get().tobytes(order)


def _tofile(a, fid, sep="", format="%s"):  # noqa: A002
    """Write the host copy to a file, as numpy.ndarray.tofile."""
    a.get().tofile(fid, sep=sep, format=format)


def _contains(a, value):
    """`value in a`: (a == value).any(), as NumPy."""
    return bool(_core.ufuncs["equal"](a, value).any())


# the array is the functions' first argument, as the forwarder passes it
for _name, _f in (("conj", _core.ufuncs["conjugate"]), ("conjugate", _core.ufuncs["conjugate"]),
                  ("clip", clip), ("round", around), ("repeat", repeat),
                  ("tobytes", _tobytes), ("tofile", _tofile), ("__contains__", _contains)):
    _core._register_helper(f"ndarray.{_name}", _f)
