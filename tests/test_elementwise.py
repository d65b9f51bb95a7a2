"""Every ufunc against NumPy: representative dtypes, broadcasting and stride
patterns, scalars (NEP 50), out=, dtype=, and the error paths."""
import itertools
import warnings

import numpy as np
import pytest

import gpuarr as gp

from _arrays import assert_same

pytestmark = pytest.mark.gpu

INT = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT = ["float16", "float32", "float64"]
CPLX = ["complex64", "complex128"]
ALL = ["bool"] + INT + FLOAT + CPLX

# ufunc name -> dtypes to try, and a value domain ("any", "pos", "unit", "small")
BINARY = {
    "add": (ALL, "any"), "subtract": (INT + FLOAT + CPLX, "any"), "multiply": (ALL, "any"),
    "true_divide": (INT + FLOAT + CPLX, "nonzero"), "floor_divide": (INT + FLOAT, "nonzero"),
    "remainder": (INT + FLOAT, "nonzero"), "fmod": (INT + FLOAT, "nonzero"),
    "power": (["int32", "int64", "uint8"] + FLOAT + CPLX, "small"),
    "float_power": (["float64", "complex128"], "pos"),
    "equal": (ALL, "any"), "not_equal": (ALL, "any"), "less": (ALL, "any"),
    "less_equal": (ALL, "any"), "greater": (ALL, "any"), "greater_equal": (ALL, "any"),
    "maximum": (ALL, "any"), "minimum": (ALL, "any"), "fmax": (ALL, "any"), "fmin": (ALL, "any"),
    "bitwise_and": (["bool"] + INT, "any"), "bitwise_or": (["bool"] + INT, "any"),
    "bitwise_xor": (["bool"] + INT, "any"), "left_shift": (INT, "shift"),
    "right_shift": (INT, "shift"), "logical_and": (ALL, "any"), "logical_or": (ALL, "any"),
    "logical_xor": (ALL, "any"), "arctan2": (FLOAT, "any"), "hypot": (FLOAT, "any"),
    "logaddexp": (FLOAT, "any"), "logaddexp2": (FLOAT, "any"), "copysign": (FLOAT, "any"),
    "nextafter": (["float32", "float64"], "any"), "heaviside": (FLOAT, "any"),
}
UNARY = {
    "negative": (INT + FLOAT + CPLX, "any"), "positive": (INT + FLOAT + CPLX, "any"),
    "absolute": (ALL, "any"), "fabs": (FLOAT, "any"), "sign": (INT + FLOAT + CPLX, "any"),
    "square": (INT + FLOAT + CPLX, "any"), "reciprocal": (FLOAT + CPLX, "nonzero"),
    "conjugate": (INT + FLOAT + CPLX, "any"), "invert": (["bool"] + INT, "any"),
    "isnan": (ALL, "any"), "isinf": (ALL, "any"), "isfinite": (ALL, "any"),
    "signbit": (FLOAT, "any"), "floor": (["bool"] + INT + FLOAT, "any"),
    "ceil": (["bool"] + INT + FLOAT, "any"), "trunc": (["bool"] + INT + FLOAT, "any"),
    "rint": (FLOAT + CPLX, "any"), "deg2rad": (FLOAT, "any"), "rad2deg": (FLOAT, "any"),
    "logical_not": (ALL, "any"), "sqrt": (FLOAT + CPLX, "pos"), "cbrt": (FLOAT, "any"),
    "exp": (FLOAT + CPLX, "small"), "exp2": (FLOAT + CPLX, "small"), "expm1": (FLOAT, "small"),
    "log": (FLOAT + CPLX, "pos"), "log2": (FLOAT + CPLX, "pos"), "log10": (FLOAT + CPLX, "pos"),
    "log1p": (FLOAT, "pos"), "sin": (INT[:3] + FLOAT + CPLX, "small"),
    "cos": (FLOAT + CPLX, "small"), "tan": (FLOAT + CPLX, "unit"),
    "arcsin": (FLOAT + CPLX, "unit"), "arccos": (FLOAT + CPLX, "unit"),
    "arctan": (FLOAT + CPLX, "any"), "sinh": (FLOAT + CPLX, "small"),
    "cosh": (FLOAT + CPLX, "small"), "tanh": (FLOAT + CPLX, "small"),
    "arcsinh": (FLOAT + CPLX, "any"), "arccosh": (FLOAT, "ge1"), "arctanh": (FLOAT, "unit"),
}

