/*
 * label.c -- the C side of gpuarr.scipy.ndimage.label: choose the mask the
 * kernels read, the output they write, run the union-find of
 * src/kernels/label.cu and read the number of components (the one
 * synchronisation: the count depends on the data).
 *
 * The mask: bool and integer arrays that are C-contiguous are read in place
 * (foreground = any bit set, so one kernel per element size); anything else
 * (floating types, strided views) is first converted to a contiguous bool
 * array.  The output: a new int32 array (int64 from 2**31 - 2 elements, as
 * SciPy), a new array of a requested dtype, or the caller's device array.
 * Integer and float32/float64 outputs that are C-contiguous are written
 * directly; others (strided, bool, float16, complex) get an int32/int64
 * temporary that is then assigned with NumPy's casting.  When the output
 * type cannot hold every possible label, the count is read before anything
 * is written and an output too small is refused (RuntimeError, as SciPy),
 * leaving the caller's array untouched.
 *
 * Ownership: the scratch block (union-find forest, tile counts, the count)
 * comes from the pool and is returned on the current stream once the
 * kernels using it are queued; arrays made here are new references.
 */
#include "gpuarr.h"

#include <float.h>

/* The largest label an output dtype holds exactly. */
static int64_t
label_dtype_limit(int type)
{
    switch (type) {
    case GA_INT8: return INT8_MAX;
    case GA_UINT8: return UINT8_MAX;
    case GA_INT16: return INT16_MAX;
    case GA_UINT16: return UINT16_MAX;
    case GA_INT32: return INT32_MAX;
    case GA_UINT32: return UINT32_MAX;
    case GA_FLOAT16: return 2048;
    case GA_FLOAT32: return (int64_t)1 << FLT_MANT_DIG;
    case GA_FLOAT64: return (int64_t)1 << DBL_MANT_DIG;
    default: return INT64_MAX;
    }
}

/* Output types the write kernel produces directly. */
static int
label_direct_type(int type)
{
    return type != GA_BOOL && type != GA_FLOAT16 && type != GA_COMPLEX64 &&
           type != GA_COMPLEX128;
}

/* A contiguous array whose elements the kernels can test for non-zero by
 * their bits: `input` itself or a bool copy.  New reference. */
static ga_array *
label_mask(ga_array *input)
{
    int bits = input->type == GA_BOOL || (input->type >= GA_INT8 && input->type <= GA_UINT64);
    if (bits && (input->flags & GA_C_CONTIGUOUS)) {
        Py_INCREF(input);
        return input;
    }
    return ga_array_copy_as(input, PyArray_DescrFromType(NPY_BOOL), 0);
}

/* The caller's output argument as a device array: None and dtype-likes
 * make a new array, a device array is checked.  New reference. */
static ga_array *
label_output(PyObject *output, ga_array *input, int wide)
{
    if (output != NULL && ga_array_check(output)) {
        ga_array *o = (ga_array *)output;
        int same = o->ndim == input->ndim;
        for (int i = 0; same && i < o->ndim; ++i)
            same = o->shape[i] == input->shape[i];
        if (!same) {
            PyErr_SetString(PyExc_ValueError, "output shape not correct");
            return NULL;
        }
        if (!(o->flags & GA_WRITEABLE)) {
            PyErr_SetString(PyExc_ValueError, "output is read-only");
            return NULL;
        }
        if (o->device != input->device) {
            PyErr_SetString(PyExc_ValueError, "output is on another device than input");
            return NULL;
        }
        Py_INCREF(o);
        return o;
    }
    if (output != NULL && PyArray_Check(output)) {
        ga_err_host_output("label", "output");
        return NULL;
    }
    PyArray_Descr *descr = ga_dtype_converter_or(
        output, PyArray_DescrFromType(wide ? NPY_INT64 : NPY_INT32), "output");
    if (descr == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "output must be None, a dtype or a gpuarr array");
        return NULL;
    }
    return ga_array_empty(input->ndim, input->shape, descr, 0, input->device);
}

