/*
 * getset.c -- ndarray attributes: shape, strides, dtype, flags, device,
 * data, T, mT, real, imag and the rest.  Each is computed from the struct; none
 * touches the device.
 */
#include "gpuarr.h"

static PyObject *array_shape_get(ga_array *a, void *c) { return ga_shape_tuple(a->ndim, a->shape); }
static PyObject *array_strides_get(ga_array *a, void *c) { return ga_shape_tuple(a->ndim, a->strides); }
static PyObject *array_ndim_get(ga_array *a, void *c) { return PyLong_FromLong(a->ndim); }
static PyObject *array_size_get(ga_array *a, void *c) { return PyLong_FromSsize_t(ga_array_size(a)); }
static PyObject *array_itemsize_get(ga_array *a, void *c) { return PyLong_FromLong(ga_array_itemsize(a)); }

static PyObject *
array_nbytes_get(ga_array *a, void *c)
{
    return PyLong_FromSsize_t(ga_array_size(a) * ga_array_itemsize(a));
}

static PyObject *
array_dtype_get(ga_array *a, void *c)
{
    Py_INCREF(a->descr);
    return (PyObject *)a->descr;
}

static PyObject *
array_base_get(ga_array *a, void *c)
{
    PyObject *b = a->base ? a->base : Py_None;
    Py_INCREF(b);
    return b;
}

static PyObject *
array_flags_get(ga_array *a, void *c)
{
    PyObject *cls = ga_helper("Flags");
    if (cls == NULL)
        return NULL;
    return PyObject_CallFunction(cls, "iiii", !!(a->flags & GA_C_CONTIGUOUS),
                                 !!(a->flags & GA_F_CONTIGUOUS), !!(a->flags & GA_OWNDATA),
                                 !!(a->flags & GA_WRITEABLE));
}

static PyObject *
array_device_get(ga_array *a, void *c)
{
    PyObject *cls = ga_helper("Device");
    return cls ? PyObject_CallFunction(cls, "i", a->device) : NULL;
}

/* data: a MemoryPointer(owner, ptr, device_id) keeping the memory alive. */
static PyObject *
array_data_get(ga_array *a, void *c)
{
    PyObject *cls = ga_helper("MemoryPointer");
    PyObject *owner = (a->flags & GA_OWNDATA) || a->base == NULL ? (PyObject *)a : a->base;
    return cls ? PyObject_CallFunction(cls, "ONi", owner, PyLong_FromVoidPtr(a->data),
                                       a->device) : NULL;
}

static PyObject *
array_T_get(ga_array *a, void *c)
{
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    for (int i = 0; i < a->ndim; ++i) {
        shape[i] = a->shape[a->ndim - 1 - i];
        strides[i] = a->strides[a->ndim - 1 - i];
    }
    Py_INCREF(a->descr);
    return (PyObject *)ga_array_view((PyObject *)a, a->data, a->ndim, shape, strides, a->descr,
                                     a->device, a->flags & GA_WRITEABLE);
}

/* mT: the last two axes swapped (the array API's matrix transpose). */
static PyObject *
array_mT_get(ga_array *a, void *c)
{
    if (a->ndim < 2) {
        PyErr_SetString(PyExc_ValueError, "matrix transpose with ndim < 2 is undefined");
        return NULL;
    }
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    for (int i = 0; i < a->ndim; ++i) {
        shape[i] = a->shape[i];
        strides[i] = a->strides[i];
    }
    shape[a->ndim - 2] = a->shape[a->ndim - 1];
    shape[a->ndim - 1] = a->shape[a->ndim - 2];
    strides[a->ndim - 2] = a->strides[a->ndim - 1];
    strides[a->ndim - 1] = a->strides[a->ndim - 2];
    Py_INCREF(a->descr);
    return (PyObject *)ga_array_view((PyObject *)a, a->data, a->ndim, shape, strides, a->descr,
                                     a->device, a->flags & GA_WRITEABLE);
}

/* real/imag of a complex array are strided float views; of a real array,
 * real is the array itself and imag a new zero array (read-only view of
 * nothing would surprise NumPy users). */
static PyObject *
complex_part(ga_array *a, int imag)
{
    int part = a->type == GA_COMPLEX64 ? NPY_FLOAT32 : NPY_FLOAT64;
    return (PyObject *)ga_array_view((PyObject *)a, a->data + (imag ? ga_array_itemsize(a) / 2 : 0),
                                     a->ndim, a->shape, a->strides, PyArray_DescrFromType(part),
                                     a->device, a->flags & GA_WRITEABLE);
}

static PyObject *
array_real_get(ga_array *a, void *c)
{
    if (a->type == GA_COMPLEX64 || a->type == GA_COMPLEX128)
        return complex_part(a, 0);
    Py_INCREF(a);
    return (PyObject *)a;
}

static PyObject *
array_imag_get(ga_array *a, void *c)
{
    if (a->type == GA_COMPLEX64 || a->type == GA_COMPLEX128)
        return complex_part(a, 1);
    Py_INCREF(a->descr);
    ga_array *z = ga_array_empty(a->ndim, a->shape, a->descr, 0, a->device);
    ga_kscalar zero;
    memset(&zero, 0, sizeof(zero));
    if (z != NULL && ga_fill_bytes(z, &zero) < 0)
        Py_CLEAR(z);
    if (z != NULL)
        z->flags &= ~GA_WRITEABLE;
    return (PyObject *)z;
}

PyGetSetDef ga_array_getset[] = {
    {"shape", (getter)array_shape_get, NULL, "Tuple of array dimensions.", NULL},
    {"strides", (getter)array_strides_get, NULL, "Bytes to step in each dimension.", NULL},
    {"ndim", (getter)array_ndim_get, NULL, "Number of dimensions.", NULL},
    {"size", (getter)array_size_get, NULL, "Number of elements.", NULL},
    {"itemsize", (getter)array_itemsize_get, NULL, "Bytes per element.", NULL},
    {"nbytes", (getter)array_nbytes_get, NULL, "Bytes of all elements.", NULL},
    {"dtype", (getter)array_dtype_get, NULL, "The NumPy dtype of the elements.", NULL},
    {"base", (getter)array_base_get, NULL, "Owner of the memory of a view, else None.", NULL},
    {"flags", (getter)array_flags_get, NULL, "Memory layout flags.", NULL},
    {"device", (getter)array_device_get, NULL, "The gpuarr.cuda.Device holding the data.", NULL},
    {"data", (getter)array_data_get, NULL, "A MemoryPointer; .ptr is the device address.", NULL},
    {"T", (getter)array_T_get, NULL, "The transposed view.", NULL},
    {"mT", (getter)array_mT_get, NULL, "The view with the last two axes swapped.", NULL},
    {"real", (getter)array_real_get, NULL, "Real part (a view for complex arrays).", NULL},
    {"imag", (getter)array_imag_get, NULL, "Imaginary part (a view for complex arrays).", NULL},
    {"__cuda_array_interface__", (getter)ga_array_cai_get, NULL,
     "The CUDA Array Interface (version 3): pointer, shape, strides, stream.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
