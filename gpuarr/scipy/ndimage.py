"""gpuarr.scipy.ndimage: scipy.ndimage on device arrays.

Filters live in _filters.py (correlate, convolve, correlate1d, convolve1d,
gaussian_filter(1d), uniform_filter(1d), minimum/maximum_filter(1d),
median_filter, rank_filter, percentile_filter); labelling and measurements
in _measurements.py.  Each function's docstring says which kernel it runs.
"""
from ._filters import *  # noqa: F401,F403
from ._filters import __all__ as _filters_all
from ._measurements import *  # noqa: F401,F403
from ._measurements import __all__ as _measurements_all

__all__ = list(_filters_all) + list(_measurements_all)
