"""gpuarr.jit: Python functions as CUDA kernels.

Without a GPU (CI) every example kernel is translated for a signature and
compiled by NVRTC for sm_90, the typing decisions are checked through
inspect_types(), errors are checked for their message and line, and the
generated C++ is *run on the CPU*: the emulator below compiles it with the
host compiler (g++ -std=c++20), one std::thread per CUDA thread of a block
and a std::barrier for __syncthreads, so the translation's semantics
(division, modulo, types, loops, atomics, shared memory) are compared with
NumPy and with the Python function itself run thread by thread.  The
tests marked gpu run the same kernels on the device against NumPy.
"""
import ctypes
import hashlib
import math
import os
import shutil
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import gpuarr as cp
from gpuarr import jit
from gpuarr.jit import _kernel

from gpuarr.cuda.compiler import compile_code

from conftest import requires_nvrtc as needs_nvrtc, _have_nvrtc

HAVE_NVRTC = _have_nvrtc()
needs_cxx = pytest.mark.skipif(shutil.which("g++") is None, reason="no host C++ compiler")


pytestmark = pytest.mark.usefixtures("private_kernel_cache")


# ======================================================= example kernels ====

@jit.rawkernel()
def elementwise_square(x, y, size):
    tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    ntid = jit.gridDim.x * jit.blockDim.x
    for i in range(tid, size, ntid):
        y[i] = x[i] * x[i]


@jit.rawkernel()
def vector_add(A, B, C, size):
    item = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    if item < size:
        C[item] = A[item] + B[item]


@jit.rawkernel()
def histogram(input, output):
    item = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    jit.atomic_add(output, input[item], 1)


@jit.rawkernel()
def histogram_shared(input, output):
    item = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
    temp_histogram = jit.shared_memory(np.int32, 256)
    temp_histogram[jit.threadIdx.x] = 0
    jit.syncthreads()
    jit.atomic_add(temp_histogram, input[item], 1)
    jit.syncthreads()
    jit.atomic_add(output, jit.threadIdx.x, temp_histogram[jit.threadIdx.x])


@jit.rawkernel()
def add_2d(a, b, out):
    i, j = jit.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] + 2 * b[j, i]


@jit.rawkernel()
def control_flow(x, out, n):
    i = jit.grid(1)
    if i >= x.size:
        return
    acc = 0
    k = 0
    while True:
        k += 1
        if k % 3 == 0:
            continue
        if k > n:
            break
        acc += x[i] if k % 2 else -x[i]
    for j in range(5):
        if j == 4:
            break
    else:
        acc = -1000
    out[i] = acc + (1 if 0 < x[i] < 10 else 0) + (x[i] > 5 and x[i] < 8)


@jit.rawkernel()
def int_division(a, b, q, r, t):
    i = jit.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        t[i] = a[i] / b[i]


@jit.rawkernel()
def float32_math(x, y):
    i = jit.grid(1)
    if i < x.size:
        v = math.sqrt(x[i]) + cp.sin(x[i]) * 2.0 + abs(x[i] - 1) + max(x[i], 0.5)
        y[i] = v + math.exp(-x[i]) * math.floor(x[i] * 3)


@jit.rawkernel()
def atomics(counts, lo, hi, bits, x):
    i = jit.grid(1)
    if i < x.size:
        v = x[i]
        jit.atomic_add(counts, 0, 1)
        jit.atomic_sub(counts, 1, 1)
        jit.atomic_min(lo, 0, v)
        jit.atomic_max(hi, 0, v)
        jit.atomic_or(bits, 0, 1 << (v % 31))
        jit.atomic_and(bits, 1, ~(1 << (v % 31)))
        jit.atomic_xor(bits, 2, v)
        old = jit.atomic_exch(counts, 2, v)
        jit.atomic_cas(counts, 3, 0, old * 0 + 7)


@jit.rawkernel()
def atomic_inc_dec(c):
    jit.atomic_inc(c, 0, np.uint32(9))
    jit.atomic_dec(c, 1, np.uint32(9))


@jit.rawkernel(device=True)
def clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


@jit.rawkernel()
def use_device_function(x, y):
    i = jit.grid(1)
    if i < x.size:
        y[i] = clamp(x[i], 0.25, 0.75)


@jit.rawkernel()
def reverse_dynamic(x, y):
    buf = jit.shared_memory(np.float32, None)
    t = jit.threadIdx.x
    buf[t] = x[jit.blockIdx.x * jit.blockDim.x + t]
    jit.syncthreads()
    y[jit.blockIdx.x * jit.blockDim.x + t] = buf[jit.blockDim.x - 1 - t]


def f32(*shape):
    return np.zeros(shape, np.float32)


def i32(*shape):
    return np.zeros(shape, np.int32)


