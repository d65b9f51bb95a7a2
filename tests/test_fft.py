"""gpuarr.fft against numpy.fft and the FFT convolutions against SciPy, on
fresh random data: shapes (powers of two, primes, odd lengths, 1 to 4
axes, length 1, empty), every dtype kind, the norms, n/s padding and
truncation, repeated axes, non-contiguous inputs, out=.  Each comparison
runs twice: over the NumPy model of cuFFT (tests/_fft_emulation.py, which
checks every plan's layout against the arrays it runs on; CPU, CI) and on
the device (GPU-marked).  Without a GPU: NumPy's argument errors, the
library search with cuFFT hidden, that importing gpuarr does not load
cuFFT, the plan cache, np.fft dispatch, and what method='auto' picks."""
import math
import os
import sys
import warnings

import numpy as np
import pytest

import gpuarr
import gpuarr.fft as gfft
from gpuarr.cuda import _libs, cufft
from gpuarr.scipy import signal

import _conv_compare
import _libraries
from _conv_compare import rand
from _conv_emulation import backend  # noqa: F401 -- the fixture (convolutions)
from _fft_emulation import fft_backend  # noqa: F401 -- the fixture (transforms)
import _fft_emulation

scipy_signal = pytest.importorskip("scipy.signal")

C2C = ["fft", "ifft"]
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"]
REAL_IN = {"rfft", "ihfft", "rfftn", "rfft2"}
DTYPES = [np.float16, np.float32, np.float64, np.complex64, np.complex128, np.int8, np.uint16,
          np.int64, np.bool_]
# Powers of two, primes, odd and even composites, length 1.
SHAPES = [(16,), (17,), (1,), (2,), (4, 32), (3, 13), (7, 1), (5, 9, 8), (2, 1, 6),
          (3, 4, 5, 6)]


def _input(rng, name, shape, dtype=np.float64):
    """Random data of dtype (complex for the complex-input functions
    when no dtype is asked for)."""
    if dtype is None:
        dtype = np.float64 if name in REAL_IN else np.complex128
    return rand(rng, shape, dtype)


def _scale_tol(dtype):
    dt = np.dtype(dtype)
    if dt in (np.float16,):
        return 4e-3
    if dt in (np.float32, np.complex64):
        return 3e-5
    return 1e-11


def check_fft(got, want, tol=None):
    """got (host) equals NumPy's want: dtype, shape, values within tol of
    the result's scale (FFT rounding grows with the largest value)."""
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype}, NumPy {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, NumPy {want.shape}"
    if want.size == 0:
        return
    tol = _scale_tol(want.dtype) if tol is None else tol
    scale = max(float(np.max(np.abs(want.astype(np.complex128)))), 1.0)
    np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128), rtol=0,
                               atol=tol * scale)


