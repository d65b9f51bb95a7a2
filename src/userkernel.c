/*
 * userkernel.c -- loading and launching code the user compiled at run time
 * (RawKernel, RawModule, and the kernels that ElementwiseKernel,
 * ReductionKernel, fuse and jit generate).  The compiling itself is Python
 * (gpuarr/cuda/compiler.py, NVRTC through ctypes); this file is the part
 * that must be fast or must touch CUDA.
 *
 * _Library
 * --------
 * One loaded cubin or PTX image: a cudaLibrary_t from the CUDA runtime's
 * library API (context-independent loading: one load serves every device
 * of the architecture it was compiled for).  get_kernel() gives a kernel
 * handle, get_global() the device address and size of a __device__ or
 * __constant__ variable on the current device.  The library owns its
 * handle and unloads it in dealloc; kernel handles taken from it are valid
 * only while it lives, so whoever keeps a handle keeps the library (the
 * Python side stores both together).
 *
 * _KernelBase
 * -----------
 * The base type of gpuarr.RawKernel: its tp_call is the launch, written in
 * C so that a call costs about one cudaLaunchKernel of host time.  Per
 * device it caches the kernel handle and the limits read from the compiled
 * function; on the first call on a device it asks the Python subclass
 * (`self._function_for(device)`, which compiles and loads through the
 * cache) for the handle.  Launch errors that can be known before launching
 * (a block larger than the kernel allows, dynamic shared memory over its
 * limit, grid or block dimensions out of range, an array on another device)
 * raise ValueError naming the limit, and nothing is launched.
 *
 * Arguments (ga_uk_pack_arg, also used by the generated kernels' launches)
 * go by value as CuPy passes them: device arrays (gpuarr's, and any object
 * with __cuda_array_interface__ or DLPack) as their data pointer, NumPy
 * scalars in their own dtype, Python bool / int / float / complex as bool /
 * int64 (uint64 from 2**63) / double / complex128, None as a null pointer.
 */
#include "gpuarr.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define UK_MAX_DEVICES 64
#define UK_STACK_ARGS 32

/* ============================================================== _Library */

typedef struct {
    PyObject_HEAD
    cudaLibrary_t handle;
} uk_library;

static PyTypeObject UK_LibraryType;

static PyObject *
library_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"image", NULL};
    Py_buffer image = {0};
    cudaLibrary_t handle = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*:_Library", kwlist, &image))
        return NULL;
    if (ga_runtime_use_device(ga_runtime_current_device()) < 0)
        goto fail;
    cudaError_t err;
    Py_BEGIN_ALLOW_THREADS
    err = cudaLibraryLoadData(&handle, image.buf, NULL, NULL, 0, NULL, NULL, 0);
    Py_END_ALLOW_THREADS
    GA_CUDA_TRY(err);
    PyBuffer_Release(&image);
    uk_library *lib = (uk_library *)type->tp_alloc(type, 0);
    if (lib == NULL) {
        cudaLibraryUnload(handle);
        return NULL;
    }
    lib->handle = handle;
    return (PyObject *)lib;
fail:
    PyBuffer_Release(&image);
    return NULL;
}

static void
library_dealloc(uk_library *lib)
{
    if (lib->handle != NULL && !ga_runtime_forked()) {
        cudaError_t err = cudaLibraryUnload(lib->handle);
        if (err != cudaSuccess && err != cudaErrorCudartUnloading &&
            err != cudaErrorContextIsDestroyed)
            ga_err_unraisable(err, "cudaLibraryUnload");
    }
    Py_TYPE(lib)->tp_free((PyObject *)lib);
}

/* get_kernel(name) -> int: the cudaKernel_t of an extern "C" or lowered name. */
static PyObject *
library_get_kernel(uk_library *self, PyObject *arg)
{
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    cudaKernel_t k = NULL;
    if (name == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "get_kernel: name must be a str");
        return NULL;
    }
    cudaError_t err = cudaLibraryGetKernel(&k, self->handle, name);
    if (err == cudaErrorSymbolNotFound || err == cudaErrorInvalidDeviceFunction) {
        (void)cudaGetLastError();
        PyErr_Format(PyExc_AttributeError, "the compiled module has no kernel named '%s' (a "
                     "__global__ function must be extern \"C\", or named by the C++ name "
                     "expression given in name_expressions)", name);
        return NULL;
    }
    if (err != cudaSuccess)
        return ga_err_cuda(err, "cudaLibraryGetKernel");
    return PyLong_FromVoidPtr((void *)k);
}

