/*
 * mapping.c -- indexing: a[index] and a[index] = value, and the sequence
 * slots len(a) and a[i].
 *
 * Basic indexing (integers, slices with any step, Ellipsis, None, 0-d
 * integer device arrays) makes a view: only shape, strides and the data
 * pointer change, nothing runs on the device.  Indexing every dimension
 * with an integer gives a 0-d device array (not a host scalar: reading it
 * would synchronise).  Assignment indexes the same way, then writes through
 * the view from a scalar, a host array or a device array, broadcasting.
 *
 * Advanced indexing
 * -----------------
 * An index holding integer or boolean arrays is split the way NumPy
 * defines it: boolean arrays become the integer arrays of their nonzero(),
 * the basic items (integers, slices, None, Ellipsis) make a view in which
 * each array-indexed axis is kept whole, and one gather or scatter
 * (take.cu) walks the result: the broadcast shape of the index arrays
 * replaces the indexed axes where they are adjacent in the index (integers
 * count as array indices here), and goes first otherwise.  Which value
 * lands when a scatter repeats an index is unspecified (NumPy: the last).
 *
 * The gather and scatter are take.c's plan; a boolean mask of the array's
 * shape is one compaction (compact.c), or with a scalar value one masked
 * fill, no synchronisation.
 */
#include "gpuarr.h"

#include <string.h>

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

/* ------------------------------------------------- advanced indexing ---- */

enum { ITEM_BASIC, ITEM_INT, ITEM_ARRAY, ITEM_HOST, ITEM_MASK, ITEM_HOST_MASK, ITEM_BOOL0 };

static int
is_bool_scalar(PyObject *obj)
{
    return PyBool_Check(obj) || PyArray_IsScalar(obj, Bool) ||
           (PyArray_Check(obj) && PyArray_NDIM((PyArrayObject *)obj) == 0 &&
            PyArray_ISBOOL((PyArrayObject *)obj));
}

/* The kind of one index item.  Host array-likes (NumPy arrays, lists,
 * nested tuples) are converted into *host (a new reference). */
static int
classify_item(PyObject *obj, PyArrayObject **host)
{
    *host = NULL;
    if (obj == Py_None || obj == Py_Ellipsis || PySlice_Check(obj))
        return ITEM_BASIC;
    if (is_bool_scalar(obj))
        return ITEM_BOOL0;
    if (ga_array_check(obj)) {
        ga_array *a = (ga_array *)obj;
        if (a->descr->kind == 'b')
            return a->ndim == 0 ? ITEM_BOOL0 : ITEM_MASK;
        if (a->ndim == 0 && (a->descr->kind == 'i' || a->descr->kind == 'u'))
            return ITEM_INT;
        return ITEM_ARRAY;
    }
    if (PyArray_Check(obj) || PyList_Check(obj) || PyTuple_Check(obj)) {
        PyArrayObject *h = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
        if (h == NULL)
            return -1;
        if (PyArray_NDIM(h) == 0 && PyArray_ISINTEGER(h)) {
            Py_DECREF(h);
            return ITEM_INT;
        }
        *host = h;
        return PyArray_ISBOOL(h) ? ITEM_HOST_MASK : ITEM_HOST;
    }
    if (PyIndex_Check(obj))
        return ITEM_INT;
    return ITEM_BASIC;
}

static int
index_is_advanced(PyObject *index)
{
    PyObject *tuple = PyTuple_Check(index) ? index : NULL;
    Py_ssize_t n = tuple ? PyTuple_GET_SIZE(tuple) : 1;
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *obj = tuple ? PyTuple_GET_ITEM(tuple, i) : index;
        if (is_bool_scalar(obj) || PyArray_Check(obj) || PyList_Check(obj) ||
            PyTuple_Check(obj))
            return 1;
        if (ga_array_check(obj)) {
            ga_array *a = (ga_array *)obj;
            if (a->ndim > 0 || (a->descr->kind != 'i' && a->descr->kind != 'u'))
                return 1;
        }
    }
    return 0;
}

