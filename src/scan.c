/*
 * scan.c -- cumsum and cumprod (NumPy's add.accumulate and
 * multiply.accumulate along an axis), as module functions and ndarray
 * methods.
 *
 * Planning, all host-side:
 *
 * 1. Arguments as NumPy's: axis None (the flattened array, C order) or an
 *    int (AxisError when out of range; a tuple is a TypeError), dtype=, out=
 *    (a device array of the result's shape, any dtype: the result is cast
 *    into it, as NumPy's out= does).
 * 2. The result dtype is NumPy's own (np.cumsum of a one-element array of
 *    that dtype with that dtype=, asked once per combination through the
 *    helper reduce_result_dtype and cached): integers narrower than int64
 *    and bool accumulate in int64, the rest in their own type.
 * 3. The kernels (scan.cu) scan the middle axis of a C-contiguous (outer,
 *    n, inner) array: the dims before the scan axis collapse into outer,
 *    those after it into inner (axis=None: the flattened array, one row).
 *    A C-contiguous input in the result dtype is read where it is and the
 *    scan written to a fresh array; any other is copied once, converted and
 *    in C order, and scanned in place.  Either way the result is C-ordered,
 *    with no transposition.
 *
 * Results never alias the input; out= is written only after the scan, so a
 * failed validation leaves it as it was.
 */
#include "gpuarr.h"

/* NumPy's result dtype code of cumsum (op 0) / cumprod (op 1) for
 * (input, dtype=) as code + 1, 0 until asked; index GA_NTYPES: no dtype=. */
static signed char scan_dtype_cache[2][GA_NTYPES][GA_NTYPES + 1];

static const char *const scan_names[2] = {"cumsum", "cumprod"};

static int
scan_result_dtype(int op, int in_code, int dcode)
{
    signed char *slot = &scan_dtype_cache[op][in_code][dcode];
    if (*slot > 0)
        return *slot - 1;
    PyObject *helper = ga_helper("reduce_result_dtype");
    if (helper == NULL)
        return -1;
    PyObject *in = (PyObject *)ga_dtype_from_code(in_code);
    PyObject *dt = dcode < GA_NTYPES ? (PyObject *)ga_dtype_from_code(dcode) : Py_NewRef(Py_None);
    PyObject *r = NULL;
    if (in && dt)
        r = PyObject_CallFunction(helper, "sOOO", scan_names[op], in, dt, Py_None);
    Py_XDECREF(in);
    Py_XDECREF(dt);
    if (r == NULL)
        return -1;
    int code = PyArray_DescrCheck(r) ? ga_dtype_code((PyArray_Descr *)r, scan_names[op]) : -1;
    if (code < 0 && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "%s: NumPy resolved a non-dtype %R", scan_names[op], r);
    Py_DECREF(r);
    if (code < 0)
        return -1;
    *slot = (signed char)(code + 1);
    return code;
}

