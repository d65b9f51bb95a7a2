"""gpuarr.dask and gpuarr as a Dask chunk type (issue 21).

On NumPy chunks (CPU): the cross-block labelling (gpuarr/dask/_merge.py)
and ndmeasure.label against scipy.ndimage.label on the whole image,
number for number; the measurements from partial sums; the exact median;
sigma clipping across chunks against gpuarr.stats' semantics on the whole
array (reference_clip, bit for bit where the arithmetic is exact) and
astropy; the registrations, entry points and bit generator of the backend;
the mosaic pipeline against the single-array pipeline.  Marked gpu: the
same on gpuarr chunks, the backend's creation functions, meta inference,
tokens, sizeof and distributed serialization of gpuarr chunks."""
import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

from gpuarr.dask import _merge

from _lesson import clip_sample


def split(image, chunks):
    """A grid (object array) of the blocks of image cut at the chunk sizes
    per axis."""
    edges = [np.concatenate([[0], np.cumsum(c)]) for c in chunks]
    grid = np.empty(tuple(len(c) for c in chunks), dtype=object)
    for pos in np.ndindex(*grid.shape):
        grid[pos] = image[tuple(slice(e[i], e[i + 1]) for e, i in zip(edges, pos))]
    return grid


def join(grid):
    def rows(prefix, d):
        if d == grid.ndim:
            return grid[tuple(prefix)]
        return np.concatenate([rows(prefix + [i], d + 1) for i in range(grid.shape[d])], axis=d)
    return rows([], 0)


def scipy_label(block, structure):
    return ndi.label(block, structure=structure)


def random_chunks(rng, n, parts):
    cuts = np.sort(rng.choice(np.arange(1, n), parts - 1, replace=False))
    return list(np.diff(np.concatenate([[0], cuts, [n]])))


def check(image, chunks, structure=None):
    want, count = ndi.label(image, structure=structure)
    got, got_count = _merge.label_grid(split(image, chunks), scipy_label, structure)
    assert got_count == count
    np.testing.assert_array_equal(join(got), want)


STRUCTURES_2D = [None, np.ones((3, 3), bool), np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]], bool)]


@pytest.mark.parametrize("density", [0.2, 0.45, 0.6, 0.8])
@pytest.mark.parametrize("structure", range(len(STRUCTURES_2D)))
def test_random_masks_2d(rng, density, structure):
    for _ in range(5):
        shape = tuple(rng.integers(8, 60, 2))
        image = rng.random(shape) < density
        chunks = [random_chunks(rng, n, int(rng.integers(1, min(n, 6) + 1))) for n in shape]
        check(image, chunks, STRUCTURES_2D[structure])


@pytest.mark.parametrize("full", [False, True])
def test_random_masks_3d(rng, full):
    structure = np.ones((3, 3, 3), bool) if full else None
    for _ in range(4):
        shape = tuple(rng.integers(4, 20, 3))
        image = rng.random(shape) < 0.35
        chunks = [random_chunks(rng, n, int(rng.integers(1, min(n, 4) + 1))) for n in shape]
        check(image, chunks, structure)


def spiral(n):
    image = np.zeros((n, n), bool)
    top, left, bottom, right = 0, 0, n - 1, n - 1
    while top <= bottom and left <= right:
        image[top, left:right + 1] = True
        image[top:bottom + 1, right] = True
        if top + 2 <= bottom:
            image[bottom, left:right + 1] = True
        if left + 2 <= right and top + 2 <= bottom:
            image[top + 2:bottom + 1, left] = True
        top, left, bottom, right = top + 2, left + 2, bottom - 2, right - 2
        if top <= bottom:
            image[top - 1, left] = True
    return image


