"""The discrete Fourier transforms of numpy.fft on device arrays, by cuFFT.

Every transform goes through one path:

1. Arguments as NumPy takes them (``n``/``s``, ``axis``/``axes``, ``norm``,
   ``out``), with NumPy's errors: ValueError for fewer than one point or a
   bad norm, AxisError (an IndexError) for an axis out of range, TypeError
   for a complex input to rfft/ihfft.  NumPy's dtypes: float32, float16 and
   complex64 are computed in single precision (complex64 results), every
   other input in double; irfft/hfft return the real type of the input
   (float16 stays float16, computed in float32).
2. The input is cut (a view) or zero-padded (a new array: the margins
   filled with zeros, the data copied in) to the lengths the transform
   reads, and cast to the compute type, in one copy at most.
3. The transform runs as cuFFT plans in the advanced data layout
   (gpuarr/cuda/cufft.py), batched over the other axes: up to three axes in
   one plan wherever the arrays' strides can be written as cuFFT's embeds,
   strides and one batch distance (the planner, ``_layout``, needs no GPU).
   A C-contiguous array needs no copy for its last one to three axes (one
   plan, batched over the leading axes) or for its first axis (the other
   axes are one batch inside its stride).  What cuFFT's layout cannot
   express (a middle axis of a 3-d array, batch axes that do not merge,
   negative or zero strides) is split into one plan per axis, and an axis
   that still does not fit is copied so that it is last and contiguous.
   Complex-to-complex steps after the first run in place on the result.
4. The output is allocated with the input's axis order in memory (NumPy's
   order='K'), so a transform does not transpose data; ``norm`` scales it
   with one multiply (cuFFT does not normalise).

The common call, a whole C-contiguous input of the compute type whose axes
(at most three, none padded or cut) fit one plan, goes from step 1 straight
to one plan run into a new C-contiguous output: the host's time before the
first cuFFT kernel is what separated gpuarr's fft2 and rfft from CuPy's
(same kernels, same kernel times on the H100).

Real transforms: rfft/rfftn run cuFFT's R2C (D2Z) along the last listed
axis, then complex transforms along the others.  irfft/irfftn run the
complex inverses along the other axes first, then C2R (Z2D) along the last,
on a private copy of the input (cuFFT's C2R overwrites its input), and
zero the imaginary parts of the zero and Nyquist frequencies first: NumPy
ignores them, and cuFFT's result for a non-Hermitian input is undefined.
(The FFT convolutions of gpuarr.scipy.signal, whose spectra are Hermitian
by construction, run one multi-axis C2R plan instead.)

Repeated axes in ``axes`` are allowed, as NumPy allows them: each listing
transforms once more, in NumPy's order.  The scale of a float16 input's
first transformed axis is rounded to float16, as NumPy rounds it.

Differences from NumPy: gpuarr writes the result into ``out`` in every
function that takes it (NumPy 2's ifft2, irfft2 and hfft accept ``out`` and
ignore it); ``n=True`` raises TypeError in every function (NumPy raises in
some and takes it as 1 in others); results are device arrays, and NumPy
arrays are refused (move them with gpuarr.asarray()).
"""
import math
import operator
import warnings

import numpy
from numpy.exceptions import AxisError

from .. import _core
from .._convolve import as_operand, to_device
from ..cuda.cufft import Layout, R2C, C2R, C2C, D2Z, Z2D, Z2Z

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn", "irfftn",
           "fft2", "ifft2", "rfft2", "irfft2"]

_TYPES = {("c2c", False): C2C, ("c2c", True): Z2Z, ("r2c", False): R2C, ("r2c", True): D2Z,
          ("c2r", False): C2R, ("c2r", True): Z2D}
_NORMS = ("backward", "ortho", "forward")
_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


# ============================================================ arguments ====

def _operand(a, fname):
    """a checked before any device work: a device array, or a scalar or
    sequence as a host array that _transform uploads (NumPy arrays are
    refused: moving data to the device is the caller's decision)."""
    return as_operand(a, fname, "a")


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim)
    return axis % ndim


