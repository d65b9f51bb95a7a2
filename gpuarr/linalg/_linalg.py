"""numpy.linalg on device arrays: cuSOLVER's factorisations, and the rest
composed from gpuarr's own device operations.

Every decomposition goes through one path:

1. Arguments as NumPy takes them, with NumPy's errors: LinAlgError for
   fewer than two dimensions and for non-square matrices where square ones
   are needed, ValueError for a bad mode/UPLO or mismatched shapes,
   TypeError for float16 ("array type float16 is unsupported in linalg").
   NumPy's types (``_compute_type``): float32, float64, complex64 and
   complex128 stay; integers and booleans are computed in float64; a
   mixed pair is double when either is double and complex when either is
   complex.
2. The input is copied once, in the compute type, into a work array whose
   matrices are packed one after the other, each in the order cuSOLVER
   reads (column-major).  A row-major (C) matrix read column-major is its
   transpose, so most routines take the C copy as it is and use a
   transpose identity instead of a transposing copy:

   - LU (det, slogdet, inv, solve): getrf factors Aᵀ.  det(Aᵀ) = det(A);
     inv solves Aᵀ Y = I, whose column-major Y is A⁻¹ read row-major;
     solve runs getrs with op = transpose, (Aᵀ)ᵀ X = B, on a right-hand
     side copied column-major (getrs overwrites it, so that copy is needed
     anyway).
   - Cholesky: the C copy of a Hermitian A is conj(A) column-major;
     potrf's upper factor U of conj(A) = Uᴴ U is, read row-major, NumPy's
     lower L (A = L Lᴴ with L = Uᵀ); upper=True asks potrf for the lower
     factor instead.  potrf reads and writes one triangle: the other is
     zeroed afterwards (tril/triu).
   - eigh: real symmetric matrices are their own transposes, so the C copy
     is used with UPLO flipped; a complex one is copied column-major (its
     transpose is its conjugate, whose eigenvectors are conjugated).
   - svd: gesvd needs rows >= columns.  A tall or square A is copied
     column-major (A = U S Vᴴ directly); a wide one is used as its C copy,
     Aᵀ, whose factors give A's transposed (A = VTᵀ S Uᵀ): U and Vh come
     out as views of cuSOLVER's outputs in either case.
   - qr: geqrf of A itself, so A is copied column-major; orgqr/ungqr then
     forms Q in place (or in an m x m array for mode='complete').

   Results are views of those arrays with the strides that make them read
   as NumPy's (a column-major matrix is a row-major view with its last two
   strides swapped), so they may be F-ordered per matrix where NumPy's are
   C-ordered; values and shapes are NumPy's.
3. Batches (the leading axes) run as one cuSOLVER call per matrix on
   gpuarr's current stream, with one workspace from the memory pool for
   all of them, except where cuSOLVER has a batched routine that is better:
   Cholesky of a batch uses potrfBatched (one call, any size: it is
   cuSOLVER's own loop, without per-matrix host overhead), eigh of a batch
   of matrices up to 32 x 32 uses syevBatched (one call; CUDA 12.6+; the
   divide-and-conquer syevd is better for large matrices), and svd of a
   batch of matrices up to 32 x 32 uses gesvdjBatched (one call, Jacobi
   to machine accuracy, on the column-major copy, any shape; it returns V,
   conjugated into Vh for complex types).  LU has no batched routine in
   cuSOLVER (getrfBatched is cuBLAS's); larger svds loop over gesvd.
4. Errors that depend on the data are read from cuSOLVER's info on the
   device: inv and solve raise LinAlgError("Singular matrix") and cholesky
   LinAlgError("Matrix is not positive definite"), each after one
   synchronisation, as NumPy does.  det and slogdet give 0 and (0, -inf)
   for singular matrices without synchronising; svd and eigh do not
   synchronise to check convergence (NumPy raises LinAlgError when LAPACK
   does not converge; cuSOLVER's result is then unspecified).

Reductions (det, slogdet, norms, matrix_rank) return device arrays (0-d
for one matrix), as every gpuarr reduction does.  The functions that need
a general matrix product are compositions of the above with gpuarr's
matrix products (gpuarr/_linalg.py, cuBLAS): pinv and lstsq from the SVD
(singular values at most rcond times the largest taken as zero, as
LAPACK's gelsd does), matrix_power by repeated squaring, multi_dot in the
cheapest order of the chain, tensorinv and tensorsolve through inv and
solve of the reshaped operands.  gpuarr.linalg forwards matmul, tensordot
and vecdot to gpuarr's.
"""
import collections
import math
import operator

import numpy

import gpuarr as gp
from .. import _core
from .._convolve import as_operand, to_device
from ..cuda import cusolver
from ..cuda.cusolver import LOWER, UPPER, OP_N, OP_T, NOVECTOR, VECTOR

__all__ = ["LinAlgError", "det", "slogdet", "inv", "solve", "cholesky", "qr", "svd", "svdvals",
           "eigh", "eigvalsh", "norm", "vector_norm", "matrix_norm", "matrix_rank", "cross",
           "diagonal", "matrix_transpose", "trace", "outer", "pinv", "lstsq", "matrix_power",
           "multi_dot", "tensorinv", "tensorsolve", "SVDResult", "EighResult", "QRResult",
           "SlogdetResult"]


