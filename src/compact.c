/*
 * compact.c -- compaction: the elements or positions where a condition is
 * true (compress, extract, nonzero, flatnonzero, a boolean mask of the
 * array's shape in a[mask]), on compact.cu's kernel.
 *
 * Synchronisation
 * ---------------
 * Compaction is the one kind of operation whose result size depends on the
 * data, so it synchronises once: the compaction kernel (compact.cu) writes
 * the kept elements into a buffer sized for all of them and the count
 * straight into pinned host memory, and the host waits for the stream (for
 * a condition longer than the array, ga_read_small also copies the first
 * true position beyond it).  The result then takes the count as its
 * length; its block is the full-size one unless that would waste more
 * than half of a large block, in which case the kept elements are copied
 * into an exact block (no second synchronisation).
 *
 * Ownership: every array made here is a new reference; scratch blocks come
 * from the pool and return to it on the stream that used them, before the
 * function returns.
 */
#include "gpuarr.h"

/* ------------------------------------------------------------ helpers ---- */

/* a's truth values as a C-contiguous bool array (NumPy's nonzero test). */
static ga_array *
truth_flags(ga_array *a)
{
    if (a->type == GA_BOOL)
        return ga_array_contiguous_as(a, NULL);
    return ga_array_copy_as(a, PyArray_DescrFromType(NPY_BOOL), 0);
}

ga_array *
ga_compact_shrink(ga_array *out, npy_intp count)
{
    int item = ga_array_itemsize(out);
    npy_intp room = out->shape[0];
    out->shape[0] = count;
    ga_array_update_flags(out);
    if (count >= room / 2 || (size_t)room * item < ((size_t)1 << 20))
        return out;
    Py_INCREF(out->descr);
    ga_array *exact = ga_array_empty(1, &count, out->descr, 0, out->device);
    if (exact == NULL)
        goto fail;
    cudaStream_t stream = ga_runtime_device_stream(exact->device);
    if (count)
        GA_CUDA_TRY(cudaMemcpyAsync(exact->data, out->data, (size_t)count * item,
                                    cudaMemcpyDeviceToDevice, stream));
    Py_DECREF(out);
    return exact;
fail:
    Py_XDECREF(exact);
    Py_DECREF(out);
    return NULL;
}

/* ------------------------------------------------------------ compaction - */

int
ga_compact_counted(int device, size_t scratch_bytes, ga_counted_launch launch, const void *ctx,
                   const uint64_t *first, uint64_t *first_host, int64_t *count,
                   cudaStream_t stream)
{
    char *scratch = NULL;
    int64_t *host = ga_pinned_malloc(sizeof(int64_t));
    if (host == NULL)
        return -1;
    *host = 0;
    if ((scratch = ga_pool_scratch(device, &scratch_bytes, stream)) == NULL)
        goto fail;
    if (ga_check_launch(launch(ctx, scratch, scratch_bytes, host, stream), "compaction",
                        stream) < 0)
        goto fail;
    ga_pool_free(device, scratch, scratch_bytes, stream);
    scratch = NULL;
    if (first != NULL) {
        if (ga_read_small(first_host, first, sizeof(*first), stream,
                          "reading the number of selected elements") < 0)
            goto fail;
    } else if (ga_wait_stream(stream, "reading the number of selected elements") < 0) {
        goto fail;
    }
    *count = *(volatile int64_t *)host;
    ga_pinned_free(host, sizeof(int64_t));
    return 0;
fail:
    if (scratch != NULL)
        ga_pool_free(device, scratch, scratch_bytes, stream);
    ga_pinned_free(host, sizeof(int64_t));
    return -1;
}

/* compact()'s launch through ga_compact_counted. */
struct compact_args {
    int itemsize;
    int64_t n;
    const char *src;
    const uint8_t *flags;
    char *dst;
};

static cudaError_t
compact_launch(const void *ctx, void *scratch, size_t scratch_bytes, int64_t *count,
               cudaStream_t stream)
{
    const struct compact_args *c = ctx;
    return ga_launch_compact(c->itemsize, c->n, c->src, c->flags, c->dst, count, scratch,
                             &scratch_bytes, stream);
}

/* Compact the first n flags (n > 0): dst gets the kept elements of src
 * (itemsize bytes each) or, with itemsize 0, their int64 positions; with
 * `first`, that device word is read into *first_host too.  0 / -1. */
