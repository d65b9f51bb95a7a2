"""cuSOLVER (dense), loaded at run time, and one cuSOLVER handle per device.

gpuarr.linalg calls cuSOLVER, the dense linear-algebra library of the CUDA
toolkit.  Like cuFFT and NVRTC it is never linked: it is opened with
``ctypes`` on the first decomposition, found by gpuarr/cuda/_libs.py in
``$CUDA_HOME`` / ``$CUDA_PATH``, the NVIDIA wheels
(``nvidia/cu13/lib/libcusolver.so.12`` from ``nvidia-cusolver`` for CUDA 13,
``nvidia/cusolver/lib`` from ``nvidia-cusolver-cu12``) or the system's
library path.  Without it ``import gpuarr`` and every other operation work;
a gpuarr.linalg decomposition raises CUSOLVERError naming every place
searched and the package to install.  (libcusolver needs cuBLAS, cuSPARSE
and nvJitLink beside it; the toolkit and the wheels put them there.)

Handles
-------
One ``cusolverDnHandle_t`` (and one ``cusolverDnParams_t``, default
algorithms) per device, made on the first call on that device and kept
until the interpreter exits.  ``solver()`` returns the current device's
``Solver``; its calls are made inside ``with s:``, which holds the handle's
lock and sets gpuarr's current stream on it, so threads sharing a device
do not change each other's stream between a set-stream and a call.
Workspaces come from gpuarr's memory pool (``Solver.workspace``), are
dropped after the calls are queued and reused by the pool in stream order.

Calls
-----
The 64-bit generic API where it exists (``cusolverDnX*``: getrf, getrs,
potrf, geqrf, syevd, gesvd and syevBatched), the typed legacy API where it
does not (orgqr/ungqr, potrfBatched, gesvdjBatched; gesvdjBatched's
parameters are the defaults: singular values sorted descending, tolerance
the machine's accuracy, at most 100 sweeps).  Each method takes device addresses
(ints) and sizes, queues the routine on the stream and raises CUSOLVERError
when the call is refused (a bad argument, no memory).  Results that depend
on the data (a singular matrix, a failed convergence) are in the ``info``
integers on the device, read by the caller, never here.  Matrices are
column-major, as LAPACK's; gpuarr/linalg/_linalg.py maps NumPy's row-major
arrays onto them.
"""
import atexit
import threading

import numpy

from .. import _core
from . import _libs

__all__ = ["CUSOLVERError", "Solver", "solver", "find_cusolver", "get_version"]

# cuSOLVER's sonames, newest first (cuSOLVER 12 ships with CUDA 13,
# cuSOLVER 11 with CUDA 12), and the wheels' folders under site-packages/nvidia.
_NAMES = ("libcusolver.so.12", "libcusolver.so.11", "libcusolver.so")
_WHEEL_SUBDIRS = ("cu13", "cusolver")

# cublasFillMode_t, cublasOperation_t, cusolverEigMode_t
LOWER, UPPER = 0, 1
OP_N, OP_T, OP_C = 0, 1, 2
NOVECTOR, VECTOR = 0, 1

# cudaDataType of each dtype cuSOLVER takes
_CUDA_TYPES = {numpy.dtype(numpy.float32): 0, numpy.dtype(numpy.float64): 1,
               numpy.dtype(numpy.complex64): 4, numpy.dtype(numpy.complex128): 5}
# the letter of the typed legacy API
_LETTERS = {numpy.dtype(numpy.float32): "S", numpy.dtype(numpy.float64): "D",
            numpy.dtype(numpy.complex64): "C", numpy.dtype(numpy.complex128): "Z"}

_STATUS = {
    1: "CUSOLVER_STATUS_NOT_INITIALIZED", 2: "CUSOLVER_STATUS_ALLOC_FAILED",
    3: "CUSOLVER_STATUS_INVALID_VALUE", 4: "CUSOLVER_STATUS_ARCH_MISMATCH",
    5: "CUSOLVER_STATUS_MAPPING_ERROR", 6: "CUSOLVER_STATUS_EXECUTION_FAILED",
    7: "CUSOLVER_STATUS_INTERNAL_ERROR", 8: "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED",
    9: "CUSOLVER_STATUS_NOT_SUPPORTED", 10: "CUSOLVER_STATUS_ZERO_PIVOT",
    11: "CUSOLVER_STATUS_INVALID_LICENSE", 31: "CUSOLVER_STATUS_INVALID_WORKSPACE"}
