/*
 * blas.c -- matrix products: gp.matmul and the @ operator, on cuBLAS.
 *
 * cuBLAS is never linked.  gpuarr/cuda/cublas.py finds libcublas with
 * gpuarr/cuda/_libs.py's search on the first floating-point product and
 * hands its path to _blas_load, which dlopens it here and resolves the few
 * entry points used (cublasGemmEx, cublasGemmStridedBatchedEx, handle and
 * stream calls) into function pointers, so every later product is one C
 * call with no ctypes conversion.  Without cuBLAS, `import gpuarr` and
 * everything but floating-point products work; those raise CUBLASError
 * naming every place searched.
 *
 * Ownership: one cuBLAS handle per device, created on the device's first
 * product (with the device current) and kept until _blas_release, which
 * gpuarr/cuda/cublas.py registers with atexit (never in a child forked
 * after CUDA was initialised).  The handle is set to the calling thread's
 * current stream of the device before each call (cublasSetStream only when
 * it changes: the handles are gpuarr's alone).  The GIL is held from
 * cublasSetStream to the GEMM, so threads sharing a handle cannot
 * interleave there.  Math mode is CUBLAS_DEFAULT_MATH and the compute types
 * are the plain 32F / 64F ones: float32 products never use TF32, as NumPy's
 * never do; float16 products accumulate in float32, as NumPy's loop does.
 *
 * Planning (no GPU needed, exported as _matmul_plan for the tests):
 *  1. shapes (mm_shape): NumPy's matmul signature (n?,k),(k,m?)->(n?,m?)
 *     -- 1-d operands promoted and their dimension dropped from the
 *     result, leading (batch) dimensions broadcast;
 *  2. layouts (mm_layout): each matrix as cuBLAS sees it.  cuBLAS is
 *     column-major, so the row-major C = A @ B is computed as the
 *     column-major C^T = B^T A^T: a row-major matrix is cuBLAS's "N"
 *     operand with ld = its row stride, a column-major one (a transposed
 *     view) its "T" operand with ld = its column stride; anything else
 *     (negative or non-unit inner strides) is copied to C order first;
 *  3. the batch dimensions of C, A and B collapsed together (plan.c): one
 *     dimension left is one strided-batched GEMM (stride 0 for a broadcast
 *     operand; one per 65535 products); more (broadcasting that crosses,
 *     e.g. (3,1) x (1,4)) loop over the outer ones, one strided-batched
 *     GEMM each.
 * Bool and integer products take the exact kernel of kernels/matmul.cu,
 * which reads any strides and needs no copies.
 */
#include "gpuarr.h"

#include <dlfcn.h>
#include <limits.h>

/* ---------------------------------------------------- cuBLAS binding --- */

/* The few cuBLAS types and constants used (cublas_api.h, library_types.h),
 * restated so the build needs no cuBLAS header. */
typedef void *blas_handle;
enum { OP_N = 0, OP_T = 1 };
enum { R_32F = 0, R_64F = 1, R_16F = 2, C_32F = 4, C_64F = 5 };
enum { COMPUTE_32F = 68, COMPUTE_64F = 70 };
enum { GEMM_DEFAULT = -1, DEFAULT_MATH = 0, STATUS_ALLOC_FAILED = 3 };

#define BLAS_MAX_DEVICES 64
#define BLAS_MAX_BATCH 65535

static struct {
    void *lib;
    int (*create)(blas_handle *);
    int (*destroy)(blas_handle);
    int (*set_stream)(blas_handle, cudaStream_t);
    int (*set_math_mode)(blas_handle, int);
    int (*get_version)(blas_handle, int *);
    const char *(*status_name)(int);
    int (*gemm)(blas_handle, int, int, int, int, int, const void *, const void *, int, int,
                const void *, int, int, const void *, void *, int, int, int, int);
    int (*gemm_batched)(blas_handle, int, int, int, int, int, const void *, const void *, int,
                        int, long long, const void *, int, int, long long, const void *,
                        void *, int, int, long long, int, int, int);
    blas_handle handles[BLAS_MAX_DEVICES];
    cudaStream_t streams[BLAS_MAX_DEVICES];   /* the stream each handle is set to */
} blas;

/* Raise gpuarr.cuda.cublas.CUBLASError(message, status) (or
 * OutOfMemoryError for an allocation failure) for cuBLAS call `what`. */
