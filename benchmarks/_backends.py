"""The libraries under test (gpuarr, CuPy, NumPy/SciPy) behind one face, and
what to say when one cannot be used or lacks an operation."""
import functools
import gc
import importlib
import types

import numpy as np


class Backend:
    """A library under test.  Attributes fall through to its array module, and
    xp.ndimage / xp.signal are its SciPy-shaped namespaces, so a case body
    reads like the lesson: xp.where(...), xp.ndimage.label(...)."""

    def __init__(self, name, module, scipy, asnumpy, sync, free):
        self.name, self.module, self.scipy = name, module, scipy
        self.asnumpy, self.sync, self.free = asnumpy, sync, free

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr in ("ndimage", "signal"):
            value = importlib.import_module(f"{self.scipy}.{attr}")
        else:
            value = getattr(self.module, attr)
        self.__dict__[attr] = value
        return value


def _free_pools(lib):
    gc.collect()
    lib.get_default_memory_pool().free_all_blocks()
    lib.get_default_pinned_memory_pool().free_all_blocks()


def why(exc):
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:160]


def load_backends():
    """({name: Backend}, {name: why it cannot be used}); NumPy is always there."""
    found = {"numpy": Backend("numpy", np, "scipy", np.asarray, lambda: None, gc.collect)}
    missing = {}
    try:
        import gpuarr
        if not gpuarr.is_available():
            gpuarr.zeros(1)  # raises the reason
            raise RuntimeError("gpuarr.is_available() is False")
        found["gpuarr"] = Backend("gpuarr", gpuarr, "gpuarr.scipy", gpuarr.asnumpy,
                                  gpuarr.cuda.device_synchronize,
                                  functools.partial(_free_pools, gpuarr))
    except Exception as exc:
        missing["gpuarr"] = why(exc)
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        found["cupy"] = Backend("cupy", cupy, "cupyx.scipy", cupy.asnumpy,
                                cupy.cuda.runtime.deviceSynchronize,
                                functools.partial(_free_pools, cupy))
    except Exception as exc:
        missing["cupy"] = why(exc)
    return found, missing


def gpuarr_lacks(gpuarr, paths):
    """The first dotted name in paths that gpuarr does not have, else None."""
    for path in paths:
        obj = gpuarr
        for part in path.split("."):
            if hasattr(obj, part):
                obj = getattr(obj, part)
                continue
            if isinstance(obj, types.ModuleType):
                try:
                    obj = importlib.import_module(f"{obj.__name__}.{part}")
                    continue
                except ImportError:
                    pass
            return path
    return None


def not_implemented(exc):
    """Whether an exception means "no such operation yet" (a module that fails
    to load for another reason is an error, not a missing feature)."""
    return (isinstance(exc, (AttributeError, NotImplementedError, ModuleNotFoundError))
            or (isinstance(exc, TypeError) and "unsupported operand" in str(exc)))
