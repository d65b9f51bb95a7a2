/*
 * measure.c -- the C side of gpuarr.scipy.ndimage's measurements
 * (sum_labels, mean, variance, extrema, centre of mass, median, histogram,
 * grouping for labeled_comprehension, value_indices, find_objects).
 *
 * Python (gpuarr/scipy/_measurements.py) reads SciPy's index argument and
 * hands over a slot map: mode (all elements, positive labels, a range of
 * consecutive labels, or a table), lo/nslots, and for tables either the
 * sorted key table and the inverse map made on the device by
 * _measure_index, or (MEASURE_MODE_INDEX) the device index itself, whose
 * table is made here: by the launch that clears the accumulators when the
 * index is small (_measure), else by a sort.  Here the
 * operands are brought to the forms the kernels take -- values float32 or
 * float64, labels int32, int64 or float64, all C-contiguous (other dtypes
 * and layouts are converted once) -- the scratch is taken from the pool,
 * the launchers of src/kernels/measure.cu run, and the results come back as
 * device arrays of float64 (int64 positions), one entry per index entry.
 * Nothing synchronises except where a result's size depends on the data
 * (find_objects without max_label, value_indices).
 *
 * Ownership: converted operands and scratch blocks live until the launches
 * are queued (scratch is returned to the pool on the current stream, which
 * orders its reuse after the kernels); results are new references.
 */
#include "gpuarr.h"

/* The dtype values are measured in: float32 and float64 as they are, every
 * other real type as float64. */
static int
measure_value_typenum(ga_array *a, const char *what)
{
    if (a->type == GA_COMPLEX64 || a->type == GA_COMPLEX128) {
        PyErr_Format(PyExc_TypeError, "%s: complex input is not supported", what);
        return -1;
    }
    return a->type == GA_FLOAT32 ? NPY_FLOAT32 : NPY_FLOAT64;
}

/* The dtype labels are compared in: int32/int64 as they are, uint64 and
 * floating types as float64, other integers and bool as int64. */
static int
measure_label_typenum(ga_array *a)
{
    switch (a->type) {
    case GA_INT32: return NPY_INT32;
    case GA_INT64: return NPY_INT64;
    case GA_COMPLEX64: case GA_COMPLEX128:
        PyErr_SetString(PyExc_TypeError, "labels: complex labels are not supported");
        return -1;
    case GA_UINT64: case GA_FLOAT16: case GA_FLOAT32: case GA_FLOAT64: return NPY_FLOAT64;
    default: return NPY_INT64;
    }
}

/* Operands and slot map of one measurement. */
typedef struct {
    ga_array *values, *labels, *table, *inverse, *index;
    ga_measure_args a;
} measure_ops;

static void
measure_ops_clear(measure_ops *m)
{
    Py_CLEAR(m->values);
    Py_CLEAR(m->labels);
    Py_CLEAR(m->table);
    Py_CLEAR(m->inverse);
    Py_CLEAR(m->index);
}

static ga_array *
measure_new(int ndim, npy_intp d0, npy_intp d1, int typenum, int device)
{
    npy_intp dims[2] = {d0, d1};
    return ga_array_empty(ndim, dims, PyArray_DescrFromType(typenum), 0, device);
}

/* An index as the kernels take it: C-contiguous int64, or float64 when
 * float_keys (float labels).  New reference, or NULL with an exception. */
static ga_array *
measure_index_keys(ga_array *index, int float_keys)
{
    if (ga_runtime_use_device(index->device) < 0)
        return NULL;
    if (index->type == GA_COMPLEX64 || index->type == GA_COMPLEX128) {
        PyErr_SetString(PyExc_TypeError, "index: complex values are not supported");
        return NULL;
    }
    return ga_array_contiguous_as(index,
                                  PyArray_DescrFromType(float_keys ? NPY_FLOAT64 : NPY_INT64));
}

/* The slot table of an index: its keys sorted (compared as int64, or as
 * float64 when float_keys) and the table slot of each entry, as new
 * device arrays.  0 / -1. */
static int
measure_index_table(ga_array *index, int float_keys, ga_array **table, ga_array **inverse)
{
    ga_array *conv = NULL;
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    cudaStream_t stream = ga_runtime_device_stream(index->device);
    *table = *inverse = NULL;
    npy_intp m = ga_array_size(index);
    if ((conv = measure_index_keys(index, float_keys)) == NULL)
        return -1;
    *table = measure_new(1, m, 0, NPY_UINT64, index->device);
    *inverse = measure_new(1, m, 0, NPY_INT64, index->device);
    if (*table == NULL || *inverse == NULL)
        goto fail;
    if (m > 0) {
        scratch_bytes = ga_measure_index_scratch_bytes(m);
        if (scratch_bytes > 0 &&
            (scratch = ga_pool_scratch(index->device, &scratch_bytes, stream)) == NULL)
            goto fail;
        GA_LAUNCH_TRY(ga_launch_measure_index(float_keys ? GA_FLOAT64 : GA_INT64, conv->data, m,
                                              scratch, (uint64_t *)(*table)->data,
                                              (int64_t *)(*inverse)->data, stream), stream);
        if (scratch != NULL)
            ga_pool_free(index->device, scratch, scratch_bytes, stream);
    }
    Py_DECREF(conv);
    return 0;
fail:
    if (scratch != NULL)
        ga_pool_free(index->device, scratch, scratch_bytes, stream);
    Py_XDECREF(conv);
    Py_CLEAR(*table);
    Py_CLEAR(*inverse);
    return -1;
}

