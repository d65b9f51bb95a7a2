"""Run-time compilation of user code with NVRTC, and the kernel cache.

gpuarr's built-in operations are compiled when the package is built; this
module is used only for code the user writes (RawKernel, RawModule,
ElementwiseKernel, ReductionKernel, fuse, jit.rawkernel).

NVRTC is loaded on the first compile with ``ctypes`` (dlopen), never linked:
``import gpuarr`` and every built-in operation work without it.  It is looked
for by gpuarr/cuda/_libs.py, the finder cuFFT uses too, where users have it,
in this order: ``$CUDA_HOME`` / ``$CUDA_PATH`` (``lib64``, ``lib``), the
NVIDIA wheels in site-packages (``nvidia/cu13/lib`` from
``nvidia-cuda-nvrtc`` 13, ``nvidia/cuda_nvrtc/lib`` from the CUDA 12 wheel),
then the system's library path.  When it is missing, NVRTCError names every
place searched and the pip package to install
(``pip install "gpuarr[nvrtc]"``).

Code is compiled to a cubin for the device's exact architecture, or to PTX
for the newest architecture this NVRTC knows when the GPU is newer than it
(the driver then finishes the compilation at load).

The cache
---------
Compiled binaries are kept per process in memory and on disk under
``$GPUARR_CACHE_DIR``, else ``$XDG_CACHE_HOME/gpuarr/kernels``
(``~/.cache/gpuarr/kernels``).  A binary's key is a BLAKE2b hash over the source,
the options, the name expressions, the target architecture and kind, the
NVRTC library (its path, size and time, so a hit never has to load NVRTC)
and gpuarr's version.  A file holds a header (format, the payload's size and
BLAKE2b digest, the lowered names of the name expressions) and the binary; it is
written to a temporary file in the same folder and renamed into place, so readers never see half a file and two processes compiling
the same kernel both succeed (the last rename wins, with identical
contents).  A file whose checksum does not match is recompiled and
replaced.  The cache is private: its folder is created readable only by
its owner, and a folder or file that is not owned by the user, or that
other users can write, is never read from (a planted binary would run as
the user's code); a folder that cannot be written (read-only, full)
degrades to compiling in memory.  Each of these gives one warning naming
the path, not an error.
"""
import os
import warnings

try:
    # BLAKE2 straight from CPython's built-in module: hashlib would load
    # OpenSSL first (~3 ms), which a warm first call should not pay.
    from _blake2 import blake2b as _hash
except ImportError:  # an interpreter without the built-in module
    from hashlib import blake2b as _hash

from . import _libs

__all__ = ["CompileException", "NVRTCError", "compile_code", "nvrtc_version",
           "cache_dir", "find_nvrtc"]

_CACHE_FORMAT = b"gpuarr-kernel-3"


class NVRTCError(RuntimeError):
    """NVRTC could not be loaded, or one of its calls failed."""


class CompileException(Exception):
    """NVRTC rejected the code.  ``str(e)`` shows NVRTC's log and the source
    with line numbers around each error; ``log``, ``source``, ``name`` and
    ``options`` hold the parts."""

    def __init__(self, log, source, name, options):
        self.log = log
        self.source = source
        self.name = name
        self.options = tuple(options)
        super().__init__(self._message())

    def _message(self):
        lines = self.source.splitlines()
        marks = set()
        for line in self.log.splitlines():
            # NVRTC: "<name>(LINE): error: ..."
            head, sep, rest = line.partition("): ")
            if sep and "(" in head and rest.startswith(("error", "catastrophic error")):
                num = head.rsplit("(", 1)[1]
                if num.isdigit():
                    marks.add(int(num))
        parts = [f"NVRTC could not compile {self.name!r} "
                 f"(options: {' '.join(self.options) or 'none'}):", self.log.rstrip()]
        shown = set()
        for n in sorted(marks):
            lo, hi = max(1, n - 2), min(len(lines), n + 2)
            rows = [k for k in range(lo, hi + 1) if k not in shown]
            if not rows:
                continue
            parts.append("")
            for k in rows:
                shown.add(k)
                parts.append(f"{'>' if k == n else ' '}{k:5d} | {lines[k - 1]}")
        return "\n".join(parts)

    def __reduce__(self):
        return (type(self), (self.log, self.source, self.name, self.options))