# Ufuncs the tables above leave out, and where they are tested instead
# (tests/test_ufunc_tables.py checks that BINARY, UNARY and this cover
# gpuarr._core.ufuncs).
NOT_TABLED = {
    "clip": "ternary: test_around_clip_angle_real_imag here and test_array_methods.test_clip",
}


def values(rng, dtype, shape, domain):
    dt = np.dtype(dtype)
    size = int(np.prod(shape))
    if dt.kind == "b":
        v = rng.integers(0, 2, size).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        if domain == "shift":
            v = rng.integers(0, info.bits + 2, size)
        elif domain == "small":
            v = rng.integers(0, 5, size)
        else:
            lo, hi = max(info.min, -100), min(info.max, 100)
            v = rng.integers(lo, hi + 1, size)
            if domain == "nonzero":
                v[v == 0] = 3
        v = v.astype(dt)
    else:
        if domain == "pos":
            v = rng.uniform(0.1, 10, size)
        elif domain == "unit":
            v = rng.uniform(-0.9, 0.9, size)
        elif domain == "ge1":
            v = rng.uniform(1.0, 10, size)
        elif domain == "small":
            v = rng.uniform(-3, 3, size)
        else:
            v = rng.uniform(-10, 10, size)
        if dt.kind == "c":
            w = rng.uniform(0.1 if domain == "pos" else -3, 3, size)
            v = v + 1j * w
        v = v.astype(dt)
    return v.reshape(shape)


def check(got, expected, dtype_in):
    assert isinstance(got, gp.ndarray)
    host = got.get()
    assert host.dtype == expected.dtype, (host.dtype, expected.dtype)
    assert host.shape == expected.shape
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(host, expected)
    else:
        kind = np.dtype(dtype_in).kind
        res = np.finfo(expected.dtype).resolution
        tol = 2e-3 if expected.dtype == np.float16 else max(res * 50, 1e-12)
        np.testing.assert_allclose(host, expected, rtol=tol, atol=tol if kind in "iub" else tol,
                                   equal_nan=True)


