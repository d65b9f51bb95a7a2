"""Matrix products with NumPy's signatures, over the C core's matmul.

``matmul`` (and ``@``) is src/blas.c: cuBLAS for floating-point and complex
types, an exact kernel for bool and integers.  Everything here reduces to
it or to an elementwise product:

- dot, inner, tensordot, vdot, vecdot: the operands transposed and
  reshaped so the contraction is one (batched) matmul, as NumPy's
  tensordot does;
- outer, kron: broadcast multiplies (exact for every dtype);
- trace: a diagonal view summed (NumPy's accumulator dtypes);
- einsum: one or two operands reduce to sums and one batched matmul; more
  operands are contracted left to right, two at a time (no path search).

``ndarray.dot`` and ``ndarray.trace`` are dot and trace.  Results follow
NumPy's dtypes (the promotion of the operands); ``out=``
is checked before any device work and written once at the end.
"""
import operator

import numpy

from . import _core
from ._core import ndarray
from ._manipulation import _device, broadcast_to, moveaxis

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "vecdot", "trace", "kron",
           "einsum"]

matmul = _core.matmul


def _check_out(out, shape, dtype, name):
    """out= for a result of shape and dtype: None, or a device array of
    exactly that shape that dtype casts to (same_kind)."""
    if out is None:
        return
    if not isinstance(out, ndarray):
        raise TypeError(f"{name}: out must be a gpuarr.ndarray, not {type(out).__name__}")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{name}: out has shape {tuple(out.shape)}, the result has shape "
                         f"{tuple(shape)}")
    if not numpy.can_cast(dtype, out.dtype, "same_kind"):
        raise TypeError(f"{name}: cannot cast the result from {numpy.dtype(dtype)} to out's "
                        f"{out.dtype} with casting rule 'same_kind'")


def _into(result, out):
    if out is None:
        return result
    out[...] = result
    return out


def _result_dtype(*arrays):
    return numpy.result_type(*(a.dtype for a in arrays))


# ------------------------------------------------------------ tensordot ----

def _axes_list(axes, name):
    if isinstance(axes, (int, numpy.integer)):
        return [int(axes)]
    try:
        return [operator.index(v) for v in axes]
    except TypeError:
        raise TypeError(f"tensordot: {name} must be an integer or a sequence of integers, "
                        f"not {axes!r}") from None


def _tensordot_axes(a, b, axes):
    """(axes of a, axes of b) summed over, normalised, as NumPy reads `axes`."""
    if isinstance(axes, (int, numpy.integer)):
        n = int(axes)
        if n < 0:
            raise ValueError(f"tensordot: axes must be >= 0, got {n}")
        if n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: axes={n} but the operands have {a.ndim} and {b.ndim} "
                             "dimensions")
        return list(range(a.ndim - n, a.ndim)), list(range(n))
    try:
        xa, xb = axes
    except (TypeError, ValueError):
        raise TypeError("tensordot: axes must be an integer or a pair of sequences of axes") \
            from None
    xa, xb = _axes_list(xa, "axes[0]"), _axes_list(xb, "axes[1]")
    if len(xa) != len(xb):
        raise ValueError(f"tensordot: axes[0] has {len(xa)} axes and axes[1] {len(xb)}")
    xa = [numpy.lib.array_utils.normalize_axis_index(v, a.ndim) for v in xa]
    xb = [numpy.lib.array_utils.normalize_axis_index(v, b.ndim) for v in xb]
    for i, j in zip(xa, xb):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"shape-mismatch for sum: axis {i} of x1 has size {a.shape[i]}, "
                             f"axis {j} of x2 has size {b.shape[j]}")
    return xa, xb


def _contract(a, b, xa, xb):
    """sum over xa of a and xb of b (paired), free axes of a then of b: one matmul."""
    fa = [i for i in range(a.ndim) if i not in xa]
    fb = [j for j in range(b.ndim) if j not in xb]
    k = 1
    for i in xa:
        k *= a.shape[i]
    sa, sb = [a.shape[i] for i in fa], [b.shape[j] for j in fb]
    m, n = int(numpy.prod(sa, dtype=numpy.int64)), int(numpy.prod(sb, dtype=numpy.int64))
    a2 = a.transpose(fa + list(xa)).reshape(m, k)
    b2 = b.transpose(list(xb) + fb).reshape(k, n)
    return matmul(a2, b2).reshape(sa + sb)


def tensordot(a, b, axes=2):
    """numpy.tensordot: the sum of products over axes (an integer N: the
    last N of a with the first N of b; or a pair of axis sequences)."""
    a, b = _device(a, "x1"), _device(b, "x2")
    xa, xb = _tensordot_axes(a, b, axes)
    return _contract(a, b, xa, xb)


# ------------------------------------------------------ dot and friends ----