/* get_global(name) -> (address, size) on the current device. */
static PyObject *
library_get_global(uk_library *self, PyObject *arg)
{
    const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
    void *ptr = NULL;
    size_t size = 0;
    if (name == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "get_global: name must be a str");
        return NULL;
    }
    if (ga_runtime_use_device(ga_runtime_current_device()) < 0)
        return NULL;
    cudaError_t err = cudaLibraryGetGlobal(&ptr, &size, self->handle, name);
    if (err == cudaErrorSymbolNotFound || err == cudaErrorInvalidSymbol) {
        (void)cudaGetLastError();
        PyErr_Format(PyExc_AttributeError, "the compiled module has no __device__ or "
                     "__constant__ variable named '%s' (C++ names are mangled: declare it "
                     "inside extern \"C\" { ... })", name);
        return NULL;
    }
    if (err != cudaSuccess)
        return ga_err_cuda(err, "cudaLibraryGetGlobal");
    return Py_BuildValue("(Nn)", PyLong_FromVoidPtr(ptr), (Py_ssize_t)size);
}

static PyMethodDef library_methods[] = {
    {"get_kernel", (PyCFunction)library_get_kernel, METH_O,
     "get_kernel($self, name, /)\n--\n\nThe kernel handle (an int) of the function `name`."},
    {"get_global", (PyCFunction)library_get_global, METH_O,
     "get_global($self, name, /)\n--\n\n(address, size) of a __device__/__constant__ variable "
     "on the current device."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject UK_LibraryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuarr._core._Library",
    .tp_basicsize = sizeof(uk_library),
    .tp_dealloc = (destructor)library_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "_Library(image)\n--\n\nA loaded cubin/PTX image (cudaLibrary_t).",
    .tp_methods = library_methods,
    .tp_new = library_new,
};

/* ========================================================= device limits */

typedef struct {
    int ready;
    int max_block[3];
    int max_grid[3];
    int max_smem_optin;      /* largest dynamic shared memory a kernel may opt in to */
} uk_device_limits;

static uk_device_limits device_limits[UK_MAX_DEVICES];

static const uk_device_limits *
limits_of(int device)
{
    uk_device_limits *d = &device_limits[device];
    if (!d->ready) {
        static const enum cudaDeviceAttr attrs[7] = {
            cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY, cudaDevAttrMaxBlockDimZ,
            cudaDevAttrMaxGridDimX, cudaDevAttrMaxGridDimY, cudaDevAttrMaxGridDimZ,
            cudaDevAttrMaxSharedMemoryPerBlockOptin};
        int v[7];
        for (int i = 0; i < 7; ++i) {
            cudaError_t err = cudaDeviceGetAttribute(&v[i], attrs[i], device);
            if (err != cudaSuccess) {
                ga_err_cuda(err, "cudaDeviceGetAttribute");
                return NULL;
            }
        }
        memcpy(d->max_block, v, sizeof d->max_block);
        memcpy(d->max_grid, v + 3, sizeof d->max_grid);
        d->max_smem_optin = v[6];
        d->ready = 1;
    }
    return d;
}

/* ============================================================= arguments */

/* One kernel argument, by value. */
typedef struct {
    _Alignas(16) unsigned char bytes[16];
} uk_slot;

/* The device pointer of a foreign device array (CAI or DLPack) and its
 * device; 0, -1 on error, -2 when obj is neither. */
static int
foreign_pointer(PyObject *obj, void **ptr, int *device)
{
    PyObject *view = NULL;
    int rc = ga_try_from_cai(obj, &view);
    if (rc == -2 && PyObject_HasAttrString(obj, "__dlpack__") &&
        PyObject_HasAttrString(obj, "__dlpack_device__")) {
        PyObject *mod = PyImport_ImportModule("gpuarr._core");
        PyObject *fn = mod ? PyObject_GetAttrString(mod, "from_dlpack") : NULL;
        Py_XDECREF(mod);
        view = fn ? PyObject_CallOneArg(fn, obj) : NULL;
        Py_XDECREF(fn);
        rc = view == NULL ? -1 : 0;
    }
    if (rc < 0)
        return rc;
    if (!ga_array_check(view)) {
        Py_DECREF(view);
        PyErr_SetString(PyExc_TypeError, "DLPack import did not give a device array");
        return -1;
    }
    *ptr = ((ga_array *)view)->data;
    *device = ((ga_array *)view)->device;
    Py_DECREF(view);
    return 0;
}

int
ga_uk_pack_arg(PyObject *obj, int index, int device, void *slot_bytes)
{
    unsigned char *slot = slot_bytes;
    memset(slot, 0, 16);
    if (ga_array_check(obj)) {
        ga_array *a = (ga_array *)obj;
        if (a->device != device) {
            PyErr_Format(PyExc_ValueError, "kernel argument %d is an array on device %d, but "
                         "the kernel is launched on device %d", index, a->device, device);
            return -1;
        }
        memcpy(slot, &a->data, sizeof(void *));
        return 0;
    }
    if (obj == Py_None)
        return 0;
    if (PyBool_Check(obj)) {
        slot[0] = obj == Py_True;
        return 0;
    }
    if (PyLong_Check(obj)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (overflow > 0) {
            unsigned long long u = PyLong_AsUnsignedLongLong(obj);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) {
                PyErr_Format(PyExc_OverflowError, "kernel argument %d: the int %R does not fit "
                             "in 64 bits", index, obj);
                return -1;
            }
            memcpy(slot, &u, sizeof u);
            return 0;
        }
        if (overflow < 0) {
            PyErr_Format(PyExc_OverflowError, "kernel argument %d: the int %R does not fit in "
                         "64 bits", index, obj);
            return -1;
        }
        if (v == -1 && PyErr_Occurred())
            return -1;
        memcpy(slot, &v, sizeof v);
        return 0;
    }
    if (PyFloat_Check(obj)) {
        double d = PyFloat_AS_DOUBLE(obj);
        memcpy(slot, &d, sizeof d);
        return 0;
    }
    if (PyComplex_Check(obj)) {
        Py_complex c = PyComplex_AsCComplex(obj);
        memcpy(slot, &c.real, 8);
        memcpy(slot + 8, &c.imag, 8);
        return 0;
    }
    if (PyArray_IsScalar(obj, Generic)) {
        PyArray_Descr *d = PyArray_DescrFromScalar(obj);
        int ok = d != NULL && PyDataType_ELSIZE(d) <= 16 &&
                 (PyTypeNum_ISNUMBER(d->type_num) || PyTypeNum_ISBOOL(d->type_num));
        if (ok)
            PyArray_ScalarAsCtype(obj, slot);
        else if (d != NULL)
            PyErr_Format(PyExc_TypeError, "kernel argument %d: a NumPy scalar of dtype %R "
                         "cannot be passed to a kernel (numbers and bools only)", index, d);
        Py_XDECREF(d);
        return ok ? 0 : -1;
    }
    if (PyArray_Check(obj)) {
        char what[32];
        snprintf(what, sizeof(what), "kernel argument %d", index);
        ga_err_host_array(NULL, what);
        return -1;
    }
    void *ptr = NULL;
    int dev = device;
    int rc = foreign_pointer(obj, &ptr, &dev);
    if (rc == 0) {
        if (dev != device) {
            PyErr_Format(PyExc_ValueError, "kernel argument %d is an array on device %d, but "
                         "the kernel is launched on device %d", index, dev, device);
            return -1;
        }
        memcpy(slot, &ptr, sizeof ptr);
        return 0;
    }
    if (rc == -2)
        PyErr_Format(PyExc_TypeError, "kernel argument %d of type %.100s cannot be passed to a "
                     "kernel: pass device arrays, NumPy scalars, Python bool/int/float/complex "
                     "or None", index, Py_TYPE(obj)->tp_name);
    return -1;
}

