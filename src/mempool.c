/*
 * mempool.c -- caching allocators for device memory and pinned host memory.
 *
 * cudaMalloc/cudaFree cost microseconds to milliseconds and cudaFree
 * synchronises the device, so freed blocks are kept for reuse:
 *
 * - Sizes are rounded to a size class: multiples of 512 bytes up to 1 MiB,
 *   above that multiples of 1/8 of the size's power of two (at most 12.5%
 *   waste).  A request is served from a cached block of exactly its class.
 * - Device blocks are cached per (size class, stream).  A block freed on a
 *   stream is only handed out again on that stream, so stream order alone
 *   guarantees the previous user's kernels are done with it.
 * - When cudaMalloc fails, or the pool's limit would be passed, every cached
 *   block of that device is released (after a device synchronise) and the
 *   allocation is retried once; then OutOfMemoryError is raised with the
 *   bytes requested, in use and the limit.  The pool stays usable.
 * - free_all_blocks() hands cached blocks back to CUDA; until then tools
 *   such as nvidia-smi keep counting them as used.
 * - GPUARR_POOL=0 in the environment bypasses caching (every free is a
 *   cudaFree), so compute-sanitizer sees each allocation, and each block is
 *   exactly the bytes requested (no size class), so it flags an access past
 *   an array's end.  The statistics keep their meaning: used_bytes is the
 *   bytes of live allocations made through gpuarr, total_bytes the bytes
 *   held from CUDA, which is the same number since nothing is cached;
 *   n_free_blocks and free_bytes stay 0 and free_all_blocks has nothing to
 *   release.  The limit applies to the live bytes.
 * - A test hook, _fail_allocation(n), makes the n-th allocation from then
 *   on fail as if the device were out of memory (fault-injection tests).
 *
 * Ownership: an array that owns its memory holds (ptr, size, stream) and
 * returns it with ga_pool_free when it dies.  The pool owns only the cached
 * (free) blocks.  All pool state is guarded by one mutex per pool, because
 * the GIL is released around cudaMalloc.  In a child forked after CUDA was
 * initialised, freeing is a no-op: the blocks belong to the parent's
 * context (runtime.c).
 */
#include "gpuarr.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GA_MAX_POOLS 64

/* --------------------------------------------------- the block cache ----- */

typedef struct cache_node {
    void *ptr;
    struct cache_node *next;
} cache_node;

typedef struct {
    size_t size;
    uintptr_t stream;
    cache_node *head;
} cache_bin;

typedef struct {
    pthread_mutex_t lock;
    cache_bin *bins;       /* open addressing on (size, stream) */
    size_t nbins;          /* capacity, a power of two (0 before first use) */
    size_t nused;          /* occupied bins */
    size_t used_bytes;     /* handed out and not yet freed */
    size_t total_bytes;    /* used + cached */
    Py_ssize_t n_free;     /* cached blocks */
    size_t limit;          /* 0: the device's memory */
    int configured;        /* limit read from the environment */
} ga_cache;

static size_t
cache_round(size_t n)
{
    if (n == 0)
        return 0;
    if (n <= ((size_t)1 << 20))
        return (n + 511) & ~(size_t)511;
    size_t p = (size_t)1 << (63 - __builtin_clzll((unsigned long long)n));
    size_t step = p / 8;
    return (n + step - 1) / step * step;
}

static size_t
bin_hash(size_t size, uintptr_t stream)
{
    uint64_t h = (uint64_t)size * 0x9E3779B97F4A7C15ull ^ (uint64_t)stream * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29));
}

static cache_bin *
cache_find(ga_cache *c, size_t size, uintptr_t stream, int create)
{
    if (c->nbins == 0 || (create && 2 * (c->nused + 1) > c->nbins)) {
        if (!create)
            return NULL;
        size_t nn = c->nbins ? 2 * c->nbins : 64;
        cache_bin *nb = calloc(nn, sizeof(cache_bin));
        if (nb == NULL)
            return NULL;
        for (size_t i = 0; i < c->nbins; ++i) {
            if (c->bins[i].size == 0)
                continue;
            size_t j = bin_hash(c->bins[i].size, c->bins[i].stream) & (nn - 1);
            while (nb[j].size != 0)
                j = (j + 1) & (nn - 1);
            nb[j] = c->bins[i];
        }
        free(c->bins);
        c->bins = nb;
        c->nbins = nn;
    }
    size_t j = bin_hash(size, stream) & (c->nbins - 1);
    while (c->bins[j].size != 0) {
        if (c->bins[j].size == size && c->bins[j].stream == stream)
            return &c->bins[j];
        j = (j + 1) & (c->nbins - 1);
    }
    if (!create)
        return NULL;
    c->bins[j].size = size;
    c->bins[j].stream = stream;
    c->nused++;
    return &c->bins[j];
}