EXAMPLES = {
    "elementwise_square": (elementwise_square, (f32(8), f32(8), np.uint32(8))),
    "vector_add": (vector_add, (f32(8), f32(8), f32(8), np.int32(8))),
    "histogram": (histogram, (i32(8), i32(256))),
    "histogram_shared": (histogram_shared, (i32(8), i32(256))),
    "add_2d": (add_2d, (np.zeros((3, 4)), np.zeros((8, 6))[::2, ::2], np.zeros((3, 4)))),
    "control_flow": (control_flow, (np.zeros(8, np.int64), np.zeros(8, np.int64), 7)),
    "int_division": (int_division, (np.zeros(8, np.int64),) * 2 + (np.zeros(8, np.int64),) * 2
                     + (np.zeros(8),)),
    "float32_math": (float32_math, (f32(8), f32(8))),
    "atomics": (atomics, (i32(4), i32(1), i32(1), i32(3), i32(8))),
    "atomic_inc_dec": (atomic_inc_dec, (np.zeros(2, np.uint32),)),
    "use_device_function": (use_device_function, (f32(8), f32(8))),
    "reverse_dynamic": (reverse_dynamic, (f32(8), f32(8))),
}


# ============================================================ translation ====

def translation(kernel, args):
    """The Translation (source, NVRTC options, ...) of ``kernel`` for ``args``."""
    return kernel._entry(tuple(_kernel.arg_type(a, describe=True) for a in args)).translation


@needs_nvrtc
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_compiles_for_sm90(name):
    k, args = EXAMPLES[name]
    tr = translation(k, args)
    assert f'extern "C" __global__ void {name}(' in tr.source
    compile_code(tr.source, options=tr.options, arch=90)


def test_ufunc_ops_included_only_when_used():
    sq = translation(elementwise_square, EXAMPLES["elementwise_square"][1])
    assert sq.options == ()
    div = translation(int_division, EXAMPLES["int_division"][1])
    assert '#include "ufunc_ops.cuh"' in div.source
    assert "op_floor_divide()((ga_t_i64)(" in div.source and "op_remainder()(" in div.source
    assert div.options == (f"-I{cp.cuda.compiler.include_dir()}",)


def test_course_example_source_is_plain():
    src = elementwise_square.inspect_source(f32(4), f32(4), np.uint32(4))
    assert "float *x, float *y, unsigned int size" in src
    assert "y[i] = (x[i] * x[i]);" in src          # contiguous 1-d: a typed pointer
    assert "shape" not in src and "stride" not in src
    assert "#include" not in src                   # no header: compiles in milliseconds


def test_course_example_types():
    t = elementwise_square.inspect_types(f32(4), f32(4), np.uint32(4))
    assert t["tid"] == np.uint32 and t["ntid"] == np.uint32 and t["i"] == np.uint32
    assert t["x"] == jit.Array(np.float32, 1)
    # a Python int size is int64 (as RawKernel passes it), so the loop runs in int64
    assert elementwise_square.inspect_types(f32(4), f32(4), 4)["i"] == np.int64


def test_signature_stand_ins():
    a = elementwise_square.inspect_source(f32(4), f32(4), np.uint32(4))
    b = elementwise_square.inspect_source(jit.Array(np.float32, 1), jit.Array("float32"),
                                          np.uint32)
    assert a == b
    assert a in elementwise_square.cached_codes.values()


def test_strided_and_2d_indexing():
    src = add_2d.inspect_source(*EXAMPLES["add_2d"][1])
    assert "a[((long long)i * a_shape1 + j)]" in src
    assert "b_stride0" in src and "b_stride1" in src      # b is a strided view
    assert "out_shape0" in src and "out_shape1" in src
    assert "a_shape0" not in src.split("{", 1)[0]          # unused metadata is not passed
    tr = add_2d._entry(tuple(_kernel.arg_type(a, True) for a in EXAMPLES["add_2d"][1]))
    assert tr.translation.plan == [(0, None), (0, ("shape", 1)), (1, None), (1, ("stride", 0)),
                                   (1, ("stride", 1)), (2, None), (2, ("shape", 0)),
                                   (2, ("shape", 1))]


def test_local_typing_rule():
    @jit.rawkernel()
    def k(x, out):
        acc = 0.0              # float64 from the first assignment
        n = 0                  # int64
        s = x[0]               # float32 from the array
        for i in range(x.size):
            acc += x[i]
            s = s + x[i] * 2.0     # float32: 2.0 is a weak Python float
            n += 1
        out[0] = acc + s + n

    t = k.inspect_types(f32(4), np.zeros(1))
    assert t["acc"] == np.float64 and t["n"] == np.int64 and t["s"] == np.float32
    assert t["i"] == np.int64


def test_local_first_assigned_in_loop_and_read_after():
    @jit.rawkernel()
    def k(x, out):
        for i in range(x.size):
            acc = x[i]
        out[0] = acc

    with pytest.raises(jit.JitError) as e:
        k.inspect_source(f32(4), f32(1))
    msg = str(e.value)
    assert "local 'acc' may be used before it is assigned" in msg
    assert "first assigned inside a loop (line" in msg and "assign it before the loop" in msg
    assert e.value.lineno == k.__wrapped__.__code__.co_firstlineno + 4


def test_local_used_before_first_assignment():
    @jit.rawkernel()
    def k(x):
        for i in range(x.size):
            if i > 0:
                x[i] = prev
            prev = x[i]

    with pytest.raises(jit.JitError, match="local 'prev' is used before its first assignment"):
        k.inspect_source(f32(4))


def test_local_loop_scoped_is_fine():
    @jit.rawkernel()
    def k(x):
        for i in range(x.size):
            v = x[i] * 2
            x[i] = v

    assert k.inspect_types(f32(4))["v"] == np.float32


