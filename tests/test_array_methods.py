"""ndarray methods that forward to NumPy-named functions (gpuarr/_methods.py):
conj, conjugate, clip, round, repeat, tobytes, tofile and `in`, each
against the same method of NumPy on fresh random data.  Without a GPU: that
NumPy's public methods all exist, or are listed here as not provided."""
import numpy as np
import pytest

import gpuarr as gp

from _arrays import assert_same, random_array

# NumPy methods gpuarr does not provide, and why.
NOT_PROVIDED = {
    "byteswap": "device arrays hold native byte order only",
    "choose": "not yet written",
    "ctypes": "host memory interface",
    "dump": "pickling device arrays is not supported",
    "dumps": "pickling device arrays is not supported",
    "flat": "not yet written (ravel() gives the elements)",
    "getfield": "structured dtypes are not supported",
    "setfield": "structured dtypes are not supported",
    "resize": "in-place reallocation is not supported (gpuarr.resize is not either)",
    "setflags": "flags are read-only",
}


def test_numpy_methods_are_provided_or_listed():
    numpy_methods = {n for n in dir(np.ndarray) if not n.startswith("_")}
    missing = numpy_methods - set(dir(gp.ndarray))
    assert missing == set(NOT_PROVIDED), missing ^ set(NOT_PROVIDED)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.complex128, np.int16])
@pytest.mark.parametrize("name", ["conj", "conjugate"])
def test_conj(rng, dtype, name):
    h = random_array(rng, (5, 7), dtype)
    assert_same(getattr(gp.asarray(h), name)().get(), getattr(h, name)())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_clip(rng, dtype):
    h = random_array(rng, (6, 9), dtype)
    d = gp.asarray(h)
    lo, hi = np.quantile(h, [0.25, 0.75]).astype(dtype)
    assert_same(d.clip(lo, hi).get(), h.clip(lo, hi))
    assert_same(d.clip(max=hi).get(), h.clip(max=hi))
    assert_same(d.clip(min=lo).get(), h.clip(min=lo))
    out = gp.empty_like(d)
    assert d.clip(lo, hi, out=out) is out
    assert_same(out.get(), h.clip(lo, hi))


@pytest.mark.gpu
@pytest.mark.parametrize("decimals", [0, 2, -1])
def test_round(rng, decimals):
    h = rng.normal(scale=1000, size=(4, 50))
    got = gp.asarray(h).round(decimals)
    np.testing.assert_allclose(got.get(), h.round(decimals), rtol=1e-15, atol=0)


@pytest.mark.gpu
def test_repeat(rng):
    h = random_array(rng, (3, 4), np.int64)
    d = gp.asarray(h)
    assert_same(d.repeat(2).get(), h.repeat(2))
    assert_same(d.repeat(3, axis=1).get(), h.repeat(3, axis=1))
    assert_same(d.repeat([1, 0, 2], axis=0).get(), h.repeat([1, 0, 2], axis=0))
    with pytest.raises(ValueError):
        d.repeat(-1)


@pytest.mark.gpu
@pytest.mark.parametrize("order", ["C", "F"])
def test_tobytes(rng, order):
    h = random_array(rng, (3, 5), np.float32)[:, ::2]
    assert gp.asarray(h).tobytes(order) == h.tobytes(order)


@pytest.mark.gpu
def test_tofile(rng, tmp_path):
    h = random_array(rng, (4, 4), np.float64)
    gp.asarray(h).tofile(tmp_path / "a.bin")
    np.testing.assert_array_equal(np.fromfile(tmp_path / "a.bin"), h.ravel())
    gp.asarray(h).tofile(str(tmp_path / "a.txt"), sep=",")
    np.testing.assert_array_equal(np.fromfile(tmp_path / "a.txt", sep=","), h.ravel())


@pytest.mark.gpu
def test_contains(rng):
    h = rng.integers(0, 10, size=(20, 3))
    d = gp.asarray(h)
    for v in range(-1, 12):
        assert (v in d) == (v in h)
    assert (gp.asarray(h[1]) in d) == (h[1] in h)
    with pytest.raises(TypeError, match="host memory"):
        h[1] in d  # noqa: B015
    assert (2.5 in gp.asarray([1.0, 2.5])) is True
    assert (1 in gp.empty((0,))) is False
