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
 * - The same protocols the other way (NEP 13, NEP 18): when an argument of
 *   gpuarr's own ufuncs, where() or reductions is an object gpuarr does not
 *   know that defines __array_ufunc__ / __array_function__ (a Dask array,
 *   gpuarr.fuse's tracing proxies), the call is handed to it, as NumPy does
 *   for its functions.  Only such foreign objects are looked at, so the usual
 *   call (device arrays, scalars) pays a type check per argument.
 */
#include "gpuarr.h"

/* The stream value the interface advertises for the current stream of
 * `device`: 1 for the legacy default stream, else the handle. */
static PyObject *
stream_value(int device)
{
    cudaStream_t s = ga_runtime_device_stream(device);
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
    stream = stream_value(a->device);
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

/* Order the current stream of `device` after the producer's `stream`
 * entry. */
static int
wait_for_producer(int device, PyObject *stream_obj)
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
    cudaStream_t current = ga_runtime_device_stream(device);
    if (producer == current)
        return 0;
    return ga_runtime_stream_after(device, current, device, producer);
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
    if (ga_runtime_use_device(device) < 0 ||
        wait_for_producer(device, PyDict_GetItemString(cai, "stream")) < 0)
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

PyObject *
ga_kwnames_dict(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *kw = PyDict_New();
    for (Py_ssize_t k = 0; kw && kwnames && k < PyTuple_GET_SIZE(kwnames); ++k)
        if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0)
            Py_CLEAR(kw);
    return kw;
}

/* An argument gpuarr handles itself: device arrays, NumPy arrays and
 * scalars, Python numbers, None, sequences (converted, never overriding). */
static int
known_argument(PyObject *o)
{
    return ga_array_check(o) || PyArray_Check(o) || PyArray_IsScalar(o, Generic) ||
           PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o) || o == Py_None ||
           PyTuple_Check(o) || PyList_Check(o) || PyUnicode_Check(o);
}

/* The first of args[0..n) whose type defines `protocol`, or NULL.  Device
 * arrays of other libraries (CuPy, Numba, PyTorch: they export
 * __cuda_array_interface__) are gpuarr's to convert without a copy, so they
 * never override. */
static PyObject *
overriding_argument(PyObject *const *args, Py_ssize_t n, const char *protocol)
{
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *o = args[i];
        if (known_argument(o))
            continue;
        if (PyObject_HasAttrString((PyObject *)Py_TYPE(o), protocol) &&
            !PyObject_HasAttrString(o, "__cuda_array_interface__"))
            return o;
    }
    return NULL;
}

int
ga_try_ufunc_override(PyObject *ufunc, PyObject *const *args, size_t nargsf, PyObject *kwnames,
                      PyObject **result)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *o = overriding_argument(args, nargs, "__array_ufunc__");
    if (o == NULL)
        return -2;
    PyObject *meth = PyObject_GetAttrString(o, "__array_ufunc__");
    PyObject *full = meth ? PyTuple_New(nargs + 2) : NULL, *kw = NULL;
    *result = NULL;
    if (full == NULL)
        goto done;
    PyTuple_SET_ITEM(full, 0, Py_NewRef(ufunc));
    PyTuple_SET_ITEM(full, 1, PyUnicode_FromString("__call__"));
    for (Py_ssize_t i = 0; i < nargs; ++i)
        PyTuple_SET_ITEM(full, i + 2, Py_NewRef(args[i]));
    if (kwnames != NULL && (kw = ga_kwnames_dict(args, nargs, kwnames)) == NULL)
        goto done;
    *result = PyObject_Call(meth, full, kw);
    if (*result == Py_NotImplemented) {
        Py_CLEAR(*result);
        PyErr_Format(PyExc_TypeError, "operand type(s) all returned NotImplemented from "
                     "__array_ufunc__(%R, '__call__', ...)", ufunc);
    }
done:
    Py_XDECREF(meth);
    Py_XDECREF(full);
    Py_XDECREF(kw);
    return 0;
}