def np_call(name, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return getattr(np, name)(*args, **kw)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ufunc_all_dtypes(name, rng):
    dtypes, domain = BINARY[name]
    for dt in dtypes:
        a = values(rng, dt, (37,), domain)
        b = values(rng, dt, (37,), domain)
        expected = np_call(name, a, b)
        check(getattr(gp, name)(gp.asarray(a), gp.asarray(b)), expected, dt)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ufunc_all_dtypes(name, rng):
    dtypes, domain = UNARY[name]
    for dt in dtypes:
        a = values(rng, dt, (41,), domain)
        expected = np_call(name, a)
        check(getattr(gp, name)(gp.asarray(a)), expected, dt)


SHAPES = [((), ()), ((5,), ()), ((3, 4), (4,)), ((3, 1), (1, 5)), ((2, 3, 4), (3, 1)),
          ((0, 3), (3,)), ((4, 1, 6), (5, 1))]


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("name", ["add", "multiply", "less", "maximum", "arctan2"])
def test_broadcasting(name, sa, sb, rng):
    a = values(rng, "float64", sa, "any")
    b = values(rng, "float64", sb, "any")
    check(getattr(gp, name)(gp.asarray(a), gp.asarray(b)), np_call(name, a, b), "float64")
    check(getattr(gp, name)(gp.asarray(b), gp.asarray(a)), np_call(name, b, a), "float64")


def strided_views(a):
    """Pairs (host view, device view) with awkward layouts."""
    d = gp.asarray(a)
    yield a, d
    yield a[::-1], d[::-1]
    yield a[:, ::2], d[:, ::2]
    yield a.T, d.T
    yield a[1:, ::-3], d[1:, ::-3]


def test_strided_operands(rng):
    a = values(rng, "float32", (6, 8), "any")
    b = values(rng, "float32", (6, 8), "any")
    for (ha, da), (hb, db) in itertools.product(strided_views(a), strided_views(b)):
        if ha.shape != hb.shape:
            continue
        check(gp.subtract(da, db), np.subtract(ha, hb), "float32")
    c = values(rng, "int32", (4, 5, 6), "any")
    dc = gp.asarray(c)
    check(gp.negative(dc.transpose(2, 0, 1)), np.negative(c.transpose(2, 0, 1)), "int32")
    check(dc[:, None, ::2] * 3, c[:, None, ::2] * 3, "int32")


def test_zero_stride_broadcast_view(rng):
    a = values(rng, "float64", (5,), "any")
    da = gp.broadcast_to(gp.asarray(a), (3, 5))
    check(da + 1.0, np.broadcast_to(a, (3, 5)) + 1.0, "float64")


@pytest.mark.parametrize("dt", ["uint8", "int16", "int64", "float16", "float32", "float64",
                                "complex64", "bool"])
@pytest.mark.parametrize("scalar", [2, 2.5, 1j, True, np.float32(1.5), np.int8(3), np.float64(2.0)])
def test_scalars_follow_nep50(dt, scalar, rng):
    a = values(rng, dt, (9,), "any")
    da = gp.asarray(a)
    for x, y, dx, dy in ((a, scalar, da, scalar), (scalar, a, scalar, da)):
        try:
            expected = np_call("add", x, y)
        except (TypeError, OverflowError) as exc:
            with pytest.raises(type(exc)):
                gp.add(dx, dy)
            continue
        check(gp.add(dx, dy), expected, dt)


# Scalars at the edges of the host-side conversion: exact or rounded as
# NumPy does, and out-of-range values taking NumPy's own path (its error).
EDGE_SCALARS = [
    ("int8", 127), ("int8", -128), ("int8", 128), ("int8", -129), ("uint8", 255), ("uint8", -1),
    ("int16", 32768), ("uint16", 65535), ("int32", -2 ** 31), ("int32", 2 ** 31),
    ("uint32", 2 ** 32 - 1), ("uint32", 2 ** 32), ("int64", -2 ** 63), ("int64", 2 ** 63),
    ("uint64", 2 ** 63 - 1), ("uint64", 2 ** 63), ("uint64", 2 ** 64 - 1), ("uint64", 2 ** 64),
    ("float32", 2 ** 24), ("float32", 2 ** 24 + 1), ("float32", -(2 ** 24) - 3),
    ("float32", 2 ** 70 + 1), ("float64", 2 ** 53 + 1), ("float64", -(2 ** 53)),
    ("float64", 10 ** 30), ("float16", 3), ("float16", 0.1),
    ("float32", 0.1), ("float32", 3.4028235677973366e38), ("float32", 3.4028236e38),
    ("float32", 1e300), ("float32", -1e300), ("float32", float("nan")), ("float32", float("-inf")),
    ("float32", 1e-50), ("float64", 0.1), ("complex64", 0.1 + 0.2j), ("complex128", 0.1 + 0.2j),
    ("bool", True), ("bool", False), ("int8", True), ("float32", np.float32(0.1)),
    ("float32", np.float64(0.1)), ("int16", np.int16(-7)), ("uint8", np.uint8(200)),
    ("complex64", np.complex64(1 - 2j)), ("float16", np.float16(0.3)), ("bool", np.bool_(True)),
]


@pytest.mark.parametrize("dt,scalar", EDGE_SCALARS)
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_scalar_operand_edges(dt, scalar, rng):
    a = values(rng, dt, (33,), "small")
    da = gp.asarray(a)
    for name in ("add", "maximum"):
        try:
            expected = np_call(name, a, scalar)
        except (TypeError, OverflowError) as exc:
            with pytest.raises(type(exc)):
                getattr(gp, name)(da, scalar)
            continue
        got = getattr(gp, name)(da, scalar)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.get(), expected)
    try:
        expected = np.where(a > 1, scalar, a)
    except (TypeError, OverflowError) as exc:
        with pytest.raises(type(exc)):
            gp.where(da > 1, scalar, da)
        return
    got = gp.where(da > 1, scalar, da)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.get(), expected)


