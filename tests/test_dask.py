"""gpuarr.dask's cross-block labelling (gpuarr/dask/_merge.py) on NumPy
blocks, labelled with SciPy: the labels of the blocks, merged and
renumbered, equal scipy.ndimage.label on the whole image, number for
number; and gpuarr.dask.ndmeasure.label on dask arrays of NumPy chunks
(where Dask is installed).  CPU only: the same steps on gpuarr chunks
need a GPU."""
import numpy as np
import pytest
import scipy.ndimage as ndi

from gpuarr.dask import _merge


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
