"""Settings of gpuarr.fft (CuPy's cupy.fft.config): the cuFFT plan cache."""
from ..cuda.cufft import get_plan_cache, PlanCache  # noqa: F401

__all__ = ["get_plan_cache"]
