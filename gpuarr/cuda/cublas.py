"""cuBLAS, loaded at run time, for gpuarr's matrix products.

``@``, gp.matmul and the functions built on it (dot, tensordot, einsum ...)
call cuBLAS for floating-point and complex types.  Like cuFFT it is never
linked: on the first such product gpuarr/cuda/_libs.py finds it in
``$CUDA_HOME`` / ``$CUDA_PATH``, the NVIDIA wheels
(``nvidia/cu13/lib/libcublas.so.13`` from ``nvidia-cublas`` for CUDA 13,
``nvidia/cublas/lib`` from ``nvidia-cublas-cu12``) or the system's library
path, and the C core (src/blas.c) dlopens that file and binds the few
functions it calls, so a product costs no ctypes call.  Without cuBLAS,
``import gpuarr``, every other operation and bool or integer products
(gpuarr's own exact kernel) work; a floating-point product raises
CUBLASError naming every place searched and the package to install.

The C core keeps one cuBLAS handle per device (made on its first product,
set to the caller's current stream on every call, TF32 never used); they
are destroyed at interpreter exit.
"""
import atexit

from .. import _core
from . import _libs

__all__ = ["CUBLASError", "find_cublas", "get_version"]

# cuBLAS's sonames, newest first (cuBLAS 13 ships with CUDA 13, cuBLAS 12
# with CUDA 12), and the wheels' folders under site-packages/nvidia.
_NAMES = ("libcublas.so.13", "libcublas.so.12", "libcublas.so")
_WHEEL_SUBDIRS = ("cu13", "cublas")


class CUBLASError(_libs.LibraryError):
    """cuBLAS could not be loaded, or one of its calls failed (``status``
    is the cublasStatus_t code, 0 when the library is missing)."""


def _candidates():
    """(place, path) pairs to try, in order (gpuarr/cuda/_libs.py)."""
    return _libs.candidates(_NAMES, _WHEEL_SUBDIRS)


def _not_found(places):
    return CUBLASError(
        "cuBLAS (the CUDA BLAS library, libcublas.so) was not found, so floating-point and "
        "complex matrix products (@, matmul, dot, tensordot, einsum ...) cannot run (every "
        "other operation, and bool or integer products, work without it). Looked in: "
        + "; ".join(places) + ". Install it with `pip install \"gpuarr[cublas]\"` (the "
        "nvidia-cublas wheel; nvidia-cublas-cu12 for CUDA 12), or set CUDA_HOME to a CUDA "
        "toolkit.")


def _bind(lib):
    # The C core opens the same file (already loaded: the same handle) and
    # takes its function pointers.
    _core._blas_load(lib._name)
    atexit.register(_core._blas_release)


_LIB = _libs.Lazy(lambda: _candidates(), lambda places: _not_found(places),
                  lambda lib: _bind(lib))


def load():
    """Load and bind cuBLAS (once); CUBLASError when it cannot be found."""
    _LIB.get()


def find_cublas():
    """The path of the cuBLAS library that gpuarr uses (loading it if needed)."""
    return _LIB.get()._name


def get_version():
    """cuBLAS's version as an int (e.g. 130100 for cuBLAS 13.1.0); needs a GPU."""
    load()
    return _core._blas_version()


_core._register_helper("blas_load", load)
_core._register_helper("CUBLASError", CUBLASError)
