/*
 * elementwise.c -- ufuncs and where(): NumPy's elementwise semantics over
 * precompiled kernels.
 *
 * A call goes through four steps, all host-side planning but the last:
 *
 * 1. Operands.  Device arrays stay as they are; Python int/float/complex are
 *    "weak" scalars (NEP 50), NumPy scalars are strong 0-d values, other
 *    sequences become device arrays.  Host NumPy arrays are refused with a
 *    TypeError saying to call gpuarr.asarray() first.
 * 2. Dtypes.  NumPy decides: ufunc.resolve_dtypes() of the matching NumPy
 *    ufunc gives the loop dtypes (weak scalars passed as int/float/complex),
 *    so promotion is NumPy's own.  The answer, and the kernel loop chosen for
 *    it from ufunc_table.h, is cached per (ufunc, operand types, dtype=,
 *    casting), so a repeated call costs one table lookup.
 * 3. Layout.  Shapes broadcast; the output is allocated (C order, or F when
 *    every input with two or more axes longer than 1 is F-ordered) or out=
 *    validated before any work.  Inputs of another dtype than the loop's
 *    are cast first (kernels see one type); scalars are converted on the
 *    host and passed as kernel arguments.  Operands that are all contiguous
 *    with the output's shape run the contiguous kernel; otherwise dimensions
 *    are collapsed for the strided one.
 * 4. Launch on the current stream of the arrays' device.
 *
 * An out= that overlaps an input with a different layout, or needs another
 * dtype than the loop's, receives the result through a temporary.
 */
#include "gpuarr.h"
#include "ufunc_table.h"

#include <float.h>

#define GA_T_b GA_BOOL
#define GA_T_i8 GA_INT8
#define GA_T_i16 GA_INT16
#define GA_T_i32 GA_INT32
#define GA_T_i64 GA_INT64
#define GA_T_u8 GA_UINT8
#define GA_T_u16 GA_UINT16
#define GA_T_u32 GA_UINT32
#define GA_T_u64 GA_UINT64
#define GA_T_f16 GA_FLOAT16
#define GA_T_f32 GA_FLOAT32
#define GA_T_f64 GA_FLOAT64
#define GA_T_c64 GA_COMPLEX64
#define GA_T_c128 GA_COMPLEX128

/* Type codes of operands beyond the dtypes: Python scalars (weak). */
enum { GA_WEAK_INT = GA_NTYPES, GA_WEAK_FLOAT, GA_WEAK_COMPLEX, GA_NO_TYPE };

typedef struct { int ufunc, in, out; } loop_info;
#define LOOP_U(name, nin, flags)
#define LOOP_L(g, op, in, out) {GA_UF_##op, GA_T_##in, GA_T_##out},
static const loop_info loops[GA_NLOOPS] = {GA_UFUNC_TABLE(LOOP_U, LOOP_L)};

typedef struct { const char *name; int nin, flags; } ufunc_info;
#define INFO_U(name, nin, flags) {#name, nin, flags},
#define INFO_L(g, op, in, out)
static const ufunc_info infos[GA_NUFUNCS] = {GA_UFUNC_TABLE(INFO_U, INFO_L)};

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int id;
    PyObject *np_ufunc;
} ga_ufunc;

static PyTypeObject UfuncType;
static ga_ufunc *ufuncs[GA_NUFUNCS];
static PyObject *numpy_result_type = NULL;

/* ------------------------------------------------------------ operands --- */

typedef struct {
    ga_array *arr;       /* owned; NULL for a scalar */
    PyObject *value;     /* scalar value (borrowed) */
    int code;            /* ga_type, or GA_WEAK_* */
} operand;

static void
operands_clear(operand *ops, int n)
{
    for (int i = 0; i < n; ++i)
        Py_CLEAR(ops[i].arr);
}

static int
operand_init(operand *op, PyObject *obj, const char *fname, int pos)
{
    op->arr = NULL;
    op->value = NULL;
    if (ga_array_check(obj)) {
        op->arr = (ga_array *)obj;
        Py_INCREF(obj);
        op->code = op->arr->type;
        return 0;
    }
    /* NumPy scalars first: np.float64 and np.complex128 subclass Python's
     * float and complex but are strong (typed) operands under NEP 50. */
    if (PyArray_IsScalar(obj, Generic)) {
        PyArray_Descr *d = PyArray_DescrFromScalar(obj);
        if (d == NULL)
            return -1;
        op->code = ga_dtype_code(d, NULL);
        Py_DECREF(d);
        if (op->code < 0)
            return -1;
        op->value = obj;
        return 0;
    }
    if (PyBool_Check(obj)) {
        op->value = obj;
        op->code = GA_BOOL;
        return 0;
    }
    if (PyLong_CheckExact(obj) || PyLong_Check(obj)) {
        op->value = obj;
        op->code = GA_WEAK_INT;
        return 0;
    }
    if (PyFloat_Check(obj)) {
        op->value = obj;
        op->code = GA_WEAK_FLOAT;
        return 0;
    }
    if (PyComplex_Check(obj)) {
        op->value = obj;
        op->code = GA_WEAK_COMPLEX;
        return 0;
    }
    if (PyArray_Check(obj)) {
        char what[32];
        snprintf(what, sizeof(what), "argument %d", pos + 1);
        ga_err_host_array(fname, what);
        return -1;
    }
    op->arr = (ga_array *)ga_asarray(obj, NULL, -1, 'K');
    if (op->arr == NULL)
        return -1;
    op->code = op->arr->type;
    return 0;
}

/* The dtype-like object NumPy's resolvers take for an operand. */
static PyObject *
operand_dtype_obj(const operand *op)
{
    PyObject *r;
    switch (op->code) {
    case GA_WEAK_INT: r = (PyObject *)&PyLong_Type; break;
    case GA_WEAK_FLOAT: r = (PyObject *)&PyFloat_Type; break;
    case GA_WEAK_COMPLEX: r = (PyObject *)&PyComplex_Type; break;
    default: return (PyObject *)ga_dtype_from_code(op->code);
    }
    Py_INCREF(r);
    return r;
}

/* A scalar operand as kernel bytes of type `code` without NumPy, for the
 * conversions that are exact or plain rounding: Python bool -> bool, int ->
 * an integer type that holds it or a float type that holds it exactly,
 * float -> float64, float -> float32 within float32's range, complex ->
 * complex128, and a NumPy scalar of type `code` itself.  Anything else
 * (overflow, which NumPy reports, or another pair) returns -2 and goes
 * through ga_scalar_to_bytes.  0 / -2. */
