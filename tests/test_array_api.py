"""The array API standard (2024.12) on gpuarr: the namespace (gpuarr itself,
from x.__array_namespace__()), its inspection API, the standard's names
beside NumPy's, signatures as array-api-tests checks them, and each name
gpuarr added for the standard against NumPy 2 (whose own namespace is
array-API compatible) over dtypes and shapes, empty and 0-d included.

The first part runs without a GPU: names, signatures, the inspection API,
api_version handling, the dtype functions, and the array attributes and
methods that touch no device memory (on arrays over a made-up address).
The GPU tests are marked.  The matrix products (matmul, tensordot, vecdot,
__matmul__) are tested against NumPy in tests/test_matmul.py."""
import inspect

import numpy as np
import pytest
from numpy.exceptions import AxisError

import gpuarr as gp
from _array_api_standard import ATTRIBUTES, FUNCTIONS, INFO, METHODS
from _arrays import assert_close, assert_same, random_array

P = inspect.Parameter


def fake_array(shape, dtype=np.float64):
    """A device array over a made-up address: its metadata is real, its
    memory must never be touched (no GPU needed)."""
    nbytes = max(int(np.prod(shape)) * np.dtype(dtype).itemsize, 1)
    mem = gp.cuda.UnownedMemory(0x10000, nbytes, None)
    return gp.ndarray(shape, dtype, memptr=gp.cuda.MemoryPointer(mem, 0x10000))


def stub_signature(text):
    return inspect.signature(eval(f"lambda {text[1:-1]}: None"))  # noqa: S307


def check_signature(sig, stub):
    """array-api-tests' rule (test_signatures.py): the standard's
    positional parameters come first, in order, named as the standard
    names them unless positional-only, and positional-or-keyword where it
    says so; its keyword-only parameters exist, keyword-only or
    positional-or-keyword.  Extra parameters are allowed."""
    params = list(sig.parameters.values())
    stub_params = list(stub.parameters.values())
    positional = [p for p in stub_params if p.kind != P.KEYWORD_ONLY]
    for i, sp in enumerate(positional):
        assert len(params) > i, f"argument {sp.name!r} missing"
        p = params[i]
        if sp.kind not in (P.POSITIONAL_ONLY, P.VAR_POSITIONAL, P.VAR_KEYWORD):
            assert p.name == sp.name, f"argument {p.name!r} should be named {sp.name!r}"
        if sp.kind in (P.POSITIONAL_OR_KEYWORD, P.VAR_POSITIONAL, P.VAR_KEYWORD):
            assert p.kind == sp.kind, f"{p.name} is {p.kind.description}, not {sp.kind.description}"
    for sp in stub_params[len(positional):]:
        assert sp.name in sig.parameters, f"keyword argument {sp.name!r} missing"
        assert sig.parameters[sp.name].kind in (P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD)


# ================================================================ no GPU

def test_namespace_is_gpuarr_for_every_version():
    x = fake_array((2, 3))
    assert gp.__array_api_version__ == "2024.12"
    assert x.__array_namespace__() is gp
    for version in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
        assert x.__array_namespace__(api_version=version) is gp


@pytest.mark.parametrize("version", ["2025.12", "2020.10", "", 2024, 2024.12, b"2024.12"])
def test_namespace_refuses_other_versions(version):
    with pytest.raises(ValueError, match="api_version"):
        fake_array((2,)).__array_namespace__(api_version=version)


def test_namespace_takes_api_version_by_keyword_only():
    with pytest.raises(TypeError):
        fake_array((2,)).__array_namespace__("2024.12")


def test_every_standard_name_is_there():
    missing = {n for n in FUNCTIONS if not hasattr(gp, n)}
    missing |= {n for n in METHODS if not hasattr(gp.ndarray, n)}
    missing |= {n for n in ATTRIBUTES if not hasattr(gp.ndarray, n)}
    assert not missing, sorted(missing)
    for name in ("e", "inf", "nan", "newaxis", "pi", "__array_namespace_info__"):
        assert hasattr(gp, name)
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64", "complex64", "complex128"):
        assert np.dtype(getattr(gp, name)) == np.dtype(name)


# the standard's names for NumPy's: one object, not a second implementation
ALIASES = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "atan2": "arctan2",
           "acosh": "arccosh", "asinh": "arcsinh", "atanh": "arctanh",
           "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
           "bitwise_invert": "invert", "pow": "power", "concat": "concatenate",
           "permute_dims": "transpose"}


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_standard_names_are_numpys_functions(name):
    assert getattr(gp, name) is getattr(gp, ALIASES[name])


