"""Cases of issue 2 (transfers, allocation, import, first calls) and issue 6
(benchmark()'s own cost)."""
import numpy as np

from _checks import EXACT
from _inputs import host_random
from _registry import Host, Registry

CASES = Registry()
case, fresh_case = CASES.case, CASES.fresh_case


@case("h2d_32MB", issue=2, kind="transfer", desc="gp.asarray(pageable host array)",
      size="4M f64 (32 MiB)", goal=">= 25 GB/s", h2d=8 << 22, cupy_ref="8.8 GB/s", tol=EXACT,
      requires=("asarray",),
      setup=lambda: (Host(host_random(1 << 22, np.float64)),))
def h2d(xp, host):
    return lambda: xp.asarray(host)


@case("d2h_32MB", issue=2, kind="transfer", desc="gp.asnumpy(device array), a new NumPy array",
      size="4M f64 (32 MiB)", goal=">= 25 GB/s", d2h=8 << 22, cupy_ref="2.9 GB/s", tol=EXACT,
      requires=("asnumpy",),
      setup=lambda: (host_random(1 << 22, np.float64),))
def d2h(xp, x):
    return lambda: xp.asnumpy(x)


@case("ones_1000x1000x200", issue=2, desc="ones((1000, 1000, 200)); the pool reuses the block",
      size="200M f64 (1.6 GB)", goal="<= 0.6 ms", bytes=1.6e9, cupy_ref="0.96 ms", tol=EXACT)
def ones(xp):
    return lambda: xp.ones((1000, 1000, 200))


@case("strided_copy_2048", issue=22, desc="dst[56:2104, 56:2104] = img: a copy between strided "
      "views (the FFT convolution's padding)", size="2048^2 f64", goal="<= 30 us",
      bytes=2 * 8 * 2048 * 2048, tol=EXACT, requires=("ndarray.__setitem__",),
      setup=lambda: (host_random(2048 * 2048, np.float64).reshape(2048, 2048),))
def strided_copy(xp, img):
    dst = xp.zeros((2160, 2160))

    def run():
        dst[56:2104, 56:2104] = img
        return dst
    return run


fresh_case("import_time", issue=2, desc="import in a fresh process (NumPy column: import numpy)",
           size="-", goal="<= 0.1 s", cupy_ref="0.5-1.1 s")

fresh_case("first_op", issue=2, size="-", goal="<= 5 ms",
           desc="fresh process: context (first zeros(1)), then first ones, first arange",
           steps=(("ones((1000,))", "xp.ones((1000,))"),
                  ("arange(f32)", "xp.arange(10, dtype=xp.float32)")))


def _noop():
    pass


@case("benchmark_overhead", issue=6, kind="host", calls=20, repeats=1000,
      desc="benchmark(noop, n_repeat=1000): host time per repeat", size="-", goal="<= 3 us",
      requires=("profiler.benchmark",),
      floor_note="2 event records + 1 sync", reference=False,
      check=lambda got, ref: (None if np.shape(np.asarray(got).item().cpu_times) == (1000,)
                              else "benchmark() did not return 1000 CPU times"))
def benchmark_overhead(xp):
    if xp.name == "cupy":
        import cupyx.profiler
        bench = cupyx.profiler.benchmark
    else:
        bench = xp.profiler.benchmark
    return lambda: bench(_noop, n_repeat=1000, n_warmup=0)
