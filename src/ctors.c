/*
 * ctors.c -- making arrays: array/asarray from anything, empty, zeros,
 * ones, full, and the sequence primitive behind arange and linspace.
 *
 * Everything that reaches the device from the host goes through
 * ga_asarray: device arrays pass through (or are copied / converted /
 * moved to the current device), everything else is first made a NumPy
 * array by NumPy itself (nested lists, scalars, buffer-protocol objects,
 * big-endian or strided arrays), then transferred.  Sequences that contain
 * device arrays (a list of 0-d results) are stacked on the device by the
 * Python helper "stack_sequence".  A device= argument (the array API's)
 * makes that device current for the call, as `with device:` would.
 */
#include "gpuarr.h"

static int
contains_device_array(PyObject *obj, int depth)
{
    if (ga_array_check(obj))
        return 1;
    if (depth > 32 || !(PyList_Check(obj) || PyTuple_Check(obj)))
        return 0;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    for (Py_ssize_t i = 0; i < n; ++i)
        if (contains_device_array(PySequence_Fast_GET_ITEM(obj, i), depth + 1))
            return 1;
    return 0;
}

/* A list or tuple of Python floats, or of equal-length lists or tuples of
 * them (what center_of_mass returns, which the lesson turns into an array),
 * as a new float64 ndarray of NumPy's shape, filled in one pass: NumPy's
 * general discovery of such a list takes ~0.1 us an element.  Only exact
 * lists, tuples and floats qualify (a float subclass such as numpy.float64
 * goes NumPy's way), so no Python code runs while the items are read.
 * 1 with *out set, 0 when obj is not of that form, -1 on an error. */
static int
float_rows(PyObject *obj, PyArrayObject **out)
{
    if (!(PyList_CheckExact(obj) || PyTuple_CheckExact(obj)))
        return 0;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n == 0)
        return 0;
    PyObject **rows = PySequence_Fast_ITEMS(obj);
    const int flat = PyFloat_CheckExact(rows[0]);
    if (!flat && !(PyList_CheckExact(rows[0]) || PyTuple_CheckExact(rows[0])))
        return 0;
    const Py_ssize_t d = flat ? 1 : PySequence_Fast_GET_SIZE(rows[0]);
    if (d == 0)
        return 0;
    npy_intp dims[2] = {n, d};
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(flat ? 1 : 2, dims, NPY_FLOAT64);
    if (a == NULL)
        return -1;
    double *v = (double *)PyArray_DATA(a);
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *row = rows[i];
        if (flat) {
            if (!PyFloat_CheckExact(row))
                goto other;
            v[i] = PyFloat_AS_DOUBLE(row);
            continue;
        }
        if (!(PyList_CheckExact(row) || PyTuple_CheckExact(row)) ||
            PySequence_Fast_GET_SIZE(row) != d)
            goto other;
        PyObject **items = PySequence_Fast_ITEMS(row);
        for (Py_ssize_t j = 0; j < d; ++j) {
            if (!PyFloat_CheckExact(items[j]))
                goto other;
            v[i * d + j] = PyFloat_AS_DOUBLE(items[j]);
        }
    }
    *out = a;
    return 1;
other:
    Py_DECREF(a);
    return 0;
}

/* A device array on the current device with the same values as `a`. */
static ga_array *
to_current_device(ga_array *a)
{
    int dev = ga_runtime_current_device();
    ga_array *src = NULL, *out = NULL;
    if (!(a->flags & GA_C_CONTIGUOUS)) {
        src = ga_array_copy_as(a, NULL, 0);
        if (src == NULL)
            return NULL;
        a = src;
    }
    Py_INCREF(a->descr);
    out = ga_array_empty(a->ndim, a->shape, a->descr, 0, dev);
    if (out == NULL)
        goto fail;
    size_t n = (size_t)ga_array_size(a) * ga_array_itemsize(a);
    if (n) {
        /* An asynchronous peer copy is ordered with the destination's
         * stream only: make it wait for the source device's queued work
         * (the writes of `a`), and make that device's later work (which may
         * reuse a's memory once it is freed) wait for the copy. */
        cudaStream_t s_dst = ga_runtime_device_stream(dev);
        cudaStream_t s_src = ga_runtime_device_stream(a->device);
        if (ga_runtime_stream_after(dev, s_dst, a->device, s_src) < 0)
            goto fail;
        GA_CUDA_TRY(cudaMemcpyPeerAsync(out->data, dev, a->data, a->device, n, s_dst));
        if (ga_runtime_stream_after(a->device, s_src, dev, s_dst) < 0 ||
            ga_runtime_use_device(dev) < 0)
            goto fail;
    }
    Py_XDECREF(src);
    return out;
fail:
    Py_XDECREF(src);
    Py_XDECREF(out);
    return NULL;
}