static int
blas_error(int status, const char *what)
{
    const char *name = blas.status_name ? blas.status_name(status) : NULL;
    char msg[256];
    snprintf(msg, sizeof msg, "%s failed: %s", what, name ? name : "unknown cublasStatus_t");
    if (status == STATUS_ALLOC_FAILED) {
        PyErr_Format(GA_OutOfMemoryError, "%s (cuBLAS could not allocate device memory)", msg);
        return -1;
    }
    PyObject *cls = ga_helper("CUBLASError");
    PyObject *exc = cls ? PyObject_CallFunction(cls, "si", msg, status) : NULL;
    if (exc != NULL) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
    return -1;
}

/* Load cuBLAS on first use: the Python helper searches for it and calls
 * _blas_load.  0 / -1 (CUBLASError naming every place searched). */
static int
blas_ready(void)
{
    if (blas.gemm_batched != NULL)
        return 0;
    PyObject *load = ga_helper("blas_load");
    PyObject *r = load ? PyObject_CallNoArgs(load) : NULL;
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    if (blas.gemm_batched == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "gpuarr: loading cuBLAS did not bind it");
        return -1;
    }
    return 0;
}

/* The handle of `device` (current), set to the calling thread's stream. */
static blas_handle
blas_handle_for(int device, cudaStream_t stream)
{
    if ((unsigned)device >= BLAS_MAX_DEVICES) {
        PyErr_Format(PyExc_ValueError, "gpuarr's cuBLAS binding handles devices 0 to %d, "
                     "not %d", BLAS_MAX_DEVICES - 1, device);
        return NULL;
    }
    int st;
    if (blas.handles[device] == NULL) {
        blas_handle h = NULL;
        if ((st = blas.create(&h)) != 0) {
            blas_error(st, "cublasCreate");
            return NULL;
        }
        if ((st = blas.set_math_mode(h, DEFAULT_MATH)) != 0) {
            blas.destroy(h);
            blas_error(st, "cublasSetMathMode");
            return NULL;
        }
        blas.handles[device] = h;
        blas.streams[device] = NULL;          /* a new handle works on the default stream */
    }
    if (blas.streams[device] != stream) {
        if ((st = blas.set_stream(blas.handles[device], stream)) != 0) {
            blas_error(st, "cublasSetStream");
            return NULL;
        }
        blas.streams[device] = stream;
    }
    return blas.handles[device];
}

/* _blas_load(path): dlopen cuBLAS at `path` (a file or a soname) and bind
 * its entry points.  Loading twice is harmless. */
static PyObject *
py_blas_load(PyObject *self, PyObject *arg)
{
    PyObject *bytes = NULL;
    if (blas.gemm_batched != NULL)
        Py_RETURN_NONE;
    if (!PyUnicode_FSConverter(arg, &bytes))
        return NULL;
    void *lib = dlopen(PyBytes_AS_STRING(bytes), RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *why = dlerror();
        PyErr_Format(PyExc_OSError, "cannot load cuBLAS from %s: %s", PyBytes_AS_STRING(bytes),
                     why ? why : "dlopen failed");
        Py_DECREF(bytes);
        return NULL;
    }
    static const char *const names[] = {
        "cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2", "cublasSetMathMode",
        "cublasGetVersion_v2", "cublasGemmEx", "cublasGemmStridedBatchedEx"};
    void *fn[sizeof names / sizeof names[0]];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        if ((fn[i] = dlsym(lib, names[i])) == NULL) {
            PyErr_Format(PyExc_OSError, "%s (loaded from %s) has no %s: cuBLAS 11 or newer is "
                         "needed", PyBytes_AS_STRING(bytes), PyBytes_AS_STRING(bytes), names[i]);
            dlclose(lib);
            Py_DECREF(bytes);
            return NULL;
        }
    }
    Py_DECREF(bytes);
    blas.lib = lib;
    *(void **)&blas.create = fn[0];
    *(void **)&blas.destroy = fn[1];
    *(void **)&blas.set_stream = fn[2];
    *(void **)&blas.set_math_mode = fn[3];
    *(void **)&blas.get_version = fn[4];
    *(void **)&blas.gemm = fn[5];
    *(void **)&blas.status_name = dlsym(lib, "cublasGetStatusName");   /* cuBLAS 11.4+ */
    *(void **)&blas.gemm_batched = fn[6];
    Py_RETURN_NONE;
}

/* _blas_version(): cuBLAS's version as an int (e.g. 130100), from the
 * current device's handle. */
static PyObject *
py_blas_version(PyObject *self, PyObject *unused)
{
    int device = ga_runtime_current_device(), v = 0, st;
    if (blas_ready() < 0 || ga_runtime_use_device(device) < 0)
        return NULL;
    blas_handle h = blas_handle_for(device, ga_runtime_device_stream(device));
    if (h == NULL)
        return NULL;
    if ((st = blas.get_version(h, &v)) != 0)
        return blas_error(st, "cublasGetVersion"), NULL;
    return PyLong_FromLong(v);
}

