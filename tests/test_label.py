"""gpuarr.scipy.ndimage.label against scipy.ndimage.label: the same labels
(numbered in the raster order of each component's first element), the same
count, the same return forms and the same exception classes, on fresh
random masks, patterns that stress the union-find (long snakes, borders,
checkerboards), every valid 3x3 structure, 3x3x3 structures, and the
synthetic sky of the lesson."""
import itertools

import numpy as np
import pytest
import scipy.ndimage as snd

import gpuarr as gp
from gpuarr.scipy import ndimage as gnd
from gpuarr.scipy import _measurements as gm



# ------------------------------------------------------------- helpers ---

def symmetric_structures(ndim):
    """Every centrosymmetric 3**ndim structure (centre set), as bool arrays."""
    npairs = (3 ** ndim) // 2
    out = []
    for bits in range(1 << npairs):
        flat = np.zeros(3 ** ndim, dtype=bool)
        flat[npairs] = True
        for p in range(npairs):
            if bits >> p & 1:
                flat[p] = flat[3 ** ndim - 1 - p] = True
        out.append(flat.reshape((3,) * ndim))
    return out


def check_label(host, structure=None, **kw):
    """label(device copy of host) equals SciPy: labels, dtype and count.
    SciPy has no float16 loop (TypeError "No matching signature found");
    gpuarr labels float16 too, and its reference is SciPy's label of the
    float32 copy, which holds every float16 value (zeros, NaN) exactly."""
    ref = host.astype(np.float32) if host.dtype == np.float16 else host
    want, nwant = snd.label(ref, structure)
    got, ngot = gnd.label(gp.asarray(host), structure, **kw)
    assert isinstance(got, gp.ndarray)
    assert isinstance(ngot, int)
    assert ngot == nwant
    g = got.get()
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    np.testing.assert_array_equal(g, want)
    return ngot


def snake(h, w):
    """One long boustrophedon path: the worst case for union-find chains
    and for raster numbering (the component's first pixel is far from most
    of it)."""
    a = np.zeros((h, w), dtype=bool)
    a[::2, :] = True
    a[1::4, -1] = True
    a[3::4, 0] = True
    return a


# ------------------------------------------------ no GPU needed (CI) ---

def test_structure_bits_match_scipy_errors():
    with pytest.raises(RuntimeError, match="equal rank"):
        gm._neighbour_bits(np.ones((3, 3)), 3)
    with pytest.raises(ValueError, match="equal to 3"):
        gm._neighbour_bits(np.ones((3, 5)), 2)
    with pytest.raises(AssertionError, match="not symmetric"):
        gm._neighbour_bits(np.array([[1, 0, 0], [0, 1, 0], [0, 0, 0]]), 2)


def test_structure_bits_backward_half():
    # 2-d cross: up (dy=-1, dx=0) and left (dy=0, dx=-1) in the middle plane.
    bits = gm._neighbour_bits(snd.generate_binary_structure(2, 1), 2)
    assert bits == (1 << 10) | (1 << 12)
    # full 3-d connectivity: all 13 backward offsets.
    assert gm._neighbour_bits(np.ones((3, 3, 3)), 3) == (1 << 13) - 1
    # 1-d: only the left neighbour.
    assert gm._neighbour_bits([1, 1, 1], 1) == 1 << 12
    assert gm._neighbour_bits([0, 1, 0], 1) == 0
    # every symmetric 2-d structure maps to distinct bits.
    seen = {gm._neighbour_bits(s, 2) for s in symmetric_structures(2)}
    assert len(seen) == 16


def test_host_input_refused():
    with pytest.raises(TypeError, match="gpuarr.asarray"):
        gnd.label(np.ones((4, 4)))


# ------------------------------------------------------------ GPU ---

@pytest.mark.gpu
@pytest.mark.parametrize("density", [0.0, 0.001, 0.05, 0.3, 0.5, 0.59, 0.8, 1.0])
@pytest.mark.parametrize("shape", [(1000,), (61, 97), (300, 257), (17, 23, 29)])
def test_random_masks(rng, density, shape):
    host = rng.random(shape) < density
    check_label(host)
    check_label(host, np.ones((3,) * len(shape)))


@pytest.mark.gpu
def test_single_pixel_and_trivial(rng):
    for shape in [(1,), (1, 1), (1, 1, 1), (5, 7), (4, 5, 6)]:
        a = np.zeros(shape, dtype=np.int32)
        assert check_label(a) == 0
        a[tuple(rng.integers(0, s) for s in shape)] = 3
        assert check_label(a) == 1
        assert check_label(np.ones(shape, np.uint8)) == 1


