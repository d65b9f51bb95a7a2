"""NumPy protocols and zero-copy exchange with other GPU libraries."""
import numpy as np
import pytest

import gpuarr as gp



def test_get_array_module_without_gpu():
    assert gp.get_array_module(np.ones(2), 3) is np


# Host arrays given to gpuarr's own functions: one refusal, one wording, whether
# the C core (elementwise, where=, reductions, scans, convolution) or the
# Python layer (ufunc methods, creation, sorting) refuses.  No device needed.
@pytest.mark.parametrize("call, what, fname", [
    (lambda h: gp.sin(h), "argument 1", "sin"),
    (lambda h: gp.add(1, 2, where=h > 0), "where=", "add"),
    (lambda h: gp.sum(h), "the argument", "sum"),
    (lambda h: gp.cumsum(h), "the argument", "cumsum"),
    (lambda h: gp.convolve(h, [1.0]), "a", "convolve"),
    (lambda h: gp.add.outer(h, 1), "the argument", "add.outer"),
    (lambda h: gp.tril(h), "m", None),
    (lambda h: gp.sort(h), "a", None),
])
def test_host_array_refusal_has_one_wording(call, what, fname):
    from gpuarr import _core
    want = _core._host_array_error(what, fname)
    assert isinstance(want, TypeError)
    assert str(want) == ((fname + ": ") if fname else "") + (
        f"{what} is a numpy.ndarray, which lives in host memory; move it to the device with "
        "gpuarr.asarray() first")
    with pytest.raises(TypeError) as info:
        call(np.ones((3, 3)))
    assert str(info.value) == str(want)


def test_host_output_refusal_wording():
    from gpuarr import _core
    assert str(_core._host_array_error("output", "label", output=True)) == (
        "label: output is a numpy.ndarray, which lives in host memory; pass a gpuarr array "
        "(gpuarr.empty(shape, dtype)) or a dtype")


@pytest.mark.gpu
@pytest.mark.parametrize("call, fname", [
    (lambda x, o: gp.scipy.ndimage.label(x, output=o), "label"),        # the C path
    (lambda x, o: gp.scipy.ndimage.label(x[:0], output=o), "label"),    # empty: Python's
    (lambda x, o: gp.scipy.ndimage.gaussian_filter(x, 1.0, output=o), None),
])
def test_host_output_refusal_has_one_wording(call, fname):
    from gpuarr import _core
    x = gp.ones((4, 4), dtype=np.float64)
    with pytest.raises(TypeError) as info:
        call(x, np.empty((4, 4)))
    assert str(info.value) == str(_core._host_array_error("output", fname, output=True))


def test_protocol_methods_exist():
    for name in ("__array_ufunc__", "__array_function__", "__cuda_array_interface__", "__array__"):
        assert hasattr(gp.ndarray, name)


@pytest.mark.gpu
def test_numpy_ufunc_runs_on_device(rng):
    h = rng.standard_normal(100)
    d = gp.asarray(h)
    r = np.sin(d)
    assert isinstance(r, gp.ndarray)
    np.testing.assert_allclose(r.get(), np.sin(h), rtol=1e-12)
    r = np.add(d, h)  # the host operand moves to the device
    assert isinstance(r, gp.ndarray)
    np.testing.assert_allclose(r.get(), 2 * h)
    out = gp.empty(100)
    assert np.multiply(d, 2, out=out) is out
    np.testing.assert_allclose(out.get(), 2 * h)
    o = np.multiply.outer(gp.arange(3), gp.arange(4))
    np.testing.assert_array_equal(o.get(), np.multiply.outer(np.arange(3), np.arange(4)))


@pytest.mark.gpu
def test_numpy_functions_dispatch(rng):
    h = rng.standard_normal((8, 6))
    d = gp.asarray(h)
    for f, args in [(np.where, (d > 0, d, 0.0)), (np.fliplr, (d,)), (np.ravel, (d,)),
                    (np.concatenate, ([d, d],)), (np.transpose, (d,)),
                    (np.reshape, (d, (6, 8)))]:
        r = f(*args)
        assert isinstance(r, gp.ndarray), f
    np.testing.assert_array_equal(np.fliplr(d).get(), np.fliplr(h))
    assert bool(np.allclose(d, h)) is True  # host operand moved to the device
    r = np.allclose(d, h)
    assert isinstance(r, gp.ndarray) and r.ndim == 0


