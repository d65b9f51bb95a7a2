/*
 * methods.c -- ndarray methods: transfers (get/set), copies and casts,
 * and the shape methods that make views (reshape, transpose, squeeze,
 * diagonal, view ...).  A shape method copies only when NumPy would
 * (reshape of a non-contiguous layout, flatten, copy).
 */
#include "gpuarr.h"

/* ------------------------------------------------------ transfers ------- */

/* get(out=None, stream=None, blocking=True) */
static PyObject *
array_get(ga_array *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"out", "stream", "blocking", NULL};
    PyObject *out = Py_None, *stream_obj = Py_None;
    int blocking = 1;
    cudaStream_t stream = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OOp", kwlist, &out, &stream_obj, &blocking))
        return NULL;
    if (out != Py_None && !PyArray_Check(out)) {
        PyErr_Format(PyExc_TypeError, "out must be a numpy.ndarray, not %s", Py_TYPE(out)->tp_name);
        return NULL;
    }
    if (stream_obj != Py_None) {
        PyObject *ptr = PyObject_GetAttrString(stream_obj, "ptr");
        if (ptr == NULL)
            return NULL;
        stream = (cudaStream_t)PyLong_AsVoidPtr(ptr);
        Py_DECREF(ptr);
        if (PyErr_Occurred())
            return NULL;
        if (stream == NULL)
            stream = (cudaStream_t)0;
    }
    return ga_transfer_to_numpy(self, out == Py_None ? NULL : (PyArrayObject *)out,
                                stream_obj == Py_None ? NULL : stream, blocking);
}

/* set(arr, stream=None): copy a host array of the same shape into self. */
static PyObject *
array_set(ga_array *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"arr", "stream", NULL};
    PyObject *arr, *stream_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O", kwlist, &arr, &stream_obj))
        return NULL;
    if (!PyArray_Check(arr)) {
        PyErr_Format(PyExc_TypeError, "arr must be a numpy.ndarray, not %s", Py_TYPE(arr)->tp_name);
        return NULL;
    }
    PyArrayObject *h = (PyArrayObject *)arr;
    if (PyArray_NDIM(h) != self->ndim ||
        !PyArray_CompareLists(PyArray_DIMS(h), self->shape, self->ndim)) {
        PyErr_SetString(PyExc_ValueError, "arr: shape mismatch with the device array");
        return NULL;
    }
    if (ga_assign_value(self, arr) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------ copies ---------- */

static PyObject *
array_copy(ga_array *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"order", NULL};
    PyObject *order_obj = NULL;
    char order;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O", kwlist, &order_obj) ||
        ga_parse_order(order_obj, 'C', &order) < 0)
        return NULL;
    int fortran = order == 'F' || ((order == 'A' || order == 'K') &&
                                   (self->flags & GA_F_CONTIGUOUS) && !(self->flags & GA_C_CONTIGUOUS));
    return (PyObject *)ga_array_copy_as(self, NULL, fortran);
}

static PyObject *
array_copy_noargs(ga_array *self, PyObject *unused)
{
    return (PyObject *)ga_array_copy_as(self, NULL, 0);
}

/* astype(dtype, order='K', casting='unsafe', subok=True, copy=True) */
static PyObject *
array_astype(ga_array *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"dtype", "order", "casting", "subok", "copy", NULL};
    PyObject *dtype, *order_obj = NULL, *subok = NULL, *copy_obj = Py_True;
    const char *casting = "unsafe";
    char order;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OsOO", kwlist, &dtype, &order_obj, &casting,
                                     &subok, &copy_obj) ||
        ga_parse_order(order_obj, 'K', &order) < 0)
        return NULL;
    NPY_CASTING rule;
    if (strcmp(casting, "no") == 0) rule = NPY_NO_CASTING;
    else if (strcmp(casting, "equiv") == 0) rule = NPY_EQUIV_CASTING;
    else if (strcmp(casting, "safe") == 0) rule = NPY_SAFE_CASTING;
    else if (strcmp(casting, "same_kind") == 0) rule = NPY_SAME_KIND_CASTING;
    else if (strcmp(casting, "unsafe") == 0) rule = NPY_UNSAFE_CASTING;
    else {
        PyErr_Format(PyExc_ValueError, "casting must be one of 'no', 'equiv', 'safe', "
                     "'same_kind', or 'unsafe' (got '%s')", casting);
        return NULL;
    }
    PyArray_Descr *descr = ga_dtype_converter_or(dtype, NULL, "dtype");
    if (descr == NULL)
        return NULL;
    if (!PyArray_CanCastTypeTo(self->descr, descr, rule)) {
        PyErr_Format(PyExc_TypeError, "Cannot cast array data from %R to %R according to the "
                     "rule '%s'", (PyObject *)self->descr, (PyObject *)descr, casting);
        Py_DECREF(descr);
        return NULL;
    }
    int copy = PyObject_IsTrue(copy_obj);
    if (copy < 0) {
        Py_DECREF(descr);
        return NULL;
    }
    return ga_array_as(self, descr, copy ? 1 : -1, order);
}

