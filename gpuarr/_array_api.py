"""The Python array API standard (2024.12) on gpuarr.

The namespace is the gpuarr module itself, as NumPy 2's is numpy: where
NumPy's names and the standard's agree (most of them) there is one function,
and the standard's other names stand beside NumPy's (acos beside arccos,
concat beside concatenate, permute_dims beside transpose ...), each defined
in the module of its area (_ufuncs, _manipulation, _creation, _sorting,
_reductions, _interop; matmul, tensordot and vecdot in _linalg and
src/blas.c, matrix_transpose in _manipulation; the linalg extension is
gpuarr.linalg).  ``x.__array_namespace__()`` returns gpuarr.

This module holds what belongs to no other area:

- ``__array_namespace__`` and ``to_device`` of ndarray (the C methods call
  them), and ``__array_namespace_info__()``: devices are
  ``gpuarr.cuda.Device`` objects (``x.device``), the default device is the
  calling thread's current one;
- the data type functions: astype, can_cast, finfo, iinfo, isdtype and
  result_type.  They are NumPy's (gpuarr's dtypes are NumPy's), taking a
  device array where the standard allows an array, as its dtype.
"""
import sys

import numpy

from . import _core
from ._core import ndarray
from .cuda import Device, Stream

__array_api_version__ = "2024.12"

API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

__all__ = ["__array_api_version__", "__array_namespace_info__", "astype", "can_cast", "finfo",
           "iinfo", "isdtype", "result_type"]


def _array_namespace(self, /, *, api_version=None):
    """ndarray.__array_namespace__: the gpuarr module, for every version of
    the standard it implements (2024.12 and the earlier ones)."""
    if api_version is not None and (not isinstance(api_version, str)
                                    or api_version not in API_VERSIONS):
        raise ValueError(f"api_version={api_version!r} is not a version of the array API "
                         f"standard that gpuarr implements: use None or one of "
                         f"{', '.join(API_VERSIONS)}")
    return sys.modules["gpuarr"]


def _check_device(device, name="device"):
    """A device argument as a Device (None stays None)."""
    if device is None or isinstance(device, Device):
        return device
    if isinstance(device, int) and not isinstance(device, bool):
        return Device(device)
    raise TypeError(f"{name} must be a gpuarr.cuda.Device (x.device, or one of "
                    f"__array_namespace_info__().devices()), a device number or None, not "
                    f"{type(device).__name__}")


def _to_device(self, device, /, *, stream=None):
    """ndarray.to_device: the array itself when it is on `device`, else a
    copy there (made on `stream`, a gpuarr.cuda.Stream of that device, or
    on its current stream)."""
    device = _check_device(device)
    if device is None:
        raise TypeError("to_device: device must be a gpuarr.cuda.Device or a device number, "
                        "not None")
    if stream is None:
        return _core.array(self, copy=None, device=device)
    if not isinstance(stream, Stream):
        raise TypeError(f"stream must be a gpuarr.cuda.Stream or None, not "
                        f"{type(stream).__name__}")
    with device, stream:
        return _core.array(self, copy=None)


class __array_namespace_info__:  # noqa: N801  (the standard's name)
    """gpuarr's inspection API (array API standard 2023.12 and later):
    ``gp.__array_namespace_info__().capabilities()`` and the devices and
    data types gpuarr offers."""

    __module__ = "gpuarr"

    def capabilities(self):
        """Boolean-mask indexing and functions whose result's shape depends
        on the data (nonzero, unique_*, repeat with array repeats) are
        supported; each synchronises once.  Arrays take up to 64 dimensions
        (kernels take up to 16 after merging contiguous ones)."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self):
        """The calling thread's current device (``with gp.cuda.Device(n):``
        changes it)."""
        return Device()

    def devices(self):
        """Every CUDA device of this machine ([] without one)."""
        if not _core.is_available():
            return []
        return [Device(i) for i in range(_core.get_device_count())]

    def default_dtypes(self, *, device=None):
        """float64, complex128 and int64 (indices too), on every device."""
        _check_device(device)
        return {"real floating": numpy.dtype(numpy.float64),
                "complex floating": numpy.dtype(numpy.complex128),
                "integral": numpy.dtype(numpy.intp),
                "indexing": numpy.dtype(numpy.intp)}

    def dtypes(self, *, device=None, kind=None):
        """The standard's data types (gpuarr also has float16), all of them
        or those of `kind`: 'bool', 'signed integer', 'unsigned integer',
        'integral', 'real floating', 'complex floating', 'numeric', or a
        tuple of these."""
        _check_device(device)
        if isinstance(kind, tuple):
            result = {}
            for k in kind:
                result.update(self.dtypes(device=device, kind=k))
            return result
        if kind is not None and (not isinstance(kind, str) or kind not in _KINDS):
            raise ValueError(f"unsupported kind: {kind!r}")
        names = [n for k, n in _DTYPES if kind is None or k in _KINDS[kind]]
        return {n: numpy.dtype(n) for n in names}


_DTYPES = [("bool", "bool"), ("signed integer", "int8"), ("signed integer", "int16"),
           ("signed integer", "int32"), ("signed integer", "int64"),
           ("unsigned integer", "uint8"), ("unsigned integer", "uint16"),
           ("unsigned integer", "uint32"), ("unsigned integer", "uint64"),
           ("real floating", "float32"), ("real floating", "float64"),
           ("complex floating", "complex64"), ("complex floating", "complex128")]
_KINDS = {"bool": ("bool",), "signed integer": ("signed integer",),
          "unsigned integer": ("unsigned integer",),
          "integral": ("signed integer", "unsigned integer"),
          "real floating": ("real floating",), "complex floating": ("complex floating",),
          "numeric": ("signed integer", "unsigned integer", "real floating",
                      "complex floating")}


# ------------------------------------------------------ data type functions

def _dtype_of(x):
    return x.dtype if isinstance(x, ndarray) else x


def astype(x, dtype, /, *, copy=True, device=None):
    """x cast to dtype (NumPy's unsafe casting), on `device` (None: x's).
    copy=False returns x itself when nothing changes."""
    if not isinstance(x, ndarray):
        raise TypeError(f"astype: x must be a gpuarr.ndarray, not {type(x).__name__}")
    if device is None:
        return x.astype(dtype, copy=copy)
    return _core.array(x, dtype=dtype, copy=True if copy else None,
                       device=_check_device(device))


def result_type(*arrays_and_dtypes):
    """numpy.result_type, device arrays standing for their dtypes (Python
    scalars are weak, NEP 50)."""
    return numpy.result_type(*map(_dtype_of, arrays_and_dtypes))


def can_cast(from_, to, casting="safe"):
    """numpy.can_cast; from_ may be a device array (its dtype)."""
    return numpy.can_cast(_dtype_of(from_), to, casting)


def finfo(type):  # noqa: A002  (the standard's name)
    """numpy.finfo of a floating dtype or a device array's dtype."""
    return numpy.finfo(_dtype_of(type))


def iinfo(type):  # noqa: A002
    """numpy.iinfo of an integer dtype or a device array's dtype."""
    return numpy.iinfo(_dtype_of(type))


isdtype = numpy.isdtype


_core._register_helper("ndarray.__array_namespace__", _array_namespace)
_core._register_helper("ndarray.to_device", _to_device)