/* _label(input, neighbours, output) -> (labels, count).
 * input: a device array of 1 to 3 dimensions with at least one element;
 * neighbours: the 13-bit mask of backward offsets (see kernels.h);
 * output: None, a dtype, or a device array of input's shape. */
static PyObject *
py_label(PyObject *self, PyObject *args)
{
    ga_array *input, *mask = NULL, *out = NULL, *tmp = NULL;
    PyObject *output;
    unsigned int neighbours;
    char *scratch = NULL;
    size_t scratch_bytes = 0;
    int64_t count = -1;
    int failed = 0;
    cudaStream_t stream;
    ga_label_args la;

    if (!PyArg_ParseTuple(args, "O!IO", &GA_ArrayType, &input, &neighbours, &output))
        return NULL;
    npy_intp n = ga_array_size(input);
    if (input->ndim < 1 || input->ndim > 3 || n == 0) {
        PyErr_SetString(PyExc_ValueError, "_label needs a non-empty array of 1 to 3 dimensions");
        return NULL;
    }
    if (ga_runtime_use_device(input->device) < 0)
        return NULL;
    stream = ga_runtime_device_stream(input->device);
    int wide = n >= ((npy_intp)1 << 31) - 2;
    out = label_output(output, input, wide);
    if (out == NULL)
        return NULL;
    mask = label_mask(input);
    if (mask == NULL)
        goto fail;

    memset(&la, 0, sizeof(la));
    la.dims[0] = la.dims[1] = 1;
    for (int i = 0; i < input->ndim; ++i)
        la.dims[3 - input->ndim + i] = input->shape[i];
    la.neighbours = neighbours & 0x1fffu;
    la.mask_itemsize = ga_array_itemsize(mask);
    la.mask = mask->data;
    size_t work = ga_label_scratch_bytes(n);
    scratch_bytes = work + 256;
    scratch = ga_pool_malloc(input->device, scratch_bytes, stream, &failed);
    if (failed)
        goto fail;
    la.scratch = scratch;
    la.count = (int64_t *)(scratch + work);
    GA_LAUNCH_TRY(ga_launch_label(&la, stream), stream);

    /* Make sure every possible label fits before writing. */
    if (n > label_dtype_limit(out->type) && out->type != GA_BOOL) {
        if (ga_read_small(&count, la.count, sizeof(count), stream, "reading the label count") < 0)
            goto fail;
        if (count > label_dtype_limit(out->type)) {
            PyErr_SetString(PyExc_RuntimeError, "insufficient bit-depth in requested output type");
            goto fail;
        }
    }
    if (label_direct_type(out->type) && (out->flags & GA_C_CONTIGUOUS)) {
        GA_LAUNCH_TRY(ga_launch_label_write(&la, (ga_type)out->type, out->data, stream), stream);
    } else {
        tmp = ga_array_empty(input->ndim, input->shape,
                             PyArray_DescrFromType(wide ? NPY_INT64 : NPY_INT32), 0,
                             input->device);
        if (tmp == NULL)
            goto fail;
        GA_LAUNCH_TRY(ga_launch_label_write(&la, (ga_type)tmp->type, tmp->data, stream), stream);
        if (ga_assign_array(out, tmp) < 0)
            goto fail;
    }
    if (count < 0 &&
        ga_read_small(&count, la.count, sizeof(count), stream, "reading the label count") < 0)
        goto fail;
    ga_pool_free(input->device, scratch, scratch_bytes, stream);
    Py_DECREF(mask);
    Py_XDECREF(tmp);
    return Py_BuildValue("(NL)", (PyObject *)out, (long long)count);
fail:
    if (scratch != NULL)
        ga_pool_free(input->device, scratch, scratch_bytes, stream);
    Py_XDECREF(mask);
    Py_XDECREF(tmp);
    Py_XDECREF(out);
    return NULL;
}

static PyMethodDef label_functions[] = {
    {"_label", py_label, METH_VARARGS,
     "_label(input, neighbours, output) -> (labels, count): connected components of the "
     "non-zero elements of a 1-3 dimensional device array"},
    {NULL, NULL, 0, NULL},
};

int
ga_label_init(PyObject *m)
{
    return PyModule_AddFunctions(m, label_functions);
}