/* Pop a cached block of exactly `size` for `stream`; NULL on a miss. */
static void *
cache_pop(ga_cache *c, size_t size, uintptr_t stream)
{
    cache_bin *b = cache_find(c, size, stream, 0);
    if (b == NULL || b->head == NULL)
        return NULL;
    cache_node *node = b->head;
    void *ptr = node->ptr;
    b->head = node->next;
    free(node);
    c->n_free--;
    c->used_bytes += size;
    return ptr;
}

/* Keep a freed block; 0, or -1 when bookkeeping memory ran out (the caller
 * then frees the block for real). */
static int
cache_push(ga_cache *c, void *ptr, size_t size, uintptr_t stream)
{
    cache_bin *b = cache_find(c, size, stream, 1);
    cache_node *node = b ? malloc(sizeof(cache_node)) : NULL;
    if (node == NULL)
        return -1;
    node->ptr = ptr;
    node->next = b->head;
    b->head = node;
    c->n_free++;
    c->used_bytes -= size;
    return 0;
}

/* Release every cached block through `release`; returns the first error. */
static cudaError_t
cache_release_all(ga_cache *c, cudaError_t (*release)(void *))
{
    cudaError_t first = cudaSuccess;
    for (size_t i = 0; i < c->nbins; ++i) {
        cache_node *node = c->bins[i].head;
        while (node != NULL) {
            cache_node *next = node->next;
            cudaError_t err = release(node->ptr);
            if (err != cudaSuccess && first == cudaSuccess)
                first = err;
            c->total_bytes -= c->bins[i].size;
            c->n_free--;
            free(node);
            node = next;
        }
        c->bins[i].head = NULL;
    }
    return first;
}

/* ------------------------------------------------- device pools ---------- */

static ga_cache device_pools[GA_MAX_POOLS];
static ga_cache pinned_pool;
static int pool_disabled = -1;

static void
pools_setup(void)
{
    for (int i = 0; i < GA_MAX_POOLS; ++i)
        pthread_mutex_init(&device_pools[i].lock, NULL);
    pthread_mutex_init(&pinned_pool.lock, NULL);
    const char *env = getenv("GPUARR_POOL");
    pool_disabled = env != NULL && env[0] == '0';
}

/* The bytes allocated and accounted for a request: its size class, or with
 * caching off the request itself, so compute-sanitizer bounds each block
 * exactly where the array ends. */
static size_t
block_size(size_t n)
{
    return pool_disabled ? n : cache_round(n);
}

/* Parse a limit: bytes ("1073741824", "1e9") or a percentage of `total`
 * ("50%").  Returns 0 with *out set, or -1 with ValueError naming `what`. */
static int
parse_limit(const char *text, size_t total, const char *what, size_t *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    int percent = 0, number = end != text;
    while (end && *end == ' ')
        end++;
    if (end && *end == '%') {
        percent = 1;
        end++;
    }
    while (end && *end == ' ')
        end++;
    if (!number || end == NULL || *end != '\0' || !(v >= 0) || v > 1.8e19 ||
        (percent && v > 100)) {
        PyErr_Format(PyExc_ValueError, "%s='%s' is not a number of bytes or a percentage of "
                     "the device's memory such as '50%%'", what, text);
        return -1;
    }
    *out = percent ? (size_t)((double)total * v / 100.0) : (size_t)v;
    return 0;
}

static size_t
device_total_memory(int device)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return total_b;
}

/* Read GPUARR_GPU_MEMORY_LIMIT once per device pool (called with the GIL,
 * the device current). */
