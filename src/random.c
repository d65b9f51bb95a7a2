/*
 * random.c -- the C side of gpuarr.random: allocate, launch the Philox
 * kernels of src/kernels/random.cu, report how far the stream moved.
 *
 * The generator state (a 64-bit key and a 128-bit counter) lives in Python
 * (gpuarr/random.py); every function here takes it as (key, ctr_hi,
 * ctr_lo) and returns (array, next ctr_lo), ctr_lo advanced by the Philox
 * blocks the launch consumed, so draws continue one stream and the same
 * seed replays the same values.  Results are flat C-contiguous arrays;
 * shapes and argument checking are Python's business.
 *
 * Ownership: arrays returned are new references.  The permutation's scratch
 * (sort keys, indices and CUB's temporary storage) is one pool block
 * returned to the pool right after the launches, on the same stream, so it
 * is not handed out again before the sort has finished with it.
 */
#include "gpuarr.h"

/* The destination of n values of `descr` (stolen): `out` when given, which
 * must then be a writeable C-contiguous device array of exactly that dtype
 * and size on the current device; else a new 1-d array. */
static ga_array *
random_dest(npy_intp n, PyArray_Descr *descr, PyObject *out)
{
    if (out == NULL || out == Py_None)
        return ga_array_empty(1, &n, descr, 0, ga_runtime_current_device());
    ga_array *a = (ga_array *)out;
    if (!ga_array_check(out)) {
        PyErr_Format(PyExc_TypeError, "out must be a gpuarr.ndarray, not %.100s",
                     Py_TYPE(out)->tp_name);
    } else if (!PyArray_EquivTypes(a->descr, descr)) {
        PyErr_SetString(PyExc_TypeError, "out has the wrong dtype");
    } else if (!(a->flags & GA_C_CONTIGUOUS) || !(a->flags & GA_WRITEABLE) ||
               ga_array_size(a) != n || a->device != ga_runtime_current_device()) {
        PyErr_SetString(PyExc_ValueError, "out must be a writeable C-contiguous array of the "
                        "requested size on the current device");
    } else {
        Py_DECREF(descr);
        Py_INCREF(a);
        return a;
    }
    Py_DECREF(descr);
    return NULL;
}

static PyObject *
random_result(ga_array *a, const ga_philox *g, uint64_t used)
{
    return Py_BuildValue("(NK)", (PyObject *)a, (unsigned long long)(g->ctr_lo + used));
}

/* A supported dtype for `what`, or NULL with TypeError naming it.
 * `floating`: float32/float64; else integer or bool types. */
static PyArray_Descr *
random_dtype(PyObject *obj, int floating, const char *what)
{
    PyArray_Descr *d = NULL;
    if (!PyArray_DescrConverter(obj, &d))
        return NULL;
    int ok = floating ? (d->type_num == NPY_FLOAT32 || d->type_num == NPY_FLOAT64)
                      : (PyDataType_ISINTEGER(d) || PyDataType_ISBOOL(d));
    if (ok && PyArray_ISNBO(d->byteorder))
        return d;
    PyErr_Format(PyExc_TypeError, "Unsupported dtype %R for %s", (PyObject *)d, what);
    Py_DECREF(d);
    return NULL;
}

/* Shared by _random_uniform and _random_normal:
 * (n, dtype, shift, scale, key, ctr_hi, ctr_lo, out=None). */
static PyObject *
random_real(PyObject *args, int normal)
{
    Py_ssize_t n;
    PyObject *dtype, *out = NULL;
    double shift, scale;
    ga_philox g;
    unsigned long long key, hi, lo;
    if (!PyArg_ParseTuple(args, "nOddKKK|O", &n, &dtype, &shift, &scale, &key, &hi, &lo, &out))
        return NULL;
    PyArray_Descr *descr = random_dtype(dtype, 1, normal ? "normal" : "uniform");
    if (descr == NULL)
        return NULL;
    ga_array *a = random_dest(n < 0 ? 0 : n, descr, out);
    if (a == NULL)
        return NULL;
    g.key = key;
    g.ctr_hi = hi;
    g.ctr_lo = lo;
    uint64_t used = 0;
    cudaStream_t stream = ga_runtime_device_stream(a->device);
    if (normal)
        GA_LAUNCH_TRY(ga_launch_random_normal((ga_type)a->type, ga_array_size(a), a->data, shift,
                                              scale, &g, &used, stream), stream);
    else
        GA_LAUNCH_TRY(ga_launch_random_uniform((ga_type)a->type, ga_array_size(a), a->data, shift,
                                               scale, &g, &used, stream), stream);
    return random_result(a, &g, used);
fail:
    Py_DECREF(a);
    return NULL;
}

