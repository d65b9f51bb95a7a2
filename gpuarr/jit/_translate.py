"""Python bytecode -> CUDA C: an abstract interpretation of the function's
basic blocks with typed values.

How it works
------------
The function's bytecode, normalised (``_bytecode``), is split into basic
blocks.  Each block is interpreted over an abstract stack whose entries are

- ``V``: a C expression with a type (a NumPy dtype, or an Array),
- ``K``: a value known when compiling (a Python number, None, a module, a
  function, a dtype, ``jit.threadIdx``...),
- ``Tup``: a tuple of those (``x[i, j]``'s index, ``jit.grid(2)``),
- ``RangeIter``: the iterator of a ``for ... in range(...)`` loop,

and emits C statements.  Every block becomes a label and control flow
becomes ``goto`` (no structure is recovered: the C compiler does that).  A
stack entry that is still on the stack when control passes to another
block (a ternary's value, ``a and b``'s value, a comparison chain) is
assigned to a merge variable of that block, typed by NumPy's promotion of
what arrives there.  The blocks are swept in offset order until the
merge types and the "definitely assigned" sets stop changing (usually
twice).

Locals follow CuPy's rule: a local's type is the type of its first
assignment in the code (declared at the top of the C function), and later
assignments must cast to it within NumPy's 'same_kind' rule.  A read of a
local that some path reaches without an assignment is an error (C would
read an undefined value), which is what a first assignment inside a loop
or an ``if`` usually means.

Evaluation order is Python's: expressions are kept as C expressions while
they are pure, array loads still on the stack are copied to temporaries
before anything writes memory (a store, an atomic, a call of a device
function), and stack entries that read a local are copied before the
local is assigned.
"""
import builtins
import linecache
import math
import operator
import re

import numpy

from . import _bytecode, _intrinsics, _prelude, _types
from ._types import Array

__all__ = ["JitError", "translate", "Signature"]


class JitError(Exception):
    """A jit kernel could not be translated.  The message names the construct
    as written and the place: ``function``, ``filename`` and ``lineno`` are
    attributes, and ``reason`` is the message without the place."""

    def __init__(self, reason, function=None, filename=None, lineno=None):
        self.reason = reason
        self.function = function
        self.filename = filename
        self.lineno = lineno
        super().__init__(self._text())

    def _text(self):
        if self.function is None:
            return self.reason
        head = f"{self.function}, line {self.lineno}: {self.reason}"
        src = linecache.getline(self.filename, self.lineno).rstrip() if self.filename else ""
        where = f'\n  File "{self.filename}", line {self.lineno}'
        return head + where + (f"\n    {src.strip()}" if src else "")

    def __reduce__(self):
        return (type(self), (self.reason, self.function, self.filename, self.lineno))


class _Fail(Exception):
    """Raised inside the translator; turned into JitError with the line."""


def _fail(msg):
    raise _Fail(msg)


# ============================================================ values ====

class V:
    """A C expression: ``expr`` (atomic or parenthesised), ``type`` (dtype or
    Array), ``mem`` (reads memory), ``reads`` (locals it reads), ``fixed``
    (cannot change while the kernel runs: parameters' shapes, threadIdx)."""

    __slots__ = ("expr", "type", "mem", "reads", "fixed", "arr")

    def __init__(self, expr, type, mem=False, reads=frozenset(), fixed=False, arr=None):
        self.expr = expr
        self.type = type
        self.mem = mem
        self.reads = reads
        self.fixed = fixed
        self.arr = arr          # for arrays: the _ArrayRef

    def __repr__(self):
        return f"V({self.expr!r}, {self.type})"


class K:
    """A value known at compile time."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return (isinstance(other, K) and type(self.value) is type(other.value)
                and _same_const(self.value, other.value))

    def __hash__(self):
        return hash(type(self.value))

    def __repr__(self):
        return f"K({self.value!r})"


def _same_const(a, b):
    try:
        return a is b or bool(a == b)
    except Exception:
        return False


class Tup:
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = list(items)

    def __eq__(self, other):
        return isinstance(other, Tup) and len(self.items) == len(other.items) and all(
            _same_value(a, b) for a, b in zip(self.items, other.items))

    __hash__ = None


class RangeIter:
    __slots__ = ("name", "type", "sign")

    def __init__(self, name, type, sign):
        self.name, self.type, self.sign = name, type, sign


class RangeV:
    __slots__ = ("args",)

    def __init__(self, args):
        self.args = args


class Bound:
    """``value.method`` waiting for its call."""

    __slots__ = ("obj", "name")

    def __init__(self, obj, name):
        self.obj, self.name = obj, name


class _Null:
    def __repr__(self):
        return "NULL"


NULL = _Null()


def _same_value(a, b):
    if isinstance(a, V) and isinstance(b, V):
        return a.expr == b.expr and a.type == b.type
    if isinstance(a, K) and isinstance(b, K):
        return a == b
    if isinstance(a, Tup) and isinstance(b, Tup):
        return a == b
    if isinstance(a, RangeIter) and isinstance(b, RangeIter):   # made anew each sweep
        return (a.name, a.type, a.sign) == (b.name, b.type, b.sign)
    return a is b


def _is_number(v):
    return isinstance(v, (bool, int, float, complex, numpy.bool_, numpy.number))


class _ArrayRef:
    """A kernel array parameter or a shared-memory array, and which of its
    metadata the kernel uses."""

    __slots__ = ("name", "type", "used", "shape")

    def __init__(self, name, type, shape=None):
        self.name = name
        self.type = type
        self.used = set()      # ('shape', k) / ('stride', k)
        self.shape = shape     # compile-time shape (shared memory)

    def meta(self, what, k):
        if self.shape is not None and what == "shape":
            return K(self.shape[k])
        if self.type.space == "shared":
            _fail("the size of a dynamic shared memory array (shared_memory(dtype, None)) is "
                  "not known inside the kernel; pass it as an argument")
        self.used.add((what, k))
        return V(f"{self.name}_{what}{k}", numpy.dtype(numpy.int64), fixed=True)


# ====================================================== C identifiers ====

_RESERVED = set("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
extern false float for friend goto if inline int long mutable namespace new noexcept not
not_eq nullptr operator or or_eq private protected public register reinterpret_cast requires
restrict return short signed sizeof static static_assert static_cast struct switch template
this thread_local throw true try typedef typeid typename union unsigned using virtual void
volatile wchar_t while xor xor_eq main threadIdx blockIdx blockDim gridDim warpSize
abs fabs sqrt exp log sin cos tan min max pow floor ceil trunc round fmod isnan isinf
printf malloc free memcpy memset assert std signbit copysign hypot erf erfc
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t uintptr_t
""".split())
# the prefixes of the generated names and of those ufunc_ops.cuh declares
_RESERVED_PREFIXES = ("jt_", "ga_", "GA_", "op_")


def c_ident(name, taken=()):
    """A C identifier for a Python name (user names stay as written unless
    they clash with C++, CUDA, the generated names, which start 'jt_', or
    gpuarr's kernel headers: 'ga_', 'GA_', 'op_')."""
    s = re.sub(r"\W", "_", name).strip("_") or "f"
    if s[0].isdigit():
        s = "f" + s
    if s in _RESERVED or s.startswith(_RESERVED_PREFIXES) or s in taken:
        s = "jt_u_" + s
    return s


# ===================================================== the type rules ====

# operators whose NumPy definition is a functor of ufunc_ops.cuh (** on
# floats is pow(), which is all the functor does for them)
_FUNCTOR_OPS = {"//": "floor_divide", "%": "remainder", "**": "power", "<<": "left_shift",
                ">>": "right_shift"}

_BINOPS = {
    "+": numpy.add, "-": numpy.subtract, "*": numpy.multiply, "/": numpy.true_divide,
    "//": numpy.floor_divide, "%": numpy.remainder, "**": numpy.power,
    "<<": numpy.left_shift, ">>": numpy.right_shift, "&": numpy.bitwise_and,
    "|": numpy.bitwise_or, "^": numpy.bitwise_xor,
}
_COMPARE = {"<": numpy.less, "<=": numpy.less_equal, ">": numpy.greater,
            ">=": numpy.greater_equal, "==": numpy.equal, "!=": numpy.not_equal}
_PYOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
          "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_,
          "|": operator.or_, "^": operator.xor, "<": operator.lt, "<=": operator.le,
          ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}

