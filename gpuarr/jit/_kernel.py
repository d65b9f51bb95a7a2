"""The kernel object that ``@jit.rawkernel()`` returns: argument typing, the
per-signature cache, and the two launch styles.

A call types its arguments (gpuarr arrays by dtype, ndim and C-contiguity;
NumPy scalars by dtype; Python bool/int/float/complex as bool, int64,
float64, complex128, the types RawKernel passes them in), looks the
signature up in the kernel's cache, and on a miss translates the function
(``_translate``) and wraps the source in a RawKernel, whose compile is
cached on disk by content.  The arguments are then expanded by the
signature's plan (an array's shape and byte strides follow its pointer
when the kernel uses them) and launched by RawKernel's C launch.
"""
import functools

import numpy

from .. import _core
from . import _translate, _types
from ._types import Array

__all__ = ["JitKernel", "arg_type"]


def arg_type(a, describe=False):
    """The jit type of a call argument.  With ``describe`` (inspection only),
    NumPy arrays, dtypes, scalar types and Array objects stand for
    arguments of that type."""
    if isinstance(a, Array):
        if not describe:
            raise TypeError("a jit.Array type describes an argument for inspect_source(); "
                            "pass a device array to launch")
        return a
    if isinstance(a, (bool, int, float, complex, numpy.generic)):
        try:
            return _types.check_dtype(_types.python_type(a))
        except OverflowError as exc:
            raise TypeError(str(exc)) from None
    if isinstance(a, numpy.ndarray):
        if not describe:
            raise _core._host_array_error("a kernel argument")
        return Array(_types.check_dtype(a.dtype), a.ndim, a.flags.c_contiguous)
    if describe and (isinstance(a, (numpy.dtype, str)) or
                     (isinstance(a, type) and issubclass(a, (numpy.generic, bool, int, float,
                                                             complex)))):
        if a in (bool, int, float, complex):
            return numpy.dtype({bool: numpy.bool_, int: numpy.int64, float: numpy.float64,
                                complex: numpy.complex128}[a])
        return _types.check_dtype(a)
    shape = getattr(a, "shape", None)
    if shape is not None and hasattr(a, "dtype") and hasattr(a, "strides"):
        return Array(_types.check_dtype(a.dtype), len(shape), a.flags.c_contiguous)
    raise TypeError(f"a {type(a).__name__} cannot be passed to a jit kernel: pass device "
                    f"arrays, NumPy scalars or Python bool/int/float/complex")


def _expander(plan):
    """A function turning the call's arguments into the kernel's parameter
    tuple, or None when they pass unchanged."""
    if all(extra is None for _, extra in plan):
        return None
    parts = []
    for k, extra in plan:
        if extra is None:
            parts.append(f"a[{k}]")
        else:
            what, axis = extra
            parts.append(f"a[{k}].{'shape' if what == 'shape' else 'strides'}[{axis}]")
    return eval(f"lambda a: ({', '.join(parts)},)")   # noqa: S307 (built from ints only)


class _Entry:
    __slots__ = ("translation", "kernel", "expand")

    def __init__(self, translation, kernel, expand):
        self.translation, self.kernel, self.expand = translation, kernel, expand


class JitKernel:
    """A Python function compiled to a CUDA kernel on its first call with
    each new signature.  Launch it as ``k(grid, block, args, shared_mem=0,
    stream=None)`` or ``k[grid, block](*args, shared_mem=0, stream=None)``.
    ``inspect_source(*args)`` gives the CUDA source for those arguments (or
    their types) and ``inspect_types(*args)`` the type of each local."""

    def __init__(self, func, mode="cuda", device=False):
        if mode not in ("cuda", "numpy"):
            raise ValueError(f"mode must be 'cuda' or 'numpy', got {mode!r}")
        if not hasattr(func, "__code__"):
            raise TypeError(f"jit.rawkernel() decorates a Python function, not "
                            f"{type(func).__name__}")
        functools.update_wrapper(self, func)
        self._func = func
        self._mode = mode
        self._device = bool(device)
        self._cache = {}

    @property
    def _gpuarr_jit(self):
        """How the translator recognises a jit function called from a kernel."""
        return self

    def _entry(self, types):
        entry = self._cache.get(types)
        if entry is None:
            tr = _translate.translate(self._func, types)
            entry = _Entry(tr, None, _expander(tr.plan))
            self._cache[types] = entry
        return entry

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        if self._device:
            raise TypeError(f"{self.__name__} is a device function (device=True): call it "
                            f"from a kernel, not from the host")
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"args must be a tuple of kernel arguments, not "
                            f"{type(args).__name__}")
        args = tuple(_device_array(a) for a in args)
        entry = self._entry(tuple(arg_type(a) for a in args))
        if entry.kernel is None:         # translated by inspect_*(), not yet launched
            from .._raw import RawKernel
            tr = entry.translation
            entry.kernel = RawKernel(tr.source, tr.name, options=tr.options)
        if entry.expand is not None:
            args = entry.expand(args)
        entry.kernel(grid, block, args, shared_mem=shared_mem, stream=stream)

    def __getitem__(self, config):
        if not isinstance(config, tuple) or len(config) != 2:
            raise TypeError("launch as kernel[grid, block](*args): give a grid and a block")
        grid, block = config

        def launch(*args, shared_mem=0, stream=None):
            self(grid, block, args, shared_mem=shared_mem, stream=stream)

        return launch

    # ------------------------------------------------------------ inspection
    def _translation(self, args):
        return self._entry(tuple(arg_type(a, describe=True) for a in args)).translation

    def inspect_source(self, *args):
        """The CUDA source compiled for these arguments.  Each argument is a
        value (device array, scalar) or stands for one: a NumPy array (an
        array of its dtype, ndim and layout), ``jit.Array(dtype, ndim)``, or a
        dtype / scalar type (``numpy.uint32``, ``int``).  A source that
        includes "ufunc_ops.cuh" compiles with the NVRTC option
        ``-I`` + ``gpuarr.cuda.compiler.include_dir()``."""
        if self._device:
            gen = _translate._Generated()
            _translate.device_function(
                self._func, tuple(arg_type(a, describe=True) for a in args), gen)
            return "".join(gen.functions)
        return self._translation(args).source

    def inspect_types(self, *args):
        """The type of each parameter and local for these arguments: a NumPy
        dtype for numbers, an Array for arrays."""
        if self._device:
            raise TypeError("inspect_types() is for kernels; use inspect_source() for a device "
                            "function")
        return dict(self._translation(args).locals)

    @property
    def cached_codes(self):
        """{argument types: CUDA source} of the signatures compiled so far (CuPy's
        name)."""
        return {k: e.translation.source for k, e in self._cache.items()}

    @property
    def cached_code(self):
        """The source of the only signature compiled so far."""
        codes = self.cached_codes
        if len(codes) != 1:
            raise ValueError(f"{len(codes)} signatures are compiled; use cached_codes")
        return next(iter(codes.values()))

    def __repr__(self):
        kind = "device function" if self._device else "kernel"
        return f"<gpuarr.jit {kind} {self.__name__}>"


def _device_array(a):
    """gpuarr arrays pass as they are; other CUDA arrays become gpuarr views."""
    if hasattr(a, "__cuda_array_interface__") and not _is_gpuarr(a):
        from .. import asarray
        return asarray(a)
    return a


_ndarray = None


def _is_gpuarr(a):
    global _ndarray
    if _ndarray is None:
        from .. import ndarray
        _ndarray = ndarray
    return isinstance(a, _ndarray)