# ================================================================ NVRTC ====

# NVRTC's sonames (newest first) and the NVIDIA wheels' folders under
# site-packages/nvidia: nvidia-cuda-nvrtc 13 (cu13), the CUDA 12 wheel.
_NAMES = ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so")
_WHEEL_SUBDIRS = ("cu13", "cuda_nvrtc")


def _candidates():
    """(place, path) pairs to try, in order (gpuarr/cuda/_libs.py)."""
    return _libs.candidates(_NAMES, _WHEEL_SUBDIRS)


_located = None


def _locate():
    """(place, path) of the NVRTC library file to use, found without loading
    it (a few stat calls, once a process, gpuarr/cuda/_libs.py); ('the system
    library path', soname) when no candidate file exists, for dlopen to look
    up; and the places searched."""
    global _located
    if _located is None:
        _located = _libs.locate(_candidates())
    return _located


_ident = None


def _identity():
    """A string that changes whenever the NVRTC library does: its resolved
    path, size and modification time (so a warm cache hit never loads it)."""
    global _ident
    if _ident is None:
        place, path, _ = _locate()
        if path is not None and os.sep in path:
            real = os.path.realpath(path)
            st = os.stat(real)
            _ident = f"{real}:{st.st_size}:{st.st_mtime_ns}"
        else:
            _ident = f"{find_nvrtc()}:{nvrtc_version()}"
    return _ident


def find_nvrtc():
    """The path of the NVRTC library that gpuarr uses (loading it if needed)."""
    return _nvrtc()._name


def _not_found(places):
    return NVRTCError(
        "NVRTC (the CUDA run-time compiler, libnvrtc.so) was not found, so user-written "
        "kernels cannot be compiled (gpuarr's built-in operations do not need it). "
        "Looked in: " + "; ".join(places) + ". Install it with "
        "`pip install \"gpuarr[nvrtc]\"` (the nvidia-cuda-nvrtc wheel), or set CUDA_HOME "
        "to a CUDA toolkit.")


def _declare(lib):
    import ctypes
    c_int_p = ctypes.POINTER(ctypes.c_int)
    for name, args in {
        "nvrtcVersion": [c_int_p, c_int_p],
        "nvrtcGetNumSupportedArchs": [c_int_p],
        "nvrtcGetSupportedArchs": [c_int_p],
        "nvrtcCreateProgram": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_char_p,
                               ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p],
        "nvrtcDestroyProgram": [ctypes.POINTER(ctypes.c_void_p)],
        "nvrtcAddNameExpression": [ctypes.c_void_p, ctypes.c_char_p],
        "nvrtcCompileProgram": [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
        "nvrtcGetProgramLogSize": [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)],
        "nvrtcGetProgramLog": [ctypes.c_void_p, ctypes.c_char_p],
        "nvrtcGetCUBINSize": [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)],
        "nvrtcGetCUBIN": [ctypes.c_void_p, ctypes.c_char_p],
        "nvrtcGetPTXSize": [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)],
        "nvrtcGetPTX": [ctypes.c_void_p, ctypes.c_char_p],
        "nvrtcGetLoweredName": [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)],
    }.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = ctypes.c_int
    lib.nvrtcGetErrorString.argtypes = [ctypes.c_int]
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p


_LIB = _libs.Lazy(lambda: _candidates(), lambda places: _not_found(places),
                  lambda lib: _declare(lib))
_nvrtc = _LIB.get


def _check(rc, call):
    if rc != 0:
        msg = _nvrtc().nvrtcGetErrorString(rc).decode()
        raise NVRTCError(f"{call} failed: {msg} (NVRTC error {rc})")


