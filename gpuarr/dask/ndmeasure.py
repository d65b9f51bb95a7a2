"""gpuarr.dask.ndmeasure: measurements of chunked images across chunks,
named as dask-image's ndmeasure.  Chunks may be NumPy arrays (labelled by
SciPy) or gpuarr arrays (labelled by gpuarr.scipy.ndimage on their GPU).

label(image) runs in two passes over the graph: each chunk is labelled
on its own and kept (persisted: on the GPU, or in host memory with Dask's
config "gpuarr.keep" = "host", _keep.py), the small summaries that tie the chunks
together are computed once (each chunk's label count, the first raster
position of each of its labels, and the image-wide planes on both sides
of every chunk boundary), merged on the host (gpuarr/dask/_merge.py), and
the result is a lazy dask array that maps each chunk's labels to the
final numbers: scipy.ndimage.label's numbering of the whole image.
"""
import numpy

from . import _keep, _merge, _register

__all__ = ["label", "sum_labels", "center_of_mass"]


def _namespace(image):
    """(xp, the ndimage module) for the chunk type of a dask array (and
    gpuarr's registrations with Dask made)."""
    import gpuarr
    _register._register_now()
    if isinstance(getattr(image, "_meta", None), gpuarr.ndarray):
        from gpuarr.scipy import ndimage
        return gpuarr, ndimage
    import scipy.ndimage
    return numpy, scipy.ndimage


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
    xp, ndimage = _namespace(image)

    def provisional(block):
        return ndimage.label(block, structure)[0].astype(numpy.int32)

    local = _keep.keep(image.map_blocks(provisional, dtype=numpy.int32))
    grid = local.numblocks
    edges = [numpy.concatenate([[0], numpy.cumsum(c)]) for c in local.chunks]
    blocks = local.to_delayed()
    counts = dask.compute(*[dask.delayed(lambda b: int(b.max()) if b.size else 0)(blocks[pos])
                            for pos in numpy.ndindex(*grid)])
    offsets = numpy.zeros(grid, numpy.int64)
    offsets.flat[1:] = numpy.cumsum(counts)[:-1]
    counts = numpy.asarray(counts, numpy.int64).reshape(grid)
    total = int(counts.sum())

    def plane(axis, index, sl):
        """The image-wide plane local[sl] (thickness 1 along axis, in the
        blocks at grid index `index` along it) as provisional ids: the
        offsets added after slicing, so no block is widened whole."""
        def ids(block, block_info=None):
            where = list(block_info[0]["chunk-location"])
            where[axis] = index
            return _merge.provisional_ids(block, offsets[tuple(where)], xp)
        return local[sl].map_blocks(ids, dtype=numpy.int64, meta=xp.empty((0,) * ndim, numpy.int64))

    firsts = [dask.delayed(_merge.block_first_positions)(
                  blocks[pos], int(counts[pos]), [int(edges[d][pos[d]]) for d in range(ndim)],
                  image.shape, xp)
              for pos in numpy.ndindex(*grid)]
    planes = []
    for axis in range(ndim):
        for i, b in enumerate(edges[axis][1:-1], start=1):
            before = [slice(None)] * ndim
            after = [slice(None)] * ndim
            before[axis], after[axis] = slice(b - 1, b), slice(b, b + 1)
            planes.append((axis, plane(axis, i - 1, tuple(before)), plane(axis, i, tuple(after))))
    computed = dask.compute(firsts, [(p[1], p[2]) for p in planes])
    firsts = (numpy.concatenate(computed[0]) if computed[0]
              else numpy.zeros(0, numpy.int64))
    pairs = [numpy.zeros((0, 2), numpy.int64)]
    for (axis, _, _), (before, after) in zip(planes, computed[1]):
        pairs.append(_merge.boundary_pairs(before, after, axis, structure, xp))
    table, count = _merge.merge_equivalences(numpy.concatenate(pairs), total, firsts)
    # each block's own slice of the table, int32 like its labels: the
    # final pass holds a block's labels in and out, 8 bytes a pixel
    tables = numpy.empty(grid, dtype=object)
    for pos in numpy.ndindex(*grid):
        tables[pos] = _merge.block_table(table, int(offsets[pos]), int(counts[pos]))

    def final(block, block_info=None):
        return xp.take(xp.asarray(tables[block_info[0]["chunk-location"]]), block)

    # meta given: Dask infers it by calling the function on an empty block
    # without block_info, which fails, and then falls back to a NumPy meta
    # (so keep() would not see gpuarr chunks and kept them on the GPU)
    return local.map_blocks(final, dtype=numpy.int32, meta=xp.empty((0,) * ndim, numpy.int32)), count


