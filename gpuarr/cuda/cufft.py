"""cuFFT, loaded at run time, and gpuarr's cache of cuFFT plans.

gpuarr.fft and the FFT convolutions of gpuarr.scipy.signal call cuFFT, the
FFT library of the CUDA toolkit.  Like NVRTC it is never linked: it is
opened with ``ctypes`` on the first transform, found by
gpuarr/cuda/_libs.py in ``$CUDA_HOME`` / ``$CUDA_PATH``, the NVIDIA wheels
(``nvidia/cu13/lib/libcufft.so.12`` from ``nvidia-cufft`` for CUDA 13,
``nvidia/cufft/lib`` from ``nvidia-cufft-cu12``) or the system's library
path.  Without it ``import gpuarr`` and every other operation work; a
transform raises CUFFTError naming every place searched and the package to
install.

Plans
-----
A transform is described by its cuFFT advanced layout (``Layout``: type,
lengths, embeds, strides, distances, batch); a ``Plan`` is made once per
layout and device with cufftMakePlanMany64 and kept in a small LRU cache
(``get_plan_cache()``; a plan is destroyed when it leaves the cache and
no call uses it).  Plans are made with automatic work-area allocation
off: each execution takes its work area from gpuarr's memory pool
(``gpuarr.empty(bytes, uint8)``), sets it and the current stream on the
plan, queues the transform and drops the block, which the pool reuses in
stream order.  The plan's lock makes set-work-area, set-stream and execute
one step when threads share a plan.  A plan that cuFFT cannot allocate is
retried once after the pool hands its cached blocks back to the driver;
failing again raises gpuarr.cuda.OutOfMemoryError.

cuFFT keeps its own copy of the CUDA runtime; it works in the context that
is current on the calling thread, which is gpuarr's (the device's primary
context), so device pointers and streams pass between them unchanged.
"""
import atexit
import collections
import threading

from .. import _core
from . import _libs

__all__ = ["CUFFTError", "Layout", "Plan", "PlanCache", "get_plan_cache", "get_version",
           "find_cufft"]

# cuFFT's sonames, newest first (cuFFT 12 ships with CUDA 13, cuFFT 11 with
# CUDA 12), and the wheels' folders under site-packages/nvidia.
_NAMES = ("libcufft.so.12", "libcufft.so.11", "libcufft.so")
_WHEEL_SUBDIRS = ("cu13", "cufft")

# cufftType
R2C, C2R, C2C, D2Z, Z2D, Z2Z = 0x2A, 0x2C, 0x29, 0x6A, 0x6C, 0x69
FORWARD, INVERSE = -1, 1

_RESULTS = {
    0x1: "CUFFT_INVALID_PLAN", 0x2: "CUFFT_ALLOC_FAILED", 0x3: "CUFFT_INVALID_TYPE",
    0x4: "CUFFT_INVALID_VALUE", 0x5: "CUFFT_INTERNAL_ERROR", 0x6: "CUFFT_EXEC_FAILED",
    0x7: "CUFFT_SETUP_FAILED", 0x8: "CUFFT_INVALID_SIZE", 0x9: "CUFFT_UNALIGNED_DATA",
    0xB: "CUFFT_INVALID_DEVICE", 0xD: "CUFFT_NO_WORKSPACE", 0xE: "CUFFT_NOT_IMPLEMENTED",
    0x10: "CUFFT_NOT_SUPPORTED", 0x11: "CUFFT_MISSING_DEPENDENCY",
    0x12: "CUFFT_NVRTC_FAILURE", 0x13: "CUFFT_NVJITLINK_FAILURE",
    0x14: "CUFFT_NVSHMEM_FAILURE"}
_ALLOC_FAILED = 0x2


class CUFFTError(_core.CUDARuntimeError):
    """cuFFT could not be loaded, or one of its calls failed (``result`` is
    the cufftResult code, 0 when the library is missing)."""

    def __init__(self, message, result=0):
        super().__init__(message)
        self.result = result

    def __reduce__(self):
        return (type(self), (self.args[0], self.result))


# ============================================================== loading ====

def _candidates():
    """(place, path) pairs to try, in order (gpuarr/cuda/_libs.py)."""
    return _libs.candidates(_NAMES, _WHEEL_SUBDIRS)


def _not_found(places):
    return CUFFTError(
        "cuFFT (the CUDA FFT library, libcufft.so) was not found, so gpuarr.fft and the FFT "
        "convolutions of gpuarr.scipy.signal cannot run (every other operation works "
        "without it). Looked in: " + "; ".join(places) + ". Install it with "
        "`pip install \"gpuarr[cufft]\"` (the nvidia-cufft wheel; nvidia-cufft-cu12 for "
        "CUDA 12), or set CUDA_HOME to a CUDA toolkit.")