def nvrtc_version():
    """NVRTC's version as (major, minor)."""
    import ctypes
    lib = _nvrtc()
    major, minor = ctypes.c_int(), ctypes.c_int()
    _check(lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    return major.value, minor.value


_archs = None


def _supported_archs():
    """The compute capabilities this NVRTC compiles for: from the cache
    folder's note on this library when there is one, else asked of NVRTC
    (and noted)."""
    global _archs
    if _archs is None:
        d = _usable_dir(quiet=True)
        note = os.path.join(d, "nvrtc-" + _hash(_identity().encode()).hexdigest()[:24]
                            + ".archs") if d else None
        found = _read(note) if note else None
        if found is not None:
            _archs = tuple(int(a) for a in found[1].split())
        else:
            import ctypes
            lib = _nvrtc()
            n = ctypes.c_int()
            _check(lib.nvrtcGetNumSupportedArchs(ctypes.byref(n)), "nvrtcGetNumSupportedArchs")
            arr = (ctypes.c_int * n.value)()
            _check(lib.nvrtcGetSupportedArchs(arr), "nvrtcGetSupportedArchs")
            _archs = tuple(arr)
            if note:
                _write(d, note, "archs", " ".join(map(str, _archs)).encode(), {})
    return _archs


def target_for(arch):
    """('cubin', arch) when this NVRTC can produce machine code for compute
    capability ``arch`` (an int such as 90), else ('ptx', the newest it
    knows below arch) for the driver to finish."""
    archs = _supported_archs()
    if arch in archs:
        return "cubin", arch
    older = [a for a in archs if a <= arch]
    if not older:
        raise NVRTCError(f"this NVRTC ({'.'.join(map(str, nvrtc_version()))}) cannot compile for "
                         f"compute capability {arch // 10}.{arch % 10}: it supports "
                         f"{', '.join(str(a) for a in archs)}")
    return "ptx", max(older)


_include_dirs = None


def _cuda_include_dirs():
    """The toolkit's include folders next to the NVRTC found (for
    cooperative_groups.h, cuda_fp16.h, libcu++'s cuda/std), when present."""
    global _include_dirs
    if _include_dirs is None:
        dirs = []
        name = _locate()[1] or ""
        lib_dir = os.path.dirname(os.path.realpath(name)) if os.sep in name else ""
        roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 lib_dir and os.path.dirname(lib_dir),
                 lib_dir and os.path.dirname(os.path.dirname(os.path.dirname(lib_dir))),
                 "/usr/local/cuda"]
        for root in roots:
            if root:
                d = os.path.realpath(os.path.join(root, "include"))
                if os.path.isfile(os.path.join(d, "cuda_runtime.h")) and d not in dirs:
                    dirs.append(d)
                    if os.path.isdir(os.path.join(d, "cccl")):   # CUDA 13: CCCL (cuda/std)
                        dirs.append(os.path.join(d, "cccl"))
        _include_dirs = tuple(dirs)
    return _include_dirs


def _own_include():
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "include")


def include_dir():
    """The folder of gpuarr's kernel headers (element types, NumPy's
    conversions, the ufunc functors) that generated kernels include; the
    build puts them in gpuarr/include."""
    d = _own_include()
    if not os.path.isfile(os.path.join(d, "ufunc_ops.cuh")):
        raise NVRTCError(f"gpuarr's kernel headers are missing from {d}: the package was not "
                         "built completely (reinstall it)")
    return d


_arch_cache = {}


def device_arch(device):
    """The compute capability of ``device`` as an int (90 for an H100)."""
    arch = _arch_cache.get(device)
    if arch is None:
        from .. import _core
        attrs = _core._device_attrs
        major = _core._device_attribute(attrs["cudaDevAttrComputeCapabilityMajor"], device)
        minor = _core._device_attribute(attrs["cudaDevAttrComputeCapabilityMinor"], device)
        arch = _arch_cache[device] = 10 * major + minor
    return arch


