"""gpuarr.fuse against NumPy: the course's two examples (integer inputs
becoming float64 through sin), lambdas, Python and NumPy scalars, several
outputs, where/astype, trailing reductions, NumPy inputs, and the errors.
Tracing and source generation need no GPU and run everywhere."""
import numpy as np
import pytest

import gpuarr as gp
from gpuarr import _fusion
from gpuarr.cuda import compiler

from conftest import requires_nvrtc

pytestmark = pytest.mark.usefixtures("private_kernel_cache")





@gp.fuse()
def elementwise_computation(x, y, z):
    return gp.sin(x) + gp.cos(y) / gp.sqrt(z)


@gp.fuse(kernel_name="squared_diff")
def squared_diff(x, y):
    return (x - y) * (x - y)


def _np_elementwise(x, y, z):
    return np.sin(x) + np.cos(y) / np.sqrt(z)


# ---------------------------------------------------------------- on GPU --

@pytest.mark.gpu
def test_course_examples():
    a, b, c = gp.arange(10), gp.arange(10, 20), gp.arange(20, 30)
    got = elementwise_computation(a, b, c)
    assert got.dtype == np.float64          # integers become float64 through sin
    np.testing.assert_allclose(got.get(), _np_elementwise(np.arange(10), np.arange(10, 20),
                                                          np.arange(20, 30)), rtol=1e-14)
    got = squared_diff(b, c)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.get(), np.full(10, 100))
    r = gp.benchmark(squared_diff, (b, c), n_repeat=10)
    assert r.gpu_times.shape == (1, 10)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint32, np.complex64,
                                   np.float16])
def test_same_answers_as_separate_calls(dtype, rng):
    def body(x, y):
        return gp.maximum(x, y) * 3 - gp.abs(x) // 2 if np.dtype(dtype).kind in "iu" else \
            gp.exp(x / 4) + y * 2 - gp.abs(x)

    f = gp.fuse()(body)
    x = (rng.standard_normal((31, 17)) * 5).astype(dtype)
    y = (rng.standard_normal((31, 17)) * 5).astype(dtype)
    dx, dy = gp.asarray(x), gp.asarray(y)
    got = f(dx, dy)
    want = body(dx, dy)                      # gpuarr's separate calls
    assert got.dtype == want.dtype
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_array_equal(got.get(), want.get())
    else:
        tol = 2e-3 if dtype == np.float16 else 1e-6 if dtype in (np.float32, np.complex64) \
            else 1e-14
        np.testing.assert_allclose(got.get(), want.get(), rtol=tol, atol=tol)


@pytest.mark.gpu
def test_lambda_scalars_broadcast_and_strides(rng):
    f = gp.fuse(lambda x, s, t: x * s + t)
    x = rng.standard_normal((8, 9)).astype(np.float32)
    dx = gp.asarray(x)[::2, ::-1]
    got = f(dx, 2.0, np.float32(0.5))
    assert got.dtype == np.float32            # the Python float is weak
    np.testing.assert_allclose(got.get(), x[::2, ::-1] * 2 + 0.5, rtol=1e-6)
    got = f(dx, 3, np.float64(1))             # a NumPy float64 scalar is not
    assert got.dtype == np.float64
    b = gp.asarray(rng.standard_normal(9).astype(np.float32))
    np.testing.assert_allclose(f(dx, b, 1.0).get(), x[::2, ::-1] * b.get() + 1, rtol=1e-6)


@pytest.mark.gpu
def test_several_outputs_where_astype(rng):
    @gp.fuse()
    def split(x, y):
        big = gp.where(x > y, x, y)
        return big, (x - y).astype(np.float32), x == y

    x = rng.integers(-5, 5, 1000)
    y = rng.integers(-5, 5, 1000)
    a, b, c = split(gp.asarray(x), gp.asarray(y))
    np.testing.assert_array_equal(a.get(), np.maximum(x, y))
    assert b.dtype == np.float32 and c.dtype == np.bool_
    np.testing.assert_array_equal(b.get(), (x - y).astype(np.float32))
    np.testing.assert_array_equal(c.get(), x == y)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_trailing_reductions(name, axis, rng):
    f = gp.fuse()(lambda x, y: getattr(gp, name)(x * y + 1, axis=axis))
    x = rng.random((40, 70)) + 0.5
    y = rng.random(70) + 0.5
    got = f(gp.asarray(x), gp.asarray(y))
    want = getattr(np, name)(x * y + 1, axis=axis)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.get(), want, rtol=1e-10 if name != "prod" else 1e-8)
    g = gp.fuse()(lambda x: (x > 0.9).sum())
    assert int(g(gp.asarray(x))) == int((x > 0.9).sum())
    h = gp.fuse()(lambda x: (x * 2).max(axis=0, keepdims=True))
    np.testing.assert_array_equal(h(gp.asarray(x)).get(), (x * 2).max(axis=0, keepdims=True))