static PyObject *
array_fill(ga_array *self, PyObject *value)
{
    if (ga_array_check(value)) {
        if (((ga_array *)value)->ndim != 0) {
            PyErr_SetString(PyExc_ValueError, "fill: value must be a scalar or a 0-d array");
            return NULL;
        }
        if (ga_assign_array(self, (ga_array *)value) < 0)
            return NULL;
    } else if (ga_assign_scalar(self, value) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------ reshape --------- */

/* Shape from *args: reshape(2, 3) or reshape((2, 3)). */
static int
shape_from_args(PyObject *args, npy_intp *dims)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n == 1)
        return ga_parse_shape(PyTuple_GET_ITEM(args, 0), dims, "shape");
    return ga_parse_shape(args, dims, "shape");
}

static PyObject *
array_reshape(ga_array *self, PyObject *args, PyObject *kwds)
{
    npy_intp dims[NPY_MAXDIMS];
    char order = 'C';
    if (kwds != NULL) {
        PyObject *o = PyDict_GetItemString(kwds, "order");
        Py_ssize_t nk = PyDict_Size(kwds);
        PyObject *shape = PyDict_GetItemString(kwds, "shape");
        if (nk - (o != NULL) - (shape != NULL) != 0) {
            PyErr_SetString(PyExc_TypeError, "reshape() got an unexpected keyword argument");
            return NULL;
        }
        if (ga_parse_order(o, 'C', &order) < 0)
            return NULL;
        if (shape != NULL) {
            int nd = ga_parse_shape(shape, dims, "shape");
            return nd < 0 ? NULL : ga_array_reshape(self, nd, dims, order);
        }
    }
    if (PyTuple_GET_SIZE(args) == 0) {
        PyErr_SetString(PyExc_TypeError, "reshape() needs a shape");
        return NULL;
    }
    int nd = shape_from_args(args, dims);
    if (nd < 0)
        return NULL;
    return ga_array_reshape(self, nd, dims, order);
}

static PyObject *
array_ravel(ga_array *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"order", NULL};
    PyObject *order_obj = NULL;
    char order;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O", kwlist, &order_obj) ||
        ga_parse_order(order_obj, 'C', &order) < 0)
        return NULL;
    return ga_array_ravel(self, order, 0);
}

static PyObject *
array_flatten(ga_array *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"order", NULL};
    PyObject *order_obj = NULL;
    char order;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O", kwlist, &order_obj) ||
        ga_parse_order(order_obj, 'C', &order) < 0)
        return NULL;
    return ga_array_ravel(self, order, 1);
}

/* ------------------------------------------------------ axes ------------ */

static PyObject *
array_transpose(ga_array *self, PyObject *args)
{
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    int perm[NPY_MAXDIMS], seen[NPY_MAXDIMS] = {0};
    PyObject *axes = args;
    if (PyTuple_GET_SIZE(args) == 1 && (PyTuple_GET_ITEM(args, 0) == Py_None ||
                                        PySequence_Check(PyTuple_GET_ITEM(args, 0))))
        axes = PyTuple_GET_ITEM(args, 0);
    if (axes == Py_None || (PyTuple_Check(axes) && PyTuple_GET_SIZE(axes) == 0)) {
        for (int i = 0; i < self->ndim; ++i)
            perm[i] = self->ndim - 1 - i;
    } else {
        PyObject *fast = PySequence_Fast(axes, "axes must be a sequence of ints");
        if (fast == NULL)
            return NULL;
        if (PySequence_Fast_GET_SIZE(fast) != self->ndim) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_ValueError, "axes don't match array");
            return NULL;
        }
        for (int i = 0; i < self->ndim; ++i) {
            if (ga_normalize_axis(PySequence_Fast_GET_ITEM(fast, i), self->ndim, &perm[i]) < 0) {
                Py_DECREF(fast);
                return NULL;
            }
            if (seen[perm[i]]++) {
                Py_DECREF(fast);
                PyErr_SetString(PyExc_ValueError, "repeated axis in transpose");
                return NULL;
            }
        }
        Py_DECREF(fast);
    }
    for (int i = 0; i < self->ndim; ++i) {
        shape[i] = self->shape[perm[i]];
        strides[i] = self->strides[perm[i]];
    }
    return ga_array_view_of(self, self->ndim, shape, strides, 1);
}