def _raw_compile(source, name, options, name_expressions, kind):
    import ctypes
    lib = _nvrtc()
    prog = ctypes.c_void_p()
    _check(lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0,
                                  None, None), "nvrtcCreateProgram")
    try:
        for expr in name_expressions:
            _check(lib.nvrtcAddNameExpression(prog, expr.encode()), "nvrtcAddNameExpression")
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        rc = lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        _check(lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size)), "nvrtcGetProgramLogSize")
        buf = ctypes.create_string_buffer(size.value)
        _check(lib.nvrtcGetProgramLog(prog, buf), "nvrtcGetProgramLog")
        log = buf.value.decode(errors="replace")
        if rc != 0:
            raise CompileException(log or lib.nvrtcGetErrorString(rc).decode(), source, name,
                                   options)
        get_size, get = ((lib.nvrtcGetCUBINSize, lib.nvrtcGetCUBIN) if kind == "cubin"
                         else (lib.nvrtcGetPTXSize, lib.nvrtcGetPTX))
        _check(get_size(prog, ctypes.byref(size)), get_size.__name__)
        out = ctypes.create_string_buffer(size.value)
        _check(get(prog, out), get.__name__)
        lowered = {}
        for expr in name_expressions:
            p = ctypes.c_char_p()
            _check(lib.nvrtcGetLoweredName(prog, expr.encode(), ctypes.byref(p)),
                   "nvrtcGetLoweredName")
            lowered[expr] = p.value.decode()
        return out.raw, lowered
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


# ================================================================ cache ====

class Binary:
    """A compiled module: ``kind`` ('cubin' or 'ptx'), ``data`` (bytes),
    ``lowered`` (name expression -> mangled name), ``arch``, ``key``."""

    __slots__ = ("kind", "data", "lowered", "arch", "key")

    def __init__(self, kind, data, lowered, arch, key):
        self.kind, self.data, self.lowered, self.arch, self.key = kind, data, lowered, arch, key


_memory = {}
_warned = set()


def _warn_once(what, path, detail):
    if (what, path) in _warned:
        return
    _warned.add((what, path))
    warnings.warn(f"gpuarr kernel cache: {detail} ({path}); compiling in memory instead",
                  RuntimeWarning, stacklevel=4)


def cache_dir():
    """The folder of the on-disk kernel cache."""
    d = os.environ.get("GPUARR_CACHE_DIR")
    if d:
        return os.path.abspath(os.path.expanduser(d))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpuarr", "kernels")


def _private(st):
    """Whether a stat result is owned by this user and writable by no one else."""
    return (not hasattr(os, "getuid") or st.st_uid == os.getuid()) and not (st.st_mode & 0o022)


_dir_checked = None


def _usable_dir(quiet=False):
    """The cache folder when it can be trusted, created if needed; None
    (after one warning, unless quiet) when it cannot.  A folder found good
    once is not checked again in this process."""
    global _dir_checked
    d = cache_dir()
    if d == _dir_checked:
        return d
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        st = os.stat(d)
    except OSError as exc:
        if not quiet:
            _warn_once("mkdir", d, f"cannot create the folder: {exc.strerror}")
        return None
    if not _private(st):
        if not quiet:
            _warn_once("unsafe", d, "the folder is not private to this user (owned by another "
                       "user or writable by others), so binaries in it are not trusted; make "
                       "it yours with `chmod 700`")
        return None
    _dir_checked = d
    return d


