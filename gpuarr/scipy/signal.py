"""scipy.signal's convolutions on device arrays: convolve2d, correlate2d,
convolve, correlate, fftconvolve, oaconvolve and choose_conv_method.

Same signatures, defaults, output shapes and dtypes and the same errors as
SciPy.  Two engines, neither compiled at run time:

Direct sums (src/kernels/convolve.cu): convolve2d, correlate2d, and
convolve/correlate with method='direct':

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

FFT convolution (cuFFT through gpuarr.fft): fftconvolve, oaconvolve, and
convolve/correlate with method='fft':

* Real inputs: both zero-padded and transformed with R2C (rfftn), the
  spectra multiplied in one ufunc call, one C2R plan back (irfftn), the
  mode's part returned as a view.  Complex inputs use C2C (fftn/ifftn).
* The transforms are cyclic, of the smallest length per axis at which the
  wrap-around misses the part the mode keeps (for 'same',
  n1 + n2 - 1 - (n2 - 1) // 2 rather than SciPy's n1 + n2 - 1; for
  'valid', n1), rounded up to the product of 2, 3, 5 and 7 (cuFFT's fast
  radices) that cuFFT transforms fastest, by ``_length_cost`` (measured on
  the H100: 2187 = 3^7 rather than 2160 = 2^4 3^3 5 for 2111 points).
* 1/N is applied to the smaller input before its transform, so no pass
  over the large result scales it; both inputs are transformed whole, one
  multi-axis plan each.
* oaconvolve gives SciPy's result by the same whole-array FFT: on the GPU
  one transform of the minimal cyclic length is faster than many blocks.

method='auto' (choose_conv_method) compares the two engines' estimated
device times from the shapes alone (no data read, no synchronisation); see
``conv_costs``.  Integer inputs use the FFT only where the float64 result
rounds back to the exact sum for any values of their dtypes (SciPy checks
the data's extremes, which would synchronise); bool inputs always run
directly.

Dtypes: the direct kernels compute integer inputs in wrapping int64
(exact, as SciPy's direct loops), complex inputs as real correlations of
their parts, float32 in float32.  The FFT path follows SciPy's FFT rules:
integers and bool in float64, float16 in float32, and method='fft' rounds
integer results and casts to the inputs' result type (bool results are
rounded before the cast; SciPy casts its FFT noise, so its zeros can
come out True).  SciPy's warning for NaN/inf in an FFT result is not
given (it reads the result on the host).
"""
import functools
import math
import operator

import numpy

from .. import _core
from .._convolve import as_operand, to_device, correlate_parts, EXT_CONSTANT, EXT_REFLECT, \
    EXT_WRAP

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "oaconvolve",
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
    # SciPy reads fillvalue only where it pads with it
    fill = _fillvalue(fillvalue, rt) if _BOUNDARIES[boundary] == EXT_CONSTANT else 0
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
    if method == "fft":
        return _fft_method(in1, in2, mode, convolution, rt)
    if _np_ok(in1, in2, mode):
        # NumPy's 1-d functions give SciPy's answer here.
        return (gpuarr.convolve if convolution else gpuarr.correlate)(to_device(in1),
                                                                      to_device(in2), mode)
    if rt.kind == "b" or rt == numpy.float16:
        raise ValueError("Unsupported type")
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


def _fft_method(in1, in2, mode, convolution, rt):
    """method='fft' as SciPy's convolve computes it: fftconvolve (of in1
    and the reversed conjugate of in2 for a correlation), integer results
    rounded, cast to the inputs' result type."""
    import gpuarr
    in1, in2 = to_device(in1), to_device(in2)
    if not convolution:
        in2 = in2[(slice(None, None, -1),) * in2.ndim]
        if in2.dtype.kind == "c":
            in2 = gpuarr.conjugate(in2)
    if _swap_for_valid(mode, in1.shape, in2.shape):
        in1, in2 = in2, in1
    axes = [a for a in range(in1.ndim) if in1.shape[a] != 1 and in2.shape[a] != 1]
    out = _fft_convolve(in1, in2, mode, axes)
    if rt.kind in "biu":
        out = gpuarr.rint(out)
    return out if out.dtype == rt else out.astype(rt)