/* _random_uniform(n, dtype, low, scale, key, ctr_hi, ctr_lo, out=None) ->
 * (array, ctr_lo'): low + scale*u, u uniform on [0, 1). */
static PyObject *
py_random_uniform(PyObject *self, PyObject *args)
{
    return random_real(args, 0);
}

/* _random_normal(n, dtype, loc, scale, key, ctr_hi, ctr_lo, out=None) ->
 * (array, ctr_lo'): loc + scale*z, z standard normal. */
static PyObject *
py_random_normal(PyObject *self, PyObject *args)
{
    return random_real(args, 1);
}

/* _random_integers(n, dtype, low, range, key, ctr_hi, ctr_lo) ->
 * (array, ctr_lo'): integers in [low, low + range), low and range as
 * 64-bit two's complement (range 0 means 2^64).  The caller has checked
 * that the interval fits the dtype. */
static PyObject *
py_random_integers(PyObject *self, PyObject *args)
{
    Py_ssize_t n;
    PyObject *dtype;
    unsigned long long low, range, key, hi, lo;
    ga_philox g;
    if (!PyArg_ParseTuple(args, "nOKKKKK", &n, &dtype, &low, &range, &key, &hi, &lo))
        return NULL;
    PyArray_Descr *descr = random_dtype(dtype, 0, "integers");
    if (descr == NULL)
        return NULL;
    int itemsize = (int)PyDataType_ELSIZE(descr);
    if (itemsize < 8 && (range == 0 || range > (1ULL << 32))) {
        Py_DECREF(descr);
        PyErr_SetString(PyExc_ValueError, "range does not fit the dtype");
        return NULL;
    }
    npy_intp dims[1] = {n < 0 ? 0 : n};
    ga_array *a = ga_array_empty(1, dims, descr, 0, ga_runtime_current_device());
    if (a == NULL)
        return NULL;
    g.key = key;
    g.ctr_hi = hi;
    g.ctr_lo = lo;
    uint64_t used = 0;
    cudaStream_t stream = ga_runtime_device_stream(a->device);
    GA_LAUNCH_TRY(ga_launch_random_integers(itemsize, dims[0], a->data, low, range, &g, &used,
                                            stream), stream);
    return random_result(a, &g, used);
fail:
    Py_DECREF(a);
    return NULL;
}

/* _random_permutation(n, key, ctr_hi, ctr_lo) -> (int64 array, ctr_lo'):
 * a random permutation of 0..n-1. */
static PyObject *
py_random_permutation(PyObject *self, PyObject *args)
{
    Py_ssize_t n;
    unsigned long long key, hi, lo;
    ga_philox g;
    void *temp = NULL;
    size_t temp_bytes = 0;
    int failed = 0;
    if (!PyArg_ParseTuple(args, "nKKK", &n, &key, &hi, &lo))
        return NULL;
    npy_intp dims[1] = {n < 0 ? 0 : n};
    ga_array *a = ga_array_empty(1, dims, PyArray_DescrFromType(NPY_INT64), 0,
                                 ga_runtime_current_device());
    if (a == NULL)
        return NULL;
    g.key = key;
    g.ctr_hi = hi;
    g.ctr_lo = lo;
    uint64_t used = 0;
    cudaStream_t stream = ga_runtime_device_stream(a->device);
    GA_CUDA_TRY(ga_launch_random_permutation(dims[0], (int64_t *)a->data, NULL, &temp_bytes, &g,
                                             &used, stream));
    if (dims[0] > 0) {
        temp = ga_pool_malloc(a->device, temp_bytes, stream, &failed);
        if (failed)
            goto fail;
        GA_LAUNCH_TRY(ga_launch_random_permutation(dims[0], (int64_t *)a->data, temp, &temp_bytes,
                                                   &g, &used, stream), stream);
        ga_pool_free(a->device, temp, temp_bytes, stream);
        temp = NULL;
    }
    return random_result(a, &g, used);
fail:
    if (temp != NULL)
        ga_pool_free(a->device, temp, temp_bytes, stream);
    Py_DECREF(a);
    return NULL;
}