def _declare(lib):
    import ctypes
    c_int, c_ll, c_vp = ctypes.c_int, ctypes.c_longlong, ctypes.c_void_p
    ll_p = ctypes.POINTER(c_ll)
    for name, args in {
        "cufftGetVersion": [ctypes.POINTER(c_int)],
        "cufftCreate": [ctypes.POINTER(c_int)],
        "cufftDestroy": [c_int],
        "cufftSetAutoAllocation": [c_int, c_int],
        "cufftMakePlanMany64": [c_int, c_int, ll_p, ll_p, c_ll, c_ll, ll_p, c_ll, c_ll, c_int,
                                c_ll, ctypes.POINTER(ctypes.c_size_t)],
        "cufftSetWorkArea": [c_int, c_vp],
        "cufftSetStream": [c_int, c_vp],
        "cufftExecC2C": [c_int, c_vp, c_vp, c_int],
        "cufftExecZ2Z": [c_int, c_vp, c_vp, c_int],
        "cufftExecR2C": [c_int, c_vp, c_vp],
        "cufftExecD2Z": [c_int, c_vp, c_vp],
        "cufftExecC2R": [c_int, c_vp, c_vp],
        "cufftExecZ2D": [c_int, c_vp, c_vp],
    }.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = c_int


_LIB = _libs.Lazy(lambda: _candidates(), lambda places: _not_found(places),
                  lambda lib: _declare(lib))
_cufft = _LIB.get


def _check(rc, call, what=""):
    if rc != 0:
        name = _RESULTS.get(rc, f"cufftResult {rc}")
        raise CUFFTError(f"{call} failed: {name}{' (' + what + ')' if what else ''}", rc)


def find_cufft():
    """The path of the cuFFT library that gpuarr uses (loading it if needed)."""
    return _cufft()._name


def get_version():
    """cuFFT's version as an int (e.g. 12000 for cuFFT 12.0)."""
    import ctypes
    v = ctypes.c_int()
    _check(_cufft().cufftGetVersion(ctypes.byref(v)), "cufftGetVersion")
    return v.value


# ================================================================ plans ====

class Layout(collections.namedtuple("Layout", "type n inembed istride idist onembed ostride "
                                              "odist batch")):
    """One cuFFT transform in the advanced data layout: element ``x`` of
    transform ``b`` is at ``b * idist + sum_j x_j * istride * prod(inembed[j+1:])``
    (and likewise for the output).  ``type`` is a cufftType, ``n`` the
    lengths (outermost first; for R2C/D2Z and C2R/Z2D the real lengths, the
    complex side holding n[-1] // 2 + 1 elements on the last axis)."""

    __slots__ = ()

    def describe(self):
        kind = {R2C: "R2C", C2R: "C2R", C2C: "C2C", D2Z: "D2Z", Z2D: "Z2D", Z2Z: "Z2Z"}
        return (f"{kind.get(self.type, self.type)} n={list(self.n)} batch={self.batch} "
                f"in: embed={list(self.inembed)} stride={self.istride} dist={self.idist}, "
                f"out: embed={list(self.onembed)} stride={self.ostride} dist={self.odist}")


