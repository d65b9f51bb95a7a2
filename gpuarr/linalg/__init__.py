"""gpuarr.linalg: numpy.linalg (and the array API standard's linalg
extension) on device arrays, by cuSOLVER (gpuarr/cuda/cusolver.py).

    import gpuarr as gp
    x = gp.linalg.solve(a, b)
    u, s, vh = gp.linalg.svd(a, full_matrices=False)

Imported on first use (``gp.linalg``); cuSOLVER is loaded on the first
decomposition, and without it only those raise (CUSOLVERError, naming
every place searched).  gpuarr/linalg/_linalg.py says how NumPy's
row-major arrays map onto cuSOLVER's column-major routines.

matmul, tensordot and vecdot are gpuarr's own matrix products, found here
too once they exist; the functions built on matrix products (pinv, lstsq,
matrix_power, multi_dot, tensorsolve, tensorinv) are not here yet.
"""
from ._linalg import (LinAlgError, det, slogdet, inv, solve, cholesky, qr, svd, svdvals,
                      eigh, eigvalsh, norm, vector_norm, matrix_norm, matrix_rank, cross,
                      diagonal, matrix_transpose, trace, outer, SVDResult, EighResult,
                      QRResult, SlogdetResult)

__all__ = ["LinAlgError", "det", "slogdet", "inv", "solve", "cholesky", "qr", "svd", "svdvals",
           "eigh", "eigvalsh", "norm", "vector_norm", "matrix_norm", "matrix_rank", "cross",
           "diagonal", "matrix_transpose", "trace", "outer", "SVDResult", "EighResult",
           "QRResult", "SlogdetResult"]

# The array API's linalg names that are gpuarr's matrix products.
_PRODUCTS = ("matmul", "tensordot", "vecdot")


def __getattr__(name):
    if name in _PRODUCTS:
        import gpuarr
        product = getattr(gpuarr, name, None)
        if product is not None:
            return product
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