def _ufunc_arity(text):
    return sum(1 for p in stub_signature(text).parameters.values() if p.kind == P.POSITIONAL_ONLY)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_function_signature_conforms(name):
    f = getattr(gp, name)
    if isinstance(f, gp.ufunc):
        assert f.nin == _ufunc_arity(FUNCTIONS[name]) and f.nout == 1
        return
    check_signature(inspect.signature(f), stub_signature(FUNCTIONS[name]))


@pytest.mark.parametrize("name", sorted(METHODS))
def test_method_signature_conforms(name):
    sig = inspect.signature(getattr(gp.ndarray, name))
    sig = sig.replace(parameters=list(sig.parameters.values())[1:])  # self
    check_signature(sig, stub_signature(METHODS[name]))


@pytest.mark.parametrize("name", sorted(INFO))
def test_info_signature_conforms(name):
    sig = inspect.signature(getattr(gp.__array_namespace_info__(), name))
    check_signature(sig, stub_signature(INFO[name]))


def test_numpy_keywords_still_accepted():
    """The standard's keywords came beside NumPy's: both spellings work
    (checked on the signatures; the GPU tests call them)."""
    for f, names in ((gp.std, ("ddof", "correction")), (gp.var, ("ddof", "correction")),
                     (gp.clip, ("min", "max", "a_min", "a_max", "out")),
                     (gp.sort, ("kind", "order", "stable", "descending")),
                     (gp.argsort, ("kind", "order", "stable", "descending")),
                     (gp.reshape, ("order", "copy")), (gp.asarray, ("order", "copy", "device")),
                     (gp.zeros, ("order", "device", "memory")),
                     (gp.full_like, ("order", "subok", "shape", "device"))):
        assert set(names) <= set(inspect.signature(f).parameters), f.__name__


def test_info_capabilities_and_dtypes():
    info = gp.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": True, "data-dependent shapes": True,
                                   "max dimensions": 64}
    ref = np.__array_namespace_info__()
    assert info.default_dtypes() == ref.default_dtypes()
    assert info.default_dtypes(device=info.default_device()) == ref.default_dtypes()
    assert info.dtypes() == ref.dtypes()
    for kind in ("signed integer", "unsigned integer", "integral", "real floating",
                 "complex floating", "numeric", ("integral", "real floating")):
        assert info.dtypes(kind=kind) == ref.dtypes(kind=kind), kind
        assert all(isinstance(d, np.dtype) for d in info.dtypes(kind=kind).values())
    # NumPy 2.4 gives the Python type bool here; gpuarr the dtype
    assert info.dtypes(kind="bool") == {"bool": np.dtype(bool)}
    assert list(info.dtypes(kind=("bool", "complex floating"))) == ["bool", "complex64",
                                                                     "complex128"]


@pytest.mark.parametrize("kind", ["float", "integer", 3, ("bool", "floats")])
def test_info_dtypes_refuses_unknown_kinds(kind):
    with pytest.raises(ValueError, match="unsupported kind"):
        gp.__array_namespace_info__().dtypes(kind=kind)


def test_info_devices():
    info = gp.__array_namespace_info__()
    assert info.default_device() == gp.cuda.Device()
    devices = info.devices()
    assert all(isinstance(d, gp.cuda.Device) for d in devices)
    if gp.is_available():
        assert devices == [gp.cuda.Device(i) for i in range(gp.cuda.runtime.getDeviceCount())]
        assert info.default_device() in devices
    else:
        assert devices == []
    with pytest.raises(TypeError, match="device must be"):
        info.dtypes(device="cpu")
    with pytest.raises(TypeError, match="device must be"):
        info.default_dtypes(device="cuda:0")


def test_device_attribute_and_to_device_same_device():
    x = fake_array((2, 3))
    assert isinstance(x.device, gp.cuda.Device) and x.device == gp.cuda.Device()
    assert hash(x.device) == hash(x[0].device)
    assert x.to_device(x.device) is x
    assert x.to_device(gp.__array_namespace_info__().default_device()) is x
    for bad in ("cpu", None, 1.0):
        with pytest.raises(TypeError, match="device"):
            x.to_device(bad)
    with pytest.raises(TypeError, match="stream"):
        x.to_device(x.device, stream=0)


