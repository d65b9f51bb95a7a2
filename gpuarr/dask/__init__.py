"""gpuarr.dask: what Dask cannot do generically on chunked images, built
from gpuarr's single-GPU kernels (issue 21).  So far the cross-block
labelling steps (gpuarr/dask/_merge.py: label each block, merge the
labels that meet across block faces, number them as scipy.ndimage.label
numbers the whole image), written for any array namespace and tested on
NumPy blocks; the Dask-level functions (ndimage.label on a dask array,
measurements and sigma clipping across chunks) and gpuarr as a Dask
backend come next.  Importing this package does not import Dask.
"""
