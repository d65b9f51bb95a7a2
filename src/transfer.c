/*
 * transfer.c -- moving arrays between host and device.
 *
 * A plain cudaMemcpy from pageable memory runs at a fraction of the bus
 * speed: the driver copies through its own small staging buffer, one piece
 * at a time.  gpuarr does better in three ways:
 *
 * - Host -> device, large: the host data is copied into a ring of pinned
 *   staging slots by several threads at once (a persistent worker pool),
 *   and each slot's DMA to the device overlaps the filling of the next.
 *   The ring is reused across calls; each slot's event says when its last
 *   DMA finished.
 * - Device -> host into a new array, large: the result is a NumPy array
 *   whose memory comes from the pinned pool (its base is a PinnedMemory
 *   object that returns the block to the pool), so the DMA writes it
 *   directly at full bus speed and no page faults are taken.  When the
 *   pinned pool is at its cap, the staged path below is used instead.
 * - Device -> host into an existing (pageable) array: DMA into the ring,
 *   parallel copies out of it, overlapped.
 *
 * Small transfers use cudaMemcpyAsync directly.  Non-contiguous or
 * byte-swapped host arrays are made contiguous and native by NumPy first;
 * non-contiguous device arrays are made contiguous on the device first.
 * The GIL is released while bytes move.
 */
#include "gpuarr.h"

#include <pthread.h>
#include <unistd.h>

#define GA_STAGE_SLOTS 4
#define GA_STAGE_CHUNK ((size_t)8 << 20)
#define GA_SMALL_COPY ((size_t)1 << 20)
#define GA_MAX_WORKERS 12

/* ------------------------------------------ parallel memcpy workers ------ */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t start, done;
    int nworkers;          /* threads besides the caller */
    unsigned generation;
    int remaining;
    int nparts;
    char *dst;
    const char *src;
    size_t n, part;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};

static void
copy_part(int k)
{
    size_t off = (size_t)k * pool.part;
    if (off < pool.n) {
        size_t len = pool.n - off < pool.part ? pool.n - off : pool.part;
        memcpy(pool.dst + off, pool.src + off, len);
    }
}

static void *
worker_main(void *arg)
{
    int k = (int)(intptr_t)arg;
    unsigned seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool.lock);
        while (pool.generation == seen)
            pthread_cond_wait(&pool.start, &pool.lock);
        seen = pool.generation;
        int active = k < pool.nparts;
        pthread_mutex_unlock(&pool.lock);
        if (active)
            copy_part(k);
        pthread_mutex_lock(&pool.lock);
        if (--pool.remaining == 0)
            pthread_cond_signal(&pool.done);
        pthread_mutex_unlock(&pool.lock);
    }
    return NULL;
}

static void
workers_start(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int n = (int)(ncpu - 1);
    if (n > GA_MAX_WORKERS)
        n = GA_MAX_WORKERS;
    for (int k = 1; k <= n; ++k) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, worker_main, (void *)(intptr_t)k) == 0)
            pool.nworkers++;
        pthread_attr_destroy(&attr);
    }
}

/* memcpy split over the worker pool (call without the GIL). */
static void
parallel_memcpy(char *dst, const char *src, size_t n)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, workers_start);
    int parts = (int)(n / ((size_t)1 << 20));
    if (parts > pool.nworkers + 1)
        parts = pool.nworkers + 1;
    if (parts <= 1) {
        memcpy(dst, src, n);
        return;
    }
    pthread_mutex_lock(&pool.lock);
    pool.dst = dst;
    pool.src = src;
    pool.n = n;
    pool.nparts = parts;
    pool.part = (n + parts - 1) / parts;
    pool.part = (pool.part + 63) & ~(size_t)63;
    pool.remaining = pool.nworkers;
    pool.generation++;
    pthread_cond_broadcast(&pool.start);
    pthread_mutex_unlock(&pool.lock);
    copy_part(0);
    pthread_mutex_lock(&pool.lock);
    while (pool.remaining > 0)
        pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
}

/* ------------------------------------------ the staging ring ------------- */

