"""scipy.ndimage's filters on device arrays: correlate, convolve,
correlate1d, convolve1d, gaussian_filter(1d), uniform_filter(1d),
minimum_filter(1d), maximum_filter(1d), median_filter, rank_filter and
percentile_filter.

Signatures, defaults, modes ('reflect', 'constant', 'nearest', 'mirror',
'wrap' and the aliases 'grid-mirror', 'grid-constant', 'grid-wrap'),
origins, ``axes``, ``output=`` (an array, or a dtype) and output dtypes
(the input's by default) follow SciPy, and so do the errors (where SciPy
raises RuntimeError for a bad argument, gpuarr raises an exception that is
both a ValueError or TypeError and a RuntimeError).

Which kernel runs (src/kernels/convolve.cu, filters.cu; nothing is compiled
at run time):

* Linear filters are one direct correlation each (``_core._correlate``):
  along the contiguous axis the line kernel (a shared-memory stretch per
  line, 8 outputs per thread in a register window); across outer axes the
  column kernel (8 outputs per thread down a column); for N-d weights the
  tile kernel (a shared-memory tile with its halo, extended at load time;
  16 outputs per thread down a column).  Separable
  filters (gaussian, uniform, and minimum/maximum with ``size`` or an
  all-True footprint) run one pass per axis, keeping the intermediate
  results in the output dtype as SciPy does.
* Gaussian taps are computed on the host in float64 exactly as SciPy
  defines them (normalised exp(-x^2 / 2 sigma^2); derivative orders by the
  polynomial rule), then uploaded (a small asynchronous copy).
* Order statistics (median, rank, percentile, minimum and maximum with a
  general footprint, and the 1-d minimum/maximum passes) run the rank
  kernel: one output per thread, values compared through order-preserving
  integer keys, so every dtype is exact.

Precision: float64 and integer inputs are computed in float64, as SciPy;
float32 (and float16) inputs in float32, where SciPy accumulates in float64
(results agree to float32 rounding).  Integer outputs are truncated toward
zero, as SciPy.  SciPy skips weights of magnitude <= 2.2e-16 in the N-d
correlate; gpuarr multiplies them, which differs only where such a weight
meets an inf or NaN.  NaN has no place in the order of SciPy's rank filters;
gpuarr orders NaN above +inf.  A complex ``output`` for a real input and
real weights, which SciPy refuses (RuntimeError), receives the real result.

With ``axes`` naming fewer axes than the input has, the weights' (or the
footprint's) own axes meet the filtered axes in increasing order and the
origins follow the order of ``axes``, exactly as SciPy.
"""
import numbers
import operator
import warnings
from collections.abc import Iterable

import numpy
from numpy.exceptions import AxisError

from .. import _core
from .._convolve import (as_operand, to_device, host_structure, correlate_parts, real_ctype, is_int,
                         SciPyValueError, SciPyTypeError, EXT_CONSTANT, EXT_REFLECT, EXT_MIRROR,
                         EXT_NEAREST, EXT_WRAP)

__all__ = ["correlate", "convolve", "correlate1d", "convolve1d", "gaussian_filter",
           "gaussian_filter1d", "uniform_filter", "uniform_filter1d", "minimum_filter",
           "maximum_filter", "minimum_filter1d", "maximum_filter1d", "median_filter",
           "rank_filter", "percentile_filter"]

_MODES = {"reflect": EXT_REFLECT, "grid-mirror": EXT_REFLECT, "constant": EXT_CONSTANT,
          "grid-constant": EXT_CONSTANT, "nearest": EXT_NEAREST, "mirror": EXT_MIRROR,
          "wrap": EXT_WRAP, "grid-wrap": EXT_WRAP}


# ------------------------------------------------------------- arguments ---

def _mode(mode):
    if not isinstance(mode, str) or mode not in _MODES:
        raise SciPyValueError("boundary mode not supported")
    return _MODES[mode]


def _input(x, fname):
    """The input, checked; a host array (from a sequence) until to_device."""
    x = as_operand(x, fname, "input")
    if x.dtype.kind not in "biufc":
        raise SciPyTypeError(f"{fname}: array type {x.dtype} not supported")
    return x


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim)
    return axis % ndim