# NumPy ufunc name -> (float32 C function, float64 C function).  Integer
# arguments promote as NumPy's ufunc does (sqrt(int16) is float32).
_FLOAT_FUNCS = {
    "sqrt": ("sqrtf", "sqrt"), "cbrt": ("cbrtf", "cbrt"), "exp": ("expf", "exp"),
    "exp2": ("exp2f", "exp2"), "expm1": ("expm1f", "expm1"), "log": ("logf", "log"),
    "log2": ("log2f", "log2"), "log10": ("log10f", "log10"), "log1p": ("log1pf", "log1p"),
    "sin": ("sinf", "sin"), "cos": ("cosf", "cos"), "tan": ("tanf", "tan"),
    "arcsin": ("asinf", "asin"), "arccos": ("acosf", "acos"), "arctan": ("atanf", "atan"),
    "sinh": ("sinhf", "sinh"), "cosh": ("coshf", "cosh"), "tanh": ("tanhf", "tanh"),
    "arcsinh": ("asinhf", "asinh"), "arccosh": ("acoshf", "acosh"),
    "arctanh": ("atanhf", "atanh"), "floor": ("floorf", "floor"), "ceil": ("ceilf", "ceil"),
    "trunc": ("truncf", "trunc"), "rint": ("rintf", "rint"), "fabs": ("fabsf", "fabs"),
    "erf": ("erff", "erf"), "erfc": ("erfcf", "erfc"), "gamma": ("tgammaf", "tgamma"),
    "lgamma": ("lgammaf", "lgamma"), "arctan2": ("atan2f", "atan2"),
    "hypot": ("hypotf", "hypot"), "copysign": ("copysignf", "copysign"),
    "fmax": ("fmaxf", "fmax"), "fmin": ("fminf", "fmin"),
}
# functions that are not NumPy ufuncs: typed as sqrt is
_NOT_UFUNCS = {"erf", "erfc", "gamma", "lgamma"}
_PREDICATES = {"isnan", "isinf", "isfinite", "signbit"}

_MATH = {
    math.sqrt: "sqrt", math.exp: "exp", math.expm1: "expm1", math.log: "log",
    math.log2: "log2", math.log10: "log10", math.log1p: "log1p", math.sin: "sin",
    math.cos: "cos", math.tan: "tan", math.asin: "arcsin", math.acos: "arccos",
    math.atan: "arctan", math.atan2: "arctan2", math.sinh: "sinh", math.cosh: "cosh",
    math.tanh: "tanh", math.asinh: "arcsinh", math.acosh: "arccosh", math.atanh: "arctanh",
    math.floor: "floor", math.ceil: "ceil", math.trunc: "trunc", math.fabs: "fabs",
    math.hypot: "hypot", math.pow: "power", math.fmod: "fmod", math.copysign: "copysign",
    math.isnan: "isnan", math.isinf: "isinf", math.isfinite: "isfinite", math.erf: "erf",
    math.erfc: "erfc", math.gamma: "gamma", math.lgamma: "lgamma",
    builtins.abs: "absolute", builtins.min: "minimum", builtins.max: "maximum",
}
_UFUNC_NAMES = (set(_FLOAT_FUNCS) | _PREDICATES | {
    "absolute", "negative", "positive", "square", "sign", "maximum", "minimum", "fmod",
    "power", "add", "subtract", "multiply", "divide", "true_divide", "floor_divide",
    "remainder", "mod", "left_shift", "right_shift", "bitwise_and", "bitwise_or",
    "bitwise_xor", "invert", "logical_not", "logical_and", "logical_or", "logical_xor",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "conjugate",
    "conj", "real", "imag"}) - _NOT_UFUNCS
_UFUNC_BINOP = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/",
                "true_divide": "/", "floor_divide": "//", "remainder": "%", "mod": "%",
                "power": "**", "left_shift": "<<", "right_shift": ">>", "bitwise_and": "&",
                "bitwise_or": "|", "bitwise_xor": "^"}
_UFUNC_COMPARE = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=",
                  "greater": ">", "greater_equal": ">="}


def _ufunc_name(obj):
    """The NumPy ufunc name of a callable used on scalars in a kernel:
    math functions, abs/min/max, NumPy ufuncs and gpuarr's, or None."""
    try:
        name = _MATH.get(obj)
    except TypeError:
        name = None
    if name is not None:
        return name
    if isinstance(obj, numpy.ufunc):
        return obj.__name__
    mod = type(obj).__module__ or ""
    if mod.startswith("gpuarr") and type(obj).__name__ == "ufunc":
        return getattr(obj, "__name__", None)
    if getattr(obj, "__module__", None) == "gpuarr._ufuncs" or mod == "gpuarr._ufuncs":
        return getattr(obj, "__name__", None)
    return None


def _describe_callable(obj):
    if isinstance(obj, _intrinsics.Intrinsic):
        return f"jit.{obj.name}"
    mod = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    if mod in ("builtins", ""):
        return name
    return f"{mod.split('.')[0] if mod.startswith(('numpy', 'gpuarr')) else mod}.{name}"


def _tdesc(t):
    return repr(t) if isinstance(t, Array) else str(t)


class Signature:
    """The argument types of one compilation: a tuple of dtypes and Arrays."""

    __slots__ = ("types",)

    def __init__(self, types):
        self.types = tuple(types)

    def __repr__(self):
        return "(" + ", ".join(_tdesc(t) for t in self.types) + ")"


# ========================================================== translate ====

class _Local:
    __slots__ = ("name", "cname", "type", "line", "bind", "block")

    def __init__(self, name, cname, type, line, bind, block):
        self.name, self.cname, self.type, self.line = name, cname, type, line
        self.bind = bind        # a compile-time binding (array, module, ...) or None
        self.block = block      # the block of the first assignment


class _Generated:
    """What one compilation unit collects: device functions and helpers."""

    def __init__(self):
        self.functions = []      # C source of device functions, callees first
        self.device = {}         # (func, types) -> (cname, return type); None while in progress
        self.snippets = set()


