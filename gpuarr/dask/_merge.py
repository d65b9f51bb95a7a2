"""Labels of an image held as a grid of blocks, numbered as
scipy.ndimage.label numbers them on the whole image: the part of
connected-component labelling that Dask cannot do generically, written
for any array namespace (NumPy for the CPU and the tests, gpuarr for
chunks on GPUs) so a Dask graph can call each step on its chunks.

1. Each block is labelled on its own (scipy.ndimage.label, or gpuarr's),
   and its labels get an offset: provisional ids, unique over the image.
2. Components that cross block boundaries: for each axis and each
   boundary between blocks along it, the two image-wide planes that meet
   there (the last one before the boundary and the first one after it,
   assembled from the blocks that touch it) are compared through the
   structuring element's offsets that cross the boundary, diagonals too,
   so corners where four blocks meet need nothing more.  Each pair of
   foreground pixels connected that way is an equivalence of two ids.
3. The equivalences are few (at most the boundary planes' sizes): they are
   merged on the host by union-find with pointer jumping (NumPy).
4. Numbering: scipy.ndimage.label numbers components in the order of
   their first pixel in a raster scan of the image.  Inside a block the
   local raster order is the global one restricted to the block, so each
   local label's first pixel (its first occurrence in the block) has the
   smallest global raster index of the label in that block; a merged
   component's first pixel is the smallest over its ids.  Sorting the
   components by it gives the final numbers.
5. Each block's local labels are mapped to the final numbers by one
   lookup (take) in its own slice of the table (block_table).
"""
import numpy

__all__ = ["block_first_positions", "boundary_pairs", "merge_equivalences",
           "provisional_ids", "block_table", "relabel", "label_grid"]


def _structure(structure, ndim):
    if structure is None:                     # scipy's default: faces only
        s = numpy.zeros((3,) * ndim, bool)
        for d in range(ndim):
            idx = [1] * ndim
            for v in (0, 2):
                idx[d] = v
                s[tuple(idx)] = True
        s[(1,) * ndim] = True
        return s
    s = numpy.asarray(structure, bool)
    if s.shape != (3,) * ndim:
        raise ValueError(f"structure must have shape {(3,) * ndim} for a {ndim}-d image")
    return s


def block_first_positions(labels, count, origin, image_shape, xp=numpy):
    """The global raster index (C order over image_shape) of the first
    pixel of each local label 1..count of a block whose corner is at
    `origin`: a host int64 array of length count."""
    if count == 0:
        return numpy.zeros(0, numpy.int64)
    flat = labels.ravel()
    values, first = xp.unique(flat, return_index=True)
    values, first = _host(values), _host(first)
    keep = values > 0
    local = numpy.unravel_index(first[keep], labels.shape)
    coords = [o + c for o, c in zip(origin, local)]
    out = numpy.empty(count, numpy.int64)
    out[values[keep].astype(numpy.int64) - 1] = numpy.ravel_multi_index(coords, image_shape)
    return out


def boundary_pairs(before, after, axis, structure, xp=numpy):
    """The equivalences across one boundary: `before` and `after` are the
    image-wide planes of provisional ids (0: background) on either side of
    it, as (ndim)-d arrays of thickness 1 along `axis`; each offset of the
    structuring element that crosses the boundary pairs a pixel of
    `before` with the pixel of `after` at that offset.  A host (k, 2)
    int64 array of the id pairs (both foreground), without repeats."""
    ndim = before.ndim
    s = _structure(structure, ndim)
    pairs = []
    for off in zip(*numpy.nonzero(s)):
        delta = [o - 1 for o in off]
        if delta[axis] != 1:
            continue
        src, dst = [], []
        for d in range(ndim):
            n = before.shape[d]
            if d == axis:
                src.append(slice(None))
                dst.append(slice(None))
            elif delta[d] >= 0:
                src.append(slice(0, n - delta[d]))
                dst.append(slice(delta[d], n))
            else:
                src.append(slice(-delta[d], n))
                dst.append(slice(0, n + delta[d]))
        a, b = before[tuple(src)].ravel(), after[tuple(dst)].ravel()
        both = (a > 0) & (b > 0)
        pairs.append(xp.stack([a[both], b[both]], axis=1))
    if not pairs:
        return numpy.zeros((0, 2), numpy.int64)
    out = _host(xp.concatenate(pairs, axis=0)).astype(numpy.int64)
    return numpy.unique(out, axis=0) if len(out) else out.reshape(0, 2)


def _host(x):
    return x.get() if hasattr(x, "get") and not isinstance(x, numpy.ndarray) else numpy.asarray(x)


def _roots(parent, x):
    r = parent[x]
    while True:
        nxt = parent[r]
        if numpy.array_equal(nxt, r):
            return r
        r = nxt


