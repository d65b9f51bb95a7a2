"""gpuarr.scipy.ndimage's measurements against scipy.ndimage: values,
return formats (device arrays shaped like index, 0-d device arrays for a
scalar or no index, host tuples / lists of tuples for positions and
centres of mass, slices for find_objects) for every form of index (None,
int, absent int, list, range, unsorted with repeats, NumPy array, device
array, 2-d), label dtypes (int32, int64, uint8, float64, bool), value
dtypes, labels=None, broadcasting labels, and the lesson's CPU vs GPU
comparison of positions and fluxes on the synthetic sky."""
import numpy as np
import pytest
import scipy.ndimage as snd

import gpuarr as gp
from gpuarr.scipy import ndimage as gnd


STATS = ["sum_labels", "sum", "mean", "variance", "standard_deviation", "minimum", "maximum",
         "median"]


def host(x):
    return x.get() if isinstance(x, gp.ndarray) else x


def random_case(rng, shape=(57, 83), nlab=12, value_dtype=np.float64, label_dtype=np.int32):
    """Values and labels 0..nlab (0 frequent, every label present)."""
    values = (rng.standard_normal(shape) * 10).astype(value_dtype) \
        if np.dtype(value_dtype).kind == "f" else \
        rng.integers(-50, 50, shape).astype(value_dtype)
    labels = rng.integers(0, nlab + 1, shape)
    labels[rng.random(shape) < 0.3] = 0
    labels.flat[:nlab + 1] = np.arange(nlab + 1)
    return values, labels.astype(label_dtype)


INDEXES = {
    "none": lambda n: None,
    "int": lambda n: 3,
    "numpy_int": lambda n: np.int64(5),
    "list": lambda n: [1, 2, 3],
    "range": lambda n: range(1, n + 1),
    "unsorted_repeats": lambda n: [4, 2, 2, n, 1, 4],
    "numpy_array": lambda n: np.arange(1, n + 1),
    "two_d": lambda n: np.array([[1, 2], [3, 4]]),
    "with_zero": lambda n: [0, 1, 2],
}


def check_stat(name, values, labels, index, dev_index=False):
    want = getattr(snd, name)(values, labels, index)
    idx = gp.asarray(np.asarray(index)) if dev_index else index
    got = getattr(gnd, name)(gp.asarray(values), None if labels is None else gp.asarray(labels),
                             idx)
    assert isinstance(got, gp.ndarray), type(got)
    want = np.asarray(want)
    g = got.get()
    assert g.shape == want.shape, (name, g.shape, want.shape)
    np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-9, err_msg=name)
    if want.ndim == 0 and np.isscalar(index) or index is None:
        assert got.ndim == 0
    return got


# ------------------------------------------------ no GPU needed (CI) ---

def test_host_arrays_refused():
    with pytest.raises(TypeError, match="gpuarr.asarray"):
        gnd.sum_labels(np.ones(4))
    with pytest.raises(TypeError, match="gpuarr.asarray"):
        gnd.center_of_mass(np.ones((4, 4)))
    with pytest.raises(TypeError, match="gpuarr.asarray"):
        gnd.find_objects(np.ones(4, int))


def test_exports():
    for name in STATS + ["minimum_position", "maximum_position", "extrema", "center_of_mass",
                         "find_objects", "labeled_comprehension", "histogram", "value_indices",
                         "label"]:
        assert callable(getattr(gnd, name)), name


# ------------------------------------------------------------ GPU ---

@pytest.mark.gpu
@pytest.mark.parametrize("name", STATS)
@pytest.mark.parametrize("index", list(INDEXES))
def test_statistics(rng, name, index):
    values, labels = random_case(rng)
    check_stat(name, values, labels, INDEXES[index](12))


@pytest.mark.gpu
@pytest.mark.parametrize("name", STATS)
def test_statistics_device_index(rng, name):
    values, labels = random_case(rng)
    check_stat(name, values, labels, np.arange(1, 13), dev_index=True)
    check_stat(name, values, labels, [7, 3, 3, 11], dev_index=True)


