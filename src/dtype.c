/*
 * dtype.c -- which NumPy dtypes live on the device, and scalars as bytes.
 *
 * gpuarr stores NumPy's own dtype objects (always in native byte order) and
 * maps each to a kernel type code (ga_type).  Promotion and casting rules
 * are never re-derived here: they come from NumPy's C API at the call site.
 */
#include "gpuarr.h"

static const int code_to_typenum[GA_NTYPES] = {
    [GA_BOOL] = NPY_BOOL, [GA_INT8] = NPY_INT8, [GA_INT16] = NPY_INT16,
    [GA_INT32] = NPY_INT32, [GA_INT64] = NPY_INT64, [GA_UINT8] = NPY_UINT8,
    [GA_UINT16] = NPY_UINT16, [GA_UINT32] = NPY_UINT32, [GA_UINT64] = NPY_UINT64,
    [GA_FLOAT16] = NPY_FLOAT16, [GA_FLOAT32] = NPY_FLOAT32, [GA_FLOAT64] = NPY_FLOAT64,
    [GA_COMPLEX64] = NPY_COMPLEX64, [GA_COMPLEX128] = NPY_COMPLEX128,
};

static int
code_of(PyArray_Descr *d)
{
    npy_intp size = PyDataType_ELSIZE(d);
    switch (d->kind) {
    case 'b':
        return size == 1 ? GA_BOOL : -1;
    case 'i':
        return size == 1 ? GA_INT8 : size == 2 ? GA_INT16 : size == 4 ? GA_INT32
             : size == 8 ? GA_INT64 : -1;
    case 'u':
        return size == 1 ? GA_UINT8 : size == 2 ? GA_UINT16 : size == 4 ? GA_UINT32
             : size == 8 ? GA_UINT64 : -1;
    case 'f':
        return size == 2 ? GA_FLOAT16 : size == 4 ? GA_FLOAT32 : size == 8 ? GA_FLOAT64 : -1;
    case 'c':
        return size == 8 ? GA_COMPLEX64 : size == 16 ? GA_COMPLEX128 : -1;
    default:
        return -1;
    }
}

int
ga_dtype_code(PyArray_Descr *descr, const char *argname)
{
    int code = PyDataType_HASFIELDS(descr) || PyDataType_HASSUBARRAY(descr) ? -1 : code_of(descr);
    if (code < 0)
        PyErr_Format(PyExc_TypeError,
                     "%s%sgpuarr does not support dtype %R: device arrays hold bool, int8-int64, "
                     "uint8-uint64, float16, float32, float64, complex64 or complex128",
                     argname ? argname : "", argname ? ": " : "", (PyObject *)descr);
    return code;
}

PyArray_Descr *
ga_dtype_from_code(int code)
{
    return PyArray_DescrFromType(code_to_typenum[code]);
}

PyArray_Descr *
ga_dtype_converter_or(PyObject *obj, PyArray_Descr *deflt, const char *argname)
{
    PyArray_Descr *d = NULL;
    if (obj == NULL || obj == Py_None) {
        Py_XINCREF(deflt);
        return deflt;
    }
    if (!PyArray_DescrConverter(obj, &d))
        return NULL;
    int code = ga_dtype_code(d, argname);
    Py_DECREF(d);
    if (code < 0)
        return NULL;
    return ga_dtype_from_code(code);
}

int
ga_scalar_to_bytes(PyObject *value, PyArray_Descr *descr, ga_kscalar *out)
{
    Py_INCREF(descr);
    PyArrayObject *arr = (PyArrayObject *)PyArray_FromAny(value, descr, 0, 0,
                                                          NPY_ARRAY_FORCECAST, NULL);
    if (arr == NULL)
        return -1;
    if (PyArray_NDIM(arr) != 0) {
        PyErr_Format(PyExc_ValueError, "expected a scalar, got an array with %d dimensions",
                     PyArray_NDIM(arr));
        Py_DECREF(arr);
        return -1;
    }
    memset(out, 0, sizeof(*out));
    memcpy(out->v.bytes, PyArray_DATA(arr), PyDataType_ELSIZE(descr));
    Py_DECREF(arr);
    return 0;
}

int
ga_dtype_init(PyObject *m)
{
    return 0;
}
