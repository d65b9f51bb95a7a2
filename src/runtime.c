/*
 * runtime.c -- finding the driver and the devices, the per-thread current
 * device and stream, and the Stream and Event types of gpuarr.cuda.
 * (One file, not three: Stream.record makes Events, Event.record takes
 * Streams, and both read and set the per-thread current stream kept here;
 * split, the files would call each other.)
 *
 * Nothing touches CUDA at import: `import gpuarr` works with no driver.  The
 * first device operation calls ga_runtime_use_device(), which initialises
 * CUDA once for the process and either succeeds or raises NoDeviceError
 * with the cause (no driver library, driver too old for this build, no
 * device).  is_available() asks the same question without raising.
 *
 * fork()
 * ------
 * CUDA cannot be used in a child forked after the parent initialised it:
 * the child inherits a copy of the driver's state but not its threads or
 * its device context, and CUDA calls there fail or hang.  A pthread_atfork
 * child handler marks such a child (only when the parent had initialised
 * CUDA: a fork before any device use leaves the child free to initialise
 * its own) and forgets the thread's current CUDA device, so the next device
 * operation takes the slow path through ga_runtime_device_count(), which
 * raises CUDARuntimeError saying to use the 'spawn' or 'forkserver' start
 * method.  is_available() is False there, and teardown (arrays, pool
 * blocks, streams, events) makes no CUDA call: the memory belongs to the
 * parent's context and dies with it.
 *
 * Current device and stream
 * -------------------------
 * Both are thread-local, as in CUDA itself, and the current stream is kept
 * per device (as CuPy does): entering `with Device(1):` inside `with s:`
 * (s on device 0) gives device 1's own current stream, not s.  The thread
 * also remembers which device it last made current in CUDA, so the common
 * case (same device as last time) costs no CUDA call.  The C side reads a
 * plain thread-local array of handles (tl_streams); the Python side keeps,
 * in the thread's state dict, a strong reference to each current Stream
 * object and the stack of `with` blocks, so a stream stays alive while it
 * is current and the references go away with the thread.
 *
 * Streams and events
 * ------------------
 * A Stream owns its cudaStream_t unless it wraps a foreign one (ptr=N) or
 * is the null stream (handle 0, device -1: the legacy default stream of
 * whichever device the work is on).  An Event always owns its cudaEvent_t.
 * Both remember the device they were created on; using one with a stream
 * or device of another device raises ValueError before CUDA sees it.
 * Owned handles are destroyed in dealloc, which never raises: failures are
 * reported as unraisable errors.  The GIL is released around every wait.
 * A Stream waits for its work before its handle is destroyed: the pool
 * caches blocks freed on a stream under its handle (mempool.c), and the
 * runtime may hand the same handle to the next stream made, which would
 * then get those blocks while the old stream's queued kernels still write
 * them (tools/probe_stream_reuse.py showed it; test_runtime tests it).
 * Stream and Event still share this file with the devices: Event.record and
 * Stream.record/wait_event reach into both structs, so giving each type its
 * own file first needs their declarations shared (issue 23 left it undone).
 */
#include "gpuarr.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#define GA_MAX_DEVICES 64

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int device_count = -1;              /* -1 until init; 0 when unusable */
static cudaError_t init_status = cudaSuccess;
static int driver_missing = 0;
static int sm_counts[GA_MAX_DEVICES];

static int forked_child = 0;               /* forked after CUDA was initialised */

static _Thread_local int tl_device = 0;          /* gpuarr's current device */
static _Thread_local int tl_cuda_device = -1;    /* what cudaSetDevice last got */
static _Thread_local cudaStream_t tl_streams[GA_MAX_DEVICES]; /* current stream per device */

static void
runtime_init_once(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (lib == NULL) {
        driver_missing = 1;
        device_count = 0;
        return;
    }
    int n = 0;
    init_status = cudaGetDeviceCount(&n);
    if (init_status != cudaSuccess) {
        (void)cudaGetLastError();
        n = 0;
    }
    device_count = n > GA_MAX_DEVICES ? GA_MAX_DEVICES : n;
}

static void
runtime_init(void)
{
    Py_BEGIN_ALLOW_THREADS
    pthread_once(&init_once, runtime_init_once);
    Py_END_ALLOW_THREADS
}

/* pthread_atfork child handler (runs in the forking thread, the only one
 * in the child). */
static void
runtime_after_fork_child(void)
{
    if (device_count > 0)
        forked_child = 1;
    tl_cuda_device = -1;
}

int ga_runtime_forked(void) { return forked_child; }

/* Register `child` to run in the child process after fork() (in the forking
 * thread, the child's only one).  0, or -1 with OSError set. */
