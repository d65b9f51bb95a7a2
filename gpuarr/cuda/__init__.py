"""gpuarr.cuda: devices, memory, errors (CuPy's cupy.cuda layout)."""
from .. import _core
from .._core import (CUDARuntimeError, OutOfMemoryError, NoDeviceError, is_available,
                     get_device_id, get_device_count, device_synchronize)
from .memory import (MemoryPointer, UnownedMemory, MemoryPool, PinnedMemoryPool,
                     get_default_memory_pool, get_default_pinned_memory_pool)
from .device import Device
from .._core import Stream, Event, get_current_stream, get_elapsed_time
# Test hooks (fault injection): the n-th device allocation from now fails.
from .._core import _fail_allocation, _faults_injected  # noqa: F401
from . import runtime
from . import cublas  # noqa: F401  (registers the C core's cuBLAS loader; loads nothing)

__all__ = ["CUDARuntimeError", "OutOfMemoryError", "NoDeviceError", "is_available",
           "get_device_id", "get_device_count", "device_synchronize", "MemoryPointer", "UnownedMemory",
           "MemoryPool", "PinnedMemoryPool", "get_default_memory_pool",
           "get_default_pinned_memory_pool", "Device", "Stream", "Event", "get_current_stream",
           "get_elapsed_time", "runtime", "compiler", "CompileException", "NVRTCError"]


def __getattr__(name):
    # The compiler (NVRTC, the kernel cache) is imported on first use.
    if name in ("compiler", "CompileException", "NVRTCError"):
        import importlib
        mod = importlib.import_module(f"{__name__}.compiler")
        return mod if name == "compiler" else getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