int
ga_try_function_override(const char *name, PyObject *const *args, Py_ssize_t nargs,
                         Py_ssize_t nrelevant, PyObject *kwnames, PyObject **result)
{
    PyObject *o = overriding_argument(args, nrelevant < nargs ? nrelevant : nargs,
                                      "__array_function__");
    if (o == NULL)
        return -2;
    PyObject *mod = PyImport_ImportModule("gpuarr._core");
    PyObject *func = mod ? PyObject_GetAttrString(mod, name) : NULL;
    PyObject *meth = func ? PyObject_GetAttrString(o, "__array_function__") : NULL;
    PyObject *types = meth ? PyTuple_Pack(1, (PyObject *)Py_TYPE(o)) : NULL;
    PyObject *pargs = types ? PyTuple_New(nargs) : NULL, *kw = NULL;
    *result = NULL;
    Py_XDECREF(mod);
    if (pargs == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < nargs; ++i)
        PyTuple_SET_ITEM(pargs, i, Py_NewRef(args[i]));
    if ((kw = ga_kwnames_dict(args, nargs, kwnames)) == NULL)
        goto done;
    *result = PyObject_CallFunctionObjArgs(meth, func, types, pargs, kw, NULL);
    if (*result == Py_NotImplemented) {
        Py_CLEAR(*result);
        PyErr_Format(PyExc_TypeError, "no implementation found for 'gpuarr.%s' on types that "
                     "implement __array_function__: [%R]", name, (PyObject *)Py_TYPE(o));
    }
done:
    Py_XDECREF(func);
    Py_XDECREF(meth);
    Py_XDECREF(types);
    Py_XDECREF(pargs);
    Py_XDECREF(kw);
    return 0;
}

PyObject *
ga_array_array_ufunc(PyObject *self, PyObject *args, PyObject *kwds)
{
    return ga_forward_method("array_ufunc", self, args, kwds);
}

PyObject *
ga_array_array_function(PyObject *self, PyObject *args, PyObject *kwds)
{
    return ga_forward_method("array_function", self, args, kwds);
}

/* ------------------------------------------------------------ DLPack ----- */
/* The DLPack ABI (dlpack.h, version 1.x), declared here from the spec. */

typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
typedef struct { uint32_t major, minor; } DLPackVersion;
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

enum { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3 };
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLComplex = 5, kDLBool = 6 };
#define DLPACK_FLAG_READ_ONLY 1ull

/* One allocation holding the managed tensor and its shape/strides; the
 * manager context is a strong reference to the exported array. */
typedef struct {
    union {
        DLManagedTensor legacy;
        DLManagedTensorVersioned versioned;
    } t;
    int64_t dims[];
} dl_export;

static void
dl_release_ctx(void *ctx)
{
    PyGILState_STATE st = PyGILState_Ensure();
    Py_XDECREF((PyObject *)ctx);
    PyGILState_Release(st);
}

static void dl_deleter_legacy(DLManagedTensor *self)
{
    dl_release_ctx(self->manager_ctx);
    PyMem_RawFree(self);
}

static void dl_deleter_versioned(DLManagedTensorVersioned *self)
{
    dl_release_ctx(self->manager_ctx);
    PyMem_RawFree(self);
}

static void
dl_capsule_destructor(PyObject *capsule)
{
    if (PyCapsule_IsValid(capsule, "dltensor")) {
        DLManagedTensor *t = PyCapsule_GetPointer(capsule, "dltensor");
        if (t && t->deleter)
            t->deleter(t);
    } else if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        DLManagedTensorVersioned *t = PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (t && t->deleter)
            t->deleter(t);
    }
    PyErr_Clear();
}

static int
dl_dtype(ga_array *a, DLDataType *dt)
{
    static const uint8_t codes[GA_NTYPES] = {
        [GA_BOOL] = kDLBool, [GA_INT8] = kDLInt, [GA_INT16] = kDLInt, [GA_INT32] = kDLInt,
        [GA_INT64] = kDLInt, [GA_UINT8] = kDLUInt, [GA_UINT16] = kDLUInt, [GA_UINT32] = kDLUInt,
        [GA_UINT64] = kDLUInt, [GA_FLOAT16] = kDLFloat, [GA_FLOAT32] = kDLFloat,
        [GA_FLOAT64] = kDLFloat, [GA_COMPLEX64] = kDLComplex, [GA_COMPLEX128] = kDLComplex,
    };
    dt->code = codes[a->type];
    dt->bits = (uint8_t)(8 * ga_array_itemsize(a));
    dt->lanes = 1;
    return 0;
}