int
ga_runtime_at_fork_child(void (*child)(void))
{
    int err = pthread_atfork(NULL, NULL, child);
    if (err != 0) {
        errno = err;
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    return 0;
}

/* Raise CUDARuntimeError in a child forked after CUDA was initialised. */
static int
runtime_raise_forked(void)
{
    PyErr_SetString(GA_CUDARuntimeError,
                    "CUDA was initialised in the parent process before fork(); CUDA cannot be "
                    "used in a forked child: use multiprocessing's 'spawn' or 'forkserver' start "
                    "method (multiprocessing.get_context('spawn')), or fork before the parent's "
                    "first device operation");
    return -1;
}

/* Raise NoDeviceError describing why no device can be used. */
static int
runtime_raise_unavailable(void)
{
    if (forked_child)
        return runtime_raise_forked();
    if (driver_missing) {
        PyErr_SetString(GA_NoDeviceError,
                        "no NVIDIA driver: libcuda.so.1 could not be loaded, so no GPU can be "
                        "used (gpuarr.is_available() returns False on this machine)");
    } else if (init_status == cudaErrorInsufficientDriver ||
               init_status == cudaErrorCallRequiresNewerDriver) {
        int drv = 0, rt = 0;
        cudaDriverGetVersion(&drv);
        cudaRuntimeGetVersion(&rt);
        PyErr_Format(GA_NoDeviceError,
                     "the NVIDIA driver is too old: it supports CUDA %d.%d, and this build of "
                     "gpuarr needs CUDA %d.%d or newer (%s)",
                     drv / 1000, (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10,
                     cudaGetErrorName(init_status));
    } else if (init_status != cudaSuccess && init_status != cudaErrorNoDevice) {
        PyErr_Format(GA_NoDeviceError, "CUDA could not be initialised: %s: %s",
                     cudaGetErrorName(init_status), cudaGetErrorString(init_status));
    } else {
        PyErr_SetString(GA_NoDeviceError,
                        "no CUDA device: the driver is present but reports no GPU "
                        "(check CUDA_VISIBLE_DEVICES)");
    }
    return -1;
}

int
ga_runtime_device_count(void)
{
    if (device_count < 0)
        runtime_init();
    if (device_count == 0 || forked_child)
        return runtime_raise_unavailable();
    return device_count;
}

/* 0 when `device` names a device of this machine; -1 with NoDeviceError,
 * or ValueError naming the count of devices. */
static int
runtime_check_device(int device)
{
    int n = ga_runtime_device_count();
    if (n < 0)
        return -1;
    if (device < 0 || device >= n) {
        PyErr_Format(PyExc_ValueError, "device %d is out of range: this machine has %d CUDA "
                     "device%s (0 to %d)", device, n, n == 1 ? "" : "s", n - 1);
        return -1;
    }
    return 0;
}

int
ga_runtime_use_device(int device)
{
    if (tl_cuda_device == device)
        return 0;
    if (runtime_check_device(device) < 0)
        return -1;
    cudaError_t err = cudaSetDevice(device);
    if (err != cudaSuccess) {
        ga_err_cuda(err, "cudaSetDevice");
        return -1;
    }
    tl_cuda_device = device;
    return 0;
}

int ga_runtime_current_device(void) { return tl_device; }
void ga_runtime_set_current_device(int device) { tl_device = device; }

cudaStream_t
ga_runtime_device_stream(int device)
{
    return (unsigned)device < GA_MAX_DEVICES ? tl_streams[device] : NULL;
}


int
ga_runtime_stream_after(int device, cudaStream_t stream, int producer_device,
                        cudaStream_t producer)
{
    if (device == producer_device && stream == producer)
        return 0;
    cudaEvent_t ev = NULL;
    if (ga_runtime_use_device(producer_device) < 0)
        return -1;
    GA_CUDA_TRY(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    GA_CUDA_TRY(cudaEventRecord(ev, producer));
    if (ga_runtime_use_device(device) < 0)
        goto fail;
    GA_CUDA_TRY(cudaStreamWaitEvent(stream, ev, 0));
    cudaEventDestroy(ev);
    return 0;
fail:
    if (ev)
        cudaEventDestroy(ev);
    return -1;
}

void
ga_runtime_set_device_stream(int device, cudaStream_t stream)
{
    if ((unsigned)device < GA_MAX_DEVICES)
        tl_streams[device] = stream;
}

int
ga_runtime_sm_count(int device)
{
    if (device < 0 || device >= GA_MAX_DEVICES)
        return 1;
    if (sm_counts[device] == 0) {
        int n = 0;
        if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
            (void)cudaGetLastError();
            n = 1;
        }
        sm_counts[device] = n;
    }
    return sm_counts[device];
}

/* Teardown errors that only mean the process is exiting. */
static int
runtime_exiting(cudaError_t err)
{
    return err == cudaErrorCudartUnloading || err == cudaErrorContextIsDestroyed;
}

int
ga_wait_stream(cudaStream_t stream, const char *what)
{
    cudaError_t err;
    Py_BEGIN_ALLOW_THREADS
    err = cudaStreamSynchronize(stream);
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess) {
        ga_err_cuda(err, what);
        return -1;
    }
    return 0;
}

/* Wait for an event (GIL released). */
static cudaError_t
event_wait_nogil(cudaEvent_t event)
{
    cudaError_t err;
    Py_BEGIN_ALLOW_THREADS
    err = cudaEventSynchronize(event);
    Py_END_ALLOW_THREADS
    return err;
}

/* True / False from a query call's cudaSuccess / cudaErrorNotReady. */
static PyObject *
query_result(cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        Py_RETURN_TRUE;
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        Py_RETURN_FALSE;
    }
    return ga_err_cuda(err, what);
}

/* ================================================================ Stream */

typedef struct {
    PyObject_HEAD
    cudaStream_t handle;
    int device;              /* -1: the null stream, meaning the current device's */
    int owned;               /* destroy the handle in dealloc */
    PyObject *owner;         /* a foreign stream object kept alive (ptr=obj), or NULL */
} ga_stream;

static PyTypeObject GA_StreamType;
static ga_stream *stream_null = NULL;   /* Stream.null */
static PyObject *key_current = NULL;    /* thread-dict keys (see the essay) */
static PyObject *key_stack = NULL;

static ga_stream *
stream_wrap(cudaStream_t handle, int device, int owned)
{
    ga_stream *s = PyObject_New(ga_stream, &GA_StreamType);
    if (s == NULL)
        return NULL;
    s->handle = handle;
    s->device = device;
    s->owned = owned;
    s->owner = NULL;
    return s;
}

/* The device a stream's work goes to: its own, or the current one for the
 * null stream.  Makes it current in CUDA.  -1 with an exception set. */
static int
stream_use_device(ga_stream *s)
{
    int dev = s->device >= 0 ? s->device : tl_device;
    return ga_runtime_use_device(dev) < 0 ? -1 : dev;
}

/* The handle of an object implementing the CUDA stream protocol
 * (`__cuda_stream__()` returning (version, address), e.g. a cuda.core
 * Stream): 0 with *out set, -2 when obj has no such method, -1 on error. */
static int
stream_protocol_handle(PyObject *obj, cudaStream_t *out)
{
    PyObject *meth = PyObject_GetAttrString(obj, "__cuda_stream__"), *r;
    if (meth == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return -2;
    }
    r = PyObject_CallNoArgs(meth);
    Py_DECREF(meth);
    if (r == NULL)
        return -1;
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2 || !PyLong_Check(PyTuple_GET_ITEM(r, 1))) {
        PyErr_Format(PyExc_TypeError, "%.100s.__cuda_stream__() must return a tuple (version, "
                     "address) of two ints", Py_TYPE(obj)->tp_name);
        Py_DECREF(r);
        return -1;
    }
    *out = (cudaStream_t)PyLong_AsVoidPtr(PyTuple_GET_ITEM(r, 1));
    Py_DECREF(r);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *
