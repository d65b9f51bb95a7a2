/*
 * userelementwise.c -- the call of a user elementwise kernel
 * (gpuarr.ElementwiseKernel, and gpuarr.fuse, which builds one), in C so
 * that a call on a small array costs a few microseconds of host time.
 *
 * The Python side (gpuarr/_userkernels.py) parses the parameter lists,
 * resolves the types of a call and generates and compiles the CUDA source;
 * this file does the part that runs on every call:
 *
 *   1. The call's signature -- per argument: device array (dtype, ndim),
 *      NumPy scalar (dtype), Python bool/int/float/complex -- as a short
 *      byte string, looked up in the kernel's dict of plans.  A miss asks
 *      the Python subclass for a plan (`self._make_plan(args)`), an
 *      _EWPlan: one role per parameter (array, raw array, scalar; input or
 *      output), its dtype, and a builder for the compiled kernels.
 *   2. The arrays broadcast together (raw ones excepted), outputs not
 *      passed are allocated, and the layout is collapsed to the fewest
 *      dimensions (reduce_dims) with plan.c's planner; when every array is
 *      contiguous in the same order the kernel indexes them directly.
 *   3. The kernel for (device, dimensions) comes from the plan's cache, or
 *      from its builder (`builder(device, ndim, contiguous)` returns a
 *      kernel handle, compiling on the first use), and is launched with
 *      the parameters packed in the order the generated source declares
 *      them:  n, [shape], then per parameter: a non-raw array's pointer
 *      [and byte strides], a raw array's (pointer, shape, strides, size),
 *      a scalar's value converted to the parameter's dtype.
 *
 * Ownership: a plan owns its dtypes and builder; a kernel object owns its
 * plans (a dict); kernel handles belong to libraries that the Python
 * builder keeps alive for the plan's lifetime.
 */
#include "gpuarr.h"

#include <stddef.h>
#include <string.h>

#define EW_MAX_PARAMS 64
#define EW_MAX_DEVICES 64
#define EW_VARIANTS (GA_KMAX_DIMS + 1)   /* 0: contiguous, k: k collapsed dims */
#define EW_PARAM_BYTES 8192

enum { ROLE_IN = 0, ROLE_IN_RAW = 1, ROLE_SCALAR = 2, ROLE_OUT = 3, ROLE_OUT_RAW = 4 };

/* =============================================================== _EWPlan */

typedef struct {
    PyObject_HEAD
    int nparams;
    int reduce_dims;
    int no_return, return_tuple;
    int roles[EW_MAX_PARAMS];
    int raw_ndim[EW_MAX_PARAMS];
    PyArray_Descr *descrs[EW_MAX_PARAMS];
    PyObject *builder;
    void **kernels[EW_MAX_DEVICES];        /* per device: EW_VARIANTS handles */
} ew_plan;

static PyTypeObject EW_PlanType;

static PyObject *
plan_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"roles", "dtypes", "raw_ndims", "builder", "reduce_dims",
                             "no_return", "return_tuple", NULL};
    PyObject *roles, *dtypes, *ndims, *builder;
    int reduce_dims = 1, no_return = 0, return_tuple = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O!O|ppp:_EWPlan", kwlist, &PyTuple_Type,
                                     &roles, &PyTuple_Type, &dtypes, &PyTuple_Type, &ndims,
                                     &builder, &reduce_dims, &no_return, &return_tuple))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(roles);
    if (n > EW_MAX_PARAMS || PyTuple_GET_SIZE(dtypes) != n || PyTuple_GET_SIZE(ndims) != n) {
        PyErr_Format(PyExc_ValueError, "an elementwise kernel takes at most %d parameters, "
                     "one role, dtype and raw ndim each", EW_MAX_PARAMS);
        return NULL;
    }
    ew_plan *p = (ew_plan *)type->tp_alloc(type, 0);
    if (p == NULL)
        return NULL;
    p->nparams = (int)n;
    p->reduce_dims = reduce_dims;
    p->no_return = no_return;
    p->return_tuple = return_tuple;
    p->builder = Py_NewRef(builder);
    for (Py_ssize_t i = 0; i < n; ++i) {
        p->roles[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(roles, i));
        p->raw_ndim[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(ndims, i));
        PyObject *d = PyTuple_GET_ITEM(dtypes, i);
        if (!PyArray_DescrConverter(d, &p->descrs[i])) {
            Py_DECREF(p);
            return NULL;
        }
    }
    if (PyErr_Occurred()) {
        Py_DECREF(p);
        return NULL;
    }
    return (PyObject *)p;
}