static int
layout_ok(ga_array *a, char order)
{
    return order == 'K' || order == 'A' ||
           (order == 'C' && (a->flags & GA_C_CONTIGUOUS)) ||
           (order == 'F' && (a->flags & GA_F_CONTIGUOUS));
}

/* `a` as dtype `descr` (stolen; NULL keeps a's) and `order`, on a's own
 * device: `a` itself (a new reference) when nothing has to change and copy
 * is not 1, a ValueError when copy is 0 and a copy is needed, else a copy.
 * astype's path: it never moves an array between devices. */
PyObject *
ga_array_as(ga_array *a, PyArray_Descr *descr, int copy, char order)
{
    int same = descr == NULL || PyArray_EquivTypes(descr, a->descr);
    if (same && copy != 1 && layout_ok(a, order)) {
        Py_XDECREF(descr);
        Py_INCREF(a);
        return (PyObject *)a;
    }
    if (copy == 0) {
        Py_XDECREF(descr);
        PyErr_SetString(PyExc_ValueError, "Unable to avoid copy while creating an array as "
                        "requested.");
        return NULL;
    }
    int fortran = order == 'F' || ((order == 'K' || order == 'A') &&
                                   (a->flags & GA_F_CONTIGUOUS) && !(a->flags & GA_C_CONTIGUOUS));
    return (PyObject *)ga_array_copy_as(a, descr, fortran);
}

ga_array *
ga_array_contiguous_as(ga_array *a, PyArray_Descr *descr)
{
    return (ga_array *)ga_array_as(a, descr, -1, 'C');
}

ga_array *
ga_device_arg(PyObject *obj, const char *fname, const char *argname)
{
    if (PyArray_Check(obj))
        return (ga_array *)ga_err_host_array(fname, argname);
    return (ga_array *)ga_asarray(obj, NULL, -1, 'K');
}