/* _measure_index(index, float_keys) -> (table uint64[m], inverse int64[m]):
 * the slot table of an index (measure_index_table). */
static PyObject *
py_measure_index(PyObject *self, PyObject *args)
{
    ga_array *index, *table, *inverse;
    int float_keys;
    if (!PyArg_ParseTuple(args, "O!p", &GA_ArrayType, &index, &float_keys))
        return NULL;
    if (measure_index_table(index, float_keys, &table, &inverse) < 0)
        return NULL;
    return Py_BuildValue("(NN)", (PyObject *)table, (PyObject *)inverse);
}

/* A mode only Python passes: `table` is the caller's device index itself,
 * whose slot table is made here (one call instead of two from Python). */
#define MEASURE_MODE_INDEX 4

/* Fill `m` from the Python arguments (input, labels, mode, lo, nslots,
 * table, inverse).  `coords`: the statistic needs coordinates (centre of
 * mass), so the shape must be kept.  `convert_values`: bring the values to
 * float32/float64.  `raw_index`: the launcher takes a small device index
 * as it is (ga_launch_measure makes its table in the same launch that
 * clears the accumulators).  0 / -1. */
static int
measure_ops_parse(PyObject *args, int coords, int convert_values, int raw_index,
                  measure_ops *m, PyObject **rest)
{
    ga_array *input;
    PyObject *labels, *table, *inverse;
    int mode;
    long long lo, nslots;
    memset(m, 0, sizeof(*m));
    if (!PyArg_ParseTuple(args, "O!OiLLOO|O", &GA_ArrayType, &input, &labels, &mode, &lo,
                          &nslots, &table, &inverse, rest))
        return -1;
    if (ga_runtime_use_device(input->device) < 0)
        return -1;
    if (mode < GA_SLOT_ALL || mode > MEASURE_MODE_INDEX || nslots < 1) {
        PyErr_SetString(PyExc_ValueError, "bad slot map");
        return -1;
    }
    npy_intp n = ga_array_size(input);
    if (convert_values) {
        int vt = measure_value_typenum(input, "input");
        if (vt < 0 ||
            (m->values = ga_array_contiguous_as(input, PyArray_DescrFromType(vt))) == NULL)
            goto fail;
    } else {
        if ((m->values = ga_array_contiguous_as(input, NULL)) == NULL)
            goto fail;
    }
    if (mode != GA_SLOT_ALL) {
        if (!ga_array_check(labels)) {
            PyErr_SetString(PyExc_TypeError, "labels must be a gpuarr array");
            goto fail;
        }
        ga_array *l = (ga_array *)labels;
        if (ga_array_size(l) != n || l->device != input->device) {
            PyErr_SetString(PyExc_ValueError, "input and labels must have the same shape and "
                            "device");
            goto fail;
        }
        int lt = measure_label_typenum(l);
        if (lt < 0 ||
            (m->labels = ga_array_contiguous_as(l, PyArray_DescrFromType(lt))) == NULL)
            goto fail;
    }
    if (mode == MEASURE_MODE_INDEX) {
        ga_array *ix = (ga_array *)table;
        if (!ga_array_check(table) || ga_array_size(ix) != nslots) {
            PyErr_SetString(PyExc_ValueError, "index must be a device array of nslots entries");
            goto fail;
        }
        if (ix->device != input->device) {
            PyErr_SetString(PyExc_ValueError, "index must be on the device of input");
            goto fail;
        }
        int float_keys = m->labels->type == GA_FLOAT64;
        if (raw_index && nslots <= GA_MEASURE_INDEX_SMALL) {
            /* int64 serves float keys too: the launcher converts it. */
            if ((ix->type == GA_INT64 || (float_keys && ix->type == GA_FLOAT64)) &&
                (ix->flags & GA_C_CONTIGUOUS)) {
                Py_INCREF(ix);
                m->index = ix;
            } else if ((m->index = measure_index_keys(ix, float_keys)) == NULL) {
                goto fail;
            }
        } else if (measure_index_table(ix, float_keys, &m->table, &m->inverse) < 0) {
            goto fail;
        }
        mode = GA_SLOT_TABLE;
    } else if (mode == GA_SLOT_TABLE) {
        if (!ga_array_check(table) || ((ga_array *)table)->type != GA_UINT64 ||
            ga_array_size((ga_array *)table) != nslots ||
            !(((ga_array *)table)->flags & GA_C_CONTIGUOUS)) {
            PyErr_SetString(PyExc_ValueError, "table must be the uint64 key table of the index");
            goto fail;
        }
        m->table = (ga_array *)table;
        Py_INCREF(table);
    }
    if (inverse != Py_None && m->inverse == NULL) {
        if (!ga_array_check(inverse) || ((ga_array *)inverse)->type != GA_INT64 ||
            !(((ga_array *)inverse)->flags & GA_C_CONTIGUOUS)) {
            PyErr_SetString(PyExc_ValueError, "inverse must be a contiguous int64 array");
            goto fail;
        }
        m->inverse = (ga_array *)inverse;
        Py_INCREF(inverse);
    }

    ga_measure_args *a = &m->a;
    a->value_type = (ga_type)m->values->type;
    a->label_type = m->labels ? (ga_type)m->labels->type : GA_INT32;
    a->values = m->values->data;
    a->labels = m->labels ? m->labels->data : NULL;
    a->n = n;
    if (coords && input->ndim > GA_MEASURE_MAXDIM) {
        PyErr_Format(PyExc_NotImplementedError, "gpuarr measures coordinates of arrays with up "
                     "to %d dimensions", GA_MEASURE_MAXDIM);
        goto fail;
    }
    if (coords && input->ndim > 0) {
        a->ndim = input->ndim;
        for (int i = 0; i < input->ndim; ++i)
            a->shape[i] = input->shape[i];
    } else {
        a->ndim = 1;
        a->shape[0] = n;
    }
    a->map.mode = mode;
    a->map.lo = lo;
    a->map.nslots = nslots;
    a->map.table = m->table ? (const uint64_t *)m->table->data : NULL;
    a->inverse = m->inverse ? (const int64_t *)m->inverse->data : NULL;
    a->nout = m->inverse ? ga_array_size(m->inverse) : nslots;
    a->index = m->index ? m->index->data : NULL;
    a->index_type = m->index ? (ga_type)m->index->type : GA_INT64;
    int64_t blocks = (n + 1023) / 1024;
    int64_t cap = GA_MEASURE_BLOCKS_PER_SM * (int64_t)ga_runtime_sm_count(input->device);
    a->grid = (int)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
    return 0;
fail:
    measure_ops_clear(m);
    return -1;
}