class LinAlgError(numpy.linalg.LinAlgError):
    """A linear-algebra error (a singular matrix, one that is not positive
    definite, too few dimensions); ``except numpy.linalg.LinAlgError``
    catches it."""

    __module__ = "gpuarr.linalg"


SVDResult = collections.namedtuple("SVDResult", "U S Vh")
EighResult = collections.namedtuple("EighResult", "eigenvalues eigenvectors")
QRResult = collections.namedtuple("QRResult", "Q R")
SlogdetResult = collections.namedtuple("SlogdetResult", "sign logabsdet")

# Batches of matrices up to this size go to cusolverDnXsyevBatched, and
# to gesvdjBatched (which takes no larger ones).
SYEV_BATCHED_MAX_N = 32
GESVDJ_BATCHED_MAX = 32

_SUPPORTED = {numpy.dtype(t) for t in (numpy.float32, numpy.float64, numpy.complex64,
                                       numpy.complex128)}


# ============================================================ arguments ====

def _compute_type(*dtypes):
    """NumPy's linalg type for these inputs (numpy.linalg's _commonType):
    float32/complex64 only when no input is double or integer."""
    double = is_complex = False
    for dt in dtypes:
        dt = numpy.dtype(dt)
        if dt.kind in "fc":
            if dt not in _SUPPORTED:
                raise TypeError(f"array type {dt} is unsupported in linalg")
            is_complex |= dt.kind == "c"
            double |= dt.itemsize == (16 if dt.kind == "c" else 8)
        elif dt.kind in "biu":
            double = True
        else:
            raise TypeError(f"array type {dt} is unsupported in linalg")
    if is_complex:
        return numpy.dtype(numpy.complex128 if double else numpy.complex64)
    return numpy.dtype(numpy.float64 if double else numpy.float32)


def _real_type(dtype):
    return numpy.dtype(dtype.char.lower()) if dtype.kind == "c" else numpy.dtype(dtype)


def _operand(a, fname, argname="a"):
    """a device array, or a scalar or sequence as a host array that the
    function uploads once its arguments are checked (NumPy arrays are
    refused: moving data is the caller's decision)."""
    return as_operand(a, f"linalg.{fname}", argname)


def _at_least_2d(a):
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least "
                          "two-dimensional")


def _square(a):
    _at_least_2d(a)
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")


def _square_operand(a, fname):
    """(a on the device, its compute type, n) for a function of a stack of
    n x n matrices, after NumPy's checks."""
    a = _operand(a, fname)
    _square(a)
    return to_device(a), _compute_type(a.dtype), a.shape[-1]


def _nbatch(shape):
    return math.prod(shape)


def solve_plan(a_shape, b_shape):
    """(batch shape, rows n, right-hand sides k, b is a vector, index of
    a's matrix for each matrix of the result): NumPy 2's solve shapes,
    b of shape (n,) or (..., n, k), batches broadcast.  No GPU needed."""
    n = a_shape[-1]
    vector = len(b_shape) == 1
    if vector:
        if b_shape[0] != n:
            raise ValueError(f"solve1: Input operand 1 has a mismatch in its core dimension 0, "
                             f"with gufunc signature (m,m),(m)->(m) (size {b_shape[0]} is "
                             f"different from {n})")
        batch, k = tuple(a_shape[:-2]), 1
    else:
        if b_shape[-2] != n:
            raise ValueError(f"solve: Input operand 1 has a mismatch in its core dimension 0, "
                             f"with gufunc signature (m,m),(m,n)->(m,n) (size {b_shape[-2]} is "
                             f"different from {n})")
        batch, k = numpy.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2])), b_shape[-1]
    a_batch = tuple(a_shape[:-2])
    which = numpy.broadcast_to(numpy.arange(_nbatch(a_batch)).reshape(a_batch), batch)
    return batch, n, k, vector, which.ravel().tolist()


def svd_plan(m, n, full_matrices, compute_uv):
    """How svd maps an m x n matrix onto gesvd, which needs rows >= columns:
    (transposed, M, N, jobu, U's columns): transposed when m < n (the C
    copy, Aᵀ, goes to gesvd as an M = n by N = m matrix); U is M x ucols,
    VT is N x N.  No GPU needed."""
    transposed = m < n
    M, N = (n, m) if transposed else (m, n)
    if not compute_uv:
        return transposed, M, N, "N", "N", 0
    return transposed, M, N, "A" if full_matrices else "S", "A", M if full_matrices else N


def qr_plan(m, n, mode):
    """(k reflectors, R's rows, Q's columns) of an m x n qr: Q is formed
    over A's own array when it has no more columns than A, else in an
    m x m array holding A's n columns first.  No GPU needed."""
    k = min(m, n)
    complete = mode == "complete"
    return k, m if complete else k, m if complete else k


def eigh_uplo(UPLO, is_complex):
    """(cuSOLVER's fill mode, copy column-major) for NumPy's UPLO ('L' or
    'U'): a real matrix's C copy is read with the triangle flipped, a
    complex one is copied column-major."""
    lower = UPLO == "L"
    if not is_complex:
        lower = not lower
    return (LOWER if lower else UPPER), is_complex


def cholesky_uplo(upper):
    """cuSOLVER's fill mode for the C copy: its upper factor is NumPy's
    lower one read row-major, and the other way round."""
    return LOWER if upper else UPPER