/* A grid or block argument: an int or a tuple of 1 to 3 ints, each >= 1. */
static int
dims_arg(PyObject *obj, const char *what, unsigned int out[3])
{
    out[0] = out[1] = out[2] = 1;
    PyObject *items[3] = {obj, NULL, NULL};
    Py_ssize_t n = 1;
    if (PyTuple_Check(obj) || PyList_Check(obj)) {
        n = PySequence_Fast_GET_SIZE(obj);
        if (n < 1 || n > 3) {
            PyErr_Format(PyExc_ValueError, "%s must be an int or a tuple of 1 to 3 ints, got "
                         "%zd entries", what, n);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; ++i)
            items[i] = PySequence_Fast_ITEMS(obj)[i];
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        long long v = PyLong_AsLongLong(items[i]);
        if (v == -1 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "%s must be an int or a tuple of 1 to 3 ints, "
                             "got %.100s", what, Py_TYPE(items[i])->tp_name);
            }
            return -1;
        }
        if (v < 1 || v > 0xffffffffLL) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] is %lld: each dimension must be at least 1",
                         what, i, v);
            return -1;
        }
        out[i] = (unsigned int)v;
    }
    return 0;
}

/* ============================================================ _KernelBase */

typedef struct {
    cudaKernel_t fn;
    int max_threads;         /* the compiled function's limit (registers, launch bounds) */
    int max_dyn_smem;        /* dynamic shared memory allowed without opting in further */
} uk_entry;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    uk_entry *entries;       /* UK_MAX_DEVICES, allocated on the first call */
    int cooperative;
    char what[160];          /* "launching user kernel 'name'", for errors */
} uk_kernel;