/* Queue the passes of the statistics whose bits are set in `what` for `m`:
 * outs[k] receives statistic k as a new device array (float64[nout]; COM
 * float64[nout, ndim]; positions int64[nout]), NULL where not asked for.
 * 0 / -1 (outs cleared). */
static int
measure_launch(measure_ops *m, unsigned long what, ga_array **outs)
{
    void *ptrs[GA_MS_NSTATS] = {NULL};
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    int device = m->values->device;
    cudaStream_t stream = ga_runtime_device_stream(device);
    for (int k = 0; k < GA_MS_NSTATS; ++k) {
        outs[k] = NULL;
        if (!(what & (1ul << k)))
            continue;
        if (k == GA_MS_COM)
            outs[k] = measure_new(2, m->a.nout, m->a.ndim, NPY_FLOAT64, device);
        else
            outs[k] = measure_new(1, m->a.nout, 0, k == GA_MS_MINPOS || k == GA_MS_MAXPOS
                                  ? NPY_INT64 : NPY_FLOAT64, device);
        if (outs[k] == NULL)
            goto fail;
        ptrs[k] = outs[k]->data;
    }
    if (m->a.nout > 0) {
        scratch_bytes = ga_measure_scratch_bytes(&m->a);
        if ((scratch = ga_pool_scratch(device, &scratch_bytes, stream)) == NULL)
            goto fail;
        GA_LAUNCH_TRY(ga_launch_measure(&m->a, (unsigned int)what, scratch, ptrs, stream),
                      stream);
        ga_pool_free(device, scratch, scratch_bytes, stream);
    }
    return 0;
fail:
    if (scratch != NULL)
        ga_pool_free(device, scratch, scratch_bytes, stream);
    for (int k = 0; k < GA_MS_NSTATS; ++k)
        Py_CLEAR(outs[k]);
    return -1;
}

/* _measure(input, labels, mode, lo, nslots, table, inverse, what) -> tuple
 * of device arrays, one per statistic bit set in `what` in bit order:
 * float64[nout] (COM: float64[nout, ndim]; positions: int64[nout]). */