def same(bk, name, x, *args, module=None, tol=None, **kwargs):
    """gp.fft.<name> on bk's copy of x gives numpy.fft.<name>(x), or raises
    NumPy's exception class."""
    ours = getattr(module or gfft, name)
    theirs = getattr(np.fft, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = theirs(x, *args, **kwargs)
        except Exception as exc:        # noqa: BLE001 -- NumPy's error is the spec
            with pytest.raises(type(exc)):
                ours(bk.asarray(x), *args, **kwargs)
            return None
        got = ours(bk.asarray(x), *args, **kwargs)
    check_fft(bk.get(got), want, tol)
    return want


# =========================================================== 1-d ==========

@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_1d_every_axis_and_length(fft_backend, rng, name, shape):
    x = _input(rng, name, shape, None)
    for axis in range(-1, len(shape)):
        m = shape[axis]
        for n in sorted({None, m + 3, max(1, m - 2), 1, 2 * m}, key=str):
            same(fft_backend, name, x, n=n, axis=axis)


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_1d_dtypes(fft_backend, rng, name, dtype):
    x = rand(rng, (6, 10), dtype)
    same(fft_backend, name, x)
    same(fft_backend, name, x, n=7, axis=0)


@pytest.mark.parametrize("name", ONE_D)
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_1d_norms(fft_backend, rng, name, norm):
    x = _input(rng, name, (5, 12), None)
    same(fft_backend, name, x, norm=norm)
    same(fft_backend, name, x, n=9, axis=0, norm=norm)


@pytest.mark.parametrize("name", ONE_D)
def test_1d_non_contiguous(fft_backend, rng, name):
    x = _input(rng, name, (12, 10, 8), None)
    d = fft_backend.asarray(x)
    views = [(slice(None, None, 2), slice(None), slice(1, None)),
             (slice(None, None, -1), slice(None, None, 3), slice(None)),
             (Ellipsis, slice(None, None, -2))]
    for idx in views:
        for axis in (0, 1, 2):
            want = getattr(np.fft, name)(x[idx], axis=axis)
            check_fft(fft_backend.get(getattr(gfft, name)(d[idx], axis=axis)), want)
    want = getattr(np.fft, name)(x.transpose(2, 0, 1), axis=1)
    check_fft(fft_backend.get(getattr(gfft, name)(d.transpose(2, 0, 1), axis=1)), want)


def test_1d_of_complex_parts(fft_backend, rng):
    """Element strides of 2 (the real part of a complex array)."""
    z = rand(rng, (6, 9), np.complex128)
    d = fft_backend.asarray(z)
    check_fft(fft_backend.get(gfft.rfft(d.real)), np.fft.rfft(z.real))
    check_fft(fft_backend.get(gfft.fft(d.imag, axis=0)), np.fft.fft(z.imag, axis=0))


def test_broadcast_inputs(fft_backend, rng):
    """Zero strides: cuFFT cannot read them in place; the result is
    NumPy's."""
    row = rand(rng, (1, 12), np.float64)
    d = fft_backend.broadcast(row, (5, 12))
    want = np.broadcast_to(row, (5, 12))
    for name in ("fft", "rfft", "fftn", "rfft2", "irfft"):
        check_fft(fft_backend.get(getattr(gfft, name)(d)), getattr(np.fft, name)(want))
    check_fft(fft_backend.get(gfft.fft(d, axis=0)), np.fft.fft(want, axis=0))


def test_1d_empty_and_length_one(fft_backend, rng):
    for name in ONE_D:
        same(fft_backend, name, np.zeros((0, 5)))
        same(fft_backend, name, np.zeros((0, 5)), axis=0)          # 0 points: ValueError
        same(fft_backend, name, np.zeros((0,)), n=4)
        same(fft_backend, name, _input(rng, name, (4, 1), None))
        same(fft_backend, name, _input(rng, name, (1,), None), n=1)


def test_irfft_leaves_its_input_alone(fft_backend, rng):
    """cuFFT's C2R overwrites its input (the model does too): gpuarr runs
    it on a private copy."""
    z = rand(rng, (4, 9), np.complex128)
    d = fft_backend.asarray(z)
    for f in (gfft.irfft, gfft.hfft, gfft.irfftn, gfft.irfft2):
        f(d)
        np.testing.assert_array_equal(fft_backend.get(d), z)


def test_irfft_ignores_imaginary_zero_and_nyquist_terms(fft_backend, rng):
    z = rand(rng, (3, 9), np.complex128)
    for n in (16, 17):
        same(fft_backend, "irfft", z, n=n)
    same(fft_backend, "irfftn", rand(rng, (6, 5, 5), np.complex128))


# =========================================================== n-d ==========

ND_CASES = [((8, 6), None), ((8, 6), (0,)), ((8, 6), (1, 0)), ((5, 7, 4), None),
            ((5, 7, 4), (0, 2)), ((5, 7, 4), (2, 0)), ((5, 7, 4), (1,)), ((5, 7, 4), (0, 1)),
            ((5, 7, 4), (-1, -3, -2)), ((3, 4, 5, 6), None), ((3, 4, 5, 6), (0, 2, 3)),
            ((2, 3, 1, 5), None), ((9, 1, 4), (1, 2))]


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("case", ND_CASES, ids=str)
def test_nd_axes_and_sizes(fft_backend, rng, name, case):
    shape, axes = case
    x = _input(rng, name, shape, None)
    same(fft_backend, name, x, axes=axes)
    if axes is not None:
        for s in ([shape[a] + 2 for a in axes], [max(1, shape[a] - 1) for a in axes],
                  [-1] * len(axes), [3] * len(axes)):
            same(fft_backend, name, x, s=s, axes=axes)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
@pytest.mark.parametrize("shape", [(8, 8), (7, 13), (4, 6, 10), (1, 5), (16, 1)], ids=str)
def test_2d(fft_backend, rng, name, shape):
    x = _input(rng, name, shape, None)
    same(fft_backend, name, x)
    same(fft_backend, name, x, s=(shape[-2] + 3, shape[-1] + 1))
    if len(shape) == 3:
        same(fft_backend, name, x, axes=(0, 2))
        same(fft_backend, name, x, axes=(2, 0))


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_nd_dtypes(fft_backend, rng, name, dtype):
    same(fft_backend, name, rand(rng, (4, 6, 5), dtype))


@pytest.mark.parametrize("name", N_D)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_nd_norms(fft_backend, rng, name, norm):
    same(fft_backend, name, _input(rng, name, (6, 5, 4), None), norm=norm)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_nd_repeated_axes_as_numpy(fft_backend, rng, name):
    """NumPy transforms a repeated axis once per listing."""
    x = _input(rng, name, (6, 8), None)
    same(fft_backend, name, x, axes=(0, 0))
    same(fft_backend, name, x, axes=(1, 0, 1))
    same(fft_backend, name, x, s=(5, 4), axes=(-1, -1))


@pytest.mark.parametrize("name", N_D)
def test_nd_non_contiguous(fft_backend, rng, name):
    x = _input(rng, name, (10, 12, 9), None)
    d = fft_backend.asarray(x)
    for idx in [(slice(None, None, 2), slice(None, None, -1), slice(1, None)),
                (slice(None), slice(2, 9), slice(None, None, 3))]:
        want = getattr(np.fft, name)(x[idx])
        check_fft(fft_backend.get(getattr(gfft, name)(d[idx])), want)
    f = np.asfortranarray(x)
    check_fft(fft_backend.get(getattr(gfft, name)(fft_backend.asarray(f))),
              getattr(np.fft, name)(f))
    t = x.transpose(1, 2, 0)
    check_fft(fft_backend.get(getattr(gfft, name)(d.transpose(1, 2, 0), axes=(0, 2))),
              getattr(np.fft, name)(t, axes=(0, 2)))


def test_nd_deprecated_s_forms_warn_as_numpy(fft_backend, rng):
    x = rand(rng, (4, 6), np.float64)
    with pytest.warns(DeprecationWarning, match="axes"):
        got = gfft.fftn(fft_backend.asarray(x), s=(5,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_fft(fft_backend.get(got), np.fft.fftn(x, s=(5,)))
        want = np.fft.irfftn(x, s=(3, None), axes=(0, 1))
    with pytest.warns(DeprecationWarning, match="None"):
        got = gfft.irfftn(fft_backend.asarray(x), s=(3, None), axes=(0, 1))
    check_fft(fft_backend.get(got), want)


def test_nd_no_axes_and_zero_dimensional(fft_backend):
    x = np.arange(6.0).reshape(2, 3)
    d = fft_backend.asarray(x)
    assert gfft.fftn(d, axes=()) is d                     # NumPy returns its input
    check_fft(fft_backend.get(gfft.fftn(fft_backend.asarray(np.float64(3)))),
              np.fft.fftn(np.float64(3)))


# ========================================================== out= ==========

@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "ihfft", "fftn", "rfftn", "irfftn",
                                  "fft2", "ifft2", "irfft2", "hfft"])
def test_out(fft_backend, rng, name):
    """The result lands in out and out is returned; a wider dtype than the
    result's is cast into (same_kind)."""
    x = _input(rng, name, (6, 8), None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np.fft, name)(x)
    for dt in (want.dtype, np.complex128 if want.dtype.kind == "c" else np.float32):
        out = fft_backend.asarray(np.zeros(want.shape, dt))
        got = getattr(gfft, name)(fft_backend.asarray(x), out=out)
        assert got is out
        check_fft(fft_backend.get(out), want.astype(dt), tol=_scale_tol(np.float32))


def test_out_errors_leave_out_alone(fft_backend, rng):
    x = fft_backend.asarray(rand(rng, (4, 8), np.float64))
    out = fft_backend.asarray(np.full((4, 8), 7.0))
    with pytest.raises(ValueError, match="wrong shape"):
        gfft.fft(x, n=6, out=fft_backend.asarray(np.zeros((4, 8), np.complex128)))
    with pytest.raises(TypeError, match="cast"):
        gfft.fft(x, out=out)                                 # complex into float
    np.testing.assert_array_equal(fft_backend.get(out), 7.0)


def test_out_aliasing_the_input(fft_backend, rng):
    z = rand(rng, (5, 16), np.complex128)
    d = fft_backend.asarray(z)
    got = gfft.fft(d, out=d)
    assert got is d
    check_fft(fft_backend.get(d), np.fft.fft(z))
    d = fft_backend.asarray(z)
    gfft.ifft2(d, out=d[:, :])
    check_fft(fft_backend.get(d), np.fft.ifft2(z))


# ======================================================= helpers ==========

def test_fftfreq_rfftfreq(fft_backend):
    for n in (1, 2, 7, 8, 101):
        for d in (1.0, 0.25, np.float32(2.0), 3):
            for name in ("fftfreq", "rfftfreq"):
                want = getattr(np.fft, name)(n, d)
                check_fft(fft_backend.get(getattr(gfft, name)(n, d)), want)
    check_fft(fft_backend.get(gfft.fftfreq(6, d=2j)), np.fft.fftfreq(6, d=2j))
    for name in ("fftfreq", "rfftfreq"):  # the array API's dtype=
        got = fft_backend.get(getattr(gfft, name)(9, d=0.5, dtype=np.float32))
        check_fft(got, getattr(np.fft, name)(9, d=0.5).astype(np.float32))


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts(fft_backend, rng, name):
    for shape in [(7,), (8,), (1,), (0,), (5, 6), (3, 4, 5), (2, 3, 5, 7, 3)]:
        x = rand(rng, shape, np.float32)
        for axes in [None, 0, -1, (0,), (0, 0), tuple(range(len(shape)))[::-1]]:
            want = getattr(np.fft, name)(x, axes=axes)
            got = fft_backend.get(getattr(gfft, name)(fft_backend.asarray(x), axes=axes))
            np.testing.assert_array_equal(got, want)


# ============================================= errors, without a GPU ======

def _raises_like(ours, theirs, *args, match=None, **kwargs):
    with pytest.raises(Exception) as want, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs(*args, **kwargs)
    with pytest.raises(type(want.value), match=match), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours(*args, **kwargs)


@pytest.mark.parametrize("name", ONE_D)
def test_1d_errors(name):
    ours, theirs = getattr(gfft, name), getattr(np.fft, name)
    x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    _raises_like(ours, theirs, x, n=0, match="Invalid number of FFT data points")
    _raises_like(ours, theirs, x, n=-3, match="Invalid number")
    _raises_like(ours, theirs, x, n=2.0)
    with pytest.raises(TypeError):                 # NumPy: TypeError, or n=1 for some
        ours(x, n=True)
    _raises_like(ours, theirs, x, axis=2)
    _raises_like(ours, theirs, x, axis=-3)
    _raises_like(ours, theirs, x, norm="unitary", match="norm")
    _raises_like(ours, theirs, 3.0)
    if name in ("irfft", "hfft"):
        _raises_like(ours, theirs, [[1.0], [2.0]], match="Invalid number")
    if name in ("rfft", "ihfft"):
        _raises_like(ours, theirs, [1j, 2.0], match="real")


@pytest.mark.parametrize("name", N_D)
def test_nd_errors(name):
    ours, theirs = getattr(gfft, name), getattr(np.fft, name)
    x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    _raises_like(ours, theirs, x, s=(2, 3, 4), axes=(0, 1), match="different lengths")
    _raises_like(ours, theirs, x, s=(0, 3), axes=(0, 1), match="Invalid number")
    _raises_like(ours, theirs, x, axes=(0, 5))
    _raises_like(ours, theirs, x, axes=1)
    _raises_like(ours, theirs, x, s=3, axes=(0,))
    _raises_like(ours, theirs, x, norm="bad", match="norm")
    if name in ("rfftn", "rfft2"):
        _raises_like(ours, theirs, [[1j, 2.0]], match="real")


def test_errors_host_arrays_and_out():
    with pytest.raises(TypeError, match=r"gpuarr\.asarray"):
        gfft.fft(np.ones(4))
    with pytest.raises(TypeError, match=r"gpuarr\.asarray"):
        gfft.fftshift(np.ones(4))
    with pytest.raises(TypeError, match="out must be a device array"):
        gfft.fft([1.0, 2.0], out=np.zeros(2, np.complex128))
    with pytest.raises(ValueError, match="integer"):
        gfft.fftfreq(4.0)
    with pytest.raises(ValueError, match="device"):
        gfft.rfftfreq(4, device="cpu")
    with pytest.raises(ValueError, match="real floating dtype"):
        gfft.fftfreq(4, dtype=np.int32)


def test_numpy_fft_dispatches_to_gpuarr_fft():
    from gpuarr._interop import _implementation
    for name in ONE_D + N_D + ["fftshift", "ifftshift"]:
        assert _implementation(getattr(np.fft, name)) == (f"fft.{name}", getattr(gfft, name))
    assert _implementation(np.random.rand)[1] is None


# ================================================ loading cuFFT ===========

def test_missing_cufft_names_every_place_searched(monkeypatch, tmp_path):
    _libraries.check_missing_library(monkeypatch, tmp_path, cufft, "libcufft.so.12",
                                     cufft.find_cufft, cufft.CUFFTError,
                                     ['pip install "gpuarr[cufft]"', "nvidia-cufft"])


def test_library_search_order(monkeypatch, tmp_path):
    """$CUDA_HOME, $CUDA_PATH, each wheel folder of each site-packages, the
    system path; found by stat alone."""
    site = tmp_path / "site-packages"
    wheel = site / "nvidia" / "cufft" / "lib"
    wheel.mkdir(parents=True)
    (wheel / "libcufft.so.11").write_bytes(b"")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CUDA_PATH", str(tmp_path / "path"))
    monkeypatch.setattr(sys, "path", [str(site)])
    cands = _libs.candidates(cufft._NAMES, cufft._WHEEL_SUBDIRS)
    places = list(dict.fromkeys(p for p, _ in cands))
    assert places == ["$CUDA_HOME/lib64", "$CUDA_HOME/lib",
                      "$CUDA_HOME/" + os.path.join("targets", "x86_64-linux", "lib"),
                      "$CUDA_PATH/lib64", "$CUDA_PATH/lib",
                      "$CUDA_PATH/" + os.path.join("targets", "x86_64-linux", "lib"),
                      str(site / "nvidia" / "cu13" / "lib"), str(wheel), _libs.SYSTEM]
    place, path, searched = _libs.find(cufft._NAMES, cufft._WHEEL_SUBDIRS)
    assert (place, path) == (str(wheel), str(wheel / "libcufft.so.11"))
    assert searched == places[:8]         # its own folder too: .so.12 is not there


def test_cufft_loads_where_installed():
    _libraries.check_loads_where_installed(cufft.find_cufft, cufft.CUFFTError, "cufft",
                                           cufft.get_version, 10000)


def test_import_does_not_load_cufft():
    _libraries.check_import_does_not_load("""
        import gpuarr, gpuarr.fft, gpuarr.scipy.signal
        try:
            gpuarr.fft.fft([1.0, 2.0], n=0)
        except ValueError:
            pass
        gpuarr.fft.fftfreq
    """, "cufft")


class _FakePlan:
    made = 0

    def __init__(self, layout, device):
        _FakePlan.made += 1
        self.layout = layout


def test_plan_cache_keeps_recent_plans(monkeypatch):
    monkeypatch.setattr(cufft, "Plan", _FakePlan)
    cache = cufft.PlanCache(size=2)
    lays = [cufft.Layout(cufft.Z2Z, (n,), (n,), 1, n, (n,), 1, n, 1) for n in (8, 16, 32)]
    _FakePlan.made = 0
    p8 = cache.get(lays[0], device=0)
    assert cache.get(lays[0], device=0) is p8 and _FakePlan.made == 1
    assert cache.get(lays[0], device=1) is not p8                # per device
    cache.get(lays[1], device=0)
    assert len(cache) == 2 and cache.get(lays[0], device=0) is not p8     # evicted
    cache.set_size(0)
    assert len(cache) == 0
    cache.get(lays[2], device=0)
    assert len(cache) == 0
    with pytest.raises(ValueError):
        cache.set_size(-1)
    assert cufft.get_plan_cache() is gfft.config.get_plan_cache()


def test_plan_sets_work_area_and_stream_only_when_they_change(monkeypatch):
    """Plan.execute gives cuFFT the pool's work area and the current stream
    only when they differ from the last ones it gave (each is a ctypes
    call); a transform always runs."""
    import threading
    import types
    calls = []

    class Lib:
        def cufftSetWorkArea(self, h, p):
            calls.append(("area", p))
            return 0

        def cufftSetStream(self, h, st):
            calls.append(("stream", st))
            return 0

        def cufftExecZ2Z(self, h, i, o, d):
            calls.append(("exec",))
            return 0
    areas, streams = iter([100, 100, 200, 200]), iter([5, 5, 7, 0])
    core = types.SimpleNamespace(
        empty=lambda shape, dtype: types.SimpleNamespace(data=types.SimpleNamespace(
            ptr=next(areas))),
        get_current_stream=lambda: types.SimpleNamespace(ptr=next(streams)),
        is_available=lambda: False)             # Plan.__del__: no cufftDestroy of the fake
    monkeypatch.setattr(cufft, "_cufft", lambda: Lib())
    monkeypatch.setattr(cufft, "_core", core)
    plan = object.__new__(cufft.Plan)
    plan.layout = cufft.Layout(cufft.Z2Z, (8,), (8,), 1, 8, (8,), 1, 8, 1)
    plan.device, plan.handle, plan.work_size, plan.lock = 0, 1, 64, threading.Lock()
    plan.bound = (None, None)
    for _ in range(4):
        plan.execute(10, 20, cufft.FORWARD)
    assert calls == [("area", 100), ("stream", 5), ("exec",), ("exec",),
                     ("area", 200), ("stream", 7), ("exec",), ("stream", None), ("exec",)]


def test_layouts_of_contiguous_arrays(monkeypatch):
    """The plans gpuarr asks cuFFT for, planned without a GPU: C-contiguous
    arrays transform without copies, as one plan for up to three axes."""
    _fft_emulation.install_fft_model(monkeypatch)
    bk = _fft_emulation.Backend("model")
    run = _fft_emulation.executed

    def plans(f, shape, dtype=np.complex128, **kwargs):
        run.clear()
        f(bk.asarray(np.zeros(shape, dtype)), **kwargs)
        return [(lay.type, lay.n, lay.istride, lay.idist, lay.batch) for lay in run]

    assert plans(gfft.fft2, (64, 32)) == [(cufft.Z2Z, (64, 32), 1, 2048, 1)]
    assert plans(gfft.fft, (64, 32), axis=0) == [(cufft.Z2Z, (64,), 32, 1, 32)]
    assert plans(gfft.fftn, (4, 8, 16)) == [(cufft.Z2Z, (4, 8, 16), 1, 512, 1)]
    assert plans(gfft.rfftn, (4, 8, 16), np.float32) == [(cufft.R2C, (4, 8, 16), 1, 512, 1)]
    assert plans(gfft.rfft2, (3, 8, 16), np.float64) == [(cufft.D2Z, (8, 16), 1, 128, 3)]
    assert plans(gfft.fftn, (2, 3, 4, 5)) == [(cufft.Z2Z, (3, 4, 5), 1, 60, 2),
                                              (cufft.Z2Z, (2,), 60, 1, 60)]
    # irfftn: the complex inverse along the other axes, then C2R along the last.
    assert plans(gfft.irfftn, (8, 9)) == [(cufft.Z2Z, (8,), 9, 1, 9),
                                          (cufft.Z2D, (16,), 1, 9, 8)]


def test_contiguous_calls_go_straight_to_one_plan(monkeypatch):
    """A whole C-contiguous input of the compute type runs one plan without
    the general path's _prepare; a padded, cast, strided or 4-axis one goes
    through it; both give NumPy's answer."""
    _fft_emulation.install_fft_model(monkeypatch)
    bk = _fft_emulation.Backend("model")
    prepared = []
    real_prepare = gfft._fft._prepare
    monkeypatch.setattr(gfft._fft, "_prepare",
                        lambda *a: prepared.append(1) or real_prepare(*a))
    rng = np.random.default_rng(5)
    x = rng.random((6, 8)) + 1j * rng.random((6, 8))
    r = rng.random((6, 8)).astype(np.float32)
    every = (slice(None),)
    straight = [(gfft.fft2, x, every, {}), (gfft.ifft2, x, every, {"norm": "ortho"}),
                (gfft.rfft, r, every, {}), (gfft.fft, x, every, {"axis": 0}),
                (gfft.rfftn, r, every, {"axes": (0, 1)})]
    general = [(gfft.fft2, x, every, {"s": (8, 8)}),
               (gfft.fft, x, (slice(None), slice(0, None, 2)), {}),
               (gfft.rfft, r.astype(np.float16), every, {}),
               (gfft.fft, x.astype(np.complex64), every, {"n": 5}),
               (gfft.fftn, x.reshape(1, 2, 3, 8), every, {})]
    for cases, expect in ((straight, 0), (general, 1)):
        for f, a, view, kw in cases:
            prepared.clear()
            got = f(bk.asarray(a)[view], **kw)
            want = getattr(np.fft, f.__name__)(a[view], **kw)
            assert len(prepared) == expect, (f.__name__, a.shape, a.dtype, view, kw)
            check_fft(np.asarray(got), want)


# ================================== FFT convolution against SciPy =========

def _check_conv(got, want, dtype):
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype}, SciPy {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, SciPy {want.shape}"
    if want.size == 0:
        return
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
        return
    single = any(np.dtype(d).char in "efF" for d in dtype)
    tol = 2e-3 if want.dtype == np.float16 else 3e-5 if single else 1e-10
    scale = max(float(np.max(np.abs(want))), 1e-30)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale)