@pytest.mark.gpu
def test_components_touch_every_border():
    a = np.zeros((64, 80), dtype=bool)
    a[0, :] = a[-1, :] = a[:, 0] = a[:, -1] = True       # one frame
    a[2:-2:3, 2:-2:3] = True                                # isolated dots inside
    assert check_label(a) > 1
    corners = np.zeros((50, 50), dtype=bool)
    corners[0, 0] = corners[0, -1] = corners[-1, 0] = corners[-1, -1] = True
    assert check_label(corners) == 4
    edges = np.zeros((9, 33, 41), dtype=bool)
    for axis in range(3):
        for end in (0, -1):
            idx = [slice(None)] * 3
            idx[axis] = end
            edges[tuple(idx)] = True
    check_label(edges)
    check_label(edges, np.ones((3, 3, 3)))


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(129, 130), (1000, 37), (37, 1000)])
def test_snakes_and_checkerboards(shape):
    check_label(snake(*shape))
    check_label(snake(*shape).T.copy())
    board = (np.indices(shape).sum(axis=0) % 2).astype(bool)
    assert check_label(board) == board.sum()                 # 4-connectivity: all apart
    assert check_label(board, np.ones((3, 3))) == 1          # 8-connectivity: one
    # diagonals only (an X structure): the board's dots join along diagonals.
    check_label(board, np.array([[1, 0, 1], [0, 1, 0], [1, 0, 1]]))


@pytest.mark.gpu
def test_spiral():
    n = 201
    a = np.zeros((n, n), dtype=bool)
    lo, hi = 0, n - 1
    while lo <= hi:
        a[lo, lo:hi + 1] = a[lo:hi + 1, hi] = a[hi, lo:hi + 1] = True
        a[lo + 2:hi + 1, lo] = True
        if lo + 2 <= hi:
            a[lo + 2, lo:lo + 3] = True
        lo, hi = lo + 4, hi - 4
    check_label(a)
    check_label(a[::-1, ::-1].copy())


@pytest.mark.gpu
def test_every_2d_structure(rng):
    host = rng.random((83, 71)) < 0.45
    for s in symmetric_structures(2):
        check_label(host, s)
        check_label(host, s.astype(np.int64))
    # the centre does not matter
    s = np.ones((3, 3), dtype=bool)
    s[1, 1] = False
    check_label(host, s)
    check_label(host, np.zeros((3, 3)))


@pytest.mark.gpu
def test_every_1d_structure(rng):
    host = rng.random(5000) < 0.5
    for s in symmetric_structures(1):
        check_label(host, s)


@pytest.mark.gpu
def test_3d_structures(rng):
    host = rng.random((19, 31, 27)) < 0.3
    structures = symmetric_structures(3)
    picks = [0, len(structures) - 1] + list(rng.choice(len(structures), 40, replace=False))
    for k in picks:
        check_label(host, structures[k])
    for c in (1, 2, 3):
        check_label(host, snd.generate_binary_structure(3, c))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.int64, np.uint64,
                                   np.float16, np.float32, np.float64])
def test_input_dtypes(rng, dtype):
    host = (rng.random((130, 140)) < 0.4) * rng.integers(-3, 4, (130, 140))
    host = host.astype(dtype)
    if np.dtype(dtype).kind == "f":
        host[rng.random(host.shape) < 0.05] = -0.0      # negative zero is background
        host[rng.random(host.shape) < 0.01] = np.nan    # NaN is foreground, as in SciPy
    check_label(host)


@pytest.mark.gpu
def test_strided_views(rng):
    host = rng.random((200, 300)) < 0.45
    dev = gp.asarray(host)
    for sl in [(slice(None, None, 2), slice(None)), (slice(None, None, -1), slice(3, None, 3)),
               (slice(None), slice(None, None, -1))]:
        want, n = snd.label(host[sl])
        got, m = gnd.label(dev[sl])
        assert m == n
        np.testing.assert_array_equal(got.get(), want)
    want, n = snd.label(host.T)
    got, m = gnd.label(dev.T)
    assert m == n
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64, np.float32, np.uint16,
                                   np.int16, np.uint32, np.uint64])
def test_output_array(rng, dtype):
    host = rng.random((90, 110)) < 0.5
    want = np.empty(host.shape, dtype)
    nwant = snd.label(host, output=want)
    out = gp.zeros(host.shape, dtype)
    ngot = gnd.label(gp.asarray(host), output=out)
    assert isinstance(ngot, int) and ngot == nwant
    np.testing.assert_array_equal(out.get(), want)
    assert out.dtype == np.dtype(dtype)


@pytest.mark.gpu
def test_output_strided_array(rng):
    host = rng.random((40, 50)) < 0.5
    want, n = snd.label(host)
    big = gp.zeros((80, 50), np.float64)
    assert gnd.label(gp.asarray(host), output=big[::2]) == n
    np.testing.assert_array_equal(big.get()[::2], want)
    np.testing.assert_array_equal(big.get()[1::2], 0)


def check_output_dtype(host, dtype):
    """label(host, output=dtype) as SciPy: the same labels and count, or
    the same RuntimeError when the dtype cannot hold the labels.  Returns
    whether it raised."""
    try:
        want, nwant = snd.label(host, output=dtype)
    except RuntimeError as exc:
        with pytest.raises(RuntimeError, match=str(exc)):
            gnd.label(gp.asarray(host), output=dtype)
        return True
    got, ngot = gnd.label(gp.asarray(host), output=dtype)
    assert ngot == nwant
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)
    return False


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.uint8, np.int8, "int16",
                                   np.float32])
