/*
 * select.c -- choosing elements: compaction (compress, boolean masks,
 * nonzero), gather and scatter through index arrays (take, put), and
 * NumPy's advanced indexing behind a[index] and a[index] = value.
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
 * Ownership: every array made here is a new reference; scratch blocks come
 * from the pool and return to it on the stream that used them, before the
 * function returns.
 */
#include "gpuarr.h"

#include <string.h>

/* ------------------------------------------------------------ helpers ---- */

static int
same_device(ga_array *a, ga_array *b)
{
    if (a->device == b->device)
        return 0;
    PyErr_Format(PyExc_ValueError, "arrays are on different devices (%d and %d)", a->device,
                 b->device);
    return -1;
}

/* A C-contiguous array with a's values (a itself when it is one). */
static ga_array *
contiguous(ga_array *a)
{
    if (a->flags & GA_C_CONTIGUOUS) {
        Py_INCREF(a);
        return a;
    }
    return ga_array_copy_as(a, NULL, 0);
}

/* a's truth values as a C-contiguous bool array (NumPy's nonzero test). */
static ga_array *
truth_flags(ga_array *a)
{
    if (a->type == GA_BOOL)
        return contiguous(a);
    return ga_array_copy_as(a, PyArray_DescrFromType(NPY_BOOL), 0);
}

/* A 1-d C-contiguous view or copy of a's elements in C order. */
static ga_array *
flat_of(ga_array *a)
{
    ga_array *c = contiguous(a);
    if (c == NULL)
        return NULL;
    npy_intp n = ga_array_size(c);
    PyObject *flat = ga_array_reshape(c, 1, &n, 'C');
    Py_DECREF(c);
    return (ga_array *)flat;
}

static PyObject *
index_error_bounds(long long index, int axis, npy_intp size)
{
    PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for axis %d with size %zd", index,
                 axis, size);
    return NULL;
}

/* Give `out` (a fresh 1-d array with room for more) its final length
 * `count`; move the elements to an exact block when the spare room would
 * be most of a large block. */
static ga_array *
shrink_result(ga_array *out, npy_intp count)
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

/* Wait for `stream`, the GIL released: the one synchronisation. */
static int
wait_stream(cudaStream_t stream, const char *what)
{
    cudaError_t err;
    Py_BEGIN_ALLOW_THREADS
    err = cudaStreamSynchronize(stream);
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess) {
        ga_err_cuda(err, what);
        return -1;
    }
    return 0;
}

/* Compact the first n flags (n > 0): dst gets the kept elements of src
 * (itemsize bytes each) or, with itemsize 0, their int64 positions.  The
 * kernel writes the count straight into pinned host memory, so reading it
 * costs one stream synchronisation and no copy.  With `first` (a device
 * word some earlier launch on the stream filled), its value is read too.
 * 0 / -1. */
static int
compact(int device, int itemsize, int64_t n, const char *src, const uint8_t *flags, char *dst,
        int64_t *count, const uint64_t *first, uint64_t *first_host, cudaStream_t stream)
{
    size_t temp_bytes = 0;
    char *temp = NULL;
    int64_t *host = ga_pinned_malloc(sizeof(int64_t));
    if (host == NULL)
        return -1;
    *host = 0;
    GA_CUDA_TRY(ga_launch_compact(itemsize, n, NULL, NULL, NULL, NULL, NULL, &temp_bytes,
                                  stream));
    if ((temp = ga_pool_scratch(device, &temp_bytes, stream)) == NULL)
        goto fail;
    GA_LAUNCH_TRY(ga_launch_compact(itemsize, n, src, flags, dst, host, temp, &temp_bytes,
                                    stream), stream);
    ga_pool_free(device, temp, temp_bytes, stream);
    temp = NULL;
    if (first != NULL) {
        if (ga_read_small(first_host, first, sizeof(*first), stream,
                          "reading the number of selected elements") < 0)
            goto fail;
    } else if (wait_stream(stream, "reading the number of selected elements") < 0) {
        goto fail;
    }
    *count = *(volatile int64_t *)host;
    ga_pinned_free(host, sizeof(int64_t));
    return 0;
fail:
    if (temp != NULL)
        ga_pool_free(device, temp, temp_bytes, stream);
    ga_pinned_free(host, sizeof(int64_t));
    return -1;
}

