"""Cases of issue 4: reductions, selection, compaction and the lesson's clipper."""
from _checks import EXACT, same_clip
from _inputs import GiB, N4M, NOISE, host_random, sky
from _lesson import lesson_clipper
from _registry import Registry

CASES = Registry()
case, fresh_case = CASES.case, CASES.fresh_case


@case("sum_f32_1GiB", issue=4, desc="sum(x)", size="2^28 f32 (1 GiB)", goal=">= 95% copy",
      bytes=GiB, cupy_ref="3003 GB/s", requires=("sum",), tol=(1e-4, 0),
      setup=lambda: (host_random(GiB // 4),))
def sum_1gib(xp, x):
    return lambda: xp.sum(x)


@case("median_4M", issue=4, desc="median of the sky image's pixels", size="4.2M f32",
      goal="<= 60 us", bytes=4 * N4M, cupy_ref="0.23 ms", requires=("median",), tol=(1e-6, 0),
      setup=lambda: (sky().ravel(),))
def median(xp, x):
    return lambda: xp.median(x)


@case("std_4M", issue=4, desc="std of the sky image's pixels", size="4.2M f32", goal="<= 30 us",
      bytes=4 * N4M, cupy_ref="1.41 ms", requires=("std",), tol=(1e-4, 0),
      setup=lambda: (sky().ravel(),))
def std(xp, x):
    return lambda: xp.std(x)


@case("compress_4M", issue=4, desc="x.compress(x > t), keeping 99.9%", size="4.2M f32",
      goal="<= 40 us", bytes=8 * N4M, cupy_ref="0.13 ms", tol=EXACT,
      requires=("greater", "ndarray.compress"), setup=lambda: (sky().ravel(),))
def compress(xp, x):
    return lambda: x.compress(x > -3 * NOISE)


@case("kappa_sigma_2048", issue=4, desc="the lesson's kappa-sigma clipper on the sky",
      size="2048^2 f32", goal="<= 1.5 ms", cupy_ref="16.2 ms", cpu=True,
      floor_note="~0.3 ms", check=same_clip,
      requires=("median", "std", "greater", "less", "add", "subtract", "multiply",
                "ndarray.compress"),
      setup=lambda: (sky().ravel(),))
def kappa_sigma(xp, data_flat):
    return lambda: lesson_clipper(data_flat, xp=xp)


fresh_case("first_median", issue=4, desc="fresh process: first median after context creation",
           size="4.2M f32", goal="<= 10 ms", cupy_ref="4.56 s", requires=("median",),
           prep="x = xp.arange(4194304, dtype=xp.float32)", steps=(("median", "xp.median(x)"),))
