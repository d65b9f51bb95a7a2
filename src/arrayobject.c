/*
 * arrayobject.c -- the gpuarr.ndarray object: its struct, construction,
 * destruction and type object.  Attributes live in getset.c, methods in
 * methods.c, indexing in mapping.c, operators in number.c.
 *
 * Ownership
 * ---------
 * An array either owns its memory (GA_OWNDATA) or is a view of memory that
 * something else owns.
 *
 * - An owning array holds one block from its device's pool: `alloc`,
 *   `alloc_size` and the stream it was allocated on.  When the last
 *   reference goes, the block returns to the pool at once (on that stream,
 *   so later work on the stream is ordered after earlier uses).
 * - A view holds a strong reference in `base` to the owner of its memory:
 *   the owning ndarray (never another view: chains are flattened when the
 *   view is made) or a foreign object (a MemoryPointer, a CuPy array, a
 *   DLPack capsule's owner...) that keeps the memory alive.
 * - `data` points at element [0, ..., 0]; with negative strides other
 *   elements lie below it.  Only the owner ever returns memory to the pool.
 * - `descr` is a strong reference to a NumPy dtype in native byte order.
 */
#include "gpuarr.h"

/* Registry of the Python-level helpers the C code calls by name (the Flags
 * class, MemoryPointer, Device, the methods written in Python, ...).  Each
 * Python module registers its own helpers, one _core._register_helper line
 * beside their definitions, when gpuarr is imported: the line shows at the
 * definition that C calls the function, which a table in one place would
 * not. */
static PyObject *helpers = NULL;

PyObject *
ga_helper(const char *name)
{
    PyObject *h = helpers ? PyDict_GetItemString(helpers, name) : NULL;
    if (h == NULL)
        PyErr_Format(PyExc_RuntimeError, "gpuarr helper %s is not registered", name);
    return h;
}

PyObject *
ga_forward_method(const char *helper, PyObject *self, PyObject *args, PyObject *kwds)
{
    PyObject *f = ga_helper(helper);
    if (f == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *full = PyTuple_New(n + 1);
    if (full == NULL)
        return NULL;
    Py_INCREF(self);
    PyTuple_SET_ITEM(full, 0, self);
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *x = PyTuple_GET_ITEM(args, i);
        Py_INCREF(x);
        PyTuple_SET_ITEM(full, i + 1, x);
    }
    PyObject *r = PyObject_Call(f, full, kwds);
    Py_DECREF(full);
    return r;
}

