"""RawKernel and RawModule: CUDA C++ written by the user, compiled at run time.

    add = gp.RawKernel(r'''
    extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) c[i] = a[i] + b[i];
    }''', "vector_add")
    add((grid,), (block,), (a, b, c, np.int32(n)))

CuPy's API and behaviour: the code is compiled by NVRTC on the first call
on each device (gpuarr/cuda/compiler.py: a cubin for the device's
architecture, cached in memory and on disk), the launch runs on the current
stream of the device (or ``stream=``), and arguments pass by value as
CuPy passes them (src/userkernel.c).  The launch itself is C: a call costs
about one cudaLaunchKernel of host time.
"""
import os

from . import _core
from .cuda import compiler as _compiler

__all__ = ["RawKernel", "RawModule"]

_libraries = {}   # binary key -> _core._Library


def load(binary):
    """The loaded library of a compiler.Binary, loaded once a process: the
    runtime's library API is context-independent, so one load serves every
    device of the architecture it was compiled for (each device's kernel
    handles and globals are taken when used)."""
    lib = _libraries.get(binary.key)
    if lib is None:
        lib = _libraries[binary.key] = _core._Library(binary.data)
    return lib


def _check_options(options, backend, jitify, translate_cucomplex):
    if backend != "nvrtc":
        raise ValueError(f"backend must be 'nvrtc' (gpuarr compiles user code with NVRTC "
                         f"only), got {backend!r}")
    if jitify:
        raise ValueError("jitify=True is not supported: gpuarr has no Jitify; include what "
                         "the code needs with options=('-I<folder>',) instead")
    return _strings(options, "options")


def _strings(value, what):
    """A str or a sequence of str, as a tuple (TypeError naming `what`)."""
    value = (value,) if isinstance(value, str) else tuple(value)
    for v in value:
        if not isinstance(v, str):
            raise TypeError(f"{what} must be strings, got {v!r}")
    return value


_CUCOMPLEX = """
// cuComplex.h, as gpuarr translates it (translate_cucomplex=True): the types
// and functions of CUDA's header over the built-in float2 / double2, one
// macro for both precisions.
typedef float2 cuFloatComplex;
typedef double2 cuDoubleComplex;
typedef cuFloatComplex cuComplex;
#define GA_CUCOMPLEX(C, R, S, MAKE, FABS, HYPOT)                                          \\
__host__ __device__ static inline R cuCreal##S(C x) { return x.x; }                       \\
__host__ __device__ static inline R cuCimag##S(C x) { return x.y; }                       \\
__host__ __device__ static inline C cuConj##S(C x) { return MAKE(x.x, -x.y); }            \\
__host__ __device__ static inline C cuCadd##S(C x, C y) { return MAKE(x.x + y.x, x.y + y.y); } \\
__host__ __device__ static inline C cuCsub##S(C x, C y) { return MAKE(x.x - y.x, x.y - y.y); } \\
__host__ __device__ static inline C cuCmul##S(C x, C y)                                  \\
{ return MAKE(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x); }                           \\
__host__ __device__ static inline C cuCdiv##S(C x, C y)                                  \\
{                                                                                        \\
    R s = FABS(y.x) + FABS(y.y), ars = x.x / s, ais = x.y / s, brs = y.x / s, bis = y.y / s; \\
    R d = brs * brs + bis * bis;                                                         \\
    return MAKE((ars * brs + ais * bis) / d, (ais * brs - ars * bis) / d);               \\
}                                                                                        \\
__host__ __device__ static inline R cuCabs##S(C x) { return HYPOT(x.x, x.y); }
GA_CUCOMPLEX(cuFloatComplex, float, f, make_float2, fabsf, hypotf)
GA_CUCOMPLEX(cuDoubleComplex, double, , make_double2, fabs, hypot)
#undef GA_CUCOMPLEX
__host__ __device__ static inline cuFloatComplex make_cuFloatComplex(float r, float i) { return make_float2(r, i); }
__host__ __device__ static inline cuDoubleComplex make_cuDoubleComplex(double r, double i) { return make_double2(r, i); }
__host__ __device__ static inline cuFloatComplex make_cuComplex(float r, float i) { return make_float2(r, i); }
__host__ __device__ static inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex c) { return make_double2(c.x, c.y); }
__host__ __device__ static inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex c) { return make_float2((float)c.x, (float)c.y); }
"""


