"""Choosing elements, against NumPy on fresh random data: nonzero,
flatnonzero, argwhere, one-argument where, compress (function, method,
axis), extract, boolean-mask indexing and mask assignment, integer-array
(fancy) indexing get and set mixed with slices, None and Ellipsis, take
and put in every mode; out-of-range indices raise IndexError without
touching memory; both compaction kernels agree; and only the operations
whose result size depends on the data wait for the device.  Argument
checks that need no device run everywhere; device tests are marked gpu."""
import time

import numpy as np
import pytest

import gpuarr as gp
from gpuarr import _core
from gpuarr.cuda import runtime

from _arrays import view_layouts


DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float16,
                                np.float32, np.float64, np.complex64, np.complex128)]


def values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * 10).astype(dtype)
    return (rng.standard_normal(shape) * 10).astype(dtype)


def sparse(rng, shape, density):
    return rng.random(shape) < density


def same(got, want, msg=""):
    got = got.get() if isinstance(got, gp.ndarray) else got
    want = np.asarray(want)
    assert got.shape == want.shape, (msg, got.shape, want.shape)
    assert got.dtype == want.dtype, (msg, got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want, err_msg=msg)


# ================================================================ host only

def test_host_arrays_are_refused_with_the_remedy():
    for call in (lambda: gp.nonzero(np.ones(3)), lambda: gp.compress([True], np.ones(3)),
                 lambda: gp.take(np.ones(3), [0]), lambda: gp.flatnonzero(np.ones(3)),
                 lambda: gp.extract(np.ones(3, bool), np.ones(3))):
        with pytest.raises(TypeError, match="asarray"):
            call()


def test_put_needs_a_device_array():
    with pytest.raises(TypeError, match="gpuarr.ndarray"):
        gp.put(np.zeros(3), [0], [1])


def test_take_mode_is_checked():
    with pytest.raises(ValueError, match="clipmode"):
        gp.take(None, [0], mode="nearest")


# =========================================================== nonzero family

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1000,), (33, 65), (4, 5, 6), (0,), (3, 0)])
def test_nonzero_flatnonzero_argwhere_where(rng, dtype, shape):
    h = values(rng, shape, dtype)
    if dtype.kind != "b":
        h[sparse(rng, shape, 0.5)] = 0
    for name, hv, dv in view_layouts(h, reversed=False):
        got = gp.nonzero(dv)
        want = np.nonzero(hv)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w, name)
        for g, w in zip(dv.nonzero(), want):
            same(g, w, name)
        for g, w in zip(gp.where(dv), want):
            same(g, w, name)
        same(gp.flatnonzero(dv), np.flatnonzero(hv), name)
        same(gp.argwhere(dv), np.argwhere(hv), name)


@pytest.mark.gpu
def test_nonzero_of_0d_and_argwhere_of_0d():
    with pytest.raises(ValueError, match="0d"):
        gp.nonzero(gp.asarray(np.float32(1)))
    for v in (0, 5):
        same(gp.argwhere(gp.asarray(np.int32(v))), np.argwhere(np.int32(v)))
        same(gp.flatnonzero(gp.asarray(np.int32(v))), np.flatnonzero(np.int32(v)))


@pytest.mark.gpu
@pytest.mark.parametrize("density", [0.0, 0.001, 0.5, 0.999, 1.0])
def test_nonzero_of_large_arrays(rng, density):
    h = sparse(rng, (1024, 4099), density)
    for g, w in zip(gp.nonzero(gp.asarray(h)), np.nonzero(h)):
        same(g, w)


# ================================================================= compress

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress_function_and_method(rng, dtype, axis):
    h = values(rng, (37, 45), dtype)
    n = h.size if axis is None else h.shape[axis]
    cond = sparse(rng, n, 0.6)
    for name, hv, dv in view_layouts(h, reversed=False):
        if axis is not None and hv.shape != h.shape:
            n2 = hv.shape[axis]
            c = sparse(rng, n2, 0.6)
        else:
            c = cond
        want = np.compress(c, hv, axis=axis)
        same(gp.compress(gp.asarray(c), dv, axis=axis), want, name)
        same(dv.compress(gp.asarray(c), axis=axis), want, name)
        same(gp.compress(list(c), dv, axis=axis), want, name)