static int
try_scalar_bytes(const operand *op, int code, ga_kscalar *out)
{
    PyObject *v = op->value;
    if (op->code == code && op->code < GA_NTYPES && PyArray_IsScalar(v, Generic)) {
        PyArray_ScalarAsCtype(v, out->v.bytes);
        return 0;
    }
    if (PyBool_Check(v))
        return code == GA_BOOL ? (out->v.bytes[0] = v == Py_True, 0) : -2;
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return -2;
        }
        switch (code) {
        case GA_INT8: if (x < INT8_MIN || x > INT8_MAX) return -2; out->v.i = x; return 0;
        case GA_INT16: if (x < INT16_MIN || x > INT16_MAX) return -2; out->v.i = x; return 0;
        case GA_INT32: if (x < INT32_MIN || x > INT32_MAX) return -2; out->v.i = x; return 0;
        case GA_INT64: out->v.i = x; return 0;
        case GA_UINT8: if (x < 0 || x > UINT8_MAX) return -2; out->v.i = x; return 0;
        case GA_UINT16: if (x < 0 || x > UINT16_MAX) return -2; out->v.i = x; return 0;
        case GA_UINT32: if (x < 0 || x > UINT32_MAX) return -2; out->v.i = x; return 0;
        case GA_UINT64: if (x < 0) return -2; out->v.i = x; return 0;
        case GA_FLOAT32: {
            if (x < -(1 << 24) || x > (1 << 24))
                return -2;
            float f = (float)x;
            memcpy(out->v.bytes, &f, sizeof f);
            return 0;
        }
        case GA_FLOAT64:
            if (x < -(1LL << 53) || x > (1LL << 53))
                return -2;
            out->v.f[0] = (double)x;
            return 0;
        default: return -2;
        }
    }
    if (PyFloat_CheckExact(v)) {
        double d = PyFloat_AS_DOUBLE(v);
        if (code == GA_FLOAT64) {
            out->v.f[0] = d;
            return 0;
        }
        if (code == GA_FLOAT32 && !(d > FLT_MAX || d < -FLT_MAX)) {  /* NaN passes */
            float f = (float)d;
            memcpy(out->v.bytes, &f, sizeof f);
            return 0;
        }
        return -2;
    }
    if (PyComplex_CheckExact(v) && code == GA_COMPLEX128) {
        Py_complex c = PyComplex_AsCComplex(v);
        out->v.f[0] = c.real;
        out->v.f[1] = c.imag;
        return 0;
    }
    return -2;
}

/* ------------------------------------------------------------ resolution - */

typedef struct {
    uint64_t key;
    int loop;          /* ufunc loop, or the where() output type code */
    int out;           /* dtype code of the result */
} cache_entry;

#define CACHE_SIZE 4096
static cache_entry cache[CACHE_SIZE];

static uint64_t
cache_key(int kind, int nin, const operand *ops, int dtype_code, int casting)
{
    uint64_t k = (uint64_t)(kind + 1);
    for (int i = 0; i < nin; ++i)
        k = (k << 5) | (uint64_t)ops[i].code;
    k = (k << 5) | (uint64_t)dtype_code;
    k = (k << 3) | (uint64_t)casting;
    return (k << 2) | (uint64_t)nin;
}

static cache_entry *
cache_slot(uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return &cache[(h >> 40) % CACHE_SIZE];
}

static const char *casting_names[] = {"no", "equiv", "safe", "same_kind", "unsafe"};

static int
code_of_dtype_obj(PyObject *d, const char *fname)
{
    if (!PyArray_DescrCheck(d)) {
        PyErr_Format(PyExc_TypeError, "%s: NumPy resolved a non-dtype", fname);
        return -1;
    }
    return ga_dtype_code((PyArray_Descr *)d, fname);
}

/* Ask NumPy for the loop dtypes, then pick our loop.  Fills *loop, *out. */
static int
resolve_ufunc(ga_ufunc *uf, const operand *ops, PyArray_Descr *dtype, NPY_CASTING casting,
              int *loop_out, int *out_code)
{
    const ufunc_info *info = &infos[uf->id];
    int nin = info->nin;
    PyObject *dtypes = PyTuple_New(nin + 1), *sig = NULL, *kw = NULL, *res = NULL, *meth = NULL;
    int rc = -1, in_codes[3];
    if (dtypes == NULL)
        return -1;
    for (int i = 0; i < nin; ++i) {
        PyObject *d = operand_dtype_obj(&ops[i]);
        if (d == NULL)
            goto done;
        PyTuple_SET_ITEM(dtypes, i, d);
    }
    Py_INCREF(Py_None);
    PyTuple_SET_ITEM(dtypes, nin, Py_None);
    kw = Py_BuildValue("{s:s}", "casting", casting_names[casting]);
    if (kw == NULL)
        goto done;
    if (dtype != NULL) {
        sig = PyTuple_New(nin + 1);
        if (sig == NULL)
            goto done;
        for (int i = 0; i < nin; ++i) {
            Py_INCREF(Py_None);
            PyTuple_SET_ITEM(sig, i, Py_None);
        }
        Py_INCREF(dtype);
        PyTuple_SET_ITEM(sig, nin, (PyObject *)dtype);
        if (PyDict_SetItemString(kw, "signature", sig) < 0)
            goto done;
    }
    meth = PyObject_GetAttrString(uf->np_ufunc, "resolve_dtypes");
    if (meth == NULL)
        goto done;
    PyObject *args = PyTuple_Pack(1, dtypes);
    if (args == NULL)
        goto done;
    res = PyObject_Call(meth, args, kw);
    Py_DECREF(args);
    if (res == NULL)
        goto done;
    for (int i = 0; i < nin; ++i)
        if ((in_codes[i] = code_of_dtype_obj(PyTuple_GET_ITEM(res, i), info->name)) < 0)
            goto done;
    int out = code_of_dtype_obj(PyTuple_GET_ITEM(res, nin), info->name);
    if (out < 0)
        goto done;
    int same_in = 1;
    for (int i = 1; i < nin; ++i)
        same_in &= in_codes[i] == in_codes[0];
    int chosen = -1;
    for (int l = 0; l < GA_NLOOPS && chosen < 0; ++l)
        if (loops[l].ufunc == uf->id && same_in && loops[l].in == in_codes[0] && loops[l].out == out)
            chosen = l;
    for (int l = 0; l < GA_NLOOPS && chosen < 0; ++l) {
        if (loops[l].ufunc != uf->id)
            continue;
        if (info->flags & GA_UF_TO_BOOL) {
            chosen = l;
            break;
        }
        if (loops[l].out != out)
            continue;
        int ok = 1;
        for (int i = 0; i < nin && ok; ++i) {
            PyArray_Descr *from = ga_dtype_from_code(in_codes[i]);
            PyArray_Descr *to = ga_dtype_from_code(loops[l].in);
            ok = PyArray_CanCastTypeTo(from, to, NPY_SAFE_CASTING);
            Py_DECREF(from);
            Py_DECREF(to);
        }
        if (ok)
            chosen = l;
    }
    if (chosen < 0) {
        PyErr_Format(PyExc_TypeError, "ufunc '%s' has no GPU loop for the input types %R "
                     "(NumPy's loop: %R)", info->name, dtypes, res);
        goto done;
    }
    *loop_out = chosen;
    *out_code = out;
    rc = 0;
done:
    Py_XDECREF(dtypes);
    Py_XDECREF(sig);
    Py_XDECREF(kw);
    Py_XDECREF(res);
    Py_XDECREF(meth);
    return rc;
}

