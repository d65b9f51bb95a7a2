/*
 * sort.c -- ordering: sort and argsort along an axis, median / percentile /
 * quantile, unique, searchsorted, bincount and histogram counting.  The
 * NumPy-shaped functions are in gpuarr/_sorting.py; this file plans and
 * launches the kernels of sort.cu and order_stats.cu.
 *
 * Sorting along an axis
 * ---------------------
 * The axis is moved last (a permutation of shape and strides, no copy) and
 * both the source and the result are described in that order, collapsed
 * without reordering, so the rows along the axis are consecutive segments
 * of one C-order walk.  One stable argsort (sort.cu) orders every segment;
 * sort gathers values through the permutation, argsort writes positions.
 *
 * Quantiles
 * ---------
 * A whole-array median or quantile (axis None or a 1-d array, up to
 * SELECT_MAX_Q quantiles) is a radix selection: a few passes over the data,
 * the answer written into a 0-d device array, no host synchronisation.
 * Along an axis, or for many quantiles, the segments are argsorted and a
 * pick kernel reads the order statistics.  Result dtypes follow NumPy: the
 * float type of the input for median and for a Python-scalar q, float64
 * for integers and for array q.
 *
 * Synchronisation: unique and bincount synchronise once (their result size
 * depends on the data); everything else stays asynchronous.
 */
#include "gpuarr.h"

#include <string.h>

/* Whole-array quantiles cheaper by selection than by one sort. */
#define SELECT_MAX_Q 4

/* The default axis of the sort methods. */
static PyObject *axis_minus_one = NULL;

/* ------------------------------------------------------------ helpers ---- */

static int
is_orderable(ga_array *a, const char *what)
{
    if (a->type == GA_COMPLEX64 || a->type == GA_COMPLEX128) {
        PyErr_Format(PyExc_TypeError, "%s: gpuarr does not order complex numbers", what);
        return 0;
    }
    return 1;
}

static int
is_float_type(int type)
{
    return type == GA_FLOAT16 || type == GA_FLOAT32 || type == GA_FLOAT64;
}

/* Collapse one layout without reordering its dims (so linear index i is
 * the i-th element in C order over `shape`). */
static int
collapse_c(int ndim, const npy_intp *shape, const npy_intp *strides, ga_kshape *ks,
           ga_kstrides *kst)
{
    npy_intp cstrides[NPY_MAXDIMS];
    ga_kstrides both[2];
    npy_intp s = 1;
    for (int d = ndim - 1; d >= 0; --d) {
        cstrides[d] = s;
        s *= shape[d] > 1 ? shape[d] : 1;
    }
    const npy_intp *ops[2] = {cstrides, strides};
    if (ga_plan_collapse(ndim, shape, 2, ops, ks, both) < 0)
        return -1;
    *kst = both[1];
    return 0;
}

/* shape and strides of `a` with `axis` moved last. */
static void
axis_last(ga_array *a, int axis, npy_intp *shape, npy_intp *strides)
{
    int j = 0;
    for (int d = 0; d < a->ndim; ++d)
        if (d != axis) {
            shape[j] = a->shape[d];
            strides[j++] = a->strides[d];
        }
    shape[j] = a->shape[axis];
    strides[j] = a->strides[axis];
}

/* Parse an axis argument: None -> *axis = -1 (whole array). */
static int
parse_axis(PyObject *obj, int ndim, int *axis)
{
    if (obj == Py_None) {
        *axis = -1;
        return 0;
    }
    return ga_normalize_axis(obj, ndim, axis);
}

/* perm of every segment of `view` along `axis` (moved last); perm lives at
 * the start of *scratch, a pool block of *scratch_bytes the caller frees. */
static int
argsort_segments(ga_array *view, int axis, char **scratch, size_t *scratch_bytes,
                 cudaStream_t stream)
{
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    ga_kshape ks;
    ga_kstrides kst;
    size_t temp_bytes = 0;
    int failed = 0;
    npy_intp n = ga_array_size(view);
    axis_last(view, axis, shape, strides);
    if (collapse_c(view->ndim, shape, strides, &ks, &kst) < 0)
        return -1;
    npy_intp seg = view->shape[axis];
    GA_CUDA_TRY(ga_launch_argsort((ga_type)view->type, seg, view->data, &ks, &kst, NULL, NULL,
                                  &temp_bytes, stream));
    size_t perm_bytes = ((size_t)n * 8 + 255) & ~(size_t)255;
    *scratch_bytes = perm_bytes + temp_bytes;
    *scratch = ga_pool_malloc(view->device, *scratch_bytes, stream, &failed);
    if (failed)
        return -1;
    GA_LAUNCH_TRY(ga_launch_argsort((ga_type)view->type, seg, view->data, &ks, &kst,
                                    (int64_t *)*scratch, *scratch + perm_bytes, &temp_bytes,
                                    stream), stream);
    return 0;
fail:
    if (*scratch != NULL)
        ga_pool_free(view->device, *scratch, *scratch_bytes, stream);
    *scratch = NULL;
    return -1;
}