static int
array_alloc_dims(ga_array *a, int ndim)
{
    a->ndim = ndim;
    if (ndim <= GA_INLINE_DIMS) {
        a->shape = a->dims_inline;
        a->strides = a->dims_inline + GA_INLINE_DIMS;
        return 0;
    }
    a->shape = PyMem_Malloc(2 * (size_t)ndim * sizeof(npy_intp));
    if (a->shape == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    a->strides = a->shape + ndim;
    return 0;
}

void
ga_array_update_flags(ga_array *a)
{
    npy_intp item = ga_array_itemsize(a);
    int c = 1, f = 1;
    npy_intp expect = item;
    for (int i = a->ndim - 1; i >= 0; --i) {
        if (a->shape[i] == 0) {
            c = f = 1;
            goto done;
        }
        if (a->shape[i] != 1) {
            if (a->strides[i] != expect)
                c = 0;
            expect *= a->shape[i];
        }
    }
    expect = item;
    for (int i = 0; i < a->ndim; ++i) {
        if (a->shape[i] != 1) {
            if (a->strides[i] != expect)
                f = 0;
            expect *= a->shape[i];
        }
    }
done:
    a->flags &= ~(GA_C_CONTIGUOUS | GA_F_CONTIGUOUS);
    if (c)
        a->flags |= GA_C_CONTIGUOUS;
    if (f)
        a->flags |= GA_F_CONTIGUOUS;
}

void
ga_array_extent(const ga_array *a, char **lo, char **hi)
{
    char *l = a->data, *h = a->data;
    for (int i = 0; i < a->ndim; ++i) {
        if (a->shape[i] == 0) {
            *lo = *hi = a->data;
            return;
        }
        npy_intp span = (a->shape[i] - 1) * a->strides[i];
        if (span < 0)
            l += span;
        else
            h += span;
    }
    *lo = l;
    *hi = h + ga_array_itemsize(a);
}

int
ga_array_overlaps(const ga_array *a, const ga_array *b)
{
    char *alo, *ahi, *blo, *bhi;
    ga_array_extent(a, &alo, &ahi);
    ga_array_extent(b, &blo, &bhi);
    return alo < ahi && blo < bhi && alo < bhi && blo < ahi;
}

static ga_array *
array_new_raw(int ndim, PyArray_Descr *descr, int device)
{
    ga_array *a = (ga_array *)GA_ArrayType.tp_alloc(&GA_ArrayType, 0);
    if (a == NULL) {
        Py_DECREF(descr);
        return NULL;
    }
    a->descr = descr;
    a->device = device;
    a->type = ga_dtype_code(descr, NULL);
    if (a->type < 0 || array_alloc_dims(a, ndim) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* Bytes needed for `ndim`/`shape` of `itemsize`, or -1 with ValueError. */
static npy_intp
shape_nbytes(int ndim, const npy_intp *shape, npy_intp itemsize)
{
    npy_intp n = itemsize;
    int zero = 0;
    if (ndim > NPY_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "maximum supported dimension for an ndarray is %d, "
                     "found %d", NPY_MAXDIMS, ndim);
        return -1;
    }
    for (int i = 0; i < ndim; ++i) {
        if (shape[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "negative dimensions are not allowed");
            return -1;
        }
        if (shape[i] == 0)
            zero = 1;
        else if (!zero && n > NPY_MAX_INTP / shape[i]) {
            PyErr_SetString(PyExc_ValueError, "array is too big; `arr.size * arr.dtype.itemsize` "
                            "is larger than the maximum possible size.");
            return -1;
        }
        else
            n *= shape[i];
    }
    return zero ? 0 : n;
}

ga_array *
ga_array_empty(int ndim, const npy_intp *shape, PyArray_Descr *descr, int fortran, int device)
{
    return ga_array_empty_in(ndim, shape, descr, fortran, device, GA_MEM_DEVICE);
}

/* Managed or mapped-pinned memory, outside the pool; 0 / -1. */
static int
alloc_host_addressable(ga_array *a, size_t nbytes, int memory)
{
    cudaError_t err;
    void *p = NULL;
    if (nbytes == 0)
        return 0;
    Py_BEGIN_ALLOW_THREADS
    if (memory == GA_MEM_MANAGED)
        err = cudaMallocManaged(&p, nbytes, cudaMemAttachGlobal);
    else
        err = cudaHostAlloc(&p, nbytes, cudaHostAllocMapped | cudaHostAllocPortable);
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess) {
        ga_err_cuda(err, memory == GA_MEM_MANAGED ? "cudaMallocManaged" : "cudaHostAlloc");
        return -1;
    }
    a->alloc = p;
    if (memory == GA_MEM_PINNED) {
        void *dev = NULL;
        err = cudaHostGetDevicePointer(&dev, p, 0);
        if (err != cudaSuccess) {
            cudaFreeHost(p);
            a->alloc = NULL;
            ga_err_cuda(err, "cudaHostGetDevicePointer");
            return -1;
        }
        a->data = dev;
    }
    return 0;
}

ga_array *
ga_array_empty_in(int ndim, const npy_intp *shape, PyArray_Descr *descr, int fortran, int device,
                  int memory)
{
    npy_intp item = PyDataType_ELSIZE(descr);
    npy_intp nbytes = shape_nbytes(ndim, shape, item);
    int failed = 0;
    if (nbytes < 0 || ga_runtime_use_device(device) < 0) {
        Py_DECREF(descr);
        return NULL;
    }
    ga_array *a = array_new_raw(ndim, descr, device);
    if (a == NULL)
        return NULL;
    npy_intp stride = item;
    for (int k = 0; k < ndim; ++k) {
        int i = fortran ? k : ndim - 1 - k;
        a->shape[i] = shape[i];
        a->strides[i] = stride;
        stride *= shape[i] ? shape[i] : 1;
    }
    a->alloc_stream = ga_runtime_device_stream(device);
    a->alloc_kind = memory;
    if (memory == GA_MEM_DEVICE)
        a->alloc = ga_pool_malloc(device, (size_t)nbytes, a->alloc_stream, &failed);
    else
        failed = alloc_host_addressable(a, (size_t)nbytes, memory) < 0;
    if (failed) {
        Py_DECREF(a);
        return NULL;
    }
    a->alloc_size = (size_t)nbytes;
    if (a->data == NULL)
        a->data = a->alloc;
    a->flags = GA_OWNDATA | GA_WRITEABLE;
    ga_array_update_flags(a);
    return a;
}

ga_array *
ga_array_view(PyObject *base, char *data, int ndim, const npy_intp *shape,
              const npy_intp *strides, PyArray_Descr *descr, int device, int writeable)
{
    ga_array *a = array_new_raw(ndim, descr, device);
    if (a == NULL)
        return NULL;
    if (base != NULL && ga_array_check(base) && !(((ga_array *)base)->flags & GA_OWNDATA)
        && ((ga_array *)base)->base != NULL)
        base = ((ga_array *)base)->base;
    Py_XINCREF(base);
    a->base = base;
    a->data = data;
    memcpy(a->shape, shape, ndim * sizeof(npy_intp));
    memcpy(a->strides, strides, ndim * sizeof(npy_intp));
    a->flags = writeable ? GA_WRITEABLE : 0;
    ga_array_update_flags(a);
    return a;
}

PyObject *
ga_array_view_of(ga_array *a, int ndim, const npy_intp *shape, const npy_intp *strides,
                 int writeable)
{
    Py_INCREF(a->descr);
    return (PyObject *)ga_array_view((PyObject *)a, a->data, ndim, shape, strides, a->descr,
                                     a->device, writeable && (a->flags & GA_WRITEABLE));
}

static void
array_dealloc(ga_array *self)
{
    if (self->weakrefs != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    if ((self->flags & GA_OWNDATA) && self->alloc_kind == GA_MEM_DEVICE) {
        ga_pool_free(self->device, self->alloc, self->alloc_size, self->alloc_stream);
    } else if ((self->flags & GA_OWNDATA) && self->alloc != NULL && !ga_runtime_forked()) {
        cudaError_t err = self->alloc_kind == GA_MEM_MANAGED ? cudaFree(self->alloc)
                                                             : cudaFreeHost(self->alloc);
        if (err != cudaSuccess)
            ga_err_unraisable(err, "freeing host-addressable memory");
    }
    Py_CLEAR(self->base);
    Py_CLEAR(self->descr);
    if (self->shape != NULL && self->shape != self->dims_inline)
        PyMem_Free(self->shape);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Parse a shape argument: an int or a sequence of ints.  Returns ndim or -1. */
int
ga_parse_shape(PyObject *obj, npy_intp *dims, const char *argname)
{
    if (PyIndex_Check(obj)) {
        dims[0] = PyNumber_AsSsize_t(obj, PyExc_ValueError);
        return dims[0] == -1 && PyErr_Occurred() ? -1 : 1;
    }
    PyObject *fast = PySequence_Fast(obj, "");
    if (fast == NULL) {
        PyErr_Format(PyExc_TypeError, "%s must be an int or a sequence of ints, not %s",
                     argname, Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > NPY_MAXDIMS) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "maximum supported dimension for an ndarray is %d, "
                     "found %zd", NPY_MAXDIMS, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError, "%s must contain only integers, not %s", argname,
                         Py_TYPE(item)->tp_name);
            Py_DECREF(fast);
            return -1;
        }
        dims[i] = PyNumber_AsSsize_t(item, PyExc_ValueError);
        if (dims[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return (int)n;
}

/* Parse order='C'/'F' (also None -> default, 'A'/'K' -> C). */
int
ga_parse_order(PyObject *obj, char deflt, char *out)
{
    if (obj == NULL || obj == Py_None) {
        *out = deflt;
        return 0;
    }
    const char *s = PyUnicode_Check(obj) ? PyUnicode_AsUTF8(obj) : NULL;
    if (s == NULL || strlen(s) != 1 || strchr("CFAKcfak", s[0]) == NULL) {
        PyErr_Format(PyExc_ValueError, "order must be one of 'C', 'F', 'A', or 'K' (got %R)", obj);
        return -1;
    }
    *out = (char)(s[0] & ~0x20);
    return 0;
}

/* ndarray(shape, dtype=float, memptr=None, strides=None, order='C') */
static PyObject *
array_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"shape", "dtype", "memptr", "strides", "order", NULL};
    PyObject *shape_obj, *dtype_obj = NULL, *memptr = Py_None, *strides_obj = Py_None;
    PyObject *order_obj = NULL;
    npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    char order;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOOO", kwlist, &shape_obj, &dtype_obj,
                                     &memptr, &strides_obj, &order_obj))
        return NULL;
    int ndim = ga_parse_shape(shape_obj, dims, "shape");
    if (ndim < 0 || ga_parse_order(order_obj, 'C', &order) < 0)
        return NULL;
    PyArray_Descr *descr = ga_dtype_converter_or(dtype_obj, NULL, "dtype");
    if (descr == NULL && PyErr_Occurred())
        return NULL;
    if (descr == NULL)
        descr = PyArray_DescrFromType(NPY_FLOAT64);
    if (memptr == Py_None)
        return (PyObject *)ga_array_empty(ndim, dims, descr, order == 'F',
                                          ga_runtime_current_device());

    /* An array over foreign memory: memptr has .ptr (and optionally .device_id). */
    npy_intp nbytes = shape_nbytes(ndim, dims, PyDataType_ELSIZE(descr));
    PyObject *ptr_obj = nbytes < 0 ? NULL : PyObject_GetAttrString(memptr, "ptr");
    if (ptr_obj == NULL) {
        if (nbytes >= 0)
            PyErr_SetString(PyExc_TypeError, "memptr must be a gpuarr.cuda.MemoryPointer "
                            "(an object with a .ptr device address)");
        Py_DECREF(descr);
        return NULL;
    }
    uintptr_t ptr = (uintptr_t)PyLong_AsVoidPtr(ptr_obj);
    Py_DECREF(ptr_obj);
    if (PyErr_Occurred()) {
        Py_DECREF(descr);
        return NULL;
    }
    int device = ga_runtime_current_device();
    PyObject *dev_obj = PyObject_GetAttrString(memptr, "device_id");
    if (dev_obj != NULL) {
        device = (int)PyLong_AsLong(dev_obj);
        Py_DECREF(dev_obj);
        if (PyErr_Occurred()) {
            Py_DECREF(descr);
            return NULL;
        }
    } else {
        PyErr_Clear();
    }
    npy_intp item = PyDataType_ELSIZE(descr);
    if (strides_obj != Py_None) {
        int ns = ga_parse_shape(strides_obj, strides, "strides");
        if (ns < 0 || ns != ndim) {
            if (ns >= 0)
                PyErr_SetString(PyExc_ValueError, "strides must have one entry per dimension");
            Py_DECREF(descr);
            return NULL;
        }
    } else {
        npy_intp s = item;
        for (int k = 0; k < ndim; ++k) {
            int i = order == 'F' ? k : ndim - 1 - k;
            strides[i] = s;
            s *= dims[i] ? dims[i] : 1;
        }
    }
    return (PyObject *)ga_array_view(memptr, (char *)ptr, ndim, dims, strides, descr, device, 1);
}