# ========================================================= work arrays ====

def _work(a, dtype, column_major):
    """(packed, matrices): a copy of a in dtype whose matrices are packed
    one after the other (packed is C-contiguous), each row-major or
    column-major; matrices is the view that reads as a."""
    if column_major:
        packed = a.mT.astype(dtype, order="C", copy=True)
        return packed, packed.mT
    packed = a.astype(dtype, order="C", copy=True)
    return packed, packed


class _Stack:
    """Addresses of the packed matrices (or vectors) of a C-contiguous
    array whose last `core` axes are one item."""

    def __init__(self, packed, core=2):
        self.ptr = packed.data.ptr
        shape = packed.shape
        self.count = _nbatch(shape[:len(shape) - core])
        self.step = _nbatch(shape[len(shape) - core:]) * packed.dtype.itemsize

    def __getitem__(self, i):
        return self.ptr + i * self.step


def _infos(count):
    """cuSOLVER's info words, zeroed: a routine that writes them only when
    something fails leaves 0, not whatever the pool's block held (and
    compute-sanitizer's initcheck sees no read of unwritten memory)."""
    return _core.zeros((max(count, 1),), dtype=numpy.int32)


def _raise_if_failed(info, message):
    """The one synchronisation of inv, solve and cholesky: NumPy's error
    when any matrix's info is positive."""
    if (info.get() > 0).any():
        raise LinAlgError(message)


def _lu(a, dtype):
    """(LU of each matrix's transpose, packed C; pivots (..., n) int64;
    infos): getrf over the C copy of a."""
    packed, _ = _work(a, dtype, False)
    n = a.shape[-1]
    pivots = _core.empty(a.shape[:-1], dtype=numpy.int64)
    lus, pivs = _Stack(packed), _Stack(pivots, 1)
    info = _infos(lus.count)
    infos = _Stack(info, 0)
    s = cusolver.solver()
    with s:
        work = s.getrf_workspace(dtype, n, lus[0], n)
        for i in range(lus.count):
            s.getrf(dtype, n, lus[i], n, pivs[i], work, infos[i])
    return packed, pivots, info


def _pivot_sign(pivots, n, dtype):
    """(-1) ** (number of row swaps) per matrix, in dtype."""
    swaps = gp.count_nonzero(pivots != gp.arange(1, n + 1, dtype=numpy.int64), axis=-1)
    return (1 - 2 * (swaps % 2)).astype(dtype)


# =================================================== LU: det ... solve ====

def det(a):
    """The determinant of each matrix over a's last two axes (a device array:
    0-d for one matrix), from LU; 0 for a singular matrix."""
    a, dtype, n = _square_operand(a, "det")
    with a.device:
        if n == 0 or a.size == 0:
            return gp.ones(a.shape[:-2], dtype=dtype)
        lu, pivots, _ = _lu(a, dtype)
        return lu.diagonal(0, -2, -1).prod(axis=-1) * _pivot_sign(pivots, n, dtype)


def slogdet(a):
    """SlogdetResult(sign, logabsdet) of each matrix: det = sign *
    exp(logabsdet); (0, -inf) for a singular matrix.  sign has a's compute
    type (a unit complex number for complex input), logabsdet its real type."""
    a, dtype, n = _square_operand(a, "slogdet")
    real = _real_type(dtype)
    with a.device:
        if n == 0 or a.size == 0:
            return SlogdetResult(gp.ones(a.shape[:-2], dtype=dtype),
                                 gp.zeros(a.shape[:-2], dtype=real))
        lu, pivots, _ = _lu(a, dtype)
        d = lu.diagonal(0, -2, -1)
        mag = gp.abs(d)
        logabsdet = gp.log(mag).sum(axis=-1)
        if dtype.kind == "c":
            zero = mag == 0
            unit = gp.where(zero, 0, d / gp.where(zero, 1, mag))
        else:
            unit = gp.sign(d)
        return SlogdetResult(unit.prod(axis=-1) * _pivot_sign(pivots, n, dtype), logabsdet)


def inv(a):
    """The inverse of each matrix; LinAlgError("Singular matrix") when one
    is singular (one synchronisation).  getrs against the identity."""
    a, dtype, n = _square_operand(a, "inv")
    with a.device:
        out = _core.empty(a.shape, dtype=dtype)
        if a.size == 0:
            return out
        lu, pivots, info = _lu(a, dtype)
        out[...] = gp.eye(n, dtype=dtype)
        lus, pivs, outs = _Stack(lu), _Stack(pivots, 1), _Stack(out)
        scratch = _infos(1)
        s = cusolver.solver()
        with s:
            for i in range(lus.count):
                s.getrs(dtype, OP_N, n, n, lus[i], n, pivs[i], outs[i], n, scratch.data.ptr)
        _raise_if_failed(info, "Singular matrix")
        return out