def convolve(in1, in2, mode="full", method="auto"):
    """Convolve two N-d device arrays (scipy.signal.convolve).

    mode 'full', 'same' or 'valid' as SciPy; method 'auto', 'direct' or
    'fft'.  'direct' computes the sum on the device: 1-d inputs through
    gpuarr.convolve (the line kernel), N-d through the tile kernel
    (leading axes looped inside the kernel).  'fft' is fftconvolve's FFT
    convolution with SciPy's FFT semantics for dtypes (integers rounded,
    float16 computed in float32, the result cast to the inputs' type).
    'auto' picks by choose_conv_method's cost model.  Errors as SciPy:
    ValueError for mismatched dimensionality, bad mode or method names,
    'valid' shapes where neither input contains the other, bool/float16
    with method='direct' (N-d).
    """
    return _nd(in1, in2, mode, method, True)


def correlate(in1, in2, mode="full", method="auto"):
    """Cross-correlate two N-d device arrays (scipy.signal.correlate):
    ``z[k] = sum_l in1[l] * conj(in2[l - k + ...])`` with SciPy's modes,
    methods, output shapes and dtypes; 'direct' as convolve computes it
    (when in2 is the larger input the roles are swapped and the result
    reversed and conjugated, which is the same sum), 'fft' as SciPy does,
    the FFT convolution of in1 with in2 reversed and conjugated."""
    return _nd(in1, in2, mode, method, False)


def _fft_type(dt):
    """The dtype SciPy's FFT convolution computes an input in: float64 for
    integers and bool, float32 for float16, else the input's own."""
    if dt.kind in "biu":
        return numpy.dtype(numpy.float64)
    if dt == numpy.float16:
        return numpy.dtype(numpy.float32)
    return dt


def _length_cost(m):
    """cuFFT's relative cost of one axis of m points (a product of 2, 3, 5
    and 7), fitted to 2-d R2C + C2R timings of every such square length
    from 2048 to 2700, float64 and float32, on the H100
    (tools/probe_fft_lengths.py; benchmarks/results/<GPU>-fft-lengths.md):
    a length of one prime (2048, 2187, 2401) costs least per point, each
    further distinct prime about a fifth more, and an odd length of
    several primes (2205, 2079) about twice as much (no half-length
    real transform)."""
    k = sum(1 for p in (2, 3, 5, 7) if m % p == 0)
    return m * (6.5 + 1.5 * (k - 1) + (5.0 if m % 2 and k > 1 else 0.0))


@functools.lru_cache(maxsize=4096)
def _fast_len(n):
    """The cyclic length for at least n points: of the products of 2, 3, 5
    and 7 from n up to the next power of two, the cheapest by
    _length_cost (the shortest among equals)."""
    n = max(n, 1)
    top = 1 << (n - 1).bit_length()
    best = top
    p7 = 1
    while p7 <= top:
        p5 = p7
        while p5 <= top:
            p3 = p5
            while p3 <= top:
                m = p3
                while m < n:
                    m *= 2
                if m <= top and (_length_cost(m), m) < (_length_cost(best), best):
                    best = m
                p3 *= 3
            p5 *= 5
        p7 *= 7
    return best


