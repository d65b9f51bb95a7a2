"""gpuarr.dask.stats: statistics of chunked data that Dask has no exact
generic form for.  median(x) is exact (numpy.median's value, not an
approximate percentile): a radix selection on the order-preserving
integer keys of the values, one histogram pass over the chunks per 16 bits
of the key (4 passes for float64, 2 for float32), each pass one compute of
the chunks' digit counts, summed on the host.  Optionally restricted to
the values inside an interval (lo, hi), the form sigma clipping needs:
its survivors are always the values inside the intersection of its
bounds.  The building block of sigma clipping across chunks (issue 21);
the clipping loop itself is still to come.
"""
import numpy

from . import _merge

__all__ = ["median"]

_DIGIT = 16


def _keys(block, dtype, xp):
    """The values of a block as unsigned keys in the order of the values
    (negative floats: all bits flipped; others: the sign bit set)."""
    bits = numpy.dtype(dtype).itemsize * 8
    utype = numpy.dtype(f"u{bits // 8}")
    k = xp.asarray(block, dtype=dtype).reshape(-1).view(utype)
    sign = utype.type(1 << (bits - 1))
    return xp.where((k & sign) != 0, ~k, k | sign)


def _inside(block, lo, hi, xp):
    """The block's values inside (lo, hi), without NaN (a flat array)."""
    v = block.reshape(-1)
    keep = ~xp.isnan(v)
    if lo is not None:
        keep &= v > lo
    if hi is not None:
        keep &= v < hi
    return v[keep]


def _digit_counts(block, dtype, shift, prefix, lo, hi, xp):
    """Counts of the 16-bit digit at `shift` of the keys whose higher bits
    equal `prefix` (host int64 array of 65536)."""
    keys = _keys(_inside(block, lo, hi, xp), dtype, xp)
    bits = numpy.dtype(dtype).itemsize * 8
    if shift + _DIGIT < bits:
        keys = keys[(keys >> (shift + _DIGIT)) == prefix]
    digits = ((keys >> shift) & ((1 << _DIGIT) - 1)).astype(numpy.int64)
    return _merge._host(xp.bincount(digits, minlength=1 << _DIGIT))


def _select(blocks, dtype, k, lo, hi, xp):
    """The k-th smallest (0-based) of the values inside (lo, hi)."""
    import dask
    bits = numpy.dtype(dtype).itemsize * 8
    prefix = 0
    for shift in range(bits - _DIGIT, -1, -_DIGIT):
        parts = [dask.delayed(_digit_counts)(b, dtype, shift, prefix, lo, hi, xp)
                 for b in blocks]
        counts = numpy.sum(dask.compute(*parts), axis=0)
        below = numpy.cumsum(counts)
        digit = int(numpy.searchsorted(below, k, side="right"))
        k -= int(below[digit - 1]) if digit else 0
        prefix = (prefix << _DIGIT) | digit
    utype = numpy.dtype(f"u{bits // 8}")
    key = utype.type(prefix)
    sign = utype.type(1 << (bits - 1))
    raw = key & ~sign if key & sign else ~key
    return numpy.array([raw], utype).view(dtype)[0]


def median(x, lo=None, hi=None):
    """The exact median of a dask array's values (all of them, or those
    inside the open interval (lo, hi)), as numpy.median gives it: NaN if
    any value is NaN (unless an interval is given: NaN is never inside
    one), the mean of the two middle values for an even count.  Floats
    keep their type; other types are taken as float64.  A host scalar;
    each 16 bits of the key cost one compute over the chunks."""
    import dask
    import dask.array as da

    if not isinstance(x, da.Array):
        raise TypeError(f"median: x must be a dask array, not {type(x).__name__}")
    dtype = numpy.dtype(x.dtype) if x.dtype.kind == "f" and x.dtype.itemsize in (4, 8) \
        else numpy.dtype(numpy.float64)
    import gpuarr
    xp = gpuarr if isinstance(getattr(x, "_meta", None), gpuarr.ndarray) else numpy
    x = x.astype(dtype)
    blocks = list(x.to_delayed().ravel())
    if lo is None and hi is None and int(da.isnan(x).sum().compute()):
        return dtype.type(numpy.nan)
    n = int(dask.compute(sum(dask.delayed(lambda b: int(_inside(b, lo, hi, xp).size))(b)
                             for b in blocks))[0])
    if n == 0:
        return dtype.type(numpy.nan)
    upper = _select(blocks, dtype, n // 2, lo, hi, xp)
    if n % 2:
        return upper
    lower = _select(blocks, dtype, n // 2 - 1, lo, hi, xp)
    return dtype.type((lower + upper) / dtype.type(2))
