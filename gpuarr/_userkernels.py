"""ElementwiseKernel and ReductionKernel: CuPy's user-defined kernels.

    squared_diff = gp.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                        "z = (x - y) * (x - y)", "squared_diff")
    l2norm = gp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")

The parameter language is CuPy's: ``[raw] <type> <name>`` separated by
commas, where the type is a NumPy dtype name (``float32``) or a placeholder
(``T``) that takes the dtype of the arguments passed for it.  Non-raw array
arguments broadcast together and are read (inputs) or written (outputs) at
the loop index ``i``; ``raw`` arrays are passed whole and indexed by hand
(``x[j]``, ``x.size()``, ``x.shape[k]``); scalars are passed by value,
converted to their parameter's dtype.  ``_ind.size()`` is the loop's
length.  Types in the generated C++: bool, int8_t ... uint64_t, __half
(float16), float, double, complex<float>, complex<double>.

A call's signature (dtypes and ndims of the arguments) selects a plan, made
once here and kept by the C core (src/userelementwise.c), which runs every
later call in C: broadcasting, allocating the outputs, collapsing the
layout and launching.  The source of each (signature, layout) is generated
here and compiled by NVRTC on first use; binaries are cached in memory and
on disk (gpuarr/cuda/compiler.py).

Differences from CuPy: an array passed for a parameter with a NumPy dtype
must have that dtype (CuPy raises the same way); placeholders bound only by
scalars take the scalar's type (Python int -> int64, float -> float64,
complex -> complex128, bool -> bool) where CuPy raises; arguments that
overlap outputs are not copied first (as in CuPy).
"""
import re

import numpy

from . import _core
from ._manipulation import broadcast_to
from ._raw import load
from .cuda import compiler as _compiler
from .cuda.compiler import device_arch

__all__ = ["ElementwiseKernel", "ReductionKernel"]

# roles, as src/userelementwise.c numbers them
_IN, _IN_RAW, _SCALAR, _OUT, _OUT_RAW = range(5)

_DTYPE_NAMES = {
    "bool": "bool", "bool_": "bool", "int8": "int8", "int16": "int16", "int32": "int32",
    "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
    "uint64": "uint64", "float16": "float16", "float32": "float32", "float64": "float64",
    "complex64": "complex64", "complex128": "complex128", "intp": "int64", "uintp": "uint64",
}
_C_NAMES = {"float", "double", "int", "long", "short", "char", "unsigned", "signed", "half",
            "complex"}
_CTYPE = {
    "bool": "bool", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float16": "__half", "float32": "float", "float64": "double",
    "complex64": "complex<float>", "complex128": "complex<double>",
}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PY_SCALAR_DTYPE = {bool: numpy.dtype(bool), int: numpy.dtype(numpy.int64),
                    float: numpy.dtype(numpy.float64), complex: numpy.dtype(numpy.complex128)}


def ctype(dtype):
    """The C++ type name of a dtype in generated code."""
    try:
        return _CTYPE[numpy.dtype(dtype).name]
    except KeyError:
        raise TypeError(f"user kernels have no element type for dtype {dtype}") from None


class _Param:
    __slots__ = ("name", "dtype", "placeholder", "raw", "output")

    def __init__(self, name, dtype, placeholder, raw, output):
        self.name, self.dtype, self.placeholder = name, dtype, placeholder
        self.raw, self.output = raw, output

    def __repr__(self):
        t = self.dtype.name if self.dtype is not None else self.placeholder
        return f"{'raw ' if self.raw else ''}{t} {self.name}"