static int
pool_configure(ga_cache *c, int device)
{
    if (c->configured)
        return 0;
    const char *env = getenv("GPUARR_GPU_MEMORY_LIMIT");
    if (env != NULL && env[0] != '\0') {
        size_t lim = 0;
        if (parse_limit(env, device_total_memory(device), "GPUARR_GPU_MEMORY_LIMIT", &lim) < 0)
            return -1;
        c->limit = lim;
    }
    c->configured = 1;
    return 0;
}

static cudaError_t release_device(void *p) { return cudaFree(p); }
static cudaError_t release_pinned(void *p) { return cudaFreeHost(p); }

/* Synchronise the device and free its cached blocks (lock held). */
static cudaError_t
pool_release_locked(ga_cache *c)
{
    if (c->n_free == 0)
        return cudaSuccess;
    cudaError_t err = cudaDeviceSynchronize();
    cudaError_t err2 = cache_release_all(c, release_device);
    return err != cudaSuccess ? err : err2;
}

/* Raise OutOfMemoryError for `request` bytes, `used` of them in use (read
 * under the lock by the caller, which has released it: making an exception
 * can run the garbage collector, and a deallocation it runs takes the lock
 * again in ga_pool_free); `injected` marks a failure made by the
 * fault-injection hook. */
static void
raise_oom(const ga_cache *c, size_t request, int device, size_t used, int injected)
{
    size_t limit = c->limit ? c->limit : device_total_memory(device);
    PyErr_Format(GA_OutOfMemoryError,
                 "out of memory on device %d allocating %zu bytes (%zu bytes in use by arrays, "
                 "limit %zu bytes%s)%s", device, request, used, limit,
                 c->limit ? ", set with set_limit or GPUARR_GPU_MEMORY_LIMIT" : ", the device's memory",
                 injected ? " [injected by gpuarr.cuda._fail_allocation]" : "");
}

/* Fault injection (tests only): when fail_countdown > 0, the allocation
 * that brings it to 0 fails as if the device were out of memory.  Counted
 * over every device pool, cache hits included; read and written with the
 * GIL held (ga_pool_malloc is called with it). */
static long fail_countdown = 0;
static long faults_injected = 0;

/* The pool's bytes in use, read under its lock. */
static size_t
pool_used(ga_cache *c)
{
    pthread_mutex_lock(&c->lock);
    size_t used = c->used_bytes;
    pthread_mutex_unlock(&c->lock);
    return used;
}

/* Called with the GIL held, which also serialises pool_configure and the
 * fault-injection countdown.  No Python error is raised while c->lock is
 * held (see raise_oom). */
void *
ga_pool_malloc(int device, size_t nbytes, cudaStream_t stream, int *failed)
{
    *failed = 0;
    if (nbytes == 0)
        return NULL;
    if (pool_disabled < 0)
        pools_setup();
    ga_cache *c = &device_pools[device];
    size_t size = block_size(nbytes);
    void *ptr = NULL;
    cudaError_t err = cudaSuccess;

    if (pool_configure(c, device) < 0)
        goto fail;
    if (fail_countdown > 0 && --fail_countdown == 0) {
        faults_injected++;
        raise_oom(c, nbytes, device, pool_used(c), 1);
        goto fail;
    }
    pthread_mutex_lock(&c->lock);
    ptr = cache_pop(c, size, (uintptr_t)stream);
    if (ptr != NULL) {
        pthread_mutex_unlock(&c->lock);
        return ptr;
    }
    if (c->limit && c->total_bytes + size > c->limit) {
        err = pool_release_locked(c);
        const int over = err == cudaSuccess && c->total_bytes + size > c->limit;
        const size_t used = c->used_bytes;
        if (err != cudaSuccess || over) {
            pthread_mutex_unlock(&c->lock);
            if (err != cudaSuccess)
                ga_err_cuda(err, "releasing cached blocks");
            else
                raise_oom(c, nbytes, device, used, 0);
            goto fail;
        }
    }
    /* Reserve the bytes before dropping the lock, so concurrent misses see them. */
    c->total_bytes += size;
    c->used_bytes += size;
    pthread_mutex_unlock(&c->lock);

    Py_BEGIN_ALLOW_THREADS
    err = cudaMalloc(&ptr, size);
    Py_END_ALLOW_THREADS
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        pthread_mutex_lock(&c->lock);
        cudaError_t rerr = pool_release_locked(c);
        pthread_mutex_unlock(&c->lock);
        if (rerr == cudaSuccess) {
            Py_BEGIN_ALLOW_THREADS
            err = cudaMalloc(&ptr, size);
            Py_END_ALLOW_THREADS
        }
    }
    if (err == cudaSuccess)
        return ptr;
    pthread_mutex_lock(&c->lock);
    c->total_bytes -= size;
    c->used_bytes -= size;
    const size_t used = c->used_bytes;
    pthread_mutex_unlock(&c->lock);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        raise_oom(c, nbytes, device, used, 0);
    } else {
        ga_err_cuda(err, "cudaMalloc");
    }