typedef struct {
    char *buf[GA_STAGE_SLOTS];
    cudaEvent_t done[GA_STAGE_SLOTS];
    int used[GA_STAGE_SLOTS];
    int device;
} stage_ring;

static stage_ring rings[64];
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;

/* The device's ring (allocated on first use).  Held under ring_lock by the
 * caller for the whole transfer, so concurrent transfers take turns. */
static cudaError_t
ring_get(int device, stage_ring **out)
{
    stage_ring *r = &rings[device];
    /* slot by slot, so a failed allocation is retried by the next call */
    for (int i = 0; i < GA_STAGE_SLOTS; ++i) {
        cudaError_t err = cudaSuccess;
        if (r->buf[i] == NULL) {
            char *buf = NULL;
            err = cudaHostAlloc((void **)&buf, GA_STAGE_CHUNK, cudaHostAllocPortable);
            r->buf[i] = err == cudaSuccess ? buf : NULL;
        }
        if (err == cudaSuccess && r->done[i] == NULL) {
            cudaEvent_t done = NULL;
            err = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
            r->done[i] = err == cudaSuccess ? done : NULL;
        }
        if (err != cudaSuccess)
            return err;
    }
    *out = r;
    return cudaSuccess;
}

/* Py_AtExit: the rings' pinned buffers and events go back at interpreter
 * exit, after the last Python code and before the CUDA runtime's own
 * teardown, so a leak checker (compute-sanitizer --leak-check full) sees
 * every allocation freed.  Nothing in a child forked after CUDA was
 * initialised (its CUDA calls would fail or hang). */
static void
transfer_release_rings(void)
{
    /* A daemon thread may still be inside a transfer (it stops only when it
     * next takes the GIL): then the rings stay, a leak at exit rather than
     * a use after free. */
    if (ga_runtime_forked() || pthread_mutex_trylock(&ring_lock) != 0)
        return;
    for (int d = 0; d < (int)(sizeof(rings) / sizeof(rings[0])); ++d)
        for (int i = 0; i < GA_STAGE_SLOTS; ++i) {
            if (rings[d].done[i] != NULL) {
                if (rings[d].used[i])  /* wait for the slot's last copy */
                    (void)cudaEventSynchronize(rings[d].done[i]);
                (void)cudaEventDestroy(rings[d].done[i]);
            }
            if (rings[d].buf[i] != NULL)
                (void)cudaFreeHost(rings[d].buf[i]);
            rings[d].done[i] = NULL;
            rings[d].buf[i] = NULL;
            rings[d].used[i] = 0;
        }
    pthread_mutex_unlock(&ring_lock);
}

/* Host (pageable) -> device through the ring.  Returns once the host data
 * has been read; the last DMAs may still be in flight on `stream`. */
static cudaError_t
h2d_staged(char *dst, const char *src, size_t n, int device, cudaStream_t stream)
{
    stage_ring *r;
    cudaError_t err;
    pthread_mutex_lock(&ring_lock);
    err = ring_get(device, &r);
    for (size_t off = 0, c = 0; err == cudaSuccess && off < n; off += GA_STAGE_CHUNK, ++c) {
        int s = (int)(c % GA_STAGE_SLOTS);
        size_t len = n - off < GA_STAGE_CHUNK ? n - off : GA_STAGE_CHUNK;
        if (r->used[s] && (err = cudaEventSynchronize(r->done[s])) != cudaSuccess)
            break;
        parallel_memcpy(r->buf[s], src + off, len);
        err = cudaMemcpyAsync(dst + off, r->buf[s], len, cudaMemcpyHostToDevice, stream);
        if (err == cudaSuccess)
            err = cudaEventRecord(r->done[s], stream);
        r->used[s] = 1;
    }
    pthread_mutex_unlock(&ring_lock);
    return err;
}