@pytest.mark.parametrize("shape", [(2, 3), (4, 2, 3), (0, 3), (2, 0, 5), (1, 1), (3, 1, 1, 2)])
def test_mT_swaps_the_last_two_axes(shape):
    x = fake_array(shape)
    ref = np.empty(shape)
    for t in (x.mT, gp.matrix_transpose(x)):
        assert t.shape == ref.mT.shape
        assert t.strides == (x.strides[:-2] + x.strides[:-3:-1])
        assert t.data.ptr == x.data.ptr and not t.flags.owndata


@pytest.mark.parametrize("shape", [(), (3,)])
def test_mT_needs_two_dimensions(shape):
    x = fake_array(shape)
    with pytest.raises(ValueError, match="ndim < 2"):
        x.mT  # noqa: B018
    with pytest.raises(ValueError, match="at least 2-dimensional"):
        gp.matrix_transpose(x)


def test_views_of_the_standard_need_no_device():
    x = fake_array((2, 3, 4))
    assert gp.permute_dims(x, (2, 0, 1)).shape == (4, 2, 3)
    assert [u.shape for u in gp.unstack(x)] == [(3, 4)] * 2
    assert [u.shape for u in gp.unstack(x, axis=-1)] == [(2, 3)] * 4
    assert gp.unstack(fake_array((0, 3))) == ()
    with pytest.raises(ValueError, match="at least 1-d"):
        gp.unstack(fake_array(()))
    with pytest.raises(AxisError):
        gp.unstack(x, axis=3)
    a, b = gp.broadcast_arrays(x, fake_array((3, 1)))
    assert a is x and b.shape == (2, 3, 4) and b.strides == (0, 8, 0)
    assert gp.broadcast_arrays() == ()
    assert gp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    with pytest.raises(ValueError):
        gp.broadcast_arrays(x, fake_array((3,)))
    for copy in (False, None):
        v = gp.reshape(x, (6, 4), copy=copy)
        assert v.shape == (6, 4) and v.data.ptr == x.data.ptr and not v.flags.owndata
    assert gp.expand_dims(x, (0, -1)).shape == (1, 2, 3, 4, 1)


def test_dtype_functions_take_device_arrays():
    x = fake_array((2,), np.float32)
    i = fake_array((2,), np.int16)
    assert gp.result_type(x, i) == np.result_type(np.float32, np.int16)
    assert gp.result_type(i, 1.0) == np.result_type(np.int16, 1.0)
    assert gp.result_type(x, np.float64, 1j) == np.complex128
    assert gp.can_cast(x, np.float64) and not gp.can_cast(x, np.int32)
    assert gp.can_cast(np.int8, gp.int16) and not gp.can_cast(i, np.uint8)
    assert gp.finfo(x).bits == 32 and gp.finfo(gp.float64).eps == np.finfo(np.float64).eps
    assert gp.iinfo(i).max == 32767 and gp.iinfo(gp.uint8).min == 0
    # NumPy's own functions on device arrays go through __array_function__
    assert np.result_type(x, i) == np.float32
    assert np.can_cast(x, np.float64)


@pytest.mark.parametrize("kind", ["bool", "signed integer", "unsigned integer", "integral",
                                  "real floating", "complex floating", "numeric"])
def test_isdtype_is_numpys(kind):
    for name in gp.__array_namespace_info__().dtypes():
        dtype = getattr(gp, name)
        assert gp.isdtype(dtype, kind) == np.isdtype(np.dtype(name), kind)
    assert gp.isdtype(gp.float32, (kind, gp.float32))
    with pytest.raises(ValueError):
        gp.isdtype(gp.float32, "floating")


def test_astype_refuses_host_arrays():
    with pytest.raises(TypeError, match="gpuarr.ndarray"):
        gp.astype(np.ones(3), np.float32)
    x = fake_array((3,), np.float32)
    assert gp.astype(x, np.float32, copy=False) is x
    assert gp.astype(x, gp.float32, copy=False, device=x.device) is x


def test_creation_device_argument_is_checked():
    for f in (lambda d: gp.zeros(3, device=d), lambda d: gp.empty((2,), device=d),
              lambda d: gp.full(2, 1.0, device=d), lambda d: gp.asarray([1], device=d),
              lambda d: gp.arange(3, device=d), lambda d: gp.ones(1, device=d)):
        with pytest.raises(TypeError):
            f("cpu")


# ================================================================== GPU


DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint16, np.int32, np.int64, np.uint64,
                                 np.float32, np.float64, np.complex64)]