static PyObject *
scan_impl(int op, PyObject *a_obj, PyObject *axis_obj, PyObject *dtype_obj, PyObject *out_obj)
{
    const char *name = scan_names[op];
    ga_array *a = NULL, *view = NULL, *res = NULL, *out = NULL;
    PyArray_Descr *dtype = NULL;
    void *tmp = NULL;
    size_t tmp_bytes = 0;
    cudaStream_t stream = NULL;
    int axis = -1;

    if (out_obj != NULL && out_obj != Py_None) {
        if (!ga_array_check(out_obj)) {
            PyErr_Format(PyExc_TypeError, "%s: out must be a gpuarr.ndarray, not %s", name,
                         Py_TYPE(out_obj)->tp_name);
            return NULL;
        }
        out = (ga_array *)out_obj;
    }
    if (ga_array_check(a_obj)) {
        a = (ga_array *)Py_NewRef(a_obj);
    } else if (PyArray_Check(a_obj)) {
        return ga_err_host_array(name, "the argument");
    } else if ((a = (ga_array *)ga_asarray(a_obj, NULL, -1, 'K')) == NULL) {
        return NULL;
    }
    if (axis_obj != NULL && axis_obj != Py_None) {
        /* as NumPy's accumulate, a 0-d input takes axis 0 or -1 (a 1-d result) */
        if (ga_normalize_axis(axis_obj, a->ndim > 0 ? a->ndim : 1, &axis) < 0)
            goto fail;
        if (a->ndim == 0)
            axis = -1;
    }
    if (dtype_obj != NULL && dtype_obj != Py_None &&
        (dtype = ga_dtype_converter_or(dtype_obj, NULL, "dtype")) == NULL)
        goto fail;
    int dcode = dtype ? ga_dtype_code(dtype, "dtype") : GA_NTYPES;
    if (dcode < 0)
        goto fail;
    int rt = scan_result_dtype(op, a->type, dcode);
    if (rt < 0)
        goto fail;

    /* the result's shape: a's, or the flattened size */
    npy_intp size = ga_array_size(a);
    int rnd = axis < 0 ? 1 : a->ndim;
    const npy_intp *rshape = axis < 0 ? &size : a->shape;
    if (out != NULL) {
        int same = out->ndim == rnd;
        for (int i = 0; same && i < rnd; ++i)
            same = out->shape[i] == rshape[i];
        if (!same) {
            PyObject *got = ga_shape_tuple(out->ndim, out->shape);
            PyObject *want = ga_shape_tuple(rnd, rshape);
            if (got && want)
                PyErr_Format(PyExc_ValueError, "%s: out has shape %R, but the result has shape %R",
                             name, got, want);
            Py_XDECREF(got);
            Py_XDECREF(want);
            goto fail;
        }
        if (!(out->flags & GA_WRITEABLE)) {
            PyErr_Format(PyExc_ValueError, "%s: output array is read-only", name);
            goto fail;
        }
        if (out->device != a->device) {
            PyErr_Format(PyExc_ValueError, "%s: out is on device %d and the input on device %d",
                         name, out->device, a->device);
            goto fail;
        }
    }

    /* (outer, n, inner) in C order, in the result dtype */
    if (axis < 0) {
        npy_intp dims[1] = {-1};
        view = (ga_array *)ga_array_reshape(a, 1, dims, 'C');
    } else {
        view = (ga_array *)Py_NewRef(a);
    }
    if (view == NULL)
        goto fail;
    const int k = axis < 0 ? 0 : axis;
    npy_intp outer = 1, inner = 1;
    for (int i = 0; i < view->ndim; ++i) {
        if (i < k)
            outer *= view->shape[i];
        else if (i > k)
            inner *= view->shape[i];
    }
    const npy_intp n = view->shape[k];
    const ga_array *src;
    if (view->type == rt && (view->flags & GA_C_CONTIGUOUS)) {
        src = view;
        res = ga_array_empty(view->ndim, view->shape, ga_dtype_from_code(rt), 0, a->device);
    } else {
        res = ga_array_copy_as(view, ga_dtype_from_code(rt), 0);
        src = res;
    }
    if (res == NULL)
        goto fail;
    if (size > 0) {
        if (ga_runtime_use_device(a->device) < 0)
            goto fail;
        stream = ga_runtime_device_stream(a->device);
        tmp_bytes = ga_scan_tmp_bytes(ga_array_itemsize(res), outer, n, inner);
        if (tmp_bytes > 0) {
            int failed;
            tmp = ga_pool_malloc(a->device, tmp_bytes, stream, &failed);
            if (failed)
                goto fail;
        }
        GA_LAUNCH_TRY(ga_launch_scan((ga_type)rt, op == 0 ? GA_SCAN_ADD : GA_SCAN_MUL, src->data,
                                     res->data, outer, n, inner, tmp, stream), stream);
    }
    if (out != NULL) {
        if (ga_assign_array(out, res) < 0)
            goto fail;
        Py_SETREF(res, (ga_array *)Py_NewRef(out));
    }
    if (tmp != NULL)
        ga_pool_free(a->device, tmp, tmp_bytes, stream);
    Py_DECREF(view);
    Py_DECREF(a);
    Py_XDECREF(dtype);
    return (PyObject *)res;
fail:
    if (tmp != NULL)
        ga_pool_free(a->device, tmp, tmp_bytes, stream);
    Py_XDECREF(res);
    Py_XDECREF(view);
    Py_XDECREF(a);
    Py_XDECREF(dtype);
    return NULL;
}

/* ------------------------------------------------------------- Python --- */

static PyObject *
scan_call(int op, PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *fn_kw[] = {"a", "axis", "dtype", "out", NULL};
    static char *method_kw[] = {"axis", "dtype", "out", NULL};
    PyObject *a = self, *axis = NULL, *dtype = NULL, *out = NULL;
    int ok = self == NULL
        ? PyArg_ParseTupleAndKeywords(args, kwds, op ? "O|OOO:cumprod" : "O|OOO:cumsum", fn_kw,
                                      &a, &axis, &dtype, &out)
        : PyArg_ParseTupleAndKeywords(args, kwds, op ? "|OOO:cumprod" : "|OOO:cumsum",
                                      method_kw, &axis, &dtype, &out);
    if (!ok)
        return NULL;
    return scan_impl(op, a, axis, dtype, out);
}

static PyObject *
py_cumsum(PyObject *m, PyObject *args, PyObject *kwds)
{
    return scan_call(0, NULL, args, kwds);
}

static PyObject *
py_cumprod(PyObject *m, PyObject *args, PyObject *kwds)
{
    return scan_call(1, NULL, args, kwds);
}

PyObject *
ga_array_cumsum(PyObject *self, PyObject *args, PyObject *kwds)
{
    return scan_call(0, self, args, kwds);
}

PyObject *
ga_array_cumprod(PyObject *self, PyObject *args, PyObject *kwds)
{
    return scan_call(1, self, args, kwds);
}

static PyMethodDef scan_functions[] = {
    {"cumsum", (PyCFunction)(void (*)(void))py_cumsum, METH_VARARGS | METH_KEYWORDS,
     "cumsum($module, /, a, axis=None, dtype=None, out=None)\n--\n\n"
     "Cumulative sum along an axis (of the flattened array for axis=None); NumPy's result dtype."},
    {"cumprod", (PyCFunction)(void (*)(void))py_cumprod, METH_VARARGS | METH_KEYWORDS,
     "cumprod($module, /, a, axis=None, dtype=None, out=None)\n--\n\n"
     "Cumulative product along an axis (of the flattened array for axis=None); NumPy's result "
     "dtype."},
    {NULL, NULL, 0, NULL},
};

int
ga_scan_init(PyObject *m)
{
    return PyModule_AddFunctions(m, scan_functions);
}