def same_conv(bk, name, a, k, **kwargs):
    _conv_compare.same(bk, getattr(signal, name), getattr(scipy_signal, name), a, k,
                       check=lambda got, want: _check_conv(got, want, (a.dtype, k.dtype)),
                       **kwargs)


CONV_SHAPES = [((40,), (7,)), ((7,), (40,)), ((16,), (16,)), ((1,), (9,)), ((9,), (1,)),
               ((1,), (1,)), ((33, 20), (5, 4)), ((5, 4), (33, 20)), ((24, 24), (9, 9)),
               ((1, 30), (4, 7)), ((12, 1), (3, 1)), ((1, 1), (3, 3)), ((9, 10, 11), (3, 4, 2)),
               ((6, 5, 4), (6, 5, 4))]
MODES = ["full", "same", "valid"]


@pytest.mark.parametrize("name", ["fftconvolve", "oaconvolve"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", CONV_SHAPES, ids=str)
def test_fft_convolution_modes_and_shapes(backend, rng, name, mode, shapes):
    a, k = rand(rng, shapes[0], np.float64), rand(rng, shapes[1], np.float64)
    same_conv(backend, name, a, k, mode=mode)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", CONV_SHAPES, ids=str)
def test_method_fft_modes_and_shapes(backend, rng, name, mode, shapes):
    a, k = rand(rng, shapes[0], np.float64), rand(rng, shapes[1], np.float64)
    same_conv(backend, name, a, k, mode=mode, method="fft")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", [((6, 20, 9), (6, 5, 3), [1, 2]), ((6, 20, 9), (1, 5, 3), [1, 2]),
                                  ((1, 20, 9), (4, 5, 3), [2, 1]), ((7, 8), (7, 3), 1),
                                  ((7, 8), (1, 3), [0, 1]), ((5, 6), (2, 6), 0)], ids=str)