class _Function:
    """The translation of one Python function for one signature."""

    def __init__(self, func, types, gen, kernel, cname):
        self.func = func
        self.code = func.__code__
        self.types = types
        self.gen = gen
        self.kernel = kernel
        self.cname = cname
        self.ret_type = None
        self.returns_value = False
        self.ins = None
        self.globals = func.__globals__
        self.closure = {}
        if func.__closure__:
            for n, cell in zip(self.code.co_freevars, func.__closure__):
                self.closure[n] = cell
        self.locals = {}
        self.params = []          # (pyname, cname, type, _ArrayRef or None)
        self.arrays = {}
        self.shared_decls = {}

    # ------------------------------------------------------------ errors
    def error(self, msg, line=None):
        raise JitError(msg, self.func.__name__, self.code.co_filename,
                       line if line is not None else (self.ins.line if self.ins else
                                                      self.code.co_firstlineno))

    # ------------------------------------------------------------- setup
    def run(self):
        code = self.code
        flags = code.co_flags
        if flags & 0x04 or flags & 0x08:
            self.error("*args and **kwargs are not supported in jit kernels",
                       code.co_firstlineno)
        if code.co_kwonlyargcount:
            self.error("keyword-only parameters are not supported in jit kernels",
                       code.co_firstlineno)
        if flags & (0x20 | 0x80 | 0x100 | 0x200):
            self.error("generators and async functions cannot be jit kernels",
                       code.co_firstlineno)
        nargs = code.co_argcount
        if len(self.types) != nargs:
            raise TypeError(f"{self.func.__name__}() takes {nargs} argument"
                            f"{'s' if nargs != 1 else ''} but {len(self.types)} were given")
        taken = set()
        for k in range(nargs):
            pyname = code.co_varnames[k]
            cname = c_ident(pyname, taken)
            taken.add(cname)
            t = self.types[k]
            ref = None
            if isinstance(t, Array):
                ref = _ArrayRef(cname, t)
                val = V(cname, t, fixed=True, arr=ref)
                self.locals[pyname] = _Local(pyname, cname, t, code.co_firstlineno, val, 0)
            else:
                self.locals[pyname] = _Local(pyname, cname, t, code.co_firstlineno, None, 0)
            self.params.append((pyname, cname, t, ref))
        self.taken = taken
        self.nparams = nargs
        self.insns = _bytecode.normalise(code)
        # Statements whose parts are not all reached by ordinary control flow
        # (handlers in 3.11+'s exception table) are refused before anything
        # else, at their first instruction.
        for ins in self.insns:
            if ins.op == "UNSUPPORTED" and ins.arg in _bytecode.STRUCTURAL:
                self.error(f"unsupported construct: {ins.arg}", ins.line)
        if getattr(code, "co_exceptiontable", b""):
            self.error("unsupported construct: try statement", code.co_firstlineno)
        self.blocks, self.block_at = _bytecode.blocks(self.insns)
        self.in_loop = self._loops()
        return self._sweeps()

    def _loops(self):
        """The blocks that lie on a cycle of the control-flow graph."""
        result = set()
        for b in self.blocks:
            seen, todo = set(), list(b.succ)
            while todo:
                s = todo.pop()
                if s == b.index:
                    result.add(b.index)
                    break
                if s not in seen:
                    seen.add(s)
                    todo.extend(self.blocks[s].succ)
        return result

    # ------------------------------------------------------------ sweeps
    def _sweeps(self):
        params = frozenset(p[0] for p in self.params)
        state = {0: ([], params)}
        for _ in range(50):
            before = dict(state)
            self.decls = {}
            self.labels = set()
            self.unassigned = []
            self.snip = set()
            self.ntmp = 0
            incoming = {}
            out = []
            for b in self.blocks:
                if b.index not in state:
                    if b.index in incoming:
                        state[b.index] = self._merge(b.index, incoming[b.index])
                    else:
                        continue
                self.block = b
                self.entry_state = state
                code = self._block(b, state[b.index], incoming)
                out.append((b.index, code))
            new = {0: state[0]}
            for idx, edges in incoming.items():
                new[idx] = self._merge(idx, edges)
            if self._same_states(new, before):
                break
            state = new
        else:
            self.error("the types of this function did not settle (internal error)")
        if self.unassigned:
            name, line = self.unassigned[0]
            self._unassigned_error(name, line)
        self.gen.snippets |= self.snip
        return self._assemble(out)

    def _same_states(self, a, b):
        if set(a) != set(b):
            return False
        for k in a:
            (sa, aa), (sb, ab) = a[k], b[k]
            if aa != ab or len(sa) != len(sb):
                return False
            if not all(_same_value(x, y) for x, y in zip(sa, sb)):
                return False
        return True

    def _merge(self, idx, edges):
        """The entry state of block idx from its incoming (stack, assigned)."""
        assigned = frozenset.intersection(*[a for _, a in edges])
        if len(edges) == 1:              # one way in: the values pass as they are
            return list(edges[0][0]), assigned
        depth = len(edges[0][0])
        if any(len(s) != depth for s, _ in edges):
            self.error("internal error: stack depths differ at a join", self.blocks[idx].line)
        stack = []
        for k in range(depth):
            vals = [s[k] for s, _ in edges]
            first = vals[0]
            if all(_same_value(first, v) for v in vals[1:]) and not isinstance(first, V):
                stack.append(first)
                continue
            if all(isinstance(v, V) and v.expr == first.expr for v in vals) and first.fixed:
                stack.append(first)
                continue
            types = []
            for v in vals:
                if isinstance(v, V) and not isinstance(v.type, Array):
                    types.append(v.type)
                elif isinstance(v, K) and _is_number(v.value):
                    types.append(_types.scalar_of(v.value))
                else:
                    self.ins = self.blocks[idx].ins[0]
                    self.error("a value that is not a number (an array, a tuple, a function) "
                               "reaches this point along two paths (a conditional expression "
                               "or and/or); only numbers can")
            try:
                t = numpy.result_type(*types)
            except TypeError:
                t = numpy.dtype(numpy.int64) if all(x is int for x in types) else \
                    numpy.dtype(numpy.float64)
            t = _types.check_dtype(t)
            stack.append(V(f"jt_m{idx}_{k}", t))
        return stack, assigned

    # -------------------------------------------------------- emission
    def _decl(self, name, text):
        self.decls.setdefault(name, text)

    def tmp(self, t):
        name = f"jt_t{self.ntmp}"
        self.ntmp += 1
        self._decl(name, f"{_types.ctype(t)} {name};")
        return name

    def emit(self, line):
        self.lines.append(line)

    def materialize(self, v):
        if not isinstance(v, V) or isinstance(v.type, Array) or re.fullmatch(r"\w+", v.expr):
            return v
        name = self.tmp(v.type)
        self.emit(f"{name} = {v.expr};")
        return V(name, v.type)

    def flush_memory(self):
        """Copy pending array loads on the stack before memory is written."""
        self.stack[:] = [self.materialize(v) if isinstance(v, V) and v.mem else v
                         for v in self.stack]

    def flush_local(self, name):
        self.stack[:] = [self.materialize(v) if isinstance(v, V) and name in v.reads else v
                         for v in self.stack]

    def _assemble(self, out):
        body = []
        for idx, lines in out:
            if idx in self.labels:
                body.append(f"jt_L{idx}:;")
            body.extend("    " + ln for ln in lines)
        decls = []
        params = {p[0] for p in self.params}
        for loc in self.locals.values():
            if loc.bind is None and loc.name not in params:
                decls.append(f"{_types.ctype(loc.type)} {loc.cname};")
        decls.extend(self.shared_decls.values())
        decls.extend(self.decls.values())
        return decls, body

    # ------------------------------------------------------------ blocks
    def _block(self, b, entry, incoming):
        self.stack = list(entry[0])
        self.assigned = set(entry[1])
        self.lines = []
        self.incoming = incoming
        for ins in b.ins:
            self.ins = ins
            try:
                handler = getattr(self, "op_" + ins.op)
                handler(ins)
            except _Fail as exc:
                self.error(str(exc))
        last = b.ins[-1]
        if last.op not in ("JUMP", "RETURN", "BRANCH", "FOR_ITER") and b.index + 1 < len(self.blocks):
            self.lines.extend(self.edge(b.index + 1, self.stack))
        return self.lines

    def edge(self, target, stack, fallthrough=True):
        """Pass control to block ``target`` with ``stack``: assign the merge
        variables of its entry and record the incoming state."""
        stack = list(stack)
        self.incoming.setdefault(target, []).append((stack, frozenset(self.assigned)))
        lines = []
        entry = self.entry_state.get(target)
        if entry is not None:
            for k, (have, want) in enumerate(zip(stack, entry[0])):
                if isinstance(want, V) and want.expr.startswith(f"jt_m{target}_"):
                    self._decl(want.expr, f"{_types.ctype(want.type)} {want.expr};")
                    lines.append(f"{want.expr} = {self.cast(have, want.type).expr};")
        is_next = target == self.block.index + 1 and fallthrough
        if not is_next:
            self.labels.add(target)
            lines.append(f"goto jt_L{target};")
        return lines

    # ------------------------------------------------------- conversions
    def cast(self, v, t, check=None):
        """``v`` as dtype ``t``; ``check`` ('same_kind') refuses other casts."""
        if isinstance(v, K):
            val = v.value
            if not _is_number(val):
                _fail(f"{self.desc(v)} is not a number")
            if check and isinstance(val, (complex, numpy.complexfloating)) and t.kind != "c":
                _fail(f"cannot store the complex constant {val!r} as {t}")
            if check and isinstance(val, (float, numpy.floating)) and t.kind in "biu":
                _fail(f"cannot store the float constant {val!r} as {t}: cast it explicitly "
                      f"(int(...))")
            try:
                return V(_types.literal(val, t), t)
            except OverflowError as exc:
                _fail(str(exc))
        if not isinstance(v, V) or isinstance(v.type, Array):
            _fail(f"{self.desc(v)} is not a number")
        if v.type == t:
            return v
        if check and not _types.same_kind(v.type, t):
            _fail(f"cannot store a {v.type} value as {t} (NumPy's same_kind rule); cast it "
                  f"explicitly, e.g. {t.name}(...)")
        return V(self.convert(v, t), t, v.mem, v.reads)

    def convert(self, v, t):
        src = v.type
        if t.kind == "b":
            return self.truth(v).expr
        if src.kind == "c" and t.kind == "c":
            part = _types.ctype(numpy.dtype(numpy.float32 if t.itemsize == 8 else numpy.float64))
            return f"{_types.ctype(t)}(({part}){v.expr}.re, ({part}){v.expr}.im)"
        if src.kind == "c":
            return f"(({_types.ctype(t)}){v.expr}.re)"
        if t.kind == "c":
            self.snip.add("complex")
            part = "float" if t.itemsize == 8 else "double"
            return f"{_types.ctype(t)}(({part}){v.expr})"
        return f"(({_types.ctype(t)}){v.expr})"

    def truth(self, v):
        if isinstance(v, K):
            return K(bool(v.value)) if _is_number(v.value) or v.value is None else _fail(
                f"{self.desc(v)} has no truth value in a kernel")
        if not isinstance(v, V) or isinstance(v.type, Array):
            _fail(f"the truth value of {self.desc(v)} is ambiguous in a kernel (use an element "
                  f"or a comparison)")
        t = v.type
        if t.kind == "b":
            return v
        if t.kind == "c":
            return V(f"jt_truth({v.expr})", numpy.dtype(bool), v.mem, v.reads)
        return V(f"({v.expr} != 0)", numpy.dtype(bool), v.mem, v.reads)

    def desc(self, v):
        if isinstance(v, V):
            return f"a {_tdesc(v.type)}" if isinstance(v.type, Array) else f"a {v.type} value"
        if isinstance(v, K):
            if isinstance(v.value, type(math)):
                return f"the module {v.value.__name__}"
            if callable(v.value):
                return _describe_callable(v.value)
            return repr(v.value)
        if isinstance(v, Tup):
            return "a tuple"
        if isinstance(v, (RangeV, RangeIter)):
            return "a range"
        return "a value"

    def scalar(self, v, what):
        if isinstance(v, K) and _is_number(v.value):
            return v
        if isinstance(v, V) and not isinstance(v.type, Array):
            return v
        if isinstance(v, V):
            _fail(f"{what} on a whole array is not supported in a kernel; index it "
                  f"(x[i]) and work on elements")
        _fail(f"{what} is not defined for {self.desc(v)}")

    def _dt(self, v):
        return _types.scalar_of(v.value) if isinstance(v, K) else v.type

    def resolve(self, ufunc, vals, what):
        ins = tuple(self._dt(v) for v in vals)
        try:
            dts = ufunc.resolve_dtypes(ins + (None,) * ufunc.nout)
        except Exception as exc:
            names = " and ".join(str(d.__name__ if isinstance(d, type) else d) for d in ins)
            _fail(f"{what} is not defined for {names} ({str(exc).splitlines()[0]})")
        for d in dts:
            if d.kind not in "biufc" or d.itemsize > 16 or d.char in "egG":
                _fail(f"{what} of {', '.join(str(x) for x in ins)} gives {d}, which jit "
                      f"kernels do not support")
        return dts

    # ---------------------------------------------------------- operators
    def binop(self, sym, a, b):
        if isinstance(a, K) and isinstance(b, K) and _is_number(a.value) and _is_number(b.value):
            try:
                return K(_PYOPS[sym](a.value, b.value))
            except Exception as exc:
                _fail(f"{a.value!r} {sym} {b.value!r}: {exc}")
        if sym == "@":
            _fail("the @ operator (matrix product) is not supported in kernels")
        a = self.scalar(a, f"the operator {sym}")
        b = self.scalar(b, f"the operator {sym}")
        ufunc = _BINOPS[sym] if sym in _BINOPS else _COMPARE[sym]
        in1, in2, out = self.resolve(ufunc, (a, b), f"the operator {sym}")
        x, y = self.cast(a, in1), self.cast(b, in2)
        mem, reads = x.mem or y.mem, x.reads | y.reads
        if sym in _COMPARE:
            return V(self.compare_expr(sym, x, y), out, mem, reads)
        return V(self.arith_expr(sym, x, y, out), out, mem, reads)

    def compare_expr(self, sym, x, y):
        if x.type.kind == "c" and sym not in ("==", "!="):
            _fail(f"complex numbers cannot be ordered ({sym})")
        if x.type != y.type:   # int64 against uint64: NumPy compares exactly
            neg_first = x.type.kind == "i"
            s, u = (x, y) if neg_first else (y, x)
            when_neg = {"<": neg_first, "<=": neg_first, ">": not neg_first,
                        ">=": not neg_first, "==": False, "!=": True}[sym]
            xs = f"(unsigned long long){x.expr}" if neg_first else x.expr
            ys = y.expr if neg_first else f"(unsigned long long){y.expr}"
            return f"({s.expr} < 0 ? {'true' if when_neg else 'false'} : ({xs} {sym} {ys}))"
        return f"({x.expr} {sym} {y.expr})"

    def arith_expr(self, sym, x, y, out):
        c = _types.ctype(out)
        k = out.kind
        if k == "c":
            self.snip.add("complex")
            if sym in "+-*/":
                return f"({x.expr} {sym} {y.expr})"
            _fail(f"the operator {sym} on complex numbers is not supported in kernels")
        if sym in ("+", "*") and k == "b":
            return f"({x.expr} {'||' if sym == '+' else '&&'} {y.expr})"
        if sym in ("+", "-", "*", "/"):
            if k in "iu" and out.itemsize < 4:
                return f"(({c})({x.expr} {sym} {y.expr}))"
            return f"({x.expr} {sym} {y.expr})"
        if sym == "**" and k == "f":
            return f"{'powf' if out.itemsize == 4 else 'pow'}({x.expr}, {y.expr})"
        if sym in _FUNCTOR_OPS:
            return self.functor(_FUNCTOR_OPS[sym], out, x.expr, y.expr)
        if sym in ("&", "|", "^"):
            return f"(({c})({x.expr} {sym} {y.expr}))"
        _fail(f"the operator {sym} is not supported")

    def functor(self, op, out, *args):
        """NumPy's ``op`` on the C expressions ``args`` (of dtype ``out``) by
        gpuarr's functor ``op_<op>`` from ufunc_ops.cuh, called on the
        header's element type, and back to jit's C type where the names
        differ (64-bit integers)."""
        self.snip.add("ufunc_ops")
        h = _types.header_ctype(out)
        call = f"op_{op}()({', '.join(f'({h})({a})' for a in args)})"
        return f"(({_types.ctype(out)}){call})" if out.kind in "iu" and out.itemsize == 8 \
            else call

    def unary(self, sym, a):
        if sym == "not":
            t = self.truth(a)
            if isinstance(t, K):
                return K(not t.value)
            return V(f"(!{t.expr})", t.type, t.mem, t.reads)
        if isinstance(a, K) and _is_number(a.value):
            try:
                return K({"-": operator.neg, "+": operator.pos, "~": operator.invert}[sym](a.value))
            except Exception as exc:
                _fail(f"{sym}{a.value!r}: {exc}")
        a = self.scalar(a, f"the operator {sym}")
        ufunc = {"-": numpy.negative, "+": numpy.positive, "~": numpy.invert}[sym]
        t_in, out = self.resolve(ufunc, (a,), f"the operator {sym}")
        x = self.cast(a, t_in)
        c = _types.ctype(out)
        if sym == "+":
            return x
        if sym == "~" and out.kind == "b":
            return V(f"(!{x.expr})", out, x.mem, x.reads)
        if out.kind == "c":
            self.snip.add("complex")
            return V(f"(-{x.expr})", out, x.mem, x.reads)
        return V(f"(({c})({sym}{x.expr}))", out, x.mem, x.reads)

    # ----------------------------------------------------------- indexing
    def index(self, arr, idx):
        """The element ``arr[idx]`` as an lvalue V."""
        t = arr.type
        items = idx.items if isinstance(idx, Tup) else [idx]
        if t.ndim == 0 and isinstance(idx, Tup) and not items:
            return V(f"{arr.expr}[0]", t.dtype, True, arr.reads)
        if len(items) != t.ndim:
            if len(items) < t.ndim:
                _fail(f"{t.ndim}-d array indexed with {len(items)} index"
                      f"{'es' if len(items) != 1 else ''}: index every axis "
                      f"(x[{', '.join('ijk'[:t.ndim]) if t.ndim <= 3 else 'i, j, ...'}]); "
                      f"views of arrays are not supported in kernels")
            _fail(f"too many indices for a {t.ndim}-d array")
        parts = []
        reads = set(arr.reads)
        for k, it in enumerate(items):
            if isinstance(it, K):
                if isinstance(it.value, (bool, numpy.bool_)) or not isinstance(
                        it.value, (int, numpy.integer)):
                    if isinstance(it.value, slice) or it.value is None or it.value is Ellipsis:
                        _fail("slicing is not supported in kernels: index single elements")
                    _fail(f"array index must be an integer, got {it.value!r}")
                if it.value < 0:
                    _fail(f"negative index {it.value}: jit kernels do not wrap negative "
                          f"indices (CuPy's JIT neither); write x[n - 1]")
                parts.append(_types.literal(it.value, numpy.int64))
            elif isinstance(it, V) and not isinstance(it.type, Array):
                if it.type.kind not in "iu":
                    _fail(f"array index must be an integer, got a {it.type} value")
                parts.append(it.expr)
                reads |= it.reads
            else:
                _fail(f"array index must be an integer, got {self.desc(it)}")
        elem = _types.ctype(t.dtype)
        ref = arr.arr
        if t.ndim == 1 and t.contiguous:
            return V(f"{arr.expr}[{parts[0]}]", t.dtype, True, frozenset(reads))
        if t.contiguous:
            off = f"(long long){parts[0]}"
            for k in range(1, t.ndim):
                n = ref.meta("shape", k)
                off = f"({off} * {n.expr if isinstance(n, V) else n.value} + {parts[k]})"
            return V(f"{arr.expr}[{off}]", t.dtype, True, frozenset(reads))
        terms = " + ".join(f"(long long){p} * {ref.meta('stride', k).expr}"
                           for k, p in enumerate(parts))
        return V(f"(*({elem} *)((char *){arr.expr} + {terms}))", t.dtype, True,
                 frozenset(reads))

    def array_of(self, v, what):
        if isinstance(v, V) and isinstance(v.type, Array):
            return v
        _fail(f"{what} needs an array, got {self.desc(v)}")

    # ------------------------------------------------------------- opcodes
    def op_NOP(self, ins):
        pass

    def op_END_FOR(self, ins):
        pass

    def op_UNSUPPORTED(self, ins):
        _fail(f"unsupported construct: {ins.arg}")

    def op_LOAD_CONST(self, ins):
        self.stack.append(K(ins.arg))

    def op_LOAD_FAST(self, ins):
        name = ins.arg
        loc = self.locals.get(name)
        if loc is None:
            stores = [i for i in self.insns if i.op == "STORE_FAST" and i.arg == name]
            if stores:
                _fail(f"local '{name}' is used before its first assignment (line "
                      f"{stores[0].line}); its type comes from its first assignment, so "
                      f"assign it before this point (before the loop)")
            _fail(f"local '{name}' is used but never assigned")
        if name not in self.assigned:
            self.unassigned.append((name, ins.line))
        if loc.bind is not None:
            self.stack.append(loc.bind)
        else:
            self.stack.append(V(loc.cname, loc.type, reads=frozenset((name,))))

    def _unassigned_error(self, name, line):
        loc = self.locals[name]
        where = "inside a loop" if loc.block in self.in_loop else "inside an if branch"
        self.error(f"local '{name}' may be used before it is assigned: it is first assigned "
                   f"{where} (line {loc.line}); assign it before the "
                   f"{'loop' if 'loop' in where else 'if'} (its type comes from its first "
                   f"assignment)", line)

    def op_STORE_FAST(self, ins):
        name = ins.arg
        v = self.stack.pop()
        loc = self.locals.get(name)
        is_value = (isinstance(v, K) and _is_number(v.value)) or (
            isinstance(v, V) and not isinstance(v.type, Array))
        if loc is None:
            if is_value:
                t = _types.python_type(v.value) if isinstance(v, K) else v.type
                t = _types.check_dtype(t)
                loc = _Local(name, c_ident(name, self.taken), t, ins.line, None,
                             self.block.index)
                self.taken.add(loc.cname)
            else:
                self._check_bindable(name, v)
                loc = _Local(name, None, None, ins.line, v, self.block.index)
            self.locals[name] = loc
        self.assigned.add(name)
        if loc.bind is not None:
            if not _same_value(loc.bind, v):
                _fail(f"local '{name}' holds {self.desc(loc.bind)} (line {loc.line}); it "
                      f"cannot be given another value here ({self.desc(v)})")
            return
        if not is_value:
            _fail(f"local '{name}' is a {loc.type} variable (its first assignment, line "
                  f"{loc.line}); it cannot hold {self.desc(v)}")
        try:
            val = self.cast(v, loc.type, check="same_kind")
        except _Fail as exc:
            _fail(f"local '{name}' is {loc.type} (from its first assignment, line {loc.line}); "
                  f"{exc}. Make the first assignment {self._dt(v)} or cast here")
        self.flush_local(name)
        if val.expr != loc.cname:
            self.emit(f"{loc.cname} = {val.expr};")

    def _check_bindable(self, name, v):
        if isinstance(v, Tup):
            for it in v.items:
                if not (isinstance(it, K) or (isinstance(it, V) and it.fixed)):
                    _fail(f"a tuple of values cannot be kept in the local '{name}'; unpack it "
                          f"(a, b = ...)")
        elif isinstance(v, (RangeV, RangeIter, Bound)) or v is NULL:
            _fail(f"{self.desc(v)} cannot be kept in the local '{name}'")

    def op_LOAD_GLOBAL(self, ins):
        name = ins.arg
        if name in self.globals:
            value = self.globals[name]
        elif hasattr(builtins, name):
            value = getattr(builtins, name)
        else:
            _fail(f"name '{name}' is not defined")
        self.stack.append(self.const(value, f"the global '{name}'"))

    def op_LOAD_DEREF(self, ins):
        cell = self.closure.get(ins.arg)
        if cell is None:
            _fail(f"the variable '{ins.arg}' of an enclosing function cannot be used here")
        try:
            value = cell.cell_contents
        except ValueError:
            _fail(f"free variable '{ins.arg}' is not assigned yet")
        self.stack.append(self.const(value, f"the variable '{ins.arg}'"))

    def const(self, value, what):
        if _is_array_object(value):
            _fail(f"{what} is an array; a kernel cannot capture arrays: pass it as an argument")
        if isinstance(value, _intrinsics.WarpSize):
            return V("warpSize", numpy.dtype(numpy.int32), fixed=True)
        return K(value)

    def op_PUSH_NULL(self, ins):
        self.stack.append(NULL)

    def op_POP_TOP(self, ins):
        self.stack.pop()

    def op_COPY(self, ins):
        self.stack.append(self.stack[-ins.arg])

    def op_SWAP(self, ins):
        s = self.stack
        s[-1], s[-ins.arg] = s[-ins.arg], s[-1]

    def op_ROT(self, ins):
        top = self.stack.pop()
        self.stack.insert(len(self.stack) - (ins.arg - 1), top)

    def op_BINOP(self, ins):
        b = self.stack.pop()
        a = self.stack.pop()
        self.stack.append(self.binop(ins.arg, a, b))

    def op_COMPARE(self, ins):
        b = self.stack.pop()
        a = self.stack.pop()
        self.stack.append(self.binop(ins.arg, a, b))

    def op_IS(self, ins):
        b = self.stack.pop()
        a = self.stack.pop()
        if isinstance(a, K) and isinstance(b, K):
            r = a.value is b.value
        elif (isinstance(a, K) and a.value is None) or (isinstance(b, K) and b.value is None):
            r = False
        else:
            _fail("'is' compares only with None in kernels; use ==")
        self.stack.append(K(r != ins.arg))

    def op_UNARY(self, ins):
        self.stack.append(self.unary(ins.arg, self.stack.pop()))

    def op_TO_BOOL(self, ins):
        pass

    def op_BUILD_TUPLE(self, ins):
        n = ins.arg
        items = self.stack[len(self.stack) - n:] if n else []
        del self.stack[len(self.stack) - n:]
        if all(isinstance(i, K) for i in items):
            self.stack.append(K(tuple(i.value for i in items)))
        else:
            self.stack.append(Tup(items))

    def op_UNPACK(self, ins):
        v = self.stack.pop()
        if isinstance(v, K) and isinstance(v.value, tuple):
            items = [K(x) for x in v.value]
        elif isinstance(v, Tup):
            items = v.items
        else:
            _fail(f"cannot unpack {self.desc(v)}")
        if len(items) != ins.arg:
            _fail(f"cannot unpack {len(items)} values into {ins.arg}")
        self.stack.extend(reversed(items))

    def op_SUBSCR(self, ins):
        idx = self.stack.pop()
        obj = self.stack.pop()
        if isinstance(obj, K) and isinstance(idx, K):
            try:
                self.stack.append(self.const(obj.value[idx.value], "the item"))
            except Exception as exc:
                _fail(f"{self.desc(obj)}[{idx.value!r}]: {exc}")
            return
        if isinstance(obj, Tup):
            if not (isinstance(idx, K) and isinstance(idx.value, int)):
                _fail("a tuple can be indexed only with a constant integer")
            try:
                self.stack.append(obj.items[idx.value])
            except IndexError:
                _fail(f"tuple index {idx.value} out of range")
            return
        arr = self.array_of(obj, "indexing")
        self.stack.append(self.index(arr, self.key(idx)))

    def key(self, idx):
        if isinstance(idx, K) and isinstance(idx.value, tuple):
            return Tup([K(x) for x in idx.value])
        return idx

    def op_STORE_SUBSCR(self, ins):
        idx = self.stack.pop()
        obj = self.stack.pop()
        val = self.stack.pop()
        if not isinstance(obj, V) or not isinstance(obj.type, Array):
            _fail(f"cannot assign to an item of {self.desc(obj)}")
        ref = self.index(obj, self.key(idx))
        v = self.cast(self.scalar(val, "assignment"), ref.type, check="same_kind")
        self.flush_memory()
        self.emit(f"{ref.expr} = {v.expr};")

    def op_LOAD_ATTR(self, ins):
        self.stack.append(self.attr(self.stack.pop(), ins.arg))

    def op_LOAD_METHOD(self, ins):
        obj = self.stack.pop()
        value = self.attr(obj, ins.arg, method=True)
        self.stack.append(NULL)
        self.stack.append(value)

    def attr(self, obj, name, method=False):
        if isinstance(obj, K):
            value = obj.value
            if isinstance(value, _intrinsics.Dim3):
                if name not in ("x", "y", "z"):
                    _fail(f"jit.{value.cname} has x, y and z, not '{name}'")
                return V(f"{value.cname}.{name}", numpy.dtype(numpy.uint32), fixed=True)
            try:
                return self.const(getattr(value, name), f"'{name}'")
            except AttributeError:
                _fail(f"{self.desc(obj)} has no attribute '{name}'")
        if isinstance(obj, V) and isinstance(obj.type, Array):
            t, ref = obj.type, obj.arr
            if name == "ndim":
                return K(t.ndim)
            if name == "dtype":
                return K(t.dtype)
            if name == "shape":
                return Tup([ref.meta("shape", k) for k in range(t.ndim)])
            if name == "strides":
                if t.space == "shared":
                    return K((t.dtype.itemsize,))
                return Tup([ref.meta("stride", k) for k in range(t.ndim)])
            if name == "size":
                if t.ndim == 0:
                    return K(1)
                dims = [ref.meta("shape", k) for k in range(t.ndim)]
                if all(isinstance(d, K) for d in dims):
                    return K(int(numpy.prod([d.value for d in dims])))
                return V("(" + " * ".join(d.expr for d in dims) + ")",
                         numpy.dtype(numpy.int64), fixed=True)
            _fail(f"arrays in kernels have shape, size, ndim, dtype and strides, not '{name}'")
        if isinstance(obj, V):
            if name == "real":
                return self.call_ufunc("real", [obj])
            if name == "imag":
                return self.call_ufunc("imag", [obj])
            if name in ("conjugate", "conj") and method:
                return Bound(obj, "conjugate")
            _fail(f"{self.desc(obj)} has no attribute '{name}' in a kernel")
        _fail(f"{self.desc(obj)} has no attribute '{name}'")

    # ---------------------------------------------------------------- calls
    def op_CALL(self, ins):
        argc, kwnames, names_on_stack, slots = ins.arg
        if names_on_stack:
            names = self.stack.pop()
            kwnames = names.value if isinstance(names, K) else ()
        args = self.stack[len(self.stack) - argc:] if argc else []
        del self.stack[len(self.stack) - argc:]
        under = [self.stack.pop() for _ in range(slots)]
        callee = [u for u in under if u is not NULL]
        if len(callee) != 1:
            _fail("unsupported call")
        fn = callee[0]
        nkw = len(kwnames)
        pos, kw = args[:argc - nkw], dict(zip(kwnames, args[argc - nkw:]))
        result = self.call(fn, pos, kw)
        self.stack.append(result)

    def call(self, fn, args, kw):
        if isinstance(fn, Bound):
            return self.call_ufunc("conjugate", [fn.obj])
        if not isinstance(fn, K):
            _fail(f"{self.desc(fn)} is not callable")
        f = fn.value
        what = _describe_callable(f)
        if isinstance(f, _intrinsics.Intrinsic):
            return self.intrinsic(f, args, kw)
        if getattr(f, "_gpuarr_jit", None) is not None:
            return self.call_device(f, args, kw)
        if kw and not (f is _intrinsics.syncwarp):
            _fail(f"keyword arguments are not supported when calling {what} in a kernel")
        if f is range:
            if not 1 <= len(args) <= 3:
                _fail(f"range expected 1 to 3 arguments, got {len(args)}")
            return RangeV(args)
        if f is len:
            arr = self.array_of(args[0] if args else None, "len()")
            if arr.type.ndim == 0:
                _fail("len() of a 0-d array")
            return arr.arr.meta("shape", 0)
        if f in (float, int, bool, complex) or (isinstance(f, type) and issubclass(
                f, numpy.generic)) or isinstance(f, numpy.dtype):
            return self.cast_call(f, args)
        name = _ufunc_name(f)
        if name is not None and name in _UFUNC_NAMES | _NOT_UFUNCS:
            if all(isinstance(a, K) and _is_number(a.value) for a in args) and args:
                try:
                    return K(f(*[a.value for a in args]))
                except Exception as exc:
                    _fail(f"{what}{tuple(a.value for a in args)!r}: {exc}")
            if f in (builtins.min, builtins.max):
                if len(args) < 2:
                    _fail(f"{what}() in a kernel takes two or more numbers")
                out = args[0]
                for a in args[1:]:
                    out = self.call_ufunc(name, [out, a])
                return out
            return self.call_ufunc(name, args)
        if f in (print,):
            _fail("print() is not supported in jit kernels")
        _fail(f"cannot call {what} in a kernel (kernels can call jit.* functions, math "
              f"functions, gpuarr/NumPy ufuncs on numbers, range, len, abs, min, max, "
              f"number types, and @jit.rawkernel(device=True) functions)")

    def cast_call(self, f, args):
        if len(args) != 1:
            _fail(f"{_describe_callable(f)}() takes one argument in a kernel")
        a = args[0]
        if isinstance(f, numpy.dtype):
            dt = f
        elif f in (float, int, bool, complex):
            dt = numpy.dtype({float: numpy.float64, int: numpy.int64, bool: numpy.bool_,
                              complex: numpy.complex128}[f])
        else:
            dt = numpy.dtype(f)
        try:
            dt = _types.check_dtype(dt)
        except TypeError as exc:
            _fail(str(exc))
        if isinstance(a, K) and _is_number(a.value):
            try:
                return K(dt.type(a.value)) if f not in (float, int, bool, complex) else K(f(a.value))
            except Exception as exc:
                _fail(str(exc))
        a = self.scalar(a, _describe_callable(f))
        if a.type.kind == "c" and dt.kind != "c" and dt.kind != "b":
            _fail(f"cannot convert a complex value to {dt} (take .real or abs() first)")
        return self.cast(a, dt)

    def call_ufunc(self, name, args):
        what = f"{name}()"
        nin = 2 if name in ("arctan2", "hypot", "copysign", "fmax", "fmin", "maximum",
                            "minimum", "fmod", "power", "logical_and", "logical_or",
                            "logical_xor") or name in _UFUNC_BINOP or name in _UFUNC_COMPARE \
            else 1
        if len(args) != nin:
            _fail(f"{what} takes {nin} argument{'s' if nin > 1 else ''} in a kernel, got "
                  f"{len(args)}")
        args = [self.scalar(a, what) for a in args]
        if name in _UFUNC_BINOP:
            return self.binop(_UFUNC_BINOP[name], *args)
        if name in _UFUNC_COMPARE:
            return self.binop(_UFUNC_COMPARE[name], *args)
        if name in ("real", "imag"):          # attributes, not ufuncs
            x = args[0] if isinstance(args[0], V) else self.cast(
                args[0], _types.check_dtype(_types.python_type(args[0].value)))
            if x.type.kind != "c":
                return x if name == "real" else V(_types.literal(0, x.type), x.type)
            part = numpy.dtype(numpy.float32 if x.type.itemsize == 8 else numpy.float64)
            return V(f"{x.expr}.{name[:2]}", part, x.mem, x.reads)
        ufunc = getattr(numpy, "sqrt" if name in _NOT_UFUNCS else name)
        dts = self.resolve(ufunc, args, what)
        xs = [self.cast(a, d) for a, d in zip(args, dts[:nin])]
        out = dts[nin]
        mem = any(x.mem for x in xs)
        reads = frozenset().union(*[x.reads for x in xs])
        e = [x.expr for x in xs]
        k = xs[0].type.kind
        c = _types.ctype(out)
        if k == "c" and name not in ("absolute", "conjugate", "conj", "real", "imag",
                                     "negative", "positive", "square", "isnan", "isinf",
                                     "isfinite"):
            _fail(f"{what} on complex numbers is not supported in kernels")
        self.snip.add("complex") if k == "c" else None
        if name in ("floor", "ceil", "trunc") and k in "biu":
            expr = e[0]                       # NumPy: integers stay as they are
        elif name in ("fmax", "fmin") and k in "biu":
            expr = self.functor(name, out, *e)
        elif name in _FLOAT_FUNCS:
            fn = _FLOAT_FUNCS[name][0 if out.itemsize == 4 else 1]
            expr = f"{fn}({', '.join(e)})"
        elif name in _PREDICATES:
            if k in "biu":
                expr = {"isnan": "false", "isinf": "false", "isfinite": "true",
                        "signbit": f"({e[0]} < 0)"}[name]
            elif k == "c":
                if name == "isfinite":
                    expr = f"(isfinite({e[0]}.re) && isfinite({e[0]}.im))"
                else:
                    expr = f"({name}({e[0]}.re) || {name}({e[0]}.im))"
            else:
                expr = f"{name}({e[0]})"
        elif name == "absolute":
            if k == "c":
                expr = f"jt_abs({e[0]})"
            elif k == "f":
                expr = f"{'fabsf' if out.itemsize == 4 else 'fabs'}({e[0]})"
            elif k == "i":
                expr = self.functor("absolute", out, e[0])
            else:
                expr = e[0]
        elif name in ("negative", "positive", "invert", "logical_not"):
            return self.unary({"negative": "-", "positive": "+", "invert": "~",
                               "logical_not": "not"}[name], args[0])
        elif name == "square":
            expr = f"(({c})({e[0]} * {e[0]}))" if k in "iu" and out.itemsize < 4 else \
                f"({e[0]} * {e[0]})"
        elif name == "sign":
            if k == "b":
                _fail("sign() of a bool")
            expr = self.functor("sign", out, e[0])
        elif name in ("maximum", "minimum"):
            if k == "c":
                _fail(f"{what} of complex numbers is not supported in kernels")
            expr = self.functor(name, out, *e)
        elif name == "fmod":
            if k == "f":
                expr = f"{'fmodf' if out.itemsize == 4 else 'fmod'}({e[0]}, {e[1]})"
            else:
                expr = self.functor("fmod", out, *e)
        elif name == "power":
            return self.binop("**", *args)
        elif name in ("logical_and", "logical_or", "logical_xor"):
            ta, tb = self.truth(xs[0]).expr, self.truth(xs[1]).expr
            op = {"logical_and": "&&", "logical_or": "||", "logical_xor": "!="}[name]
            expr = f"({ta} {op} {tb})"
        elif name in ("conjugate", "conj"):
            expr = f"jt_conj({e[0]})" if k == "c" else e[0]
        elif name == "real":
            expr = f"{e[0]}.re" if k == "c" else e[0]
        elif name == "imag":
            expr = f"{e[0]}.im" if k == "c" else _types.literal(0, out)
        else:
            _fail(f"{what} is not supported in kernels")
        return V(expr, out, mem, reads)

    # ------------------------------------------------------------ intrinsics
    def intrinsic(self, f, args, kw):
        name = f.name
        if name in _intrinsics.ATOMICS:
            return self.atomic(name, args, kw)
        if kw and name not in ("syncwarp",):
            _fail(f"jit.{name}() takes no keyword arguments")
        if name in ("grid", "gridsize"):
            if len(args) != 1 or not isinstance(args[0], K) or args[0].value not in (1, 2, 3):
                _fail(f"jit.{name}(ndim) needs ndim = 1, 2 or 3 written as a constant")
            u32 = numpy.dtype(numpy.uint32)
            if name == "grid":
                items = [V(f"(blockIdx.{a} * blockDim.{a} + threadIdx.{a})", u32, fixed=True)
                         for a in "xyz"[:args[0].value]]
            else:
                items = [V(f"(blockDim.{a} * gridDim.{a})", u32, fixed=True)
                         for a in "xyz"[:args[0].value]]
            return items[0] if args[0].value == 1 else Tup(items)
        if name == "syncthreads":
            if args:
                _fail("jit.syncthreads() takes no arguments")
            self.flush_memory()
            self.emit("__syncthreads();")
            return K(None)
        if name == "syncwarp":
            mask = kw.pop("mask", args[0] if args else K(0xFFFFFFFF))
            if kw or len(args) > 1:
                _fail("jit.syncwarp() takes one argument, mask")
            m = self.cast(self.scalar(mask, "syncwarp's mask"), numpy.dtype(numpy.uint32))
            self.flush_memory()
            self.emit(f"__syncwarp({m.expr});")
            return K(None)
        if name == "laneid":
            if args:
                _fail("jit.laneid() takes no arguments")
            return V("(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)"
                     " & 31u)", numpy.dtype(numpy.uint32), fixed=True)
        if name == "shared_memory":
            return self.shared(args)
        _fail(f"jit.{name} is not supported")

    def shared(self, args):
        if len(args) != 2:
            _fail("jit.shared_memory(dtype, size) takes two arguments")
        dt, size = args
        if not isinstance(dt, K):
            _fail("jit.shared_memory: the dtype must be known when compiling (a type such "
                  "as numpy.int32)")
        try:
            dtype = _types.check_dtype(dt.value)
        except TypeError as exc:
            _fail(f"jit.shared_memory: {exc}")
        elem = _types.ctype(dtype)
        if dtype.kind == "c":
            self.snip.add("complex")
        name = f"jt_shared{self.ins.offset}"
        if isinstance(size, K) and size.value is None:
            self.shared_decls.setdefault(
                "jt_dynamic_shared", "extern __shared__ __align__(16) unsigned char "
                "jt_dynamic_shared[];")
            t = Array(dtype, 1, True, "shared", None)
            ref = _ArrayRef(name, t)
            return V(f"(({elem} *)jt_dynamic_shared)", t, fixed=True, arr=ref)
        if not (isinstance(size, K) and isinstance(size.value, (int, numpy.integer))
                and not isinstance(size.value, bool)) or size.value <= 0:
            _fail("jit.shared_memory: the size must be a positive integer known when compiling "
                  "(a literal or a global), or None for dynamic shared memory")
        n = int(size.value)
        self.shared_decls.setdefault(name, f"__shared__ {elem} {name}[{n}];")
        t = Array(dtype, 1, True, "shared", n)
        ref = _ArrayRef(name, t, shape=(n,))
        return V(name, t, fixed=True, arr=ref)

    # CUDA's atomics by (operation, element size/kind): the C type the call
    # is made in.  Other dtypes are refused with the list of these.
    _ATOMIC_TYPES = {
        "atomic_add": {"i": "int", "I": "unsigned int", "Q": "unsigned long long",
                       "q": "unsigned long long", "f": "float", "d": "double"},
        "atomic_sub": {"i": "int", "I": "unsigned int"},
        "atomic_exch": {"i": "int", "I": "unsigned int", "Q": "unsigned long long",
                        "q": "unsigned long long", "f": "float"},
        "atomic_min": {"i": "int", "I": "unsigned int", "q": "long long",
                       "Q": "unsigned long long"},
        "atomic_max": {"i": "int", "I": "unsigned int", "q": "long long",
                       "Q": "unsigned long long"},
        "atomic_inc": {"I": "unsigned int"},
        "atomic_dec": {"I": "unsigned int"},
        "atomic_cas": {"i": "int", "I": "unsigned int", "Q": "unsigned long long",
                       "q": "unsigned long long", "H": "unsigned short"},
        "atomic_and": {"i": "int", "I": "unsigned int", "Q": "unsigned long long",
                       "q": "unsigned long long"},
        "atomic_or": {"i": "int", "I": "unsigned int", "Q": "unsigned long long",
                      "q": "unsigned long long"},
        "atomic_xor": {"i": "int", "I": "unsigned int", "Q": "unsigned long long",
                       "q": "unsigned long long"},
    }

    def atomic(self, name, args, kw):
        n = 4 if name == "atomic_cas" else 3
        if kw or len(args) != n:
            _fail(f"jit.{name} takes {n} arguments: (array, index"
                  f"{', compare' if n == 4 else ''}, value)")
        arr = self.array_of(args[0], f"jit.{name}")
        ref = self.index(arr, self.key(args[1]))
        dt = ref.type
        char = {"l": "q", "L": "Q"}.get(dt.char, dt.char)
        table = self._ATOMIC_TYPES[name]
        if char not in table:
            ok = ", ".join(str(numpy.dtype(c)) for c in table)
            _fail(f"jit.{name} does not support {dt} arrays (it supports {ok})")
        vals = [self.cast(self.scalar(v, f"jit.{name}"), dt, check="same_kind")
                for v in args[2:]]
        ct = table[char]
        cuda = _intrinsics.ATOMICS[name]
        self.flush_memory()
        elem = _types.ctype(dt)
        ptr = f"&{ref.expr}" if ct == elem else f"({ct} *)&{ref.expr}"
        vs = ", ".join(v.expr if ct == elem else f"({ct}){v.expr}" for v in vals)
        out = self.tmp(dt)
        call = f"{cuda}({ptr}, {vs})"
        self.emit(f"{out} = {call if ct == elem else f'({elem}){call}'};")
        return V(out, dt)

    # -------------------------------------------------------- device calls
    def call_device(self, f, args, kw):
        jk = f._gpuarr_jit
        if not jk._device:
            _fail(f"{f.__name__} is a kernel; a kernel can call only functions decorated "
                  f"with @jit.rawkernel(device=True)")
        if kw:
            _fail(f"keyword arguments are not supported when calling {f.__name__}")
        types, cargs = [], []
        for a in args:
            if isinstance(a, K) and _is_number(a.value):
                t = _types.check_dtype(_types.python_type(a.value))
                types.append(t)
                cargs.append(self.cast(a, t).expr)
            elif isinstance(a, V) and not isinstance(a.type, Array):
                types.append(a.type)
                cargs.append(a.expr)
            elif isinstance(a, V):
                t = a.type
                full = Array(t.dtype, t.ndim, t.contiguous)
                types.append(full)
                cargs.append(a.expr)
                for what in ("shape", "stride"):
                    for k in range(t.ndim):
                        if what == "stride" and t.space == "shared":
                            cargs.append(_types.literal(t.dtype.itemsize, numpy.int64))
                            continue
                        m = a.arr.meta(what, k)
                        cargs.append(m.expr if isinstance(m, V) else _types.literal(
                            m.value, numpy.int64))
            else:
                _fail(f"{f.__name__}() cannot take {self.desc(a)} as an argument")
        cname, ret = device_function(jk._func, tuple(types), self.gen)
        self.flush_memory()
        call = f"{cname}({', '.join(cargs)})"
        if ret is None:
            self.emit(f"{call};")
            return K(None)
        out = self.tmp(ret)
        self.emit(f"{out} = {call};")
        return V(out, ret)

    # ------------------------------------------------------------- loops
    def op_GET_ITER(self, ins):
        r = self.stack.pop()
        if not isinstance(r, RangeV):
            _fail(f"for loops in kernels iterate over range() only, not {self.desc(r)}")
        args = r.args
        start, stop, step = (K(0), args[0], K(1)) if len(args) == 1 else (
            (args[0], args[1], K(1)) if len(args) == 2 else args)
        vals = [self.scalar(v, "range()") for v in (start, stop, step)]
        for v in vals:
            if self._dt(v) not in (int,) and (isinstance(v, K) or v.type.kind not in "iu"):
                _fail(f"range() takes integers, got {self.desc(v)}")
        types = [self._dt(v) for v in vals]
        t = numpy.result_type(*types) if any(not isinstance(x, type) for x in types) else \
            numpy.dtype(numpy.int64)
        if isinstance(step, K):
            if step.value == 0:
                _fail("range() step must not be zero")
            sign = 1 if step.value > 0 else -1
        else:
            sign = 1 if vals[2].type.kind == "u" else 0
        name = f"jt_r{ins.offset}"
        c = _types.ctype(t)
        for part in ("i", "stop", "step", "v"):
            self._decl(f"{name}_{part}", f"{c} {name}_{part};")
        for part, v in zip(("i", "stop", "step"), vals):
            self.emit(f"{name}_{part} = {self.cast(v, t).expr};")
        self.stack.append(RangeIter(name, t, sign))

    def op_FOR_ITER(self, ins):
        it = self.stack[-1]
        if not isinstance(it, RangeIter):
            _fail("for loops in kernels iterate over range() only")
        n = it.name
        cond = {1: f"{n}_i < {n}_stop", -1: f"{n}_i > {n}_stop",
                0: f"({n}_step > 0 ? {n}_i < {n}_stop : {n}_i > {n}_stop)"}[it.sign]
        exit_lines = self.edge(self.block_at[ins.target], self.stack[:-1], fallthrough=False)
        self.emit(f"if (!({cond})) {{ {' '.join(exit_lines)} }}")
        c = _types.ctype(it.type)
        self.emit(f"{n}_v = {n}_i;")
        self.emit(f"{n}_i = ({c})({n}_i + {n}_step);")
        self.stack.append(V(f"{n}_v", it.type))
        self.lines.extend(self.edge(self.block.index + 1, self.stack))

    # ------------------------------------------------------------ control
    def op_JUMP(self, ins):
        self.lines.extend(self.edge(self.block_at[ins.target], self.stack, fallthrough=False))

    def op_BRANCH(self, ins):
        kind, pop = ins.arg
        v = self.stack.pop()
        rest = list(self.stack)
        on_jump = rest if pop else rest + [v]
        if kind in ("none", "not_none"):
            is_none = isinstance(v, K) and v.value is None
            cond = K(is_none if kind == "none" else not is_none)
        else:
            cond = self.truth(v)
            if kind == "false":
                cond = K(not cond.value) if isinstance(cond, K) else V(
                    f"(!{cond.expr})", cond.type)
        target = self.block_at[ins.target]
        if isinstance(cond, K):
            if cond.value:
                self.lines.extend(self.edge(target, on_jump, fallthrough=False))
            else:
                self.lines.extend(self.edge(self.block.index + 1, rest))
            return
        jump_lines = self.edge(target, on_jump, fallthrough=False)
        self.emit(f"if ({cond.expr}) {{ {' '.join(jump_lines)} }}")
        self.lines.extend(self.edge(self.block.index + 1, rest))

    def op_RETURN(self, ins):
        v = self.stack.pop()
        if isinstance(v, K) and v.value is None:
            if self.returns_value:
                _fail("this function returns a value elsewhere; every return must give one")
            self.emit("return;")
            return
        if self.kernel:
            _fail("a kernel cannot return a value; write results into an array argument")
        v = self.scalar(v, "return")
        t = self._dt(v)
        if isinstance(t, type):
            t = _types.python_type(v.value)
        if self.ret_type is None:
            self.ret_type = _types.check_dtype(t)
            self.returns_value = True
        val = self.cast(v, self.ret_type, check="same_kind")
        self.emit(f"return {val.expr};")