/* Device -> host (pageable) through the ring; complete on return. */
static cudaError_t
d2h_staged(char *dst, const char *src, size_t n, int device, cudaStream_t stream)
{
    stage_ring *r;
    cudaError_t err;
    size_t nchunks = (n + GA_STAGE_CHUNK - 1) / GA_STAGE_CHUNK;
    pthread_mutex_lock(&ring_lock);
    err = ring_get(device, &r);
    /* Keep up to GA_STAGE_SLOTS DMAs in flight ahead of the copy-out. */
    size_t issued = 0;
    for (size_t c = 0; err == cudaSuccess && c < nchunks; ++c) {
        while (err == cudaSuccess && issued < nchunks && issued < c + GA_STAGE_SLOTS) {
            int s = (int)(issued % GA_STAGE_SLOTS);
            size_t off = issued * GA_STAGE_CHUNK;
            size_t len = n - off < GA_STAGE_CHUNK ? n - off : GA_STAGE_CHUNK;
            if (r->used[s])
                err = cudaEventSynchronize(r->done[s]);
            if (err == cudaSuccess)
                err = cudaMemcpyAsync(r->buf[s], src + off, len, cudaMemcpyDeviceToHost, stream);
            if (err == cudaSuccess)
                err = cudaEventRecord(r->done[s], stream);
            r->used[s] = 1;
            issued++;
        }
        if (err != cudaSuccess)
            break;
        int s = (int)(c % GA_STAGE_SLOTS);
        size_t off = c * GA_STAGE_CHUNK;
        size_t len = n - off < GA_STAGE_CHUNK ? n - off : GA_STAGE_CHUNK;
        err = cudaEventSynchronize(r->done[s]);
        if (err == cudaSuccess)
            parallel_memcpy(dst + off, r->buf[s], len);
    }
    pthread_mutex_unlock(&ring_lock);
    return err;
}

static int
host_is_pinned(const void *p)
{
    struct cudaPointerAttributes attr;
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return attr.type == cudaMemoryTypeHost;
}

/* ------------------------------------------ host -> device --------------- */

/* Copy n bytes from host memory to device memory on `stream` (GIL held on
 * entry, released while copying).  0 / -1. */
static int
copy_h2d(char *dst, const char *src, size_t n, int device, cudaStream_t stream)
{
    cudaError_t err;
    if (n == 0)
        return 0;
    int pinned = host_is_pinned(src);
    if (n <= GA_SMALL_COPY || pinned) {
        Py_BEGIN_ALLOW_THREADS
        err = cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream);
        Py_END_ALLOW_THREADS
        /* The caller may change or free its array as soon as this returns:
         * a pageable source has been staged by the driver already, a pinned
         * one (of any size) is read by the DMA itself, so wait for it. */
        if (err == cudaSuccess && pinned) {
            Py_BEGIN_ALLOW_THREADS
            err = cudaStreamSynchronize(stream);
            Py_END_ALLOW_THREADS
        }
    } else {
        Py_BEGIN_ALLOW_THREADS
        err = h2d_staged(dst, src, n, device, stream);
        Py_END_ALLOW_THREADS
    }
    if (err != cudaSuccess) {
        ga_err_cuda(err, "copying host to device");
        return -1;
    }
    return 0;
}

ga_array *
ga_transfer_from_numpy(PyArrayObject *host, PyArray_Descr *descr, int device)
{
    PyArrayObject *src = NULL;
    ga_array *dev = NULL, *cast = NULL;
    PyArray_Descr *hd = PyArray_DESCR(host);
    int code = ga_dtype_code(hd, NULL);
    if (code < 0)
        goto fail;
    /* Contiguous (C or F) and native byte order on the host. */
    PyArray_Descr *native = ga_dtype_from_code(code);
    int fortran = PyArray_IS_F_CONTIGUOUS(host) && !PyArray_IS_C_CONTIGUOUS(host);
    src = (PyArrayObject *)PyArray_FromAny((PyObject *)host, native, 0, 0,
                                           (fortran ? NPY_ARRAY_F_CONTIGUOUS
                                                    : NPY_ARRAY_C_CONTIGUOUS) | NPY_ARRAY_ALIGNED,
                                           NULL);
    if (src == NULL)
        goto fail;
    Py_INCREF(PyArray_DESCR(src));
    dev = ga_array_empty(PyArray_NDIM(src), PyArray_DIMS(src), PyArray_DESCR(src), fortran, device);
    if (dev == NULL)
        goto fail;
    if (copy_h2d(dev->data, PyArray_DATA(src), (size_t)PyArray_NBYTES(src), device,
                 ga_runtime_device_stream(device)) < 0)
        goto fail;
    Py_CLEAR(src);
    if (descr != NULL && !PyArray_EquivTypes(descr, dev->descr)) {
        cast = ga_array_copy_as(dev, descr, fortran);
        descr = NULL;
        Py_DECREF(dev);
        return cast;
    }
    Py_XDECREF(descr);
    return dev;
fail:
    Py_XDECREF(descr);
    Py_XDECREF(src);
    Py_XDECREF(dev);
    return NULL;
}