@pytest.mark.gpu
@pytest.mark.parametrize("name", STATS)
def test_device_index_of_consecutive_labels(rng, name):
    """A device index holding consecutive integers once each is measured
    as a range (no table); near misses (a repeat, a gap, float labels)
    keep the table.  Every one must agree with SciPy (labels -1..11, all
    present: SciPy's median of an absent label is not NaN)."""
    values, labels = random_case(rng)
    labels = labels - 1
    for idx in ([1, 2, 3], [3, 1, 2], list(range(11, -2, -1)), [1, 1, 3], [2, 5], [0, 1, 2, 3],
                [-1, 0, 1], [4]):
        check_stat(name, values, labels, idx, dev_index=True)
        check_stat(name, values, labels.astype(np.float64), idx, dev_index=True)


@pytest.mark.gpu
@pytest.mark.parametrize("name", STATS)
def test_statistics_without_labels(rng, name):
    values, _ = random_case(rng)
    want = getattr(snd, name)(values)
    got = getattr(gnd, name)(gp.asarray(values))
    assert got.ndim == 0
    np.testing.assert_allclose(got.get(), want, rtol=1e-9, atol=1e-9)   # as check_stat


@pytest.mark.gpu
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64, np.uint8, np.uint16, np.float64,
                                         np.float32, np.uint64])
@pytest.mark.parametrize("value_dtype", [np.float32, np.float64, np.int16, np.uint8, np.int64])
def test_dtypes(rng, label_dtype, value_dtype):
    values, labels = random_case(rng, value_dtype=value_dtype, label_dtype=label_dtype)
    for name in ["sum_labels", "mean", "variance", "minimum", "maximum", "median"]:
        want = getattr(snd, name)(values, labels, range(1, 13))
        got = getattr(gnd, name)(gp.asarray(values), gp.asarray(labels), range(1, 13))
        # atol: sums that cancel (values ~10, the same bound as check_stat)
        np.testing.assert_allclose(got.get(), want, rtol=2e-6 if value_dtype == np.float32
                                   else 1e-9, atol=1e-9, err_msg=name)
    # scalar index: the dtype SciPy's scalar has
    for name in ["sum_labels", "minimum", "maximum"]:
        want = getattr(snd, name)(values, labels, 4)
        got = getattr(gnd, name)(gp.asarray(values), gp.asarray(labels), 4)
        assert got.ndim == 0
        assert got.dtype == np.asarray(want).dtype, (name, got.dtype, np.asarray(want).dtype)
        # SciPy sums a scalar index's values in their own float32, the
        # device in double: allow float32 rounding of sum(|x|), since a sum
        # with cancellation makes a relative bound alone meaningless
        scale = np.abs(values[labels == 4].astype(np.float64)).sum()
        atol = 4 * np.finfo(np.float32).eps * scale if value_dtype == np.float32 else 0
        np.testing.assert_allclose(got.get(), want, rtol=2e-6, atol=atol)


@pytest.mark.gpu
def test_bool_labels(rng):
    values, labels = random_case(rng)
    b = labels > 5
    for name in ["sum_labels", "mean", "maximum"]:
        check_stat(name, values, b, None)
        check_stat(name, values, b, [True])


@pytest.mark.gpu
def test_float_index_on_int_labels(rng):
    values, labels = random_case(rng)
    # SciPy compares labels == index; 2.5 matches nothing, 3.0 matches 3.
    for index in (3.0, [1.0, 2.0, 4.0]):
        check_stat("sum_labels", values, labels, index)


@pytest.mark.gpu
def test_broadcast_labels(rng):
    values = rng.standard_normal((20, 30))
    labels = rng.integers(0, 4, (1, 30))
    for name in ["sum_labels", "mean", "maximum"]:
        want = getattr(snd, name)(values, labels, [1, 2, 3])
        got = getattr(gnd, name)(gp.asarray(values), gp.asarray(labels), [1, 2, 3])
        np.testing.assert_allclose(got.get(), want, rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError):
        gnd.sum_labels(gp.asarray(values), gp.asarray(labels[:, :7]), [1])


@pytest.mark.gpu
def test_empty_index(rng):
    values, labels = random_case(rng)
    got = gnd.sum_labels(gp.asarray(values), gp.asarray(labels), [])
    assert got.shape == (0,)
    assert gnd.center_of_mass(gp.asarray(values), gp.asarray(labels), []) == []


