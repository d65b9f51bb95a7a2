"""The type lattice of jit kernels: NumPy scalar dtypes and arrays.

A scalar type is a ``numpy.dtype`` (bool, int8..int64, uint8..uint64,
float32, float64, complex64, complex128).  An array type is ``Array(dtype,
ndim, contiguous, space)``: a kernel argument (``space='global'``, passed as
a data pointer, with its shape and byte strides as extra parameters when
the kernel uses them) or a ``jit.shared_memory`` array (``space='shared'``,
1-d and contiguous).  Promotion is NumPy's own: ``ufunc.resolve_dtypes``
with Python scalars (literals, globals) as NEP 50 weak types.
"""
import numpy

__all__ = ["Array", "ctype", "header_ctype", "literal", "scalar_of", "python_type", "same_kind",
           "SCALARS"]

_CNAMES = {
    "?": "bool", "b": "signed char", "h": "short", "i": "int", "l": "long long",
    "q": "long long", "B": "unsigned char", "H": "unsigned short", "I": "unsigned int",
    "L": "unsigned long long", "Q": "unsigned long long", "f": "float", "d": "double",
    "F": "jt_complex64", "D": "jt_complex128",
}

# The element types of gpuarr's ufunc_ops.cuh, on which its functors are
# called: int64_t there may be 'long' (a host compiler's <cstdint>) where jit
# spells 'long long'.
_HEADER_NAMES = {
    "?": "ga_t_b", "b": "ga_t_i8", "h": "ga_t_i16", "i": "ga_t_i32", "l": "ga_t_i64",
    "q": "ga_t_i64", "B": "ga_t_u8", "H": "ga_t_u16", "I": "ga_t_u32", "L": "ga_t_u64",
    "Q": "ga_t_u64", "f": "ga_t_f32", "d": "ga_t_f64",
}

SCALARS = tuple(numpy.dtype(c) for c in "?bhilBHILfdFD")


class Array:
    """An array type: dtype, ndim, C-contiguity and memory space."""

    __slots__ = ("dtype", "ndim", "contiguous", "space", "size")

    def __init__(self, dtype, ndim=1, contiguous=True, space="global", size=None):
        self.dtype = numpy.dtype(dtype)
        self.ndim = int(ndim)
        self.contiguous = bool(contiguous)
        self.space = space
        self.size = size            # shared memory: the static size (None: dynamic)

    def _key(self):
        return (self.dtype, self.ndim, self.contiguous, self.space, self.size)

    def __eq__(self, other):
        return isinstance(other, Array) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        if self.space == "shared":
            return f"shared {self.dtype}[{self.size if self.size is not None else ''}]"
        lay = "C-contiguous" if self.contiguous else "strided"
        return f"{self.ndim}-d {lay} {self.dtype} array"


def check_dtype(dt):
    """``dt`` as a supported scalar dtype, or raise TypeError naming it."""
    dt = numpy.dtype(dt)
    if dt.byteorder == ">" or dt not in SCALARS:
        raise TypeError(f"dtype {dt} is not supported in jit kernels (supported: bool, "
                        f"int8-int64, uint8-uint64, float32, float64, complex64, complex128)")
    return numpy.dtype(dt.name)


def ctype(t):
    """The C type of a scalar dtype or the element pointer of an Array."""
    if isinstance(t, Array):
        return ctype(t.dtype) + " *"
    return _CNAMES[numpy.dtype(t).char]


def header_ctype(t):
    """The element type of ufunc_ops.cuh for a real scalar dtype."""
    return _HEADER_NAMES[numpy.dtype(t).char]


def python_type(v):
    """The dtype a Python scalar value takes when it must become a variable
    (int -> int64, float -> float64, bool -> bool, complex -> complex128);
    NumPy scalars keep theirs."""
    if isinstance(v, numpy.generic):
        return v.dtype
    if isinstance(v, bool):
        return numpy.dtype(numpy.bool_)
    if isinstance(v, int):
        if -2**63 <= v < 2**63:
            return numpy.dtype(numpy.int64)
        if 0 <= v < 2**64:
            return numpy.dtype(numpy.uint64)
        raise OverflowError(f"the integer {v} does not fit in 64 bits")
    if isinstance(v, float):
        return numpy.dtype(numpy.float64)
    if isinstance(v, complex):
        return numpy.dtype(numpy.complex128)
    raise TypeError(f"{type(v).__name__} is not a number")


def scalar_of(v):
    """What a compile-time number contributes to NumPy's promotion: the
    Python type for Python scalars (weak), the dtype for NumPy scalars."""
    if isinstance(v, numpy.generic):
        return v.dtype
    if isinstance(v, bool):
        return numpy.dtype(numpy.bool_)
    return type(v)


def same_kind(src, dst):
    """Whether a value of dtype ``src`` may be stored in ``dst`` (NumPy's
    'same_kind' casting, the rule for assignments in CuPy's JIT)."""
    return numpy.can_cast(src, dst, "same_kind")


def _float_literal(x, suffix):
    x = float(x)
    if x != x:
        return "__int_as_float(0x7fc00000)" if suffix else "__longlong_as_double(0x7ff8000000000000LL)"
    if x in (float("inf"), float("-inf")):
        sign = "-" if x < 0 else ""
        return (f"({sign}__int_as_float(0x7f800000))" if suffix
                else f"({sign}__longlong_as_double(0x7ff0000000000000LL))")
    text = repr(x)
    if "." not in text and "e" not in text:
        text += ".0"
    return f"{text}{suffix}" if not text.startswith("-") else f"({text}{suffix})"


def literal(value, dt):
    """C source for the constant ``value`` converted to dtype ``dt``
    (raises OverflowError when it does not fit)."""
    dt = numpy.dtype(dt)
    k = dt.kind
    if k == "b":
        return "true" if value else "false"
    if k in "iu":
        if isinstance(value, (complex, numpy.complexfloating)):
            value = value.real
        v = int(value)
        info = numpy.iinfo(dt)
        if not info.min <= v <= info.max:
            raise OverflowError(f"the constant {value!r} does not fit in {dt}")
        if dt.itemsize == 8:
            if k == "u":
                return f"{v}ULL"
            return f"({v + 1}LL - 1)" if v == info.min else (f"({v}LL)" if v < 0 else f"{v}LL")
        if k == "u":
            return f"{v}u" if dt.itemsize == 4 else f"(({ctype(dt)}){v})"
        if dt.itemsize == 4:
            return f"({v + 1} - 1)" if v == info.min else (f"({v})" if v < 0 else str(v))
        return f"(({ctype(dt)}){v})"
    if k == "f":
        v = complex(value).real if isinstance(value, (complex, numpy.complexfloating)) else value
        if dt.itemsize == 4:
            return _float_literal(numpy.float32(v), "f")
        return _float_literal(v, "")
    if k == "c":
        c = complex(value)
        part = "f" if dt.itemsize == 8 else ""
        return f"{ctype(dt)}({_float_literal(c.real, part)}, {_float_literal(c.imag, part)})"
    raise TypeError(f"no literal of dtype {dt}")
