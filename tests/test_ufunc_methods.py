"""The ufunc call's where= keyword and the ufunc methods outer, reduce and
accumulate, directly and through NumPy's __array_ufunc__, against NumPy.
Argument errors that need no device run everywhere."""
import warnings

import numpy as np
import pytest

import gpuarr as gp



# ====================================================== CPU only: arguments

def test_methods_exist_on_every_ufunc():
    for name in ("add", "sin", "logical_and", "divide"):
        u = getattr(gp, name)
        assert callable(u.outer) and callable(u.reduce) and callable(u.accumulate)


@pytest.mark.parametrize("method, args", [("outer", ([1], [2])), ("reduce", ([1, 2],)),
                                          ("accumulate", ([1, 2],))])
def test_methods_need_a_binary_ufunc(method, args):
    with pytest.raises(ValueError, match=f"sin.{method}: {method}.* only supported for binary"):
        getattr(gp.sin, method)(*args)


def test_unimplemented_methods_say_what_exists():
    with pytest.raises(NotImplementedError, match=r"subtract\.reduce .*add, multiply, maximum"):
        gp.subtract.reduce([3, 2, 1])
    with pytest.raises(NotImplementedError, match=r"maximum\.accumulate .*add, multiply"):
        gp.maximum.accumulate([3, 2, 1])
    with pytest.raises(NotImplementedError, match="where="):
        gp.add.reduce([1, 2], where=[True, False])


def test_host_arrays_are_refused_by_the_methods_and_where():
    host = np.arange(3)
    with pytest.raises(TypeError, match=r"gpuarr\.asarray\(\) first"):
        gp.multiply.outer(host, [1, 2])
    with pytest.raises(TypeError, match=r"where= is a numpy\.ndarray.*gpuarr\.asarray\(\) first"):
        gp.add(1, 2, where=np.array([True, False]))


# ================================================================ where=

@pytest.mark.gpu
@pytest.mark.parametrize("dt", ["int32", "float32", "float64", "complex64", "bool"])
def test_where_keyword_keeps_out_where_false(dt, rng):
    a = (rng.random((5, 7)) * 10).astype(dt)
    b = (rng.random((5, 7)) * 10).astype(dt)
    m = rng.random((5, 7)) > 0.5
    want = np.full((5, 7), 3, dt)
    np.add(a, b, out=want, where=m)
    out = gp.full((5, 7), 3, dtype=dt)
    r = gp.add(gp.asarray(a), gp.asarray(b), out=out, where=gp.asarray(m))
    assert r is out
    np.testing.assert_array_equal(out.get(), want)


@pytest.mark.gpu
def test_where_keyword_broadcasting_casting_and_in_place(rng):
    a = rng.random((4, 6))
    m = rng.random(6) > 0.5                       # broadcasts over the rows
    want = np.zeros((4, 6), np.float32)
    np.multiply(a, 2.0, out=want, where=m, casting="same_kind")
    out = gp.zeros((4, 6), dtype=gp.float32)      # float64 result cast into float32 out
    gp.multiply(gp.asarray(a), 2.0, out=out, where=gp.asarray(m), casting="same_kind")
    np.testing.assert_array_equal(out.get(), want)
    # out is also an input; mask a list; out a strided view
    x = a.copy()
    d = gp.asarray(a)
    np.sqrt(x, out=x, where=[True, False, True, False, True, False])
    gp.sqrt(d, out=d, where=[True, False, True, False, True, False])
    np.testing.assert_array_equal(d.get(), x)
    big_h = np.zeros((8, 6))
    big_d = gp.zeros((8, 6))
    np.add(a, 1, out=big_h[::2], where=m)
    gp.add(gp.asarray(a), 1, out=big_d[::2], where=gp.asarray(m))
    np.testing.assert_array_equal(big_d.get(), big_h)
    # where=False: out untouched; the mask widens the result's shape
    o = gp.full(3, 7.0)
    gp.add(gp.ones(3), 1, out=o, where=False)
    np.testing.assert_array_equal(o.get(), [7.0, 7.0, 7.0])
    o2 = gp.zeros((2, 3))
    gp.add(gp.ones(3), 1, out=o2, where=gp.asarray([[True], [False]]))
    np.testing.assert_array_equal(o2.get(), [[2, 2, 2], [0, 0, 0]])


