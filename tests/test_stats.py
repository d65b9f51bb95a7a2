"""gpuarr.stats: sigma_clip and sigma_clipped_stats against astropy.stats,
and the lesson's kappa-sigma clipper (inclusive=False, maxiters=None)
against the lesson's NumPy code, value for value.

Argument checking runs everywhere (no GPU needed: the scalar arguments are
checked before the data is looked at); the rest is marked gpu.  astropy is
optional: the comparisons with it skip cleanly without it."""
import warnings

import numpy as np
import pytest

import gpuarr as gp
from gpuarr import stats

from _lesson import clip_sample as sample, lesson_clipper

# Arrays above this many elements take the whole-GPU path (one cooperative
# launch, or one launch per pass); smaller ones and rows take the one-block
# row kernel (src/stats.c: GA_CLIP_ROW_KERNEL_MAX).
ROW_KERNEL_MAX = 65536


@pytest.fixture
def astropy_stats():
    return pytest.importorskip("astropy.stats")


@pytest.fixture(params=[False, True], ids=["one-launch", "per-pass"])
def per_pass(request, monkeypatch):
    """Run a test with both ways of clipping a large array."""
    monkeypatch.setattr(stats, "_PER_PASS", request.param)
    return request.param




def tolerance(dtype):
    """Relative tolerance of bounds: gpuarr's std is a float64 sum rounded
    to the data type; NumPy's float32 std sums in float32 (and astropy's
    per-row path, with axis, computes in float64)."""
    return 2e-6 if np.dtype(dtype) == np.float32 else 1e-10


def host(value):
    return value.get() if isinstance(value, gp.ndarray) else np.asarray(value)


def assert_bounds_close(got, want, dtype, other):
    """Bounds equal but for rounding, relative to the larger of the two
    bounds (`other`: the opposite bound): a bound near zero is the
    difference of larger terms, centre and sigma * std, and carries their
    rounding.  NaN where astropy has NaN."""
    got, want = np.asarray(host(got), np.float64), np.asarray(want, np.float64)
    scale = np.maximum(np.abs(want), np.abs(np.asarray(other, np.float64)))
    ok = (np.isnan(got) & np.isnan(want)) | (np.abs(got - want) <= tolerance(dtype) * scale)
    assert ok.all(), (f"{int((~ok).sum())} of {ok.size} bounds differ: got {got[~ok][:5]}, "
                      f"astropy {want[~ok][:5]}")