/* where(): the result dtype is numpy.result_type of x and y (weak scalars
 * passed as the Python values themselves). */
static int
resolve_where(const operand *ops, int *out_code)
{
    PyObject *a = ops[1].arr ? (PyObject *)ops[1].arr->descr : ops[1].value;
    PyObject *b = ops[2].arr ? (PyObject *)ops[2].arr->descr : ops[2].value;
    if (ops[1].code < GA_NTYPES && !ops[1].arr)
        a = (PyObject *)ga_dtype_from_code(ops[1].code);
    else
        Py_INCREF(a);
    if (ops[2].code < GA_NTYPES && !ops[2].arr)
        b = (PyObject *)ga_dtype_from_code(ops[2].code);
    else
        Py_INCREF(b);
    PyObject *r = PyObject_CallFunctionObjArgs(numpy_result_type, a, b, NULL);
    Py_DECREF(a);
    Py_DECREF(b);
    if (r == NULL)
        return -1;
    *out_code = code_of_dtype_obj(r, "where");
    Py_DECREF(r);
    return *out_code < 0 ? -1 : 0;
}

/* ------------------------------------------------------------ execution -- */

static PyObject *
shape_str(int ndim, const npy_intp *shape)
{
    PyObject *parts = PyList_New(0), *r = NULL;
    if (parts == NULL)
        return NULL;
    for (int i = 0; i < ndim; ++i) {
        PyObject *s = PyUnicode_FromFormat("%zd", shape[i]);
        if (s == NULL || PyList_Append(parts, s) < 0) {
            Py_XDECREF(s);
            goto done;
        }
        Py_DECREF(s);
    }
    PyObject *sep = PyUnicode_FromString(",");
    PyObject *joined = sep ? PyUnicode_Join(sep, parts) : NULL;
    Py_XDECREF(sep);
    if (joined)
        r = PyUnicode_FromFormat(ndim == 1 ? "(%U,)" : "(%U)", joined);
    Py_XDECREF(joined);
done:
    Py_DECREF(parts);
    return r;
}

static void
raise_broadcast_error(const operand *ops, int n)
{
    PyObject *msg = PyUnicode_FromString("operands could not be broadcast together with shapes ");
    for (int i = 0; i < n && msg; ++i) {
        if (!ops[i].arr)
            continue;
        PyObject *s = shape_str(ops[i].arr->ndim, ops[i].arr->shape);
        PyObject *m2 = s ? PyUnicode_FromFormat("%U%U ", msg, s) : NULL;
        Py_XDECREF(s);
        Py_DECREF(msg);
        msg = m2;
    }
    if (msg) {
        PyErr_SetObject(PyExc_ValueError, msg);
        Py_DECREF(msg);
    }
}

/* Broadcast the array operands' shapes; returns ndim or -1. */
static int
broadcast_shapes(const operand *ops, int n, npy_intp *shape)
{
    int nd = 0;
    for (int i = 0; i < n; ++i)
        if (ops[i].arr && ops[i].arr->ndim > nd)
            nd = ops[i].arr->ndim;
    for (int d = 0; d < nd; ++d)
        shape[d] = 1;
    for (int i = 0; i < n; ++i) {
        ga_array *a = ops[i].arr;
        if (!a)
            continue;
        for (int d = 0; d < a->ndim; ++d) {
            npy_intp len = a->shape[d];
            npy_intp *cur = &shape[nd - a->ndim + d];
            if (len == *cur || len == 1)
                continue;
            if (*cur != 1) {
                raise_broadcast_error(ops, n);
                return -1;
            }
            *cur = len;
        }
    }
    return nd;
}

static int
same_shape(const ga_array *a, int nd, const npy_intp *shape)
{
    if (a->ndim != nd)
        return 0;
    for (int d = 0; d < nd; ++d)
        if (a->shape[d] != shape[d])
            return 0;
    return 1;
}

/* Axes of `a` longer than 1: an operand with at most one (a single
 * element, a row or column vector, broadcast or not) has no order of its
 * own, so it takes no part in choosing the result's (NumPy's iterator
 * compares only axes along which an operand moves). */
static int
long_axes(const ga_array *a)
{
    int n = 0;
    for (int d = 0; d < a->ndim; ++d)
        n += a->shape[d] > 1;
    return n;
}

static int
layouts_equal(const ga_array *a, const ga_array *b)
{
    if (a->data != b->data || a->ndim != b->ndim)
        return 0;
    for (int d = 0; d < a->ndim; ++d)
        if (a->shape[d] != b->shape[d] || a->strides[d] != b->strides[d])
            return 0;
    return 1;
}

/* Check out= against the broadcast shape (nd, shape) of the inputs and the
 * result dtype: shapes broadcast to out's without changing it, out is
 * writeable, the result casts to out's dtype under `casting`.  On success
 * (nd, shape) become out's.  0 / -1. */