@pytest.mark.gpu
def test_empty_and_errors():
    f = gp.fuse()(lambda x: gp.sqrt(x))
    assert f(gp.zeros((0, 4))).shape == (0, 4)
    m = gp.fuse()(lambda x: x.max())
    with pytest.raises(ValueError, match="zero-size"):
        m(gp.zeros(0))
    with pytest.raises(TypeError, match="NumPy arrays and device arrays"):
        squared_diff(gp.zeros(3), np.zeros(3))


# ----------------------------------------------------------- without GPU --

def test_numpy_inputs_run_numpy(rng):
    x, y, z = rng.random(50), rng.random(50), rng.random(50) + 1
    np.testing.assert_allclose(elementwise_computation(x, y, z), _np_elementwise(x, y, z),
                               rtol=1e-15)
    got = gp.fuse()(lambda x: (gp.exp(x) * 2).sum(axis=0))(rng.random((3, 4)))
    assert got.shape == (4,)
    assert squared_diff(np.arange(3), 1).dtype == np.arange(3).dtype


@pytest.mark.parametrize("body, match", [
    (lambda x: x if x > 0 else -x, "truth value"),
    (lambda x: x[0], "indexing"),
    (lambda x: gp.sort(x), "converted to an array|cannot be fused"),
    (lambda x: np.cumsum(x), "cumsum"),
    (lambda x: gp.sin(x, out=x), "keyword"),
    (lambda x: x.sum() + 1, "last operation"),
])
def test_unfusable_operations_are_named(body, match):
    with pytest.raises((_fusion.FuseError, TypeError), match=match):
        gp.fuse()(body).inspect_source(np.ones(3))


def test_decorator_forms_and_names():
    assert squared_diff.name == "squared_diff"
    assert gp.fuse(lambda x: x).name == "fused_lambda"
    assert gp.fuse(kernel_name="mine")(lambda x: x).name == "mine"

    def sincos(x, y):          # a CUDA math function's name: the kernel's is prefixed
        return gp.sin(x) + gp.cos(y)

    assert gp.fuse(sincos).name == "fused_sincos"
    f = gp.fuse(elementwise_computation._func)
    assert f.__name__ == "elementwise_computation"
    with pytest.raises(_fusion.FuseError, match="positional"):
        gp.fuse(lambda *a: a[0])
    with pytest.raises(TypeError, match="unexpected"):
        gp.fuse(name="x")


@requires_nvrtc
@pytest.mark.parametrize("args, body", [
    ((np.ones(3), np.ones(3), np.ones(3)), lambda x, y, z: gp.sin(x) + gp.cos(y) / gp.sqrt(z)),
    ((np.ones(3, np.int8), np.ones(3, np.uint8)),
     lambda a, b: gp.where(a > b, a, b * 2).astype(np.float16) + 1),
    ((np.ones(3, np.complex64),), lambda z: gp.exp(z) * 2 + z.real),
    ((np.ones(3, np.float32), 2.0), lambda x, w: (x * w).max()),
    ((np.ones((3, 3), np.int16),), lambda x: (x > 0).sum(axis=1)),
    ((np.ones(3), 2, True), lambda x, k, f: gp.where(f, x ** k, -x) // 3),
])
def test_generated_sources_compile(args, body):
    src = gp.fuse()(body).inspect_source(*args)
    assert compiler.compile_code(src, options=(f"-I{compiler.include_dir()}",),
                                 arch=90).kind == "cubin"
