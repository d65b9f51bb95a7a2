/*
 * mapping.c -- indexing: a[index] and a[index] = value.
 *
 * Basic indexing (integers, slices with any step, Ellipsis, None, 0-d
 * integer device arrays) makes a view: only shape, strides and the data
 * pointer change, nothing runs on the device.  Indices holding integer or
 * boolean arrays go to advanced indexing (select.c).  Indexing every dimension
 * with an integer gives a 0-d device array (not a host scalar: reading it
 * would synchronise).  Assignment indexes the same way, then writes through
 * the view from a scalar, a host array or a device array, broadcasting.
 */
#include "gpuarr.h"

enum { IDX_INT, IDX_SLICE, IDX_NEWAXIS, IDX_ELLIPSIS };

typedef struct {
    int kind;
    npy_intp value;     /* IDX_INT */
    PyObject *slice;    /* IDX_SLICE, borrowed */
} index_item;

static int
is_integer_index(PyObject *obj, npy_intp *value)
{
    if (PyLong_CheckExact(obj)) {
        *value = PyNumber_AsSsize_t(obj, PyExc_IndexError);
        return *value == -1 && PyErr_Occurred() ? -1 : 1;
    }
    if (PyBool_Check(obj))
        return 0;
    if (ga_array_check(obj)) {
        ga_array *a = (ga_array *)obj;
        if (a->ndim != 0 || a->descr->kind == 'b' || a->descr->kind == 'f' || a->descr->kind == 'c')
            return 0;
    } else if (PyArray_Check(obj) || !PyIndex_Check(obj)) {
        return 0;
    }
    *value = PyNumber_AsSsize_t(obj, PyExc_IndexError);
    return *value == -1 && PyErr_Occurred() ? -1 : 1;
}

/* Split an index into items; returns the count, or -1. */
static int
parse_index(PyObject *index, index_item *items)
{
    PyObject *tuple = PyTuple_Check(index) ? index : NULL;
    Py_ssize_t n = tuple ? PyTuple_GET_SIZE(tuple) : 1;
    int ellipsis = 0;
    if (n > 2 * NPY_MAXDIMS) {
        PyErr_SetString(PyExc_IndexError, "too many indices for array");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *obj = tuple ? PyTuple_GET_ITEM(tuple, i) : index;
        int r;
        if (obj == Py_None) {
            items[i].kind = IDX_NEWAXIS;
        } else if (obj == Py_Ellipsis) {
            if (ellipsis++) {
                PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')");
                return -1;
            }
            items[i].kind = IDX_ELLIPSIS;
        } else if (PySlice_Check(obj)) {
            items[i].kind = IDX_SLICE;
            items[i].slice = obj;
        } else if ((r = is_integer_index(obj, &items[i].value)) != 0) {
            if (r < 0)
                return -1;
            items[i].kind = IDX_INT;
        } else if (ga_array_check(obj) || PyArray_Check(obj) || PyList_Check(obj)) {
            PyErr_SetString(PyExc_IndexError,
                            "arrays used as indices must be of integer (or boolean) type");
            return -1;
        } else {
            PyErr_SetString(PyExc_IndexError,
                            "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
                            "and integer or boolean arrays are valid indices");
            return -1;
        }
    }
    return (int)n;
}

