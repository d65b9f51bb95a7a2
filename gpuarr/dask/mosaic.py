"""The lesson's pipeline on a chunked sky mosaic (issue 21), behind
``python -m gpuarr --mosaic N``:

    >>> from gpuarr.dask import mosaic
    >>> sky = mosaic.synthetic_mosaic(16384, chunk=4096, xp=gpuarr)  # lazy dask array
    >>> result = mosaic.pipeline(sky.persist())

The mosaic imitates gpuarr.datasets.synthetic_sky (the lesson's synthetic
GMRT-like image) at any size: Gaussian noise of the same sigma plus point
and extended sources (Gaussians the width of the beam or a few beams: the
point sources convolved with the PSF), as many per pixel as on the lesson's
2048 x 2048 sky.  It is made chunk by chunk and never exists whole in host
memory: the source list (positions, fluxes, shapes: a few bytes a source)
is drawn on the host from the seed, and each chunk draws its own noise
from (seed, chunk row, chunk column) and adds the sources whose stamps
reach it -- on the host (NumPy), then moved to its GPU for gpuarr chunks.
So a mosaic is the same for NumPy and gpuarr chunks, and for any scheduler;
its noise (not its sources) changes with the chunk size.

pipeline(x) runs the four steps through gpuarr.dask, timing each (the
chunks are computed or persisted at the end of each step):

1. the background: gpuarr.dask.stats.sigma_clipped_stats(x, sigma=3,
   maxiters=None, inclusive=False), the lesson's kappa-sigma clipper
   across the chunks (exact median), its std;
2. segmentation: x > 5 std;
3. labelling across chunks: gpuarr.dask.ndmeasure.label;
4. centre of mass and flux of every source: ndmeasure.center_of_mass and
   sum_labels from the chunks' partial sums.
"""
import math
import time

import numpy

from .. import datasets

__all__ = ["source_list", "mosaic_chunk", "synthetic_mosaic", "pipeline"]

_STAMP = 5            # stamps reach this many sigmas, as in gpuarr.datasets


def _check_size(value, name, least):
    if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)):
        raise TypeError(f"{name} must be an integer number of pixels, got {type(value).__name__}")
    if value < least:
        raise ValueError(f"{name} must be at least {least} pixels, got {value}")
    return int(value)


def source_list(size, seed=datasets.SEED):
    """The sources of a size x size mosaic: a host float64 array of rows
    (y, x, peak, sigma_y, sigma_x, angle), point-like (the beam) and
    extended, as many per pixel as datasets.synthetic_sky."""
    size = _check_size(size, "size", 16)
    rng = numpy.random.default_rng([seed, size])
    scale = (size / 2048.0) ** 2
    margin = 8
    n_point, n_ext = int(round(250 * scale)), int(round(100 * scale))
    point = numpy.empty((n_point, 6))
    point[:, :2] = rng.uniform(margin, size - margin, (n_point, 2))
    point[:, 2] = numpy.minimum(0.1 * (1 - rng.random(n_point)) ** (-1 / 1.5), 1.0)
    point[:, 3:5] = datasets._BEAM
    point[:, 5] = 0.0
    ext = numpy.empty((n_ext, 6))
    ext[:, :2] = rng.uniform(margin, size - margin, (n_ext, 2))
    ext[:, 2] = rng.uniform(0.09, 0.3, n_ext)
    ext[:, 3:5] = rng.uniform(1.5, 4, (n_ext, 2))
    ext[:, 5] = rng.uniform(0, numpy.pi, n_ext)
    return numpy.concatenate([point, ext])


def _reaching(sources, y0, y1, x0, x1):
    """The sources whose stamps reach rows [y0, y1) and columns [x0, x1)."""
    r = numpy.ceil(_STAMP * numpy.maximum(sources[:, 3], sources[:, 4]))
    y, x = numpy.floor(sources[:, 0]), numpy.floor(sources[:, 1])
    return sources[(y + r >= y0) & (y - r < y1) & (x + r >= x0) & (x - r < x1)]