static PyObject *
py_measure(PyObject *self, PyObject *args)
{
    measure_ops m;
    PyObject *what_obj = NULL, *result = NULL;
    ga_array *outs[GA_MS_NSTATS] = {NULL};

    if (PyTuple_GET_SIZE(args) != 8) {
        PyErr_SetString(PyExc_TypeError, "_measure takes 8 arguments");
        return NULL;
    }
    unsigned long what = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(args, 7));
    if (PyErr_Occurred())
        return NULL;
    if (what == 0 || what >= (1ul << GA_MS_NSTATS)) {
        PyErr_SetString(PyExc_ValueError, "_measure: bad statistics mask");
        return NULL;
    }
    if (measure_ops_parse(args, (what >> GA_MS_COM) & 1, 1, 1, &m, &what_obj) < 0)
        return NULL;
    if (measure_launch(&m, what, outs) == 0) {
        int nstats = 0;
        for (int k = 0; k < GA_MS_NSTATS; ++k)
            nstats += outs[k] != NULL;
        if ((result = PyTuple_New(nstats)) != NULL) {
            for (int k = 0, j = 0; k < GA_MS_NSTATS; ++k) {
                if (outs[k] != NULL) {
                    PyTuple_SET_ITEM(result, j++, (PyObject *)outs[k]);
                    outs[k] = NULL;
                }
            }
        }
    }
    for (int k = 0; k < GA_MS_NSTATS; ++k)
        Py_XDECREF(outs[k]);
    measure_ops_clear(&m);
    return result;
}

/* A list of n new tuples of d new floats (0.0), each float owned by its
 * tuple alone, for measure_rows_fill.  Tuples of floats cannot be part of
 * a reference cycle: they are untracked at once (CPython's collector
 * would do so at its next pass, after traversing them). */
static PyObject *
measure_rows_new(npy_intp n, npy_intp d)
{
    PyObject *list = PyList_New(n);
    if (list == NULL)
        return NULL;
    for (npy_intp i = 0; i < n; ++i) {
        PyObject *row = PyTuple_New(d);
        if (row == NULL)
            goto fail;
        PyList_SET_ITEM(list, i, row);
        for (npy_intp j = 0; j < d; ++j) {
            PyObject *v = PyFloat_FromDouble(0.0);
            if (v == NULL)
                goto fail;
            PyTuple_SET_ITEM(row, j, v);
        }
        PyObject_GC_UnTrack(row);
    }
    return list;
fail:
    Py_DECREF(list);
    return NULL;
}

/* Give the floats of a measure_rows_new list the values host[i * d + j].
 * A float nobody else holds yet is written in place (no object is made
 * here); any other is replaced by a new one.  0 / -1. */
static int
measure_rows_fill(PyObject *list, const double *host, npy_intp n, npy_intp d)
{
    for (npy_intp i = 0; i < n; ++i) {
        PyObject *row = PyList_GET_ITEM(list, i);
        for (npy_intp j = 0; j < d; ++j) {
            PyObject *v = PyTuple_GET_ITEM(row, j);
            if (PyFloat_CheckExact(v) && Py_REFCNT(v) == 1) {
                ((PyFloatObject *)v)->ob_fval = host[i * d + j];
            } else {
                PyObject *f = PyFloat_FromDouble(host[i * d + j]);
                if (f == NULL)
                    return -1;
                PyTuple_SET_ITEM(row, j, f);
                Py_DECREF(v);
            }
        }
    }
    return 0;
}

/* _measure_com(input, labels, mode, lo, nslots, table, inverse) -> list of
 * nout tuples of ndim Python floats: centres of mass as SciPy returns
 * them.  The result is copied into a block of the pinned pool behind the
 * kernels, and the list, its tuples and their floats are made while the
 * GPU works (making ~1500 objects takes about as long as the measurement),
 * then filled once the copy has landed.  Synchronises. */
static PyObject *
py_measure_com(PyObject *self, PyObject *args)
{
    measure_ops m;
    PyObject *unused = NULL, *list = NULL;
    ga_array *outs[GA_MS_NSTATS] = {NULL};
    double *host = NULL;
    size_t nbytes = 0;
    int queued = 0;
    cudaError_t err;
    if (measure_ops_parse(args, 1, 1, 1, &m, &unused) < 0)
        return NULL;
    cudaStream_t stream = ga_runtime_device_stream(m.values->device);
    if (measure_launch(&m, 1ul << GA_MS_COM, outs) < 0)
        goto fail;
    npy_intp n = m.a.nout, d = m.a.ndim;
    nbytes = (size_t)n * (size_t)d * sizeof(double);
    if (nbytes > 0) {
        if ((host = ga_pinned_malloc(nbytes)) == NULL)
            goto fail;
        err = cudaMemcpyAsync(host, outs[GA_MS_COM]->data, nbytes, cudaMemcpyDeviceToHost,
                              stream);
        if (err != cudaSuccess) {
            ga_err_cuda(err, "reading centres of mass");
            goto fail;
        }
        queued = 1;
    }
    if ((list = measure_rows_new(n, d)) == NULL)
        goto fail;
    if (queued) {
        queued = 0;
        if (ga_wait_stream(stream, "reading centres of mass") < 0)
            goto fail;
        if (measure_rows_fill(list, host, n, d) < 0)
            goto fail;
    }
    ga_pinned_free(host, nbytes);
    Py_XDECREF(outs[GA_MS_COM]);
    measure_ops_clear(&m);
    return list;
fail:
    if (queued) {
        /* The copy must land before its block goes back to the pool. */
        Py_BEGIN_ALLOW_THREADS
        (void)cudaStreamSynchronize(stream);
        Py_END_ALLOW_THREADS
    }
    ga_pinned_free(host, nbytes);
    Py_XDECREF(list);
    Py_XDECREF(outs[GA_MS_COM]);
    measure_ops_clear(&m);
    return NULL;
}