static PyObject *
array_iter(ga_array *self)
{
    if (self->ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d array");
        return NULL;
    }
    return PySeqIter_New((PyObject *)self);
}

/* The memory kind behind an array (its own, or its owner's for a view). */
static int
array_memory_kind(ga_array *a)
{
    if (a->flags & GA_OWNDATA)
        return a->alloc_kind;
    if (a->base != NULL && ga_array_check(a->base) && (((ga_array *)a->base)->flags & GA_OWNDATA))
        return ((ga_array *)a->base)->alloc_kind;
    return GA_MEM_DEVICE;
}

/* Buffer protocol: only host-addressable memory (memory="managed" or
 * "pinned") is exported; the device's own memory cannot be read by the host. */
static int
array_getbuffer(ga_array *self, Py_buffer *view, int flags)
{
    if (array_memory_kind(self) == GA_MEM_DEVICE) {
        PyErr_SetString(PyExc_BufferError,
                        "gpuarr.ndarray lives in GPU memory, which the host cannot address: copy "
                        "it with .get() or gpuarr.asnumpy(), or create it with "
                        "memory='managed' or memory='pinned' to share one buffer");
        return -1;
    }
    if ((flags & PyBUF_WRITABLE) && !(self->flags & GA_WRITEABLE)) {
        PyErr_SetString(PyExc_BufferError, "the array is read-only");
        return -1;
    }
    if (((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !(self->flags & GA_C_CONTIGUOUS)) ||
        ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !(self->flags & GA_F_CONTIGUOUS)) ||
        ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !(self->flags & GA_C_CONTIGUOUS))) {
        PyErr_SetString(PyExc_BufferError, "the array is not contiguous as the consumer requires");
        return -1;
    }
    cudaError_t err;
    Py_BEGIN_ALLOW_THREADS
    err = cudaDeviceSynchronize();  /* kernels may still be writing it */
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess) {
        ga_err_cuda(err, "cudaDeviceSynchronize before exporting a buffer");
        return -1;
    }
    static char formats[GA_NTYPES][3] = {"?", "b", "h", "i", "q", "B", "H", "I", "Q", "e", "f", "d",
                                         "Zf", "Zd"};
    view->buf = self->data;
    view->obj = (PyObject *)self;
    Py_INCREF(self);
    view->len = ga_array_size(self) * ga_array_itemsize(self);
    view->readonly = !(self->flags & GA_WRITEABLE);
    view->itemsize = ga_array_itemsize(self);
    view->format = (flags & PyBUF_FORMAT) ? formats[self->type] : NULL;
    view->ndim = self->ndim;
    view->shape = (flags & PyBUF_ND) ? self->shape : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? self->strides : NULL;
    view->suboffsets = NULL;
    view->internal = NULL;
    return 0;
}