int
ga_select_flag_positions(int device, int64_t n, const uint8_t *flags, int64_t *dst,
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
static ga_array *
select_true(ga_array *cond, ga_array *values, npy_intp limit)
{
    ga_array *flags = NULL, *src = NULL, *out = NULL;
    uint64_t *first = NULL;
    uint64_t first_host = UINT64_MAX;
    int failed = 0;
    int64_t count = 0;
    npy_intp ncond = ga_array_size(cond);
    npy_intp n = ncond < limit ? ncond : limit;
    int device = cond->device;

    if ((values != NULL && same_device(cond, values) < 0) || ga_runtime_use_device(device) < 0)
        return NULL;
    cudaStream_t stream = ga_runtime_device_stream(device);
    if ((flags = truth_flags(cond)) == NULL)
        goto fail;
    if (values != NULL && (src = contiguous(values)) == NULL)
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
        index_error_bounds((long long)(limit + (npy_intp)first_host), 0, limit);
        goto fail;
    }
done:
    Py_XDECREF(flags);
    Py_XDECREF(src);
    return shrink_result(out, (npy_intp)count);
fail:
    if (first != NULL)
        ga_pool_free(device, first, sizeof(uint64_t), stream);
    Py_XDECREF(flags);
    Py_XDECREF(src);
    Py_XDECREF(out);
    return NULL;
}

/* The coordinates of a's true elements: an (ndim, count) int64 array. */
static ga_array *
nonzero_coords(ga_array *a)
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
    ga_array *flat = select_true(a, NULL, ga_array_size(a));
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

/* a[mask] = value for a host scalar value and a bool mask of a's shape:
 * no compaction, no synchronisation. */