def _translate_cucomplex(code):
    """Replace ``#include <cuComplex.h>`` (which NVRTC cannot read: it
    includes host headers) with the same API over float2 / double2."""
    out = []
    for line in code.splitlines():
        stripped = line.replace(" ", "").replace("\t", "")
        if stripped in ("#include<cuComplex.h>", '#include"cuComplex.h"'):
            out.append(_CUCOMPLEX)
        else:
            out.append(line)
    return "\n".join(out)


class _Compiled:
    """The per-architecture binaries of one source."""

    __slots__ = ("code", "options", "name_expressions", "binaries")

    def __init__(self, code, options, name_expressions):
        self.code = code
        self.options = options
        self.name_expressions = tuple(name_expressions or ())
        self.binaries = {}      # arch -> compiler.Binary

    def binary(self, arch):
        b = self.binaries.get(arch)
        if b is None:
            b = self.binaries[arch] = _compiler.compile_code(
                self.code, "gpuarr_user.cu", self.options, self.name_expressions, arch)
        return b

    def library(self, device):
        """(library, binary) for `device`'s architecture."""
        binary = self.binary(_compiler.device_arch(device))
        return load(binary), binary

    def symbol(self, name, binary):
        """The loaded name of ``name``: its lowered form for a name
        expression, else itself."""
        return binary.lowered.get(name, name)


class RawKernel(_core._KernelBase):
    """RawKernel(code, name, options=(), backend='nvrtc', *, translate_cucomplex=False,
    enable_cooperative_groups=False, jitify=False)

    A CUDA kernel from source: ``code`` is CUDA C++ and ``name`` the
    ``extern "C"`` ``__global__`` function to launch.  It is compiled on the
    first call on each device (or by ``compile()``).  Call it as
    ``kernel(grid, block, args, shared_mem=0, stream=None)``: grid and
    block are ints or tuples of up to three ints, ``args`` a tuple.
    """

    def __init__(self, code, name, options=(), backend="nvrtc", *, translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False):
        if not isinstance(code, str):
            raise TypeError(f"code must be a str of CUDA C++ source, not {type(code).__name__}")
        if not isinstance(name, str) or not name:
            raise TypeError("name must be the kernel function's name (a non-empty str)")
        options = _check_options(options, backend, jitify, translate_cucomplex)
        if translate_cucomplex:
            code = _translate_cucomplex(code)
        self.code = code
        self.name = name
        self.options = options
        self.backend = backend
        self.translate_cucomplex = bool(translate_cucomplex)
        self.enable_cooperative_groups = bool(enable_cooperative_groups)
        self._cooperative = bool(enable_cooperative_groups)
        self._compiled = _Compiled(code, options, ())
        self._settings = {}

    @classmethod
    def _from_module(cls, compiled, name, cooperative):
        self = cls.__new__(cls)
        self.code = compiled.code
        self.name = name
        self.options = compiled.options
        self.backend = "nvrtc"
        self.translate_cucomplex = False
        self.enable_cooperative_groups = cooperative
        self._cooperative = cooperative
        self._compiled = compiled
        self._settings = {}
        return self

    def _function_for(self, device):
        """Called by the C launch on the first call on ``device``."""
        lib, binary = self._compiled.library(device)
        handle = lib.get_kernel(self._compiled.symbol(self.name, binary))
        for attr, value in self._settings.items():   # settings made on other devices
            _core._function_set_attribute(handle, device, attr, value)
        return handle

    def compile(self, log_stream=None):
        """Compile (and load) for the current device now instead of at the
        first call."""
        self.attributes  # noqa: B018  (loads through the C side)

    # ------------------------------------------------------------ attributes
    @property
    def attributes(self):
        """The compiled function's attributes on the current device (a dict
        with CuPy's keys)."""
        return self._attributes(_core.get_device_id())

    def _attr(name):  # noqa: N805  (property factory)
        return property(lambda self: self.attributes[name],
                        doc=f"The compiled function's {name} on the current device.")

    max_threads_per_block = _attr("max_threads_per_block")
    num_regs = _attr("num_regs")
    shared_size_bytes = _attr("shared_size_bytes")
    const_size_bytes = _attr("const_size_bytes")
    local_size_bytes = _attr("local_size_bytes")
    ptx_version = _attr("ptx_version")
    binary_version = _attr("binary_version")
    cache_mode_ca = _attr("cache_mode_ca")
    del _attr

    def _setting(name):  # noqa: N805
        def get(self):
            return self.attributes[name]

        def set_(self, value):
            value = int(value)
            self._set_attribute(_core.get_device_id(), name, value)
            self._settings[name] = value

        return property(get, set_, doc=f"The kernel's {name} (settable) on the current device.")

    max_dynamic_shared_size_bytes = _setting("max_dynamic_shared_size_bytes")
    preferred_shared_memory_carveout = _setting("preferred_shared_memory_carveout")
    del _setting

    def __repr__(self):
        return f"<gpuarr.RawKernel {self.name!r}>"


