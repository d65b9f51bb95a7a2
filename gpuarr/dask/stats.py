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

* Only ``axis=None``.  Bounds and statistics are host NumPy scalars (the
  loop ran on the host), in the data's floating dtype (float64 for integer
  data).
* ``masked=True`` returns a :class:`ClippedArray` of dask arrays (``mask``
  is computed lazily from the last bounds); ``masked=False`` the lazy 1-d
  survivors in raster order (unknown chunk sizes, as Dask's boolean
  indexing gives); ``copy`` is ignored (dask arrays are immutable).
* Each pass computes the chunks: persist the array first, or the chunks
  are made again (read, generated) on every pass.
"""
import math

import numpy

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
    digits = ((keys >> shift) & (_BINS - 1)).astype(numpy.int64)
    out = []
    for prefix in (None,) if prefixes is None else prefixes:
        sel = keep if prefix is None else keep & ((keys >> (shift + _DIGIT)) == prefix)
        counts = xp.bincount(xp.where(sel, digits, _BINS), minlength=_BINS + 1)
        out.append(_merge._host(counts)[:_BINS].astype(numpy.int64))
    return numpy.stack(out)


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
    return numpy.sum(arrays, axis=0)


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


def _prepare(data, axis, name="data"):
    """data as a dask array in the working dtype of gpuarr.stats."""
    from .. import stats as single
    data = _dask_array(data, name)
    if axis is not None:
        raise NotImplementedError(
            "axis: gpuarr.dask.stats clips the whole array (axis=None); to clip rows, rechunk "
            "so that the axis lies in one chunk and map gpuarr.stats.sigma_clip over the blocks")
    return data, single._work_dtype(numpy.dtype(data.dtype))


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
    now: a few computes of the chunks per iteration (see the module)."""
    from .. import stats as single
    checked = single._check(sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc)
    data, dtype = _prepare(data, axis)
    xp = _xp(data)
    if data.size == 0:
        st = _State(dtype, inclusive)
    else:
        st = _clip(data.astype(dtype), checked, inclusive, False)
    if masked:
        mask = data.map_blocks(_clipped, dtype, (st.bound_lo, st.bound_hi), inclusive, xp,
                               dtype=numpy.bool_)
        result = ClippedArray(data, mask)
    else:
        kept = data.map_blocks(_kept, dtype, (st.lo, st.hi, inclusive), xp, dtype=numpy.bool_)
        if data.size == 0:                    # one chunk: Dask reshapes any shape of it
            data, kept = data.rechunk(data.shape), kept.rechunk(data.shape)
        result = data.ravel()[kept.ravel()]
    if return_bounds:
        return result, dtype.type(st.bound_lo), dtype.type(st.bound_hi)
    return result


def sigma_clipped_stats(data, mask=None, mask_value=None, sigma=3.0, sigma_lower=None,
                        sigma_upper=None, maxiters=5, cenfunc="median", stdfunc="std",
                        std_ddof=0, axis=None, *, inclusive=True):
    """(mean, median, std) of the values of a dask array surviving sigma
    clipping across its chunks (gpuarr.stats.sigma_clipped_stats, astropy's
    arguments), host scalars of the working dtype; the median is exact.
    ``mask`` (a dask bool array of data's shape, True = ignore) and
    ``mask_value`` exclude values before clipping."""
    import dask.array as da
    from .. import stats as single
    checked = single._check(sigma, sigma_lower, sigma_upper, maxiters, cenfunc, stdfunc,
                            std_ddof)
    data, dtype = _prepare(data, axis)
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
    st = _clip(data, checked, inclusive, True)
    return dtype.type(st.mean), dtype.type(st.median), dtype.type(st.std)
