"""Hypothesis strategies for the property tests (test_properties.py):
shapes with empty and length-1 axes, view recipes (strides, reversal,
transposition, broadcasting) applied alike to a host and a device array,
every axis form of a reduction, basic and advanced indices, and Python
scalars for NEP 50 promotion.

Strategies draw structure only (shapes, recipes, indices); the values of
the arrays come from the suite's own helpers (tests/_arrays.py and the
per-area sample functions) seeded by a drawn integer, so a falsifying
example names its seed."""
import itertools

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

seeds = st.integers(0, 2 ** 32 - 1)

# Axis lengths, shrinking towards 1; 0 about one draw in twelve.
SIDES = (1, 2, 3, 4, 5, 0, 1, 6, 2, 3, 1, 4)


def shapes(min_dims=0, max_dims=4, sides=SIDES):
    return st.lists(st.sampled_from(sides), min_size=min_dims, max_size=max_dims).map(tuple)


def broadcast_from(shape):
    """Shapes that broadcast to `shape` (leading axes dropped, axes made 1)."""
    def shrink(draws):
        drop, ones = draws
        return tuple(1 if one else n for n, one in zip(shape[drop:], ones))
    return st.tuples(st.integers(0, len(shape)),
                     st.lists(st.booleans(), min_size=len(shape), max_size=len(shape))).map(shrink)


# ------------------------------------------------------------ views ---

class View:
    """A view of `shape` made from a C-contiguous base of `base_shape`: the
    base's axes are transposed by `axes`, indexed by `index` (slices with
    steps, reversed or not, away from the edges; integers on extra axes)
    and broadcast to `shape`.  The same steps on a NumPy array (xp=numpy)
    and on a device array (xp=gpuarr) give the same view."""

    def __init__(self, base_shape, axes, index, shape):
        self.base_shape, self.axes, self.index, self.shape = base_shape, axes, index, shape

    def __call__(self, base, xp):
        v = base
        if self.axes != tuple(range(len(self.axes))):
            v = v.transpose(self.axes)
        v = v[self.index + (Ellipsis,)]          # an array even where every axis is an integer
        if v.shape != self.shape:
            v = xp.broadcast_to(v, self.shape)
        return v

    def __repr__(self):
        return f"View(base_shape={self.base_shape}, axes={self.axes}, index={self.index}, " \
               f"shape={self.shape})"


@st.composite
def views(draw, shape, broadcast=True, reverse=True):
    """A View of `shape`; with broadcast, some axes are stretched from
    length 1 (read-only, zero strides, leading ones absent from the base);
    with reverse, negative steps."""
    axes_len, index = [], []
    leading = True
    for n in shape:
        if broadcast and n != 1 and draw(st.integers(0, 5)) == 0:
            if leading and draw(st.booleans()):
                continue                        # added by broadcast_to
            axes_len.append(1)
            index.append(slice(None))
            leading = False
            continue
        leading = False
        step = draw(st.sampled_from((1, 1, 2, 3)))
        lo, hi = draw(st.integers(0, 1)), draw(st.integers(0, 1))
        span = (n - 1) * step + 1 if n else 0
        axes_len.append(lo + span + hi)
        if n == 0:
            index.append(slice(lo, lo))
        elif reverse and draw(st.booleans()):
            index.append(slice(lo + span - 1, lo - 1 if lo else None, -step))
        else:
            index.append(slice(lo, lo + span, step))
    for _ in range(draw(st.integers(0, 1))):    # an axis taken away by an integer
        at = draw(st.integers(0, len(index)))
        n = draw(st.integers(1, 3))
        axes_len.insert(at, n)
        index.insert(at, draw(st.integers(-n, n - 1)))
    nd = len(axes_len)
    order = tuple(draw(st.permutations(range(nd)))) if nd > 1 else tuple(range(nd))
    base_shape = tuple(axes_len[a] for a in order)
    inverse = tuple(order.index(d) for d in range(nd))
    return View(base_shape, inverse, tuple(index), tuple(shape))


# ------------------------------------------------------------ axes ---

@st.composite
def axes(draw, ndim, tuples=True, invalid=True):
    """An axis argument: None, an int (negative too), a tuple (empty,
    negative, any order); with invalid, also out-of-range and repeated
    axes (NumPy's AxisError and ValueError)."""
    forms = ["none", "int", "int"] + (["tuple"] * 3 if tuples else []) + \
        (["bad"] if invalid else [])
    form = draw(st.sampled_from(forms))
    span = max(ndim, 1)            # NumPy's reductions take axis 0 or -1 of a 0-d array
    if form == "none":
        return None
    if form == "int":
        return draw(st.integers(-span, span - 1))
    if form == "tuple":
        return draw(hnp.valid_tuple_axes(ndim))
    bad = [ndim, -ndim - 1, (ndim,)]
    if ndim:
        a = draw(st.integers(0, ndim - 1))
        bad += [(a, a - ndim), (a, ndim)]
    return draw(st.sampled_from(bad))


# ------------------------------------------------------------ indices ---

@st.composite
def basic_indices(draw, shape):
    """A basic index of an array of `shape` (integers, slices with any
    step, Ellipsis, None), now and then with an integer out of range."""
    index = draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    if shape and draw(st.integers(0, 19)) == 0:
        axis = draw(st.integers(0, len(shape) - 1))
        n = shape[axis]
        bad = draw(st.sampled_from((n, -n - 1)))
        return (slice(None),) * axis + (bad,)
    return index


