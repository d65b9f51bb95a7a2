"""NumPy's dispatch protocols for device arrays, get_array_module, and
from_dlpack (the C core's DLPack import with the array API's device= and
copy=).

Calling NumPy on a device array runs gpuarr on the device:
``np.sin(dev)`` goes through ``__array_ufunc__``, ``np.mean(dev)`` through
``__array_function__``.  Host NumPy arrays among the arguments of such a call
are moved to the device, because the caller asked NumPy to work with a device
array (``np.allclose(dev, host)`` works).  A NumPy function gpuarr does not
implement raises TypeError naming it: there is no silent host fallback."""
import numpy

import gpuarr
from . import _core
from ._core import ndarray


def _to_device(x):
    if isinstance(x, numpy.ndarray):
        return _core.array(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_device(v) for v in x)
    return x


def _implementation(func):
    """(name, gpuarr's function) for a NumPy function: gp.<name>, or
    gp.fft.<name> / gp.linalg.<name> for numpy.fft's and numpy.linalg's;
    the function is None where gpuarr has none (numpy.random)."""
    mod = getattr(func, "__module__", "") or ""
    name = func.__name__
    if mod.startswith("numpy.random"):
        return name, None
    if mod.startswith("numpy.fft"):
        from . import fft
        name, impl = f"fft.{name}", getattr(fft, name, None)
    elif mod.startswith("numpy.linalg"):
        from . import linalg
        name, impl = f"linalg.{name}", getattr(linalg, name, None)
    else:
        impl = getattr(gpuarr, name, None)
    if impl is None or not callable(impl) or isinstance(impl, type):
        return name, None
    return name, impl


def array_function(self, func, types, args, kwargs):
    name, impl = _implementation(func)
    if impl is None:
        raise TypeError(f"gpuarr does not implement numpy.{name} for device arrays "
                        "(no host fallback: copy to the host with .get() to use NumPy)")
    if isinstance(kwargs.get("out"), numpy.ndarray):
        raise TypeError(f"numpy.{name}: out= must be a device array here (a host array would "
                        "need a hidden copy)")
    return impl(*_to_device(list(args)), **{k: _to_device(v) for k, v in kwargs.items()})


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    name = ufunc.__name__
    gu = _core.ufuncs.get(name) or _core.ufuncs.get({"divide": "true_divide"}.get(name, ""))
    if gu is None and name in ("matmul", "vecdot") and method == "__call__":
        return getattr(gpuarr, name)(*_to_device(list(inputs)), **kwargs)   # NumPy's gufuncs
    if gu is None:
        raise TypeError(f"gpuarr does not implement the ufunc numpy.{name} for device arrays")
    inputs = _to_device(list(inputs))
    if "out" in kwargs:
        out = kwargs["out"]
        if isinstance(out, tuple):
            for o in out:
                if isinstance(o, numpy.ndarray):
                    raise TypeError(f"numpy.{name}: out= must be a device array here (a host "
                                    "array would need a hidden copy)")
    if "where" in kwargs:
        kwargs["where"] = _to_device(kwargs["where"])
    if method == "__call__":
        return gu(*inputs, **kwargs)
    if isinstance(kwargs.get("out"), tuple) and len(kwargs["out"]) == 1:
        kwargs["out"] = kwargs["out"][0]
    if method in ("reduce", "accumulate", "outer"):
        try:
            return getattr(gu, method)(*inputs, **kwargs)
        except NotImplementedError as exc:
            raise TypeError(f"gpuarr does not implement numpy.{name}.{method} for device "
                            f"arrays ({exc})") from None
    raise TypeError(f"gpuarr does not implement numpy.{name}.{method} for device arrays")


def from_dlpack(x, /, *, device=None, copy=None):
    """A device array over the CUDA memory of a DLPack producer (CuPy,
    PyTorch, JAX, another gpuarr array), without a copy; copy=True copies
    it, and a `device` other than the data's copies it there (copy=False:
    ValueError instead)."""
    view = _core.from_dlpack(x)
    if device is None and not copy:
        return view
    return _core.array(view, copy=copy, device=view.device if device is None else device)


def get_array_module(*args):
    """gpuarr when any argument is a device array, else numpy: for code that
    runs on either (the course's softplus)."""
    for a in args:
        if isinstance(a, ndarray):
            return gpuarr
    return numpy


_core._register_helper("array_ufunc", array_ufunc)
_core._register_helper("array_function", array_function)