/* Group the elements of `m` by slot (by value within a slot when
 * by_value): positions int64[n] and offsets int64[nslots + 1]. */
static int
measure_group(measure_ops *m, int by_value, ga_array **pos, ga_array **offsets)
{
    int device = m->values->device;
    cudaStream_t stream = ga_runtime_device_stream(device);
    size_t scratch_bytes = ga_measure_group_scratch_bytes(m->a.n);
    void *scratch = NULL;
    *pos = measure_new(1, m->a.n, 0, NPY_INT64, device);
    *offsets = measure_new(1, m->a.map.nslots + 1, 0, NPY_INT64, device);
    if (*pos == NULL || *offsets == NULL)
        goto fail;
    if ((scratch = ga_pool_scratch(device, &scratch_bytes, stream)) == NULL)
        goto fail;
    GA_LAUNCH_TRY(ga_launch_measure_group(&m->a, by_value, scratch, (int64_t *)(*pos)->data,
                                          (int64_t *)(*offsets)->data, stream), stream);
    ga_pool_free(device, scratch, scratch_bytes, stream);
    return 0;
fail:
    if (scratch != NULL)
        ga_pool_free(device, scratch, scratch_bytes, stream);
    Py_CLEAR(*pos);
    Py_CLEAR(*offsets);
    return -1;
}

/* _measure_median(input, labels, mode, lo, nslots, table, inverse) ->
 * float64[nout]: SciPy's median per slot (NaN where a slot is empty). */
static PyObject *
py_measure_median(PyObject *self, PyObject *args)
{
    measure_ops m;
    PyObject *unused = NULL;
    ga_array *pos = NULL, *offsets = NULL, *out = NULL;
    if (measure_ops_parse(args, 0, 1, 0, &m, &unused) < 0)
        return NULL;
    cudaStream_t stream = ga_runtime_device_stream(m.values->device);
    if ((out = measure_new(1, m.a.nout, 0, NPY_FLOAT64, m.values->device)) == NULL)
        goto fail;
    if (m.a.n > 0 && m.a.nout > 0) {
        if (measure_group(&m, 1, &pos, &offsets) < 0)
            goto fail;
        GA_LAUNCH_TRY(ga_launch_measure_median(&m.a, (const int64_t *)pos->data,
                                               (const int64_t *)offsets->data,
                                               (double *)out->data, stream), stream);
    }
    Py_XDECREF(pos);
    Py_XDECREF(offsets);
    measure_ops_clear(&m);
    return (PyObject *)out;
fail:
    Py_XDECREF(pos);
    Py_XDECREF(offsets);
    Py_XDECREF(out);
    measure_ops_clear(&m);
    return NULL;
}

/* _measure_group(input, labels, mode, lo, nslots, table, inverse) ->
 * (values, positions, offsets): the values (input's dtype) and linear
 * positions of all elements ordered by slot, raster order within a slot,
 * and where each slot's run starts (int64[nslots + 1]). */
static PyObject *
py_measure_group(PyObject *self, PyObject *args)
{
    measure_ops m;
    PyObject *unused = NULL;
    ga_array *pos = NULL, *offsets = NULL, *values = NULL;
    if (measure_ops_parse(args, 0, 0, 0, &m, &unused) < 0)
        return NULL;
    cudaStream_t stream = ga_runtime_device_stream(m.values->device);
    /* Slots only: the values are gathered in their own dtype. */
    m.a.value_type = GA_FLOAT64;
    Py_INCREF(m.values->descr);
    values = ga_array_empty(1, (npy_intp[]){m.a.n}, m.values->descr, 0, m.values->device);
    if (values == NULL)
        goto fail;
    if (m.a.n > 0) {
        if (measure_group(&m, 0, &pos, &offsets) < 0)
            goto fail;
        GA_LAUNCH_TRY(ga_launch_gather_rows(m.a.n, ga_array_itemsize(m.values), values->data,
                                            m.values->data, (const int64_t *)pos->data, stream),
                      stream);
    } else {
        pos = measure_new(1, 0, 0, NPY_INT64, m.values->device);
        offsets = measure_new(1, m.a.map.nslots + 1, 0, NPY_INT64, m.values->device);
        if (pos == NULL || offsets == NULL || ga_fill_bytes(offsets, &(ga_kscalar){{{0}}}) < 0)
            goto fail;
    }
    measure_ops_clear(&m);
    return Py_BuildValue("(NNN)", (PyObject *)values, (PyObject *)pos, (PyObject *)offsets);
fail:
    Py_XDECREF(pos);
    Py_XDECREF(offsets);
    Py_XDECREF(values);
    measure_ops_clear(&m);
    return NULL;
}