SHAPES = [(), (0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]


def dev(a):
    return gp.asarray(a)


def small_values(rng, shape, dtype):
    """Values 0, 1 and 2 (True/False for bool): sums and products that fit."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return random_array(rng, shape, dtype)
    return np.asarray(rng.integers(0, 3, size=shape)).astype(dtype)


@pytest.mark.gpu
def test_namespace_of_a_device_array_runs_array_api_code(rng):
    """A function written against the standard alone gives NumPy's
    answer with gpuarr's namespace."""
    def standardize(x):
        xp = x.__array_namespace__()
        mean = xp.mean(x, axis=0, keepdims=True)
        std = xp.std(x, axis=0, correction=1, keepdims=True)
        z = (x - mean) / std
        top = xp.argsort(-z, axis=0, stable=True)[0, ...]
        total = xp.cumulative_sum(xp.abs(z), axis=0, include_initial=True)
        return xp.concat([xp.matrix_transpose(z), total.mT], axis=1), top

    host = rng.standard_normal((6, 4))
    z, top = standardize(dev(host))
    z_ref, top_ref = standardize(host)
    assert_close(z.get(), z_ref, ulps=16)
    assert_same(top.get(), top_ref)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["acos", "asin", "atan", "acosh", "asinh", "atanh"])
def test_inverse_trig_names(name, rng):
    x = rng.uniform(1.1, 3, 50) if name == "acosh" else rng.uniform(-0.9, 0.9, 50)
    assert_close(getattr(gp, name)(dev(x)).get(), getattr(np, name)(x))
    assert_close(gp.atan2(dev(x), dev(x[::-1])).get(), np.atan2(x, x[::-1]))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint64])
def test_bitwise_shift_names(dtype, rng):
    x = random_array(rng, 20, dtype)
    s = rng.integers(0, np.dtype(dtype).itemsize * 8, 20).astype(dtype)
    assert_same(gp.bitwise_left_shift(dev(x), dev(s)).get(), np.bitwise_left_shift(x, s))
    assert_same(gp.bitwise_right_shift(dev(x), dev(s)).get(), np.bitwise_right_shift(x, s))
    assert_same(gp.bitwise_invert(dev(x)).get(), np.bitwise_invert(x))


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(2, 3), (4, 2, 3), (0, 3), (2, 0, 5), (1, 7)])
def test_matrix_transpose_values(shape, rng):
    host = random_array(rng, shape, np.int32)
    x = dev(host)
    assert_same(x.mT.get(), host.mT)
    assert_same(gp.matrix_transpose(x).get(), np.matrix_transpose(host))
    assert_same(gp.permute_dims(x, tuple(range(x.ndim))[::-1]).get(),
                np.permute_dims(host, tuple(range(x.ndim))[::-1]))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)])
def test_unstack_and_concat(dtype, shape, rng):
    host = random_array(rng, shape, dtype)
    for axis in range(-len(shape), len(shape)):
        got = gp.unstack(dev(host), axis=axis)
        want = np.unstack(host, axis=axis)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g.get(), w)
        if want and want[0].ndim:  # the slices of a 1-d array are 0-d: nothing to concatenate
            assert_same(gp.concat(got, axis=0).get(), np.concat(want, axis=0))
        elif want:
            with pytest.raises(ValueError):
                gp.concat(got, axis=0)
        assert_same(gp.concat([dev(host), dev(host)], axis=axis).get(),
                    np.concat([host, host], axis=axis))


@pytest.mark.gpu
@pytest.mark.parametrize("shapes", [[(3, 1), (1, 4)], [(2, 3), (3,), ()], [(0, 1), (1, 5)],
                                    [(4,)], [(2, 1, 3), (5, 1), (1,)]])
def test_broadcast_arrays_values(shapes, rng):
    hosts = [random_array(rng, s, np.float32) for s in shapes]
    got = gp.broadcast_arrays(*map(dev, hosts))
    want = np.broadcast_arrays(*hosts)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g.get(), w)


ROLLS = [(3, None), (-2, None), (17, None), (0, None), (1, 0), (-1, -1), (5, 1),
         ((1, 2), (0, 1)), ((2, -1), (1, 1)), ((1, 1, 1), (0, 0, -1)), (2, (0, 1))]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shift, axis", ROLLS)
def test_roll(dtype, shift, axis, rng):
    for shape in [(3, 4), (2, 5, 3), (0, 4), (4, 1)]:
        host = random_array(rng, shape, dtype)
        got = gp.roll(dev(host), shift, axis=axis)
        assert_same(got.get(), np.roll(host, shift, axis=axis))
    for host in (random_array(rng, (), dtype), random_array(rng, (7,), dtype)):
        if axis is None:
            assert_same(gp.roll(dev(host), shift).get(), np.roll(host, shift))


