"""The lesson's own code, in one place: the tests compare against it, and
benchmarks/ and tools/ (run as scripts from the repository root) time it."""
import numpy as np

# The gpuarr operations the lesson's cells call (tests/test_lesson.py runs
# them), as dotted names under gpuarr, in the lesson's order;
# tests/test_benchmark_coverage.py checks that benchmarks/run.py has a row
# for each, or says why not.
LESSON_OPERATIONS = (
    "asarray", "scipy.signal.convolve2d", "profiler.benchmark", "allclose", "asnumpy",
    "convolve", "ndarray.mean", "median", "std", "amax", "ndarray.compress", "greater", "less",
    "subtract", "multiply", "add", "where", "empty", "scipy.ndimage.label", "arange",
    "scipy.ndimage.center_of_mass", "scipy.ndimage.sum_labels")


def lesson_clipper(data_flat, kappa=3, xp=np, std=None, trace=None):
    """The lesson's kappa_sigma_clipper, verbatim but for kappa (3 in the
    lesson), the array module (np in the lesson; np dispatches device
    arrays to gpuarr, xp=gpuarr calls it directly) and two hooks for the
    tests: std, the function that measures the spread (xp.std in the lesson),
    and trace, a list given (lower bound, upper bound, survivors) each pass."""
    spread = xp.std if std is None else std
    while True:
        med = xp.median(data_flat)
        std_ = spread(data_flat)
        lower, upper = med - kappa * std_, med + kappa * std_
        clipped_lower = data_flat.compress(data_flat > lower)
        clipped_both = clipped_lower.compress(clipped_lower < upper)
        if trace is not None:
            trace.append((lower, upper, clipped_both.size))
        if len(clipped_both) == len(data_flat):
            break
        data_flat = clipped_both
    return data_flat
