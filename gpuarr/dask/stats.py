"""gpuarr.dask.stats: sigma clipping and an exact median of chunked data
(a dask array of NumPy or gpuarr chunks), with the results gpuarr.stats
gives on the whole array.

    >>> from gpuarr.dask import stats
    >>> x = x.persist()                     # every pass below reads the chunks
    >>> mean, median, std = stats.sigma_clipped_stats(x, sigma=3, maxiters=None)
    >>> clipped = stats.sigma_clip(x)       # .data, .mask (a lazy dask array)

How it runs.  Sigma clipping is the loop of gpuarr.stats (src/kernels/
stats.cu says why it works): after every clip the survivors are the values
inside one interval, the intersection of all bounds so far, so an iteration
needs only the count, mean and spread of the values inside the interval and
their median -- no chunk is ever compacted or rewritten.  The loop runs on
the host; each step is one compute over the chunks:

* moments: each chunk's count, mean and sum of squared deviations of its
  values inside the interval (float64, two passes over the chunk), combined
  on the host (Chan et al.'s pairwise update);
* median: a radix selection on the values' order-preserving integer keys,
  16 bits a pass (2 passes for float32, 4 for float64), both middle
  elements at once; each pass sums the chunks' 65536-bin digit histograms
  (added up on the workers).  The first pass shares the moments' compute.
  It is exact: numpy.median's value, not an approximate percentile.
* 'mad_std': a second selection, of |x - median| inside the interval.

So a float32 iteration with the default median/std is two computes.  The
bounds are formed in the data's precision, as gpuarr.stats (and NumPy's
``med - 3 * std``) forms them, so clipping the chunks gives gpuarr.stats'
bounds, mask and statistics on the assembled array; the float64 sums of
the mean and std are added in another order, so they may differ in the
last bit of a float64 result.  Arguments and their meaning are those of
gpuarr.stats (astropy's, plus ``inclusive``); the differences:

* Without ``axis``, bounds and statistics are host NumPy scalars (the
  loop ran on the host), in the data's floating dtype (float64 for integer
  data).
* With ``axis`` (an int or a tuple, as gpuarr.stats) each row is clipped
  where it lies whole: the array is rechunked so that the clipped axes are
  one chunk (no rechunk when they already are), each block of whole rows
  runs gpuarr.stats' per-row clipping (on NumPy chunks the same rules in
  NumPy), the rows' bounds and statistics are persisted, and the mask (or
  masked=False's NaN-filled copy) is made lazily on the input's chunks
  from each row's last bounds.  Bounds and statistics are then arrays of
  the other axes' shape (as gpuarr.stats gives them), of the chunks' type
  (NumPy or gpuarr).  The trade-off: the rechunk moves the data once
  (an all-to-all over the clipped axes' chunks) and one compute clips every
  row, medians exact; a block holds at most the larger of the input's
  largest chunk and Dask's ``array.chunk-size`` (the other axes are cut to
  fit), but at least one whole row, plus gpuarr.stats' working copy of it
  -- so a row must fit one worker's (one GPU's) memory.  A single row too
  long for that is ``axis=None``'s job.
* ``masked=True`` returns a :class:`ClippedArray` of dask arrays (``mask``
  is computed lazily from the last bounds); ``masked=False`` the lazy 1-d
  survivors in raster order (unknown chunk sizes, as Dask's boolean
  indexing gives); ``copy`` is ignored (dask arrays are immutable).
* Each pass computes the chunks: persist the array first, or the chunks
  are made again (read, generated) on every pass.
"""
import math

import numpy
from numpy.lib.array_utils import normalize_axis_tuple

from . import _merge, _register

__all__ = ["sigma_clip", "sigma_clipped_stats", "median", "ClippedArray"]

_DIGIT = 16
_BINS = 1 << _DIGIT
_MAD_STD = 1.482602218505602          # 1 / Phi^-1(3/4), gpuarr.stats' constant


