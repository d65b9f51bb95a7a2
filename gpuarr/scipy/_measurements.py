"""scipy.ndimage's labelling and measurements on device arrays.

label, find_objects, sum_labels (sum), mean, variance, standard_deviation,
minimum, maximum, median, minimum_position, maximum_position, extrema,
center_of_mass, histogram, labeled_comprehension and value_indices, with
SciPy's signatures, defaults, numbering and values.

How they run (src/label.c, src/measure.c and their kernels):

* ``label`` is a GPU union-find: roots are every component's first pixel in
  raster order, so labels come out numbered exactly as SciPy numbers them,
  in four kernels and one synchronisation (the count).
* Every measurement visits the data once for all labels at once: each pixel
  adds into its label's accumulators (per block in shared memory when they
  fit), never one pass per label, and a value is read only where its label
  is measured.  ``index`` as a ``range``, or consecutive integers, maps
  labels to slots by subtraction; any other index becomes on the device a
  sorted key table searched by bisection (made by the launch that clears
  the accumulators for up to 2048 entries, else by a sort).
* ``median`` and ``labeled_comprehension`` sort (label, value) pairs.

Differences from SciPy, all about where results live:

* Arrays SciPy returns (per-index results) are gpuarr arrays on the device:
  ``sum_labels(x, labels, range(1, n + 1))`` is a 1-d float64 device array.
  Where SciPy returns one scalar (``index`` None or a scalar), gpuarr returns
  a 0-d device array with the dtype SciPy's scalar has, so nothing waits for
  the GPU; ``float()``, ``.item()`` or ``.get()`` read it.
* ``center_of_mass``, ``minimum_position``, ``maximum_position`` and the
  positions of ``extrema`` are host values as in SciPy (a tuple, or a list of
  tuples, of Python floats / ints): one small device-to-host copy.
* ``find_objects`` returns SciPy's list of slice tuples (one copy).
* ``histogram`` with a sequence index returns a 2-d int64 device array
  (one row per index entry) where SciPy returns an object array of arrays.
* ``value_indices`` returns a dict whose index tuples hold device arrays.
* ``labeled_comprehension`` calls ``func`` on device arrays (one call per
  index entry, as SciPy) and returns a device array (a NumPy array for
  ``out_dtype=object``).
* Positions (``minimum_position``, ``maximum_position``, ``extrema``) of a
  label whose extreme several elements hold are those of the first one in
  raster order, for every form of index.  SciPy gives the first one for
  index None or a scalar; for a sequence it gives whichever tied element
  its unstable sort of the values puts first.
* ``median`` of a label that is absent from ``labels`` is NaN (SciPy returns
  a value of another label there); ``minimum``/``maximum`` of an absent
  label, index scalar included, is 0 (SciPy raises for a scalar index).
* ``label`` works on 1 to 3 dimensions; measurements of coordinates
  (``center_of_mass``) on up to 8.  Complex input is refused (TypeError).
* ``structure`` and ``index`` are small parameters: sequences and NumPy
  arrays are accepted as in SciPy (a device ``index`` is used in place);
  input and labels must be device arrays (NumPy arrays raise TypeError).
"""
import builtins
import operator

import numpy

from .. import _core
from .._core import ndarray, empty
from .._creation import asarray, arange
from .._manipulation import _device, broadcast_to

__all__ = ["label", "find_objects", "labeled_comprehension", "sum", "sum_labels", "mean",
           "variance", "standard_deviation", "minimum", "maximum", "median",
           "minimum_position", "maximum_position", "extrema", "center_of_mass", "histogram",
           "value_indices"]

# Slot maps and statistics (src/kernels/kernels.h), as the C core exports
# them; _INDEX: a device index whose slot table src/measure.c makes in the
# same call.
_ALL, _POSITIVE, _RANGE, _TABLE, _INDEX = (_core.GA_SLOT_ALL, _core.GA_SLOT_POSITIVE,
                                           _core.GA_SLOT_RANGE, _core.GA_SLOT_TABLE,
                                           _core.MEASURE_MODE_INDEX)
(_SUM, _COUNT, _MEAN, _VAR, _STD, _COM, _MIN, _MAX, _MINPOS, _MAXPOS) = (
    _core.GA_MS_SUM, _core.GA_MS_COUNT, _core.GA_MS_MEAN, _core.GA_MS_VAR, _core.GA_MS_STD,
    _core.GA_MS_COM, _core.GA_MS_MIN, _core.GA_MS_MAX, _core.GA_MS_MINPOS, _core.GA_MS_MAXPOS)