fail:
    *failed = 1;
    return NULL;
}

void *
ga_pool_scratch(int device, size_t *nbytes, cudaStream_t stream)
{
    int failed = 0;
    if (*nbytes == 0)
        *nbytes = 256;
    void *p = ga_pool_malloc(device, *nbytes, stream, &failed);
    return failed ? NULL : p;
}

void
ga_pool_free(int device, void *ptr, size_t nbytes, cudaStream_t stream)
{
    if (ptr == NULL || ga_runtime_forked())
        return;
    ga_cache *c = &device_pools[device];
    size_t size = block_size(nbytes);
    pthread_mutex_lock(&c->lock);
    int kept = !pool_disabled && cache_push(c, ptr, size, (uintptr_t)stream) == 0;
    if (!kept) {
        c->used_bytes -= size;
        c->total_bytes -= size;
    }
    pthread_mutex_unlock(&c->lock);
    if (!kept) {
        cudaError_t err = cudaFree(ptr);
        if (err != cudaSuccess)
            ga_err_unraisable(err, "cudaFree");
    }
}

/* ------------------------------------------------- pinned pool ----------- */

void *
ga_pinned_malloc(size_t nbytes)
{
    if (pool_disabled < 0)
        pools_setup();
    ga_cache *c = &pinned_pool;
    size_t size = block_size(nbytes ? nbytes : 1);
    void *ptr;
    pthread_mutex_lock(&c->lock);
    ptr = cache_pop(c, size, 0);
    if (ptr == NULL) {
        c->total_bytes += size;
        c->used_bytes += size;
    }
    pthread_mutex_unlock(&c->lock);
    if (ptr != NULL)
        return ptr;
    cudaError_t err;
    Py_BEGIN_ALLOW_THREADS
    err = cudaHostAlloc(&ptr, size, cudaHostAllocPortable);
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess) {
        pthread_mutex_lock(&c->lock);
        cudaError_t rerr = cache_release_all(c, release_pinned);
        pthread_mutex_unlock(&c->lock);
        if (rerr == cudaSuccess) {
            Py_BEGIN_ALLOW_THREADS
            err = cudaHostAlloc(&ptr, size, cudaHostAllocPortable);
            Py_END_ALLOW_THREADS
        }
    }
    if (err == cudaSuccess)
        return ptr;
    pthread_mutex_lock(&c->lock);
    c->total_bytes -= size;
    c->used_bytes -= size;
    pthread_mutex_unlock(&c->lock);
    ga_err_cuda(err, "cudaHostAlloc");
    return NULL;
}

void
ga_pinned_free(void *ptr, size_t nbytes)
{
    if (ptr == NULL || ga_runtime_forked())
        return;
    ga_cache *c = &pinned_pool;
    size_t size = block_size(nbytes ? nbytes : 1);
    pthread_mutex_lock(&c->lock);
    int kept = !pool_disabled && cache_push(c, ptr, size, 0) == 0;
    if (!kept) {
        c->used_bytes -= size;
        c->total_bytes -= size;
    }
    pthread_mutex_unlock(&c->lock);
    if (!kept) {
        cudaError_t err = cudaFreeHost(ptr);
        if (err != cudaSuccess)
            ga_err_unraisable(err, "cudaFreeHost");
    }
}

/* A tiny object owning one pinned block: the base of NumPy arrays that live
 * in pinned memory (asnumpy results).  Its buffer is the block. */