@pytest.mark.gpu
def test_compress_condition_shorter_or_longer_than_the_axis(rng):
    h = values(rng, (6, 10), np.float32)
    d = gp.asarray(h)
    short = np.array([True, False, True])
    same(gp.compress(gp.asarray(short), d), np.compress(short, h))
    same(gp.compress(gp.asarray(short), d, axis=1), np.compress(short, h, axis=1))
    long_false = np.r_[np.ones(10, bool), np.zeros(5, bool)]
    same(gp.compress(gp.asarray(long_false), d, axis=1), np.compress(long_false, h, axis=1))
    long_true = np.r_[np.zeros(10, bool), [False, True]]
    with pytest.raises(IndexError):
        np.compress(long_true, h, axis=1)
    with pytest.raises(IndexError, match="out of bounds"):
        gp.compress(gp.asarray(long_true), d, axis=1)
    flat_true = np.r_[np.ones(60, bool), [True]]
    with pytest.raises(IndexError, match="out of bounds"):
        gp.compress(gp.asarray(flat_true), d)
    with pytest.raises(ValueError, match="1-d"):
        gp.compress(gp.ones((2, 2), dtype=bool), d)
    with pytest.raises(np.exceptions.AxisError):
        gp.compress(gp.asarray(short), d, axis=2)


@pytest.mark.gpu
def test_compress_non_bool_condition_and_out(rng):
    h = values(rng, 50, np.float64)
    c = rng.integers(-2, 3, 50)
    same(gp.compress(gp.asarray(c), gp.asarray(h)), np.compress(c, h))
    want = np.compress(c != 0, h)
    out = gp.empty(want.shape, dtype=np.float64)
    assert gp.compress(gp.asarray(c), gp.asarray(h), out=out) is out
    same(out, want)


@pytest.mark.gpu
def test_extract(rng):
    h = values(rng, (7, 9), np.int32)
    c = h % 3 == 0
    same(gp.extract(gp.asarray(c), gp.asarray(h)), np.extract(c, h))
    same(gp.extract(gp.asarray(c.T), gp.asarray(h).T), np.extract(c.T, h.T))
    c2 = rng.integers(0, 2, 40)
    same(gp.extract(gp.asarray(c2), gp.asarray(h)), np.extract(c2, h))


@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 31, 4095, 4096, 4097, 65537, 1_000_003])
@pytest.mark.parametrize("density", [0.0, 0.001, 0.5, 0.999, 1.0])
def test_compaction_kernel_matches_numpy(rng, n, density):
    c = sparse(rng, n, density)
    dc = gp.asarray(c)
    for dtype in (np.int8, np.float16, np.float32, np.float64, np.complex128):
        h = values(rng, n, dtype)
        same(gp.asarray(h).compress(dc), np.compress(c, h), f"{dtype}")
    same(gp.flatnonzero(dc), np.flatnonzero(c))
    same(gp.asarray(h)[1:][dc[1:]], h[1:][c[1:]])


# ============================================================ boolean masks

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_boolean_mask_get(rng, dtype):
    h = values(rng, (9, 11, 5), dtype)
    d = gp.asarray(h)
    m3 = sparse(rng, h.shape, 0.4)
    m1 = sparse(rng, 9, 0.5)
    m2 = sparse(rng, (11, 5), 0.5)
    mm = sparse(rng, 11, 0.5)
    for idx_h, idx_d in [(m3, gp.asarray(m3)), (m1, gp.asarray(m1)), (m3, m3),
                         ((slice(None), m2), (slice(None), gp.asarray(m2))),
                         ((m1, 2), (gp.asarray(m1), 2)),
                         ((Ellipsis, sparse(rng, 5, 0.5)), None),
                         ((1, mm), (1, gp.asarray(mm))),
                         ((m1, slice(None), 3), None)]:
        got = d[idx_d if idx_d is not None else idx_h]
        same(got, h[idx_h], repr(idx_h)[:60])
    same(d.T[m3.T], h.T[m3.T])
    same(d[::2][m3[::2]], h[::2][m3[::2]])


