/*
 * gpuarr.h -- declarations shared by the C files of gpuarr._core.
 *
 * Each src/<concern>.c has an `int ga_<concern>_init(PyObject *module)` that
 * adds its types and functions to the module (0 on success, -1 with an
 * exception set).  Cross-file internals are ga_<area>_<verb>; everything is
 * hidden from other shared objects by -fvisibility=hidden.
 *
 * Return conventions: PyObject * (NULL on error), int (0 / -1 with an
 * exception set), and -2 from try_* helpers for "fast path not applicable".
 */
#ifndef GPUARR_H
#define GPUARR_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define PY_ARRAY_UNIQUE_SYMBOL gpuarr_ARRAY_API
#ifndef GA_NUMPY_IMPORT
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#include "kernels.h"

/* ======================== errors.c ======================================= */

extern PyObject *GA_CUDARuntimeError;  /* base of every CUDA failure */
extern PyObject *GA_OutOfMemoryError;  /* (CUDARuntimeError, MemoryError) */
extern PyObject *GA_NoDeviceError;     /* no driver / no device / driver too old */

/* Raise the exception mapped from `err`, naming `what` (the failing call).
 * Clears CUDA's last-error state.  Returns NULL for convenience. */
PyObject *ga_err_cuda(cudaError_t err, const char *what);

/* Report an error during teardown without raising (keeps a pending one). */
void ga_err_unraisable(cudaError_t err, const char *what);

/* Raise the TypeError for a NumPy array given where gpuarr wants a device
 * array: "<fname>: <what> is a numpy.ndarray, which lives in host memory;
 * move it to the device with gpuarr.asarray() first" (no "<fname>: " when
 * fname is NULL).  The Python layer raises the same error through
 * _core._host_array_error.  Returns NULL for convenience. */
PyObject *ga_err_host_array(const char *fname, const char *what);
/* The same refusal of a NumPy array given as an output (output=): "...;
 * pass a gpuarr array (gpuarr.empty(shape, dtype)) or a dtype". */
PyObject *ga_err_host_output(const char *fname, const char *what);

/* IndexError "index <index> is out of bounds for axis <axis> with size
 * <size>", NumPy's words.  Returns NULL for convenience. */
PyObject *ga_err_index_bounds(long long index, int axis, npy_intp size);
/* 0 when two arrays' devices are the same, else -1 with ValueError naming
 * both. */
int ga_check_same_device(int a, int b);

