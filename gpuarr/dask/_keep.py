"""Where gpuarr.dask keeps what it persists between passes: the mosaic's
chunks, the segmentation, the provisional and final labels.

With Dask's config key "gpuarr.keep" = "device" (the default) a persisted
array stays in its chunks' memory, on the GPU for gpuarr chunks.  With
"host" a gpuarr array is persisted as NumPy chunks in host memory and
handed on as a lazy array that moves each chunk back to its GPU in the
task that reads it, so the GPU holds only the chunks that the running
tasks use: a graph bigger than the GPU's memory (issue 21's mosaic under
GPUARR_GPU_MEMORY_LIMIT) completes, paying a bus crossing each way per
chunk and pass.

    >>> with dask.config.set({"gpuarr.keep": "host"}):
    ...     labels, count = gpuarr.dask.ndmeasure.label(mask)
"""
import numpy

PLACES = ("device", "host")


def place():
    """The configured place: "device" or "host" (a ValueError naming the
    key for anything else)."""
    import dask
    where = dask.config.get("gpuarr.keep", "device")
    if where not in PLACES:
        raise ValueError(f"dask config 'gpuarr.keep' must be 'device' or 'host', got {where!r}")
    return where


def keep(array):
    """Persist a dask array where place() says; returns the array to use
    from then on (its chunks' type unchanged)."""
    import dask
    import gpuarr
    where = place()
    if where == "device" or not isinstance(getattr(array, "_meta", None), gpuarr.ndarray):
        return dask.persist(array)[0]
    held = array.map_blocks(gpuarr.asnumpy, meta=numpy.empty((0,) * array.ndim, array.dtype))
    return to_gpu(dask.persist(held)[0])


def to_gpu(held):
    """A dask array of NumPy chunks as a lazy array of gpuarr chunks: each
    task that reads a chunk moves it to its GPU."""
    import gpuarr
    return held.map_blocks(gpuarr.asarray, meta=gpuarr.empty((0,) * held.ndim, held.dtype))