def test_local_type_mismatch():
    @jit.rawkernel()
    def k(x):
        acc = 0
        for i in range(x.size):
            acc += x[i]

    with pytest.raises(jit.JitError) as e:
        k.inspect_source(f32(4))
    msg = str(e.value)
    assert "local 'acc' is int64 (from its first assignment, line" in msg
    assert "float64" in msg and "same_kind" in msg
    assert e.value.lineno == k.__wrapped__.__code__.co_firstlineno + 4


def test_error_unknown_name_with_line_and_source():
    @jit.rawkernel()
    def elementwise_square(x, y, size):
        tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        ntid = jit.gridDim.x * jit.blockDim.x
        for i in range(tid, size, ntd):  # noqa: F821
            y[i] = x[i] * x[i]

    with pytest.raises(jit.JitError) as e:
        elementwise_square.inspect_source(f32(4), f32(4), np.uint32(4))
    line = elementwise_square.__wrapped__.__code__.co_firstlineno + 4
    assert str(e.value).startswith(f"elementwise_square, line {line}: name 'ntd' is not "
                                   f"defined")
    assert f'File "{__file__}", line {line}' in str(e.value)
    assert "for i in range(tid, size, ntd)" in str(e.value)      # the line is shown
    assert e.value.lineno == line and e.value.function == "elementwise_square"


@pytest.mark.parametrize("body, expected", [
    ("y = [v for v in range(3)]", "unsupported construct: list comprehension"),
    ("try:\n    x[0] = 1\nexcept Exception:\n    pass", "unsupported construct: try statement"),
    ("with open('f') as f:\n    pass", "unsupported construct: with statement"),
    ("y = x[1:3]", "slicing"),
    ("y = lambda q: q", "unsupported construct: lambda"),
    ("y = x[-1]", "jit kernels do not wrap negative indices"),
    ("y = x[0.5]", "array index must be an integer"),
    ("y = x + 1", "on a whole array is not supported"),
    ("y = x[0] & 1.5", "the operator & is not defined for float32 and float"),
    ("print(x[0])", "print() is not supported"),
    ("y = x[0, 1]", "too many indices for a 1-d array"),
    ("for v in x:\n    pass", "iterate over range() only"),
    ("y = jit.shared_memory(np.float32, x.size)", "the size must be a positive integer known"),
    ("y = jit.atomic_add(x, 0, 1.0)", "jit.atomic_add"),
    ("y = jit.blockIdx.w", "jit.blockIdx has x, y and z, not 'w'"),
    ("return 1", "a kernel cannot return a value"),
    ("assert x[0] > 0", "unsupported construct: assert statement"),
])
def test_error_kinds_with_line(body, expected):
    src = "def kern(x):\n    pass\n" + textwrap.indent(body, "    ") + "\n"
    namespace = {"jit": jit, "np": np}
    exec(compile(src, "<kern-source>", "exec"), namespace)
    k = jit.rawkernel()(namespace["kern"])
    args = (np.zeros(4, np.float16 if "atomic" in body else np.float32),) \
        if "atomic" not in body else (np.zeros(4, np.int8),)
    with pytest.raises(jit.JitError) as e:
        k.inspect_source(*args)
    assert expected in str(e.value)
    assert e.value.lineno >= 3, str(e.value)
    assert str(e.value).startswith(f"kern, line {e.value.lineno}: ")


def test_wrong_argument_count_and_types():
    with pytest.raises(TypeError, match="takes 3 arguments but 2 were given"):
        elementwise_square.inspect_source(f32(4), f32(4))
    with pytest.raises(TypeError, match="host memory"):
        _kernel.arg_type(f32(4))
    with pytest.raises(TypeError, match="cannot be passed to a jit kernel"):
        elementwise_square.inspect_source(f32(4), f32(4), object())
    with pytest.raises(TypeError, match="float16 is not supported"):
        elementwise_square.inspect_source(np.zeros(4, np.float16), f32(4), 4)


def test_kernel_name_is_a_c_identifier():
    lam = jit.rawkernel()(lambda x: None)
    assert 'void lambda(float *x)' in lam.inspect_source(f32(2))

    def outer():
        @jit.rawkernel()
        def sqrt(x):
            x[0] = 1
        return sqrt

    assert 'void jt_u_sqrt(float *x)' in outer().inspect_source(f32(2))

    @jit.rawkernel()
    def op_add(x):              # names of gpuarr's headers are left to them
        int64_t = x[0] // 2
        ga_t = int64_t % 3
        x[1] = ga_t
    src = op_add.inspect_source(np.zeros(2, np.int64))
    assert "void jt_u_op_add(long long *x)" in src
    assert "jt_u_int64_t" in src and "jt_u_ga_t" in src


def test_device_function_is_specialised():
    src = use_device_function.inspect_source(f32(4), f32(4))
    assert "__device__ double clamp_dev1(float v, double lo, double hi)" in src
    src64 = use_device_function.inspect_source(np.zeros(4), np.zeros(4))
    assert "clamp_dev1(double v, double lo, double hi)" in src64
    with pytest.raises(TypeError, match="device function"):
        clamp((1,), (1,), (1.0, 0.0, 1.0))