_NSTATS = _core.GA_MS_NSTATS
_EXTREMA = (1 << _MIN) | (1 << _MAX) | (1 << _MINPOS) | (1 << _MAXPOS)


# ============================================================== label ======

def _neighbour_bits(structure, ndim):
    """The 13-bit mask of backward neighbours of a 3x3(x3) structure,
    validated as SciPy does."""
    if isinstance(structure, ndarray):
        structure = structure.get()
    s = numpy.asarray(structure, dtype=bool)
    if s.ndim != ndim:
        raise RuntimeError("structure and input must have equal rank")
    for n in s.shape:
        if n != 3:
            raise ValueError("structure dimensions must be equal to 3")
    if not numpy.array_equal(s, s[(slice(None, None, -1),) * ndim]):
        raise AssertionError("Structuring element is not symmetric")
    cube = numpy.zeros((3, 3, 3), dtype=bool)
    cube[(1,) * (3 - ndim)] = s
    return builtins.sum(1 << p for p in range(13) if cube.flat[p])


# Connectivity one (SciPy's default): the cross.
_CROSS = {nd: _neighbour_bits(numpy.abs(numpy.indices((3,) * nd) - 1).sum(axis=0) <= 1, nd)
          for nd in (1, 2, 3)}


def label(input, structure=None, output=None):
    """Label the connected non-zero regions of ``input`` (SciPy's
    ``scipy.ndimage.label``).

    ``structure``: a centrosymmetric 3x3(x3) element (default: the cross,
    4-connectivity in 2-d, 6 in 3-d).  ``output``: None (returns an int32
    array and the count; int64 from 2**31 - 2 elements), a dtype (same, with
    that dtype), or a device array of input's shape, which is filled (any
    integer or floating dtype: the lesson passes float64) and then only the
    number of features is returned.  Components are numbered 1, 2, ... in
    the raster order of their first element, exactly as SciPy numbers them.
    An output dtype too small for the labels raises RuntimeError and leaves
    the output untouched.  Synchronises once (the count).
    """
    input = _device(input, "input")
    if input.dtype.kind == "c":
        raise TypeError("Complex type not supported")
    ndim = input.ndim
    if structure is None:
        if ndim > 3:
            raise NotImplementedError("gpuarr's label handles arrays of 1 to 3 dimensions")
        bits = _CROSS.get(ndim, 0)
    else:
        bits = _neighbour_bits(structure, ndim)
    caller_output = isinstance(output, ndarray)
    if ndim == 0 or input.size == 0:
        return _label_trivial(input, output, caller_output)
    if ndim > 3:
        raise NotImplementedError("gpuarr's label handles arrays of 1 to 3 dimensions")
    labels, count = _core._label(input, bits, output)
    return count if caller_output else (labels, count)


def _label_trivial(input, output, caller_output):
    """SciPy's answers for 0-d and empty inputs."""
    if caller_output:
        if output.shape != input.shape:
            raise ValueError("output shape not correct")
    else:
        if isinstance(output, numpy.ndarray):
            raise _core._host_array_error("output", "label", output=True)
        output = empty(input.shape, numpy.int32 if output is None else output)
    count = 0
    if input.ndim == 0:
        count = 1 if bool(input != 0) else 0
        output[...] = count
    return count if caller_output else (output, count)


# ============================================================== planning ===

class _Plan:
    """How labels map to accumulator slots, and the shape of the result."""
    __slots__ = ("labels", "mode", "lo", "nslots", "table", "inverse", "shape", "scalar")

    def __init__(self, labels, mode, lo=0, nslots=1, table=None, inverse=None, shape=(),
                 scalar=True):
        self.labels = labels
        self.mode = mode
        self.lo = lo
        self.nslots = nslots
        self.table = table
        self.inverse = inverse
        self.shape = shape
        self.scalar = scalar

    def args(self, input):
        return (input, self.labels, self.mode, self.lo, self.nslots, self.table, self.inverse)

    @property
    def nout(self):
        return self.inverse.size if self.inverse is not None else self.nslots


def _integral(v):
    return isinstance(v, (int, numpy.integer, bool, numpy.bool_)) or float(v).is_integer()