@pytest.mark.gpu
def test_roll_errors():
    x = gp.arange(6).reshape(2, 3)
    with pytest.raises(AxisError):
        gp.roll(x, 1, axis=2)
    with pytest.raises(ValueError):
        gp.roll(x, (1, 2), axis=(0, 1, 1))
    r = gp.roll(x, 1, axis=0)
    assert r.flags.owndata and r.data.ptr != x.data.ptr


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reps", [2, 0, (2, 1), (1, 3), (2, 2, 2), (3, 0), (1,), [1, 1, 1, 2]])
def test_tile(dtype, reps, rng):
    for shape in SHAPES:
        host = random_array(rng, shape, dtype)
        x = dev(host)
        got = gp.tile(x, reps)
        assert_same(got.get(), np.tile(host, reps))
        assert got.flags.owndata and (got.size == 0 or got.data.ptr != x.data.ptr)


@pytest.mark.gpu
def test_tile_errors():
    with pytest.raises(ValueError, match="negative"):
        gp.tile(gp.ones(3), -1)
    with pytest.raises(TypeError):
        gp.tile(gp.ones(3), 1.5)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat(dtype, rng):
    host = random_array(rng, (3, 4), dtype)
    x = dev(host)
    cases = [(2, None), (0, None), (1, 0), (3, 1), (3, -1), ([1, 0, 2], 0), ([2], 1),
             ([0, 1, 2, 3], 1), (np.int64(2), 0)]
    for repeats, axis in cases:
        want = np.repeat(host, repeats, axis=axis)
        assert_same(gp.repeat(x, repeats, axis=axis).get(), want)
        if not np.isscalar(repeats):
            for rdt in (np.int64, np.int32, np.uint8):
                got = gp.repeat(x, dev(np.asarray(repeats, rdt)), axis=axis)
                assert_same(got.get(), want)
    for shape in [(), (0,), (5,), (2, 0, 3)]:
        h = random_array(rng, shape, dtype)
        assert_same(gp.repeat(dev(h), 2).get(), np.repeat(h, 2))
    h = random_array(rng, (2, 0, 3), dtype)
    assert_same(gp.repeat(dev(h), dev(np.array([], np.int64)), axis=1).get(),
                np.repeat(h, np.array([], np.int64), axis=1))
    assert_same(gp.repeat(dev(h), [1, 2, 0], axis=2).get(), np.repeat(h, [1, 2, 0], axis=2))
    assert_same(gp.repeat(dev(h), dev(np.array(3)), axis=2).get(), np.repeat(h, 3, axis=2))


@pytest.mark.gpu
def test_repeat_errors():
    x = gp.arange(3)
    with pytest.raises(ValueError, match="negative"):
        gp.repeat(x, -1)
    with pytest.raises(ValueError, match="negative"):
        gp.repeat(x, [1, -1, 2])
    with pytest.raises(ValueError, match="negative"):
        gp.repeat(x, gp.asarray([1, -1, 2]))
    with pytest.raises(ValueError, match="broadcast"):
        gp.repeat(x, [1, 2])
    with pytest.raises(TypeError, match="safe"):
        gp.repeat(x, gp.asarray([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="safe"):
        gp.repeat(x, gp.asarray([1, 2, 3], dtype=np.uint64))
    with pytest.raises(TypeError, match="host memory"):
        gp.repeat(x, np.array([1, 2, 3]))
    with pytest.raises(AxisError):
        gp.repeat(x, 2, axis=1)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 5])
def test_tril_triu(dtype, k, rng):
    for shape in [(3, 3), (2, 4), (4, 2), (2, 3, 4), (0, 3), (3, 0), (2, 0, 0), (5,)]:
        host = random_array(rng, shape, dtype)
        assert_same(gp.tril(dev(host), k=k).get(), np.tril(host, k=k))
        assert_same(gp.triu(dev(host), k).get(), np.triu(host, k))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [float, np.int32, bool, np.complex64])