def _is_array_object(value):
    return hasattr(value, "__cuda_array_interface__") or isinstance(value, numpy.ndarray)


# ================================================================ entry ====

def _param_decls(fn, full=False):
    """The C parameters of a function, and the kernel's launch plan: a list
    of (argument index, None | ('shape', k) | ('stride', k))."""
    decls, plan = [], []
    for k, (pyname, cname, t, ref) in enumerate(fn.params):
        if isinstance(t, Array):
            decls.append(f"{_types.ctype(t)}{cname}")
            plan.append((k, None))
            for what in ("shape", "stride"):
                for axis in range(t.ndim):
                    if full or (what, axis) in ref.used:
                        decls.append(f"long long {cname}_{what}{axis}")
                        plan.append((k, (what, axis)))
        else:
            decls.append(f"{_types.ctype(t)} {cname}")
            plan.append((k, None))
    return decls, plan


def _body(fn):
    decls, body = fn.run()
    lines = ["{"]
    lines.extend("    " + d for d in decls)
    lines.extend(body)
    lines.append("}")
    return "\n".join(lines)


def device_function(func, types, gen):
    """Translate ``func`` as a __device__ function for ``types`` into gen;
    returns (C name, return dtype or None)."""
    key = (func, types)
    if key in gen.device:
        found = gen.device[key]
        if found is None:
            raise JitError(f"{func.__name__} calls itself; recursion is not supported in "
                           f"jit kernels")
        return found
    gen.device[key] = None
    cname = c_ident(func.__name__) + f"_dev{len(gen.device)}"
    fn = _Function(func, types, gen, kernel=False, cname=cname)
    body = _body(fn)
    params, _ = _param_decls(fn, full=True)
    ret = fn.ret_type
    head = (f"__device__ {_types.ctype(ret) if ret is not None else 'void'} "
            f"{cname}({', '.join(params)})")
    gen.functions.append(f"{head}\n{body}\n")
    gen.device[key] = (cname, ret)
    return cname, ret