/* _blas_release(): destroy every handle (atexit).  Never raises. */
static PyObject *
py_blas_release(PyObject *self, PyObject *unused)
{
    if (blas.lib == NULL || ga_runtime_forked())
        Py_RETURN_NONE;
    int current;
    if (cudaGetDevice(&current) != cudaSuccess)
        current = -1;
    for (int d = 0; d < BLAS_MAX_DEVICES; ++d) {
        if (blas.handles[d] == NULL)
            continue;
        if (cudaSetDevice(d) == cudaSuccess)
            blas.destroy(blas.handles[d]);
        blas.handles[d] = NULL;
        blas.streams[d] = NULL;
    }
    if (current >= 0)
        cudaSetDevice(current);
    cudaGetLastError();
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------ planning --- */

#define MM_SIGNATURE "(n?,k),(k,m?)->(n?,m?)"

/* Step 1: NumPy's matmul shapes.  Matrices are m x k and k x n; a 1-d
 * operand is a row (x1) or a column (x2) whose dimension the result drops.
 * Strides are in bytes; batch strides are 0 where an operand is broadcast. */
typedef struct {
    int64_t m, n, k;
    npy_intp a_rs, a_cs, b_rs, b_cs;
    int nbatch;
    npy_intp batch[NPY_MAXDIMS], a_bs[NPY_MAXDIMS], b_bs[NPY_MAXDIMS];
    int out_nd;
    npy_intp out_shape[NPY_MAXDIMS];
} mm_shape;

static int
mm_shape_plan(int and, const npy_intp *ash, const npy_intp *ast, int bnd, const npy_intp *bsh,
              const npy_intp *bst, mm_shape *p)
{
    const int nd[2] = {and, bnd};
    for (int i = 0; i < 2; ++i)
        if (nd[i] < 1) {
            PyErr_Format(PyExc_ValueError, "matmul: Input operand %d does not have enough "
                         "dimensions (has 0, gufunc core with signature " MM_SIGNATURE
                         " requires 1)", i);
            return -1;
        }
    int64_t k2;
    if (and == 1) {
        p->m = 1, p->k = ash[0], p->a_rs = 0, p->a_cs = ast[0];
    } else {
        p->m = ash[and - 2], p->k = ash[and - 1], p->a_rs = ast[and - 2], p->a_cs = ast[and - 1];
    }
    if (bnd == 1) {
        k2 = bsh[0], p->n = 1, p->b_rs = bst[0], p->b_cs = 0;
    } else {
        k2 = bsh[bnd - 2], p->n = bsh[bnd - 1], p->b_rs = bst[bnd - 2], p->b_cs = bst[bnd - 1];
    }
    if (k2 != p->k) {
        PyErr_Format(PyExc_ValueError, "matmul: Input operand 1 has a mismatch in its core "
                     "dimension 0, with gufunc signature " MM_SIGNATURE " (size %lld is "
                     "different from %lld)", (long long)k2, (long long)p->k);
        return -1;
    }
    int na = and > 2 ? and - 2 : 0, nb = bnd > 2 ? bnd - 2 : 0;
    p->nbatch = na > nb ? na : nb;
    for (int i = 0; i < p->nbatch; ++i) {
        int ia = i - (p->nbatch - na), ib = i - (p->nbatch - nb);
        npy_intp sa = ia >= 0 ? ash[ia] : 1, sb = ib >= 0 ? bsh[ib] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            PyObject *as = ga_shape_tuple(and, ash), *bs = ga_shape_tuple(bnd, bsh);
            if (as && bs)
                PyErr_Format(PyExc_ValueError, "matmul: the leading (batch) dimensions of "
                             "x1 %R and x2 %R cannot be broadcast together (size %zd against "
                             "%zd)", as, bs, sa, sb);
            Py_XDECREF(as);
            Py_XDECREF(bs);
            return -1;
        }
        p->batch[i] = sa == 1 ? sb : sa;
        p->a_bs[i] = ia >= 0 && sa != 1 ? ast[ia] : 0;
        p->b_bs[i] = ib >= 0 && sb != 1 ? bst[ib] : 0;
    }
    p->out_nd = p->nbatch;
    memcpy(p->out_shape, p->batch, p->nbatch * sizeof(npy_intp));
    if (and > 1)
        p->out_shape[p->out_nd++] = p->m;
    if (bnd > 1)
        p->out_shape[p->out_nd++] = p->n;
    return 0;
}

