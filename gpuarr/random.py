"""Random numbers on the device, with NumPy's names.

    import gpuarr as gp
    x = gp.random.rand(2048, 2048)                  # float64 in [0, 1)
    y = gp.random.random(10**6, dtype=gp.float32)   # generated as float32
    k = gp.random.randint(0, 10, size=100, dtype=gp.int8)
    rng = gp.random.default_rng(42)
    z = rng.standard_normal((3, 3))

Both NumPy APIs are here: the legacy one (module functions over a global
RandomState, ``seed()``, ``rand``, ``randn``, ``randint``, ...) and the
Generator one (``default_rng(seed)`` with ``random``, ``integers``,
``normal``, ``uniform``, ...).  Each generator is Philox4x32-10, a
counter-based generator: a 64-bit key and a 128-bit counter, both derived
from the seed (through numpy.random.SeedSequence, or os.urandom when the
seed is None).  Every draw encrypts the next counters, so one launch fills
any array in parallel with no per-thread state, and the same seed gives the
same values on any GPU.  The counter advances by what each draw used, so
successive draws differ.

The values follow the same distributions as NumPy's, not NumPy's streams.
How they are made (src/kernels/random.cu):

- floats in [0, 1): 24 random bits x 2**-24 (float32, generated natively)
  or 53 bits x 2**-53 (float64); 1.0 never occurs.  uniform(low, high) is
  low + (high - low) * u in the output dtype.
- normals: Box-Muller; the tails are cut at about 6.7 sigma (float32) and
  8.6 sigma (float64).
- integers in [low, high): floor(w * range / 2**k) with k = 64 random bits
  for ranges up to 2**32 and k = 128 above, so no value's probability is off
  by more than range / 2**k relative (below 2**-32).
- permutation, shuffle and choice(replace=False): random 64-bit keys sorted
  with their indices (CUB radix sort), then a gather of rows.

Differences from NumPy:

- With size=None the result is a 0-d device array, not a host scalar
  (reading a scalar would synchronise with the GPU); ``float(x)`` or
  ``x.item()`` gets the value.
- Parameters (low, high, loc, scale) are scalars; array-valued parameters
  and choice(p=...) are not supported.
- The float functions take ``dtype=`` (float32 or float64) in both APIs;
  RandomState.seed accepts any non-negative integer or sequence of them.
- Host (NumPy) arrays given to choice, permutation or shuffle raise
  TypeError: move them with gpuarr.asarray() first.
"""
import math
import numbers
import operator
import os
import threading

import numpy
from numpy.exceptions import AxisError

from . import _core
from ._core import ndarray
from ._creation import asarray, ascontiguousarray
from ._manipulation import moveaxis

__all__ = ["Generator", "RandomState", "default_rng", "get_random_state", "set_random_state",
           "seed", "rand", "randn", "random", "random_sample", "ranf", "sample", "uniform",
           "normal", "standard_normal", "randint", "choice", "permutation", "shuffle"]

_MASK64 = (1 << 64) - 1
_FLOATS = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))


# ------------------------------------------------------------ arguments --

def _shape(size):
    """NumPy's size argument as a shape tuple (None gives (), a 0-d result)."""
    if size is None:
        return ()
    if isinstance(size, (tuple, list)):
        shape = tuple(operator.index(s) for s in size)
    else:
        try:
            shape = (operator.index(size),)
        except TypeError:
            if isinstance(size, (ndarray, str, bytes)) or not hasattr(size, "__iter__"):
                raise TypeError(f"expected a sequence of integers or a single integer, "
                                f"got '{size}'") from None
            shape = tuple(operator.index(s) for s in size)
    if any(s < 0 for s in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def _shaped(arr, shape):
    """The flat result in `shape` (1-d results stay the owning array)."""
    return arr if len(shape) == 1 else arr.reshape(shape)


def _float_dtype(dtype, what):
    dt = numpy.dtype(dtype)
    if dt not in _FLOATS:
        raise TypeError(f"Unsupported dtype {dt!r} for {what}")
    return dt


def _int_dtype(dtype, what):
    dt = numpy.dtype(dtype)
    if dt.kind not in "iub" or not dt.isnative:
        raise TypeError(f"Unsupported dtype {dt!r} for {what}")
    return dt


def _scalar(value, name):
    """A host scalar parameter; arrays are refused (not supported)."""
    if isinstance(value, numpy.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (ndarray, numpy.ndarray)):
        raise TypeError(f"{name} must be a scalar: gpuarr.random does not support "
                        f"array-valued {name}")
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}")
    return value


def _real(value, name):
    return float(_scalar(value, name))


def _integer(value, name):
    """An integer bound; floats are truncated, as NumPy does."""
    return int(_scalar(value, name))


def _no_host_array(x, name):
    if isinstance(x, numpy.ndarray):
        raise _core._host_array_error(name)


