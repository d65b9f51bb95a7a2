"""Test data shared by the tests: every dtype a device array can hold,
random host arrays of each, casting sources whose conversions NumPy
defines, the memory layouts views are tested in, and the comparisons the
tests make with NumPy."""
import numpy as np

import gpuarr as gp

ALL_DTYPES = [np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128)]

# One dtype of each kind and size class, where all fourteen would only
# repeat the same type-blind code path.
KINDS = [np.dtype(t) for t in (
    np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32, np.float64, np.complex128)]


def random_array(rng, shape, dtype, *, small=False, low=None, high=None):
    """Fresh random values of `dtype` (no NaN or inf).  By default integers
    over their whole range, floats and complex numbers of magnitude ~100.
    small=True (the convolution tests' data): integers in [-20, 20] ([0, 20]
    unsigned; low and high move the ends), so sums computed in float64 stay
    exact, and floats ~N(0, 1); complex numbers have both parts."""
    dtype = np.dtype(dtype)
    scale = 1 if small else 100
    if dtype.kind == "b":
        a = rng.random(shape) < 0.5
    elif dtype.kind in "iu" and small:
        lo = (0 if dtype.kind == "u" else -20) if low is None else low
        hi = 20 if high is None else high
        a = rng.integers(lo, hi, size=shape, endpoint=True)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    elif dtype.kind == "f":
        a = rng.standard_normal(shape) * scale
    else:
        a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * scale
    return np.asarray(a, dtype=dtype)


def cast_source(rng, shape, src, dst):
    """Random values of dtype `src` whose conversion to `dst` NumPy defines
    the same way on every platform: small integers (negative ones only where
    the result is not an out-of-range float-to-unsigned conversion), with
    quarter fractions for floating sources (exact in float16)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    signed = src.kind == "i" or (src.kind in "fc" and dst.kind != "u")
    low = -100 if signed else 0
    values = rng.integers(low, 101, size=shape).astype(np.float64)
    if src.kind in "fc":
        values += rng.integers(0, 4, size=shape) / 4
    if src.kind == "c":
        values = values + 1j * rng.integers(low, 101, size=shape)
    return np.asarray(values).astype(src)


def view_layouts(h, reversed=True):
    """(name, host view, device view) of h: contiguous, transposed, strided
    and (unless reversed=False) reversed, the device views taken from device
    copies of the same host data."""
    out = [("contiguous", h, gp.asarray(h))]
    if h.ndim >= 2:
        out.append(("transposed", h.T, gp.asarray(h).T))
    if h.ndim >= 1:
        big = np.repeat(h, 2, axis=-1)
        out.append(("strided", big[..., ::2], gp.asarray(big)[..., ::2]))
        if reversed:
            out.append(("reversed", h[::-1], gp.asarray(h)[::-1]))
    return out


def base_layouts(host):
    """{name: (base, view function)}: bases laid out differently whose views
    have host's logical shape (3-d host)."""
    return {
        "c": (host, lambda a: a),
        "t": (np.ascontiguousarray(host.transpose(2, 1, 0)), lambda a: a.transpose(2, 1, 0)),
        "neg": (np.ascontiguousarray(host[::-1, :, ::-1]), lambda a: a[::-1, :, ::-1]),
        "slice": (np.repeat(host, 2, axis=1), lambda a: a[:, ::2]),
    }


def assert_same(got, want):
    """`got` (a host array read back from the device) equals `want` exactly:
    same dtype (in native byte order), same shape, every bit the same."""
    want = np.asarray(want)
    want = want.astype(want.dtype.newbyteorder("="), copy=False)
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want)
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


def assert_close(got, want, ulps=4):
    """Like assert_same for integers and bools; floating values within a few
    units in the last place of the largest magnitude (the device may fuse a
    multiply and an add where NumPy rounds twice)."""
    want = np.asarray(want)
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
        return
    eps = float(np.finfo(want.dtype).eps)
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    np.testing.assert_allclose(got, want, rtol=ulps * eps, atol=ulps * eps * scale)


def is_view_of(x, owner):
    """Whether device array `x` is `owner` or a view of its memory (views
    keep the owning array as their base)."""
    return x is owner or x.base is owner


def assert_view_like(got, dbase, want, hbase):
    """Device view `got` of `dbase` laid out as NumPy's view `want` of
    `hbase` (shape, dtype, strides, offset, contiguity flags) and holding
    the same values."""
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    if want.size:
        assert got.strides == want.strides
        assert got.data.ptr - dbase.data.ptr == want.ctypes.data - hbase.ctypes.data
    assert got.flags.c_contiguous == want.flags.c_contiguous
    assert got.flags.f_contiguous == want.flags.f_contiguous
    assert_same(got.get(), want)