static int
check_out(const char *fname, const ga_array *out, int *nd, npy_intp *shape,
          PyArray_Descr *result_descr, NPY_CASTING casting)
{
    int ok = out->ndim >= *nd;
    for (int d = 0; ok && d < *nd; ++d)
        ok = out->shape[out->ndim - *nd + d] == shape[d] || shape[d] == 1;
    if (!ok) {
        PyObject *os = shape_str(out->ndim, out->shape), *bs = shape_str(*nd, shape);
        if (os && bs)
            PyErr_Format(PyExc_ValueError, "%s: non-broadcastable output operand with shape "
                         "%U doesn't match the broadcast shape %U", fname, os, bs);
        Py_XDECREF(os);
        Py_XDECREF(bs);
        return -1;
    }
    *nd = out->ndim;
    memcpy(shape, out->shape, out->ndim * sizeof(npy_intp));
    if (!(out->flags & GA_WRITEABLE)) {
        PyErr_Format(PyExc_ValueError, "%s: output array is read-only", fname);
        return -1;
    }
    if (!PyArray_CanCastTypeTo(result_descr, out->descr, casting)) {
        PyErr_Format(PyExc_TypeError, "Cannot cast ufunc '%s' output from %R to %R with "
                     "casting rule '%s'", fname, (PyObject *)result_descr,
                     (PyObject *)out->descr, casting_names[casting]);
        return -1;
    }
    return 0;
}

/* Run an elementwise kernel over `ops` (nin inputs) whose inputs must be of
 * dtype code `in_code` and whose loop output is `loop_out`, into out (may be
 * NULL).  `launch` is a ufunc loop id, or -1 - itemsize for where().
 * Returns the result array (new reference) or NULL. */
static PyObject *
ew_execute(const char *fname, operand *ops, int nin, const int *in_codes, int loop_out,
           PyObject *out_obj, NPY_CASTING casting, int launch)
{
    npy_intp shape[NPY_MAXDIMS];
    ga_array *out = NULL, *result = NULL;
    ga_ew_args args;
    int device = -1;
    cudaStream_t stream;

    for (int i = 0; i < nin; ++i) {
        if (!ops[i].arr)
            continue;
        if (device < 0)
            device = ops[i].arr->device;
        else if (ops[i].arr->device != device) {
            PyErr_Format(PyExc_ValueError, "%s: arrays are on different devices (%d and %d)",
                         fname, device, ops[i].arr->device);
            return NULL;
        }
    }
    if (out_obj != NULL && out_obj != Py_None) {
        if (!ga_array_check(out_obj)) {
            PyErr_Format(PyExc_TypeError, "%s: out must be a gpuarr.ndarray, not %s", fname,
                         Py_TYPE(out_obj)->tp_name);
            return NULL;
        }
        out = (ga_array *)out_obj;
        if (device >= 0 && out->device != device) {
            PyErr_Format(PyExc_ValueError, "%s: out is on device %d and the inputs on device %d",
                         fname, out->device, device);
            return NULL;
        }
        device = out->device;
    }
    if (device < 0)
        device = ga_runtime_current_device();

    int nd = broadcast_shapes(ops, nin, shape);
    if (nd < 0)
        return NULL;
    PyArray_Descr *out_descr = ga_dtype_from_code(loop_out);
    if (out != NULL && check_out(fname, out, &nd, shape, out_descr, casting) < 0)
        goto fail_descr;
    if (ga_runtime_use_device(device) < 0)
        goto fail_descr;
    stream = ga_runtime_device_stream(device);

    /* Inputs in the loop's dtype; scalars as kernel arguments. */
    memset(&args, 0, sizeof(args));
    for (int i = 0; i < nin; ++i) {
        if (ops[i].arr == NULL) {
            if (try_scalar_bytes(&ops[i], in_codes[i], &args.scalar[i]) == -2) {
                PyArray_Descr *d = ga_dtype_from_code(in_codes[i]);
                int rc = ga_scalar_to_bytes(ops[i].value, d, &args.scalar[i]);
                Py_DECREF(d);
                if (rc < 0)
                    goto fail_descr;
            }
            args.scalar_mask |= 1 << i;
        } else if (ops[i].arr->type != in_codes[i]) {
            ga_array *c = ga_array_copy_as(ops[i].arr, ga_dtype_from_code(in_codes[i]), 0);
            if (c == NULL)
                goto fail_descr;
            Py_SETREF(ops[i].arr, c);
        }
    }

    /* The array the kernel writes. */
    int need_tmp = out != NULL && out->type != loop_out;
    for (int i = 0; out && !need_tmp && i < nin; ++i)
        need_tmp = ops[i].arr && ga_array_overlaps(out, ops[i].arr) &&
                   !layouts_equal(out, ops[i].arr);
    if (out == NULL || need_tmp) {
        int fortran = 1, any = 0;
        for (int i = 0; i < nin; ++i) {
            if (!ops[i].arr || long_axes(ops[i].arr) < 2)
                continue;
            any = 1;
            fortran &= same_shape(ops[i].arr, nd, shape) && (ops[i].arr->flags & GA_F_CONTIGUOUS) &&
                       !(ops[i].arr->flags & GA_C_CONTIGUOUS);
        }
        Py_INCREF(out_descr);
        result = ga_array_empty(nd, shape, out_descr, any && fortran, device);
        if (result == NULL)
            goto fail_descr;
    } else {
        result = out;
        Py_INCREF(result);
    }

    /* Layout: contiguous when every array has the full shape and one order,
     * but for single elements broadcast over a larger result (a 0-d device
     * result used as a scalar), which the kernel reads once. */
    npy_intp n = ga_array_size(result);
    int cflag = result->flags & (GA_C_CONTIGUOUS | GA_F_CONTIGUOUS);
    int contiguous = cflag != 0, device_scalars = 0;
    for (int i = 0; i < nin && contiguous; ++i) {
        ga_array *a = ops[i].arr;
        if (!a)
            continue;
        if (n > 1 && ga_array_size(a) == 1) {
            device_scalars |= 1 << i;
            continue;
        }
        contiguous = same_shape(a, nd, shape) &&
                     ((cflag & GA_C_CONTIGUOUS && a->flags & GA_C_CONTIGUOUS) ||
                      (cflag & GA_F_CONTIGUOUS && a->flags & GA_F_CONTIGUOUS));
        if (contiguous && !(cflag & GA_C_CONTIGUOUS && a->flags & GA_C_CONTIGUOUS)) {
            /* F-ordered: the result must be F-ordered too */
            contiguous = (result->flags & GA_F_CONTIGUOUS) != 0;
        }
    }
    args.n = n;
    args.out = result->data;
    for (int i = 0; i < nin; ++i)
        args.in[i] = ops[i].arr ? ops[i].arr->data : NULL;
    if (contiguous) {
        args.contiguous = 1;
        args.scalar_mask |= device_scalars << GA_EW_DEVICE_SCALAR;
    } else {
        npy_intp bstrides[3][NPY_MAXDIMS];
        const npy_intp *st[4];
        ga_kstrides kst[4];
        int map[3], nops = 1;
        st[0] = result->strides;
        for (int i = 0; i < nin; ++i) {
            map[i] = -1;
            if (!ops[i].arr)
                continue;
            if (ga_plan_broadcast_to(ops[i].arr->ndim, ops[i].arr->shape, ops[i].arr->strides,
                                     nd, shape, bstrides[i]) < 0)
                goto fail;
            map[i] = nops;
            st[nops++] = bstrides[i];
        }
        if (ga_plan_collapse(nd, shape, nops, st, &args.shape, kst) < 0)
            goto fail;
        args.out_strides = kst[0];
        for (int i = 0; i < nin; ++i)
            if (map[i] >= 0)
                args.in_strides[i] = kst[map[i]];
    }
    if (n > 0) {
        if (launch >= 0)
            GA_LAUNCH_TRY(ga_launch_ufunc(launch, &args, stream), stream);
        else
            GA_LAUNCH_TRY(ga_launch_where(-1 - launch, &args, stream), stream);
    }
    Py_DECREF(out_descr);
    if (out != NULL && result != out) {
        int rc = ga_assign_array(out, result);
        Py_DECREF(result);
        if (rc < 0)
            return NULL;
        Py_INCREF(out);
        return (PyObject *)out;
    }
    return (PyObject *)result;
fail:
    Py_XDECREF(result);
fail_descr:
    Py_DECREF(out_descr);
    return NULL;
}