def test_output_dtype(rng, dtype):
    # 16x16: at most 77 labels, which every dtype holds; 64x64: ~500,
    # more than (u)int8 holds, where SciPy raises RuntimeError
    assert not check_output_dtype(rng.random((16, 16)) < 0.3, dtype)
    raised = check_output_dtype(rng.random((64, 64)) < 0.3, dtype)
    assert raised == (np.dtype(dtype).itemsize == 1)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype, limit", [(np.uint8, 255), (np.int8, 127), (np.int16, 32767)])
def test_output_dtype_limit(dtype, limit):
    # k U-shaped components, each two prongs joined below (two provisional
    # labels that merge): the final count decides, as in SciPy
    for k in (limit, limit + 1):
        host = np.zeros((3, 4 * k), dtype=bool)
        host[:2, 0::4] = host[:2, 2::4] = True
        host[2] = np.arange(4 * k) % 4 != 3
        assert check_output_dtype(host, dtype) == (k > limit)


@pytest.mark.gpu
def test_output_too_small():
    host = np.zeros(600, dtype=bool)
    host[::2] = True                                     # 300 labels
    out = gp.full(host.shape, 7, np.int8)
    with pytest.raises(RuntimeError, match="insufficient bit-depth"):
        gnd.label(gp.asarray(host), output=out)
    assert (out.get() == 7).all()                        # untouched
    with pytest.raises(RuntimeError):
        snd.label(host, output=np.empty(host.shape, np.int8))
    # small enough: fits
    host[200:] = False
    out = gp.zeros(host.shape, np.uint8)
    assert gnd.label(gp.asarray(host), output=out) == 100


@pytest.mark.gpu
def test_bad_arguments(rng):
    dev = gp.asarray(rng.random((10, 12)) < 0.5)
    with pytest.raises(RuntimeError, match="equal rank"):
        gnd.label(dev, np.ones((3, 3, 3)))
    with pytest.raises(ValueError, match="equal to 3"):
        gnd.label(dev, np.ones((5, 5)))
    with pytest.raises(AssertionError):
        gnd.label(dev, [[1, 1, 0], [0, 1, 0], [0, 0, 0]])
    with pytest.raises(ValueError, match="output shape"):
        gnd.label(dev, output=gp.empty((12, 10), np.int32))
    with pytest.raises(TypeError):
        gnd.label(dev, output="not a dtype")
    with pytest.raises(TypeError, match="host memory"):
        gnd.label(dev, output=np.empty((10, 12), np.int32))
    with pytest.raises(TypeError, match="Complex"):
        gnd.label(gp.zeros((4, 4), np.complex64))
    # Device structure arrays are accepted like host ones.
    n = gnd.label(dev, gp.asarray(np.ones((3, 3), bool)))[1]
    assert n == snd.label(dev.get(), np.ones((3, 3)))[1]


@pytest.mark.gpu
def test_zero_d_and_empty():
    for v in (0, 5):
        want, n = snd.label(np.array(v))
        got, m = gnd.label(gp.asarray(np.array(v)))
        assert m == n
        assert got.get().item() == want.item()
    got, m = gnd.label(gp.zeros((0, 5), np.int32))
    assert m == 0 and got.shape == (0, 5)
    out = gp.empty((3, 0), np.float64)
    assert gnd.label(gp.zeros((3, 0)), output=out) == 0


@pytest.mark.gpu
def test_many_tiles_and_many_components(rng):
    # More than 4096 tiles of 4096 elements: the flatten's tile-offset scan
    # takes several rounds; ~ 5 million components.
    host = rng.random(17_000_000) < 0.5
    check_label(host)
    vol = rng.random((64, 256, 256)) < 0.35
    check_label(vol, np.ones((3, 3, 3)))


@pytest.mark.gpu
def test_lesson_sky_float64_output():
    """The lesson: segment the sky at 5 sigma with where, label into a
    float64 array, compare with SciPy."""
    sky = gp.datasets.synthetic_sky(size=2048)
    segmented = np.where(sky > 5 * 0.0133, 1, 0)          # int64, as np.where makes it
    want = np.empty(sky.shape)
    nwant = snd.label(segmented, output=want)
    dev = gp.asarray(segmented)
    out = gp.empty(sky.shape)
    assert gnd.label(dev, output=out) == nwant
    np.testing.assert_array_equal(out.get(), want)
    got, n = gnd.label(dev)
    assert n == nwant and got.dtype == np.int32
    np.testing.assert_array_equal(got.get(), want)
    check_label(segmented, np.ones((3, 3)))


@pytest.mark.gpu
def test_repeatable_and_stream_safe(rng):
    host = rng.random((512, 512)) < 0.5
    dev = gp.asarray(host)
    first, n = gnd.label(dev)
    for _ in range(5):
        again, m = gnd.label(dev)
        assert m == n
        assert bool((again == first).all())


@pytest.mark.gpu
@pytest.mark.parametrize("shape", list(itertools.product([1, 2, 3], [1, 2, 5])))
def test_tiny_shapes(rng, shape):
    for _ in range(5):
        host = rng.random(shape) < 0.5
        check_label(host, np.ones((3, 3)))
        check_label(host)