_ALLOC_FAILED = 2


class CUSOLVERError(_libs.LibraryError):
    """cuSOLVER could not be loaded, or one of its calls was refused
    (``status`` is the cusolverStatus_t code, 0 when the library is
    missing)."""


# ============================================================== loading ====

def _candidates():
    """(place, path) pairs to try, in order (gpuarr/cuda/_libs.py)."""
    return _libs.candidates(_NAMES, _WHEEL_SUBDIRS)


def _not_found(places):
    return CUSOLVERError(
        "cuSOLVER (the CUDA dense linear-algebra library, libcusolver.so) was not found, so "
        "the decompositions of gpuarr.linalg cannot run (every other operation works without "
        "it). Looked in: " + "; ".join(places) + ". Install it with "
        "`pip install \"gpuarr[cusolver]\"` (the nvidia-cusolver wheel; nvidia-cusolver-cu12 "
        "for CUDA 12), or set CUDA_HOME to a CUDA toolkit.")


def _signatures():
    """({function: argtypes}, {optional function: argtypes}); every
    function returns a cusolverStatus_t.  The optional ones are those older
    cuSOLVERs lack (syevBatched came with CUDA 12.6): declared when present,
    and the callers fall back when they are not."""
    import ctypes
    i32, i64, vp, sz = ctypes.c_int, ctypes.c_int64, ctypes.c_void_p, ctypes.c_size_t
    szp, i32p = ctypes.POINTER(sz), ctypes.POINTER(i32)
    x_tail = [vp, sz, vp, sz, vp]          # device work, size, host work, size, info
    sigs = {
        "cusolverGetVersion": [i32p],
        "cusolverDnCreate": [ctypes.POINTER(vp)],
        "cusolverDnDestroy": [vp],
        "cusolverDnCreateParams": [ctypes.POINTER(vp)],
        "cusolverDnDestroyParams": [vp],
        "cusolverDnSetStream": [vp, vp],
        "cusolverDnXgetrf_bufferSize": [vp, vp, i64, i64, i32, vp, i64, i32, szp, szp],
        "cusolverDnXgetrf": [vp, vp, i64, i64, i32, vp, i64, vp, i32] + x_tail,
        "cusolverDnXgetrs": [vp, vp, i32, i64, i64, i32, vp, i64, vp, i32, vp, i64, vp],
        "cusolverDnXpotrf_bufferSize": [vp, vp, i32, i64, i32, vp, i64, i32, szp, szp],
        "cusolverDnXpotrf": [vp, vp, i32, i64, i32, vp, i64, i32] + x_tail,
        "cusolverDnXgeqrf_bufferSize": [vp, vp, i64, i64, i32, vp, i64, i32, vp, i32, szp,
                                        szp],
        "cusolverDnXgeqrf": [vp, vp, i64, i64, i32, vp, i64, i32, vp, i32] + x_tail,
        "cusolverDnXsyevd_bufferSize": [vp, vp, i32, i32, i64, i32, vp, i64, i32, vp, i32, szp,
                                        szp],
        "cusolverDnXsyevd": [vp, vp, i32, i32, i64, i32, vp, i64, i32, vp, i32] + x_tail,
        "cusolverDnXgesvd_bufferSize": [vp, vp, ctypes.c_byte, ctypes.c_byte, i64, i64, i32, vp,
                                        i64, i32, vp, i32, vp, i64, i32, vp, i64, i32, szp, szp],
        "cusolverDnXgesvd": [vp, vp, ctypes.c_byte, ctypes.c_byte, i64, i64, i32, vp, i64, i32,
                             vp, i32, vp, i64, i32, vp, i64, i32] + x_tail,
    }
    for t in "SDCZ":
        q = "ungqr" if t in "CZ" else "orgqr"
        sigs[f"cusolverDn{t}{q}_bufferSize"] = [vp, i32, i32, i32, vp, i32, vp, i32p]
        sigs[f"cusolverDn{t}{q}"] = [vp, i32, i32, i32, vp, i32, vp, vp, i32, vp]
        sigs[f"cusolverDn{t}potrfBatched"] = [vp, i32, i32, vp, i32, vp, i32]
        sigs[f"cusolverDn{t}gesvdjBatched_bufferSize"] = [vp, i32, i32, i32, vp, i32, vp, vp, i32,
                                                          vp, i32, i32p, vp, i32]
        sigs[f"cusolverDn{t}gesvdjBatched"] = [vp, i32, i32, i32, vp, i32, vp, vp, i32, vp, i32,
                                               vp, i32, vp, vp, i32]
    sigs["cusolverDnCreateGesvdjInfo"] = [ctypes.POINTER(vp)]
    sigs["cusolverDnDestroyGesvdjInfo"] = [vp]
    optional = {
        "cusolverDnXsyevBatched_bufferSize": [vp, vp, i32, i32, i64, i32, vp, i64, i32, vp, i32,
                                              szp, szp, i64],
        "cusolverDnXsyevBatched": [vp, vp, i32, i32, i64, i32, vp, i64, i32, vp, i32] + x_tail
                                  + [i64],
    }
    return sigs, optional