/* The loop and result dtype of ufunc `id` for operands `ops`: from the
 * cache, else from NumPy (then cached).  0 / -1. */
static int
ufunc_resolve(int id, const operand *ops, PyArray_Descr *dtype, NPY_CASTING casting, int *loop,
              int *out_code)
{
    int dcode = GA_NO_TYPE;
    if (dtype != NULL && (dcode = ga_dtype_code(dtype, "dtype")) < 0)
        return -1;
    uint64_t key = cache_key(id, infos[id].nin, ops, dcode, casting);
    cache_entry *e = cache_slot(key);
    if (e->key == key) {
        *loop = e->loop;
        *out_code = e->out;
        return 0;
    }
    if (resolve_ufunc(ufuncs[id], ops, dtype, casting, loop, out_code) < 0)
        return -1;
    e->key = key;
    e->loop = *loop;
    e->out = *out_code;
    return 0;
}

static int
operands_init(operand *ops, PyObject *const *inputs, int nin, const char *fname)
{
    for (int i = 0; i < nin; ++i)
        if (operand_init(&ops[i], inputs[i], fname, i) < 0) {
            operands_clear(ops, i);
            return -1;
        }
    return 0;
}

/* NumPy 2 compares an integer array with a Python int beyond the array's
 * type exactly (int8 == 128 is False, uint8 < -1 is False) where arithmetic
 * with it raises OverflowError.  Such a comparison equals one with the
 * type's bound the scalar lies beyond: x == 128 -> x > 127 (never),
 * x != 128 -> x <= 127 (always), x < 128 -> x <= 127, x > 128 -> x > 127,
 * and below the type x == -1 -> x < 0, x > -1 -> x >= 0 and so on.  For a
 * comparison ufunc `*id` whose integer loop reads `in_code`, the array's own
 * type (NumPy's exact comparison is for integer arrays), rewrites *id
 * and the scalar operand (its new value is *bound, owned by the caller).
 * 0 (nothing to do, or rewritten) / -1. */
static int
compare_beyond_range(int *id, operand *ops, int in_code, PyObject **bound)
{
    static const long long lo[] = {[GA_INT8] = INT8_MIN, [GA_INT16] = INT16_MIN,
                                   [GA_INT32] = INT32_MIN, [GA_INT64] = INT64_MIN};
    static const unsigned long long hi[] = {
        [GA_INT8] = INT8_MAX, [GA_INT16] = INT16_MAX, [GA_INT32] = INT32_MAX,
        [GA_INT64] = INT64_MAX, [GA_UINT8] = UINT8_MAX, [GA_UINT16] = UINT16_MAX,
        [GA_UINT32] = UINT32_MAX, [GA_UINT64] = UINT64_MAX};
    /* per comparison, in the order equal .. greater_equal: the operator
     * with the scalar second (x op s), and what x op s becomes against the
     * upper or the lower bound */
    enum { EQ, NE, LT, LE, GT, GE };
    static const int swapped[] = {EQ, NE, GT, GE, LT, LE};
    static const int above[] = {GT, LE, LE, LE, GT, GT};
    static const int below[] = {LT, GE, LT, LT, GE, GE};
    if (*id < GA_UF_equal || *id > GA_UF_greater_equal || in_code < GA_INT8 ||
        in_code > GA_UINT64)
        return 0;
    int s = ops[0].arr == NULL ? 0 : 1;
    if (ops[s].arr != NULL || ops[1 - s].arr == NULL || !PyLong_CheckExact(ops[s].value) ||
        ops[1 - s].arr->type != in_code)
        return 0;                      /* bool == 2**63 overflows int64's loop, as in NumPy */
    /* where the scalar lies against the type, in C: the common call (a
     * scalar that fits) allocates nothing */
    int overflow = 0, gt, lt;
    long long v = PyLong_AsLongLongAndOverflow(ops[s].value, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow > 0 && in_code == GA_UINT64) {
        (void)PyLong_AsUnsignedLongLong(ops[s].value);    /* 2**63 .. 2**64 - 1 fit */
        gt = PyErr_Occurred() != NULL;
        PyErr_Clear();
    } else {
        gt = overflow > 0 || (overflow == 0 && v >= 0 && (unsigned long long)v > hi[in_code]);
    }
    lt = overflow < 0 || (overflow == 0 && v < (in_code <= GA_INT64 ? lo[in_code] : 0));
    if (!(gt || lt))
        return 0;
    *bound = gt ? PyLong_FromUnsignedLongLong(hi[in_code])
                : PyLong_FromLongLong(in_code <= GA_INT64 ? lo[in_code] : 0);
    if (*bound == NULL)
        return -1;
    int op = *id - GA_UF_equal;
    if (s == 0)
        op = swapped[op];              /* s op x  ==  x swapped(op) s */
    op = gt ? above[op] : below[op];
    if (s == 0)
        op = swapped[op];
    *id = GA_UF_equal + op;
    ops[s].value = *bound;
    return 0;
}