PyObject *
ga_asarray(PyObject *obj, PyArray_Descr *descr, int copy, char order)
{
    ga_array *a = NULL;
    if (ga_array_check(obj)) {
        a = (ga_array *)obj;
        if (a->device == ga_runtime_current_device())
            return ga_array_as(a, descr, copy, order);
        if (copy == 0) {
            PyErr_SetString(PyExc_ValueError, "Unable to avoid copy while creating an "
                            "array as requested: the array is on another device.");
            Py_XDECREF(descr);
            return NULL;
        }
        Py_INCREF(a);
        ga_array *moved = to_current_device(a);
        Py_DECREF(a);
        if (moved == NULL) {
            Py_XDECREF(descr);
            return NULL;
        }
        PyObject *out = ga_array_as(moved, descr, -1, order);
        Py_DECREF(moved);
        return out;
    }
    PyObject *view = NULL;
    int cai = PyArray_Check(obj) ? -2 : ga_try_from_cai(obj, &view);
    if (cai == 0) {
        if (descr == NULL && copy != 1 && layout_ok((ga_array *)view, order))
            return view;
        PyObject *r = ga_asarray(view, descr, copy, order);
        Py_DECREF(view);
        return r;
    }
    if (cai == -1)
        goto fail;
    if (copy == 0) {
        PyErr_SetString(PyExc_ValueError, "Unable to avoid copy while creating an array as "
                        "requested: host data must be copied to the device.");
        goto fail;
    }
    PyArrayObject *host = NULL;
    const int rows = descr == NULL ? float_rows(obj, &host) : 0;
    if (rows < 0)
        goto fail;
    if (!rows && (PyList_Check(obj) || PyTuple_Check(obj)) && contains_device_array(obj, 0)) {
        PyObject *stack = ga_helper("stack_sequence");
        if (stack == NULL)
            goto fail;
        PyObject *r = PyObject_CallFunctionObjArgs(stack, obj, descr ? (PyObject *)descr : Py_None,
                                                   NULL);
        Py_XDECREF(descr);
        return r;
    }
    /* Anything but an ndarray NumPy converts straight to `descr`, by
     * np.asarray's rules (OverflowError for 300 into int8, TypeError for 1j
     * into an integer type); an ndarray moves as it is and is cast on the
     * device. */
    if (!rows) {
        PyArray_Descr *host_descr = descr != NULL && !PyArray_Check(obj) ? descr : NULL;
        Py_XINCREF(host_descr);
        host = (PyArrayObject *)PyArray_FromAny(obj, host_descr, 0, 0, 0, NULL);
        if (host == NULL)
            goto fail;
    }
    a = ga_transfer_from_numpy(host, descr, ga_runtime_current_device());
    descr = NULL;
    Py_DECREF(host);
    if (a == NULL)
        return NULL;
    if (!layout_ok(a, order)) {
        ga_array *out = ga_array_copy_as(a, NULL, order == 'F');
        Py_DECREF(a);
        return (PyObject *)out;
    }
    return (PyObject *)a;
fail:
    Py_XDECREF(descr);
    Py_XDECREF(a);
    return NULL;
}

/* Write `value` into `dst`: a device array, a scalar, or anything NumPy
 * turns into an array (moved to the device first). */
int
ga_assign_value(ga_array *dst, PyObject *value)
{
    if (ga_array_check(value))
        return ga_assign_array(dst, (ga_array *)value);
    if (PyLong_Check(value) || PyFloat_Check(value) || PyComplex_Check(value) ||
        PyBool_Check(value) || PyArray_IsScalar(value, Generic)) {
        return ga_assign_scalar(dst, value);
    }
    if (!(dst->flags & GA_WRITEABLE)) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        return -1;
    }
    Py_INCREF(dst->descr);
    PyObject *src = ga_asarray(value, dst->descr, -1, 'K');
    if (src == NULL)
        return -1;
    int rc = ga_assign_array(dst, (ga_array *)src);
    Py_DECREF(src);
    return rc;
}

/* ---------------------------------------------------------------- Python */

/* device=: None leaves the calling thread's current device; a
 * gpuarr.cuda.Device or a device number makes that device current while the
 * array is made, as `with device:` does, so the array, the stream and the
 * kernels that fill it are that device's.  Returns the device to restore
 * with device_exit (the current one), or -1 with an exception set. */
static int
device_enter(PyObject *device)
{
    int prev = ga_runtime_current_device();
    if (device == NULL || device == Py_None)
        return prev;
    if (PyBool_Check(device) || !PyIndex_Check(device)) {
        PyErr_Format(PyExc_TypeError, "device must be a gpuarr.cuda.Device (x.device, or one of "
                     "__array_namespace_info__().devices()), a device number or None, not %.100s",
                     Py_TYPE(device)->tp_name);
        return -1;
    }
    Py_ssize_t dev = PyNumber_AsSsize_t(device, NULL);
    if (dev == -1 && PyErr_Occurred())
        return -1;
    if (dev != prev) {
        if (ga_runtime_use_device(dev < INT_MIN ? INT_MIN : dev > INT_MAX ? INT_MAX : (int)dev) < 0)
            return -1;
        ga_runtime_set_current_device((int)dev);
    }
    return prev;
}

/* Makes `prev` (device_enter's answer) current again; passes `result`
 * through, or releases it and returns NULL if that fails. */