/* The handle and limits of this kernel on `device` (made current). */
static uk_entry *
kernel_entry(uk_kernel *self, int device)
{
    if ((unsigned)device >= UK_MAX_DEVICES) {
        PyErr_Format(PyExc_ValueError, "device %d is out of range", device);
        return NULL;
    }
    if (self->entries == NULL) {
        self->entries = PyMem_Calloc(UK_MAX_DEVICES, sizeof(uk_entry));
        if (self->entries == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
    }
    uk_entry *e = &self->entries[device];
    if (e->fn != NULL)
        return e;
    if (self->what[0] == '\0') {
        /* the Python subclass's `name`, read once: launch errors name it */
        PyObject *name = PyObject_GetAttrString((PyObject *)self, "name");
        const char *s = name != NULL && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
        if (s != NULL)
            snprintf(self->what, sizeof(self->what), "launching user kernel '%s'", s);
        else
            PyErr_Clear();
        Py_XDECREF(name);
    }
    PyObject *h = PyObject_CallMethod((PyObject *)self, "_function_for", "i", device);
    if (h == NULL)
        return NULL;
    cudaKernel_t fn = (cudaKernel_t)PyLong_AsVoidPtr(h);
    Py_DECREF(h);
    if (fn == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "_function_for returned a null kernel");
        return NULL;
    }
    if (ga_runtime_use_device(device) < 0)
        return NULL;
    struct cudaFuncAttributes fa;
    cudaError_t err = cudaFuncGetAttributes(&fa, (const void *)fn);
    if (err != cudaSuccess)
        return (uk_entry *)ga_err_cuda(err, "cudaFuncGetAttributes");
    e->fn = fn;
    e->max_threads = fa.maxThreadsPerBlock;
    e->max_dyn_smem = fa.maxDynamicSharedSizeBytes;
    return e;
}

/* Forget the cached handles (after the Python side changed an attribute
 * or dropped its libraries). */
static PyObject *
kernel_reset(uk_kernel *self, PyObject *noargs)
{
    if (self->entries != NULL)
        memset(self->entries, 0, UK_MAX_DEVICES * sizeof(uk_entry));
    Py_RETURN_NONE;
}

int
ga_uk_launch(void *fn, int cooperative, const unsigned int grid[3], const unsigned int block[3],
             size_t shared_mem, void **args, cudaStream_t stream, const char *name)
{
    dim3 g = {grid[0], grid[1], grid[2]}, b = {block[0], block[1], block[2]};
    cudaError_t err = cooperative
        ? cudaLaunchCooperativeKernel((const void *)fn, g, b, args, shared_mem, stream)
        : cudaLaunchKernel((const void *)fn, g, b, args, shared_mem, stream);
    if (err == cudaSuccess)
        err = cudaGetLastError();
    return ga_check_launch(err, name, stream);
}