@pytest.mark.gpu
def test_boolean_mask_shape_mismatch_is_index_error(rng):
    h = values(rng, (4, 6), np.float32)
    d = gp.asarray(h)
    for bad in (np.ones(5, bool), np.ones((4, 5), bool), np.ones((4, 6, 1), bool)):
        with pytest.raises(IndexError):
            h[bad]
        with pytest.raises(IndexError):
            d[gp.asarray(bad)]
        with pytest.raises(IndexError):
            d[gp.asarray(bad)] = 1.0
    with pytest.raises(IndexError, match="boolean index did not match"):
        d[gp.ones(5, dtype=bool)]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_boolean_mask_assignment(rng, dtype):
    h = values(rng, (13, 17), dtype)
    m = sparse(rng, h.shape, 0.3)
    d = gp.asarray(h)
    v = values(rng, 1, dtype)[0]
    d[gp.asarray(m)] = v
    h[m] = v
    same(d, h)
    vals = values(rng, int(m.sum()), dtype)
    d[gp.asarray(m)] = gp.asarray(vals)
    h[m] = vals
    same(d, h)
    row = sparse(rng, 13, 0.5)
    d[gp.asarray(row)] = gp.asarray(h[0])        # broadcast a row over the chosen rows
    h[row] = h[0]
    same(d, h)
    t = gp.asarray(h).T
    ht = h.T.copy()
    t[gp.asarray(m.T)] = v
    ht[m.T] = v
    same(t, ht)
    with pytest.raises(ValueError):
        d[gp.asarray(m)] = gp.asarray(values(rng, int(m.sum()) + 1, dtype))


@pytest.mark.gpu
def test_lesson_style_mask_assignment(rng):
    h = rng.standard_normal((64, 64)).astype(np.float32)
    d = gp.asarray(h)
    d[d > 1.0] = 0
    h[h > 1.0] = 0
    same(d, h)
    d[d < 0] = d[d < 0] * 2
    h[h < 0] = h[h < 0] * 2
    same(d, h)


# ============================================================ fancy indices

def index_cases(rng, shape):
    """(description, index for NumPy, index for gpuarr) over an array of
    `shape` (3-d, each axis >= 5)."""
    a0, a1, a2 = shape

    def distinct(n, size):
        """size distinct indices into an axis of n, about half negative."""
        p = rng.permutation(n)[:size]
        return p - n * (rng.random(size) < 0.5)

    i0 = distinct(a0, 5)
    i1 = distinct(a1, 6).reshape(2, 3)
    i3 = distinct(a0, 6).reshape(2, 3)
    i2 = rng.permutation(a2)[:3]
    b = rng.permutation(a0)[:4].reshape(4, 1)
    c = distinct(a1, 5)
    d = gp.asarray
    return [
        ("list", list(i0), list(i0)),
        ("device 1-d", i0, d(i0)),
        ("device 2-d", i3, d(i3)),
        ("duplicates", [0, 0, 1, -1, -1], d(np.array([0, 0, 1, -1, -1]))),
        ("host array", i0, i0),
        ("int32 device", i0.astype(np.int32), d(i0.astype(np.int32))),
        ("uint8 device", (i0 % a0).astype(np.uint8), d((i0 % a0).astype(np.uint8))),
        ("slice, array", (slice(None), i1), (slice(None), d(i1))),
        ("array, slice, array", (i2 % a0, slice(1, 4), i2), (d(i2 % a0), slice(1, 4), d(i2))),
        ("broadcast", (b, c), (d(b), d(c))),
        ("ellipsis, array", (Ellipsis, i2), (Ellipsis, d(i2))),
        ("None, array", (None, i0), (None, d(i0))),
        ("array, None, slice", (i0, None, slice(None, None, -1)),
         (d(i0), None, slice(None, None, -1))),
        ("int, array", (2, i1), (2, d(i1))),
        ("array, int, array", (b, 1, i2), (d(b), 1, d(i2))),
        ("step slices", (slice(None, None, 2), i1, slice(1, None)),
         (slice(None, None, 2), d(i1), slice(1, None))),
        ("empty", np.zeros(0, np.int64), d(np.zeros(0, np.int64))),
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.float32, np.float64, np.complex128])
def test_fancy_get_matches_numpy(rng, dtype):
    h = values(rng, (6, 7, 8), dtype)
    for name, hv, dv in view_layouts(h, reversed=False):
        for desc, ih, idev in index_cases(rng, hv.shape):
            same(dv[idev], hv[ih], f"{name}: {desc}")