static int
compact(int device, int itemsize, int64_t n, const char *src, const uint8_t *flags, char *dst,
        int64_t *count, const uint64_t *first, uint64_t *first_host, cudaStream_t stream)
{
    struct compact_args c = {itemsize, n, src, flags, dst};
    size_t temp_bytes = 0;
    GA_CUDA_TRY(ga_launch_compact(itemsize, n, NULL, NULL, NULL, NULL, NULL, &temp_bytes,
                                  stream));
    return ga_compact_counted(device, temp_bytes, compact_launch, &c, first, first_host, count,
                              stream);
fail:
    return -1;
}

int
ga_compact_flag_positions(int device, int64_t n, const uint8_t *flags, int64_t *dst,
                         int64_t *count, cudaStream_t stream)
{
    if (n <= 0) {
        *count = 0;
        return 0;
    }
    return compact(device, 0, n, NULL, flags, (char *)dst, count, NULL, NULL, stream);
}

/* The elements of `values` (C order) where `cond` is true, or with values
 * NULL the int64 positions of cond's true elements; over the first
 * min(cond.size, limit) elements of cond (C order).  A true element of cond
 * at or past `limit` raises IndexError, as numpy.compress does.  One
 * synchronisation. */
ga_array *
ga_compact_true(ga_array *cond, ga_array *values, npy_intp limit)
{
    ga_array *flags = NULL, *src = NULL, *out = NULL;
    uint64_t *first = NULL;
    uint64_t first_host = UINT64_MAX;
    int failed = 0;
    int64_t count = 0;
    npy_intp ncond = ga_array_size(cond);
    npy_intp n = ncond < limit ? ncond : limit;
    int device = cond->device;

    if ((values != NULL && ga_check_same_device(cond->device, values->device) < 0) || ga_runtime_use_device(device) < 0)
        return NULL;
    cudaStream_t stream = ga_runtime_device_stream(device);
    if ((flags = truth_flags(cond)) == NULL)
        goto fail;
    if (values != NULL && (src = ga_array_contiguous_as(values, NULL)) == NULL)
        goto fail;
    PyArray_Descr *descr = values != NULL ? values->descr : PyArray_DescrFromType(NPY_INT64);
    if (values != NULL)
        Py_INCREF(descr);
    if ((out = ga_array_empty(1, &n, descr, 0, device)) == NULL)
        goto fail;
    if (n == 0 && ncond <= limit)
        goto done;
    if (ncond > limit) {
        /* numpy.compress: a true condition element past the array's end */
        first = ga_pool_malloc(device, sizeof(uint64_t), stream, &failed);
        if (failed)
            goto fail;
        GA_CUDA_TRY(cudaMemsetAsync(first, 0xff, sizeof(uint64_t), stream));
        GA_LAUNCH_TRY(ga_launch_first_flag(ncond - limit, (const uint8_t *)flags->data + limit,
                                           first, stream), stream);
    }
    if (n > 0) {
        if (compact(device, values != NULL ? ga_array_itemsize(values) : 0, n,
                    src != NULL ? src->data : NULL, (const uint8_t *)flags->data, out->data,
                    &count, first, &first_host, stream) < 0)
            goto fail;
    } else if (ga_read_small(&first_host, first, sizeof(first_host), stream,
                             "reading the number of selected elements") < 0) {
        goto fail;
    }
    if (first != NULL) {
        ga_pool_free(device, first, sizeof(uint64_t), stream);
        first = NULL;
    }
    if (first_host != UINT64_MAX) {
        ga_err_index_bounds((long long)(limit + (npy_intp)first_host), 0, limit);
        goto fail;
    }
done:
    Py_XDECREF(flags);
    Py_XDECREF(src);
    return ga_compact_shrink(out, (npy_intp)count);
fail:
    if (first != NULL)
        ga_pool_free(device, first, sizeof(uint64_t), stream);
    Py_XDECREF(flags);
    Py_XDECREF(src);
    Py_XDECREF(out);
    return NULL;
}

