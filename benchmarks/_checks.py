"""How gpuarr's first result is checked against NumPy's before it is timed."""
import numpy as np

EXACT = (0, 0)           # tol: results must be equal


def to_host(x):
    """A result as NumPy values: device arrays copied back, sequences kept."""
    if isinstance(x, (list, tuple)):
        return [to_host(v) for v in x]
    if isinstance(x, (np.ndarray, np.generic, int, float, complex)):
        return x
    if hasattr(x, "get"):
        return x.get()
    return np.asarray(x)


def compare(got, ref, tol):
    """None when got matches NumPy's ref (shape, dtype where NumPy gives one,
    values within tol = (rtol, atol)), else what differs."""
    if isinstance(ref, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(ref):
            return f"expected a sequence of {len(ref)}, got {type(got).__name__}"
        for i, (g, r) in enumerate(zip(got, ref)):
            problem = compare(g, r, tol)
            if problem:
                return f"[{i}] {problem}"
        return None
    g, r = np.asarray(got), np.asarray(ref)
    if g.shape != r.shape:
        return f"shape {g.shape}, NumPy {r.shape}"
    if isinstance(ref, (np.ndarray, np.generic)) and g.dtype != r.dtype:
        return f"dtype {g.dtype}, NumPy {r.dtype}"
    if tol == EXACT or r.dtype.kind in "biu":
        bad = ~((g == r) | (np.isnan(g) & np.isnan(r)) if r.dtype.kind in "fc" else (g == r))
    else:
        bad = ~np.isclose(g, r, rtol=tol[0], atol=tol[1], equal_nan=True)
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
        return f"{np.count_nonzero(bad)} of {bad.size} differ; at {i}: {g[i]!r}, NumPy {r[i]!r}"
    return None


def same_clip(got, ref):
    """The clipper keeps the same pixels up to a few where float32 median/std
    round differently: compare how many it keeps and their spread."""
    got, ref = np.asarray(got), np.asarray(ref)
    if abs(got.size - ref.size) > 1e-4 * ref.size:
        return f"keeps {got.size} pixels, NumPy {ref.size}"
    if not np.isclose(got.std(), ref.std(), rtol=1e-3):
        return f"std of the kept pixels {got.std():.6g}, NumPy {ref.std():.6g}"
    return None


def uniform_f32(n):
    def check(got, _ref):
        got = np.asarray(got)
        if got.shape != (n,) or got.dtype != np.float32:
            return f"shape {got.shape} dtype {got.dtype}, expected ({n},) float32"
        lo, hi, mean = got.min(), got.max(), got.mean(dtype=np.float64)
        if lo < 0 or hi >= 1 or abs(mean - 0.5) > 1e-3:
            return f"min {lo}, max {hi}, mean {mean}: not uniform on [0, 1)"
        return None
    return check