def _check_axes(axes, ndim):
    if axes is None:
        return tuple(range(ndim))
    if numpy.isscalar(axes):
        axes = (operator.index(axes),)
    elif isinstance(axes, Iterable):
        axes = tuple(operator.index(a) for a in axes)
        for a in axes:
            if a < -ndim or a > ndim - 1:
                raise ValueError(f"specified axis: {a} is out of range")
    else:
        raise ValueError("axes must be an integer, iterable of integers, or None")
    axes = tuple(a % ndim for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError("axes must be unique")
    return axes


def _sequence(value, n):
    """A scalar repeated n times, or a sequence of exactly n values."""
    if not isinstance(value, str) and numpy.iterable(value):
        values = list(value)
        if len(values) != n:
            raise SciPyValueError("sequence argument must have length equal to input rank")
        return values
    return [value] * n


def _output(output, x, complex_output=False):
    """The output array: a new one of x's dtype (or output's dtype), or the
    device array given, checked against x's shape."""
    if output is None:
        dt = x.dtype
        if complex_output:
            dt = numpy.promote_types(dt, numpy.complex64)
        return _core.empty(x.shape, dtype=dt)
    if isinstance(output, _core.ndarray):
        if output.shape != x.shape:
            raise SciPyValueError("output shape not correct")
        if complex_output and output.dtype.kind != "c":
            raise SciPyValueError("output must have complex dtype")
        return output
    if isinstance(output, numpy.ndarray):
        raise _core._host_array_error("output", output=True)
    try:
        dt = numpy.dtype(output)
    except TypeError:
        raise TypeError(f"output must be a device array or a dtype, not {output!r}") from None
    if dt.kind not in "biufc":
        raise SciPyValueError("output must have numeric dtype")
    if complex_output and dt.kind != "c":
        if isinstance(output, str):
            raise SciPyValueError("output must have complex dtype")
        warnings.warn("promoting specified output dtype to complex", stacklevel=3)
        dt = numpy.promote_types(dt, numpy.complex64)
    return _core.empty(x.shape, dtype=dt)


def _real_cval(cval, x):
    """cval for a real filter of a real input: a complex cval is a
    TypeError, as SciPy's C filters raise."""
    if x.dtype.kind != "c" and numpy.iscomplexobj(cval):
        raise TypeError(f"cval must be a real number for a real input, not {cval!r}")
    return cval


def _cval_for_complex_weights(cval, x):
    """SciPy's check when complex weights meet a real input."""
    if x.dtype.kind != "c" and numpy.iscomplexobj(cval):
        raise ValueError("Cannot provide a complex-valued cval when the input is real.")
    return cval


def _expand_weights(w, axes, ndim, name):
    """weights (or a footprint) over len(axes) < ndim axes given ndim axes,
    as SciPy: size-1 axes inserted where an axis is not filtered, the
    weights' own axes kept in order (they meet the filtered axes in
    increasing order, whatever the order of `axes`)."""
    if len(axes) < ndim:
        if w.ndim != len(axes):
            raise SciPyValueError(f"{name}.ndim ({w.ndim}) must match len(axes) ({len(axes)})")
        dims = iter(w.shape)
        w = w.reshape(tuple(next(dims) if a in axes else 1 for a in range(ndim)))
    if w.ndim != ndim or 0 in w.shape:
        raise SciPyValueError(f"{name}.ndim ({w.ndim}) must match len(axes) ({len(axes)})")
    return w


def _expand_origins(origin, axes, ndim):
    """Origins per axis, as SciPy: given in the order of `axes` when fewer
    axes than dimensions are filtered, else one per dimension in order."""
    values = _sequence(origin, len(axes))
    for o in values:
        if not is_int(o):
            raise TypeError("origin must be an integer or a sequence of integers")
    if len(axes) < ndim:
        origins = [0] * ndim
        for a, o in zip(axes, values):
            origins[a] = int(o)
        return origins
    return [int(o) for o in values]


def _taps(values, ctype):
    """Host float64 taps on the device in the compute type."""
    return _core.array(numpy.ascontiguousarray(values, dtype=ctype))


# ------------------------------------------------------------- correlation -

def _correlate_axis(x, w, axis, out, mode, cval, origin, flip, divisor=0.0):
    """One 1-d correlation of x along `axis` with the 1-d device taps w
    (real), into out: offset -(k // 2 + origin)."""
    k = w.shape[0]
    shape = [1] * x.ndim
    shape[axis] = k
    offsets = [0] * x.ndim
    offsets[axis] = -(k // 2 + origin)
    ctype = real_ctype(x.dtype)
    return _core._correlate(x, w.reshape(shape), out, offsets, mode, cval, flip, ctype, divisor)


def _correlate1d(input, weights, axis, output, mode, cval, origin, convolution):
    fname = "convolve1d" if convolution else "correlate1d"
    x = _input(input, fname)
    w = as_operand(weights, fname, "weights")
    if w.ndim != 1 or w.shape[0] < 1:
        raise SciPyValueError("no filter weights given")
    axis = _axis(axis, x.ndim)
    k = w.shape[0]
    if not is_int(origin):
        raise TypeError("origin must be an integer")
    if convolution:
        origin = -origin - (0 if k & 1 else 1)
    if origin < -(k // 2) or origin > (k - 1) // 2:
        raise ValueError("Invalid origin; origin must satisfy -(len(weights) // 2) <= origin <= "
                         "(len(weights)-1) // 2")
    m = _mode(mode)
    cplx = x.dtype.kind == "c" or w.dtype.kind == "c"
    cval = _cval_for_complex_weights(cval, x) if cplx else _real_cval(cval, x)
    out = _output(output, x, complex_output=cplx)
    if x.ndim == 0 or x.size == 0:
        return out
    x, w = to_device(x), to_device(w)
    if not cplx:
        return _correlate_axis(x, w, axis, out, m, cval, origin, convolution)

    def run(xp, wp, o, cv):
        _correlate_axis(xp, wp, axis, o, m, cv, origin, convolution)

    return correlate_parts(run, x, w, out, cval, not convolution)


def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """1-d correlation along `axis` (scipy.ndimage.correlate1d):
    ``out[i] = sum_j weights[j] * X[i + j - (len(weights) // 2 + origin)]``.
    Line kernel along the last axis, tile kernel (one column of taps)
    along the others."""
    return _correlate1d(input, weights, axis, output, mode, cval, origin, False)


def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """1-d convolution along `axis` (scipy.ndimage.convolve1d): correlate1d
    with the weights reversed and SciPy's origin rule."""
    return _correlate1d(input, weights, axis, output, mode, cval, origin, True)


def _correlate_nd(input, weights, output, mode, cval, origin, axes, convolution):
    fname = "convolve" if convolution else "correlate"
    x = _input(input, fname)
    w = as_operand(weights, fname, "weights")
    axes = _check_axes(axes, x.ndim)
    if not isinstance(mode, str) and isinstance(mode, Iterable):
        raise SciPyValueError("A sequence of modes is not supported")
    m = _mode(mode)
    w = _expand_weights(w, axes, x.ndim, "weights")
    origins = _expand_origins(origin, axes, x.ndim)
    offsets = []
    for d in range(x.ndim):
        k, o = w.shape[d], origins[d]
        if convolution:
            o = -o - (0 if k & 1 else 1)
        if o < -(k // 2) or o > (k - 1) // 2:
            raise ValueError("Invalid origin; origin must satisfy -(weights.shape[k] // 2) <= "
                             "origin[k] <= (weights.shape[k]-1) // 2")
        offsets.append(-(k // 2 + o))
    cplx = x.dtype.kind == "c" or w.dtype.kind == "c"
    cval = _cval_for_complex_weights(cval, x) if cplx else _real_cval(cval, x)
    out = _output(output, x, complex_output=cplx)
    if x.size == 0:
        return out
    x, w = to_device(x), to_device(w)
    ctype = real_ctype(x.real.dtype)
    if not cplx:
        return _core._correlate(x, w, out, offsets, m, cval, convolution, ctype)

    def run(xp, wp, o, cv):
        _core._correlate(xp, wp, o, offsets, m, cv, convolution, ctype)

    return correlate_parts(run, x, w, out, cval, not convolution)


def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """N-d correlation (scipy.ndimage.correlate): ``out[p] = sum_q
    weights[q] * X[p + q - (shape // 2 + origin)]`` with one extension mode
    for every axis.  Tile kernel (line kernel when only the last axis is
    filtered)."""
    return _correlate_nd(input, weights, output, mode, cval, origin, axes, False)


def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """N-d convolution (scipy.ndimage.convolve): correlate with the weights
    reversed (read reversed by the kernel) and SciPy's origin rule."""
    return _correlate_nd(input, weights, output, mode, cval, origin, axes, True)


# ------------------------------------------------------------- separable ---

def _passes(x, output, passes, run, given):
    """Run one 1-d pass per entry of `passes` (axis first), each reading
    the previous result and writing in the output dtype, the last into
    output; SciPy's intermediate results are stored in the output dtype too.
    Two buffers alternate so no pass reads what it writes: the output and a
    temporary, or, when the output is the caller's (`given`), two
    temporaries, so that only the last pass writes it and a pass that
    fails (out of memory) leaves it as it was."""
    out = output
    if not passes:
        out[...] = x
        return out
    tmps = [None, None]
    src = x
    for i, p in enumerate(passes):
        left = len(passes) - 1 - i          # passes after this one
        if left == 0 or (not given and left % 2 == 0):
            dst = out
        else:
            k = left % 2
            if tmps[k] is None:
                tmps[k] = _core.empty(out.shape, dtype=out.dtype)
            dst = tmps[k]
        run(src, dst, *p)
        src = dst
    return out


def _gaussian_kernel1d(sigma, order, radius):
    """The taps of a Gaussian of standard deviation sigma, or its derivative
    of the given order, at x = -radius..radius (float64, as SciPy: the
    Gaussian is normalised to sum 1; the n-th derivative is q_n(x) times it
    with q_0 = 1 and q_{n+1} = q_n' - x q_n / sigma^2)."""
    if order < 0:
        raise ValueError("order must be non-negative")
    x = numpy.arange(-radius, radius + 1)
    phi = numpy.exp(-0.5 / (sigma * sigma) * x ** 2)
    phi = phi / phi.sum()
    if order == 0:
        return phi
    q = numpy.zeros(order + 1)          # q[j]: coefficient of x**j
    q[0] = 1.0
    for _ in range(order):
        dq = numpy.zeros(order + 1)
        dq[:-1] = q[1:] * numpy.arange(1, order + 1)    # q'
        dq[1:] -= q[:-1] / (sigma * sigma)              # - x q / sigma^2
        q = dq
    poly = (x[:, None] ** numpy.arange(order + 1)).dot(q)
    return poly * phi


def _radius(sigma, truncate, radius):
    lw = int(truncate * float(sigma) + 0.5)
    if radius is not None:
        lw = radius
    if not isinstance(lw, numbers.Integral) or lw < 0:
        raise ValueError("Radius must be a nonnegative integer.")
    return int(lw)


def _gaussian_pass(cval):
    cache = {}

    def run(src, dst, axis, sigma, order, mode, radius):
        ctype = real_ctype(src.dtype)
        key = (float(sigma), order, radius, ctype)
        if key not in cache:
            cache[key] = _taps(_gaussian_kernel1d(float(sigma), order, radius)[::-1], ctype)
        _correlate_axis(src, cache[key], axis, dst, mode, cval, 0, False)
    return run


def _given(output):
    """Whether output= is the caller's device array (then it must stay as
    it was if the filter fails part way)."""
    return isinstance(output, _core.ndarray)


def _real_or_parts(x, out, cval, run_real, given):
    """Run a real separable filter, or one per part of a complex input
    (into a temporary first when out is the caller's, so a failure in the
    second part cannot leave the first part written)."""
    x = to_device(x)
    if x.dtype.kind != "c":
        run_real(x, out, cval, given)
        return out
    cval = complex(cval)
    res = _core.empty(out.shape, dtype=out.dtype) if given else out
    run_real(x.real, res.real, cval.real, False)
    run_real(x.imag, res.imag, cval.imag, False)
    if res is not out:
        out[...] = res
    return out


def gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0,
                      truncate=4.0, *, radius=None):
    """1-d Gaussian filter (scipy.ndimage.gaussian_filter1d): correlation
    with SciPy's Gaussian taps (radius ``round(truncate * sigma)`` unless
    given), one pass of the line or tile kernel."""
    x = _input(input, "gaussian_filter1d")
    axis = _axis(axis, x.ndim)
    lw = _radius(sigma, truncate, radius)
    order = operator.index(order)
    if order < 0:
        raise ValueError("order must be non-negative")
    m = _mode(mode)
    _real_cval(cval, x)
    out = _output(output, x, complex_output=x.dtype.kind == "c")
    if x.size == 0:
        return out

    def real(xp, op, cv, given):
        _passes(xp, op, [(axis, sigma, order, m, lw)], _gaussian_pass(cv), given)

    return _real_or_parts(x, out, cval, real, _given(output))


def gaussian_filter(input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0,
                    *, radius=None, axes=None):
    """N-d Gaussian filter (scipy.ndimage.gaussian_filter): one 1-d pass per
    axis whose sigma exceeds 1e-15 (sigma, order, mode and radius per axis or
    one for all), intermediate results in the output dtype as SciPy.  The
    contiguous axis runs the line kernel, the others the tile kernel with
    one column of taps (coalesced rows, a register window down each
    column): each pass reads and writes the array once."""
    x = _input(input, "gaussian_filter")
    axes = _check_axes(axes, x.ndim)
    n = len(axes)
    orders = [operator.index(o) for o in _sequence(order, n)]
    sigmas = _sequence(sigma, n)
    modes = [_mode(m) for m in _sequence(mode, n)]
    radii = _sequence(radius, n)
    passes = []
    for a, s, o, m, r in zip(axes, sigmas, orders, modes, radii):
        if o < 0:
            raise ValueError("order must be non-negative")
        lw = _radius(s, truncate, r)
        if s > 1e-15:
            passes.append((a, s, o, m, lw))
    _real_cval(cval, x)
    out = _output(output, x, complex_output=x.dtype.kind == "c")
    if x.size == 0:
        return out

    def real(xp, op, cv, given):
        _passes(xp, op, passes, _gaussian_pass(cv), given)

    return _real_or_parts(x, out, cval, real, _given(output))


def _uniform_pass(cval):
    def run(src, dst, axis, size, origin, mode):
        ctype = real_ctype(src.dtype)
        _correlate_axis(src, _core.ones(size, dtype=ctype), axis, dst, mode, cval, origin, False,
                        float(size))
    return run


def _check_uniform(size, origin):
    size = operator.index(size)
    if size < 1:
        raise SciPyValueError("incorrect filter size")
    if not is_int(origin):
        raise TypeError("origin must be an integer")
    if size // 2 + origin < 0 or size // 2 + origin >= size:
        raise ValueError("invalid origin")
    return size


def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """1-d uniform (moving average) filter (scipy.ndimage.uniform_filter1d):
    the window sum divided by `size` (so integer results truncate exactly
    as SciPy's), one pass of the line or tile kernel."""
    x = _input(input, "uniform_filter1d")
    axis = _axis(axis, x.ndim)
    size = _check_uniform(size, origin)
    m = _mode(mode)
    _real_cval(cval, x)
    out = _output(output, x, complex_output=x.dtype.kind == "c")
    if x.size == 0:
        return out

    def real(xp, op, cv, given):
        _passes(xp, op, [(axis, size, origin, m)], _uniform_pass(cv), given)

    return _real_or_parts(x, out, cval, real, _given(output))


def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """N-d uniform filter (scipy.ndimage.uniform_filter): one
    uniform_filter1d pass per axis of size > 1 (sizes, origins and modes
    per axis or one for all)."""
    x = _input(input, "uniform_filter")
    axes = _check_axes(axes, x.ndim)
    n = len(axes)
    passes = []
    for a, s, o, m in zip(axes, _sequence(size, n), _sequence(origin, n), _sequence(mode, n)):
        if operator.index(s) > 1:          # SciPy skips sizes of 1 or less
            passes.append((a, _check_uniform(s, o), o, _mode(m)))
    _real_cval(cval, x)
    out = _output(output, x, complex_output=x.dtype.kind == "c")
    if x.size == 0:
        return out

    def real(xp, op, cv, given):
        _passes(xp, op, passes, _uniform_pass(cv), given)

    return _real_or_parts(x, out, cval, real, _given(output))


# ------------------------------------------------------------- order stats -

def _rank_taps(fp, origins, shape):
    """The device tap table of a boolean footprint: for every True element,
    its offset per axis (centre fp.shape // 2 + origin) and its flat offset
    in a C-contiguous array of `shape`; with the per-axis extremes."""
    idx = numpy.argwhere(fp).astype(numpy.int64)
    rel = idx - (numpy.array(fp.shape) // 2 + numpy.array(origins, dtype=numpy.int64))
    strides = numpy.ones(len(shape), dtype=numpy.int64)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    table = numpy.concatenate([rel, (rel * strides).sum(axis=1, keepdims=True)], axis=1)
    return (_core.array(numpy.ascontiguousarray(table)), tuple(int(v) for v in rel.min(axis=0)),
            tuple(int(v) for v in rel.max(axis=0)))


def _rank_nd(x, out, fp, origins, rank, mode, cval):
    """out = the rank-th smallest of x over footprint fp (x.ndim axes)."""
    if x.size == 0:
        return out
    taps, lo, hi = _rank_taps(fp, origins, x.shape)
    return _core._rank_filter(to_device(x), out, taps, lo, hi, rank, mode, cval)


def _rank_1d_pass(cval, minimum):
    def run(src, dst, axis, size, origin, mode):
        fp = numpy.ones([size if d == axis else 1 for d in range(src.ndim)], dtype=bool)
        origins = [origin if d == axis else 0 for d in range(src.ndim)]
        _rank_nd(src, dst, fp, origins, 0 if minimum else size - 1, mode, cval)
    return run


def _no_complex(x):
    if x.dtype.kind == "c":
        raise TypeError("Complex type not supported")


def _min_or_max_1d(input, size, axis, output, mode, cval, origin, minimum):
    fname = "minimum_filter1d" if minimum else "maximum_filter1d"
    x = _input(input, fname)
    _no_complex(x)
    axis = _axis(axis, x.ndim)
    size = operator.index(size)
    if size < 1:
        raise SciPyValueError("incorrect filter size")
    if size // 2 + origin < 0 or size // 2 + origin >= size:
        raise ValueError("invalid origin")
    m = _mode(mode)
    _real_cval(cval, x)
    out = _output(output, x)
    if x.size == 0:
        return out
    return _passes(to_device(x), out, [(axis, size, origin, m)], _rank_1d_pass(cval, minimum),
                   _given(output))


def minimum_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """1-d minimum filter (scipy.ndimage.minimum_filter1d); rank kernel."""
    return _min_or_max_1d(input, size, axis, output, mode, cval, origin, True)


def maximum_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """1-d maximum filter (scipy.ndimage.maximum_filter1d); rank kernel."""
    return _min_or_max_1d(input, size, axis, output, mode, cval, origin, False)


def _footprint(size, footprint, nax, fname):
    """(footprint as a host bool array or None, sizes or None): the sizes of
    a box given by `size`, else the footprint given."""
    if size is not None and footprint is not None:
        warnings.warn("ignoring size because footprint is set", UserWarning, stacklevel=4)
    if footprint is None:
        if size is None:
            raise SciPyValueError("no footprint provided")
        return None, [operator.index(s) for s in _sequence(size, nax)]
    return host_structure(footprint, fname, "footprint", bool), None


def _origins(origin, axes, ndim, fshape):
    origins = _expand_origins(origin, axes, ndim)
    for o, f in zip(origins, fshape):
        if f // 2 + o < 0 or f // 2 + o >= f:
            raise ValueError("invalid origin")
    return origins


def _min_or_max(input, size, footprint, output, mode, cval, origin, axes, minimum):
    fname = "minimum_filter" if minimum else "maximum_filter"
    x = _input(input, fname)
    axes = _check_axes(axes, x.ndim)
    n = len(axes)
    fp, sizes = _footprint(size, footprint, n, fname)
    if fp is not None:
        if not fp.any():
            raise ValueError("All-zero footprint is not supported.")
        if fp.all():
            if fp.ndim != n:
                raise SciPyValueError("sequence argument must have length equal to input rank")
            sizes = list(fp.shape)
    _no_complex(x)
    _real_cval(cval, x)
    if sizes is not None:
        # A box: one 1-d pass per axis longer than 1, as SciPy (which skips
        # sizes of 1 or less, and their origins and modes, unchecked).
        passes = []
        for a, s, o, m in zip(axes, sizes, _sequence(origin, n), _sequence(mode, n)):
            if s > 1:
                if not is_int(o):
                    raise TypeError("origin must be an integer or a sequence of integers")
                if s // 2 + o < 0 or s // 2 + o >= s:
                    raise ValueError("invalid origin")
                passes.append((a, s, o, _mode(m)))
        out = _output(output, x)
        if x.size == 0:
            return out
        return _passes(to_device(x), out, passes, _rank_1d_pass(cval, minimum), _given(output))
    if not isinstance(mode, str) and isinstance(mode, Iterable):
        raise SciPyValueError("A sequence of modes is not supported for non-separable "
                              "footprints")
    m = _mode(mode)
    fp = _expand_weights(fp, axes, x.ndim, "footprint")
    origins = _origins(origin, axes, x.ndim, fp.shape)
    count = int(fp.sum())
    out = _output(output, x)
    return _rank_nd(x, out, fp, origins, 0 if minimum else count - 1, m, cval)


def minimum_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0,
                   origin=0, *, axes=None):
    """N-d minimum filter (scipy.ndimage.minimum_filter).  A box (``size``
    or an all-True footprint) runs one 1-d pass per axis, as SciPy; another
    footprint one N-d pass.  Rank kernel, exact for every dtype.  A device
    footprint is copied to the host (its values shape the plan)."""
    return _min_or_max(input, size, footprint, output, mode, cval, origin, axes, True)


def maximum_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0,
                   origin=0, *, axes=None):
    """N-d maximum filter (scipy.ndimage.maximum_filter); as minimum_filter."""
    return _min_or_max(input, size, footprint, output, mode, cval, origin, axes, False)


def _rank(input, rank, size, footprint, output, mode, cval, origin, axes, operation):
    x = _input(input, f"{operation}_filter")
    _no_complex(x)
    axes = _check_axes(axes, x.ndim)
    fp, sizes = _footprint(size, footprint, len(axes), f"{operation}_filter")
    if fp is None:
        if any(s < 1 for s in sizes):
            raise SciPyValueError("incorrect filter size")
        fp = numpy.ones(sizes, dtype=bool)
    _real_cval(cval, x)
    fp = _expand_weights(fp, axes, x.ndim, "footprint")
    origins = _origins(origin, axes, x.ndim, fp.shape)
    count = int(fp.sum())
    if count == 0:
        raise SciPyValueError("rank not within filter footprint size: the footprint has no "
                              "True element")
    if operation == "median":
        rank = count // 2
    elif operation == "percentile":
        percentile = float(rank)
        if percentile < 0.0:
            percentile += 100.0
        if percentile < 0 or percentile > 100:
            raise SciPyValueError("invalid percentile")
        rank = count - 1 if percentile == 100.0 else int(float(count) * percentile / 100.0)
    else:
        rank = operator.index(rank)
        if rank < 0:
            rank += count
    if rank < 0 or rank >= count:
        raise SciPyValueError("rank not within filter footprint size")
    if not isinstance(mode, str) and isinstance(mode, Iterable):
        raise SciPyValueError("A sequence of modes is not supported by non-separable rank "
                              "filters")
    m = _mode(mode)
    out = _output(output, x)
    return _rank_nd(x, out, fp, origins, rank, m, cval)


def median_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0,
                  origin=0, *, axes=None):
    """N-d median filter (scipy.ndimage.median_filter): the element of rank
    ``count // 2`` of each footprint window.  Rank kernel: up to 64 taps the
    window sits in a per-thread array and is selected by counting; larger
    footprints select bit by bit.  Exact for every dtype."""
    return _rank(input, 0, size, footprint, output, mode, cval, origin, axes, "median")


def rank_filter(input, rank, size=None, footprint=None, output=None, mode="reflect", cval=0.0,
                origin=0, *, axes=None):
    """N-d rank filter (scipy.ndimage.rank_filter); negative ranks count
    from the largest.  Rank kernel."""
    return _rank(input, rank, size, footprint, output, mode, cval, origin, axes, "rank")


def percentile_filter(input, percentile, size=None, footprint=None, output=None, mode="reflect",
                      cval=0.0, origin=0, *, axes=None):
    """N-d percentile filter (scipy.ndimage.percentile_filter), SciPy's rank
    of the percentile.  Rank kernel."""
    return _rank(input, percentile, size, footprint, output, mode, cval, origin, axes,
                 "percentile")