def _plan(input, labels, index, defer=True):
    """The device input and the slot plan of (labels, index), following
    SciPy's rules: no labels -> all of input (index ignored); no index ->
    labels > 0; a scalar compares for equality; a sequence of integer
    labels is truncated to integers first.  defer: an index that needs a
    slot table is handed to the measurement's own call, which makes the
    table on the device (the plan then has no inverse on the Python side)."""
    input = _device(input, "input")
    if labels is None:
        return input, _Plan(None, _ALL)
    labels = _device(labels, "labels")
    if labels.shape != input.shape:
        try:
            shape = numpy.broadcast_shapes(input.shape, labels.shape)
        except ValueError:
            raise ValueError("input and labels must have the same shape "
                             "(excepting dimensions with width 1)") from None
        input = broadcast_to(input, shape)
        labels = broadcast_to(labels, shape)
    if index is None:
        return input, _Plan(labels, _POSITIVE)
    if isinstance(index, ndarray):
        if index.size == 0:
            return input, _Plan(labels, _RANGE, 0, 0, shape=index.shape, scalar=False)
        return input, _table_plan(labels, index, index.shape, False, defer)
    if isinstance(index, range) and index.step == 1:
        return input, _Plan(labels, _RANGE, index.start, len(index), shape=(len(index),),
                            scalar=False)
    float_labels = labels.dtype.kind == "f" or labels.dtype == numpy.uint64
    if numpy.isscalar(index):
        if _integral(index):
            return input, _Plan(labels, _RANGE, int(index))
        if not float_labels:
            labels = labels.astype(numpy.float64)
        return input, _table_plan(labels, asarray(numpy.array([float(index)])), (), True,
                                  defer)
    host = numpy.asarray(index)
    keys = host.astype(numpy.float64 if float_labels else numpy.int64).ravel()
    if keys.size == 0:
        return input, _Plan(labels, _RANGE, 0, 0, shape=host.shape, scalar=False)
    if (numpy.all(numpy.diff(keys) == 1) and float(keys[0]).is_integer()
            and (not float_labels or numpy.all(numpy.floor(keys) == keys))):
        return input, _Plan(labels, _RANGE, int(keys[0]), keys.size, shape=host.shape,
                            scalar=False)
    return input, _table_plan(labels, asarray(keys), host.shape, False, defer)


def _table_plan(labels, index, shape, scalar, defer):
    """The plan of a device index that needs a slot table: handed over as
    it is (defer), or with its table and inverse made now."""
    if defer:
        return _Plan(labels, _INDEX, 0, index.size, index, None, shape, scalar)
    float_keys = labels.dtype.kind == "f" or labels.dtype == numpy.uint64
    table, inverse = _core._measure_index(index.reshape(-1), float_keys)
    return _Plan(labels, _TABLE, 0, index.size, table, inverse, shape, scalar)


def _measure(input, labels, index, what):
    """Device results of the statistics whose bits are set in `what` for
    (input, labels, index), in bit order, each shaped like index (0-d for a
    scalar or no index; centres of mass (n, ndim))."""
    input, plan = _plan(input, labels, index)
    if plan.nout == 0:
        return input, plan, tuple(_empty_result(s, plan, input) for s in range(_NSTATS)
                                  if what >> s & 1)
    results = _core._measure(*plan.args(input), what)
    if plan.shape != (plan.nout,):
        results = tuple(_shaped(r, plan) for r in results)
    return input, plan, results


def _empty_result(stat, plan, input):
    if stat == _COM:
        return empty((0, input.ndim), numpy.float64)
    return empty(plan.shape, numpy.int64 if stat in (_MINPOS, _MAXPOS) else numpy.float64)


def _shaped(result, plan):
    if result.ndim == 2 or result.shape == plan.shape:
        return result
    return result.reshape(plan.shape)


def _sum_dtype(dtype):
    """NumPy's dtype of x.sum() for an array of `dtype`."""
    return numpy.add.reduce(numpy.zeros(1, dtype)).dtype


# ============================================================== statistics =