def test_globals_and_closures_are_constants():
    scale = 3

    @jit.rawkernel()
    def k(x):
        x[0] = x[0] * scale + GLOBAL_OFFSET

    src = k.inspect_source(f32(2))
    assert "((x[0LL] * 3.0f) + 0.5f)" in src   # weak Python numbers keep float32


GLOBAL_OFFSET = 0.5


def test_repl_and_python_c_functions_translate(tmp_path):
    """CuPy's JIT reads the source and fails here; gpuarr reads the bytecode."""
    code = textwrap.dedent("""
        import numpy as np
        from gpuarr import jit
        exec('''
        @jit.rawkernel()
        def sq(x, y, size):
            for i in range(jit.grid(1), size, jit.gridsize(1)):
                y[i] = x[i] * x[i]
        ''', globals())
        print(sq.inspect_source(np.zeros(3, np.float32), np.zeros(3, np.float32), np.uint32(3)))
        try:
            exec('''
        @jit.rawkernel()
        def bad(x):
            x[0] = nope
        ''', globals())
            bad.inspect_source(np.zeros(3, np.float32))
        except jit.JitError as e:
            print("ERR", e)
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(cp.__file__)),
               GPUARR_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert 'extern "C" __global__ void sq(float *x, float *y, unsigned int size)' in out.stdout
    assert "ERR bad, line 4: name 'nope' is not defined" in out.stdout
    # in the interactive interpreter too (stdin is not a file)
    repl = subprocess.run([sys.executable, "-i", "-q"], input=code.replace(
        "import numpy", "import sys; sys.ps1 = sys.ps2 = ''\nimport numpy") + "\n",
        capture_output=True, text=True, env=env, timeout=120)
    assert 'void sq(float *x' in repl.stdout, repl.stderr


# ============================================================== emulation ====
# The generated C++ run on the CPU: one std::thread per CUDA thread of a
# block (blocks one after another), __syncthreads as a std::barrier,
# atomics as std::atomic_ref, __shared__ as static storage.

_HOST_PRELUDE = r"""
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>
using std::isnan; using std::isinf; using std::isfinite; using std::signbit;
using std::fmod; using std::copysign; using std::floor; using std::pow;
#define __CUDACC_RTC__      // gpuarr's headers (ufunc_ops.cuh) as NVRTC sees them
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) alignas(n)
struct dim3 { unsigned int x, y, z; };
static thread_local dim3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
static const int warpSize = 32;
static std::barrier<> *jt_bar;
static inline void __syncthreads() { jt_bar->arrive_and_wait(); }
static inline void __syncwarp(unsigned) {}
static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double f; std::memcpy(&f, &i, 8); return f; }
template <class T> T atomicAdd(T *p, T v) { return std::atomic_ref<T>(*p).fetch_add(v); }
template <class T> T atomicSub(T *p, T v) { return std::atomic_ref<T>(*p).fetch_sub(v); }
template <class T> T atomicExch(T *p, T v) { return std::atomic_ref<T>(*p).exchange(v); }
template <class T> T atomicAnd(T *p, T v) { return std::atomic_ref<T>(*p).fetch_and(v); }
template <class T> T atomicOr(T *p, T v) { return std::atomic_ref<T>(*p).fetch_or(v); }
template <class T> T atomicXor(T *p, T v) { return std::atomic_ref<T>(*p).fetch_xor(v); }
template <class T> T atomicMin(T *p, T v)
{ std::atomic_ref<T> a(*p); T o = a.load(); while (v < o && !a.compare_exchange_weak(o, v)) {} return o; }
template <class T> T atomicMax(T *p, T v)
{ std::atomic_ref<T> a(*p); T o = a.load(); while (v > o && !a.compare_exchange_weak(o, v)) {} return o; }
template <class T> T atomicCAS(T *p, T c, T v) { std::atomic_ref<T>(*p).compare_exchange_strong(c, v); return c; }
static unsigned atomicInc(unsigned *p, unsigned v)
{ std::atomic_ref<unsigned> a(*p); unsigned o = a.load(); while (!a.compare_exchange_weak(o, o >= v ? 0 : o + 1)) {} return o; }
static unsigned atomicDec(unsigned *p, unsigned v)
{ std::atomic_ref<unsigned> a(*p); unsigned o = a.load(); while (!a.compare_exchange_weak(o, (o == 0 || o > v) ? v : o - 1)) {} return o; }
"""

_LAUNCH = r"""
extern "C" void jt_launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, void **a)
{
    blockDim = {bx, by, bz};
    gridDim = {gx, gy, gz};
    unsigned n = bx * by * bz;
    for (unsigned z = 0; z < gz; ++z) for (unsigned y = 0; y < gy; ++y) for (unsigned x = 0; x < gx; ++x) {
        std::barrier<> bar(n);
        jt_bar = &bar;
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < n; ++t)
            ts.emplace_back([=] {
                threadIdx = {t % bx, (t / bx) % by, t / (bx * by)};
                blockIdx = {x, y, z};
                KERNEL_CALL;
                jt_bar->arrive_and_drop();
            });
        for (auto &th : ts) th.join();
    }
}
"""

_CTYPES = {"?": ctypes.c_bool, "b": ctypes.c_int8, "h": ctypes.c_int16, "i": ctypes.c_int32,
           "l": ctypes.c_int64, "q": ctypes.c_int64, "B": ctypes.c_uint8, "H": ctypes.c_uint16,
           "I": ctypes.c_uint32, "L": ctypes.c_uint64, "Q": ctypes.c_uint64,
           "f": ctypes.c_float, "d": ctypes.c_double}
_built = {}


def _rtc_includes(tmp_path):
    """g++ options for gpuarr's headers: their folder, and a
    <cuda/std/cstdint> that is the host's <cstdint> (under NVRTC without
    libcu++ the headers declare int64_t as long long, which clashes with the
    host's long)."""
    shim = tmp_path / "rtc-shim"
    (shim / "cuda" / "std").mkdir(parents=True, exist_ok=True)
    (shim / "cuda" / "std" / "cstdint").write_text("#include <cstdint>\n")
    return [f"-I{cp.cuda.compiler.include_dir()}", f"-I{shim}"]