/* The dims a mask must match, checked as NumPy words it. */
static int
mask_matches(const npy_intp *mshape, int mdim, ga_array *a, int at)
{
    if (at + mdim > a->ndim) {
        PyErr_Format(PyExc_IndexError, "too many indices for array: array is %d-dimensional, "
                     "but %d were indexed", a->ndim, at + mdim);
        return -1;
    }
    for (int d = 0; d < mdim; ++d)
        if (mshape[d] != a->shape[at + d]) {
            PyErr_Format(PyExc_IndexError, "boolean index did not match indexed array along "
                         "axis %d; size of axis is %zd but size of corresponding boolean axis "
                         "is %zd", at + d, a->shape[at + d], mshape[d]);
            return -1;
        }
    return 0;
}

/* Build the plan for a[index]: the view, its index arrays and where the
 * broadcast dims go.  0 / -1. */
static int
plan_from_index(ga_array *a, PyObject *index, ga_take_plan *p)
{
    PyObject *items = PyTuple_Check(index) ? index : NULL;
    Py_ssize_t n = items ? PyTuple_GET_SIZE(items) : 1;
    int kinds[2 * NPY_MAXDIMS];
    PyArrayObject *hosts[2 * NPY_MAXDIMS];
    PyObject *basic = NULL, *slice_all = NULL;
    /* index arrays waiting for the view: new references */
    PyObject *pend[GA_TAKE_MAX];
    int pend_axis[GA_TAKE_MAX], pend_orig[GA_TAKE_MAX], pend_checked[GA_TAKE_MAX];
    int npend = 0, nhosts = 0, rc = -1;

    memset(p, 0, sizeof(*p));
    p->mode = GA_TAKE_RAISE;
    if (n > 2 * NPY_MAXDIMS) {
        PyErr_SetString(PyExc_IndexError, "too many indices for array");
        return -1;
    }
    int consumed = 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *obj = items ? PyTuple_GET_ITEM(items, i) : index;
        int kind = classify_item(obj, &hosts[i]);
        nhosts = (int)i + 1;
        if (kind < 0)
            goto done;
        kinds[i] = kind;
        if (kind == ITEM_INT || kind == ITEM_ARRAY || kind == ITEM_HOST ||
            (kind == ITEM_BASIC && PySlice_Check(obj)))
            consumed += 1;
        else if (kind == ITEM_MASK)
            consumed += ((ga_array *)obj)->ndim;
        else if (kind == ITEM_HOST_MASK)
            consumed += PyArray_NDIM(hosts[i]);
    }
    if (consumed > a->ndim) {
        PyErr_Format(PyExc_IndexError, "too many indices for array: array is %d-dimensional, "
                     "but %d were indexed", a->ndim, consumed);
        goto done;
    }
    basic = PyList_New(0);
    slice_all = PySlice_New(NULL, NULL, NULL);
    if (basic == NULL || slice_all == NULL)
        goto done;
    int a_pos = 0, v_pos = 0, first_adv = -1, last_adv = -1, n_adv = 0, first_v = 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *obj = items ? PyTuple_GET_ITEM(items, i) : index;
        int kind = kinds[i], k = 1;
        PyObject *add = NULL;   /* new reference appended to the basic index */
        if (kind != ITEM_BASIC) {
            if (first_adv < 0) {
                first_adv = (int)i;
                first_v = v_pos;
            }
            last_adv = (int)i;
            n_adv++;
        }
        if (kind == ITEM_MASK || kind == ITEM_HOST_MASK) {
            k = kind == ITEM_MASK ? ((ga_array *)obj)->ndim : PyArray_NDIM(hosts[i]);
            const npy_intp *ms = kind == ITEM_MASK ? ((ga_array *)obj)->shape
                                                   : PyArray_DIMS(hosts[i]);
            if (mask_matches(ms, k, a, a_pos) < 0)
                goto done;
        }
        if ((kind == ITEM_ARRAY || kind == ITEM_HOST || kind == ITEM_BOOL0 ||
             kind == ITEM_MASK || kind == ITEM_HOST_MASK) && npend + k > GA_TAKE_MAX) {
            PyErr_Format(PyExc_IndexError, "gpuarr indexes with at most %d index arrays at "
                         "once", GA_TAKE_MAX);
            goto done;
        }
        switch (kind) {
        case ITEM_BASIC:
            if (obj == Py_Ellipsis) {
                a_pos += a->ndim - consumed;
                v_pos += a->ndim - consumed;
            } else {
                v_pos += 1;
                a_pos += obj != Py_None;
            }
            Py_INCREF(obj);
            add = obj;
            break;
        case ITEM_INT:
            a_pos += 1;
            add = PyArray_Check(obj) ? PyNumber_Index(obj) : (Py_INCREF(obj), obj);
            if (add == NULL)
                goto done;
            break;
        case ITEM_ARRAY:
        case ITEM_HOST:
            pend[npend] = kind == ITEM_HOST ? (PyObject *)hosts[i] : obj;
            Py_INCREF(pend[npend]);
            pend_axis[npend] = v_pos++;
            pend_orig[npend] = a_pos++;
            pend_checked[npend++] = 0;
            Py_INCREF(slice_all);
            add = slice_all;
            break;
        case ITEM_BOOL0: {
            /* a new length-1 axis indexed by [0] (true) or [] (false) */
            PyObject *ix;
            if (ga_array_check(obj)) {
                npy_intp one = 1;
                PyObject *v1 = ga_array_reshape((ga_array *)obj, 1, &one, 'C');
                ix = v1 ? (PyObject *)ga_compact_true((ga_array *)v1, NULL, 1) : NULL;
                Py_XDECREF(v1);
            } else {
                int truth = PyObject_IsTrue(obj);
                ix = truth < 0 ? NULL : truth ? Py_BuildValue("[i]", 0) : PyList_New(0);
            }
            if (ix == NULL)
                goto done;
            pend[npend] = ix;
            pend_axis[npend] = v_pos++;
            pend_orig[npend] = a_pos;
            pend_checked[npend++] = 1;
            Py_INCREF(Py_None);
            add = Py_None;
            break;
        }
        default: {
            /* a mask over k dims: the k index arrays of its nonzero() */
            PyObject *rows = kind == ITEM_MASK ? (PyObject *)ga_compact_nonzero((ga_array *)obj)
                                               : PyArray_Nonzero(hosts[i]);
            if (rows == NULL)
                goto done;
            for (int d = 0; d < k; ++d) {
                PyObject *row = PySequence_GetItem(rows, d);
                if (row == NULL || PyList_Append(basic, slice_all) < 0) {
                    Py_XDECREF(row);
                    Py_DECREF(rows);
                    goto done;
                }
                pend[npend] = row;
                pend_axis[npend] = v_pos++;
                pend_orig[npend] = a_pos++;
                pend_checked[npend++] = 1;
            }
            Py_DECREF(rows);
            continue;
        }
        }
        int r = PyList_Append(basic, add);
        Py_DECREF(add);
        if (r < 0)
            goto done;
    }
    PyObject *btuple = PyList_AsTuple(basic);
    if (btuple == NULL)
        goto done;
    p->view = array_subscript_view(a, btuple);
    Py_DECREF(btuple);
    if (p->view == NULL)
        goto done;
    p->insert = last_adv - first_adv + 1 == n_adv ? first_v : 0;
    for (int k = 0; k < npend; ++k)
        if (ga_take_plan_add_index(p, pend[k], pend_axis[k], pend_orig[k], pend_checked[k]) < 0)
            goto done;
    rc = 0;