# ------------------------------------------- measurements from partial sums

def _moments(block, labels, origin, index, xp, ndimage):
    """(len(index), 1 + ndim) float64: per label of index, the sum of the
    block's values and of the values times each global coordinate."""
    cols = [ndimage.sum_labels(block, labels, index)]
    for d in range(block.ndim):
        shape = [1] * block.ndim
        shape[d] = block.shape[d]
        coord = (xp.arange(block.shape[d], dtype=numpy.float64) + origin[d]).reshape(shape)
        cols.append(ndimage.sum_labels(block * coord, labels, index))
    return xp.stack([xp.asarray(c, dtype=numpy.float64).reshape(-1) for c in cols], axis=1)


def _partial_sums(image, label_image, index):
    """The moments of every chunk, summed (a lazy (K, 1 + ndim) dask
    array), and whether index was a sequence.  index None: every label
    above 0 together, as SciPy; label_image None: the whole image."""
    import dask
    import dask.array as da

    if not isinstance(image, da.Array):
        raise TypeError(f"image must be a dask array, not {type(image).__name__}")
    if label_image is None:
        label_image = da.ones(image.shape, dtype=numpy.int32, chunks=image.chunks)
        index = None
    if not isinstance(label_image, da.Array):
        raise TypeError(f"label_image must be a dask array, not {type(label_image).__name__}")
    if label_image.shape != image.shape:
        raise ValueError(f"label_image's shape {label_image.shape} differs from image's "
                         f"{image.shape}")
    label_image = label_image.rechunk(image.chunks)
    many = index is not None and numpy.ndim(index) > 0
    if index is None:
        label_image = (label_image > 0).astype(numpy.int32)
        index = [1]
    # an array, not a list: Dask walks a list argument element by element
    # in every task it makes (~30 ms a task for 25773 labels)
    index = numpy.atleast_1d(numpy.asarray(index))
    xp, ndimage = _namespace(image)
    edges = [numpy.concatenate([[0], numpy.cumsum(c)]) for c in image.chunks]
    blocks, labels = image.to_delayed(), label_image.to_delayed()
    parts = []
    for pos in numpy.ndindex(*image.numblocks):
        origin = [int(edges[d][pos[d]]) for d in range(image.ndim)]
        # pure: sum_labels and center_of_mass of the same chunks computed
        # together share these tasks
        part = dask.delayed(_moments, pure=True)(blocks[pos], labels[pos], origin, index, xp,
                                                 ndimage)
        parts.append(da.from_delayed(part, (len(index), 1 + image.ndim), numpy.float64,
                                     meta=xp.empty((0, 0), dtype=numpy.float64)))
    return da.stack(parts).sum(axis=0), many


def sum_labels(image, label_image=None, index=None):
    """The sum of image's values per label of index (a sequence: a 1-d
    dask array; a scalar or None, every label above 0 together: 0-d),
    float64 as SciPy's, from each chunk's partial sums."""
    total, many = _partial_sums(image, label_image, index)
    return total[:, 0] if many else total[0, 0]


def center_of_mass(image, label_image=None, index=None):
    """The centre of mass of image's values per label of index ((K, ndim)
    for a sequence, (ndim,) otherwise; NaN for a label of zero mass), as
    SciPy's, from each chunk's partial sums of the values and of the
    values times the coordinates."""
    total, many = _partial_sums(image, label_image, index)
    com = total[:, 1:] / total[:, :1]
    return com if many else com[0]