def _conv_geometry(s1, s2, mode, axes):
    """The FFT convolution's geometry: (full, target, start, lengths) with
    SciPy's 'full' shape (n1 + n2 - 1 along the transformed axes, the
    broadcast length along the others), the mode's shape and its offset in
    the full result, and the cyclic length of each transformed axis: the
    least at which the wrap-around misses [start, start + target), rounded
    up by _fast_len."""
    nd = len(s1)
    full = [s1[a] + s2[a] - 1 if a in axes else max(s1[a], s2[a]) for a in range(nd)]
    if mode == "full":
        target = full
    elif mode == "same":
        target = list(s1)
    else:
        target = [s1[a] - s2[a] + 1 if a in axes else full[a] for a in range(nd)]
    start = [(f - t) // 2 for f, t in zip(full, target)]
    lengths = [_fast_len(max(start[a] + target[a], full[a] - start[a])) for a in axes]
    return full, target, start, lengths


def _fft_convolve(in1, in2, mode, axes):
    """SciPy's fftconvolve of device arrays of equal ndim over the listed
    axes (both lengths > 1; the other axes broadcast), the inputs already
    in SciPy's order for 'valid'."""
    import gpuarr
    from ..fft import _fft
    complex_result = in1.dtype.kind == "c" or in2.dtype.kind == "c"
    real = not complex_result
    full, target, start, lengths = _conv_geometry(in1.shape, in2.shape, mode, axes)
    crop = tuple(slice(b, b + t) for b, t in zip(start, target))
    if not axes:
        return gpuarr.multiply(in1, in2)[crop]
    # The inputs in SciPy's FFT types (_fft_type, complex for a complex
    # result), the inverse transform's 1/N applied to the smaller one; the
    # larger one's padding and transform are queued first, so the GPU works
    # on them while the host prepares the smaller one.
    scale = 1.0 / math.prod(lengths)
    if in2.size <= in1.size:
        sp1 = _fft.padded_spectrum(in1, axes, lengths, real)
        sp2 = _fft.padded_spectrum(in2, axes, lengths, real, scale)
    else:
        sp2 = _fft.padded_spectrum(in2, axes, lengths, real)
        sp1 = _fft.padded_spectrum(in1, axes, lengths, real, scale)
    shape = tuple(max(a, b) for a, b in zip(sp1.shape, sp2.shape))
    pt = numpy.result_type(sp1.dtype, sp2.dtype)
    into = next((sp for sp in (sp1, sp2) if sp.shape == shape and sp.dtype == pt), None)
    prod = gpuarr.multiply(sp1, sp2, out=into) if into is not None else gpuarr.multiply(sp1, sp2)
    del sp1, sp2
    return _fft.inverse_spectrum(prod, axes, lengths, real)[crop]


def _freq_conv_args(in1, in2, mode, axes, fname):
    """SciPy's argument handling for fftconvolve/oaconvolve: (result, None)
    for 0-d and empty inputs, else (None, (in1, in2, axes)) with the
    transformed axes (both lengths > 1) and the inputs swapped for
    'valid' where SciPy swaps them."""
    in1, in2 = _inputs(in1, in2, fname)
    if in1.ndim == in2.ndim == 0:
        return to_device(in1) * to_device(in2), None
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if in1.size == 0 or in2.size == 0:
        return _core.array([]), None
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
    conv = sorted(a for a in axes if s1[a] != 1 and s2[a] != 1)
    if not all(s1[a] == s2[a] or s1[a] == 1 or s2[a] == 1 for a in range(nd) if a not in conv):
        raise ValueError(f"incompatible shapes for in1 and in2: {s1} and {s2}")
    if _swap_for_valid(mode, s1, s2, conv):
        in1, in2 = in2, in1
    return None, (to_device(in1), to_device(in2), conv)


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolve two N-d device arrays by FFT (scipy.signal.fftconvolve).

    Same modes, ``axes`` (the other axes broadcast: equal lengths, or 1 in
    one input) and output shape and dtype as SciPy (float64 for integer and
    bool inputs, float32 for float16, else the inputs' FFT result type).
    Real inputs: R2C transforms of both (cuFFT), the spectra multiplied,
    one C2R transform back; complex inputs: C2C.  The cyclic lengths are
    the least that give the mode's part exactly, so 'same' and 'valid'
    transform less than SciPy's n1 + n2 - 1 (see the module docstring);
    the result is a view of the inverse transform, as SciPy's is of its
    own before its copy.  Results match SciPy's within FFT rounding.
    """
    done, args = _freq_conv_args(in1, in2, mode, axes, "fftconvolve")
    return done if args is None else _fft_convolve(*args[:2], mode, args[2])


def oaconvolve(in1, in2, mode="full", axes=None):
    """Convolve two N-d device arrays (scipy.signal.oaconvolve): SciPy's
    arguments, shapes and dtypes, computed as fftconvolve computes them.
    SciPy's overlap-add splits the larger input into blocks to save CPU
    FFT work; on the GPU one transform of fftconvolve's minimal cyclic
    length does the same sum faster at every size that fits in memory, and
    the results agree within FFT rounding."""
    done, args = _freq_conv_args(in1, in2, mode, axes, "oaconvolve")
    return done if args is None else _fft_convolve(*args[:2], mode, args[2])


def _normalize_axis(a, nd):
    from numpy.exceptions import AxisError
    a = operator.index(a)
    if not -nd <= a < nd:
        raise AxisError(a, nd)
    return a % nd


# ------------------------------------------------- method='auto' --------
# Estimated device seconds of the two engines, from shapes and dtypes only:
# each engine's cost is the sum of its work terms (_conv_work) times the
# seconds each term costs (DIRECT_COSTS, FFT_COSTS).  The seconds are fitted
# by tools/probe_conv_methods.py to both engines timed as the user calls
# them (signal.convolve, CUDA events, host work included) over 2-d 256^2 to
# 2048^2, 1-d 1M/4M and 3-d 128^3 inputs, float32/64, complex64/128 and
# int16, 'same'/'full'/'valid', on the lent H100 (the records are
# benchmarks/results/<GPU>-conv-methods.json; the fit and the cases 'auto'
# gets wrong are in <GPU>-conv-methods.md).  Terms:
#   direct: "fixed" (launches and host work; complex inputs run 2 or 4 real
#   correlations and the combining passes: "fixed complex", "output
#   complex" a result element), "output" a result element, and "mac f4",
#   "mac f8", "mac i8" one multiply-add by compute type (counted per real
#   correlation), scaled up by DIRECT_FULL_OUTPUTS / outputs below that many
#   outputs (too few blocks to fill the GPU);
#   fft: "fixed" (the three cuFFT plans' launches and host work) and
#   "nlogn f4", "nlogn f8": the whole convolution (padding, two forward
#   transforms, the product, one inverse) per N log2 N of the padded
#   transform size N times the batch, complex transforms counting twice.
# DIRECT_FULL_OUTPUTS is not fitted by least squares: on the H100's
# records 0 gives 38 wrong picks (> 1.10x slower) of 305, 1e5..1e6 give
# 29-36, 4e5 gives 30.  With the fitted seconds below, 'auto' picks the
# slower engine in 30 of the 305 cases, at worst 3.1x slower (3-d
# complex64 x 5^3: the complex direct path, four real correlations of
# strided parts, costs more than these terms say at 2048^2 and 128^3).
DIRECT_FULL_OUTPUTS = 4e5
DIRECT_COSTS = {"fixed": 2.38e-05, "fixed complex": 3.37e-05, "mac f4": 8.08e-14,
                "mac f8": 1.17e-13, "mac i8": 3.34e-13, "output": 5.65e-12,
                "output complex": 4.56e-12}
FFT_COSTS = {"fixed": 1.36e-04, "nlogn f4": 9.55e-13, "nlogn f8": 2.48e-12}


def _fft_exact_for(dt1, dt2, smaller):
    """Whether float64 FFT results round back to the exact integer sums for
    any values of these integer dtypes: SciPy's bound, max|in1| max|in2|
    min(size) < 2^52, taken at the dtypes' extremes."""
    def peak(dt):
        if dt.kind == "b":
            return 1
        info = numpy.iinfo(dt)
        return max(abs(int(info.min)), int(info.max))
    return peak(dt1) * peak(dt2) * smaller < 2 ** numpy.finfo(numpy.float64).nmant - 1


def conv_costs(shape1, shape2, dtype1, dtype2, mode="full"):
    """(fft_seconds, direct_seconds): the cost model behind method='auto'
    for convolving inputs of these shapes and dtypes (DIRECT_COSTS and
    FFT_COSTS above, fitted on the H100; no device needed)."""
    return _costs(tuple(shape1), tuple(shape2), numpy.dtype(dtype1), numpy.dtype(dtype2), mode)


@functools.lru_cache(maxsize=1024)
def _costs(s1, s2, dt1, dt2, mode):
    """conv_costs of tuples and dtypes, kept: method='auto' asks the same
    question on every call of a loop (~10 us of Python each)."""
    direct, fft = _conv_work(s1, s2, dt1, dt2, mode)
    return (sum(FFT_COSTS[k] * v for k, v in fft.items()),
            sum(DIRECT_COSTS[k] * v for k, v in direct.items()))


def _conv_work(s1, s2, dt1, dt2, mode):
    """The work conv_costs prices, as ({direct term: amount}, {FFT term:
    amount}) with the terms of DIRECT_COSTS and FFT_COSTS
    (tools/probe_conv_methods.py fits their seconds to measurements)."""
    rt = numpy.result_type(dt1, dt2)
    nd = len(s1)
    n1, n2 = math.prod(s1), math.prod(s2)
    if mode == "full":
        out, taps = [a + b - 1 for a, b in zip(s1, s2)], min(n1, n2)
    elif mode == "same":
        out, taps = list(s1), n2
    else:
        out, taps = [abs(a - b) + 1 for a, b in zip(s1, s2)], min(n1, n2)
    parts = (dt1.kind == "c") + (dt2.kind == "c")
    single = all(_fft_type(d).char in "fF" for d in (dt1, dt2))
    ctype = "i8" if rt.kind in "biu" else "f4" if rt.char in "efF" else "f8"
    outputs = math.prod(out)
    macs = outputs * taps * (1, 2, 4)[parts] * max(1.0, DIRECT_FULL_OUTPUTS / max(outputs, 1))
    c = " complex" if parts else ""
    direct = {"fixed" + c: 1.0, "output" + c: float(outputs), "mac " + ctype: macs}
    if _swap_for_valid(mode, s1, s2):
        s1, s2 = s2, s1
    axes = [a for a in range(nd) if s1[a] != 1 and s2[a] != 1]
    full, _, _, lengths = _conv_geometry(s1, s2, mode, axes)
    batch = math.prod(full[a] for a in range(nd) if a not in axes)
    size = math.prod(lengths)
    units = batch * size * max(1.0, math.log2(size)) * (2 if parts else 1)
    return direct, {"fixed": 1.0, "nlogn " + ("f4" if single else "f8"): units}


def choose_conv_method(in1, in2, mode="full", measure=False):
    """The method signal.convolve/correlate use for method='auto'.

    'fft' where conv_costs estimates the FFT convolution faster on the
    device than the direct kernels, else 'direct'; from the shapes and
    dtypes alone (no synchronisation).  bool inputs always get 'direct';
    integer inputs get 'fft' only where a float64 FFT is exact for every
    value of their dtypes (8- and 16-bit integers; SciPy checks the data's
    extremes instead); float16 gets 'fft' (SciPy's direct method refuses
    float16 N-d inputs).  With ``measure=True`` both methods are timed on
    the device and ``(method, {'direct': seconds, 'fft': seconds})`` is
    returned.
    """
    in1, in2 = _inputs(in1, in2, "choose_conv_method")
    _check_mode(mode)
    if measure:
        from ..profiler import benchmark
        times = {}
        for method in ("fft", "direct"):
            r = benchmark(convolve, (in1, in2), {"mode": mode, "method": method}, n_repeat=3,
                          n_warmup=1)
            times[method] = float(numpy.min(r.gpu_times))
        return ("fft" if times["fft"] < times["direct"] else "direct"), times
    rt = numpy.result_type(in1.dtype, in2.dtype)
    if rt == numpy.float16:
        return "fft"
    if rt.kind == "b" or in1.ndim != in2.ndim or in1.ndim == 0 or not in1.size or \
            not in2.size:
        return "direct"
    if rt.kind in "iu" and not _fft_exact_for(in1.dtype, in2.dtype, min(in1.size, in2.size)):
        return "direct"
    if mode == "valid" and not (all(a >= b for a, b in zip(in1.shape, in2.shape)) or
                                all(b >= a for a, b in zip(in1.shape, in2.shape))):
        return "direct"
    fft, direct = conv_costs(in1.shape, in2.shape, in1.dtype, in2.dtype, mode)
    return "fft" if fft < direct else "direct"