done:
    for (int k = 0; k < npend; ++k)
        Py_DECREF(pend[k]);
    for (int i = 0; i < nhosts; ++i)
        Py_XDECREF(hosts[i]);
    Py_XDECREF(basic);
    Py_XDECREF(slice_all);
    if (rc < 0)
        ga_take_plan_clear(p);
    return rc;
}

/* A bool device array of exactly a's shape (the one-compaction path). */
static int
is_full_mask(ga_array *a, PyObject *index)
{
    if (!ga_array_check(index))
        return 0;
    ga_array *m = (ga_array *)index;
    return m->type == GA_BOOL && a->ndim > 0 && m->ndim == a->ndim &&
           PyArray_CompareLists(m->shape, a->shape, a->ndim);
}

static int
is_host_scalar(PyObject *v)
{
    return PyLong_Check(v) || PyFloat_Check(v) || PyComplex_Check(v) ||
           PyArray_IsScalar(v, Generic) ||
           (PyArray_Check(v) && PyArray_NDIM((PyArrayObject *)v) == 0);
}

/* a[mask] = value for a host scalar value and a bool mask of a's shape:
 * no compaction, no synchronisation. */
static int
masked_fill(ga_array *a, ga_array *mask, PyObject *value)
{
    ga_kscalar v;
    ga_kshape ks;
    ga_kstrides kst[2];
    if (ga_check_same_device(a->device, mask->device) < 0 || ga_scalar_to_bytes(value, a->descr, &v) < 0 ||
        ga_runtime_use_device(a->device) < 0)
        return -1;
    const npy_intp *ops[2] = {a->strides, mask->strides};
    if (ga_plan_collapse(a->ndim, a->shape, 2, ops, &ks, kst) < 0)
        return -1;
    cudaStream_t stream = ga_runtime_device_stream(a->device);
    GA_LAUNCH_TRY(ga_launch_masked_fill(ga_array_itemsize(a), &ks, a->data, &kst[0],
                                        (const uint8_t *)mask->data, &kst[1], &v, stream),
                  stream);
    return 0;
fail:
    return -1;
}

