"""Settings of gpuarr.fft (CuPy's cupy.fft.config): the cuFFT plan cache,
``get_plan_cache()`` (``get_size``, ``set_size``, ``get_curr_size``,
``clear``)."""
from ..cuda.cufft import get_plan_cache

__all__ = ["get_plan_cache"]
