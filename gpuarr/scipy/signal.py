"""scipy.signal's convolutions on device arrays: convolve2d, correlate2d,
convolve, correlate, fftconvolve and choose_conv_method.

Same signatures, defaults, output shapes and dtypes and the same errors as
SciPy.  Every function computes the direct sum on the device
(src/kernels/convolve.cu); nothing is compiled at run time:

* 2-d and N-d inputs run the tile kernel: a block stages its input tile and
  halo in shared memory, extended at load time (boundary 'fill', 'wrap',
  'symm'), so the inner loop has no branches; each thread keeps 16 outputs
  of one column in registers and slides a register window down the column,
  so each shared-memory load feeds 16 multiply-adds; the taps of the staged
  chunk are read from shared memory as 16-byte broadcasts.  FP64-bound for
  a 15x15 float64 filter.
* A 2-d float filter that is an outer product u v^T within rounding (the
  lesson's Gaussian) is computed as a horizontal pass with v and a vertical
  one with u over the staged tile: kh + kw multiply-adds an output instead
  of kh * kw, memory-bound.  The filter is factored on the device and both
  kernels are launched, the one not chosen returning at once, so there is
  no host synchronisation; results agree with the direct sum to rounding.
  (For images large enough to pay for the two extra launches.)
* 1-d inputs (and N-d filters that only act along the last axis) run the
  line kernel, as gpuarr.convolve does.
* ``method='fft'`` and ``fftconvolve`` run the same direct kernels (gpuarr has
  no FFT path: at the filter sizes these functions meet, the direct sum is
  faster than three FFTs on the GPU and exact for integers); results equal
  SciPy's FFT results within rounding, with SciPy's FFT output dtypes.
* ``choose_conv_method`` therefore answers 'direct' (see its docstring).

Integer inputs are computed in wrapping int64 (exact, as SciPy's direct
loops); complex inputs as four real correlations; float32 in float32.
"""
import operator

import numpy

from .. import _core
from .._convolve import as_operand, to_device, correlate_parts, EXT_CONSTANT, EXT_REFLECT, \
    EXT_WRAP

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve",
           "choose_conv_method"]

_MODES = ("full", "same", "valid")
_BOUNDARIES = {"fill": EXT_CONSTANT, "pad": EXT_CONSTANT, "wrap": EXT_WRAP,
               "circular": EXT_WRAP, "symm": EXT_REFLECT, "symmetric": EXT_REFLECT}


def _check_mode(mode):
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError("Acceptable mode flags are 'valid', 'same', or 'full'.")


def _check_method(method):
    if not isinstance(method, str) or method not in ("auto", "direct", "fft"):
        raise ValueError("Acceptable method flags are 'auto', 'direct', or 'fft'.")


def _swap_for_valid(mode, s1, s2, axes=None):
    """Whether 'valid' mode needs the inputs swapped (in2 at least as large
    in every axis); ValueError when neither input contains the other."""
    if mode != "valid" or not s1:
        return False
    axes = range(len(s1)) if axes is None else axes
    ok1 = all(s1[i] >= s2[i] for i in axes)
    ok2 = all(s2[i] >= s1[i] for i in axes)
    if not (ok1 or ok2):
        raise ValueError("For 'valid' mode, one must be at least as large as the other in "
                         "every dimension")
    return not ok1


def _geometry(s1, s2, mode, same_off):
    """Output shape and offsets of correlating an in1 of shape s1 with taps
    of shape s2; same_off(k) is the 'same' offset for k taps."""
    if mode == "full":
        return tuple(n + k - 1 for n, k in zip(s1, s2)), tuple(1 - k for k in s2)
    if mode == "same":
        return tuple(s1), tuple(same_off(k) for k in s2)
    return tuple(n - k + 1 for n, k in zip(s1, s2)), (0,) * len(s1)