def solve(a, b):
    """x with a @ x = b for each matrix a: b of shape (n,) (one vector for
    every matrix) or (..., n, k), batches broadcast as NumPy 2 does.
    LinAlgError("Singular matrix") when an a is singular (one
    synchronisation)."""
    a, b = _operand(a, "solve"), _operand(b, "solve", "b")
    _square(a)
    if b.ndim == 0:
        raise ValueError("solve: Input operand 1 does not have enough dimensions (has 0, "
                         "gufunc core with signature (m,m),(m)->(m) requires 1)")
    dtype = _compute_type(a.dtype, b.dtype)
    batch, n, k, vector, which = solve_plan(a.shape, b.shape)
    a, b = to_device(a), to_device(b)
    with a.device:
        packed = _core.empty(batch + (k, n), dtype=dtype)     # each x column-major
        x = packed.mT
        if packed.size == 0:
            return packed[..., 0, :] if vector else x
        x[...] = b[:, None] if vector else b
        lu, pivots, info = _lu(a, dtype)
        lus, pivs, xs = _Stack(lu), _Stack(pivots, 1), _Stack(packed)
        scratch = _infos(1)
        s = cusolver.solver()
        with s:
            for i, j in enumerate(which):
                s.getrs(dtype, OP_T, n, k, lus[j], n, pivs[j], xs[i], n, scratch.data.ptr)
        _raise_if_failed(info, "Singular matrix")
        return packed[..., 0, :] if vector else x


# ============================================================ Cholesky ====

def cholesky(a, /, *, upper=False):
    """The Cholesky factor of each Hermitian positive-definite matrix: lower
    L with a = L Lᴴ (read from a's lower triangle), or with upper=True the
    upper U with a = Uᴴ U (from a's upper triangle).  LinAlgError("Matrix
    is not positive definite") otherwise (one synchronisation)."""
    a, dtype, n = _square_operand(a, "cholesky")
    with a.device:
        if a.size == 0:
            return _core.empty(a.shape, dtype=dtype)
        packed, _ = _work(a, dtype, False)
        mats = _Stack(packed)
        info = _infos(mats.count)
        uplo = cholesky_uplo(upper)
        s = cusolver.solver()
        with s:
            if mats.count > 1:
                pointers = gp.arange(mats.count, dtype=numpy.uint64) * mats.step + mats.ptr
                s.potrf_batched(dtype, uplo, n, pointers.data.ptr, n, info.data.ptr,
                                mats.count)
            else:
                work = s.potrf_workspace(dtype, uplo, n, mats[0], n)
                s.potrf(dtype, uplo, n, mats[0], n, work, info.data.ptr)
        _raise_if_failed(info, "Matrix is not positive definite")
        return gp.triu(packed) if upper else gp.tril(packed)


# ================================================================== QR ====

def qr(a, mode="reduced"):
    """QRResult(Q, R) of each matrix (Householder QR): mode 'reduced'
    (Q m x k, R k x n, k = min(m, n)), 'complete' (Q m x m, R m x n) or
    'r' (R alone, k x n).  Q and R are unique up to the signs (phases) of
    R's diagonal."""
    a = _operand(a, "qr")
    if mode not in ("reduced", "complete", "r"):
        if mode == "raw":
            raise NotImplementedError("linalg.qr: mode='raw' is not supported by gpuarr (use "
                                      "'reduced', 'complete' or 'r')")
        raise ValueError(f"Unrecognized mode '{mode}'")
    _at_least_2d(a)
    dtype = _compute_type(a.dtype)
    m, n = a.shape[-2:]
    k, rrows, qcols = qr_plan(m, n, mode)
    batch = a.shape[:-2]
    a = to_device(a)
    with a.device:
        if a.size == 0:
            r = gp.zeros(batch + (rrows, n), dtype=dtype)
            if mode == "r":
                return r
            q = gp.zeros(batch + (m, qcols), dtype=dtype)
            q[...] = gp.eye(m, qcols, dtype=dtype)
            return QRResult(q, r)
        packed, mats = _work(a, dtype, True)             # A column-major, lda = m
        tau = _core.empty(batch + (k,), dtype=dtype)
        As, taus = _Stack(packed), _Stack(tau, 1)
        scratch = _infos(1)
        s = cusolver.solver()
        with s:
            work = s.geqrf_workspace(dtype, m, n, As[0], m, taus[0])
            for i in range(As.count):
                s.geqrf(dtype, m, n, As[i], m, taus[i], work, scratch.data.ptr)
        r = gp.triu(mats[..., :rrows, :])
        if mode == "r":
            return r
        if qcols <= n:
            qpacked = packed                  # Q's columns are the first qcols of A's
        else:
            qpacked = gp.zeros(batch + (m, m), dtype=dtype)
            qpacked.mT[..., :n] = mats
        qs = _Stack(qpacked)
        with s:
            work = s.orgqr_workspace(dtype, m, qcols, k, qs[0], m, taus[0])
            for i in range(qs.count):
                s.orgqr(dtype, m, qcols, k, qs[i], m, taus[i], work, scratch.data.ptr)
        q = qpacked.mT[..., :qcols]
        return QRResult(q, r)


# ================================================================= SVD ====