/* Step 2: how cuBLAS reads a rows x cols matrix with byte strides rs, cs:
 * row-major (OP_N, ld = rs) or column-major (OP_T, ld = cs) in whole
 * elements; -2 when it can do neither (the operand is copied first). */
static int
mm_layout(int64_t rows, int64_t cols, npy_intp rs, npy_intp cs, int isz, int *op, int64_t *ld)
{
    if ((cs == isz || cols == 1) && (rows == 1 || (rs % isz == 0 && rs >= cols * isz))) {
        *op = OP_N;
        *ld = rows == 1 ? (cols > 1 ? cols : 1) : rs / isz;
    } else if ((rs == isz || rows == 1) && (cols == 1 || (cs % isz == 0 && cs >= rows * isz))) {
        *op = OP_T;
        *ld = cols == 1 ? (rows > 1 ? rows : 1) : cs / isz;
    } else {
        return -2;
    }
    return *ld <= INT_MAX ? 0 : -2;
}

/* Step 3: the batch of C (C order, contiguous, itemsize isz), A and B
 * collapsed together; C's strides lead (plan.c orders by them). */
static int
mm_batch_plan(const mm_shape *p, int isz, ga_kshape *batch, ga_kstrides st[3])
{
    npy_intp c_bs[NPY_MAXDIMS];
    npy_intp step = (npy_intp)(p->m * p->n * isz);
    for (int i = p->nbatch - 1; i >= 0; --i) {
        c_bs[i] = step;
        step *= p->batch[i];
    }
    const npy_intp *strides[3] = {c_bs, p->a_bs, p->b_bs};
    return ga_plan_collapse(p->nbatch, p->batch, 3, strides, batch, st);
}

/* Whether every batch stride of operand `op` suits cuBLAS (whole,
 * non-negative elements). */
static int
mm_batch_ok(const ga_kshape *batch, const ga_kstrides *st, int isz)
{
    for (int d = 0; d < batch->ndim; ++d)
        if (st->s[d] < 0 || st->s[d] % isz != 0)
            return 0;
    return 1;
}

/* --------------------------------------------------------- execution --- */

static int
blas_types(int type, int *dt, int *compute)
{
    switch (type) {
    case GA_FLOAT16: *dt = R_16F, *compute = COMPUTE_32F; return 0;
    case GA_FLOAT32: *dt = R_32F, *compute = COMPUTE_32F; return 0;
    case GA_FLOAT64: *dt = R_64F, *compute = COMPUTE_64F; return 0;
    case GA_COMPLEX64: *dt = C_32F, *compute = COMPUTE_32F; return 0;
    case GA_COMPLEX128: *dt = C_64F, *compute = COMPUTE_64F; return 0;
    default: return -1;
    }
}

/* c = a @ b on cuBLAS; c is C-contiguous with p's output shape, a and b of
 * c's type.  `a`/`b` may be replaced by C-ordered copies (references are
 * the caller's to release).  0 / -1. */