def test_fft_convolution_axes(backend, rng, mode, case):
    s1, s2, axes = case
    a, k = rand(rng, s1, np.float64), rand(rng, s2, np.float64)
    same_conv(backend, "fftconvolve", a, k, mode=mode, axes=axes)
    same_conv(backend, "oaconvolve", a, k, mode=mode, axes=axes)


@pytest.mark.parametrize("dtypes", [(np.float32, np.float32), (np.float64, np.float32),
                                    (np.float16, np.float16), (np.int16, np.int16),
                                    (np.uint8, np.float32), (np.bool_, np.bool_),
                                    (np.complex64, np.complex64), (np.complex128, np.float64),
                                    (np.float32, np.complex64), (np.int32, np.complex128)],
                         ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_fft_convolution_dtypes(backend, rng, dtypes, mode):
    a, k = rand(rng, (17, 12), dtypes[0]), rand(rng, (5, 4), dtypes[1])
    same_conv(backend, "fftconvolve", a, k, mode=mode)
    if np.dtype(dtypes[0]).kind != "b":       # SciPy casts its FFT noise to bool
        same_conv(backend, "convolve", a, k, mode=mode, method="fft")
        same_conv(backend, "correlate", k, a, mode=mode, method="fft")


def test_fft_convolution_non_contiguous(backend, rng):
    a, k = rand(rng, (30, 26), np.float64), rand(rng, (9, 8), np.complex128)
    da, dk = backend.asarray(a), backend.asarray(k)
    for mode in MODES:
        want = scipy_signal.fftconvolve(a[::2, ::-1], k[::-1, 1::2], mode=mode)
        got = signal.fftconvolve(da[::2, ::-1], dk[::-1, 1::2], mode=mode)
        _check_conv(backend.get(got), want, (np.float64,))


def test_fft_convolution_large_filter_path(backend, rng):
    """A filter much smaller than the padded size is transformed one axis
    at a time: the same result."""
    a, k = rand(rng, (70, 90), np.float64), rand(rng, (7, 5), np.float64)
    for mode in MODES:
        same_conv(backend, "fftconvolve", a, k, mode=mode)
        same_conv(backend, "fftconvolve", k, a, mode=mode)
    a3, k3 = rand(rng, (20, 24, 18), np.complex128), rand(rng, (3, 2, 4), np.complex128)
    same_conv(backend, "fftconvolve", a3, k3, mode="same")


def test_fft_convolution_scalars_and_empty(backend):
    same_conv(backend, "fftconvolve", np.array(2.5), np.array(4.0))
    for name in ("fftconvolve", "oaconvolve"):
        same_conv(backend, name, np.zeros((0, 3)), np.ones((2, 2)))


# ================================================= method='auto' ==========

def _seven_smooth(m):
    for p in (2, 3, 5, 7):
        while m % p == 0:
            m //= p
    return m == 1


def test_fast_lengths():
    """The cyclic length: a product of 2, 3, 5 and 7 from n up to the next
    power of two, the cheapest of them by _length_cost (the shortest among
    equals), and the lengths the H100's measurements favour."""
    from gpuarr.scipy.signal import _fast_len, _length_cost
    for n in range(1, 3000):
        m = _fast_len(n)
        top = 1 << (n - 1).bit_length()
        assert n <= m <= top and _seven_smooth(m)
        for j in range(n, top + 1):
            if _seven_smooth(j):
                assert (_length_cost(m), m) <= (_length_cost(j), j), (n, m, j)
    # 2-d float64 R2C + C2R on the H100: 2187 (346 us) beats 2160 (431),
    # 2304 (406) and 2240 (408); powers of two stay.
    assert [_fast_len(n) for n in (2048, 2063, 2111, 2188, 1000)] == [2048, 2187, 2187, 2401, 1024]


# (shape1, shape2, dtype, mode, the engine 'auto' must pick): the faster one
# as measured on the lent H100 (benchmarks/results/NVIDIA_H100_80GB_HBM3-
# conv-methods.json; direct / fft microseconds in the comments), then the
# dtype rules (no timing involved) and two inputs too small for the FFT's
# fixed cost.
AUTO_GRID = [
    ((2048, 2048), (3, 3), np.float64, "same", "direct"),          # 70 / 420
    ((2048, 2048), (15, 15), np.float64, "same", "direct"),        # 144 / 413
    ((2048, 2048), (31, 31), np.float64, "same", "fft"),           # 486 / 426
    ((2048, 2048), (63, 63), np.float64, "same", "fft"),           # 1768 / 420
    ((2048, 2048), (127, 127), np.float64, "same", "fft"),         # 6963 / 415
    ((2048, 2048), (127, 127), np.float32, "full", "fft"),         # 5471 / 241
    ((2048, 2048), (3, 3), np.float32, "valid", "direct"),         # 63 / 189
    ((256, 256), (15, 15), np.float32, "same", "direct"),           # 36 / 176
    ((4194304,), (15,), np.float64, "full", "direct"),              # 39 / 927
    ((1 << 20,), (4095,), np.float64, "full", "fft"),               # 582 / 148
    ((128, 128, 128), (15, 15, 15), np.float32, "same", "fft"),     # 772 / 163
    ((128, 128, 128), (3, 3, 3), np.float32, "same", "direct"),    # 81 / 160
    ((2048, 2048), (63, 63), np.complex128, "same", "fft"),        # 7184 / 703
    ((2048, 2048), (127, 127), np.int16, "same", "fft"),           # 20127 / 451
    ((2048, 2048), (3, 3), np.int16, "same", "direct"),             # 109 / 448
    ((2048, 2048), (127, 127), np.int32, "same", "direct"),       # FFT not exact for int32
    ((2048, 2048), (127, 127), np.bool_, "same", "direct"),       # bool: always direct
    ((64, 64), (3, 3), np.float16, "same", "fft"),                 # SciPy's direct refuses
    ((100,), (100,), np.float64, "full", "direct"),
    ((10, 10), (3, 3), np.float64, "full", "direct"),
]
CONV_RECORDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "benchmarks", "results", "NVIDIA_H100_80GB_HBM3-conv-methods.json")