@pytest.mark.gpu
def test_missing_numpy_function_raises_typeerror():
    with pytest.raises(TypeError, match="gpuarr does not implement"):
        np.polyfit(gp.arange(3.0), gp.ones(3), 1)


@pytest.mark.gpu
def test_implicit_conversion_refused():
    d = gp.ones(3)
    with pytest.raises(TypeError, match=r"Implicit conversion to a NumPy array is not allowed"):
        np.asarray(d)
    scipy_signal = pytest.importorskip("scipy.signal")
    with pytest.raises(TypeError, match=r"\.get\(\)"):
        scipy_signal.convolve2d(gp.ones((4, 4)), gp.ones((2, 2)))


@pytest.mark.gpu
def test_cuda_array_interface_export():
    d = gp.arange(12, dtype=np.float32).reshape(3, 4)
    cai = d.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (3, 4) and cai["typestr"] == "<f4"
    assert cai["data"][0] == d.data.ptr and cai["strides"] is None
    t = d.T.__cuda_array_interface__
    assert t["strides"] == (4, 16)


@pytest.mark.gpu
def test_cuda_array_interface_import_keeps_owner():
    class Owner:
        def __init__(self, arr):
            self.arr = arr
            self.__cuda_array_interface__ = arr.__cuda_array_interface__

    src = gp.arange(10, dtype=np.int32)
    view = gp.asarray(Owner(src))
    assert view.data.ptr == src.data.ptr and view.base is not None
    view[0] = 42
    assert int(src[0]) == 42


@pytest.mark.gpu
def test_cupy_zero_copy():
    cp = pytest.importorskip("cupy")
    d = gp.arange(6, dtype=np.float64)
    c = cp.asarray(d)
    assert c.data.ptr == d.data.ptr
    c[1] = 100
    assert float(d[1]) == 100
    back = gp.asarray(cp.arange(5, dtype=cp.float32))
    np.testing.assert_array_equal(back.get(), np.arange(5, dtype=np.float32))


@pytest.mark.gpu
def test_torch_zero_copy():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    d = gp.arange(6, dtype=np.float32)
    t = torch.as_tensor(d, device="cuda")
    assert t.data_ptr() == d.data.ptr
    t[2] = -1
    assert float(d[2]) == -1
    back = gp.asarray(torch.arange(4, device="cuda", dtype=torch.int64))
    np.testing.assert_array_equal(back.get(), np.arange(4))


@pytest.mark.gpu
def test_numba_kernel_on_gpuarr_arrays(monkeypatch):
    if not hasattr(np, "row_stack"):
        # numba-cuda 0.30 registers np.row_stack, which NumPy 2.5 removed,
        # when it compiles its first kernel (a peer bug, not gpuarr's); the
        # lent GPU machine has exactly that pair.  NumPy's own alias for it:
        monkeypatch.setattr(np, "row_stack", np.vstack, raising=False)
    numba_cuda = pytest.importorskip("numba.cuda")

    def double(x):
        i = numba_cuda.grid(1)
        if i < x.size:
            x[i] *= 2

    # Numba gets no array of its own here: on the lent GPU (numba-cuda 0.30)
    # its to_device/device_array memory, and the scalar that a setitem
    # uploads, were never freed before exit (compute-sanitizer's leak check,
    # 16 + 8 B), even after gc and deallocations.clear()
    probe = numba_cuda.as_cuda_array(gp.ones(4, dtype=np.float32))
    try:  # numba's own toolchain first: its compiler and launch
        kernel = numba_cuda.jit(double)
        kernel[1, 4](probe)
    except Exception as exc:
        pytest.skip(f"numba.cuda does not work on this machine by itself: {type(exc).__name__}: {exc}")
    d = gp.arange(64, dtype=np.float32)
    view = numba_cuda.as_cuda_array(d)              # through __cuda_array_interface__
    assert view.device_ctypes_pointer.value == d.data.ptr   # no copy
    kernel[1, 64](d)
    numba_cuda.synchronize()
    np.testing.assert_array_equal(d.get(), 2 * np.arange(64, dtype=np.float32))
    view[3:4].copy_to_device(np.array([-1], dtype=np.float32))   # numba's writes show in gpuarr's
    assert float(d[3]) == -1.0
    del d                                           # the view keeps the memory alive:
    reuse = gp.full(64, 7, dtype=np.float32)        # the pool must not hand it out again
    np.testing.assert_array_equal(view.copy_to_host()[:4], [0, 2, 4, -1])
    assert reuse.data.ptr != view.device_ctypes_pointer.value