/* The view selected by a basic index. */
static ga_array *
array_subscript_view(ga_array *a, PyObject *index)
{
    index_item items[2 * NPY_MAXDIMS];
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    int n = parse_index(index, items);
    if (n < 0)
        return NULL;
    int consumed = 0, newaxes = 0;
    for (int i = 0; i < n; ++i) {
        consumed += items[i].kind == IDX_INT || items[i].kind == IDX_SLICE;
        newaxes += items[i].kind == IDX_NEWAXIS;
    }
    if (consumed > a->ndim) {
        PyErr_Format(PyExc_IndexError, "too many indices for array: array is %d-dimensional, "
                     "but %d were indexed", a->ndim, consumed);
        return NULL;
    }
    if (a->ndim - consumed + newaxes > NPY_MAXDIMS) {
        PyErr_SetString(PyExc_IndexError, "number of dimensions must be within limits");
        return NULL;
    }
    char *data = a->data;
    int in = 0, out = 0;
    for (int i = 0; i < n; ++i) {
        switch (items[i].kind) {
        case IDX_NEWAXIS:
            shape[out] = 1;
            strides[out++] = 0;
            break;
        case IDX_ELLIPSIS:
            for (int k = 0; k < a->ndim - consumed; ++k, ++in, ++out) {
                shape[out] = a->shape[in];
                strides[out] = a->strides[in];
            }
            break;
        case IDX_INT: {
            npy_intp v = items[i].value, len = a->shape[in];
            if (v < -len || v >= len) {
                PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for axis %d with "
                             "size %zd", v, in, len);
                return NULL;
            }
            if (v < 0)
                v += len;
            data += v * a->strides[in++];
            break;
        }
        case IDX_SLICE: {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(items[i].slice, &start, &stop, &step) < 0)
                return NULL;
            npy_intp len = PySlice_AdjustIndices(a->shape[in], &start, &stop, step);
            if (len > 0)
                data += start * a->strides[in];
            shape[out] = len;
            strides[out++] = a->strides[in++] * step;
            break;
        }
        }
    }
    for (; in < a->ndim; ++in, ++out) {
        shape[out] = a->shape[in];
        strides[out] = a->strides[in];
    }
    Py_INCREF(a->descr);
    return ga_array_view((PyObject *)a, data, out, shape, strides, a->descr, a->device,
                         a->flags & GA_WRITEABLE);
}

static PyObject *
array_subscript(ga_array *a, PyObject *index)
{
    if (ga_index_is_advanced(index))
        return ga_advindex_get(a, index);
    return (PyObject *)array_subscript_view(a, index);
}

PyObject *
ga_array_item(ga_array *a, Py_ssize_t i)
{
    if (a->ndim == 0) {
        PyErr_SetString(PyExc_IndexError, "too many indices for array: array is 0-dimensional, "
                        "but 1 were indexed");
        return NULL;
    }
    if (i < 0 || i >= a->shape[0]) {
        /* PySeqIter relies on IndexError at the end; negative i was
         * already adjusted by the sequence protocol. */
        PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for axis 0 with size %zd",
                     i, a->shape[0]);
        return NULL;
    }
    Py_INCREF(a->descr);
    return (PyObject *)ga_array_view((PyObject *)a, a->data + i * a->strides[0], a->ndim - 1,
                                     a->shape + 1, a->strides + 1, a->descr, a->device,
                                     a->flags & GA_WRITEABLE);
}

/* Write `value` into `dst`: a device array, a scalar, or anything NumPy
 * turns into an array (moved to the device first). */
int
ga_assign_value(ga_array *dst, PyObject *value)
{
    if (ga_array_check(value))
        return ga_assign_array(dst, (ga_array *)value);
    if (PyLong_Check(value) || PyFloat_Check(value) || PyComplex_Check(value) ||
        PyBool_Check(value) || PyArray_IsScalar(value, Generic)) {
        return ga_assign_scalar(dst, value);
    }
    if (!(dst->flags & GA_WRITEABLE)) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return -1;
    }
    Py_INCREF(dst->descr);
    PyObject *src = ga_asarray(value, dst->descr, -1, 'K');
    if (src == NULL)
        return -1;
    int rc = ga_assign_array(dst, (ga_array *)src);
    Py_DECREF(src);
    return rc;
}

static int
array_ass_subscript(ga_array *a, PyObject *index, PyObject *value)
{
    if (value == NULL) {
        PyErr_SetString(PyExc_ValueError, "cannot delete array elements");
        return -1;
    }
    if (!(a->flags & GA_WRITEABLE)) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return -1;
    }
    if (ga_index_is_advanced(index))
        return ga_advindex_set(a, index, value);
    ga_array *view = array_subscript_view(a, index);
    if (view == NULL)
        return -1;
    int rc = ga_assign_value(view, value);
    Py_DECREF(view);
    return rc;
}

static Py_ssize_t
array_mp_length(ga_array *self)
{
    if (self->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of unsized object");
        return -1;
    }
    return self->shape[0];
}

PyMappingMethods ga_array_as_mapping = {
    .mp_length = (lenfunc)array_mp_length,
    .mp_subscript = (binaryfunc)array_subscript,
    .mp_ass_subscript = (objobjargproc)array_ass_subscript,
};

int
ga_mapping_init(PyObject *m)
{
    return 0;
}