@pytest.mark.gpu
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64, np.float64])
def test_index_tables(rng, label_dtype):
    """Indexes that need a slot table: small ones (made by the launch that
    clears the accumulators; device arrays of any dtype and layout, int64
    ones taken as they are, also for float labels), large ones (sorted),
    negative and absent labels, repeats."""
    values = rng.standard_normal((64, 80))
    labels = rng.integers(-5, 3000, values.shape).astype(label_dtype)
    perm = rng.permutation(np.arange(-6, 3010))
    for idx in (perm[:7], perm[:2048], perm[:2500], np.repeat(perm[:5], 3)):
        want = snd.sum_labels(values, labels, idx)
        for dev in (gp.asarray(idx), gp.asarray(idx.astype(np.int32)),
                    gp.asarray(idx.astype(np.float64)), gp.asarray(np.repeat(idx, 2))[::2]):
            got = gnd.sum_labels(gp.asarray(values), gp.asarray(labels), dev)
            np.testing.assert_allclose(got.get(), want, rtol=1e-9, atol=1e-12)
        got = gnd.mean(gp.asarray(values), gp.asarray(labels), list(idx))
        np.testing.assert_allclose(got.get(), snd.mean(values, labels, idx), rtol=1e-9,
                                   atol=1e-12)
    idx = perm[:300]
    com = gnd.center_of_mass(gp.asarray(np.abs(values) + 1), gp.asarray(labels),
                             gp.asarray(idx))
    with np.errstate(invalid="ignore"):                   # absent labels: NaN
        want = snd.center_of_mass(np.abs(values) + 1, labels, idx)
    np.testing.assert_allclose(np.array(com), np.array(want), rtol=1e-9)


# ---------------------------------------------------------- positions ---

def first_positions(values, labels, index, name):
    """The coordinates of the first element in raster order holding each
    index entry's minimum (maximum): gpuarr's rule, and what SciPy returns
    for index None or a scalar.  For a sequence index SciPy takes whichever
    tied element its unstable argsort puts first, so with ties its position
    may be another element holding the same extreme."""
    pick = np.argmin if name == "minimum_position" else np.argmax
    flat_values = values.ravel()

    def first(mask):
        where = np.flatnonzero(mask)
        return tuple(int(c) for c in np.unravel_index(where[pick(flat_values[where])],
                                                        values.shape))

    if labels is None:
        return first(np.ones(values.size, bool))
    flat_labels = np.broadcast_to(labels, values.shape).ravel()
    if index is None:
        return first(flat_labels > 0)
    if np.isscalar(index):
        return first(flat_labels == index)
    return [first(flat_labels == i) for i in np.asarray(index).ravel()]


def check_positions(got, values, labels, index, name, scipy_result):
    """got: SciPy's format (a tuple of ints, or a list of them), the first
    extreme in raster order, and the same extremes as SciPy's own answer
    (the same positions where no extreme is tied)."""
    want = first_positions(values, labels, index, name)
    if isinstance(want, tuple):
        assert isinstance(got, tuple), type(got)
        assert all(type(v) is int for v in got), got
        got_list, scipy_list = [got], [tuple(scipy_result)]
    else:
        assert isinstance(got, list), type(got)
        assert all(isinstance(t, tuple) and all(type(v) is int for v in t) for t in got), got
        got_list, scipy_list = got, [tuple(w) for w in scipy_result]
    assert got == want
    assert [values[g] for g in got_list] == [values[w] for w in scipy_list]
    unique = len(np.unique(values)) == values.size
    if unique or labels is None or index is None or np.isscalar(index):
        assert got_list == [tuple(int(c) for c in w) for w in scipy_list]


def test_first_positions_reference():
    """The reference itself (no GPU): ties resolve to the first element."""
    values = np.array([[3, 1, 1], [0, 5, 0]])
    labels = np.array([[1, 1, 2], [2, 1, 2]])
    assert first_positions(values, labels, [1, 2], "minimum_position") == [(0, 1), (1, 0)]
    assert first_positions(values, labels, [2, 1], "maximum_position") == [(0, 2), (1, 1)]
    assert first_positions(values, labels, 2, "maximum_position") == (0, 2)
    assert first_positions(values, None, None, "minimum_position") == (1, 0)
    assert first_positions(values, labels, None, "minimum_position") == (1, 0)
    with pytest.raises(AssertionError):
        check_positions([(1, 2), (1, 0)], values, labels, [1, 2], "minimum_position",
                        snd.minimum_position(values, labels, [1, 2]))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["minimum_position", "maximum_position"])
