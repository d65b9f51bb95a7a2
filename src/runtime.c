/*
 * runtime.c -- finding the driver and the devices, and the per-thread
 * current device and stream.
 *
 * Nothing touches CUDA at import: `import gpuarr` works with no driver.  The
 * first device operation calls ga_runtime_use_device(), which initialises
 * CUDA once for the process and either succeeds or raises NoDeviceError
 * with the cause (no driver library, driver too old for this build, no
 * device).  is_available() asks the same question without raising.
 *
 * The current device and stream are thread-local, as in CUDA itself.  The
 * thread also remembers which device it last made current in CUDA, so the
 * common case (same device as last time) costs no CUDA call.
 */
#include "gpuarr.h"

#include <dlfcn.h>
#include <pthread.h>

#define GA_MAX_DEVICES 64

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int device_count = -1;              /* -1 until init; 0 when unusable */
static cudaError_t init_status = cudaSuccess;
static int driver_missing = 0;
static int sm_counts[GA_MAX_DEVICES];

static _Thread_local int tl_device = 0;          /* gpuarr's current device */
static _Thread_local int tl_cuda_device = -1;    /* what cudaSetDevice last got */
static _Thread_local cudaStream_t tl_stream = 0; /* current stream */

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

/* Raise NoDeviceError describing why no device can be used. */
static int
runtime_raise_unavailable(void)
{
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
    if (device_count == 0)
        return runtime_raise_unavailable();
    return device_count;
}

int
ga_runtime_use_device(int device)
{
    if (tl_cuda_device == device)
        return 0;
    int n = ga_runtime_device_count();
    if (n < 0)
        return -1;
    if (device < 0 || device >= n) {
        PyErr_Format(PyExc_ValueError, "device %d is out of range: this machine has %d CUDA "
                     "device%s (0 to %d)", device, n, n == 1 ? "" : "s", n - 1);
        return -1;
    }
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
cudaStream_t ga_runtime_current_stream(void) { return tl_stream; }
void ga_runtime_set_current_stream(cudaStream_t stream) { tl_stream = stream; }

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

/* ---------------------------------------------------------------- Python */

static PyObject *
py_is_available(PyObject *self, PyObject *noargs)
{
    if (device_count < 0)
        runtime_init();
    return PyBool_FromLong(device_count > 0);
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

static PyObject *
py_set_device_id(PyObject *self, PyObject *arg)
{
    int dev = (int)PyLong_AsLong(arg);
    if (dev == -1 && PyErr_Occurred())
        return NULL;
    if (ga_runtime_use_device(dev) < 0)
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

static PyMethodDef runtime_functions[] = {
    {"is_available", py_is_available, METH_NOARGS,
     "is_available()\n\nTrue when a CUDA device can be used (never raises)."},
    {"get_device_count", py_get_device_count, METH_NOARGS,
     "Number of CUDA devices; raises NoDeviceError when none can be used."},
    {"get_device_id", py_get_device_id, METH_NOARGS, "The calling thread's current device."},
    {"_set_device_id", py_set_device_id, METH_O, "Make a device current for this thread."},
    {"device_synchronize", py_device_synchronize, METH_NOARGS,
     "Wait for all work on the current device."},
    {"_versions", py_versions, METH_NOARGS, "(driver version, runtime version) as integers."},
    {NULL, NULL, 0, NULL},
};

int
ga_runtime_init(PyObject *m)
{
    return PyModule_AddFunctions(m, runtime_functions);
}