/* ---------------------------------------------------------------- sort --- */

/* A sorted copy of `a` (arg false) or its argsort (arg true) along `axis`
 * (-1: the flattened array), stable; `a` is orderable. */
static ga_array *
sort_along(ga_array *a, int axis, int arg)
{
    ga_array *view = NULL, *out = NULL;
    char *scratch = NULL;
    size_t scratch_bytes = 0;
    npy_intp shape[NPY_MAXDIMS], sstr[NPY_MAXDIMS], dstr[NPY_MAXDIMS];
    ga_kshape sks, dks;
    ga_kstrides skst, dkst;
    if (axis < 0) {
        if ((view = (ga_array *)ga_array_ravel(a, 'C', 0)) == NULL)
            return NULL;
        axis = 0;
    } else {
        Py_INCREF(a);
        view = a;
    }
    PyArray_Descr *descr = arg ? PyArray_DescrFromType(NPY_INT64) : view->descr;
    if (!arg)
        Py_INCREF(descr);
    out = ga_array_empty(view->ndim, view->shape, descr, 0, view->device);
    if (out == NULL || ga_array_size(view) == 0 || view->ndim == 0) {
        if (out != NULL && view->ndim == 0 && ga_assign_array(out, view) < 0)
            Py_CLEAR(out);
        Py_DECREF(view);
        return out;
    }
    if (ga_runtime_use_device(view->device) < 0)
        goto fail;
    cudaStream_t stream = ga_runtime_device_stream(view->device);
    if (argsort_segments(view, axis, &scratch, &scratch_bytes, stream) < 0)
        goto fail;
    axis_last(out, axis, shape, dstr);
    if (collapse_c(out->ndim, shape, dstr, &dks, &dkst) < 0)
        goto fail;
    if (arg) {
        GA_LAUNCH_TRY(ga_launch_argsort_finish((const int64_t *)scratch, view->shape[axis],
                                               out->data, &dks, &dkst, stream), stream);
    } else {
        axis_last(view, axis, shape, sstr);
        if (collapse_c(view->ndim, shape, sstr, &sks, &skst) < 0)
            goto fail;
        GA_LAUNCH_TRY(ga_launch_sort_gather(ga_array_itemsize(view), (const int64_t *)scratch,
                                            view->data, &sks, &skst, out->data, &dks, &dkst,
                                            stream), stream);
    }
    ga_pool_free(view->device, scratch, scratch_bytes, stream);
    Py_DECREF(view);
    return out;
fail:
    if (scratch != NULL)
        ga_pool_free(view->device, scratch, scratch_bytes, ga_runtime_device_stream(view->device));
    Py_XDECREF(view);
    Py_XDECREF(out);
    return NULL;
}

/* _sort(a, axis, arg) -> sorted copy (arg false) or argsort (arg true)
 * along axis (None: the flattened array), stable. */
static PyObject *
py_sort(PyObject *self, PyObject *args)
{
    ga_array *a;
    PyObject *axis_obj;
    int arg, axis;
    if (!PyArg_ParseTuple(args, "O!Op", &GA_ArrayType, &a, &axis_obj, &arg) ||
        !is_orderable(a, arg ? "argsort" : "sort") || parse_axis(axis_obj, a->ndim, &axis) < 0)
        return NULL;
    return (PyObject *)sort_along(a, axis, arg);
}

/* ------------------------------------------------------------ quantiles -- */

static int
quantile_out_double(int type, int mode)
{
    return mode == GA_Q_LINEAR_STRONG || (mode != GA_Q_PICK && !is_float_type(type));
}

/* Whole-array quantiles by radix selection into out (contiguous, nq). */
static int
quantile_select(ga_array *a, ga_quantile_args *qa, char *out, cudaStream_t stream)
{
    ga_array *src = a;
    size_t temp_bytes = 0;
    int failed = 0;
    void *temp = NULL;
    if (!(a->flags & (GA_C_CONTIGUOUS | GA_F_CONTIGUOUS))) {
        if ((src = ga_array_copy_as(a, NULL, 0)) == NULL)
            return -1;
    } else {
        Py_INCREF(src);
    }
    GA_CUDA_TRY(ga_launch_quantile_select((ga_type)src->type, ga_array_size(src), src->data, qa,
                                          out, 0, NULL, &temp_bytes, stream));
    temp = ga_pool_malloc(src->device, temp_bytes, stream, &failed);
    if (failed)
        goto fail;
    GA_LAUNCH_TRY(ga_launch_quantile_select((ga_type)src->type, ga_array_size(src), src->data,
                                            qa, out, ga_runtime_sm_count(src->device), temp,
                                            &temp_bytes, stream), stream);
    ga_pool_free(src->device, temp, temp_bytes, stream);
    Py_DECREF(src);
    return 0;
fail:
    if (temp != NULL)
        ga_pool_free(src->device, temp, temp_bytes, stream);
    Py_DECREF(src);
    return -1;
}