static int
masked_fill(ga_array *a, ga_array *mask, PyObject *value)
{
    ga_kscalar v;
    ga_kshape ks;
    ga_kstrides kst[2];
    if (same_device(a, mask) < 0 || ga_scalar_to_bytes(value, a->descr, &v) < 0 ||
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

/* ------------------------------------------------- gather and scatter ---- */

/* An indexing plan: a view whose axes axis[k] are indexed by int64 arrays
 * index[k] (device, strong references), the broadcast shape of the
 * indices going `insert` dims into the view's other dims. */
typedef struct {
    ga_array *view;
    int nidx;
    int axis[GA_TAKE_MAX];
    int orig_axis[GA_TAKE_MAX];   /* the axis as numbered in the user's array */
    ga_array *index[GA_TAKE_MAX];
    int unchecked;                /* some device index still needs checking */
    int insert;
    int mode;                     /* GA_TAKE_RAISE, _WRAP or _CLIP */
    int rdim;
    npy_intp rshape[NPY_MAXDIMS];
    npy_intp base_strides[NPY_MAXDIMS];
    npy_intp index_strides[GA_TAKE_MAX][NPY_MAXDIMS];
} take_plan;

static void
plan_clear(take_plan *p)
{
    Py_CLEAR(p->view);
    for (int k = 0; k < p->nidx; ++k)
        Py_CLEAR(p->index[k]);
    p->nidx = 0;
}

/* Shapes of the index arrays broadcast together, then the result space:
 * the view's non-indexed dims with the broadcast dims at `insert`. */
static int
plan_shape(take_plan *p)
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
plan_args(take_plan *p, const npy_intp *other_strides, int mode, ga_take_args *args)
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

static int
plan_empty_axis(take_plan *p)
{
    for (int k = 0; k < p->nidx; ++k)
    cudaStream_t stream = ga_runtime_device_stream(device);
        if (p->view->shape[p->axis[k]] == 0 && ga_array_size(p->index[k]) > 0) {
            PyErr_SetString(PyExc_IndexError, "cannot do a non-empty take from an empty axes.");
            return -1;
        }
    return 0;
}

/* Launch with the device error record when indices need checking; then
 * read it (the synchronisation) and raise for a bad index. */
static int
plan_launch(take_plan *p, int direction, ga_take_args *args, char *other)
{
    int device = p->view->device, failed = 0, checking = args->mode == GA_TAKE_RAISE;
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
        index_error_bounds((long long)host[1], p->orig_axis[k], p->view->shape[p->axis[k]]);
        return -1;
    }
    return 0;
fail:
    if (error != NULL)
        ga_pool_free(device, error, 16, stream);
    return -1;
}

static int
plan_mode(take_plan *p)
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
plan_check_empty_result(take_plan *p)
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
static ga_array *
plan_gather(take_plan *p)
{
    ga_take_args args;
    npy_intp ostrides[NPY_MAXDIMS];
    if (plan_shape(p) < 0 || plan_empty_axis(p) < 0 || plan_check_empty_result(p) < 0)
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
static int
plan_scatter(take_plan *p, PyObject *value)
{
    ga_take_args args;
    npy_intp vstrides[NPY_MAXDIMS];
    ga_array *v = NULL;
    if (!(p->view->flags & GA_WRITEABLE)) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return -1;
    }
    if (plan_shape(p) < 0 || plan_empty_axis(p) < 0 || plan_check_empty_result(p) < 0)
        return -1;
    Py_INCREF(p->view->descr);
    v = (ga_array *)ga_asarray(value, p->view->descr, -1, 'K');
    if (v == NULL)
        return -1;
    if (same_device(p->view, v) < 0)
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
static int
plan_add_index(take_plan *p, PyObject *obj, int axis, int orig_axis, int checked)
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
        if (same_device(p->view, a) < 0)
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
            int64_t *d = (int64_t *)PyArray_DATA(h);
            for (npy_intp i = 0, n = PyArray_SIZE(h); i < n; ++i) {
                if (d[i] < -len || d[i] >= len) {
                    index_error_bounds((long long)d[i], orig_axis, len);
                    Py_DECREF(h);
                    return -1;
                }
                if (d[i] < 0)
                    d[i] += len;
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

int
ga_index_is_advanced(PyObject *index)
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
plan_from_index(ga_array *a, PyObject *index, take_plan *p)
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
                ix = v1 ? (PyObject *)select_true((ga_array *)v1, NULL, 1) : NULL;
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
            PyObject *rows = kind == ITEM_MASK ? (PyObject *)nonzero_coords((ga_array *)obj)
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
    p->view = (ga_array *)PyObject_GetItem((PyObject *)a, btuple);
    Py_DECREF(btuple);
    if (p->view == NULL)
        goto done;
    p->insert = last_adv - first_adv + 1 == n_adv ? first_v : 0;
    for (int k = 0; k < npend; ++k)
        if (plan_add_index(p, pend[k], pend_axis[k], pend_orig[k], pend_checked[k]) < 0)
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
        plan_clear(p);
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

PyObject *
ga_advindex_get(ga_array *a, PyObject *index)
{
    take_plan p;
    if (is_full_mask(a, index))
        return (PyObject *)select_true((ga_array *)index, a, ga_array_size(a));
    if (plan_from_index(a, index, &p) < 0)
        return NULL;
    ga_array *r = plan_gather(&p);
    plan_clear(&p);
    return (PyObject *)r;
}

int
ga_advindex_set(ga_array *a, PyObject *index, PyObject *value)
{
    take_plan p;
    if (is_full_mask(a, index) && is_host_scalar(value))
        return masked_fill(a, (ga_array *)index, value);
    if (plan_from_index(a, index, &p) < 0)
        return -1;
    int rc = plan_scatter(&p, value);
    plan_clear(&p);
    return rc;
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

/* _compress(condition, a) -> a's elements (C order) where condition. */
static PyObject *
py_compress(PyObject *self, PyObject *args)
{
    ga_array *cond, *a;
    if (!PyArg_ParseTuple(args, "O!O!", &GA_ArrayType, &cond, &GA_ArrayType, &a))
        return NULL;
    return (PyObject *)select_true(cond, a, ga_array_size(a));
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
    return (PyObject *)select_true(cond, NULL, limit < 0 ? 0 : limit);
}

/* _nonzero(a) -> (a.ndim, count) int64 coordinates of a's true elements. */
static PyObject *
py_nonzero(PyObject *self, PyObject *arg)
{
    if (!ga_array_check(arg)) {
        PyErr_SetString(PyExc_TypeError, "_nonzero needs a device array");
        return NULL;
    }
    return (PyObject *)nonzero_coords((ga_array *)arg);
}

/* _take(a, indices, axis, mode) -> numpy.take(a, indices, axis) with mode
 * 0 raise, 1 wrap, 2 clip; axis None takes from the flattened array. */
static PyObject *
py_take(PyObject *self, PyObject *args)
{
    ga_array *a;
    PyObject *indices, *axis_obj;
    int mode, axis = 0;
    take_plan p;
    if (!PyArg_ParseTuple(args, "O!OOi", &GA_ArrayType, &a, &indices, &axis_obj, &mode) ||
        parse_take_mode(mode) < 0)
        return NULL;
    memset(&p, 0, sizeof(p));
    p.mode = mode;
    if (axis_obj == Py_None) {
        p.view = flat_of(a);
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
    if (plan_add_index(&p, indices, axis, axis, 0) == 0)
        r = plan_gather(&p);
    plan_clear(&p);
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
    take_plan p;
    if (!PyArg_ParseTuple(args, "O!OOi", &GA_ArrayType, &a, &indices, &values, &mode) ||
        parse_take_mode(mode) < 0)
        return NULL;
    if (!(a->flags & GA_WRITEABLE)) {
        PyErr_SetString(PyExc_ValueError, "put: the array is read-only");
        return NULL;
    }
    memset(&p, 0, sizeof(p));
    p.mode = mode;
    if ((target = contiguous(a)) == NULL)
        return NULL;
    npy_intp n = ga_array_size(target);
    p.view = (ga_array *)ga_array_reshape(target, 1, &n, 'C');
    if (p.view != NULL && plan_add_index(&p, indices, 0, 0, 0) == 0 &&
        plan_scatter(&p, values) == 0)
        rc = target == a ? 0 : ga_assign_array(a, target);
    plan_clear(&p);
    Py_DECREF(target);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
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
        return (PyObject *)select_true((ga_array *)PyTuple_GET_ITEM(args, 0), a,
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

PyObject *
ga_array_take(PyObject *self, PyObject *args, PyObject *kwds)
{
    return ga_forward_method("ndarray.take", self, args, kwds);
}

PyObject *
ga_array_put(PyObject *self, PyObject *args, PyObject *kwds)
{
    return ga_forward_method("ndarray.put", self, args, kwds);
}

static PyMethodDef select_functions[] = {
    {"_compress", py_compress, METH_VARARGS,
     "_compress(condition, a) -> a's elements (C order) where condition is true"},
    {"_flatnonzero", py_flatnonzero, METH_VARARGS,
     "_flatnonzero(condition, limit) -> int64 positions of the true elements before limit"},
    {"_nonzero", py_nonzero, METH_O, "_nonzero(a) -> (a.ndim, count) int64 coordinates"},
    {"_take", py_take, METH_VARARGS, "_take(a, indices, axis, mode) -> gathered array"},
    {"_put", py_put, METH_VARARGS, "_put(a, indices, values, mode): a.flat[indices] = values"},
    {NULL, NULL, 0, NULL},
};

int
ga_select_init(PyObject *m)
{
    return PyModule_AddFunctions(m, select_functions);
}