/* _measure_histogram(input, labels, mode, lo, nslots, table, inverse,
 * edges) -> int64[nout, nbins]; edges: float64 device array of nbins + 1
 * increasing edges. */
static PyObject *
py_measure_histogram(PyObject *self, PyObject *args)
{
    measure_ops m;
    PyObject *edges_obj = NULL;
    ga_array *edges = NULL, *out = NULL;
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    if (measure_ops_parse(args, 0, 1, 0, &m, &edges_obj) < 0)
        return NULL;
    cudaStream_t stream = ga_runtime_device_stream(m.values->device);
    if (edges_obj == NULL || !ga_array_check(edges_obj) ||
        ga_array_size((ga_array *)edges_obj) < 2) {
        PyErr_SetString(PyExc_ValueError, "edges must be a device array of at least 2 values");
        goto fail;
    }
    if ((edges = ga_array_contiguous_as((ga_array *)edges_obj,
                                        PyArray_DescrFromType(NPY_FLOAT64))) == NULL)
        goto fail;
    npy_intp nbins = ga_array_size(edges) - 1;
    if (nbins > 4096) {
        PyErr_SetString(PyExc_ValueError, "histogram: at most 4096 bins");
        goto fail;
    }
    if ((out = measure_new(2, m.a.nout, nbins, NPY_INT64, m.values->device)) == NULL)
        goto fail;
    if (m.a.nout > 0) {
        scratch_bytes = ga_measure_histogram_scratch_bytes(&m.a, (int)nbins);
        if ((scratch = ga_pool_scratch(m.values->device, &scratch_bytes, stream)) == NULL)
            goto fail;
        GA_LAUNCH_TRY(ga_launch_measure_histogram(&m.a, (const double *)edges->data, (int)nbins,
                                                  scratch, (int64_t *)out->data, stream), stream);
        ga_pool_free(m.values->device, scratch, scratch_bytes, stream);
    }
    Py_DECREF(edges);
    measure_ops_clear(&m);
    return (PyObject *)out;
fail:
    if (scratch != NULL)
        ga_pool_free(m.values->device, scratch, scratch_bytes, stream);
    Py_XDECREF(edges);
    Py_XDECREF(out);
    measure_ops_clear(&m);
    return NULL;
}

/* _value_indices(arr) -> (coords, starts, values): coords an int64 device
 * array (ndim, n) of the coordinates of every element, sorted by value
 * (raster order among equal values); starts (numpy int64) where the run
 * of each distinct value begins and keys (numpy uint64) that value with its
 * sign bit flipped, both in no particular order.  Synchronises (the number
 * of distinct values). */