def _model_operand(shape, dtype):
    from _conv_emulation import ModelArray
    return np.broadcast_to(np.zeros((), dtype), shape).view(ModelArray)    # no data read


@pytest.mark.parametrize("case", AUTO_GRID, ids=str)
def test_auto_picks_the_faster_engine(monkeypatch, case):
    s1, s2, dtype, mode, expected = case
    _fft_emulation.install_fft_model(monkeypatch)
    got = signal.choose_conv_method(_model_operand(s1, dtype), _model_operand(s2, dtype),
                                    mode=mode)
    assert got == expected
    fft_s, direct_s = signal.conv_costs(s1, s2, dtype, dtype, mode)
    assert fft_s > 0 and direct_s > 0


def test_auto_against_the_h100_records(monkeypatch):
    """choose_conv_method over every case measured on the H100: never the
    slower engine where one is 3.5x faster than the other, the slower by
    more than 10 % in at most 30 of the 305 cases (the fit's figure, in
    signal.py's comment), and at worst 3.2x slower."""
    import json
    _fft_emulation.install_fft_model(monkeypatch)
    records = json.load(open(CONV_RECORDS))["records"]
    assert len(records) == 305
    wrong, worst = 0, 1.0
    for r in records:
        dt = np.dtype(r["dtype"])
        pick = signal.choose_conv_method(_model_operand(tuple(r["shape1"]), dt),
                                         _model_operand(tuple(r["shape2"]), dt), mode=r["mode"])
        times = {m: r[m] for m in ("direct", "fft") if r[m] is not None}
        best = min(times.values())
        ratio = times[pick] / best if pick in times else math.inf
        if max(times.values()) > 3.5 * best or len(times) == 1:
            assert ratio == 1.0, r
        wrong += ratio > 1.10
        worst = max(worst, ratio)
    assert wrong <= 30 and worst <= 3.2, (wrong, worst)