@pytest.mark.parametrize("index", ["none", "int", "list", "range", "unsorted_repeats"])
@pytest.mark.parametrize("value_dtype", [np.int16, np.float64])   # many ties / none
def test_positions(rng, name, index, value_dtype):
    values, labels = random_case(rng, value_dtype=value_dtype)
    idx = INDEXES[index](12)
    got = getattr(gnd, name)(gp.asarray(values), gp.asarray(labels), idx)
    check_positions(got, values, labels, idx, name, getattr(snd, name)(values, labels, idx))


@pytest.mark.gpu
def test_positions_3d_and_without_labels(rng):
    values = rng.integers(0, 5, (6, 7, 8)).astype(np.float32)
    labels = rng.integers(0, 4, (6, 7, 8))
    for name in ["minimum_position", "maximum_position"]:
        check_positions(getattr(gnd, name)(gp.asarray(values)), values, None, None, name,
                        getattr(snd, name)(values))
        check_positions(getattr(gnd, name)(gp.asarray(values), gp.asarray(labels), [1, 2, 3]),
                        values, labels, [1, 2, 3], name,
                        getattr(snd, name)(values, labels, [1, 2, 3]))
        check_positions(getattr(gnd, name)(gp.asarray(values), gp.asarray(labels),
                                           gp.asarray(np.array([3, 1]))),
                        values, labels, [3, 1], name, getattr(snd, name)(values, labels, [3, 1]))


@pytest.mark.gpu
@pytest.mark.parametrize("index", ["none", "int", "list", "range", "unsorted_repeats"])
@pytest.mark.parametrize("value_dtype", [np.int16, np.float32])
def test_extrema(rng, index, value_dtype):
    values, labels = random_case(rng, value_dtype=value_dtype)
    idx = INDEXES[index](12)
    wlo, whi, wplo, wphi = snd.extrema(values, labels, idx)
    glo, ghi, gplo, gphi = gnd.extrema(gp.asarray(values), gp.asarray(labels), idx)
    np.testing.assert_array_equal(glo.get(), wlo)
    np.testing.assert_array_equal(ghi.get(), whi)
    check_positions(gplo, values, labels, idx, "minimum_position", wplo)
    check_positions(gphi, values, labels, idx, "maximum_position", wphi)


@pytest.mark.gpu
@pytest.mark.parametrize("index", ["none", "int", "list", "range", "unsorted_repeats",
                                   "numpy_array"])
@pytest.mark.parametrize("shape", [(500,), (57, 83), (9, 10, 11)])
def test_center_of_mass(rng, index, shape):
    values, labels = random_case(rng, shape=shape)
    values = np.abs(values) + 1                     # positive masses: well defined centres
    idx = INDEXES[index](12)
    want = snd.center_of_mass(values, labels, idx)
    got = gnd.center_of_mass(gp.asarray(values), gp.asarray(labels), idx)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        assert all(isinstance(v, float) for v in got)
        np.testing.assert_allclose(got, want, rtol=1e-9)
    else:
        assert isinstance(got, list) and all(isinstance(t, tuple) for t in got)
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-9)


@pytest.mark.gpu
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_large_dense_labels(rng, label_dtype):
    """An image of several million elements, most of them labelled: every
    block's queue of candidates fills and is taken several times per pass
    (the sky's sparse sources take it once)."""
    values = rng.standard_normal((1531, 1777))
    labels = rng.integers(0, 40, values.shape).astype(label_dtype)
    index = np.arange(1, 40)
    dv, dl, di = gp.asarray(values), gp.asarray(labels), gp.asarray(index)
    for name in ("sum_labels", "variance", "maximum"):
        # atol: sums of ~70,000 values of either sign cancel (values ~1)
        np.testing.assert_allclose(getattr(gnd, name)(dv, dl, di).get(),
                                   getattr(snd, name)(values, labels, index), rtol=1e-9,
                                   atol=1e-9)
    np.testing.assert_allclose(np.array(gnd.center_of_mass(dv + 10, dl, di)),
                               np.array(snd.center_of_mass(values + 10, labels, index)),
                               rtol=1e-9)
    assert gnd.minimum_position(dv, dl, di) == first_positions(values, labels, index,
                                                                "minimum_position")