typedef struct {
    PyObject_HEAD
    void *ptr;
    size_t nbytes;
} ga_pinned_owner;

static void
pinned_owner_dealloc(ga_pinned_owner *self)
{
    ga_pinned_free(self->ptr, self->nbytes);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject PinnedOwnerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuarr._core.PinnedMemory",
    .tp_basicsize = sizeof(ga_pinned_owner),
    .tp_dealloc = (destructor)pinned_owner_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A block of pinned host memory from gpuarr's pinned pool.",
};

PyObject *
ga_pinned_owner_new(void *ptr, size_t nbytes)
{
    ga_pinned_owner *o = PyObject_New(ga_pinned_owner, &PinnedOwnerType);
    if (o == NULL) {
        ga_pinned_free(ptr, nbytes);
        return NULL;
    }
    o->ptr = ptr;
    o->nbytes = nbytes;
    return (PyObject *)o;
}

/* ---------------------------------------------------------------- Python */

/* pool selector: device id >= 0, or -1 for the pinned pool */
static ga_cache *
pool_arg(PyObject *arg, int *device)
{
    long d = PyLong_AsLong(arg);
    if (d == -1 && PyErr_Occurred())
        return NULL;
    if (d < -1 || d >= GA_MAX_POOLS) {
        PyErr_Format(PyExc_ValueError, "device %ld is out of range", d);
        return NULL;
    }
    if (pool_disabled < 0)
        pools_setup();
    *device = (int)d;
    return d < 0 ? &pinned_pool : &device_pools[d];
}

static PyObject *
py_pool_stats(PyObject *self, PyObject *arg)
{
    int device;
    ga_cache *c = pool_arg(arg, &device);
    if (c == NULL)
        return NULL;
    pthread_mutex_lock(&c->lock);  /* the values under the lock, the tuple after it (raise_oom) */
    const Py_ssize_t used = (Py_ssize_t)c->used_bytes, total = (Py_ssize_t)c->total_bytes;
    const Py_ssize_t n_free = c->n_free, limit = (Py_ssize_t)c->limit;
    pthread_mutex_unlock(&c->lock);
    return Py_BuildValue("(nnnn)", used, total, n_free, limit);
}

static PyObject *
py_pool_free_all(PyObject *self, PyObject *arg)
{
    int device;
    ga_cache *c = pool_arg(arg, &device);
    cudaError_t err;
    if (c == NULL || (ga_runtime_forked() && ga_runtime_device_count() < 0))
        return NULL;
    if (c->n_free == 0)
        Py_RETURN_NONE;
    if (device >= 0 && ga_runtime_use_device(device) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&c->lock);
    err = device >= 0 ? pool_release_locked(c) : cache_release_all(c, release_pinned);
    pthread_mutex_unlock(&c->lock);
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess)
        return ga_err_cuda(err, "free_all_blocks");
    Py_RETURN_NONE;
}

/* _pool_set_limit(device, size_or_None, fraction_or_None) */
static PyObject *
py_pool_set_limit(PyObject *self, PyObject *args)
{
    PyObject *dev, *size, *fraction;
    int device;
    if (!PyArg_ParseTuple(args, "OOO", &dev, &size, &fraction))
        return NULL;
    ga_cache *c = pool_arg(dev, &device);
    if (c == NULL)
        return NULL;
    if (size != Py_None && fraction != Py_None) {
        PyErr_SetString(PyExc_ValueError, "set_limit takes size or fraction, not both");
        return NULL;
    }
    size_t limit = 0;
    if (size != Py_None) {
        long long v = PyLong_AsLongLong(size);
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (v < 0) {
            PyErr_SetString(PyExc_ValueError, "size must be a non-negative number of bytes");
            return NULL;
        }
        limit = (size_t)v;
    } else if (fraction != Py_None) {
        double f = PyFloat_AsDouble(fraction);
        if (f == -1.0 && PyErr_Occurred())
            return NULL;
        if (!(f >= 0.0 && f <= 1.0)) {
            PyErr_SetString(PyExc_ValueError, "fraction must be between 0 and 1");
            return NULL;
        }
        if (ga_runtime_use_device(device) < 0)
            return NULL;
        limit = (size_t)(f * (double)device_total_memory(device));
    }
    pthread_mutex_lock(&c->lock);
    c->limit = limit;
    c->configured = 1;
    pthread_mutex_unlock(&c->lock);
    Py_RETURN_NONE;
}