def _seed_words(seed):
    """Four 32-bit words from a seed: os.urandom for None, else mixed by
    NumPy's SeedSequence (any non-negative integer or sequence of them)."""
    if seed is None:
        raw = os.urandom(16)
        return [int.from_bytes(raw[i:i + 4], "little") for i in range(0, 16, 4)]
    if isinstance(seed, (ndarray, float, numpy.floating, str, bytes, bool)):
        raise TypeError("seed must be None, a non-negative integer or a sequence of them, "
                        f"not {type(seed).__name__}")
    try:
        words = numpy.random.SeedSequence(seed).generate_state(4, numpy.uint32)
    except TypeError:
        raise TypeError("seed must be None, a non-negative integer or a sequence of them, "
                        f"not {type(seed).__name__}") from None
    except ValueError:
        raise ValueError("Seed must be non-negative") from None
    return [int(w) for w in words]


def _check_out(out, shape, dt):
    """Validate out= of Generator.random/standard_normal; returns the shape."""
    if not isinstance(out, ndarray):
        _no_host_array(out, "out")
        raise TypeError(f"out must be a gpuarr.ndarray, not {type(out).__name__}")
    if out.dtype != dt:
        raise TypeError(f"Supplied output array has the wrong type. Expected {dt}, "
                        f"got {out.dtype}")
    if not (out.flags.c_contiguous and out.flags.writeable):
        raise ValueError("Supplied output array must be contiguous, writable, aligned, and in "
                         "machine byte-order.")
    if shape is not None and shape != out.shape:
        raise ValueError("size must match out.shape when used together")
    return out.shape


# ------------------------------------------------------------ the state --

class _Sampler:
    """Philox4x32-10 state and the draws both APIs share.

    The state is a key, the counter's fixed high word and its low word,
    which each draw advances (under a lock, so threads sharing a generator
    never reuse counters) by the blocks the kernel consumed."""

    def __init__(self, seed=None):
        self._lock = threading.Lock()
        self._reseed(seed)

    def _reseed(self, seed):
        w = _seed_words(seed)
        with self._lock:
            self._key = w[0] | w[1] << 32
            self._ctr_hi = w[2] | w[3] << 32
            self._ctr_lo = 0

    def _draw(self, fn, *args, out=None):
        with self._lock:
            state = (self._key, self._ctr_hi, self._ctr_lo)
            if out is None:
                arr, self._ctr_lo = fn(*args, *state)
            else:
                arr, self._ctr_lo = fn(*args, *state, out)
        return arr

    def _real_draw(self, fn, a, b, size, dtype, what, out=None):
        dt = _float_dtype(dtype, what)
        shape = _shape(size)
        if out is not None:
            shape = _check_out(out, None if size is None else shape, dt)
            self._draw(fn, math.prod(shape), dt, a, b, out=out)
            return out
        return _shaped(self._draw(fn, math.prod(shape), dt, a, b), shape)

    def _uniform(self, low, high, size, dtype, what, out=None):
        low, high = _real(low, "low"), _real(high, "high")
        scale = high - low
        if not math.isfinite(scale):
            raise OverflowError("high - low range exceeds valid bounds")
        return self._real_draw(_core._random_uniform, low, scale, size, dtype, what, out)

    def _normal(self, loc, scale, size, dtype, what, out=None):
        loc, scale = _real(loc, "loc"), _real(scale, "scale")
        if scale < 0:
            raise ValueError("scale < 0")
        return self._real_draw(_core._random_normal, loc, scale, size, dtype, what, out)

    def _integers(self, low, high, size, dtype, endpoint, what):
        dt = _int_dtype(dtype, what)
        low = _integer(low, "low")
        if high is None:
            low, high = 0, low
            if endpoint and high < 0:
                raise ValueError("high < 0")
            if not endpoint and high <= 0:
                raise ValueError("high <= 0")
        else:
            high = _integer(high, "high")
        if endpoint and low > high:
            raise ValueError("low > high")
        if not endpoint and low >= high:
            raise ValueError("low >= high")
        lo_lim, hi_lim = (0, 1) if dt.kind == "b" else (int(numpy.iinfo(dt).min),
                                                        int(numpy.iinfo(dt).max))
        top = high if endpoint else high - 1
        if low < lo_lim:
            raise ValueError(f"low is out of bounds for {dt.name}")
        if top > hi_lim:
            raise ValueError(f"high is out of bounds for {dt.name}")
        shape = _shape(size)
        arr = self._draw(_core._random_integers, math.prod(shape), dt, low & _MASK64,
                         (top - low + 1) & _MASK64)
        return _shaped(arr, shape)

    def _index(self, n):
        """A random permutation of range(n) as an int64 device array."""
        return self._draw(_core._random_permutation, n)

    def _permutation(self, x, axis):
        _no_host_array(x, "x")
        if not isinstance(x, ndarray):
            if isinstance(x, numbers.Integral):
                return self._index(max(int(x), 0))
            if isinstance(x, numbers.Number):
                raise IndexError("x must be an integer or at least 1-dimensional")
            x = asarray(x)
        if x.ndim == 0:
            raise IndexError("x must be an integer or at least 1-dimensional")
        axis = _axis(axis, x.ndim)
        rows = moveaxis(x, axis, 0)
        out = _core._random_gather_rows(ascontiguousarray(rows), self._index(rows.shape[0]))
        return out if axis == 0 else moveaxis(out, 0, axis)

    def _shuffle(self, x, axis):
        _no_host_array(x, "x")
        if not isinstance(x, ndarray):
            raise TypeError("shuffle works in place on a gpuarr.ndarray, not "
                            f"{type(x).__name__}")
        if x.ndim == 0:
            raise TypeError("len() of unsized object")
        rows = moveaxis(x, _axis(axis, x.ndim), 0)
        if rows.shape[0] > 1:
            rows[...] = _core._random_gather_rows(ascontiguousarray(rows),
                                                  self._index(rows.shape[0]))

    def _choice(self, a, size, replace, p, axis, generator):
        if p is not None:
            raise NotImplementedError("gpuarr.random: choice with p= (weights) is not "
                                      "supported")
        _no_host_array(a, "a")
        shape = _shape(size)
        n = math.prod(shape)
        pool = None
        if isinstance(a, ndarray) or not isinstance(a, numbers.Integral):
            pool = a if isinstance(a, ndarray) else asarray(a)
            if pool.ndim == 0 or (not generator and pool.ndim != 1):
                raise ValueError("a must be 1-dimensional" if not generator
                                 else "a must be a sequence or an integer")
            axis = _axis(axis, pool.ndim)
            pool = moveaxis(pool, axis, 0)
            population = pool.shape[0]
            if population == 0 and n:
                raise ValueError("a cannot be empty unless no samples are taken" if generator
                                 else "a must be greater than 0 unless no samples are taken")
        else:
            population = int(a)
            if population <= 0 and n:
                raise ValueError("a must be a positive integer unless no samples are taken"
                                 if generator else
                                 "a must be greater than 0 unless no samples are taken")
        if n == 0:
            index = self._index(0)
        elif replace:
            index = self._integers(0, population, n, numpy.int64, False, "choice")
        else:
            if n > population:
                raise ValueError("Cannot take a larger sample than population when "
                                 + ("replace is False" if generator else "'replace=False'"))
            index = self._index(population)
            if n < population:
                index = index[:n].copy()
        if pool is None:
            return _shaped(index, shape)
        rest = pool.shape[1:]
        out = _core._random_gather_rows(ascontiguousarray(pool), index).reshape(shape + rest)
        if axis == 0:
            return out
        k = len(shape)
        order = (list(range(k, k + axis)) + list(range(k))
                 + list(range(k + axis, k + len(rest))))
        return out.transpose(*order)


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(axis, ndim)
    return axis % ndim