@pytest.mark.parametrize("chunk", [1, 3, 7, 16])
def test_adversarial_shapes(chunk):
    n = 41
    cut = [chunk] * (n // chunk) + ([n % chunk] if n % chunk else [])
    check(spiral(n), [cut, cut])
    diagonals = np.eye(n, dtype=bool) | np.fliplr(np.eye(n, dtype=bool))
    check(diagonals, [cut, cut], np.ones((3, 3), bool))     # crosses every corner
    check(diagonals, [cut, cut])                             # one pixel each without diagonals
    comb = np.zeros((n, n), bool)
    comb[::2, :] = True
    comb[:, 0] = True                                        # one component in every block
    check(comb, [cut, cut])
    check(np.ones((n, n), bool), [cut, cut])
    check(np.zeros((n, n), bool), [cut, cut])


def test_single_block_and_errors(rng):
    image = rng.random((10, 12)) < 0.5
    check(image, [[10], [12]])
    with pytest.raises(ValueError, match="structure"):
        _merge.label_grid(split(image, [[5, 5], [12]]), scipy_label, np.ones((3, 3, 3)))


# ===================================== the Dask-level label (NumPy chunks) ====

@pytest.fixture
def da():
    return pytest.importorskip("dask.array")


@pytest.mark.parametrize("structure", [None, np.ones((3, 3), bool)])
def test_dask_label_of_numpy_chunks(rng, da, structure):
    from gpuarr.dask import ndmeasure
    for _ in range(4):
        shape = tuple(int(n) for n in rng.integers(10, 70, 2))
        image = rng.random(shape) < 0.5
        chunks = tuple(tuple(random_chunks(rng, n, int(rng.integers(1, 5)))) for n in shape)
        labels, count = ndmeasure.label(da.from_array(image, chunks=chunks), structure)
        want, want_count = ndi.label(image, structure=structure)
        assert isinstance(labels, da.Array) and labels.chunks == chunks
        assert count == want_count
        np.testing.assert_array_equal(labels.compute(), want)


def test_dask_label_errors(da):
    from gpuarr.dask import ndmeasure
    with pytest.raises(TypeError, match="dask array"):
        ndmeasure.label(np.ones((3, 3)))
    with pytest.raises(ValueError, match="structure"):
        ndmeasure.label(da.ones((4, 4), chunks=2), np.ones((3, 3, 3)))


@pytest.mark.filterwarnings("ignore:invalid value encountered in divide:RuntimeWarning")
@pytest.mark.parametrize("index", [None, 3, [1, 2, 5, 40], "all"])
def test_dask_measurements_of_numpy_chunks(rng, da, index):
    from gpuarr.dask import ndmeasure
    shape = (37, 53)
    image = rng.random(shape) * 10
    labels = rng.integers(0, 9, shape)
    chunks = tuple(tuple(random_chunks(rng, n, 4)) for n in shape)
    if index == "all":
        index = np.arange(1, 9)
    dimage = da.from_array(image, chunks=chunks)
    dlabels = da.from_array(labels, chunks=((37,), (20, 33)))      # other chunks: rechunked
    got = ndmeasure.sum_labels(dimage, dlabels, index)
    want = ndi.sum_labels(image, labels, index)
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(got.compute(), want, rtol=1e-12)
    got = ndmeasure.center_of_mass(dimage, dlabels, index).compute()
    want = np.array(ndi.center_of_mass(image, labels, index))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_dask_measurements_of_the_whole_image_and_errors(rng, da):
    from gpuarr.dask import ndmeasure
    image = rng.random((20, 30))
    dimage = da.from_array(image, chunks=(7, 11))
    np.testing.assert_allclose(ndmeasure.sum_labels(dimage).compute(), ndi.sum_labels(image))
    np.testing.assert_allclose(ndmeasure.center_of_mass(dimage).compute(),
                               ndi.center_of_mass(image))
    with pytest.raises(TypeError, match="dask array"):
        ndmeasure.sum_labels(image)
    with pytest.raises(ValueError, match="shape"):
        ndmeasure.sum_labels(dimage, da.ones((3, 3), chunks=3))


# ============================================ exact median across chunks ====

def awkward_values(rng, n, dtype):
    """Values with ties, both signs, zeros of both signs, a wide range."""
    v = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)
    v[rng.random(n) < 0.2] = 0.0
    v[rng.random(n) < 0.1] = -0.0
    v[rng.random(n) < 0.2] = 1.5
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_dask_exact_median(rng, da, dtype):
    from gpuarr.dask import stats
    for n in (1, 2, 7, 100, 1001):
        values = awkward_values(rng, n, dtype)
        chunks = tuple(random_chunks(rng, n, min(n, 5))) if n > 1 else (1,)
        got = stats.median(da.from_array(values, chunks=(chunks,)))
        want = np.median(values)
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        if n > 2:
            lo, hi = np.sort(values.astype(np.float64))[[n // 4, 3 * n // 4]]
            inside = values[(values > lo) & (values < hi)]
            got = stats.median(da.from_array(values, chunks=(chunks,)), lo, hi)
            if inside.size:
                np.testing.assert_array_equal(got, np.median(inside.astype(got.dtype)))
            else:
                assert np.isnan(got)


def test_dask_median_nan_and_2d(rng, da):
    from gpuarr.dask import stats
    x = rng.standard_normal((30, 40)).astype(np.float32)
    assert stats.median(da.from_array(x, chunks=(7, 9))) == np.median(x)
    x[3, 5] = np.nan
    assert np.isnan(stats.median(da.from_array(x, chunks=(7, 9))))
    assert stats.median(da.from_array(x, chunks=(7, 9)), -10, 10) == np.median(x[~np.isnan(x)])
    with pytest.raises(TypeError, match="dask array"):
        stats.median(x)


# ================================== sigma clipping across chunks ====

def reference_clip(x, sigma=3, sigma_lower=None, sigma_upper=None, maxiters=5, cenfunc="median",
                   stdfunc="std", std_ddof=0, inclusive=True, axis=None):
    """gpuarr.stats' clipping of the whole array, written plainly with
    NumPy (the semantics gpuarr/stats.py documents): the survivors are the
    values inside the intersection of all bounds; each clip forms its
    bounds in the data's precision from the median (or mean) and the std
    (float64, rounded) or MAD-based std of the survivors; the loop ends
    after maxiters clips or a clip that removes nothing; a clip of nothing
    gives NaN bounds.  With axis, each row (the values along the axes at
    one index of the others) is clipped so, one at a time, except that a
    clip of nothing keeps the bounds that emptied the row (astropy's rows);
    bounds and statistics then have the other axes' shape, and "filled" is
    masked=False's NaN-filled copy.  A dict of bounds, mask, survivors (axis
    None) and statistics."""
    from gpuarr import stats as single
    checked = single._check(sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc,
                            std_ddof)
    T = single._work_dtype(x.dtype).type
    if axis is None:
        got = reference_row(x.astype(T).ravel(), checked, inclusive, keep_last=False)
        got.update(mask=got["mask"].reshape(x.shape), survivors=x.ravel()[got["inside"]])
        return got
    axes = tuple(a % x.ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
    dest = tuple(range(x.ndim - len(axes), x.ndim))
    moved = np.moveaxis(x.astype(T), axes, dest)
    reduced = moved.shape[:x.ndim - len(axes)]
    rows = [reference_row(row.ravel(), checked, inclusive, keep_last=True)
            for row in moved.reshape((-1,) + moved.shape[len(reduced):])]
    mask = np.moveaxis(np.stack([r["mask"] for r in rows]).reshape(moved.shape), dest, axes)
    filled = np.where(mask, np.nan, x.astype(T)).astype(x.dtype if x.dtype.kind == "f"
                                                         else np.float32)
    return dict(lo=np.array([r["lo"] for r in rows], T).reshape(reduced),
                hi=np.array([r["hi"] for r in rows], T).reshape(reduced),
                mask=mask, filled=filled,
                stats=tuple(np.array([r["stats"][k] for r in rows], T).reshape(reduced)
                            for k in range(3)),
                iterations=np.array([r["iterations"] for r in rows]).reshape(reduced))


def reference_row(v, checked, inclusive, keep_last):
    """reference_clip of one row of values in the working dtype."""
    cen_median, std_mad, lower, upper, maxiters, ddof = checked
    T = v.dtype.type
    big = np.finfo(T).max if inclusive else np.inf

    def inside(lo, hi):
        return (v >= lo) & (v <= hi) if inclusive else (v > lo) & (v < hi)

    def final(s):
        if s.size == 0:
            return np.nan, np.nan, np.nan
        w = s.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return w.mean(), np.median(s), np.sqrt(((w - w.mean()) ** 2).sum() / (w.size - ddof))

    lo, hi, blo, bhi, it, prev = -big, big, np.nan, np.nan, 0, -1
    stats = None
    while maxiters < 0 or it < maxiters:
        s = v[inside(lo, hi)]
        if s.size == 0:
            if not keep_last:
                blo = bhi = np.nan
            stats = (np.nan,) * 3
            break
        if it > 0 and s.size == prev:
            stats = final(s)
            break
        med = np.median(s)
        w = s.astype(np.float64)
        centre = med if cen_median else T(w.mean())
        spread = T(1.482602218505602) * np.median(np.abs(s - med)) if std_mad else T(w.std())
        blo, bhi = centre - spread * T(lower), centre + spread * T(upper)
        lo, hi = max(lo, blo), min(hi, bhi)
        prev, it = s.size, it + 1
    if stats is None:
        stats = final(v[inside(lo, hi)])
    mask = ~np.isfinite(v)
    if not (np.isnan(blo) or np.isnan(bhi)):
        mask |= (v < blo) | (v > bhi) if inclusive else ~((v > blo) & (v < bhi))
    return dict(lo=T(blo), hi=T(bhi), mask=mask, inside=inside(lo, hi), iterations=it,
                stats=tuple(T(s) for s in stats))


def chunkings(rng, shape):
    """Whole, one small chunk size everywhere, and random cuts."""
    return [shape, tuple(max(1, n // 5) for n in shape),
            tuple(tuple(random_chunks(rng, n, int(rng.integers(2, min(n, 6) + 1))))
                  for n in shape)]


def assert_clip_equal(got_bounds, want, dtype, exact):
    """Bounds equal (bit for bit where every step is exact arithmetic in
    the data's precision or a float32 rounding of float64 sums; within
    float64 rounding otherwise)."""
    for g, w in zip(got_bounds, (want["lo"], want["hi"])):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-300)


def masks_agree(got, want, x, lo, hi):
    """Masks equal but for values at a float64 rounding of a bound."""
    differ = got != want
    if differ.any():
        v = x[differ].astype(np.float64)
        near = np.minimum(abs(v - float(lo)), abs(v - float(hi))) <= 1e-12 * (abs(lo) + abs(hi))
        assert near.all(), f"{int((~near).sum())} values clipped differently"


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("cenfunc, stdfunc", [("median", "std"), ("mean", "std"),
                                              ("median", "mad_std"), ("mean", "mad_std")])
def test_dask_sigma_clip_equals_whole_array(rng, da, dtype, cenfunc, stdfunc):
    from gpuarr.dask import stats
    x = clip_sample(rng, (61, 47), dtype, outliers=0.05)
    exact = np.dtype(dtype) == np.float32 or (cenfunc, stdfunc) == ("median", "mad_std")
    for chunks, kw in zip(chunkings(rng, x.shape) * 2,
                          (dict(), dict(sigma=2.5, maxiters=None),
                           dict(sigma_lower=2, sigma_upper=4, maxiters=2),
                           dict(maxiters=None, inclusive=False))):
        d = da.from_array(x, chunks=chunks)
        want = reference_clip(x, cenfunc=cenfunc, stdfunc=stdfunc, **kw)
        got, lo, hi = stats.sigma_clip(d, cenfunc=cenfunc, stdfunc=stdfunc,
                                       return_bounds=True, **kw)
        assert_clip_equal((lo, hi), want, dtype, exact)
        assert isinstance(got, stats.ClippedArray) and got.data is d
        assert isinstance(got.mask, da.Array) and got.mask.chunks == d.chunks
        mask = got.mask.compute()
        if exact:
            np.testing.assert_array_equal(mask, want["mask"])
        else:
            masks_agree(mask, want["mask"], x, lo, hi)
        survivors = stats.sigma_clip(d, cenfunc=cenfunc, stdfunc=stdfunc, masked=False,
                                     **kw).compute()
        assert survivors.dtype == x.dtype
        if exact:
            np.testing.assert_array_equal(survivors, want["survivors"])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_dask_sigma_clipped_stats_equal_whole_array(rng, da, dtype):
    from gpuarr.dask import stats
    x = clip_sample(rng, (50, 70), dtype, outliers=0.05)
    for chunks, kw in zip(chunkings(rng, x.shape) * 2,
                          (dict(), dict(maxiters=None, std_ddof=1),
                           dict(cenfunc="mean", stdfunc="mad_std", sigma=2.5),
                           dict(maxiters=None, inclusive=False), dict(maxiters=1))):
        d = da.from_array(x, chunks=chunks)
        want = reference_clip(x, **kw)["stats"]
        got = stats.sigma_clipped_stats(d, **kw)
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
        assert got[1] == want[1]                    # the median: exact
        np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-12)


def on_bounds(rng, dtype, sigma):
    """Data with values exactly on the first clip's bounds (median and
    MAD-based std, both exact selections): copies of the bounds and of the
    median, two on either side of both medians, leave them unchanged."""
    x = clip_sample(rng, 999, dtype, outliers=0.05)
    first = reference_clip(x, sigma=sigma, maxiters=1, stdfunc="mad_std")
    med = np.median(x)
    extra = np.array([first["lo"], med, med, first["hi"]] * 3, dtype)
    return rng.permutation(np.concatenate([x, extra])), first["lo"], first["hi"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("inclusive", [True, False])
def test_dask_sigma_clip_values_on_the_bounds(rng, da, dtype, inclusive):
    from gpuarr.dask import stats
    x, lo, hi = on_bounds(rng, dtype, 2.0)
    want = reference_clip(x, sigma=2.0, maxiters=1, stdfunc="mad_std", inclusive=inclusive)
    assert (want["lo"], want["hi"]) == (lo, hi)
    assert (x == lo).sum() >= 3 and (x == hi).sum() >= 3
    for chunks in chunkings(rng, x.shape):
        got, glo, ghi = stats.sigma_clip(da.from_array(x, chunks=chunks), sigma=2.0, maxiters=1,
                                         stdfunc="mad_std", inclusive=inclusive,
                                         return_bounds=True)
        assert (glo, ghi) == (lo, hi)
        mask = got.mask.compute()
        np.testing.assert_array_equal(mask, want["mask"])
        assert mask[x == lo].all() != inclusive and mask[x == hi].all() != inclusive
        for kw in (dict(maxiters=None), dict(maxiters=4)):
            later = reference_clip(x, sigma=2.0, stdfunc="mad_std", inclusive=inclusive, **kw)
            got = stats.sigma_clip(da.from_array(x, chunks=chunks), sigma=2.0, masked=False,
                                   stdfunc="mad_std", inclusive=inclusive, **kw).compute()
            np.testing.assert_array_equal(got, later["survivors"])


@pytest.mark.parametrize("kind", ["grid", "spike", "constant", "nonfinite"])
def test_dask_sigma_clip_repeated_and_special_values(rng, da, kind):
    from gpuarr.dask import stats
    x = clip_sample(rng, (40, 45), np.float32, outliers=0.1)
    if kind == "grid":
        x = np.round(x * 2) / np.float32(2)
    elif kind == "spike":
        x.flat[rng.choice(x.size, 400, replace=False)] = np.float32(10)
    elif kind == "constant":
        x[:] = np.float32(3.5)
    else:
        x.flat[rng.choice(x.size, 30, replace=False)] = [np.nan, np.inf, -np.inf] * 10
    for chunks, kw in zip(chunkings(rng, x.shape),
                          (dict(maxiters=None), dict(maxiters=None, inclusive=False, sigma=2),
                           dict(stdfunc="mad_std", maxiters=3))):
        d = da.from_array(x, chunks=chunks)
        want = reference_clip(x, **kw)
        got, lo, hi = stats.sigma_clip(d, return_bounds=True, **kw)
        assert_clip_equal((lo, hi), want, np.float32, True)
        np.testing.assert_array_equal(got.mask.compute(), want["mask"])
        np.testing.assert_array_equal(stats.sigma_clip(d, masked=False, **kw).compute(),
                                      want["survivors"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            np.testing.assert_array_equal(stats.sigma_clipped_stats(d, **kw)[1],
                                          want["stats"][1])


def test_dask_sigma_clip_empties_and_masks(rng, da):
    """Everything clipped (NaN bounds, nothing left), the lesson's strict
    bounds around a constant, an empty array, mask and mask_value."""
    from gpuarr.dask import stats
    x = np.arange(1000, dtype=np.float64)
    d = da.from_array(x, chunks=300)
    _, lo, hi = stats.sigma_clip(d, sigma=-1, maxiters=None, return_bounds=True)
    assert np.isnan(lo) and np.isnan(hi)
    assert stats.sigma_clip(d, sigma=-1, masked=False).compute().size == 0
    assert all(np.isnan(stats.sigma_clipped_stats(d, sigma=-1)))
    c = da.full((100,), 10, dtype=np.float32, chunks=30)
    assert stats.sigma_clip(c, maxiters=None, masked=False, inclusive=False).compute().size == 0
    assert stats.sigma_clipped_stats(c) == (10, 10, 0)
    e = da.zeros((0, 3), chunks=2)
    assert all(np.isnan(stats.sigma_clipped_stats(e)))
    assert stats.sigma_clip(e, masked=False).compute().size == 0
    y = clip_sample(rng, (30, 40), np.float64, outliers=0.05)
    m = rng.random(y.shape) < 0.1
    y[5, :] = -999.0
    want = reference_clip(np.where(m | (y == -999.0), np.nan, y))["stats"]
    got = stats.sigma_clipped_stats(da.from_array(y, chunks=7),
                                    mask=da.from_array(m, chunks=11), mask_value=-999.0)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="all masked"):
        stats.sigma_clipped_stats(da.from_array(y, chunks=7), mask=da.ones(y.shape, dtype=bool,
                                                                            chunks=9))


def test_dask_sigma_clip_like_astropy(rng, da):
    astropy_stats = pytest.importorskip("astropy.stats")
    from gpuarr.dask import stats
    x = clip_sample(rng, (80, 90), np.float64, outliers=0.05)
    d = da.from_array(x, chunks=(17, 31))
    for kw in (dict(), dict(maxiters=None, sigma=2.5), dict(stdfunc="mad_std")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want, wlo, whi = astropy_stats.sigma_clip(x, return_bounds=True, **kw)
            wstats = astropy_stats.sigma_clipped_stats(x, **kw)
        got, lo, hi = stats.sigma_clip(d, return_bounds=True, **kw)
        np.testing.assert_allclose([lo, hi], [wlo, whi], rtol=1e-12)
        masks_agree(got.mask.compute(), np.ma.getmaskarray(want), x, wlo, whi)
        np.testing.assert_allclose(stats.sigma_clipped_stats(d, **kw), wstats, rtol=1e-12)


def test_dask_clipped_array(rng, da):
    from gpuarr.dask import stats
    x = clip_sample(rng, (20, 30), np.float32, outliers=0.05)
    got = stats.sigma_clip(da.from_array(x, chunks=(7, 11)), sigma=2)
    want = reference_clip(x, sigma=2)["mask"]
    assert got.shape == x.shape and got.dtype == x.dtype and got.ndim == 2 and got.size == x.size
    assert got.count() == int((~want).sum())
    np.testing.assert_array_equal(got.filled(-1.0).compute(), np.where(want, -1, x))
    np.testing.assert_array_equal(got.compressed().compute(), x[~want])
    ma = got.get()
    assert isinstance(ma, np.ma.MaskedArray)
    np.testing.assert_array_equal(ma.mask, want)
    assert "ClippedArray" in repr(got)


# ---------------------------------------------------- along axes ----

def axis_chunkings(rng, shape, axes):
    """chunkings() plus the clipped axes whole with the others cut, and the
    clipped axes cut with the others whole."""
    small = tuple(max(1, n // 3) for n in shape)
    return chunkings(rng, shape) + [
        tuple(n if i in axes else small[i] for i, n in enumerate(shape)),
        tuple(small[i] if i in axes else n for i, n in enumerate(shape))]


def assert_rows_equal(d, x, axis, kw, want, exact):
    """sigma_clip and sigma_clipped_stats of d along axis against
    reference_clip's rows (want): bounds, mask, NaN-filled copy, the
    statistics (their shapes and dtypes as gpuarr.stats gives them, the
    median exact)."""
    from gpuarr.dask import stats
    clip_kw = {k: v for k, v in kw.items() if k != "std_ddof"}
    got, lo, hi = stats.sigma_clip(d, axis=axis, return_bounds=True, **clip_kw)
    scale = abs(want["lo"]) + abs(want["hi"])  # a bound near 0 is a difference of the two
    for g, w in zip((lo, hi), (want["lo"], want["hi"])):
        assert np.shape(g) == w.shape and np.asarray(g).dtype == w.dtype
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
            assert (abs(g - w) <= 1e-13 * scale)[~np.isnan(w)].all()
    assert isinstance(got, stats.ClippedArray) and got.data is d
    assert got.mask.chunks == d.chunks
    mask = got.mask.compute()
    filled = stats.sigma_clip(d, axis=axis, masked=False, **clip_kw)
    assert filled.chunks == d.chunks and filled.dtype == want["filled"].dtype
    if exact:
        np.testing.assert_array_equal(mask, want["mask"])
        np.testing.assert_array_equal(filled.compute(), want["filled"])
    differ = mask != want["mask"]                  # only at a float64 rounding of a bound
    if differ.any():
        assert not exact
        v = x[differ].astype(np.float64)
        rlo, rhi = (np.broadcast_to(np.expand_dims(b, axis), x.shape)[differ] for b in (lo, hi))
        assert (np.minimum(abs(v - rlo), abs(v - rhi)) <= 1e-12 * (abs(rlo) + abs(rhi))).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        wstats = reference_clip(x, axis=axis, **kw)["stats"]
    gstats = stats.sigma_clipped_stats(d, axis=axis, **kw)
    for g, w in zip(gstats, wstats):
        assert np.shape(g) == w.shape and np.asarray(g).dtype == w.dtype
    # a row where a value on a bound was clipped the other way has other
    # survivors, so other statistics (the median moves by whole values)
    axes = tuple(a % x.ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
    same = ~differ.any(axis=axes)
    gstats = [np.asarray(g)[same] for g in gstats]
    wstats = [w[same] for w in wstats]
    np.testing.assert_array_equal(gstats[1], wstats[1])              # the median: exact
    np.testing.assert_allclose(gstats, wstats, rtol=1e-6 if x.dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2), (2, -3), (0, 1, 2)])
def test_dask_sigma_clip_along_axes(rng, da, dtype, axis):
    x = clip_sample(rng, (23, 19, 31), dtype, outliers=0.06)
    axes = tuple(a % 3 for a in (axis if isinstance(axis, tuple) else (axis,)))
    kws = (dict(), dict(sigma=2.5, maxiters=None, std_ddof=1),
           dict(sigma_lower=2, sigma_upper=4, maxiters=2, cenfunc="mean"),
           dict(stdfunc="mad_std", maxiters=None, inclusive=False),
           dict(cenfunc="mean", stdfunc="mad_std", sigma=2))
    for chunks, kw in zip(axis_chunkings(rng, x.shape, axes), kws):
        want = reference_clip(x, axis=axis, **{k: v for k, v in kw.items() if k != "std_ddof"})
        exact = np.dtype(dtype) == np.float32 or kw.get("stdfunc") == "mad_std" and \
            kw.get("cenfunc", "median") == "median"
        assert_rows_equal(da.from_array(x, chunks=chunks), x, axis, kw, want, exact)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dask_sigma_clip_rows_converge_apart(rng, da, dtype):
    """Rows that converge after different numbers of clips, rows that are
    clipped empty (they keep the bounds that emptied them), rows of NaN,
    NaN and infinities among the values, a constant row."""
    x = clip_sample(rng, (40, 64), dtype, outliers=0.0)
    for r in range(0, 40, 4):                 # a chain of k outliers: one clip each
        k = r // 4 % 6
        x[r, 10:10 + k] = 10 + 2 * 4.0 ** np.arange(k + 1, 1, -1)
    x[1] = 7.0                                # constant: kept, or clipped empty when strict
    x[2] = np.nan
    x[3, ::5] = np.nan
    x[5, ::7] = np.inf
    x[6, 1::9] = -np.inf
    x[7, :5] = [1.0, 2.0, 3.0, 1e6, -1e6]
    x[7, 5:] = np.nan
    for kw in (dict(maxiters=None), dict(maxiters=None, inclusive=False, sigma=2),
               dict(maxiters=3, stdfunc="mad_std"), dict(sigma=-1, maxiters=4)):
        want = reference_clip(x, axis=1, **kw)
        if kw.get("sigma") != -1 and kw["maxiters"] is None:
            assert len(np.unique(want["iterations"])) >= 4
        if kw.get("inclusive") is False or kw.get("sigma") == -1:
            assert want["mask"][1].all() and want["lo"][1] == want["hi"][1] == 7.0 \
                or kw.get("sigma") == -1 and not np.isnan(want["lo"][1])
        assert np.isnan(want["lo"][2]) and want["mask"][2].all()
        for chunks in ((40, 64), (7, 64), (40, 9), (13, (20, 1, 43))):
            d = da.from_array(x, chunks=chunks)
            assert_rows_equal(d, x, 1, kw, want, dtype == np.float32)
            assert_rows_equal(d.T, x.T, 0, kw, reference_clip(x.T, axis=0, **kw),
                              dtype == np.float32)


def test_dask_sigma_clip_rows_numpy_alike(rng, da):
    """_clip_rows against reference_clip row by row on random rows of small
    integers (ties, values on the bounds: MAD-based spreads, exact), and
    the rechunking: blocks of whole rows within the larger of the input's
    chunk and array.chunk-size, one row at least."""
    import dask
    from gpuarr.dask import stats
    x = rng.integers(-5, 6, (300, 11)).astype(np.float64)
    x[rng.random(x.shape) < 0.05] = 40.0
    mad = dict(stdfunc="mad_std")
    for kw in (dict(sigma=1.5, maxiters=None), dict(sigma=1, inclusive=False, maxiters=None),
               dict(sigma=0.5, maxiters=2, cenfunc="mean")):
        kw.update(mad)
        want = reference_clip(x, axis=-1, **kw)
        got = stats._clip_rows(x, single_checked(kw), kw.get("inclusive", True))
        np.testing.assert_array_equal(got[:, 0], want["lo"])
        np.testing.assert_array_equal(got[:, 1], want["hi"])
        np.testing.assert_array_equal(got[:, 3], want["stats"][1])
        np.testing.assert_allclose(got[:, [2, 4]], np.stack(want["stats"])[[0, 2]].T,
                                   rtol=1e-12, atol=1e-15)
    d = da.from_array(x, chunks=(50, 3))
    with dask.config.set({"array.chunk-size": "1KiB"}):
        states = stats._row_states(d, (1,), single_checked(mad), True, np.dtype(np.float64))
        assert max(states.chunks[0]) * 11 * 8 <= 50 * 3 * 8
        np.testing.assert_array_equal(states[:, 0, 0].compute(),
                                      reference_clip(x, axis=1, **mad)["lo"])
    wide = da.from_array(np.tile(x, (1, 40)), chunks=(10, 40))   # rows of 3520 bytes
    with dask.config.set({"array.chunk-size": "1KiB"}):
        states = stats._row_states(wide, (1,), single_checked(mad), True, np.dtype(np.float64))
    assert set(states.chunks[0]) == {1}      # a row over the limit: one row a block


def single_checked(kw):
    from gpuarr import stats as single
    k = dict(sigma=3, sigma_lower=None, sigma_upper=None, maxiters=5, cenfunc="median",
             stdfunc="std")
    k.update({key: v for key, v in kw.items() if key != "inclusive"})
    return single._check(**k)


def test_dask_sigma_clip_axis_empties_and_masks(rng, da):
    from gpuarr.dask import stats
    e = da.zeros((0, 3), chunks=2)
    assert all(np.isnan(stats.sigma_clipped_stats(e, axis=0)))
    assert stats.sigma_clip(e, axis=1, masked=False).shape == (0, 3)
    assert stats.sigma_clip(e, axis=0).mask.compute().shape == (0, 3)
    y = clip_sample(rng, (30, 40), np.float64, outliers=0.05)
    m = rng.random(y.shape) < 0.1
    y[5, :] = -999.0
    want = reference_clip(np.where(m | (y == -999.0), np.nan, y), axis=0)["stats"]
    got = stats.sigma_clipped_stats(da.from_array(y, chunks=7), axis=0,
                                    mask=da.from_array(m, chunks=11), mask_value=-999.0)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    x = clip_sample(rng, (20, 30), np.float32, outliers=0.05)
    got = stats.sigma_clip(da.from_array(x, chunks=(7, 11)), sigma=2, axis=1)
    want = reference_clip(x, sigma=2, axis=1)["mask"]
    assert got.count() == int((~want).sum())
    np.testing.assert_array_equal(got.filled(-1.0).compute(), np.where(want, -1, x))
    np.testing.assert_array_equal(got.compressed().compute(), x[~want])
    np.testing.assert_array_equal(got.get().mask, want)


@pytest.mark.parametrize("kw, exc, word", [
    (dict(cenfunc="mode"), ValueError, "cenfunc"),
    (dict(stdfunc=np.std), TypeError, "stdfunc"),
    (dict(sigma="3"), TypeError, "sigma"),
    (dict(maxiters=-1), ValueError, "maxiters"),
    (dict(axis=1), np.exceptions.AxisError, "axis"),
    (dict(axis=-2), np.exceptions.AxisError, "axis"),
    (dict(axis=(0, -1)), ValueError, "repeated axis"),
    (dict(axis=1.0), TypeError, "axis must be"),
    (dict(axis=(0, "1")), TypeError, "axis must be"),
    (dict(axis=True), TypeError, "axis must be"),
    (dict(axis=0, maxiters=2.5), TypeError, "maxiters"),
])
def test_dask_sigma_clip_bad_arguments(da, kw, exc, word):
    from gpuarr.dask import stats
    d = da.zeros(10, chunks=3)
    for fn in (stats.sigma_clip, stats.sigma_clipped_stats):
        with pytest.raises(exc, match=word):
            fn(d, **kw)
    with pytest.raises(TypeError, match="data must be a dask array"):
        stats.sigma_clip(np.zeros(10))
    with pytest.raises(TypeError, match="mask must be a dask array"):
        stats.sigma_clipped_stats(d, mask=np.zeros(10, bool))
    with pytest.raises(ValueError, match="mask's shape"):
        stats.sigma_clipped_stats(d, mask=da.zeros(3, dtype=bool, chunks=3))
    with pytest.raises(TypeError, match="complex"):
        stats.sigma_clip(da.zeros(4, dtype=np.complex64, chunks=2))


# Under racecheck these take from 160 s to well over 8 minutes each (13-17x
# their memcheck time: dask runs hundreds of small launches from its worker
# threads, and racecheck instruments every launch), and racecheck reports
# "Detected a failure to track a kernel launch" for launches from several
# threads.  Their kernels are the ones tests/test_stats.py and the other
# dask tests run under racecheck.
RACECHECK_TOO_SLOW = pytest.mark.sanitizer_skip(
    reason="hundreds of dask-thread launches: too slow under racecheck", tools=("racecheck",))


@RACECHECK_TOO_SLOW
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dask_sigma_clip_of_gpuarr_chunks(rng, da, dtype):
    """On gpuarr chunks: gpuarr.stats' results on the whole array (bounds
    bit for bit in float32; the median always), masks as gpuarr chunks."""
    import gpuarr as gp
    from gpuarr import stats as single
    from gpuarr.dask import stats
    x = clip_sample(rng, (300, 500), dtype, outliers=0.05)
    d = da.from_array(x, chunks=(128, 200)).map_blocks(gp.asarray,
                                                        meta=gp.empty((0, 0), dtype=dtype))
    whole = gp.asarray(x)
    for kw in (dict(), dict(maxiters=None, inclusive=False), dict(stdfunc="mad_std", sigma=2.5)):
        got, lo, hi = stats.sigma_clip(d, return_bounds=True, **kw)
        want, wlo, whi = single.sigma_clip(whole, return_bounds=True, **kw)
        if dtype == np.float32:
            assert (lo, hi) == (wlo.get(), whi.get())
        np.testing.assert_allclose([lo, hi], [wlo.get(), whi.get()], rtol=1e-12)
        mask = got.mask.compute()
        assert isinstance(mask, gp.ndarray)
        masks_agree(mask.get(), want.mask.get(), x, lo, hi)
        survivors = stats.sigma_clip(d, masked=False, **kw).compute()
        assert isinstance(survivors, gp.ndarray) and survivors.dtype == dtype
        gstats = stats.sigma_clipped_stats(d, **kw)
        wstats = [v.get() for v in single.sigma_clipped_stats(whole, **kw)]
        assert gstats[1] == wstats[1]
        np.testing.assert_allclose(gstats, wstats, rtol=1e-6 if dtype == np.float32 else 1e-12)
    assert stats.median(d) == np.median(x)


@RACECHECK_TOO_SLOW
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("axis", [0, -1, (0, 2)])
def test_dask_sigma_clip_along_axes_of_gpuarr_chunks(rng, da, dtype, axis):
    """On gpuarr chunks, along axes (the clipped axes cut across chunks):
    gpuarr.stats' bounds, mask, NaN-filled copy and statistics on the whole
    array (bit for bit: each row runs gpuarr.stats' own kernel)."""
    import gpuarr as gp
    from gpuarr import stats as single
    from gpuarr.dask import stats
    x = clip_sample(rng, (60, 50, 70), dtype, outliers=0.05)
    if x.dtype.kind == "f":                  # a row of NaN (integers have none)
        x[3, :, 5] = np.nan
    d = da.from_array(x, chunks=(16, 25, 30)).map_blocks(gp.asarray,
                                                         meta=gp.empty((0, 0, 0), dtype=dtype))
    whole = gp.asarray(x)
    for kw in (dict(), dict(maxiters=None, inclusive=False), dict(stdfunc="mad_std", sigma=2.5),
               dict(sigma=-1)):
        got, lo, hi = stats.sigma_clip(d, axis=axis, return_bounds=True, **kw)
        want, wlo, whi = single.sigma_clip(whole, axis=axis, return_bounds=True, **kw)
        assert isinstance(lo, gp.ndarray) and lo.shape == wlo.shape and lo.dtype == wlo.dtype
        np.testing.assert_array_equal(lo.get(), wlo.get())
        np.testing.assert_array_equal(hi.get(), whi.get())
        mask = got.mask.compute()
        assert isinstance(mask, gp.ndarray)
        np.testing.assert_array_equal(mask.get(), want.mask.get())
        filled = stats.sigma_clip(d, axis=axis, masked=False, **kw).compute()
        wfilled = single.sigma_clip(whole, axis=axis, masked=False, **kw)
        assert filled.dtype == wfilled.dtype
        np.testing.assert_array_equal(filled.get(), wfilled.get())
        for g, w in zip(stats.sigma_clipped_stats(d, axis=axis, **kw),
                        single.sigma_clipped_stats(whole, axis=axis, **kw)):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_array_equal(g.get(), w.get())


# ============================= gpuarr as a Dask chunk type and backend ====

ROOT = __import__("os").path.dirname(__import__("os").path.dirname(__import__("os").path.abspath(
    __file__)))


def test_entry_points_declared():
    """pyproject.toml names the backend and the sizeof registrar, and both
    resolve; where gpuarr is installed, importlib.metadata lists them."""
    import importlib
    import importlib.metadata
    import tomllib
    with open(f"{ROOT}/pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    points = project["entry-points"]
    assert points["dask.array.backends"] == {"gpuarr": "gpuarr.dask._backend:GpuarrBackendEntrypoint"}
    assert points["dask.sizeof"] == {"gpuarr": "gpuarr.dask._register:register_lazily"}
    assert any(d.startswith("dask[array,distributed]") for d in project["optional-dependencies"]["dask"])
    for value in (*points["dask.array.backends"].values(), *points["dask.sizeof"].values()):
        module, name = value.split(":")
        assert callable(getattr(importlib.import_module(module), name))
    try:
        importlib.metadata.distribution("gpuarr")
    except importlib.metadata.PackageNotFoundError:
        return                                    # run from the source tree
    found = {ep.name: ep.value for ep in importlib.metadata.entry_points(
        group="dask.array.backends")}
    assert found.get("gpuarr") == points["dask.array.backends"]["gpuarr"]


def test_entry_points_found_by_dask(tmp_path, da):
    """With the entry points installed (a dist-info on the path, as pip
    writes it from pyproject.toml), importing Dask registers gpuarr's
    chunk support lazily and the backend "gpuarr" is found by name."""
    import subprocess
    import sys
    import tomllib
    with open(f"{ROOT}/pyproject.toml", "rb") as f:
        points = tomllib.load(f)["project"]["entry-points"]
    info = tmp_path / "gpuarr_entry_points-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gpuarr-entry-points\n"
                                   "Version: 0\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for group, eps in points.items()))
    code = ("import dask, dask.array\n"
            "from dask.sizeof import sizeof\n"
            "from dask.tokenize import normalize_token\n"
            "assert 'gpuarr' in sizeof._lazy\n"
            "from dask.array.backends import array_creation_dispatch as d\n"
            "print(type(d.dispatch('gpuarr')).__name__)\n")
    env = dict(__import__("os").environ, PYTHONPATH=f"{ROOT}:{tmp_path}")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "GpuarrBackendEntrypoint"


def test_backend_entrypoint_without_a_device(da):
    """The backend plugs into Dask's creation dispatch: its random state,
    bit generator and to_backend dispatch (what needs no device)."""
    import dask
    from dask.array.backends import ArrayBackendEntrypoint, array_creation_dispatch
    import gpuarr
    from gpuarr.dask import _backend
    entry = _backend.GpuarrBackendEntrypoint()
    assert isinstance(entry, ArrayBackendEntrypoint)
    array_creation_dispatch.register_backend("gpuarr", entry)
    with dask.config.set({"array.backend": "gpuarr"}):
        assert array_creation_dispatch.RandomState is gpuarr.random.RandomState
        assert array_creation_dispatch.default_bit_generator is _backend.Philox
    dispatch = entry.to_backend_dispatch()
    assert dispatch.dispatch(np.ndarray) is _backend._numpy_to_gpuarr


def test_registrations(da):
    """register() puts gpuarr's sizeof, token, array dispatches and (where
    distributed is installed) serializers into Dask's dispatch tables;
    the sizeof entry point only registers them lazily, for the 'gpuarr'
    top-level module."""
    from dask.array import dispatch
    from dask.sizeof import sizeof
    from dask.tokenize import normalize_token
    from dask.utils import Dispatch
    import gpuarr
    from gpuarr.dask import _register as _backend
    _backend.register()
    assert sizeof.dispatch(gpuarr.ndarray) is _backend.sizeof_array
    assert normalize_token.dispatch(gpuarr.ndarray) is _backend.normalize_array
    assert dispatch.concatenate_lookup.dispatch(gpuarr.ndarray) is gpuarr.concatenate
    assert dispatch.to_numpy_dispatch.dispatch(gpuarr.ndarray) is gpuarr.asnumpy
    try:
        from distributed.protocol import dask_deserialize, dask_serialize
    except ImportError:
        pass
    else:
        assert dask_serialize.dispatch(gpuarr.ndarray) is _backend.serialize_array
        assert dask_deserialize.dispatch(gpuarr.ndarray) is _backend.deserialize_array
    fresh = Dispatch("sizeof")
    _backend.register_lazily(fresh)
    assert "gpuarr" in fresh._lazy


class _Ptr:
    def __init__(self, ptr):
        self.ptr = ptr


class _DeviceLike:
    """What normalize_array and sizeof_array read of a gpuarr array; any
    read of the values fails."""

    def __init__(self, ptr=0x7f0000000000, shape=(4, 5), dtype=np.float32):
        self.data, self.shape, self.dtype = _Ptr(ptr), shape, np.dtype(dtype)
        self.strides = (shape[1] * self.dtype.itemsize, self.dtype.itemsize)
        self.nbytes = int(np.prod(shape)) * self.dtype.itemsize

    def get(self):
        raise AssertionError("copied to the host")

    def __array__(self, *args, **kwargs):
        raise AssertionError("copied to the host")


def test_token_and_sizeof_without_the_values():
    import dask
    from gpuarr.dask import _register as _backend
    a, b = _DeviceLike(), _DeviceLike()
    assert _backend.normalize_array(a) == _backend.normalize_array(a)
    assert _backend.normalize_array(a) != _backend.normalize_array(b)   # same memory, another object
    assert _backend.normalize_array(a)[1:5] == (0x7f0000000000, (4, 5), (20, 4), "<f4")
    assert _backend.sizeof_array(a) == 80
    with dask.config.set({"tokenize.ensure-deterministic": True}):
        with pytest.raises(RuntimeError, match="deterministic"):
            _backend.normalize_array(a)


def test_philox_bit_generator():
    """The bit generator Dask asks the backend for: a SeedSequence Dask can
    spawn, whose words seed gpuarr's generator (deterministic per seed)."""
    import pickle
    from gpuarr.dask._backend import Philox
    a, b = Philox(42), Philox(42)
    assert a == b and len(a) == 4 and all(0 <= w < 2 ** 32 for w in a)
    assert Philox(43) != a
    children = [Philox(s) for s in a._seed_seq.spawn(3)]
    assert len(set(children)) == 3
    assert pickle.loads(pickle.dumps(a)) == a
    assert "Philox" in repr(a)


# ------------------------------------------------- on gpuarr chunks (GPU) --

@pytest.fixture
def backend_found(da):
    """The backend "gpuarr" known to Dask by name, as its entry point makes
    it where gpuarr is installed (tests run from the source tree, where an
    earlier test's registration must not be what a test relies on)."""
    from dask.array.backends import array_creation_dispatch
    from gpuarr.dask import _backend
    array_creation_dispatch.register_backend("gpuarr", _backend.GpuarrBackendEntrypoint())


@pytest.fixture
def gpu_backend(backend_found):
    import dask
    with dask.config.set({"array.backend": "gpuarr"}):
        yield


@pytest.mark.gpu
def test_backend_creation_makes_gpuarr_chunks(da, gpu_backend):
    import gpuarr as gp
    for x, want in ((da.ones((50, 70), chunks=(20, 30)), np.ones((50, 70))),
                    (da.zeros((9,), dtype=np.int32, chunks=4), np.zeros(9, np.int32)),
                    (da.full((5, 6), 2.5, chunks=3), np.full((5, 6), 2.5)),
                    (da.arange(10, chunks=3), np.arange(10))):
        assert isinstance(x._meta, gp.ndarray)
        got = x.compute()
        assert isinstance(got, gp.ndarray)
        np.testing.assert_array_equal(got.get(), want)
    r = da.random.random((40, 30), chunks=(16, 16))
    assert isinstance(r._meta, gp.ndarray)
    v = r.compute().get()
    assert v.shape == (40, 30) and (v >= 0).all() and (v < 1).all() and np.unique(v).size > 1000
    g = da.random.default_rng(7).random((40, 30), chunks=16)
    np.testing.assert_array_equal(g.compute().get(), da.random.default_rng(7).random(
        (40, 30), chunks=16).compute().get())
    s = da.random.RandomState(3).normal(size=(100, 100), chunks=50)
    assert isinstance(s.compute(), gp.ndarray)


@pytest.mark.gpu
@pytest.mark.parametrize("keep", ["device", "host"])
def test_dask_label_of_gpuarr_chunks(rng, da, keep):
    """Labels of gpuarr chunks: SciPy's numbering of the whole image, a
    gpuarr meta (Dask cannot infer it from the functions that read
    block_info), and with "gpuarr.keep" = "host" each persisted pass held as
    NumPy chunks."""
    import dask
    import gpuarr as gp
    from gpuarr.dask import _keep, ndmeasure
    for _ in range(3):
        shape = tuple(int(n) for n in rng.integers(10, 70, 2))
        image = rng.random(shape) < 0.5
        chunks = tuple(tuple(random_chunks(rng, n, int(rng.integers(1, 5)))) for n in shape)
        with dask.config.set({"gpuarr.keep": keep}, scheduler="synchronous"):
            labels, count = ndmeasure.label(da.from_array(image, chunks=chunks).map_blocks(gp.asarray))
            assert isinstance(labels._meta, gp.ndarray) and labels.dtype == np.int32
            kept = _keep.keep(labels)
            held = kept.dask.values() if keep == "host" else ()
            assert all(not isinstance(v, gp.ndarray) for v in held)
            got = kept.compute()
        want, want_count = ndi.label(image)
        assert count == want_count and isinstance(got, gp.ndarray)
        np.testing.assert_array_equal(got.get(), want)


@pytest.mark.gpu
def test_numpy_chunks_to_the_gpu_and_back(rng, da, tmp_path, backend_found):
    """map_blocks(gp.asarray) infers gpuarr meta from a zero-size chunk;
    memmaps chunk without being read whole; like= and to_backend."""
    import gpuarr as gp
    host = rng.standard_normal((64, 48)).astype(np.float32)
    m = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float32,
                                  shape=host.shape)
    m[:] = host
    m.flush()
    for source in (host, np.load(tmp_path / "x.npy", mmap_mode="r")):
        d = da.from_array(source, chunks=(20, 17)).map_blocks(gp.asarray)
        assert isinstance(d._meta, gp.ndarray) and d._meta.size == 0
        back = d.map_blocks(gp.asnumpy)
        assert isinstance(back._meta, np.ndarray)
        np.testing.assert_array_equal(back.compute(), host)
        np.testing.assert_allclose(float(d.sum().compute()), host.astype(np.float64).sum(),
                                   rtol=1e-5)
        np.testing.assert_allclose(float(d.std().compute()), host.std(), rtol=1e-5)
        np.testing.assert_array_equal(d.rechunk((64, 48)).compute().get(), host)
        np.testing.assert_array_equal(d.T.compute().get(), host.T)
    # zeros, not empty: Dask casts the like= array (astype), which reads its
    # element; initcheck reports reading the unwritten one of empty(())
    like = da.asarray(host, like=gp.zeros(()))
    assert isinstance(like._meta, gp.ndarray)
    assert isinstance(da.arange(5, like=gp.zeros(()))._meta, gp.ndarray)
    to = da.from_array(host, chunks=20).to_backend("gpuarr")
    assert isinstance(to._meta, gp.ndarray) and isinstance(to.compute(), gp.ndarray)
    assert isinstance(to.to_backend("numpy").compute(), np.ndarray)


@pytest.mark.gpu
def test_sizeof_and_token_of_a_gpuarr_chunk(da):
    import dask
    from dask.sizeof import sizeof
    import gpuarr as gp
    x = gp.ones((100, 50), dtype=np.float32)
    assert sizeof(x) == x.nbytes == 20000
    assert dask.base.tokenize(x) == dask.base.tokenize(x)
    assert dask.base.tokenize(x) != dask.base.tokenize(x.copy())
    assert dask.base.tokenize(x) != dask.base.tokenize(x[1:])
    d = da.from_array(x, chunks=(50, 50))            # tokenizes x: no host copy
    assert isinstance(d._meta, gp.ndarray)
    np.testing.assert_array_equal(d.sum().compute().get(), 5000)


@pytest.mark.gpu
def test_distributed_serialization_of_gpuarr_chunks(rng, da):
    distributed = pytest.importorskip("distributed")
    from distributed.protocol import deserialize, serialize
    import gpuarr as gp
    from gpuarr.dask import _register as _backend
    _backend.register()
    for host in (rng.standard_normal((30, 20)).astype(np.float32),
                 np.arange(12, dtype=np.int64).reshape(3, 4)[:, ::2],
                 np.zeros((0, 5))):
        x = gp.asarray(host)
        header, frames = serialize(x, serializers=("dask",))
        assert header["serializer"] == "dask"
        y = deserialize(header, frames)
        assert isinstance(y, gp.ndarray) and y.dtype == host.dtype
        np.testing.assert_array_equal(y.get(), host)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.run(_backend.register)
        host = rng.standard_normal((200, 300))
        d = da.from_array(host, chunks=(50, 100)).map_blocks(gp.asarray).persist()
        total = (d * 2).sum().compute()
        np.testing.assert_allclose(float(total), 2 * host.sum(), rtol=1e-12)
        back = d.rechunk((200, 300)).compute()
        assert isinstance(back, gp.ndarray)
        np.testing.assert_array_equal(back.get(), host)


# ======================================== the pipeline on a mosaic ====

def whole_image_pipeline(image):
    """The four steps on the assembled image: gpuarr.stats' clipping (the
    lesson's mode) written with NumPy, then SciPy."""
    std = reference_clip(image, sigma=3, maxiters=None, inclusive=False)["stats"][2]
    labels, count = ndi.label(image > 5 * std)
    index = np.arange(1, count + 1)
    return (std, count, np.array(ndi.center_of_mass(image, labels, index)).reshape(-1, 2),
            ndi.sum_labels(image, labels, index))


def test_mosaic_pipeline_equals_the_whole_image(da):
    from gpuarr.dask import mosaic
    lines = []
    sky = mosaic.synthetic_mosaic(300, chunk=128)
    assert sky.chunks == ((128, 128, 44),) * 2 and sky.dtype == np.float32
    result = mosaic.pipeline(sky.persist(), report=lines.append)
    std, count, positions, fluxes = whole_image_pipeline(sky.compute())
    assert result["std"] == std and result["count"] == count > 5
    np.testing.assert_allclose(result["positions"], positions, rtol=1e-10)
    np.testing.assert_allclose(result["fluxes"], fluxes, rtol=1e-5)
    assert len(result["times"]) == 4 and len(lines) == 4 and f"{count} sources" in lines[2]


def test_mosaic_is_seamless_and_deterministic(da, monkeypatch):
    """Without noise the sources give the same image whatever the chunks
    (stamps cross chunk edges seamlessly); each chunk is the same on every
    call."""
    from gpuarr import datasets
    from gpuarr.dask import mosaic
    a = mosaic.synthetic_mosaic(200, chunk=64).compute()
    np.testing.assert_array_equal(a, mosaic.synthetic_mosaic(200, chunk=64).compute())
    np.testing.assert_array_equal(a[64:128, :64], mosaic.mosaic_chunk(
        mosaic._reaching(mosaic.source_list(200), 64, 128, 0, 64), (64, 0), (64, 64), (1, 0)))
    monkeypatch.setattr(datasets, "_SIGMA", 0.0)
    one = mosaic.synthetic_mosaic(200, chunk=200).compute()
    assert one.max() >= 0.09
    for chunk in (37, 64, 150):
        np.testing.assert_array_equal(mosaic.synthetic_mosaic(200, chunk=chunk).compute(), one)
    with pytest.raises(ValueError, match="chunk"):
        mosaic.synthetic_mosaic(100, chunk=2)
    with pytest.raises(TypeError, match="size"):
        mosaic.synthetic_mosaic(100.0)
    with pytest.raises(TypeError, match="xp"):
        mosaic.synthetic_mosaic(100, xp=da)


def test_mosaic_command(tmp_path):
    """python -m gpuarr --mosaic N on the CPU: the four steps, timed, and
    the sources; bad sizes are usage errors naming the option."""
    import subprocess
    import sys
    env = dict(__import__("os").environ, PYTHONPATH=ROOT, CUDA_VISIBLE_DEVICES="")
    out = subprocess.run([sys.executable, "-m", "gpuarr", "--mosaic", "256", "--chunk", "100",
                          "--cpu-only"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=240)
    assert out.returncode == 0, out.stderr
    for step in ("[0/4] made chunk by chunk", "[1/4] kappa-sigma background",
                 "[2/4] segmentation", "[3/4] labelling across chunks",
                 "[4/4] centre of mass + flux", "sources", "NumPy chunks"):
        assert step in out.stdout
    assert not list(tmp_path.iterdir())                      # no picture
    bad = subprocess.run([sys.executable, "-m", "gpuarr", "--mosaic", "256", "--chunk", "1"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert bad.returncode == 2 and "chunk" in bad.stderr


def test_mosaic_on_distributed_workers(da):
    """Two worker processes (NumPy chunks): the answers of one process."""
    pytest.importorskip("distributed")
    from gpuarr.dask import mosaic
    want = mosaic.run(200, 64, workers=0, use_gpu=False, report=lambda _: None)
    got = mosaic.run(200, 64, workers=2, use_gpu=False, report=lambda _: None)
    assert got["std"] == want["std"] and got["count"] == want["count"]
    np.testing.assert_allclose(got["fluxes"], want["fluxes"], rtol=1e-12)


def assert_same_answers(got, want):
    """Two mosaic runs' answers: the same background and count (some
    sources), positions and fluxes to the last bits that atomic per-label
    sums may order differently."""
    assert got["std"] == want["std"] and got["count"] == want["count"] > 0
    np.testing.assert_allclose(got["positions"], want["positions"], rtol=1e-12)
    np.testing.assert_allclose(got["fluxes"], want["fluxes"], rtol=1e-12)


def test_local_cluster_workers(da):
    """local_cluster: the workers asked for, single-threaded, no host
    memory limit (their chunks are on the GPU), gpuarr registered in each;
    shutdown stops them.  Bad counts name the argument."""
    pytest.importorskip("distributed")
    import os
    from gpuarr.dask import local_cluster
    client = local_cluster(2, gpu=False)
    try:
        workers = client.scheduler_info()["workers"].values()
        assert len(workers) == 2
        assert all(w["nthreads"] == 1 and not w["memory_limit"] for w in workers)
        seen = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
        assert list(seen.values()) == [os.environ.get("CUDA_VISIBLE_DEVICES")] * 2
    finally:
        client.shutdown()
    for kw, exc in ((dict(workers=0), ValueError), (dict(workers=1.5), TypeError),
                    (dict(workers=True), TypeError), (dict(threads=0), ValueError)):
        with pytest.raises(exc, match=next(iter(kw))):
            local_cluster(gpu=False, **kw)


def test_keep_place_and_numpy_chunks(da):
    """Dask's config "gpuarr.keep": device or host, anything else a
    ValueError naming the key; NumPy chunks are persisted as they are
    either way; run() and the command check their keep argument."""
    import dask
    from gpuarr.dask import _keep, mosaic
    assert _keep.place() == "device"
    x = da.arange(10, chunks=3)
    for where in _keep.PLACES:
        with dask.config.set({"gpuarr.keep": where}):
            assert _keep.place() == where
            kept = _keep.keep(x * 2)
            assert type(kept._meta) is np.ndarray and len(kept.dask) == kept.npartitions
            np.testing.assert_array_equal(kept.compute(), np.arange(10) * 2)
    with dask.config.set({"gpuarr.keep": "gpu"}), pytest.raises(ValueError, match="gpuarr.keep"):
        _keep.keep(x)
    with pytest.raises(ValueError, match="keep"):
        mosaic.run(64, 32, use_gpu=False, keep="disk", report=lambda _: None)
    out = mosaic.run(200, 64, use_gpu=False, keep="host", report=lambda _: None)
    assert out["count"] == mosaic.run(200, 64, use_gpu=False, report=lambda _: None)["count"]


@RACECHECK_TOO_SLOW
@pytest.mark.gpu
def test_mosaic_kept_on_host_under_a_memory_limit(da):
    """With the pool limited to a quarter of the mosaic's bytes (above what
    is in use), run() keeps the chunks in host memory by itself and gives
    the answers of the unlimited run; kept on the device it runs out of
    memory."""
    import gpuarr as gp
    from gpuarr.dask import mosaic
    want = mosaic.run(2048, 256, report=lambda _: None)
    pool = gp.get_default_memory_pool()
    limit = pool.get_limit()
    pool.free_all_blocks()
    pool.set_limit(size=pool.used_bytes() + 2048 * 2048 * 4 // 2)
    try:
        lines = []
        got = mosaic.run(2048, 256, report=lines.append)
        assert "kept in host memory" in lines[0]
        with pytest.raises(gp.cuda.OutOfMemoryError):
            mosaic.run(2048, 256, keep="device", report=lambda _: None)
    finally:
        pool.set_limit(size=limit or None)
    assert_same_answers(got, want)


@pytest.mark.gpu(devices=2)
def test_local_cluster_gives_each_worker_one_gpu(da):
    pytest.importorskip("distributed")
    from gpuarr.dask import local_cluster
    client = local_cluster()
    try:
        import gpuarr as gp
        # Each worker sees one device, and together they are the devices
        # this process sees (by UUID: under CUDA_VISIBLE_DEVICES=1,2 the
        # workers are given "1" and "2").
        props = gp.cuda.runtime.getDeviceProperties
        mine = sorted(props(i)["uuid"] for i in range(gp.cuda.get_device_count()))
        seen = client.run(lambda: (gp.cuda.get_device_count(), props(0)["uuid"]))
        assert all(v[0] == 1 for v in seen.values())
        assert sorted(v[1] for v in seen.values()) == mine
    finally:
        client.shutdown()


@RACECHECK_TOO_SLOW
@pytest.mark.gpu
def test_mosaic_on_gpuarr_chunks(da):
    """gpuarr chunks give the NumPy chunks' answers on the same mosaic."""
    import gpuarr as gp
    from gpuarr.dask import mosaic
    sky = mosaic.synthetic_mosaic(700, chunk=256, xp=gp).persist()
    assert isinstance(sky._meta, gp.ndarray)
    got = mosaic.pipeline(sky, report=lambda _: None)
    std, count, positions, fluxes = whole_image_pipeline(
        mosaic.synthetic_mosaic(700, chunk=256).compute())
    assert got["std"] == std and got["count"] == count
    np.testing.assert_allclose(got["positions"], positions, rtol=1e-8)
    np.testing.assert_allclose(got["fluxes"], fluxes, rtol=1e-5)
    out = mosaic.run(600, 256, report=lambda _: None)
    assert out["count"] > 0


@pytest.mark.gpu(devices=2)
def test_mosaic_on_two_gpu_workers(da):
    """A local cluster of two workers, one a GPU (gpuarr chunks pass
    between them as host frames): one process's answers."""
    pytest.importorskip("distributed")
    from gpuarr.dask import mosaic
    want = mosaic.run(700, 256, workers=0, use_gpu=True, report=lambda _: None)
    got = mosaic.run(700, 256, workers=2, use_gpu=True, report=lambda _: None)
    assert_same_answers(got, want)
