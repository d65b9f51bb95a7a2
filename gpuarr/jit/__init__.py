"""gpuarr.jit: CUDA kernels written in Python.

    from gpuarr import jit

    @jit.rawkernel()
    def elementwise_square(x, y, size):
        tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        ntid = jit.gridDim.x * jit.blockDim.x
        for i in range(tid, size, ntid):
            y[i] = x[i] * x[i]

    elementwise_square((128,), (1024,), (x, y, size))     # RawKernel's style
    elementwise_square[128, 1024](x, y, size)             # Numba's style

The function is translated to CUDA C from its bytecode (not its source, so
functions typed into the REPL, a notebook cell or ``python -c`` work) on
the first call with each new set of argument types, compiled with NVRTC
through ``gpuarr.RawKernel`` (cached on disk), and launched.
``k.inspect_source(*args)`` shows the C source and ``k.inspect_types(*args)``
the type of each local; both take the arguments or stand-ins for them
(NumPy arrays, ``jit.Array(dtype, ndim)``, dtypes) and need no GPU.

What a kernel may contain
-------------------------
- ``jit.threadIdx``/``blockIdx``/``blockDim``/``gridDim`` (``.x .y .z``,
  uint32), ``jit.grid(n)``, ``jit.gridsize(n)``, ``jit.laneid()``,
  ``jit.warpsize``; ``jit.syncthreads()``, ``jit.syncwarp()``;
  ``jit.shared_memory(dtype, size)`` (``size=None``: the launch's dynamic
  shared memory); ``jit.atomic_add/sub/exch/min/max/inc/dec/cas/and/or/xor
  (array, index, value)``, which return the old value.
- ``for ... in range(...)`` (also ``else``), ``while``, ``if``/``elif``/
  ``else``, ``break``, ``continue``, ``return``, conditional expressions,
  ``and``/``or``/``not``, comparison chains, tuple unpacking.
- Arithmetic and comparisons on numbers, array elements ``x[i]`` and
  ``x[i, j]`` (read and assign), ``x.shape``, ``x.size``, ``x.ndim``,
  ``len(x)``; ``math`` functions, gpuarr/NumPy ufuncs on numbers
  (``gp.sin(v)``), ``abs``, ``min``, ``max``, number types as casts
  (``float(v)``, ``gp.float32(v)``); functions decorated with
  ``@jit.rawkernel(device=True)``.
- Globals and closure variables are read once, when the kernel is compiled,
  and act as constants.

Types and semantics
-------------------
Arguments: device arrays by dtype, ndim and C-contiguity; NumPy scalars by
dtype; Python ``bool``/``int``/``float``/``complex`` as bool, int64,
float64 and complex128 (the types RawKernel passes them in).  Arithmetic
follows NumPy's scalar rules, with literals and globals as "weak" Python
numbers (NEP 50): ``x[i] * 2.0`` stays float32 for a float32 array, ``/``
of integers is float64 true division, ``//`` and ``%`` round towards minus
infinity with the divisor's sign (by zero: 0, as gpuarr), ``**`` of
integers is exact, and ``math.sqrt`` of a float32 is float32 (``sqrtf``).
A local's type is the type of its first assignment; later assignments
convert to it within NumPy's 'same_kind' rule (an int local cannot take a
float).  A local must be assigned on every path before it is read.
Negative indices do not wrap around (as in CuPy's JIT): ``x[-1]`` is out
of bounds, and a negative constant index is refused.  ``mode`` is accepted
for CuPy compatibility; both 'cuda' and 'numpy' use NumPy's rules.

Errors in the kernel raise ``jit.JitError`` naming the construct and the
line (and showing it when its source is available).
"""
from ._intrinsics import (threadIdx, blockIdx, blockDim, gridDim, warpsize, grid, gridsize,
                          syncthreads, syncwarp, shared_memory, laneid, atomic_add, atomic_sub,
                          atomic_exch, atomic_min, atomic_max, atomic_inc, atomic_dec,
                          atomic_cas, atomic_and, atomic_or, atomic_xor)
from ._kernel import JitKernel
from ._translate import JitError
from ._types import Array

__all__ = ["rawkernel", "JitError", "JitKernel", "Array", "threadIdx", "blockIdx",
           "blockDim", "gridDim", "warpsize", "grid", "gridsize", "syncthreads", "syncwarp",
           "shared_memory", "laneid", "atomic_add", "atomic_sub", "atomic_exch", "atomic_min",
           "atomic_max", "atomic_inc", "atomic_dec", "atomic_cas", "atomic_and", "atomic_or",
           "atomic_xor"]


def rawkernel(*, mode="cuda", device=False):
    """Decorator: the function becomes a JitKernel (``device=True``: a
    function that kernels call, compiled as a ``__device__`` function for
    the types it is called with)."""

    def wrap(func):
        return JitKernel(func, mode, device)

    return wrap