/* Quantiles of every segment along `axis` by sorting; out is q-major. */
static int
quantile_sorted(ga_array *a, int axis, ga_quantile_args *qa, int nq, const double *q,
                char *out, int osize, cudaStream_t stream)
{
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    ga_kshape ks;
    ga_kstrides kst;
    char *scratch = NULL;
    size_t scratch_bytes = 0;
    npy_intp seg = a->shape[axis], nseg = ga_array_size(a) / seg;
    if (argsort_segments(a, axis, &scratch, &scratch_bytes, stream) < 0)
        return -1;
    axis_last(a, axis, shape, strides);
    if (collapse_c(a->ndim, shape, strides, &ks, &kst) < 0)
        goto fail;
    for (int k0 = 0; k0 < nq; k0 += GA_QMAX) {
        qa->nq = nq - k0 < GA_QMAX ? nq - k0 : GA_QMAX;
        for (int k = 0; k < qa->nq; ++k)
            qa->q[k] = q ? q[k0 + k] : 0.5;
        GA_LAUNCH_TRY(ga_launch_quantile_pick((ga_type)a->type, qa, nseg, seg,
                                              (const int64_t *)scratch, a->data, &ks, &kst,
                                              out + (size_t)k0 * nseg * osize, stream), stream);
    }
    ga_pool_free(a->device, scratch, scratch_bytes, stream);
    return 0;
fail:
    ga_pool_free(a->device, scratch, scratch_bytes, stream);
    return -1;
}

/* _quantile(a, q, mode, ignore_nan, axis, method=0) -> array of shape
 * (len(q),) + the reduced shape (no leading dim when q is None: the
 * median).  q: None or a sequence of floats in [0, 1]; mode a GA_Q_* code,
 * method a GA_QM_* code; the reduced axis is not empty (the caller handles
 * empty reductions). */
static PyObject *
py_quantile(PyObject *self, PyObject *args)
{
    ga_array *a, *out = NULL;
    PyObject *q_obj, *axis_obj, *fast = NULL;
    int mode, ignore_nan, axis, method = GA_QM_LINEAR;
    double *q = NULL;
    ga_quantile_args qa;
    npy_intp dims[NPY_MAXDIMS + 1];
    if (!PyArg_ParseTuple(args, "O!OipO|i", &GA_ArrayType, &a, &q_obj, &mode, &ignore_nan,
                          &axis_obj, &method) ||
        !is_orderable(a, "quantile") || parse_axis(axis_obj, a->ndim, &axis) < 0)
        return NULL;
    if (mode < GA_Q_MEDIAN || mode > GA_Q_PICK || (mode == GA_Q_MEDIAN) != (q_obj == Py_None) ||
        method < 0 || method >= GA_QM_COUNT) {
        PyErr_SetString(PyExc_ValueError, "_quantile: q must be None exactly for the median, "
                        "and mode and method known codes");
        return NULL;
    }
    if (a->type == GA_BOOL && (mode == GA_Q_LINEAR_WEAK || mode == GA_Q_LINEAR_STRONG)) {
        PyErr_SetString(PyExc_TypeError, "numpy boolean subtract, the `-` operator, is not "
                        "supported, use the bitwise_xor, the `^` operator, or the logical_xor "
                        "function instead.");
        return NULL;
    }
    int nq = 1;
    if (q_obj != Py_None) {
        if ((fast = PySequence_Fast(q_obj, "q must be a sequence")) == NULL)
            return NULL;
        nq = (int)PySequence_Fast_GET_SIZE(fast);
        if ((q = PyMem_Malloc((nq ? nq : 1) * sizeof(double))) == NULL) {
            Py_DECREF(fast);
            return PyErr_NoMemory();
        }
        for (int k = 0; k < nq; ++k) {
            q[k] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, k));
            if (q[k] == -1.0 && PyErr_Occurred())
                goto fail;
            if (!(q[k] >= 0.0 && q[k] <= 1.0)) {
                PyErr_SetString(PyExc_ValueError, "Quantiles must be in the range [0, 1]");
                goto fail;
            }
        }
    }
    int whole = axis < 0 || a->ndim == 1;
    npy_intp n = ga_array_size(a), reduce = axis < 0 ? n : a->shape[axis];
    if (reduce == 0 && n > 0) {
        PyErr_SetString(PyExc_ValueError, "_quantile: empty reduction");
        goto fail;
    }
    int nd = 0;
    if (q_obj != Py_None)
        dims[nd++] = nq;
    if (!whole)
        for (int d = 0; d < a->ndim; ++d)
            if (d != axis)
                dims[nd++] = a->shape[d];
    int odouble = quantile_out_double(a->type, mode);
    PyArray_Descr *descr = odouble ? PyArray_DescrFromType(NPY_FLOAT64) : a->descr;
    if (!odouble)
        Py_INCREF(descr);
    if ((out = ga_array_empty(nd, dims, descr, 0, a->device)) == NULL)
        goto fail;
    if (ga_array_size(out) == 0 || n == 0)
        goto done;
    if (ga_runtime_use_device(a->device) < 0)
        goto fail;
    cudaStream_t stream = ga_runtime_device_stream(a->device);
    memset(&qa, 0, sizeof(qa));
    qa.mode = mode;
    qa.method = method;
    qa.ignore_nan = ignore_nan;
    int osize = ga_array_itemsize(out);
    if (whole && nq <= SELECT_MAX_Q) {
        qa.nq = nq;
        for (int k = 0; k < nq; ++k)
            qa.q[k] = q ? q[k] : 0.5;
        if (quantile_select(a, &qa, out->data, stream) < 0)
            goto fail;
    } else {
        ga_array *view = a;
        int ax = axis;
        if (axis < 0) {
            if ((view = (ga_array *)ga_array_ravel(a, 'C', 0)) == NULL)
                goto fail;
            ax = 0;
        } else {
            Py_INCREF(view);
        }
        int rc = quantile_sorted(view, ax, &qa, nq, q, out->data, osize, stream);
        Py_DECREF(view);
        if (rc < 0)
            goto fail;
    }