def parse_params(text, output, what):
    """The parameters of a CuPy parameter list ('T x, raw float32 y')."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str such as 'float32 x, T y', not "
                        f"{type(text).__name__}")
    params = []
    for item in text.split(","):
        words = item.split()
        if not words:
            if text.strip():
                raise ValueError(f"{what}: an empty parameter in {text!r}")
            continue
        raw = words[0] == "raw"
        if raw:
            words = words[1:]
        if len(words) != 2:
            raise ValueError(f"{what}: {item.strip()!r} is not '[raw] <type> <name>'")
        tname, name = words
        if not _IDENT.match(name):
            raise ValueError(f"{what}: {name!r} is not a valid parameter name")
        if name in ("i", "n") or name.startswith("_"):
            raise ValueError(f"{what}: the name {name!r} is reserved (i, n and names "
                             f"starting with '_')")
        if tname in _DTYPE_NAMES:
            params.append(_Param(name, numpy.dtype(_DTYPE_NAMES[tname]), None, raw, output))
        elif tname in _C_NAMES:
            raise ValueError(f"{what}: {tname!r} is a C type name; give a NumPy dtype name "
                             f"such as float32, float64 or int32 (or a placeholder such as T)")
        elif _IDENT.match(tname):
            params.append(_Param(name, None, tname, raw, output))
        else:
            raise ValueError(f"{what}: {tname!r} is neither a dtype name nor a placeholder")
    return tuple(params)


def _check_names(params):
    seen = set()
    for p in params:
        if p.name in seen:
            raise ValueError(f"the parameter name {p.name!r} is used twice")
        seen.add(p.name)
    placeholders = {p.placeholder for p in params if p.placeholder}
    clash = placeholders & seen
    if clash:
        raise ValueError(f"{sorted(clash)[0]!r} is both a type placeholder and a parameter name")


def _arg_dtype(arg):
    """(kind, dtype): 'array' with the array's dtype, 'numpy' for a NumPy
    scalar, 'python' for a Python scalar (weak), 'host' for a NumPy array."""
    if isinstance(arg, _core.ndarray):
        return "array", arg.dtype
    if isinstance(arg, numpy.ndarray):
        return "host", arg.dtype
    if isinstance(arg, numpy.generic):
        return "numpy", arg.dtype
    if isinstance(arg, bool):
        return "python", numpy.dtype(bool)
    for t in (int, float, complex):
        if isinstance(arg, t):
            return "python", _PY_SCALAR_DTYPE[t]
    if hasattr(arg, "__cuda_array_interface__"):
        return "array", _core.asarray(arg).dtype
    raise TypeError(f"an argument of type {type(arg).__name__} cannot be passed to a user "
                    f"kernel: pass device arrays, NumPy scalars or Python numbers")


def resolve_types(params, args, what):
    """Bind the placeholders from the call's arguments: arrays first, then
    NumPy scalars, then Python scalars.  Returns (dtypes per param, kinds
    per arg, placeholder -> dtype)."""
    bound = {}
    kinds = []

    def bind(p, dt, how):
        if p.dtype is not None:
            if how == "array" and dt != p.dtype:
                raise TypeError(f"{what}: argument {p.name!r} is an array of dtype {dt}, but the "
                                f"parameter is {p.dtype}; convert it with .astype('{p.dtype}')")
            return
        have = bound.get(p.placeholder)
        if have is None:
            bound[p.placeholder] = dt
        elif how == "array" and have != dt:
            raise TypeError(f"{what}: type placeholder {p.placeholder} is {have} from an earlier "
                            f"argument but {dt} for {p.name!r}; arrays of one placeholder must "
                            f"share a dtype")

    for p, a in zip(params, args):
        kind, dt = _arg_dtype(a)
        if kind == "host":
            raise _core._host_array_error(f"argument {p.name!r}", what)
        kinds.append(kind)
        if kind != "array" and (p.raw or p.output):
            raise TypeError(f"{what}: {'raw ' if p.raw else 'output '}parameter {p.name!r} needs "
                            f"a device array, got a scalar")
    for how in ("array", "numpy", "python"):
        for p, a, kind in zip(params, args, kinds):
            if kind == how:
                bind(p, _arg_dtype(a)[1], how)
    dtypes = []
    for p in params:
        dt = p.dtype if p.dtype is not None else bound.get(p.placeholder)
        if dt is None:
            raise TypeError(f"{what}: cannot tell the type of {p.name!r} ({p.placeholder}): no "
                            f"argument binds {p.placeholder}; pass an array for it")
        dtypes.append(numpy.dtype(dt))
    return dtypes, kinds, bound


def _prelude(dtypes, placeholders, extra=""):
    """The includes and typedefs every generated kernel starts with."""
    lines = []
    if any(numpy.dtype(d) == numpy.float16 for d in dtypes):
        lines.append("#define GA_RTC_HALF")
    if any(numpy.dtype(d).kind == "c" for d in dtypes):
        lines += ["#define GA_RTC_COMPLEX", '#include "ufunc_ops.cuh"',
                  "template <class T> using complex = ga_cx_ns::complex<T>;"]
    else:
        lines.append('#include "ufunc_ops.cuh"')
    for name, dt in sorted(placeholders.items()):
        lines.append(f"typedef {ctype(dt)} {name};")
    if extra:
        lines.append(extra)
    return "\n".join(lines) + "\n"


_RAW_STRUCT = """struct {sname} {{
    {t} *data;
{dims}    long long _size;
    __device__ long long size() const {{ return _size; }}
    __device__ {t} &operator[](long long j) const {{
{index}    }}
}};
"""


def raw_struct(name, dtype, ndim):
    """A raw array parameter: pointer, shape, byte strides, size; x[j] takes
    the C-order element number j whatever the strides."""
    t = ctype(dtype)
    sname = f"_ga_raw_{name}"
    if ndim == 0:
        dims = ""
        index = f"        return *data;\n"
    else:
        dims = f"    long long shape[{ndim}];\n    long long strides[{ndim}];\n"
        index = "        long long off = 0;\n"
        if ndim > 1:
            index += (f"        for (int d = {ndim - 1}; d > 0; --d) {{ long long q = j / shape[d]; "
                      f"off += (j - q * shape[d]) * strides[d]; j = q; }}\n")
        index += f"        return *({t} *)((char *)data + off + j * strides[0]);\n"
    return sname, _RAW_STRUCT.format(sname=sname, t=t, dims=dims, index=index)


def offsets_code(names, ndim, indent="        "):
    """C that computes the byte offsets _o_<name> of element i over the
    collapsed shape _shape for every array in `names`."""
    lines = [f"{indent}long long {', '.join(f'_o_{n} = 0' for n in names)};",
             f"{indent}{{ long long _t = i;"]
    if ndim > 1:
        lines.append(f"{indent}  for (int _d = {ndim - 1}; _d > 0; --_d) {{ "
                     f"long long _q = _t / _shape.d[_d], _r = _t - _q * _shape.d[_d]; "
                     + " ".join(f"_o_{n} += _r * _s_{n}.d[_d];" for n in names)
                     + " _t = _q; }")
    lines.append(f"{indent}  " + " ".join(f"_o_{n} += _t * _s_{n}.d[0];" for n in names) + " }")
    return "\n".join(lines)


def _compile(source, name, options, device):
    """A generated source compiled for `device` (with gpuarr's kernel
    headers on the include path) and loaded."""
    binary = _compiler.compile_code(source, f"{name}.cu",
                                    tuple(options) + (f"-I{_compiler.include_dir()}",),
                                    arch=device_arch(device))
    return load(binary)


class _Builder:
    """Compiles and loads the kernels of one plan: one per (device,
    layout), for the C call (src/userelementwise.c)."""

    def __init__(self, source_for, name, options):
        self.source_for = source_for
        self.name = name
        self.options = tuple(options)

    def __call__(self, device, ndim, contiguous):
        source = self.source_for(ndim, bool(contiguous))
        return _compile(source, self.name, self.options, device).get_kernel(self.name)


def elementwise_source(name, params, dtypes, raw_ndims, ndim, contiguous, operation,
                       preamble="", loop_prep="", after_loop="", placeholders=None,
                       scalar_params=(), ctype_of=ctype):
    """The CUDA source of an elementwise kernel for one layout: `ndim`
    collapsed dims with strides, or contiguous arrays indexed directly.
    `ctype_of` names element types (fuse uses the storage types of
    ufunc_ops.cuh).  One element a thread per step of a grid-stride loop:
    on the H100 a fused sin/cos/sqrt of 1e7 float64 ran at 94% of the
    built-in x + y over the same bytes (89 vs 84 us); four elements a step
    with __restrict__ pointers measured no faster (91 us)."""
    placeholders = placeholders or {}
    head = [_prelude(dtypes, placeholders, preamble)]
    head.append("struct _ga_ind { long long _n; __device__ long long size() const "
                "{ return _n; } };")
    if not contiguous:
        head.append(f"struct _ga_dims {{ long long d[{ndim}]; }};")
    args = ["const long long _n"]
    if not contiguous:
        args.append("const _ga_dims _shape")
    body = []
    strided = []
    for p, dt, nd in zip(params, dtypes, raw_ndims):
        t = ctype_of(dt)
        if p.raw:
            sname, struct = raw_struct(p.name, dt, nd)
            head.append(struct)
            args.append(f"const {sname} {p.name}")
        elif p.name in scalar_params:
            args.append(f"const {t} {p.name}")
        else:
            args.append(f"{'' if p.output else 'const '}char *_p_{p.name}")
            if not contiguous:
                args.append(f"const _ga_dims _s_{p.name}")
                strided.append(p.name)
    loads = []
    for p, dt in zip(params, dtypes):
        if p.raw or p.name in scalar_params:
            continue
        t = ctype_of(dt)
        if contiguous:
            where = f"(({'' if p.output else 'const '}{t} *)_p_{p.name})[i]"
        else:
            where = f"*({'' if p.output else 'const '}{t} *)(_p_{p.name} + _o_{p.name})"
        loads.append(f"        {t} &{p.name} = {where};" if p.output else
                     f"        const {t} {p.name} = {where};")
    if strided:
        body.append(offsets_code(strided, ndim))
    body += loads
    body.append(f"        {operation};")
    loop = ("    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < _n;\n"
            "         i += (long long)blockDim.x * gridDim.x) {\n")
    close = "    }"
    src = "\n".join(head) + f"""
