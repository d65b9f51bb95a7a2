"""ElementwiseKernel and ReductionKernel against NumPy: the course's
examples, typed and generic parameters, raw arguments, scalars,
broadcasting, non-contiguous inputs, outputs given and allocated,
reductions over every axis form.  Source generation and compilation
(no GPU) are tested at the end."""
import numpy as np
import pytest

import gpuarr as gp
from gpuarr import _userkernels as uk
from gpuarr.cuda import compiler

from conftest import requires_nvrtc

from _arrays import random_array

pytestmark = pytest.mark.usefixtures("private_kernel_cache")





# ------------------------------------------------------------ elementwise --

@pytest.mark.gpu
def test_squared_diff_typed_and_broadcast(rng):
    squared_diff = gp.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                        "z = (x - y) * (x - y)", "squared_diff")
    x = rng.standard_normal((2, 5)).astype(np.float32)
    y = rng.standard_normal(5).astype(np.float32)
    got = squared_diff(gp.asarray(x), gp.asarray(y))
    assert got.dtype == np.float32 and got.shape == (2, 5)
    np.testing.assert_allclose(got.get(), (x - y) ** 2, rtol=1e-6)
    got = squared_diff(gp.asarray(x), 5)
    np.testing.assert_allclose(got.get(), (x - 5) ** 2, rtol=1e-6)
    z = gp.empty((2, 5), dtype=gp.float32)
    assert squared_diff(gp.asarray(x), gp.asarray(y), z) is z
    np.testing.assert_allclose(z.get(), (x - y) ** 2, rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.int64, np.float32,
                                   np.float64, np.complex64, np.complex128, np.float16])
def test_generic_types(dtype, rng):
    k = gp.ElementwiseKernel("T x, T y", "T z", "z = x * y + x", "generic_madd")
    x = random_array(rng, (33, 7), dtype)
    y = random_array(rng, (33, 7), dtype)
    if np.dtype(dtype).kind in "iu":
        x = (x % 50).astype(dtype)
        y = (y % 50).astype(dtype)
    if dtype == np.float16:
        # magnitudes ~10: at ~100, x * y passes float16's largest value
        # (65504) in about one draw in eleven, and inf - inf compares as NaN
        x, y = x / np.float16(10), y / np.float16(10)
    got = k(gp.asarray(x), gp.asarray(y))
    assert got.dtype == dtype
    with np.errstate(over="ignore"):
        want = x * y + x
    if np.dtype(dtype).kind in "fc":
        # NVRTC contracts x * y + x into one fused multiply-add (CUDA's default,
        # as in CuPy), which rounds once where NumPy rounds twice: the bound is
        # a few ulps of |x * y| + |x|
        eps = np.finfo(dtype).eps
        bound = 4 * eps * (np.abs(x.astype(np.complex128) * y) + np.abs(x))
        assert (np.abs(got.get().astype(np.complex128) - want) <= bound).all()
    else:
        np.testing.assert_array_equal(got.get(), want)


@pytest.mark.gpu
def test_several_placeholders_and_outputs(rng):
    k = gp.ElementwiseKernel("X x, Y y", "X s, Y d", "s = x + (X)y; d = (Y)x - y", "two_out")
    x = rng.standard_normal(100)
    y = rng.integers(-5, 5, 100).astype(np.int32)
    s, d = k(gp.asarray(x), gp.asarray(y))
    assert s.dtype == np.float64 and d.dtype == np.int32
    np.testing.assert_allclose(s.get(), x + y)
    np.testing.assert_array_equal(d.get(), x.astype(np.int32) - y)


@pytest.mark.gpu
def test_non_contiguous_and_reduce_dims(rng):
    k = gp.ElementwiseKernel("T x, T y", "T z", "z = x - 2 * y", "strided")
    x = rng.standard_normal((6, 8, 10))
    y = rng.standard_normal((8, 1))
    dx = gp.asarray(x)[:, ::-2, 1::3]
    dy = gp.asarray(y)[::2]
    for reduce_dims in (True, False):
        kk = gp.ElementwiseKernel("T x, T y", "T z", "z = x - 2 * y", "strided",
                                  reduce_dims=reduce_dims)
        got = kk(dx, dy)
        np.testing.assert_allclose(got.get(), x[:, ::-2, 1::3] - 2 * y[::2])
    out = gp.zeros((6, 4, 9), dtype=gp.float64)[:, :, ::3]
    k(dx, dy, out)
    np.testing.assert_allclose(out.get(), x[:, ::-2, 1::3] - 2 * y[::2])


@pytest.mark.gpu
def test_raw_arguments_and_index(rng):
    # the course's manual indexing: y[i] = x[n - 1 - i]
    k = gp.ElementwiseKernel("raw T x, int64 m", "T y", "y = x[m - 1 - i] + _ind.size()",
                             "reverse")
    x = rng.standard_normal(50)
    y = gp.empty(50, dtype=gp.float64)
    k(gp.asarray(x), 50, y)
    np.testing.assert_allclose(y.get(), x[::-1] + 50)
    x2 = rng.standard_normal((5, 10))
    dx2 = gp.asarray(x2)[:, ::-1]              # raw, strided, 2-d: C-order element j
    k(dx2, 50, y)
    np.testing.assert_allclose(y.get(), x2[:, ::-1].ravel()[::-1] + 50)