def assigned_one_of(got, before, dest, v, msg):
    """gpuarr's rule for a scatter that repeats a destination (a[idx] = v,
    put): each destination holds one of the values assigned to it, which
    one is unspecified (NumPy: the last); elements not assigned keep their
    values.  dest: flat destinations, v: values broadcast to dest's shape."""
    got = got.get().ravel() if isinstance(got, gp.ndarray) else np.ravel(got)
    v = np.broadcast_to(v, np.shape(dest)).ravel()
    dest = np.ravel(dest)
    hit = np.zeros(got.size, bool)
    np.logical_or.at(hit, dest, got[dest] == v)
    assert hit[dest].all(), (msg, "an element holds none of the values assigned to it")
    kept = np.ones(got.size, bool)
    kept[dest] = False
    np.testing.assert_array_equal(got[kept], np.ravel(before)[kept], err_msg=msg)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.complex64])
def test_fancy_set_matches_numpy(rng, dtype):
    for desc, ih, idev in index_cases(rng, (6, 7, 8)):
        h = values(rng, (6, 7, 8), dtype)
        d = gp.asarray(h)
        dest = np.arange(h.size).reshape(h.shape)[ih]
        unique = np.unique(dest).size == dest.size
        cases = [(values(rng, dest.shape, dtype), gp.asarray), (values(rng, 1, dtype)[0], None)]
        if dest.ndim:
            cases.append((values(rng, dest.shape[-1:], dtype), gp.asarray))
        for v, move in cases:
            before = h.copy()
            d[idev] = move(v) if move else v
            h[ih] = v
            if unique or move is None:
                same(d, h, desc)
            else:
                # repeated destinations: the documented rule, not NumPy's last-wins
                assigned_one_of(d, before, dest, v, desc)
                assigned_one_of(h, before, dest, v, desc + " (NumPy obeys the rule too)")
                h = d.get()


@pytest.mark.gpu
def test_fancy_set_on_a_non_contiguous_view(rng):
    h = values(rng, (10, 12), np.float64)
    d = gp.asarray(h)
    idx = np.array([0, 3, 4])
    d.T[gp.asarray(idx)] = -1.0
    h.T[idx] = -1.0
    same(d, h)
    d[::2, gp.asarray(idx)] = gp.asarray(np.arange(15.0).reshape(5, 3))
    h[::2, idx] = np.arange(15.0).reshape(5, 3)
    same(d, h)


@pytest.mark.gpu
@pytest.mark.parametrize("where", ["host", "device"])
def test_out_of_bounds_indices_raise_and_leave_memory_alone(rng, where):
    h = values(rng, (5, 6), np.float32)
    d = gp.asarray(h)
    guard = gp.asarray(np.full(1024, 7.0, np.float32))
    conv = gp.asarray if where == "device" else np.asarray
    for bad, axis in (([0, 5], 0), ([-6, 1], 0), ([10**9], 0)):
        with pytest.raises(IndexError, match=f"out of bounds for axis {axis} with size 5"):
            d[conv(np.array(bad))]
        with pytest.raises(IndexError, match="out of bounds"):
            d[conv(np.array(bad))] = 3.0
        with pytest.raises(IndexError, match="out of bounds"):
            d[conv(np.array(bad))] = gp.ones((len(bad), 6), dtype=np.float32)
    with pytest.raises(IndexError, match="axis 1 with size 6"):
        d[:, conv(np.array([6]))]
    with pytest.raises(IndexError, match="axis 1 with size 6"):
        d[conv(np.array([0])), conv(np.array([-7]))] = 1.0
    same(d, h)
    same(guard, np.full(1024, 7.0, np.float32))
    gp.cuda.Device().synchronize()


@pytest.mark.gpu
def test_index_errors_as_numpy(rng):
    d = gp.arange(12.0).reshape(3, 4)
    with pytest.raises(IndexError, match="integer"):
        d[gp.asarray([0.5, 1.0])]
    with pytest.raises(IndexError, match="broadcast"):
        d[gp.asarray([0, 1]), gp.asarray([0, 1, 2])]
    with pytest.raises(IndexError, match="too many indices"):
        d[gp.asarray([0]), gp.asarray([0]), gp.asarray([0])]
    with pytest.raises(IndexError, match="empty"):
        gp.zeros((0, 3))[gp.asarray([0])]


# =============================================================== take / put