@pytest.mark.gpu
def test_center_of_mass_device_index_and_no_labels(rng):
    values, labels = random_case(rng)
    values = np.abs(values) + 1
    want = snd.center_of_mass(values, labels, np.arange(1, 13))
    got = gnd.center_of_mass(gp.asarray(values), gp.asarray(labels), gp.arange(1, 13))
    assert isinstance(got, list) and isinstance(got[0], tuple)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-9)
    np.testing.assert_allclose(gnd.center_of_mass(gp.asarray(values)),
                               snd.center_of_mass(values), rtol=1e-9)
    # Each call's floats are its own: a later call leaves an earlier list as it was.
    other = gnd.center_of_mass(gp.asarray(values[::-1].copy()), gp.asarray(labels),
                               gp.arange(1, 13))
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-9)
    assert all(type(v) is float for row in got + other for v in row)


# ------------------------------------------------------- find_objects ---

@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(300,), (40, 50), (7, 8, 9)])
def test_find_objects(rng, shape):
    lab = rng.integers(0, 9, shape)
    lab[lab == 4] = 0                                 # a missing label -> None
    for dtype in (np.int32, np.int64, np.uint8):
        l = lab.astype(dtype)
        assert gnd.find_objects(gp.asarray(l)) == snd.find_objects(l)
        assert gnd.find_objects(gp.asarray(l), max_label=5) == snd.find_objects(l, max_label=5)
        assert gnd.find_objects(gp.asarray(l), max_label=12) == snd.find_objects(l, max_label=12)
    assert gnd.find_objects(gp.zeros(shape, np.int32)) == snd.find_objects(np.zeros(shape, int))


@pytest.mark.gpu
def test_find_objects_of_label_output(rng):
    mask = rng.random((100, 120)) < 0.3
    want = snd.find_objects(snd.label(mask)[0])
    got = gnd.find_objects(gnd.label(gp.asarray(mask))[0])
    assert got == want


# ----------------------------------- histogram, comprehension, indices ---

@pytest.mark.gpu
@pytest.mark.parametrize("index", ["none", "int", "list"])
def test_histogram(rng, index):
    values, labels = random_case(rng)
    idx = INDEXES[index](12)
    want = snd.histogram(values, -20, 20, 16, labels, idx)
    got = gnd.histogram(gp.asarray(values), -20, 20, 16, gp.asarray(labels), idx)
    if isinstance(idx, list):
        np.testing.assert_array_equal(got.get(), np.stack(list(want)))
    else:
        np.testing.assert_array_equal(got.get(), want)
    np.testing.assert_array_equal(gnd.histogram(gp.asarray(values), -5, 5, 7).get(),
                                  snd.histogram(values, -5, 5, 7))


@pytest.mark.gpu
def test_labeled_comprehension(rng):
    values, labels = random_case(rng)
    idx = [1, 2, 5, 40]                               # 40: absent -> default

    def f_cpu(v):
        return v.max() - v.min()

    def f_gpu(v):
        return (v.max() - v.min()).get()

    want = snd.labeled_comprehension(values, labels, idx, f_cpu, np.float64, -1.0)
    got = gnd.labeled_comprehension(gp.asarray(values), gp.asarray(labels), idx, f_gpu,
                                    np.float64, -1.0)
    np.testing.assert_allclose(host(got), want, rtol=1e-12)

    def g_cpu(v, p):
        return float((v * p).sum())

    def g_gpu(v, p):
        return float((v * p).sum().get())

    want = snd.labeled_comprehension(values, labels, idx, g_cpu, np.float64, 0.0,
                                     pass_positions=True)
    got = gnd.labeled_comprehension(gp.asarray(values), gp.asarray(labels), idx, g_gpu,
                                    np.float64, 0.0, pass_positions=True)
    np.testing.assert_allclose(host(got), want, rtol=1e-9, atol=1e-6)    # sums that cancel
    want = snd.labeled_comprehension(values, labels, 3, f_cpu, np.float64, 0.0)
    got = gnd.labeled_comprehension(gp.asarray(values), gp.asarray(labels), 3, f_gpu,
                                    np.float64, 0.0)
    np.testing.assert_allclose(host(got), want)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int8])