def emulate(kernel, grid, block, args, tmp_path):
    """Run ``kernel`` on the CPU through its generated C++; NumPy arrays in
    ``args`` are updated in place."""
    types_ = tuple(_kernel.arg_type(a, describe=True) for a in args)
    tr = kernel._entry(types_).translation
    params, values = [], []
    for k, extra in tr.plan:
        a, t = args[k], types_[k]
        if extra is not None:
            what, axis = extra
            values.append(ctypes.c_int64((a.shape if what == "shape" else a.strides)[axis]))
            params.append("long long")
        elif isinstance(t, jit.Array):
            values.append(ctypes.c_void_p(a.ctypes.data))
            params.append(f"{_types_ctype(t.dtype)} *")
        else:
            values.append(_CTYPES[t.char](a))
            params.append(_types_ctype(t))
    call = f"{tr.name}(" + ", ".join(f"*({p} *)a[{k}]" for k, p in enumerate(params)) + ")"
    src = _HOST_PRELUDE + tr.source.replace(
        "extern __shared__ __align__(16) unsigned char jt_dynamic_shared[];",
        "alignas(16) static unsigned char jt_dynamic_shared[1 << 16];") + \
        _LAUNCH.replace("KERNEL_CALL", call)
    key = hashlib.sha256(src.encode()).hexdigest()[:16]
    lib = _built.get(key)
    if lib is None:
        cpp, so = tmp_path / f"{key}.cpp", tmp_path / f"{key}.so"
        cpp.write_text(src)
        out = subprocess.run(["g++", "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", "-w",
                              *_rtc_includes(tmp_path), "-o", str(so), str(cpp)],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr + "\n" + src
        lib = _built[key] = ctypes.CDLL(str(so))
    ptrs = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    g = tuple(grid) + (1,) * (3 - len(grid))
    b = tuple(block) + (1,) * (3 - len(block))
    lib.jt_launch(*[ctypes.c_uint(v) for v in g + b], ptrs)


def _types_ctype(dt):
    from gpuarr.jit._types import ctype
    return ctype(dt)


def run_python(kernel, grid, block, args):
    """The kernel's Python function run thread by thread on NumPy data (no
    barriers: for kernels without syncthreads)."""
    g = tuple(grid) + (1,) * (3 - len(grid))
    b = tuple(block) + (1,) * (3 - len(block))
    dim = lambda v: types.SimpleNamespace(x=np.uint32(v[0]), y=np.uint32(v[1]), z=np.uint32(v[2]))  # noqa: E731
    fake = types.SimpleNamespace()

    def atomic(op):
        def f(arr, idx, *vals):
            old = arr[idx]
            arr[idx] = op(old, *[arr.dtype.type(v) for v in vals])
            return old
        return f

    fake.atomic_add = atomic(lambda o, v: o + v)
    fake.atomic_sub = atomic(lambda o, v: o - v)
    fake.atomic_min = atomic(min)
    fake.atomic_max = atomic(max)
    fake.atomic_or = atomic(lambda o, v: o | v)
    fake.atomic_and = atomic(lambda o, v: o & v)
    fake.atomic_xor = atomic(lambda o, v: o ^ v)
    fake.atomic_exch = atomic(lambda o, v: v)
    fake.atomic_cas = atomic(lambda o, c, v: v if o == c else o)
    func = kernel._func
    gl = dict(func.__globals__, jit=fake, cp=np)
    f = types.FunctionType(func.__code__, gl, func.__name__, func.__defaults__, func.__closure__)
    fake.blockDim, fake.gridDim = dim(b), dim(g)
    fake.grid = lambda n: (fake.blockIdx.x * fake.blockDim.x + fake.threadIdx.x if n == 1 else
                           tuple(getattr(fake.blockIdx, a) * getattr(fake.blockDim, a) +
                                 getattr(fake.threadIdx, a) for a in "xyz"[:n]))
    fake.gridsize = lambda n: fake.blockDim.x * fake.gridDim.x
    with np.errstate(all="ignore"):
        for bz in range(g[2]):
            for by in range(g[1]):
                for bx in range(g[0]):
                    for t in range(b[0] * b[1] * b[2]):
                        fake.blockIdx = dim((bx, by, bz))
                        fake.threadIdx = dim((t % b[0], (t // b[0]) % b[1], t // (b[0] * b[1])))
                        f(*args)


@needs_cxx
def test_emulated_elementwise_square(rng, tmp_path):
    x = rng.random(1000, dtype=np.float32)
    y = np.zeros_like(x)
    emulate(elementwise_square, (2,), (64,), (x, y, np.uint32(x.size)), tmp_path)
    np.testing.assert_array_equal(y, x * x)


@needs_cxx
def test_emulated_vector_add_and_histograms(rng, tmp_path):
    a, b = rng.random(200, dtype=np.float32), rng.random(200, dtype=np.float32)
    c = np.zeros_like(a)
    emulate(vector_add, (4,), (64,), (a, b, c, np.int32(200)), tmp_path)
    np.testing.assert_array_equal(c, a + b)
    data = rng.integers(0, 256, 512).astype(np.int32)
    for k in (histogram, histogram_shared):
        out = np.zeros(256, np.int32)
        emulate(k, (2,), (256,), (data, out), tmp_path)
        np.testing.assert_array_equal(out, np.bincount(data, minlength=256))


@needs_cxx
def test_emulated_2d_strided(rng, tmp_path):
    a = rng.random((5, 7))
    big = rng.random((14, 15))
    b = big[::2, ::3]                    # (7, 5), strided
    out = np.zeros((5, 7))
    emulate(add_2d, (2, 2), (4, 4), (a, b, out), tmp_path)
    np.testing.assert_allclose(out, a + 2 * b.T)


@needs_cxx
def test_emulated_control_flow_matches_python(rng, tmp_path):
    x = rng.integers(-20, 20, 50)
    out_c, out_py = np.zeros(50, np.int64), np.zeros(50, np.int64)
    emulate(control_flow, (1,), (64,), (x, out_c, 7), tmp_path)
    run_python(control_flow, (1,), (64,), (x, out_py, 7))
    np.testing.assert_array_equal(out_c, out_py)


@needs_cxx
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint32, np.float32,
                                   np.float64])
def test_emulated_division_and_modulo_follow_numpy(dtype, rng, tmp_path):
    n = 64
    if np.dtype(dtype).kind == "f":
        a = (rng.standard_normal(n) * 10).astype(dtype)
        b = (rng.standard_normal(n) * 3).astype(dtype)
    else:
        lo = 0 if np.dtype(dtype).kind == "u" else -50
        a = rng.integers(lo, 50, n).astype(dtype)
        b = rng.integers(lo, 7, n).astype(dtype)
        b[:4] = 0                           # NumPy (and gpuarr): division by zero gives 0
    q, r, t = np.zeros_like(a), np.zeros_like(a), np.zeros(n)
    emulate(int_division, (1,), (64,), (a, b, q, r, t), tmp_path)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(q, a // b)
        np.testing.assert_array_equal(r, a % b)
        np.testing.assert_allclose(t, (a / b).astype(np.float64), rtol=1e-6)


@jit.rawkernel()
def integer_ops(a, b, out):
    i = jit.grid(1)
    if i < a.size:
        out[0, i] = a[i] ** b[i]
        out[1, i] = a[i] << b[i]
        out[2, i] = a[i] >> b[i]
        out[3, i] = max(a[i], b[i])
        out[4, i] = min(a[i], b[i])
        out[5, i] = cp.sign(a[i])
        out[6, i] = abs(a[i])
        out[7, i] = cp.fmod(a[i], b[i])
        out[8, i] = cp.fmax(a[i], b[i]) + cp.fmin(a[i], b[i]) + cp.floor(a[i])


@needs_cxx
@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.uint32])
def test_emulated_integer_ops_follow_numpy(dtype, rng, tmp_path):
    # power, shifts, maximum/minimum, sign, abs and fmod are gpuarr's functors
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    n = 64
    a = rng.integers(max(info.min, -9), 10, n).astype(dt)
    b = rng.integers(max(info.min, -3), 6, n).astype(dt)
    a[:6] = [1, info.max, info.min, 3, 7, info.min]
    b[:6] = [9 * dt.itemsize, 8 * dt.itemsize, 1, 0, 8 * dt.itemsize + 1, 0]
    if dt.kind == "i":
        a[6:10], b[6:10] = [-1, -1, 1, info.min], [-3, -2, -5, -1]
    out = np.zeros((9, n), dt)
    emulate(integer_ops, (1,), (64,), (a, b, out), tmp_path)
    with np.errstate(all="ignore"):
        neg = b < 0               # NumPy refuses; gpuarr: 0, or +-1 for bases +-1
        safe_b = np.where(neg, 0, b)
        power = np.where(neg, np.where(a == 1, 1, np.where(a == -1, np.where(b % 2, -1, 1), 0)),
                         a ** safe_b).astype(dt)
        expect = [power, np.left_shift(a, b), np.right_shift(a, b), np.maximum(a, b),
                  np.minimum(a, b), np.sign(a), np.abs(a), np.fmod(a, b),
                  np.fmax(a, b) + np.fmin(a, b) + np.floor(a)]
    for k, e in enumerate(expect):
        np.testing.assert_array_equal(out[k], e, err_msg=f"row {k}")
    if HAVE_NVRTC:
        tr = translation(integer_ops, (a, b, out))
        compile_code(tr.source, options=tr.options, arch=90)


@jit.rawkernel()
def float_ops(a, b, out):
    i = jit.grid(1)
    if i < a.size:
        out[0, i] = max(a[i], b[i])
        out[1, i] = min(a[i], b[i])
        out[2, i] = cp.sign(a[i])
        out[3, i] = a[i] // b[i]
        out[4, i] = a[i] % b[i]
        out[5, i] = a[i] ** b[i]


@needs_cxx
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_emulated_float_ops_follow_numpy(dtype, rng, tmp_path):
    n = 32
    a = (rng.standard_normal(n) * 4).astype(dtype)
    b = (rng.standard_normal(n) * 2).astype(dtype)
    a[:6] = [np.nan, 1, -0.0, 0.0, np.inf, -5]
    b[:6] = [1, np.nan, 2, -0.0, 3, 0]
    out = np.zeros((6, n), dtype)
    emulate(float_ops, (1,), (64,), (a, b, out), tmp_path)
    with np.errstate(all="ignore"):
        expect = [np.maximum(a, b), np.minimum(a, b), np.sign(a), a // b, a % b]
        for k, e in enumerate(expect):
            np.testing.assert_array_equal(out[k], e, err_msg=f"row {k}")
        np.testing.assert_allclose(out[5], a ** b, rtol=1e-6)
    assert np.signbit(out[2, 2]) == np.signbit(np.sign(a[2]))     # sign(-0.0) is +0.0
    src = float_ops.inspect_source(a, b, out)
    assert ("powf(" if dtype == np.float32 else "pow(") in src     # ** on floats: no functor
    if HAVE_NVRTC:
        tr = translation(float_ops, (a, b, out))
        compile_code(tr.source, options=tr.options, arch=90)


@needs_cxx
def test_emulated_float32_math(rng, tmp_path):
    x = (rng.random(100) * 4).astype(np.float32)
    y = np.zeros_like(x)
    emulate(float32_math, (2,), (64,), (x, y), tmp_path)
    ref = (np.sqrt(x) + np.sin(x) * np.float32(2.0) + np.abs(x - np.float32(1))
           + np.maximum(x, np.float32(0.5)))
    ref = ref + np.exp(-x) * np.floor(x * np.float32(3))
    assert ref.dtype == np.float32
    np.testing.assert_allclose(y, ref, rtol=2e-6)
    t = float32_math.inspect_types(x, y)
    assert t["v"] == np.float32
    src = float32_math.inspect_source(x, y)
    assert "sqrtf(" in src and "sinf(" in src and "expf(" in src and "floorf(" in src
    assert "double" not in src.split("float32_math(")[1]


@needs_cxx
def test_emulated_atomics(rng, tmp_path):
    x = rng.integers(0, 1000, 200).astype(np.int32)
    counts, lo, hi = np.array([0, 0, -1, 0], np.int32), np.array([10**6], np.int32), \
        np.array([-1], np.int32)
    bits = np.array([0, -1, 0], np.int32)
    emulate(atomics, (4,), (64,), (counts, lo, hi, bits, x), tmp_path)
    assert counts[0] == 200 and counts[1] == -200
    assert counts[2] in x and counts[3] == 7
    assert lo[0] == x.min() and hi[0] == x.max()
    expect_or = np.bitwise_or.reduce(np.left_shift(1, x % 31).astype(np.int32))
    assert bits[0] == expect_or
    assert bits[1] == np.bitwise_and.reduce(~np.left_shift(1, x % 31).astype(np.int32))
    assert bits[2] == np.bitwise_xor.reduce(x)
    c = np.array([5, 5], np.uint32)
    emulate(atomic_inc_dec, (1,), (8,), (c,), tmp_path)
    assert list(c) == [3, 7]           # 5+8 wraps past 9 to 3; 5-8 wraps below 0 at 9 -> 7


@needs_cxx
def test_emulated_device_function_and_dynamic_shared(rng, tmp_path):
    x = rng.random(128, dtype=np.float32)
    y = np.zeros_like(x)
    emulate(use_device_function, (2,), (64,), (x, y), tmp_path)
    np.testing.assert_array_equal(y, np.clip(x, 0.25, 0.75))
    y2 = np.zeros_like(x)
    emulate(reverse_dynamic, (2,), (64,), (x, y2), tmp_path)
    np.testing.assert_array_equal(y2, x.reshape(2, 64)[:, ::-1].ravel())


@needs_cxx
def test_emulated_ternary_and_short_circuit_values(tmp_path):
    @jit.rawkernel()
    def k(x, out):
        i = jit.grid(1)
        v = x[i]
        out[i] = (v if v > 2 else -v) + (v > 0 and v or 100) * 10 + (v < 0 or 3 < v < 6)

    x = np.arange(-4, 12, dtype=np.int64)
    out_c, out_py = np.zeros(16, np.int64), np.zeros(16, np.int64)
    emulate(k, (1,), (16,), (x, out_c), tmp_path)
    run_python(k, (1,), (16,), (x, out_py))
    np.testing.assert_array_equal(out_c, out_py)


# =================================================================== GPU ====



@pytest.mark.gpu
def test_gpu_course_example_both_launch_styles(rng):
    size = cp.uint32(2 ** 22)
    x = cp.arange(size, dtype=cp.float32)
    y = cp.empty((size,), dtype=cp.float32)
    elementwise_square((128,), (1024,), (x, y, size))
    np.testing.assert_array_equal(y.get(), x.get() ** 2)
    y2 = cp.zeros((size,), dtype=cp.float32)
    elementwise_square[128, 1024](x, y2, size)
    np.testing.assert_array_equal(y2.get(), x.get() ** 2)


@pytest.mark.gpu
def test_gpu_vector_add_with_stream(rng):
    n = 10000
    a = cp.asarray(rng.random(n, dtype=np.float32))
    b = cp.asarray(rng.random(n, dtype=np.float32))
    c = cp.zeros(n, dtype=cp.float32)
    s = cp.cuda.Stream()
    vector_add[(n + 255) // 256, 256](a, b, c, n, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(c.get(), a.get() + b.get())


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", [histogram, histogram_shared])
def test_gpu_histograms(kernel, rng):
    data = rng.integers(0, 256, 2 ** 16).astype(np.int32)
    out = cp.zeros(256, dtype=cp.int32)
    kernel((2 ** 16 // 256,), (256,), (cp.asarray(data), out))
    np.testing.assert_array_equal(out.get(), np.bincount(data, minlength=256))


@pytest.mark.gpu
def test_gpu_2d_strided_and_int_division(rng):
    a = rng.random((50, 70))
    big = rng.random((140, 150))
    out = cp.zeros((50, 70))
    add_2d[(4, 4), (16, 32)](cp.asarray(a), cp.asarray(big)[::2, ::3][:70, :50], out)
    np.testing.assert_allclose(out.get(), a + 2 * big[::2, ::3][:70, :50].T)
    x = rng.integers(-100, 100, 1000)
    d = rng.integers(-9, 9, 1000)
    q, r, t = cp.zeros(1000, np.int64), cp.zeros(1000, np.int64), cp.zeros(1000)
    int_division[4, 256](cp.asarray(x), cp.asarray(d), q, r, t)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(q.get(), x // d)
        np.testing.assert_array_equal(r.get(), x % d)


@pytest.mark.gpu
def test_gpu_float32_math_and_device_function(rng):
    x = (rng.random(4096) * 4).astype(np.float32)
    y = cp.zeros(4096, dtype=cp.float32)
    float32_math[16, 256](cp.asarray(x), y)
    ref = (np.sqrt(x) + np.sin(x) * np.float32(2) + np.abs(x - 1) + np.maximum(x, 0.5)
           + np.exp(-x) * np.floor(x * 3)).astype(np.float32)
    np.testing.assert_allclose(y.get(), ref, rtol=1e-5)
    use_device_function[16, 256](cp.asarray(x), y)
    np.testing.assert_array_equal(y.get(), np.clip(x, 0.25, 0.75))


@pytest.mark.gpu
def test_gpu_dynamic_shared_memory(rng):
    x = rng.random(8 * 128, dtype=np.float32)
    y = cp.zeros(x.size, dtype=cp.float32)
    reverse_dynamic((8,), (128,), (cp.asarray(x), y), shared_mem=128 * 4)
    np.testing.assert_array_equal(y.get(), x.reshape(8, 128)[:, ::-1].ravel())


@pytest.mark.gpu
def test_gpu_atomics(rng):
    x = rng.integers(0, 1000, 4096).astype(np.int32)
    counts = cp.asarray(np.array([0, 0, -1, 0], np.int32))
    lo, hi = cp.asarray(np.array([10 ** 6], np.int32)), cp.asarray(np.array([-1], np.int32))
    bits = cp.asarray(np.array([0, -1, 0], np.int32))
    atomics[16, 256](counts, lo, hi, bits, cp.asarray(x))
    c = counts.get()
    assert c[0] == 4096 and c[1] == -4096 and c[3] == 7
    assert lo.get()[0] == x.min() and hi.get()[0] == x.max()
    assert bits.get()[2] == np.bitwise_xor.reduce(x)


@jit.rawkernel()
def complex_arith(z, w, out):
    i = jit.grid(1)
    if i < z.size:
        a = z[i] * w[i] + 1.5
        out[i] = abs(a) + a.real - a.conjugate().imag + (a / z[i]).real
        z[i] = a - 2j


@needs_cxx
def test_emulated_complex(rng, tmp_path):
    z = (rng.standard_normal(40) + 1j * rng.standard_normal(40)).astype(np.complex64)
    w = (rng.standard_normal(40) + 1j * rng.standard_normal(40)).astype(np.complex64)
    out = np.zeros(40, np.float32)
    z0 = z.copy()
    emulate(complex_arith, (1,), (64,), (z, w, out), tmp_path)
    a = z0 * w + np.float32(1.5)
    assert a.dtype == np.complex64
    np.testing.assert_allclose(out, np.abs(a) + a.real - a.conj().imag + (a / z0).real,
                               rtol=1e-5, atol=1e-5)
    # a = z * w + 1.5 rounds differently with a fused multiply-add, by about
    # an ulp of |z| |w|, which is large beside a component that cancels
    np.testing.assert_allclose(z, a - 2j, rtol=1e-6, atol=1e-6 * (1 + np.abs(z0 * w).max()))
    assert complex_arith.inspect_types(z, w, out)["a"] == np.complex64
    if HAVE_NVRTC:
        tr = translation(complex_arith, (z, w.astype(np.complex128), out))
        compile_code(tr.source, options=tr.options, arch=90)