def test_python_int_out_of_range_for_uint8_raises():
    with pytest.raises(OverflowError):
        gp.ones(3, dtype=np.uint8) + 300


def test_mixed_dtypes_promote_like_numpy(rng):
    for d1, d2 in itertools.combinations(["bool", "int8", "uint8", "int32", "uint64", "float16",
                                          "float32", "float64", "complex64"], 2):
        a = values(rng, d1, (7,), "any")
        b = values(rng, d2, (7,), "any")
        check(gp.multiply(gp.asarray(a), gp.asarray(b)), np.multiply(a, b), d1)
        check(gp.less(gp.asarray(a), gp.asarray(b)), np.less(a, b), d1)


def test_out_argument_and_inplace(rng):
    a = values(rng, "float32", (4, 5), "any")
    b = values(rng, "float32", (5,), "any")
    da, db = gp.asarray(a), gp.asarray(b)
    out = gp.empty((4, 5), dtype=np.float64)
    r = gp.add(da, db, out=out)
    assert r is out
    np.testing.assert_allclose(out.get(), (a + b).astype(np.float64), rtol=1e-6)
    r = gp.multiply(da, 2, out=(out,))
    assert r is out
    da += db
    a += b
    np.testing.assert_allclose(da.get(), a, rtol=1e-6)
    c = gp.arange(10)
    c[1:] += c[:-1]
    h = np.arange(10)
    h[1:] += h[:-1].copy()
    np.testing.assert_array_equal(c.get(), h)


def test_out_errors_leave_out_unchanged():
    a = gp.ones((3, 4))
    out = gp.zeros((4, 3))
    with pytest.raises(ValueError, match="non-broadcastable output"):
        gp.add(a, a, out=out)
    out_i = gp.zeros((3, 4), dtype=np.int32)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        gp.add(a, 1.5, out=out_i)
    assert int(out_i.get().sum()) == 0
    with pytest.raises(TypeError):
        gp.add(a, a, out=np.zeros((3, 4)))
    ia = gp.ones(3, dtype=np.int64)
    with pytest.raises(TypeError):
        ia += 1.5


def test_broadcast_error_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(2,3\) \(4,\)"):
        gp.ones((2, 3)) + gp.ones(4)


def test_unsupported_dtype_combination_names_ufunc():
    with pytest.raises(TypeError, match="bitwise_and"):
        gp.bitwise_and(gp.ones(3), gp.ones(3))


def test_host_array_refused():
    with pytest.raises(TypeError, match="gpuarr.asarray"):
        gp.sin(np.ones(3))


def test_dtype_argument(rng):
    a = values(rng, "int32", (6,), "any")
    check(gp.add(gp.asarray(a), 1, dtype=np.float32), np.add(a, 1, dtype=np.float32), "int32")
    check(gp.sqrt(gp.asarray(np.abs(a)), dtype=np.float64), np.sqrt(np.abs(a), dtype=np.float64),
          "int32")