def _read(path):
    """The cached Binary parts (kind, data, lowered) or None when absent,
    untrusted or damaged."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not _private(st):
            _warn_once("unsafe", path, "the file is not private to this user, so it is not "
                       "loaded")
            return None
        with os.fdopen(fd, "rb") as f:
            fd = -1
            blob = f.read()
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    # header: "<format> <kind> <size> <digest> <n>\n", then n lines
    # "<name expression>\t<lowered name>\n", then the binary
    head, sep, rest = blob.partition(b"\n")
    fields = head.split(b" ")
    try:
        if not sep or len(fields) != 5 or fields[0] != _CACHE_FORMAT:
            return None
        kind, size, digest, n = fields[1].decode(), int(fields[2]), fields[3].decode(), \
            int(fields[4])
        lowered = {}
        for _ in range(n):
            line, sep, rest = rest.partition(b"\n")
            expr, tab, low = line.decode().partition("\t")
            if not sep or not tab:
                return None
            lowered[expr] = low
    except (ValueError, UnicodeDecodeError):
        return None
    if len(rest) != size or _hash(rest).hexdigest() != digest:
        return None
    return kind, rest, lowered


def _write(d, path, kind, data, lowered):
    head = b" ".join([_CACHE_FORMAT, kind.encode(), str(len(data)).encode(),
                      _hash(data).hexdigest().encode(), str(len(lowered)).encode()])
    body = b"".join(f"{e}\t{low}\n".encode() for e, low in lowered.items())
    import tempfile
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-", suffix=".bin")
        with os.fdopen(fd, "wb") as f:
            f.write(head + b"\n" + body + data)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        _warn_once("write", d, f"cannot write to the folder: {exc.strerror}")
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


_folder_digests = {}


def _folder_digest(d):
    """BLAKE2b over the names and contents of the files in folder d, kept
    for the process (gpuarr's kernel headers: ~100 KB, read once)."""
    got = _folder_digests.get(d)
    if got is None:
        h = _hash()
        try:
            names = sorted(os.listdir(d))
        except OSError:
            names = []
        for name in names:
            p = os.path.join(d, name)
            if os.path.isfile(p):
                h.update(name.encode() + b"\0")
                with open(p, "rb") as f:
                    h.update(f.read())
        got = _folder_digests[d] = h.hexdigest()
    return got


def cache_key(source, options, name_expressions, kind, arch):
    """The hex BLAKE2b digest identifying a binary: over gpuarr's version, the NVRTC
    library's identity (path, size, time: its version without loading it),
    the target, the options, the name expressions, the source and, when
    the options include gpuarr's kernel headers, their contents (a header
    changed by a rebuild of the same version must not load a stale binary;
    the user's own -I folders are not read, as in CuPy)."""
    from .. import __version__
    own = "-I" + _own_include()
    headers = _folder_digest(_own_include()) if own in options else ""
    h = _hash()
    for part in (_CACHE_FORMAT.decode(), __version__, _identity(), kind, str(arch),
                 "\0".join(options), "\0".join(name_expressions), source, headers):
        h.update(part.encode())
        h.update(b"\x00\x01")
    return h.hexdigest()


def compile_code(source, name="kernel.cu", options=(), name_expressions=(), arch=None,
                 use_cache=True):
    """Compile CUDA C++ ``source`` for compute capability ``arch`` (an int,
    e.g. 90; None: the current device's) and return a Binary.  ``options``
    are NVRTC options (the target architecture is added); name expressions
    (C++ template instantiations such as ``"f<float>"``) get their lowered
    names in ``Binary.lowered``.  Raises CompileException with NVRTC's log
    when the code does not compile."""
    if not isinstance(source, str):
        raise TypeError(f"code must be a str of CUDA C++ source, not {type(source).__name__}")
    options = tuple(options)
    for o in options:
        if not isinstance(o, str):
            raise TypeError(f"options must be strings, got {o!r}")
    name_expressions = tuple(name_expressions)
    if arch is None:
        from .. import _core
        arch = device_arch(_core.get_device_id())
    kind, target = target_for(int(arch))
    full = options + (f"-arch={'sm' if kind == 'cubin' else 'compute'}_{target}",)
    full += tuple(f"-I{d}" for d in _cuda_include_dirs())
    key = cache_key(source, full, name_expressions, kind, target)
    hit = _memory.get(key)
    if hit is not None:
        return hit
    d = _usable_dir() if use_cache else None
    path = os.path.join(d, key + ".bin") if d else None
    found = _read(path) if path else None
    if found is None:
        data, lowered = _raw_compile(source, name, full, name_expressions, kind)
        if path:
            _write(d, path, kind, data, lowered)
        found = (kind, data, lowered)
    binary = Binary(found[0], found[1], found[2], target, key)
    _memory[key] = binary
    return binary