stream_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"non_blocking", "null", "ptr", NULL};
    int non_blocking = 0, null = 0;
    PyObject *ptr_obj = NULL;
    cudaStream_t handle = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|$ppO:Stream", kwlist, &non_blocking, &null,
                                     &ptr_obj))
        return NULL;
    if (ptr_obj == Py_None)
        ptr_obj = NULL;
    void *ptr = NULL;
    PyObject *owner = NULL;
    if (ptr_obj != NULL && !PyLong_Check(ptr_obj)) {
        cudaStream_t h = NULL;
        int rc = stream_protocol_handle(ptr_obj, &h);
        if (rc == -2)
            PyErr_Format(PyExc_TypeError, "Stream: ptr must be an int (a cudaStream_t "
                         "address) or an object with __cuda_stream__, not %.100s",
                         Py_TYPE(ptr_obj)->tp_name);
        if (rc < 0)
            return NULL;
        ptr = (void *)h;
        owner = ptr_obj;
    } else if (ptr_obj != NULL) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(ptr_obj, &overflow);
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (overflow != 0 || v < 0) {
            PyErr_SetString(PyExc_ValueError, "Stream: ptr is not a valid address (it must be "
                             "a non-negative int below 2**63)");
            return NULL;
        }
        ptr = (void *)(intptr_t)v;
    }
    if (null && ptr != NULL) {
        PyErr_SetString(PyExc_ValueError, "Stream: null=True and ptr= exclude each other");
        return NULL;
    }
    if (non_blocking && (null || ptr_obj != NULL)) {
        PyErr_SetString(PyExc_ValueError, "Stream: non_blocking=True applies only to a new "
                        "stream, not to the null stream or a wrapped ptr");
        return NULL;
    }
    if (null || (ptr_obj != NULL && ptr == NULL))
        return Py_NewRef((PyObject *)stream_null);   /* ptr=0 is the null stream too */
    int dev = tl_device;
    if (ptr != NULL) {
        if (ga_runtime_device_count() < 0)
            return NULL;
        int owner_dev = -1;
        if (cudaStreamGetDevice((cudaStream_t)ptr, &owner_dev) != cudaSuccess) {
            (void)cudaGetLastError();
            owner_dev = dev;
        }
        ga_stream *w = stream_wrap((cudaStream_t)ptr, owner_dev, 0);
        if (w != NULL)
            w->owner = Py_XNewRef(owner);
        return (PyObject *)w;
    }
    if (ga_runtime_use_device(dev) < 0)
        return NULL;
    GA_CUDA_TRY(cudaStreamCreateWithFlags(&handle, non_blocking ? cudaStreamNonBlocking
                                                                : cudaStreamDefault));
    ga_stream *s = stream_wrap(handle, dev, 1);
    if (s == NULL)
        cudaStreamDestroy(handle);
    return (PyObject *)s;
fail:
    return NULL;
}

static void
stream_dealloc(ga_stream *s)
{
    if (s->owned && s->handle != NULL && !forked_child) {
        cudaError_t err;
        Py_BEGIN_ALLOW_THREADS
        err = cudaStreamSynchronize(s->handle);
        Py_END_ALLOW_THREADS
        if (err != cudaSuccess && !runtime_exiting(err))
            ga_err_unraisable(err, "cudaStreamSynchronize (a stream's work before its destruction)");
        err = cudaStreamDestroy(s->handle);
        if (err != cudaSuccess && !runtime_exiting(err))
            ga_err_unraisable(err, "cudaStreamDestroy");
    }
    Py_XDECREF(s->owner);
    PyObject_Free(s);
}

/* Borrowed: the calling thread's entry `key` in its state dict, created
 * empty (a dict, or a list when `list`) on first use. */
static PyObject *
thread_entry(PyObject *key, int list)
{
    PyObject *d = PyThreadState_GetDict();
    if (d == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "gpuarr: no Python thread state");
        return NULL;
    }
    PyObject *v = PyDict_GetItemWithError(d, key);
    if (v != NULL || PyErr_Occurred())
        return v;
    v = list ? PyList_New(0) : PyDict_New();
    if (v == NULL)
        return NULL;
    int rc = PyDict_SetItem(d, key, v);
    Py_DECREF(v);
    return rc < 0 ? NULL : v;
}

/* Make `s` (NULL: none, i.e. the null stream with no object) the current
 * stream of `device` with handle `handle`, for the calling thread. */
static int
stream_set_current(int device, ga_stream *s, cudaStream_t handle)
{
    PyObject *cur = thread_entry(key_current, 0);
    PyObject *key = cur ? PyLong_FromLong(device) : NULL;
    int rc = -1;
    if (key == NULL)
        return -1;
    if (s != NULL)
        rc = PyDict_SetItem(cur, key, (PyObject *)s);
    else if ((rc = PyDict_Contains(cur, key)) == 1)
        rc = PyDict_DelItem(cur, key);
    Py_DECREF(key);
    if (rc < 0)
        return -1;
    tl_streams[device] = handle;
    return 0;
}

/* The device `s` may become current on: the current device, which must be
 * the stream's own (tl_device is always a validated index).  -1 with
 * ValueError otherwise. */
static int
stream_check_current_device(ga_stream *s, const char *what)
{
    if (s->device >= 0 && s->device != tl_device) {
        PyErr_Format(PyExc_ValueError, "%s: the stream belongs to device %d but the current "
                     "device is %d (enter `with gpuarr.cuda.Device(%d):` first)", what,
                     s->device, tl_device, s->device);
        return -1;
    }
    return tl_device;
}

static PyObject *
stream_enter(ga_stream *self, PyObject *noargs)
{
    int dev = stream_check_current_device(self, "Stream.__enter__");
    if (dev < 0)
        return NULL;
    PyObject *stack = thread_entry(key_stack, 1);
    PyObject *cur = stack ? thread_entry(key_current, 0) : NULL;
    PyObject *key = cur ? PyLong_FromLong(dev) : NULL;
    if (key == NULL)
        return NULL;
    PyObject *prev = PyDict_GetItemWithError(cur, key);   /* borrowed */
    Py_DECREF(key);
    if (prev == NULL && PyErr_Occurred())
        return NULL;
    PyObject *entry = Py_BuildValue("(OiON)", self, dev, prev ? prev : Py_None,
                          PyLong_FromVoidPtr(tl_streams[dev]));
    if (entry == NULL)
        return NULL;
    int rc = PyList_Append(stack, entry);
    Py_DECREF(entry);
    if (rc < 0 || stream_set_current(dev, self, self->handle) < 0)
        return NULL;
    return Py_NewRef(self);
}