@pytest.mark.gpu
def test_where_keyword_without_out_warns_like_numpy():
    with pytest.warns(UserWarning, match="'where' used without 'out'"):
        r = gp.add(1, 2, where=gp.ones(3, dtype=gp.bool_))
    assert r.shape == (3,) and r.dtype == np.int64
    np.testing.assert_array_equal(r.get(), [3, 3, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = gp.add(gp.ones(3), 1, out=None, where=gp.asarray([True, False, True]))
    assert r.shape == (3,)
    assert r.get()[0] == 2 and r.get()[2] == 2


@pytest.mark.gpu
def test_where_keyword_errors_leave_out_unchanged():
    out = gp.full(3, 5.0)
    with pytest.raises(TypeError, match=r"where= must be a boolean array.*int64"):
        gp.add(gp.ones(3), 1, out=out, where=gp.arange(3))
    with pytest.raises(ValueError, match=r"could not be broadcast together"):
        gp.add(gp.ones(3), 1, out=out, where=gp.ones(4, dtype=gp.bool_))
    with pytest.raises(ValueError, match=r"non-broadcastable output operand with shape \(3,\)"):
        gp.add(gp.ones(3), 1, out=out, where=gp.ones((2, 3), dtype=gp.bool_))
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        gp.add(gp.ones(3), 1, out=gp.zeros(3, dtype=gp.int32), where=gp.ones(3, dtype=gp.bool_))
    np.testing.assert_array_equal(out.get(), [5.0, 5.0, 5.0])


@pytest.mark.gpu
def test_where_keyword_through_numpy(rng):
    a = rng.random(10)
    m = a > 0.5
    o = gp.zeros(10)
    np.add(gp.asarray(a), 1, out=o, where=m)        # the host mask moves with the call
    want = np.zeros(10)
    np.add(a, 1, out=want, where=m)
    np.testing.assert_array_equal(o.get(), want)


# ============================================================ methods

@pytest.mark.gpu
def test_outer(rng):
    a, b = rng.random(3), rng.random((2, 4))
    np.testing.assert_allclose(gp.multiply.outer(gp.asarray(a), gp.asarray(b)).get(),
                               np.multiply.outer(a, b))
    r = gp.subtract.outer([1, 2, 3], 2)
    np.testing.assert_array_equal(r.get(), np.subtract.outer([1, 2, 3], 2))
    r = gp.less.outer(gp.asarray(a), gp.asarray(a))
    assert r.dtype == np.bool_ and r.shape == (3, 3)
    np.testing.assert_array_equal(r.get(), np.less.outer(a, a))
    r = np.multiply.outer(gp.arange(3), gp.arange(4))   # through __array_ufunc__
    assert isinstance(r, gp.ndarray)
    np.testing.assert_array_equal(r.get(), np.multiply.outer(np.arange(3), np.arange(4)))
    r = gp.add.outer(gp.arange(3), gp.arange(2), dtype=gp.float32)
    assert r.dtype == np.float32


@pytest.mark.gpu
def test_reduce_follows_numpy_defaults(rng):
    a = rng.integers(0, 5, (4, 5)).astype(np.int32)
    d = gp.asarray(a)
    for name in ("add", "multiply", "maximum", "minimum", "logical_and", "logical_or"):
        for kw in ({}, {"axis": 1}, {"axis": None}, {"axis": 0, "keepdims": True}):
            want = getattr(np, name).reduce(a, **kw)
            got = getattr(gp, name).reduce(d, **kw)
            assert got.shape == np.shape(want), (name, kw)
            assert got.dtype == np.asarray(want).dtype, (name, kw)
            np.testing.assert_array_equal(got.get(), want, err_msg=f"{name} {kw}")
    np.testing.assert_array_equal(np.add.reduce(d).get(), np.add.reduce(a))   # axis 0
    assert gp.add.reduce(d, dtype=gp.float64).dtype == np.float64
    np.testing.assert_array_equal(gp.add.reduce(d, initial=10).get(), np.add.reduce(a, initial=10))
    e = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(gp.maximum.reduce(gp.asarray(e), initial=-1.0).get(),
                                  np.maximum.reduce(e, initial=-1.0))


@pytest.mark.gpu
def test_accumulate(rng):
    a = rng.integers(1, 4, (3, 4))
    d = gp.asarray(a)
    np.testing.assert_array_equal(gp.add.accumulate(d).get(), np.add.accumulate(a))
    np.testing.assert_array_equal(gp.multiply.accumulate(d, axis=1).get(),
                                  np.multiply.accumulate(a, axis=1))
    np.testing.assert_array_equal(np.add.accumulate(d).get(), np.add.accumulate(a))
