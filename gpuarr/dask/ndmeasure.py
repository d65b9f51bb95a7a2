"""gpuarr.dask.ndmeasure: measurements of chunked images across chunks,
named as dask-image's ndmeasure.  Chunks may be NumPy arrays (labelled by
SciPy) or gpuarr arrays (labelled by gpuarr.scipy.ndimage on their GPU).

label(image) runs in two passes over the graph: each chunk is labelled
on its own and kept (persist), the small summaries that tie the chunks
together are computed once (each chunk's label count, the first raster
position of each of its labels, and the image-wide planes on both sides
of every chunk boundary), merged on the host (gpuarr/dask/_merge.py), and
the result is a lazy dask array that maps each chunk's labels to the
final numbers: scipy.ndimage.label's numbering of the whole image.
"""
import numpy

from . import _merge

__all__ = ["label"]


def _namespace(image):
    """(xp, per-chunk labeller) for the chunk type of a dask array."""
    import gpuarr
    if isinstance(getattr(image, "_meta", None), gpuarr.ndarray):
        from gpuarr.scipy import ndimage
        return gpuarr, ndimage.label
    import scipy.ndimage
    return numpy, scipy.ndimage.label


def label(image, structure=None):
    """(labels, count): the connected components of a chunked image (a
    dask array; nonzero is foreground) numbered as scipy.ndimage.label
    numbers the whole image.  labels is a lazy int32 dask array with
    image's chunks; count is an int (computing it runs the first pass)."""
    import dask
    import dask.array as da

    if not isinstance(image, da.Array):
        raise TypeError(f"label: image must be a dask array, not {type(image).__name__}")
    ndim = image.ndim
    _merge._structure(structure, ndim)                 # NumPy's error before any work
    xp, chunk_label = _namespace(image)

    def provisional(block):
        return chunk_label(block, structure)[0].astype(numpy.int32)

    local = image.map_blocks(provisional, dtype=numpy.int32).persist()
    grid = local.numblocks
    edges = [numpy.concatenate([[0], numpy.cumsum(c)]) for c in local.chunks]
    blocks = local.to_delayed()
    counts = dask.compute(*[dask.delayed(lambda b: int(b.max()) if b.size else 0)(blocks[pos])
                            for pos in numpy.ndindex(*grid)])
    offsets = numpy.zeros(grid, numpy.int64)
    offsets.flat[1:] = numpy.cumsum(counts)[:-1]
    total = int(sum(counts))

    def with_offsets(block, block_info=None):
        where = block_info[0]["chunk-location"]
        return xp.where(block > 0, block.astype(numpy.int64) + int(offsets[where]), 0)

    ids = local.map_blocks(with_offsets, dtype=numpy.int64)
    firsts = [dask.delayed(_merge.block_first_positions)(
                  blocks[pos], counts[i], [int(edges[d][pos[d]]) for d in range(ndim)],
                  image.shape, xp)
              for i, pos in enumerate(numpy.ndindex(*grid))]
    planes = []
    for axis in range(ndim):
        for b in edges[axis][1:-1]:
            before = [slice(None)] * ndim
            after = [slice(None)] * ndim
            before[axis], after[axis] = slice(b - 1, b), slice(b, b + 1)
            planes.append((axis, ids[tuple(before)], ids[tuple(after)]))
    computed = dask.compute(firsts, [(p[1], p[2]) for p in planes])
    firsts = (numpy.concatenate(computed[0]) if computed[0]
              else numpy.zeros(0, numpy.int64))
    pairs = [numpy.zeros((0, 2), numpy.int64)]
    for (axis, _, _), (before, after) in zip(planes, computed[1]):
        pairs.append(_merge.boundary_pairs(before, after, axis, structure, xp))
    table, count = _merge.merge_equivalences(numpy.concatenate(pairs), total, firsts)

    def final(block):
        return xp.take(xp.asarray(table), block).astype(numpy.int32)

    return ids.map_blocks(final, dtype=numpy.int32), count