static PyObject *
stream_exit(ga_stream *self, PyObject *args)
{
    PyObject *stack = thread_entry(key_stack, 1);
    if (stack == NULL)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(stack);
    PyObject *top = n > 0 ? PyList_GET_ITEM(stack, n - 1) : NULL;
    if (top == NULL || PyTuple_GET_ITEM(top, 0) != (PyObject *)self) {
        PyErr_SetString(PyExc_RuntimeError, "Stream.__exit__: streams must be exited in the "
                        "reverse order they were entered, on the thread that entered them");
        return NULL;
    }
    Py_INCREF(top);
    int dev = (int)PyLong_AsLong(PyTuple_GET_ITEM(top, 1));
    PyObject *prev = PyTuple_GET_ITEM(top, 2);
    cudaStream_t handle = (cudaStream_t)PyLong_AsVoidPtr(PyTuple_GET_ITEM(top, 3));
    int rc = PyList_SetSlice(stack, n - 1, n, NULL);
    if (rc == 0)
        rc = stream_set_current(dev, prev == Py_None ? NULL : (ga_stream *)prev, handle);
    Py_DECREF(top);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
stream_use(ga_stream *self, PyObject *noargs)
{
    int dev = stream_check_current_device(self, "Stream.use");
    if (dev < 0 || stream_set_current(dev, self, self->handle) < 0)
        return NULL;
    return Py_NewRef(self);
}

static PyObject *
stream_synchronize(ga_stream *self, PyObject *noargs)
{
    if (stream_use_device(self) < 0)
        return NULL;
    if (ga_wait_stream(self->handle, "cudaStreamSynchronize") < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
stream_query(ga_stream *self, PyObject *noargs)
{
    if (stream_use_device(self) < 0)
        return NULL;
    return query_result(cudaStreamQuery(self->handle), "cudaStreamQuery");
}

/* The CUDA stream protocol: (0, address), so cuda.core and other libraries
 * take a gpuarr Stream wherever they take a stream. */
static PyObject *
stream_cuda_stream(ga_stream *self, PyObject *noargs)
{
    return Py_BuildValue("(iN)", 0, PyLong_FromVoidPtr(self->handle));
}

static PyObject *
stream_done_get(ga_stream *self, void *c)
{
    return stream_query(self, NULL);
}

static PyObject *
stream_ptr_get(ga_stream *self, void *c)
{
    return PyLong_FromVoidPtr(self->handle);
}

static PyObject *
stream_device_id_get(ga_stream *self, void *c)
{
    return PyLong_FromLong(self->device);
}

static PyObject *
stream_repr(ga_stream *self)
{
    if (self->handle == NULL)
        return PyUnicode_FromString("<gpuarr.cuda.Stream null>");
    return PyUnicode_FromFormat("<gpuarr.cuda.Stream %p on device %d%s>", (void *)self->handle,
                                self->device, self->owned ? "" : " (not owned)");
}

static PyObject *
stream_richcompare(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, &GA_StreamType))
        Py_RETURN_NOTIMPLEMENTED;
    ga_stream *x = (ga_stream *)a, *y = (ga_stream *)b;
    int eq = x->handle == y->handle && x->device == y->device;
    return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}

static Py_hash_t
stream_hash(ga_stream *self)
{
    Py_hash_t h = (Py_hash_t)((uintptr_t)self->handle >> 4) * 31 + self->device;
    return h == -1 ? -2 : h;
}

/* ================================================================= Event */

typedef struct {
    PyObject_HEAD
    cudaEvent_t handle;
    int device;
    unsigned int flags;
    int recorded;            /* record() has been called at least once */
} ga_event;

static PyTypeObject GA_EventType;

/* A new event on `device` (made current in CUDA). */
static ga_event *
event_create(int device, unsigned int flags)
{
    cudaEvent_t handle = NULL;
    if (ga_runtime_use_device(device) < 0)
        return NULL;
    GA_CUDA_TRY(cudaEventCreateWithFlags(&handle, flags));
    ga_event *e = PyObject_New(ga_event, &GA_EventType);
    if (e == NULL) {
        cudaEventDestroy(handle);
        return NULL;
    }
    e->handle = handle;
    e->device = device;
    e->flags = flags;
    e->recorded = 0;
    return e;
fail:
    return NULL;
}

static PyObject *
event_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"block", "disable_timing", "interprocess", NULL};
    int block = 0, disable_timing = 0, interprocess = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|ppp:Event", kwlist, &block, &disable_timing,
                                     &interprocess))
        return NULL;
    if (interprocess && !disable_timing) {
        PyErr_SetString(PyExc_ValueError, "Event: an interprocess event needs "
                        "disable_timing=True (CUDA cannot time interprocess events)");
        return NULL;
    }
    unsigned int flags = (block ? cudaEventBlockingSync : 0) |
                         (disable_timing ? cudaEventDisableTiming : 0) |
                         (interprocess ? cudaEventInterprocess : 0);
    return (PyObject *)event_create(tl_device, flags);
}

static void
event_dealloc(ga_event *e)
{
    cudaError_t err = forked_child ? cudaSuccess : cudaEventDestroy(e->handle);
    if (err != cudaSuccess && !runtime_exiting(err))
        ga_err_unraisable(err, "cudaEventDestroy");
    PyObject_Free(e);
}

/* Record `e` on `s` (NULL: the current stream of the current device). */
static int
event_record_on(ga_event *e, ga_stream *s)
{
    cudaStream_t handle;
    if (s == NULL) {
        if (e->device != tl_device) {
            PyErr_Format(PyExc_ValueError, "Event.record: the event belongs to device %d but "
                         "the current device is %d; record it inside `with "
                         "gpuarr.cuda.Device(%d):` or pass a stream of device %d", e->device,
                         tl_device, e->device, e->device);
            return -1;
        }
        handle = ga_runtime_device_stream(e->device);
    } else {
        if (s->device >= 0 && s->device != e->device) {
            PyErr_Format(PyExc_ValueError, "Event.record: the event belongs to device %d and "
                         "the stream to device %d", e->device, s->device);
            return -1;
        }
        handle = s->handle;
    }
    if (ga_runtime_use_device(e->device) < 0)
        return -1;
    cudaError_t err = cudaEventRecord(e->handle, handle);
    if (err != cudaSuccess) {
        ga_err_cuda(err, "cudaEventRecord");
        return -1;
    }
    e->recorded = 1;
    return 0;
}