/* kernel(grid, block, args, shared_mem=0, stream=None), by vectorcall. */
static PyObject *
kernel_vectorcall(uk_kernel *self, PyObject *const *vargs, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *grid_obj, *block_obj, *kargs, *stream_obj = Py_None, *smem_obj = NULL;
    Py_ssize_t shared_mem = 0;
    unsigned int grid[3], block[3];
    uk_slot stack_slots[UK_STACK_ARGS];
    void *stack_ptrs[UK_STACK_ARGS];
    uk_slot *slots = stack_slots;
    void **ptrs = stack_ptrs;
    PyObject *result = NULL;
    int device;
    cudaStream_t stream;

    if (nargs < 3 || nargs > 4) {
        PyErr_Format(PyExc_TypeError, "a kernel is called as kernel(grid, block, args, "
                     "shared_mem=0, stream=None); got %zd positional arguments", nargs);
        return NULL;
    }
    grid_obj = vargs[0];
    block_obj = vargs[1];
    kargs = vargs[2];
    if (nargs == 4)
        smem_obj = vargs[3];
    for (Py_ssize_t k = 0; kwnames != NULL && k < PyTuple_GET_SIZE(kwnames); ++k) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        if (PyUnicode_CompareWithASCIIString(name, "stream") == 0)
            stream_obj = vargs[nargs + k];
        else if (PyUnicode_CompareWithASCIIString(name, "shared_mem") == 0 && smem_obj == NULL)
            smem_obj = vargs[nargs + k];
        else {
            PyErr_Format(PyExc_TypeError, "kernel call got an unexpected or repeated keyword "
                         "argument '%U'", name);
            return NULL;
        }
    }
    if (smem_obj != NULL) {
        shared_mem = PyLong_AsSsize_t(smem_obj);
        if (shared_mem == -1 && PyErr_Occurred())
            return NULL;
    }
    if (!PyTuple_Check(kargs) && !PyList_Check(kargs)) {
        PyErr_Format(PyExc_TypeError, "args must be a tuple of kernel arguments, not %.100s",
                     Py_TYPE(kargs)->tp_name);
        return NULL;
    }
    if (dims_arg(grid_obj, "grid", grid) < 0 || dims_arg(block_obj, "block", block) < 0)
        return NULL;
    if (shared_mem < 0) {
        PyErr_SetString(PyExc_ValueError, "shared_mem must not be negative");
        return NULL;
    }
    if (ga_runtime_stream_arg(stream_obj, "kernel launch", &device, &stream) < 0)
        return NULL;
    uk_entry *e = kernel_entry(self, device);
    const uk_device_limits *lim = e ? limits_of(device) : NULL;
    if (lim == NULL)
        return NULL;
    const char *axis = "xyz";
    for (int i = 0; i < 3; ++i) {
        if (block[i] > (unsigned)lim->max_block[i]) {
            PyErr_Format(PyExc_ValueError, "block.%c is %u, over this device's limit of %d",
                         axis[i], block[i], lim->max_block[i]);
            return NULL;
        }
        if (grid[i] > (unsigned)lim->max_grid[i]) {
            PyErr_Format(PyExc_ValueError, "grid.%c is %u, over this device's limit of %d",
                         axis[i], grid[i], lim->max_grid[i]);
            return NULL;
        }
    }
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    if (threads > (unsigned long long)e->max_threads) {
        PyErr_Format(PyExc_ValueError, "a block of %llu threads is more than this kernel "
                     "allows: max_threads_per_block is %d (limited by its registers or launch "
                     "bounds)", threads, e->max_threads);
        return NULL;
    }
    if (shared_mem > e->max_dyn_smem) {
        PyErr_Format(PyExc_ValueError, "shared_mem=%zd bytes is over this kernel's limit of %d "
                     "bytes of dynamic shared memory; raise it with "
                     "kernel.max_dynamic_shared_size_bytes = n (up to %d on this device)",
                     shared_mem, e->max_dyn_smem, lim->max_smem_optin);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(kargs);
    PyObject **items = PySequence_Fast_ITEMS(kargs);
    if (n > UK_STACK_ARGS) {
        slots = PyMem_Malloc((size_t)n * sizeof(uk_slot));
        ptrs = PyMem_Malloc((size_t)n * sizeof(void *));
        if (slots == NULL || ptrs == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        if (ga_uk_pack_arg(items[i], (int)i, device, slots[i].bytes) < 0)
            goto done;
        ptrs[i] = slots[i].bytes;
    }
    if (ga_runtime_use_device(device) < 0)
        goto done;
    if (ga_uk_launch((void *)e->fn, self->cooperative, grid, block, (size_t)shared_mem, ptrs,
                     stream, self->what[0] ? self->what : "launching a user kernel") < 0)
        goto done;
    result = Py_NewRef(Py_None);
done:
    if (slots != stack_slots)
        PyMem_Free(slots);
    if (ptrs != stack_ptrs)
        PyMem_Free(ptrs);
    return result;
}

/* _attributes(device) -> dict of the compiled function's attributes. */
static PyObject *
kernel_attributes(uk_kernel *self, PyObject *arg)
{
    int device = (int)PyLong_AsLong(arg);
    if (device == -1 && PyErr_Occurred())
        return NULL;
    uk_entry *e = kernel_entry(self, device);
    if (e == NULL || ga_runtime_use_device(device) < 0)
        return NULL;
    struct cudaFuncAttributes fa;
    cudaError_t err = cudaFuncGetAttributes(&fa, (const void *)e->fn);
    if (err != cudaSuccess)
        return ga_err_cuda(err, "cudaFuncGetAttributes");
    return Py_BuildValue(
        "{s:i,s:i,s:n,s:n,s:n,s:i,s:i,s:i,s:i,s:i}",
        "max_threads_per_block", fa.maxThreadsPerBlock, "num_regs", fa.numRegs,
        "shared_size_bytes", (Py_ssize_t)fa.sharedSizeBytes,
        "const_size_bytes", (Py_ssize_t)fa.constSizeBytes,
        "local_size_bytes", (Py_ssize_t)fa.localSizeBytes, "ptx_version", fa.ptxVersion,
        "binary_version", fa.binaryVersion, "cache_mode_ca", fa.cacheModeCA,
        "max_dynamic_shared_size_bytes", fa.maxDynamicSharedSizeBytes,
        "preferred_shared_memory_carveout", fa.preferredShmemCarveout);
}

/* cudaFuncSetAttribute(fn, name, value) on `device`, with the limits
 * checked first.  0 / -1. */
static int
set_function_attribute(cudaKernel_t fn, int device, const char *name, int value)
{
    enum cudaFuncAttribute attr;
    if (strcmp(name, "max_dynamic_shared_size_bytes") == 0)
        attr = cudaFuncAttributeMaxDynamicSharedMemorySize;
    else if (strcmp(name, "preferred_shared_memory_carveout") == 0)
        attr = cudaFuncAttributePreferredSharedMemoryCarveout;
    else {
        PyErr_Format(PyExc_AttributeError, "no settable kernel attribute '%s'", name);
        return -1;
    }
    const uk_device_limits *lim = limits_of(device);
    if (lim == NULL)
        return -1;
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize &&
        (value < 0 || value > lim->max_smem_optin)) {
        PyErr_Format(PyExc_ValueError, "max_dynamic_shared_size_bytes must be between 0 and "
                     "%d on this device, got %d", lim->max_smem_optin, value);
        return -1;
    }
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout && (value < -1 || value > 100)) {
        PyErr_Format(PyExc_ValueError, "preferred_shared_memory_carveout must be a percentage "
                     "from 0 to 100 (or -1: no preference), got %d", value);
        return -1;
    }
    if (ga_runtime_use_device(device) < 0)
        return -1;
    cudaError_t err = cudaFuncSetAttribute((const void *)fn, attr, value);
    if (err != cudaSuccess) {
        ga_err_cuda(err, "cudaFuncSetAttribute");
        return -1;
    }
    return 0;
}

