"""Cases of issue 3: elementwise operations."""
import numpy as np

from _checks import EXACT, uniform_f32
from _inputs import GiB, N4M, NOISE, host_random, sky
from _registry import Registry

CASES = Registry()
case, fresh_case = CASES.case, CASES.fresh_case


@case("add_f32_1GiB", issue=3, desc="x + y", size="2 x 2^28 f32 (1 GiB each)",
      goal=">= 95% copy", bytes=3 * GiB, cupy_ref="2526 GB/s", requires=("add",), tol=EXACT,
      setup=lambda: (host_random(GiB // 4), host_random(GiB // 4, seed=1)))
def add_1gib(xp, x, y):
    return lambda: x + y


@case("where_2048", issue=3, desc="segmentation where(img > t, 1, 0)", size="2048^2 f32 -> i64",
      goal="<= 20 us", bytes=N4M * 12, cupy_ref="63 us", cpu=True, tol=EXACT,
      requires=("where", "greater"), setup=lambda: (sky(),))
def where(xp, img):
    return lambda: xp.where(img > 5 * NOISE, 1, 0)


@case("add_overhead_1000", issue=3, kind="host", desc="host time per x + y (20,000 calls, one sync)",
      size="1000 f64", goal="<= 4 us", cupy_ref="12.5 us", floor_note="~3.5 us (a launch)",
      requires=("add",), setup=lambda: (host_random(1000, np.float64), host_random(1000, np.float64, 1)))
def add_overhead(xp, x, y):
    return lambda: x + y


@case("softplus_1e5", issue=3, desc="maximum(0, x) + log1p(exp(-abs(x)))", size="1e5 f64",
      goal="<= 35 us", cupy_ref="97 us", floor_note="launch-bound",
      requires=("maximum", "log1p", "exp", "abs", "negative", "add"),
      setup=lambda: (10 * host_random(10 ** 5, np.float64) - 5,))
def softplus(xp, x):
    return lambda: xp.maximum(0, x) + xp.log1p(xp.exp(-xp.abs(x)))


@case("sincos_1e7", issue=3, desc="sin(x) + cos(y) / sqrt(z), separate calls", size="1e7 f64",
      goal="<= 0.3 ms", bytes=4 * 8e7, cupy_ref="0.344 ms (fused 0.138)",
      requires=("sin", "cos", "sqrt", "divide", "add"),
      setup=lambda: tuple(host_random(10 ** 7, np.float64, s) + 0.5 for s in range(3)))
def sincos(xp, x, y, z):
    return lambda: xp.sin(x) + xp.cos(y) / xp.sqrt(z)


fresh_case("first_add", issue=3, desc="fresh process: first a + b after context creation",
           size="1000 f64", goal="<= 5 ms", cupy_ref="137 ms", requires=("add",),
           prep="a = xp.ones(1000); b = xp.ones(1000)", steps=(("add", "a + b"),))

fresh_case("first_sin", issue=3, desc="fresh process: first sin(a) after context creation",
           size="1000 f64", goal="<= 5 ms", cupy_ref="157 ms", requires=("sin",),
           prep="a = xp.ones(1000)", steps=(("sin", "xp.sin(a)"),))


@case("random_f32_2e28", issue=3, desc="random.random(2**28, dtype=float32)",
      size="2^28 f32 (1 GiB)", goal=">= 80% copy", bytes=GiB, requires=("random.random",),
      reference=False, check=uniform_f32(1 << 28))
def random_f32(xp):
    return lambda: xp.random.random(1 << 28, dtype=xp.float32)
