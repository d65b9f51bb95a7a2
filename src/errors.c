/*
 * errors.c -- CUDA errors as Python exceptions.
 *
 * Every failing CUDA call becomes an exception naming the CUDA error and the
 * call that failed.  The classes (all exported from gpuarr.cuda):
 *
 *   CUDARuntimeError(RuntimeError)          any CUDA failure
 *     OutOfMemoryError(.., MemoryError)     allocation failed after the pool
 *                                           released its cache and retried
 *     NoDeviceError                         no driver, no device, driver too
 *                                           old, or no kernel image for the GPU
 *
 * The exception objects live in module-level statics: they are created once
 * by ga_errors_init and referenced by the module, which owns them.
 * CUDA's last error is cleared whenever an error is reported, so a failed
 * call never poisons the next one.
 *
 * One error is not CUDA's: the refusal of a NumPy array where a device
 * array is wanted (data moves only when the user asks), worded here once
 * for the C core and, through _core._host_array_error, the Python layer.
 *
 * Sticky errors are the exception: a kernel that faults (an illegal or
 * misaligned address, a trap or assert, a hardware stack error...) leaves
 * the CUDA context unusable, and every later CUDA call of the process fails
 * with the same error.  Their message says so (restart the process) and
 * where the first one was seen.  Kernels run asynchronously, so a fault
 * shows at the launch only with GPUARR_SYNC_LAUNCH=1 (ga_check_launch then
 * synchronises after each launch); otherwise at the next synchronisation
 * or launch, which is what the message names.  Teardown failures that
 * follow a sticky error are not reported again.
 */
#include "gpuarr.h"

#include <stdio.h>
#include <stdlib.h>

PyObject *GA_CUDARuntimeError = NULL;
PyObject *GA_OutOfMemoryError = NULL;
PyObject *GA_NoDeviceError = NULL;

static int sync_after_launch = -1;

/* The first sticky error of the process and where it was seen (written
 * with the GIL held). */
static cudaError_t first_sticky = cudaSuccess;
static char first_sticky_what[160];

/* Errors after which the CUDA context cannot be used again (the CUDA
 * headers: "the process must be terminated and relaunched"). */
static int
error_is_sticky(cudaError_t err)
{
    switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorExternalDevice:
    case cudaErrorMpsClientTerminated:
#if CUDART_VERSION >= 13000
    case cudaErrorTensorMemoryLeak:
    case cudaErrorContained:
#endif
        return 1;
    default:
        return 0;
    }
}

/* The message of a CUDA error: name, description, the failing call and,
 * for a sticky error, that the context is lost and since when. */
static PyObject *
error_message(cudaError_t err, const char *what)
{
    if (!error_is_sticky(err))
        return PyUnicode_FromFormat("%s: %s (in %s)", cudaGetErrorName(err),
                                    cudaGetErrorString(err), what);
    if (first_sticky == cudaSuccess) {
        first_sticky = err;
        snprintf(first_sticky_what, sizeof(first_sticky_what), "%s", what);
        return PyUnicode_FromFormat(
            "%s: %s (in %s). The CUDA context is now unusable: this error is sticky, every "
            "later CUDA call in this process fails with it, so restart the process. A kernel "
            "fault is reported at the launch that caused it only with GPUARR_SYNC_LAUNCH=1 in "
            "the environment; otherwise at the next synchronisation or launch after it.",
            cudaGetErrorName(err), cudaGetErrorString(err), what);
    }
    return PyUnicode_FromFormat(
        "%s: %s (in %s). The CUDA context is unusable since an earlier sticky error (%s in "
        "%s): restart the process.", cudaGetErrorName(err), cudaGetErrorString(err), what,
        cudaGetErrorName(first_sticky), first_sticky_what);
}

PyObject *
ga_err_cuda(cudaError_t err, const char *what)
{
    PyObject *cls = GA_CUDARuntimeError;
    (void)cudaGetLastError();
    if (err == cudaErrorMemoryAllocation)
        cls = GA_OutOfMemoryError;
    else if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
             err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDevice ||
             err == cudaErrorStubLibrary || err == cudaErrorCallRequiresNewerDriver ||
             err == cudaErrorUnsupportedPtxVersion)
        cls = GA_NoDeviceError;
    PyObject *msg = error_message(err, what);
    PyObject *exc = msg ? PyObject_CallOneArg(cls, msg) : NULL;
    PyObject *code = PyLong_FromLong((long)err);
    PyObject *name = PyUnicode_FromString(cudaGetErrorName(err));
    PyObject *op = PyUnicode_FromString(what);
    if (exc && code && name && op &&
        PyObject_SetAttrString(exc, "status", code) == 0 &&
        PyObject_SetAttrString(exc, "error_name", name) == 0 &&
        PyObject_SetAttrString(exc, "operation", op) == 0)
        PyErr_SetObject(cls, exc);
    Py_XDECREF(msg);
    Py_XDECREF(exc);
    Py_XDECREF(code);
    Py_XDECREF(name);
    Py_XDECREF(op);
    return NULL;
}