/* A Stream argument (None -> NULL); -1 with TypeError for anything else. */
static int
stream_arg(PyObject *obj, ga_stream **out, const char *what)
{
    if (obj == NULL || obj == Py_None) {
        *out = NULL;
        return 0;
    }
    if (!PyObject_TypeCheck(obj, &GA_StreamType)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a gpuarr.cuda.Stream or None, got %.100s",
                     what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = (ga_stream *)obj;
    return 0;
}

int
ga_runtime_stream_arg(PyObject *obj, const char *what, int *device, cudaStream_t *handle)
{
    if (obj == NULL || obj == Py_None) {
        *device = tl_device;
        *handle = ga_runtime_device_stream(tl_device);
        return 0;
    }
    if (PyObject_TypeCheck(obj, &GA_StreamType)) {
        ga_stream *s = (ga_stream *)obj;
        *device = s->device >= 0 ? s->device : tl_device;
        *handle = s->handle;
        return 0;
    }
    cudaStream_t h = NULL;
    int rc = stream_protocol_handle(obj, &h);
    if (rc == -2)
        PyErr_Format(PyExc_TypeError, "%s: stream must be a gpuarr.cuda.Stream, an object "
                     "with __cuda_stream__ (e.g. a cuda.core Stream) or None, not %.100s", what,
                     Py_TYPE(obj)->tp_name);
    if (rc < 0)
        return -1;
    *device = tl_device;
    if (h != NULL) {
        if (ga_runtime_device_count() < 0)
            return -1;
        if (cudaStreamGetDevice(h, device) != cudaSuccess) {
            (void)cudaGetLastError();
            *device = tl_device;
        }
    }
    *handle = h;
    return 0;
}

static PyObject *
event_record(ga_event *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"stream", NULL};
    PyObject *obj = NULL;
    ga_stream *s;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:record", kwlist, &obj) ||
        stream_arg(obj, &s, "Event.record") < 0 || event_record_on(self, s) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
event_synchronize(ga_event *self, PyObject *noargs)
{
    if (forked_child) {
        runtime_raise_forked();
        return NULL;
    }
    cudaError_t err = event_wait_nogil(self->handle);
    if (err != cudaSuccess)
        return ga_err_cuda(err, "cudaEventSynchronize");
    Py_RETURN_NONE;
}

static PyObject *
event_query(ga_event *self, PyObject *noargs)
{
    if (forked_child) {
        runtime_raise_forked();
        return NULL;
    }
    return query_result(cudaEventQuery(self->handle), "cudaEventQuery");
}

static PyObject *
event_done_get(ga_event *self, void *c)
{
    return event_query(self, NULL);
}

static PyObject *
event_ptr_get(ga_event *self, void *c)
{
    return PyLong_FromVoidPtr(self->handle);
}

static PyObject *
event_device_id_get(ga_event *self, void *c)
{
    return PyLong_FromLong(self->device);
}

static PyObject *
event_repr(ga_event *self)
{
    return PyUnicode_FromFormat("<gpuarr.cuda.Event %p on device %d%s>", (void *)self->handle,
                                self->device,
                                (self->flags & cudaEventDisableTiming) ? " (timing disabled)" : "");
}

/* ------------------------------------------------ Stream's event methods */

static PyObject *
stream_wait_event(ga_stream *self, PyObject *obj)
{
    if (!PyObject_TypeCheck(obj, &GA_EventType)) {
        PyErr_Format(PyExc_TypeError, "Stream.wait_event: expected a gpuarr.cuda.Event, got "
                     "%.100s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (stream_use_device(self) < 0)
        return NULL;
    cudaError_t err = cudaStreamWaitEvent(self->handle, ((ga_event *)obj)->handle, 0);
    if (err != cudaSuccess)
        return ga_err_cuda(err, "cudaStreamWaitEvent");
    Py_RETURN_NONE;
}

static PyObject *
stream_record(ga_stream *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"event", NULL};
    PyObject *obj = NULL;
    ga_event *e;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:record", kwlist, &obj))
        return NULL;
    if (obj == NULL || obj == Py_None) {
        int dev = self->device >= 0 ? self->device : tl_device;
        e = event_create(dev, 0);
        if (e == NULL)
            return NULL;
    } else if (PyObject_TypeCheck(obj, &GA_EventType)) {
        e = (ga_event *)Py_NewRef(obj);
    } else {
        PyErr_Format(PyExc_TypeError, "Stream.record: expected a gpuarr.cuda.Event or None, "
                     "got %.100s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    if (event_record_on(e, self) < 0) {
        Py_DECREF(e);
        return NULL;
    }
    return (PyObject *)e;
}

/* ----------------------------------------------------------- type objects */

static PyMethodDef stream_methods[] = {
    {"__enter__", (PyCFunction)stream_enter, METH_NOARGS,
     "__enter__($self, /)\n--\n\n"
     "Make this the calling thread's current stream (of its device)."},
    {"__exit__", (PyCFunction)stream_exit, METH_VARARGS,
     "__exit__($self, /, *exc_info)\n--\n\n"
     "Restore the stream that was current before __enter__."},
    {"use", (PyCFunction)stream_use, METH_NOARGS,
     "use($self, /)\n--\n\n"
     "Make this the current stream of the thread (no restore); returns self."},
    {"synchronize", (PyCFunction)stream_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\n"
     "Wait until all work queued on the stream is done."},
    {"query", (PyCFunction)stream_query, METH_NOARGS,
     "query($self, /)\n--\n\n"
     "True when all work queued on the stream is done (never waits)."},
    {"wait_event", (PyCFunction)stream_wait_event, METH_O,
     "wait_event($self, event, /)\n--\n\n"
     "Make later work on this stream wait for `event` (no host wait)."},
    {"record", (PyCFunction)(void (*)(void))stream_record, METH_VARARGS | METH_KEYWORDS,
     "record($self, /, event=None)\n--\n\n"
     "Record `event` (a new Event when None) on this stream; returns it."},
    {"__cuda_stream__", (PyCFunction)stream_cuda_stream, METH_NOARGS,
     "__cuda_stream__($self, /)\n--\n\nThe CUDA stream protocol: (0, the cudaStream_t address)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef stream_getset[] = {
    {"ptr", (getter)stream_ptr_get, NULL, "The cudaStream_t as an int (0 for the null stream).",
     NULL},
    {"device_id", (getter)stream_device_id_get, NULL,
     "The device of the stream (-1 for the null stream: the current device's).", NULL},
    {"done", (getter)stream_done_get, NULL, "True when all queued work is done.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject GA_StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuarr.cuda.Stream",
    .tp_basicsize = sizeof(ga_stream),
    .tp_dealloc = (destructor)stream_dealloc,
    .tp_repr = (reprfunc)stream_repr,
    .tp_hash = (hashfunc)stream_hash,
    .tp_richcompare = stream_richcompare,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Stream(*, non_blocking=False, null=False, ptr=None)\n--\n\n"
              "A CUDA stream of the current device.  `with Stream() as s:` makes it the\n"
              "thread's current stream (every operation, transfer and allocation runs\n"
              "on it) and restores the previous one on exit.  non_blocking: no implicit\n"
              "synchronisation with the legacy default stream.  null=True gives\n"
              "Stream.null, the legacy default stream.  ptr=N wraps a foreign\n"
              "cudaStream_t without owning it.",
    .tp_methods = stream_methods,
    .tp_getset = stream_getset,
    .tp_new = stream_new,
};

static PyMethodDef event_methods[] = {
    {"record", (PyCFunction)(void (*)(void))event_record, METH_VARARGS | METH_KEYWORDS,
     "record($self, /, stream=None)\n--\n\n"
     "Record the event on `stream` (None: the current stream)."},
    {"synchronize", (PyCFunction)event_synchronize, METH_NOARGS,
     "synchronize($self, /)\n--\n\n"
     "Wait until the work before the last record() is done."},
    {"query", (PyCFunction)event_query, METH_NOARGS,
     "query($self, /)\n--\n\n"
     "True when the work before the last record() is done (never waits)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef event_getset[] = {
    {"ptr", (getter)event_ptr_get, NULL, "The cudaEvent_t as an int.", NULL},
    {"device_id", (getter)event_device_id_get, NULL, "The device the event belongs to.", NULL},
    {"done", (getter)event_done_get, NULL, "True when the recorded work is done.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject GA_EventType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuarr.cuda.Event",
    .tp_basicsize = sizeof(ga_event),
    .tp_dealloc = (destructor)event_dealloc,
    .tp_repr = (reprfunc)event_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Event(block=False, disable_timing=False, interprocess=False)\n--\n\n"
              "A CUDA event of the current device.  block: synchronize() sleeps instead\n"
              "of spinning.  disable_timing: cheaper, but get_elapsed_time refuses it.\n"
              "interprocess: shareable between processes (needs disable_timing=True).",
    .tp_methods = event_methods,
    .tp_getset = event_getset,
    .tp_new = event_new,
};

/* ======================================================== module functions */

static PyObject *
py_is_available(PyObject *self, PyObject *noargs)
{
    if (device_count < 0)
        runtime_init();
    return PyBool_FromLong(device_count > 0 && !forked_child);
}

static PyObject *
py_get_device_count(PyObject *self, PyObject *noargs)
{
    int n = ga_runtime_device_count();
    return n < 0 ? NULL : PyLong_FromLong(n);
}

static PyObject *
py_get_device_id(PyObject *self, PyObject *noargs)
{
    return PyLong_FromLong(tl_device);
}

/* A device number argument naming a device of this machine; -1 with an
 * exception set otherwise. */
static int
device_arg(PyObject *arg)
{
    long dev = PyLong_AsLong(arg);
    if (dev == -1 && PyErr_Occurred())
        return -1;
    if (dev < INT_MIN || dev > INT_MAX)
        dev = INT_MAX;
    return runtime_check_device((int)dev) < 0 ? -1 : (int)dev;
}

static PyObject *
py_set_device_id(PyObject *self, PyObject *arg)
{
    int dev = device_arg(arg);
    if (dev < 0 || ga_runtime_use_device(dev) < 0)
        return NULL;
    tl_device = dev;
    Py_RETURN_NONE;
}

static PyObject *
py_device_synchronize(PyObject *self, PyObject *noargs)
{
    cudaError_t err;
    if (ga_runtime_use_device(tl_device) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    err = cudaDeviceSynchronize();
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess)
        return ga_err_cuda(err, "cudaDeviceSynchronize");
    Py_RETURN_NONE;
}

static PyObject *
py_versions(PyObject *self, PyObject *noargs)
{
    int drv = 0, rt = 0;
    if (device_count < 0)
        runtime_init();
    if (!driver_missing)
        cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    return Py_BuildValue("(ii)", drv, rt);
}

static PyObject *
py_get_current_stream(PyObject *self, PyObject *noargs)
{
    int dev = tl_device;
    cudaStream_t handle = ga_runtime_device_stream(dev);
    PyObject *cur = thread_entry(key_current, 0);
    PyObject *key = cur ? PyLong_FromLong(dev) : NULL;
    PyObject *obj = key ? PyDict_GetItemWithError(cur, key) : NULL;
    Py_XDECREF(key);
    if (obj == NULL && PyErr_Occurred())
        return NULL;
    if (obj != NULL && ((ga_stream *)obj)->handle == handle)
        return Py_NewRef(obj);
    if (handle == NULL)
        return Py_NewRef((PyObject *)stream_null);
    return (PyObject *)stream_wrap(handle, dev, 0);
}

static PyObject *
py_get_elapsed_time(PyObject *self, PyObject *args)
{
    PyObject *objs[2];
    const char *names[2] = {"start_event", "end_event"};
    float ms = 0;
    if (!PyArg_ParseTuple(args, "OO:get_elapsed_time", &objs[0], &objs[1]))
        return NULL;
    if (forked_child) {
        runtime_raise_forked();
        return NULL;
    }
    for (int i = 0; i < 2; ++i) {
        if (!PyObject_TypeCheck(objs[i], &GA_EventType)) {
            PyErr_Format(PyExc_TypeError, "get_elapsed_time: %s must be a gpuarr.cuda.Event, "
                         "not %.100s", names[i], Py_TYPE(objs[i])->tp_name);
            return NULL;
        }
    }
    ga_event *e[2] = {(ga_event *)objs[0], (ga_event *)objs[1]};
    for (int i = 0; i < 2; ++i) {
        if (e[i]->flags & cudaEventDisableTiming) {
            PyErr_Format(PyExc_ValueError, "get_elapsed_time: %s was created with "
                         "disable_timing=True, so it carries no time stamp", names[i]);
            return NULL;
        }
        if (!e[i]->recorded) {
            PyErr_Format(PyExc_ValueError, "get_elapsed_time: %s has not been recorded (call "
                         "its record() first)", names[i]);
            return NULL;
        }
    }
    if (e[0]->device != e[1]->device) {
        PyErr_Format(PyExc_ValueError, "get_elapsed_time: start_event is on device %d and "
                     "end_event on device %d", e[0]->device, e[1]->device);
        return NULL;
    }
    for (int i = 0; i < 2; ++i) {
        cudaError_t err = event_wait_nogil(e[i]->handle);
        if (err != cudaSuccess)
            return ga_err_cuda(err, "cudaEventSynchronize");
    }
    cudaError_t err = cudaEventElapsedTime(&ms, e[0]->handle, e[1]->handle);
    if (err != cudaSuccess)
        return ga_err_cuda(err, "cudaEventElapsedTime");
    return PyFloat_FromDouble(ms);
}

/* getDeviceProperties: the cudaDeviceProp fields by name (CuPy's keys),
 * plus the ones CUDA 13 moved out of the struct, read as attributes. */
typedef struct {
    const char *name;
    size_t offset;
    char kind;               /* 'i' int, 'u' unsigned, 'z' size_t, '2'/'3' int[2]/int[3] */
} prop_field;

#define GA_PROP(field, kind) {#field, offsetof(struct cudaDeviceProp, field), kind}
static const prop_field prop_fields[] = {
    GA_PROP(totalGlobalMem, 'z'), GA_PROP(sharedMemPerBlock, 'z'), GA_PROP(regsPerBlock, 'i'),
    GA_PROP(warpSize, 'i'), GA_PROP(memPitch, 'z'), GA_PROP(maxThreadsPerBlock, 'i'),
    GA_PROP(maxThreadsDim, '3'), GA_PROP(maxGridSize, '3'), GA_PROP(totalConstMem, 'z'),
    GA_PROP(major, 'i'), GA_PROP(minor, 'i'), GA_PROP(textureAlignment, 'z'),
    GA_PROP(texturePitchAlignment, 'z'), GA_PROP(multiProcessorCount, 'i'),
    GA_PROP(integrated, 'i'), GA_PROP(canMapHostMemory, 'i'), GA_PROP(maxTexture1D, 'i'),
    GA_PROP(maxTexture2D, '2'), GA_PROP(maxTexture3D, '3'), GA_PROP(concurrentKernels, 'i'),
    GA_PROP(ECCEnabled, 'i'), GA_PROP(pciBusID, 'i'), GA_PROP(pciDeviceID, 'i'),
    GA_PROP(pciDomainID, 'i'), GA_PROP(tccDriver, 'i'), GA_PROP(asyncEngineCount, 'i'),
    GA_PROP(unifiedAddressing, 'i'), GA_PROP(memoryBusWidth, 'i'), GA_PROP(l2CacheSize, 'i'),
    GA_PROP(persistingL2CacheMaxSize, 'i'), GA_PROP(maxThreadsPerMultiProcessor, 'i'),
    GA_PROP(streamPrioritiesSupported, 'i'), GA_PROP(globalL1CacheSupported, 'i'),
    GA_PROP(localL1CacheSupported, 'i'), GA_PROP(sharedMemPerMultiprocessor, 'z'),
    GA_PROP(regsPerMultiprocessor, 'i'), GA_PROP(managedMemory, 'i'),
    GA_PROP(isMultiGpuBoard, 'i'), GA_PROP(multiGpuBoardGroupID, 'i'),
    GA_PROP(hostNativeAtomicSupported, 'i'), GA_PROP(pageableMemoryAccess, 'i'),
    GA_PROP(concurrentManagedAccess, 'i'), GA_PROP(computePreemptionSupported, 'i'),
    GA_PROP(canUseHostPointerForRegisteredMem, 'i'), GA_PROP(cooperativeLaunch, 'i'),
    GA_PROP(sharedMemPerBlockOptin, 'z'), GA_PROP(pageableMemoryAccessUsesHostPageTables, 'i'),
    GA_PROP(directManagedMemAccessFromHost, 'i'), GA_PROP(maxBlocksPerMultiProcessor, 'i'),
    GA_PROP(accessPolicyMaxWindowSize, 'i'), GA_PROP(reservedSharedMemPerBlock, 'z'),
    GA_PROP(luidDeviceNodeMask, 'u'),
};
#undef GA_PROP

static const struct {
    const char *name;
    enum cudaDeviceAttr attr;
} prop_attrs[] = {
    {"clockRate", cudaDevAttrClockRate},
    {"memoryClockRate", cudaDevAttrMemoryClockRate},
    {"kernelExecTimeoutEnabled", cudaDevAttrKernelExecTimeout},
    {"computeMode", cudaDevAttrComputeMode},
    {"singleToDoublePrecisionPerfRatio", cudaDevAttrSingleToDoublePrecisionPerfRatio},
};

static PyObject *
prop_value(const struct cudaDeviceProp *p, const prop_field *f)
{
    const char *at = (const char *)p + f->offset;
    const int *v = (const int *)at;
    switch (f->kind) {
    case 'z': return PyLong_FromSize_t(*(const size_t *)at);
    case 'u': return PyLong_FromUnsignedLong(*(const unsigned int *)at);
    case '2': return Py_BuildValue("(ii)", v[0], v[1]);
    case '3': return Py_BuildValue("(iii)", v[0], v[1], v[2]);
    default: return PyLong_FromLong(*v);
    }
}

/* d[name] = value (stolen); -1 on error. */
static int
dict_put(PyObject *d, const char *name, PyObject *value)
{
    int rc = value ? PyDict_SetItemString(d, name, value) : -1;
    Py_XDECREF(value);
    return rc;
}

static PyObject *
py_device_properties(PyObject *self, PyObject *arg)
{
    struct cudaDeviceProp p;
    PyObject *d = NULL;
    int dev = device_arg(arg);
    if (dev < 0)
        return NULL;
    GA_CUDA_TRY(cudaGetDeviceProperties(&p, dev));
    d = PyDict_New();
    if (d == NULL)
        goto fail;
    if (dict_put(d, "name", PyBytes_FromStringAndSize(p.name, strnlen(p.name, sizeof(p.name)))) < 0)
        goto fail;
    for (size_t i = 0; i < sizeof(prop_fields) / sizeof(prop_fields[0]); ++i)
        if (dict_put(d, prop_fields[i].name, prop_value(&p, &prop_fields[i])) < 0)
            goto fail;
    for (size_t i = 0; i < sizeof(prop_attrs) / sizeof(prop_attrs[0]); ++i) {
        int v = 0;
        GA_CUDA_TRY(cudaDeviceGetAttribute(&v, prop_attrs[i].attr, dev));
        if (dict_put(d, prop_attrs[i].name, PyLong_FromLong(v)) < 0)
            goto fail;
    }
    if (dict_put(d, "uuid", PyBytes_FromStringAndSize(p.uuid.bytes, sizeof(p.uuid.bytes))) < 0 ||
        dict_put(d, "luid", PyBytes_FromStringAndSize(p.luid, sizeof(p.luid))) < 0)
        goto fail;
    return d;
fail:
    Py_XDECREF(d);
    return NULL;
}

static PyObject *
py_device_attribute(PyObject *self, PyObject *args)
{
    int attr, v = 0;
    PyObject *dev_obj;
    if (!PyArg_ParseTuple(args, "iO:deviceGetAttribute", &attr, &dev_obj))
        return NULL;
    int dev = device_arg(dev_obj);
    if (dev < 0)
        return NULL;
    GA_CUDA_TRY(cudaDeviceGetAttribute(&v, (enum cudaDeviceAttr)attr, dev));
    return PyLong_FromLong(v);
fail:
    return NULL;
}

static PyObject *
py_mem_get_info(PyObject *self, PyObject *noargs)
{
    size_t free_b = 0, total_b = 0;
    if (ga_runtime_use_device(tl_device) < 0)
        return NULL;
    GA_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    return Py_BuildValue("(nn)", (Py_ssize_t)free_b, (Py_ssize_t)total_b);
fail:
    return NULL;
}

static PyObject *
py_spin(PyObject *self, PyObject *arg)
{
    long long cycles = PyLong_AsLongLong(arg);
    if (cycles == -1 && PyErr_Occurred())
        return NULL;
    if (cycles < 0) {
        PyErr_SetString(PyExc_ValueError, "_spin: cycles must not be negative");
        return NULL;
    }
    if (ga_runtime_use_device(tl_device) < 0)
        return NULL;
    cudaStream_t stream = ga_runtime_device_stream(tl_device);
    GA_LAUNCH_TRY(ga_launch_spin((int64_t)cycles, stream), stream);
    Py_RETURN_NONE;
fail:
    return NULL;
}

static PyMethodDef runtime_functions[] = {
    {"is_available", py_is_available, METH_NOARGS,
     "is_available($module, /)\n--\n\n"
     "True when a CUDA device can be used (never raises)."},
    {"get_device_count", py_get_device_count, METH_NOARGS,
     "get_device_count($module, /)\n--\n\n"
     "Number of CUDA devices; raises NoDeviceError when none can be used."},
    {"get_device_id", py_get_device_id, METH_NOARGS,
     "get_device_id($module, /)\n--\n\n"
     "The calling thread's current device."},
    {"_set_device_id", py_set_device_id, METH_O, "Make a device current for this thread."},
    {"device_synchronize", py_device_synchronize, METH_NOARGS,
     "device_synchronize($module, /)\n--\n\n"
     "Wait for all work on the current device."},
    {"_versions", py_versions, METH_NOARGS, "(driver version, runtime version) as integers."},
    {"get_current_stream", py_get_current_stream, METH_NOARGS,
     "get_current_stream($module, /)\n--\n\n"
     "The calling thread's current Stream on the current device (Stream.null unless one was "
     "entered or used)."},
    {"get_elapsed_time", py_get_elapsed_time, METH_VARARGS,
     "get_elapsed_time($module, start_event, end_event, /)\n--\n\n"
     "Milliseconds between two recorded events of one device (waits for both to complete first)."},
    {"_device_properties", py_device_properties, METH_O,
     "The properties of a device as a dict (cudaDeviceProp's field names)."},
    {"_device_attribute", py_device_attribute, METH_VARARGS,
     "_device_attribute(attr, device): cudaDeviceGetAttribute."},
    {"_mem_get_info", py_mem_get_info, METH_NOARGS,
     "(free, total) bytes of the current device."},
    {"_spin", py_spin, METH_O,
     "_spin(cycles)\n\nTest helper: a one-thread kernel that busy-waits `cycles` SM clock "
     "cycles on the current stream."},
    {NULL, NULL, 0, NULL},
};

/* Device attribute numbers the Python layer names (gpuarr.cuda.runtime). */
static int
runtime_add_attr_constants(PyObject *m)
{
    static const struct {
        const char *name;
        int value;
    } attrs[] = {
        {"cudaDevAttrMaxThreadsPerBlock", cudaDevAttrMaxThreadsPerBlock},
        {"cudaDevAttrWarpSize", cudaDevAttrWarpSize},
        {"cudaDevAttrClockRate", cudaDevAttrClockRate},
        {"cudaDevAttrMultiProcessorCount", cudaDevAttrMultiProcessorCount},
        {"cudaDevAttrMemoryClockRate", cudaDevAttrMemoryClockRate},
        {"cudaDevAttrGlobalMemoryBusWidth", cudaDevAttrGlobalMemoryBusWidth},
        {"cudaDevAttrL2CacheSize", cudaDevAttrL2CacheSize},
        {"cudaDevAttrComputeCapabilityMajor", cudaDevAttrComputeCapabilityMajor},
        {"cudaDevAttrComputeCapabilityMinor", cudaDevAttrComputeCapabilityMinor},
        {"cudaDevAttrMaxSharedMemoryPerBlock", cudaDevAttrMaxSharedMemoryPerBlock},
    };
    PyObject *d = PyDict_New();
    if (d == NULL)
        return -1;
    for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); ++i) {
        if (dict_put(d, attrs[i].name, PyLong_FromLong(attrs[i].value)) < 0) {
            Py_DECREF(d);
            return -1;
        }
    }
    int rc = PyModule_AddObjectRef(m, "_device_attrs", d);
    Py_DECREF(d);
    return rc;
}

int
ga_runtime_init(PyObject *m)
{
    if (PyType_Ready(&GA_StreamType) < 0 || PyType_Ready(&GA_EventType) < 0)
        return -1;
    if (ga_runtime_at_fork_child(runtime_after_fork_child) < 0)
        return -1;
    key_current = PyUnicode_InternFromString("gpuarr.cuda.current_streams");
    key_stack = PyUnicode_InternFromString("gpuarr.cuda.stream_stack");
    stream_null = stream_wrap(NULL, -1, 0);
    if (key_current == NULL || key_stack == NULL || stream_null == NULL)
        return -1;
    if (PyDict_SetItemString(GA_StreamType.tp_dict, "null", (PyObject *)stream_null) < 0)
        return -1;
    PyType_Modified(&GA_StreamType);
    if (PyModule_AddObjectRef(m, "Stream", (PyObject *)&GA_StreamType) < 0 ||
        PyModule_AddObjectRef(m, "Event", (PyObject *)&GA_EventType) < 0 ||
        runtime_add_attr_constants(m) < 0)
        return -1;
    return PyModule_AddFunctions(m, runtime_functions);
}
