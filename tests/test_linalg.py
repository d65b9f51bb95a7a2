"""gpuarr.linalg against numpy.linalg.

Without a GPU: NumPy's argument errors and result types, the shapes of
solve's batches, the library search with cuSOLVER hidden (and that
importing gpuarr does not load it), and the transpose identities that map
NumPy's row-major matrices onto cuSOLVER's column-major routines, run with
SciPy's LAPACK on the same column-major data cuSOLVER would get.

On the GPU (marked `gpu`): every function over float32, float64,
complex64, complex128 and integers, batch shapes, empty and 1x1 inputs,
non-contiguous views, singular and ill-conditioned matrices.  Matrices are
built on the host with a chosen condition number (U diag(s) Vᴴ from
random unitary factors; SPD ones as A·Aᴴ + n·I), so every draw passes;
tolerances scale with the dtype's eps, n and the condition number.
Decompositions are compared by reconstruction and invariants (QᴴQ = I,
R upper triangular, A V = V diag(w)), never element by element: their
factors are unique only up to signs or phases.
"""
import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuarr as gp
from gpuarr import linalg
from gpuarr.cuda import _libs, cusolver
from gpuarr.linalg import _linalg

import _libraries
import _repo
from _array_api_standard import LINALG_FUNCTIONS
from test_array_api import check_signature, stub_signature

scipy_linalg = pytest.importorskip("scipy.linalg")

FLOATS = [np.float32, np.float64, np.complex64, np.complex128]
BATCHES = [(), (1,), (3,), (2, 2)]


# ================================================================ data ====

def eps(dtype):
    return float(np.finfo(np.dtype(dtype)).eps)


def unitary(rng, n, dtype):
    z = rng.standard_normal((n, n))
    if np.dtype(dtype).kind == "c":
        z = z + 1j * rng.standard_normal((n, n))
    q, r = np.linalg.qr(z)
    d = np.diagonal(r)
    return q * (d / np.abs(d))


def conditioned(rng, shape, dtype, cond=10.0):
    """Random matrices of shape (..., m, n) with singular values spread
    from 1 to 1/cond (computed in double, then cast)."""
    *batch, m, n = shape
    k = min(m, n)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    out = np.empty(tuple(batch) + (m, n), wide)
    for idx in np.ndindex(*batch):
        u, v = unitary(rng, m, dtype), unitary(rng, n, dtype)
        s = np.logspace(0, -np.log10(cond), k) if k else np.zeros(0)
        out[idx] = (u[:, :k] * s) @ v[:k, :]
    return out.astype(dtype)


def hermitian(rng, shape, dtype, cond=10.0):
    """Hermitian matrices with eigenvalues of both signs, |w| in [1/cond, 1]."""
    *batch, n, _ = shape
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    out = np.empty(tuple(batch) + (n, n), wide)
    for idx in np.ndindex(*batch):
        u = unitary(rng, n, dtype)
        w = np.logspace(0, -np.log10(cond), n) * rng.choice([-1.0, 1.0], n) if n else []
        out[idx] = (u * w) @ u.conj().T
    return out.astype(dtype)


def spd(rng, shape, dtype):
    """Hermitian positive-definite: A·Aᴴ + n·I."""
    n = shape[-1]
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2).conj() + n * np.eye(n)).astype(dtype)