def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """SVDResult(U, S, Vh) with a = U @ diag(S) @ Vh for each matrix, S
    descending (or S alone with compute_uv=False).  full_matrices: U m x m
    and Vh n x n, else m x k and k x n.  hermitian=True uses eigh, as NumPy
    does.  Singular vectors are unique up to phases."""
    a = _operand(a, "svd")
    _at_least_2d(a)
    dtype = _compute_type(a.dtype)
    real = _real_type(dtype)
    if hermitian:
        return _svd_hermitian(a, compute_uv)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    transposed, M, N, jobu, jobvt, ucols = svd_plan(m, n, full_matrices, compute_uv)
    a = to_device(a)
    with a.device:
        if a.size == 0:
            s_ = gp.zeros(batch + (k,), dtype=real)
            if not compute_uv:
                return s_
            u = gp.zeros(batch + (m, m if full_matrices else k), dtype=dtype)
            vh = gp.zeros(batch + (n if full_matrices else k, n), dtype=dtype)
            if full_matrices:
                u[...] = gp.eye(m, dtype=dtype)
                vh[...] = gp.eye(n, dtype=dtype)
            return SVDResult(u, s_, vh)
        if _nbatch(batch) > 1 and max(m, n) <= GESVDJ_BATCHED_MAX:
            return _svd_jacobi_batched(a, dtype, real, full_matrices, compute_uv)
        packed, _ = _work(a, dtype, not transposed)      # an M x N matrix, column-major
        sv = _core.empty(batch + (k,), dtype=real)
        if compute_uv:
            upacked = _core.empty(batch + (ucols, M), dtype=dtype)
            vtpacked = _core.empty(batch + (N, N), dtype=dtype)
            us, vts = _Stack(upacked), _Stack(vtpacked)
        As, ss = _Stack(packed), _Stack(sv, 1)
        scratch = _infos(1)
        s = cusolver.solver()
        with s:
            u0, vt0 = (us[0], vts[0]) if compute_uv else (None, None)
            work = s.gesvd_workspace(dtype, jobu, jobvt, M, N, As[0], M, ss[0], u0, M, vt0, N)
            for i in range(As.count):
                ui, vti = (us[i], vts[i]) if compute_uv else (None, None)
                s.gesvd(dtype, jobu, jobvt, M, N, As[i], M, ss[i], ui, M, vti, N, work,
                        scratch.data.ptr)
        if not compute_uv:
            return sv
        return SVDResult(*svd_vectors(transposed, upacked, vtpacked, sv))