def _points(n):
    """A number of points as NumPy takes it: an integer (not a bool), >= 1."""
    if isinstance(n, (bool, numpy.bool_)):
        raise TypeError("an integer is required")
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def _check_norm(norm):
    if norm is not None and norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or '
                         '"forward".')


def _swap_norm(norm):
    try:
        return _SWAP[norm]
    except (KeyError, TypeError):
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                         '"forward".') from None


def _factor(norm, lengths, forward, first, real_type):
    """The scale NumPy applies to a transform over these lengths, or None
    for 1.  NumPy scales axis by axis, the first axis it transforms by a
    factor computed in the input's real type (rounded to float16 for a
    float16 input), the later ones in the compute type; so does this."""
    if norm == "ortho":
        def one(n, t):
            return numpy.reciprocal(numpy.sqrt(n, dtype=t))
    elif (norm == "forward") == forward:
        def one(n, t):
            return numpy.reciprocal(n, dtype=t)
    else:
        return None
    rest = math.prod(lengths) // lengths[first]
    f = float(one(lengths[first], real_type))
    return f if rest == 1 else f * float(one(rest, numpy.float64))


def _cook_nd(a, s, axes, invreal=False):
    """NumPy's _cook_nd_args: (s, axes) with NumPy's defaults, warnings and
    errors; s entries stay None where NumPy keeps the 1-d default."""
    shapeless = s is None
    if shapeless:
        if axes is None:
            s = list(a.shape)
        else:
            axes = [_axis(ax, a.ndim) for ax in axes]
            s = [a.shape[ax] for ax in axes]
    s = list(s)
    if axes is None:
        if not shapeless:
            warnings.warn(
                "`axes` should not be `None` if `s` is not `None` (Deprecated in NumPy 2.0). "
                "In a future version of NumPy, this will raise an error and `s[i]` will "
                "correspond to the size along the transformed axis specified by `axes[i]`. To "
                "retain current behaviour, pass a sequence [0, ..., k-1] to `axes` for an "
                "array of dimension k.", DeprecationWarning, stacklevel=4)
        axes = list(range(-len(s), 0))
    axes = [_axis(ax, a.ndim) for ax in axes]
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if invreal and shapeless:
        s[-1] = (a.shape[axes[-1]] - 1) * 2
    if None in s:
        warnings.warn(
            "Passing an array containing `None` values to `s` is deprecated in NumPy 2.0 and "
            "will raise an error in a future version of NumPy. To use the default behaviour "
            "of the corresponding 1-D transform, pass the value matching the default for its "
            "`n` parameter. To use the default behaviour for every axis, the `s` argument can "
            "be omitted.", DeprecationWarning, stacklevel=4)
    s = [a.shape[ax] if n is not None and not isinstance(n, bool) and n == -1 else n
         for n, ax in zip(s, axes)]
    return s, axes


# ============================================================== layouts ====

def _address(a):
    """The device address of a's first element."""
    return a.data.ptr