static void
plan_dealloc(ew_plan *p)
{
    for (int i = 0; i < p->nparams; ++i)
        Py_XDECREF(p->descrs[i]);
    for (int d = 0; d < EW_MAX_DEVICES; ++d)
        PyMem_Free(p->kernels[d]);
    Py_XDECREF(p->builder);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyTypeObject EW_PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuarr._core._EWPlan",
    .tp_basicsize = sizeof(ew_plan),
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "_EWPlan(roles, dtypes, raw_ndims, builder, reduce_dims=True, no_return=False, "
              "return_tuple=False)\n--\n\n"
              "The resolved parameters of one call signature of an elementwise kernel: one role "
              "(0 input array, 1 raw input, 2 scalar, 3 output array, 4 raw output) and dtype "
              "per parameter, the raw arrays' ndim, and builder(device, ndim, contiguous) -> "
              "kernel handle.",
    .tp_new = plan_new,
};

/* The kernel of `plan` for (device, variant), built on first use. */
static void *
plan_kernel(ew_plan *p, int device, int ndim, int contiguous)
{
    int v = contiguous ? 0 : ndim;
    if ((unsigned)device >= EW_MAX_DEVICES) {
        PyErr_Format(PyExc_ValueError, "device %d is out of range", device);
        return NULL;
    }
    if (p->kernels[device] == NULL) {
        p->kernels[device] = PyMem_Calloc(EW_VARIANTS, sizeof(void *));
        if (p->kernels[device] == NULL)
            return PyErr_NoMemory();
    }
    void *k = p->kernels[device][v];
    if (k != NULL)
        return k;
    PyObject *h = PyObject_CallFunction(p->builder, "iii", device, ndim, contiguous);
    if (h == NULL)
        return NULL;
    k = PyLong_AsVoidPtr(h);
    Py_DECREF(h);
    if (k == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "an elementwise kernel builder returned null");
        return NULL;
    }
    p->kernels[device][v] = k;
    return k;
}

/* ======================================================= the call's key */

/* Append argument `obj`'s signature to key[*len]; also classifies NumPy
 * arrays (refused) and foreign device arrays (converted to views kept in
 * views[i]).  0 / -1. */
static int
arg_signature(PyObject *obj, int index, unsigned char *key, int *len, PyObject **view)
{
    unsigned char *k = key + *len;
    *len += 3;
    if (ga_array_check(obj)) {
        ga_array *a = (ga_array *)obj;
        k[0] = 1;
        k[1] = (unsigned char)a->type;
        k[2] = (unsigned char)(a->ndim < 255 ? a->ndim : 255);
        return 0;
    }
    k[1] = k[2] = 0;
    if (PyBool_Check(obj)) { k[0] = 2; return 0; }
    if (PyLong_Check(obj)) { k[0] = 3; return 0; }
    if (PyFloat_Check(obj)) { k[0] = 4; return 0; }
    if (PyComplex_Check(obj)) { k[0] = 5; return 0; }
    if (PyArray_IsScalar(obj, Generic)) {
        PyArray_Descr *d = PyArray_DescrFromScalar(obj);
        int code = d ? ga_dtype_code(d, "a kernel argument") : -1;
        Py_XDECREF(d);
        if (code < 0)
            return -1;
        k[0] = 6;
        k[1] = (unsigned char)code;
        return 0;
    }
    if (PyArray_Check(obj)) {
        k[0] = 7;           /* host array: the Python side decides (fuse runs NumPy) */
        k[1] = (unsigned char)(PyArray_TYPE((PyArrayObject *)obj) & 0xff);
        return 0;
    }
    int rc = ga_try_from_cai(obj, view);
    if (rc == -2)
        PyErr_Format(PyExc_TypeError, "argument %d of type %.100s cannot be passed to an "
                     "elementwise kernel: pass device arrays, NumPy scalars or Python "
                     "bool/int/float/complex", index + 1, Py_TYPE(obj)->tp_name);
    if (rc < 0)
        return -1;
    ga_array *a = (ga_array *)*view;
    k[0] = 1;
    k[1] = (unsigned char)a->type;
    k[2] = (unsigned char)(a->ndim < 255 ? a->ndim : 255);
    return 0;
}