/* Check a CUDA call; on failure raise and jump to `fail:`. */
#define GA_CUDA_TRY(call)                                                      \
    do {                                                                       \
        cudaError_t ga_err_ = (call);                                          \
        if (ga_err_ != cudaSuccess) {                                          \
            ga_err_cuda(ga_err_, #call);                                       \
            goto fail;                                                         \
        }                                                                      \
    } while (0)

/* Check a kernel launcher's result (and, with GPUARR_SYNC_LAUNCH=1 in the
 * environment, synchronise after it so faults point at the launch). */
int ga_check_launch(cudaError_t err, const char *what, cudaStream_t stream);
#define GA_LAUNCH_TRY(call, stream)                                            \
    do {                                                                       \
        if (ga_check_launch((call), #call, (stream)) < 0)                      \
            goto fail;                                                         \
    } while (0)

/* ======================== runtime.c ====================================== */

/* Make sure a device can be used (lazily initialises CUDA once) and that
 * `device` is current for the calling thread.  0 / -1. */
int ga_runtime_use_device(int device);

/* The calling thread's current device (no CUDA call; 0 by default). */
int ga_runtime_current_device(void);

void ga_runtime_set_current_device(int device);

/* The calling thread's current stream of `device` (streams are per device,
 * as in CuPy; NULL, the legacy default stream, unless a Stream is entered):
 * the one way to pick the stream for work on `device`, whichever device is
 * current.  No CUDA call. */
cudaStream_t ga_runtime_device_stream(int device);
/* Wait for `stream` (GIL released); `what` names the operation in the
 * error (Stream.synchronize, and a count a kernel wrote straight into
 * pinned host memory).  0 / -1. */
int ga_wait_stream(cudaStream_t stream, const char *what);
/* Make `stream` the calling thread's current stream of `device` (the
 * caller restores the previous one). */
void ga_runtime_set_device_stream(int device, cudaStream_t stream);
/* Make `stream` of `device` wait for the work queued so far on `producer`
 * of `producer_device` (an event recorded there; no host wait).  The CUDA
 * device is left at `device`.  0 / -1. */
int ga_runtime_stream_after(int device, cudaStream_t stream, int producer_device,
                            cudaStream_t producer);

/* A `stream=` argument: None (the calling thread's current stream of the
 * current device), a gpuarr Stream, or any object with __cuda_stream__.
 * Sets the device the stream belongs to and its handle; -1 with TypeError
 * naming `what` otherwise. */
int ga_runtime_stream_arg(PyObject *obj, const char *what, int *device, cudaStream_t *handle);

/* Number of devices, or -1 with an exception set when none can be used
 * (also in a child forked after CUDA was initialised). */
int ga_runtime_device_count(void);

/* Whether this process was forked after its parent initialised CUDA: it
 * cannot use CUDA, and teardown must make no CUDA call. */
int ga_runtime_forked(void);
/* Register `child` to run in the child after fork(); 0 / -1 (OSError). */
int ga_runtime_at_fork_child(void (*child)(void));

/* Multiprocessor count of a device (cached). */
int ga_runtime_sm_count(int device);

/* ======================== mempool.c ====================================== */

/* Device memory from the calling device's pool, ordered on `stream`.
 * nbytes == 0 gives NULL with no error.  NULL with OutOfMemoryError set
 * after cached blocks were released and the allocation retried. */
void *ga_pool_malloc(int device, size_t nbytes, cudaStream_t stream, int *failed);
/* Temporary storage for a two-phase launcher, whose size query is a call
 * with temp NULL: a block of at least 256 bytes even when *nbytes is 0, so
 * the second call is never taken for a query.  *nbytes is raised to the
 * size allocated, which ga_pool_free must be given.  NULL with an
 * exception set. */
void *ga_pool_scratch(int device, size_t *nbytes, cudaStream_t stream);
/* Return a block to its pool (never raises). */
void ga_pool_free(int device, void *ptr, size_t nbytes, cudaStream_t stream);

/* Pinned host memory from the pinned pool; NULL with an exception set. */
void *ga_pinned_malloc(size_t nbytes);
void ga_pinned_free(void *ptr, size_t nbytes);
/* A Python object owning a pinned block (returned to the pool on dealloc),
 * used as the base of NumPy arrays over pinned memory. */
PyObject *ga_pinned_owner_new(void *ptr, size_t nbytes);

/* ======================== dtype.c ======================================== */

/* Map a NumPy dtype to a kernel type code; -1 with TypeError naming `argname`
 * when gpuarr has no kernels for it (str, object, datetime, structured...). */
int ga_dtype_code(PyArray_Descr *descr, const char *argname);
/* A new reference to the native-byte-order dtype for a code. */
PyArray_Descr *ga_dtype_from_code(int code);
/* Convert any dtype-like (None -> default) into a supported descriptor. */
PyArray_Descr *ga_dtype_converter_or(PyObject *obj, PyArray_Descr *deflt, const char *argname);
/* Encode a Python / NumPy scalar as the bytes of `descr` (NumPy casting). */
int ga_scalar_to_bytes(PyObject *value, PyArray_Descr *descr, ga_kscalar *out);

/* ======================== arrayobject.c ================================== */

#define GA_INLINE_DIMS 6

enum {
    GA_C_CONTIGUOUS = 0x1,
    GA_F_CONTIGUOUS = 0x2,
    GA_OWNDATA = 0x4,
    GA_WRITEABLE = 0x8,
};

typedef struct {
    PyObject_HEAD
    char *data;              /* device address of element [0,...,0] */
    int ndim;
    int device;
    int type;                /* ga_type code */
    int flags;
    npy_intp *shape;         /* points at dims_inline or a PyMem block */
    npy_intp *strides;       /* bytes, NumPy convention */
    PyArray_Descr *descr;    /* native byte order, strong ref */
    PyObject *base;          /* owner of the memory when not GA_OWNDATA */
    void *alloc;             /* pool block start, when GA_OWNDATA */
    size_t alloc_size;
    cudaStream_t alloc_stream;
    int alloc_kind;          /* GA_MEM_*: where an owning array's memory came from */
    PyObject *weakrefs;
    npy_intp dims_inline[2 * GA_INLINE_DIMS];
} ga_array;

extern PyTypeObject GA_ArrayType;
#define ga_array_check(op) PyObject_TypeCheck(op, &GA_ArrayType)

static inline npy_intp ga_array_size(const ga_array *a)
{
    npy_intp n = 1;
    for (int i = 0; i < a->ndim; ++i)
        n *= a->shape[i];
    return n;
}
static inline int ga_array_itemsize(const ga_array *a) { return (int)PyDataType_ELSIZE(a->descr); }

/* New array owning fresh pool memory: C order (strides NULL) or F order.
 * Steals `descr`.  Raises on bad shapes, out of memory or no device. */
ga_array *ga_array_empty(int ndim, const npy_intp *shape, PyArray_Descr *descr,
                         int fortran, int device);
/* Memory kinds: the device pool (default), managed memory, or pinned host
 * memory mapped into the device's address space.  The last two are
 * host-addressable, so such arrays export the buffer protocol. */
enum { GA_MEM_DEVICE = 0, GA_MEM_MANAGED = 1, GA_MEM_PINNED = 2 };
ga_array *ga_array_empty_in(int ndim, const npy_intp *shape, PyArray_Descr *descr,
                            int fortran, int device, int memory);
/* New view over `base`'s memory (or a foreign owner): steals `descr`;
 * `base` gets a new reference.  Flags computed from shape and strides. */
ga_array *ga_array_view(PyObject *base, char *data, int ndim, const npy_intp *shape,
                        const npy_intp *strides, PyArray_Descr *descr, int device,
                        int writeable);
/* Parse an int-or-sequence shape (returns ndim or -1) and an order string
 * ('C', 'F', 'A', 'K'; None -> deflt). */
int ga_parse_shape(PyObject *obj, npy_intp *dims, const char *argname);
int ga_parse_order(PyObject *obj, char deflt, char *out);
/* A Python helper registered by gpuarr/__init__.py (borrowed; NULL with
 * RuntimeError when missing). */
PyObject *ga_helper(const char *name);
/* Call the registered Python helper `helper` with (self, *args, **kwds):
 * the methods, ufunc methods and NumPy protocols written in Python. */
PyObject *ga_forward_method(const char *helper, PyObject *self, PyObject *args,
                            PyObject *kwds);
/* A view of a's memory from its first element with another shape and
 * strides, a's dtype and device (writeable only when a is). */
PyObject *ga_array_view_of(ga_array *a, int ndim, const npy_intp *shape,
                           const npy_intp *strides, int writeable);
/* Byte range [lo, hi) touched by an array's elements (lo == hi when empty). */
void ga_array_extent(const ga_array *a, char **lo, char **hi);
/* Whether the byte ranges of a and b intersect (never for an empty array):
 * the memory-overlap test before a write that could read its own output. */
int ga_array_overlaps(const ga_array *a, const ga_array *b);
/* Recompute the contiguity flags from shape and strides. */
void ga_array_update_flags(ga_array *a);

/* ======================== plan.c ========================================= */

/* A tuple of Python ints from a shape. */
PyObject *ga_shape_tuple(int ndim, const npy_intp *shape);

/* Collapse an iteration over `ndim` dims with `nops` operands' byte strides
 * into the fewest kernel dims: size-1 dims dropped, adjacent dims merged
 * where every operand allows it.  Fills `shape` and `strides[nops]`.
 * Returns 0, or -1 with ValueError when more than GA_KMAX_DIMS remain. */
int ga_plan_collapse(int ndim, const npy_intp *dims, int nops,
                     const npy_intp *const *op_strides, ga_kshape *shape,
                     ga_kstrides *strides);

/* Broadcast `a_ndim`/`a_shape`/`a_strides` to `ndim`/`shape`, writing the
 * broadcast strides (0 where stretched).  -1 with ValueError naming both
 * shapes when they are incompatible. */
int ga_plan_broadcast_to(int a_ndim, const npy_intp *a_shape, const npy_intp *a_strides,
                         int ndim, const npy_intp *shape, npy_intp *out_strides);

/* A sequence of at most `max` Python ints (a shape, strides) into out;
 * its length, or -1 with ValueError naming `what` (TypeError when it is no
 * sequence of ints). */
int ga_plan_intp_seq(PyObject *seq, npy_intp *out, int max, const char *what);

/* ======================== convert.c ====================================== */

/* dst[...] = src[...], broadcasting src to dst's shape and converting its
 * dtype (NumPy 'unsafe' casting) on the current stream of dst's device.
 * 0 / -1. */
int ga_assign_array(ga_array *dst, ga_array *src);
/* dst[...] = raw element bytes in dst's dtype. 0 / -1. */
int ga_fill_bytes(ga_array *dst, const ga_kscalar *value);
/* dst[...] = scalar value. 0 / -1. */
int ga_assign_scalar(ga_array *dst, PyObject *value);
/* A new C-contiguous array of `descr` (stolen; NULL = same dtype) with a's
 * values. */
ga_array *ga_array_copy_as(ga_array *a, PyArray_Descr *descr, int fortran);

/* ======================== shape.c ======================================== */

/* Normalise an axis argument for `ndim` dims (numpy AxisError when out of
 * range).  0 / -1. */
int ga_normalize_axis(PyObject *obj, int ndim, int *axis);
/* a reshaped to dims (-1 allowed) in order 'C'/'F': a view when possible. */
PyObject *ga_array_reshape(ga_array *a, int nd, npy_intp *dims, char order);
/* a as one contiguous dimension in order 'C', 'F', 'A' or 'K' (NumPy's
 * ravel; flatten when copy): a view when a already is in that order. */
PyObject *ga_array_ravel(ga_array *a, char order, int copy);

/* ======================== transfer.c ===================================== */

/* Host -> device: a new device array from any NumPy array (any strides and
 * byte order), converted to `descr` when given (stolen; may be NULL). */
ga_array *ga_transfer_from_numpy(PyArrayObject *host, PyArray_Descr *descr, int device);
/* Device -> host: into `out` (a NumPy array of the same shape) or a new
 * array when out is NULL.  `stream` NULL = the current stream of a's
 * device; the copy is complete on return when `blocking`. */
PyObject *ga_transfer_to_numpy(ga_array *a, PyArrayObject *out, cudaStream_t stream, int blocking);
/* Copy nbytes from device memory to host memory on `stream` and wait for
 * it (GIL released); `what` names the operation in the error.  For counts
 * and other small results read back by an operation.  0 / -1. */
int ga_read_small(void *host, const void *dev, size_t nbytes, cudaStream_t stream,
                  const char *what);
/* The element of a size-1 array as a NumPy scalar (one synchronising
 * copy); `what` names the conversion for the error on other sizes. */
PyObject *ga_array_scalar(ga_array *a, const char *what);

/* ======================== ctors.c ======================================== */

/* gp.asarray's core: any array-like to a device array of `descr` (stolen,
 * may be NULL).  `copy`: 1 always, 0 never (ValueError if needed), -1 if
 * needed. */
PyObject *ga_asarray(PyObject *obj, PyArray_Descr *descr, int copy, char order);
/* `a` as dtype `descr` (stolen, NULL: a's) and order on a's own device:
 * `a` itself when nothing changes and copy != 1, else a copy (ValueError
 * when copy == 0).  astype's path. */
PyObject *ga_array_as(ga_array *a, PyArray_Descr *descr, int copy, char order);
/* ga_array_as(a, descr, -1, 'C'): `a` itself (a new reference) when it is
 * C-contiguous in an equivalent dtype, else a C-contiguous converted copy;
 * what a kernel that takes contiguous operands of one dtype is given. */
ga_array *ga_array_contiguous_as(ga_array *a, PyArray_Descr *descr);
/* A device array from argument `argname` of gpuarr function `fname`: device
 * arrays pass (moved to the current device when needed), Python scalars and
 * sequences are converted, NumPy arrays are refused (ga_err_host_array).
 * New reference, or NULL. */
ga_array *ga_device_arg(PyObject *obj, const char *fname, const char *argname);
/* dst[...] = value: a device array, a scalar or any host array-like (moved
 * to the device first).  0 / -1. */
int ga_assign_value(ga_array *dst, PyObject *value);

/* ======================== mapping.c ====================================== */

/* len(a) and a[i] along the first axis (a view, or a 0-d array for 1-d
 * input): the mapping slots, and the sequence slots of arrayobject.c. */
Py_ssize_t ga_array_length(ga_array *a);
PyObject *ga_array_item(ga_array *a, Py_ssize_t i);

/* ======================== methods.c ====================================== */

/* tp_repr and tp_str of ndarray: the values as NumPy prints them (one
 * synchronising copy), the device named when it is not device 0. */
PyObject *ga_array_repr(ga_array *self);
PyObject *ga_array_str(ga_array *self);

/* ======================== number.c ======================================= */

/* tp_richcompare of ndarray. */
PyObject *ga_array_richcompare(PyObject *a, PyObject *b, int op);

/* ======================== elementwise.c ================================== */

/* Apply ufunc `id` (enum ga_ufunc_id) to its inputs: NumPy's dtype
 * resolution, broadcasting, out= (may be NULL), dtype= (may be NULL). */
PyObject *ga_ufunc_apply(int id, PyObject *const *inputs, PyObject *out, PyArray_Descr *dtype,
                         NPY_CASTING casting);
PyObject *ga_ufunc_call1(int id, PyObject *a);
PyObject *ga_ufunc_call2(int id, PyObject *a, PyObject *b);

/* ======================== interop.c ====================================== */

/* ndarray.__cuda_array_interface__ (version 3). */
PyObject *ga_array_cai_get(ga_array *a, void *closure);
/* A zero-copy view of an object exporting __cuda_array_interface__:
 * 0 with *out set, -1 on error, -2 when obj exports none. */
int ga_try_from_cai(PyObject *obj, PyObject **out);
/* __array_ufunc__ / __array_function__: handed to the Python helpers. */
PyObject *ga_array_array_ufunc(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *ga_array_array_function(PyObject *self, PyObject *args, PyObject *kwds);
/* The keyword arguments of a vectorcall (values after the nargs positional
 * ones, names in kwnames, which may be NULL) as a new dict. */
PyObject *ga_kwnames_dict(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
/* NumPy's override protocols for gpuarr's own functions: when an argument
 * is a foreign object defining __array_ufunc__ (NEP 13) or
 * __array_function__ (NEP 18), call it with `ufunc` / gpuarr._core.<name>
 * and set *result (NULL with an exception on failure); 0 when handed over,
 * -2 when no argument overrides.  Only the first `nrelevant` positional
 * arguments are looked at (NumPy's "relevant arguments"). */
int ga_try_ufunc_override(PyObject *ufunc, PyObject *const *args, size_t nargsf,
                          PyObject *kwnames, PyObject **result);
int ga_try_function_override(const char *name, PyObject *const *args, Py_ssize_t nargs,
                             Py_ssize_t nrelevant, PyObject *kwnames, PyObject **result);
/* __dlpack__ / __dlpack_device__. */
PyObject *ga_array_dlpack(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *ga_array_dlpack_device(PyObject *self, PyObject *unused);

/* ======================== reduction.c ==================================== */

/* ndarray reduction methods (METH_FASTCALL | METH_KEYWORDS), NumPy's
 * signatures without the array: x.sum(axis=None, dtype=None, out=None,
 * keepdims=False, ...).  The result (a 0-d device array for axis=None) or
 * NULL. */
PyObject *ga_array_sum(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ga_array_prod(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ga_array_mean(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ga_array_var(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ga_array_std(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ga_array_min(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ga_array_max(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ga_array_ptp(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ga_array_argmin(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ga_array_argmax(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ga_array_all(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
PyObject *ga_array_any(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* ======================== scan.c ========================================= */

/* ndarray.cumsum / ndarray.cumprod (METH_VARARGS | METH_KEYWORDS):
 * (axis=None, dtype=None, out=None), NumPy's. */
PyObject *ga_array_cumsum(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *ga_array_cumprod(PyObject *self, PyObject *args, PyObject *kwds);

/* ======================== blas.c ========================================= */

/* NumPy's matmul of x1 and x2 (device arrays, scalars or sequences), into
 * out (may be NULL) as dtype (may be NULL): the @ operator and gp.matmul. */
PyObject *ga_matmul(PyObject *x1, PyObject *x2, PyObject *out, PyArray_Descr *dtype);

/* ======================== compact.c ====================================== */

/* The int64 positions of the nonzero flags[0..n) into dst (room for n) and
 * their number into *count: one compaction, one synchronisation.  0 / -1. */
int ga_compact_flag_positions(int device, int64_t n, const uint8_t *flags, int64_t *dst,
                              int64_t *count, cudaStream_t stream);
/* The elements of `values` (C order) where `cond` is true, or with values
 * NULL the int64 positions of cond's true elements, over the first
 * min(cond.size, limit) elements of cond; IndexError for a true element at
 * or past `limit` (numpy.compress).  A new 1-d array, or NULL. */
ga_array *ga_compact_true(ga_array *cond, ga_array *values, npy_intp limit);
/* Give `out` (a fresh 1-d array with room for more, stolen) its final
 * length `count`: the same array, or the elements moved to an exact block
 * when the spare room would be most of a large block; NULL on error. */
ga_array *ga_compact_shrink(ga_array *out, npy_intp count);
/* A single-pass compaction's launch (compact.cuh's kernels): it writes the
 * number kept to *count, pinned host memory, using `scratch`
 * (scratch_bytes of pooled device memory). */
typedef cudaError_t (*ga_counted_launch)(const void *ctx, void *scratch, size_t scratch_bytes,
                                         int64_t *count, cudaStream_t stream);
/* Run `launch` with scratch_bytes of pooled scratch and a pinned count,
 * wait for the stream (with `first`, reading that device word into
 * *first_host in the same synchronisation) and give the count: the one
 * synchronisation of a data-dependent result size.  0 / -1. */
int ga_compact_counted(int device, size_t scratch_bytes, ga_counted_launch launch,
                       const void *ctx, const uint64_t *first, uint64_t *first_host,
                       int64_t *count, cudaStream_t stream);
/* The coordinates of a's true elements: an (ndim, count) int64 array. */
ga_array *ga_compact_nonzero(ga_array *a);
/* ndarray methods of compact.c (listed in methods.c). */
PyObject *ga_array_compress(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *ga_array_nonzero(PyObject *self, PyObject *unused);

/* ======================== take.c ========================================= */

/* An indexing plan: a view whose axes axis[k] are indexed by int64 arrays
 * index[k] (device, strong references), the broadcast shape of the
 * indices going `insert` dims into the view's other dims. */
typedef struct {
    ga_array *view;
    int nidx;
    int axis[GA_TAKE_MAX];
    int orig_axis[GA_TAKE_MAX];   /* the axis as numbered in the user's array */
    ga_array *index[GA_TAKE_MAX];
    int unchecked;                /* some device index still needs checking */
    int host_bad;                 /* a host index out of range: raised unless */
    int host_bad_axis;            /* the indices broadcast to nothing (NumPy) */
    long long host_bad_index;
    npy_intp host_bad_len;
    int insert;
    int mode;                     /* GA_TAKE_RAISE, _WRAP or _CLIP */
    int rdim;
    npy_intp rshape[NPY_MAXDIMS];
    npy_intp base_strides[NPY_MAXDIMS];
    npy_intp index_strides[GA_TAKE_MAX][NPY_MAXDIMS];
} ga_take_plan;
/* Release the plan's references (it may be reused after). */
void ga_take_plan_clear(ga_take_plan *p);
/* Add an index array for axis `axis` of p->view (`orig_axis` as the user
 * numbers it, for messages): a device integer array or anything NumPy
 * turns into one; `checked`: a device array known to be in range.  0 / -1. */
int ga_take_plan_add_index(ga_take_plan *p, PyObject *obj, int axis, int orig_axis,
                           int checked);
/* result[r] = view[r, indices] as a new C-contiguous array, and
 * view[r, indices] = value (broadcast, converted); IndexError for an index
 * out of range (a device index is checked with one synchronisation). */
ga_array *ga_take_gather(ga_take_plan *p);
int ga_take_scatter(ga_take_plan *p, PyObject *value);

/* ======================== sort.c ========================================= */

/* ndarray methods of sort.c (listed in methods.c). */
PyObject *ga_array_sort(PyObject *self, PyObject *args, PyObject *kwds);
PyObject *ga_array_argsort(PyObject *self, PyObject *args, PyObject *kwds);

/* ======================== userkernel.c =================================== */

/* Encode kernel argument `obj` (number `index`, for messages) by value into
 * a 16-byte slot as CuPy passes it: device arrays (checked to be on
 * `device`) and other device-array objects as their pointer, NumPy scalars
 * in their dtype, bool / int / float / complex as bool / int64 (uint64
 * from 2**63) / double / complex128, None as NULL.  0 / -1. */
int ga_uk_pack_arg(PyObject *obj, int index, int device, void *slot);
/* Launch a loaded kernel (a cudaKernel_t) on the current device; `name`
 * names the launch in errors.  0 / -1. */
int ga_uk_launch(void *fn, int cooperative, const unsigned int grid[3],
                 const unsigned int block[3], size_t shared_mem, void **args,
                 cudaStream_t stream, const char *name);

/* ======================== per-file module init =========================== */

int ga_errors_init(PyObject *m);
int ga_runtime_init(PyObject *m);
int ga_mempool_init(PyObject *m);
int ga_dtype_init(PyObject *m);
int ga_arrayobject_init(PyObject *m);
int ga_plan_init(PyObject *m);
int ga_shape_init(PyObject *m);
int ga_convert_init(PyObject *m);
int ga_transfer_init(PyObject *m);
int ga_ctors_init(PyObject *m);
int ga_mapping_init(PyObject *m);
int ga_methods_init(PyObject *m);
int ga_random_init(PyObject *m);
int ga_benchmark_init(PyObject *m);
int ga_elementwise_init(PyObject *m);
int ga_interop_init(PyObject *m);
int ga_compact_init(PyObject *m);
int ga_take_init(PyObject *m);
int ga_sort_init(PyObject *m);
int ga_label_init(PyObject *m);
int ga_measure_init(PyObject *m);
int ga_stats_init(PyObject *m);
int ga_reduction_init(PyObject *m);
int ga_scan_init(PyObject *m);
int ga_convolve_init(PyObject *m);
int ga_userkernel_init(PyObject *m);
int ga_userelementwise_init(PyObject *m);
int ga_blas_init(PyObject *m);

/* Method tables and slot functions defined in their own files and wired
 * into the type object in arrayobject.c. */
extern PyGetSetDef ga_array_getset[];
extern PyMethodDef ga_array_methods[];
extern PyMappingMethods ga_array_as_mapping;
extern PyNumberMethods ga_array_as_number;

#endif /* GPUARR_H */