static PyObject *
device_exit(int prev, PyObject *result)
{
    if (ga_runtime_current_device() == prev)
        return result;
    /* After a failure the call's own exception stands; the next device
     * operation makes `prev` CUDA's current device. */
    const int rc = result != NULL ? ga_runtime_use_device(prev) : 0;
    ga_runtime_set_current_device(prev);
    if (rc < 0) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

static int
parse_copy(PyObject *obj, int *copy)
{
    if (obj == NULL || obj == Py_True) {
        *copy = 1;
    } else if (obj == Py_None) {
        *copy = -1;
    } else if (obj == Py_False) {
        *copy = 0;
    } else {
        int v = PyObject_IsTrue(obj);
        if (v < 0)
            return -1;
        *copy = v;
    }
    return 0;
}

/* array() on the current device, its arguments parsed. */
static PyObject *
array_on_current_device(PyObject *obj, PyObject *dtype, PyObject *copy_obj, PyObject *order_obj,
                        int ndmin)
{
    int copy;
    char order;
    if (parse_copy(copy_obj, &copy) < 0 || ga_parse_order(order_obj, 'K', &order) < 0)
        return NULL;
    PyArray_Descr *descr = ga_dtype_converter_or(dtype, NULL, "dtype");
    if (descr == NULL && PyErr_Occurred())
        return NULL;
    PyObject *r = ga_asarray(obj, descr, copy, order);
    if (r == NULL || ndmin <= ((ga_array *)r)->ndim)
        return r;
    ga_array *a = (ga_array *)r;
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    int pad = ndmin - a->ndim;
    if (ndmin > NPY_MAXDIMS) {
        Py_DECREF(r);
        PyErr_Format(PyExc_ValueError, "ndmin bigger than allowable number of dimensions %d",
                     NPY_MAXDIMS);
        return NULL;
    }
    for (int i = 0; i < ndmin; ++i) {
        shape[i] = i < pad ? 1 : a->shape[i - pad];
        strides[i] = i < pad ? 0 : a->strides[i - pad];
    }
    Py_INCREF(a->descr);
    PyObject *v = (PyObject *)ga_array_view((PyObject *)a, a->data, ndmin, shape, strides,
                                            a->descr, a->device, a->flags & GA_WRITEABLE);
    Py_DECREF(r);
    return v;
}

/* array(obj, dtype=None, copy=True, order='K', ndmin=0, *, device=None) */
static PyObject *
py_array(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"obj", "dtype", "copy", "order", "ndmin", "device", NULL};
    PyObject *obj, *dtype = NULL, *copy_obj = NULL, *order_obj = NULL, *device = NULL;
    int ndmin = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOOi$O", kwlist, &obj, &dtype, &copy_obj,
                                     &order_obj, &ndmin, &device))
        return NULL;
    int prev = device_enter(device);
    if (prev < 0)
        return NULL;
    return device_exit(prev, array_on_current_device(obj, dtype, copy_obj, order_obj, ndmin));
}

/* The array of empty/zeros/ones/full (what: 0, 1, 2, 3) on the current
 * device; steals the reference to descr. */