def dot(a, b, out=None):
    """numpy.dot: products of scalars, inner products of vectors, matrix
    products, and for N-d operands the sum over a's last axis and b's
    second-to-last."""
    a, b = _device(a, "a"), _device(b, "b")
    if a.ndim == 0 or b.ndim == 0:
        return _core.ufuncs["multiply"](a, b, out=out)
    kb = b.shape[-2] if b.ndim >= 2 else b.shape[0]
    if a.shape[-1] != kb:
        raise ValueError(f"shapes {tuple(a.shape)} and {tuple(b.shape)} not aligned: "
                         f"{a.shape[-1]} (dim {a.ndim - 1}) != {kb} (dim {max(b.ndim - 2, 0)})")
    if b.ndim <= 2:
        return matmul(a, b, out=out)
    shape = a.shape[:-1] + b.shape[:-2] + b.shape[-1:]
    _check_out(out, shape, _result_dtype(a, b), "dot")
    return _into(_contract(a, b, [a.ndim - 1], [b.ndim - 2]), out)


def vdot(a, b):
    """numpy.vdot: the flattened a, conjugated, dotted with the flattened b
    (a 0-d device array)."""
    a, b = _device(a, "a"), _device(b, "b")
    if a.size != b.size:
        raise ValueError(f"vdot: a has {a.size} elements and b has {b.size}; they must be "
                         "equal")
    if a.dtype.kind == "c":
        a = _core.ufuncs["conjugate"](a)
    return matmul(a.reshape(-1), b.reshape(-1))


def inner(a, b):
    """numpy.inner: the sum of products over the last axes (free axes of a,
    then of b)."""
    a, b = _device(a, "a"), _device(b, "b")
    if a.ndim == 0 or b.ndim == 0:
        return _core.ufuncs["multiply"](a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"shapes {tuple(a.shape)} and {tuple(b.shape)} not aligned: "
                         f"{a.shape[-1]} (dim {a.ndim - 1}) != {b.shape[-1]} (dim {b.ndim - 1})")
    return _contract(a, b, [a.ndim - 1], [b.ndim - 1])


def outer(a, b, out=None):
    """numpy.outer: out[i, j] = a.ravel()[i] * b.ravel()[j]."""
    a, b = _device(a, "a"), _device(b, "b")
    return _core.ufuncs["multiply"](a.reshape(-1, 1), b.reshape(1, -1), out=out)


def vecdot(x1, x2, /, *, axis=-1):
    """The array API's (and NumPy 2's) vecdot: sum(conj(x1) * x2) along
    `axis`, the other axes broadcast."""
    x1, x2 = _device(x1, "x1"), _device(x2, "x2")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("vecdot: x1 and x2 must have at least one dimension")
    if not isinstance(axis, (int, numpy.integer)) or isinstance(axis, bool):
        raise TypeError(f"vecdot: axis must be an integer, not {type(axis).__name__}")
    i1 = numpy.lib.array_utils.normalize_axis_index(int(axis), x1.ndim)
    i2 = numpy.lib.array_utils.normalize_axis_index(int(axis), x2.ndim)
    if x1.shape[i1] != x2.shape[i2]:
        raise ValueError(f"vecdot: the vectors of x1 (axis {axis}, size {x1.shape[i1]}) and x2 "
                         f"(size {x2.shape[i2]}) differ in length")
    if x1.dtype.kind == "c":
        x1 = _core.ufuncs["conjugate"](x1)
    v1 = moveaxis(x1, i1, -1)[..., None, :]
    v2 = moveaxis(x2, i2, -1)[..., :, None]
    return matmul(v1, v2)[..., 0, 0]


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """numpy.trace: the sum along a diagonal (NumPy's sum dtypes: int64 for
    smaller integers, unless dtype is given)."""
    a = _device(a, "a")
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    return a.diagonal(offset, axis1, axis2).sum(axis=-1, dtype=dtype, out=out)


def kron(a, b):
    """numpy.kron: the Kronecker product (block (i, j) is a[i, j] * b)."""
    a, b = _device(a, "a"), _device(b, "b")
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    ia = [v for s in sa for v in (s, 1)]
    ib = [v for s in sb for v in (1, s)]
    prod = _core.ufuncs["multiply"](a.reshape(ia), b.reshape(ib))
    return prod.reshape([x * y for x, y in zip(sa, sb)])