def test_tri(dtype):
    for args in [(3,), (2, 4), (4, 2), (0,), (3, 0)]:
        for k in (-2, 0, 1, 4):
            assert_same(gp.tri(*args, k=k, dtype=dtype).get(), np.tri(*args, k=k, dtype=dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_take_along_axis(dtype, rng):
    for shape in [(5,), (3, 4), (2, 3, 4), (0, 3), (3, 0)]:
        host = random_array(rng, shape, dtype)
        for axis in range(-len(shape), len(shape)):
            n = shape[axis]
            for m in (n, 2, 0):
                if n == 0 and m:
                    continue
                ishape = list(shape)
                ishape[axis] = m
                idx = rng.integers(-n, n, size=ishape) if n else np.zeros(ishape, np.int64)
                want = np.take_along_axis(host, idx, axis=axis)
                assert_same(gp.take_along_axis(dev(host), dev(idx), axis=axis).get(), want)
            if dtype.kind not in "bc":
                order = np.argsort(host, axis=axis, stable=True)
                got = gp.take_along_axis(dev(host), gp.argsort(dev(host), axis=axis), axis=axis)
                assert_same(got.get(), np.take_along_axis(host, order, axis=axis))
    host = random_array(rng, (3, 4), dtype)
    idx = rng.integers(0, 12, size=5)
    assert_same(gp.take_along_axis(dev(host), dev(idx), axis=None).get(),
                np.take_along_axis(host, idx, axis=None))
    # broadcasting of the other axes, as NumPy's fancy index does
    idx = rng.integers(0, 4, size=(1, 6))
    assert_same(gp.take_along_axis(dev(host), dev(idx), axis=1).get(),
                np.take_along_axis(host, idx, axis=1))


@pytest.mark.gpu
def test_take_along_axis_errors():
    x = gp.ones((2, 3))
    with pytest.raises(ValueError, match="same number of dimensions"):
        gp.take_along_axis(x, gp.zeros(2, np.int64), axis=1)
    with pytest.raises(IndexError, match="integer array"):
        gp.take_along_axis(x, gp.zeros((2, 1)), axis=1)
    with pytest.raises(ValueError, match="single dimension"):
        gp.take_along_axis(x, gp.zeros((2, 2), np.int64), axis=None)
    with pytest.raises(IndexError):
        gp.take_along_axis(x, gp.full((2, 1), 3, np.int64), axis=1)
    with pytest.raises(AxisError):
        gp.take_along_axis(x, gp.zeros((2, 1), np.int64), axis=2)


def _unique_data(rng, dtype, shape):
    host = random_array(rng, shape, dtype)
    if host.size and dtype.kind != "b":
        host.flat[::2] = host.flat[0]          # repeats
    if host.size > 3 and dtype.kind == "f":
        host.flat[1] = host.flat[3] = np.nan   # NaNs, distinct in the standard
    return host


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.kind != "c"])
@pytest.mark.parametrize("shape", SHAPES + [(4, 5)])
def test_unique_functions(dtype, shape, rng):
    host = _unique_data(rng, dtype, shape)
    x = dev(host)
    ref = np.unique(host, return_index=True, return_inverse=True, return_counts=True,
                    equal_nan=False)
    allr = gp.unique_all(x)
    assert type(allr).__name__ == "UniqueAllResult"
    assert allr._fields == ("values", "indices", "inverse_indices", "counts")
    for got, want in zip(allr, ref):
        assert_same(got.get(), want)
    counts = gp.unique_counts(x)
    assert counts._fields == ("values", "counts")
    assert_same(counts.values.get(), ref[0])
    assert_same(counts.counts.get(), ref[3])
    inverse = gp.unique_inverse(x)
    assert inverse._fields == ("values", "inverse_indices")
    assert_same(inverse.values.get(), ref[0])
    assert_same(inverse.inverse_indices.get(), ref[2])
    assert inverse.inverse_indices.shape == host.shape
    assert_same(gp.unique_values(x).get(), ref[0])
    # NumPy 2.3+ leaves unique_values unsorted: the same set
    assert_same(np.sort(gp.unique_values(x).get()), np.sort(np.unique_values(host)))
    if dtype.kind == "f" and host.size > 3:
        assert int(gp.isnan(allr.values).sum()) == 2