def _declare(lib):
    import ctypes
    required, optional = _signatures()
    for name, args in list(required.items()) + list(optional.items()):
        fn = getattr(lib, name, None)
        if fn is None and name in optional:
            continue
        if fn is None:
            raise CUSOLVERError(f"{lib._name} has no {name}: gpuarr needs cuSOLVER 11.4 (CUDA "
                                "12) or newer")
        fn.argtypes = args
        fn.restype = ctypes.c_int


_LIB = _libs.Lazy(lambda: _candidates(), lambda places: _not_found(places),
                  lambda lib: _declare(lib))
_cusolver = _LIB.get


def _check(rc, call, what=""):
    if rc == _ALLOC_FAILED:
        raise _core.OutOfMemoryError(
            f"{call} could not allocate device memory{' (' + what + ')' if what else ''}")
    if rc != 0:
        name = _STATUS.get(rc, f"cusolverStatus_t {rc}")
        raise CUSOLVERError(f"{call} failed: {name}{' (' + what + ')' if what else ''}", rc)


def find_cusolver():
    """The path of the cuSOLVER library that gpuarr uses (loading it if needed)."""
    return _cusolver()._name


def get_version():
    """cuSOLVER's version as an int (e.g. 12004 for cuSOLVER 12.0.4)."""
    import ctypes
    v = ctypes.c_int()
    _check(_cusolver().cusolverGetVersion(ctypes.byref(v)), "cusolverGetVersion")
    return v.value


def cuda_type(dtype):
    """The cudaDataType of a dtype cuSOLVER takes (float32, float64,
    complex64, complex128)."""
    return _CUDA_TYPES[numpy.dtype(dtype)]


# ============================================================= handles ====

class Workspace:
    """Device bytes from gpuarr's pool and host bytes, for one routine."""

    __slots__ = ("device", "device_size", "host", "host_size")

    def __init__(self, device_size, host_size=0, zeroed=False):
        import ctypes
        self.device_size, self.host_size = int(device_size), int(host_size)
        make = _core.zeros if zeroed else _core.empty
        self.device = make((self.device_size,), dtype="uint8") if device_size else None
        self.host = ctypes.create_string_buffer(self.host_size) if host_size else None

    @property
    def args(self):
        """(device address, bytes, host buffer, bytes): the X API's four."""
        import ctypes
        dptr = self.device.data.ptr if self.device is not None else None
        hptr = ctypes.addressof(self.host) if self.host is not None else None
        return dptr, self.device_size, hptr, self.host_size


