/*
 * convert.c -- writing values into device arrays: array-to-array assignment
 * with broadcasting and dtype conversion, scalar fills, and copies.
 *
 * Planning: broadcast the source to the destination's shape, collapse the
 * pair of layouts, then launch one kernel -- a type-blind copy when the
 * dtypes match, a cast otherwise.  When source and destination memory
 * overlap with different layouts (a[1:] = a[:-1]) the source is first
 * copied to a temporary, as NumPy does.
 */
#include "gpuarr.h"

static int
same_layout(const ga_array *a, const ga_array *b)
{
    if (a->data != b->data || a->ndim != b->ndim || a->type != b->type)
        return 0;
    for (int i = 0; i < a->ndim; ++i)
        if (a->shape[i] != b->shape[i] || a->strides[i] != b->strides[i])
            return 0;
    return 1;
}

int
ga_assign_array(ga_array *dst, ga_array *src)
{
    npy_intp bstrides[NPY_MAXDIMS];
    ga_kshape ks;
    ga_kstrides kst[2];
    ga_array *tmp = NULL;
    cudaStream_t stream = ga_runtime_device_stream(dst->device);

    if (!(dst->flags & GA_WRITEABLE)) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return -1;
    }
    if (dst->device != src->device) {
        PyErr_Format(PyExc_ValueError, "arrays are on different devices (%d and %d); move one "
                     "with gpuarr.asarray inside `with gpuarr.cuda.Device(...)`",
                     dst->device, src->device);
        return -1;
    }
    /* Leading unit dimensions of the source are dropped, as NumPy does
     * (a[0] = b[None] works). */
    int lead = 0;
    while (src->ndim - lead > dst->ndim && src->shape[lead] == 1)
        lead++;
    if (ga_plan_broadcast_to(src->ndim - lead, src->shape + lead, src->strides + lead,
                             dst->ndim, dst->shape, bstrides) < 0)
        return -1;
    if (ga_array_size(dst) == 0 || same_layout(dst, src))
        return 0;
    if (ga_runtime_use_device(dst->device) < 0)
        return -1;
    if (ga_array_overlaps(dst, src)) {
        tmp = ga_array_copy_as(src, NULL, 0);
        if (tmp == NULL)
            return -1;
        if (ga_plan_broadcast_to(tmp->ndim - lead, tmp->shape + lead, tmp->strides + lead,
                                 dst->ndim, dst->shape, bstrides) < 0)
            goto fail;
        src = tmp;
    }
    const npy_intp *ops[2] = {dst->strides, bstrides};
    if (ga_plan_collapse(dst->ndim, dst->shape, 2, ops, &ks, kst) < 0)
        goto fail;
    if (dst->type == src->type)
        GA_LAUNCH_TRY(ga_launch_copy(ga_array_itemsize(dst), &ks, dst->data, &kst[0],
                                     src->data, &kst[1], stream), stream);
    else
        GA_LAUNCH_TRY(ga_launch_cast((ga_type)dst->type, &ks, dst->data, &kst[0],
                                     (ga_type)src->type, src->data, &kst[1], stream), stream);
    Py_XDECREF(tmp);
    return 0;
fail:
    Py_XDECREF(tmp);
    return -1;
}

/* Fill with raw element bytes (already converted to dst's dtype). */
int
ga_fill_bytes(ga_array *dst, const ga_kscalar *value)
{
    ga_kshape ks;
    ga_kstrides kst;
    cudaStream_t stream = ga_runtime_device_stream(dst->device);
    npy_intp n = ga_array_size(dst);
    if (n == 0)
        return 0;
    if (ga_runtime_use_device(dst->device) < 0)
        return -1;
    if (dst->flags & (GA_C_CONTIGUOUS | GA_F_CONTIGUOUS)) {
        int item = ga_array_itemsize(dst);
        int zero = 1;
        for (int i = 0; i < item; ++i)
            zero &= value->v.bytes[i] == 0;
        if (zero) {
            GA_CUDA_TRY(cudaMemsetAsync(dst->data, 0, (size_t)n * item, stream));
            return 0;
        }
        ks.ndim = 1;
        ks.shape[0] = n;
        GA_LAUNCH_TRY(ga_launch_fill(item, &ks, dst->data, NULL, value, stream), stream);
        return 0;
    }
    const npy_intp *ops[1] = {dst->strides};
    if (ga_plan_collapse(dst->ndim, dst->shape, 1, ops, &ks, &kst) < 0)
        return -1;
    GA_LAUNCH_TRY(ga_launch_fill(ga_array_itemsize(dst), &ks, dst->data, &kst, value, stream),
                  stream);
    return 0;
fail:
    return -1;
}

int
ga_assign_scalar(ga_array *dst, PyObject *value)
{
    ga_kscalar v;
    if (!(dst->flags & GA_WRITEABLE)) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return -1;
    }
    if (ga_scalar_to_bytes(value, dst->descr, &v) < 0)
        return -1;
    return ga_fill_bytes(dst, &v);
}

ga_array *
ga_array_copy_as(ga_array *a, PyArray_Descr *descr, int fortran)
{
    if (descr == NULL) {
        descr = a->descr;
        Py_INCREF(descr);
    }
    ga_array *out = ga_array_empty(a->ndim, a->shape, descr, fortran, a->device);
    if (out == NULL)
        return NULL;
    if (ga_assign_array(out, a) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

int
ga_convert_init(PyObject *m)
{
    return 0;
}
