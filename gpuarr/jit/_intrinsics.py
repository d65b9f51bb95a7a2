"""The names a jit kernel uses: thread coordinates, synchronisation, shared
memory and atomics.  Each is a plain Python object that the translator
recognises by identity; called from ordinary Python code they raise, since
they only mean something inside a kernel."""

__all__ = ["Dim3", "Intrinsic", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpsize",
           "grid", "gridsize", "syncthreads", "syncwarp", "shared_memory", "laneid",
           "ATOMICS"]


class Dim3:
    """``jit.threadIdx``, ``jit.blockIdx``, ``jit.blockDim``, ``jit.gridDim``:
    inside a kernel, ``.x``, ``.y`` and ``.z`` are uint32 values (CUDA's)."""

    __slots__ = ("cname",)

    def __init__(self, cname):
        self.cname = cname

    def __repr__(self):
        return f"jit.{self.cname}"


class Intrinsic:
    """A function that exists only inside a jit kernel."""

    __slots__ = ("name", "__dict__")

    def __init__(self, name, doc):
        self.name = name
        self.__doc__ = doc

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"jit.{self.name}() can only be used inside a function decorated "
                           f"with @gpuarr.jit.rawkernel()")

    def __repr__(self):
        return f"<gpuarr.jit.{self.name}>"


class WarpSize:
    """``jit.warpsize``: the number of threads in a warp (CUDA's warpSize),
    an int32 inside a kernel."""

    __slots__ = ()

    def __repr__(self):
        return "jit.warpsize"


threadIdx = Dim3("threadIdx")
blockIdx = Dim3("blockIdx")
blockDim = Dim3("blockDim")
gridDim = Dim3("gridDim")
warpsize = WarpSize()

grid = Intrinsic("grid", """grid(ndim)

The thread's absolute position in the grid: ``blockIdx.x * blockDim.x +
threadIdx.x`` (uint32) for ndim 1, a tuple of 2 or 3 such values (x, y, z)
for ndim 2 or 3 (Numba's convention).""")
gridsize = Intrinsic("gridsize", """gridsize(ndim)

The number of threads in the grid along each axis: ``blockDim.x *
gridDim.x`` (uint32) for ndim 1, a tuple for ndim 2 or 3.""")
syncthreads = Intrinsic("syncthreads", """syncthreads()

``__syncthreads()``: waits until every thread of the block reaches it.""")
syncwarp = Intrinsic("syncwarp", """syncwarp(mask=0xffffffff)

``__syncwarp(mask)``: waits for the threads of the warp named in mask.""")
shared_memory = Intrinsic("shared_memory", """shared_memory(dtype, size)

A 1-d array in the block's shared memory.  ``size`` is a number known when
the kernel is compiled (a literal or a global); ``None`` gives the dynamic
shared memory that the launch's ``shared_mem=`` bytes provide (``extern
__shared__``; every such array starts at the same address).""")
laneid = Intrinsic("laneid", """laneid()

The thread's lane in its warp, 0 to 31 (uint32).""")

# name -> CUDA function.  Each takes (array, index, value) and returns the
# old value; atomic_cas takes (array, index, compare, value).
ATOMICS = {
    "atomic_add": "atomicAdd", "atomic_sub": "atomicSub", "atomic_exch": "atomicExch",
    "atomic_min": "atomicMin", "atomic_max": "atomicMax", "atomic_inc": "atomicInc",
    "atomic_dec": "atomicDec", "atomic_cas": "atomicCAS", "atomic_and": "atomicAnd",
    "atomic_or": "atomicOr", "atomic_xor": "atomicXor",
}


def _atomic(name, cuda):
    args = "array, index, compare, value" if name == "atomic_cas" else "array, index, value"
    return Intrinsic(name, f"""{name}({args})

``{cuda}(&array[index], ...)``: updates the element atomically and returns
its old value.  ``index`` is an int, or a tuple of ints for an N-d array.""")


for _name, _cuda in ATOMICS.items():
    globals()[_name] = _atomic(_name, _cuda)
    __all__.append(_name)