/* _set_attribute(device, name, value) on this kernel (loaded if needed). */
static PyObject *
kernel_set_attribute(uk_kernel *self, PyObject *args)
{
    int device, value;
    const char *name;
    if (!PyArg_ParseTuple(args, "isi:_set_attribute", &device, &name, &value))
        return NULL;
    uk_entry *e = kernel_entry(self, device);
    if (e == NULL || set_function_attribute(e->fn, device, name, value) < 0)
        return NULL;
    struct cudaFuncAttributes fa;
    cudaError_t err = cudaFuncGetAttributes(&fa, (const void *)e->fn);
    if (err != cudaSuccess)
        return ga_err_cuda(err, "cudaFuncGetAttributes");
    e->max_dyn_smem = fa.maxDynamicSharedSizeBytes;
    Py_RETURN_NONE;
}

/* _function_set_attribute(handle, device, name, value): the same on a bare
 * handle, for settings made before a device's first load. */
static PyObject *
py_function_set_attribute(PyObject *mod, PyObject *args)
{
    PyObject *h;
    int device, value;
    const char *name;
    if (!PyArg_ParseTuple(args, "Oisi:_function_set_attribute", &h, &device, &name, &value))
        return NULL;
    cudaKernel_t fn = (cudaKernel_t)PyLong_AsVoidPtr(h);
    if (fn == NULL && PyErr_Occurred())
        return NULL;
    if (set_function_attribute(fn, device, name, value) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
kernel_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    uk_kernel *self = (uk_kernel *)type->tp_alloc(type, 0);
    if (self != NULL)
        self->vectorcall = (vectorcallfunc)kernel_vectorcall;
    return (PyObject *)self;
}

static void
kernel_dealloc(uk_kernel *self)
{
    PyMem_Free(self->entries);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
kernel_cooperative_get(uk_kernel *self, void *c)
{
    return PyBool_FromLong(self->cooperative);
}

static int
kernel_cooperative_set(uk_kernel *self, PyObject *value, void *c)
{
    int v = value ? PyObject_IsTrue(value) : 0;
    if (v < 0)
        return -1;
    self->cooperative = v;
    return 0;
}

static PyMethodDef kernel_methods[] = {
    {"_attributes", (PyCFunction)kernel_attributes, METH_O,
     "_attributes($self, device, /)\n--\n\nThe compiled function's attributes on `device`."},
    {"_set_attribute", (PyCFunction)kernel_set_attribute, METH_VARARGS,
     "_set_attribute($self, device, name, value, /)\n--\n\ncudaFuncSetAttribute on `device`."},
    {"_reset", (PyCFunction)kernel_reset, METH_NOARGS,
     "_reset($self, /)\n--\n\nForget the handles cached per device."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef kernel_getset[] = {
    {"_cooperative", (getter)kernel_cooperative_get, (setter)kernel_cooperative_set,
     "Launch with cudaLaunchCooperativeKernel (grid-wide synchronisation).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Subclassed in Python (RawKernel and the generated kernels), which adds
 * the instance __dict__; the C launch stays their __call__. */
static PyTypeObject UK_KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuarr._core._KernelBase",
    .tp_basicsize = sizeof(uk_kernel),
    .tp_dealloc = (destructor)kernel_dealloc,
    .tp_vectorcall_offset = offsetof(uk_kernel, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "The C launch shared by gpuarr's user kernels (see gpuarr.RawKernel).",
    .tp_methods = kernel_methods,
    .tp_getset = kernel_getset,
    .tp_new = kernel_new,
};

static PyMethodDef userkernel_functions[] = {
    {"_function_set_attribute", py_function_set_attribute, METH_VARARGS,
     "_function_set_attribute(handle, device, name, value, /)\n--\n\n"
     "cudaFuncSetAttribute on a kernel handle."},
    {NULL, NULL, 0, NULL},
};

int
ga_userkernel_init(PyObject *m)
{
    if (PyType_Ready(&UK_LibraryType) < 0 || PyType_Ready(&UK_KernelType) < 0 ||
        PyModule_AddObjectRef(m, "_Library", (PyObject *)&UK_LibraryType) < 0 ||
        PyModule_AddObjectRef(m, "_KernelBase", (PyObject *)&UK_KernelType) < 0)
        return -1;
    return PyModule_AddFunctions(m, userkernel_functions);
}