@pytest.mark.gpu
@pytest.mark.parametrize("func", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cumulative(func, dtype, rng):
    gfunc, nfunc = getattr(gp, func), getattr(np, func)
    for shape in [(), (0,), (1,), (7,)]:
        host = small_values(rng, shape, dtype)
        for initial in (False, True):
            want = nfunc(host, include_initial=initial)
            assert_close(gfunc(dev(host), include_initial=initial).get(), want)
    for shape in [(3, 4), (2, 0, 3), (2, 3, 4)]:
        host = small_values(rng, shape, dtype)
        for axis in range(-len(shape), len(shape)):
            for initial in (False, True):
                want = nfunc(host, axis=axis, include_initial=initial)
                got = gfunc(dev(host), axis=axis, include_initial=initial)
                assert_close(got.get(), want)
        for out_dtype in (np.float64, np.int64) if dtype.kind != "c" else (np.complex128,):
            want = nfunc(host, axis=0, dtype=out_dtype, include_initial=True)
            assert_close(gfunc(dev(host), axis=0, dtype=out_dtype,
                               include_initial=True).get(), want)


@pytest.mark.gpu
def test_cumulative_out_and_errors(rng):
    host = rng.integers(0, 5, (3, 4))
    out = gp.zeros((4, 4), np.int64)
    r = gp.cumulative_sum(dev(host), axis=0, include_initial=True, out=out)
    assert r is out
    assert_same(out.get(), np.cumulative_sum(host, axis=0, include_initial=True))
    with pytest.raises(ValueError, match="axis"):
        gp.cumulative_sum(dev(host))
    with pytest.raises(AxisError):
        gp.cumulative_prod(dev(host), axis=2, include_initial=True)
    with pytest.raises(ValueError, match="shape"):
        gp.cumulative_sum(dev(host), axis=1, include_initial=True, out=gp.zeros((3, 4)))


def _descending_order(host, axis):
    """NumPy reference of a stable descending argsort (NaN first): sort by
    descending rank, ties by position."""
    moved = np.moveaxis(host, axis, -1)
    if moved.size == 0:
        return np.zeros(host.shape, np.int64)
    rank = np.unique(moved, return_inverse=True)[1].reshape(moved.shape)
    pos = np.broadcast_to(np.arange(moved.shape[-1]), moved.shape)
    flat_rank, flat_pos = rank.reshape(-1, moved.shape[-1]), pos.reshape(-1, moved.shape[-1])
    order = np.array([np.lexsort((p, -r)) for r, p in zip(flat_rank, flat_pos)],
                     dtype=np.int64).reshape(moved.shape)
    return np.moveaxis(order, -1, axis)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.kind != "c"])
def test_sort_descending(dtype, rng):
    for shape in [(0,), (9,), (4, 6), (2, 0, 3), (3, 5, 4)]:
        host = random_array(rng, shape, dtype)
        if host.size:
            host.flat[::3] = host.flat[0]      # ties, to see stability
        if dtype.kind == "f" and host.size > 4:
            host.flat[4] = np.nan
        for axis in range(-len(shape), len(shape)):
            order = _descending_order(host, axis)
            got = gp.argsort(dev(host), axis=axis, descending=True, stable=True)
            assert_same(got.get(), order)
            assert_same(gp.sort(dev(host), axis=axis, descending=True).get(),
                        np.take_along_axis(host, order, axis=axis))
            assert_same(gp.sort(dev(host), axis=axis, descending=False).get(),
                        np.sort(host, axis=axis))
        if host.size:
            flat = host.reshape(-1)
            order = _descending_order(flat, 0)
            assert_same(gp.argsort(dev(host), axis=None, descending=True).get(), order)
            assert_same(gp.sort(dev(host), axis=None, descending=True).get(), flat[order])
    zero_d = dev(np.array(3, dtype))
    assert_same(gp.argsort(zero_d, axis=None, descending=True).get(),
                np.argsort(np.array(3, dtype), axis=None))


@pytest.mark.gpu
def test_clip_spellings(rng):
    host = rng.standard_normal(20)
    x = dev(host)
    want = np.clip(host, -0.5, 0.5)
    for got in (gp.clip(x, -0.5, 0.5), gp.clip(x, min=-0.5, max=0.5),
                gp.clip(x, a_min=-0.5, a_max=0.5), gp.clip(x, -0.5, max=0.5)):
        assert_same(got.get(), want)
    assert_same(gp.clip(x, max=0.1).get(), np.clip(host, max=0.1))
    assert_same(gp.clip(x, a_min=0.1).get(), np.clip(host, 0.1, None))
    c = gp.clip(x)
    assert_same(c.get(), np.clip(host))
    assert c.data.ptr != x.data.ptr
    out = gp.empty(20)
    assert gp.clip(x, None, None, out) is out
    assert_same(out.get(), host)
    with pytest.raises(ValueError, match="forbidden"):
        gp.clip(x, a_min=0, max=1)
    assert_same(gp.clip(dev(np.arange(10, dtype=np.int8)), 2, 5).get(),
                np.clip(np.arange(10, dtype=np.int8), 2, 5))


