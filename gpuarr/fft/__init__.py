"""gpuarr.fft: numpy.fft on device arrays, computed by cuFFT.

    import gpuarr as gp
    X = gp.fft.rfft2(image)             # also np.fft.rfft2(image) on a device array
    freqs = gp.fft.fftfreq(2048, d=0.5)

NumPy's functions, arguments, dtypes and errors (see gpuarr/fft/_fft.py):
fft, ifft, rfft, irfft, hfft, ihfft, fft2, ifft2, rfft2, irfft2, fftn, ifftn,
rfftn, irfftn, fftfreq, rfftfreq, fftshift, ifftshift.  cuFFT is loaded on
the first transform (gpuarr/cuda/cufft.py); plans are cached
(``gpuarr.fft.config.get_plan_cache()``).
"""
from ._fft import (fft, ifft, rfft, irfft, hfft, ihfft, fftn, ifftn, rfftn, irfftn, fft2,
                   ifft2, rfft2, irfft2)
from ._helper import fftfreq, rfftfreq, fftshift, ifftshift
from . import config

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn",
           "fft2", "ifft2", "rfft2", "irfft2", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
           "config"]