def _estrides(a):
    """a's strides in elements, or None when one is not a whole element."""
    isz = a.dtype.itemsize
    out = []
    for st in a.strides:
        if st % isz:
            return None
        out.append(st // isz)
    return out


def _embed(shape, st, axes):
    """(embed, innermost stride) when the axes, outermost first, nest as
    cuFFT's embeds describe: each axis's stride a whole multiple of the
    next one's, by at least the next one's length."""
    inner = st[axes[-1]]
    if inner <= 0:
        return None
    emb = [shape[axes[0]]]
    for outer_ax, ax in zip(axes, axes[1:]):
        outer, s = st[outer_ax], st[ax]
        if s <= 0 or outer % s or outer // s < shape[ax]:
            return None
        emb.append(outer // s)
    return tuple(emb), inner


def _batch_ok(dist, batch, stride, extent):
    """Batches one after the other (dist past one transform's extent), or
    interleaved within the innermost stride (columns)."""
    return dist > 0 and (dist >= extent or dist * batch <= stride)


_layouts = {}


def _layout(kind, x, y, axes):
    """The cuFFT Layout computing `kind` ('c2c', 'r2c', 'c2r') over `axes`
    (outermost first as cuFFT sees them; for r2c/c2r the halved axis last)
    from x into y where they lie, or None where the advanced layout cannot
    express them: strides that are not whole elements or not positive,
    axes that do not nest, other axes that do not merge into one batch
    dimension lying outside or inside the transform, or data not aligned
    to its vector type.  Decisions are kept per shapes, strides and
    alignment."""
    double = x.dtype.char in "dD"
    align = 16 if double else 8
    key = (kind, tuple(axes), x.dtype.char, x.shape, x.strides, y.shape, y.strides,
           _address(x) % align == 0, _address(y) % align == 0)
    found = _layouts.get(key, False)
    if found is not False:
        return found
    lay = _plan_layout(kind, x, y, axes, key[-2] and key[-1], double)
    if len(_layouts) > 4096:
        _layouts.clear()
    _layouts[key] = lay
    return lay


def _plan_layout(kind, x, y, axes, aligned, double):
    xs, ys = _estrides(x), _estrides(y)
    if not aligned or xs is None or ys is None:
        return None
    fi, fo = _embed(x.shape, xs, axes), _embed(y.shape, ys, axes)
    if fi is None or fo is None:
        return None
    (inembed, istride), (onembed, ostride) = fi, fo
    real = y if kind == "c2r" else x
    n = tuple(real.shape[ax] for ax in axes)
    ext_in, ext_out = xs[axes[0]] * x.shape[axes[0]], ys[axes[0]] * y.shape[axes[0]]
    rest = sorted((ax for ax in range(x.ndim) if ax not in axes and x.shape[ax] > 1),
                  key=lambda ax: -xs[ax])
    batch = 1
    idist, odist = ext_in, ext_out
    if rest:
        for p, q in zip(rest, rest[1:]):        # one batch dimension, in x and in y
            if xs[p] != xs[q] * x.shape[q] or ys[p] != ys[q] * y.shape[q]:
                return None
        for ax in rest:
            batch *= x.shape[ax]
        idist, odist = xs[rest[-1]], ys[rest[-1]]
        if not (_batch_ok(idist, batch, istride, ext_in)
                and _batch_ok(odist, batch, ostride, ext_out)):
            return None
    return Layout(_TYPES[kind, double], n, inembed, istride, idist, onembed, ostride, odist,
                  batch)


def _execute(layout, x, y, forward):
    """Queue one cuFFT transform from x to y on the current stream."""
    from ..cuda import cufft
    plan = cufft.get_plan_cache().get(layout)
    plan.execute(_address(x), _address(y), cufft.FORWARD if forward else cufft.INVERSE)


def _run(kind, x, y, axes, forward):
    """Run one plan if cuFFT's layout fits: True, else False."""
    lay = _layout(kind, x, y, axes)
    if lay is None:
        return False
    _execute(lay, x, y, forward)
    return True


# ============================================================== arrays =====

def _alloc_like(a, shape, dtype):
    """A new array of shape and dtype whose axes lie in memory in the order
    of a's (NumPy's order='K')."""
    nd = len(shape)
    perm = sorted(range(nd), key=lambda i: (-abs(a.strides[i]), i))
    base = _core.empty(tuple(shape[p] for p in perm), dtype=dtype)
    if perm == list(range(nd)):
        return base
    inv = [0] * nd
    for k, p in enumerate(perm):
        inv[p] = k
    return base.transpose(inv)


def _copy(a):
    c = _alloc_like(a, a.shape, a.dtype)
    c[...] = a
    return c


def _prepare(a, sizes, dtype):
    """(x, owned): a cut or zero-padded to sizes ({axis: length}) and cast
    to dtype, copied at most once; owned when x is a new array."""
    shape = list(a.shape)
    cut = [slice(None)] * a.ndim
    pad = False
    for ax, m in sizes.items():
        if m < a.shape[ax]:
            cut[ax] = slice(0, m)
        elif m > a.shape[ax]:
            pad = True
        shape[ax] = m
    src = a[tuple(cut)] if any(c != slice(None) for c in cut) else a
    if not pad:
        if src.dtype == dtype:
            return src, False
        return src.astype(dtype), True
    x = _alloc_like(a, shape, dtype)
    margin = [slice(None)] * a.ndim
    for ax, m in sizes.items():
        if m > a.shape[ax]:
            # The margin along ax, within the axes padded before it (whose
            # own margins are zero already): no element is written twice.
            margin[ax] = slice(a.shape[ax], None)
            x[tuple(margin)] = 0
            margin[ax] = slice(0, a.shape[ax])
    if src.size:
        x[tuple(slice(0, n) for n in src.shape)] = src
    return x, True


def _extent(a):
    """(lowest, highest + 1) byte address a touches, or None when empty."""
    lo = hi = _address(a)
    for n, st in zip(a.shape, a.strides):
        if n == 0:
            return None
        if st > 0:
            hi += st * (n - 1)
        else:
            lo += st * (n - 1)
    return lo, hi + a.dtype.itemsize


def _overlap(a, b):
    ea, eb = _extent(a), _extent(b)
    return ea is not None and eb is not None and ea[0] < eb[1] and eb[0] < ea[1]


def _transposed_copy(a, last, dtype=None):
    """(c, inv): a C-contiguous copy of a with axis `last` moved last, and
    the transpose taking c back to a's axis order."""
    nd = a.ndim
    perm = [i for i in range(nd) if i != last] + [last]
    inv = [0] * nd
    for k, p in enumerate(perm):
        inv[p] = k
    c = _core.empty(tuple(a.shape[p] for p in perm), dtype=dtype or a.dtype)
    c[...] = a.transpose(perm)
    return c, inv


def _must(ok, what):
    if not ok:
        raise RuntimeError(f"gpuarr.fft: cuFFT's layout rejected a contiguous array ({what}); "
                           "please report this")


# ========================================================== transforms =====

def _c2c(x, y, axes, forward):
    """y = the complex transform of x over axes (distinct, each longer than
    1); y may be x.  Groups of up to three axes, innermost first; a group
    that does not fit runs axis by axis; an axis that does not fit runs on
    a contiguous copy with it last."""
    xs = _estrides(x) or [0] * x.ndim
    order = sorted(axes, key=lambda ax: (-abs(xs[ax]), ax))
    src = x
    for end in range(len(order), 0, -3):
        group = order[max(0, end - 3):end]
        if not _run("c2c", src, y, group, forward):
            for ax in group:
                if not _run("c2c", src, y, [ax], forward):
                    c, inv = _transposed_copy(src, ax)
                    _must(_run("c2c", c, c, [c.ndim - 1], forward), "c2c")
                    y[...] = c.transpose(inv)
                src = y
        src = y
    return y


def _nested_groups(x, others, last):
    """Candidate groups ending with the halved axis: it alone, or with the
    one or two other axes of smallest stride (larger groups first)."""
    xs = _estrides(x) or [0] * x.ndim
    by_stride = sorted(others, key=lambda ax: (-abs(xs[ax]), ax))
    return [by_stride[len(by_stride) - k:] + [last] for k in (2, 1, 0) if k <= len(by_stride)]


def _r2c(x, y, axes):
    """y (complex) = the real-to-complex transform of x (real) over axes,
    halved along axes[-1]; every axis longer than 1."""
    last, others = axes[-1], axes[:-1]
    done = None
    for group in _nested_groups(x, others, last):
        if _run("r2c", x, y, group, True):
            done = group
            break
    if done is None:
        c, inv = _transposed_copy(x, last)
        cy = _core.empty(tuple(y.shape[p] for p in range(y.ndim) if p != last)
                         + (y.shape[last],), dtype=y.dtype)
        _must(_run("r2c", c, cy, [c.ndim - 1], True), "r2c")
        y[...] = cy.transpose(inv)
        done = [last]
    rest = [ax for ax in others if ax not in done]
    if rest:
        _c2c(y, y, rest, True)
    return y


def _c2r(x, y, axes, hermitian):
    """y (real) = the complex-to-real inverse of x over axes, the real
    length along axes[-1] being y's; x is overwritten.  Unless hermitian
    (the caller knows x is the spectrum of real data), the other axes run
    first as complex inverses and the imaginary parts of the zero and
    Nyquist frequencies along the last axis are zeroed, which gives NumPy's
    result for any input."""
    last, others = axes[-1], axes[:-1]
    group = [last]
    if hermitian:
        for g in _nested_groups(x, others, last):
            if _layout("c2r", x, y, g) is not None:
                group = g
                break
    rest = [ax for ax in others if ax not in group]
    if rest:
        _c2c(x, x, rest, False)
    if not hermitian:
        n = y.shape[last]
        edge = [slice(None)] * x.ndim
        for k in ((0, n // 2) if n % 2 == 0 else (0,)):
            edge[last] = k
            x.imag[tuple(edge)] = 0
    if not _run("c2r", x, y, group, False):
        c, inv = _transposed_copy(x, last)
        cy = _core.empty(tuple(y.shape[p] for p in range(y.ndim) if p != last)
                         + (y.shape[last],), dtype=y.dtype)
        _must(_run("c2r", c, cy, [c.ndim - 1], False), "c2r")
        y[...] = cy.transpose(inv)
    return y


def _complex_of(dt):
    return numpy.dtype(numpy.complex64 if dt.char in "efF" else numpy.complex128)


def _real_of(dt):
    return numpy.dtype(numpy.float32 if dt.char in "efF" else numpy.float64)


def _check_out(out, shape, dtype, fname):
    if not isinstance(out, _core.ndarray):
        raise TypeError(f"{fname}: out must be a device array, not {type(out).__name__}")
    if out.shape != tuple(shape):
        raise ValueError("output array has wrong shape.")
    if not numpy.can_cast(dtype, out.dtype, "same_kind"):
        raise TypeError(f"{fname}: cannot cast the {dtype} result to out's dtype {out.dtype} "
                        "with casting rule 'same_kind'")


def _transform(fname, a, axes, lengths, kind, forward, norm, out=None, hermitian=False,
               conj_in=False, conj_out=False, scratch=False):
    """The transform of device array a over distinct axes: lengths[i] the
    number of points along axes[i] (for c2r the real output length);
    kind 'c2c', 'r2c' or 'c2r'.  NumPy's dtypes, norm and out rules; the
    input is conjugated first (conj_in) or the result after (conj_out)
    for the Hermitian transforms.  scratch: a is a temporary the caller
    gives up, which C2R may overwrite and C2C may transform in place."""
    dt = a.dtype
    if kind == "r2c":
        if dt.kind == "c":
            raise TypeError(f"{fname}: the input must be real, not {dt} (as in NumPy)")
        xdt = _real_of(dt)
        ydt = rdt = _complex_of(dt)
    elif kind == "c2r":
        xdt, ydt = _complex_of(dt), _real_of(dt)
        # NumPy's irfft returns the input's real type (float16 stays float16);
        # irfftn's complex inverses along the other axes come first, so its
        # result is the compute type's.
        rdt = numpy.result_type(_real_of(dt) if dt.kind == "c" else dt, 1.0) \
            if len(axes) == 1 else ydt
    else:
        xdt = ydt = rdt = _complex_of(dt)
    sizes = dict(zip(axes, lengths))
    if kind == "c2r":
        sizes[axes[-1]] = lengths[-1] // 2 + 1
    shape = list(a.shape)
    for ax, n in zip(axes, lengths):
        shape[ax] = n
    if kind == "r2c":
        shape[axes[-1]] = lengths[-1] // 2 + 1
    if out is not None:
        _check_out(out, shape, rdt, fname)
    a = to_device(a)
    if out is None and not conj_in and kind != "c2r" and len(axes) <= 3 and a.dtype == xdt \
            and a.size and a.flags.c_contiguous \
            and all(a.shape[ax] == n > 1 for ax, n in zip(axes, lengths)):
        # The common call (a whole contiguous array of the compute type, no
        # padding, one plan): straight to the plan run, without _prepare,
        # _alloc_like and the search for plan groups below.
        y = _core.empty(tuple(shape), dtype=ydt)
        if _run(kind, a, y, axes, forward):
            return _finish(y, norm, lengths, forward, kind, dt, conj_out, rdt)
    x, owned = _prepare(a, sizes, xdt)
    owned = owned or scratch
    if conj_in and dt.kind == "c":
        import gpuarr
        if owned:
            gpuarr.conjugate(x, out=x)
        else:
            x, owned = gpuarr.conjugate(x), True
    if kind == "c2r" and not owned:
        x = _copy(x)
    active = [ax for ax, n in zip(axes, lengths) if n > 1]
    # The transform writes out= directly only where it writes its result
    # once, after every allocation (one plan run, or a copy back from a
    # contiguous temporary); a transform over several axes may take several
    # runs, and one that then cannot get memory must leave out as it was.
    once = kind == "c2r" or (len(active) <= 1 and (kind == "c2c" or lengths[-1] > 1
                                                     or not active))
    y = None
    if out is not None and out.dtype == ydt and once and not _overlap(out, x):
        y = out
    if y is None:
        y = x if scratch and kind == "c2c" and list(x.shape) == shape else \
            _alloc_like(x, shape, ydt)
    if y.size:
        if kind == "c2c":
            if active:
                _c2c(x, y, active, forward)
            else:
                y[...] = x
        elif kind == "r2c":
            if lengths[-1] > 1:
                _r2c(x, y, active)
            else:
                y[...] = x
                if active:
                    _c2c(y, y, active, True)
        else:
            if lengths[-1] > 1:
                _c2r(x, y, active, hermitian)
            else:
                if active:
                    _c2c(x, x, active, False)
                y[...] = x.real
        _finish(y, norm, lengths, forward, kind, dt, conj_out, None)
    if out is not None:
        if y is not out:
            out[...] = y
        return out
    return y if y.dtype == rdt else y.astype(rdt)


def _finish(y, norm, lengths, forward, kind, dt, conj_out, rdt):
    """y scaled for norm and conjugated (conj_out) in place; returned as
    rdt unless None."""
    f = _factor(norm, lengths, forward, 0 if kind == "c2r" else -1,
                numpy.result_type(_real_of(dt) if dt.kind == "c" else dt, 1.0))
    if f is not None or conj_out:
        import gpuarr
        if f is not None:
            gpuarr.multiply(y, f, out=y)
        if conj_out:
            gpuarr.conjugate(y, out=y)
    return y if rdt is None or y.dtype == rdt else y.astype(rdt)


# ======================================================== 1-d functions ====

def _one(fname, a, n, axis, norm, out, kind, forward, conj_in=False, conj_out=False,
         default_n=None):
    a = _operand(a, fname)
    axis = _axis(axis, a.ndim)
    if n is None:
        n = default_n(a.shape[axis]) if default_n else a.shape[axis]
    n = _points(n)
    _check_norm(norm)
    return _transform(fname, a, [axis], [n], kind, forward, norm, out, conj_in=conj_in,
                      conj_out=conj_out)


def _half(m):
    return (m - 1) * 2


def fft(a, n=None, axis=-1, norm=None, out=None):
    """The 1-d discrete Fourier transform (numpy.fft.fft) along axis, of n
    points (the input cut or zero-padded); cuFFT C2C/Z2Z."""
    return _one("fft", a, n, axis, norm, out, "c2c", True)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """The 1-d inverse discrete Fourier transform (numpy.fft.ifft)."""
    return _one("ifft", a, n, axis, norm, out, "c2c", False)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """The 1-d transform of real input (numpy.fft.rfft): n // 2 + 1
    non-negative frequencies; cuFFT R2C/D2Z.  Complex input raises
    TypeError, as in NumPy."""
    return _one("rfft", a, n, axis, norm, out, "r2c", True)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of rfft (numpy.fft.irfft): n real points (default
    2 * (m - 1)) from the first n // 2 + 1 input values; cuFFT C2R/Z2D on a
    private copy, the imaginary parts of the zero and Nyquist terms ignored
    as NumPy ignores them."""
    return _one("irfft", a, n, axis, norm, out, "c2r", False, default_n=_half)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The transform of a Hermitian-symmetric signal (numpy.fft.hfft): real
    output of n points (default 2 * (m - 1))."""
    a = _operand(a, "hfft")
    axis = _axis(axis, a.ndim)
    norm = _swap_norm(norm)
    n = _points(_half(a.shape[axis]) if n is None else n)
    return _transform("hfft", a, [axis], [n], "c2r", False, norm, out, conj_in=True)


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of hfft (numpy.fft.ihfft): n // 2 + 1 complex values from
    real input."""
    a = _operand(a, "ihfft")
    axis = _axis(axis, a.ndim)
    norm = _swap_norm(norm)
    n = _points(a.shape[axis] if n is None else n)
    return _transform("ihfft", a, [axis], [n], "r2c", True, norm, out, conj_out=True)


# ======================================================== n-d functions ====

def _nd(fname, a, s, axes, norm, out, kind, forward):
    a = _operand(a, fname)
    s, axes = _cook_nd(a, s, axes, invreal=kind == "c2r")
    if not axes:
        return to_device(a)
    if len(set(axes)) != len(axes):
        return _sequential(to_device(a), s, axes, norm, out, kind, forward)
    lengths = []
    for i, (n, ax) in enumerate(zip(s, axes)):
        if n is None:
            n = _half(a.shape[ax]) if kind == "c2r" and i == len(axes) - 1 else a.shape[ax]
        lengths.append(_points(n))
    _check_norm(norm)
    return _transform(fname, a, axes, lengths, kind, forward, norm, out)


def _sequential(a, s, axes, norm, out, kind, forward):
    """Repeated axes: NumPy's loop of 1-d transforms, literally."""
    one = {("c2c", True): fft, ("c2c", False): ifft}
    if kind == "c2c":
        for i in range(len(axes) - 1, -1, -1):
            a = one[kind, forward](a, s[i], axes[i], norm, out=out if i == 0 else None)
        return a
    if kind == "r2c":
        a = rfft(a, s[-1], axes[-1], norm, out=out if len(axes) == 1 else None)
        for i in range(len(axes) - 2, -1, -1):
            a = fft(a, s[i], axes[i], norm, out=out if i == 0 else None)
        return a
    for i in range(len(axes) - 1):
        a = ifft(a, s[i], axes[i], norm)
    return irfft(a, s[-1], axes[-1], norm, out=out)


def fftn(a, s=None, axes=None, norm=None, out=None):
    """The N-d discrete Fourier transform (numpy.fft.fftn): up to three
    axes per cuFFT plan, batched over the others."""
    return _nd("fftn", a, s, axes, norm, out, "c2c", True)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """The N-d inverse discrete Fourier transform (numpy.fft.ifftn)."""
    return _nd("ifftn", a, s, axes, norm, out, "c2c", False)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """The N-d transform of real input (numpy.fft.rfftn), halved along the
    last of axes: R2C/D2Z over it and up to two more axes in one plan."""
    return _nd("rfftn", a, s, axes, norm, out, "r2c", True)


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of rfftn (numpy.fft.irfftn): complex inverses along the
    other axes, then C2R/Z2D along the last (NumPy's order, so any input
    gives NumPy's result)."""
    return _nd("irfftn", a, s, axes, norm, out, "c2r", False)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The 2-d discrete Fourier transform (numpy.fft.fft2): one cuFFT plan."""
    return _nd("fft2", a, s, axes, norm, out, "c2c", True)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The 2-d inverse discrete Fourier transform (numpy.fft.ifft2)."""
    return _nd("ifft2", a, s, axes, norm, out, "c2c", False)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The 2-d transform of real input (numpy.fft.rfft2): one R2C/D2Z plan."""
    return _nd("rfft2", a, s, axes, norm, out, "r2c", True)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The inverse of rfft2 (numpy.fft.irfft2)."""
    return _nd("irfft2", a, s, axes, norm, out, "c2r", False)


# ================================================ for the FFT convolutions ====
#
# gpuarr.scipy.signal's FFT convolution is three transforms of arrays it
# owns: two zero-padded C-contiguous inputs and their product.  The path
# above is general (any strides, out=, norm, axes that need several
# plans) and costs ~80 us of host time a transform on the H100 machine,
# which left small and mid-sized convolutions host-bound (256^2 x 15^2:
# 277 us host for 27 us of kernels).  Here each transform is one plan run
# (_run) on a fresh C-contiguous array, the padded input written by at
# most three launches.


def _padded(x, axes, lengths, dtype, scale):
    """A new C-contiguous array of dtype: x (any strides) cut or
    zero-padded to lengths along axes (a cut drops only what the
    convolution's kept part never reads), times scale unless None
    (computed in dtype).  A buffer mostly of padding is zeroed whole (one
    memset), any other only along its margins (no element written twice)."""
    shape = list(x.shape)
    for ax, n in zip(axes, lengths):
        shape[ax] = n
    if any(n < x.shape[ax] for ax, n in zip(axes, lengths)):
        x = x[tuple(slice(0, n) for n in shape)]
    inner = tuple(slice(0, n) for n in x.shape)
    if 2 * x.size <= math.prod(shape):
        p = _core.zeros(tuple(shape), dtype=dtype)
    else:
        p = _core.empty(tuple(shape), dtype=dtype)
        margin = [slice(None)] * x.ndim
        for ax, n in zip(axes, lengths):
            if n > x.shape[ax]:
                margin[ax] = slice(x.shape[ax], None)
                p[tuple(margin)] = 0
                margin[ax] = inner[ax]
    if scale is None:
        p[inner] = x
    else:
        import gpuarr
        gpuarr.multiply(x, scale, out=p[inner], dtype=dtype)
    return p


def padded_spectrum(x, axes, lengths, real, scale=None):
    """The forward transform (rfftn when real, else fftn) of x zero-padded
    to lengths along the distinct axes (ascending), x cast to the transform
    type (float16 to float32, integers and bool to float64) and multiplied
    by scale unless None, for gpuarr.scipy.signal: one multi-axis plan,
    whatever x's size.  (Transforming a small filter one axis at a time,
    rows first so that the rows of zeros are never transformed, measured
    slower on the H100: for 127^2 padded to 2160^2 in float64, cuFFT's
    strided C2C down 1081 columns took 209 us, the whole 2-d R2C of the
    padded filter ~130.)"""
    dt = _real_of(x.dtype) if real else _complex_of(x.dtype)
    p = _padded(to_device(x), axes, lengths, dt, scale)
    kind = "r2c" if real else "c2c"
    shape = list(p.shape)
    if real:
        shape[axes[-1]] = lengths[-1] // 2 + 1
    y = p if kind == "c2c" else _core.empty(tuple(shape), dtype=_complex_of(dt))
    if not _run(kind, p, y, axes, True):
        y = _transform("fftconvolve", p, axes, lengths, kind, True, "backward", scratch=True)
    return y


def inverse_spectrum(sp, axes, lengths, real):
    """The unscaled inverse (irfftn of a Hermitian spectrum when real, else
    ifftn) of the temporary sp (C-contiguous), which it overwrites: one
    multi-axis plan where the layout allows."""
    kind = "c2r" if real else "c2c"
    shape = list(sp.shape)
    shape[axes[-1]] = lengths[-1]
    y = sp if kind == "c2c" else _core.empty(tuple(shape), dtype=_real_of(sp.dtype))
    if not _run(kind, sp, y, axes, False):
        y = _transform("fftconvolve", sp, axes, lengths, kind, False, "forward", hermitian=real,
                       scratch=True)
    return y