# ------------------------------------------------------------ legacy API --

class RandomState(_Sampler):
    """NumPy's legacy RandomState on the device (Philox4x32-10; the streams
    differ from NumPy's Mersenne Twister).  RandomState(seed=None)."""

    def __repr__(self):
        return "RandomState(Philox4x32-10)"

    def seed(self, seed=None):
        """Reset the state from `seed` (None: fresh entropy from os.urandom)."""
        self._reseed(seed)

    def rand(self, *size, dtype=numpy.float64):
        """Uniform values in [0, 1) of shape `size` (rand(2, 3))."""
        return self._uniform(0.0, 1.0, size or None, dtype, "rand")

    def randn(self, *size, dtype=numpy.float64):
        """Standard normal values of shape `size` (randn(2, 3))."""
        return self._normal(0.0, 1.0, size or None, dtype, "randn")

    def random_sample(self, size=None, dtype=numpy.float64):
        """Uniform values in [0, 1)."""
        return self._uniform(0.0, 1.0, size, dtype, "random_sample")

    def random(self, size=None, dtype=numpy.float64):
        """Uniform values in [0, 1) (an alias of random_sample)."""
        return self._uniform(0.0, 1.0, size, dtype, "random")

    ranf = sample = random_sample

    def uniform(self, low=0.0, high=1.0, size=None, dtype=numpy.float64):
        """Uniform values in [low, high)."""
        return self._uniform(low, high, size, dtype, "uniform")

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=numpy.float64):
        """Normal values with mean `loc` and standard deviation `scale`."""
        return self._normal(loc, scale, size, dtype, "normal")

    def standard_normal(self, size=None, dtype=numpy.float64):
        """Normal values with mean 0 and standard deviation 1."""
        return self._normal(0.0, 1.0, size, dtype, "standard_normal")

    def randint(self, low, high=None, size=None, dtype=numpy.int64):
        """Integers in [low, high) (or [0, low) without high) of any integer
        dtype or bool."""
        return self._integers(low, high, size, dtype, False, "randint")

    def choice(self, a, size=None, replace=True, p=None):
        """A sample of a 1-d array (or of arange(a) for an integer a)."""
        return self._choice(a, size, replace, p, 0, False)

    def permutation(self, x):
        """A permuted arange(x), or a permuted copy of x along its first axis."""
        return self._permutation(x, 0)

    def shuffle(self, x):
        """Permute a device array in place along its first axis."""
        self._shuffle(x, 0)