_HEADER = "// generated by gpuarr.jit from {name} ({file}:{line}) for {sig}\n"


class Translation:
    """The result: ``source`` (CUDA C), ``options`` (NVRTC's: the include
    folder of gpuarr's headers when the source uses them), ``name`` (the
    kernel's C name), ``plan`` (how call arguments become kernel
    parameters) and ``locals`` (each local's type: a dtype, or what it is
    bound to)."""

    __slots__ = ("source", "options", "name", "plan", "locals")

    def __init__(self, source, options, name, plan, locals_):
        self.source, self.options, self.name = source, options, name
        self.plan, self.locals = plan, locals_


def translate(func, types):
    """Translate the kernel ``func`` for argument ``types`` (a tuple of
    dtypes and Arrays)."""
    gen = _Generated()
    name = c_ident(func.__name__)
    fn = _Function(func, tuple(types), gen, kernel=True, cname=name)
    body = _body(fn)
    params, plan = _param_decls(fn)
    parts = [_HEADER.format(name=func.__qualname__, file=func.__code__.co_filename,
                            line=func.__code__.co_firstlineno, sig=Signature(types)),
             _prelude.assemble(gen.snippets)]
    parts.extend(gen.functions)
    parts.append(f'extern "C" __global__ void {name}({", ".join(params)})\n{body}\n')
    loc = {}
    for n, l in fn.locals.items():
        if l.bind is None:
            loc[n] = l.type
        elif isinstance(l.bind, V):
            loc[n] = l.bind.type
        else:
            loc[n] = l.bind.value if isinstance(l.bind, K) else l.bind
    options = ()
    if "ufunc_ops" in gen.snippets:
        from ..cuda import compiler
        options = (f"-I{compiler.include_dir()}",)
    return Translation("".join(parts), options, name, plan, loc)