@pytest.mark.gpu
def test_lesson_softplus_agnostic(rng):
    def softplus(x):
        xp = gp.get_array_module(x)
        return xp.maximum(0, x) + xp.log1p(xp.exp(-abs(x)))

    h = rng.standard_normal(1000)
    np.testing.assert_allclose(softplus(gp.asarray(h)).get(), softplus(h), rtol=1e-12)


def test_dlpack_methods_exist():
    assert hasattr(gp.ndarray, "__dlpack__") and hasattr(gp.ndarray, "__dlpack_device__")
    assert callable(gp.from_dlpack)


@pytest.mark.gpu
def test_dlpack_round_trip_with_torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    d = gp.arange(12, dtype=np.float32).reshape(3, 4)
    assert d.__dlpack_device__() == (2, 0)
    t = torch.from_dlpack(d)
    assert t.data_ptr() == d.data.ptr and tuple(t.shape) == (3, 4)
    t[0, 0] = 7
    assert float(d[0, 0]) == 7
    tt = torch.arange(10, device="cuda", dtype=torch.int32)[::2]
    back = gp.from_dlpack(tt)
    assert back.data.ptr == tt.data_ptr() and back.strides == (8,)
    np.testing.assert_array_equal(back.get(), np.arange(0, 10, 2, dtype=np.int32))
    del tt
    np.testing.assert_array_equal(back.get(), np.arange(0, 10, 2, dtype=np.int32))  # kept alive


@pytest.mark.gpu
def test_dlpack_with_cupy_and_versioned_capsule():
    cp = pytest.importorskip("cupy")
    d = gp.linspace(0, 1, 5)
    c = cp.from_dlpack(d)
    assert c.data.ptr == d.data.ptr
    back = gp.from_dlpack(cp.arange(4, dtype=cp.float64))
    np.testing.assert_array_equal(back.get(), np.arange(4.0))
    cap = d.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    with pytest.raises(BufferError, match="copy=False"):
        d.__dlpack__(dl_device=(1, 0), copy=False)
    with pytest.raises(BufferError, match="without a copy"):
        d.__dlpack__(dl_device=(2, 7))
    # dl_device=CPU: the standard lets the producer copy to the host
    assert "dltensor" in repr(d.__dlpack__(dl_device=(1, 0)))
    h = np.from_dlpack(d, device="cpu")
    np.testing.assert_array_equal(h, np.linspace(0, 1, 5))


@pytest.mark.gpu
def test_from_dlpack_of_host_data_refused():
    with pytest.raises(TypeError, match="gpuarr.asarray"):
        gp.from_dlpack(np.arange(3))


@pytest.mark.gpu
def test_buffer_protocol_device_memory_refused():
    with pytest.raises(BufferError, match="memory='managed'"):
        memoryview(gp.ones(3))


@pytest.mark.gpu
@pytest.mark.parametrize("memory", ["managed", "pinned"])
def test_buffer_protocol_host_addressable(memory, rng):
    h = rng.standard_normal((4, 5)).astype(np.float32)
    d = gp.empty((4, 5), dtype=np.float32, memory=memory)
    d[...] = gp.asarray(h)
    d *= 2
    shared = np.asarray(memoryview(d))  # synchronises, then shares the memory
    np.testing.assert_array_equal(shared, 2 * h)
    shared[0, 0] = 99.0
    assert float(d[0, 0]) == 99.0
    z = gp.zeros(3, memory=memory)
    assert bytes(memoryview(z)) == bytes(24)
    with pytest.raises(ValueError, match="memory must be"):
        gp.empty(3, memory="texture")


def test_asarray_accepts_buffer_exporters_without_gpu_check():
    import array
    assert memoryview(array.array("d", [1.0, 2.0])).format == "d"  # exporter exists


@pytest.mark.gpu
def test_asarray_from_buffer_exporters():
    import array
    np.testing.assert_array_equal(gp.asarray(array.array("d", [1.0, 2.0])).get(), [1.0, 2.0])
    np.testing.assert_array_equal(gp.asarray(bytearray(b"\x01\x02")).get(), [1, 2])
    np.testing.assert_array_equal(gp.asarray(memoryview(b"ab")).get(), [97, 98])