# --------------------------------------------------------------- einsum ----

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_parse(subscripts, operands):
    """(list of label strings per operand, output labels), the ellipsis
    replaced by labels of their own (right-aligned, broadcast), the implicit
    output made explicit (labels used once, in order, the ellipsis first)."""
    if not isinstance(subscripts, str):
        raise TypeError("einsum: the subscripts must be a string (the sublist form is not "
                        "supported)")
    text = subscripts.replace(" ", "")
    ins, arrow, outs = text.partition("->")
    terms = ins.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(operands)} operands")
    for t in terms + ([outs] if arrow else []):
        bad = set(t.replace("...", "")) - set(_LETTERS)
        if bad or t.count("...") > 1 or "." in t.replace("...", ""):
            raise ValueError(f"einsum: invalid subscripts {subscripts!r} (letters and at most "
                             "one ellipsis per term)")
    used = set(text)
    free = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for t, op in zip(terms, operands):
        explicit = len(t.replace("...", ""))
        if "..." in t:
            n_ell = max(n_ell, op.ndim - explicit)
        elif op.ndim != explicit:
            raise ValueError(f"einsum: operand has {op.ndim} dimensions, its subscripts {t!r} "
                             f"name {explicit}")
    if n_ell > len(free):
        raise ValueError("einsum: too many dimensions under the ellipsis")
    ell = "".join(free[:n_ell])
    labels = []
    for t, op in zip(terms, operands):
        if "..." in t:
            k = op.ndim - len(t.replace("...", ""))
            if k < 0:
                raise ValueError(f"einsum: operand has {op.ndim} dimensions, fewer than its "
                                 f"subscripts {t!r} name")
            t = t.replace("...", ell[n_ell - k:])
        labels.append(t)
    if arrow:
        out = outs.replace("...", ell)
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output subscript {outs!r} repeats a label")
        for c in out:
            if c not in "".join(labels):
                raise ValueError(f"einsum: output label {c!r} appears in no operand")
    else:
        counts = {}
        for c in "".join(labels):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return labels, out


def _einsum_sizes(labels, operands):
    sizes = {}
    for t, op in zip(labels, operands):
        for c, s in zip(t, op.shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = s
            elif s not in (1, sizes[c]):
                raise ValueError(f"einsum: label {c!r} has sizes {sizes[c]} and {s}, which "
                                 "cannot be broadcast together")
    return sizes


def _einsum_reduce(x, t, keep, dtype):
    """Operand x with labels t: repeated labels taken along their diagonal,
    labels not in `keep` summed away.  (array, labels)."""
    while len(set(t)) != len(t):
        c = next(c for c in t if t.count(c) > 1)
        i = t.index(c)
        j = t.index(c, i + 1)
        x = x.diagonal(0, i, j)                  # the diagonal becomes the last axis
        t = t[:i] + t[i + 1:j] + t[j + 1:] + c
    drop = tuple(i for i, c in enumerate(t) if c not in keep)
    if drop:
        if dtype == numpy.bool_:
            x = x.any(axis=drop)
        else:
            x = x.sum(axis=drop, dtype=dtype)
        t = "".join(c for c in t if c in keep)
    return x, t


def _einsum_pair(a, ta, b, tb, keep, sizes):
    """a (labels ta) times b (labels tb), summed over labels in both and
    not kept: one batched matmul.  (array, labels)."""
    batch = [c for c in ta if c in tb and c in keep]
    summed = [c for c in ta if c in tb and c not in keep]
    fa = [c for c in ta if c not in tb]
    fb = [c for c in tb if c not in ta]

    def arrange(x, t, groups):
        order = [t.index(c) for g in groups for c in g]
        x = x.transpose(order)
        full = [sizes[c] for g in groups for c in g]
        return _broadcast(x, full).reshape([int(numpy.prod([sizes[c] for c in g], dtype=numpy.int64))
                          for g in groups])

    a3 = arrange(a, ta, (batch, fa, summed))
    b3 = arrange(b, tb, (batch, summed, fb))
    r = matmul(a3, b3)
    return r.reshape([sizes[c] for c in batch + fa + fb]), "".join(batch + fa + fb)


def _broadcast(x, shape):
    return x if tuple(x.shape) == tuple(shape) else broadcast_to(x, shape)


def einsum(subscripts, *operands, out=None, dtype=None, optimize=False):
    """numpy.einsum for the string form ('ij,jk->ik', '...ii->...i',
    implicit outputs): each operand's own diagonals and sums first, then
    each pair of operands as one batched matmul (left to right).  dtype
    casts the operands first; `optimize` is accepted and ignored."""
    if not operands:
        raise ValueError("einsum: at least one operand is needed")
    ops = [_device(x, f"operand {i}") for i, x in enumerate(operands)]
    rdt = numpy.dtype(dtype) if dtype is not None else _result_dtype(*ops)
    if dtype is not None:
        ops = [x.astype(rdt, copy=False) for x in ops]
    labels, out_labels = _einsum_parse(subscripts, ops)
    sizes = _einsum_sizes(labels, ops)
    _check_out(out, [sizes[c] for c in out_labels], rdt, "einsum")
    later = [set("".join(labels[i + 1:])) for i in range(len(ops))]
    x, t = _einsum_reduce(ops[0], labels[0], set(out_labels) | later[0], rdt)
    for i in range(1, len(ops)):
        keep = set(out_labels) | later[i]
        y, ty = _einsum_reduce(ops[i], labels[i], keep | set(t), rdt)
        x, t = _einsum_reduce(x, t, keep | set(ty), rdt)
        x, t = _einsum_pair(x, t, y, ty, keep, sizes)
    x = _broadcast(x.transpose([t.index(c) for c in out_labels]),
                   [sizes[c] for c in out_labels])
    if x.dtype != rdt:
        x = x.astype(rdt)
    return _into(x, out)


_core._register_helper("ndarray.dot", dot)
_core._register_helper("ndarray.trace", trace)