def assert_masks_agree(got, want, data, lo, hi, dtype):
    """Masks equal, except for values within the bounds' tolerance of a
    bound (a last-bit difference of a bound may clip those differently)."""
    got, want = host(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == np.bool_
    differ = got != want
    if differ.any():
        x = np.broadcast_to(data, got.shape)[differ].astype(np.float64)
        lo = np.broadcast_to(lo, got.shape)[differ]
        hi = np.broadcast_to(hi, got.shape)[differ]
        near = np.minimum(abs(x - lo), abs(x - hi)) <= 4 * tolerance(dtype) * (abs(hi) + abs(lo))
        assert near.all(), f"{int((~near).sum())} values clipped differently, far from the bounds"


def assert_survivors_agree(got, x, got_mask, want_mask, lo, hi, dtype):
    """Survivors (masked=False, or compressed()) are astropy's, x where
    want_mask is False, in order; or, where a value lies within the
    bounds' tolerance of a bound and was clipped differently (see
    assert_masks_agree), exactly the values gpuarr's own mask keeps."""
    want_mask = np.ravel(np.broadcast_to(want_mask, np.shape(x)))   # nomask: a scalar False
    got, got_mask, x = host(got), np.ravel(host(got_mask)), np.ravel(x)
    if np.array_equal(got, x[~want_mask]):
        return
    np.testing.assert_array_equal(got, x[~got_mask])
    assert_masks_agree(got_mask, want_mask, x, lo, hi, dtype)


def astropy_clip(astropy_stats, data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return astropy_stats.sigma_clip(data, **kw)


# ======================================================= argument checks ====

@pytest.mark.parametrize("kw, exc, word", [
    (dict(cenfunc="mode"), ValueError, "cenfunc"),
    (dict(stdfunc="var"), ValueError, "stdfunc"),
    (dict(cenfunc=np.median), TypeError, "cenfunc"),
    (dict(stdfunc=np.std), TypeError, "stdfunc"),
    (dict(sigma="3"), TypeError, "sigma"),
    (dict(sigma=float("nan")), ValueError, "sigma"),
    (dict(sigma=None), TypeError, "sigma"),
    (dict(sigma_lower="2"), TypeError, "sigma_lower"),
    (dict(sigma_upper=float("nan")), ValueError, "sigma_upper"),
    (dict(maxiters=-1), ValueError, "maxiters"),
    (dict(maxiters=2.5), TypeError, "maxiters"),
    (dict(maxiters="5"), TypeError, "maxiters"),
    (dict(maxiters=True), TypeError, "maxiters"),
])
def test_bad_arguments_named(kw, exc, word):
    """Scalar arguments are checked first, on any machine, and the error
    names the argument."""
    for fn in (stats.sigma_clip, stats.sigma_clipped_stats):
        with pytest.raises(exc, match=word):
            fn(np.zeros(10, np.float32), **kw)


@pytest.mark.parametrize("ddof, exc", [(-1, ValueError), (1.5, TypeError), ("1", TypeError)])
def test_bad_std_ddof(ddof, exc):
    with pytest.raises(exc, match="std_ddof"):
        stats.sigma_clipped_stats(np.zeros(10, np.float32), std_ddof=ddof)


@pytest.mark.parametrize("fn", [stats.sigma_clip, stats.sigma_clipped_stats,
                                stats.kappa_sigma_clip])
def test_host_array_refused(fn):
    """A NumPy array is refused with the advice to move it (no silent copy)."""
    with pytest.raises(TypeError, match=r"data is a numpy\.ndarray.*gpuarr\.asarray"):
        fn(np.zeros(10, np.float32))


def test_argument_helpers():
    """What the accepted arguments mean (astropy's conventions)."""
    check = stats._check
    assert check(3, None, None, 5, "median", "std") == (True, False, 3.0, 3.0, 5, 0)
    assert check(3, 2, 4, None, "mean", "mad_std") == (False, True, 2.0, 4.0, -1, 0)
    # astropy: sigma_lower/upper of 0 mean sigma; maxiters 0 and inf mean no limit
    assert check(2.5, 0, 0, 0, "median", "std")[2:5] == (2.5, 2.5, -1)
    assert check(3, None, None, float("inf"), "median", "std")[4] == -1
    assert check(3, None, None, np.int64(7), "median", "std", np.int8(1))[4:] == (7, 1)


# ============================================================ on the GPU ====

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("cenfunc, stdfunc", [("median", "std"), ("mean", "std"),
                                              ("median", "mad_std"), ("mean", "mad_std")])
@pytest.mark.parametrize("size", [5000, ROW_KERNEL_MAX + 4321])
def test_sigma_clip_masked_like_astropy(astropy_stats, rng, per_pass, dtype, cenfunc, stdfunc,
                                        size):
    x = sample(rng, size, dtype)
    for kw in (dict(), dict(sigma=2.5, maxiters=None), dict(sigma_lower=2, sigma_upper=4,
                                                             maxiters=2)):
        want, wlo, whi = astropy_clip(astropy_stats, x, cenfunc=cenfunc, stdfunc=stdfunc,
                                      return_bounds=True, **kw)
        got, lo, hi = stats.sigma_clip(gp.asarray(x), cenfunc=cenfunc, stdfunc=stdfunc,
                                       return_bounds=True, **kw)
        assert isinstance(got, stats.ClippedArray)
        assert lo.shape == () and hi.shape == ()
        assert_bounds_close(lo, wlo, x.dtype if x.dtype.kind == "f" else np.float64, whi)
        assert_bounds_close(hi, whi, x.dtype if x.dtype.kind == "f" else np.float64, wlo)
        assert_masks_agree(got.mask, want.mask, x, wlo, whi, x.dtype)
        np.testing.assert_array_equal(got.data.get(), x)
        assert got.data.dtype == x.dtype


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("size", [3000, ROW_KERNEL_MAX + 1])
def test_sigma_clip_unmasked_survivors(astropy_stats, rng, per_pass, dtype, size):
    """masked=False, axis=None: the 1-d survivors of every clip, in order."""
    x = sample(rng, size, dtype)
    work = x.dtype if x.dtype.kind == "f" else np.float64
    for maxiters in (1, 3, None):
        want = astropy_clip(astropy_stats, x, masked=False, maxiters=maxiters)
        got = stats.sigma_clip(gp.asarray(x), masked=False, maxiters=maxiters)
        assert isinstance(got, gp.ndarray) and got.dtype == x.dtype and got.ndim == 1
        if not np.array_equal(got.get(), want):   # a value on a bound (float32 rounding)
            want_mask, lo, hi = astropy_clip(astropy_stats, x, maxiters=maxiters,
                                             return_bounds=True)
            assert_survivors_agree(got, x, stats.sigma_clip(gp.asarray(x), maxiters=maxiters).mask,
                                   want_mask.mask, lo, hi, work)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2)])
