"""Finding the optional CUDA libraries that gpuarr loads at run time.

NVRTC (user kernels, gpuarr/cuda/compiler.py), cuFFT (gpuarr.fft,
gpuarr/cuda/cufft.py), cuSOLVER (gpuarr.linalg, gpuarr/cuda/cusolver.py)
and cuBLAS (matrix products, gpuarr/cuda/cublas.py, whose file the C core
then dlopens itself) are never linked: each is opened with ``ctypes`` on
its first use, so ``import gpuarr`` and every built-in operation work
without them.  Each is looked for in the places users have them, in this
order:

1. ``$CUDA_HOME`` then ``$CUDA_PATH`` (``lib64``, ``lib``,
   ``targets/x86_64-linux/lib``): a CUDA toolkit chosen by the user;
2. the NVIDIA wheels in site-packages, ``nvidia/<subdir>/lib`` (CUDA 13
   wheels install into ``nvidia/cu13/lib``, CUDA 12 wheels into one folder
   per library such as ``nvidia/cufft/lib``, ``nvidia/cusolver/lib`` or
   ``nvidia/cublas/lib``);
3. the system's library path (dlopen of the bare soname: ldconfig,
   ``LD_LIBRARY_PATH``);
4. ``/usr/local/cuda/lib64`` when neither variable is set.

``find`` only stats files (a warm kernel-cache hit must not dlopen NVRTC);
``load`` opens the library and, when nothing loads, raises the caller's
exception with every place searched.  ctypes is imported by ``load`` only.
"""
import os
import sys
import threading

from .. import _core

__all__ = ["SYSTEM", "candidates", "locate", "find", "load", "Lazy", "LibraryError"]

SYSTEM = "the system library path"
_TOOLKIT_SUBDIRS = ("lib64", "lib", os.path.join("targets", "x86_64-linux", "lib"))


def site_dirs():
    """The site-packages folders on sys.path, in order, without repeats."""
    seen = []
    for p in sys.path:
        if p and os.path.basename(p) in ("site-packages", "dist-packages") and p not in seen:
            seen.append(p)
    return seen


def candidates(names, wheel_subdirs):
    """(place, path) pairs to try, in search order.  ``names`` are the
    sonames, newest first; ``wheel_subdirs`` the folders under
    ``site-packages/nvidia`` that the NVIDIA wheels use (``"cu13"``,
    ``"cufft"``).  A path without a folder is a soname for dlopen's own
    search."""
    out = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            for sub in _TOOLKIT_SUBDIRS:
                for n in names:
                    out.append((f"${var}/{sub}", os.path.join(root, sub, n)))
    for site in site_dirs():
        for sub in wheel_subdirs:
            d = os.path.join(site, "nvidia", sub, "lib")
            for n in names:
                out.append((d, os.path.join(d, n)))
    for n in names:
        out.append((SYSTEM, n))
    if not os.environ.get("CUDA_HOME") and not os.environ.get("CUDA_PATH"):
        for n in names:
            out.append(("/usr/local/cuda/lib64", os.path.join("/usr/local/cuda/lib64", n)))
    return out


def locate(cands):
    """(place, path, places searched before it) of the first candidate
    whose file exists, found with stat calls only; a soname candidate (the
    system path) counts as found, for dlopen to look up.  (None, None,
    places) when there is none."""
    places = []
    for place, path in cands:
        if os.sep not in path or os.path.isfile(path):
            return place, path, places
        if place not in places:
            places.append(place)
    return None, None, places


def find(names, wheel_subdirs):
    """locate(candidates(names, wheel_subdirs))."""
    return locate(candidates(names, wheel_subdirs))


def load(cands, not_found):
    """The ctypes.CDLL of the library ``cands`` lead to: the file locate()
    finds, or, when the search reaches the system path, the first of the
    sonames and the files listed after them that dlopen can open.  When
    nothing loads, raises ``not_found(places)``: the caller's exception for
    the list of every place searched."""
    import ctypes
    place, path, _ = locate(cands)
    tried = []
    if path is not None and os.sep in path:
        tried = [path]
    elif path is not None:
        rest = cands[[p for _, p in cands].index(path):]
        tried = [p for _, p in rest if os.sep not in p or os.path.isfile(p)]
    for name in tried:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    places = []
    for pl, _ in cands:
        if pl not in places:
            places.append(pl)
    raise not_found(places)


class LibraryError(_core.CUDARuntimeError):
    """A library could not be loaded, or one of its calls failed
    (``status``: the library's status code, 0 when it is missing).  The
    base of cuSOLVER's and cuBLAS's errors."""

    def __init__(self, message, status=0):
        super().__init__(message)
        self.status = status

    def __reduce__(self):
        return (type(self), (self.args[0], self.status))


class Lazy:
    """A library opened on its first use, by one thread, and its functions'
    ctypes signatures declared once.  ``candidates()`` gives the search
    list (called then, so tests can replace it), ``not_found(places)`` the
    exception, ``declare(lib)`` sets argtypes/restype.  ``lib`` is None
    until then."""

    def __init__(self, candidates, not_found, declare):
        self._candidates, self._not_found, self._declare = candidates, not_found, declare
        self._lock = threading.Lock()
        self.lib = None

    def get(self):
        if self.lib is None:
            with self._lock:
                if self.lib is None:
                    lib = load(self._candidates(), self._not_found)
                    self._declare(lib)
                    self.lib = lib
        return self.lib