static PyObject *
array_swapaxes(ga_array *self, PyObject *args)
{
    PyObject *a1, *a2;
    int i, j;
    if (!PyArg_ParseTuple(args, "OO", &a1, &a2) ||
        ga_normalize_axis(a1, self->ndim, &i) < 0 || ga_normalize_axis(a2, self->ndim, &j) < 0)
        return NULL;
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    memcpy(shape, self->shape, self->ndim * sizeof(npy_intp));
    memcpy(strides, self->strides, self->ndim * sizeof(npy_intp));
    shape[i] = self->shape[j];
    shape[j] = self->shape[i];
    strides[i] = self->strides[j];
    strides[j] = self->strides[i];
    return ga_array_view_of(self, self->ndim, shape, strides, 1);
}

static PyObject *
array_squeeze(ga_array *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"axis", NULL};
    PyObject *axis = Py_None;
    int drop[NPY_MAXDIMS] = {0};
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O", kwlist, &axis))
        return NULL;
    if (axis == Py_None) {
        for (int i = 0; i < self->ndim; ++i)
            drop[i] = self->shape[i] == 1;
    } else {
        PyObject *fast = PyTuple_Check(axis) || PyList_Check(axis)
                             ? PySequence_Fast(axis, "") : PyTuple_Pack(1, axis);
        if (fast == NULL)
            return NULL;
        for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(fast); ++k) {
            int ax;
            if (ga_normalize_axis(PySequence_Fast_GET_ITEM(fast, k), self->ndim, &ax) < 0) {
                Py_DECREF(fast);
                return NULL;
            }
            if (self->shape[ax] != 1 || drop[ax]) {
                Py_DECREF(fast);
                PyErr_SetString(PyExc_ValueError, drop[ax] ? "repeated axis"
                                : "cannot select an axis to squeeze out which has size not "
                                  "equal to one");
                return NULL;
            }
            drop[ax] = 1;
        }
        Py_DECREF(fast);
    }
    int nd = 0;
    for (int i = 0; i < self->ndim; ++i) {
        if (!drop[i]) {
            shape[nd] = self->shape[i];
            strides[nd++] = self->strides[i];
        }
    }
    return ga_array_view_of(self, nd, shape, strides, 1);
}

/* diagonal(offset=0, axis1=0, axis2=1): a read-only view, as NumPy's. */
static PyObject *
array_diagonal(ga_array *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"offset", "axis1", "axis2", NULL};
    Py_ssize_t offset = 0;
    PyObject *ax1 = NULL, *ax2 = NULL;
    int a1 = 0, a2 = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|nOO", kwlist, &offset, &ax1, &ax2))
        return NULL;
    if (self->ndim < 2) {
        PyErr_SetString(PyExc_ValueError, "diag requires an array of at least two dimensions");
        return NULL;
    }
    if ((ax1 && ga_normalize_axis(ax1, self->ndim, &a1) < 0) ||
        (ax2 && ga_normalize_axis(ax2, self->ndim, &a2) < 0))
        return NULL;
    if (a1 == a2) {
        PyErr_SetString(PyExc_ValueError, "axis1 and axis2 cannot be the same");
        return NULL;
    }
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    npy_intp n1 = self->shape[a1], n2 = self->shape[a2];
    char *data = self->data;
    npy_intp len;
    if (offset >= 0) {
        len = n2 - offset < n1 ? n2 - offset : n1;
        if (len > 0)
            data += offset * self->strides[a2];
    } else {
        len = n1 + offset < n2 ? n1 + offset : n2;
        if (len > 0)
            data -= offset * self->strides[a1];
    }
    if (len < 0)
        len = 0;
    int nd = 0;
    for (int i = 0; i < self->ndim; ++i) {
        if (i != a1 && i != a2) {
            shape[nd] = self->shape[i];
            strides[nd++] = self->strides[i];
        }
    }
    shape[nd] = len;
    strides[nd++] = self->strides[a1] + self->strides[a2];
    Py_INCREF(self->descr);
    return (PyObject *)ga_array_view((PyObject *)self, data, nd, shape, strides, self->descr,
                                     self->device, 0);
}

/* view(dtype=None): reinterpret the bytes (the last axis must be contiguous
 * when the item size changes). */
