/*
 * benchmark.c -- the timing loop behind gpuarr.profiler.benchmark().
 *
 * Each repeat records a start event on every timed device's current
 * stream, reads the host's monotonic clock, calls the function, reads the
 * clock again, records an end event on every device, and waits for the end
 * events.  CPU time is the host interval around the call; GPU time is the
 * interval between the two events on the device, which covers the work the
 * call queued (and, for a host-only function, the idle gap it spent on the
 * host).  This is CuPy's method (cupyx.profiler.benchmark), with the loop in
 * C so the harness adds as little host time as possible between repeats.
 *
 * Warm-up calls run first and are not timed; their work is drained before
 * the first timed repeat.  The loop stops early once max_duration seconds
 * of repeats have passed, after at least one repeat.  Argument checking and
 * the result object are Python (gpuarr/profiler.py).
 *
 * Ownership: the events are created here, one start/end pair per timed
 * device, and destroyed on every exit path; the times go into growable
 * C buffers that become NumPy arrays at the end.
 */
#include "gpuarr.h"

#include <time.h>

static double
monotonic_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    int ndev;
    int *devices;
    cudaEvent_t *start;      /* [ndev] */
    cudaEvent_t *end;        /* [ndev] */
    Py_ssize_t n, cap;       /* repeats stored / room for */
    double *cpu;             /* [cap] */
    double *gpu;             /* [cap][ndev] */
} bench_state;

static void
bench_free(bench_state *b)
{
    for (int k = 0; k < b->ndev; ++k) {
        if (b->start && b->start[k])
            cudaEventDestroy(b->start[k]);
        if (b->end && b->end[k])
            cudaEventDestroy(b->end[k]);
    }
    PyMem_Free(b->devices);
    PyMem_Free(b->start);
    PyMem_Free(b->end);
    PyMem_Free(b->cpu);
    PyMem_Free(b->gpu);
}

/* Record `events[k]` on each device's current stream.  0 / -1. */
static int
bench_record(bench_state *b, cudaEvent_t *events)
{
    for (int k = 0; k < b->ndev; ++k) {
        if (ga_runtime_use_device(b->devices[k]) < 0)
            return -1;
        cudaError_t err = cudaEventRecord(events[k], ga_runtime_device_stream(b->devices[k]));
        if (err != cudaSuccess) {
            ga_err_cuda(err, "cudaEventRecord");
            return -1;
        }
    }
    return 0;
}

/* Wait for every end event (GIL released).  0 / -1. */
static int
bench_wait(bench_state *b)
{
    cudaError_t err = cudaSuccess;
    Py_BEGIN_ALLOW_THREADS
    for (int k = 0; k < b->ndev && err == cudaSuccess; ++k)
        err = cudaEventSynchronize(b->end[k]);
    Py_END_ALLOW_THREADS
    if (err != cudaSuccess) {
        ga_err_cuda(err, "cudaEventSynchronize");
        return -1;
    }
    return 0;
}