/* _random_gather_rows(src, index) -> array: rows src[index[r]] of a
 * C-contiguous device array with ndim >= 1, for a 1-d contiguous int64
 * device array of in-range indices (not checked: the callers make them). */
static PyObject *
py_random_gather_rows(PyObject *self, PyObject *args)
{
    ga_array *src, *index;
    npy_intp dims[NPY_MAXDIMS];
    if (!PyArg_ParseTuple(args, "O!O!", &GA_ArrayType, &src, &GA_ArrayType, &index))
        return NULL;
    if (src->ndim < 1 || !(src->flags & GA_C_CONTIGUOUS) || index->ndim != 1 ||
        !(index->flags & GA_C_CONTIGUOUS) || index->descr->type_num != NPY_INT64 ||
        src->device != index->device) {
        PyErr_SetString(PyExc_ValueError, "_random_gather_rows needs a C-contiguous array of "
                        "at least one dimension and a contiguous 1-d int64 index on its device");
        return NULL;
    }
    int64_t row_bytes = ga_array_itemsize(src);
    dims[0] = index->shape[0];
    for (int i = 1; i < src->ndim; ++i) {
        dims[i] = src->shape[i];
        row_bytes *= src->shape[i];
    }
    Py_INCREF(src->descr);
    ga_array *out = ga_array_empty(src->ndim, dims, src->descr, 0, src->device);
    if (out == NULL)
        return NULL;
    cudaStream_t stream = ga_runtime_device_stream(out->device);
    GA_LAUNCH_TRY(ga_launch_gather_rows(dims[0], row_bytes, out->data, src->data,
                                        (const int64_t *)index->data, stream), stream);
    return (PyObject *)out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* _random_philox(key, ctr_hi, ctr_lo) -> four ints: the stream's first
 * block, computed on the host (known-answer tests; no device needed). */
static PyObject *
py_random_philox(PyObject *self, PyObject *args)
{
    unsigned long long key, hi, lo;
    uint32_t w[4];
    if (!PyArg_ParseTuple(args, "KKK", &key, &hi, &lo))
        return NULL;
    ga_philox g = {key, hi, lo};
    ga_random_philox_host(&g, 0, w);
    return Py_BuildValue("(kkkk)", (unsigned long)w[0], (unsigned long)w[1],
                         (unsigned long)w[2], (unsigned long)w[3]);
}

static PyMethodDef random_functions[] = {
    {"_random_uniform", py_random_uniform, METH_VARARGS,
     "_random_uniform(n, dtype, low, scale, key, ctr_hi, ctr_lo, out=None) -> (array, ctr_lo)"},
    {"_random_normal", py_random_normal, METH_VARARGS,
     "_random_normal(n, dtype, loc, scale, key, ctr_hi, ctr_lo, out=None) -> (array, ctr_lo)"},
    {"_random_integers", py_random_integers, METH_VARARGS,
     "_random_integers(n, dtype, low, range, key, ctr_hi, ctr_lo) -> (array, ctr_lo)"},
    {"_random_permutation", py_random_permutation, METH_VARARGS,
     "_random_permutation(n, key, ctr_hi, ctr_lo) -> (int64 array, ctr_lo)"},
    {"_random_gather_rows", py_random_gather_rows, METH_VARARGS,
     "_random_gather_rows(src, index) -> src's rows at index"},
    {"_random_philox", py_random_philox, METH_VARARGS,
     "_random_philox(key, ctr_hi, ctr_lo) -> Philox4x32-10 block, computed on the host"},
    {NULL, NULL, 0, NULL},
};

int
ga_random_init(PyObject *m)
{
    return PyModule_AddFunctions(m, random_functions);
}