static PyObject *
array_view(ga_array *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"dtype", "type", NULL};
    PyObject *dtype = Py_None, *type = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO", kwlist, &dtype, &type))
        return NULL;
    if (dtype == (PyObject *)&GA_ArrayType)
        dtype = Py_None;
    PyArray_Descr *descr = ga_dtype_converter_or(dtype, self->descr, "dtype");
    if (descr == NULL)
        return NULL;
    npy_intp old = ga_array_itemsize(self), new_ = PyDataType_ELSIZE(descr);
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    int nd = self->ndim;
    memcpy(shape, self->shape, nd * sizeof(npy_intp));
    memcpy(strides, self->strides, nd * sizeof(npy_intp));
    if (old != new_) {
        if (nd == 0) {
            Py_DECREF(descr);
            PyErr_SetString(PyExc_ValueError, "Changing the dtype of a 0d array is only "
                            "supported if the itemsize is unchanged");
            return NULL;
        }
        npy_intp bytes = shape[nd - 1] * old;
        if ((shape[nd - 1] != 1 && strides[nd - 1] != old) || bytes % new_ != 0) {
            Py_DECREF(descr);
            PyErr_SetString(PyExc_ValueError, "To change to a dtype of a different size, the last "
                            "axis must be contiguous and its size in bytes a multiple of the new "
                            "itemsize");
            return NULL;
        }
        shape[nd - 1] = bytes / new_;
        strides[nd - 1] = new_;
    }
    return (PyObject *)ga_array_view((PyObject *)self, self->data, nd, shape, strides, descr,
                                     self->device, self->flags & GA_WRITEABLE);
}

/* _broadcast_to(shape): a read-only view with zero strides where stretched. */
static PyObject *
array_broadcast_to(ga_array *self, PyObject *shape_obj)
{
    npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    int nd = ga_parse_shape(shape_obj, dims, "shape");
    if (nd < 0)
        return NULL;
    for (int i = 0; i < nd; ++i)
        if (dims[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "all elements of broadcast shape must be non-negative");
            return NULL;
        }
    if (ga_plan_broadcast_to(self->ndim, self->shape, self->strides, nd, dims, strides) < 0) {
        PyObject *from = ga_shape_tuple(self->ndim, self->shape);
        PyObject *to = ga_shape_tuple(nd, dims);
        PyErr_Clear();
        if (from && to)
            PyErr_Format(PyExc_ValueError, "operands could not be broadcast together with "
                         "remapped shapes [original->remapped]: %R and requested shape %R",
                         from, to);
        Py_XDECREF(from);
        Py_XDECREF(to);
        return NULL;
    }
    return ga_array_view_of(self, nd, dims, strides, 0);
}

/* ------------------------------------------------------ host values ----- */

/* item(*index): no index for size-1 arrays, one flat C-order index, or one
 * index per dimension, as NumPy's. */
static PyObject *
array_item(ga_array *self, PyObject *args)
{
    PyObject *v = (PyObject *)self;
    Py_INCREF(v);
    if (PyTuple_GET_SIZE(args) == 1 && self->ndim != 1 && PyIndex_Check(PyTuple_GET_ITEM(args, 0))) {
        npy_intp n = ga_array_size(self);
        npy_intp i = PyNumber_AsSsize_t(PyTuple_GET_ITEM(args, 0), PyExc_IndexError);
        Py_DECREF(v);
        if (i == -1 && PyErr_Occurred())
            return NULL;
        if (i < -n || i >= n) {
            PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for size %zd", i, n);
            return NULL;
        }
        if (i < 0)
            i += n;
        char *data = self->data;
        for (int k = self->ndim - 1; k >= 0; --k) {
            data += (i % self->shape[k]) * self->strides[k];
            i /= self->shape[k];
        }
        Py_INCREF(self->descr);
        v = (PyObject *)ga_array_view((PyObject *)self, data, 0, self->shape, self->strides,
                                      self->descr, self->device, 0);
        if (v == NULL)
            return NULL;
    } else if (PyTuple_GET_SIZE(args) != 0) {
        Py_DECREF(v);
        v = PyObject_GetItem((PyObject *)self, PyTuple_GET_SIZE(args) == 1
                             ? PyTuple_GET_ITEM(args, 0) : args);
        if (v == NULL)
            return NULL;
    }
    PyObject *s = ga_array_scalar((ga_array *)v, NULL);
    Py_DECREF(v);
    if (s == NULL)
        return NULL;
    PyObject *r = PyObject_CallMethod(s, "item", NULL);
    Py_DECREF(s);
    return r;
}

/* repr/str: the values as NumPy prints them (one synchronising copy to the
 * host); the device is named when it is not device 0. */