done:
    Py_XDECREF(fast);
    PyMem_Free(q);
    return (PyObject *)out;
fail:
    Py_XDECREF(out);
    Py_XDECREF(fast);
    PyMem_Free(q);
    return NULL;
}

/* ------------------------------------------------------------- unique ---- */

/* _unique(a, return_index, return_inverse, return_counts, equal_nan) ->
 * (values, index, inverse, counts), the unrequested ones None; inverse has
 * a's shape.  One synchronisation (the number of distinct values). */
static PyObject *
py_unique(PyObject *self, PyObject *args)
{
    ga_array *a, *flat = NULL, *values = NULL, *first = NULL, *inverse = NULL, *counts = NULL;
    int want_index, want_inverse, want_counts, equal_nan, failed = 0;
    char *scratch = NULL, *sel = NULL;
    size_t scratch_bytes = 0, sel_bytes = 0;
    int64_t ngroups = 0;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "O!pppp", &GA_ArrayType, &a, &want_index, &want_inverse,
                          &want_counts, &equal_nan) ||
        !is_orderable(a, "unique") || ga_runtime_use_device(a->device) < 0)
        return NULL;
    if ((flat = (ga_array *)ga_array_ravel(a, 'C', 0)) == NULL)
        return NULL;
    cudaStream_t stream = ga_runtime_device_stream(a->device);
    npy_intp n = flat->shape[0];
    int device = a->device;
    if (n > 0) {
        if (argsort_segments(flat, 0, &scratch, &scratch_bytes, stream) < 0)
            goto fail;
        const int64_t *perm = (const int64_t *)scratch;
        /* sel: flags (n bytes), then group starts (n int64) */
        size_t fbytes = ((size_t)n + 255) & ~(size_t)255;
        sel_bytes = fbytes + (size_t)n * 8;
        sel = ga_pool_malloc(device, sel_bytes, stream, &failed);
        if (failed)
            goto fail;
        uint8_t *flags = (uint8_t *)sel;
        GA_LAUNCH_TRY(ga_launch_unique_flags((ga_type)flat->type, n, perm, flat->data, equal_nan,
                                             flags, stream), stream);
        if (ga_compact_flag_positions(device, n, flags, (int64_t *)(sel + fbytes), &ngroups,
                                     stream) < 0)
            goto fail;
    }
    npy_intp ng = (npy_intp)ngroups;
    PyArray_Descr *i64 = PyArray_DescrFromType(NPY_INT64);
    first = ga_array_empty(1, &ng, i64, 0, device);
    Py_INCREF(flat->descr);
    values = ga_array_empty(1, &ng, flat->descr, 0, device);
    if (first == NULL || values == NULL)
        goto fail;
    if (want_counts && (counts = ga_array_empty(1, &ng, PyArray_DescrFromType(NPY_INT64), 0,
                                                device)) == NULL)
        goto fail;
    if (want_inverse && (inverse = ga_array_empty(a->ndim, a->shape,
                                                  PyArray_DescrFromType(NPY_INT64), 0,
                                                  device)) == NULL)
        goto fail;
    if (n > 0) {
        size_t fbytes = ((size_t)n + 255) & ~(size_t)255;
        const int64_t *starts = (const int64_t *)(sel + fbytes);
        GA_LAUNCH_TRY(ga_launch_unique_finish(n, ngroups, starts, (const int64_t *)scratch,
                                              (int64_t *)first->data,
                                              counts ? (int64_t *)counts->data : NULL,
                                              inverse ? (int64_t *)inverse->data : NULL, stream),
                      stream);
        ga_kshape ks;
        ga_kstrides kst;
        ks.ndim = 1;
        ks.shape[0] = ng;
        kst.s[0] = ga_array_itemsize(flat);
        GA_LAUNCH_TRY(ga_launch_sort_gather(ga_array_itemsize(flat), (const int64_t *)first->data,
                                            flat->data, &ks, &kst, values->data, &ks, &kst,
                                            stream), stream);
        ga_pool_free(device, sel, sel_bytes, stream);
        ga_pool_free(device, scratch, scratch_bytes, stream);
        sel = scratch = NULL;
    }
    result = Py_BuildValue("(OOOO)", values, want_index ? (PyObject *)first : Py_None,
                           inverse ? (PyObject *)inverse : Py_None,
                           counts ? (PyObject *)counts : Py_None);