static PyObject *
py_value_indices(PyObject *self, PyObject *args)
{
    ga_array *arr, *conv = NULL, *pos = NULL, *coords = NULL;
    PyArrayObject *starts = NULL, *values = NULL;
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    unsigned long long nseg = 0;
    cudaStream_t stream;
    if (!PyArg_ParseTuple(args, "O!", &GA_ArrayType, &arr))
        return NULL;
    if (ga_runtime_use_device(arr->device) < 0)
        return NULL;
    stream = ga_runtime_device_stream(arr->device);
    if (!(arr->type == GA_BOOL || (arr->type >= GA_INT8 && arr->type <= GA_UINT64))) {
        PyErr_SetString(PyExc_ValueError, "Parameter 'arr' must be an integer array");
        return NULL;
    }
    int typenum = arr->type == GA_INT32 ? NPY_INT32 : NPY_INT64;
    npy_intp n = ga_array_size(arr);
    int ndim = arr->ndim > 0 ? arr->ndim : 1;
    npy_intp shape1[1] = {n};
    const npy_intp *shape = arr->ndim > 0 ? arr->shape : shape1;
    if ((conv = ga_array_contiguous_as(arr, PyArray_DescrFromType(typenum))) == NULL)
        return NULL;
    pos = measure_new(1, n, 0, NPY_INT64, arr->device);
    coords = measure_new(2, ndim, n, NPY_INT64, arr->device);
    if (pos == NULL || coords == NULL)
        goto fail;
    size_t work = ga_value_indices_scratch_bytes(n);
    size_t table = ((size_t)n * 8 + 255) & ~(size_t)255;
    scratch_bytes = work + 2 * table + 256;
    if ((scratch = ga_pool_scratch(arr->device, &scratch_bytes, stream)) == NULL)
        goto fail;
    char *c = scratch;
    int64_t *d_starts = (int64_t *)(c + work);
    uint64_t *d_keys = (uint64_t *)(c + work + table);
    unsigned long long *d_nseg = (unsigned long long *)(c + work + 2 * table);
    int64_t dims[NPY_MAXDIMS];
    for (int i = 0; i < ndim; ++i)
        dims[i] = shape[i];
    if (n > 0) {
        GA_LAUNCH_TRY(ga_launch_value_sort((ga_type)conv->type, conv->data, n, scratch,
                                           (int64_t *)pos->data, d_starts, d_keys, d_nseg, stream),
                      stream);
        GA_LAUNCH_TRY(ga_launch_unravel((const int64_t *)pos->data, n, ndim, dims,
                                        (int64_t *)coords->data, stream), stream);
        if (ga_read_small(&nseg, d_nseg, sizeof(nseg), stream, "value_indices") < 0)
            goto fail;
    }
    npy_intp ns = (npy_intp)nseg;
    starts = (PyArrayObject *)PyArray_SimpleNew(1, &ns, NPY_INT64);
    values = (PyArrayObject *)PyArray_SimpleNew(1, &ns, NPY_UINT64);
    if (starts == NULL || values == NULL)
        goto fail;
    if (ns > 0) {
        if (ga_read_small(PyArray_DATA(starts), d_starts, ns * 8, stream, "value_indices") < 0 ||
            ga_read_small(PyArray_DATA(values), d_keys, ns * 8, stream, "value_indices") < 0)
            goto fail;
    }
    ga_pool_free(arr->device, scratch, scratch_bytes, stream);
    Py_DECREF(conv);
    Py_DECREF(pos);
    return Py_BuildValue("(NNN)", (PyObject *)coords, (PyObject *)starts, (PyObject *)values);
fail:
    if (scratch != NULL)
        ga_pool_free(arr->device, scratch, scratch_bytes, stream);
    Py_XDECREF(conv);
    Py_XDECREF(pos);
    Py_XDECREF(coords);
    Py_XDECREF(starts);
    Py_XDECREF(values);
    return NULL;
}

/* _find_objects(labels, max_label) -> numpy int64 array (max_label, ndim,
 * 2) of [start, stop) per label and dimension, -1 where a label is absent.
 * max_label < 1: the largest label (one synchronisation more). */
