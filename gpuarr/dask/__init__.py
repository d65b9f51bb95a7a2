"""gpuarr.dask: what Dask cannot do generically on chunked images, built
from gpuarr's single-GPU kernels (issue 21).  Chunks may be NumPy arrays
(the CPU, and the tests) or gpuarr arrays (each on its GPU):

* ndmeasure.label(image): numbered as scipy.ndimage.label numbers the
  whole image, over the cross-block steps in _merge.py;
  ndmeasure.sum_labels / center_of_mass from the chunks' partial sums;
* stats.sigma_clip / sigma_clipped_stats: gpuarr.stats' clipping of the
  whole array, with stats.median, exact, by radix selection over the
  chunks;
* local_cluster(): one distributed worker process per GPU (cluster.py).

gpuarr chunks in Dask (sizeof, tokens without host copies, the array
dispatches, distributed's serializers) are registered by register(), by
these functions, or lazily through the entry points (_register.py); the
"gpuarr" array backend is _backend.py.  Importing this package does not
import Dask.
"""
from ._register import register  # noqa: F401
from .cluster import local_cluster  # noqa: F401