fail:
    if (sel != NULL)
        ga_pool_free(device, sel, sel_bytes, stream);
    if (scratch != NULL)
        ga_pool_free(device, scratch, scratch_bytes, stream);
    Py_XDECREF(flat);
    Py_XDECREF(values);
    Py_XDECREF(first);
    Py_XDECREF(inverse);
    Py_XDECREF(counts);
    return result;
}

/* --------------------------------------------------------- searching ----- */

/* _searchsorted(a, v, side_right, direction) -> int64 array of v's shape:
 * insertion points of v in the 1-d a (same dtype as v); direction as
 * ga_launch_searchsorted (0 ascending, 1 descending, 2 from a's ends). */
static PyObject *
py_searchsorted(PyObject *self, PyObject *args)
{
    ga_array *a, *v, *out;
    int right, direction;
    ga_kshape ks;
    ga_kstrides kst[2];
    if (!PyArg_ParseTuple(args, "O!O!pi", &GA_ArrayType, &a, &GA_ArrayType, &v, &right,
                          &direction) ||
        !is_orderable(a, "searchsorted"))
        return NULL;
    if (a->ndim != 1 || a->type != v->type || a->device != v->device || direction < 0 ||
        direction > 2) {
        PyErr_SetString(PyExc_ValueError, "_searchsorted needs a 1-d array and values of its "
                        "dtype on its device");
        return NULL;
    }
    out = ga_array_empty(v->ndim, v->shape, PyArray_DescrFromType(NPY_INT64), 0, v->device);
    if (out == NULL || ga_array_size(v) == 0)
        return (PyObject *)out;
    if (ga_runtime_use_device(v->device) < 0)
        goto fail;
    const npy_intp *ops[2] = {out->strides, v->strides};
    if (ga_plan_collapse(v->ndim, v->shape, 2, ops, &ks, kst) < 0)
        goto fail;
    cudaStream_t stream = ga_runtime_device_stream(v->device);
    GA_LAUNCH_TRY(ga_launch_searchsorted((ga_type)a->type, a->shape[0], a->data, a->strides[0],
                                         v->data, &ks, &kst[1], (int64_t *)out->data, right,
                                         direction, stream), stream);
    return (PyObject *)out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* ----------------------------------------------------------- counting ---- */

static ga_array *
zeros_1d(npy_intp n, int typenum, int device, cudaStream_t stream)
{
    ga_array *z = ga_array_empty(1, &n, PyArray_DescrFromType(typenum), 0, device);
    if (z == NULL || n == 0)
        return z;
    GA_CUDA_TRY(cudaMemsetAsync(z->data, 0, (size_t)n * 8, stream));
    return z;
fail:
    Py_DECREF(z);
    return NULL;
}

/* _bincount(x, weights, minlength) -> counts (int64) or sums of weights
 * (float64) for the integer array x.  One synchronisation (the length
 * depends on x's largest value). */
static PyObject *
py_bincount(PyObject *self, PyObject *args)
{
    ga_array *x_in, *x = NULL, *w = NULL, *out = NULL;
    PyObject *w_obj;
    Py_ssize_t minlength;
    uint64_t *range = NULL;
    uint64_t host[2];
    int failed = 0;
    if (!PyArg_ParseTuple(args, "O!On", &GA_ArrayType, &x_in, &w_obj, &minlength))
        return NULL;
    if (x_in->ndim != 1 || (w_obj != Py_None && (!ga_array_check(w_obj) ||
                                                  ga_array_size((ga_array *)w_obj) !=
                                                  ga_array_size(x_in)))) {
        PyErr_SetString(PyExc_ValueError, "_bincount needs a 1-d array and weights of its size");
        return NULL;
    }
    if (ga_runtime_use_device(x_in->device) < 0 ||
        (x = ga_array_contiguous_as(x_in, PyArray_DescrFromType(NPY_INT64))) == NULL)
        return NULL;
    if (w_obj != Py_None &&
        (w = ga_array_contiguous_as((ga_array *)w_obj, PyArray_DescrFromType(NPY_FLOAT64))) == NULL)
        goto fail;
    cudaStream_t stream = ga_runtime_device_stream(x->device);
    npy_intp n = x->shape[0], len = minlength;
    if (n > 0) {
        range = ga_pool_malloc(x->device, 16, stream, &failed);
        if (failed)
            goto fail;
        GA_CUDA_TRY(cudaMemsetAsync(range, 0, 16, stream));
        GA_LAUNCH_TRY(ga_launch_key_range(GA_INT64, n, x->data, range, stream), stream);
        if (ga_read_small(host, range, 16, stream, "reading the range of bincount's input") < 0)
            goto fail;
        ga_pool_free(x->device, range, 16, stream);
        range = NULL;
        int64_t lo = (int64_t)(~host[0] ^ ((uint64_t)1 << 63));
        int64_t hi = (int64_t)(host[1] ^ ((uint64_t)1 << 63));
        if (lo < 0) {
            PyErr_SetString(PyExc_ValueError, "'list' argument must have no negative elements");
            goto fail;
        }
        if (hi + 1 > len)
            len = (npy_intp)hi + 1;
    }
    out = zeros_1d(len, w ? NPY_FLOAT64 : NPY_INT64, x->device, stream);
    if (out == NULL)
        goto fail;
    if (n > 0)
        GA_LAUNCH_TRY(ga_launch_bincount(n, (const int64_t *)x->data,
                                         w ? (const double *)w->data : NULL, len, out->data,
                                         stream), stream);
    Py_DECREF(x);
    Py_XDECREF(w);
    return (PyObject *)out;
fail:
    if (range != NULL)
        ga_pool_free(x->device, range, 16, ga_runtime_device_stream(x->device));
    Py_XDECREF(x);
    Py_XDECREF(w);
    Py_XDECREF(out);
    return NULL;
}

/* _histogram_edges(a, nbins) -> (edges, edges64): numpy.histogram's
 * range=None edges from a's minimum and maximum, computed on the device
 * (edges in a's float type, float64 for integers; edges64 as float64). */
static PyObject *
py_histogram_edges(PyObject *self, PyObject *args)
{
    ga_array *a, *src = NULL, *edges = NULL, *edges64 = NULL;
    Py_ssize_t nbins;
    uint64_t *range = NULL;
    int failed = 0;
    if (!PyArg_ParseTuple(args, "O!n", &GA_ArrayType, &a, &nbins) ||
        !is_orderable(a, "histogram"))
        return NULL;
    if (nbins < 1 || a->type == GA_BOOL || ga_array_size(a) == 0) {
        PyErr_SetString(PyExc_ValueError, "_histogram_edges needs bins >= 1 and a non-empty "
                        "numeric array");
        return NULL;
    }
    if (ga_runtime_use_device(a->device) < 0 || (src = ga_array_contiguous_as(a, NULL)) == NULL)
        return NULL;
    cudaStream_t stream = ga_runtime_device_stream(a->device);
    npy_intp ne = nbins + 1;
    int etype = is_float_type(a->type) ? a->descr->type_num : NPY_FLOAT64;
    edges = ga_array_empty(1, &ne, PyArray_DescrFromType(etype), 0, a->device);
    edges64 = ga_array_empty(1, &ne, PyArray_DescrFromType(NPY_FLOAT64), 0, a->device);
    if (edges == NULL || edges64 == NULL)
        goto fail;
    range = ga_pool_malloc(a->device, 16, stream, &failed);
    if (failed)
        goto fail;
    GA_CUDA_TRY(cudaMemsetAsync(range, 0, 16, stream));
    GA_LAUNCH_TRY(ga_launch_key_range((ga_type)src->type, ga_array_size(src), src->data, range,
                                      stream), stream);
    GA_LAUNCH_TRY(ga_launch_histogram_edges((ga_type)src->type, range, nbins, edges->data,
                                            (double *)edges64->data, stream), stream);
    ga_pool_free(a->device, range, 16, stream);
    Py_DECREF(src);
    return Py_BuildValue("(NN)", edges, edges64);
fail:
    if (range != NULL)
        ga_pool_free(a->device, range, 16, stream);
    Py_XDECREF(src);
    Py_XDECREF(edges);
    Py_XDECREF(edges64);
    return NULL;
}

/* _histogram_counts(a, edges64, weights) -> nbins + 1 counts (int64, or
 * float64 sums of weights): values in [edges[b], edges[b+1]), the last bin
 * closed; the extra last element is the total inside the edges. */
static PyObject *
py_histogram_counts(PyObject *self, PyObject *args)
{
    ga_array *a, *edges, *src = NULL, *w = NULL, *out = NULL;
    PyObject *w_obj;
    if (!PyArg_ParseTuple(args, "O!O!O", &GA_ArrayType, &a, &GA_ArrayType, &edges, &w_obj) ||
        !is_orderable(a, "histogram"))
        return NULL;
    if (edges->ndim != 1 || edges->shape[0] < 2 || edges->type != GA_FLOAT64 ||
        !(edges->flags & GA_C_CONTIGUOUS) || edges->device != a->device ||
        (w_obj != Py_None && (!ga_array_check(w_obj) ||
                              ga_array_size((ga_array *)w_obj) != ga_array_size(a)))) {
        PyErr_SetString(PyExc_ValueError, "_histogram_counts needs contiguous float64 edges and "
                        "weights of a's size on a's device");
        return NULL;
    }
    if (ga_runtime_use_device(a->device) < 0 || (src = ga_array_contiguous_as(a, NULL)) == NULL)
        return NULL;
    if (w_obj != Py_None &&
        (w = ga_array_contiguous_as((ga_array *)w_obj, PyArray_DescrFromType(NPY_FLOAT64))) == NULL)
        goto fail;
    cudaStream_t stream = ga_runtime_device_stream(a->device);
    npy_intp nbins = edges->shape[0] - 1;
    out = zeros_1d(nbins + 1, w ? NPY_FLOAT64 : NPY_INT64, a->device, stream);
    if (out == NULL)
        goto fail;
    GA_LAUNCH_TRY(ga_launch_histogram((ga_type)src->type, ga_array_size(src), src->data,
                                      w ? (const double *)w->data : NULL, nbins,
                                      (const double *)edges->data, out->data, stream), stream);
    Py_DECREF(src);
    Py_XDECREF(w);
    return (PyObject *)out;
fail:
    Py_XDECREF(src);
    Py_XDECREF(w);
    Py_XDECREF(out);
    return NULL;
}

/* _sort_keys(host_array, canon_zero) -> uint64 NumPy array: the radix keys
 * of a host array's elements (tests compare their order with NumPy's). */
static PyObject *
py_sort_keys(PyObject *self, PyObject *args)
{
    PyObject *obj;
    int canon_zero;
    if (!PyArg_ParseTuple(args, "Op", &obj, &canon_zero))
        return NULL;
    PyArrayObject *h = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, NPY_ARRAY_CARRAY |
                                                        NPY_ARRAY_NOTSWAPPED, NULL);
    if (h == NULL)
        return NULL;
    int code = ga_dtype_code(PyArray_DESCR(h), "_sort_keys");
    if (code < 0 || code == GA_COMPLEX64 || code == GA_COMPLEX128) {
        if (code >= 0)
            PyErr_SetString(PyExc_TypeError, "_sort_keys: complex numbers have no order");
        Py_DECREF(h);
        return NULL;
    }
    npy_intp n = PyArray_SIZE(h);
    PyArrayObject *keys = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_UINT64);
    if (keys != NULL)
        ga_sort_keys_host((ga_type)code, canon_zero, PyArray_DATA(h), n,
                          (uint64_t *)PyArray_DATA(keys));
    Py_DECREF(h);
    return (PyObject *)keys;
}