/* Apply ufunc `uf` to nin operand objects. */
PyObject *
ga_ufunc_apply(int id, PyObject *const *inputs, PyObject *out, PyArray_Descr *dtype,
               NPY_CASTING casting)
{
    const ufunc_info *info = &infos[id];
    operand ops[3] = {{0}};
    int nin = info->nin, loop, out_code, in_codes[3];
    PyObject *r = NULL, *bound = NULL;
    if (operands_init(ops, inputs, nin, info->name) < 0)
        return NULL;
    if (ufunc_resolve(id, ops, dtype, casting, &loop, &out_code) < 0)
        goto done;
    if (nin == 2 && compare_beyond_range(&id, ops, loops[loop].in, &bound) < 0)
        goto done;
    if (bound != NULL && ufunc_resolve(id, ops, dtype, casting, &loop, &out_code) < 0)
        goto done;                     /* errors keep naming the ufunc called */
    for (int i = 0; i < nin; ++i)
        in_codes[i] = loops[loop].in;
    if (loops[loop].out == out_code) {
        r = ew_execute(info->name, ops, nin, in_codes, out_code, out, casting, loop);
    } else {
        /* A logical op asked for a non-bool result: run the bool loop, then cast. */
        ga_array *tmp = (ga_array *)ew_execute(info->name, ops, nin, in_codes, loops[loop].out,
                                               NULL, casting, loop);
        if (tmp != NULL && out != NULL && out != Py_None) {
            r = ga_assign_array((ga_array *)out, tmp) < 0 ? NULL : out;
            Py_XINCREF(r);
        } else if (tmp != NULL) {
            r = (PyObject *)ga_array_copy_as(tmp, ga_dtype_from_code(out_code), 0);
        }
        Py_XDECREF(tmp);
    }
done:
    operands_clear(ops, nin);
    Py_XDECREF(bound);
    return r;
}

/* The where= mask of a ufunc call as a bool device array: device arrays
 * must be bool already (NumPy's 'safe' rule), sequences and scalars are
 * converted, host NumPy arrays refused. */
static ga_array *
where_mask(PyObject *where, const char *fname)
{
    if (ga_array_check(where)) {
        ga_array *m = (ga_array *)where;
        if (m->type != GA_BOOL) {
            PyErr_Format(PyExc_TypeError, "%s: where= must be a boolean array: cannot cast %R "
                         "to bool with casting rule 'safe'", fname, (PyObject *)m->descr);
            return NULL;
        }
        Py_INCREF(m);
        return m;
    }
    if (PyArray_Check(where))
        return (ga_array *)ga_err_host_array(fname, "where=");
    return (ga_array *)ga_asarray(where, PyArray_DescrFromType(NPY_BOOL), -1, 'K');
}

/* ufunc(*inputs, out=out, where=mask): where mask is True out receives the
 * result, where it is False out keeps its values.  The mask broadcasts with
 * the inputs; out, the dtypes and the devices are checked before any work.
 * The ufunc runs into a temporary, then where(mask, tmp, out) writes out
 * (in place: the kernel reads each element of out before writing it).
 * Without out NumPy leaves the masked-off elements uninitialised (and
 * warns unless out=None is given); here they hold the computed values, and
 * the warning is NumPy's. */
static PyObject *
ufunc_apply_masked(int id, PyObject *const *inputs, PyObject *out_obj, PyArray_Descr *dtype,
                   NPY_CASTING casting, PyObject *where, int out_given)
{
    const ufunc_info *info = &infos[id];
    operand ops[4] = {{0}}, wops[3] = {{0}};
    npy_intp shape[NPY_MAXDIMS];
    int nin = info->nin, loop, out_code, nd, device = -1;
    ga_array *out = NULL, *tmp = NULL;
    PyObject *r = NULL;
    if (out_obj != NULL && !ga_array_check(out_obj)) {
        PyErr_Format(PyExc_TypeError, "%s: out must be a gpuarr.ndarray, not %s", info->name,
                     Py_TYPE(out_obj)->tp_name);
        return NULL;
    }
    out = (ga_array *)out_obj;
    if (operands_init(ops, inputs, nin, info->name) < 0)
        return NULL;
    ops[nin].value = NULL;
    ops[nin].arr = where_mask(where, info->name);
    if (ops[nin].arr == NULL) {
        operands_clear(ops, nin);
        return NULL;
    }
    ops[nin].code = GA_BOOL;
    if (ufunc_resolve(id, ops, dtype, casting, &loop, &out_code) < 0)
        goto done;
    for (int i = 0; i <= nin + (out != NULL); ++i) {
        ga_array *a = i <= nin ? ops[i].arr : out;
        if (a == NULL)
            continue;
        if (device >= 0 && a->device != device) {
            PyErr_Format(PyExc_ValueError, "%s: arrays are on different devices (%d and %d)",
                         info->name, device, a->device);
            goto done;
        }
        device = a->device;
    }
    if ((nd = broadcast_shapes(ops, nin + 1, shape)) < 0)
        goto done;
    if (out != NULL) {
        PyArray_Descr *d = ga_dtype_from_code(out_code);
        int rc = check_out(info->name, out, &nd, shape, d, casting);
        Py_DECREF(d);
        if (rc < 0)
            goto done;
    } else if (!out_given && PyErr_WarnEx(PyExc_UserWarning, "'where' used without 'out', expect "
                            "uninitialized memory in output. If this is intentional, use "
                            "out=None.", 1) < 0) {
        goto done;
    }
    tmp = (ga_array *)ga_ufunc_apply(id, inputs, NULL, dtype, casting);
    if (tmp == NULL)
        goto done;
    if (out == NULL) {
        if (same_shape(tmp, nd, shape)) {
            r = (PyObject *)tmp;
            tmp = NULL;
            goto done;
        }
        Py_INCREF(tmp->descr);
        out = ga_array_empty(nd, shape, tmp->descr, 0, tmp->device);
        if (out != NULL && ga_assign_array(out, tmp) < 0)
            Py_CLEAR(out);
        r = (PyObject *)out;
        goto done;
    }
    int codes[3] = {GA_BOOL, out->type, out->type};
    wops[0] = ops[nin];
    Py_INCREF(wops[0].arr);
    wops[1].arr = tmp;
    wops[1].code = tmp->type;
    tmp = NULL;
    wops[2].arr = out;
    wops[2].code = out->type;
    Py_INCREF(out);
    r = ew_execute(info->name, wops, 3, codes, out->type, (PyObject *)out, NPY_UNSAFE_CASTING,
                   -1 - ga_array_itemsize(out));
    operands_clear(wops, 3);
done:
    Py_XDECREF(tmp);
    operands_clear(ops, nin + 1);
    return r;
}

