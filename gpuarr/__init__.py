"""gpuarr: NumPy-style arrays on CUDA GPUs, with precompiled kernels.

    import gpuarr as gp
    x = gp.asarray(host_array)      # host -> device
    y = x[::2].reshape(-1)          # views, as in NumPy
    host = gp.asnumpy(y)            # device -> host

``import gpuarr`` works without a GPU; ``gpuarr.is_available()`` says whether
one can be used, and the first device operation without one raises
gpuarr.cuda.NoDeviceError naming the cause.
"""
import numpy as _numpy

from . import _core
from ._core import ndarray, is_available, array, empty, zeros, ones, full
from ._array import Flags as _Flags
from . import cuda
from .cuda import (get_default_memory_pool, get_default_pinned_memory_pool,
                   MemoryPointer as _MemoryPointer, Device as _Device)
from ._creation import (asarray, asanyarray, ascontiguousarray, asfortranarray, asnumpy,
                        empty_like, zeros_like, ones_like, full_like, arange, linspace, eye,
                        identity, meshgrid, tri, tril, triu)
from ._manipulation import (reshape, ravel, transpose, permute_dims, matrix_transpose, swapaxes,
                            moveaxis, squeeze, expand_dims, diagonal, copy, broadcast_to,
                            broadcast_arrays, broadcast_shapes, flip, fliplr, flipud, roll,
                            tile, repeat, atleast_1d, atleast_2d, concatenate, concat, stack,
                            unstack, hstack, vstack, _stack_sequence)
from ._ufuncs import *  # noqa: F401,F403  (every ufunc and elementwise helper)
from ._ufuncs import abs, round, divmod, pow  # noqa: A004  (not in * for linters)
from ._reductions import (sum, prod, mean, var, std, min, max, amin, amax, ptp,  # noqa: A004
                          argmin, argmax, all, any, count_nonzero, nansum, nanprod, nanmean,
                          nanvar, nanstd, nanmin, nanmax, nanargmin, nanargmax, average, cumsum,
                          cumprod, cumulative_sum, cumulative_prod, diff)
from ._sorting import (sort, argsort, partition, argpartition, unique, unique_all, unique_counts,
                       unique_inverse, unique_values, median, nanmedian, percentile,
                       nanpercentile, quantile, nanquantile, nonzero, flatnonzero, argwhere,
                       compress, extract, take, take_along_axis, put, searchsorted, digitize,
                       bincount, histogram)
from ._convolve import convolve, correlate
from . import _methods  # noqa: E402,F401  (ndarray methods written in Python)
from ._linalg import (matmul, dot, vdot, inner, outer, tensordot, vecdot, trace, kron,
                      einsum)
ufunc = type(_core.ufuncs["add"])
from ._interop import get_array_module, from_dlpack  # noqa: E402
# The array API standard: the namespace is this module (x.__array_namespace__()).
from ._array_api import (__array_api_version__, __array_namespace_info__, astype,  # noqa: E402
                         can_cast, finfo, iinfo, isdtype, result_type)

# NumPy's dtype machinery and scalar types, re-exported.
from numpy import (dtype, bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                   float16, float32, float64, complex64, complex128, intp, uintp, byte, short,
                   intc, int_, longlong, ubyte, ushort, uintc, uint, ulonglong, half, single,
                   double, csingle, cdouble, number, integer, signedinteger, unsignedinteger,
                   floating, complexfloating, generic, newaxis, pi, e, inf, nan,
                   promote_types, issubdtype)
bool = _numpy.bool  # noqa: A001  (NumPy 2 spelling)

_core._register_helper("Flags", _Flags)
_core._register_helper("MemoryPointer", _MemoryPointer)
_core._register_helper("Device", _Device)
_core._register_helper("stack_sequence", _stack_sequence)

__version__ = "0.1.0"

# Submodules that `import gpuarr` does not need are imported on first use
# (PEP 562): gp.random, gp.stats, gp.scipy, gp.profiler, gp.datasets, gp.fft,
# gp.linalg and gp.benchmark work as attributes, and `import gpuarr.random`
# as usual.
_LAZY_MODULES = ("random", "profiler", "stats", "datasets", "scipy", "jit", "fft", "linalg")
_LAZY_ATTRS = {"benchmark": ("profiler", "benchmark"),
               "RawKernel": ("_raw", "RawKernel"), "RawModule": ("_raw", "RawModule"),
               "ElementwiseKernel": ("_userkernels", "ElementwiseKernel"),
               "ReductionKernel": ("_userkernels", "ReductionKernel"),
               "fuse": ("_fusion", "fuse")}


def __getattr__(name):
    import importlib
    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_ATTRS:
        module, attr = _LAZY_ATTRS[name]
        value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_MODULES) | set(_LAZY_ATTRS))