def _dask_array(x, name):
    import dask.array as da
    _register._register_now()
    if not isinstance(x, da.Array):
        raise TypeError(f"{name} must be a dask array, not {type(x).__name__} "
                        f"(dask.array.from_array makes one)")
    return x


def _xp(x):
    """The array module of a dask array's chunks: gpuarr or NumPy."""
    import gpuarr
    return gpuarr if isinstance(getattr(x, "_meta", None), gpuarr.ndarray) else numpy


# ----------------------------------------------------- work on one chunk ----

def _values(block, dtype):
    return block.astype(dtype, copy=False).reshape(-1)


def _inside(v, lo, hi, inclusive):
    """Where v lies in the interval (lo, hi are Python floats that the
    working dtype holds exactly; NaN is never inside)."""
    return (v >= lo) & (v <= hi) if inclusive else (v > lo) & (v < hi)


def _keys(v, dtype, xp):
    """The values as unsigned keys in the order of the values (negative
    floats: all bits flipped; others: the sign bit set)."""
    bits = numpy.dtype(dtype).itemsize * 8
    utype = numpy.dtype(f"u{bits // 8}")
    k = xp.ascontiguousarray(v).view(utype)
    sign = utype.type(1 << (bits - 1))
    return xp.where((k & sign) != 0, ~k, k | sign)


def _moments(block, dtype, interval, xp):
    """(count, mean, sum of squared deviations from it) of the block's
    values inside the interval, float64, as host numbers."""
    v = _values(block, dtype)
    keep = _inside(v, *interval)
    n = int(keep.sum())
    if n == 0:
        return numpy.array([0.0, 0.0, 0.0])
    w = v.astype(numpy.float64)
    mean = float(xp.where(keep, w, 0.0).sum()) / n
    dev = xp.where(keep, w - mean, 0.0)
    return numpy.array([float(n), mean, float((dev * dev).sum())])


def _digit_counts(block, dtype, interval, about, shift, prefixes, xp):
    """Host int64 (len(prefixes) or 1, 65536): counts of the 16-bit digit
    at `shift` of the keys of the block's values inside the interval (of
    |value - about| when `about` is given), among the keys whose higher
    bits equal each prefix (prefixes None: all of them)."""
    v = _values(block, dtype)
    keep = _inside(v, *interval)
    if about is not None:
        v = abs(v - about)
    keys = _keys(v, dtype, xp)
    out = []
    for prefix in (None,) if prefixes is None else prefixes:
        sel = keep if prefix is None else keep & ((keys >> (shift + _DIGIT)) == prefix)
        # Only the selected keys are counted: a spare bin for the others took
        # nearly every value of a chunk at the lower passes, all atomics on
        # one address (13 ms a 4096^2 float32 chunk on the H200).
        digits = ((keys[sel] >> shift) & (_BINS - 1)).astype(numpy.int64)   # uint64: not intp
        counts = xp.bincount(digits, minlength=_BINS)
        out.append(_merge._host(counts).astype(numpy.int64))
    return out[0][None] if len(out) == 1 else numpy.stack(out)


def _clipped(block, dtype, bounds, inclusive, xp):
    """The mask of a block: not finite, or outside the last bounds (none
    when they are NaN)."""
    v = block.astype(dtype, copy=False)
    mask = ~xp.isfinite(v)
    lo, hi = bounds
    if not (math.isnan(lo) or math.isnan(hi)):
        mask |= ~_inside(v, lo, hi, inclusive)
    return mask


def _kept(block, dtype, interval, xp):
    return _inside(block.astype(dtype, copy=False), *interval)


def _masked_to_nan(block, mask, mask_value, dtype, xp):
    v = block.astype(dtype)
    if mask is not None:
        v = xp.where(mask, numpy.nan, v)
    if mask_value is not None:
        v = xp.where(v == mask_value, numpy.nan, v)
    return v


# ---------------------------------------------------- passes over chunks ----