/* dl_device=(kDLCPU, 0): the standard lets the producer copy; the host
 * copy (a NumPy array) exports itself. */
static PyObject *
dlpack_host_copy(PyObject *self, PyObject *max_version)
{
    PyObject *host = PyObject_CallMethod(self, "get", NULL);
    if (host == NULL)
        return NULL;
    PyObject *meth = PyObject_GetAttrString(host, "__dlpack__");
    Py_DECREF(host);
    if (meth == NULL)
        return NULL;
    PyObject *kw = Py_BuildValue("{sO}", "max_version", max_version);
    PyObject *empty = PyTuple_New(0);
    PyObject *r = kw && empty ? PyObject_Call(meth, empty, kw) : NULL;
    Py_XDECREF(kw);
    Py_XDECREF(empty);
    Py_DECREF(meth);
    return r;
}

/* __dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None) */
PyObject *
ga_array_dlpack(PyObject *self_obj, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    ga_array *self = (ga_array *)self_obj, *src = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$OOOO", kwlist, &stream, &max_version,
                                     &dl_device, &copy))
        return NULL;
    if (dl_device != Py_None) {
        int type, id;
        if (!PyArg_ParseTuple(dl_device, "ii", &type, &id))
            return NULL;
        if (type == kDLCPU && id == 0 && copy != Py_False)
            return dlpack_host_copy(self_obj, max_version);
        if (type != kDLCUDA || id != self->device) {
            PyErr_Format(PyExc_BufferError, "__dlpack__: the array is on CUDA device %d and "
                         "cannot be exported to device (%d, %d)%s", self->device, type, id,
                         type == kDLCPU && id == 0 ? " with copy=False" : " without a copy");
            return NULL;
        }
    }
    int versioned = 0;
    if (max_version != Py_None) {
        int major = 0, minor = 0;
        if (!PyArg_ParseTuple(max_version, "ii", &major, &minor))
            return NULL;
        versioned = major >= 1;
    }
    if (copy == Py_True) {
        src = ga_array_copy_as(self, NULL, 0);
        if (src == NULL)
            return NULL;
    } else {
        src = self;
        Py_INCREF(src);
    }
    /* Order the consumer's stream after our work. */
    if (stream != Py_None) {
        long long v = PyLong_AsLongLong(stream);
        if (v == -1 && PyErr_Occurred())
            goto fail;
        if (v != -1) {
            cudaStream_t consumer = v == 1 || v == 0 ? (cudaStream_t)0
                                    : v == 2 ? cudaStreamPerThread : (cudaStream_t)(intptr_t)v;
            cudaStream_t ours = ga_runtime_device_stream(src->device);
            if (consumer != ours) {
                cudaEvent_t ev;
                if (ga_runtime_use_device(src->device) < 0)
                    goto fail;
                GA_CUDA_TRY(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
                cudaError_t e1 = cudaEventRecord(ev, ours);
                cudaError_t e2 = e1 == cudaSuccess ? cudaStreamWaitEvent(consumer, ev, 0) : e1;
                cudaEventDestroy(ev);
                GA_CUDA_TRY(e2);
            }
        }
    }
    dl_export *ex = PyMem_RawCalloc(1, sizeof(dl_export) + 2 * sizeof(int64_t) * (src->ndim + 1));
    if (ex == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    DLTensor *t = versioned ? &ex->t.versioned.dl_tensor : &ex->t.legacy.dl_tensor;
    npy_intp item = ga_array_itemsize(src);
    t->data = src->data;
    t->device.device_type = kDLCUDA;
    t->device.device_id = src->device;
    t->ndim = src->ndim;
    dl_dtype(src, &t->dtype);
    t->shape = ex->dims;
    t->strides = ex->dims + src->ndim;
    for (int i = 0; i < src->ndim; ++i) {
        t->shape[i] = src->shape[i];
        t->strides[i] = src->strides[i] / item;
    }
    PyObject *capsule;
    if (versioned) {
        ex->t.versioned.version.major = 1;
        ex->t.versioned.version.minor = 0;
        ex->t.versioned.manager_ctx = src;
        ex->t.versioned.deleter = dl_deleter_versioned;
        ex->t.versioned.flags = (src->flags & GA_WRITEABLE) ? 0 : DLPACK_FLAG_READ_ONLY;
        capsule = PyCapsule_New(&ex->t.versioned, "dltensor_versioned", dl_capsule_destructor);
    } else {
        ex->t.legacy.manager_ctx = src;
        ex->t.legacy.deleter = dl_deleter_legacy;
        capsule = PyCapsule_New(&ex->t.legacy, "dltensor", dl_capsule_destructor);
    }
    if (capsule == NULL) {
        PyMem_RawFree(ex);
        goto fail;
    }
    return capsule;  /* the capsule owns the reference to src */
fail:
    Py_XDECREF(src);
    return NULL;
}

PyObject *
ga_array_dlpack_device(PyObject *self, PyObject *unused)
{
    return Py_BuildValue("(ii)", kDLCUDA, ((ga_array *)self)->device);
}

/* Keeps a consumed DLPack tensor alive; calls its deleter when the last
 * gpuarr view of it dies. */
typedef struct {
    PyObject_HEAD
    void *managed;
    int versioned;
} dl_owner;

static void
dl_owner_dealloc(dl_owner *self)
{
    if (self->versioned) {
        DLManagedTensorVersioned *t = self->managed;
        if (t->deleter)
            t->deleter(t);
    } else {
        DLManagedTensor *t = self->managed;
        if (t->deleter)
            t->deleter(t);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject DLOwnerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuarr._core.DLPackOwner",
    .tp_basicsize = sizeof(dl_owner),
    .tp_dealloc = (destructor)dl_owner_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
};

static int
dl_to_code(DLDataType dt, int *code)
{
    if (dt.lanes != 1)
        return -1;
    switch (dt.code) {
    case kDLBool: *code = dt.bits == 8 ? GA_BOOL : -1; break;
    case kDLInt: *code = dt.bits == 8 ? GA_INT8 : dt.bits == 16 ? GA_INT16 : dt.bits == 32 ? GA_INT32
                       : dt.bits == 64 ? GA_INT64 : -1; break;
    case kDLUInt: *code = dt.bits == 8 ? GA_UINT8 : dt.bits == 16 ? GA_UINT16 : dt.bits == 32
                        ? GA_UINT32 : dt.bits == 64 ? GA_UINT64 : -1; break;
    case kDLFloat: *code = dt.bits == 16 ? GA_FLOAT16 : dt.bits == 32 ? GA_FLOAT32
                         : dt.bits == 64 ? GA_FLOAT64 : -1; break;
    case kDLComplex: *code = dt.bits == 64 ? GA_COMPLEX64 : dt.bits == 128 ? GA_COMPLEX128 : -1;
        break;
    default: *code = -1;
    }
    return *code < 0 ? -1 : 0;
}

/* from_dlpack(x): a zero-copy gpuarr view of a DLPack producer's CUDA data. */
static PyObject *
py_from_dlpack(PyObject *mod, PyObject *x)
{
    PyObject *meth = NULL, *capsule = NULL, *kw = NULL, *empty = NULL;
    dl_owner *owner = NULL;
    PyObject *dev = PyObject_CallMethod(x, "__dlpack_device__", NULL);
    int type = 0, id = 0;
    if (dev == NULL || !PyArg_ParseTuple(dev, "ii", &type, &id)) {
        Py_XDECREF(dev);
        return NULL;
    }
    Py_DECREF(dev);
    if (type != kDLCUDA) {
        PyErr_Format(PyExc_TypeError, "from_dlpack: the data is on DLPack device type %d, not "
                     "a CUDA device; move host data with gpuarr.asarray() instead", type);
        return NULL;
    }
    if (ga_runtime_use_device(id) < 0)
        return NULL;
    cudaStream_t cur = ga_runtime_device_stream(id);
    meth = PyObject_GetAttrString(x, "__dlpack__");
    empty = PyTuple_New(0);
    kw = Py_BuildValue("{s:N,s:(ii)}", "stream",
                       cur == 0 ? PyLong_FromLong(1) : PyLong_FromVoidPtr(cur), "max_version", 1, 0);
    if (meth == NULL || empty == NULL || kw == NULL)
        goto fail;
    capsule = PyObject_Call(meth, empty, kw);
    if (capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyDict_DelItemString(kw, "max_version");
        capsule = PyObject_Call(meth, empty, kw);
    }
    if (capsule == NULL)
        goto fail;
    owner = PyObject_New(dl_owner, &DLOwnerType);
    if (owner == NULL)
        goto fail;
    owner->managed = NULL;
    DLTensor *t;
    int readonly = 0;
    if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        DLManagedTensorVersioned *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (m->version.major > 1) {
            PyErr_Format(PyExc_BufferError, "from_dlpack: DLPack version %u is not supported",
                         m->version.major);
            goto fail;
        }
        owner->managed = m;
        owner->versioned = 1;
        t = &m->dl_tensor;
        readonly = (m->flags & DLPACK_FLAG_READ_ONLY) != 0;
        PyCapsule_SetName(capsule, "used_dltensor_versioned");
    } else if (PyCapsule_IsValid(capsule, "dltensor")) {
        DLManagedTensor *m = PyCapsule_GetPointer(capsule, "dltensor");
        owner->managed = m;
        owner->versioned = 0;
        t = &m->dl_tensor;
        PyCapsule_SetName(capsule, "used_dltensor");
    } else {
        PyErr_SetString(PyExc_ValueError, "from_dlpack: not a DLPack capsule (or already used)");
        goto fail;
    }
    int code;
    if (dl_to_code(t->dtype, &code) < 0) {
        PyErr_Format(PyExc_TypeError, "from_dlpack: unsupported DLPack dtype (code %d, %d bits, "
                     "%d lanes)", t->dtype.code, t->dtype.bits, t->dtype.lanes);
        goto fail;
    }
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    PyArray_Descr *descr = ga_dtype_from_code(code);
    npy_intp item = PyDataType_ELSIZE(descr);
    if (t->ndim > NPY_MAXDIMS) {
        Py_DECREF(descr);
        PyErr_SetString(PyExc_ValueError, "from_dlpack: too many dimensions");
        goto fail;
    }
    npy_intp s = item;
    for (int i = t->ndim - 1; i >= 0; --i) {
        shape[i] = t->shape[i];
        strides[i] = t->strides ? t->strides[i] * item : s;
        s *= shape[i] ? shape[i] : 1;
    }
    PyObject *r = (PyObject *)ga_array_view((PyObject *)owner, (char *)t->data + t->byte_offset,
                                            t->ndim, shape, strides, descr, id, !readonly);
    Py_DECREF(owner);
    Py_DECREF(capsule);
    Py_DECREF(meth);
    Py_DECREF(kw);
    Py_DECREF(empty);
    return r;
fail:
    if (owner != NULL && owner->managed == NULL)
        Py_TYPE(owner)->tp_free((PyObject *)owner);
    else
        Py_XDECREF(owner);
    Py_XDECREF(capsule);
    Py_XDECREF(meth);
    Py_XDECREF(kw);
    Py_XDECREF(empty);
    return NULL;
}

static PyMethodDef interop_functions[] = {
    {"from_dlpack", py_from_dlpack, METH_O,
     "from_dlpack($module, x, /)\n--\n\n"
     "A zero-copy device array over a DLPack producer's CUDA data."},
    {NULL, NULL, 0, NULL},
};

int
ga_interop_init(PyObject *m)
{
    if (PyType_Ready(&DLOwnerType) < 0)
        return -1;
    return PyModule_AddFunctions(m, interop_functions);
}