/* ========================================================== _EWKernelBase */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *plans;          /* dict: signature bytes -> _EWPlan or a callable */
    int n_in, n_out;          /* arguments: n_in, or n_in + n_out with the outputs */
    PyObject *last_plan;      /* the plan of the last call's signature (a strong ref) */
    unsigned char last_key[3 * EW_MAX_PARAMS];
    int last_keylen;
} ew_kernel;

/* Parameter space: values appended at their alignment, pointers to them
 * collected for cudaLaunchKernel. */
typedef struct {
    _Alignas(16) unsigned char buf[EW_PARAM_BYTES];
    size_t used;
    void *ptrs[3 * EW_MAX_PARAMS + 2];
    int n;
} ew_params;

static void *
params_push(ew_params *p, const void *value, size_t size, size_t align)
{
    size_t at = (p->used + align - 1) & ~(align - 1);
    if (at + size > EW_PARAM_BYTES || p->n >= (int)(sizeof(p->ptrs) / sizeof(p->ptrs[0]))) {
        PyErr_SetString(PyExc_ValueError, "the kernel's parameters are too large");
        return NULL;
    }
    memcpy(p->buf + at, value, size);
    p->ptrs[p->n++] = p->buf + at;
    p->used = at + size;
    return p->buf + at;
}

/* The arguments as a tuple and the keywords as a dict (for the Python side:
 * _make_plan, callable plans). */
static int
pack_call(PyObject *const *vargs, Py_ssize_t nargs, PyObject *kwnames, PyObject **args,
          PyObject **kwds)
{
    *args = PyTuple_New(nargs);
    *kwds = NULL;
    if (*args == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < nargs; ++i)
        PyTuple_SET_ITEM(*args, i, Py_NewRef(vargs[i]));
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0 &&
        (*kwds = ga_kwnames_dict(vargs, nargs, kwnames)) == NULL) {
        Py_CLEAR(*args);
        return -1;
    }
    return 0;
}