def slices(size):
    """Slices of an axis of `size`: bounds inside, at and past the ends, any
    step but 0."""
    bound = st.none() | st.integers(-size - 2, size + 2)
    return st.builds(slice, bound, bound, st.none() | st.sampled_from((1, 2, 3, -1, -2, -4)))


class IndexArray:
    """An integer or boolean index array and where gpuarr gets it from:
    'device' (a device array), 'host' (the NumPy array) or 'list'."""

    def __init__(self, values, where):
        self.values, self.where = values, where

    def __repr__(self):
        return f"IndexArray(np.{self.values!r}, {self.where!r})"


@st.composite
def advanced_indices(draw, shape):
    """A tuple index of an array of `shape` (at least 1-d) holding at least
    one integer or boolean IndexArray, mixed with integers, slices, None
    and Ellipsis, the integer arrays broadcast together (now and then not,
    or with an index out of range: NumPy's IndexError)."""
    n = len(shape)
    ellipsis = draw(st.booleans())
    a = draw(st.integers(0, n))
    b = draw(st.integers(a, n)) if ellipsis else n
    kinds = []                 # (first dim, kind, number of dims)
    for lo, hi in ((0, a), (b, n)):
        d = lo
        while d < hi:
            kind = draw(st.sampled_from(("slice", "int", "array", "array", "mask")))
            k = draw(st.integers(1, hi - d)) if kind == "mask" else 1
            kinds.append((d, kind, k))
            d += k
    if not any(kind in ("array", "mask") for _, kind, _ in kinds):
        if kinds:
            at = draw(st.integers(0, len(kinds) - 1))
            kinds[at] = (kinds[at][0], "array", 1)
        else:
            kinds, ellipsis, a, b = [(0, "array", 1)], True, 1, n
    masks = {d: draw(hnp.arrays(np.bool_, shape[d:d + k])) for d, kind, k in kinds
             if kind == "mask"}
    counts = [int(m.sum()) for m in masks.values()]
    if counts:
        common = draw(st.sampled_from(((), (1,), (counts[0],))))
    else:
        common = draw(shapes(max_dims=2, sides=(1, 2, 3, 0)))
    out_of_range = draw(st.integers(0, 19)) == 0
    items = []
    for d, kind, k in kinds:
        if d == b and ellipsis:
            items.append(Ellipsis)
        size = shape[d]
        if size == 0 and kind in ("int", "array") and not out_of_range:
            kind = "slice"              # an index into an empty axis is out of range
        if kind == "mask":
            items.append(IndexArray(masks[d], draw(st.sampled_from(("device", "host")))))
        elif kind == "slice":
            items.append(draw(slices(size)))
        elif kind == "int" and size:
            items.append(draw(st.integers(-size, size - 1)))
        else:
            ishape = draw(broadcast_from(common))
            lo, hi = (-size, size - 1) if size else (0, 0)
            values = draw(hnp.arrays(np.int64, ishape, elements=st.integers(lo, hi)))
            if out_of_range and values.size:
                values.flat[draw(st.integers(0, values.size - 1))] = \
                    draw(st.sampled_from((size, -size - 1)))
            dtype = draw(st.sampled_from((np.int64, np.int32, np.intp)))
            # lists only where NumPy reads them as integers (not empty ones)
            where = ("device", "host", "list") if values.size else ("device", "host")
            items.append(IndexArray(values.astype(dtype), draw(st.sampled_from(where))))
    if ellipsis and b == n:
        items.append(Ellipsis)
    for _ in range(draw(st.integers(0, 1))):
        items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items)


def host_index(index):
    """The index for NumPy."""
    return tuple(i.values if isinstance(i, IndexArray) else i for i in index)


def device_index(index, asarray):
    """The index for gpuarr: each IndexArray moved as it says (asarray:
    gpuarr.asarray)."""
    def one(i):
        if not isinstance(i, IndexArray):
            return i
        return {"device": asarray, "host": lambda v: v, "list": np.ndarray.tolist}[i.where](
            i.values)
    return tuple(one(i) for i in index)


# ------------------------------------------------------------ scalars ---

def python_scalars(finite=False):
    """Python bool, int (small, and up to 2**64 in magnitude: NEP 50's
    OverflowError), float and complex operands; with finite, small finite
    numbers only."""
    if finite:
        return st.one_of(st.booleans(), st.integers(-100, 100),
                         st.floats(-100, 100, allow_subnormal=False),
                         st.complex_numbers(max_magnitude=100, allow_subnormal=False))
    return st.one_of(st.booleans(), st.integers(-300, 300), st.integers(-2 ** 64, 2 ** 64),
                     st.floats(), st.complex_numbers(allow_nan=False, allow_infinity=False,
                                                     max_magnitude=1e6))


def product(shape):
    return int(np.prod(shape, dtype=np.int64))


def offsets(shape, strides):
    """Sorted tuples (offset in each operand) of every element of `shape`."""
    return sorted(tuple(sum(i * s for i, s in zip(index, operand)) for operand in strides)
                  for index in itertools.product(*map(range, shape)))