def _svd_jacobi_batched(a, dtype, real, full_matrices, compute_uv):
    """svd of a stack of matrices up to 32 x 32: one gesvdjBatched call on
    the column-major copy (A = U S Vᴴ, any shape)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    packed, _ = _work(a, dtype, True)                     # A column-major, lda = m
    sv = _core.empty(batch + (k,), dtype=real)
    # U and V always: gesvdjBatched without vectors (jobz NOVECTOR, no U
    # or V) made illegal memory accesses on the lent H100 (cuSOLVER
    # 12.0.4, a stack of 6 x 4); for matrices up to 32 x 32 they cost little
    upacked = _core.empty(batch + (m, m), dtype=dtype)         # U column-major, ldu = m
    vpacked = _core.empty(batch + (n, n), dtype=dtype)         # V column-major, ldv = n
    u0, v0 = upacked.data.ptr, vpacked.data.ptr
    As = _Stack(packed)
    info = _infos(As.count)
    jobz = VECTOR
    s = cusolver.solver()
    with s:
        work = s.gesvdj_batched_workspace(dtype, jobz, m, n, As[0], m, sv.data.ptr, u0, m, v0,
                                          n, As.count)
        s.gesvdj_batched(dtype, jobz, m, n, As[0], m, sv.data.ptr, u0, m, v0, n, work,
                         info.data.ptr, As.count)
    if not compute_uv:
        return sv
    return SVDResult(*svdj_vectors(upacked, vpacked, sv, full_matrices, gp.conj))


def svdj_vectors(upacked, vpacked, sv, full_matrices, conj):
    """(U, S, Vh) from gesvdjBatched's column-major U and V, packed C:
    U is upacked read column-major, Vh = Vᴴ the conjugate of vpacked read
    row-major (a view for real types); the first min(m, n) columns and
    rows without full_matrices.  Any arrays with .mT (NumPy's too, for
    tests without a GPU; conj is the library's)."""
    u = upacked.mT
    vh = conj(vpacked) if vpacked.dtype.kind == "c" else vpacked
    if not full_matrices:
        k = sv.shape[-1]
        u, vh = u[..., :, :k], vh[..., :k, :]
    return u, sv, vh


def svd_vectors(transposed, upacked, vtpacked, sv):
    """(U, S, Vh) from gesvd's column-major U and VT, packed C (as
    svd_plan lays them out): views of them.  Any arrays with .mT (NumPy's
    too, for tests without a GPU)."""
    if transposed:          # Aᵀ = U' S VT', so A = VT'ᵀ S U'ᵀ: the row-major reads
        return vtpacked, sv, upacked
    return upacked.mT, sv, vtpacked.mT


def _svd_hermitian(a, compute_uv):
    """NumPy's svd(hermitian=True): from eigh, singular values |w| sorted
    descending, U the eigenvectors in that order, Vh = (U * sign(w))ᴴ."""
    a, _, _ = _square_operand(a, "svd")
    if not compute_uv:
        return gp.sort(gp.abs(eigvalsh(a)), axis=-1, descending=True)
    w, v = eigh(a)
    order = gp.argsort(gp.abs(w), axis=-1, descending=True, stable=True)
    w = gp.take_along_axis(w, order, axis=-1)
    u = gp.take_along_axis(v, gp.broadcast_to(order[..., None, :], v.shape), axis=-1)
    vh = gp.conj(u * gp.sign(w)[..., None, :]).mT
    return SVDResult(u, gp.abs(w), vh)


def svdvals(x, /):
    """The singular values of each matrix, descending (svd's S)."""
    return svd(x, compute_uv=False)


# ================================================================ eigh ====

def _eigh(a, UPLO, vectors, fname):
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    a, dtype, n = _square_operand(a, fname)
    real = _real_type(dtype)
    uplo, column_major = eigh_uplo(UPLO.upper(), dtype.kind == "c")
    batch = a.shape[:-2]
    with a.device:
        if a.size == 0:
            w = _core.empty(batch + (n,), dtype=real)
            return (w, _core.empty(a.shape, dtype=dtype)) if vectors else w
        packed, _ = _work(a, dtype, column_major)
        w = _core.empty(batch + (n,), dtype=real)
        As, ws = _Stack(packed), _Stack(w, 1)
        info = _infos(As.count)
        jobz = VECTOR if vectors else NOVECTOR
        s = cusolver.solver()
        with s:
            if As.count > 1 and n <= SYEV_BATCHED_MAX_N and s.has_syev_batched():
                work = s.syev_batched_workspace(dtype, jobz, uplo, n, As[0], n, ws[0], As.count)
                s.syev_batched(dtype, jobz, uplo, n, As[0], n, ws[0], work, info.data.ptr,
                               As.count)
            else:
                infos = _Stack(info, 0)
                work = s.syevd_workspace(dtype, jobz, uplo, n, As[0], n, ws[0])
                for i in range(As.count):
                    s.syevd(dtype, jobz, uplo, n, As[i], n, ws[i], work, infos[i])
        if not vectors:
            return w
        return w, packed.mT     # the columns of the column-major result


def eigh(a, UPLO="L"):
    """EighResult(eigenvalues, eigenvectors) of each Hermitian matrix, read
    from its UPLO ('L' or 'U') triangle: eigenvalues ascending (real),
    eigenvectors as columns, unique up to phases."""
    w, v = _eigh(a, UPLO, True, "eigh")
    return EighResult(w, v)


def eigvalsh(a, UPLO="L"):
    """The eigenvalues of each Hermitian matrix, ascending."""
    return _eigh(a, UPLO, False, "eigvalsh")


# =============================================================== norms ====

def _float(x):
    """x as NumPy's norms take it: inexact dtypes kept, others float64."""
    return x if x.dtype.kind in "fc" else x.astype(numpy.float64)


def _abs2_sum(x, axis, keepdims):
    if x.dtype.kind == "c":
        return (x.real * x.real + x.imag * x.imag).sum(axis=axis, keepdims=keepdims)
    return (x * x).sum(axis=axis, keepdims=keepdims)


def _vector_norm(x, ord, axis, keepdims):
    """NumPy's vector norms of float x over axis (an int or a tuple)."""
    if ord == numpy.inf:
        return gp.abs(x).max(axis=axis, keepdims=keepdims)
    if ord == -numpy.inf:
        return gp.abs(x).min(axis=axis, keepdims=keepdims)
    if ord == 0:
        return (x != 0).astype(_real_type(x.dtype)).sum(axis=axis, keepdims=keepdims)
    if ord == 1:
        return gp.abs(x).sum(axis=axis, keepdims=keepdims)
    if ord is None or ord == 2:
        return gp.sqrt(_abs2_sum(x, axis, keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    absx = gp.abs(x)
    return (absx ** ord).sum(axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x, ord, row, col, keepdims):
    """NumPy's matrix norms of float x over the axes row and col."""
    if ord in (2, -2, "nuc"):
        sv = svdvals(gp.moveaxis(x, (row, col), (-2, -1)))
        if ord == 2:
            ret = sv.max(axis=-1)
        elif ord == -2:
            ret = sv.min(axis=-1)
        else:
            ret = sv.sum(axis=-1)
    elif ord in (1, -1):
        c = col - 1 if col > row else col
        s = gp.abs(x).sum(axis=row)
        ret = s.max(axis=c) if ord == 1 else s.min(axis=c)
    elif ord in (numpy.inf, -numpy.inf):
        r = row - 1 if row > col else row
        s = gp.abs(x).sum(axis=col)
        ret = s.max(axis=r) if ord == numpy.inf else s.min(axis=r)
    elif ord in (None, "fro", "f"):
        ret = gp.sqrt(_abs2_sum(x, (row, col), False))
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(x.shape)
        shape[row] = shape[col] = 1
        ret = ret.reshape(shape)
    return ret


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise numpy.exceptions.AxisError(axis, ndim)
    return axis % ndim


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: vector norms over one axis, matrix norms over two
    (ord 1, -1, 2, -2, inf, -inf, 'fro', 'nuc'; 2, -2 and 'nuc' from the
    singular values); with axis=None, the 2-norm of the flattened array
    when ord is None, else x must be 1-d or 2-d."""
    x = _float(to_device(_operand(x, "norm", "x")))
    nd = x.ndim
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            ret = gp.sqrt(_abs2_sum(x.reshape(-1), None, False))
            return ret.reshape((1,) * nd) if keepdims else ret
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (operator.index(axis),)
        except TypeError:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from None
    if len(axis) == 1:
        return _vector_norm(x, ord, _axis(axis[0], nd), keepdims)
    if len(axis) == 2:
        row, col = _axis(axis[0], nd), _axis(axis[1], nd)
        if row == col:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(x, ord, row, col, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The array API's vector_norm: over every axis (axis=None), one, or a
    tuple of axes taken as one vector."""
    x = _float(to_device(_operand(x, "vector_norm", "x")))
    if axis is None:
        ret = _vector_norm(x.reshape(-1), ord, 0, False)
        return ret.reshape((1,) * x.ndim) if keepdims else ret
    if isinstance(axis, tuple):
        axes = tuple(_axis(ax, x.ndim) for ax in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("Duplicate axes given.")
        rest = [d for d in range(x.ndim) if d not in axes]
        moved = x.transpose(rest + list(axes)).reshape(
            tuple(x.shape[d] for d in rest) + (_nbatch(x.shape[d] for d in axes),))
        ret = _vector_norm(moved, ord, -1, False)
        if keepdims:
            ret = ret.reshape(tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)))
        return ret
    return _vector_norm(x, ord, _axis(axis, x.ndim), keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The array API's matrix_norm over the last two axes."""
    x = _operand(x, "matrix_norm", "x")
    _at_least_2d(x)
    x = _float(to_device(x))
    return _matrix_norm(x, ord, x.ndim - 2, x.ndim - 1, keepdims)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The number of singular values of each matrix above tol (default:
    the largest times rtol, which defaults to max(m, n) * eps); a 0-d
    device array for one matrix.  Arrays of fewer than two dimensions
    have rank 1 unless all zero."""
    A = to_device(_operand(A, "matrix_rank", "A"))
    if tol is not None and rtol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    if A.ndim < 2:
        return gp.any(A != 0).astype(numpy.intp)
    S = svd(A, compute_uv=False, hermitian=hermitian)
    if tol is None:
        if rtol is None:
            rtol = max(A.shape[-2:]) * numpy.finfo(S.dtype).eps
        else:
            rtol = gp.asarray(rtol)[..., None]
        tol = S.max(axis=-1, keepdims=True) * rtol if S.size else 0
    else:
        tol = gp.asarray(tol)[..., None]
    return gp.count_nonzero(S > tol, axis=-1)


# ========================================================= elementwise ====

def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-element vectors along axis (broadcast)."""
    x1, x2 = to_device(_operand(x1, "cross", "x1")), to_device(_operand(x2, "cross", "x2"))
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("cross: the inputs must have at least one dimension")
    a = gp.moveaxis(x1, _axis(axis, x1.ndim), -1)
    b = gp.moveaxis(x2, _axis(axis, x2.ndim), -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"are {a.shape[-1]} and {b.shape[-1]} dimensional instead.")
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    c = gp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return gp.moveaxis(c, -1, _axis(axis, c.ndim))


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices over x's last two axes (a view)."""
    x = to_device(_operand(x, "diagonal", "x"))
    if x.ndim < 2:
        raise ValueError(f"linalg.diagonal: x must have at least two dimensions, got {x.ndim}")
    return x.diagonal(offset, -2, -1)


def matrix_transpose(x, /):
    """The last two axes swapped (a view)."""
    return gp.matrix_transpose(to_device(_operand(x, "matrix_transpose", "x")))


def trace(x, /, *, offset=0, dtype=None):
    """The sum of each matrix's offset diagonal (last two axes)."""
    return diagonal(x, offset=offset).sum(axis=-1, dtype=dtype)


def outer(x1, x2, /):
    """The outer product of two 1-d arrays (elementwise, broadcast)."""
    x1, x2 = to_device(_operand(x1, "outer", "x1")), to_device(_operand(x2, "outer", "x2"))
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={x1.ndim} "
                         f"and x2.ndim={x2.ndim}.")
    return x1[:, None] * x2[None, :]


# ============================================= built on matrix products ====

def _conj_t(x):
    """The conjugate transpose of each matrix (a view for real types)."""
    return (x.conj() if x.dtype.kind == "c" else x).mT


def _inverted(s, cutoff):
    """1/s where s > cutoff, else 0 (s real, descending per row)."""
    kept = s > cutoff
    return gp.where(kept, 1 / gp.where(kept, s, 1), 0).astype(s.dtype)


_UNSET = object()      # pinv's rtol when not given (NumPy's _NoValue)


def pinv(a, rcond=None, hermitian=False, *, rtol=_UNSET):
    """The Moore-Penrose pseudo-inverse of each matrix, Vh^H diag(1/s) U^H
    from its SVD, singular values at most rcond times the largest taken as
    zero; NumPy 2's rule for the cutoff: rcond, else rtol (None: max(m, n)
    * eps), else 1e-15.  rcond may be an array broadcast over the stack."""
    a = to_device(_operand(a, "pinv"))
    _at_least_2d(a)
    if rcond is None:
        rcond = (1e-15 if rtol is _UNSET else
                 max(a.shape[-2:]) * numpy.finfo(_compute_type(a.dtype)).eps if rtol is None
                 else rtol)
    elif rtol is not _UNSET:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    dtype = _compute_type(a.dtype)
    m, n = a.shape[-2:]
    if a.size == 0:
        return gp.empty(a.shape[:-2] + (n, m), dtype=a.dtype if m * n == 0 else dtype)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    rcond = gp.asarray(rcond, dtype=s.dtype)
    cutoff = s.max(axis=-1, keepdims=True) * (rcond[..., None] if rcond.ndim else rcond)
    return gp.matmul(_conj_t(vh) * _inverted(s, cutoff)[..., None, :], _conj_t(u))


LstsqResult = collections.namedtuple("LstsqResult", "x residuals rank singular_values")


def lstsq(a, b, rcond=None):
    """The least-squares solution x of a x = b (a 2-d, b 1-d or 2-d) from
    a's SVD, as NumPy's gelsd: singular values at most rcond (default
    eps * max(m, n)) times the largest count as zero.  (x, residuals, rank,
    s): residuals are the squared norms of b - a x per column when a has
    full column rank and more rows than columns, else empty, so their
    shape depends on the rank, which is read back (one synchronisation)."""
    a, b = _operand(a, "lstsq"), _operand(b, "lstsq", "b")
    is_1d = b.ndim == 1
    if a.ndim != 2 or b.ndim not in (1, 2):
        raise LinAlgError(f"{a.ndim if a.ndim != 2 else b.ndim}-dimensional array given. Array "
                          "must be two-dimensional")
    m, n = a.shape
    if b.shape[0] != m:
        raise LinAlgError("Incompatible dimensions")
    dtype = _compute_type(a.dtype, b.dtype)
    real = _real_type(dtype)
    a = to_device(a).astype(dtype, copy=False)
    b = to_device(b).astype(dtype, copy=False)
    if is_1d:
        b = b[:, None]
    k = b.shape[1]
    if rcond is None:
        rcond = numpy.finfo(dtype).eps * max(m, n)
    if a.size == 0:
        x = gp.zeros((n, k), dtype=dtype)
        s = gp.zeros((0,), dtype=real)
        rank = 0
    else:
        u, s, vh = svd(a, full_matrices=False)
        cutoff = s[:1] * rcond
        x = gp.matmul(_conj_t(vh), _inverted(s, cutoff)[:, None] * gp.matmul(_conj_t(u), b))
        rank = int(gp.count_nonzero(s > cutoff))
    if rank == n and m > n:
        r = b - gp.matmul(a, x) if a.size else b
        resids = gp.sum(gp.abs(r) ** 2, axis=0).astype(real)
    else:
        resids = gp.zeros((0,), dtype=real)
    if is_1d:
        x = x[:, 0]
    return LstsqResult(x, resids, rank, s)


def matrix_power(a, n):
    """Each square matrix raised to the integer power n: repeated squaring
    with matmul (about 2 log2 |n| products); n = 0 gives identities of
    a's dtype, a negative n powers of inv(a)."""
    a = to_device(_operand(a, "matrix_power"))
    _square(a)
    try:
        n = operator.index(n)
    except TypeError as exc:
        raise TypeError("exponent must be an integer") from exc
    if n == 0:
        out = gp.empty(a.shape, dtype=a.dtype)
        out[...] = gp.eye(a.shape[-1], dtype=a.dtype)
        return out
    if n < 0:
        a, n = inv(a), -n
    z = result = None
    while n > 0:
        z = a if z is None else gp.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else gp.matmul(result, z)
    return result


def _chain_order(dims):
    """The split points of the cheapest order of a matrix chain whose i-th
    matrix is dims[i] x dims[i + 1] (the classic dynamic programme)."""
    count = len(dims) - 1
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays, *, out=None):
    """The product of a chain of 2-d arrays in the cheapest order (the
    first may be 1-d, a row; the last 1-d, a column), as NumPy's."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    arrays = [to_device(_operand(x, "multi_dot", f"arrays[{i}]"))
              for i, x in enumerate(arrays)]
    first, last = arrays[0].ndim, arrays[-1].ndim
    if first == 1:
        arrays[0] = arrays[0][None, :]
    if last == 1:
        arrays[-1] = arrays[-1][:, None]
    for x in arrays:
        if x.ndim != 2:
            raise LinAlgError(f"{x.ndim}-dimensional array given. Array must be "
                              "two-dimensional")
    split = _chain_order([x.shape[0] for x in arrays] + [arrays[-1].shape[1]])

    def product(i, j):
        if i == j:
            return arrays[i]
        return gp.matmul(product(i, split[i][j]), product(split[i][j] + 1, j))

    result = product(0, len(arrays) - 1)
    if first == 1 and last == 1:
        result = result[0, 0]
    elif first == 1 or last == 1:
        result = result.ravel()
    if out is not None:
        out[...] = result
        return out
    return result


def tensorinv(a, ind=2):
    """The inverse of a as an operator of its first ind axes onto the rest
    (inv of the matrix a reshaped to prod(shape[:ind]) rows)."""
    a = to_device(_operand(a, "tensorinv"))
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    invshape = a.shape[ind:] + a.shape[:ind]
    return inv(a.reshape(math.prod(a.shape[ind:]), -1)).reshape(invshape)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b: solve of a reshaped to a square
    matrix (axes: a's axes to move to the end first)."""
    a, b = to_device(_operand(a, "tensorsolve")), to_device(_operand(b, "tensorsolve", "b"))
    if axes is not None:
        order = [d for d in range(a.ndim) if d not in [d % a.ndim for d in axes]]
        a = a.transpose(order + [d % a.ndim for d in axes])
    xshape = a.shape[b.ndim:]
    n = math.prod(xshape)
    if a.size != n * n:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return solve(a.reshape(n, n), b.ravel()).reshape(xshape)