static PyObject *
ew_vectorcall(ew_kernel *self, PyObject *const *vargs, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t size = -1, block_size = 128;
    PyObject *stream_obj = Py_None, *result = NULL, *plan_obj = NULL, *keyobj = NULL;
    PyObject *args = NULL, *kwds = NULL;
    PyObject *views[EW_MAX_PARAMS] = {NULL};
    ga_array *arrays[EW_MAX_PARAMS] = {NULL};   /* borrowed or owned (allocated outputs) */
    int owned[EW_MAX_PARAMS] = {0};
    unsigned char key[3 * EW_MAX_PARAMS];
    int keylen = 0;
    ew_params params, *prm = &params;

    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    for (Py_ssize_t k = 0; kwnames != NULL && k < PyTuple_GET_SIZE(kwnames); ++k) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k), *v = vargs[nargs + k];
        if (PyUnicode_CompareWithASCIIString(name, "stream") == 0) {
            stream_obj = v;
            continue;
        }
        Py_ssize_t *dst = PyUnicode_CompareWithASCIIString(name, "size") == 0 ? &size
                          : PyUnicode_CompareWithASCIIString(name, "block_size") == 0
                          ? &block_size : NULL;
        if (dst == NULL) {
            PyErr_Format(PyExc_TypeError, "the kernel got an unexpected keyword argument '%U' "
                         "(it takes size=, block_size= and stream=)", name);
            return NULL;
        }
        *dst = PyLong_AsSsize_t(v);
        if (*dst == -1 && PyErr_Occurred())
            return NULL;
    }
    if (nargs != self->n_in && nargs != self->n_in + self->n_out) {
        PyErr_Format(PyExc_TypeError, "wrong number of arguments: this kernel takes %d inputs%s "
                     "(%d with its outputs), got %zd", self->n_in,
                     self->n_out ? " and optionally its outputs" : "",
                     self->n_in + self->n_out, nargs);
        return NULL;
    }
    if (block_size < 1 || block_size > 1024) {
        PyErr_Format(PyExc_ValueError, "block_size must be between 1 and 1024, got %zd",
                     block_size);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; ++i)
        if (arg_signature(vargs[i], (int)i, key, &keylen, &views[i]) < 0)
            goto done;
    if (self->last_plan != NULL && keylen == self->last_keylen &&
        memcmp(key, self->last_key, (size_t)keylen) == 0) {
        plan_obj = Py_NewRef(self->last_plan);       /* the same signature as last time */
    } else {
        keyobj = PyBytes_FromStringAndSize((const char *)key, keylen);
        if (keyobj == NULL)
            goto done;
        plan_obj = PyDict_GetItemWithError(self->plans, keyobj);
        if (plan_obj != NULL) {
            Py_INCREF(plan_obj);
        } else {
            if (PyErr_Occurred() || pack_call(vargs, nargs, kwnames, &args, &kwds) < 0)
                goto done;
            plan_obj = PyObject_CallMethod((PyObject *)self, "_make_plan", "(O)", args);
            if (plan_obj == NULL || PyDict_SetItem(self->plans, keyobj, plan_obj) < 0)
                goto done;
        }
        Py_XSETREF(self->last_plan, Py_NewRef(plan_obj));
        memcpy(self->last_key, key, (size_t)keylen);
        self->last_keylen = keylen;
    }
    if (!PyObject_TypeCheck(plan_obj, &EW_PlanType)) {
        /* a signature that is not one elementwise launch (fuse: NumPy
         * inputs, a trailing reduction): the plan is a Python callable */
        if (args == NULL && pack_call(vargs, nargs, kwnames, &args, &kwds) < 0)
            goto done;
        result = PyObject_Call(plan_obj, args, kwds);
        goto done;
    }
    ew_plan *plan = (ew_plan *)plan_obj;
    if (plan->nparams < nargs) {
        PyErr_SetString(PyExc_RuntimeError, "the plan has fewer parameters than arguments");
        goto done;
    }

    /* device and stream: those of the arrays (all on one device) */
    int device = -1;
    for (Py_ssize_t i = 0; i < nargs; ++i) {
        PyObject *o = views[i] ? views[i] : vargs[i];
        if (ga_array_check(o)) {
            arrays[i] = (ga_array *)o;
            if (device < 0)
                device = arrays[i]->device;
            else if (arrays[i]->device != device) {
                PyErr_Format(PyExc_ValueError, "arguments are on different devices (%d and %d)",
                             device, arrays[i]->device);
                goto done;
            }
        }
    }
    int sdev;
    cudaStream_t stream;
    if (ga_runtime_stream_arg(stream_obj, "elementwise kernel", &sdev, &stream) < 0)
        goto done;
    if (device < 0)
        device = sdev;
    else if (stream_obj == Py_None)
        stream = ga_runtime_device_stream(device);
    else if (sdev != device) {
        PyErr_Format(PyExc_ValueError, "the stream belongs to device %d but the arrays are on "
                     "device %d", sdev, device);
        goto done;
    }

    /* broadcast shape of the non-raw arrays (inputs and outputs passed) */
    npy_intp shape[NPY_MAXDIMS];
    int ndim = 0, have_arrays = 0;
    for (Py_ssize_t i = 0; i < nargs; ++i) {
        int role = plan->roles[i];
        if ((role != ROLE_IN && role != ROLE_OUT) || arrays[i] == NULL)
            continue;
        ga_array *a = arrays[i];
        if (!have_arrays) {
            ndim = a->ndim;
            memcpy(shape, a->shape, sizeof(npy_intp) * ndim);
            have_arrays = 1;
            continue;
        }
        int nd = a->ndim > ndim ? a->ndim : ndim;
        npy_intp merged[NPY_MAXDIMS];
        for (int k = 0; k < nd; ++k) {
            npy_intp x = k - (nd - ndim) >= 0 ? shape[k - (nd - ndim)] : 1;
            npy_intp y = k - (nd - a->ndim) >= 0 ? a->shape[k - (nd - a->ndim)] : 1;
            if (x != y && x != 1 && y != 1) {
                PyObject *t = ga_shape_tuple(a->ndim, a->shape);
                if (t != NULL)
                    PyErr_Format(PyExc_ValueError, "operands could not be broadcast together: "
                                 "argument %zd has shape %R", i + 1, t);
                Py_XDECREF(t);
                goto done;
            }
            merged[k] = x == 1 ? y : x;
        }
        ndim = nd;
        memcpy(shape, merged, sizeof(npy_intp) * nd);
    }
    if (have_arrays && size != -1) {
        PyErr_SetString(PyExc_ValueError, "size= can be given only when no argument is a "
                        "(non-raw) array: the arrays' broadcast shape is the size");
        goto done;
    }
    if (!have_arrays) {
        if (size < 0) {
            PyErr_SetString(PyExc_ValueError, "no (non-raw) array argument gives the loop's "
                            "size: pass size=");
            goto done;
        }
        ndim = 1;
        shape[0] = size;
    }
    npy_intp n = 1;
    for (int k = 0; k < ndim; ++k)
        n *= shape[k];

    /* outputs passed must have the broadcast shape; the others are allocated */
    int nparams = plan->nparams;
    cudaStream_t prev = ga_runtime_device_stream(device);
    for (int i = 0; i < nparams; ++i) {
        int role = plan->roles[i];
        if (role != ROLE_OUT && role != ROLE_OUT_RAW)
            continue;
        if (i < nargs) {
            ga_array *o = arrays[i];
            if (o == NULL) {
                PyErr_Format(PyExc_TypeError, "output argument %d must be a device array", i + 1);
                goto done;
            }
            if (!(o->flags & GA_WRITEABLE)) {
                PyErr_Format(PyExc_ValueError, "output argument %d is read-only", i + 1);
                goto done;
            }
            if (role == ROLE_OUT && (o->ndim != ndim ||
                                     memcmp(o->shape, shape, sizeof(npy_intp) * ndim) != 0)) {
                PyObject *t1 = ga_shape_tuple(o->ndim, o->shape), *t2 = ga_shape_tuple(ndim, shape);
                if (t1 != NULL && t2 != NULL)
                    PyErr_Format(PyExc_ValueError, "output argument %d has shape %R, but the "
                                 "inputs broadcast to %R", i + 1, t1, t2);
                Py_XDECREF(t1);
                Py_XDECREF(t2);
                goto done;
            }
            continue;
        }
        /* allocated in the order of the stream the kernel runs on */
        Py_INCREF(plan->descrs[i]);
        ga_runtime_set_device_stream(device, stream);
        arrays[i] = ga_array_empty(ndim, shape, plan->descrs[i], 0, device);
        ga_runtime_set_device_stream(device, prev);
        if (arrays[i] == NULL)
            goto done;
        owned[i] = 1;
    }

    if (n > 0) {
        /* layout of the non-raw arrays */
        npy_intp bstrides[EW_MAX_PARAMS][NPY_MAXDIMS];
        const npy_intp *ops[EW_MAX_PARAMS];
        int opidx[EW_MAX_PARAMS], nops = 0;
        for (int i = 0; i < nparams; ++i) {
            int role = plan->roles[i];
            if ((role != ROLE_IN && role != ROLE_OUT) || arrays[i] == NULL)
                continue;
            ga_array *a = arrays[i];
            if (ga_plan_broadcast_to(a->ndim, a->shape, a->strides, ndim, shape,
                                     bstrides[nops]) < 0)
                goto done;
            ops[nops] = bstrides[nops];
            opidx[nops++] = i;
        }
        ga_kshape ks;
        ga_kstrides kst[EW_MAX_PARAMS];
        if (plan->reduce_dims || nops == 0) {
            if (ga_plan_collapse(ndim, shape, nops, ops, &ks, kst) < 0)
                goto done;
        } else {
            if (ndim > GA_KMAX_DIMS) {
                PyErr_Format(PyExc_ValueError, "reduce_dims=False: the arrays have %d "
                             "dimensions, more than the %d a kernel takes", ndim, GA_KMAX_DIMS);
                goto done;
            }
            ks.ndim = ndim > 0 ? ndim : 1;
            ks.shape[0] = 1;
            for (int k = 0; k < ndim; ++k)
                ks.shape[k] = shape[k];
            for (int j = 0; j < nops; ++j) {
                kst[j].s[0] = 0;
                for (int k = 0; k < ndim; ++k)
                    kst[j].s[k] = ops[j][k];
            }
        }
        int contiguous = plan->reduce_dims && ks.ndim == 1;
        for (int j = 0; j < nops && contiguous; ++j)
            contiguous = kst[j].s[0] == ga_array_itemsize(arrays[opidx[j]]);
        void *fn = plan_kernel(plan, device, ks.ndim, contiguous);
        if (fn == NULL)
            goto done;

        prm->used = 0;
        prm->n = 0;
        int64_t n64 = (int64_t)n;
        if (params_push(prm, &n64, 8, 8) == NULL)
            goto done;
        if (!contiguous && params_push(prm, ks.shape, 8 * (size_t)ks.ndim, 8) == NULL)
            goto done;
        int j = 0;
        for (int i = 0; i < nparams; ++i) {
            int role = plan->roles[i];
            if (role == ROLE_IN || role == ROLE_OUT) {
                if (arrays[i] == NULL) {
                    PyErr_Format(PyExc_TypeError, "argument %d must be a device array", i + 1);
                    goto done;
                }
                if (params_push(prm, &arrays[i]->data, sizeof(void *), 8) == NULL)
                    goto done;
                if (!contiguous && params_push(prm, kst[j].s, 8 * (size_t)ks.ndim, 8) == NULL)
                    goto done;
                j++;
            } else if (role == ROLE_IN_RAW || role == ROLE_OUT_RAW) {
                ga_array *a = arrays[i];
                if (a == NULL) {
                    PyErr_Format(PyExc_TypeError, "raw argument %d must be a device array", i + 1);
                    goto done;
                }
                int64_t raw[1 + 2 * NPY_MAXDIMS + 1];
                int nd = a->ndim;
                memcpy(&raw[0], &a->data, sizeof(void *));
                for (int k = 0; k < nd; ++k) {
                    raw[1 + k] = a->shape[k];
                    raw[1 + nd + k] = a->strides[k];
                }
                raw[1 + 2 * nd] = ga_array_size(a);
                if (params_push(prm, raw, 8 * (size_t)(2 + 2 * nd), 8) == NULL)
                    goto done;
            } else {
                ga_kscalar v;
                if (ga_scalar_to_bytes(vargs[i], plan->descrs[i], &v) < 0)
                    goto done;
                size_t item = (size_t)PyDataType_ELSIZE(plan->descrs[i]);
                size_t align = PyDataType_ALIGNMENT(plan->descrs[i]);
                if (params_push(prm, v.v.bytes, item, align ? align : 1) == NULL)
                    goto done;
            }
        }
        int sms = ga_runtime_sm_count(device);
        int64_t blocks = (n64 + block_size - 1) / block_size;
        int64_t cap = (int64_t)sms * (2048 / block_size) * 8;
        if (blocks > cap)
            blocks = cap;
        unsigned int grid[3] = {(unsigned int)(blocks < 1 ? 1 : blocks), 1, 1};
        unsigned int block[3] = {(unsigned int)block_size, 1, 1};
        if (ga_runtime_use_device(device) < 0 ||
            ga_uk_launch(fn, 0, grid, block, 0, prm->ptrs, stream,
                         "launching an elementwise kernel") < 0)
            goto done;
    }

    /* the result: the outputs, in parameter order */
    int outs[EW_MAX_PARAMS], nout = 0;
    for (int i = 0; i < nparams; ++i)
        if (plan->roles[i] == ROLE_OUT || plan->roles[i] == ROLE_OUT_RAW)
            outs[nout++] = i;
    if (plan->no_return) {
        result = Py_NewRef(Py_None);
    } else if (nout == 1 && !plan->return_tuple) {
        result = Py_NewRef((PyObject *)arrays[outs[0]]);
    } else {
        result = PyTuple_New(nout);
        for (int k = 0; result && k < nout; ++k)
            PyTuple_SET_ITEM(result, k, Py_NewRef((PyObject *)arrays[outs[k]]));
    }
