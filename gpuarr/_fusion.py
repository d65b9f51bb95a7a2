"""gpuarr.fuse: a Python function of arrays traced into one kernel.

    @gp.fuse()
    def f(x, y, z):
        return gp.sin(x) + gp.cos(y) / gp.sqrt(z)

On the first call with a new signature (the dtypes and ndims of the
arguments) the function is called once with tracing values that record
every operation: gpuarr's ufuncs (and NumPy's, by name), the operators,
``where``, ``astype``, and one reduction at the end (sum, prod, min, max,
mean, with axis and keepdims).  The record becomes one elementwise kernel,
or one reduction whose map is the fused expression; it computes each
operation with the same functors and the same dtypes as gpuarr's separate
calls (src/kernels/ufunc_ops.cuh, NumPy's type resolution), without the
intermediate arrays.  Later calls with that signature run in C
(src/userelementwise.c) like an ElementwiseKernel.

Called with NumPy arrays, the record is evaluated by NumPy on the host, so
the function gives NumPy's answer there.  Python scalars are weak, as in
NumPy 2 (``x_float32 * 2.0`` stays float32).  Lambdas work (the kernel is
named ``lambda``; CuPy 14 fails on them).  An operation that cannot be
fused raises FuseError naming it.  Differences from CuPy: no ``out=``
inside the function, no in-place operators on arguments, no control flow
on traced values (use ``gp.where``); complex reductions are not fused.
"""
import math
import re

import numpy

from . import _core
from . import _userkernels as _uk
from ._userkernels import _IN, _SCALAR, _OUT, _Builder