PyObject *
ga_ufunc_call2(int id, PyObject *a, PyObject *b)
{
    PyObject *in[2] = {a, b};
    return ga_ufunc_apply(id, in, NULL, NULL, NPY_SAME_KIND_CASTING);
}

PyObject *
ga_ufunc_call1(int id, PyObject *a)
{
    return ga_ufunc_apply(id, &a, NULL, NULL, NPY_SAME_KIND_CASTING);
}

/* where(condition, x, y) */
static PyObject *
py_where(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    operand ops[3] = {{0}};
    int out_code, in_codes[3];
    PyObject *r = NULL;
    if (ga_try_function_override("where", args, nargs, 3, NULL, &r) == 0)
        return r;
    if (nargs == 1) {
        PyObject *nz = ga_helper("nonzero");
        return nz ? PyObject_CallOneArg(nz, args[0]) : NULL;
    }
    if (nargs != 3) {
        PyErr_SetString(PyExc_ValueError, "either both or neither of x and y should be given");
        return NULL;
    }
    for (int i = 0; i < 3; ++i)
        if (operand_init(&ops[i], args[i], "where", i) < 0) {
            operands_clear(ops, i);
            return NULL;
        }
    uint64_t key = cache_key(GA_NUFUNCS, 3, ops, GA_NO_TYPE, 0);
    cache_entry *e = cache_slot(key);
    if (e->key == key) {
        out_code = e->out;
    } else {
        if (resolve_where(ops, &out_code) < 0)
            goto done;
        e->key = key;
        e->out = out_code;
        e->loop = -1;
    }
    in_codes[0] = GA_BOOL;
    in_codes[1] = in_codes[2] = out_code;
    {
        PyArray_Descr *d = ga_dtype_from_code(out_code);
        int itemsize = (int)PyDataType_ELSIZE(d);
        Py_DECREF(d);
        r = ew_execute("where", ops, 3, in_codes, out_code, NULL, NPY_UNSAFE_CASTING, -1 - itemsize);
    }
done:
    operands_clear(ops, 3);
    return r;
}

/* ------------------------------------------------------------ ufunc type - */

static int
parse_casting(PyObject *obj, NPY_CASTING *out)
{
    const char *s = obj && PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    for (int i = 0; s && i < 5; ++i)
        if (strcmp(s, casting_names[i]) == 0) {
            *out = (NPY_CASTING)i;
            return 0;
        }
    PyErr_Format(PyExc_ValueError, "casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
                 "or 'unsafe' (got %R)", obj);
    return -1;
}

static PyObject *
ufunc_vectorcall(ga_ufunc *uf, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    const ufunc_info *info = &infos[uf->id];
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *out = NULL;
    PyArray_Descr *dtype = NULL;
    NPY_CASTING casting = NPY_SAME_KIND_CASTING;
    PyObject *r = NULL, *where = NULL;
    if (ga_try_ufunc_override((PyObject *)uf, args, nargsf, kwnames, &r) == 0)
        return r;
    if (nargs < info->nin || nargs > info->nin + 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes from %d to %d positional arguments but %zd "
                     "were given", info->name, info->nin, info->nin + 1, nargs);
        return NULL;
    }
    if (nargs == info->nin + 1)
        out = args[info->nin];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; ++k) {
        const char *name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
        PyObject *v = args[nargs + k];
        if (name == NULL)
            goto done;
        if (strcmp(name, "out") == 0) {
            if (out != NULL) {
                PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument 'out'",
                             info->name);
                goto done;
            }
            out = v;
            if (PyTuple_Check(out)) {
                if (PyTuple_GET_SIZE(out) != 1) {
                    PyErr_Format(PyExc_ValueError, "%s: out must be a tuple of length 1",
                                 info->name);
                    goto done;
                }
                out = PyTuple_GET_ITEM(out, 0);
            }
        } else if (strcmp(name, "dtype") == 0) {
            if (v != Py_None && (dtype = ga_dtype_converter_or(v, NULL, "dtype")) == NULL)
                goto done;
        } else if (strcmp(name, "casting") == 0) {
            if (parse_casting(v, &casting) < 0)
                goto done;
        } else if (strcmp(name, "where") == 0) {
            where = v == Py_True ? NULL : v;
        } else if (strcmp(name, "subok") == 0 || strcmp(name, "order") == 0) {
            continue;
        } else {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%s'",
                         info->name, name);
            goto done;
        }
    }
    if (where != NULL)
        r = ufunc_apply_masked(uf->id, args, out == Py_None ? NULL : out, dtype, casting, where,
                               out != NULL);
    else
        r = ga_ufunc_apply(uf->id, args, out == Py_None ? NULL : out, dtype, casting);
done:
    Py_XDECREF(dtype);
    return r;
}

static PyObject *
ufunc_call(ga_ufunc *uf, PyObject *args, PyObject *kwds)
{
    return PyVectorcall_Call((PyObject *)uf, args, kwds);
}

static void
ufunc_dealloc(ga_ufunc *uf)
{
    Py_XDECREF(uf->np_ufunc);
    Py_TYPE(uf)->tp_free((PyObject *)uf);
}

static PyObject *
ufunc_repr(ga_ufunc *uf)
{
    return PyUnicode_FromFormat("<ufunc '%s'>", infos[uf->id].name);
}