class RawModule:
    """RawModule(*, code=None, path=None, options=(), backend='nvrtc',
    translate_cucomplex=False, enable_cooperative_groups=False,
    name_expressions=None, jitify=False)

    A compiled CUDA module: from source (``code``) or from a ``.cubin``,
    ``.ptx`` or ``.fatbin`` file (``path``).  ``get_function(name)`` gives a
    RawKernel (``name`` may be a C++ name expression such as
    ``"my_kernel<float>"`` listed in ``name_expressions``), and
    ``get_global(name)`` a MemoryPointer to a ``__device__`` or
    ``__constant__`` variable, which ``gp.ndarray(shape, dtype,
    memptr=...)`` wraps so that ``table[...] = values`` writes it.
    """

    def __init__(self, *, code=None, path=None, options=(), backend="nvrtc",
                 translate_cucomplex=False, enable_cooperative_groups=False,
                 name_expressions=None, jitify=False):
        if (code is None) == (path is None):
            raise TypeError("RawModule needs exactly one of code= (CUDA C++ source) and "
                            "path= (a .cubin, .ptx or .fatbin file)")
        options = _check_options(options, backend, jitify, translate_cucomplex)
        if name_expressions is not None:
            name_expressions = _strings(name_expressions, "name_expressions")
            if code is None:
                raise ValueError("name_expressions need code= (a loaded binary has its "
                                 "names already lowered)")
        self.code = code
        self.path = path
        self.options = options
        self.backend = backend
        self.name_expressions = name_expressions
        self.enable_cooperative_groups = bool(enable_cooperative_groups)
        self._kernels = {}
        if code is not None:
            if not isinstance(code, str):
                raise TypeError(f"code must be a str of CUDA C++ source, not "
                                f"{type(code).__name__}")
            if translate_cucomplex:
                code = _translate_cucomplex(code)
                self.code = code
            self._compiled = _Compiled(code, options, name_expressions)
        else:
            self._compiled = _FileModule(os.fspath(path))

    def compile(self, log_stream=None):
        """Compile and load for the current device now."""
        self._compiled.library(_core.get_device_id())

    def get_function(self, name):
        """The kernel ``name`` (an ``extern "C"`` name, or a name expression
        given in name_expressions) as a RawKernel."""
        if not isinstance(name, str):
            raise TypeError("get_function: name must be a str")
        if (self.name_expressions is not None and "<" in name
                and name not in self.name_expressions):
            raise ValueError(f"get_function({name!r}): a template instantiation must be "
                             f"listed in name_expressions (got {self.name_expressions})")
        k = self._kernels.get(name)
        if k is None:
            k = RawKernel._from_module(self._compiled, name, self.enable_cooperative_groups)
            k._function_for(_core.get_device_id())   # the name exists: raise now if not
            self._kernels[name] = k
        return k

    def get_global(self, name):
        """A MemoryPointer to the ``__device__``/``__constant__`` variable
        ``name`` on the current device (the pointer keeps the module loaded)."""
        from .cuda.memory import MemoryPointer, UnownedMemory
        device = _core.get_device_id()
        lib, binary = self._compiled.library(device)
        ptr, size = lib.get_global(self._compiled.symbol(name, binary))
        return MemoryPointer(UnownedMemory(ptr, size, lib, device), ptr, device)

    def __repr__(self):
        where = f"path={self.path!r}" if self.path is not None else "code=..."
        return f"<gpuarr.RawModule {where}>"


class _FileModule:
    """A module loaded from a compiled file (cubin, PTX or fatbin): the same
    image for every device."""

    __slots__ = ("path", "image", "lib", "code", "options")

    def __init__(self, path):
        if not os.path.isfile(path):
            raise FileNotFoundError(f"RawModule: no such file: {path!r}")
        with open(path, "rb") as f:
            image = f.read()
        if path.endswith(".ptx") or not image.startswith((b"\x7fELF", b"\x50\xed\x55\xba")):
            image = image.rstrip(b"\0") + b"\0"   # PTX text must end with NUL
        self.path = path
        self.image = image
        self.lib = None
        self.code = None
        self.options = ()

    def library(self, device):
        if self.lib is None:
            self.lib = _core._Library(self.image)
        return self.lib, None

    def symbol(self, name, binary):
        return name