__all__ = ["fuse", "Fusion", "FuseError"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# No contraction of a * b + c into one rounding: each operation rounds as
# gpuarr's separate calls do, so a fused function gives their answers.
_OPTIONS = ("--fmad=false",)
_TO_BOOL = {"logical_and", "logical_or", "logical_xor", "logical_not"}
_NUMPY_NAME = {"divide": "true_divide", "abs": "absolute", "conj": "conjugate"}
_STORAGE = {"bool": "ga_t_b", "int8": "ga_t_i8", "int16": "ga_t_i16", "int32": "ga_t_i32",
            "int64": "ga_t_i64", "uint8": "ga_t_u8", "uint16": "ga_t_u16", "uint32": "ga_t_u32",
            "uint64": "ga_t_u64", "float16": "ga_t_f16", "float32": "ga_t_f32",
            "float64": "ga_t_f64", "complex64": "ga_t_c64", "complex128": "ga_t_c128"}


class FuseError(TypeError):
    """The function cannot be fused; the message names the operation."""


def _storage(dtype):
    return _STORAGE[numpy.dtype(dtype).name]


# ============================================================ the record ==

class _Trace:
    """The operations recorded while the function runs on tracing values."""

    def __init__(self, name):
        self.name = name
        self.nodes = []        # (var, op, args, info) in order

    def var(self, dtype, op, args, info=None):
        v = _Var(self, len(self.nodes), numpy.dtype(dtype))
        self.nodes.append((v, op, tuple(args), info))
        return v


def _weak_type(x):
    """What NumPy's resolvers take for an operand: a dtype, or the Python
    type of a weak scalar."""
    if isinstance(x, _Var):
        return x.dtype if not x.weak else x.weak
    if isinstance(x, bool):
        return numpy.dtype(bool)
    if isinstance(x, (int, float, complex)):
        return type(x)
    if isinstance(x, numpy.generic):
        return x.dtype
    raise FuseError(f"a fused function cannot use a {type(x).__name__} value ({x!r}); only "
                    f"the arguments, Python numbers and NumPy scalars")


class _Var:
    """A value inside a fused function while it is traced."""

    __array_priority__ = 1000

    def __init__(self, trace, index, dtype, weak=None):
        self.trace = trace
        self.index = index
        self.dtype = dtype
        self.weak = weak          # the Python type of a weak scalar argument

    # ---- NumPy's protocols: gpuarr's and NumPy's functions come here ----
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = _NUMPY_NAME.get(ufunc.__name__, ufunc.__name__)
        if method != "__call__":
            raise FuseError(f"{name}.{method} cannot be fused (only calls of ufuncs)")
        if kwargs:
            raise FuseError(f"{name}(): keyword arguments ({', '.join(kwargs)}) cannot be "
                            f"fused")
        return _apply_ufunc(self.trace, name, inputs)

    def __array_function__(self, func, types, args, kwargs):
        name = getattr(func, "__name__", str(func))
        if name == "where" and len(args) == 3 and not kwargs:
            return _where(self.trace, *args)
        if name in _REDUCTIONS:
            return _reduce(self.trace, name, *args, **kwargs)
        raise FuseError(f"{name}() cannot be fused: a fused function may use ufuncs, "
                        f"operators, where, astype and one reduction at the end")

    def __array__(self, *a, **k):
        raise FuseError("a traced value was converted to an array: only elementwise "
                        "operations and a final reduction can be fused")

    def __bool__(self):
        raise FuseError("a traced value was used as a truth value (if, and, or, while): "
                        "branches cannot be fused; use gpuarr.where(condition, a, b)")

    def __len__(self):
        raise FuseError("len() of a traced value: shapes are not known while fusing")

    def __iter__(self):
        raise FuseError("iterating over a traced value cannot be fused")

    def __setitem__(self, key, value):
        raise FuseError("item assignment cannot be fused (arguments are read-only inside "
                        "fuse; return the result instead)")

    def __getitem__(self, key):
        raise FuseError("indexing cannot be fused: a fused function works element by element")

    # ---- methods ----
    def astype(self, dtype, copy=True):
        return self.trace.var(dtype, "astype", (self,))

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reduce(self.trace, "sum", self, axis=axis, dtype=dtype, out=out,
                       keepdims=keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reduce(self.trace, "prod", self, axis=axis, dtype=dtype, out=out,
                       keepdims=keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return _reduce(self.trace, "max", self, axis=axis, out=out, keepdims=keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return _reduce(self.trace, "min", self, axis=axis, out=out, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return _reduce(self.trace, "mean", self, axis=axis, dtype=dtype, out=out,
                       keepdims=keepdims)

    def conj(self):
        return _apply_ufunc(self.trace, "conjugate", (self,))

    conjugate = conj

    @property
    def real(self):
        if self.dtype.kind != "c":
            return self
        return self.trace.var(numpy.dtype(self.dtype.char.lower()), "real", (self,))

    @property
    def imag(self):
        if self.dtype.kind != "c":
            raise FuseError("the imaginary part of a real value cannot be fused (it is 0)")
        return self.trace.var(numpy.dtype(self.dtype.char.lower()), "imag", (self,))

    def __repr__(self):
        return f"<traced {self.dtype} value #{self.index} of fused {self.trace.name!r}>"


def _binary(name, reflected=False):
    if reflected:
        return lambda self, other: _apply_ufunc(self.trace, name, (other, self))
    return lambda self, other: _apply_ufunc(self.trace, name, (self, other))


for _op, _uf in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                 ("truediv", "true_divide"), ("floordiv", "floor_divide"), ("mod", "remainder"),
                 ("pow", "power"), ("and", "bitwise_and"), ("or", "bitwise_or"),
                 ("xor", "bitwise_xor"), ("lshift", "left_shift"), ("rshift", "right_shift")):
    setattr(_Var, f"__{_op}__", _binary(_uf))
    setattr(_Var, f"__r{_op}__", _binary(_uf, True))
for _op, _uf in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                 ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")):
    setattr(_Var, f"__{_op}__", _binary(_uf))
_Var.__hash__ = object.__hash__
_Var.__neg__ = lambda self: _apply_ufunc(self.trace, "negative", (self,))
_Var.__pos__ = lambda self: _apply_ufunc(self.trace, "positive", (self,))
_Var.__abs__ = lambda self: _apply_ufunc(self.trace, "absolute", (self,))
_Var.__invert__ = lambda self: _apply_ufunc(self.trace, "invert", (self,))


def _inplace(self, other):
    raise FuseError("in-place operators cannot be fused; write `x = x + y` instead")


for _op in ("iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior",
            "ixor", "ilshift", "irshift"):
    setattr(_Var, f"__{_op}__", _inplace)


def _apply_ufunc(trace, name, inputs):
    """Record ufunc `name` on `inputs` with NumPy's loop and gpuarr's kernel."""
    if name not in _core.ufuncs:
        raise FuseError(f"the ufunc {name} cannot be fused: gpuarr has no kernel for it")
    np_uf = getattr(numpy, name)
    if len(inputs) != np_uf.nin:
        raise FuseError(f"{name}() takes {np_uf.nin} arguments, got {len(inputs)}")
    types = [_weak_type(x) for x in inputs]
    try:
        loop = np_uf.resolve_dtypes(tuple(types) + (None,) * np_uf.nout, casting="same_kind")
    except Exception as exc:
        raise FuseError(f"{name}() of {', '.join(str(t) for t in types)}: {exc}") from None
    ins, out = loop[:np_uf.nin], loop[np_uf.nin]
    gp_types = _core.ufuncs[name].types
    sig = "".join(d.char for d in ins) + "->" + out.char
    if name in _TO_BOOL:
        ins = (numpy.dtype(bool),) * len(ins)
    elif sig not in gp_types or len(set(ins)) != 1:
        raise FuseError(f"{name}() has no gpuarr kernel for {sig} (gpuarr's loops: "
                        f"{', '.join(gp_types)})")
    return trace.var(out, "ufunc", inputs, (name, ins[0]))


def _where(trace, cond, x, y):
    types = [_weak_type(v) for v in (x, y)]
    out = numpy.result_type(*[t if isinstance(t, numpy.dtype) else t(0) for t in types])
    return trace.var(out, "where", (cond, x, y))


_REDUCTIONS = {"sum", "prod", "max", "min", "amax", "amin", "mean"}


def _reduce(trace, name, a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    name = {"amax": "max", "amin": "min"}.get(name, name)
    if not isinstance(a, _Var):
        raise FuseError(f"{name}() of a {type(a).__name__} cannot be fused")
    if out is not None or kwargs:
        raise FuseError(f"{name}(): out= and {', '.join(kwargs) or 'out'} cannot be fused")
    if a.dtype.kind == "c":
        raise FuseError(f"{name}() of complex values cannot be fused; reduce the fused "
                        f"function's result instead")
    if name in ("max", "min"):
        if dtype is not None:
            raise FuseError(f"{name}() takes no dtype=")
        res = a.dtype
    else:
        from ._reductions import _result_dtype
        res = _result_dtype(name, a.dtype, None if dtype is None else numpy.dtype(dtype), None)
    return trace.var(res, "reduce", (a,), (name, axis, bool(keepdims)))


# ========================================================== code, NumPy ==

def _literal(x, dtype=None):
    """A C expression of the value of Python/NumPy scalar `x`."""
    if isinstance(x, numpy.generic):
        x = x.item()
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if not -2 ** 63 <= x < 2 ** 64:
            raise FuseError(f"the integer {x} does not fit in 64 bits")
        return f"(int64_t){x}LL" if x < 2 ** 63 else f"(uint64_t){x}ULL"
    if isinstance(x, float):
        if math.isfinite(x):
            return f"{x.hex()}"   # C++17 hexadecimal floating literal: exact
        return {"inf": "(1.0 / 0.0)", "-inf": "(-1.0 / 0.0)"}.get(repr(x), "(0.0 / 0.0)")
    if isinstance(x, complex):
        return f"ga_c128{{{_literal(x.real)}, {_literal(x.imag)}}}"
    raise FuseError(f"a constant {x!r} cannot be fused")


def _expr(x, names):
    return names[x.index] if isinstance(x, _Var) else _literal(x)


def _statements(trace, names, upto):
    """C statements computing every recorded value before node `upto`."""
    lines = []
    for v, op, args, info in trace.nodes[:upto]:
        if op == "arg":
            continue
        t = _storage(v.dtype)
        names[v.index] = n = f"_v{v.index}"
        if op == "ufunc":
            fn, in_dt = info
            tin = _storage(in_dt)
            loads = ", ".join(f"ga_load(ga_convert<{tin}>({_expr(a, names)}))" for a in args)
            lines.append(f"const {t} {n} = ga_store<{t}>(op_{fn}()({loads}));")
        elif op == "astype":
            lines.append(f"const {t} {n} = ga_convert<{t}>({_expr(args[0], names)});")
        elif op == "where":
            c, x, y = (_expr(a, names) for a in args)
            lines.append(f"const {t} {n} = ga_convert<bool>({c}) ? ga_convert<{t}>({x}) : "
                         f"ga_convert<{t}>({y});")
        elif op in ("real", "imag"):
            lines.append(f"const {t} {n} = ({t}){_expr(args[0], names)}."
                         f"{'re' if op == 'real' else 'im'};")
        else:
            raise FuseError(f"{op} can only be the last operation of a fused function")
    return lines


def _numpy_eval(trace, values):
    """The record evaluated by NumPy on host values."""
    out = {}

    def val(x):
        return out[x.index] if isinstance(x, _Var) else x

    for v, op, args, info in trace.nodes:
        if op == "arg":
            out[v.index] = values[info]
        elif op == "ufunc":
            out[v.index] = getattr(numpy, info[0])(*[val(a) for a in args])
        elif op == "astype":
            out[v.index] = numpy.asarray(val(args[0])).astype(v.dtype)
        elif op == "where":
            out[v.index] = numpy.where(*[val(a) for a in args])
        elif op in ("real", "imag"):
            out[v.index] = getattr(numpy, op)(val(args[0]))
        elif op == "reduce":
            name, axis, keepdims = info
            out[v.index] = getattr(numpy, name)(val(args[0]), axis=axis, keepdims=keepdims,
                                                dtype=v.dtype if name in ("sum", "prod", "mean")
                                                else None)
    return out


# ============================================================== reductions ==

def _identity(name, dtype):
    if name in ("sum", "mean"):
        return "0"
    if name == "prod":
        return "1"
    if dtype.kind == "f":
        return "(-1.0 / 0.0)" if name == "max" else "(1.0 / 0.0)"
    if dtype.kind == "b":
        return "false" if name == "max" else "true"
    info = numpy.iinfo(dtype)
    v = info.min if name == "max" else info.max
    return _literal(int(v))


def _acc_type(name, dtype):
    """The accumulator: wide, as gpuarr's own reductions (64-bit integers,
    double); min and max keep the element type."""
    if name in ("max", "min"):
        return _storage(dtype)
    if dtype.kind == "u":
        return "uint64_t"
    if dtype.kind in "bi":
        return "int64_t"
    return "double"


# ================================================================== fuse ==

class Fusion(_core._EWKernelBase):
    """A fused function (see gpuarr.fuse)."""

    def __init__(self, func, kernel_name=None):
        if not callable(func):
            raise TypeError("fuse() decorates a function")
        code = getattr(func, "__code__", None)
        if code is None:
            raise TypeError("fuse() needs a Python function (one with a __code__)")
        if code.co_flags & 0x0C or code.co_kwonlyargcount:   # *args, **kwargs
            raise FuseError("a fused function takes positional parameters only (no *args, "
                            "**kwargs or keyword-only parameters)")
        name = kernel_name or getattr(func, "__name__", "fused")
        name = re.sub(r"\W", "_", name).strip("_") or "fused"
        if not kernel_name:
            # a function's own name may be CUDA's (sincos, exp): the kernel's
            # is prefixed unless the caller chose it
            name = "fused_" + name
        self._func = func
        self.name = name
        self.__name__ = getattr(func, "__name__", name)
        self.__doc__ = getattr(func, "__doc__", None)
        self.__wrapped__ = func
        self.nin = code.co_argcount
        self._configure(self.nin, 0)

    def _trace(self, args):
        trace = _Trace(self.name)
        values = []
        for i, a in enumerate(args):
            if isinstance(a, (_core.ndarray, numpy.ndarray)):
                v = trace.var(a.dtype, "arg", (), i)
            elif isinstance(a, numpy.generic):
                v = trace.var(a.dtype, "arg", (), i)
            elif isinstance(a, (bool, int, float, complex)):
                kind = bool if isinstance(a, bool) else int if isinstance(a, int) else \
                    float if isinstance(a, float) else complex
                v = trace.var(_uk._PY_SCALAR_DTYPE[kind], "arg", (), i)
                v.weak = None if kind is bool else kind
            else:
                raise TypeError(f"fused {self.name!r}: argument {i + 1} of type "
                                f"{type(a).__name__} is not an array or a number")
            values.append(v)
        result = self._func(*values)
        return trace, result

    def _make_plan(self, args):
        if len(args) != self.nin:
            raise TypeError(f"fused {self.name!r} takes {self.nin} arguments, got {len(args)}")
        host = any(isinstance(a, numpy.ndarray) for a in args)
        if host and any(isinstance(a, _core.ndarray) for a in args):
            raise TypeError(f"fused {self.name!r}: NumPy arrays and device arrays in one call; "
                            f"move the NumPy ones with gpuarr.asarray() first")
        trace, result = self._trace(args)
        if host:
            return self._numpy_plan(trace, result)
        return self._device_plan(trace, result, [isinstance(a, _core.ndarray) for a in args])

    def inspect_source(self, *args):
        """The CUDA source fusing the function for these arguments (NumPy
        arrays stand for device arrays of their dtype): the contiguous
        elementwise kernel, or the reduction's kernels.  Needs no GPU."""
        trace, result = self._trace(args)
        plan = self._device_plan(trace, result, [isinstance(a, (_core.ndarray, numpy.ndarray))
                                                 for a in args], sources=True)
        return plan

    def _device_plan(self, trace, result, is_array, sources=False):
        outs = result if isinstance(result, tuple) else (result,)
        if not outs or not all(isinstance(o, _Var) for o in outs):
            raise FuseError(f"fused {self.name!r} must return a traced value or a tuple of "
                            f"them (it returned {type(result).__name__})")
        reduces = [o for o in outs if trace.nodes[o.index][1] == "reduce"]
        if reduces:
            if len(outs) != 1:
                raise FuseError("a fused function ending with a reduction returns that "
                                "reduction only")
            return self._reduction_plan(trace, outs[0], is_array, sources)
        if any(n[1] == "reduce" for n in trace.nodes):
            raise FuseError("a reduction can only be the last operation of a fused function")
        return self._elementwise_plan(trace, outs, is_array, isinstance(result, tuple), sources)

    def _numpy_plan(self, trace, result):
        def run(*values, **kwargs):
            got = _numpy_eval(trace, values)
            if isinstance(result, tuple):
                return tuple(got[r.index] if isinstance(r, _Var) else r for r in result)
            return got[result.index] if isinstance(result, _Var) else result
        return run

    def _params(self, trace, is_array):
        """The kernel's input parameters: (name, dtype, role) per argument."""
        names, params = {}, []
        for v, op, a, info in trace.nodes:
            if op != "arg":
                continue
            pname = f"in{info}"
            names[v.index] = pname
            params.append((pname, v.dtype, _IN if is_array[info] else _SCALAR))
        return names, params

    def _elementwise_plan(self, trace, outs, is_array, as_tuple, sources=False):
        names, params = self._params(trace, is_array)
        body = _statements(trace, names, len(trace.nodes))
        outputs = []
        for k, o in enumerate(outs):
            pname = f"out{k}"
            outputs.append((pname, o.dtype, _OUT))
            body.append(f"{pname} = {names[o.index]};")
        allp = params + outputs
        plist = tuple(_uk._Param(n, dt, None, False, role == _OUT) for n, dt, role in allp)
        dtypes = tuple(dt for _, dt, _ in allp)
        scalars = {n for n, _, role in params if role == _SCALAR}
        operation = "\n        ".join(body)
        name = self.name

        def source_for(ndim, contiguous):
            return _uk.elementwise_source(name, plist, dtypes, (1,) * len(allp), ndim,
                                          contiguous, operation, scalar_params=scalars,
                                          ctype_of=_storage)

        if sources:
            return source_for(1, True)
        return _core._EWPlan(tuple(role for _, _, role in allp), dtypes, (1,) * len(allp),
                             _Builder(source_for, name, _OPTIONS), return_tuple=as_tuple)

    def _reduction_plan(self, trace, red, is_array, sources=False):
        names, params = self._params(trace, is_array)
        src_var = trace.nodes[red.index][2][0]
        rname, axis, keepdims = trace.nodes[red.index][3]
        body = _statements(trace, names, red.index)
        acc = _acc_type(rname, src_var.dtype)
        arrays = [n for n, _, role in params if role == _IN]
        array_dtypes = [dt for _, dt, role in params if role == _IN]
        scalars = [n for n, _, role in params if role == _SCALAR]
        scalar_dtypes = [dt for _, dt, role in params if role == _SCALAR]
        if not arrays:
            raise FuseError(f"fused {self.name!r}: a reduction needs a device array argument")
        sig = ", ".join(f"const {_storage(dt)} {n}" for n, dt, _ in params)
        preamble = (f"__device__ __forceinline__ {acc} _ga_fused_map({sig})\n{{\n    "
                    + "\n    ".join(body)
                    + f"\n    return ga_convert<{acc}>({_expr(src_var, names)});\n}}")
        reduce_expr = {"sum": "a + b", "mean": "a + b", "prod": "a * b",
                       "max": "op_maximum()(a, b)", "min": "op_minimum()(a, b)"}[rname]
        post = (f"out0 = ga_convert<{_storage(red.dtype)}>("
                + ("(double)a / (double)_in_ind.size()" if rname == "mean" else "a") + ")")
        call = "_ga_fused_map(" + ", ".join(n for n, _, _ in params) + ")"
        source = _uk.reduction_source(self.name, arrays, array_dtypes, scalars, scalar_dtypes,
                                      "out0", red.dtype, call, reduce_expr, post,
                                      _identity(rname, src_var.dtype), acc, preamble, {},
                                      ctype_of=_storage)
        if sources:
            return source
        plan = _uk._ReductionPlan(source, self.name, _OPTIONS, arrays, scalars, scalar_dtypes,
                                  red.dtype)
        what = f"fused {self.name!r}"

        def run(*values, stream=None):
            arrs = [v for v in values if isinstance(v, _core.ndarray)]
            if rname in ("max", "min") and any(s == 0 for s in
                                               numpy.broadcast_shapes(*(a.shape for a in arrs))):
                raise ValueError(f"zero-size array to reduction operation {rname} which has no "
                                 f"identity")
            scal = [v for v in values if not isinstance(v, _core.ndarray)]
            return _uk.run_reduction(plan, arrs, scal, axis, None, keepdims, stream, what)

        return run

    def __repr__(self):
        return f"<gpuarr.fuse {self.name!r}>"


def fuse(*args, **kwargs):
    """fuse(kernel_name=None): decorator making one kernel of a function of
    arrays (see the module docstring); ``@gp.fuse`` and ``@gp.fuse()``
    both work."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return Fusion(args[0])
    if args:
        raise TypeError("fuse() takes the function, or only keyword arguments "
                        "(kernel_name=...)")
    kernel_name = kwargs.pop("kernel_name", None)
    if kwargs:
        raise TypeError(f"fuse() got unexpected keyword arguments {sorted(kwargs)}")
    return lambda func: Fusion(func, kernel_name)