static PyObject *
advindex_get(ga_array *a, PyObject *index)
{
    ga_take_plan p;
    if (is_full_mask(a, index))
        return (PyObject *)ga_compact_true((ga_array *)index, a, ga_array_size(a));
    if (plan_from_index(a, index, &p) < 0)
        return NULL;
    ga_array *r = ga_take_gather(&p);
    ga_take_plan_clear(&p);
    return (PyObject *)r;
}

static int
advindex_set(ga_array *a, PyObject *index, PyObject *value)
{
    ga_take_plan p;
    if (is_full_mask(a, index) && is_host_scalar(value))
        return masked_fill(a, (ga_array *)index, value);
    if (plan_from_index(a, index, &p) < 0)
        return -1;
    int rc = ga_take_scatter(&p, value);
    ga_take_plan_clear(&p);
    return rc;
}

/* ------------------------------------------------- the slots ------------- */

static PyObject *
array_subscript(ga_array *a, PyObject *index)
{
    if (index_is_advanced(index))
        return advindex_get(a, index);
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
    if (index_is_advanced(index))
        return advindex_set(a, index, value);
    ga_array *view = array_subscript_view(a, index);
    if (view == NULL)
        return -1;
    int rc = ga_assign_value(view, value);
    Py_DECREF(view);
    return rc;
}

Py_ssize_t
ga_array_length(ga_array *self)
{
    if (self->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of unsized object");
        return -1;
    }
    return self->shape[0];
}

PyMappingMethods ga_array_as_mapping = {
    .mp_length = (lenfunc)ga_array_length,
    .mp_subscript = (binaryfunc)array_subscript,
    .mp_ass_subscript = (objobjargproc)array_ass_subscript,
};

int
ga_mapping_init(PyObject *m)
{
    return 0;
}
