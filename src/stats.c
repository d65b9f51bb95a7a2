/*
 * stats.c -- the C side of gpuarr.stats.sigma_clip: run the interval-
 * restricted clipping of src/kernels/stats.cu and turn its per-row states
 * into masks, compacted survivors, NaN-filled copies, bounds and
 * statistics.
 *
 * _clip_run returns the states as an opaque uint8 device array (one
 * ga_clip_state per row) that the other functions read; the data must be a
 * C-contiguous float32/float64 array whose rows (the last `rowlen`
 * elements) are clipped independently.  A single long row runs to the end
 * in one cooperative launch over the whole GPU (grid-wide barriers between
 * passes, no host synchronisation).  Where cooperative launches are not
 * supported it runs one launch per pass: iterations are queued ahead
 * (maxiters of them, or batches until the state says it converged when
 * maxiters is unbounded: the only synchronisations), and those queued after
 * convergence return at once.  Many rows, or a short one, run to the end
 * in a single launch, one block per row.
 *
 * Ownership: the state array is a new reference; scratch blocks are
 * returned to the pool on the current stream after the launches are
 * queued.
 */
#include "gpuarr.h"

/* Below this many elements a single row is clipped by one block. */
#define GA_CLIP_ROW_KERNEL_MAX 65536
/* Iterations queued between convergence checks when maxiters is None. */
#define GA_CLIP_BATCH 8

static int
clip_check_data(ga_array *data, Py_ssize_t rowlen, int64_t *nrows)
{
    if ((data->type != GA_FLOAT32 && data->type != GA_FLOAT64) ||
        !(data->flags & GA_C_CONTIGUOUS)) {
        PyErr_SetString(PyExc_TypeError, "sigma clipping needs C-contiguous float32 or float64 "
                        "data");
        return -1;
    }
    npy_intp n = ga_array_size(data);
    if (rowlen < 1 || n % rowlen != 0) {
        PyErr_SetString(PyExc_ValueError, "bad row length");
        return -1;
    }
    *nrows = n / rowlen;
    return ga_runtime_use_device(data->device);
}

static int
clip_check_state(ga_array *state, int64_t nrows)
{
    if (state->type != GA_UINT8 || !(state->flags & GA_C_CONTIGUOUS) ||
        ga_array_size(state) != nrows * (npy_intp)sizeof(ga_clip_state)) {
        PyErr_SetString(PyExc_ValueError, "not a clipping state for this data");
        return -1;
    }
    return 0;
}

/* Fill the launch arguments shared by every call. */
static void
clip_args(ga_clip_args *a, ga_array *data, int64_t nrows, ga_array *state, int inclusive)
{
    memset(a, 0, sizeof(*a));
    a->type = (ga_type)data->type;
    a->data = data->data;
    a->nrows = nrows;
    a->rowlen = nrows ? ga_array_size(data) / nrows : 0;
    a->inclusive = inclusive;
    a->state = (ga_clip_state *)state->data;
    a->grid = 1;
}

/* _clip_run(data, rowlen, sigma_lower, sigma_upper, maxiters, inclusive,
 *           cen_median, std_mad, std_ddof, final_stats[, per_pass[,
 *           keep_last]]) -> state
 * maxiters < 0: until convergence.  final_stats: make sure the mean,
 * median and std of the final survivors are computed.  keep_last: a clip
 * that empties a row ends it with its bounds (astropy with axis) instead
 * of NaN bounds.  A single long row runs in one cooperative launch, or with
 * per_pass (or where cooperative launches are not supported) one launch
 * per pass. */