extern "C" __global__ void {name}({', '.join(args)})
{{
    const _ga_ind _ind = {{_n}};
    (void)_ind;
    {loop_prep}
{loop}{chr(10).join(body)}
{close}
    {after_loop}
}}
"""
    return src


class ElementwiseKernel(_core._EWKernelBase):
    """ElementwiseKernel(in_params, out_params, operation, name='kernel', reduce_dims=True,
    preamble='', no_return=False, return_tuple=False, loop_prep='', after_loop='', options=())

    A kernel applying ``operation`` (CUDA C++) to every element.  Called as
    ``kernel(*inputs[, *outputs], size=-1, block_size=128, stream=None)``:
    array inputs broadcast together, outputs not passed are allocated with
    the broadcast shape, ``size`` gives the length when no argument is a
    (non-raw) array.  Returns the output, a tuple of them, or None
    (no_return=True).
    """

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True,
                 preamble="", no_return=False, return_tuple=False, loop_prep="", after_loop="",
                 options=(), **kwargs):
        if kwargs:
            raise TypeError(f"ElementwiseKernel got unexpected keyword arguments "
                            f"{sorted(kwargs)}")
        self.in_params = parse_params(in_params, False, "in_params")
        self.out_params = parse_params(out_params, True, "out_params")
        _check_names(self.in_params + self.out_params)
        for what, text in (("operation", operation), ("preamble", preamble),
                           ("loop_prep", loop_prep), ("after_loop", after_loop)):
            if not isinstance(text, str):
                raise TypeError(f"{what} must be a str of CUDA C++ code")
        if not isinstance(name, str) or not _IDENT.match(name):
            raise ValueError(f"name must be a C identifier (it names the kernel), got {name!r}")
        if isinstance(options, str):
            options = (options,)
        self.operation = operation
        self.name = name
        self.reduce_dims = bool(reduce_dims)
        self.preamble = preamble
        self.no_return = bool(no_return)
        self.return_tuple = bool(return_tuple)
        self.loop_prep = loop_prep
        self.after_loop = after_loop
        self.options = tuple(options)
        self.nin = len(self.in_params)
        self.nout = len(self.out_params)
        self.nargs = self.nin + self.nout
        self._configure(self.nin, self.nout)

    def _make_plan(self, args):
        params = self.in_params + self.out_params
        what = f"ElementwiseKernel {self.name!r}"
        given = params[:len(args)]
        dtypes, kinds, bound = resolve_types(given, args, what)
        for p in params[len(args):]:
            dt = p.dtype if p.dtype is not None else bound.get(p.placeholder)
            if dt is None:
                raise TypeError(f"{what}: cannot tell the dtype of output {p.name!r} "
                                f"({p.placeholder}): no input binds {p.placeholder}; pass the "
                                f"output array")
            dtypes.append(numpy.dtype(dt))
        for p in params:
            if p.placeholder and p.placeholder not in bound:
                bound[p.placeholder] = dtypes[params.index(p)]
        roles, ndims, scalars = [], [], set()
        for k, p in enumerate(params):
            kind = kinds[k] if k < len(args) else "array"
            if p.output:
                roles.append(_OUT_RAW if p.raw else _OUT)
            elif kind != "array":
                roles.append(_SCALAR)
                scalars.add(p.name)
            else:
                roles.append(_IN_RAW if p.raw else _IN)
            ndims.append(args[k].ndim if k < len(args) and kind == "array" else 1)
        if any(p.raw and p.output for p in params[len(args):]):
            raise TypeError(f"{what}: raw outputs must be passed (their shape is not the loop's)")
        raw_ndims = tuple(ndims)
        dtypes = tuple(dtypes)

        def source_for(ndim, contiguous):
            return elementwise_source(self.name, params, dtypes, raw_ndims, ndim, contiguous,
                                      self.operation, self.preamble, self.loop_prep,
                                      self.after_loop, bound, scalars)

        return _core._EWPlan(tuple(roles), dtypes, raw_ndims,
                             _Builder(source_for, self.name, self.options),
                             reduce_dims=self.reduce_dims, no_return=self.no_return,
                             return_tuple=self.return_tuple)

    def __repr__(self):
        return f"<gpuarr.ElementwiseKernel {self.name!r}>"


# ============================================================ reductions ==

_REDUCE_SOURCE = """{prelude}#include "reduce.cuh"
typedef {reduce_type} _type_reduce;
{preamble}
#define _GA_REDUCE(a, b) ({reduce_expr})
struct alignas(8) _ga_acc {{ _type_reduce v; }};
struct _ga_op {{
    using Acc = _ga_acc;
    static __device__ __forceinline__ _ga_acc identity()
    {{
        _ga_acc r;
        r.v = (_type_reduce)({identity});
        return r;
    }}
    static __device__ __forceinline__ _ga_acc merge(const _ga_acc &x, const _ga_acc &y,
                                                    const ga_reduce_args &)
    {{
        _ga_acc r;
        r.v = _GA_REDUCE(x.v, y.v);
        return r;
    }}
}};
struct _ga_f {{
{fields}}};
struct _ga_size {{ long long _n; __device__ long long size() const {{ return _n; }} }};