def _tree_sum(parts, fan=8):
    """The sum of the host arrays that delayed tasks make, added up on the
    workers in a tree of `fan` parts a node (a delayed array)."""
    import dask
    while len(parts) > 1:
        parts = [dask.delayed(_add)(*parts[i:i + fan]) for i in range(0, len(parts), fan)]
    return parts[0]


def _add(*arrays):
    """The sum of host arrays of one shape, added in place into a copy of
    the first (numpy.sum over them stacked them first: a copy of all)."""
    total = numpy.array(arrays[0], copy=True)
    for a in arrays[1:]:
        total += a
    return total


def _combine(moments):
    """(count, mean, m2) of the union of parts given as rows (count, mean,
    m2): the pairwise update of Chan, Golub and LeVeque."""
    n, mean, m2 = 0.0, 0.0, 0.0
    for nb, mb, m2b in moments:
        if nb == 0:
            continue
        total = n + nb
        delta = mb - mean
        mean += delta * (nb / total)
        m2 += m2b + delta * delta * (n * nb / total)
        n = total
    return int(n), mean, m2


class _Chunks:
    """The blocks of a dask array and what every pass over them needs."""

    def __init__(self, x, dtype):
        self.blocks = list(x.to_delayed().ravel())
        self.dtype = numpy.dtype(dtype)
        self.bits = self.dtype.itemsize * 8
        self.xp = _xp(x)

    def digit_counts(self, interval, about, shift, prefixes):
        import dask
        return _tree_sum([dask.delayed(_digit_counts)(b, self.dtype, interval, about, shift,
                                                      prefixes, self.xp)
                          for b in self.blocks])

    def moments(self, interval):
        import dask
        return [dask.delayed(_moments)(b, self.dtype, interval, self.xp) for b in self.blocks]

    def moments_and_first_digits(self, interval):
        """((count, mean, m2), the first digit pass of the median) in one
        compute."""
        import dask
        moments, hist = dask.compute(self.moments(interval),
                                     self.digit_counts(interval, None, self.bits - _DIGIT, None))
        return _combine(moments), hist

    def select(self, interval, count, about=None, first=None):
        """The values of ranks (count - 1) // 2 and count // 2 among the
        values inside the interval (|value - about|), as dtype scalars;
        `first`: the first digit pass's histogram, if already counted."""
        ranks = [(count - 1) // 2, count // 2]
        prefixes = [0, 0]
        for shift in range(self.bits - _DIGIT, -1, -_DIGIT):
            top = shift == self.bits - _DIGIT
            split = not top and prefixes[0] != prefixes[1]
            if top and first is not None:
                hist = first
            else:
                want = None if top else (prefixes if split else prefixes[:1])
                hist = self.digit_counts(interval, about, shift, want).compute()
            for t in range(2):
                below = numpy.cumsum(hist[1 if split and t else 0])
                digit = int(numpy.searchsorted(below, ranks[t], side="right"))
                ranks[t] -= int(below[digit - 1]) if digit else 0
                prefixes[t] = (prefixes[t] << _DIGIT) | digit
        return tuple(_decode(p, self.dtype) for p in prefixes)

    def median(self, interval, count, about=None, first=None):
        """numpy.median of the values inside the interval (of |value -
        about|): the mean of the two middle values in the dtype."""
        lo, hi = self.select(interval, count, about, first)
        return (lo + hi) / self.dtype.type(2)


def _decode(key, dtype):
    bits = dtype.itemsize * 8
    utype = numpy.dtype(f"u{bits // 8}")
    key = utype.type(key)
    sign = utype.type(1 << (bits - 1))
    raw = key & ~sign if key & sign else ~key
    return numpy.array([raw], utype).view(dtype)[0]


# ------------------------------------------------------------ the median ----

def median(x, lo=None, hi=None):
    """The exact median of a dask array's values (all of them, or those
    inside the open interval (lo, hi); a missing bound is infinite), as
    numpy.median gives it: NaN if any value is NaN (unless an interval is
    given: NaN is never inside one), the mean of the two middle values for
    an even count.  Floats keep their type; other types are taken as
    float64.  A host scalar; each 16 bits of the key cost one compute over
    the chunks."""
    import dask
    import dask.array as da

    x = _dask_array(x, "x")
    dtype = numpy.dtype(x.dtype) if x.dtype.kind == "f" and x.dtype.itemsize in (4, 8) \
        else numpy.dtype(numpy.float64)
    chunks = _Chunks(x, dtype)
    if lo is None and hi is None:
        if int(da.isnan(x).sum().compute()):
            return dtype.type(numpy.nan)
        interval = (-math.inf, math.inf, True)
    else:
        interval = (-math.inf if lo is None else float(lo),
                    math.inf if hi is None else float(hi), False)
    n = int(sum(dask.compute(*[dask.delayed(lambda b: int(_kept(b, dtype, interval,
                                                                chunks.xp).sum()))(b)
                               for b in chunks.blocks])))
    if n == 0:
        return dtype.type(numpy.nan)
    return chunks.median(interval, n)


# ------------------------------------------------------ sigma clipping ----

class _State:
    """What the clipping loop knows, as gpuarr.stats' per-row state."""

    def __init__(self, dtype, inclusive):
        big = float(numpy.finfo(dtype).max) if inclusive else math.inf
        self.lo, self.hi = -big, big
        self.bound_lo = self.bound_hi = math.nan
        self.mean = self.median = self.std = math.nan
        self.iterations = 0


def _clip(x, checked, inclusive, final_stats):
    """The clipping loop over the chunks of x (already in the working
    dtype): the final _State."""
    cen_median, std_mad, lower, upper, maxiters, ddof = checked
    dtype = numpy.dtype(x.dtype)
    T = dtype.type
    chunks = _Chunks(x, dtype)
    st = _State(dtype, inclusive)
    prev_count = -1
    while maxiters < 0 or st.iterations < maxiters:
        interval = (st.lo, st.hi, inclusive)
        (count, mean, m2), first = chunks.moments_and_first_digits(interval)
        st.mean, st.std = _mean_std(count, mean, m2, ddof)
        if count == 0:                        # everything clipped: NaN bounds, the end
            st.median = math.nan
            st.bound_lo = st.bound_hi = math.nan
            st.iterations += 1
            return st
        if st.iterations > 0 and count == prev_count:    # nothing clipped: converged
            return st
        med = chunks.median(interval, count, first=first)
        st.median = float(med)
        centre = med if cen_median else T(mean)
        if std_mad:
            spread = T(_MAD_STD) * chunks.median(interval, count, about=float(med))
        else:
            spread = T(math.sqrt(m2 / count))
        blo = centre - spread * T(lower)
        bhi = centre + spread * T(upper)
        st.bound_lo, st.bound_hi = float(blo), float(bhi)
        st.lo = st.lo if st.lo > st.bound_lo else st.bound_lo
        st.hi = st.hi if st.hi < st.bound_hi else st.bound_hi
        prev_count = count
        st.iterations += 1
    if final_stats:                           # the survivors of the last clip
        interval = (st.lo, st.hi, inclusive)
        (count, mean, m2), first = chunks.moments_and_first_digits(interval)
        st.mean, st.std = _mean_std(count, mean, m2, ddof)
        st.median = float(chunks.median(interval, count, first=first)) if count else math.nan
    return st


def _mean_std(count, mean, m2, ddof):
    if count == 0:
        return math.nan, math.nan
    with numpy.errstate(divide="ignore", invalid="ignore"):
        return mean, float(numpy.sqrt(numpy.float64(m2) / numpy.float64(count - ddof)))


# ------------------------------------------------ clipping along axes ----
#
# With ``axis`` every row (the values along the clipped axes at one index
# of the others) is clipped on its own, and a row is clipped where it lies
# whole: the chunks are rechunked so that the clipped axes are one chunk
# (Dask moves each value once; the other axes are cut so that a block holds
# at most the larger of the input's largest chunk and Dask's
# ``array.chunk-size``, and at least one row), and each block runs the
# single-array per-row clipping: gpuarr.stats on gpuarr chunks, _clip_rows
# (the same rules in NumPy) on NumPy chunks.  A block returns its rows'
# _FIELDS, kept (persisted) as a small dask array of the reduced shape; the
# mask and the NaN-filled copy are then made lazily on the input's own
# chunks from each row's last bounds.

_FIELDS = 5                                   # lower, upper, mean, median, std
_F_LOWER, _F_UPPER, _F_MEAN, _F_MEDIAN, _F_STD = range(_FIELDS)


def _axes(axis, ndim):
    """axis (an int or a tuple of ints, negative from the end) as a sorted
    tuple of distinct axes (numpy's normalize_axis_tuple, bools refused);
    TypeError, numpy's AxisError or ValueError naming the argument."""
    for a in axis if isinstance(axis, tuple) else (axis,):
        if isinstance(a, (bool, numpy.bool_)):
            raise TypeError("axis must be None, an integer or a tuple of integers, got bool")
    try:
        return tuple(sorted(normalize_axis_tuple(axis, ndim, argname="axis")))
    except TypeError:
        raise TypeError(f"axis must be None, an integer or a tuple of integers, got "
                        f"{type(axis).__name__}") from None


def _middle(ordered, start, count):
    """The mean, in the rows' dtype, of the two middle values of the
    count[i] values of sorted row i from start[i] (numpy.median's)."""
    a = numpy.take_along_axis(ordered, (start + (count - 1) // 2)[:, None], axis=1)[:, 0]
    b = numpy.take_along_axis(ordered, (start + count // 2)[:, None], axis=1)[:, 0]
    return (a + b) / ordered.dtype.type(2)


def _clip_rows(rows, checked, inclusive):
    """gpuarr.stats' clipping of each row of a 2-d NumPy array in the
    working dtype (src/kernels/stats.cu's k_clip_rows with keep_last, its
    path with ``axis``): each row runs until a clip removes nothing or
    maxiters clips; a clip that empties a row ends it with the bounds that
    emptied it; then the rows still running get the statistics of their
    survivors.  The medians are exact (one sort of the rows: the survivors
    are the sorted values between two positions).  (nrows, _FIELDS)."""
    cen_median, std_mad, lower, upper, maxiters, ddof = checked
    T = rows.dtype.type
    nrows = rows.shape[0]
    big = numpy.finfo(T).max if inclusive else numpy.inf
    lo, hi = numpy.full(nrows, -big, T), numpy.full(nrows, big, T)
    blo, bhi = numpy.full(nrows, numpy.nan, T), numpy.full(nrows, numpy.nan, T)
    mean, median, std = (numpy.full(nrows, numpy.nan) for _ in range(3))
    iterations, prev = numpy.zeros(nrows, numpy.int64), numpy.full(nrows, -1, numpy.int64)
    done = numpy.zeros(nrows, bool)
    ordered = numpy.sort(rows, axis=1)                # NaN last
    for final in (False, True):
        while True:
            run = ~done if final or maxiters < 0 else ~done & (iterations < maxiters)
            r = numpy.flatnonzero(run)
            if r.size == 0:
                break
            v, l, h = rows[r], lo[r][:, None], hi[r][:, None]
            keep = _inside(v, l, h, inclusive)
            count = keep.sum(axis=1)
            w = v.astype(numpy.float64)
            with numpy.errstate(divide="ignore", invalid="ignore"):
                m = numpy.where(keep, w, 0.0).sum(axis=1) / count
                dev = numpy.where(keep, w - m[:, None], 0.0)
                m2 = (dev * dev).sum(axis=1)
                mean[r] = m
                std[r] = numpy.where(count > 0, numpy.sqrt(m2 / (count - ddof)), numpy.nan)
            stop = count == 0
            median[r[stop]] = numpy.nan
            if not final:
                stop |= (iterations[r] > 0) & (count == prev[r])
            done[r[stop]] = True
            go = ~stop
            r, v, l, keep, count, m, m2 = r[go], v[go], l[go], keep[go], count[go], m[go], m2[go]
            if r.size:
                below = (ordered[r] < l) if inclusive else (ordered[r] <= l)
                med = _middle(ordered[r], below.sum(axis=1), count)
                median[r] = med
                if final:
                    done[r] = True
                else:
                    centre = med if cen_median else m.astype(T)
                    if std_mad:
                        dev = numpy.sort(numpy.where(keep, abs(v - med[:, None]), T(numpy.nan)),
                                         axis=1)
                        spread = T(_MAD_STD) * _middle(dev, numpy.zeros_like(count), count)
                    else:
                        spread = numpy.sqrt(m2 / count).astype(T)
                    b_lo, b_hi = centre - spread * T(lower), centre + spread * T(upper)
                    blo[r], bhi[r] = b_lo, b_hi
                    lo[r] = numpy.where(lo[r] > b_lo, lo[r], b_lo)
                    hi[r] = numpy.where(hi[r] < b_hi, hi[r], b_hi)
                    prev[r] = count
                    iterations[r] += 1
            if final:
                break
    return numpy.stack([blo, bhi, mean.astype(T), median.astype(T), std.astype(T)], axis=1)


def _clip_block(block, axes, checked, inclusive, dtype, xp):
    """The _FIELDS of every row of a block holding whole rows, shaped as
    the block with the clipped axes of length 1, plus the fields last."""
    nd = block.ndim
    shape = tuple(1 if i in axes else n for i, n in enumerate(block.shape)) + (_FIELDS,)
    if xp is numpy:
        rowlen = math.prod(block.shape[a] for a in axes)
        v = numpy.moveaxis(block.astype(dtype, copy=False), axes, range(nd - len(axes), nd))
        return _clip_rows(numpy.ascontiguousarray(v).reshape(-1, rowlen), checked,
                          inclusive).reshape(shape)
    from .. import stats as single
    flat, rowlen, state, _, _, _ = single._run(block, checked, axes, inclusive, True)
    fields = [single._field(flat, rowlen, state, f, (-1,))
              for f in (single._LOWER, single._UPPER, single._MEAN, single._MEDIAN,
                        single._STD)]
    return xp.stack(fields, axis=1).reshape(shape)


def _row_states(data, axes, checked, inclusive, dtype):
    """Clip the rows of data (rechunked so that they are whole; see above)
    now: the persisted dask array of their _FIELDS, data's shape with the
    clipped axes of length 1, plus the fields last."""
    import dask
    from dask.utils import parse_bytes
    xp = _xp(data)
    whole = data
    if any(len(data.chunks[a]) > 1 for a in axes):
        largest = math.prod(max(c) for c in data.chunks) * data.dtype.itemsize
        limit = max(largest, parse_bytes(dask.config.get("array.chunk-size")))
        whole = data.rechunk({i: -1 if i in axes else "auto" for i in range(data.ndim)},
                             block_size_limit=limit)
    chunks = tuple((1,) if i in axes else c for i, c in enumerate(whole.chunks)) + ((_FIELDS,),)
    states = whole.map_blocks(_clip_block, axes, checked, inclusive, dtype, xp, chunks=chunks,
                              new_axis=data.ndim, dtype=dtype,
                              meta=xp.empty((0,) * (data.ndim + 1), dtype=dtype))
    return states.persist()


def _row_field(states, field, axes, chunks=None):
    """One field of the row states: over the reduced shape (chunks None), or
    with the clipped axes of length 1 in `chunks` (to line up with data)."""
    f = states[..., field]
    if chunks is None:
        return f.squeeze(axis=axes)
    return f.rechunk(tuple((1,) if i in axes else c for i, c in enumerate(chunks)))


def _row_clipped(block, lo, hi, dtype, inclusive, nan_fill, out_dtype, xp):
    """The mask of a block from its rows' last bounds (k_clip_mask): not
    finite, or outside the bounds where they are not NaN; with nan_fill the
    values with NaN where clipped, in out_dtype."""
    v = block.astype(dtype, copy=False)
    mask = ~xp.isfinite(v) | (~_inside(v, lo, hi, inclusive) & ~(xp.isnan(lo) | xp.isnan(hi)))
    if nan_fill:
        return xp.where(mask, numpy.nan, v).astype(out_dtype, copy=False)
    return mask


def _prepare(data, axis, name="data"):
    """data as a dask array, the working dtype of gpuarr.stats and the
    clipped axes (None for all of them)."""
    from .. import stats as single
    data = _dask_array(data, name)
    axes = None if axis is None else _axes(axis, data.ndim)
    return data, single._work_dtype(numpy.dtype(data.dtype)), axes


class ClippedArray:
    """The masked result of :func:`sigma_clip` on a dask array: ``data``
    (the input) and ``mask`` (True where clipped: not finite or outside
    the last bounds), dask arrays of the input's shape and chunks."""

    def __init__(self, data, mask):
        self.data = data
        self.mask = mask

    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)
    size = property(lambda self: self.data.size)

    def filled(self, fill_value=numpy.nan):
        """The data with clipped values replaced by fill_value (lazy)."""
        xp = _xp(self.data)
        return self.data.map_blocks(lambda d, m: xp.where(m, fill_value, d), self.mask,
                                    dtype=numpy.result_type(self.data.dtype, fill_value))

    def compressed(self):
        """The unclipped values, 1-d in raster order (lazy; unknown chunk
        sizes)."""
        return self.data.ravel()[~self.mask.ravel()]

    def count(self):
        """The number of unclipped values (computes)."""
        return int(self.size - int(self.mask.sum().compute()))

    def compute(self):
        """(data, mask) computed: NumPy or gpuarr arrays."""
        import dask
        return dask.compute(self.data, self.mask)

    def get(self):
        """A numpy.ma.MaskedArray on the host (computes; gpuarr chunks are
        copied to the host)."""
        data, mask = self.compute()
        return numpy.ma.MaskedArray(_merge._host(data), _merge._host(mask))

    def __repr__(self):
        return f"ClippedArray(shape={self.shape}, dtype={self.dtype}, chunks={self.data.chunks})"


def sigma_clip(data, sigma=3, sigma_lower=None, sigma_upper=None, maxiters=5,
               cenfunc="median", stdfunc="std", axis=None, masked=True, return_bounds=False,
               copy=True, *, inclusive=True):
    """Sigma-clip a dask array across its chunks (gpuarr.stats.sigma_clip,
    astropy's arguments).  Returns a :class:`ClippedArray` (masked=True)
    or the lazy 1-d survivors of every clip in raster order (masked=False),
    and with return_bounds the last lower and upper bounds (host scalars
    of the working dtype; NaN when a clip left nothing).  Runs the loop
    now: a few computes of the chunks per iteration (see the module).
    With ``axis``: each row clipped (one compute, after a rechunk that
    makes the rows whole), masked=False gives the lazy NaN-filled copy
    (integer data as float32), and the bounds are arrays over the other
    axes of the chunks' type (a row clipped empty keeps the bounds that
    emptied it, as gpuarr.stats')."""
    from .. import stats as single
    checked = single._check(sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc)
    data, dtype, axes = _prepare(data, axis)
    xp = _xp(data)
    if axes is not None and data.size:
        return _sigma_clip_rows(data, dtype, axes, checked, masked, return_bounds, inclusive, xp)
    if data.size == 0:
        st = _State(dtype, inclusive)
    else:
        st = _clip(data.astype(dtype), checked, inclusive, False)
    if masked:
        mask = data.map_blocks(_clipped, dtype, (st.bound_lo, st.bound_hi), inclusive, xp,
                               dtype=numpy.bool_)
        result = ClippedArray(data, mask)
    elif axes is not None:                    # empty: as gpuarr.stats, the data
        result = data
    else:
        kept = data.map_blocks(_kept, dtype, (st.lo, st.hi, inclusive), xp, dtype=numpy.bool_)
        if data.size == 0:                    # one chunk: Dask reshapes any shape of it
            data, kept = data.rechunk(data.shape), kept.rechunk(data.shape)
        result = data.ravel()[kept.ravel()]
    if return_bounds:
        return result, dtype.type(st.bound_lo), dtype.type(st.bound_hi)
    return result


def _sigma_clip_rows(data, dtype, axes, checked, masked, return_bounds, inclusive, xp):
    """sigma_clip with axis: the rows clipped now, the mask (or NaN-filled
    copy) lazily on data's chunks."""
    import dask
    import dask.array as da
    states = _row_states(data, axes, checked, inclusive, dtype)
    lo, hi = (_row_field(states, f, axes, data.chunks) for f in (_F_LOWER, _F_UPPER))
    out_dtype = data.dtype if data.dtype.kind == "f" else numpy.dtype(numpy.float32)
    result = da.map_blocks(_row_clipped, data, lo, hi, dtype, inclusive, not masked, out_dtype,
                           xp, dtype=numpy.bool_ if masked else out_dtype,
                           meta=xp.empty((0,) * data.ndim,
                                         dtype=numpy.bool_ if masked else out_dtype))
    if masked:
        result = ClippedArray(data, result)
    if return_bounds:
        return (result,) + dask.compute(*(_row_field(states, f, axes)
                                          for f in (_F_LOWER, _F_UPPER)))
    return result


def sigma_clipped_stats(data, mask=None, mask_value=None, sigma=3.0, sigma_lower=None,
                        sigma_upper=None, maxiters=5, cenfunc="median", stdfunc="std",
                        std_ddof=0, axis=None, *, inclusive=True):
    """(mean, median, std) of the values of a dask array surviving sigma
    clipping across its chunks (gpuarr.stats.sigma_clipped_stats, astropy's
    arguments), host scalars of the working dtype (with ``axis``: arrays
    over the other axes, of the chunks' type); the median is exact.
    ``mask`` (a dask bool array of data's shape, True = ignore) and
    ``mask_value`` exclude values before clipping."""
    import dask.array as da
    from .. import stats as single
    checked = single._check(sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc,
                            std_ddof)
    data, dtype, axes = _prepare(data, axis)
    nan = dtype.type(numpy.nan)
    if data.size == 0:
        return nan, nan, nan
    data = data.astype(dtype)
    if mask is not None or mask_value is not None:
        if mask is not None:
            mask = _dask_array(mask, "mask")
            if mask.shape != data.shape:
                raise ValueError(f"mask's shape {mask.shape} differs from data's {data.shape}")
            mask = mask.rechunk(data.chunks)
        xp = _xp(data)
        data = da.map_blocks(_masked_to_nan, data, mask, mask_value, dtype, xp, dtype=dtype) \
            if mask is not None else \
            data.map_blocks(_masked_to_nan, None, mask_value, dtype, xp, dtype=dtype)
        if bool(da.isnan(data).all().compute()):
            raise ValueError("input data is all masked")
    if axes is not None:
        import dask
        states = _row_states(data, axes, checked, inclusive, dtype)
        return dask.compute(*(_row_field(states, f, axes) for f in (_F_MEAN, _F_MEDIAN, _F_STD)))
    st = _clip(data, checked, inclusive, True)
    return dtype.type(st.mean), dtype.type(st.median), dtype.type(st.std)