static PyObject *ufunc_name(ga_ufunc *uf, void *c) { return PyUnicode_FromString(infos[uf->id].name); }
static PyObject *ufunc_nin(ga_ufunc *uf, void *c) { return PyLong_FromLong(infos[uf->id].nin); }
static PyObject *ufunc_nout(ga_ufunc *uf, void *c) { return PyLong_FromLong(1); }
static PyObject *ufunc_nargs(ga_ufunc *uf, void *c) { return PyLong_FromLong(infos[uf->id].nin + 1); }
static PyObject *ufunc_doc(ga_ufunc *uf, void *c) { return PyObject_GetAttrString(uf->np_ufunc, "__doc__"); }

static PyObject *
ufunc_types(ga_ufunc *uf, void *c)
{
    PyObject *list = PyList_New(0);
    for (int l = 0; list && l < GA_NLOOPS; ++l) {
        if (loops[l].ufunc != uf->id)
            continue;
        PyArray_Descr *din = ga_dtype_from_code(loops[l].in), *dout = ga_dtype_from_code(loops[l].out);
        char buf[8];
        int k = 0;
        for (int i = 0; i < infos[uf->id].nin; ++i)
            buf[k++] = din->type;
        buf[k++] = '-';
        buf[k++] = '>';
        buf[k++] = dout->type;
        Py_DECREF(din);
        Py_DECREF(dout);
        PyObject *s = PyUnicode_FromStringAndSize(buf, k);
        if (s == NULL || PyList_Append(list, s) < 0)
            Py_CLEAR(list);
        Py_XDECREF(s);
    }
    return list;
}

/* ufunc.outer / reduce / accumulate: Python helpers registered by
 * gpuarr/_ufuncs.py ("ufunc.<method>"), called with the ufunc first. */
static PyObject *
ufunc_outer(ga_ufunc *uf, PyObject *args, PyObject *kwds)
{
    return ga_forward_method("ufunc.outer", (PyObject *)uf, args, kwds);
}

static PyObject *
ufunc_reduce(ga_ufunc *uf, PyObject *args, PyObject *kwds)
{
    return ga_forward_method("ufunc.reduce", (PyObject *)uf, args, kwds);
}

static PyObject *
ufunc_accumulate(ga_ufunc *uf, PyObject *args, PyObject *kwds)
{
    return ga_forward_method("ufunc.accumulate", (PyObject *)uf, args, kwds);
}

static PyMethodDef ufunc_methods[] = {
    {"outer", (PyCFunction)(void (*)(void))ufunc_outer, METH_VARARGS | METH_KEYWORDS,
     "outer($self, A, B, /, **kwargs)\n--\n\n"
     "The ufunc over all pairs: ufunc(A[..., None, ...], B) (binary ufuncs)."},
    {"reduce", (PyCFunction)(void (*)(void))ufunc_reduce, METH_VARARGS | METH_KEYWORDS,
     "reduce($self, /, array, axis=0, dtype=None, out=None, keepdims=False)\n--\n\n"
     "Reduce along axis: add, multiply, maximum, minimum, logical_and, logical_or (gpuarr's "
     "reductions); initial= and where=True are taken as NumPy takes them."},
    {"accumulate", (PyCFunction)(void (*)(void))ufunc_accumulate, METH_VARARGS | METH_KEYWORDS,
     "accumulate($self, /, array, axis=0, dtype=None, out=None)\n--\n\n"
     "Running reduction along axis: add and multiply (cumsum, cumprod)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ufunc_getset[] = {
    {"__name__", (getter)ufunc_name, NULL, NULL, NULL},
    {"nin", (getter)ufunc_nin, NULL, "Number of inputs.", NULL},
    {"nout", (getter)ufunc_nout, NULL, "Number of outputs.", NULL},
    {"nargs", (getter)ufunc_nargs, NULL, "Number of arguments.", NULL},
    {"types", (getter)ufunc_types, NULL, "The loops compiled for the GPU, as 'ff->f'.", NULL},
    {"__doc__", (getter)ufunc_doc, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject UfuncType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuarr.ufunc",
    .tp_basicsize = sizeof(ga_ufunc),
    .tp_dealloc = (destructor)ufunc_dealloc,
    .tp_vectorcall_offset = offsetof(ga_ufunc, vectorcall),
    .tp_call = (ternaryfunc)ufunc_call,
    .tp_repr = (reprfunc)ufunc_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_getset = ufunc_getset,
    .tp_methods = ufunc_methods,
};

static PyMethodDef elementwise_functions[] = {
    {"where", (PyCFunction)(void (*)(void))py_where, METH_FASTCALL,
     "where($module, condition, x, y, /)\n--\n\n"
     "Elements of x where condition is true, else of y, broadcasting all three (NumPy's result "
     "dtype); where(condition) alone is nonzero(condition)."},
    {NULL, NULL, 0, NULL},
};

int
ga_elementwise_init(PyObject *m)
{
    PyObject *np = NULL, *umath = NULL, *dict = NULL;
    if (PyType_Ready(&UfuncType) < 0 || PyModule_AddFunctions(m, elementwise_functions) < 0)
        return -1;
    np = PyImport_ImportModule("numpy");
    umath = np ? PyImport_ImportModule("numpy._core.umath") : NULL;
    dict = PyDict_New();
    if (umath == NULL || dict == NULL)
        goto fail;
    numpy_result_type = PyObject_GetAttrString(np, "result_type");
    if (numpy_result_type == NULL)
        goto fail;
    for (int id = 0; id < GA_NUFUNCS; ++id) {
        ga_ufunc *uf = PyObject_New(ga_ufunc, &UfuncType);
        if (uf == NULL)
            goto fail;
        uf->vectorcall = (vectorcallfunc)ufunc_vectorcall;
        uf->id = id;
        uf->np_ufunc = PyObject_GetAttrString(umath, infos[id].name);
        if (uf->np_ufunc == NULL || PyDict_SetItemString(dict, infos[id].name, (PyObject *)uf) < 0) {
            Py_DECREF(uf);
            goto fail;
        }
        ufuncs[id] = uf;  /* the dict keeps it alive */
        Py_DECREF(uf);
    }
    if (PyModule_AddObjectRef(m, "ufuncs", dict) < 0)
        goto fail;
    Py_DECREF(dict);
    Py_DECREF(umath);
    Py_DECREF(np);
    return 0;
fail:
    Py_XDECREF(dict);
    Py_XDECREF(umath);
    Py_XDECREF(np);
    return -1;
}