def sum_labels(input, labels=None, index=None):
    """Sum of the values of ``input`` per label (SciPy's ``sum_labels``).

    index None: over labels > 0; a scalar: over labels == index (a 0-d
    device array of NumPy's sum dtype); a sequence or array: a float64 device
    array shaped like index (SciPy returns a NumPy array).  Without labels,
    the sum of all of input.
    """
    input, plan, (s,) = _measure(input, labels, index, 1 << _SUM)
    if plan.scalar:
        return s.astype(_sum_dtype(input.dtype), copy=False)
    return s


def sum(input, labels=None, index=None):  # noqa: A001  (SciPy's name)
    """Alias of :func:`sum_labels`, as in SciPy."""
    return sum_labels(input, labels, index)


def mean(input, labels=None, index=None):
    """Mean of the values per label (float64; NaN for an empty label)."""
    return _measure(input, labels, index, 1 << _MEAN)[2][0]


def variance(input, labels=None, index=None):
    """Variance per label (SciPy's two-pass formula, float64)."""
    return _measure(input, labels, index, 1 << _VAR)[2][0]


def standard_deviation(input, labels=None, index=None):
    """Standard deviation per label (float64)."""
    return _measure(input, labels, index, 1 << _STD)[2][0]


def minimum(input, labels=None, index=None):
    """Minimum per label, in input's dtype (0 for an absent label)."""
    input, plan, (m,) = _measure(input, labels, index, 1 << _MIN)
    return m.astype(input.dtype, copy=False)


def maximum(input, labels=None, index=None):
    """Maximum per label, in input's dtype (0 for an absent label)."""
    input, plan, (m,) = _measure(input, labels, index, 1 << _MAX)
    return m.astype(input.dtype, copy=False)


def median(input, labels=None, index=None):
    """Median per label: the mean of the two middle values for even counts
    (input's dtype for floating input, float64 otherwise; NaN for an absent
    label).  Sorts (label, value) pairs on the device."""
    input, plan = _plan(input, labels, index)
    if plan.nout == 0:
        return _empty_result(_MEAN, plan, input)
    m = _shaped(_core._measure_median(*plan.args(input)), plan)
    if input.dtype.kind == "f" and input.dtype != m.dtype:
        return m.astype(input.dtype)
    return m


def _positions(flat, shape, scalar):
    """Linear indices (host) as coordinate tuples of Python ints."""
    dims = shape if shape else (1,)
    coords = numpy.unravel_index(flat.ravel(), dims)
    rows = list(zip(*(c.tolist() for c in coords))) if shape else [() for _ in flat.ravel()]
    if scalar:
        return rows[0]
    return rows


def minimum_position(input, labels=None, index=None):
    """Coordinates of the first minimum (raster order) per label: a tuple
    of ints, or a list of tuples for a sequence index (host values)."""
    input, plan, (p,) = _measure(input, labels, index, 1 << _MINPOS)
    return _positions(p.get(), input.shape, plan.scalar)


def maximum_position(input, labels=None, index=None):
    """Coordinates of the first maximum (raster order) per label."""
    input, plan, (p,) = _measure(input, labels, index, 1 << _MAXPOS)
    return _positions(p.get(), input.shape, plan.scalar)


def extrema(input, labels=None, index=None):
    """(minimums, maximums, minimum positions, maximum positions): values as
    device arrays in input's dtype, positions as host tuples (lists of
    tuples for a sequence index).  One pass for the values, one for the
    positions."""
    input, plan, (lo, hi, plo, phi) = _measure(input, labels, index, _EXTREMA)
    return (lo.astype(input.dtype, copy=False), hi.astype(input.dtype, copy=False),
            _positions(plo.get(), input.shape, plan.scalar),
            _positions(phi.get(), input.shape, plan.scalar))


def center_of_mass(input, labels=None, index=None):
    """Centre of mass per label (SciPy's value-weighted mean coordinates):
    a tuple of Python floats, or a list of such tuples for a sequence index
    (one device-to-host copy of the small result; the list is built while
    the GPU measures).  NaN for empty labels."""
    input, plan = _plan(input, labels, index)
    if plan.nout == 0:
        return []
    rows = _core._measure_com(*plan.args(input))
    return rows[0] if plan.scalar else rows


