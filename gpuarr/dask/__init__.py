"""gpuarr.dask: what Dask cannot do generically on chunked images, built
from gpuarr's single-GPU kernels (issue 21).  So far:
ndmeasure.label(image) on a dask array of NumPy or gpuarr chunks, numbered
as scipy.ndimage.label numbers the whole image, over the cross-block steps
in _merge.py (written for any array namespace, tested on NumPy chunks), and
ndmeasure.sum_labels / center_of_mass from the chunks' partial sums, and
stats.median, exact, by radix selection over the chunks.  Still to come:
the sigma-clipping loop across chunks, gpuarr as a Dask backend, workers
per GPU.  Importing this package does not import
Dask.
"""
