/*
 * take.c -- gather and scatter through index arrays: the indexing plan
 * (a view, the int64 index array of each indexed axis and where their
 * broadcast shape goes) that take, put and advanced indexing (mapping.c)
 * build, and its launch on take.cu's kernels.
 *
 * Index checking
 * --------------
 * Indices given from the host (lists, NumPy arrays) are checked and
 * normalised on the host, and masks from the host are turned into indices
 * there: no synchronisation.  Indices in device memory are checked by the
 * gather itself, which records the first bad one instead of reading out of
 * bounds; reading that record to raise IndexError is a synchronisation.  A
 * scatter through device indices validates first (a check-only launch and
 * one synchronisation), so an IndexError leaves the destination untouched.
 * take(mode='wrap' | 'clip') needs no check and no synchronisation.
 *
 * Which value lands when a scatter repeats an index is unspecified (NumPy:
 * the last).
 *
 * Ownership: a plan holds strong references to its view and index arrays,
 * released by ga_take_plan_clear; scratch blocks come from the pool and
 * return to it on the stream that used them, before the function returns.
 */
#include "gpuarr.h"

#include <string.h>

/* ------------------------------------------------- gather and scatter ---- */

void
ga_take_plan_clear(ga_take_plan *p)
{
    Py_CLEAR(p->view);
    for (int k = 0; k < p->nidx; ++k)
        Py_CLEAR(p->index[k]);
    p->nidx = 0;
}

/* Shapes of the index arrays broadcast together, then the result space:
 * the view's non-indexed dims with the broadcast dims at `insert`. */
static int
plan_shape(ga_take_plan *p)
{
    int bdim = 0;
    npy_intp bshape[NPY_MAXDIMS];
    for (int k = 0; k < p->nidx; ++k)
        if (p->index[k]->ndim > bdim)
            bdim = p->index[k]->ndim;
    for (int d = 0; d < bdim; ++d)
        bshape[d] = 1;
    for (int k = 0; k < p->nidx; ++k) {
        ga_array *ix = p->index[k];
        for (int d = 0; d < ix->ndim; ++d) {
            npy_intp *b = &bshape[bdim - ix->ndim + d];
            if (*b == 1)
                *b = ix->shape[d];
            else if (ix->shape[d] != 1 && ix->shape[d] != *b)
                goto mismatch;
        }
    }
    int other = p->view->ndim - p->nidx;
    if (other + bdim > NPY_MAXDIMS) {
        PyErr_SetString(PyExc_IndexError, "number of dimensions must be within limits");
        return -1;
    }
    p->rdim = 0;
    int v = 0;
    for (int slot = 0; slot <= other; ++slot) {
        if (slot == p->insert) {
            for (int d = 0; d < bdim; ++d) {
                int r = p->rdim++;
                p->rshape[r] = bshape[d];
                p->base_strides[r] = 0;
                for (int k = 0; k < p->nidx; ++k) {
                    ga_array *ix = p->index[k];
                    int e = d - (bdim - ix->ndim);
                    p->index_strides[k][r] = e < 0 || ix->shape[e] == 1 ? 0 : ix->strides[e];
                }
            }
        }
        if (slot == other)
            break;
        for (;; ++v) {
            int indexed = 0;
            for (int k = 0; k < p->nidx; ++k)
                indexed |= p->axis[k] == v;
            if (!indexed)
                break;
        }
        int r = p->rdim++;
        p->rshape[r] = p->view->shape[v];
        p->base_strides[r] = p->view->strides[v];
        for (int k = 0; k < p->nidx; ++k)
            p->index_strides[k][r] = 0;
        ++v;
    }
    return 0;
mismatch: {
        PyObject *msg = PyUnicode_FromString("shape mismatch: indexing arrays could not be "
                                             "broadcast together with shapes");
        for (int k = 0; msg != NULL && k < p->nidx; ++k) {
            PyObject *t = ga_shape_tuple(p->index[k]->ndim, p->index[k]->shape);
            PyObject *m2 = t ? PyUnicode_FromFormat("%U %R", msg, t) : NULL;
            Py_XDECREF(t);
            Py_SETREF(msg, m2);
        }
        if (msg != NULL) {
            PyErr_SetObject(PyExc_IndexError, msg);
            Py_DECREF(msg);
        }
        return -1;
    }
}