@pytest.mark.parametrize("cenfunc, stdfunc", [("median", "std"), ("mean", "mad_std")])
def test_sigma_clip_axis_like_astropy(astropy_stats, rng, dtype, axis, cenfunc, stdfunc):
    x = sample(rng, (6, 700, 5), dtype)
    kw = dict(axis=axis, cenfunc=cenfunc, stdfunc=stdfunc, return_bounds=True, maxiters=4)
    want, wlo, whi = astropy_clip(astropy_stats, x, **kw)
    got, lo, hi = stats.sigma_clip(gp.asarray(x), **kw)
    work = x.dtype if x.dtype.kind == "f" else np.float64
    assert lo.shape == wlo.shape and hi.shape == whi.shape
    assert_bounds_close(lo, wlo, work, whi)
    assert_bounds_close(hi, whi, work, wlo)
    ax = axis if isinstance(axis, tuple) else (axis,)
    assert_masks_agree(got.mask, want.mask, x, np.expand_dims(wlo, ax), np.expand_dims(whi, ax),
                       work)
    # masked=False with an axis: NaN where clipped, integer data as float32
    want = astropy_clip(astropy_stats, x, axis=axis, cenfunc=cenfunc, stdfunc=stdfunc,
                        maxiters=4, masked=False)
    got = stats.sigma_clip(gp.asarray(x), axis=axis, cenfunc=cenfunc, stdfunc=stdfunc,
                           maxiters=4, masked=False)
    assert got.dtype == want.dtype and got.shape == x.shape
    assert_masks_agree(gp.isnan(got), np.isnan(want), x, np.expand_dims(wlo, ax),
                       np.expand_dims(whi, ax), work)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [2000, ROW_KERNEL_MAX + 7])
def test_sigma_clip_nan_and_inf(astropy_stats, rng, per_pass, dtype, size):
    """NaN and infinities are always clipped and never spoil the statistics."""
    x = sample(rng, size, dtype)
    idx = rng.choice(size, 30, replace=False)
    x[idx[:10]] = np.nan
    x[idx[10:20]] = np.inf
    x[idx[20:]] = -np.inf
    want, wlo, whi = astropy_clip(astropy_stats, x, return_bounds=True, maxiters=None)
    got, lo, hi = stats.sigma_clip(gp.asarray(x), return_bounds=True, maxiters=None)
    assert np.isfinite(float(lo)) and np.isfinite(float(hi))
    assert_bounds_close(lo, wlo, dtype, whi)
    assert_bounds_close(hi, whi, dtype, wlo)
    mask = got.mask.get()
    assert mask[idx].all()
    assert_masks_agree(mask, want.mask, x, wlo, whi, dtype)
    assert_survivors_agree(got.compressed(), x, mask, want.mask, wlo, whi, dtype)
    assert_survivors_agree(stats.sigma_clip(gp.asarray(x), masked=False, maxiters=None), x,
                           mask, want.mask, wlo, whi, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [2000, ROW_KERNEL_MAX + 7])