static int
mm_gemm(ga_array **a, ga_array **b, ga_array *c, mm_shape *p)
{
    int isz = ga_array_itemsize(c), ta, tb, dt = 0, compute = 0;
    int64_t lda, ldb;
    ga_kshape batch;
    ga_kstrides st[3];
    for (int pass = 0;; ++pass) {
        if (mm_batch_plan(p, isz, &batch, st) < 0)
            return -1;
        int ra = mm_layout(p->k, p->n, p->b_rs, p->b_cs, isz, &ta, &lda) == 0 &&
                 mm_batch_ok(&batch, &st[2], isz);
        int rb = mm_layout(p->m, p->k, p->a_rs, p->a_cs, isz, &tb, &ldb) == 0 &&
                 mm_batch_ok(&batch, &st[1], isz);
        if (ra && rb)
            break;
        if (pass > 0) {
            PyErr_SetString(PyExc_RuntimeError, "matmul: no cuBLAS layout for C-ordered "
                            "operands (a gpuarr bug)");
            return -1;
        }
        ga_array **fix[2] = {rb ? NULL : a, ra ? NULL : b};
        for (int i = 0; i < 2; ++i) {
            if (fix[i] == NULL)
                continue;
            ga_array *copy = ga_array_copy_as(*fix[i], NULL, 0);
            if (copy == NULL)
                return -1;
            Py_SETREF(*fix[i], copy);
        }
        if (mm_shape_plan((*a)->ndim, (*a)->shape, (*a)->strides, (*b)->ndim, (*b)->shape,
                          (*b)->strides, p) < 0)
            return -1;
    }
    if (p->m > INT_MAX || p->n > INT_MAX || p->k > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "matmul: matrices larger than 2**31 - 1 along a "
                        "dimension are not supported by gpuarr's cuBLAS path");
        return -1;
    }
    blas_types(c->type, &dt, &compute);
    if (blas_ready() < 0)
        return -1;
    cudaStream_t stream = ga_runtime_device_stream(c->device);
    blas_handle h = blas_handle_for(c->device, stream);
    if (h == NULL)
        return -1;
    double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
    float onef[2] = {1.0f, 0.0f}, zerof[2] = {0.0f, 0.0f};
    const void *alpha = compute == COMPUTE_64F ? (const void *)one : (const void *)onef;
    const void *beta = compute == COMPUTE_64F ? (const void *)zero : (const void *)zerof;
    /* The swapped product: C^T (n x m, ld n) = op(B^T) (n x k) op(A^T) (k x m). */
    int m = (int)p->n, n = (int)p->m, k = (int)p->k, ldc = (int)(p->n > 0 ? p->n : 1);
    int inner = batch.ndim - 1;
    int64_t count = batch.shape[inner], outer = 1;
    for (int d = 0; d < inner; ++d)
        outer *= batch.shape[d];
    for (int64_t o = 0; o < outer; ++o) {
        int64_t off[3] = {0, 0, 0}, rem = o;
        for (int d = inner - 1; d >= 0; --d) {
            int64_t i = rem % batch.shape[d];
            rem /= batch.shape[d];
            for (int j = 0; j < 3; ++j)
                off[j] += i * st[j].s[d];
        }
        /* batches of at most BLAS_MAX_BATCH (a grid dimension's limit some
         * cuBLAS kernels carry) */
        for (int64_t first = 0; first < count; first += BLAS_MAX_BATCH) {
            int nb = (int)(count - first < BLAS_MAX_BATCH ? count - first : BLAS_MAX_BATCH);
            const char *pa = (*a)->data + off[1] + first * st[1].s[inner];
            const char *pb = (*b)->data + off[2] + first * st[2].s[inner];
            char *pc = c->data + off[0] + first * st[0].s[inner];
            int status;
            if (nb == 1)
                status = blas.gemm(h, ta, tb, m, n, k, alpha, pb, dt, (int)lda, pa, dt,
                                   (int)ldb, beta, pc, dt, ldc, compute, GEMM_DEFAULT);
            else
                status = blas.gemm_batched(h, ta, tb, m, n, k, alpha, pb, dt, (int)lda,
                                           st[2].s[inner] / isz, pa, dt, (int)ldb,
                                           st[1].s[inner] / isz, beta, pc, dt, ldc,
                                           st[0].s[inner] / isz, nb, compute, GEMM_DEFAULT);
            if (status != 0)
                return blas_error(status, nb == 1 ? "cublasGemmEx"
                                                  : "cublasGemmStridedBatchedEx");
        }
    }
    return 0;
}

/* Real floating products up to this many multiply-adds (batch included:
 * a 128 x 128 x 128 product) take the tiled kernel: there the host's call
 * is the cost, and cublasGemmEx alone takes ~9 us of host time for a 64^3
 * product on the lent H100 (src/kernels/dev/gemm_host_bench.cu), a launch
 * of the tiled kernel ~4 us.  Larger ones go to cuBLAS, which is faster on
 * the GPU from there on. */
#define MM_TILED_MAX_WORK ((int64_t)1 << 21)

static int
mm_small_float(int type, const mm_shape *p)
{
    if (type != GA_FLOAT16 && type != GA_FLOAT32 && type != GA_FLOAT64)
        return 0;
    int64_t work = 1;
    for (int d = -3; d < p->nbatch; ++d) {          /* m, n, k, then the batch */
        int64_t f = d == -3 ? p->m : d == -2 ? p->n : d == -1 ? p->k : p->batch[d];
        if (f > 0 && work > MM_TILED_MAX_WORK / f)
            return 0;
        work *= f;
    }
    return 1;
}

/* c = a @ b on the tiled kernel (kernels/matmul.cu): bool and integer
 * types, and small real floating products. */
static int
mm_tiled(ga_array *a, ga_array *b, ga_array *c, const mm_shape *p)
{
    ga_matmul_args g = {
        .m = p->m, .n = p->n, .k = p->k, .a = a->data, .b = b->data, .c = c->data,
        .a_rs = p->a_rs, .a_cs = p->a_cs, .b_rs = p->b_rs, .b_cs = p->b_cs,
        .c_rs = (int64_t)(p->n * ga_array_itemsize(c)), .c_cs = ga_array_itemsize(c)};
    ga_kstrides st[3];
    if (mm_batch_plan(p, ga_array_itemsize(c), &g.batch, st) < 0)
        return -1;
    g.c_bs = st[0], g.a_bs = st[1], g.b_bs = st[2];
    cudaStream_t stream = ga_runtime_device_stream(c->device);
    GA_LAUNCH_TRY(ga_launch_matmul_tiled(c->type, &g, ga_runtime_sm_count(c->device), stream),
                  stream);
    return 0;
fail:
    return -1;
}