def _add_source(img, origin, y, x, peak, sy, sx, angle):
    """Add an elliptical Gaussian centred at mosaic coordinates (y, x) to
    the chunk at `origin`: its stamp (+-5 sigma around the pixel holding
    the centre) is fixed in mosaic coordinates, so chunks meet seamlessly."""
    r = int(numpy.ceil(_STAMP * max(sy, sx)))
    fy, fx = int(numpy.floor(y)), int(numpy.floor(x))
    y0, y1 = max(fy - r, origin[0]), min(fy + r + 1, origin[0] + img.shape[0])
    x0, x1 = max(fx - r, origin[1]), min(fx + r + 1, origin[1] + img.shape[1])
    if y0 >= y1 or x0 >= x1:
        return
    yy = numpy.arange(y0, y1, dtype=numpy.float64)[:, None] - y
    xx = numpy.arange(x0, x1, dtype=numpy.float64)[None, :] - x
    c, s = numpy.cos(angle), numpy.sin(angle)
    u, v = c * xx + s * yy, -s * xx + c * yy
    img[y0 - origin[0]:y1 - origin[0], x0 - origin[1]:x1 - origin[1]] += (
        peak * numpy.exp(-0.5 * ((u / sx) ** 2 + (v / sy) ** 2))).astype(numpy.float32)


def mosaic_chunk(sources, origin, shape, index, seed=datasets.SEED):
    """One chunk of the mosaic (host float32): noise drawn from (seed,
    chunk index) plus the given sources, placed at their mosaic
    coordinates relative to the chunk's corner `origin`."""
    rng = numpy.random.default_rng([seed, *index])
    img = rng.standard_normal(shape, dtype=numpy.float32)
    img *= numpy.float32(datasets._SIGMA)
    for source in _reaching(sources, origin[0], origin[0] + shape[0], origin[1],
                            origin[1] + shape[1]):
        _add_source(img, origin, *source)
    return img


def _device_chunk(sources, origin, shape, index, seed):
    import gpuarr
    return gpuarr.asarray(mosaic_chunk(sources, origin, shape, index, seed))


def synthetic_mosaic(size, chunk=4096, seed=datasets.SEED, xp=numpy):
    """A lazy size x size float32 dask array of chunk x chunk chunks (the
    last ones smaller), NumPy chunks (xp=numpy) or gpuarr chunks
    (xp=gpuarr: each made on the host and moved to its worker's GPU)."""
    import dask
    import dask.array as da
    import gpuarr
    size = _check_size(size, "size", 16)
    chunk = _check_size(chunk, "chunk", 8)
    if xp is not numpy and xp is not gpuarr:
        raise TypeError(f"xp must be numpy or gpuarr, got {xp!r}")
    sources = source_list(size, seed)
    edges = list(range(0, size, chunk)) + [size]
    make = mosaic_chunk if xp is numpy else _device_chunk
    meta = xp.empty((0, 0), dtype=numpy.float32)
    rows = []
    for i, (y0, y1) in enumerate(zip(edges[:-1], edges[1:])):
        row = []
        for j, (x0, x1) in enumerate(zip(edges[:-1], edges[1:])):
            mine = _reaching(sources, y0, y1, x0, x1)
            part = dask.delayed(make, pure=True)(mine, (y0, x0), (y1 - y0, x1 - x0), (i, j), seed)
            row.append(da.from_delayed(part, (y1 - y0, x1 - x0), numpy.float32, meta=meta))
        rows.append(row)
    return da.block(rows)


def _ms(seconds):
    return f"{1e3 * seconds:.1f} ms" if seconds < 10 else f"{seconds:.2f} s"


def pipeline(x, report=print):
    """The four steps on a chunked image x (a 2-d dask array), each timed
    (report gets one line per step).  Returns a dict: std (the clipped
    background sigma), count, positions ((count, 2) host float64),
    fluxes ((count,) host float64) and times (seconds per step)."""
    import dask
    from . import _keep, ndmeasure, stats
    from ._merge import _host

    times = []

    def step(i, name, fn, note):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
        report(f"  [{i}/4] {name:28s} {_ms(times[-1]):>10s}   {note(result)}")
        return result

    std = step(1, "kappa-sigma background",
               lambda: stats.sigma_clipped_stats(x, sigma=3, maxiters=None, inclusive=False)[2],
               lambda s: f"background sigma {float(s):.6g} Jy/beam")
    threshold = 5 * std
    segmented = step(2, "segmentation (5 sigma)", lambda: _keep.keep(x > threshold),
                     lambda _: f"threshold {float(threshold):.6g} Jy/beam")

    def labelling():
        labels, count = ndmeasure.label(segmented)
        return _keep.keep(labels), count

    labels, count = step(3, "labelling across chunks", labelling, lambda r: f"{r[1]} sources")

    def measure():
        if count == 0:
            return numpy.zeros((0, 2)), numpy.zeros(0)
        index = numpy.arange(1, count + 1)
        com, flux = dask.compute(ndmeasure.center_of_mass(x, labels, index),
                                 ndmeasure.sum_labels(x, labels, index))
        return _host(com).reshape(-1, 2), _host(flux)

    positions, fluxes = step(4, "centre of mass + flux", measure,
                             lambda r: f"brightest {r[1].max():.4g} Jy" if len(r[1])
                             else "no sources")
    return dict(std=std, count=count, positions=positions, fluxes=fluxes, times=times)