/* Kernel arguments for the plan, with `other` strides over the result. */
static int
plan_args(ga_take_plan *p, const npy_intp *other_strides, int mode, ga_take_args *args)
{
    ga_kstrides kst[2 + GA_TAKE_MAX];
    const npy_intp *ops[2 + GA_TAKE_MAX];
    ops[0] = other_strides;
    ops[1] = p->base_strides;
    for (int k = 0; k < p->nidx; ++k)
        ops[2 + k] = p->index_strides[k];
    memset(args, 0, sizeof(*args));
    if (ga_plan_collapse(p->rdim, p->rshape, 2 + p->nidx, ops, &args->shape, kst) < 0)
        return -1;
    args->other_strides = kst[0];
    args->base_strides = kst[1];
    args->nindex = p->nidx;
    args->mode = mode;
    for (int k = 0; k < p->nidx; ++k) {
        args->index[k] = (const int64_t *)p->index[k]->data;
        args->index_strides[k] = kst[2 + k];
        args->axis_len[k] = p->view->shape[p->axis[k]];
        args->axis_stride[k] = p->view->strides[p->axis[k]];
    }
    return 0;
}

/* A host index out of range raises, unless the indices broadcast to no
 * element (an empty index array among them): NumPy reads, and so checks,
 * no index then.  0 / -1. */
static int
plan_host_bounds(ga_take_plan *p)
{
    if (!p->host_bad)
        return 0;
    for (int k = 0; k < p->nidx; ++k)
        if (ga_array_size(p->index[k]) == 0)
            return 0;
    ga_err_index_bounds(p->host_bad_index, p->host_bad_axis, p->host_bad_len);
    return -1;
}

static int
plan_empty_axis(ga_take_plan *p)
{
    for (int k = 0; k < p->nidx; ++k)
        if (p->view->shape[p->axis[k]] == 0 && ga_array_size(p->index[k]) > 0) {
            PyErr_SetString(PyExc_IndexError, "cannot do a non-empty take from an empty axes.");
            return -1;
        }
    return 0;
}

/* Launch with the device error record when indices need checking; then
 * read it (the synchronisation) and raise for a bad index. */
static int
plan_launch(ga_take_plan *p, int direction, ga_take_args *args, char *other)
{
    int device = p->view->device, failed = 0, checking = args->mode == GA_TAKE_RAISE;
    cudaStream_t stream = ga_runtime_device_stream(device);
    int itemsize = ga_array_itemsize(p->view);
    int64_t *error = NULL, host[2];
    if (checking) {
        error = ga_pool_malloc(device, 16, stream, &failed);
        if (failed)
            return -1;
        GA_CUDA_TRY(cudaMemsetAsync(error, 0, 16, stream));
    }
    GA_LAUNCH_TRY(ga_launch_take(itemsize, direction, args, p->view->data, other, error, stream),
                  stream);
    if (!checking)
        return 0;
    if (ga_read_small(host, error, 16, stream, "reading the index check") < 0)
        goto fail;
    ga_pool_free(device, error, 16, stream);
    error = NULL;
    if (host[0] != 0) {
        int k = (int)host[0] - 1;
        ga_err_index_bounds((long long)host[1], p->orig_axis[k], p->view->shape[p->axis[k]]);
        return -1;
    }
    return 0;
fail:
    if (error != NULL)
        ga_pool_free(device, error, 16, stream);
    return -1;
}

static int
plan_mode(ga_take_plan *p)
{
    if (p->mode != GA_TAKE_RAISE)
        return p->mode;
    return p->unchecked ? GA_TAKE_RAISE : GA_TAKE_TRUSTED;
}

/* NumPy checks every index even where the result is empty (a zero-length
 * axis beside the indexed ones), and the gather or scatter, which walks the
 * result, reads none: device indices then get a check-only launch over the
 * result's shape with its empty dims taken as length 1 (the check reads the
 * indices alone).  0 / -1. */
static int
plan_check_empty_result(ga_take_plan *p)
{
    npy_intp n = 1, shape[NPY_MAXDIMS], none[NPY_MAXDIMS] = {0};
    ga_take_args args;
    for (int d = 0; d < p->rdim; ++d)
        n *= p->rshape[d];
    if (n != 0 || plan_mode(p) != GA_TAKE_RAISE)
        return 0;
    for (int k = 0; k < p->nidx; ++k)
        if (ga_array_size(p->index[k]) == 0)
            return 0;
    memcpy(shape, p->rshape, p->rdim * sizeof(npy_intp));
    for (int d = 0; d < p->rdim; ++d)
        p->rshape[d] = p->rshape[d] == 0 ? 1 : p->rshape[d];
    int rc = plan_args(p, none, GA_TAKE_RAISE, &args) < 0 ||
             plan_launch(p, GA_TAKE_CHECK, &args, NULL) < 0 ? -1 : 0;
    memcpy(p->rshape, shape, p->rdim * sizeof(npy_intp));
    return rc;
}