@pytest.mark.gpu
def test_size_when_no_array_argument():
    k = gp.ElementwiseKernel("", "raw int32 out", "out[i] = i * 2", "iota2")
    out = gp.zeros(7, dtype=gp.int32)
    k(out, size=7)
    np.testing.assert_array_equal(out.get(), np.arange(7) * 2)
    with pytest.raises(ValueError, match="pass size="):
        k(out)


@pytest.mark.gpu
def test_scalar_types_follow_cupy():
    k = gp.ElementwiseKernel("T x, U s", "T z", "z = x + (T)s", "add_scalar")
    x = gp.arange(4, dtype=gp.float32)
    np.testing.assert_array_equal(k(x, 2).get(), np.arange(4) + 2)
    np.testing.assert_array_equal(k(x, np.float64(0.5)).get(), np.arange(4) + 0.5)
    np.testing.assert_array_equal(k(x, True).get(), np.arange(4) + 1)


@pytest.mark.gpu
def test_no_return_return_tuple_loop_prep_preamble(rng):
    k = gp.ElementwiseKernel("T x", "T y", "y = sq(x) + bias", "prep",
                             preamble="__device__ double sq(double v) { return v * v; }",
                             loop_prep="const double bias = 1.0;", return_tuple=True)
    x = rng.standard_normal(64)
    (y,) = k(gp.asarray(x))
    np.testing.assert_allclose(y.get(), x * x + 1)
    k2 = gp.ElementwiseKernel("T x", "T y", "y = x", "noret", no_return=True)
    out = gp.empty(64, dtype=gp.float64)
    assert k2(gp.asarray(x), out) is None
    np.testing.assert_array_equal(out.get(), x)


@pytest.mark.gpu
def test_elementwise_errors():
    k = gp.ElementwiseKernel("float32 x", "float32 y", "y = x", "copy32")
    with pytest.raises(TypeError, match="dtype float64.*float32"):
        k(gp.zeros(3))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        k(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="wrong number of arguments"):
        k()
    with pytest.raises(ValueError, match="shape"):
        k(gp.zeros(3, dtype=gp.float32), gp.zeros(4, dtype=gp.float32))
    g = gp.ElementwiseKernel("T x", "U y", "y = x", "undetermined")
    with pytest.raises(TypeError, match="cannot tell the dtype of output 'y'"):
        g(gp.zeros(3))
    bad = gp.ElementwiseKernel("T x", "T y", "y = x +* 1", "syntax")
    with pytest.raises(gp.cuda.CompileException, match="syntax"):
        bad(gp.zeros(3))
    with pytest.raises(ValueError, match="broadcast"):
        gp.ElementwiseKernel("T x, T y", "T z", "z = x", "bc")(gp.zeros(3), gp.zeros(4))


@pytest.mark.gpu
def test_empty_arrays_and_streams(rng):
    k = gp.ElementwiseKernel("T x", "T y", "y = 2 * x", "dbl")
    e = k(gp.zeros((0, 3)))
    assert e.shape == (0, 3)
    s = gp.cuda.Stream(non_blocking=True)
    x = rng.standard_normal(1 << 20)
    y = k(gp.asarray(x), stream=s)
    s.synchronize()
    np.testing.assert_allclose(y.get(), 2 * x)


# -------------------------------------------------------------- reduction --

def _l2norm():
    return gp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")


@pytest.mark.gpu
@pytest.mark.parametrize("axis", [None, 0, 1, 2, (0, 2), (-1, -2), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_l2norm_axes(axis, keepdims, rng):
    x = rng.standard_normal((7, 33, 65)).astype(np.float32)
    got = _l2norm()(gp.asarray(x), axis=axis, keepdims=keepdims)
    want = np.sqrt(np.sum(x.astype(np.float64) ** 2, axis=axis, keepdims=keepdims))
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got.get(), want, rtol=1e-5)


@pytest.mark.gpu
def test_l2norm_course_example():
    x = gp.arange(10, dtype=np.float32).reshape(2, 5)
    got = _l2norm()(x, axis=1)
    np.testing.assert_allclose(got.get(), [5.4772256, 15.9687195], rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 1000, 1 << 22])
def test_full_reduction_sizes(n, rng):
    x = rng.standard_normal(n)
    got = _l2norm()(gp.asarray(x))
    assert got.shape == ()
    np.testing.assert_allclose(float(got), np.sqrt(np.sum(x * x)), rtol=1e-10)