def test_compressed_with_an_infinite_bound(rng, per_pass, dtype, size):
    """compressed() keeps exactly what the mask keeps, also when the last
    upper bound is infinite (sigma_upper=inf): +inf passes an inclusive
    test against it but is always clipped."""
    x = sample(rng, size, dtype)
    x[:5] = np.inf
    x[5:10] = -np.inf
    got, _, hi = stats.sigma_clip(gp.asarray(x), sigma_upper=np.inf, maxiters=3,
                                  return_bounds=True)
    assert np.isposinf(float(hi))
    mask = got.mask.get()
    assert mask[:10].all() and not mask[10:].all()
    np.testing.assert_array_equal(got.compressed().get(), x[~mask])


@pytest.mark.gpu
def test_clipped_array(astropy_stats, rng):
    x = sample(rng, (40, 50), np.float32)
    want, lo, hi = astropy_clip(astropy_stats, x, sigma=2, return_bounds=True)
    got = stats.sigma_clip(gp.asarray(x), sigma=2)
    assert got.shape == x.shape and got.dtype == x.dtype and got.ndim == 2 and got.size == x.size
    ma = got.get()
    assert isinstance(ma, np.ma.MaskedArray)
    # the same mask but for a value on a bound (float32 rounding, see
    # assert_masks_agree); the rest follows gpuarr's own mask exactly
    assert_masks_agree(ma.mask, np.ma.getmaskarray(want), x, lo, hi, np.float32)
    assert_survivors_agree(got.compressed(), x, ma.mask, want.mask, lo, hi, np.float32)
    assert got.count() == int((~ma.mask).sum())
    np.testing.assert_array_equal(got.filled(-1.0).get(), np.where(ma.mask, np.float32(-1), x))
    if np.array_equal(ma.mask, np.ma.getmaskarray(want)):
        assert got.count() == want.count()
        np.testing.assert_array_equal(got.filled(-1.0).get(), want.filled(-1.0))
    assert "ClippedArray" in repr(got)


@pytest.mark.gpu
def test_copy_and_input_untouched(rng):
    x = sample(rng, 5000, np.float32)
    d = gp.asarray(x)
    shared = stats.sigma_clip(d, copy=False)
    assert shared.data is d
    copied = stats.sigma_clip(d, copy=True)
    assert copied.data is not d and copied.data.data.ptr != d.data.ptr
    for masked in (True, False):
        for axis in (None, 0):
            stats.sigma_clip(d, masked=masked, axis=axis, copy=False)
    np.testing.assert_array_equal(d.get(), x)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("size", [4000, ROW_KERNEL_MAX + 99])
