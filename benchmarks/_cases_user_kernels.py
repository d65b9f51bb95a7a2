"""Cases of issues 17 and 18: user-written kernels (RawKernel,
ElementwiseKernel, ReductionKernel, fuse)."""
import numpy as np

from _inputs import GiB, host_random
from _registry import Registry

CASES = Registry()
case, fresh_case = CASES.case, CASES.fresh_case


VECTOR_ADD = r"""
extern "C" __global__ void vector_add(const float *A, const float *B, float *C, const int size)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    if (item < size) C[item] = A[item] + B[item];
}
"""
# Arrays made without compiling anything in CuPy either (empty, no fill
# kernel), so the timed step pays NVRTC's first compile in both libraries.
_KPREP = ("a = xp.empty(1024, dtype=xp.float32); b = xp.empty(1024, dtype=xp.float32); "
          "c = xp.empty(1024, dtype=xp.float32)")
_RAW_STEP = (f"k = xp.RawKernel({VECTOR_ADD!r}, 'vector_add'); "
             "k((2,), (512,), (a, b, c, xp.int32(1024)))")
_EW_STEP = ("k = xp.ElementwiseKernel('float32 x, float32 y', 'float32 z', "
            "'z = (x - y) * (x - y)', 'squared_diff'); k(a, b)")
_RED_STEP = ("k = xp.ReductionKernel('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', "
             "'l2norm'); k(a)")
_FUSE_STEP = ("f = xp.fuse(kernel_name='squared_diff')(lambda x, y: (x - y) * (x - y)); f(a, b)")

# (label, issue, what, step, gpuarr name, (cold goal, CuPy), (warm goal, CuPy))
_FIRST_CALLS = (
    ("rawkernel", 17, "RawKernel(vector add)", _RAW_STEP, "RawKernel",
     ("<= 30 ms", "32 ms"), ("<= 0.5 ms", "0.49 ms")),
    ("elementwise", 18, "ElementwiseKernel", _EW_STEP, "ElementwiseKernel",
     ("<= 40 ms", "87 ms"), ("<= 1 ms", "0.42 ms")),
    ("reduction", 18, "ReductionKernel (L2 norm)", _RED_STEP, "ReductionKernel",
     ("<= 40 ms", "3.30 s"), ("<= 1 ms", "31 ms")),
    ("fuse", 18, "fuse (squared diff)", _FUSE_STEP, "fuse",
     ("<= 40 ms", "127 ms"), ("<= 1 ms", "1.2 ms")),
)
for _label, _issue, _what, _step, _name, _cold, _warm in _FIRST_CALLS:
    for _w, (_goal, _ref) in (("cold", _cold), ("warm", _warm)):
        fresh_case(f"first_{_label}_{_w}", issue=_issue, size="1024 f32",
                   warm_cache=_w == "warm", goal=_goal, cupy_ref=_ref, requires=(_name,),
                   desc=f"fresh process, {_w} kernel cache: {_what} + first call",
                   prep=_KPREP, steps=((_label, _step),))


@case("rawkernel_overhead", issue=17, kind="host", desc="host time per RawKernel call, 4 args",
      size="1000 f32", goal="<= 4.5 us", cupy_ref="6.9 us", floor_note="~3 us (a launch)",
      requires=("RawKernel",), reference=False, check=lambda got, ref: None,
      setup=lambda: (host_random(1000), host_random(1000, seed=1)))
def rawkernel_overhead(xp, a, b):
    c = xp.empty_like(a)
    k = xp.RawKernel(VECTOR_ADD, "vector_add")
    n = np.int32(1000)
    return lambda: k((4,), (256,), (a, b, c, n))


@case("elementwise_overhead", issue=18, kind="host",
      desc="host time per ElementwiseKernel call (output allocated)", size="1000 f32",
      goal="<= 5 us", cupy_ref="11.3 us", floor_note="~3 us (a launch)",
      requires=("ElementwiseKernel",), tol=(1e-6, 1e-7),
      setup=lambda: (host_random(1000), host_random(1000, seed=1)))
def elementwise_overhead(xp, a, b):
    if xp.name == "numpy":
        return lambda: (a - b) * (a - b)
    k = xp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)",
                             "squared_diff")
    return lambda: k(a, b)


@case("fuse_overhead", issue=18, kind="host", desc="host time per fused call (output allocated)",
      size="1000 f32", goal="<= 5 us", cupy_ref="13.6 us", floor_note="~3 us (a launch)",
      requires=("fuse",), tol=(1e-6, 1e-7),
      setup=lambda: (host_random(1000), host_random(1000, seed=1)))
def fuse_overhead(xp, a, b):
    if xp.name == "numpy":
        return lambda: (a - b) * (a - b)
    f = xp.fuse(kernel_name="squared_diff")(lambda x, y: (x - y) * (x - y))
    return lambda: f(a, b)


@case("fused_sincos_1e7", issue=18, desc="fuse: sin(x) + cos(y) / sqrt(x + 1)", size="1e7 f64",
      goal="<= 65 us", bytes=3 * 8e7, cupy_ref="77.7 us (separate ops 396 us)",
      requires=("fuse",), tol=(1e-12, 1e-12),
      setup=lambda: tuple(host_random(10 ** 7, np.float64, s) for s in range(2)))
def fused_sincos(xp, x, y):
    # a def, not a lambda (CuPy 14 cannot fuse a lambda), and not named sincos
    # (CuPy names the kernel after it, and CUDA has a sincos function)
    def sin_cos_sqrt(x, y):
        return xp.sin(x) + xp.cos(y) / xp.sqrt(x + 1)

    if xp.name == "numpy":
        return lambda: sin_cos_sqrt(x, y)
    f = xp.fuse()(sin_cos_sqrt)
    return lambda: f(x, y)


@case("l2norm_1GiB", issue=18, desc="ReductionKernel L2 norm (the course's), full reduction",
      size="2^28 f32 (1 GiB)", goal=">= 90% copy", bytes=GiB, requires=("ReductionKernel",),
      tol=(1e-4, 0), setup=lambda: (host_random(GiB // 4),))
def l2norm_1gib(xp, x):
    if xp.name == "numpy":
        return lambda: np.sqrt(np.sum(x.astype(np.float64) ** 2)).astype(np.float32)
    k = xp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    return lambda: k(x)