/* ------------------------------------------ device -> host --------------- */

/* The copy goes through a block of the pinned pool: a copy into pageable
 * memory is staged by the driver and costs several microseconds more. */
int
ga_read_small(void *host, const void *dev, size_t nbytes, cudaStream_t stream, const char *what)
{
    cudaError_t err;
    void *pinned = ga_pinned_malloc(nbytes);
    if (pinned == NULL)
        return -1;
    Py_BEGIN_ALLOW_THREADS
    err = cudaMemcpyAsync(pinned, dev, nbytes, cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream);
    Py_END_ALLOW_THREADS
    if (err == cudaSuccess)
        memcpy(host, pinned, nbytes);
    ga_pinned_free(pinned, nbytes);
    if (err != cudaSuccess) {
        ga_err_cuda(err, what);
        return -1;
    }
    return 0;
}

PyObject *
ga_array_scalar(ga_array *a, const char *what)
{
    ga_kscalar buf;
    if (ga_array_size(a) != 1) {
        if (what == NULL)
            PyErr_SetString(PyExc_ValueError, "can only convert an array of size 1 to a Python "
                            "scalar");
        else
            PyErr_Format(PyExc_TypeError, "only 0-dimensional arrays can be converted to "
                         "Python scalars (%s)", what);
        return NULL;
    }
    if (ga_runtime_use_device(a->device) < 0 ||
        ga_read_small(buf.v.bytes, a->data, ga_array_itemsize(a), ga_runtime_device_stream(a->device),
                      "reading an element") < 0)
        return NULL;
    return PyArray_Scalar(buf.v.bytes, a->descr, NULL);
}

static size_t pinned_result_cap = 0;

static int
use_pinned_result(size_t n)
{
    if (n < ((size_t)64 << 10))
        return 0;
    if (pinned_result_cap == 0) {
        long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
        size_t ram = pages > 0 && psize > 0 ? (size_t)pages * (size_t)psize : ((size_t)8 << 30);
        pinned_result_cap = ram / 4;
    }
    return n <= pinned_result_cap;
}

/* A new NumPy array of `a`'s shape/dtype/order whose memory is a pinned
 * block, or NULL with no exception when pinned memory is not available. */
static PyArrayObject *
new_pinned_ndarray(ga_array *a, int fortran, size_t nbytes)
{
    void *ptr = ga_pinned_malloc(nbytes);
    if (ptr == NULL) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *owner = ga_pinned_owner_new(ptr, nbytes);
    if (owner == NULL)
        return NULL;
    Py_INCREF(a->descr);
    npy_intp strides[NPY_MAXDIMS];
    npy_intp s = ga_array_itemsize(a);
    for (int k = 0; k < a->ndim; ++k) {
        int i = fortran ? k : a->ndim - 1 - k;
        strides[i] = s;
        s *= a->shape[i] ? a->shape[i] : 1;
    }
    PyArrayObject *out = (PyArrayObject *)PyArray_NewFromDescr(
        &PyArray_Type, a->descr, a->ndim, a->shape, strides, ptr, NPY_ARRAY_WRITEABLE, NULL);
    if (out == NULL || PyArray_SetBaseObject(out, owner) < 0) {
        Py_XDECREF(out);
        if (out == NULL)
            Py_DECREF(owner);
        return NULL;
    }
    return out;
}