def test_conv_probe_fit_recovers_known_constants(tmp_path, capsys):
    """tools/probe_conv_methods.py's fit (no GPU): records made from known
    seconds through signal._conv_work, over the probe's whole grid, give
    those seconds back, and the report names each family's crossover."""
    import json
    from _repo import load_script
    probe = load_script("probe_conv_methods", "tools", "probe_conv_methods.py")
    direct = {"fixed": 12e-6, "fixed complex": 40e-6, "output": 5e-12, "output complex": 2e-11,
              "mac f4": 4e-14, "mac f8": 9e-14, "mac i8": 2e-13}
    fft = {"fixed": 80e-6, "nlogn f4": 1e-12, "nlogn f8": 2.5e-12}
    records = []
    for family, s1, s2, dtype, mode in probe.cases(quick=False):
        dw, fw = signal._conv_work(s1, s2, np.dtype(dtype), np.dtype(dtype), mode)
        records.append({"family": family, "shape1": list(s1), "shape2": list(s2), "dtype": dtype,
                        "mode": mode, "direct": sum(direct[t] * v for t, v in dw.items()),
                        "fft": sum(fft[t] * v for t, v in fw.items())})
    got_direct, got_fft = probe.fit_constants(records, [probe.record_work(r) for r in records])
    assert got_direct == pytest.approx(direct, rel=1e-6)
    assert got_fft == pytest.approx(fft, rel=1e-6)
    path = tmp_path / "conv.json"
    path.write_text(json.dumps({"device": "model", "records": records}))
    probe.fit(str(path))
    out = capsys.readouterr().out
    assert '"fixed": 1.2e-05' in out.splitlines()[1]
    # float64 2-d 'same' at 2048^2: direct 12 us + 4.19e6 (5e-12 + k^2 9e-14) s
    # against the FFT's 80 us + units x 2.5e-12: the first filter the FFT
    # wins is 31 (23: 233 against 345 us; 31: 396 against 345).
    assert "2d-2048 float64 same: 31" in out
    assert "picks the slower engine (> 1.10x) in 0 of" in out.split("fitted constants")[1]