def test_sigma_clipped_stats_like_astropy(astropy_stats, rng, per_pass, dtype, size):
    x = sample(rng, size, dtype)
    work = x.dtype if x.dtype.kind == "f" else np.float64
    for kw in (dict(), dict(maxiters=None, std_ddof=1), dict(cenfunc="mean", stdfunc="mad_std",
                                                            sigma=2.5)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = astropy_stats.sigma_clipped_stats(x, **kw)
        got = stats.sigma_clipped_stats(gp.asarray(x), **kw)
        for g in got:
            assert isinstance(g, gp.ndarray) and g.shape == () and g.dtype == work
        got = [float(g) for g in got]
        if not np.allclose(got, want, rtol=20 * tolerance(work), atol=0):
            # a value on a bound, clipped differently (float32 rounding):
            # the clip agrees with astropy's but for such values, and the
            # statistics are those of gpuarr's own survivors
            clip = {k: v for k, v in kw.items() if k != "std_ddof"}
            want_mask, lo, hi = astropy_clip(astropy_stats, x, return_bounds=True, **clip)
            mask = stats.sigma_clip(gp.asarray(x), **clip).mask.get()
            assert_masks_agree(mask, np.ma.getmaskarray(want_mask), x, lo, hi, x.dtype)
            kept = x[~mask].astype(np.float64)
            want = (kept.mean(), np.median(kept), kept.std(ddof=kw.get("std_ddof", 0)))
        np.testing.assert_allclose(got, want, rtol=20 * tolerance(work))


@pytest.mark.gpu
def test_sigma_clipped_stats_mask_and_axis(astropy_stats, rng):
    x = sample(rng, (300, 40), np.float64)
    mask = rng.random(x.shape) < 0.1
    x[5, :] = -999.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = astropy_stats.sigma_clipped_stats(x, mask=mask, mask_value=-999.0)
        want_axis = astropy_stats.sigma_clipped_stats(x, axis=0, maxiters=1)
    got = stats.sigma_clipped_stats(gp.asarray(x), mask=gp.asarray(mask), mask_value=-999.0)
    np.testing.assert_allclose([float(v) for v in got], want, rtol=1e-10)
    # with an axis and one clip the survivors of every clip are the values
    # inside the last bounds, so the statistics agree with astropy's
    got = stats.sigma_clipped_stats(gp.asarray(x), axis=0, maxiters=1)
    for g, w in zip(got, want_axis):
        assert g.shape == (40,)
        np.testing.assert_allclose(g.get(), w, rtol=1e-10)
    with pytest.raises(ValueError, match="all masked"):
        stats.sigma_clipped_stats(gp.asarray(x), mask=gp.ones(x.shape, dtype=bool))


@pytest.mark.gpu
def test_data_errors():
    with pytest.raises(TypeError, match="complex"):
        stats.sigma_clip(gp.zeros(10, dtype=np.complex64))
    with pytest.raises(np.exceptions.AxisError):
        stats.sigma_clip(gp.zeros((3, 4)), axis=2)
    with pytest.raises(ValueError, match="repeated axis"):
        stats.sigma_clip(gp.zeros((3, 4)), axis=(0, 0))


@pytest.mark.gpu
def test_everything_clipped_and_constant():
    """Degenerate data: constant values survive (std 0, nothing outside);
    a negative sigma clips everything (empty survivors, NaN statistics)."""
    c = gp.full(100000, 3.5, dtype=np.float32)
    assert stats.sigma_clip(c, masked=False).size == 100000
    mean, median, std = stats.sigma_clipped_stats(c)
    assert (float(mean), float(median), float(std)) == (3.5, 3.5, 0.0)
    x = gp.arange(1000, dtype=np.float64)
    assert stats.sigma_clip(x, sigma=-1, masked=False).size == 0
    assert np.isnan(float(stats.sigma_clipped_stats(x, sigma=-1)[0]))


# ================================================== the lesson's clipper ====

def rounded_std(d):
    """The std gpuarr's clipper uses: float64 sums, rounded once to the
    data's type (NumPy's float32 std sums in float32)."""
    return d.dtype.type(np.std(d.astype(np.float64)))


def ulps(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return abs(int(a.view(np.int32)) - int(b.view(np.int32)))


def assert_lesson_survivors(got, x, kappa=3):
    """gpuarr's kappa-sigma clipper against the lesson's, value for value.

    The one allowed difference: NumPy's float32 std sums in float32, gpuarr's
    in float64 rounded once, so a bound can differ in its last bit or two;
    a value lying between the two roundings is then clipped by one and not
    the other, and the iterations after it differ.  Where the survivors
    differ, gpuarr must be exactly the lesson's loop run with the rounded
    float64 std, and that loop must part from NumPy's only at an iteration
    whose bounds are within 2 ulps of NumPy's."""
    want = lesson_clipper(x, kappa)
    if got.shape == want.shape and np.array_equal(got, want):
        return
    assert x.dtype == np.float32, f"{got.size} survivors, the lesson's clipper {want.size}"
    mtrace, ntrace = [], []
    model = lesson_clipper(x, kappa, std=rounded_std, trace=mtrace)
    np.testing.assert_array_equal(got, model)
    lesson_clipper(x, kappa, trace=ntrace)
    for (nlo, nhi, ncount), (mlo, mhi, mcount) in zip(ntrace, mtrace):
        assert ulps(nlo, mlo) <= 2 and ulps(nhi, mhi) <= 2, \
            f"bounds ({mlo!r}, {mhi!r}), NumPy's ({nlo!r}, {nhi!r})"
        if ncount != mcount:
            return
    raise AssertionError("the traces never part, yet the survivors differ")


@pytest.mark.gpu
@pytest.mark.parametrize("size", [256, 2048])
def test_lesson_clipper_on_the_sky(per_pass, size):
    """The lesson's mode on the built-in sky: the same survivors in the
    same order, so the same count and final std."""
    sky = gp.datasets.synthetic_sky(size)
    want = lesson_clipper(sky.ravel())
    dev = gp.asarray(sky)
    got = stats.kappa_sigma_clip(dev.ravel())
    assert got.dtype == np.float32
    assert got.size == want.size
    np.testing.assert_array_equal(got.get(), want)
    same = stats.sigma_clip(dev, sigma=3, maxiters=None, masked=False, inclusive=False)
    np.testing.assert_array_equal(same.get(), want)
    mean, median, std = stats.sigma_clipped_stats(dev, maxiters=None, inclusive=False)
    assert float(std) == pytest.approx(float(np.std(want)), rel=1e-6)
    assert median.get() == np.median(want)


@pytest.mark.gpu
@pytest.mark.parametrize("size", [20000, ROW_KERNEL_MAX + 1000, 300000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lesson_clipper_random(rng, per_pass, size, dtype):
    x = sample(rng, size, dtype, outliers=0.1)
    for kappa in (3, 2.0):
        got = stats.kappa_sigma_clip(gp.asarray(x), kappa=kappa)
        assert_lesson_survivors(got.get(), x, kappa)


def repeated(rng, size, kind):
    """Data with many equal values: on a coarse grid (bins too full to
    gather), on a fine one around 1000 (few distinct keys in a bracket), or
    with 2000 copies of the centre (one crowded bin among the candidates)."""
    x = sample(rng, size, np.float32, outliers=0.1)
    if kind == "grid":
        return np.round(x * 4) / np.float32(4)
    if kind == "fine":
        return (np.float32(1000) + (x - np.float32(10)) * np.float32(0.005)).astype(np.float32)
    x[rng.choice(size, 2000, replace=False)] = np.float32(10)
    return x


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["grid", "fine", "spike"])
@pytest.mark.parametrize("size", [20000, ROW_KERNEL_MAX + 1000, 300000])
def test_lesson_clipper_repeated_values(rng, per_pass, size, kind):
    x = repeated(rng, size, kind)
    for kappa in (3, 2.0):
        got = stats.kappa_sigma_clip(gp.asarray(x), kappa=kappa).get()
        assert_lesson_survivors(got, x, kappa)
        _, median, _ = stats.sigma_clipped_stats(gp.asarray(x), sigma=kappa, maxiters=None,
                                                 inclusive=False)
        # NaN when nothing survives: with a 10% spike of equal values and
        # kappa 2 the clip can close in on the spike alone (std 0), and
        # strict bounds then clip it too, as the lesson's loop does
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # median of nothing
            np.testing.assert_array_equal(median.get(), np.median(got))


@pytest.mark.gpu
@pytest.mark.parametrize("size", [100, ROW_KERNEL_MAX + 1000])
def test_lesson_clipper_can_keep_nothing(per_pass, size):
    """Strict bounds around data whose std is 0 keep nothing: the lesson's
    loop then stops with no survivors, and so does gpuarr (NaN statistics)."""
    for x in (np.full(size, 10, np.float32),
              np.r_[np.full(size, 10, np.float32), [np.float32(10.5)]]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # statistics of nothing
            assert lesson_clipper(x).size == 0
        got = stats.kappa_sigma_clip(gp.asarray(x))
        assert got.shape == (0,) and got.dtype == np.float32
        mean, median, std = stats.sigma_clipped_stats(gp.asarray(x), maxiters=None,
                                                      inclusive=False)
        assert np.isnan(float(mean)) and np.isnan(float(median)) and np.isnan(float(std))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [4000, 4001, ROW_KERNEL_MAX + 1000, ROW_KERNEL_MAX + 1001])
def test_median_is_numpys(rng, per_pass, dtype, size):
    """The median is an exact selection: with nothing clipped it is
    NumPy's median bit for bit, whatever the low bits of the middle
    elements (a wrong mask of the last radix digit once picked a value up
    to 1023 units in the last place away)."""
    for _ in range(6):
        x = sample(rng, size, dtype) * dtype(rng.uniform(0.01, 100))
        mean, median, std = stats.sigma_clipped_stats(gp.asarray(x), sigma=1e6, maxiters=1)
        assert median.get() == np.median(x)
        assert float(std) == pytest.approx(float(np.std(x.astype(np.float64))),
                                           rel=tolerance(dtype))