PyObject *
ga_transfer_to_numpy(ga_array *a, PyArrayObject *out, cudaStream_t stream, int blocking)
{
    ga_array *contig = NULL;
    PyArrayObject *result = NULL;
    cudaError_t err = cudaSuccess;
    int staged = 0, pinned = 0;
    if (stream == NULL)
        stream = ga_runtime_device_stream(a->device);

    if (ga_runtime_use_device(a->device) < 0)
        return NULL;
    int fortran = (a->flags & GA_F_CONTIGUOUS) && !(a->flags & GA_C_CONTIGUOUS);
    if (!(a->flags & (GA_C_CONTIGUOUS | GA_F_CONTIGUOUS))) {
        contig = ga_array_copy_as(a, NULL, 0);
        if (contig == NULL)
            return NULL;
        a = contig;
        fortran = 0;
    }
    size_t nbytes = (size_t)ga_array_size(a) * ga_array_itemsize(a);

    if (out != NULL) {
        int ok_layout = fortran ? PyArray_IS_F_CONTIGUOUS(out) : PyArray_IS_C_CONTIGUOUS(out);
        if (PyArray_NDIM(out) != a->ndim ||
            !PyArray_CompareLists(PyArray_DIMS(out), a->shape, a->ndim)) {
            PyErr_SetString(PyExc_ValueError, "out: the shape of `out` differs from the array's");
            goto fail;
        }
        if (!PyArray_ISWRITEABLE(out)) {
            PyErr_SetString(PyExc_ValueError, "out: the output array is read-only");
            goto fail;
        }
        if (!ok_layout || !PyArray_EquivTypes(PyArray_DESCR(out), a->descr) ||
            !PyArray_ISALIGNED(out)) {
            /* Copy into a temporary of the right layout, then let NumPy convert. */
            PyObject *tmp = ga_transfer_to_numpy(a, NULL, stream, 1);
            if (tmp == NULL || PyArray_CopyInto(out, (PyArrayObject *)tmp) < 0) {
                Py_XDECREF(tmp);
                goto fail;
            }
            Py_DECREF(tmp);
            Py_XDECREF(contig);
            Py_INCREF(out);
            return (PyObject *)out;
        }
        result = out;
        Py_INCREF(out);
        staged = nbytes > GA_SMALL_COPY && !host_is_pinned(PyArray_DATA(out));
    } else {
        if (use_pinned_result(nbytes))
            result = new_pinned_ndarray(a, fortran, nbytes);
        if (result != NULL) {
            pinned = 1;
        } else {
            if (PyErr_Occurred())
                goto fail;
            Py_INCREF(a->descr);
            result = (PyArrayObject *)PyArray_Empty(a->ndim, a->shape, a->descr, fortran);
            if (result == NULL)
                goto fail;
            staged = nbytes > GA_SMALL_COPY;
        }
    }

    Py_BEGIN_ALLOW_THREADS
    if (staged) {
        err = d2h_staged(PyArray_DATA(result), a->data, nbytes, a->device, stream);
    } else if (nbytes > 0) {
        err = cudaMemcpyAsync(PyArray_DATA(result), a->data, nbytes, cudaMemcpyDeviceToHost,
                              stream);
        if (err == cudaSuccess && (blocking || !pinned))
            err = cudaStreamSynchronize(stream);
    }
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess) {
        ga_err_cuda(err, "copying device to host");
        goto fail;
    }
    Py_XDECREF(contig);
    return (PyObject *)result;
fail:
    Py_XDECREF(contig);
    Py_XDECREF(result);
    return NULL;
}

/* pthread_atfork child handler: the staging rings' and copy workers' locks
 * start unlocked in the child, whose only thread is the forking one (the
 * workers are not there: transfers in a child forked after CUDA was
 * initialised fail before reaching them). */
static void
transfer_after_fork_child(void)
{
    pthread_mutex_init(&ring_lock, NULL);
    pthread_mutex_init(&pool.lock, NULL);
}

int
ga_transfer_init(PyObject *m)
{
    if (ga_runtime_at_fork_child(transfer_after_fork_child) < 0)
        return -1;
    if (Py_AtExit(transfer_release_rings) < 0) {
        PyErr_SetString(PyExc_RuntimeError, "gpuarr: no room to register an exit function");
        return -1;
    }
    return 0;
}