def take_indices(rng, shape, axis, mode, size=(3, 4)):
    """Random indices for take along `axis` of an array of `shape`: all in
    range for mode='raise', up to three times the length out of it else."""
    n = int(np.prod(shape)) if axis is None else shape[axis]
    lo, hi = (-n, n) if mode == "raise" else (-3 * n, 3 * n)
    return rng.integers(lo, hi, size)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.bool_, np.int16, np.float32, np.complex128])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take_matches_numpy(rng, dtype, axis, mode):
    h = values(rng, (7, 9), dtype)
    for name, hv, dv in view_layouts(h, reversed=False):
        ind = take_indices(rng, hv.shape, axis, mode)
        want = np.take(hv, ind, axis=axis, mode=mode)
        same(gp.take(dv, gp.asarray(ind), axis=axis, mode=mode), want, name)
        same(gp.take(dv, ind.tolist(), axis=axis, mode=mode), want, name)
        same(dv.take(list(ind.ravel()), axis=axis, mode=mode),
             np.take(hv, ind.ravel(), axis=axis, mode=mode), name)
    same(gp.take(gp.asarray(h), 3, axis=axis), np.take(h, 3, axis=axis))
    ind = take_indices(rng, h.shape, axis, mode)
    want = np.take(h, ind, axis=axis, mode=mode)
    out = gp.empty(want.shape, dtype=dtype)
    assert gp.take(gp.asarray(h), gp.asarray(ind), axis=axis, mode=mode, out=out) is out
    same(out, want)