class Solver:
    """The cuSOLVER handle of one device.  Use its methods inside ``with
    s:`` (the lock held, gpuarr's current stream set on the handle)."""

    def __init__(self, device):
        import ctypes
        lib = _cusolver()
        self.device = device
        self.lock = threading.RLock()
        self.handle = self.params = self.gesvdj = None
        h, p = ctypes.c_void_p(), ctypes.c_void_p()
        rc = lib.cusolverDnCreate(ctypes.byref(h))
        if rc == _ALLOC_FAILED:
            _core._pool_free_all(device)
            rc = lib.cusolverDnCreate(ctypes.byref(h))
        _check(rc, "cusolverDnCreate", f"device {device}")
        self.handle = h.value
        _check(lib.cusolverDnCreateParams(ctypes.byref(p)), "cusolverDnCreateParams")
        self.params = p.value

    def __enter__(self):
        self.lock.acquire()
        try:
            _check(_cusolver().cusolverDnSetStream(
                self.handle, _core.get_current_stream().ptr or None), "cusolverDnSetStream")
        except BaseException:
            self.lock.release()
            raise
        return self

    def __exit__(self, *exc):
        self.lock.release()

    def destroy(self):
        """Release the handle (at exit).  Never raises."""
        lib = getattr(_LIB, "lib", None)
        usable = _core is not None and _core.is_available()
        h, p, g = self.handle, self.params, self.gesvdj
        self.handle = self.params = self.gesvdj = None
        if lib is None or not usable:
            return
        try:
            if g is not None:
                lib.cusolverDnDestroyGesvdjInfo(g)
            if p is not None:
                lib.cusolverDnDestroyParams(p)
            if h is not None:
                lib.cusolverDnDestroy(h)
        except Exception:          # noqa: BLE001 -- teardown never raises
            pass

    # ---------------------------------------------------- the 64-bit API --
    # Each *_workspace returns a Workspace sized for the routine with those
    # arguments; the routine takes it.  Addresses are ints, sizes elements.

    def _sizes(self, name, *args, zeroed=False):
        import ctypes
        d, h = ctypes.c_size_t(), ctypes.c_size_t()
        _check(getattr(_cusolver(), name)(self.handle, self.params, *args, ctypes.byref(d),
                                          ctypes.byref(h)), name)
        return Workspace(d.value, h.value, zeroed)

    def _sizes_batched(self, name, *args, batch):
        import ctypes
        d, h = ctypes.c_size_t(), ctypes.c_size_t()
        _check(getattr(_cusolver(), name)(self.handle, self.params, *args, ctypes.byref(d),
                                          ctypes.byref(h), batch), name)
        return Workspace(d.value, h.value)

    def getrf_workspace(self, dtype, n, a, lda):
        t = cuda_type(dtype)
        return self._sizes("cusolverDnXgetrf_bufferSize", n, n, t, a, lda, t)

    def getrf(self, dtype, n, a, lda, ipiv, work, info):
        """LU with partial pivoting of the n x n matrix at a, in place;
        ipiv: n int64 (1-based), info: one int32 (> 0: U is singular)."""
        t = cuda_type(dtype)
        _check(_cusolver().cusolverDnXgetrf(self.handle, self.params, n, n, t, a, lda, ipiv, t,
                                            *work.args, info), "cusolverDnXgetrf", f"n={n}")

    def getrs(self, dtype, trans, n, nrhs, a, lda, ipiv, b, ldb, info):
        """op(A) X = B for getrf's factors at a/ipiv; X overwrites the
        n x nrhs matrix at b."""
        t = cuda_type(dtype)
        _check(_cusolver().cusolverDnXgetrs(self.handle, self.params, trans, n, nrhs, t, a, lda,
                                            ipiv, t, b, ldb, info),
               "cusolverDnXgetrs", f"n={n}, nrhs={nrhs}")

    def potrf_workspace(self, dtype, uplo, n, a, lda):
        t = cuda_type(dtype)
        return self._sizes("cusolverDnXpotrf_bufferSize", uplo, n, t, a, lda, t)

    def potrf(self, dtype, uplo, n, a, lda, work, info):
        """Cholesky factor of the n x n matrix at a, in the triangle uplo
        (the other is left as it was); info > 0: not positive definite."""
        t = cuda_type(dtype)
        _check(_cusolver().cusolverDnXpotrf(self.handle, self.params, uplo, n, t, a, lda, t,
                                            *work.args, info), "cusolverDnXpotrf", f"n={n}")

    def potrf_batched(self, dtype, uplo, n, pointers, lda, infos, batch):
        """potrf of `batch` matrices whose addresses are the uint64 device
        array at `pointers` (32-bit sizes; no workspace)."""
        name = f"cusolverDn{_LETTERS[numpy.dtype(dtype)]}potrfBatched"
        _check(getattr(_cusolver(), name)(self.handle, uplo, n, pointers, lda, infos, batch),
               name, f"n={n}, batch={batch}")

    def geqrf_workspace(self, dtype, m, n, a, lda, tau):
        t = cuda_type(dtype)
        return self._sizes("cusolverDnXgeqrf_bufferSize", m, n, t, a, lda, t, tau, t)

    def geqrf(self, dtype, m, n, a, lda, tau, work, info):
        """Householder QR of the m x n matrix at a: R in its upper
        triangle, the reflectors below it, their scales at tau
        (min(m, n) elements)."""
        t = cuda_type(dtype)
        _check(_cusolver().cusolverDnXgeqrf(self.handle, self.params, m, n, t, a, lda, t, tau,
                                            t, *work.args, info),
               "cusolverDnXgeqrf", f"m={m}, n={n}")

    def orgqr_workspace(self, dtype, m, n, k, a, lda, tau):
        import ctypes
        name = self._orgqr_name(dtype) + "_bufferSize"
        lwork = ctypes.c_int()
        _check(getattr(_cusolver(), name)(self.handle, m, n, k, a, lda, tau,
                                          ctypes.byref(lwork)), name)
        return Workspace(lwork.value * numpy.dtype(dtype).itemsize)

    def orgqr(self, dtype, m, n, k, a, lda, tau, work, info):
        """The first n columns of Q from geqrf's k reflectors at a/tau,
        written over the m x n matrix at a (32-bit sizes)."""
        name = self._orgqr_name(dtype)
        lwork = work.device_size // numpy.dtype(dtype).itemsize
        _check(getattr(_cusolver(), name)(self.handle, m, n, k, a, lda, tau, work.args[0],
                                          lwork, info), name, f"m={m}, n={n}, k={k}")

    @staticmethod
    def _orgqr_name(dtype):
        dtype = numpy.dtype(dtype)
        return f"cusolverDn{_LETTERS[dtype]}{'ungqr' if dtype.kind == 'c' else 'orgqr'}"

    def gesvdj_batched_workspace(self, dtype, jobz, m, n, a, lda, s, u, ldu, v, ldv, batch):
        import ctypes
        if self.gesvdj is None:
            g = ctypes.c_void_p()
            _check(_cusolver().cusolverDnCreateGesvdjInfo(ctypes.byref(g)),
                   "cusolverDnCreateGesvdjInfo")
            self.gesvdj = g.value
        name = f"cusolverDn{_LETTERS[numpy.dtype(dtype)]}gesvdjBatched_bufferSize"
        lwork = ctypes.c_int()
        _check(getattr(_cusolver(), name)(self.handle, jobz, m, n, a, lda, s, u, ldu, v, ldv,
                                          ctypes.byref(lwork), self.gesvdj, batch), name)
        return Workspace(lwork.value * numpy.dtype(dtype).itemsize)

    def gesvdj_batched(self, dtype, jobz, m, n, a, lda, s, u, ldu, v, ldv, work, infos, batch):
        """Jacobi SVD of `batch` m x n matrices (m, n <= 32) packed at a:
        A = U S Vᴴ with U m x m and V (not Vᴴ) n x n, packed likewise; S
        descending, min(m, n) a matrix; one info each (> 0: no convergence)."""
        name = f"cusolverDn{_LETTERS[numpy.dtype(dtype)]}gesvdjBatched"
        lwork = work.device_size // numpy.dtype(dtype).itemsize
        _check(getattr(_cusolver(), name)(self.handle, jobz, m, n, a, lda, s, u, ldu, v, ldv,
                                          work.args[0], lwork, infos, self.gesvdj, batch),
               name, f"m={m}, n={n}, batch={batch}")

    def syevd_workspace(self, dtype, jobz, uplo, n, a, lda, w):
        t = cuda_type(dtype)
        return self._sizes("cusolverDnXsyevd_bufferSize", jobz, uplo, n, t, a, lda,
                           cuda_type(_real(dtype)), w, t)

    def syevd(self, dtype, jobz, uplo, n, a, lda, w, work, info):
        """Eigenvalues (ascending, at w) and with jobz=VECTOR eigenvectors
        (over a) of the Hermitian matrix in a's triangle uplo."""
        t = cuda_type(dtype)
        _check(_cusolver().cusolverDnXsyevd(self.handle, self.params, jobz, uplo, n, t, a, lda,
                                            cuda_type(_real(dtype)), w, t, *work.args, info),
               "cusolverDnXsyevd", f"n={n}")

    def has_syev_batched(self):
        """Whether this cuSOLVER has cusolverDnXsyevBatched (CUDA 12.6+)."""
        return hasattr(_cusolver(), "cusolverDnXsyevBatched")

    def syev_batched_workspace(self, dtype, jobz, uplo, n, a, lda, w, batch):
        t = cuda_type(dtype)
        return self._sizes_batched("cusolverDnXsyevBatched_bufferSize", jobz, uplo, n, t, a,
                                   lda, cuda_type(_real(dtype)), w, t, batch=batch)

    def syev_batched(self, dtype, jobz, uplo, n, a, lda, w, work, infos, batch):
        """syevd of `batch` matrices packed one after the other at a (their
        eigenvalues one row each at w, one info each)."""
        t = cuda_type(dtype)
        _check(_cusolver().cusolverDnXsyevBatched(
            self.handle, self.params, jobz, uplo, n, t, a, lda, cuda_type(_real(dtype)), w, t,
            *work.args, infos, batch), "cusolverDnXsyevBatched", f"n={n}, batch={batch}")

    def gesvd_workspace(self, dtype, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt):
        # Zeroed: cusolverDnXgesvd copies 16-20 bytes of its workspace to
        # the host before anything wrote them (compute-sanitizer initcheck's
        # only reports over test_linalg, all inside cuSOLVER).
        t = cuda_type(dtype)
        return self._sizes("cusolverDnXgesvd_bufferSize", ord(jobu), ord(jobvt), m, n, t, a,
                           lda, cuda_type(_real(dtype)), s, t, u, ldu, t, vt, ldvt, t,
                           zeroed=True)

    def gesvd(self, dtype, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, info):
        """A = U S VT of the m x n matrix at a (m >= n), destroying a;
        jobu/jobvt 'A' (all columns), 'S' (min(m, n)) or 'N' (none)."""
        t = cuda_type(dtype)
        _check(_cusolver().cusolverDnXgesvd(
            self.handle, self.params, ord(jobu), ord(jobvt), m, n, t, a, lda,
            cuda_type(_real(dtype)), s, t, u, ldu, t, vt, ldvt, t, *work.args, info),
            "cusolverDnXgesvd", f"m={m}, n={n}")


def _real(dtype):
    return numpy.empty(0, dtype).real.dtype


_solvers = {}
_solvers_lock = threading.Lock()


def solver():
    """The current device's Solver, made on its first use."""
    device = _core.get_device_id()
    s = _solvers.get(device)
    if s is None:
        with _solvers_lock:
            s = _solvers.get(device)
            if s is None:
                s = _solvers[device] = Solver(device)
    return s


def _destroy_all():
    with _solvers_lock:
        for s in _solvers.values():
            s.destroy()
        _solvers.clear()


# Handles go while cuSOLVER and the CUDA context are still there (as
# cuFFT's plans do; gpuarr/cuda/cufft.py).
atexit.register(_destroy_all)
