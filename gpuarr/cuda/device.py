"""gpuarr.cuda.Device: a CUDA device, usable as a context manager that makes
it current for the calling thread (each thread has its own current device,
and `with` blocks nest)."""
import functools
import threading

from .. import _core

_local = threading.local()


def _stack():
    try:
        return _local.stack
    except AttributeError:
        _local.stack = []
        return _local.stack


@functools.total_ordering
class Device:
    """Device(device=None): device number ``device`` (None: the current one).

    ``with Device(1):`` makes device 1 current inside the block: arrays are
    created there, operations run there, on that device's current stream.
    A number this machine does not have raises ValueError naming the count
    of devices when the device is first used.
    """

    __slots__ = ("id",)

    def __init__(self, device=None):
        if device is None:
            device = _core.get_device_id()
        if isinstance(device, Device):
            device = device.id
        self.id = int(device)

    def __enter__(self):
        prev = _core.get_device_id()
        _core._set_device_id(self.id)
        _stack().append(prev)
        return self

    def __exit__(self, *exc):
        _core._set_device_id(_stack().pop())

    def use(self):
        """Make this device current for the thread (no restore)."""
        _core._set_device_id(self.id)

    def synchronize(self):
        """Wait for all work on this device."""
        with self:
            _core.device_synchronize()

    @property
    def compute_capability(self):
        """The compute capability as a string, e.g. '90' for an H100."""
        attrs = _core._device_attrs
        major = _core._device_attribute(attrs["cudaDevAttrComputeCapabilityMajor"], self.id)
        minor = _core._device_attribute(attrs["cudaDevAttrComputeCapabilityMinor"], self.id)
        return f"{major}{minor}"

    @property
    def name(self):
        """The device's product name, e.g. 'NVIDIA H100 80GB HBM3'."""
        return _core._device_properties(self.id)["name"].decode()

    @property
    def mem_info(self):
        """(free, total) bytes as the driver counts them (blocks cached by
        gpuarr's memory pool count as used; see MemoryPool.free_all_blocks)."""
        with self:
            return _core._mem_get_info()

    def __eq__(self, other):
        if not isinstance(other, Device):
            return NotImplemented
        return other.id == self.id

    def __lt__(self, other):
        if not isinstance(other, Device):
            return NotImplemented
        return self.id < other.id

    def __hash__(self):
        return hash(self.id)

    def __int__(self):
        return self.id

    def __index__(self):
        return self.id

    def __repr__(self):
        return f"<CUDA Device {self.id}>"