def test_value_indices(rng, dtype):
    arr = rng.integers(0, 6, (13, 17)).astype(dtype)
    if np.dtype(dtype).kind == "i":
        arr[0, :3] = -2
    want = snd.value_indices(arr)
    got = gnd.value_indices(gp.asarray(arr))
    assert list(got) == list(want)
    for k in want:
        assert len(got[k]) == arr.ndim
        for a, b in zip(got[k], want[k]):
            np.testing.assert_array_equal(a.get(), b)
    want = snd.value_indices(arr, ignore_value=0)
    got = gnd.value_indices(gp.asarray(arr), ignore_value=0)
    assert list(got) == list(want)
    with pytest.raises(ValueError):
        gnd.value_indices(gp.zeros(4, np.float32))


# ------------------------------------------------------------- lesson ---

@pytest.mark.gpu
def test_lesson_positions_and_fluxes():
    """The lesson's final check: label on CPU and GPU, measure every source,
    np.allclose on positions and fluxes."""
    data = gp.datasets.synthetic_sky(size=2048)
    segmented = np.where(data > 5 * 0.0133, 1, 0)
    lab_cpu = np.empty(data.shape)
    n = snd.label(segmented, output=lab_cpu)
    index = range(1, n + 1)
    positions = snd.center_of_mass(data, lab_cpu, index)
    fluxes = snd.sum_labels(data, lab_cpu, index)

    data_gpu = gp.asarray(data)
    lab_gpu = gp.empty(data.shape)
    assert gnd.label(gp.asarray(segmented), output=lab_gpu) == n
    for idx in (index, gp.arange(1, n + 1)):
        positions_gpu = gnd.center_of_mass(data_gpu, lab_gpu, idx)
        fluxes_gpu = gnd.sum_labels(data_gpu, lab_gpu, idx)
        assert len(positions_gpu) == n and isinstance(positions_gpu[0], tuple)
        assert np.allclose(np.array(positions), np.array(positions_gpu))
        assert np.allclose(fluxes, fluxes_gpu.get())
    # int32 labels from gpuarr's own label, as the benchmark uses them
    lab32, m = gnd.label(gp.asarray(segmented))
    got = gnd.center_of_mass(data_gpu, lab32, gp.arange(1, m + 1))
    assert np.allclose(np.array(positions), np.array(got))
    assert np.allclose(fluxes, gnd.sum_labels(data_gpu, lab32, gp.arange(1, m + 1)).get())


@pytest.mark.gpu
def test_device_index_everywhere(rng):
    """A device index takes the one-call path (its slot table made by the
    measurement's own call) in every function that accepts an index."""
    values, labels = random_case(rng)
    dv, dl = gp.asarray(values), gp.asarray(labels)
    for idx in ([3, 1, 12, 3], [[2, 5], [7, 7]], [4]):
        di = gp.asarray(np.array(idx))
        if np.ndim(idx) == 1:                     # SciPy's comprehensions take 1-d indexes
            want = snd.histogram(values, -20, 20, 8, labels, idx)
            got = gnd.histogram(dv, -20, 20, 8, dl, di)
            np.testing.assert_array_equal(got.get(), np.stack(list(want)))
            check_positions(gnd.maximum_position(dv, dl, di), values, labels, idx,
                            "maximum_position", snd.maximum_position(values, labels, idx))
            want = snd.labeled_comprehension(values, labels, idx, np.sum, np.float64, 0.0)
            got = gnd.labeled_comprehension(dv, dl, di, lambda v: v.sum().get(), np.float64,
                                            0.0)
            np.testing.assert_allclose(host(got), want, rtol=1e-9, atol=1e-9)
        for name in ("mean", "median", "variance"):
            want = getattr(snd, name)(values, labels, idx)
            got = getattr(gnd, name)(dv, dl, di)
            assert got.shape == np.shape(want)
            np.testing.assert_allclose(got.get(), want, rtol=1e-9, atol=1e-9)
    # float labels with a float device index: exact float matching
    fl = labels.astype(np.float64) / 2
    want = snd.sum_labels(values, fl, [0.5, 1.5, 2.0])
    got = gnd.sum_labels(dv, gp.asarray(fl), gp.asarray(np.array([0.5, 1.5, 2.0])))
    np.testing.assert_allclose(got.get(), want, rtol=1e-9, atol=1e-9)