done:
    Py_XDECREF(args);
    Py_XDECREF(kwds);
    for (int i = 0; i < EW_MAX_PARAMS; ++i) {
        Py_XDECREF(views[i]);
        if (owned[i])
            Py_DECREF(arrays[i]);
    }
    Py_XDECREF(keyobj);
    Py_XDECREF(plan_obj);
    return result;
}

static PyObject *
ew_kernel_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    ew_kernel *self = (ew_kernel *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)ew_vectorcall;
    self->plans = PyDict_New();
    if (self->plans == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void
ew_kernel_dealloc(ew_kernel *self)
{
    Py_XDECREF(self->plans);
    Py_XDECREF(self->last_plan);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* _configure(n_in, n_out) */
static PyObject *
ew_kernel_configure(ew_kernel *self, PyObject *args)
{
    int n_in, n_out;
    if (!PyArg_ParseTuple(args, "ii:_configure", &n_in, &n_out))
        return NULL;
    if (n_in < 0 || n_out < 0 || n_in + n_out > EW_MAX_PARAMS) {
        PyErr_Format(PyExc_ValueError, "an elementwise kernel takes at most %d parameters",
                     EW_MAX_PARAMS);
        return NULL;
    }
    self->n_in = n_in;
    self->n_out = n_out;
    PyDict_Clear(self->plans);
    Py_CLEAR(self->last_plan);
    Py_RETURN_NONE;
}

static PyObject *
ew_kernel_plans(ew_kernel *self, void *c)
{
    return Py_NewRef(self->plans);
}

static PyMethodDef ew_kernel_methods[] = {
    {"_configure", (PyCFunction)ew_kernel_configure, METH_VARARGS,
     "_configure($self, n_in, n_out, /)\n--\n\n"
     "Set the argument counts: n_in, or n_in + n_out with the outputs (clears the plans)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ew_kernel_getset[] = {
    {"_plans", (getter)ew_kernel_plans, NULL, "Plans by call signature.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject EW_KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "gpuarr._core._EWKernelBase",
    .tp_basicsize = sizeof(ew_kernel),
    .tp_dealloc = (destructor)ew_kernel_dealloc,
    .tp_vectorcall_offset = offsetof(ew_kernel, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "The C call of gpuarr's elementwise user kernels (see gpuarr.ElementwiseKernel).",
    .tp_methods = ew_kernel_methods,
    .tp_getset = ew_kernel_getset,
    .tp_new = ew_kernel_new,
};

int
ga_userelementwise_init(PyObject *m)
{
    if (PyType_Ready(&EW_PlanType) < 0 || PyType_Ready(&EW_KernelType) < 0 ||
        PyModule_AddObjectRef(m, "_EWPlan", (PyObject *)&EW_PlanType) < 0 ||
        PyModule_AddObjectRef(m, "_EWKernelBase", (PyObject *)&EW_KernelType) < 0)
        return -1;
    return 0;
}