# ================================================= device only ===========

@pytest.mark.gpu
def test_numpy_fft_on_device_arrays(rng):
    x = rand(rng, (8, 12), np.float64)
    d = gpuarr.asarray(x)
    got = np.fft.rfft2(d)
    assert isinstance(got, gpuarr.ndarray)
    check_fft(got.get(), np.fft.rfft2(x))
    check_fft(np.fft.fftshift(d).get(), np.fft.fftshift(x))
    check_fft(np.fft.irfft(np.fft.rfft(d), n=12).get(), np.fft.irfft(np.fft.rfft(x), n=12))
    with pytest.raises(TypeError, match="out= must be a device array"):
        np.fft.fft(d, out=np.zeros((8, 12), np.complex128))


@pytest.mark.gpu
def test_plans_are_cached_and_reused(rng):
    cache = gfft.config.get_plan_cache()
    cache.clear()
    d = gpuarr.asarray(rand(rng, (64, 48), np.complex64))
    gfft.fft2(d)
    n = len(cache)
    for _ in range(3):
        gfft.fft2(d)
    assert len(cache) == n == 1
    gfft.fft2(gpuarr.asarray(rand(rng, (64, 48), np.complex64)))
    assert len(cache) == 1


@pytest.mark.gpu
def test_transform_on_a_non_default_stream(rng):
    x = rand(rng, (256, 200), np.float32)
    s = gpuarr.cuda.Stream(non_blocking=True)
    with s:
        d = gpuarr.asarray(x)
        got = gfft.irfft2(gfft.rfft2(d), s=x.shape)
        s.synchronize()
    check_fft(got.get(), x.astype(np.float32), tol=1e-5)


@pytest.mark.gpu
def test_lesson_sizes(rng):
    """The benchmark's sizes: 2048^2 complex128 fft2, 2^24 float32 rfft,
    fftconvolve of a 2048^2 image with a 127^2 filter."""
    z = (rng.standard_normal((2048, 2048)) + 1j * rng.standard_normal((2048, 2048)))
    check_fft(gfft.fft2(gpuarr.asarray(z)).get(), np.fft.fft2(z))
    x = rng.standard_normal(1 << 24).astype(np.float32)
    check_fft(gfft.rfft(gpuarr.asarray(x)).get(), np.fft.rfft(x), tol=1e-4)
    img, k = rng.standard_normal((2048, 2048)), rng.standard_normal((127, 127))
    got = signal.fftconvolve(gpuarr.asarray(img), gpuarr.asarray(k), mode="same")
    _check_conv(got.get(), scipy_signal.fftconvolve(img, k, mode="same"), (np.float64,))
    got = signal.convolve(gpuarr.asarray(img), gpuarr.asarray(k), mode="same")
    _check_conv(got.get(), scipy_signal.fftconvolve(img, k, mode="same"), (np.float64,))