def outcome(fn):
    """fn()'s exception type, or None when it returns."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 -- the type is the outcome compared
        return type(exc)
    return None


@pytest.mark.gpu
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take_raises_exactly_when_numpy_does(rng, axis):
    h = values(rng, (5, 6), np.float32)
    for name, hv, dv in view_layouts(h, reversed=False):
        n = hv.size if axis is None else hv.shape[axis]
        for bad in ([n - 1, -n], [0, n], [-n - 1, 0], [n - 1, n, -n - 1], [2 * n], [-2 * n]):
            ind = np.array(bad)
            want = outcome(lambda: np.take(hv, ind, axis=axis))
            assert want in (None, IndexError), (name, bad, want)
            args = {"device int64": gp.asarray(ind),
                    "device int32": gp.asarray(ind, dtype=np.int32),
                    "list": ind.tolist(), "list of NumPy ints": list(ind)}
            for kind, arg in args.items():
                msg = f"{name}, axis {axis}, indices {bad} ({kind})"
                if want is None:
                    same(gp.take(dv, arg, axis=axis), np.take(hv, ind, axis=axis), msg)
                else:
                    with pytest.raises(IndexError, match="out of bounds"):
                        gp.take(dv, arg, axis=axis)


@pytest.mark.gpu
def test_put_raises_exactly_when_numpy_does_and_writes_nothing(rng):
    h = values(rng, (4, 5), np.float64)
    n = h.size
    # the bad index last: NumPy has written the ones before it, gpuarr writes none
    for ind in ([1, n - 1, -n], [3, n], [1, 2, -n - 1], [n - 1, -2, 2 * n]):
        v = values(rng, len(ind), np.float64)
        hh = h.copy()
        want = outcome(lambda: np.put(hh, ind, v))
        assert want in (None, IndexError), (ind, want)
        for name in ("contiguous", "transposed"):
            args = {"device int64": gp.asarray(ind),
                    "device int32": gp.asarray(ind, dtype=np.int32), "list": ind}
            for kind, arg in args.items():
                d = gp.asarray(h) if name == "contiguous" else gp.asarray(h.T.copy()).T
                msg = f"{name} ({kind}, indices {ind})"
                if want is None:
                    gp.put(d, arg, gp.asarray(v))
                    same(d, hh, msg)
                else:
                    with pytest.raises(IndexError, match="out of bounds"):
                        gp.put(d, arg, gp.asarray(v))
                    same(d, h, f"{msg}: half-written")


@pytest.mark.gpu
def test_take_errors():
    d = gp.arange(10)
    with pytest.raises(IndexError, match="out of bounds"):
        gp.take(d, gp.asarray([3, 10]))
    with pytest.raises(IndexError, match="out of bounds"):
        gp.take(d, [-11])
    with pytest.raises(np.exceptions.AxisError):
        gp.take(d, [0], axis=1)
    with pytest.raises(IndexError):
        gp.take(gp.zeros(0), [0], mode="wrap")
    same(gp.take(gp.zeros(0), gp.zeros(0, dtype=np.int64)), np.take(np.zeros(0), []))


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.float64, np.complex64])
def test_put_matches_numpy(rng, dtype, mode):
    h = values(rng, (6, 8), dtype)
    n = h.size
    lo, hi = (-n, n) if mode == "raise" else (-3 * n, 3 * n)
    ind = rng.choice(np.arange(lo, hi), size=10, replace=False)
    # distinct destinations after the mode's mapping
    dest = np.take(np.arange(n), ind, mode=mode)
    ind = ind[np.unique(dest, return_index=True)[1]]
    for v in (values(rng, ind.size, dtype), values(rng, 3, dtype), values(rng, 1, dtype)):
        d, hh = gp.asarray(h), h.copy()
        gp.put(d, gp.asarray(ind), gp.asarray(v), mode=mode)
        np.put(hh, ind, v, mode=mode)
        same(d, hh)
        d2 = gp.asarray(h)
        d2.put(ind.tolist(), v.tolist(), mode=mode)
        same(d2, hh)
    t = gp.asarray(h).T
    ht = h.T.copy()
    gp.put(t, ind[:3].tolist(), 0, mode=mode)
    np.put(ht, ind[:3], 0, mode=mode)
    same(t, ht)
    rep = np.concatenate([ind, ind[:3]])
    v = values(rng, rep.size, dtype)
    d = gp.asarray(h)
    gp.put(d, gp.asarray(rep), gp.asarray(v), mode=mode)
    assigned_one_of(d, h, np.take(np.arange(n), rep, mode=mode), v, "repeated indices")


@pytest.mark.gpu
def test_put_errors_leave_the_array_alone(rng):
    h = values(rng, 20, np.float32)
    d = gp.asarray(h)
    with pytest.raises(IndexError, match="out of bounds"):
        gp.put(d, gp.asarray([1, 20]), gp.asarray([5.0, 6.0], dtype=np.float32))
    with pytest.raises(IndexError, match="out of bounds"):
        gp.put(d, [1, -21], 5.0)
    same(d, h)
    # as NumPy: no values is a no-op (whatever the indices), an empty array
    # with indices an IndexError
    for ind in ([1], [100]):
        hh = h.copy()
        np.put(hh, ind, np.zeros(0, np.float32))
        gp.put(d, ind, gp.zeros(0, dtype=np.float32))
        same(d, hh)
    for mode in ("raise", "wrap", "clip"):
        with pytest.raises(IndexError, match="empty"):
            np.put(np.zeros(0, np.float32), [0], [1.0], mode=mode)
        with pytest.raises(IndexError, match="empty"):
            gp.put(gp.zeros(0, dtype=np.float32), [0], [1.0], mode=mode)
    gp.put(gp.zeros(0, dtype=np.float32), [], [1.0])


# ========================================================== synchronisation

def clock_khz():
    return runtime.deviceGetAttribute(runtime.cudaDevAttrClockRate, gp.cuda.get_device_id())


def host_seconds_behind_a_busy_stream(fn, ms=150):
    """Host time of fn() called while the stream runs a ~ms-long kernel."""
    khz = clock_khz()
    fn()                      # first-call costs (pool blocks, modules) out of the way
    _core._spin(20 * khz)
    gp.cuda.Device().synchronize()
    _core._spin(ms * khz)
    t0 = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - t0
    gp.cuda.Device().synchronize()
    return elapsed


@pytest.mark.gpu
def test_only_data_dependent_sizes_wait_for_the_device(rng):
    h = rng.standard_normal(100_000).astype(np.float32)
    d = gp.asarray(h)
    m = d > 0
    idx = gp.asarray(rng.integers(0, h.size, 1000))
    waits = {
        "compress": lambda: d.compress(m),
        "boolean mask": lambda: d[m],
        "nonzero": lambda: gp.nonzero(m),
        "unique": lambda: gp.unique(idx),
    }
    free = {
        "median": lambda: gp.median(d),
        "percentile": lambda: gp.percentile(d, [5, 95]),
        "sort": lambda: gp.sort(d),
        "mask fill": lambda: d.__setitem__(m, 0.0),
        "take wrap": lambda: gp.take(d, idx, mode="wrap"),
        "host-index fancy get": lambda: d[np.arange(10)],
        "searchsorted": lambda: gp.searchsorted(d, d[:10]),
        "histogram": lambda: gp.histogram(d, bins=[0.0, 1.0, 2.0]),
    }
    for name, fn in waits.items():
        assert host_seconds_behind_a_busy_stream(fn) > 0.1, name
    for name, fn in free.items():
        assert host_seconds_behind_a_busy_stream(fn) < 0.05, name