class Plan:
    """A cuFFT plan for one Layout on one device (made on the current one)."""

    __slots__ = ("layout", "device", "handle", "work_size", "lock", "bound")

    def __init__(self, layout, device):
        import ctypes
        lib = _cufft()
        self.layout, self.device, self.lock = layout, device, threading.Lock()
        self.handle = None
        # (work area address, stream) last given to cuFFT: each set is a
        # ctypes call, skipped when the pool and the stream give the same
        self.bound = (None, None)
        h = ctypes.c_int()
        _check(lib.cufftCreate(ctypes.byref(h)), "cufftCreate")
        try:
            _check(lib.cufftSetAutoAllocation(h, 0), "cufftSetAutoAllocation")
            rank = len(layout.n)
            arr = ctypes.c_longlong * rank
            ws = ctypes.c_size_t()
            args = (h, rank, arr(*layout.n), arr(*layout.inembed), layout.istride,
                    layout.idist, arr(*layout.onembed), layout.ostride, layout.odist,
                    layout.type, layout.batch, ctypes.byref(ws))
            rc = lib.cufftMakePlanMany64(*args)
            if rc == _ALLOC_FAILED:
                _core._pool_free_all(device)
                rc = lib.cufftMakePlanMany64(*args)
                if rc == _ALLOC_FAILED:
                    raise _core.OutOfMemoryError(
                        "cuFFT could not allocate the device memory of a plan "
                        f"({layout.describe()}) on device {device}, even after gpuarr's memory "
                        "pool released its cached blocks")
            _check(rc, "cufftMakePlanMany64", layout.describe())
        except BaseException:
            lib.cufftDestroy(h)
            raise
        self.handle = h.value
        self.work_size = ws.value

    def execute(self, iptr, optr, direction):
        """Queue the transform from device address iptr to optr on the
        current stream (direction FORWARD or INVERSE for complex-to-complex
        plans); the work area comes from the memory pool."""
        lib = _cufft()
        t = self.layout.type
        with self.lock:
            work = None
            if self.work_size:
                work = _core.empty((self.work_size,), dtype="uint8")
            area, stream = work.data.ptr if work is not None else None, \
                _core.get_current_stream().ptr or None
            if area is not None and area != self.bound[0]:
                _check(lib.cufftSetWorkArea(self.handle, area), "cufftSetWorkArea")
            if stream != self.bound[1]:
                _check(lib.cufftSetStream(self.handle, stream), "cufftSetStream")
            self.bound = (area, stream)
            if t == Z2Z:
                rc, call = lib.cufftExecZ2Z(self.handle, iptr, optr, direction), "cufftExecZ2Z"
            elif t == C2C:
                rc, call = lib.cufftExecC2C(self.handle, iptr, optr, direction), "cufftExecC2C"
            elif t == D2Z:
                rc, call = lib.cufftExecD2Z(self.handle, iptr, optr), "cufftExecD2Z"
            elif t == R2C:
                rc, call = lib.cufftExecR2C(self.handle, iptr, optr), "cufftExecR2C"
            elif t == Z2D:
                rc, call = lib.cufftExecZ2D(self.handle, iptr, optr), "cufftExecZ2D"
            else:
                rc, call = lib.cufftExecC2R(self.handle, iptr, optr), "cufftExecC2R"
            if rc:
                _check(rc, call, self.layout.describe())
            del work            # back to the pool, reused in stream order

    def __del__(self):
        # The last reference is gone (evicted from the cache, or never
        # cached): release the plan.  cufftDestroy frees its device memory
        # with cudaFree, which waits for work still queued.  Never raises.
        h = getattr(self, "handle", None)
        self.handle = None
        lib = getattr(_LIB, "lib", None)      # _LIB itself is None at interpreter exit
        # False in a child forked after CUDA was initialised: no CUDA call there
        usable = _core is not None and _core.is_available()
        if h is not None and lib is not None and usable:
            try:
                lib.cufftDestroy(h)
            except Exception:          # noqa: BLE001 -- teardown never raises
                pass

    def __repr__(self):
        return f"<cuFFT plan {self.layout.describe()} on device {self.device}>"


class PlanCache:
    """The plans made so far, least recently used first out, at most
    ``get_size()`` of them (16 by default, as CuPy's cache).  A plan leaving
    the cache is destroyed once no call is using it.  One cache serves every
    device (the device is part of the key)."""

    def __init__(self, size=16):
        self._plans = collections.OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, layout, device=None):
        """The plan for layout on device (default: the current one), made
        and cached if needed."""
        if device is None:
            device = _core.get_device_id()
        key = (layout, device)
        with self._lock:
            plan = self._plans.get(key)
            if plan is not None:
                self._plans.move_to_end(key)
                return plan
        plan = Plan(layout, device)
        with self._lock:
            if self._size > 0:
                plan = self._plans.setdefault(key, plan)   # another thread's, if it won
                self._plans.move_to_end(key)
                self._trim()
        return plan

    def _trim(self):
        while len(self._plans) > self._size:
            self._plans.popitem(last=False)

    def get_size(self):
        return self._size

    def set_size(self, size):
        """Keep at most size plans (0: none outlive the call that made them)."""
        size = int(size)
        if size < 0:
            raise ValueError(f"the plan cache size must be >= 0, got {size}")
        with self._lock:
            self._size = size
            self._trim()

    def get_curr_size(self):
        return len(self._plans)

    def clear(self):
        """Drop every cached plan."""
        with self._lock:
            self._plans.clear()

    def __len__(self):
        return len(self._plans)

    def __repr__(self):
        return f"<cuFFT PlanCache: {len(self._plans)} of at most {self._size} plans>"


_cache = PlanCache()
# Plans go while cuFFT and the CUDA context are still there: at interpreter
# exit the modules are torn down before the context, and a plan never
# destroyed leaves its device memory to the driver (compute-sanitizer's
# leak check counts it).
atexit.register(_cache.clear)


def get_plan_cache():
    """The process's cache of cuFFT plans."""
    return _cache