static PyObject *
array_repr_impl(ga_array *self, int repr)
{
    PyObject *host = ga_transfer_to_numpy(self, NULL, NULL, 1);
    if (host == NULL)
        return NULL;
    PyObject *text = repr ? PyObject_Repr(host) : PyObject_Str(host);
    Py_DECREF(host);
    if (text == NULL || !repr || self->device == 0)
        return text;
    /* "array([...], dtype=...)" -> "array([...], dtype=..., device=N)" */
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    PyObject *head = PyUnicode_Substring(text, 0, len - 1);
    Py_DECREF(text);
    if (head == NULL)
        return NULL;
    PyObject *out = PyUnicode_FromFormat("%U, device=%d)", head, self->device);
    Py_DECREF(head);
    return out;
}

PyObject *ga_array_repr(ga_array *self) { return array_repr_impl(self, 1); }
PyObject *ga_array_str(ga_array *self) { return array_repr_impl(self, 0); }

static PyObject *
array_tolist(ga_array *self, PyObject *unused)
{
    PyObject *host = ga_transfer_to_numpy(self, NULL, NULL, 1);
    if (host == NULL)
        return NULL;
    PyObject *r = PyObject_CallMethod(host, "tolist", NULL);
    Py_DECREF(host);
    return r;
}

static PyObject *
array_complex(ga_array *self, PyObject *unused)
{
    PyObject *s = ga_array_scalar(self, "complex()");
    if (s == NULL)
        return NULL;
    PyObject *r = PyObject_CallFunctionObjArgs((PyObject *)&PyComplex_Type, s, NULL);
    Py_DECREF(s);
    return r;
}

/* format(a, spec): a 0-d array formats as its element (one copy to the host),
 * as NumPy's does; other arrays take only the empty spec, which is str(a). */
static PyObject *
array_format(ga_array *self, PyObject *spec)
{
    if (!PyUnicode_Check(spec)) {
        PyErr_Format(PyExc_TypeError, "__format__() argument must be str, not %.100s",
                     Py_TYPE(spec)->tp_name);
        return NULL;
    }
    if (self->ndim == 0) {
        PyObject *s = ga_array_scalar(self, NULL);
        if (s == NULL)
            return NULL;
        PyObject *r = PyObject_Format(s, spec);
        Py_DECREF(s);
        return r;
    }
    if (PyUnicode_GET_LENGTH(spec) == 0)
        return PyObject_Str((PyObject *)self);
    PyErr_Format(PyExc_TypeError, "unsupported format string passed to gpuarr.ndarray.__format__ "
                 "(only 0-d arrays take a format spec, as in NumPy; got shape with %d dimension%s)",
                 self->ndim, self->ndim == 1 ? "" : "s");
    return NULL;
}

static PyObject *
array_array(ga_array *self, PyObject *args, PyObject *kwds)
{
    PyErr_SetString(PyExc_TypeError, "Implicit conversion to a NumPy array is not allowed. "
                    "Please use `.get()` or `gpuarr.asnumpy()` to copy the array to the host.");
    return NULL;
}

static PyObject *
array_deepcopy(ga_array *self, PyObject *memo)
{
    return (PyObject *)ga_array_copy_as(self, NULL, 0);
}

/* Methods written in Python: each forwards to the helper registered as
 * "ndarray.<name>" (gpuarr/_array_api.py, _linalg.py, _methods.py, _sorting.py). */
#define FORWARD(fn, name)                                                   \
    static PyObject *fn(PyObject *self, PyObject *args, PyObject *kwds)    \
    {                                                                       \
        return ga_forward_method("ndarray." name, self, args, kwds);       \
    }
FORWARD(array_array_namespace, "__array_namespace__")
FORWARD(array_to_device, "to_device")
FORWARD(array_dot, "dot")
FORWARD(array_trace, "trace")
FORWARD(array_conj, "conj")
FORWARD(array_conjugate, "conjugate")
FORWARD(array_clip, "clip")
FORWARD(array_round, "round")
FORWARD(array_repeat, "repeat")
FORWARD(array_tobytes, "tobytes")
FORWARD(array_tofile, "tofile")
FORWARD(array_take, "take")
FORWARD(array_put, "put")
FORWARD(array_partition, "partition")
FORWARD(array_argpartition, "argpartition")
FORWARD(array_searchsorted, "searchsorted")
#undef FORWARD