def _conv_same(k):      # convolutions, and signal.correlate: centred on the full output
    return -(k // 2)


def _corr2d_same(k):    # correlate2d centres its window on tap (k-1)//2
    return -((k - 1) // 2)


def _ctype(dt):
    """Real compute dtype of a result dtype (complex: of its parts)."""
    if dt.kind in "biu":
        return numpy.dtype(numpy.int64)
    if dt.kind == "c":
        return numpy.dtype(numpy.float32 if dt.itemsize == 8 else numpy.float64)
    return numpy.dtype(numpy.float32 if dt.itemsize <= 4 else numpy.float64)


def _direct(in1, in2, shape, offsets, boundary, fill, flip, conj, rt, fname):
    """The correlation of in1 with in2 (reversed when flip, conjugated when
    conj) into a new array of dtype rt and the given shape."""
    out = _core.empty(shape, dtype=rt)
    if out.size == 0:
        return out
    if in1.size == 0 or in2.size == 0:
        out[...] = 0
        return out
    in1, in2 = to_device(in1), to_device(in2)
    ctype = _ctype(rt)
    if rt.kind != "c":
        return _core._correlate(in1, in2, out, offsets, boundary, fill, flip, ctype)

    def run(x, w, o, cv):
        _core._correlate(x, w, o, offsets, boundary, cv, flip, ctype)

    return correlate_parts(run, in1, in2, out, fill, conj)


def _reverse(z, conj):
    """z reversed along every axis (and conjugated), C-contiguous."""
    import gpuarr
    r = z[(slice(None, None, -1),) * z.ndim]
    if conj and z.dtype.kind == "c":
        return gpuarr.conjugate(r)
    return gpuarr.ascontiguousarray(r)


def _fillvalue(fillvalue, rt):
    """SciPy's fillvalue rules: one element, converted to complex, then to
    the output type without loss of its imaginary part or range."""
    fv = numpy.asarray(fillvalue.get() if isinstance(fillvalue, _core.ndarray) else fillvalue)
    if fv.size != 1:
        raise ValueError("`fillvalue` must be scalar or an array with one element.")
    value = complex(fv.reshape(()).item())
    err = ValueError("could not cast `fillvalue` directly to the output type (it was first "
                     "converted to complex).")
    if rt.kind == "c":
        return value
    if value.imag != 0:
        raise err
    if rt.kind in "iu":
        if not numpy.isfinite(value.real):
            raise err
        v = int(value.real)
        info = numpy.iinfo(rt)
        if not info.min <= v <= info.max:
            raise err
        return v
    return value.real


def _inputs(in1, in2, fname):
    return as_operand(in1, fname, "in1"), as_operand(in2, fname, "in2")


# ------------------------------------------------------------- 2-d --------

def _conv2d(in1, in2, mode, boundary, fillvalue, convolution):
    fname = "convolve2d" if convolution else "correlate2d"
    in1, in2 = _inputs(in1, in2, fname)
    if not in1.ndim == in2.ndim == 2:
        raise ValueError(f"{fname} inputs must both be 2-D arrays")
    swapped = _swap_for_valid(mode, in1.shape, in2.shape)
    if swapped:
        in1, in2 = in2, in1
    _check_mode(mode)
    if not isinstance(boundary, str) or boundary not in _BOUNDARIES:
        raise ValueError("Acceptable boundary flags are 'fill', 'circular' (or 'wrap'), and "
                         "'symmetric' (or 'symm').")
    rt = numpy.result_type(in1.dtype, in2.dtype)
    if rt.kind == "b" or rt == numpy.float16:
        raise ValueError("convolve2d not available for this type.")
    fill = _fillvalue(fillvalue, rt)
    shape, offsets = _geometry(in1.shape, in2.shape, mode,
                               _conv_same if convolution else _corr2d_same)
    shape = tuple(max(n, 0) for n in shape)
    out = _direct(in1, in2, shape, offsets, _BOUNDARIES[boundary], fill, convolution,
                  not convolution, rt, fname)
    if swapped and not convolution:
        out = _reverse(out, False)
    return out


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """Convolve two 2-d device arrays (scipy.signal.convolve2d).

    mode 'full' (default), 'same' (in1's shape, centred) or 'valid' (the
    inputs are swapped when in2 is the larger, as SciPy); boundary 'fill'
    (with fillvalue), 'wrap' or 'symm'.  Result dtype
    ``numpy.result_type(in1, in2)``; integer inputs are exact (wrapping, as
    SciPy's loops), bool and float16 raise ValueError as in SciPy.

    Runs the tile kernel (direct sum, filter flipped as it is staged), or
    the separable passes for a filter that factors; see the module
    docstring.  NumPy arrays are refused with TypeError: move them
    with gpuarr.asarray() first.
    """
    return _conv2d(in1, in2, mode, boundary, fillvalue, True)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """Cross-correlate two 2-d device arrays (scipy.signal.correlate2d):
    ``sum in1[...] * conj(in2[...])`` with convolve2d's modes, boundaries
    and dtypes ('same' centres on tap (k-1)//2, as SciPy).  Tile kernel."""
    return _conv2d(in1, in2, mode, boundary, fillvalue, False)


# ------------------------------------------------------------- N-d --------

def _np_ok(in1, in2, mode):
    """Whether NumPy's 1-d convolve/correlate gives SciPy's answer."""
    if in1.ndim == in2.ndim == 1:
        return mode in ("full", "valid") or (mode == "same" and in1.size >= in2.size)
    return False


def _nd(in1, in2, mode, method, convolution):
    import gpuarr
    fname = "convolve" if convolution else "correlate"
    in1, in2 = _inputs(in1, in2, fname)
    if in1.ndim == in2.ndim == 0:
        in1, in2 = to_device(in1), to_device(in2)
        return in1 * (in2 if convolution or in2.dtype.kind != "c" else gpuarr.conjugate(in2))
    if in1.ndim != in2.ndim:
        raise ValueError("volume and kernel should have the same dimensionality" if convolution
                         else "in1 and in2 should have the same dimensionality")
    _check_mode(mode)
    _check_method(method)
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"{fname}: in1 and in2 must not be empty")
    swapped = _swap_for_valid(mode, in1.shape, in2.shape)
    if swapped and convolution:      # a convolution commutes
        in1, in2, swapped = in2, in1, False
    rt = numpy.result_type(in1.dtype, in2.dtype)
    if method == "auto":
        method = choose_conv_method(in1, in2, mode=mode)
    if _np_ok(in1, in2, mode):
        # NumPy's 1-d functions give SciPy's answer for every method here.
        return (gpuarr.convolve if convolution else gpuarr.correlate)(to_device(in1),
                                                                      to_device(in2), mode)
    if method == "direct" and (rt.kind == "b" or rt == numpy.float16):
        raise ValueError("Unsupported type")
    # 'fft' runs the direct kernels too, keeping the FFT path's dtypes.
    if swapped or (mode == "full" and in2.size > in1.size):
        # The larger input as data, the smaller as taps: a convolution
        # commutes, a correlation is the reversed conjugate of the swapped
        # one, c12[k] = conj(c21[-k]).
        in1, in2 = in2, in1
        if not convolution:
            swapped = True
    shape, offsets = _geometry(in1.shape, in2.shape, mode, _conv_same)
    out = _direct(in1, in2, shape, offsets, EXT_CONSTANT, 0, convolution, not convolution, rt,
                  fname)
    return _reverse(out, True) if swapped else out


def convolve(in1, in2, mode="full", method="auto"):
    """Convolve two N-d device arrays (scipy.signal.convolve).

    mode 'full', 'same' or 'valid' as SciPy; method 'auto', 'direct' or
    'fft'.  Every method computes the direct sum on the device: 1-d inputs
    through gpuarr.convolve (the line kernel), N-d through the tile kernel
    (leading axes looped inside the kernel).  'fft' keeps SciPy's FFT
    semantics for dtypes (float16 accepted, computed in float32); integer
    results are exact where SciPy's FFT path rounds.  'auto' picks 'direct'
    (see choose_conv_method).  Errors as SciPy: ValueError for mismatched
    dimensionality, bad mode or method names, 'valid' shapes where neither
    input contains the other, bool/float16 with method='direct' (N-d).
    """
    return _nd(in1, in2, mode, method, True)


def correlate(in1, in2, mode="full", method="auto"):
    """Cross-correlate two N-d device arrays (scipy.signal.correlate):
    ``z[k] = sum_l in1[l] * conj(in2[l - k + ...])`` with SciPy's modes,
    methods, output shapes and dtypes; computed as convolve is (when in2 is
    the larger input the roles are swapped and the result reversed and
    conjugated, which is the same sum)."""
    return _nd(in1, in2, mode, method, False)


def _fft_dtype(rt):
    if rt.kind in "biu":
        return numpy.dtype(numpy.float64)
    if rt == numpy.float16:
        return numpy.dtype(numpy.float32)
    return rt


def fftconvolve(in1, in2, mode="full", axes=None):
    """scipy.signal.fftconvolve's result, computed by the direct kernels.

    Same modes, ``axes`` (the other axes broadcast: equal lengths, or 1 in
    one input) and output shape and dtype as SciPy (float64 for integer and
    bool inputs, float32 for float16, else the inputs' result type).
    gpuarr runs the direct sum (tile or line kernel), not an FFT: at the
    sizes of image filters it is faster on the GPU and has no FFT round-off.
    Where in2 varies along a broadcast axis, each slice is one launch.
    """
    in1, in2 = _inputs(in1, in2, "fftconvolve")
    if in1.ndim == in2.ndim == 0:
        return to_device(in1) * to_device(in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if in1.size == 0 or in2.size == 0:
        return _core.array([])
    _check_mode(mode)
    nd = in1.ndim
    if axes is None:
        axes = list(range(nd))
    else:
        axes = [_normalize_axis(a, nd) for a in ([axes] if numpy.ndim(axes) == 0 else axes)]
        if not axes:
            raise ValueError("when provided, axes cannot be empty")
        if len(set(axes)) != len(axes):
            raise ValueError("all axes must be unique")
    s1, s2 = in1.shape, in2.shape
    conv = [a for a in axes if s1[a] != 1 and s2[a] != 1]
    if not all(s1[a] == s2[a] or s1[a] == 1 or s2[a] == 1 for a in range(nd) if a not in conv):
        raise ValueError(f"incompatible shapes for in1 and in2: {s1} and {s2}")
    if _swap_for_valid(mode, s1, s2, conv):
        in1, in2 = in2, in1
        s1, s2 = s2, s1
    ft = _fft_dtype(numpy.result_type(in1.dtype, in2.dtype))
    # SciPy's 'full' result, then cropped (centred) to the mode's shape.
    full = [s1[a] + s2[a] - 1 if a in conv else max(s1[a], s2[a]) for a in range(nd)]
    if mode == "full":
        shape = full
    elif mode == "same":
        shape = list(s1)
    else:
        shape = [s1[a] - s2[a] + 1 if a in conv else full[a] for a in range(nd)]
    start = [(f - n) // 2 for f, n in zip(full, shape)]
    offsets = [start[a] - (s2[a] - 1) if a in conv else 0 for a in range(nd)]
    in1, in2 = to_device(in1), to_device(in2)
    out = _core.empty(tuple(shape), dtype=ft)
    batched = [a for a in range(nd) if a not in conv and s2[a] > 1]
    if not batched:
        return _fill_direct(in1, in2, out, offsets, ft)
    # in2 varies along a broadcast axis: one launch per output slice.
    for idx in numpy.ndindex(*[shape[a] for a in batched]):
        sel1, sel2, selo = [slice(None)] * nd, [slice(None)] * nd, [slice(None)] * nd
        for a, i in zip(batched, idx):
            b = i + start[a]
            sel1[a] = slice(0, 1) if s1[a] == 1 else slice(b, b + 1)
            sel2[a] = slice(b, b + 1)
            selo[a] = slice(i, i + 1)
        _fill_direct(in1[tuple(sel1)], in2[tuple(sel2)], out[tuple(selo)], offsets, ft)
    return out


def _normalize_axis(a, nd):
    from numpy.exceptions import AxisError
    a = operator.index(a)
    if not -nd <= a < nd:
        raise AxisError(a, nd)
    return a % nd


def _fill_direct(x, w, out, offsets, ft):
    ctype = _ctype(ft)
    if ft.kind != "c":
        _core._correlate(x, w, out, offsets, EXT_CONSTANT, 0, True, ctype)
        return out

    def run(xp, wp, o, cv):
        _core._correlate(xp, wp, o, offsets, EXT_CONSTANT, cv, True, ctype)

    return correlate_parts(run, x, w, out, 0, False)


def choose_conv_method(in1, in2, mode="full", measure=False):
    """The method signal.convolve/correlate use for method='auto'.

    gpuarr answers 'direct' for every input its direct kernels take, and
    'fft' only for float16 (which SciPy's direct method refuses and whose
    'fft' path gpuarr computes directly in float32): gpuarr's 'fft' method
    runs the same direct kernels, so there is nothing to choose between
    (SciPy's heuristic weighs its CPU FFT against its CPU loops).  With
    ``measure=True`` both methods are timed on the device and
    ``(method, {'direct': seconds, 'fft': seconds})`` is returned.
    """
    in1, in2 = _inputs(in1, in2, "choose_conv_method")
    _check_mode(mode)
    rt = numpy.result_type(in1.dtype, in2.dtype)
    if measure:
        from ..profiler import benchmark
        times = {}
        for method in ("fft", "direct"):
            r = benchmark(convolve, (in1, in2), {"mode": mode, "method": method}, n_repeat=3,
                          n_warmup=1)
            times[method] = float(numpy.min(r.gpu_times))
        return ("fft" if times["fft"] < times["direct"] else "direct"), times
    return "fft" if rt == numpy.float16 else "direct"