extern "C" __global__ void __launch_bounds__(GA_REDUCE_THREADS)
{name}(const __grid_constant__ ga_reduce_args _a, const __grid_constant__ _ga_f _f)
{{
{scalars}    const _ga_size _in_ind = {{_a.n_red}}, _out_ind = {{_a.n_out}};
    (void)_in_ind; (void)_out_ind;
    ga_red::reduce_tiles<_ga_op>(_a, _a.main, gridDim.y == 1,
        [&](int64_t _o, int64_t _lane, int64_t _nlanes) {{
            _ga_acc _s = _ga_op::identity();
{bases}            auto _fold = [&](_ga_acc &_st, const {t0} _v0, int64_t _j) {{
                (void)_j;
{loads}                _st.v = _GA_REDUCE(_st.v, (_type_reduce)({map_expr}));
            }};
{loop}            return _s;
        }},
        [&](char *_p, const _ga_acc &_r) {{
            {out_t} &{out_name} = *({out_t} *)_p;
#define a (_r.v)
            {post_map_expr};
#undef a
        }});
}}

extern "C" __global__ void __launch_bounds__(GA_REDUCE_THREADS)
{name}_finish(const __grid_constant__ ga_reduce_args _a, const __grid_constant__ _ga_f _f)
{{
{scalars}    const _ga_size _in_ind = {{_a.n_red}}, _out_ind = {{_a.n_out}};
    (void)_in_ind; (void)_out_ind;
    ga_red::reduce_tiles<_ga_op>(_a, _a.finish, true,
        [&](int64_t _o, int64_t _lane, int64_t _nlanes) {{
            const _ga_acc *_part = (const _ga_acc *)_a.partial;
            _ga_acc _s = _ga_op::identity();
            for (int64_t _k = _lane; _k < _a.splits; _k += _nlanes)
                _s = _ga_op::merge(_s, _part[_k * _a.n_out + _o], _a);
            return _s;
        }},
        [&](char *_p, const _ga_acc &_r) {{
            {out_t} &{out_name} = *({out_t} *)_p;
#define a (_r.v)
            {post_map_expr};
#undef a
        }});
}}
"""


def reduction_source(name, arrays, array_dtypes, scalars, scalar_dtypes, out_name, out_dtype,
                     map_expr, reduce_expr, post_map_expr, identity, reduce_type, preamble,
                     placeholders, ctype_of=ctype):
    """The CUDA source of a user reduction (main and finishing kernels).
    `arrays` / `scalars`: parameter names, in the order the C launch packs
    them (src/reduction.c, _reduce_launch)."""
    m = len(arrays)
    fields = ""
    if m > 1:
        fields += (f"    const char *p[{m - 1}];\n    ga_kstrides kin[{m - 1}];\n"
                   f"    ga_kstrides rin[{m - 1}];\n")
    if scalars:
        fields += f"    ga_kscalar sc[{len(scalars)}];\n"
    if not fields:
        fields = "    char _unused;\n"
    sc = "".join(f"    {ctype_of(dt)} {n};\n    memcpy(&{n}, _f.sc[{k}].v.bytes, sizeof({n}));\n"
                 for k, (n, dt) in enumerate(zip(scalars, scalar_dtypes)))
    bases = "".join(f"            const char *_b{k} = _f.p[{k - 1}] + "
                    f"ga_offset(_o, _a.kept, _f.kin[{k - 1}]);\n" for k in range(1, m))
    bases = "            const char *_b0 = _a.in + ga_offset(_o, _a.kept, _a.kept_in);\n" + bases
    t0 = ctype_of(array_dtypes[0])
    loads = f"                const {t0} {arrays[0]} = _v0;\n"
    for k in range(1, m):
        t = ctype_of(array_dtypes[k])
        loads += (f"                const {t} {arrays[k]} = *(const {t} *)(_b{k} + "
                  f"(_a.red.ndim == 1 ? _j * _f.rin[{k - 1}].s[0] : "
                  f"ga_offset(_j, _a.red, _f.rin[{k - 1}])));\n")
    loop = ""
    if m == 1:
        loop += ("            if (_a.contiguous) {\n"
                 f"                ga_red::fold_contiguous(_s, (const {t0} *)_b0, _a.n_red, _lane, "
                 "_nlanes, _fold);\n"
                 "            } else ")
    else:
        loop += "            "
    loop += ("if (_a.red.ndim == 1) {\n"
             "                const int64_t _s0 = _a.red_in.s[0];\n"
             "#pragma unroll 4\n"
             "                for (int64_t _j = _lane; _j < _a.n_red; _j += _nlanes)\n"
             f"                    _fold(_s, *(const {t0} *)(_b0 + _j * _s0), _j);\n"
             "            } else {\n"
             "                for (int64_t _j = _lane; _j < _a.n_red; _j += _nlanes)\n"
             f"                    _fold(_s, *(const {t0} *)(_b0 + ga_offset(_j, _a.red, "
             "_a.red_in)), _j);\n"
             "            }\n")
    all_dtypes = list(array_dtypes) + list(scalar_dtypes) + [out_dtype]
    return _REDUCE_SOURCE.format(
        prelude=_prelude(all_dtypes, placeholders), reduce_type=reduce_type, preamble=preamble,
        reduce_expr=reduce_expr, identity=identity, fields=fields, name=name, scalars=sc,
        bases=bases, t0=t0, loads=loads, map_expr=map_expr, loop=loop,
        out_t=ctype_of(out_dtype), out_name=out_name, post_map_expr=post_map_expr)


def _normalize_axis(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = tuple(axis)
    else:
        axes = (axis,)
    out = []
    for ax in axes:
        ax = int(ax)
        if not -ndim <= ax < ndim:
            raise numpy.exceptions.AxisError(ax, ndim)
        ax %= ndim
        if ax in out:
            raise ValueError("duplicate value in 'axis'")
        out.append(ax)
    return tuple(sorted(out))


class _ReductionPlan:
    """The compiled kernels of one signature of a user reduction."""

    __slots__ = ("source", "name", "options", "arrays", "scalars", "scalar_dtypes",
                 "out_dtype", "handles")

    def __init__(self, source, name, options, arrays, scalars, scalar_dtypes, out_dtype):
        self.source, self.name, self.options = source, name, options
        self.arrays, self.scalars = arrays, scalars
        self.scalar_dtypes, self.out_dtype = scalar_dtypes, out_dtype
        self.handles = {}

    def kernels(self, device):
        h = self.handles.get(device)
        if h is None:
            lib = _compile(self.source, self.name, self.options, device)
            h = self.handles[device] = (lib.get_kernel(self.name),
                                        lib.get_kernel(self.name + "_finish"))
        return h


def run_reduction(plan, arrays, scalars, axis, out, keepdims, stream, what):
    """Broadcast the array inputs, allocate or check the output, launch."""
    shape = numpy.broadcast_shapes(*(a.shape for a in arrays))
    arrays = tuple(a if a.shape == shape else broadcast_to(a, shape) for a in arrays)
    ndim = len(shape)
    axes = _normalize_axis(axis, ndim)
    kept = tuple(n for i, n in enumerate(shape) if i not in axes)
    keep_shape = tuple(1 if i in axes else n for i, n in enumerate(shape))
    want = keep_shape if keepdims else kept
    device = arrays[0].device.id
    if out is None:
        from . import cuda as _cuda
        with _cuda.Device(device):
            res = _core.empty(kept, dtype=plan.out_dtype)
        target = res
    else:
        if not isinstance(out, _core.ndarray):
            raise TypeError(f"{what}: out must be a device array")
        if out.shape != want:
            raise ValueError(f"{what}: out has shape {out.shape}, the result's is {want}")
        if out.dtype != plan.out_dtype:
            raise TypeError(f"{what}: out has dtype {out.dtype}, the result's is {plan.out_dtype}")
        res = out
        target = out.reshape(kept) if keepdims else out
        if keepdims and target.data.ptr != out.data.ptr:
            raise ValueError(f"{what}: out must be contiguous with keepdims=True")
    main, finish = plan.kernels(device)
    _core._reduce_launch(main, finish, arrays, tuple(i in axes for i in range(ndim)), target,
                         tuple(scalars), tuple(plan.scalar_dtypes), 8, stream)
    if out is None and keepdims:
        return res.reshape(keep_shape)
    return res


class ReductionKernel:
    """ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
    name='reduce_kernel', reduce_type=None, reduce_dims=True, preamble='', options=())

    A reduction: each element is mapped by ``map_expr`` (the inputs by
    name), the mapped values combined by ``reduce_expr`` (in ``a`` and
    ``b``), starting from ``identity``, and the result written by
    ``post_map_expr`` (the reduced value is ``a``, the output by its name).
    Called as ``kernel(*inputs, out=None, axis=None, keepdims=False,
    stream=None)``.  It runs on the built-in reductions' kernel layout
    (src/kernels/reduce.cuh): 16-byte loads on contiguous data, the work
    split among blocks when the outputs are few.
    """

    def __init__(self, in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                 name="reduce_kernel", reduce_type=None, reduce_dims=True, preamble="",
                 options=(), **kwargs):
        if kwargs:
            raise TypeError(f"ReductionKernel got unexpected keyword arguments {sorted(kwargs)}")
        self.in_params = parse_params(in_params, False, "in_params")
        self.out_params = parse_params(out_params, True, "out_params")
        _check_names(self.in_params + self.out_params)
        if len(self.out_params) != 1 or self.out_params[0].raw:
            raise ValueError("a ReductionKernel has exactly one (non-raw) output parameter")
        if any(p.raw for p in self.in_params):
            raise ValueError("ReductionKernel inputs cannot be raw")
        for what, text in (("map_expr", map_expr), ("reduce_expr", reduce_expr),
                           ("post_map_expr", post_map_expr), ("preamble", preamble)):
            if not isinstance(text, str):
                raise TypeError(f"{what} must be a str of CUDA C++ code")
        if not isinstance(identity, str):
            identity = repr(identity) if identity is not None else ""
        if not identity:
            raise ValueError("identity must be a C expression such as '0' (the value of an "
                             "empty reduction)")
        if not isinstance(name, str) or not _IDENT.match(name):
            raise ValueError(f"name must be a C identifier, got {name!r}")
        if isinstance(options, str):
            options = (options,)
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity = identity
        self.name = name
        self.reduce_type = reduce_type
        self.reduce_dims = bool(reduce_dims)
        self.preamble = preamble
        self.options = tuple(options)
        self.nin = len(self.in_params)
        self.nout = 1
        self.nargs = self.nin + 1
        self._plans = {}

    def _plan(self, args, out):
        what = f"ReductionKernel {self.name!r}"
        dtypes, kinds, bound = resolve_types(self.in_params, args, what)
        op = self.out_params[0]
        if out is not None and isinstance(out, _core.ndarray):
            if op.dtype is None and op.placeholder not in bound:
                bound[op.placeholder] = out.dtype
        out_dtype = op.dtype if op.dtype is not None else bound.get(op.placeholder)
        if out_dtype is None:
            raise TypeError(f"{what}: cannot tell the dtype of the output {op.name!r} "
                            f"({op.placeholder}); pass out=")
        key = (tuple(dtypes), tuple(kinds), numpy.dtype(out_dtype))
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        arrays = [p.name for p, k in zip(self.in_params, kinds) if k == "array"]
        if not arrays:
            raise TypeError(f"{what}: at least one input must be a device array")
        array_dtypes = [d for d, k in zip(dtypes, kinds) if k == "array"]
        scalars = [p.name for p, k in zip(self.in_params, kinds) if k != "array"]
        scalar_dtypes = [d for d, k in zip(dtypes, kinds) if k != "array"]
        rt = self.reduce_type
        if rt is None:
            rt = ctype(out_dtype)
        elif rt in _DTYPE_NAMES:
            rt = ctype(_DTYPE_NAMES[rt])
        placeholders = dict(bound)
        if op.placeholder:
            placeholders.setdefault(op.placeholder, numpy.dtype(out_dtype))
        source = reduction_source(self.name, arrays, array_dtypes, scalars, scalar_dtypes,
                                  op.name, numpy.dtype(out_dtype), self.map_expr,
                                  self.reduce_expr, self.post_map_expr, self.identity, rt,
                                  self.preamble, placeholders)
        plan = self._plans[key] = _ReductionPlan(source, self.name, self.options, arrays,
                                                 scalars, scalar_dtypes, numpy.dtype(out_dtype))
        return plan

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        if len(args) != self.nin:
            raise TypeError(f"ReductionKernel {self.name!r} takes {self.nin} inputs, got "
                            f"{len(args)} (pass the output as out=)")
        args = tuple(_core.asarray(a) if not isinstance(a, (_core.ndarray, numpy.ndarray,
                                                            numpy.generic, bool, int, float,
                                                            complex))
                     and hasattr(a, "__cuda_array_interface__") else a for a in args)
        plan = self._plan(args, out)
        arrays = [a for a in args if isinstance(a, _core.ndarray)]
        scalars = [a for a in args if not isinstance(a, _core.ndarray)]
        return run_reduction(plan, arrays, scalars, axis, out, keepdims, stream,
                             f"ReductionKernel {self.name!r}")

    def __repr__(self):
        return f"<gpuarr.ReductionKernel {self.name!r}>"