/* Check out= against the result (shape, dtype by same_kind casting,
 * device, writeable) before any device work.  0 / -1. */
static int
mm_check_out(PyObject *out, const mm_shape *p, PyArray_Descr *rdt, int device)
{
    if (!ga_array_check(out)) {
        PyErr_Format(PyExc_TypeError, "matmul: out must be a gpuarr.ndarray, not %.100s",
                     Py_TYPE(out)->tp_name);
        return -1;
    }
    ga_array *o = (ga_array *)out;
    if (o->ndim != p->out_nd || memcmp(o->shape, p->out_shape, p->out_nd * sizeof(npy_intp))) {
        PyObject *want = ga_shape_tuple(p->out_nd, p->out_shape);
        PyObject *got = ga_shape_tuple(o->ndim, o->shape);
        if (want && got)
            PyErr_Format(PyExc_ValueError, "matmul: out has shape %R, the result has shape %R",
                         got, want);
        Py_XDECREF(want);
        Py_XDECREF(got);
        return -1;
    }
    if (!PyArray_CanCastTypeTo(rdt, o->descr, NPY_SAME_KIND_CASTING)) {
        PyErr_Format(PyExc_TypeError, "Cannot cast ufunc 'matmul' output from %R to %R with "
                     "casting rule 'same_kind'", (PyObject *)rdt, (PyObject *)o->descr);
        return -1;
    }
    if (o->device != device) {
        PyErr_Format(PyExc_ValueError, "matmul: out is on device %d, the operands on device "
                     "%d", o->device, device);
        return -1;
    }
    if (!(o->flags & GA_WRITEABLE)) {
        PyErr_SetString(PyExc_ValueError, "matmul: out is read-only");
        return -1;
    }
    return 0;
}

/* The dtype of the product: `dtype` when given (inputs cast to it by
 * same_kind), else NumPy's promotion of the two.  New reference. */
static PyArray_Descr *
mm_result_dtype(ga_array *a, ga_array *b, PyArray_Descr *dtype)
{
    if (dtype == NULL && a->descr == b->descr)      /* the common case, without NumPy */
        return (PyArray_Descr *)Py_NewRef((PyObject *)a->descr);
    if (dtype == NULL)
        return PyArray_PromoteTypes(a->descr, b->descr);
    ga_array *in[2] = {a, b};
    for (int i = 0; i < 2; ++i)
        if (!PyArray_CanCastTypeTo(in[i]->descr, dtype, NPY_SAME_KIND_CASTING)) {
            PyErr_Format(PyExc_TypeError, "Cannot cast ufunc 'matmul' input %d from %R to %R "
                         "with casting rule 'same_kind'", i, (PyObject *)in[i]->descr,
                         (PyObject *)dtype);
            return NULL;
        }
    Py_INCREF(dtype);
    return dtype;
}