def histogram(input, min, max, bins, labels=None, index=None):  # noqa: A002
    """Histogram of the values per label with ``bins`` equal bins between
    ``min`` and ``max`` (NumPy's rules, edges from numpy.linspace): a 1-d
    int64 device array for index None or a scalar, else a 2-d device array
    with one row per index entry (SciPy: an object array of arrays)."""
    bins = operator.index(bins)
    if bins < 1:
        raise ValueError("bins must be at least 1")
    edges = asarray(numpy.linspace(min, max, bins + 1))
    input, plan = _plan(input, labels, index)
    if plan.nout == 0:
        return empty(plan.shape + (bins,), numpy.int64)
    counts = _core._measure_histogram(*plan.args(input), edges)
    if plan.scalar:
        return counts[0]
    return counts.reshape(plan.shape + (bins,))


def _host_value(r):
    if isinstance(r, ndarray):
        return r.get()[()] if r.ndim == 0 else r.get()
    return r


def labeled_comprehension(input, labels, index, func, out_dtype, default,
                          pass_positions=False):
    """``[func(input[labels == i]) for i in index]`` (SciPy's
    ``labeled_comprehension``): func receives device arrays (the values of
    one label in raster order, and with ``pass_positions`` their linear
    indices) and is called once per index entry present in labels; absent
    entries get ``default``.  The elements are grouped by one sort on the
    device and one copy of the group offsets.  Returns a device array of
    out_dtype (a NumPy array for ``object``), a scalar for a scalar index."""
    as_scalar = numpy.isscalar(index)
    input = _device(input, "input")
    if labels is None:
        if index is not None:
            raise ValueError("index without defined labels")
        flat = input.ravel()
        return func(flat, arange(flat.size)) if pass_positions else func(flat)
    input, plan = _plan(input, labels, index, defer=False)
    values, positions, offsets = _core._measure_group(*plan.args(input))
    off = offsets.get()
    if plan.mode == _POSITIVE:
        a, b = int(off[0]), int(off[1])
        return func(values[a:b], positions[a:b]) if pass_positions else func(values[a:b])
    dtype = numpy.dtype(out_dtype)
    out = numpy.full(plan.shape, default, dtype=dtype).reshape(-1) if dtype.kind == "O" \
        else numpy.full(plan.nout, default, dtype=dtype)
    slots = plan.inverse.get() if plan.inverse is not None else numpy.arange(plan.nout)
    for k, s in enumerate(slots.tolist()):
        a, b = int(off[s]), int(off[s + 1])
        if b > a:
            r = func(values[a:b], positions[a:b]) if pass_positions else func(values[a:b])
            out[k] = _host_value(r)
    out = out.reshape(plan.shape)
    if as_scalar:
        return out[()] if dtype.kind == "O" else asarray(out[()])
    return out if dtype.kind == "O" else asarray(out)


def value_indices(arr, *, ignore_value=None):
    """A dict mapping each distinct value of the integer array ``arr`` (in
    ascending order) to the index tuple of its elements, as SciPy's
    ``value_indices``; the index arrays are int64 device arrays, raster
    order within a value.  One sort on the device; synchronises once."""
    arr = _device(arr, "arr")
    if arr.dtype.kind not in "biu":
        raise ValueError("Parameter 'arr' must be an integer array")
    coords, starts, keys = _core._value_indices(arr)
    order = numpy.argsort(starts, kind="stable")
    starts = starts[order]
    values = (keys[order] ^ numpy.uint64(1 << 63)).view(numpy.int64)
    ends = numpy.append(starts[1:], arr.size)
    result = {}
    scalar = arr.dtype.type
    for v, s, e in zip(values.tolist(), starts.tolist(), ends.tolist()):
        key = scalar(v)
        if ignore_value is not None and key == scalar(ignore_value):
            continue
        result[key] = tuple(coords[d, s:e] for d in range(arr.ndim))
    return result


def find_objects(input, max_label=0):
    """Bounding boxes of labels 1..max_label (default: the largest label)
    as SciPy's list of slice tuples, None for absent labels.  Integer
    labels only (TypeError otherwise); synchronises once (twice without
    max_label)."""
    input = _device(input, "input")
    if input.dtype.kind == "c":
        raise TypeError("Complex type not supported")
    if input.dtype.kind not in "biu":
        raise TypeError("find_objects needs an array of integer labels")
    if input.ndim == 0:
        raise ValueError("find_objects needs an array of at least one dimension")
    boxes = _core._find_objects(input, operator.index(max_label))
    result = []
    for box in boxes.tolist():
        if box[0][0] < 0:
            result.append(None)
        else:
            result.append(tuple(slice(a, b) for a, b in box))
    return result
