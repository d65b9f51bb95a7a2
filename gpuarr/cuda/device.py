"""gpuarr.cuda.Device: a CUDA device, usable as a context manager that makes
it current for the calling thread."""
from .. import _core


class Device:
    __slots__ = ("id", "_prev")

    def __init__(self, device=None):
        if device is None:
            device = _core.get_device_id()
        if isinstance(device, Device):
            device = device.id
        self.id = int(device)
        self._prev = []

    def __enter__(self):
        self._prev.append(_core.get_device_id())
        _core._set_device_id(self.id)
        return self

    def __exit__(self, *exc):
        _core._set_device_id(self._prev.pop())

    def use(self):
        _core._set_device_id(self.id)

    def synchronize(self):
        with self:
            _core.device_synchronize()

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __int__(self):
        return self.id

    def __repr__(self):
        return f"<CUDA Device {self.id}>"