def test_operators_match_numpy(rng):
    a = values(rng, "int32", (3, 4), "nonzero")
    b = values(rng, "int32", (4,), "nonzero")
    da, db = gp.asarray(a), gp.asarray(b)
    for op in ["__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
               "__and__", "__or__", "__xor__", "__lt__", "__le__", "__eq__", "__ne__", "__gt__",
               "__ge__", "__radd__", "__rsub__", "__rmul__", "__rtruediv__"]:
        check(getattr(da, op)(db), getattr(a, op)(b), "int32")
        check(getattr(da, op)(3), getattr(a, op)(3), "int32")
    check(-da, -a, "int32")
    check(abs(da), abs(a), "int32")
    check(~da, ~a, "int32")
    check(da ** 2, a ** 2, "int32")
    check(da << 2, a << 2, "int32")
    q, r = divmod(da, db)
    check(q, a // b, "int32")
    check(r, a % b, "int32")
    f = values(rng, "float64", (5,), "pos")
    check(2.0 ** gp.asarray(f), 2.0 ** f, "float64")


def test_where(rng):
    a = values(rng, "float32", (64, 64), "any")
    d = gp.asarray(a)
    t = 0.5
    check(gp.where(d > t, 1, 0), np.where(a > t, 1, 0), "float32")
    check(gp.where(d > t, d, 0.0), np.where(a > t, a, 0.0), "float32")
    check(gp.where(d > t, d, gp.asarray(np.float64(2))), np.where(a > t, a, np.float64(2)),
          "float32")
    cond = a > 0
    b = values(rng, "int16", (64,), "any")
    check(gp.where(gp.asarray(cond), gp.asarray(b), gp.asarray(a)), np.where(cond, b, a),
          "float32")
    check(gp.where(gp.asarray(a[:, ::-2]), 1.5, 2), np.where(a[:, ::-2], 1.5, 2), "float32")
    with pytest.raises(ValueError):
        gp.where(d, 1)


def test_isclose_allclose_array_equal(rng):
    a = values(rng, "float64", (50,), "any")
    b = a + rng.normal(0, 1e-9, a.shape)
    b[3] = a[3] + 1
    a[5] = b[5] = np.nan
    a[7] = b[7] = np.inf
    da, db = gp.asarray(a), gp.asarray(b)
    check(gp.isclose(da, db), np.isclose(a, b), "float64")
    check(gp.isclose(da, db, equal_nan=True), np.isclose(a, b, equal_nan=True), "float64")
    r = gp.allclose(da[:3], db[:3])
    assert isinstance(r, gp.ndarray) and r.ndim == 0 and bool(r) is True
    assert bool(gp.allclose(da, db)) is False
    assert bool(gp.array_equal(da[:3], da[:3])) is True
    assert bool(gp.array_equal(da, da, equal_nan=True)) is True
    assert bool(gp.array_equal(da[:3], da[:4])) is False


def test_around_clip_angle_real_imag(rng):
    a = values(rng, "float64", (20,), "any")
    check(gp.around(gp.asarray(a), 2), np.around(a, 2), "float64")
    check(gp.round(gp.asarray(a)), np.round(a), "float64")
    check(gp.clip(gp.asarray(a), -2, 3), np.clip(a, -2, 3), "float64")
    z = values(rng, "complex128", (20,), "any")
    dz = gp.asarray(z)
    check(gp.angle(dz), np.angle(z), "complex128")
    check(gp.real(dz), np.real(z), "complex128")
    check(gp.imag(dz), np.imag(z), "complex128")
    check(gp.conj(dz), np.conj(z), "complex128")


def test_ufunc_attributes():
    assert gp.add.nin == 2 and gp.add.nout == 1 and gp.sin.nin == 1
    assert "ff->f" in gp.add.types and "dd->d" in gp.sin.types[:5] or "d->d" in gp.sin.types
    assert repr(gp.add) == "<ufunc 'add'>"
    assert gp.divide is gp.true_divide and gp.abs is gp.absolute


def test_large_contiguous_vector_path(rng):
    n = (1 << 20) + 3
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    da, db = gp.asarray(a), gp.asarray(b)
    np.testing.assert_array_equal((da + db).get(), a + b)
    np.testing.assert_array_equal((da[1:] * db[:-1]).get(), a[1:] * b[:-1])
    np.testing.assert_array_equal((da > 0.1).get(), a > 0.1)


@pytest.mark.parametrize("dt", ["bool", "int8", "float16", "float32", "float64", "complex128"])
def test_vector_path_lengths_and_offsets(dt, rng):
    """The contiguous kernels take up to 16 elements a thread in 16-byte
    accesses: every length around those multiples, and views whose start
    is not aligned (the element-by-element path), give NumPy's results."""
    base = values(rng, dt, (300,), "any")
    other = values(rng, dt, (300,), "any")
    dbase, dother = gp.asarray(base), gp.asarray(other)
    for off in (0, 1, 3, 8):
        for n in (1, 7, 15, 16, 17, 31, 33, 64, 100, 255):
            a, b = base[off:off + n], other[:n]
            da, db = dbase[off:off + n], dother[:n]
            np.testing.assert_array_equal((da > db).get(), a > b)
            np.testing.assert_array_equal(gp.isfinite(da).get(), np.isfinite(a))
            np.testing.assert_array_equal(gp.where(da != db, da, db).get(), np.where(a != b, a, b))
            np.testing.assert_array_equal(gp.where(db == db, 1, 0).get(), np.where(b == b, 1, 0))
            check(gp.multiply(da, db), np_call("multiply", a, b), dt)
    if dt in ("float32", "float64"):
        z = base + 1j * other
        check(gp.absolute(gp.asarray(z)), np.absolute(z), z.dtype)


def single_element_forms(h, d, k):
    """Element k of host array h and of its device copy d as size-1
    operands: a 0-d index, (1,) and (1, 1) views, a 0-d array of its own."""
    return [(h[k], d[k]), (h[k:k + 1], d[k:k + 1]),
            (h[k:k + 1].reshape(1, 1), d[k:k + 1].reshape(1, 1)),
            (np.asarray(h[k]), gp.asarray(np.asarray(h[k])))]


@pytest.mark.parametrize("off", [0, 1], ids=["aligned", "unaligned"])
@pytest.mark.parametrize("dt", ["bool", "int8", "float16", "float32", "float64", "complex128"])
def test_single_element_operands(dt, off, rng):
    """A size-1 device operand broadcast over a larger result (a 0-d result
    used as a scalar, as in the lesson's data > med - 3 * std) is read once
    by the contiguous kernels: NumPy's exact results for every such form
    (0-d, (1,), (1, 1)) in each operand of a binary ufunc and of where()
    (condition, x, y, and two of them at once; a condition array selecting
    both x and y, a single condition both True and False), with the other
    operands aligned (off 0: the 16-byte paths) or not (off 1: element by
    element), short and long enough (8197) for where's full 16-byte tiles
    (256 threads of 16, 8 or 4 elements), into C- and F-ordered results,
    and into an out= it overlaps."""
    size = 8200
    base, other = values(rng, dt, (size,), "any"), values(rng, dt, (size,), "any")
    pick = rng.integers(0, 2, size).astype(bool)
    pick[:3] = True, False, True      # every condition below selects both x and y
    dbase, dother, dpick = gp.asarray(base), gp.asarray(other), gp.asarray(pick)
    op = "add" if dt == "bool" else "subtract"
    for n in (2, 17, 300, 8197):
        a, b, c = base[off:off + n], other[off:off + n], pick[off:off + n]
        da, db, dc = dbase[off:off + n], dother[off:off + n], dpick[off:off + n]
        for k in (0, 3, 5):
            for (hs, ds), (hs2, ds2) in zip(single_element_forms(base, dbase, k),
                                            single_element_forms(other, dother, k)):
                assert_same(getattr(gp, op)(da, ds).get(), np_call(op, a, hs))
                assert_same(getattr(gp, op)(ds, da).get(), np_call(op, hs, a))
                assert_same((da != ds).get(), a != hs)
                assert_same(gp.where(dc, ds, db).get(), np.where(c, hs, b))
                assert_same(gp.where(dc, da, ds).get(), np.where(c, a, hs))
                assert_same(gp.where(dc, ds, ds2).get(), np.where(c, hs, hs2))
        conds = single_element_forms(pick, dpick, 0) + single_element_forms(pick, dpick, 1)
        for hc, dcs in conds:                          # True, then False
            assert_same(gp.where(dcs, da, db).get(), np.where(hc, a, b))
            assert_same(gp.where(dcs, dbase[4], db).get(), np.where(hc, base[4], b))
            assert_same(gp.where(dcs, da, dother[4:5]).get(), np.where(hc, a, other[4:5]))
            assert_same(gp.where(dcs, da, 0).get(), np.where(hc, a, 0))
    grid = values(rng, dt, (6, 7), "any")
    for layout in (np.ascontiguousarray, np.asfortranarray):
        h, hc = layout(grid), layout(pick[:42].reshape(6, 7))
        d, dc = gp.asarray(h), gp.asarray(hc)
        assert_same(getattr(gp, op)(d, dbase[4]).get(), np_call(op, h, base[4]))
        assert_same(gp.where(dc, dbase[4], d).get(), np.where(hc, base[4], h))
    h, d = base[off:].copy(), gp.asarray(base)[off:]
    gp.add(d, d[3:4], out=d)          # out overlaps the single element
    np_call("add", h, h[3:4], out=h)
    assert_same(d.get(), h)


@pytest.mark.parametrize("fshape, oshape", [
    ((3, 4), (1, 1)), ((3, 4), (1, 4)), ((3, 4), (3, 1)), ((3, 4), (4,)), ((3, 4), ()),
    ((3, 4), (3, 4)), ((2, 3, 4), (1, 1, 1)), ((2, 3, 4), (2, 1, 1)), ((2, 3, 4), (1, 3, 1)),
    ((2, 3, 4), (1, 1, 4)), ((2, 3, 4), (1, 4))], ids=str)
@pytest.mark.parametrize("strided", [False, True], ids=["contiguous", "strided"])
def test_result_order_with_broadcast_operands(fshape, oshape, strided, rng):
    """An F-ordered array with a broadcast single element ((1, 1): read
    once by the contiguous kernels), row or column gives an F-ordered
    result, as NumPy's: only operands with two or more axes longer than 1
    choose the order (with a C-ordered array of the full shape, C order).
    The other operand contiguous or a view of every other element; binary
    ufuncs either way round and where() with it as x or as y."""
    hf = np.asfortranarray(values(rng, "float64", fshape, "any"))
    big = values(rng, "float64", oshape + (2,), "any")
    ho = big[..., 0] if strided else np.ascontiguousarray(big[..., 0])
    df = gp.asarray(hf)
    do = gp.asarray(big)[..., 0] if strided else gp.asarray(ho)
    hc, dc = hf > 0, df > 0
    for got, want in [(df + do, hf + ho), (do - df, ho - hf),
                      (gp.where(dc, do, df), np.where(hc, ho, hf)),
                      (gp.where(dc, df, do), np.where(hc, hf, ho))]:
        assert (got.flags.c_contiguous, got.flags.f_contiguous) == \
            (want.flags.c_contiguous, want.flags.f_contiguous)
        assert_same(got.get(), want)


def test_lesson_bounds_from_0d_results(rng):
    """The lesson's clipper compares the data with 0-d device bounds: the
    same survivors as NumPy's."""
    a = (rng.normal(10, 2, 100_003)).astype(np.float32)
    d = gp.asarray(a)
    med, std = gp.median(d), gp.std(d)
    lower, upper = med - 3 * std, med + 3 * std
    hl, hu = lower.get()[()], upper.get()[()]
    np.testing.assert_array_equal((d > lower).get(), a > hl)
    np.testing.assert_array_equal(d.compress(d < upper).get(), a.compress(a < hu))


def test_softplus_and_lesson_expression(rng):
    x = rng.standard_normal(100_000)
    dx = gp.asarray(x)
    sp = gp.maximum(0, dx) + gp.log1p(gp.exp(-gp.abs(dx)))
    np.testing.assert_allclose(sp.get(), np.maximum(0, x) + np.log1p(np.exp(-np.abs(x))),
                               rtol=1e-12)
    y, z = rng.uniform(0.5, 2, (2, 1000))
    r = gp.sin(gp.asarray(x[:1000])) + gp.cos(gp.asarray(y)) / gp.sqrt(gp.asarray(z))
    # the two terms (each below 1.5 in size) can cancel, and CUDA's sin and
    # cos may differ from the C library's in the last bit: the error allowed
    # is relative to the terms, not to their sum
    np.testing.assert_allclose(r.get(), np.sin(x[:1000]) + np.cos(y) / np.sqrt(z), rtol=1e-12,
                               atol=1.5e-12)


@pytest.mark.gpu(devices=2)
def test_mixed_devices_error():
    a = gp.ones(3)
    with gp.cuda.Device(1):
        b = gp.ones(3)
    with pytest.raises(ValueError, match="different devices"):
        a + b


COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


@pytest.mark.parametrize("dt,scalar", [(np.int8, 128), (np.int8, -129), (np.uint8, -1),
                                       (np.uint8, 256), (np.int16, 2**15), (np.uint32, -5),
                                       (np.int64, 2**63), (np.uint64, -1), (np.uint64, 2**64),
                                       (np.int32, 2**100), (np.int32, -2**100)])
@pytest.mark.parametrize("name", COMPARISONS)
def test_compare_with_python_int_beyond_the_type(dt, scalar, name):
    """NumPy 2 compares with a Python int outside the array's integer type
    exactly (int8 == 128 is False) where arithmetic raises OverflowError."""
    info = np.iinfo(dt)
    h = np.array([info.min, 0, 1, info.max], dt)
    d = gp.asarray(h)
    f, g = getattr(np, name), getattr(gp, name)
    for got, want in ((g(d, scalar), f(h, scalar)), (g(scalar, d), f(scalar, h)),
                      (g(d[1], scalar), f(h[1:2].reshape(()), scalar))):
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got.get(), want)
    ops = {"equal": "__eq__", "not_equal": "__ne__", "less": "__lt__", "less_equal": "__le__",
           "greater": "__gt__", "greater_equal": "__ge__"}
    np.testing.assert_array_equal(getattr(d, ops[name])(scalar).get(),
                                  getattr(h, ops[name])(scalar))
    with pytest.raises(OverflowError):
        gp.add(d, scalar)                  # arithmetic still refuses it, as NumPy
    if scalar >= 2**63:                    # bool's loop is int64's, and NumPy overflows
        with pytest.raises(OverflowError):
            np.equal(np.array(True), scalar)
        with pytest.raises(OverflowError):
            gp.equal(gp.asarray(True), scalar)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["log", "log1p", "tanh", "arccosh"])
def test_complex_special_values_as_numpy(name, dtype):
    """C99 Annex G special values (the array API's special cases) that the
    device's complex library gets wrong unless gpuarr patches them."""
    inf, nan = np.inf, np.nan
    parts = [0.0, -0.0, 1.5, -2.0, inf, -inf, nan]
    z = np.array([complex(r, i) for r in parts for i in parts], dtype=dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(z)
    got = getattr(gp, name)(gp.asarray(z)).get()
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        same = (np.isnan(g) & np.isnan(w)) | np.isclose(g, w, rtol=1e-5, atol=0) | (g == w)
        bad = ~same
        # a NaN's sign and acosh's +-pi/2 choice are unspecified: compare magnitudes there
        bad &= ~(np.isfinite(g) & np.isfinite(w) & np.isclose(abs(g), abs(w), rtol=1e-5))
        assert not bad.any(), (part, z[bad], g[bad], w[bad])