static PyObject *
py_clip_run(PyObject *self, PyObject *args)
{
    ga_array *data, *state = NULL;
    Py_ssize_t rowlen;
    double sl, su;
    long long maxiters;
    int inclusive, cen_median, std_mad, ddof, final_stats, per_pass = 0, keep_last = 0;
    cudaError_t err;
    int64_t nrows;
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    cudaStream_t stream;
    ga_clip_args a;
    if (!PyArg_ParseTuple(args, "O!nddLpppip|pp", &GA_ArrayType, &data, &rowlen, &sl, &su,
                          &maxiters, &inclusive, &cen_median, &std_mad, &ddof, &final_stats,
                          &per_pass, &keep_last))
        return NULL;
    if (clip_check_data(data, rowlen, &nrows) < 0)
        return NULL;
    stream = ga_runtime_device_stream(data->device);
    state = ga_array_empty(1, (npy_intp[]){nrows * (npy_intp)sizeof(ga_clip_state)},
                           PyArray_DescrFromType(NPY_UINT8), 0, data->device);
    if (state == NULL)
        return NULL;
    if (nrows == 0)
        return (PyObject *)state;
    clip_args(&a, data, nrows, state, inclusive);
    a.sigma_lower = sl;
    a.sigma_upper = su;
    a.cen_median = cen_median;
    a.std_mad = std_mad;
    a.std_ddof = ddof;
    a.keep_last = keep_last;
    a.maxiters = maxiters;
    int one_row = nrows == 1 && rowlen > GA_CLIP_ROW_KERNEL_MAX;
    if (one_row) {
        int64_t blocks = (rowlen + 1023) / 1024, cap = 2 * (int64_t)ga_runtime_sm_count(data->device);
        a.grid = (int)(blocks < cap ? blocks : cap);
        scratch_bytes = ga_clip_scratch_bytes(&a);
        int failed = 0;
        scratch = ga_pool_malloc(data->device, scratch_bytes, stream, &failed);
        if (failed)
            goto fail;
        a.scratch = scratch;
    }
    GA_LAUNCH_TRY(ga_launch_clip_init(&a, stream), stream);
    if (!one_row) {
        GA_LAUNCH_TRY(ga_launch_clip_rows(&a, stream), stream);
    } else if (!per_pass && (err = ga_launch_clip_grid(&a, final_stats, stream)) !=
                                cudaErrorNotSupported) {
        GA_LAUNCH_TRY(err, stream);
    } else if (maxiters >= 0) {
        for (long long it = 0; it < maxiters; ++it)
            GA_LAUNCH_TRY(ga_launch_clip_iteration(&a, 0, stream), stream);
        if (final_stats)
            GA_LAUNCH_TRY(ga_launch_clip_iteration(&a, 1, stream), stream);
    } else {
        for (;;) {
            int64_t done = 0;
            for (int it = 0; it < GA_CLIP_BATCH; ++it)
                GA_LAUNCH_TRY(ga_launch_clip_iteration(&a, 0, stream), stream);
            if (ga_read_small(&done, &a.state->done, sizeof(done), stream, "sigma clipping") < 0)
                goto fail;
            if (done)
                break;
        }
    }
    if (scratch != NULL)
        ga_pool_free(data->device, scratch, scratch_bytes, stream);
    return (PyObject *)state;
fail:
    if (scratch != NULL)
        ga_pool_free(data->device, scratch, scratch_bytes, stream);
    Py_XDECREF(state);
    return NULL;
}

/* _clip_mask(data, rowlen, state, inclusive, nan_fill) -> a bool array
 * (True = clipped: not finite or outside the last bounds), or with
 * nan_fill a copy of the data with NaN there.  1-d, data's size. */
