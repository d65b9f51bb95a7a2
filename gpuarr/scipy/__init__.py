"""gpuarr.scipy: SciPy-shaped namespaces over device arrays.

    import gpuarr as gp
    from gpuarr.scipy import ndimage, signal
    smooth = ndimage.gaussian_filter(gp.asarray(image), sigma=2)
    blurred = signal.convolve2d(gp.asarray(image), gp.asarray(kernel))

Same signatures, defaults, output formats and errors as SciPy; the
functions take device arrays (NumPy arrays raise TypeError: move them with
gpuarr.asarray() first).
"""
from . import ndimage, signal  # noqa: F401

__all__ = ["ndimage", "signal"]