def close(got, want, tol, scale=None):
    """Norm-wise: ||got - want|| <= tol * ||want|| (or scale)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape}, NumPy {want.shape}"
    if want.size == 0:
        return
    ref = np.linalg.norm(want.astype(np.complex128).ravel()) if scale is None else scale
    err = np.linalg.norm((got.astype(np.complex128) - want.astype(np.complex128)).ravel())
    assert err <= tol * max(ref, 1e-300), f"relative error {err / max(ref, 1e-300):.3g} > {tol:.3g}"


def host(x):
    return x.get() if isinstance(x, gp.ndarray) else np.asarray(x)


# ================================================= without a GPU: API ====

def test_linalg_error_is_numpys():
    assert issubclass(linalg.LinAlgError, np.linalg.LinAlgError)
    try:
        raise linalg.LinAlgError("x")
    except np.linalg.LinAlgError as exc:
        assert type(exc).__module__ == "gpuarr.linalg"


def test_namespace_has_numpys_and_the_standards_names():
    for name in ("det", "slogdet", "inv", "solve", "cholesky", "qr", "svd", "svdvals", "eigh",
                 "eigvalsh", "norm", "vector_norm", "matrix_norm", "matrix_rank", "cross",
                 "diagonal", "matrix_transpose", "trace", "outer", "LinAlgError"):
        assert callable(getattr(linalg, name)), name
        assert name in linalg.__all__
    assert gp.linalg is linalg
    assert linalg.SVDResult._fields == np.linalg.svd(np.eye(2))._fields
    assert linalg.EighResult._fields == np.linalg.eigh(np.eye(2))._fields
    assert linalg.QRResult._fields == np.linalg.qr(np.eye(2))._fields
    assert linalg.SlogdetResult._fields == np.linalg.slogdet(np.eye(2))._fields


# functions of the standard's extension that need matrix products (after them)
NEEDS_PRODUCTS = {"matrix_power", "pinv"}


@pytest.mark.parametrize("name", sorted(set(LINALG_FUNCTIONS) - NEEDS_PRODUCTS))
def test_signature_conforms_to_the_standard(name):
    check_signature(inspect.signature(getattr(linalg, name)),
                    stub_signature(LINALG_FUNCTIONS[name]))


def test_matrix_products_come_from_gpuarr_when_they_exist(monkeypatch):
    with pytest.raises(AttributeError):
        linalg.not_a_function
    if not hasattr(gp, "matmul"):
        with pytest.raises(AttributeError):
            linalg.matmul
    monkeypatch.setattr(gp, "vecdot", lambda *a: "gp.vecdot", raising=False)
    assert linalg.vecdot() == "gp.vecdot"


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32,
                                np.float64, np.complex64, np.complex128])
def test_compute_type_is_numpys(dt):
    try:
        want = np.linalg.inv(np.eye(2, dtype=dt)).dtype
    except TypeError as exc:
        with pytest.raises(TypeError, match=str(exc)):
            _linalg._compute_type(dt)
        return
    assert _linalg._compute_type(dt) == want


@pytest.mark.parametrize("d1", [np.int32, np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("d2", [np.int8, np.float32, np.float64, np.complex64])
def test_compute_type_of_pairs_is_numpys(d1, d2):
    want = np.linalg.solve(np.eye(2, dtype=d1), np.ones(2, dtype=d2)).dtype
    assert _linalg._compute_type(d1, d2) == want


@pytest.mark.parametrize("fname", ["det", "slogdet", "inv", "cholesky", "eigh", "eigvalsh"])
def test_square_and_dimension_errors_before_any_device_work(fname):
    f = getattr(linalg, fname)
    ref = getattr(np.linalg, fname)
    for bad in ([1.0, 2.0, 3.0], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], 3.0):
        with pytest.raises(np.linalg.LinAlgError) as want:
            ref(np.asarray(bad))
        with pytest.raises(linalg.LinAlgError) as got:
            f(bad)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("fname", ["qr", "svd", "svdvals", "matrix_norm"])
def test_too_few_dimensions(fname):
    with pytest.raises(np.linalg.LinAlgError, match="1-dimensional array given"):
        getattr(linalg, fname)([1.0, 2.0])


def test_numpy_arrays_are_refused():
    for f in (linalg.det, linalg.inv, linalg.svd, linalg.qr, linalg.norm):
        with pytest.raises(TypeError, match="gpuarr.asarray"):
            f(np.eye(2))
    with pytest.raises(TypeError, match="b is a numpy.ndarray"):
        linalg.solve([[1.0]], np.ones(1))


def test_float16_is_refused_as_numpy_does():
    with pytest.raises(TypeError, match="array type float16 is unsupported in linalg"):
        _linalg._compute_type(np.float16)


def test_mode_and_uplo_errors():
    with pytest.raises(ValueError, match="Unrecognized mode 'x'"):
        linalg.qr([[1.0]], mode="x")
    with pytest.raises(NotImplementedError, match="raw"):
        linalg.qr([[1.0]], mode="raw")
    with pytest.raises(ValueError, match="UPLO argument must be 'L' or 'U'"):
        linalg.eigh([[1.0]], UPLO="X")
    with pytest.raises(ValueError, match="UPLO argument must be 'L' or 'U'"):
        linalg.eigvalsh([[1.0]], UPLO=None)


SOLVE_SHAPES = [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)), ((2, 3, 3), (3, 4)),
                ((2, 1, 3, 3), (4, 3, 1)), ((3, 3), (5, 3, 2)), ((1, 3, 3), (2, 3, 3)),
                ((0, 3, 3), (3, 1)), ((3, 3), (3, 0)), ((0, 0), (0,))]


@pytest.mark.parametrize("a_shape,b_shape", SOLVE_SHAPES)
def test_solve_plan_matches_numpys_shapes(a_shape, b_shape):
    n = a_shape[-1]
    a = np.broadcast_to(np.eye(n), a_shape)
    b = np.ones(b_shape)
    want = np.linalg.solve(a, b)
    batch, n2, k, vector, which = _linalg.solve_plan(a_shape, b_shape)
    assert n2 == n
    assert (batch + (n,) if vector else batch + (n, k)) == want.shape
    assert len(which) == int(np.prod(batch))
    # each result matrix uses the a that NumPy broadcasts to it
    ids = np.arange(int(np.prod(a_shape[:-2]))).reshape(a_shape[:-2])
    assert which == np.broadcast_to(ids, batch).ravel().tolist()


@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (2,)), ((3, 3), (2, 1)),
                                             ((2, 3, 3), (3, 3, 1)), ((2, 3, 3), (2, 3))])
def test_solve_shape_errors_are_numpys(a_shape, b_shape):
    with pytest.raises(ValueError) as want:
        np.linalg.solve(np.ones(a_shape), np.ones(b_shape))
    with pytest.raises(ValueError) as got:
        linalg.solve(np.ones(a_shape).tolist(), np.ones(b_shape).tolist())
    if "mismatch" in str(want.value):
        assert str(got.value) == str(want.value)


def test_norm_errors():
    with pytest.raises(TypeError, match="gpuarr.asarray"):
        linalg.vector_norm(np.ones(3))


# ============================== without a GPU: the transpose identities ====
# What cuSOLVER does to a column-major buffer, done by SciPy's LAPACK on
# the matrix that buffer holds: a C copy of A read column-major is Aᵀ.

def _col_major(packed):
    """The matrix cuSOLVER sees in a C-contiguous n x m buffer: its transpose."""
    return packed.T


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lu_identities(rng, dtype):
    n = 6
    a = conditioned(rng, (n, n), dtype)
    lu, piv = scipy_linalg.lu_factor(_col_major(a.copy()))          # getrf of Aᵀ
    packed_lu = lu.T                                                  # back in the C buffer
    swaps = np.count_nonzero(piv + 1 != np.arange(1, n + 1))
    det = np.prod(np.diagonal(packed_lu)) * (-1) ** swaps
    np.testing.assert_allclose(det, np.linalg.det(a), rtol=1e-10)
    # inv: getrs(N) against I; Y column-major, read row-major as Yᵀ
    y = scipy_linalg.lu_solve((lu, piv), np.eye(n, dtype=dtype), trans=0)
    np.testing.assert_allclose(y.T, np.linalg.inv(a), rtol=1e-9, atol=1e-12)
    # solve: getrs(T) on B copied column-major; X read through the same view
    b = rng.standard_normal((n, 3)).astype(dtype)
    x = scipy_linalg.lu_solve((lu, piv), b, trans=1)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_identity(rng, dtype, upper):
    n = 5
    a = spd(rng, (n, n), dtype)
    # NumPy reads the lower triangle (upper=True: the upper one): spoil the other
    spoiled = np.triu(a) + np.tril(np.full((n, n), 99.0), -1) if upper else \
        np.tril(a) + np.triu(np.full((n, n), 99.0), 1)
    uplo = _linalg.cholesky_uplo(upper)
    m = _col_major(spoiled.copy())
    f = scipy_linalg.cholesky(m, lower=uplo == cusolver.LOWER, check_finite=False)
    packed = f.T                              # potrf's factor, read row-major
    got = np.triu(packed) if upper else np.tril(packed)
    want = np.linalg.cholesky(a, upper=upper)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("UPLO", ["L", "U"])
def test_eigh_identity(rng, dtype, UPLO):
    n = 5
    a = hermitian(rng, (n, n), dtype)
    spoiled = np.tril(a) + np.triu(np.full((n, n), 99.0), 1) if UPLO == "L" else \
        np.triu(a) + np.tril(np.full((n, n), 99.0), -1)
    uplo, column_major = _linalg.eigh_uplo(UPLO, np.dtype(dtype).kind == "c")
    assert (uplo == cusolver.LOWER) == ((UPLO == "L") == column_major)
    m = spoiled.copy() if column_major else _col_major(spoiled.copy())
    w, v = scipy_linalg.eigh(m, lower=uplo == cusolver.LOWER, check_finite=False)
    # the eigenvectors are the columns of the column-major result: packed.mT
    packed = v.T
    vectors = packed.mT if hasattr(packed, "mT") else np.swapaxes(packed, -1, -2)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(spoiled, UPLO=UPLO), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a @ vectors, vectors * w, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (1, 3), (3, 1)])
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_svd_identity(rng, shape, full, dtype):
    m, n = shape
    a = conditioned(rng, shape, dtype)
    transposed, M, N, jobu, jobvt, ucols = _linalg.svd_plan(m, n, full, True)
    assert M >= N and jobvt == "A"
    packed = a.copy() if transposed else a.T.copy()       # C buffers cuSOLVER reads
    mat = _col_major(packed)
    assert mat.shape == (M, N)
    u, s, vt = np.linalg.svd(mat, full_matrices=jobu == "A")
    assert u.shape == (M, ucols) and vt.shape == (N, N)
    upacked, vtpacked = u.T.copy(), vt.T.copy()            # written column-major
    U, S, Vh = _linalg.svd_vectors(transposed, upacked, vtpacked, s)
    want = np.linalg.svd(a, full_matrices=full)
    assert U.shape == want.U.shape and Vh.shape == want.Vh.shape
    k = min(m, n)
    np.testing.assert_allclose((U[:, :k] * S) @ Vh[:k], a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(U.conj().T @ U, np.eye(U.shape[1]), atol=1e-12)
    np.testing.assert_allclose(Vh @ Vh.conj().T, np.eye(Vh.shape[0]), atol=1e-12)


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (1, 3), (3, 1)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_qr_identity(rng, shape, mode, dtype):
    m, n = shape
    a = conditioned(rng, shape, dtype)
    k, rrows, qcols = _linalg.qr_plan(m, n, mode)
    geqrf, orgqr = scipy_linalg.lapack.get_lapack_funcs(
        ("geqrf", "ungqr" if np.dtype(dtype).kind == "c" else "orgqr"), (a,))
    packed = a.T.copy()                               # A column-major: the C buffer of Aᵀ
    h, tau, _, info = geqrf(_col_major(packed))
    assert info == 0 and tau.shape == (k,)
    packed = h.T.copy()                               # geqrf wrote over the buffer
    mats = packed.T
    r = np.triu(mats[:rrows, :])
    want = np.linalg.qr(a, mode=mode)
    if mode == "r":
        assert r.shape == want.shape
        np.testing.assert_allclose(np.abs(r), np.abs(want), rtol=1e-10, atol=1e-12)
        return
    if qcols <= n:
        q_in = mats[:, :qcols]
    else:
        q_in = np.zeros((m, m), dtype)
        q_in[:, :n] = mats
    q, _, info = orgqr(q_in, tau)
    assert info == 0
    assert q.shape == want.Q.shape and r.shape == want.R.shape
    np.testing.assert_allclose(q @ r, a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(q.conj().T @ q, np.eye(qcols), atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 6, 4), (2, 4, 6), (2, 5, 5), (2, 1, 3)])
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_batched_jacobi_svd_identity(rng, shape, full, dtype):
    a = conditioned(rng, shape, dtype)
    # gesvdjBatched on the column-major copy: A = U S Vᴴ, U and V column-major
    u, s, vh = np.linalg.svd(a)
    v = np.swapaxes(vh, -1, -2).conj()
    upacked = np.swapaxes(u, -1, -2).copy()          # the C buffers of column-major U and V
    vpacked = np.swapaxes(v, -1, -2).copy()
    U, S, Vh = _linalg.svdj_vectors(upacked, vpacked, s, full, np.conj)
    want = np.linalg.svd(a, full_matrices=full)
    assert U.shape == want.U.shape and Vh.shape == want.Vh.shape
    k = min(shape[-2:])
    np.testing.assert_allclose((U[..., :, :k] * S[..., None, :]) @ Vh[..., :k, :], a,
                               rtol=1e-10, atol=1e-12)


def test_svd_plan_without_vectors():
    assert _linalg.svd_plan(3, 5, True, False) == (True, 5, 3, "N", "N", 0)
    assert _linalg.svd_plan(5, 3, False, False) == (False, 5, 3, "N", "N", 0)


# =================================================== loading cuSOLVER ====

def test_missing_cusolver_names_every_place_searched(monkeypatch, tmp_path):
    _libraries.check_missing_library(monkeypatch, tmp_path, cusolver, "libcusolver.so.12",
                                     cusolver.find_cusolver, cusolver.CUSOLVERError,
                                     ['pip install "gpuarr[cusolver]"', "nvidia-cusolver"])


def test_cusolver_search_order(monkeypatch, tmp_path):
    site = tmp_path / "site-packages"
    wheel = site / "nvidia" / "cusolver" / "lib"
    wheel.mkdir(parents=True)
    (wheel / "libcusolver.so.11").write_bytes(b"")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(sys, "path", [str(site)])
    places = list(dict.fromkeys(p for p, _ in cusolver._candidates()))
    assert places == [str(site / "nvidia" / "cu13" / "lib"), str(wheel), _libs.SYSTEM,
                      "/usr/local/cuda/lib64"]
    place, path, _ = _libs.find(cusolver._NAMES, cusolver._WHEEL_SUBDIRS)
    assert (place, path) == (str(wheel), str(wheel / "libcusolver.so.11"))


def test_cusolver_loads_where_installed():
    _libraries.check_loads_where_installed(cusolver.find_cusolver, cusolver.CUSOLVERError,
                                           "cusolver", cusolver.get_version, 11000)


def test_import_does_not_load_cusolver():
    _libraries.check_import_does_not_load("""
        import gpuarr, gpuarr.linalg
        try:
            gpuarr.linalg.inv([[1.0, 2.0, 3.0]])
        except gpuarr.linalg.LinAlgError:
            pass
    """, "libcusolver")


def test_numpy_linalg_dispatches_to_gpuarr_linalg():
    from gpuarr._interop import _implementation
    for name in ("det", "slogdet", "inv", "solve", "cholesky", "qr", "svd", "svdvals", "eigh",
                 "eigvalsh", "norm", "matrix_norm", "vector_norm", "matrix_rank", "cross",
                 "diagonal", "trace", "outer", "matrix_transpose", "pinv", "lstsq",
                 "matrix_power", "multi_dot", "tensorinv", "tensorsolve"):
        assert _implementation(getattr(np.linalg, name)) == (f"linalg.{name}",
                                                             getattr(linalg, name))
    assert _implementation(np.linalg.eig)[1] is None       # general eigenproblems: not here


# ================================================================ GPU ====

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", [1, 2, 5, 17])
def test_det_slogdet(rng, dtype, batch, n):
    a = conditioned(rng, batch + (n, n), dtype, cond=10.0)
    a = (a * 2.0 ** rng.integers(-2, 3)).astype(dtype)       # not always |det| <= 1
    tol = 50 * n * eps(dtype) * 10
    d = linalg.det(gp.asarray(a))
    assert d.dtype == np.linalg.det(a).dtype and d.shape == batch
    np.testing.assert_allclose(host(d), np.linalg.det(a), rtol=tol)
    sign, logabs = linalg.slogdet(gp.asarray(a))
    want = np.linalg.slogdet(a)
    assert sign.dtype == want.sign.dtype and logabs.dtype == want.logabsdet.dtype
    np.testing.assert_allclose(host(sign), want.sign, rtol=tol, atol=tol)
    np.testing.assert_allclose(host(logabs), want.logabsdet, rtol=tol, atol=tol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
def test_det_of_singular_and_empty(dtype):
    a = np.array([[[1, 2], [2, 4]], [[0, 0], [0, 0]], [[3, 0], [0, 2]]], dtype)
    np.testing.assert_allclose(host(linalg.det(gp.asarray(a))), [0, 0, 6], atol=1e-5)
    sign, logabs = linalg.slogdet(gp.asarray(a))
    np.testing.assert_allclose(host(sign), [0, 0, 1], atol=1e-6)
    assert host(logabs)[1] == -np.inf
    assert float(host(logabs)[2]) == pytest.approx(np.log(6), rel=1e-5)
    e = np.zeros((2, 0, 0), dtype)
    np.testing.assert_array_equal(host(linalg.det(gp.asarray(e))), np.linalg.det(e))
    s, l = linalg.slogdet(gp.asarray(e))
    np.testing.assert_array_equal(host(s), np.linalg.slogdet(e).sign)
    np.testing.assert_array_equal(host(l), np.linalg.slogdet(e).logabsdet)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.uint8])
def test_integers_promote_to_float64(dtype):
    a = np.array([[2, 1], [1, 3]]).astype(dtype) if dtype != np.bool_ else \
        np.array([[1, 0], [1, 1]], dtype)
    for f in ("det", "inv", "eigvalsh", "svdvals"):
        got, want = getattr(linalg, f)(gp.asarray(a)), getattr(np.linalg, f)(a)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_allclose(host(got), want, rtol=1e-12, atol=1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", [1, 3, 8, 33])
def test_inv(rng, dtype, batch, n):
    cond = 100.0
    a = conditioned(rng, batch + (n, n), dtype, cond)
    got = linalg.inv(gp.asarray(a))
    want = np.linalg.inv(a)
    assert got.dtype == want.dtype
    close(host(got), want, 20 * n * eps(dtype) * cond)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_inv_of_views(rng, dtype):
    big = conditioned(rng, (3, 12, 12), dtype)
    dev = gp.asarray(big)
    for view, ref in ((dev[:, ::2, ::2], big[:, ::2, ::2]), (dev.mT, np.swapaxes(big, 1, 2)),
                      (dev[::2, 1:6, 2:7], big[::2, 1:6, 2:7])):
        cond = np.linalg.cond(ref).max()
        close(host(linalg.inv(view)), np.linalg.inv(ref), 50 * 12 * eps(dtype) * cond)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
def test_inv_and_solve_of_singular_raise(dtype):
    sing = np.array([[1, 2], [2, 4]], dtype)
    good = np.eye(2, dtype=dtype)
    for a in (sing, np.stack([good, sing, good])):
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            linalg.inv(gp.asarray(a))
        with pytest.raises(linalg.LinAlgError, match="Singular matrix"):
            linalg.solve(gp.asarray(a), gp.ones(2, dtype=dtype))


@pytest.mark.gpu
def test_inv_of_empty_and_1x1():
    e = np.zeros((3, 0, 0))
    assert linalg.inv(gp.asarray(e)).shape == np.linalg.inv(e).shape
    np.testing.assert_allclose(host(linalg.inv(gp.asarray([[4.0]]))), [[0.25]])


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("a_shape,b_shape", [s for s in SOLVE_SHAPES if 0 not in s[0] + s[1]])
def test_solve(rng, dtype, a_shape, b_shape):
    cond = 100.0
    a = conditioned(rng, a_shape, dtype, cond)
    b = rng.standard_normal(b_shape).astype(dtype)
    got = linalg.solve(gp.asarray(a), gp.asarray(b))
    want = np.linalg.solve(a, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    close(host(got), want, 20 * a_shape[-1] * eps(dtype) * cond)


@pytest.mark.gpu
@pytest.mark.parametrize("a_shape,b_shape", [s for s in SOLVE_SHAPES if 0 in s[0] + s[1]])
def test_solve_empty(a_shape, b_shape):
    want = np.linalg.solve(np.broadcast_to(np.eye(a_shape[-1]), a_shape), np.ones(b_shape))
    got = linalg.solve(gp.asarray(np.broadcast_to(np.eye(a_shape[-1]), a_shape).copy()),
                       gp.ones(b_shape))
    assert got.shape == want.shape and got.dtype == want.dtype


@pytest.mark.gpu
@pytest.mark.parametrize("da,db", [(np.float32, np.complex128), (np.int64, np.float32),
                                   (np.complex64, np.float32), (np.float32, np.int8)])
def test_solve_mixed_types_and_views(rng, da, db):
    a = conditioned(rng, (4, 6, 6), np.float64, 10.0).astype(da) if np.dtype(da).kind != "i" \
        else (rng.integers(-5, 6, (4, 6, 6)) + 20 * np.eye(6, dtype=int)).astype(da)
    b = (rng.standard_normal((6, 8)) * 4).astype(db)
    got = linalg.solve(gp.asarray(a).mT, gp.asarray(b)[:, ::2])
    want = np.linalg.solve(np.swapaxes(a, 1, 2), b[:, ::2])
    assert got.dtype == want.dtype
    close(host(got), want, 1e3 * eps(want.dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_solve_ill_conditioned_has_a_small_residual(rng, dtype):
    n = 40
    cond = 1e5 if dtype == np.float32 else 1e12
    a = conditioned(rng, (n, n), dtype, cond)
    b = rng.standard_normal((n, 2)).astype(dtype)
    x = host(linalg.solve(gp.asarray(a), gp.asarray(b))).astype(np.float64)
    a64 = a.astype(np.float64)
    residual = np.linalg.norm(a64 @ x - b) / (np.linalg.norm(a64, 2) * np.linalg.norm(x)
                                              + np.linalg.norm(b))
    assert residual <= 100 * n * eps(dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", [1, 4, 40])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(rng, dtype, batch, n, upper):
    a = spd(rng, batch + (n, n), dtype)
    # only one triangle is read: spoil the other
    tri = np.triu if upper else np.tril
    spoiled = tri(a) + (np.tril(np.full((n, n), 7.0), -1) if upper
                        else np.triu(np.full((n, n), 7.0), 1)).astype(dtype)
    got = host(linalg.cholesky(gp.asarray(spoiled), upper=upper))
    want = np.linalg.cholesky(a, upper=upper)
    assert got.dtype == want.dtype and got.shape == want.shape
    close(got, want, 50 * n * eps(dtype) * 10)
    assert np.all(got == tri(got))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
def test_cholesky_not_positive_definite_raises(dtype):
    bad = np.array([[1, 2], [2, 1]], dtype)
    for a in (bad, np.stack([np.eye(2, dtype=dtype), bad])):
        with pytest.raises(np.linalg.LinAlgError, match="Matrix is not positive definite"):
            linalg.cholesky(gp.asarray(a))


@pytest.mark.gpu
def test_cholesky_empty_and_views(rng):
    assert linalg.cholesky(gp.zeros((2, 0, 0))).shape == (2, 0, 0)
    a = spd(rng, (3, 10, 10), np.float64)
    got = linalg.cholesky(gp.asarray(a)[:, ::2, ::2])
    close(host(got), np.linalg.cholesky(a[:, ::2, ::2]), 1e-12)


def _check_qr(a, q, r, mode, dtype):
    want = np.linalg.qr(a, mode=mode)
    m, n = a.shape[-2:]
    tol = 100 * max(m, n, 1) * eps(dtype)
    if mode == "r":
        assert r.shape == want.shape and r.dtype == want.dtype
        # R is unique up to the phases of its rows: compare |R|ᴴ|R| = AᴴA
        close(np.swapaxes(r, -1, -2).conj() @ r, np.swapaxes(a, -1, -2).conj() @ a, tol)
        return
    assert q.shape == want.Q.shape and r.shape == want.R.shape and q.dtype == want.Q.dtype
    close(q @ r, a, tol, scale=max(np.linalg.norm(a.ravel()), 1.0))
    eye = np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2)
    close(np.swapaxes(q, -1, -2).conj() @ q, eye, tol, scale=max(q.shape[-1], 1))
    assert np.all(r == np.triu(r))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 5), (7, 3), (3, 7), (1, 1), (1, 4), (4, 1), (2, 6, 4),
                                   (2, 2, 3, 5), (40, 20)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(rng, dtype, shape, mode):
    a = conditioned(rng, shape, dtype, 100.0)
    got = linalg.qr(gp.asarray(a), mode=mode)
    if mode == "r":
        _check_qr(a, None, host(got), mode, dtype)
    else:
        _check_qr(a, host(got.Q), host(got.R), mode, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 0)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_empty(shape, mode):
    a = np.zeros(shape)
    got, want = linalg.qr(gp.asarray(a), mode=mode), np.linalg.qr(a, mode=mode)
    if mode == "r":
        assert got.shape == want.shape
    else:
        np.testing.assert_array_equal(host(got.Q), want.Q)
        np.testing.assert_array_equal(host(got.R), want.R)


@pytest.mark.gpu
def test_qr_of_views(rng):
    a = conditioned(rng, (9, 9), np.complex128)
    q, r = linalg.qr(gp.asarray(a)[1::2, ::3].mT)
    _check_qr(a[1::2, ::3].T, host(q), host(r), "reduced", np.complex128)


def _check_svd(a, got, full, dtype, cond):
    want = np.linalg.svd(a, full_matrices=full)
    u, s, vh = host(got.U), host(got.S), host(got.Vh)
    assert u.shape == want.U.shape and s.shape == want.S.shape and vh.shape == want.Vh.shape
    assert u.dtype == want.U.dtype and s.dtype == want.S.dtype
    m, n = a.shape[-2:]
    k = min(m, n)
    tol = 100 * max(m, n) * eps(dtype)
    close(s, want.S, tol)
    rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    close(rebuilt, a, tol * cond)
    for x, side in ((u, -1), (vh, -2)):
        g = np.swapaxes(x, -1, -2).conj() @ x if side == -1 else x @ np.swapaxes(x, -1, -2).conj()
        close(g, np.broadcast_to(np.eye(g.shape[-1]), g.shape), tol, scale=g.shape[-1])


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 5), (8, 3), (3, 8), (1, 1), (1, 5), (5, 1), (3, 6, 4),
                                   (2, 2, 4, 6), (4, 32, 32), (3, 1, 1), (50, 30), (2, 40, 33),
                                   (2, 33, 4)])
@pytest.mark.parametrize("full", [True, False])
def test_svd(rng, dtype, shape, full):
    a = conditioned(rng, shape, dtype, 100.0)
    _check_svd(a, linalg.svd(gp.asarray(a), full_matrices=full), full, dtype, 100.0)
    s = linalg.svd(gp.asarray(a), compute_uv=False)
    close(host(s), np.linalg.svd(a, compute_uv=False), 100 * max(shape) * eps(dtype))
    close(host(linalg.svdvals(gp.asarray(a))), np.linalg.svdvals(a),
          100 * max(shape) * eps(dtype))


@pytest.mark.gpu
def test_svd_of_views_and_rank_deficient(rng):
    a = conditioned(rng, (4, 10, 8), np.float64)
    a[1, :, 3] = a[1, :, 0]                         # rank deficient
    dev = gp.asarray(a)
    _check_svd(a[:, ::2, 1:].transpose(0, 2, 1),
               linalg.svd(dev[:, ::2, 1:].mT, full_matrices=False), False, np.float64, 100.0)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 0)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_empty(shape, full):
    a = np.zeros(shape)
    got, want = linalg.svd(gp.asarray(a), full_matrices=full), np.linalg.svd(a, full_matrices=full)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(host(g), w)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
def test_svd_hermitian(rng, dtype):
    a = hermitian(rng, (3, 6, 6), dtype)
    _check_svd(a, linalg.svd(gp.asarray(a), hermitian=True), True, dtype, 10.0)
    close(host(linalg.svd(gp.asarray(a), compute_uv=False, hermitian=True)),
          np.linalg.svd(a, compute_uv=False), 100 * 6 * eps(dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES + [(40,)])
@pytest.mark.parametrize("n", [1, 4, 32, 33])
@pytest.mark.parametrize("UPLO", ["L", "U", "u"])
def test_eigh(rng, dtype, batch, n, UPLO):
    a = hermitian(rng, batch + (n, n), dtype)
    tri = np.tril if UPLO.upper() == "L" else np.triu
    spoil = (np.triu(np.full((n, n), 5.0), 1) if UPLO.upper() == "L"
             else np.tril(np.full((n, n), 5.0), -1)).astype(dtype)
    spoiled = tri(a) + spoil
    w, v = linalg.eigh(gp.asarray(spoiled), UPLO=UPLO)
    want = np.linalg.eigh(spoiled, UPLO=UPLO)
    w, v = host(w), host(v)
    assert w.dtype == want.eigenvalues.dtype and v.dtype == want.eigenvectors.dtype
    assert w.shape == want.eigenvalues.shape and v.shape == want.eigenvectors.shape
    tol = 100 * n * eps(dtype)
    close(w, want.eigenvalues, tol)
    close(a @ v, v * w[..., None, :], tol, scale=max(np.linalg.norm(a.ravel()), 1.0))
    close(np.swapaxes(v, -1, -2).conj() @ v,
          np.broadcast_to(np.eye(n), v.shape), tol, scale=n)
    close(host(linalg.eigvalsh(gp.asarray(spoiled), UPLO=UPLO)), want.eigenvalues, tol)


@pytest.mark.gpu
def test_eigh_empty_and_views(rng):
    w, v = linalg.eigh(gp.zeros((3, 0, 0)))
    assert w.shape == (3, 0) and v.shape == (3, 0, 0)
    a = hermitian(rng, (12, 12), np.complex128)
    view = gp.asarray(a)[::2, ::2]
    close(host(linalg.eigvalsh(view)), np.linalg.eigvalsh(a[::2, ::2]), 1e-12)


@pytest.mark.gpu
def test_decompositions_run_on_the_current_stream(rng):
    a = conditioned(rng, (3, 20, 20), np.float64)
    b = rng.standard_normal((3, 20, 2))
    with gp.cuda.Stream(non_blocking=True) as s:
        x = linalg.solve(gp.asarray(a), gp.asarray(b))
        w = linalg.eigvalsh(gp.asarray(a + np.swapaxes(a, 1, 2)))
        s.synchronize()
    close(host(x), np.linalg.solve(a, b), 1e-10)
    close(host(w), np.linalg.eigvalsh(a + np.swapaxes(a, 1, 2)), 1e-10)


# ---------------------------------------------------------------- norms --

NORM_CASES = [((7,), None, None), ((7,), 0, None), ((7,), 1, None), ((7,), 2, None),
              ((7,), np.inf, None), ((7,), -np.inf, None), ((7,), 3, None), ((7,), 0.5, None),
              ((7,), -1, None), ((4, 5), None, None), ((4, 5), "fro", None),
              ((4, 5), "nuc", None), ((4, 5), 1, None), ((4, 5), -1, None), ((4, 5), 2, None),
              ((4, 5), -2, None), ((4, 5), np.inf, None), ((4, 5), -np.inf, None),
              ((3, 4, 5), None, 1), ((3, 4, 5), 3, -1), ((3, 4, 5), "fro", (0, 2)),
              ((3, 4, 5), 1, (2, 0)), ((3, 4, 5), np.inf, (0, 1)), ((3, 4, 5), -2, (1, 2)),
              ((3, 4, 5), "nuc", (2, 1)), ((3, 4, 5), None, None)]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32])
@pytest.mark.parametrize("shape,ord,axis", NORM_CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm(rng, dtype, shape, ord, axis, keepdims):
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape).astype(dtype)
    want = np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    got = linalg.norm(gp.asarray(x), ord=ord, axis=axis, keepdims=keepdims)
    assert got.dtype == want.dtype and got.shape == np.shape(want)
    close(host(got), want, 100 * eps(want.dtype) * max(shape))


@pytest.mark.gpu
def test_norm_errors_are_numpys():
    x = gp.ones((3, 4))
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        linalg.norm(gp.ones(3), "fro")
    with pytest.raises(ValueError, match="Invalid norm order for matrices"):
        linalg.norm(x, 3)
    with pytest.raises(ValueError, match="Duplicate axes given"):
        linalg.norm(x, axis=(1, 1))
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        linalg.norm(gp.ones((2, 2, 2)), axis=(0, 1, 2))


@pytest.mark.gpu
@pytest.mark.parametrize("ord", [2, 1, np.inf, -np.inf, 0, 3])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norm(rng, ord, axis, keepdims):
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    want = np.linalg.vector_norm(x, ord=ord, axis=axis, keepdims=keepdims)
    got = linalg.vector_norm(gp.asarray(x), ord=ord, axis=axis, keepdims=keepdims)
    assert got.dtype == want.dtype and got.shape == np.shape(want)
    close(host(got), want, 1e-5)


@pytest.mark.gpu
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norm(rng, ord, keepdims):
    x = rng.standard_normal((2, 4, 5)) + 1j * rng.standard_normal((2, 4, 5))
    want = np.linalg.matrix_norm(x, ord=ord, keepdims=keepdims)
    got = linalg.matrix_norm(gp.asarray(x), ord=ord, keepdims=keepdims)
    assert got.dtype == want.dtype and got.shape == np.shape(want)
    close(host(got), want, 1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("hermitian", [False, True])
def test_matrix_rank(rng, hermitian):
    ranks = [0, 1, 3, 6]
    mats = []
    for r in ranks:
        f = rng.standard_normal((6, r))
        mats.append(f @ f.T if hermitian else f @ rng.standard_normal((r, 6)))
    a = np.stack(mats)
    got = linalg.matrix_rank(gp.asarray(a), hermitian=hermitian)
    np.testing.assert_array_equal(host(got), np.linalg.matrix_rank(a, hermitian=hermitian))
    np.testing.assert_array_equal(host(got), ranks)
    np.testing.assert_array_equal(host(linalg.matrix_rank(gp.asarray(a), tol=1e-3)),
                                  np.linalg.matrix_rank(a, tol=1e-3))
    np.testing.assert_array_equal(host(linalg.matrix_rank(gp.asarray(a), rtol=0.5)),
                                  np.linalg.matrix_rank(a, rtol=0.5))
    assert int(host(linalg.matrix_rank(gp.asarray([0.0, 0.0])))) == 0
    assert int(host(linalg.matrix_rank(gp.asarray([0.0, 2.0])))) == 1
    with pytest.raises(ValueError, match="can't be both set"):
        linalg.matrix_rank(gp.asarray(a), tol=1.0, rtol=1.0)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128])
def test_cross_diagonal_trace_outer(rng, dtype):
    x1 = (rng.standard_normal((4, 3)) * 5).astype(dtype)
    x2 = (rng.standard_normal((2, 1, 3)) * 5).astype(dtype)
    got = linalg.cross(gp.asarray(x1), gp.asarray(x2))
    want = np.linalg.cross(x1, x2)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(host(got), want, rtol=1e-5)
    y1, y2 = np.moveaxis(x1, -1, 0), np.moveaxis(x2[0], -1, 0)
    np.testing.assert_allclose(host(linalg.cross(gp.asarray(y1), gp.asarray(y2), axis=0)),
                               np.linalg.cross(y1, y2, axis=0), rtol=1e-5)
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        linalg.cross(gp.ones((2, 2)), gp.ones((2, 2)))
    m = (rng.standard_normal((2, 4, 5)) * 5).astype(dtype)
    for off in (0, 1, -2):
        np.testing.assert_array_equal(host(linalg.diagonal(gp.asarray(m), offset=off)),
                                      np.linalg.diagonal(m, offset=off))
        got, want = linalg.trace(gp.asarray(m), offset=off), np.linalg.trace(m, offset=off)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(host(got), want, rtol=1e-5)
    v1, v2 = x1[0], x2[0, 0]
    np.testing.assert_allclose(host(linalg.outer(gp.asarray(v1), gp.asarray(v2))),
                               np.linalg.outer(v1, v2), rtol=1e-6)
    np.testing.assert_array_equal(host(linalg.matrix_transpose(gp.asarray(m))),
                                  np.linalg.matrix_transpose(m))


@pytest.mark.gpu
def test_numpy_linalg_on_device_arrays_runs_on_the_device(rng):
    a = conditioned(rng, (5, 5), np.float64)
    d = np.linalg.det(gp.asarray(a))
    assert isinstance(d, gp.ndarray)
    np.testing.assert_allclose(host(d), np.linalg.det(a), rtol=1e-12)
    missing = [n for n in ("eig", "eigvals", "cond") if n not in linalg.__all__]
    if missing:
        with pytest.raises(TypeError, match=f"does not implement numpy.linalg.{missing[0]}"):
            getattr(np.linalg, missing[0])(gp.asarray(a))


@pytest.mark.gpu
def test_array_api_namespace_has_linalg(rng):
    a = gp.asarray(spd(rng, (4, 4), np.float64))
    xp = a.__array_namespace__()
    assert xp.linalg is linalg
    close(host(xp.linalg.cholesky(a, upper=True)), np.linalg.cholesky(host(a), upper=True),
          1e-12)


# ========================================================== benchmarks ====

def _bench():
    return _repo.load_script("gpuarr_bench_linalg", "benchmarks", "bench_linalg.py")


def test_benchmark_cases_are_registered_and_list_without_a_gpu():
    bench = _bench()
    cases = [c for c in bench.run.CASES if c.issue == bench.ISSUE]
    assert sorted(c.name for c in cases) == ["linalg_eigh_4096_f64", "linalg_solve_4096_f64",
                                             "linalg_svd_4096_f64"]
    assert bench.run.check_coverage(cases) == []
    path = os.path.join(_repo.REPO, "benchmarks", "bench_linalg.py")
    proc = subprocess.run([sys.executable, path, "--list"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "3 cases" in proc.stdout and "linalg_svd_4096_f64" in proc.stdout


def test_benchmark_checks_catch_wrong_factors(rng, monkeypatch):
    bench = _bench()
    a = rng.standard_normal((8, 8))
    monkeypatch.setattr(bench, "N", 8)
    monkeypatch.setattr(bench, "_general", lambda: a)
    monkeypatch.setattr(bench, "_symmetric", lambda: a + a.T)
    u, s, vh = np.linalg.svd(a)
    assert bench.check_svd((u, s, vh), None) is None
    assert "U S Vh" in bench.check_svd((u, s * 1.01, vh), None)
    assert "descending" in bench.check_svd((u, s[::-1], vh), None)
    w, v = np.linalg.eigh(a + a.T)
    assert bench.check_eigh((w, v), None) is None
    assert "A V" in bench.check_eigh((w * 1.01, v), None)
    assert "orthonormal" in bench.check_eigh((w, v * 1.01), None)


# ===================================== GPU: built on matrix products ====

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 4), (3, 1, 1), (0, 3)])
def test_pinv(rng, dtype, shape):
    a = conditioned(rng, shape, dtype, 100.0)
    got = linalg.pinv(gp.asarray(a))
    assert got.dtype == np.linalg.pinv(a).dtype
    close(host(got), np.linalg.pinv(a), 1000 * max(shape) * eps(dtype))


@pytest.mark.gpu
def test_pinv_cuts_small_singular_values():
    a = np.diag([1.0, 1e-3, 1e-12])
    for kw in ({}, {"rcond": 1e-2}, {"rtol": 1e-2}, {"rtol": None}, {"rcond": np.array(1e-6)}):
        close(host(linalg.pinv(gp.asarray(a), **kw)), np.linalg.pinv(a, **kw), 1e-12)
    for rtol in (1e-3, None):
        with pytest.raises(ValueError):
            linalg.pinv(gp.asarray(a), rcond=1e-3, rtol=rtol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("m,n,k", [(8, 3, None), (8, 3, 2), (3, 8, None), (5, 5, 3), (6, 0, 2),
                                   (0, 4, None)])
def test_lstsq(rng, dtype, m, n, k):
    a = conditioned(rng, (m, n), dtype, 100.0)
    b = rng.standard_normal((m,) if k is None else (m, k)).astype(dtype)
    x, res, rank, s = linalg.lstsq(gp.asarray(a), gp.asarray(b))
    wx, wres, wrank, ws = np.linalg.lstsq(a, b)
    assert int(rank) == int(wrank)
    assert x.dtype == wx.dtype and res.dtype == wres.dtype and s.dtype == ws.dtype
    tol = 1000 * max(m, n, 1) * eps(dtype)
    close(host(x), wx, tol)
    close(host(s), ws, tol)
    close(host(res), wres, 100 * tol, scale=max(1.0, float(np.abs(wres).max(initial=0))))


@pytest.mark.gpu
def test_lstsq_rank_deficient_and_errors():
    a = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    b = np.array([1.0, 2.0, 2.0])
    x, res, rank, s = linalg.lstsq(gp.asarray(a), gp.asarray(b))
    wx, wres, wrank, ws = np.linalg.lstsq(a, b)
    assert rank == wrank == 1 and res.shape == wres.shape == (0,)
    close(host(x), wx, 1e-12)
    with pytest.raises(np.linalg.LinAlgError, match="Incompatible dimensions"):
        linalg.lstsq(gp.asarray(a), gp.ones(4))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, -1, -4])
def test_matrix_power(rng, dtype, n):
    if np.dtype(dtype).kind == "i":
        a = rng.integers(-2, 3, (2, 3, 3)).astype(dtype)
        if n < 0:
            a = np.broadcast_to(np.eye(3, dtype=dtype) * 2, (2, 3, 3)).copy()
    else:
        a = conditioned(rng, (2, 3, 3), dtype, 4.0)
    got, want = linalg.matrix_power(gp.asarray(a), n), np.linalg.matrix_power(a, n)
    assert got.dtype == want.dtype and got.shape == want.shape
    if np.dtype(dtype).kind == "i" and n >= 0:
        np.testing.assert_array_equal(host(got), want)
    else:
        # each product's rounding is relative to the norms of its factors,
        # which for powers of a non-normal matrix exceed the result's norm
        base = np.linalg.inv(a) if n < 0 else a
        scale = np.linalg.norm(base.astype(np.complex128), 2, axis=(-2, -1)).max() ** abs(n)
        close(host(got), want, 100 * max(abs(n), 1) * eps(want.dtype),
              scale=scale * np.sqrt(want.size))
    with pytest.raises(TypeError):
        linalg.matrix_power(gp.asarray(a), 1.5)
    with pytest.raises(np.linalg.LinAlgError):
        linalg.matrix_power(gp.ones((2, 3)), 2)


@pytest.mark.gpu
@pytest.mark.parametrize("shapes", [[(3,), (3, 20), (20, 4), (4,)], [(10, 30), (30, 5), (5, 60)],
                                    [(2, 7), (7, 7), (7, 1), (1, 9)], [(5,), (5, 2), (2, 6)],
                                    [(4, 6), (6, 3), (3,)]])
def test_multi_dot(rng, shapes):
    arrays = [rng.standard_normal(s) for s in shapes]
    got, want = linalg.multi_dot([gp.asarray(x) for x in arrays]), np.linalg.multi_dot(arrays)
    assert got.shape == np.shape(want)
    close(host(got), want, 1e-12)
    out = gp.empty(np.shape(want))
    assert linalg.multi_dot([gp.asarray(x) for x in arrays], out=out) is out
    close(host(out), want, 1e-12)
    with pytest.raises(ValueError, match="at least two"):
        linalg.multi_dot([gp.asarray(arrays[0])])


@pytest.mark.gpu
def test_tensorinv_and_tensorsolve(rng):
    a = conditioned(rng, (24, 24), np.float64, 10.0).reshape(4, 6, 8, 3)
    close(host(linalg.tensorinv(gp.asarray(a), ind=2)), np.linalg.tensorinv(a, ind=2), 1e-12)
    b = rng.standard_normal((4, 6))
    close(host(linalg.tensorsolve(gp.asarray(a), gp.asarray(b))), np.linalg.tensorsolve(a, b),
          1e-12)
    a2 = np.moveaxis(a, 0, -1)
    close(host(linalg.tensorsolve(gp.asarray(a2), gp.asarray(b.T.copy()), axes=(0,))),
          np.linalg.tensorsolve(a2, b.T.copy(), axes=(0,)), 1e-12)
    with pytest.raises(ValueError, match="Invalid ind"):
        linalg.tensorinv(gp.asarray(a), ind=0)