@pytest.mark.gpu
def test_reshape_copy(rng):
    host = rng.standard_normal((4, 6))
    x = dev(host)
    v = gp.reshape(x, (6, 4), copy=False)
    assert v.base is x
    c = gp.reshape(x, (6, 4), copy=True)
    assert c.flags.owndata and c.data.ptr != x.data.ptr
    assert_same(c.get(), np.reshape(host, (6, 4), copy=True))
    with pytest.raises(ValueError, match="copy"):
        gp.reshape(x.T, 24, copy=False)
    assert_same(gp.reshape(x.T, 24, copy=None).get(), np.reshape(host.T, 24))
    assert_same(gp.reshape(x.T, (2, 12), copy=True).get(), np.reshape(host.T, (2, 12)))


@pytest.mark.gpu
@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", [np.bool_, np.int16, np.float32, np.complex128])
def test_astype_function(src, dst, rng):
    host = small_values(rng, (3, 4), src)
    x = dev(host)
    want = np.astype(host, dst)
    for kwargs in ({}, {"copy": False}, {"device": x.device}, {"copy": True, "device": 0}):
        got = gp.astype(x, dst, **kwargs)
        assert_same(got.get(), want)
        if np.dtype(dst) == src and kwargs.get("copy", True) is False:
            assert got is x
        elif kwargs.get("copy", True):
            assert got is not x and got.data.ptr != x.data.ptr


@pytest.mark.gpu
def test_creation_on_a_device():
    d = gp.cuda.Device()
    for a in (gp.zeros(3, device=d), gp.ones((2,), np.int8, device=d),
              gp.empty(4, device=d.id), gp.full((2, 2), 7, device=d),
              gp.asarray([1, 2], device=d), gp.arange(5, device=d),
              gp.linspace(0, 1, 5, device=d), gp.eye(3, k=1, device=d),
              gp.zeros_like(gp.ones(2), device=d), gp.ones_like(gp.ones(2), device=d),
              gp.empty_like(gp.ones(2), device=d), gp.full_like(gp.ones(2), 3, device=d),
              gp.tri(3, device=d)):
        assert a.device == d
    assert_same(gp.full_like(gp.ones((2, 3)), 2.5, device=d).get(), np.full((2, 3), 2.5))
    assert_same(gp.arange(2, 11, 3, device=d).get(), np.arange(2, 11, 3))
    assert_same(gp.eye(3, 4, k=-1, dtype=np.int32, device=d).get(),
                np.eye(3, 4, k=-1, dtype=np.int32))
    assert_same(gp.linspace(0, 1, 7, device=d).get(), np.linspace(0, 1, 7))


@pytest.mark.gpu
def test_to_device_and_dlpack(rng):
    host = rng.standard_normal((3, 4))
    x = dev(host)
    assert x.to_device(x.device) is x
    with gp.cuda.Stream(non_blocking=True) as s:
        pass
    assert x.to_device(x.device, stream=s) is x
    view = gp.from_dlpack(x)
    assert view.data.ptr == x.data.ptr
    assert gp.from_dlpack(x, copy=False).data.ptr == x.data.ptr
    copied = gp.from_dlpack(x, copy=True)
    assert copied.data.ptr != x.data.ptr
    assert_same(copied.get(), host)
    assert gp.from_dlpack(x, device=x.device).data.ptr == x.data.ptr


@pytest.mark.gpu(devices=2)
def test_device_argument_on_a_second_gpu(rng):
    host = rng.standard_normal(10)
    one = gp.cuda.Device(1)
    for a in (gp.zeros(3, device=one), gp.full(4, 2.0, device=one),
              gp.asarray(host, device=one), gp.arange(4, device=one)):
        assert a.device == one
    assert gp.cuda.Device() == gp.cuda.Device(0)
    x = dev(host)
    y = x.to_device(one)
    assert y.device == one and x.device == gp.cuda.Device(0)
    assert_same(y.get(), host)
    z = gp.astype(x, np.float32, device=one)
    assert z.device == one
    assert_same(z.get(), host.astype(np.float32))
    with pytest.raises(ValueError):
        gp.from_dlpack(x, device=one, copy=False)


@pytest.mark.gpu
def test_numpy_calls_reach_the_new_functions(rng):
    host = rng.standard_normal((3, 4))
    x = dev(host)
    for name, args in (("tril", ()), ("roll", (2,)), ("tile", ((2, 1),)), ("repeat", (2,)),
                       ("unstack", ()), ("matrix_transpose", ()), ("concat", ())):
        a = [x, x] if name == "concat" else x
        h = [host, host] if name == "concat" else host
        got, want = getattr(np, name)(a, *args), getattr(np, name)(h, *args)
        if isinstance(want, tuple):
            for g, w in zip(got, want):
                assert_same(g.get(), w)
        else:
            assert isinstance(got, gp.ndarray)
            assert_same(got.get(), want)