void
ga_err_unraisable(cudaError_t err, const char *what)
{
    if (first_sticky != cudaSuccess && error_is_sticky(err))
        return;   /* the context is lost; that was reported when it happened */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    ga_err_cuda(err, what);
    PyErr_WriteUnraisable(NULL);
    PyErr_Restore(type, value, tb);
}

int
ga_check_launch(cudaError_t err, const char *what, cudaStream_t stream)
{
    if (err == cudaSuccess) {
        if (sync_after_launch < 0) {
            const char *env = getenv("GPUARR_SYNC_LAUNCH");
            sync_after_launch = env != NULL && env[0] == '1';
        }
        if (sync_after_launch)
            err = cudaStreamSynchronize(stream);
        if (err == cudaSuccess)
            return 0;
    }
    ga_err_cuda(err, what);
    return -1;
}

/* The host-array refusal's message (a new str; NULL with an error set):
 * an input is moved to the device; an output= array cannot be (the results
 * would not come back to it), so the advice is a device array or a dtype. */
static PyObject *
host_array_message(const char *fname, const char *what, int output)
{
    return PyUnicode_FromFormat("%s%s%s is a numpy.ndarray, which lives in host memory; %s",
                                fname ? fname : "", fname ? ": " : "", what,
                                output ? "pass a gpuarr array (gpuarr.empty(shape, dtype)) or "
                                         "a dtype"
                                       : "move it to the device with gpuarr.asarray() first");
}

static PyObject *
raise_host_array(const char *fname, const char *what, int output)
{
    PyObject *msg = host_array_message(fname, what, output);
    if (msg != NULL) {
        PyErr_SetObject(PyExc_TypeError, msg);
        Py_DECREF(msg);
    }
    return NULL;
}

PyObject *
ga_err_host_array(const char *fname, const char *what)
{
    return raise_host_array(fname, what, 0);
}

PyObject *
ga_err_host_output(const char *fname, const char *what)
{
    return raise_host_array(fname, what, 1);
}

PyObject *
ga_err_index_bounds(long long index, int axis, npy_intp size)
{
    PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for axis %d with size %zd", index,
                 axis, size);
    return NULL;
}

int
ga_check_same_device(int a, int b)
{
    if (a == b)
        return 0;
    PyErr_Format(PyExc_ValueError, "arrays are on different devices (%d and %d)", a, b);
    return -1;
}

/* _host_array_error(what, fname=None, output=False) -> the TypeError (not
 * raised) that ga_err_host_array (ga_err_host_output) raises, for the
 * Python layer to raise. */
static PyObject *
py_host_array_error(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"what", "fname", "output", NULL};
    const char *what, *fname = NULL;
    int output = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "s|zp:_host_array_error", kwlist, &what,
                                     &fname, &output))
        return NULL;
    PyObject *msg = host_array_message(fname, what, output);
    if (msg == NULL)
        return NULL;
    PyObject *exc = PyObject_CallOneArg(PyExc_TypeError, msg);
    Py_DECREF(msg);
    return exc;
}

static PyMethodDef errors_functions[] = {
    {"_host_array_error", (PyCFunction)(void (*)(void))py_host_array_error,
     METH_VARARGS | METH_KEYWORDS,
     "_host_array_error(what, fname=None, output=False) -> the TypeError refusing a NumPy "
     "array (as an input, or as output=)"},
    {NULL, NULL, 0, NULL},
};

static PyObject *
new_class(PyObject *m, const char *name, PyObject *bases, const char *doc)
{
    PyObject *dict = PyDict_New();
    PyObject *cls = NULL;
    if (dict == NULL)
        return NULL;
    cls = PyErr_NewExceptionWithDoc(name, doc, bases, dict);
    Py_DECREF(dict);
    if (cls == NULL)
        return NULL;
    const char *dot = strrchr(name, '.');
    if (PyModule_AddObjectRef(m, dot + 1, cls) < 0) {
        Py_DECREF(cls);
        return NULL;
    }
    return cls;
}

int
ga_errors_init(PyObject *m)
{
    PyObject *bases = NULL;
    GA_CUDARuntimeError = new_class(m, "gpuarr.cuda.CUDARuntimeError", PyExc_RuntimeError,
        "A CUDA call failed. Attributes: status (the cudaError_t code), "
        "error_name, operation (the call that failed).");
    if (GA_CUDARuntimeError == NULL)
        return -1;
    bases = PyTuple_Pack(2, GA_CUDARuntimeError, PyExc_MemoryError);
    if (bases == NULL)
        return -1;
    GA_OutOfMemoryError = new_class(m, "gpuarr.cuda.OutOfMemoryError", bases,
        "Device memory is exhausted (after cached blocks were released and the "
        "allocation retried), or the pool's limit would be passed.");
    Py_DECREF(bases);
    if (GA_OutOfMemoryError == NULL)
        return -1;
    GA_NoDeviceError = new_class(m, "gpuarr.cuda.NoDeviceError", GA_CUDARuntimeError,
        "No usable CUDA device: no driver, no device, a driver too old for "
        "this build, or no kernel image for this GPU.");
    if (GA_NoDeviceError == NULL)
        return -1;
    return PyModule_AddFunctions(m, errors_functions);
}