@pytest.mark.gpu
def test_reduction_with_two_inputs_scalar_and_post_map(rng):
    k = gp.ReductionKernel("T x, T y, float64 w", "float64 z", "x * y * w", "a + b",
                           "z = a / _in_ind.size()", "0", "wmean", reduce_type="double")
    x = rng.standard_normal((40, 50))
    y = rng.standard_normal(50)
    got = k(gp.asarray(x), gp.asarray(y), 3.0, axis=1)
    np.testing.assert_allclose(got.get(), np.mean(x * y * 3.0, axis=1))
    xs = gp.asarray(x)[::-1, ::2]
    got = k(xs, gp.asarray(y)[::2], 2.0, axis=0)
    np.testing.assert_allclose(got.get(), np.mean(x[::-1, ::2] * y[::2] * 2.0, axis=0))


@pytest.mark.gpu
def test_reduction_max_with_identity_and_out(rng):
    k = gp.ReductionKernel("T x", "T m", "x", "max(a, b)", "m = a", "-1e300", "maxk")
    x = rng.standard_normal((100, 30))
    out = gp.empty(30)
    assert k(gp.asarray(x), axis=0, out=out) is out
    np.testing.assert_array_equal(out.get(), x.max(axis=0))
    out2 = gp.empty((1, 30))
    k(gp.asarray(x), axis=0, keepdims=True, out=out2)
    np.testing.assert_array_equal(out2.get(), x.max(axis=0, keepdims=True))
    with pytest.raises(ValueError, match="out has shape"):
        k(gp.asarray(x), axis=0, out=gp.empty(31))


@pytest.mark.gpu
def test_integer_reduction_and_empty_axis(rng):
    k = gp.ReductionKernel("T x", "int64 c", "x > 0 ? 1 : 0", "a + b", "c = a", "0", "countpos")
    x = rng.integers(-10, 10, (20, 0, 3)).astype(np.int16)
    np.testing.assert_array_equal(k(gp.asarray(x), axis=1).get(), np.zeros((20, 3)))
    x = rng.integers(-10, 10, (20, 9, 3)).astype(np.int16)
    np.testing.assert_array_equal(k(gp.asarray(x), axis=(0, 1)).get(), (x > 0).sum(axis=(0, 1)))


@pytest.mark.gpu
def test_reduction_errors():
    k = _l2norm()
    with pytest.raises(TypeError, match="takes 1 inputs"):
        k()
    with pytest.raises(np.exceptions.AxisError):
        k(gp.zeros((2, 3)), axis=2)
    with pytest.raises(ValueError, match="duplicate"):
        k(gp.zeros((2, 3)), axis=(0, 0))


# ---------------------------------------------------------- without a GPU --

def test_parameter_parsing():
    ps = uk.parse_params("T x, raw float32 y, int64 m", False, "in_params")
    assert [(p.name, p.placeholder, p.dtype, p.raw) for p in ps] == [
        ("x", "T", None, False), ("y", None, np.float32, True), ("m", None, np.int64, False)]
    with pytest.raises(ValueError, match="reserved"):
        uk.parse_params("T i", False, "in_params")
    with pytest.raises(ValueError, match="C type name"):
        uk.parse_params("float x", False, "in_params")
    with pytest.raises(ValueError, match=r"'\[raw\] <type> <name>'"):
        uk.parse_params("T", False, "in_params")
    with pytest.raises(ValueError, match="used twice"):
        gp.ElementwiseKernel("T x", "T x", "x = x")
    with pytest.raises(ValueError, match="C identifier"):
        gp.ElementwiseKernel("T x", "T y", "y = x", name="my kernel")
    with pytest.raises(ValueError, match="exactly one"):
        gp.ReductionKernel("T x", "T y, T z", "x", "a + b", "y = a", "0")


@requires_nvrtc
@pytest.mark.parametrize("contiguous,ndim", [(True, 1), (False, 1), (False, 3)])
def test_generated_elementwise_sources_compile(contiguous, ndim):
    k = gp.ElementwiseKernel("T x, raw T r, U s", "T z", "z = x * (T)s + r[i % r.size()]",
                             "gen")
    params = k.in_params + k.out_params
    for dt in (np.float32, np.complex128, np.float16, np.int8):
        dts = (np.dtype(dt), np.dtype(dt), np.dtype(np.float64), np.dtype(dt))
        src = uk.elementwise_source("gen", params, dts, (1, 2, 1, 1), ndim, contiguous,
                                    k.operation, placeholders={"T": np.dtype(dt),
                                                               "U": np.dtype(np.float64)},
                                    scalar_params={"s"})
        assert compiler.compile_code(src, options=(f"-I{compiler.include_dir()}",),
                                     arch=90).kind == "cubin"


@requires_nvrtc
def test_generated_reduction_sources_compile():
    src = uk.reduction_source("wdot", ["x", "y"], [np.dtype("f8"), np.dtype("f4")], ["w"],
                              [np.dtype("f8")], "z", np.dtype("f8"), "x * y * w", "max(a, b)",
                              "z = a / _in_ind.size()", "-1e300", "double", "", {})
    assert compiler.compile_code(src, options=(f"-I{compiler.include_dir()}",),
                                 arch=90).kind == "cubin"