/* _parse_limit(text, total) -> bytes: the GPUARR_GPU_MEMORY_LIMIT parser. */
static PyObject *
py_parse_limit(PyObject *self, PyObject *args)
{
    const char *text;
    unsigned long long total;
    size_t out;
    if (!PyArg_ParseTuple(args, "sK", &text, &total))
        return NULL;
    if (parse_limit(text, (size_t)total, "GPUARR_GPU_MEMORY_LIMIT", &out) < 0)
        return NULL;
    return PyLong_FromSize_t(out);
}

static PyObject *
py_pool_caching(PyObject *self, PyObject *noargs)
{
    return PyBool_FromLong(!pool_disabled);
}

static PyObject *
py_round_size(PyObject *self, PyObject *arg)
{
    size_t n = PyLong_AsSize_t(arg);
    if (n == (size_t)-1 && PyErr_Occurred())
        return NULL;
    return PyLong_FromSize_t(block_size(n));
}

/* _fail_allocation(n) -> int: make the n-th device allocation from now
 * (n >= 1) fail with OutOfMemoryError, or disarm with None.  Returns the
 * allocations the previous setting still had to go (0: none armed). */
static PyObject *
py_fail_allocation(PyObject *self, PyObject *arg)
{
    long n = 0;
    if (arg != Py_None) {
        n = PyLong_AsLong(arg);
        if (n == -1 && PyErr_Occurred())
            return NULL;
        if (n < 1) {
            PyErr_Format(PyExc_ValueError, "_fail_allocation: n must be a positive number of "
                         "allocations or None, not %ld", n);
            return NULL;
        }
    }
    long previous = fail_countdown;
    fail_countdown = n;
    return PyLong_FromLong(previous);
}

static PyObject *
py_faults_injected(PyObject *self, PyObject *noargs)
{
    return PyLong_FromLong(faults_injected);
}

static PyMethodDef mempool_functions[] = {
    {"_pool_stats", py_pool_stats, METH_O,
     "(used, total, n_free_blocks, limit) of device pool N, or of the pinned pool for -1."},
    {"_pool_free_all", py_pool_free_all, METH_O, "Release pool N's cached blocks."},
    {"_pool_set_limit", py_pool_set_limit, METH_VARARGS, "Set pool N's limit."},
    {"_parse_limit", py_parse_limit, METH_VARARGS, "Parse a memory limit string."},
    {"_round_size", py_round_size, METH_O,
     "The bytes the pool allocates and counts for a request: its size class, or the request "
     "itself with caching off (GPUARR_POOL=0)."},
    {"_pool_caching", py_pool_caching, METH_NOARGS,
     "Whether freed blocks are cached (False under GPUARR_POOL=0)."},
    {"_fail_allocation", py_fail_allocation, METH_O,
     "_fail_allocation(n): the n-th device allocation from now fails with OutOfMemoryError "
     "(tests only); None disarms.  Returns what the previous setting had still to go."},
    {"_faults_injected", py_faults_injected, METH_NOARGS,
     "How many allocations _fail_allocation has made fail in this process."},
    {NULL, NULL, 0, NULL},
};

/* pthread_atfork child handler: the pools' locks start unlocked in the
 * child (another thread of the parent may have held one at the fork; the
 * forking thread, the child's only one, holds none: it never calls fork
 * with a pool lock held). */
static void
mempool_after_fork_child(void)
{
    for (int i = 0; i < GA_MAX_POOLS; ++i)
        pthread_mutex_init(&device_pools[i].lock, NULL);
    pthread_mutex_init(&pinned_pool.lock, NULL);
}

int
ga_mempool_init(PyObject *m)
{
    if (pool_disabled < 0)
        pools_setup();
    if (ga_runtime_at_fork_child(mempool_after_fork_child) < 0)
        return -1;
    if (PyType_Ready(&PinnedOwnerType) < 0)
        return -1;
    return PyModule_AddFunctions(m, mempool_functions);
}