/* result[r] = view[r, indices]: a new C-contiguous array. */
ga_array *
ga_take_gather(ga_take_plan *p)
{
    ga_take_args args;
    npy_intp ostrides[NPY_MAXDIMS];
    if (plan_shape(p) < 0 || plan_host_bounds(p) < 0 || plan_empty_axis(p) < 0 ||
        plan_check_empty_result(p) < 0)
        return NULL;
    Py_INCREF(p->view->descr);
    ga_array *out = ga_array_empty(p->rdim, p->rshape, p->view->descr, 0, p->view->device);
    if (out == NULL)
        return NULL;
    memcpy(ostrides, out->strides, p->rdim * sizeof(npy_intp));
    if (plan_args(p, ostrides, plan_mode(p), &args) < 0 ||
        plan_launch(p, GA_TAKE_GATHER, &args, out->data) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* view[r, indices] = value (broadcast to the result shape, converted). */
int
ga_take_scatter(ga_take_plan *p, PyObject *value)
{
    ga_take_args args;
    npy_intp vstrides[NPY_MAXDIMS];
    ga_array *v = NULL;
    if (!(p->view->flags & GA_WRITEABLE)) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return -1;
    }
    if (plan_shape(p) < 0 || plan_host_bounds(p) < 0 || plan_empty_axis(p) < 0 ||
        plan_check_empty_result(p) < 0)
        return -1;
    Py_INCREF(p->view->descr);
    v = (ga_array *)ga_asarray(value, p->view->descr, -1, 'K');
    if (v == NULL)
        return -1;
    if (ga_check_same_device(p->view->device, v->device) < 0)
        goto fail;
    if (ga_array_overlaps(v, p->view)) {
        Py_SETREF(v, ga_array_copy_as(v, NULL, 0));
        if (v == NULL)
            goto fail;
    }
    int lead = 0;
    while (v->ndim - lead > p->rdim && v->shape[lead] == 1)
        lead++;
    if (ga_plan_broadcast_to(v->ndim - lead, v->shape + lead, v->strides + lead, p->rdim,
                             p->rshape, vstrides) < 0)
        goto fail;
    int mode = plan_mode(p);
    if (mode == GA_TAKE_RAISE) {
        /* check every index before writing any; the checked indices are in
         * [-len, len), which the trusted scatter takes as they are */
        if (plan_args(p, vstrides, mode, &args) < 0 ||
            plan_launch(p, GA_TAKE_CHECK, &args, v->data) < 0)
            goto fail;
        mode = GA_TAKE_TRUSTED;
    }
    if (plan_args(p, vstrides, mode, &args) < 0 ||
        plan_launch(p, GA_TAKE_SCATTER, &args, v->data) < 0)
        goto fail;
    Py_DECREF(v);
    return 0;
fail:
    Py_XDECREF(v);
    return -1;
}

/* Add an index array for axis `axis` of p->view: a device integer array
 * (converted to int64, checked on the device), or anything NumPy turns
 * into an integer array (checked and normalised here when mode is
 * raise).  `checked`: a device array already known to be in range. */
int
ga_take_plan_add_index(ga_take_plan *p, PyObject *obj, int axis, int orig_axis, int checked)
{
    ga_array *ix = NULL;
    if (p->nidx == GA_TAKE_MAX) {
        PyErr_Format(PyExc_IndexError, "gpuarr indexes with at most %d index arrays at once",
                     GA_TAKE_MAX);
        return -1;
    }
    npy_intp len = p->view->shape[axis];
    if (ga_array_check(obj)) {
        ga_array *a = (ga_array *)obj;
        if (a->descr->kind != 'i' && a->descr->kind != 'u') {
            PyErr_SetString(PyExc_IndexError, "arrays used as indices must be of integer (or "
                            "boolean) type");
            return -1;
        }
        if (ga_check_same_device(p->view->device, a->device) < 0)
            return -1;
        if (a->type == GA_INT64) {
            Py_INCREF(a);
            ix = a;
        } else if ((ix = ga_array_copy_as(a, PyArray_DescrFromType(NPY_INT64), 0)) == NULL) {
            return -1;
        }
        p->unchecked |= !checked;
    } else {
        PyArrayObject *h = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
        if (h == NULL)
            return -1;
        if (PyArray_SIZE(h) == 0 || PyArray_ISINTEGER(h)) {
            Py_SETREF(h, (PyArrayObject *)PyArray_FromAny((PyObject *)h,
                                                          PyArray_DescrFromType(NPY_INT64), 0, 0,
                                                          NPY_ARRAY_FORCECAST |
                                                          NPY_ARRAY_C_CONTIGUOUS |
                                                          NPY_ARRAY_ENSURECOPY, NULL));
        } else {
            PyErr_SetString(PyExc_IndexError, "arrays used as indices must be of integer (or "
                            "boolean) type");
            Py_DECREF(h);
            return -1;
        }
        if (h == NULL)
            return -1;
        if (p->mode == GA_TAKE_RAISE) {
            /* the first index out of range is kept for plan_host_bounds */
            int64_t *d = (int64_t *)PyArray_DATA(h);
            for (npy_intp i = 0, n = PyArray_SIZE(h); i < n; ++i) {
                if (d[i] < -len || d[i] >= len) {
                    if (!p->host_bad) {
                        p->host_bad = 1;
                        p->host_bad_index = (long long)d[i];
                        p->host_bad_axis = orig_axis;
                        p->host_bad_len = len;
                    }
                } else if (d[i] < 0) {
                    d[i] += len;
                }
            }
        }
        ix = ga_transfer_from_numpy(h, NULL, p->view->device);
        Py_DECREF(h);
        if (ix == NULL)
            return -1;
    }
    p->axis[p->nidx] = axis;
    p->orig_axis[p->nidx] = orig_axis;
    p->index[p->nidx++] = ix;
    return 0;
}

/* ---------------------------------------------------------------- Python */

static int
parse_take_mode(int mode)
{
    if (mode == GA_TAKE_RAISE || mode == GA_TAKE_WRAP || mode == GA_TAKE_CLIP)
        return 0;
    PyErr_SetString(PyExc_ValueError, "mode must be 0 (raise), 1 (wrap) or 2 (clip)");
    return -1;
}

/* _take(a, indices, axis, mode) -> numpy.take(a, indices, axis) with mode
 * 0 raise, 1 wrap, 2 clip; axis None takes from the flattened array. */
static PyObject *
py_take(PyObject *self, PyObject *args)
{
    ga_array *a;
    PyObject *indices, *axis_obj;
    int mode, axis = 0;
    ga_take_plan p;
    if (!PyArg_ParseTuple(args, "O!OOi", &GA_ArrayType, &a, &indices, &axis_obj, &mode) ||
        parse_take_mode(mode) < 0)
        return NULL;
    memset(&p, 0, sizeof(p));
    p.mode = mode;
    if (axis_obj == Py_None) {
        p.view = (ga_array *)ga_array_ravel(a, 'C', 0);
    } else {
        if (ga_normalize_axis(axis_obj, a->ndim, &axis) < 0)
            return NULL;
        Py_INCREF(a);
        p.view = a;
    }
    if (p.view == NULL)
        return NULL;
    p.insert = axis;
    ga_array *r = NULL;
    if (ga_take_plan_add_index(&p, indices, axis, axis, 0) == 0)
        r = ga_take_gather(&p);
    ga_take_plan_clear(&p);
    return (PyObject *)r;
}

/* _put(a, indices, values, mode): a.flat[indices] = values, values
 * broadcast to the indices' shape; mode as _take. */
static PyObject *
py_put(PyObject *self, PyObject *args)
{
    ga_array *a, *target = NULL;
    PyObject *indices, *values;
    int mode, rc = -1;
    ga_take_plan p;
    if (!PyArg_ParseTuple(args, "O!OOi", &GA_ArrayType, &a, &indices, &values, &mode) ||
        parse_take_mode(mode) < 0)
        return NULL;
    if (!(a->flags & GA_WRITEABLE)) {
        PyErr_SetString(PyExc_ValueError, "put: the array is read-only");
        return NULL;
    }
    memset(&p, 0, sizeof(p));
    p.mode = mode;
    if ((target = ga_array_contiguous_as(a, NULL)) == NULL)
        return NULL;
    npy_intp n = ga_array_size(target);
    p.view = (ga_array *)ga_array_reshape(target, 1, &n, 'C');
    if (p.view != NULL && ga_take_plan_add_index(&p, indices, 0, 0, 0) == 0 &&
        ga_take_scatter(&p, values) == 0)
        rc = target == a ? 0 : ga_assign_array(a, target);
    ga_take_plan_clear(&p);
    Py_DECREF(target);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef take_functions[] = {
    {"_take", py_take, METH_VARARGS, "_take(a, indices, axis, mode) -> gathered array"},
    {"_put", py_put, METH_VARARGS, "_put(a, indices, values, mode): a.flat[indices] = values"},
    {NULL, NULL, 0, NULL},
};

int
ga_take_init(PyObject *m)
{
    /* the modes of _take and _put, for the Python layer (gpuarr/_sorting.py) */
    if (PyModule_AddIntMacro(m, GA_TAKE_RAISE) < 0 ||
        PyModule_AddIntMacro(m, GA_TAKE_WRAP) < 0 ||
        PyModule_AddIntMacro(m, GA_TAKE_CLIP) < 0)
        return -1;
    return PyModule_AddFunctions(m, take_functions);
}