static PyObject *
py_clip_mask(PyObject *self, PyObject *args)
{
    ga_array *data, *state, *out;
    Py_ssize_t rowlen;
    int inclusive, nan_fill;
    int64_t nrows;
    ga_clip_args a;
    cudaStream_t stream;
    if (!PyArg_ParseTuple(args, "O!nO!pp", &GA_ArrayType, &data, &rowlen, &GA_ArrayType, &state,
                          &inclusive, &nan_fill))
        return NULL;
    if (clip_check_data(data, rowlen, &nrows) < 0 || clip_check_state(state, nrows) < 0)
        return NULL;
    stream = ga_runtime_device_stream(data->device);
    PyArray_Descr *descr = nan_fill ? data->descr : PyArray_DescrFromType(NPY_BOOL);
    if (nan_fill)
        Py_INCREF(descr);
    out = ga_array_empty(1, (npy_intp[]){ga_array_size(data)}, descr, 0, data->device);
    if (out == NULL)
        return NULL;
    clip_args(&a, data, nrows, state, inclusive);
    GA_LAUNCH_TRY(ga_launch_clip_mask(&a, nan_fill, out->data, stream), stream);
    return (PyObject *)out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* py_clip_compress's launch through ga_compact_counted. */
struct clip_select {
    const ga_clip_args *a;
    int use_bounds;
    void *out;
};

static cudaError_t
clip_select_launch(const void *ctx, void *scratch, size_t scratch_bytes, int64_t *count,
                   cudaStream_t stream)
{
    const struct clip_select *c = ctx;
    (void)scratch_bytes;
    return ga_launch_clip_select(c->a, c->use_bounds, c->out, scratch, count, stream);
}

/* _clip_compress(data, state, inclusive, use_bounds) -> the survivors of a
 * single row in their order: inside the interval of every clip, or with
 * use_bounds the finite values inside the last bounds.  One single-pass
 * compaction into room for the whole row, its count written straight into
 * pinned memory; one synchronisation (their number). */
static PyObject *
py_clip_compress(PyObject *self, PyObject *args)
{
    ga_array *data, *state, *out = NULL;
    int inclusive, use_bounds;
    int64_t nrows, count = 0;
    ga_clip_args a;
    memset(&a, 0, sizeof(a));
    if (!PyArg_ParseTuple(args, "O!O!pp", &GA_ArrayType, &data, &GA_ArrayType, &state, &inclusive,
                          &use_bounds))
        return NULL;
    npy_intp n = ga_array_size(data);
    if (clip_check_data(data, n > 0 ? n : 1, &nrows) < 0 || clip_check_state(state, nrows) < 0)
        return NULL;
    Py_INCREF(data->descr);
    out = ga_array_empty(1, &n, data->descr, 0, data->device);
    if (out == NULL || n == 0)
        return (PyObject *)out;
    clip_args(&a, data, nrows, state, inclusive);
    struct clip_select c = {&a, use_bounds, out->data};
    if (ga_compact_counted(data->device, ga_clip_select_state_bytes(&a), clip_select_launch, &c,
                           NULL, NULL, &count, ga_runtime_device_stream(data->device)) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return (PyObject *)ga_compact_shrink(out, (npy_intp)count);
}

/* _clip_extract(data, rowlen, state, field) -> one value per row: field a
 * GA_CLIP_* code (kernels.h; exported as _core.GA_CLIP_*): a bound or a
 * statistic in data's dtype, or the iterations (int64). */
static PyObject *
py_clip_extract(PyObject *self, PyObject *args)
{
    ga_array *data, *state, *out;
    Py_ssize_t rowlen;
    int field;
    int64_t nrows;
    ga_clip_args a;
    cudaStream_t stream;
    if (!PyArg_ParseTuple(args, "O!nO!i", &GA_ArrayType, &data, &rowlen, &GA_ArrayType, &state,
                          &field))
        return NULL;
    if (clip_check_data(data, rowlen, &nrows) < 0 || clip_check_state(state, nrows) < 0)
        return NULL;
    stream = ga_runtime_device_stream(data->device);
    if (field < 0 || field >= GA_CLIP_NFIELDS) {
        PyErr_SetString(PyExc_ValueError, "bad field");
        return NULL;
    }
    PyArray_Descr *descr = field == GA_CLIP_ITERATIONS ? PyArray_DescrFromType(NPY_INT64)
                                                       : data->descr;
    if (field != GA_CLIP_ITERATIONS)
        Py_INCREF(descr);
    out = ga_array_empty(1, (npy_intp[]){nrows}, descr, 0, data->device);
    if (out == NULL)
        return NULL;
    if (nrows > 0) {
        clip_args(&a, data, nrows, state, 1);
        GA_LAUNCH_TRY(ga_launch_clip_extract(&a, field, out->data, stream), stream);
    }
    return (PyObject *)out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef stats_functions[] = {
    {"_clip_run", py_clip_run, METH_VARARGS,
     "_clip_run(data, rowlen, sigma_lower, sigma_upper, maxiters, inclusive, cen_median, "
     "std_mad, std_ddof, final_stats[, per_pass[, keep_last]]) -> state"},
    {"_clip_mask", py_clip_mask, METH_VARARGS,
     "_clip_mask(data, rowlen, state, inclusive, nan_fill) -> mask or NaN-filled copy"},
    {"_clip_compress", py_clip_compress, METH_VARARGS,
     "_clip_compress(data, state, inclusive, use_bounds) -> survivors"},
    {"_clip_extract", py_clip_extract, METH_VARARGS,
     "_clip_extract(data, rowlen, state, field) -> per-row bound, statistic or iterations"},
    {NULL, NULL, 0, NULL},
};

int
ga_stats_init(PyObject *m)
{
    /* _clip_extract's fields, for gpuarr/stats.py */
    if (PyModule_AddIntMacro(m, GA_CLIP_LOWER) < 0 || PyModule_AddIntMacro(m, GA_CLIP_UPPER) < 0 ||
        PyModule_AddIntMacro(m, GA_CLIP_MEAN) < 0 || PyModule_AddIntMacro(m, GA_CLIP_MEDIAN) < 0 ||
        PyModule_AddIntMacro(m, GA_CLIP_STD) < 0 || PyModule_AddIntMacro(m, GA_CLIP_ITERATIONS) < 0)
        return -1;
    return PyModule_AddFunctions(m, stats_functions);
}