PyMethodDef ga_array_methods[] = {
    {"get", (PyCFunction)(void (*)(void))array_get, METH_VARARGS | METH_KEYWORDS,
     "get($self, /, out=None, stream=None, blocking=True)\n--\n\n"
     "Copy to the host: a numpy.ndarray."},
    {"set", (PyCFunction)(void (*)(void))array_set, METH_VARARGS | METH_KEYWORDS,
     "set($self, /, arr, stream=None)\n--\n\n"
     "Copy a host array of the same shape into this array."},
    {"copy", (PyCFunction)(void (*)(void))array_copy, METH_VARARGS | METH_KEYWORDS,
     "copy($self, /, order='C')\n--\n\n"
     "A new array holding a copy of the data."},
    {"__copy__", (PyCFunction)array_copy_noargs, METH_NOARGS,
     "__copy__($self, /)\n--\n\n"
     "Same as copy()."},
    {"__deepcopy__", (PyCFunction)array_deepcopy, METH_O,
     "__deepcopy__($self, memo, /)\n--\n\n"
     "Same as copy()."},
    {"astype", (PyCFunction)(void (*)(void))array_astype, METH_VARARGS | METH_KEYWORDS,
     "astype($self, /, dtype, order='K', casting='unsafe', subok=True, copy=True)\n--\n\n"
     "The array cast to dtype, on its own device (copy=False: no copy when nothing changes)."},
    {"fill", (PyCFunction)array_fill, METH_O,
     "fill($self, value, /)\n--\n\n"
     "Set every element."},
    {"reshape", (PyCFunction)(void (*)(void))array_reshape, METH_VARARGS | METH_KEYWORDS,
     "reshape($self, /, *shape, order='C')\n--\n\n"
     "A view when the layout allows, else a copy."},
    {"ravel", (PyCFunction)(void (*)(void))array_ravel, METH_VARARGS | METH_KEYWORDS,
     "ravel($self, /, order='C')\n--\n\n"
     "A 1-d view when the layout allows, else a copy."},
    {"flatten", (PyCFunction)(void (*)(void))array_flatten, METH_VARARGS | METH_KEYWORDS,
     "flatten($self, /, order='C')\n--\n\n"
     "Always a copy."},
    {"transpose", (PyCFunction)array_transpose, METH_VARARGS,
     "transpose($self, /, *axes)\n--\n\n"
     "A view with the axes reversed, or permuted as axes says."},
    {"swapaxes", (PyCFunction)array_swapaxes, METH_VARARGS,
     "swapaxes($self, axis1, axis2, /)\n--\n\n"
     "A view with two axes interchanged."},
    {"squeeze", (PyCFunction)(void (*)(void))array_squeeze, METH_VARARGS | METH_KEYWORDS,
     "squeeze($self, /, axis=None)\n--\n\n"
     "A view without the given length-1 axes (all of them for None)."},
    {"diagonal", (PyCFunction)(void (*)(void))array_diagonal, METH_VARARGS | METH_KEYWORDS,
     "diagonal($self, /, offset=0, axis1=0, axis2=1)\n--\n\n"
     "A read-only view."},
    {"view", (PyCFunction)(void (*)(void))array_view, METH_VARARGS | METH_KEYWORDS,
     "view($self, /, dtype=None, type=None)\n--\n\n"
     "A view of the same memory, as dtype (None: the same dtype)."},
    {"_broadcast_to", (PyCFunction)array_broadcast_to, METH_O,
     "_broadcast_to($self, shape, /)\n--\n\n"
     "A read-only broadcast view (behind gpuarr.broadcast_to)."},
    {"item", (PyCFunction)array_item, METH_VARARGS,
     "item($self, /, *args)\n--\n\n"
     "A Python scalar."},
    {"tolist", (PyCFunction)array_tolist, METH_NOARGS,
     "tolist($self, /)\n--\n\n"
     "Nested Python lists (copies to host)."},
    {"__complex__", (PyCFunction)array_complex, METH_NOARGS,
     "__complex__($self, /)\n--\n\n"
     "complex() of a one-element array (reads it from the device)."},
    {"__format__", (PyCFunction)array_format, METH_O,
     "__format__($self, format_spec, /)\n--\n\n"
     "0-d arrays format as their element."},
    {"__array__", (PyCFunction)(void (*)(void))array_array, METH_VARARGS | METH_KEYWORDS,
     "__array__($self, /, *args, **kwargs)\n--\n\n"
     "Refused: use .get() or gpuarr.asnumpy()."},
    {"__array_ufunc__", (PyCFunction)(void (*)(void))ga_array_array_ufunc,
     METH_VARARGS | METH_KEYWORDS,
     "__array_ufunc__($self, ufunc, method, /, *inputs, **kwargs)\n--\n\n"
     "NumPy ufuncs on device arrays run on the device."},
    {"__dlpack__", (PyCFunction)(void (*)(void))ga_array_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "A DLPack capsule over the array's memory (no copy)."},
    {"__dlpack_device__", (PyCFunction)ga_array_dlpack_device, METH_NOARGS,
     "__dlpack_device__($self, /)\n--\n\n"
     "(kDLCUDA, device id)."},
    {"__array_namespace__", (PyCFunction)(void (*)(void))array_array_namespace,
     METH_VARARGS | METH_KEYWORDS,
     "__array_namespace__($self, /, *, api_version=None)\n--\n\n"
     "The array API namespace: the gpuarr module (standard 2024.12)."},
    {"to_device", (PyCFunction)(void (*)(void))array_to_device, METH_VARARGS | METH_KEYWORDS,
     "to_device($self, device, /, *, stream=None)\n--\n\n"
     "The array on `device` (a gpuarr.cuda.Device): itself if it is there, else a copy."},
    {"__array_function__", (PyCFunction)(void (*)(void))ga_array_array_function,
     METH_VARARGS | METH_KEYWORDS,
     "__array_function__($self, func, types, args, kwargs, /)\n--\n\n"
     "NumPy functions on device arrays run on the device."},
    {"sum", (PyCFunction)(void (*)(void))ga_array_sum, METH_FASTCALL | METH_KEYWORDS,
     "sum($self, /, axis=None, dtype=None, out=None, keepdims=False, initial=None, "
     "where=True)\n--\n\n"
     "As gpuarr.sum(self, ...)."},
    {"prod", (PyCFunction)(void (*)(void))ga_array_prod, METH_FASTCALL | METH_KEYWORDS,
     "prod($self, /, axis=None, dtype=None, out=None, keepdims=False, initial=None, "
     "where=True)\n--\n\n"
     "As gpuarr.prod(self, ...)."},
    {"mean", (PyCFunction)(void (*)(void))ga_array_mean, METH_FASTCALL | METH_KEYWORDS,
     "mean($self, /, axis=None, dtype=None, out=None, keepdims=False, *, where=True)\n--\n\n"
     "As gpuarr.mean(self, ...)."},
    {"var", (PyCFunction)(void (*)(void))ga_array_var, METH_FASTCALL | METH_KEYWORDS,
     "var($self, /, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, "
     "mean=None, correction=None)\n--\n\n"
     "As gpuarr.var(self, ...)."},
    {"std", (PyCFunction)(void (*)(void))ga_array_std, METH_FASTCALL | METH_KEYWORDS,
     "std($self, /, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, "
     "mean=None, correction=None)\n--\n\n"
     "As gpuarr.std(self, ...)."},
    {"min", (PyCFunction)(void (*)(void))ga_array_min, METH_FASTCALL | METH_KEYWORDS,
     "min($self, /, axis=None, out=None, keepdims=False, initial=None, where=True)\n--\n\n"
     "As gpuarr.min(self, ...)."},
    {"max", (PyCFunction)(void (*)(void))ga_array_max, METH_FASTCALL | METH_KEYWORDS,
     "max($self, /, axis=None, out=None, keepdims=False, initial=None, where=True)\n--\n\n"
     "As gpuarr.max(self, ...)."},
    {"ptp", (PyCFunction)(void (*)(void))ga_array_ptp, METH_FASTCALL | METH_KEYWORDS,
     "ptp($self, /, axis=None, out=None, keepdims=False)\n--\n\n"
     "As gpuarr.ptp(self, ...)."},
    {"argmin", (PyCFunction)(void (*)(void))ga_array_argmin, METH_FASTCALL | METH_KEYWORDS,
     "argmin($self, /, axis=None, out=None, *, keepdims=False)\n--\n\n"
     "As gpuarr.argmin(self, ...)."},
    {"argmax", (PyCFunction)(void (*)(void))ga_array_argmax, METH_FASTCALL | METH_KEYWORDS,
     "argmax($self, /, axis=None, out=None, *, keepdims=False)\n--\n\n"
     "As gpuarr.argmax(self, ...)."},
    {"all", (PyCFunction)(void (*)(void))ga_array_all, METH_FASTCALL | METH_KEYWORDS,
     "all($self, /, axis=None, out=None, keepdims=False, *, where=True)\n--\n\n"
     "As gpuarr.all(self, ...)."},
    {"any", (PyCFunction)(void (*)(void))ga_array_any, METH_FASTCALL | METH_KEYWORDS,
     "any($self, /, axis=None, out=None, keepdims=False, *, where=True)\n--\n\n"
     "As gpuarr.any(self, ...)."},
    {"cumsum", (PyCFunction)(void (*)(void))ga_array_cumsum, METH_VARARGS | METH_KEYWORDS,
     "cumsum($self, /, axis=None, dtype=None, out=None)\n--\n\n"
     "As gpuarr.cumsum(self, ...)."},
    {"cumprod", (PyCFunction)(void (*)(void))ga_array_cumprod, METH_VARARGS | METH_KEYWORDS,
     "cumprod($self, /, axis=None, dtype=None, out=None)\n--\n\n"
     "As gpuarr.cumprod(self, ...)."},
    {"sort", (PyCFunction)(void (*)(void))ga_array_sort, METH_VARARGS | METH_KEYWORDS,
     "sort($self, /, axis=-1, kind=None, order=None, *, stable=None)\n--\n\n"
     "In place, stable."},
    {"argsort", (PyCFunction)(void (*)(void))ga_array_argsort, METH_VARARGS | METH_KEYWORDS,
     "argsort($self, /, axis=-1, kind=None, order=None, *, stable=None)\n--\n\n"
     "Stable."},
    {"partition", (PyCFunction)(void (*)(void))array_partition, METH_VARARGS | METH_KEYWORDS,
     "partition($self, /, kth, axis=-1, kind='introselect', order=None)\n--\n\n"
     "In place (sorts)."},
    {"argpartition", (PyCFunction)(void (*)(void))array_argpartition,
     METH_VARARGS | METH_KEYWORDS,
     "argpartition($self, /, kth, axis=-1, kind='introselect', order=None)\n--\n\n"
     "As gpuarr.argpartition(self, ...)."},
    {"searchsorted", (PyCFunction)(void (*)(void))array_searchsorted,
     METH_VARARGS | METH_KEYWORDS,
     "searchsorted($self, /, v, side='left', sorter=None)\n--\n\n"
     "As gpuarr.searchsorted(self, ...)."},
    {"nonzero", (PyCFunction)ga_array_nonzero, METH_NOARGS,
     "nonzero($self, /)\n--\n\n"
     "A tuple of int64 index arrays (synchronises once)."},
    {"compress", (PyCFunction)(void (*)(void))ga_array_compress, METH_VARARGS | METH_KEYWORDS,
     "compress($self, /, condition, axis=None, out=None)\n--\n\n"
     "Synchronises once."},
    {"take", (PyCFunction)(void (*)(void))array_take, METH_VARARGS | METH_KEYWORDS,
     "take($self, /, indices, axis=None, out=None, mode='raise')\n--\n\n"
     "As gpuarr.take(self, ...)."},
    {"put", (PyCFunction)(void (*)(void))array_put, METH_VARARGS | METH_KEYWORDS,
     "put($self, /, indices, values, mode='raise')\n--\n\n"
     "As gpuarr.put(self, ...)."},
    {"dot", (PyCFunction)(void (*)(void))array_dot, METH_VARARGS | METH_KEYWORDS,
     "dot($self, /, b, out=None)\n--\n\n"
     "As gpuarr.dot(self, b, out)."},
    {"trace", (PyCFunction)(void (*)(void))array_trace, METH_VARARGS | METH_KEYWORDS,
     "trace($self, /, offset=0, axis1=0, axis2=1, dtype=None, out=None)\n--\n\n"
     "As gpuarr.trace(self, ...)."},
    {"conj", (PyCFunction)(void (*)(void))array_conj, METH_VARARGS | METH_KEYWORDS,
     "conj($self, /)\n--\n\n"
     "The complex conjugate, elementwise (a copy for real arrays)."},
    {"conjugate", (PyCFunction)(void (*)(void))array_conjugate, METH_VARARGS | METH_KEYWORDS,
     "conjugate($self, /)\n--\n\n"
     "The complex conjugate, elementwise (a copy for real arrays)."},
    {"clip", (PyCFunction)(void (*)(void))array_clip, METH_VARARGS | METH_KEYWORDS,
     "clip($self, /, min=None, max=None, out=None, **kwargs)\n--\n\n"
     "As gpuarr.clip(self, ...)."},
    {"round", (PyCFunction)(void (*)(void))array_round, METH_VARARGS | METH_KEYWORDS,
     "round($self, /, decimals=0, out=None)\n--\n\n"
     "As gpuarr.round(self, ...)."},
    {"repeat", (PyCFunction)(void (*)(void))array_repeat, METH_VARARGS | METH_KEYWORDS,
     "repeat($self, /, repeats, axis=None)\n--\n\n"
     "As gpuarr.repeat(self, ...)."},
    {"tobytes", (PyCFunction)(void (*)(void))array_tobytes, METH_VARARGS | METH_KEYWORDS,
     "tobytes($self, /, order='C')\n--\n\n"
     "The bytes of the host copy (synchronises)."},
    {"tofile", (PyCFunction)(void (*)(void))array_tofile, METH_VARARGS | METH_KEYWORDS,
     "tofile($self, /, fid, sep='', format='%s')\n--\n\n"
     "Write the host copy to a file (synchronises)."},
    {NULL, NULL, 0, NULL},
};

int
ga_methods_init(PyObject *m)
{
    return 0;
}