def merge_equivalences(pairs, total, firsts):
    """(table, count): the final number of each provisional id 0..total
    (table[0] = 0) and the number of components, from the id pairs that
    are one component and each id's first global raster index
    (firsts[id - 1])."""
    parent = numpy.arange(total + 1, dtype=numpy.int64)
    a, b = pairs[:, 0], pairs[:, 1]
    while len(a):
        ra, rb = _roots(parent, a), _roots(parent, b)
        apart = ra != rb
        if not apart.any():
            break
        lo, hi = numpy.minimum(ra, rb)[apart], numpy.maximum(ra, rb)[apart]
        numpy.minimum.at(parent, hi, lo)
        a, b = a[apart], b[apart]
    ids = numpy.arange(1, total + 1)
    root = _roots(parent, ids)
    first = numpy.full(total + 1, numpy.iinfo(numpy.int64).max, numpy.int64)
    numpy.minimum.at(first, root, firsts)
    roots = numpy.unique(root)
    order = numpy.argsort(first[roots], kind="stable")
    number = numpy.zeros(total + 1, numpy.int64)
    number[roots[order]] = numpy.arange(1, len(roots) + 1)
    table = numpy.zeros(total + 1, numpy.int64)
    table[1:] = number[root]
    return table, len(roots)


def provisional_ids(labels, offset, xp=numpy):
    """A block's (or a slice of it) local labels as provisional ids: int64,
    labels + offset where foreground, 0 elsewhere."""
    return xp.where(labels > 0, labels.astype(numpy.int64) + int(offset), 0)


def block_table(table, offset, count, dtype=numpy.int32):
    """A block's lookup table: entry k (1 <= k <= count) is the final
    number of the block's local label k (provisional id offset + k),
    entry 0 stays background.  A host array of count + 1 entries, so the
    block's labels map in one take of its own dtype, no wider ids."""
    piece = numpy.asarray(table[offset:offset + count + 1], dtype=dtype).copy()
    piece[0] = 0
    return piece


def relabel(labels, offset, count, table, xp=numpy, dtype=numpy.int32):
    """A block's final labels: its local labels (1..count, 0 background)
    looked up in block_table(table, offset, count) on the block's device."""
    return xp.take(xp.asarray(block_table(table, offset, count, dtype)), labels)


def label_grid(blocks, label, structure=None, xp=numpy):
    """Label a grid of blocks (a NumPy object array of the blocks, one
    per grid position, shaped as the grid) as scipy.ndimage.label labels
    the image they tile: (grid of int32 label blocks, count).  `label` is
    f(block, structure) -> (labels, count), run on each block."""
    blocks = numpy.asarray(blocks, dtype=object)
    grid = blocks.shape
    ndim = len(grid)
    _structure(structure, ndim)               # its shape checked before any block is labelled
    sizes = [[blocks[tuple(i if d == axis else 0 for d in range(ndim))].shape[axis]
              for i in range(grid[axis])] for axis in range(ndim)]
    edges = [numpy.concatenate([[0], numpy.cumsum(s)]) for s in sizes]
    image_shape = tuple(int(e[-1]) for e in edges)
    labels = numpy.empty(grid, dtype=object)
    offsets = numpy.zeros(grid, numpy.int64)
    counts = numpy.zeros(grid, numpy.int64)
    firsts, total = [], 0
    for pos in numpy.ndindex(*grid):
        lab, n = label(blocks[pos], structure)
        labels[pos], offsets[pos], counts[pos] = lab, total, int(n)
        origin = [int(edges[d][pos[d]]) for d in range(ndim)]
        firsts.append(block_first_positions(lab, int(n), origin, image_shape, xp))
        total += int(n)
    firsts = numpy.concatenate(firsts) if firsts else numpy.zeros(0, numpy.int64)
    pairs = [numpy.zeros((0, 2), numpy.int64)]
    for axis in range(ndim):
        for i in range(1, grid[axis]):
            before, after = _plane(labels, offsets, axis, i - 1, -1, xp), \
                _plane(labels, offsets, axis, i, 0, xp)
            pairs.append(boundary_pairs(before, after, axis, structure, xp))
    table, count = merge_equivalences(numpy.concatenate(pairs), total, firsts)
    out = numpy.empty(grid, dtype=object)
    for pos in numpy.ndindex(*grid):
        out[pos] = relabel(labels[pos], int(offsets[pos]), int(counts[pos]), table, xp)
    return out, count


def _plane(labels, offsets, axis, index, at, xp):
    """The image-wide plane of provisional ids at position `at` (0 or -1)
    along `axis` of the blocks at grid index `index` along it."""
    grid = labels.shape

    def piece(pos):
        lab = labels[pos]
        sl = [slice(None)] * lab.ndim
        sl[axis] = slice(at, at + 1) if at >= 0 else slice(at, None)
        part = lab[tuple(sl)]
        return provisional_ids(part, offsets[pos], xp)

    def assemble(prefix, d):
        if d == len(grid):
            return piece(tuple(prefix))
        if d == axis:
            return assemble(prefix + [index], d + 1)
        return xp.concatenate([assemble(prefix + [i], d + 1) for i in range(grid[d])], axis=d)

    return assemble([], 0)