static ga_array *
filled_on_current_device(int ndim, npy_intp *dims, PyArray_Descr *descr, char order, int memory,
                         int what, PyObject *fill_value)
{
    ga_array *a = ga_array_empty_in(ndim, dims, descr, order == 'F', ga_runtime_current_device(),
                                    memory);
    if (a == NULL || what == 0)
        return a;
    int rc;
    if (what == 1) {
        ga_kscalar zero;
        memset(&zero, 0, sizeof(zero));
        rc = ga_fill_bytes(a, &zero);
    } else if (what == 2) {
        rc = ga_assign_scalar(a, Py_True);
    } else {
        /* a scalar, a device array or a host array-like, broadcast */
        rc = ga_assign_value(a, fill_value);
    }
    if (rc < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* Shared argument handling of empty/zeros/ones/full:
 * (shape, dtype=float, order='C', *, device=None, memory='device'). */
static PyObject *
new_filled(PyObject *args, PyObject *kwds, int what, PyObject *fill_value)
{
    static char *kwlist[] = {"shape", "dtype", "order", "device", "memory", NULL};
    PyObject *shape_obj, *dtype = NULL, *order_obj = NULL, *device = NULL;
    const char *memory_name = NULL;
    npy_intp dims[NPY_MAXDIMS];
    char order;
    int memory = GA_MEM_DEVICE;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OO$Oz", kwlist, &shape_obj, &dtype, &order_obj,
                                     &device, &memory_name))
        return NULL;
    if (memory_name != NULL && strcmp(memory_name, "device") != 0) {
        if (strcmp(memory_name, "managed") == 0) {
            memory = GA_MEM_MANAGED;
        } else if (strcmp(memory_name, "pinned") == 0) {
            memory = GA_MEM_PINNED;
        } else {
            PyErr_Format(PyExc_ValueError, "memory must be 'device', 'managed' or 'pinned' "
                         "(got '%s')", memory_name);
            return NULL;
        }
    }
    int ndim = ga_parse_shape(shape_obj, dims, "shape");
    if (ndim < 0 || ga_parse_order(order_obj, 'C', &order) < 0)
        return NULL;
    if (order != 'C' && order != 'F') {
        PyErr_SetString(PyExc_ValueError, "order must be 'C' or 'F'");
        return NULL;
    }
    PyArray_Descr *descr = ga_dtype_converter_or(dtype, NULL, "dtype");
    if (descr == NULL && PyErr_Occurred())
        return NULL;
    if (descr == NULL) {
        if (fill_value != NULL && !ga_array_check(fill_value)) {
            PyArrayObject *v = (PyArrayObject *)PyArray_FromAny(fill_value, NULL, 0, 0, 0, NULL);
            if (v == NULL)
                return NULL;
            descr = ga_dtype_converter_or((PyObject *)PyArray_DESCR(v), NULL, "fill_value");
            Py_DECREF(v);
            if (descr == NULL)
                return NULL;
        } else if (fill_value != NULL) {
            descr = ((ga_array *)fill_value)->descr;
            Py_INCREF(descr);
        } else {
            descr = PyArray_DescrFromType(NPY_FLOAT64);
        }
    }
    int prev = device_enter(device);
    if (prev < 0) {
        Py_DECREF(descr);
        return NULL;
    }
    return device_exit(prev, (PyObject *)filled_on_current_device(ndim, dims, descr, order, memory,
                                                                  what, fill_value));
}

static PyObject *
py_empty(PyObject *self, PyObject *args, PyObject *kwds)
{
    return new_filled(args, kwds, 0, NULL);
}

static PyObject *
py_zeros(PyObject *self, PyObject *args, PyObject *kwds)
{
    return new_filled(args, kwds, 1, NULL);
}

static PyObject *
py_ones(PyObject *self, PyObject *args, PyObject *kwds)
{
    return new_filled(args, kwds, 2, NULL);
}

/* full(shape, fill_value, dtype=None, order='C', *, device=None, memory='device') */
static PyObject *
py_full(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"shape", "fill_value", "dtype", "order", "device", "memory", NULL};
    PyObject *shape_obj, *fill, *dtype = Py_None, *order = Py_None, *device = Py_None;
    PyObject *memory = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|OO$OO", kwlist, &shape_obj, &fill, &dtype,
                                     &order, &device, &memory))
        return NULL;
    PyObject *a2 = Py_BuildValue("(OOO)", shape_obj, dtype, order);
    PyObject *k2 = a2 ? Py_BuildValue("{s:O,s:O}", "device", device, "memory", memory) : NULL;
    PyObject *r = k2 ? new_filled(a2, k2, 3, fill) : NULL;
    Py_XDECREF(a2);
    Py_XDECREF(k2);
    return r;
}

static int
scalar_arg(PyObject *obj, ga_kscalar *s, int integer)
{
    memset(s, 0, sizeof(*s));
    if (integer) {
        s->v.i = PyLong_AsLongLong(obj);
        return s->v.i == -1 && PyErr_Occurred() ? -1 : 0;
    }
    Py_complex c = PyComplex_AsCComplex(obj);
    if (c.real == -1.0 && PyErr_Occurred())
        return -1;
    s->v.f[0] = c.real;
    s->v.f[1] = c.imag;
    return 0;
}

