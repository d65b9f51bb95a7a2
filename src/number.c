/*
 * number.c -- the number protocol of ndarray.  Conversions of one-element
 * arrays to Python numbers (bool(), int(), float(), operator.index()) read
 * the element with one synchronising copy.
 */
#include "gpuarr.h"

/* The single element of a size-1 array as a NumPy scalar (synchronises). */
PyObject *
ga_array_scalar(ga_array *a, const char *what)
{
    unsigned char buf[16];
    npy_intp n = ga_array_size(a);
    cudaError_t err;
    cudaStream_t stream = ga_runtime_current_stream();
    if (n != 1) {
        if (what == NULL)
            PyErr_SetString(PyExc_ValueError, "can only convert an array of size 1 to a Python "
                            "scalar");
        else
            PyErr_Format(PyExc_TypeError, "only 0-dimensional arrays can be converted to "
                         "Python scalars (%s)", what);
        return NULL;
    }
    if (ga_runtime_use_device(a->device) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    err = cudaMemcpyAsync(buf, a->data, ga_array_itemsize(a), cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream);
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess)
        return ga_err_cuda(err, "reading an element");
    return PyArray_Scalar(buf, a->descr, NULL);
}

static int
array_bool(ga_array *a)
{
    npy_intp n = ga_array_size(a);
    if (n != 1) {
        PyErr_SetString(PyExc_ValueError, n == 0
            ? "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
              "that an array is not empty."
            : "The truth value of an array with more than one element is ambiguous. Use a.any() "
              "or a.all()");
        return -1;
    }
    PyObject *s = ga_array_scalar(a, NULL);
    if (s == NULL)
        return -1;
    int r = PyObject_IsTrue(s);
    Py_DECREF(s);
    return r;
}

static PyObject *
array_convert(ga_array *a, PyObject *(*conv)(PyObject *), const char *what)
{
    PyObject *s = ga_array_scalar(a, what);
    if (s == NULL)
        return NULL;
    PyObject *r = conv(s);
    Py_DECREF(s);
    return r;
}

static PyObject *array_int(ga_array *a) { return array_convert(a, PyNumber_Long, "int()"); }
static PyObject *array_float(ga_array *a) { return array_convert(a, PyNumber_Float, "float()"); }

static PyObject *
array_index(ga_array *a)
{
    if (a->ndim != 0 || !(a->descr->kind == 'i' || a->descr->kind == 'u')) {
        PyErr_SetString(PyExc_TypeError,
                        "only integer scalar arrays can be converted to a scalar index");
        return NULL;
    }
    return array_convert(a, PyNumber_Index, "index");
}

PyNumberMethods ga_array_as_number = {
    .nb_bool = (inquiry)array_bool,
    .nb_int = (unaryfunc)array_int,
    .nb_float = (unaryfunc)array_float,
    .nb_index = (unaryfunc)array_index,
};
