"""gpuarr.cuda.runtime: the CUDA runtime calls the lessons use, with CuPy's
names (cupy.cuda.runtime).  Devices are numbered as CUDA numbers them.

    >>> from gpuarr.cuda import runtime
    >>> runtime.getDeviceCount()
    1
    >>> runtime.getDeviceProperties(0)["name"]
    b'NVIDIA H100 80GB HBM3'

Errors are gpuarr.cuda.CUDARuntimeError (no device: its subclass
NoDeviceError); a device number out of range is a ValueError naming the
count of devices.
"""
from .. import _core
from .._core import CUDARuntimeError

is_hip = False

# cudaDevAttr* numbers for deviceGetAttribute (taken from the CUDA headers
# at build time).
globals().update(_core._device_attrs)


def getDeviceCount():
    """Number of CUDA devices (NoDeviceError when none can be used)."""
    return _core.get_device_count()


def getDevice():
    """The calling thread's current device."""
    return _core.get_device_id()


def setDevice(device):
    """Make ``device`` current for the calling thread."""
    _core._set_device_id(device)


def deviceSynchronize():
    """Wait for all work on the current device."""
    _core.device_synchronize()


def getDeviceProperties(device):
    """cudaDeviceProp of ``device`` as a dict with CUDA's field names (as
    CuPy): ``name`` (bytes), ``totalGlobalMem``, ``multiProcessorCount``,
    ``major``, ``minor``, ``clockRate`` and ``memoryClockRate`` (kHz),
    ``memoryBusWidth`` (bits), ``l2CacheSize``, ``sharedMemPerBlock``,
    ``maxThreadsPerBlock``, ``warpSize``, ``uuid`` (bytes), ..."""
    return _core._device_properties(device)


def deviceGetAttribute(attrib, device):
    """cudaDeviceGetAttribute: ``attrib`` is a cudaDevAttr* number (this
    module defines the common ones, e.g. ``cudaDevAttrClockRate``)."""
    return _core._device_attribute(attrib, device)


def memGetInfo():
    """(free, total) bytes of the current device, as the driver counts them
    (memory cached by gpuarr's pool counts as used)."""
    return _core._mem_get_info()


def runtimeGetVersion():
    """The CUDA runtime version gpuarr was built with (e.g. 13000)."""
    return _core._versions()[1]


def driverGetVersion():
    """The CUDA version the installed driver supports (0 without a driver)."""
    return _core._versions()[0]