/* --------------------------------------------------------------- methods */

/* The arguments of ndarray.sort and ndarray.argsort (axis=-1, kind=None,
 * order=None, *, stable=None), checked in NumPy's order: order (no fields
 * here), then the array's dtype.  kind and stable are accepted and
 * ignored: the sort is always stable.  0 / -1. */
static int
sort_method_args(ga_array *a, PyObject *args, PyObject *kwds, const char *fmt,
                 PyObject **axis_obj)
{
    static char *kwlist[] = {"axis", "kind", "order", "stable", NULL};
    PyObject *kind = Py_None, *order = Py_None, *stable = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, fmt, kwlist, axis_obj, &kind, &order, &stable))
        return -1;
    if (order != Py_None) {
        PyErr_SetString(PyExc_ValueError, "Cannot specify order when the array has no fields.");
        return -1;
    }
    return is_orderable(a, "a") ? 0 : -1;
}

/* a.sort(): in place along an integer axis.  The sorted copy is written
 * back: the gather that sorts cannot write over its own source. */
PyObject *
ga_array_sort(PyObject *self, PyObject *args, PyObject *kwds)
{
    ga_array *a = (ga_array *)self, *sorted;
    PyObject *axis_obj = axis_minus_one, *index;
    int axis;
    if (sort_method_args(a, args, kwds, "|OOO$O:sort", &axis_obj) < 0)
        return NULL;
    /* operator.index's TypeError for None and other non-integers */
    if ((index = PyNumber_Index(axis_obj)) == NULL)
        return NULL;
    int rc = ga_normalize_axis(index, a->ndim, &axis);
    Py_DECREF(index);
    if (rc < 0 || (sorted = sort_along(a, axis, 0)) == NULL)
        return NULL;
    rc = ga_assign_array(a, sorted);
    Py_DECREF(sorted);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* a.argsort(): int64 indices along `axis` (None: the flattened array); a
 * 0-d array is taken as 1-d, as NumPy's argsort does. */
PyObject *
ga_array_argsort(PyObject *self, PyObject *args, PyObject *kwds)
{
    ga_array *a = (ga_array *)self;
    PyObject *axis_obj = axis_minus_one, *r = NULL;
    int axis;
    if (sort_method_args(a, args, kwds, "|OOO$O:argsort", &axis_obj) < 0)
        return NULL;
    if (a->ndim == 0) {
        npy_intp one = 1;
        if ((a = (ga_array *)ga_array_reshape(a, 1, &one, 'C')) == NULL)
            return NULL;
    } else {
        Py_INCREF(a);
    }
    if (parse_axis(axis_obj, a->ndim, &axis) == 0)
        r = (PyObject *)sort_along(a, axis, 1);
    Py_DECREF(a);
    return r;
}

static PyMethodDef sort_functions[] = {
    {"_sort", py_sort, METH_VARARGS, "_sort(a, axis, arg) -> stable sort or argsort"},
    {"_quantile", py_quantile, METH_VARARGS,
     "_quantile(a, q, mode, ignore_nan, axis) -> median (q None) or quantiles"},
    {"_unique", py_unique, METH_VARARGS,
     "_unique(a, return_index, return_inverse, return_counts, equal_nan) -> 4-tuple"},
    {"_searchsorted", py_searchsorted, METH_VARARGS,
     "_searchsorted(a, v, side_right, direction) -> int64 insertion points"},
    {"_bincount", py_bincount, METH_VARARGS, "_bincount(x, weights, minlength) -> counts"},
    {"_histogram_edges", py_histogram_edges, METH_VARARGS,
     "_histogram_edges(a, nbins) -> (edges, edges64) for range=None"},
    {"_sort_keys", py_sort_keys, METH_VARARGS,
     "_sort_keys(host_array, canon_zero) -> uint64 radix keys (host; for tests)"},
    {"_histogram_counts", py_histogram_counts, METH_VARARGS,
     "_histogram_counts(a, edges64, weights) -> nbins + 1 counts (the last: the total)"},
    {NULL, NULL, 0, NULL},
};

int
ga_sort_init(PyObject *m)
{
    /* the quantile modes and methods, for the Python layer
     * (gpuarr/_sorting.py) */
    static const struct { const char *name; int value; } codes[] = {
        {"GA_Q_MEDIAN", GA_Q_MEDIAN}, {"GA_Q_LINEAR_WEAK", GA_Q_LINEAR_WEAK},
        {"GA_Q_LINEAR_STRONG", GA_Q_LINEAR_STRONG}, {"GA_Q_PICK", GA_Q_PICK},
        {"GA_QM_LINEAR", GA_QM_LINEAR}, {"GA_QM_LOWER", GA_QM_LOWER},
        {"GA_QM_HIGHER", GA_QM_HIGHER}, {"GA_QM_NEAREST", GA_QM_NEAREST},
        {"GA_QM_MIDPOINT", GA_QM_MIDPOINT}, {"GA_QM_INVERTED_CDF", GA_QM_INVERTED_CDF},
        {"GA_QM_AVERAGED_INVERTED_CDF", GA_QM_AVERAGED_INVERTED_CDF},
        {"GA_QM_CLOSEST_OBSERVATION", GA_QM_CLOSEST_OBSERVATION},
        {"GA_QM_INTERPOLATED_INVERTED_CDF", GA_QM_INTERPOLATED_INVERTED_CDF},
        {"GA_QM_HAZEN", GA_QM_HAZEN}, {"GA_QM_WEIBULL", GA_QM_WEIBULL},
        {"GA_QM_MEDIAN_UNBIASED", GA_QM_MEDIAN_UNBIASED},
        {"GA_QM_NORMAL_UNBIASED", GA_QM_NORMAL_UNBIASED}, {"GA_QM_COUNT", GA_QM_COUNT},
    };
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); ++i)
        if (PyModule_AddIntConstant(m, codes[i].name, codes[i].value) < 0)
            return -1;
    if ((axis_minus_one = PyLong_FromLong(-1)) == NULL)
        return -1;
    return PyModule_AddFunctions(m, sort_functions);
}
