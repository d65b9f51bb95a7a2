"""Device memory handles and the memory pools (CuPy-compatible API)."""
from .. import _core


class MemoryPointer:
    """A device address with an owner that keeps the memory alive.

    ``ptr`` is the address as an int, ``device_id`` the device it lives on.
    ``gpuarr.ndarray(shape, dtype, memptr=MemoryPointer(...))`` builds an
    array over it.
    """

    __slots__ = ("mem", "ptr", "device_id")

    def __init__(self, mem, ptr, device_id=None):
        self.mem = mem
        self.ptr = int(ptr)
        if device_id is None:
            device_id = getattr(mem, "device_id", _core.get_device_id())
        self.device_id = int(device_id)

    def __int__(self):
        return self.ptr

    def __add__(self, offset):
        return MemoryPointer(self.mem, self.ptr + int(offset), self.device_id)

    def __repr__(self):
        return f"<MemoryPointer 0x{self.ptr:x} on device {self.device_id}>"


class UnownedMemory:
    """Foreign device memory (a pointer from another library), kept alive by
    ``owner``.  Wrap it in a MemoryPointer to build an array over it."""

    __slots__ = ("ptr", "size", "owner", "device_id")

    def __init__(self, ptr, size, owner, device_id=None):
        self.ptr = int(ptr)
        self.size = int(size)
        self.owner = owner
        self.device_id = _core.get_device_id() if device_id is None else int(device_id)


class MemoryPool:
    """The caching allocator of the current device (one pool per device).

    Freed arrays return their blocks here for reuse, so tools such as
    nvidia-smi still count them as used after ``del``; ``free_all_blocks()``
    hands the cached blocks back to the driver.
    """

    def _dev(self):
        return _core.get_device_id()

    def used_bytes(self):
        """Bytes held by live arrays (rounded to the pool's size classes)."""
        return _core._pool_stats(self._dev())[0]

    def total_bytes(self):
        """Bytes reserved from the driver: in use plus cached."""
        return _core._pool_stats(self._dev())[1]

    def free_bytes(self):
        """Bytes cached for reuse."""
        used, total, _, _ = _core._pool_stats(self._dev())
        return total - used

    def n_free_blocks(self):
        return _core._pool_stats(self._dev())[2]

    def free_all_blocks(self, stream=None):
        """Release every cached block to the driver (synchronises the device)."""
        _core._pool_free_all(self._dev())

    def set_limit(self, size=None, fraction=None):
        """Cap the pool's total bytes: ``size`` in bytes or ``fraction`` of the
        device's memory; neither removes the limit.  Past it, allocations raise
        gpuarr.cuda.OutOfMemoryError after cached blocks are released."""
        _core._pool_set_limit(self._dev(), size, fraction)

    def get_limit(self):
        """The limit in bytes (0: the device's memory)."""
        return _core._pool_stats(self._dev())[3]


class PinnedMemoryPool:
    """The pool of page-locked host memory used for fast transfers (staging
    buffers and the results of asnumpy)."""

    def used_bytes(self):
        return _core._pool_stats(-1)[0]

    def total_bytes(self):
        return _core._pool_stats(-1)[1]

    def free_bytes(self):
        used, total, _, _ = _core._pool_stats(-1)
        return total - used

    def n_free_blocks(self):
        return _core._pool_stats(-1)[2]

    def free_all_blocks(self):
        _core._pool_free_all(-1)


_default_pool = MemoryPool()
_default_pinned_pool = PinnedMemoryPool()


def get_default_memory_pool():
    return _default_pool


def get_default_pinned_memory_pool():
    return _default_pinned_pool
