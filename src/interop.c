/*
 * interop.c -- sharing device memory with other libraries and with NumPy's
 * dispatch protocols.
 *
 * - __cuda_array_interface__ (version 3) both ways: an ndarray exports its
 *   pointer, shape, strides and the stream its work is ordered on; any
 *   object exporting the interface becomes a gpuarr view without a copy
 *   (the view keeps the exporter alive through `base`).  Per the spec the
 *   consumer orders itself after the producer: the producer's stream is
 *   synchronised with an event the current stream waits on.
 * - __array_ufunc__ / __array_function__ hand NumPy calls to the Python
 *   helpers "array_ufunc" / "array_function" (gpuarr/_interop.py), which
 *   map NumPy's functions to gpuarr's and move host arguments to the device.
 */
#include "gpuarr.h"

/* The stream value the interface advertises for our current stream:
 * 1 for the legacy default stream, else the handle. */
static PyObject *
stream_value(void)
{
    cudaStream_t s = ga_runtime_current_stream();
    return s == 0 ? PyLong_FromLong(1) : PyLong_FromVoidPtr(s);
}

PyObject *
ga_array_cai_get(ga_array *a, void *closure)
{
    PyObject *shape = ga_shape_tuple(a->ndim, a->shape), *strides = NULL, *typestr = NULL;
    PyObject *data = NULL, *stream = NULL, *r = NULL;
    if (shape == NULL)
        return NULL;
    if (a->flags & GA_C_CONTIGUOUS) {
        strides = Py_None;
        Py_INCREF(strides);
    } else {
        strides = ga_shape_tuple(a->ndim, a->strides);
    }
    typestr = PyObject_GetAttrString((PyObject *)a->descr, "str");
    npy_intp size = ga_array_size(a);
    data = Py_BuildValue("(NO)", PyLong_FromVoidPtr(size ? a->data : NULL),
                         (a->flags & GA_WRITEABLE) ? Py_False : Py_True);
    stream = stream_value();
    if (strides && typestr && data && stream)
        r = Py_BuildValue("{s:O,s:O,s:O,s:O,s:i,s:O}", "shape", shape, "typestr", typestr,
                          "data", data, "strides", strides, "version", 3, "stream", stream);
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(typestr);
    Py_XDECREF(data);
    Py_XDECREF(stream);
    return r;
}

/* Order the current stream after the producer's `stream` entry. */
static int
wait_for_producer(PyObject *stream_obj)
{
    if (stream_obj == NULL || stream_obj == Py_None)
        return 0;
    long long v = PyLong_AsLongLong(stream_obj);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v == 0) {
        PyErr_SetString(PyExc_ValueError, "__cuda_array_interface__: stream 0 is disallowed by "
                        "the specification (use 1 for the legacy default stream)");
        return -1;
    }
    cudaStream_t producer = v == 1 ? (cudaStream_t)0 : v == 2 ? cudaStreamPerThread
                                                           : (cudaStream_t)(intptr_t)v;
    cudaStream_t current = ga_runtime_current_stream();
    if (producer == current)
        return 0;
    cudaEvent_t ev = NULL;
    GA_CUDA_TRY(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    GA_CUDA_TRY(cudaEventRecord(ev, producer));
    GA_CUDA_TRY(cudaStreamWaitEvent(current, ev, 0));
    cudaEventDestroy(ev);
    return 0;
fail:
    if (ev)
        cudaEventDestroy(ev);
    return -1;
}

/* A view over an object exporting __cuda_array_interface__; -2 when `obj`
 * has none (fast path not applicable), NULL... via *out. */
int
ga_try_from_cai(PyObject *obj, PyObject **out)
{
    PyObject *cai = NULL, *item;
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    PyArray_Descr *descr = NULL;
    cai = PyObject_GetAttrString(obj, "__cuda_array_interface__");
    if (cai == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return -2;
    }
    if (!PyDict_Check(cai)) {
        PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ must be a dict");
        goto fail;
    }
    item = PyDict_GetItemString(cai, "shape");
    int nd = item ? ga_parse_shape(item, shape, "__cuda_array_interface__ shape") : -1;
    if (nd < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_KeyError, "__cuda_array_interface__ has no 'shape'");
        goto fail;
    }
    item = PyDict_GetItemString(cai, "typestr");
    if (item == NULL || !PyArray_DescrConverter(item, &descr))
        goto fail_msg;
    if (PyDict_GetItemString(cai, "mask") != NULL && PyDict_GetItemString(cai, "mask") != Py_None) {
        PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ with a mask is not supported");
        goto fail;
    }
    int code = ga_dtype_code(descr, "__cuda_array_interface__ typestr");
    if (code < 0)
        goto fail;
    Py_SETREF(descr, ga_dtype_from_code(code));
    item = PyDict_GetItemString(cai, "data");
    if (item == NULL || !PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2)
        goto fail_msg;
    void *ptr = PyLong_AsVoidPtr(PyTuple_GET_ITEM(item, 0));
    int readonly = PyObject_IsTrue(PyTuple_GET_ITEM(item, 1));
    if (PyErr_Occurred() || readonly < 0)
        goto fail;
    item = PyDict_GetItemString(cai, "strides");
    if (item != NULL && item != Py_None) {
        if (ga_parse_shape(item, strides, "__cuda_array_interface__ strides") != nd)
            goto fail_msg;
    } else {
        npy_intp s = PyDataType_ELSIZE(descr);
        for (int i = nd - 1; i >= 0; --i) {
            strides[i] = s;
            s *= shape[i] ? shape[i] : 1;
        }
    }
    struct cudaPointerAttributes attr;
    int device = ga_runtime_current_device();
    if (ptr != NULL && cudaPointerGetAttributes(&attr, ptr) == cudaSuccess)
        device = attr.device;
    else
        (void)cudaGetLastError();
    if (ga_runtime_use_device(device) < 0 || wait_for_producer(PyDict_GetItemString(cai, "stream")) < 0)
        goto fail;
    *out = (PyObject *)ga_array_view(obj, (char *)ptr, nd, shape, strides, descr, device, !readonly);
    Py_DECREF(cai);
    return *out == NULL ? -1 : 0;
fail_msg:
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "malformed __cuda_array_interface__");
fail:
    Py_XDECREF(descr);
    Py_XDECREF(cai);
    return -1;
}

static PyObject *
call_helper(const char *name, PyObject *self, PyObject *args, PyObject *kwds)
{
    PyObject *h = ga_helper(name);
    if (h == NULL)
        return NULL;
    PyObject *full = PyTuple_New(PyTuple_GET_SIZE(args) + 1);
    if (full == NULL)
        return NULL;
    Py_INCREF(self);
    PyTuple_SET_ITEM(full, 0, self);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); ++i) {
        PyObject *x = PyTuple_GET_ITEM(args, i);
        Py_INCREF(x);
        PyTuple_SET_ITEM(full, i + 1, x);
    }
    PyObject *r = PyObject_Call(h, full, kwds);
    Py_DECREF(full);
    return r;
}

PyObject *
ga_array_array_ufunc(PyObject *self, PyObject *args, PyObject *kwds)
{
    return call_helper("array_ufunc", self, args, kwds);
}

PyObject *
ga_array_array_function(PyObject *self, PyObject *args, PyObject *kwds)
{
    return call_helper("array_function", self, args, kwds);
}