static PyObject *
matmul_arrays(ga_array *a, ga_array *b, PyObject *out, PyArray_Descr *dtype)
{
    mm_shape p;
    ga_array *c = NULL, *o = (ga_array *)out;
    PyArray_Descr *rdt = NULL;
    PyObject *result = NULL;
    int type, dt, compute;
    Py_INCREF(a);
    Py_INCREF(b);
    if (a->device != b->device) {
        PyErr_Format(PyExc_ValueError, "matmul: x1 is on device %d and x2 on device %d",
                     a->device, b->device);
        goto fail;
    }
    if (mm_shape_plan(a->ndim, a->shape, a->strides, b->ndim, b->shape, b->strides, &p) < 0)
        goto fail;
    if ((rdt = mm_result_dtype(a, b, dtype)) == NULL)
        goto fail;
    type = ga_dtype_code(rdt, "dtype");
    if (type < 0 || (out != NULL && mm_check_out(out, &p, rdt, a->device) < 0))
        goto fail;
    if (ga_runtime_use_device(a->device) < 0)
        goto fail;
    if (o != NULL && o->type == type && (o->flags & GA_C_CONTIGUOUS) && !ga_array_overlaps(o, a) &&
        !ga_array_overlaps(o, b)) {
        c = o;
        Py_INCREF(c);
    } else {
        Py_INCREF(rdt);
        if ((c = ga_array_empty(p.out_nd, p.out_shape, rdt, 0, a->device)) == NULL)
            goto fail;
    }
    if (ga_array_size(c) > 0) {
        ga_array **in[2] = {&a, &b};
        for (int i = 0; i < 2; ++i) {
            if ((*in[i])->type == type)
                continue;
            Py_INCREF(rdt);
            ga_array *cast = ga_array_copy_as(*in[i], rdt, 0);
            if (cast == NULL)
                goto fail;
            Py_SETREF(*in[i], cast);
        }
        if (mm_shape_plan(a->ndim, a->shape, a->strides, b->ndim, b->shape, b->strides, &p) < 0)
            goto fail;
        if (blas_types(type, &dt, &compute) < 0 || mm_small_float(type, &p)) {
            if (mm_tiled(a, b, c, &p) < 0)
                goto fail;
        } else if (p.k == 0) {
            ga_kscalar zero = {0};
            if (ga_fill_bytes(c, &zero) < 0)
                goto fail;
        } else if (mm_gemm(&a, &b, c, &p) < 0) {
            goto fail;
        }
    }
    if (o != NULL && c != o) {
        if (ga_assign_array(o, c) < 0)
            goto fail;
        result = Py_NewRef(out);
    } else {
        result = Py_NewRef((PyObject *)c);
    }
fail:
    Py_XDECREF(c);
    Py_XDECREF(rdt);
    Py_DECREF(a);
    Py_DECREF(b);
    return result;
}

PyObject *
ga_matmul(PyObject *x1, PyObject *x2, PyObject *out, PyArray_Descr *dtype)
{
    ga_array *a = NULL, *b = NULL;
    PyObject *r = NULL;
    PyObject *x[2] = {x1, x2};
    for (int i = 0; i < 2; ++i)          /* NumPy's error, before a scalar is uploaded */
        if (PyLong_Check(x[i]) || PyFloat_Check(x[i]) || PyComplex_Check(x[i]) ||
            PyArray_IsScalar(x[i], Generic))
            return PyErr_Format(PyExc_ValueError, "matmul: Input operand %d does not have "
                                "enough dimensions (has 0, gufunc core with signature "
                                MM_SIGNATURE " requires 1)", i);
    if ((a = ga_device_arg(x1, "matmul", "x1")) == NULL ||
        (b = ga_device_arg(x2, "matmul", "x2")) == NULL)
        goto done;
    r = matmul_arrays(a, b, out, dtype);
done:
    Py_XDECREF(a);
    Py_XDECREF(b);
    return r;
}

/* ------------------------------------------------------------- Python --- */

/* matmul(x1, x2, /, out=None, *, dtype=None) */
static PyObject *
py_matmul(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *r, *out = NULL, *dtype_obj = NULL;
    PyArray_Descr *dtype = NULL;
    if (nargs > 0 && !(ga_array_check(args[0]) && (nargs < 2 || ga_array_check(args[1]))) &&
        ga_try_function_override("matmul", args, nargs, 2, kwnames, &r) == 0)
        return r;
    if (nargs < 2 || nargs > 3) {
        PyErr_Format(PyExc_TypeError, "matmul() takes 2 positional arguments (x1, x2) and an "
                     "optional out, %zd given", nargs);
        return NULL;
    }
    if (nargs == 3)
        out = args[2];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; ++i) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i), *val = args[nargs + i];
        if (PyUnicode_CompareWithASCIIString(key, "out") == 0 && out == NULL)
            out = val;
        else if (PyUnicode_CompareWithASCIIString(key, "dtype") == 0)
            dtype_obj = val;
        else {
            PyErr_Format(PyExc_TypeError, "matmul() got an unexpected keyword argument %R "
                         "(it takes out= and dtype=)", key);
            return NULL;
        }
    }
    if (out == Py_None)
        out = NULL;
    if (out != NULL && PyTuple_Check(out)) {
        if (PyTuple_GET_SIZE(out) != 1) {
            PyErr_SetString(PyExc_ValueError, "matmul: out must be an array or a tuple of one");
            return NULL;
        }
        out = PyTuple_GET_ITEM(out, 0);
    }
    if (dtype_obj != NULL && dtype_obj != Py_None &&
        (dtype = ga_dtype_converter_or(dtype_obj, NULL, "dtype")) == NULL)
        return NULL;
    r = ga_matmul(args[0], args[1], out, dtype);
    Py_XDECREF(dtype);
    return r;
}