# ------------------------------------------------------------ Generator --

class Generator(_Sampler):
    """NumPy's Generator API on the device.  Generator(seed=None) takes the
    seed itself (there are no separate BitGenerator objects); use
    default_rng()."""

    def __repr__(self):
        return "Generator(Philox4x32-10)"

    def random(self, size=None, dtype=numpy.float64, out=None):
        """Uniform values in [0, 1); out= a contiguous device array."""
        return self._uniform(0.0, 1.0, size, dtype, "random", out)

    def integers(self, low, high=None, size=None, dtype=numpy.int64, endpoint=False):
        """Integers in [low, high), or [low, high] with endpoint=True."""
        return self._integers(low, high, size, dtype, endpoint, "integers")

    def uniform(self, low=0.0, high=1.0, size=None, *, dtype=numpy.float64):
        """Uniform values in [low, high)."""
        return self._uniform(low, high, size, dtype, "uniform")

    def normal(self, loc=0.0, scale=1.0, size=None, *, dtype=numpy.float64):
        """Normal values with mean `loc` and standard deviation `scale`."""
        return self._normal(loc, scale, size, dtype, "normal")

    def standard_normal(self, size=None, dtype=numpy.float64, out=None):
        """Normal values with mean 0 and standard deviation 1."""
        return self._normal(0.0, 1.0, size, dtype, "standard_normal", out)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        """A sample of a's slices along `axis` (or of arange(a)).  Without
        replacement the sample comes out in random order either way."""
        return self._choice(a, size, replace, p, axis, True)

    def permutation(self, x, axis=0):
        """A permuted arange(x), or a permuted copy of x along `axis`."""
        return self._permutation(x, axis)

    def shuffle(self, x, axis=0):
        """Permute a device array in place along `axis`."""
        self._shuffle(x, axis)


def default_rng(seed=None):
    """A Generator seeded from `seed` (None: fresh entropy); a Generator
    passes through."""
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)


# ------------------------------------------------------ global state ----

_global_state = None
_global_lock = threading.Lock()


def get_random_state():
    """The RandomState behind the module functions (seeded from os.urandom
    on first use unless seed() was called)."""
    global _global_state
    if _global_state is None:
        with _global_lock:
            if _global_state is None:
                _global_state = RandomState()
    return _global_state


def set_random_state(state):
    """Make `state` (a RandomState) the one behind the module functions."""
    global _global_state
    if not isinstance(state, RandomState):
        raise TypeError(f"state must be a gpuarr.random.RandomState, not "
                        f"{type(state).__name__}")
    _global_state = state


def seed(seed=None):
    """Reseed the global RandomState (None: fresh entropy from os.urandom)."""
    get_random_state().seed(seed)


def rand(*size, dtype=numpy.float64):
    return get_random_state().rand(*size, dtype=dtype)


def randn(*size, dtype=numpy.float64):
    return get_random_state().randn(*size, dtype=dtype)


def random_sample(size=None, dtype=numpy.float64):
    return get_random_state().random_sample(size, dtype)


def random(size=None, dtype=numpy.float64):
    return get_random_state().random(size, dtype)


ranf = sample = random_sample


def uniform(low=0.0, high=1.0, size=None, dtype=numpy.float64):
    return get_random_state().uniform(low, high, size, dtype)


def normal(loc=0.0, scale=1.0, size=None, dtype=numpy.float64):
    return get_random_state().normal(loc, scale, size, dtype)


def standard_normal(size=None, dtype=numpy.float64):
    return get_random_state().standard_normal(size, dtype)


def randint(low, high=None, size=None, dtype=numpy.int64):
    return get_random_state().randint(low, high, size, dtype)


def choice(a, size=None, replace=True, p=None):
    return get_random_state().choice(a, size, replace, p)


def permutation(x):
    return get_random_state().permutation(x)


def shuffle(x):
    get_random_state().shuffle(x)


for _f in (rand, randn, random_sample, random, uniform, normal, standard_normal, randint,
           choice, permutation, shuffle):
    _f.__doc__ = getattr(RandomState, _f.__name__).__doc__ + " (global RandomState)"
del _f