/* The coordinates of a's true elements: an (ndim, count) int64 array. */
ga_array *
ga_compact_nonzero(ga_array *a)
{
    if (a->ndim == 0) {
        PyErr_SetString(PyExc_ValueError, "Calling nonzero on 0d arrays is not allowed. Use "
                        "np.atleast_1d(scalar).nonzero() instead. If the context of this error "
                        "is of the form `arr[nonzero(cond)]`, just use `arr[cond]`.");
        return NULL;
    }
    if (a->ndim > GA_KMAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "nonzero: gpuarr handles at most %d dimensions",
                     GA_KMAX_DIMS);
        return NULL;
    }
    ga_array *flat = ga_compact_true(a, NULL, ga_array_size(a));
    if (flat == NULL)
        return NULL;
    npy_intp dims[2] = {a->ndim, flat->shape[0]};
    if (a->ndim == 1) {
        PyObject *r = ga_array_reshape(flat, 2, dims, 'C');
        Py_DECREF(flat);
        return (ga_array *)r;
    }
    ga_array *coords = ga_array_empty(2, dims, PyArray_DescrFromType(NPY_INT64), 0, a->device);
    if (coords == NULL)
        goto fail;
    int64_t shape[GA_KMAX_DIMS];
    for (int d = 0; d < a->ndim; ++d)
        shape[d] = a->shape[d];
    cudaStream_t stream = ga_runtime_device_stream(a->device);
    if (dims[1] > 0)
        GA_LAUNCH_TRY(ga_launch_unravel((const int64_t *)flat->data, dims[1], a->ndim, shape,
                                        (int64_t *)coords->data, stream), stream);
    Py_DECREF(flat);
    return coords;
fail:
    Py_XDECREF(coords);
    Py_DECREF(flat);
    return NULL;
}

/* ---------------------------------------------------------------- Python */

/* _compress(condition, a) -> a's elements (C order) where condition. */
static PyObject *
py_compress(PyObject *self, PyObject *args)
{
    ga_array *cond, *a;
    if (!PyArg_ParseTuple(args, "O!O!", &GA_ArrayType, &cond, &GA_ArrayType, &a))
        return NULL;
    return (PyObject *)ga_compact_true(cond, a, ga_array_size(a));
}

/* _flatnonzero(condition, limit) -> int64 positions of condition's true
 * elements among its first `limit`; IndexError for a true one beyond. */
static PyObject *
py_flatnonzero(PyObject *self, PyObject *args)
{
    ga_array *cond;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "O!n", &GA_ArrayType, &cond, &limit))
        return NULL;
    return (PyObject *)ga_compact_true(cond, NULL, limit < 0 ? 0 : limit);
}

/* _nonzero(a) -> (a.ndim, count) int64 coordinates of a's true elements. */
static PyObject *
py_nonzero(PyObject *self, PyObject *arg)
{
    if (!ga_array_check(arg)) {
        PyErr_SetString(PyExc_TypeError, "_nonzero needs a device array");
        return NULL;
    }
    return (PyObject *)ga_compact_nonzero((ga_array *)arg);
}

/* --------------------------------------------------------------- methods */

/* compress(condition, axis=None, out=None): the lesson's hot path (a
 * device condition, no axis, no out) runs here; the rest in Python. */
PyObject *
ga_array_compress(PyObject *self, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) == 1 && (kwds == NULL || PyDict_GET_SIZE(kwds) == 0) &&
        ga_array_check(PyTuple_GET_ITEM(args, 0)) &&
        ((ga_array *)PyTuple_GET_ITEM(args, 0))->ndim == 1) {
        ga_array *a = (ga_array *)self;
        return (PyObject *)ga_compact_true((ga_array *)PyTuple_GET_ITEM(args, 0), a,
                                       ga_array_size(a));
    }
    return ga_forward_method("ndarray.compress", self, args, kwds);
}

PyObject *
ga_array_nonzero(PyObject *self, PyObject *unused)
{
    PyObject *f = ga_helper("nonzero");
    return f ? PyObject_CallOneArg(f, self) : NULL;
}

static PyMethodDef compact_functions[] = {
    {"_compress", py_compress, METH_VARARGS,
     "_compress(condition, a) -> a's elements (C order) where condition is true"},
    {"_flatnonzero", py_flatnonzero, METH_VARARGS,
     "_flatnonzero(condition, limit) -> int64 positions of the true elements before limit"},
    {"_nonzero", py_nonzero, METH_O, "_nonzero(a) -> (a.ndim, count) int64 coordinates"},
    {NULL, NULL, 0, NULL},
};

int
ga_compact_init(PyObject *m)
{
    return PyModule_AddFunctions(m, compact_functions);
}