# Bytes a pixel that the pipeline keeps on the GPUs with everything held
# there: the image (4), the segmentation (1), the provisional labels (4)
# and the final ones (4), with room for one chunk's temporaries.
_BYTES_A_PIXEL = 16


def _gpu_room(workers):
    """Bytes the pipeline may keep on the GPU(s) it runs on: what the
    memory pool's limit leaves (GPUARR_GPU_MEMORY_LIMIT, set_limit), else
    the device's free memory, times the GPUs the workers use."""
    import gpuarr
    pool = gpuarr.get_default_memory_pool()
    # The pool reads GPUARR_GPU_MEMORY_LIMIT at its first allocation: make one.
    gpuarr.empty(1, numpy.uint8)
    limit = pool.get_limit()
    room = max(limit - pool.used_bytes(), 0) if limit else gpuarr.cuda.Device().mem_info[0]
    return room * max(1, min(workers, gpuarr.cuda.get_device_count()))


def run(size, chunk, workers=0, use_gpu=None, seed=datasets.SEED, report=print, keep=None):
    """`python -m gpuarr --mosaic`: make the mosaic (gpuarr chunks where a
    GPU can be used and use_gpu is not False), persist it, run the
    pipeline; with workers > 0 on a local distributed cluster of that many
    single-threaded worker processes (each given GPU i % the GPU count
    through CUDA_VISIBLE_DEVICES).  keep: where the mosaic and the
    pipeline's persisted arrays stay ("device", or "host": NumPy chunks
    in host memory, each moved to its GPU by the task that reads it;
    Dask's config "gpuarr.keep", _keep.py); None: "host" when they would
    not fit the GPU(s) (16 bytes a pixel against the memory pool's limit
    or the free memory).  Returns pipeline's dict."""
    import dask
    import gpuarr
    from . import _keep
    size = _check_size(size, "size", 16)
    chunk = _check_size(chunk, "chunk", 8)
    if isinstance(workers, bool) or not isinstance(workers, (int, numpy.integer)) or workers < 0:
        raise ValueError(f"workers must be a non-negative integer, got {workers!r}")
    if keep is not None and keep not in _keep.PLACES:
        raise ValueError(f"keep must be 'device', 'host' or None, got {keep!r}")
    gpu = gpuarr.is_available() if use_gpu is None else bool(use_gpu)
    if keep is None:
        keep = "host" if gpu and size * size * _BYTES_A_PIXEL > _gpu_room(workers) else "device"
    xp = gpuarr if gpu and keep == "device" else numpy
    per_side = math.ceil(size / chunk)
    report(f"mosaic {size} x {size} float32 in {per_side} x {per_side} chunks of up to "
           f"{chunk} x {chunk} ({'gpuarr chunks' if gpu else 'NumPy chunks'}"
           f"{', kept in host memory' if gpu and keep == 'host' else ''}, "
           f"{size * size * 4 / 2 ** 30:.2f} GiB; {len(source_list(size, seed))} sources drawn)")
    client = None
    try:
        if workers:
            from .cluster import local_cluster
            client = local_cluster(workers, gpu)
            report(f"  on a local distributed cluster of {workers} worker process(es)")
            scheduler = {}
        else:
            # gpuarr chunks: one thread drives the GPU; NumPy chunks: Dask's threads
            scheduler = {"scheduler": "synchronous"} if gpu else {}
        with dask.config.set({"gpuarr.keep": keep}, **scheduler):
            t = time.perf_counter()
            sky = synthetic_mosaic(size, chunk, seed, xp)
            sky = dask.persist(sky)[0]
            if workers:
                from distributed import wait
                wait(sky)
            if gpu and keep == "host":   # each task moves its chunk to its GPU
                sky = _keep.to_gpu(sky)
            report(f"  [0/4] {'made chunk by chunk':28s} {_ms(time.perf_counter() - t):>10s}")
            result = pipeline(sky, report)
        report(f"  all four steps {_ms(sum(result['times']))}; {result['count']} sources")
        return result
    finally:
        if client is not None:
            client.shutdown()
        if gpu and keep == "host":
            # asnumpy's results of 64 KiB or more are page-locked, from
            # gpuarr's pinned pool, which keeps them cached once freed
            gpuarr.get_default_pinned_memory_pool().free_all_blocks()