static PyObject *
py_find_objects(PyObject *self, PyObject *args)
{
    ga_array *labels, *conv = NULL;
    long long max_label;
    unsigned long long *host = NULL;
    PyArrayObject *out = NULL;
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    cudaStream_t stream;
    if (!PyArg_ParseTuple(args, "O!L", &GA_ArrayType, &labels, &max_label))
        return NULL;
    if (ga_runtime_use_device(labels->device) < 0)
        return NULL;
    stream = ga_runtime_device_stream(labels->device);
    if (!(labels->type == GA_BOOL || (labels->type >= GA_INT8 && labels->type <= GA_UINT64))) {
        PyErr_SetString(PyExc_TypeError, "find_objects: input must be an array of integer "
                        "labels");
        return NULL;
    }
    if (labels->ndim < 1 || labels->ndim > GA_MEASURE_MAXDIM) {
        PyErr_Format(PyExc_ValueError, "find_objects: input must have 1 to %d dimensions",
                     GA_MEASURE_MAXDIM);
        return NULL;
    }
    npy_intp n = ga_array_size(labels);
    int ndim = labels->ndim;
    int64_t dims[GA_MEASURE_MAXDIM];
    for (int i = 0; i < ndim; ++i)
        dims[i] = labels->shape[i];
    int lt = labels->type == GA_INT32 ? NPY_INT32 : NPY_INT64;
    if ((conv = ga_array_contiguous_as(labels, PyArray_DescrFromType(lt))) == NULL)
        return NULL;
    int64_t blocks = (n + 1023) / 1024, cap = 4 * (int64_t)ga_runtime_sm_count(labels->device);
    int grid = (int)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
    if (max_label < 1 && n > 0) {
        scratch_bytes = 256;
        if ((scratch = ga_pool_scratch(labels->device, &scratch_bytes, stream)) == NULL)
            goto fail;
        int64_t mx = 0;
        GA_LAUNCH_TRY(ga_launch_label_max((ga_type)conv->type, conv->data, n, grid,
                                          (int64_t *)scratch, stream), stream);
        if (ga_read_small(&mx, scratch, sizeof(mx), stream, "find_objects") < 0)
            goto fail;
        ga_pool_free(labels->device, scratch, scratch_bytes, stream);
        scratch = NULL;
        max_label = mx;
    }
    if (max_label < 1 || n == 0)
        max_label = 0;
    npy_intp odims[3] = {(npy_intp)max_label, ndim, 2};
    out = (PyArrayObject *)PyArray_SimpleNew(3, odims, NPY_INT64);
    if (out == NULL)
        goto fail;
    if (max_label > 0) {
        size_t cells = (size_t)max_label * ndim * 2;
        scratch_bytes = cells * sizeof(unsigned long long);
        if ((scratch = ga_pool_scratch(labels->device, &scratch_bytes, stream)) == NULL)
            goto fail;
        GA_LAUNCH_TRY(ga_launch_find_objects((ga_type)conv->type, conv->data, n, ndim, dims,
                                             max_label, grid, scratch, stream), stream);
        host = PyMem_Malloc(scratch_bytes);
        if (host == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        if (ga_read_small(host, scratch, scratch_bytes, stream, "find_objects") < 0)
            goto fail;
        int64_t *o = PyArray_DATA(out);
        for (size_t k = 0; k < cells; k += 2) {
            int absent = host[k] == ~0ull;
            o[k] = absent ? -1 : (int64_t)host[k];
            o[k + 1] = absent ? -1 : (int64_t)~host[k + 1] + 1;
        }
        PyMem_Free(host);
        host = NULL;
        ga_pool_free(labels->device, scratch, scratch_bytes, stream);
    }
    Py_DECREF(conv);
    return (PyObject *)out;
fail:
    if (scratch != NULL)
        ga_pool_free(labels->device, scratch, scratch_bytes, stream);
    PyMem_Free(host);
    Py_XDECREF(conv);
    Py_XDECREF(out);
    return NULL;
}

static PyMethodDef measure_functions[] = {
    {"_measure_com", py_measure_com, METH_VARARGS,
     "_measure_com(input, labels, mode, lo, nslots, table, inverse) -> list of tuples"},
    {"_measure", py_measure, METH_VARARGS,
     "_measure(input, labels, mode, lo, nslots, table, inverse, what) -> tuple of statistics"},
    {"_measure_index", py_measure_index, METH_VARARGS,
     "_measure_index(index, float_keys) -> (table, inverse)"},
    {"_measure_median", py_measure_median, METH_VARARGS,
     "_measure_median(input, labels, mode, lo, nslots, table, inverse) -> medians"},
    {"_measure_group", py_measure_group, METH_VARARGS,
     "_measure_group(input, labels, mode, lo, nslots, table, inverse) -> "
     "(values, positions, offsets)"},
    {"_measure_histogram", py_measure_histogram, METH_VARARGS,
     "_measure_histogram(input, labels, mode, lo, nslots, table, inverse, edges) -> counts"},
    {"_value_indices", py_value_indices, METH_VARARGS,
     "_value_indices(arr) -> (coords, starts, keys)"},
    {"_find_objects", py_find_objects, METH_VARARGS,
     "_find_objects(labels, max_label) -> int64 array (max_label, ndim, 2)"},
    {NULL, NULL, 0, NULL},
};

int
ga_measure_init(PyObject *m)
{
    /* the slot maps and statistics, for the Python layer
     * (gpuarr/scipy/_measurements.py) */
    static const struct { const char *name; int value; } codes[] = {
        {"GA_SLOT_ALL", GA_SLOT_ALL}, {"GA_SLOT_POSITIVE", GA_SLOT_POSITIVE},
        {"GA_SLOT_RANGE", GA_SLOT_RANGE}, {"GA_SLOT_TABLE", GA_SLOT_TABLE},
        {"MEASURE_MODE_INDEX", MEASURE_MODE_INDEX},
        {"GA_MS_SUM", GA_MS_SUM}, {"GA_MS_COUNT", GA_MS_COUNT}, {"GA_MS_MEAN", GA_MS_MEAN},
        {"GA_MS_VAR", GA_MS_VAR}, {"GA_MS_STD", GA_MS_STD}, {"GA_MS_COM", GA_MS_COM},
        {"GA_MS_MIN", GA_MS_MIN}, {"GA_MS_MAX", GA_MS_MAX}, {"GA_MS_MINPOS", GA_MS_MINPOS},
        {"GA_MS_MAXPOS", GA_MS_MAXPOS}, {"GA_MS_NSTATS", GA_MS_NSTATS},
    };
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); ++i)
        if (PyModule_AddIntConstant(m, codes[i].name, codes[i].value) < 0)
            return -1;
    return PyModule_AddFunctions(m, measure_functions);
}