static PyBufferProcs array_as_buffer = {
    .bf_getbuffer = (getbufferproc)array_getbuffer,
};

/* `v in a`: (a == v).any() in gpuarr/_methods.py, one comparison and one
 * read, not Python's element-by-element iteration. */
static int
array_contains(PyObject *self, PyObject *value)
{
    PyObject *f = ga_helper("ndarray.__contains__");
    if (f == NULL)
        return -1;
    PyObject *r = PyObject_CallFunctionObjArgs(f, self, value, NULL);
    if (r == NULL)
        return -1;
    int truth = PyObject_IsTrue(r);
    Py_DECREF(r);
    return truth;
}

static PySequenceMethods array_as_sequence = {
    .sq_length = (lenfunc)ga_array_length,
    .sq_item = (ssizeargfunc)ga_array_item,
    .sq_contains = array_contains,
};

PyTypeObject GA_ArrayType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuarr.ndarray",
    .tp_basicsize = sizeof(ga_array),
    .tp_dealloc = (destructor)array_dealloc,
    .tp_repr = (reprfunc)ga_array_repr,
    .tp_str = (reprfunc)ga_array_str,
    .tp_as_number = &ga_array_as_number,
    .tp_as_sequence = &array_as_sequence,
    .tp_as_mapping = &ga_array_as_mapping,
    .tp_as_buffer = &array_as_buffer,
    .tp_hash = PyObject_HashNotImplemented,
    .tp_richcompare = ga_array_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "ndarray(shape, dtype=None, memptr=None, strides=None, order='C')\n--\n\n"
              "An N-dimensional array in GPU memory with NumPy semantics.",
    .tp_weaklistoffset = offsetof(ga_array, weakrefs),
    .tp_iter = (getiterfunc)array_iter,
    .tp_methods = ga_array_methods,
    .tp_getset = ga_array_getset,
    .tp_new = array_new,
};

/* _register_helper(name, obj): give the C core a Python-level object. */
static PyObject *
py_register_helper(PyObject *self, PyObject *args)
{
    const char *name;
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "sO", &name, &obj))
        return NULL;
    if (PyDict_SetItemString(helpers, name, obj) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef arrayobject_functions[] = {
    {"_register_helper", py_register_helper, METH_VARARGS, "Register a Python helper."},
    {NULL, NULL, 0, NULL},
};

int
ga_arrayobject_init(PyObject *m)
{
    helpers = PyDict_New();
    if (helpers == NULL || PyModule_AddObjectRef(m, "_helpers", helpers) < 0)
        return -1;
    if (PyType_Ready(&GA_ArrayType) < 0)
        return -1;
    if (PyModule_AddObjectRef(m, "ndarray", (PyObject *)&GA_ArrayType) < 0)
        return -1;
    return PyModule_AddFunctions(m, arrayobject_functions);
}