/* Room for one more repeat.  0 / -1 with MemoryError. */
static int
bench_grow(bench_state *b)
{
    if (b->n < b->cap)
        return 0;
    Py_ssize_t cap = b->cap * 2;
    double *cpu = PyMem_Realloc(b->cpu, (size_t)cap * sizeof(double));
    if (cpu == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->cpu = cpu;
    double *gpu = PyMem_Realloc(b->gpu, (size_t)cap * b->ndev * sizeof(double));
    if (gpu == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->gpu = gpu;
    b->cap = cap;
    return 0;
}

/* The (cpu_times, gpu_times) arrays: shapes (n,) and (ndev, n). */
static PyObject *
bench_result(bench_state *b)
{
    npy_intp dims[2] = {b->ndev, b->n};
    PyObject *cpu = PyArray_SimpleNew(1, &dims[1], NPY_FLOAT64);
    PyObject *gpu = cpu ? PyArray_SimpleNew(2, dims, NPY_FLOAT64) : NULL;
    if (gpu == NULL) {
        Py_XDECREF(cpu);
        return NULL;
    }
    memcpy(PyArray_DATA((PyArrayObject *)cpu), b->cpu, (size_t)b->n * sizeof(double));
    double *g = PyArray_DATA((PyArrayObject *)gpu);
    for (int k = 0; k < b->ndev; ++k)
        for (Py_ssize_t i = 0; i < b->n; ++i)
            g[k * b->n + i] = b->gpu[i * b->ndev + k];
    return Py_BuildValue("(NN)", cpu, gpu);
}

/* _benchmark(func, args, kwargs, n_repeat, n_warmup, max_duration, devices)
 * -> (cpu_times, gpu_times) in seconds.  args a tuple, kwargs a dict or
 * None, devices a tuple of device numbers (checked by the Python caller). */
static PyObject *
py_benchmark(PyObject *self, PyObject *pyargs)
{
    PyObject *func, *args, *kwargs, *devices, *result = NULL;
    Py_ssize_t n_repeat, n_warmup;
    double max_duration;
    bench_state b = {0};
    int prev_device = ga_runtime_current_device();
    if (!PyArg_ParseTuple(pyargs, "OO!OnndO!:_benchmark", &func, &PyTuple_Type, &args,
                          &kwargs, &n_repeat, &n_warmup, &max_duration, &PyTuple_Type,
                          &devices))
        return NULL;
    if (kwargs == Py_None || (PyDict_Check(kwargs) && PyDict_GET_SIZE(kwargs) == 0))
        kwargs = NULL;
    if (n_repeat < 1 || n_warmup < 0 || PyTuple_GET_SIZE(devices) < 1) {
        PyErr_SetString(PyExc_ValueError, "_benchmark: needs n_repeat >= 1, n_warmup >= 0 "
                        "and at least one device");
        return NULL;
    }
    PyObject *const *argv = &PyTuple_GET_ITEM(args, 0);
    size_t nargs = (size_t)PyTuple_GET_SIZE(args);

    b.ndev = (int)PyTuple_GET_SIZE(devices);
    b.cap = n_repeat < 1024 ? n_repeat : 1024;
    b.devices = PyMem_Calloc((size_t)b.ndev, sizeof(int));
    b.start = PyMem_Calloc((size_t)b.ndev, sizeof(cudaEvent_t));
    b.end = PyMem_Calloc((size_t)b.ndev, sizeof(cudaEvent_t));
    b.cpu = PyMem_Malloc((size_t)b.cap * sizeof(double));
    b.gpu = PyMem_Malloc((size_t)b.cap * b.ndev * sizeof(double));
    if (!b.devices || !b.start || !b.end || !b.cpu || !b.gpu) {
        PyErr_NoMemory();
        goto fail;
    }
    for (int k = 0; k < b.ndev; ++k) {
        long dev = PyLong_AsLong(PyTuple_GET_ITEM(devices, k));
        if (dev == -1 && PyErr_Occurred())
            goto fail;
        b.devices[k] = dev < INT_MIN || dev > INT_MAX ? INT_MAX : (int)dev;
        if (ga_runtime_use_device(b.devices[k]) < 0)
            goto fail;
        GA_CUDA_TRY(cudaEventCreate(&b.start[k]));
        GA_CUDA_TRY(cudaEventCreate(&b.end[k]));
    }

    for (Py_ssize_t i = 0; i < n_warmup; ++i) {
        PyObject *r = PyObject_VectorcallDict(func, argv, nargs, kwargs);
        if (r == NULL)
            goto fail;
        Py_DECREF(r);
    }
    if (bench_record(&b, b.end) < 0 || bench_wait(&b) < 0)
        goto fail;

    double t_begin = monotonic_seconds();
    for (Py_ssize_t i = 0; i < n_repeat; ++i) {
        if (bench_grow(&b) < 0 || bench_record(&b, b.start) < 0)
            goto fail;
        double t1 = monotonic_seconds();
        PyObject *r = PyObject_VectorcallDict(func, argv, nargs, kwargs);
        double t2 = monotonic_seconds();
        if (r == NULL)
            goto fail;
        Py_DECREF(r);
        if (bench_record(&b, b.end) < 0 || bench_wait(&b) < 0)
            goto fail;
        for (int k = 0; k < b.ndev; ++k) {
            float ms = 0;
            GA_CUDA_TRY(cudaEventElapsedTime(&ms, b.start[k], b.end[k]));
            b.gpu[b.n * b.ndev + k] = 1e-3 * (double)ms;
        }
        b.cpu[b.n++] = t2 - t1;
        if (monotonic_seconds() - t_begin > max_duration || PyErr_CheckSignals() < 0)
            break;
    }
    if (!PyErr_Occurred())
        result = bench_result(&b);
    if (result != NULL && ga_runtime_use_device(prev_device) < 0)
        Py_CLEAR(result);
fail:
    bench_free(&b);
    return result;
}

static PyMethodDef benchmark_functions[] = {
    {"_benchmark", py_benchmark, METH_VARARGS,
     "_benchmark(func, args, kwargs, n_repeat, n_warmup, max_duration, devices)\n\n"
     "The timing loop of gpuarr.profiler.benchmark: (cpu_times, gpu_times) in seconds."},
    {NULL, NULL, 0, NULL},
};

int
ga_benchmark_init(PyObject *m)
{
    return PyModule_AddFunctions(m, benchmark_functions);
}