/* _sequence(n, dtype, mode, start, delta, stop_or_None): contiguous 1-d
 * array filled by the sequence kernel (see kernels.h for the modes).
 * Integer dtypes in mode 0 take integer start/delta. */
static PyObject *
py_sequence(PyObject *self, PyObject *args)
{
    Py_ssize_t n;
    PyObject *dtype, *start, *delta, *stop;
    int mode;
    ga_kscalar s0, d0, st;
    if (!PyArg_ParseTuple(args, "nOiOOO", &n, &dtype, &mode, &start, &delta, &stop))
        return NULL;
    PyArray_Descr *descr = ga_dtype_converter_or(dtype, NULL, "dtype");
    if (descr == NULL)
        return NULL;
    int integer = mode == 0 && (descr->kind == 'i' || descr->kind == 'u' || descr->kind == 'b');
    memset(&st, 0, sizeof(st));
    if (scalar_arg(start, &s0, integer) < 0 || scalar_arg(delta, &d0, integer) < 0 ||
        (stop != Py_None && scalar_arg(stop, &st, 0) < 0)) {
        Py_DECREF(descr);
        return NULL;
    }
    npy_intp dims[1] = {n < 0 ? 0 : n};
    ga_array *a = ga_array_empty(1, dims, descr, 0, ga_runtime_current_device());
    if (a == NULL)
        return NULL;
    cudaStream_t stream = ga_runtime_device_stream(a->device);
    GA_LAUNCH_TRY(ga_launch_sequence((ga_type)a->type, mode, dims[0], a->data, &s0, &d0,
                                     stop != Py_None, &st, stream), stream);
    return (PyObject *)a;
fail:
    Py_DECREF(a);
    return NULL;
}

static PyMethodDef ctors_functions[] = {
    {"array", (PyCFunction)(void (*)(void))py_array, METH_VARARGS | METH_KEYWORDS,
     "array($module, /, obj, dtype=None, copy=True, order='K', ndmin=0, *, device=None)\n--\n\n"
     "A device array from a NumPy array, nested sequence, scalar, buffer or another device array, "
     "on `device` (None: the current device)."},
    {"empty", (PyCFunction)(void (*)(void))py_empty, METH_VARARGS | METH_KEYWORDS,
     "empty($module, /, shape, dtype=None, order='C', *, device=None, memory='device')\n--\n\n"
     "dtype=None is float64; device=None is the current device.  memory='managed' or 'pinned' "
     "gives host-addressable memory (outside the pool) that also exports the buffer protocol."},
    {"zeros", (PyCFunction)(void (*)(void))py_zeros, METH_VARARGS | METH_KEYWORDS,
     "zeros($module, /, shape, dtype=None, order='C', *, device=None, memory='device')\n--\n\n"
     "dtype=None is float64; device=None is the current device.  memory='managed' or 'pinned' "
     "gives host-addressable memory (outside the pool) that also exports the buffer protocol."},
    {"ones", (PyCFunction)(void (*)(void))py_ones, METH_VARARGS | METH_KEYWORDS,
     "ones($module, /, shape, dtype=None, order='C', *, device=None, memory='device')\n--\n\n"
     "dtype=None is float64; device=None is the current device.  memory='managed' or 'pinned' "
     "gives host-addressable memory (outside the pool) that also exports the buffer protocol."},
    {"full", (PyCFunction)(void (*)(void))py_full, METH_VARARGS | METH_KEYWORDS,
     "full($module, /, shape, fill_value, dtype=None, order='C', *, device=None, "
     "memory='device')\n--\n\n"
     "dtype=None is the fill value's NumPy dtype; device=None is the current device."},
    {"_sequence", py_sequence, METH_VARARGS, "Sequence kernel (arange/linspace)."},
    {NULL, NULL, 0, NULL},
};

int
ga_ctors_init(PyObject *m)
{
    return PyModule_AddFunctions(m, ctors_functions);
}
