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


def clip_sample(rng, shape, dtype=np.float32, outliers=0.03):
    """Sigma clipping's test data: normal values around 10 with a fraction
    of large positive and negative outliers (integers: x 4, rounded)."""
    x = rng.normal(10.0, 2.0, shape)
    flat = x.reshape(-1)
    k = max(1, int(flat.size * outliers))
    idx = rng.choice(flat.size, k, replace=False)
    flat[idx] += rng.choice([-1.0, 1.0], k, p=[0.3, 0.7]) * rng.uniform(8.0, 80.0, k)
    if np.dtype(dtype).kind in "iu":
        return np.round(x * 4).astype(dtype)
    return x.astype(dtype)