static PyObject *
kshape_list(const ga_kshape *sh, const ga_kstrides *st)
{
    PyObject *l = PyList_New(sh->ndim);
    for (int d = 0; l != NULL && d < sh->ndim; ++d) {
        PyObject *v = PyLong_FromLongLong(st ? st->s[d] : sh->shape[d]);
        if (v == NULL)
            Py_CLEAR(l);
        else
            PyList_SET_ITEM(l, d, v);
    }
    return l;
}

/* _matmul_plan(a_shape, a_strides, b_shape, b_strides, itemsize): the
 * plan of a product as a dict (no GPU needed): out_shape, m, n, k, batch
 * (collapsed, C first), batch strides c/a/b, and for cuBLAS the ops and
 * leading dimensions of the swapped product (transa/lda: x2, transb/ldb:
 * x1; None where that operand would be copied to C order first). */
static PyObject *
py_matmul_plan(PyObject *self, PyObject *args)
{
    PyObject *as, *ast, *bs, *bst;
    int isz;
    npy_intp ash[NPY_MAXDIMS], astr[NPY_MAXDIMS], bsh[NPY_MAXDIMS], bstr[NPY_MAXDIMS];
    mm_shape p;
    ga_kshape batch;
    ga_kstrides st[3];
    if (!PyArg_ParseTuple(args, "OOOOi", &as, &ast, &bs, &bst, &isz))
        return NULL;
    int and = ga_plan_intp_seq(as, ash, NPY_MAXDIMS, "a_shape");
    int bnd = and < 0 ? -1 : ga_plan_intp_seq(bs, bsh, NPY_MAXDIMS, "b_shape");
    if (bnd < 0 || ga_plan_intp_seq(ast, astr, NPY_MAXDIMS, "a_strides") != and ||
        ga_plan_intp_seq(bst, bstr, NPY_MAXDIMS, "b_strides") != bnd) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "shapes and strides differ in length");
        return NULL;
    }
    if (mm_shape_plan(and, ash, astr, bnd, bsh, bstr, &p) < 0 ||
        mm_batch_plan(&p, isz, &batch, st) < 0)
        return NULL;
    int ta, tb;
    int64_t lda, ldb;
    int ra = mm_layout(p.k, p.n, p.b_rs, p.b_cs, isz, &ta, &lda) == 0 &&
             mm_batch_ok(&batch, &st[2], isz);
    int rb = mm_layout(p.m, p.k, p.a_rs, p.a_cs, isz, &tb, &ldb) == 0 &&
             mm_batch_ok(&batch, &st[1], isz);
    const char *opname[2] = {"N", "T"};
    return Py_BuildValue(
        "{s:N,s:L,s:L,s:L,s:N,s:N,s:N,s:N,s:s,s:N,s:s,s:N}",
        "out_shape", ga_shape_tuple(p.out_nd, p.out_shape), "m", (long long)p.m,
        "n", (long long)p.n, "k", (long long)p.k, "batch", kshape_list(&batch, NULL),
        "c_bs", kshape_list(&batch, &st[0]), "a_bs", kshape_list(&batch, &st[1]),
        "b_bs", kshape_list(&batch, &st[2]),
        "transa", ra ? opname[ta] : NULL, "lda", ra ? PyLong_FromLongLong(lda) : Py_NewRef(Py_None),
        "transb", rb ? opname[tb] : NULL, "ldb", rb ? PyLong_FromLongLong(ldb) : Py_NewRef(Py_None));
}

static PyObject *
py_blas_loaded(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(blas.gemm_batched != NULL);
}

static PyMethodDef blas_functions[] = {
    {"matmul", (PyCFunction)(void (*)(void))py_matmul, METH_FASTCALL | METH_KEYWORDS,
     "matmul(x1, x2, /, out=None, *, dtype=None)\n--\n\nMatrix product of two arrays, "
     "NumPy's matmul: 1-d operands are promoted, leading dimensions broadcast; floating "
     "types on cuBLAS (small real products on gpuarr's tiled kernel), bool and integers exact."},
    {"_matmul_plan", py_matmul_plan, METH_VARARGS, "The plan of a matrix product (tests)."},
    {"_blas_load", py_blas_load, METH_O, "Load cuBLAS from a path or soname."},
    {"_blas_loaded", py_blas_loaded, METH_NOARGS, "Whether cuBLAS is loaded."},
    {"_blas_version", py_blas_version, METH_NOARGS, "cuBLAS's version (cublasGetVersion)."},
    {"_blas_release", py_blas_release, METH_NOARGS, "Destroy the cuBLAS handles (atexit)."},
    {NULL, NULL, 0, NULL},
};

int
ga_blas_init(PyObject *m)
{
    return PyModule_AddFunctions(m, blas_functions);
}
