/*
 * reduction.c -- reductions with NumPy's semantics: sum, prod, mean, var,
 * std, min, max, ptp, argmin, argmax, all, any and count_nonzero, as module
 * functions (gpuarr.sum(x, axis=...)) and as ndarray methods (x.sum(...)),
 * and the nan* forms (nansum ... nanargmax), module functions only.  A nan*
 * function of float or complex data runs its plain kernel with NaNs left
 * out (GA_RED_SKIPNAN); of other data it is the plain function.
 *
 * A call runs in four steps, all host-side planning but the last:
 *
 * 1. Arguments.  One table row per function gives its NumPy signature;
 *    axis is None, an int or a tuple (numpy AxisError when out of range,
 *    ValueError on duplicates), keepdims, dtype=, out=, ddof= as NumPy.
 *    where= other than True and var's mean= raise NotImplementedError.
 * 2. Dtypes.  NumPy decides: the loop dtype of sum/prod is
 *    numpy.add/multiply.resolve_dtypes(..., reduction=True) with out='s
 *    dtype taken into account, and the result dtype of mean/var/std is that
 *    of NumPy's own function on a one-element array (the Python helper
 *    "reduce_result_dtype" in gpuarr/_reductions.py).  Answers are cached
 *    per (function, input dtype, dtype=, out dtype), so a repeated call costs
 *    a table lookup.  The kernels accumulate wide (64-bit integers, double,
 *    complex128) and convert once when storing, so the few cases where
 *    NumPy's loop dtype would change the values (an integer sum in float,
 *    a float sum in float16) cast the input first.
 * 3. Layout.  The output (kept dims, or keepdims' shape) is allocated, or
 *    out= validated -- shape, device, writeability -- before any work.
 *    ga_plan_reduce splits the input dims into kept dims (collapsed together
 *    with the output's strides) and reduced dims (collapsed alone, negative
 *    strides flipped: the order of a sum does not matter; argmin/argmax
 *    keep C order because they report positions).  plan_grid then chooses
 *    the thread layout (kernels.h, ga_reduce_grid): lanes along the
 *    reduction when the reduced dims are the densest in memory ("rows"),
 *    lanes across outputs otherwise ("columns"), and how many blocks share
 *    one output's reduction so that the GPU fills up.
 * 4. Launch on the current stream of the array's device: one kernel, or
 *    two when the reduction is split (partials in a pool block freed in
 *    stream order).
 *
 * Results with axis=None are 0-d device arrays, not host scalars: reading
 * them (float(), bool(), .get()) is the one synchronisation, and only when
 * the caller asks.  Empty reductions follow NumPy: sum 0, prod 1, all True,
 * any False, mean/var NaN with NumPy's RuntimeWarning, and min/max/ptp/
 * argmin/argmax raise ValueError.  An out= whose dtype differs from the
 * loop's, or that overlaps the input, or that a step after the kernel
 * could leave half-done (a failed allocation), receives the result through
 * a temporary.  NumPy's all-NaN rules (nanmin's warning, nanargmin's
 * ValueError, nanmean's and nanvar's warnings) need to know whether a slice
 * was all NaN: the Python helper reduce_nan_check reads that back, one
 * synchronisation, and for nanmean/nanvar only when a result is NaN.
 * An integer mean is NumPy's sum in that dtype divided by the count (not
 * the rounded float mean), an integer var/std NumPy's truncating steps
 * (Python helper reduce_integer_var).
 */
#include "gpuarr.h"
#include "ufunc_table.h"

/* --------------------------------------------------------------- table --- */

enum red_fn {
    F_SUM, F_PROD, F_MEAN, F_VAR, F_STD, F_MIN, F_MAX, F_PTP, F_ARGMIN, F_ARGMAX,
    F_ALL, F_ANY, F_COUNT_NONZERO,
    F_NANSUM, F_NANPROD, F_NANMEAN, F_NANVAR, F_NANSTD, F_NANMIN, F_NANMAX, F_NANARGMIN,
    F_NANARGMAX, F_NFUNCS
};

enum red_param {
    P_A, P_AXIS, P_DTYPE, P_OUT, P_DDOF, P_KEEPDIMS, P_INITIAL, P_WHERE, P_MEAN, P_CORRECTION,
    P_NPARAMS, P_END = -1
};

static const char *const param_names[P_NPARAMS] = {
    "a", "axis", "dtype", "out", "ddof", "keepdims", "initial", "where", "mean", "correction",
};

enum {
    R_LOOP_DTYPE = 0x1,   /* sum/prod: NumPy's loop dtype, out= included */
    R_RESULT_DTYPE = 0x2, /* mean/var/std: NumPy's result dtype */
    R_SAME_DTYPE = 0x4,   /* min/max/ptp: the input's dtype */
    R_ORDERED = 0x8,      /* argmin/argmax: positions in C order, one axis */
    R_NO_IDENTITY = 0x10, /* empty reductions raise */
    R_UFUNC_AXIS = 0x20,  /* ufunc.reduce quirk: a 0-d input takes axis 0 or -1 */
    R_NAN = 0x40,         /* the nan* variant of `base`: NaNs are left out */
};

typedef struct {
    const char *name;     /* the Python name */
    const char *op;       /* what NumPy's errors name (ufunc or function) */
    int kind, mode, flags;
    int base;             /* the plain function whose rules it follows (itself but nan*) */
    int result_type;      /* fixed result dtype code, or -1 */
    int npos;             /* leading parameters that may be positional */
    signed char params[9];
} red_func;

static const red_func funcs[F_NFUNCS] = {
    [F_SUM] = {"sum", "add", GA_RED_SUM, 0, R_LOOP_DTYPE | R_UFUNC_AXIS, F_SUM, -1, 7,
               {P_A, P_AXIS, P_DTYPE, P_OUT, P_KEEPDIMS, P_INITIAL, P_WHERE, P_END}},
    [F_PROD] = {"prod", "multiply", GA_RED_PROD, 0, R_LOOP_DTYPE | R_UFUNC_AXIS, F_PROD, -1, 7,
                {P_A, P_AXIS, P_DTYPE, P_OUT, P_KEEPDIMS, P_INITIAL, P_WHERE, P_END}},
    [F_MEAN] = {"mean", "mean", GA_RED_MOMENTS, 0, R_RESULT_DTYPE, F_MEAN, -1, 5,
                {P_A, P_AXIS, P_DTYPE, P_OUT, P_KEEPDIMS, P_WHERE, P_END}},
    [F_VAR] = {"var", "var", GA_RED_MOMENTS, 1, R_RESULT_DTYPE, F_VAR, -1, 6,
               {P_A, P_AXIS, P_DTYPE, P_OUT, P_DDOF, P_KEEPDIMS, P_WHERE, P_MEAN, P_CORRECTION}},
    [F_STD] = {"std", "std", GA_RED_MOMENTS, 2, R_RESULT_DTYPE, F_STD, -1, 6,
               {P_A, P_AXIS, P_DTYPE, P_OUT, P_DDOF, P_KEEPDIMS, P_WHERE, P_MEAN, P_CORRECTION}},
    [F_MIN] = {"min", "minimum", GA_RED_MINMAX, 0, R_SAME_DTYPE | R_NO_IDENTITY | R_UFUNC_AXIS,
               F_MIN, -1, 6, {P_A, P_AXIS, P_OUT, P_KEEPDIMS, P_INITIAL, P_WHERE, P_END}},
    [F_MAX] = {"max", "maximum", GA_RED_MINMAX, 1, R_SAME_DTYPE | R_NO_IDENTITY | R_UFUNC_AXIS,
               F_MAX, -1, 6, {P_A, P_AXIS, P_OUT, P_KEEPDIMS, P_INITIAL, P_WHERE, P_END}},
    [F_PTP] = {"ptp", "maximum", GA_RED_MINMAX, 2, R_SAME_DTYPE | R_NO_IDENTITY | R_UFUNC_AXIS,
               F_PTP, -1, 4, {P_A, P_AXIS, P_OUT, P_KEEPDIMS, P_END}},
    [F_ARGMIN] = {"argmin", "argmin", GA_RED_ARG, 0,
                  R_ORDERED | R_NO_IDENTITY | R_UFUNC_AXIS, F_ARGMIN, GA_INT64, 3,
                  {P_A, P_AXIS, P_OUT, P_KEEPDIMS, P_END}},
    [F_ARGMAX] = {"argmax", "argmax", GA_RED_ARG, 1,
                  R_ORDERED | R_NO_IDENTITY | R_UFUNC_AXIS, F_ARGMAX, GA_INT64, 3,
                  {P_A, P_AXIS, P_OUT, P_KEEPDIMS, P_END}},
    [F_ALL] = {"all", "logical_and", GA_RED_COUNT, 2, R_UFUNC_AXIS, F_ALL, GA_BOOL, 4,
               {P_A, P_AXIS, P_OUT, P_KEEPDIMS, P_WHERE, P_END}},
    [F_ANY] = {"any", "logical_or", GA_RED_COUNT, 1, R_UFUNC_AXIS, F_ANY, GA_BOOL, 4,
               {P_A, P_AXIS, P_OUT, P_KEEPDIMS, P_WHERE, P_END}},
    [F_COUNT_NONZERO] = {"count_nonzero", "count_nonzero", GA_RED_COUNT, 0, R_UFUNC_AXIS,
                         F_COUNT_NONZERO, GA_INT64, 2, {P_A, P_AXIS, P_KEEPDIMS, P_END}},
    [F_NANSUM] = {"nansum", "add", GA_RED_SUM, 0, R_LOOP_DTYPE | R_UFUNC_AXIS | R_NAN, F_SUM,
                  -1, 7, {P_A, P_AXIS, P_DTYPE, P_OUT, P_KEEPDIMS, P_INITIAL, P_WHERE, P_END}},
    [F_NANPROD] = {"nanprod", "multiply", GA_RED_PROD, 0, R_LOOP_DTYPE | R_UFUNC_AXIS | R_NAN,
                   F_PROD, -1, 7,
                   {P_A, P_AXIS, P_DTYPE, P_OUT, P_KEEPDIMS, P_INITIAL, P_WHERE, P_END}},
    [F_NANMEAN] = {"nanmean", "nanmean", GA_RED_MOMENTS, 0, R_RESULT_DTYPE | R_NAN, F_MEAN, -1,
                   5, {P_A, P_AXIS, P_DTYPE, P_OUT, P_KEEPDIMS, P_WHERE, P_END}},
    [F_NANVAR] = {"nanvar", "nanvar", GA_RED_MOMENTS, 1, R_RESULT_DTYPE | R_NAN, F_VAR, -1, 6,
                  {P_A, P_AXIS, P_DTYPE, P_OUT, P_DDOF, P_KEEPDIMS, P_WHERE, P_MEAN,
                   P_CORRECTION}},
    [F_NANSTD] = {"nanstd", "nanstd", GA_RED_MOMENTS, 2, R_RESULT_DTYPE | R_NAN, F_STD, -1, 6,
                  {P_A, P_AXIS, P_DTYPE, P_OUT, P_DDOF, P_KEEPDIMS, P_WHERE, P_MEAN,
                   P_CORRECTION}},
    [F_NANMIN] = {"nanmin", "fmin", GA_RED_MINMAX, 0,
                  R_SAME_DTYPE | R_NO_IDENTITY | R_UFUNC_AXIS | R_NAN, F_MIN, -1, 6,
                  {P_A, P_AXIS, P_OUT, P_KEEPDIMS, P_INITIAL, P_WHERE, P_END}},
    [F_NANMAX] = {"nanmax", "fmax", GA_RED_MINMAX, 1,
                  R_SAME_DTYPE | R_NO_IDENTITY | R_UFUNC_AXIS | R_NAN, F_MAX, -1, 6,
                  {P_A, P_AXIS, P_OUT, P_KEEPDIMS, P_INITIAL, P_WHERE, P_END}},
    [F_NANARGMIN] = {"nanargmin", "argmin", GA_RED_ARG, 0,
                     R_ORDERED | R_NO_IDENTITY | R_UFUNC_AXIS | R_NAN, F_ARGMIN, GA_INT64, 3,
                     {P_A, P_AXIS, P_OUT, P_KEEPDIMS, P_END}},
    [F_NANARGMAX] = {"nanargmax", "argmax", GA_RED_ARG, 1,
                     R_ORDERED | R_NO_IDENTITY | R_UFUNC_AXIS | R_NAN, F_ARGMAX, GA_INT64, 3,
                     {P_A, P_AXIS, P_OUT, P_KEEPDIMS, P_END}},
};

/* ----------------------------------------------------------- arguments --- */

/* Fill vals[param] from a vectorcall; `method`: the array is self, so the
 * table's first parameter is skipped.  0 / -1. */
static int
parse_args(const red_func *f, int method, PyObject *const *args, Py_ssize_t nargs,
           PyObject *kwnames, PyObject **vals)
{
    int first = method ? 1 : 0;
    int nparams = 0;
    while (nparams < 9 && f->params[nparams] != P_END)
        nparams++;
    for (int i = 0; i < P_NPARAMS; ++i)
        vals[i] = NULL;
    if (nargs > f->npos - first) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)",
                     f->name, f->npos - first, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; ++i)
        vals[f->params[first + i]] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; ++k) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int found = -1;
        for (int j = first; j < nparams && found < 0; ++j)
            if (PyUnicode_CompareWithASCIIString(key, param_names[f->params[j]]) == 0)
                found = f->params[j];
        if (found < 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", f->name,
                         key);
            return -1;
        }
        if (vals[found] != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", f->name,
                         param_names[found]);
            return -1;
        }
        vals[found] = args[nargs + k];
    }
    if (!method && vals[P_A] == NULL) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument 'a' (pos 1)", f->name);
        return -1;
    }
    return 0;
}

/* Mark the reduced dims of an `ndim`-d input in `reduced`; returns how many,
 * or -1.  `ufunc_axis`: a 0-d input takes axis 0 or -1 (R_UFUNC_AXIS, or
 * nanmean/nanvar/nanstd of inexact data, which NumPy computes with np.sum). */
static int
parse_axes(const red_func *f, PyObject *axis, int ndim, int ufunc_axis, char *reduced)
{
    memset(reduced, 0, NPY_MAXDIMS);
    if (axis == NULL || axis == Py_None) {
        memset(reduced, 1, ndim);
        return ndim;
    }
    if (PyTuple_Check(axis)) {
        if (f->flags & R_ORDERED) {
            PyErr_SetString(PyExc_TypeError, "'tuple' object cannot be interpreted as an integer");
            return -1;
        }
        Py_ssize_t n = PyTuple_GET_SIZE(axis);
        for (Py_ssize_t i = 0; i < n; ++i) {
            int ax;
            if (ga_normalize_axis(PyTuple_GET_ITEM(axis, i), ndim, &ax) < 0)
                return -1;
            if (reduced[ax]) {
                PyErr_SetString(PyExc_ValueError, "duplicate value in 'axis'");
                return -1;
            }
            reduced[ax] = 1;
        }
        return (int)n;
    }
    if (ndim == 0 && ufunc_axis && PyLong_Check(axis)) {
        /* NumPy's ufunc.reduce lets a 0-d array take axis 0 or -1. */
        long v = PyLong_AsLong(axis);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (v == 0 || v == -1)
            return 0;
    }
    int ax;
    if (ga_normalize_axis(axis, ndim, &ax) < 0)
        return -1;
    reduced[ax] = 1;
    return 1;
}

/* The input as a device array (new reference): device arrays as they are,
 * Python scalars and sequences moved to the device, NumPy arrays refused. */
static ga_array *
input_array(const red_func *f, PyObject *obj)
{
    if (ga_array_check(obj)) {
        Py_INCREF(obj);
        return (ga_array *)obj;
    }
    if (PyArray_Check(obj))
        return (ga_array *)ga_err_host_array(f->name, "the argument");
    return (ga_array *)ga_asarray(obj, NULL, -1, 'K');
}

/* -------------------------------------------------------------- dtypes --- */

/* NumPy's answer for (function, input dtype, dtype=, out dtype), as code+1
 * (0: not asked yet).  Index GA_NTYPES stands for "not given". */
static signed char dtype_cache[F_NFUNCS][GA_NTYPES][GA_NTYPES + 1][GA_NTYPES + 1];

static int
numpy_dtype(const red_func *f, int fn, int in_code, int dtype_code, int out_code)
{
    signed char *slot = &dtype_cache[fn][in_code][dtype_code][out_code];
    if (*slot > 0)
        return *slot - 1;
    PyObject *helper = ga_helper("reduce_result_dtype");
    if (helper == NULL)
        return -1;
    PyObject *in = (PyObject *)ga_dtype_from_code(in_code);
    PyObject *dt = dtype_code < GA_NTYPES ? (PyObject *)ga_dtype_from_code(dtype_code) : Py_NewRef(Py_None);
    PyObject *out = out_code < GA_NTYPES ? (PyObject *)ga_dtype_from_code(out_code) : Py_NewRef(Py_None);
    PyObject *r = NULL;
    if (in && dt && out)
        r = PyObject_CallFunction(helper, "sOOO", f->name, in, dt, out);
    Py_XDECREF(in);
    Py_XDECREF(dt);
    Py_XDECREF(out);
    if (r == NULL)
        return -1;
    int code = PyArray_DescrCheck(r) ? ga_dtype_code((PyArray_Descr *)r, f->name) : -1;
    if (code < 0 && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "%s: NumPy resolved a non-dtype %R", f->name, r);
    Py_DECREF(r);
    if (code < 0)
        return -1;
    *slot = (signed char)(code + 1);
    return code;
}

static int is_integer_code(int t) { return t >= GA_INT8 && t <= GA_UINT64; }
static int is_inexact_code(int t) { return t >= GA_FLOAT16 && t <= GA_COMPLEX128; }
static int is_complex_code(int t) { return t == GA_COMPLEX64 || t == GA_COMPLEX128; }

/* Whether sum/prod of an input of type t may run with the accumulator of
 * loop type l directly: integers wrap identically in any width, and a
 * float input whose conversion to l is exact sums the same in double. */
static int
sum_reads_directly(int t, int l)
{
    if (t == l)
        return 1;
    if ((t == GA_BOOL || is_integer_code(t)) && is_integer_code(l))
        return 1;
    if (is_inexact_code(t) && is_inexact_code(l)) {
        PyArray_Descr *a = ga_dtype_from_code(t), *b = ga_dtype_from_code(l);
        int ok = PyArray_CanCastTypeTo(a, b, NPY_SAFE_CASTING);
        Py_DECREF(a);
        Py_DECREF(b);
        return ok;
    }
    return 0;
}

/* ------------------------------------------------------------ planning --- */

static npy_intp
abs_intp(npy_intp v)
{
    return v < 0 ? -v : v;
}

/* Reduced dims in C order (argmin/argmax count positions in it): size-1
 * dims dropped, a dim merged into the one before it when that one's stride
 * spans it exactly. */
static int
collapse_c_order(int n, const npy_intp *dims, const npy_intp *strides, ga_kshape *shape,
                 ga_kstrides *st)
{
    int out = 0;
    for (int i = 0; i < n; ++i) {
        if (dims[i] == 0) {
            shape->ndim = 1;
            shape->shape[0] = 0;
            st->s[0] = 0;
            return 0;
        }
    }
    for (int i = 0; i < n; ++i) {
        if (dims[i] == 1)
            continue;
        if (out > 0 && st->s[out - 1] == strides[i] * dims[i]) {
            shape->shape[out - 1] *= dims[i];
            st->s[out - 1] = strides[i];
            continue;
        }
        if (out == GA_KMAX_DIMS) {
            PyErr_Format(PyExc_ValueError, "gpuarr kernels take at most %d dimensions after "
                         "merging contiguous ones; this reduction needs more", GA_KMAX_DIMS);
            return -1;
        }
        shape->shape[out] = dims[i];
        st->s[out++] = strides[i];
    }
    if (out == 0) {
        shape->shape[0] = 1;
        st->s[0] = 0;
        out = 1;
    }
    shape->ndim = out;
    return 0;
}

/* Split an input of `ndim` dims into kept and reduced dims for the
 * kernels: fills a->kept, kept_in, kept_out (out_strides gives the output's
 * stride for each kept input dim), red, red_in, n_out, n_red, and *offset,
 * the bytes to add to the input pointer (reduced dims with negative strides
 * are walked forwards unless `ordered`).  0 / -1. */
static int
ga_plan_reduce(int ndim, const npy_intp *shape, const npy_intp *in_strides,
               const npy_intp *out_strides, const char *reduced, int ordered,
               ga_reduce_args *a, npy_intp *offset)
{
    npy_intp kd[NPY_MAXDIMS], ks[NPY_MAXDIMS], ko[NPY_MAXDIMS];
    npy_intp rd[NPY_MAXDIMS], rs[NPY_MAXDIMS];
    int nk = 0, nr = 0;
    ga_kstrides kst[2];
    *offset = 0;
    a->n_out = 1;
    a->n_red = 1;
    for (int i = 0; i < ndim; ++i) {
        if (reduced[i]) {
            rd[nr] = shape[i];
            rs[nr] = in_strides[i];
            a->n_red *= shape[i];
            nr++;
        } else {
            kd[nk] = shape[i];
            ks[nk] = in_strides[i];
            ko[nk] = out_strides[i];
            a->n_out *= shape[i];
            nk++;
        }
    }
    const npy_intp *kops[2] = {ks, ko};
    if (ga_plan_collapse(nk, kd, 2, kops, &a->kept, kst) < 0)
        return -1;
    a->kept_in = kst[0];
    a->kept_out = kst[1];
    if (ordered)
        return collapse_c_order(nr, rd, rs, &a->red, &a->red_in);
    for (int i = 0; i < nr && a->n_red > 0; ++i) {
        if (rs[i] < 0) {
            *offset += (rd[i] - 1) * rs[i];
            rs[i] = -rs[i];
        }
    }
    const npy_intp *rops[1] = {rs};
    return ga_plan_collapse(nr, rd, 1, rops, &a->red, &a->red_in);
}

static int64_t
pow2_at_least(int64_t n)
{
    int64_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

static int64_t
min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Blocks per SM the kernels aim for (2048 resident threads on every
 * target architecture, 256 a block). */
#define RED_BLOCKS_PER_SM 8
/* Least work a lane gets when a reduction is split among blocks: 128
 * bytes (eight 16-byte vectors); smaller reductions use fewer blocks, down
 * to a single launch for the whole reduction (<= 32 KiB per output). */
#define RED_LANE_BYTES 128

/* Fill the contiguity flag and the thread layout of both kernels from the
 * layout ga_plan_reduce made; `itemsize` of the input. */
static void
plan_grid(ga_reduce_args *a, int itemsize, int sm_count)
{
    const int64_t T = GA_REDUCE_THREADS;
    int rows;
    if (a->n_out == 1) {
        rows = 1;
    } else if (a->n_red <= 1) {
        rows = 0;
    } else {
        npy_intp rmin = abs_intp(a->red_in.s[a->red.ndim - 1]);
        npy_intp kmin = abs_intp(a->kept_in.s[a->kept.ndim - 1]);
        rows = rmin < kmin;
    }
    a->contiguous = a->red.ndim == 1 && a->red_in.s[0] == itemsize && a->n_red > 1;
    int64_t vec = a->contiguous && itemsize < 16 ? 16 / itemsize : 1;
    int64_t items = rows ? (a->n_red + vec - 1) / vec : a->n_red;  /* per output */
    int64_t bx, by;
    if (rows) {
        bx = min64(T, pow2_at_least(items));
        by = T / bx;
    } else {
        bx = min64(32, pow2_at_least(a->n_out));
        by = min64(T / bx, pow2_at_least(a->n_red));
        bx = T / by;
    }
    int64_t nu = rows ? by : bx, nv = rows ? bx : by;
    int64_t tiles = (a->n_out + nu - 1) / nu;
    int64_t want = (int64_t)sm_count * RED_BLOCKS_PER_SM;
    int64_t splits = 1;
    if (tiles > 0 && tiles < want) {  /* no outputs (an empty kept dim): nothing to split */
        int64_t lane_items = RED_LANE_BYTES / (vec * itemsize);
        if (lane_items < 1)
            lane_items = 1;
        int64_t by_work = items / (nv * lane_items);
        splits = min64((want + tiles - 1) / tiles, by_work);
        splits = splits < 1 ? 1 : min64(splits, 65535);
    }
    a->main.rows = rows;
    a->main.bx = (int32_t)bx;
    a->main.by = (int32_t)by;
    a->main.tiles = tiles;
    a->main.grid_x = (int32_t)min64(tiles, (int64_t)1 << 30);
    a->splits = (int32_t)splits;

    /* the finishing kernel reads partial[s * n_out + o] */
    int frows = a->n_out == 1;
    if (frows) {
        bx = min64(T, pow2_at_least(splits));
        by = T / bx;
    } else {
        bx = min64(32, pow2_at_least(a->n_out));
        by = min64(T / bx, pow2_at_least(splits));
        bx = T / by;
    }
    nu = frows ? by : bx;
    a->finish.rows = frows;
    a->finish.bx = (int32_t)bx;
    a->finish.by = (int32_t)by;
    a->finish.tiles = (a->n_out + nu - 1) / nu;
    a->finish.grid_x = (int32_t)min64(a->finish.tiles, (int64_t)1 << 30);
}

/* ----------------------------------------------------------- execution --- */

static PyObject *
reduce_error_shape(const red_func *f, ga_array *out, int nd, const npy_intp *shape, int keepdims)
{
    if (out->ndim != nd) {
        PyErr_Format(PyExc_ValueError, "output parameter for reduction operation %s has the wrong "
                     "number of dimensions: Found %d but expected %d%s", f->op, out->ndim, nd,
                     keepdims ? " (must match the operand's when keepdims=True)" : "");
        return NULL;
    }
    PyObject *got = ga_shape_tuple(out->ndim, out->shape), *want = ga_shape_tuple(nd, shape);
    if (got && want)
        PyErr_Format(PyExc_ValueError, "output parameter for reduction operation %s has shape %R, "
                     "but the result has shape %R", f->op, got, want);
    Py_XDECREF(got);
    Py_XDECREF(want);
    return NULL;
}

/* Apply `initial` (sum, prod, min, max and their nan* forms) to the result
 * in place. */
static int
apply_initial(int fn, ga_array *res, PyObject *initial, int empty)
{
    if (empty)
        return ga_assign_scalar(res, initial);
    int id;
    switch (fn) {
    case F_SUM:
    case F_NANSUM: id = GA_UF_add; break;
    case F_PROD:
    case F_NANPROD: id = GA_UF_multiply; break;
    case F_MIN: id = GA_UF_minimum; break;
    case F_NANMIN: id = GA_UF_fmin; break;
    case F_NANMAX: id = GA_UF_fmax; break;
    default: id = GA_UF_maximum; break;
    }
    PyObject *in[2] = {(PyObject *)res, initial};
    PyObject *r = ga_ufunc_apply(id, in, (PyObject *)res, NULL, NPY_UNSAFE_CASTING);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* Call the Python helper `name` with `args` (a new tuple, stolen). */
static PyObject *
call_helper(const char *name, PyObject *args)
{
    PyObject *helper = args ? ga_helper(name) : NULL;
    PyObject *r = helper ? PyObject_CallObject(helper, args) : NULL;
    Py_XDECREF(args);
    return r;
}

static PyObject *
reduce_impl(int fn, PyObject *a_obj, PyObject **vals)
{
    const red_func *f = &funcs[fn];
    const int bfn = f->base, nan_fn = (f->flags & R_NAN) != 0;
    ga_array *a = NULL, *src = NULL, *res = NULL, *out = NULL;
    PyArray_Descr *dtype = NULL;
    void *partial = NULL;
    size_t partial_bytes = 0;
    char reduced[NPY_MAXDIMS];
    npy_intp oshape[NPY_MAXDIMS], ostrides[NPY_MAXDIMS];
    ga_reduce_args args;
    cudaStream_t stream = NULL;
    double ddof = 0.0;
    int keepdims = 0;
    PyObject *initial = vals[P_INITIAL] == Py_None ? NULL : vals[P_INITIAL];

    if (vals[P_WHERE] != NULL && vals[P_WHERE] != Py_True) {
        PyErr_Format(PyExc_NotImplementedError, "%s: where= other than True is not supported; "
                     "select the elements with gpuarr.where() first", f->name);
        return NULL;
    }
    if (vals[P_MEAN] != NULL && vals[P_MEAN] != Py_None) {
        PyErr_Format(PyExc_NotImplementedError, "%s: mean= is not supported (the mean is "
                     "computed in the same pass anyway)", f->name);
        return NULL;
    }
    if (vals[P_KEEPDIMS] != NULL && (keepdims = PyObject_IsTrue(vals[P_KEEPDIMS])) < 0)
        return NULL;
    if (vals[P_DDOF] != NULL && vals[P_CORRECTION] != NULL) {
        PyErr_SetString(PyExc_ValueError, "ddof and correction can't be provided simultaneously.");
        return NULL;
    }
    PyObject *ddof_obj = vals[P_DDOF] ? vals[P_DDOF] : vals[P_CORRECTION];
    if (ddof_obj != NULL) {
        ddof = PyFloat_AsDouble(ddof_obj);
        if (ddof == -1.0 && PyErr_Occurred())
            return NULL;
    }
    if (vals[P_DTYPE] != NULL && vals[P_DTYPE] != Py_None &&
        (dtype = ga_dtype_converter_or(vals[P_DTYPE], NULL, "dtype")) == NULL)
        return NULL;
    PyObject *out_obj = vals[P_OUT];
    if (out_obj != NULL && PyTuple_Check(out_obj)) {
        if (PyTuple_GET_SIZE(out_obj) != 1) {
            PyErr_Format(PyExc_ValueError, "%s: out must be a tuple of length 1", f->name);
            goto fail;
        }
        out_obj = PyTuple_GET_ITEM(out_obj, 0);
    }
    if (out_obj != NULL && out_obj != Py_None) {
        if (!ga_array_check(out_obj)) {
            PyErr_Format(PyExc_TypeError, "%s: out must be a gpuarr.ndarray, not %s", f->name,
                         Py_TYPE(out_obj)->tp_name);
            goto fail;
        }
        out = (ga_array *)out_obj;
    }
    if ((a = input_array(f, a_obj)) == NULL)
        goto fail;
    /* nan* functions of inexact data leave NaNs out; of other data they
     * are the plain functions, as in NumPy */
    int skip_nan = nan_fn && is_inexact_code(a->type);

    /* NumPy's nanargmin/nanargmax of inexact data reduce the NaN mask over
     * `axis` (np.all) before argmin refuses a tuple: there a bad axis, then
     * an all-NaN slice, raise first (one synchronisation, on this error
     * path only) */
    if (skip_nan && (f->flags & R_ORDERED) && vals[P_AXIS] != NULL &&
        PyTuple_Check(vals[P_AXIS]) && ga_array_size(a) > 0) {
        PyObject *r = call_helper("nanarg_tuple_axis",
                                  Py_BuildValue("(OO)", (PyObject *)a, vals[P_AXIS]));
        if (r == NULL)
            goto fail;
        Py_DECREF(r);
    }

    /* axes and the output's shape */
    int ufunc_axis = (f->flags & R_UFUNC_AXIS) || (skip_nan && f->kind == GA_RED_MOMENTS);
    int nred = parse_axes(f, vals[P_AXIS], a->ndim, ufunc_axis, reduced);
    if (nred < 0)
        goto fail;
    int ond = 0;
    for (int i = 0; i < a->ndim; ++i)
        if (!reduced[i] || keepdims)
            oshape[ond++] = reduced[i] ? 1 : a->shape[i];

    /* dtypes: `store` is what the kernel writes, `in` what it reads */
    int in_code = a->type, store, bool_ptp = 0;
    int dcode = dtype ? ga_dtype_code(dtype, "dtype") : GA_NTYPES;
    if (dcode < 0)
        goto fail;
    if (f->flags & R_LOOP_DTYPE) {
        store = numpy_dtype(f, fn, in_code, dcode, out ? out->type : GA_NTYPES);
        if (store < 0)
            goto fail;
        if (!sum_reads_directly(in_code, store))
            in_code = store;
    } else if (f->flags & R_RESULT_DTYPE) {
        store = numpy_dtype(f, fn, in_code, dcode, GA_NTYPES);
        if (store < 0)
            goto fail;
        if (out && skip_nan && !is_inexact_code(out->type)) {
            PyErr_SetString(PyExc_TypeError, "If a is inexact, then out must be inexact");
            goto fail;
        }
        if (out)
            store = out->type;
        if ((bfn == F_VAR || bfn == F_STD) && !is_inexact_code(store)) {
            /* an integer variance follows NumPy's truncating steps */
            PyObject *r = call_helper("reduce_integer_var", Py_BuildValue(
                "(sOOOOdO)", f->name, (PyObject *)a, vals[P_AXIS] ? vals[P_AXIS] : Py_None,
                dtype ? (PyObject *)dtype : Py_None, out ? (PyObject *)out : Py_None, ddof,
                keepdims ? Py_True : Py_False));
            Py_DECREF(a);
            Py_XDECREF(dtype);
            return r;
        }
        if (bfn == F_MEAN && !is_inexact_code(store) && dcode < GA_NTYPES &&
            !sum_reads_directly(in_code, dcode))
            in_code = dcode;  /* NumPy adds in dtype=, casting each element */
    } else if (f->flags & R_SAME_DTYPE) {
        /* NumPy's ptp is max - min, the max into out=: a boolean one fails
         * at the subtraction, after max's own checks (out=, an empty
         * reduction), unless out= is numeric (then 1 or 0 in out's dtype:
         * what the kernel stores) */
        bool_ptp = fn == F_PTP && a->type == GA_BOOL && (out == NULL || out->type == GA_BOOL);
        store = out ? out->type : a->type;
    } else {
        store = out ? out->type : f->result_type;
    }

    if (skip_nan && !is_inexact_code(in_code)) {
        /* NaNs count as 0 before the cast to an integer dtype= */
        ga_array *z = (ga_array *)call_helper("replace_nan", Py_BuildValue("(O)", a));
        if (z == NULL)
            goto fail;
        Py_SETREF(a, z);
        skip_nan = 0;
    }

    /* out= is checked before any work */
    if (out != NULL) {
        int same = out->ndim == ond;
        for (int i = 0; same && i < ond; ++i)
            same = out->shape[i] == oshape[i];
        if (!same) {
            reduce_error_shape(f, out, ond, oshape, keepdims);
            goto fail;
        }
        if (!(out->flags & GA_WRITEABLE)) {
            PyErr_Format(PyExc_ValueError, "%s: output array is read-only", f->name);
            goto fail;
        }
        if (out->device != a->device) {
            PyErr_Format(PyExc_ValueError, "%s: out is on device %d and the input on device %d",
                         f->name, out->device, a->device);
            goto fail;
        }
    }

    /* empty reductions */
    npy_intp n_red = 1;
    for (int i = 0; i < a->ndim; ++i)
        if (reduced[i])
            n_red *= a->shape[i];
    int fill_initial = 0;
    if (n_red == 0 && (f->flags & R_NO_IDENTITY)) {
        if (initial != NULL && (bfn == F_MIN || bfn == F_MAX)) {
            fill_initial = 1;
        } else if (f->kind == GA_RED_ARG) {
            PyErr_Format(PyExc_ValueError, "attempt to get %s of an empty sequence",
                         funcs[bfn].name);
            goto fail;
        } else {
            PyErr_Format(PyExc_ValueError, "zero-size array to reduction operation %s which has "
                         "no identity", skip_nan || !nan_fn ? f->op : funcs[bfn].op);
            goto fail;
        }
    }
    if (bool_ptp) {
        PyErr_SetString(PyExc_TypeError, "numpy boolean subtract, the `-` operator, is not "
                        "supported, use the bitwise_xor, the `^` operator, or the logical_xor "
                        "function instead.");
        goto fail;
    }
    if (bfn == F_MEAN && n_red == 0 &&
        PyErr_WarnEx(PyExc_RuntimeWarning, "Mean of empty slice", 1) < 0)
        goto fail;
    if ((bfn == F_VAR || bfn == F_STD) && (double)n_red - ddof <= 0 &&
        PyErr_WarnEx(PyExc_RuntimeWarning, skip_nan ? "Degrees of freedom <= 0 for slice."
                     : "Degrees of freedom <= 0 for slice", 1) < 0)
        goto fail;
    /* an integer mean is NumPy's: the sum in that dtype, then a division */
    const int mean_by_sum = bfn == F_MEAN && !is_inexact_code(store);
    /* the float mean of an integer input: NumPy's float64 sum divided by
     * the count, in the sum kernel (a running mean leaves rounding noise
     * where NumPy's answer is exact, 0.0 for a slice summing to zero) */
    const int mean_of_ints = bfn == F_MEAN && !mean_by_sum && !skip_nan &&
                             !is_inexact_code(in_code) && !is_complex_code(store);

    /* the array the kernel writes: out= itself only when nothing after the
     * kernel can fail for memory (the integer mean's division, initial=,
     * the nan* functions' all-NaN check, which also must see nanargmin's
     * result before out= does), so a failure leaves out= as it was */
    const int checks_nan = skip_nan && f->kind != GA_RED_SUM && f->kind != GA_RED_PROD;
    if (out != NULL && out->type == store && !ga_array_overlaps(out, a) && !checks_nan &&
        !mean_by_sum && initial == NULL) {
        res = out;
        Py_INCREF(res);
    } else {
        res = ga_array_empty(ond, oshape, ga_dtype_from_code(store), 0, a->device);
        if (res == NULL)
            goto fail;
    }
    npy_intp n_out = ga_array_size(res);
    if (n_out > 0 && fill_initial) {
        if (ga_assign_scalar(res, initial) < 0)
            goto fail;
        initial = NULL;
    } else if (n_out > 0) {
        if (in_code != a->type) {
            src = ga_array_copy_as(a, ga_dtype_from_code(in_code), 0);
            if (src == NULL)
                goto fail;
        } else {
            src = a;
            Py_INCREF(src);
        }
        /* the output's stride for each input dim (reduced ones have none) */
        for (int i = 0, k = 0; i < a->ndim; ++i) {
            ostrides[i] = reduced[i] ? 0 : res->strides[k];
            if (!reduced[i] || keepdims)
                k++;
        }
        memset(&args, 0, sizeof(args));
        npy_intp offset;
        if (ga_plan_reduce(src->ndim, src->shape, src->strides, ostrides, reduced,
                           (f->flags & R_ORDERED) != 0, &args, &offset) < 0)
            goto fail;
        if (ga_runtime_use_device(a->device) < 0)
            goto fail;
        stream = ga_runtime_device_stream(a->device);
        plan_grid(&args, ga_array_itemsize(src), ga_runtime_sm_count(a->device));
        args.kind = mean_by_sum || mean_of_ints ? GA_RED_SUM : f->kind;
        args.mode = mean_by_sum ? 0 : mean_of_ints ? GA_RED_MEAN
                  : f->mode | (skip_nan ? GA_RED_SKIPNAN : 0);
        args.in_type = (ga_type)src->type;
        args.out_type = (ga_type)store;
        args.ddof = ddof;
        args.in = src->data + offset;
        args.out = res->data;
        if (args.splits > 1) {
            int failed;
            partial_bytes = (size_t)args.splits * (size_t)args.n_out * GA_REDUCE_ACC_BYTES;
            partial = ga_pool_malloc(a->device, partial_bytes, stream, &failed);
            if (failed)
                goto fail;
            args.partial = partial;
        }
        GA_LAUNCH_TRY(ga_launch_reduce(&args, stream), stream);
        if (mean_by_sum) {
            PyObject *count = PyLong_FromSsize_t(n_red);
            PyObject *in[2] = {(PyObject *)res, count};
            PyObject *r = count ? ga_ufunc_apply(GA_UF_true_divide, in, (PyObject *)res, NULL,
                                                 NPY_UNSAFE_CASTING) : NULL;
            Py_XDECREF(count);
            if (r == NULL)
                goto fail;
            Py_DECREF(r);
        }
    }
    if (initial != NULL && apply_initial(fn, res, initial, 0) < 0)
        goto fail;
    if (checks_nan && n_out > 0 && n_red > 0) {
        /* NumPy's all-NaN rules: a warning, or ValueError for nanarg*
         * (one synchronisation, to read whether a slice was all NaN) */
        PyObject *r = call_helper("reduce_nan_check", Py_BuildValue(
            "(sOOOd)", f->name, (PyObject *)res, (PyObject *)a,
            vals[P_AXIS] ? vals[P_AXIS] : Py_None, ddof));
        if (r == NULL)
            goto fail;
        Py_DECREF(r);
    }
    if (out != NULL && res != out) {
        if (ga_assign_array(out, res) < 0)
            goto fail;
        Py_SETREF(res, out);
        Py_INCREF(out);
    }
    if (partial != NULL)
        ga_pool_free(a->device, partial, partial_bytes, stream);
    Py_XDECREF(src);
    Py_DECREF(a);
    Py_XDECREF(dtype);
    return (PyObject *)res;
fail:
    if (partial != NULL)
        ga_pool_free(a->device, partial, partial_bytes, stream);
    Py_XDECREF(res);
    Py_XDECREF(src);
    Py_XDECREF(a);
    Py_XDECREF(dtype);
    return NULL;
}

/* ------------------------------------------------------------- Python --- */

static PyObject *
reduce_call(int fn, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *vals[P_NPARAMS], *r;
    if (self == NULL && nargs > 0 &&
        ga_try_function_override(funcs[fn].name, args, nargs, 1, kwnames, &r) == 0)
        return r;
    if (parse_args(&funcs[fn], self != NULL, args, nargs, kwnames, vals) < 0)
        return NULL;
    return reduce_impl(fn, self != NULL ? self : vals[P_A], vals);
}

#define GA_REDUCTION_FUNCTION(name, fn)                                                   \
    static PyObject *py_##name(PyObject *m, PyObject *const *args, Py_ssize_t nargs,      \
                               PyObject *kwnames)                                         \
    {                                                                                     \
        return reduce_call(fn, NULL, args, nargs, kwnames);                               \
    }
#define GA_REDUCTION_ENTRY(name, fn)                                                      \
    GA_REDUCTION_FUNCTION(name, fn)                                                       \
    PyObject *ga_array_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs,    \
                              PyObject *kwnames)                                          \
    {                                                                                     \
        return reduce_call(fn, self, args, nargs, kwnames);                               \
    }

GA_REDUCTION_ENTRY(sum, F_SUM)
GA_REDUCTION_ENTRY(prod, F_PROD)
GA_REDUCTION_ENTRY(mean, F_MEAN)
GA_REDUCTION_ENTRY(var, F_VAR)
GA_REDUCTION_ENTRY(std, F_STD)
GA_REDUCTION_ENTRY(min, F_MIN)
GA_REDUCTION_ENTRY(max, F_MAX)
GA_REDUCTION_ENTRY(ptp, F_PTP)
GA_REDUCTION_ENTRY(argmin, F_ARGMIN)
GA_REDUCTION_ENTRY(argmax, F_ARGMAX)
GA_REDUCTION_ENTRY(all, F_ALL)
GA_REDUCTION_ENTRY(any, F_ANY)

GA_REDUCTION_FUNCTION(count_nonzero, F_COUNT_NONZERO)
GA_REDUCTION_FUNCTION(nansum, F_NANSUM)
GA_REDUCTION_FUNCTION(nanprod, F_NANPROD)
GA_REDUCTION_FUNCTION(nanmean, F_NANMEAN)
GA_REDUCTION_FUNCTION(nanvar, F_NANVAR)
GA_REDUCTION_FUNCTION(nanstd, F_NANSTD)
GA_REDUCTION_FUNCTION(nanmin, F_NANMIN)
GA_REDUCTION_FUNCTION(nanmax, F_NANMAX)
GA_REDUCTION_FUNCTION(nanargmin, F_NANARGMIN)
GA_REDUCTION_FUNCTION(nanargmax, F_NANARGMAX)

/* _plan_reduce(shape, strides, axes, itemsize=8, ordered=False, sm_count=132)
 * -> dict: the layout and launch plan of a reduction of an input with these
 * byte strides into a C-contiguous output of `itemsize`-byte elements
 * (axes: None, an int or a tuple; keepdims does not change the plan). */
static PyObject *
py_plan_reduce(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"shape", "strides", "axes", "itemsize", "ordered", "sm_count", NULL};
    PyObject *shape_obj, *strides_obj, *axes = Py_None;
    int itemsize = 8, ordered = 0, sm_count = 132;
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS], ostrides[NPY_MAXDIMS];
    char reduced[NPY_MAXDIMS];
    ga_reduce_args a;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|Oipi", kwlist, &shape_obj, &strides_obj,
                                     &axes, &itemsize, &ordered, &sm_count))
        return NULL;
    int nd = ga_parse_shape(shape_obj, shape, "shape");
    if (nd < 0)
        return NULL;
    int ns = ga_parse_shape(strides_obj, strides, "strides");
    if (ns < 0)
        return NULL;
    if (ns != nd || itemsize <= 0 || sm_count <= 0) {
        PyErr_SetString(PyExc_ValueError, "_plan_reduce: strides and shape differ in length, "
                        "or a bad itemsize / sm_count");
        return NULL;
    }
    const red_func *f = &funcs[ordered ? F_ARGMIN : F_SUM];
    if (parse_axes(f, axes, nd, f->flags & R_UFUNC_AXIS, reduced) < 0)
        return NULL;
    npy_intp s = itemsize;
    for (int i = nd - 1; i >= 0; --i) {
        ostrides[i] = reduced[i] ? 0 : s;
        if (!reduced[i])
            s *= shape[i] ? shape[i] : 1;
    }
    memset(&a, 0, sizeof(a));
    npy_intp offset;
    if (ga_plan_reduce(nd, shape, strides, ostrides, reduced, ordered, &a, &offset) < 0)
        return NULL;
    plan_grid(&a, itemsize, sm_count);
    npy_intp t[3][GA_KMAX_DIMS];
    for (int i = 0; i < a.kept.ndim; ++i) {
        t[0][i] = a.kept.shape[i];
        t[1][i] = a.kept_in.s[i];
        t[2][i] = a.kept_out.s[i];
    }
    npy_intp r[2][GA_KMAX_DIMS];
    for (int i = 0; i < a.red.ndim; ++i) {
        r[0][i] = a.red.shape[i];
        r[1][i] = a.red_in.s[i];
    }
    return Py_BuildValue(
        "{s:N,s:N,s:N,s:N,s:N,s:n,s:L,s:L,s:O,s:O,s:(ii),s:L,s:i,s:i,s:O,s:(ii),s:L}",
        "kept_shape", ga_shape_tuple(a.kept.ndim, t[0]),
        "kept_strides", ga_shape_tuple(a.kept.ndim, t[1]),
        "out_strides", ga_shape_tuple(a.kept.ndim, t[2]),
        "red_shape", ga_shape_tuple(a.red.ndim, r[0]),
        "red_strides", ga_shape_tuple(a.red.ndim, r[1]),
        "offset", offset,
        "n_out", (long long)a.n_out,
        "n_red", (long long)a.n_red,
        "contiguous", a.contiguous ? Py_True : Py_False,
        "rows", a.main.rows ? Py_True : Py_False,
        "block", a.main.bx, a.main.by,
        "tiles", (long long)a.main.tiles,
        "grid_x", a.main.grid_x,
        "splits", a.splits,
        "finish_rows", a.finish.rows ? Py_True : Py_False,
        "finish_block", a.finish.bx, a.finish.by,
        "finish_tiles", (long long)a.finish.tiles);
}

/* ------------------------------------------------------- user reductions */

/* The extra operands of a user reduction (ReductionKernel, fuse with a
 * trailing reduction), in the layout its generated struct _ga_f declares:
 * the pointers, kept strides and reduced strides of inputs 1..m-1 (input 0
 * travels in ga_reduce_args), then the scalars. */
#define USER_RED_MAX_INPUTS 16
#define USER_RED_MAX_SCALARS 32

/* _reduce_launch(main, finish, inputs, reduced, out, scalars, dtypes, acc_bytes, stream)
 * main / finish: kernel handles; inputs: device arrays of one shape (the
 * broadcast shape); reduced: a bool per dim; out: the output (the kept
 * dims, C order); scalars with their dtypes: converted by NumPy's casting.
 * Plans the layout as the built-in reductions do (plan_grid) and launches;
 * with splits > 1 the partials live in a pool block freed in stream order. */
static PyObject *
py_reduce_launch(PyObject *self, PyObject *args)
{
    PyObject *main_h, *finish_h, *inputs, *reduced, *scalars, *dtypes, *stream_obj;
    ga_array *out;
    int acc_bytes;
    if (!PyArg_ParseTuple(args, "OOO!O!O!O!O!iO:_reduce_launch", &main_h, &finish_h,
                          &PyTuple_Type, &inputs, &PyTuple_Type, &reduced, &GA_ArrayType, &out,
                          &PyTuple_Type, &scalars, &PyTuple_Type, &dtypes, &acc_bytes,
                          &stream_obj))
        return NULL;
    Py_ssize_t m = PyTuple_GET_SIZE(inputs), ns = PyTuple_GET_SIZE(scalars);
    if (m < 1 || m > USER_RED_MAX_INPUTS || ns > USER_RED_MAX_SCALARS ||
        PyTuple_GET_SIZE(dtypes) != ns || acc_bytes < 1 || acc_bytes > GA_REDUCE_ACC_BYTES) {
        PyErr_Format(PyExc_ValueError, "_reduce_launch: 1 to %d array inputs and up to %d "
                     "scalars (one dtype each), an accumulator of at most %d bytes",
                     USER_RED_MAX_INPUTS, USER_RED_MAX_SCALARS, GA_REDUCE_ACC_BYTES);
        return NULL;
    }
    ga_array *in[USER_RED_MAX_INPUTS];
    for (Py_ssize_t k = 0; k < m; ++k) {
        PyObject *o = PyTuple_GET_ITEM(inputs, k);
        if (!ga_array_check(o)) {
            PyErr_SetString(PyExc_TypeError, "_reduce_launch: inputs must be device arrays");
            return NULL;
        }
        in[k] = (ga_array *)o;
        if (in[k]->ndim != in[0]->ndim ||
            memcmp(in[k]->shape, in[0]->shape, sizeof(npy_intp) * in[0]->ndim) != 0 ||
            in[k]->device != out->device) {
            PyErr_SetString(PyExc_ValueError, "_reduce_launch: inputs of one shape, on the "
                            "output's device");
            return NULL;
        }
    }
    int nd = in[0]->ndim;
    if (PyTuple_GET_SIZE(reduced) != nd) {
        PyErr_SetString(PyExc_ValueError, "_reduce_launch: one reduced flag per dimension");
        return NULL;
    }
    int device, sdev;
    cudaStream_t stream;
    if (ga_runtime_stream_arg(stream_obj, "ReductionKernel", &sdev, &stream) < 0)
        return NULL;
    device = out->device;
    if (stream_obj == Py_None)
        stream = ga_runtime_device_stream(device);
    else if (sdev != device) {
        PyErr_Format(PyExc_ValueError, "the stream belongs to device %d but the arrays are on "
                     "device %d", sdev, device);
        return NULL;
    }

    /* kept dims collapse over (inputs, out); reduced dims over the inputs */
    npy_intp kd[NPY_MAXDIMS], rd[NPY_MAXDIMS], ostr[NPY_MAXDIMS];
    npy_intp ks[USER_RED_MAX_INPUTS + 1][NPY_MAXDIMS], rs[USER_RED_MAX_INPUTS][NPY_MAXDIMS];
    int nk = 0, nr = 0, ko = 0;
    ga_reduce_args a;
    memset(&a, 0, sizeof a);
    a.n_out = 1;
    a.n_red = 1;
    for (int i = 0; i < nd; ++i) {
        int r = PyObject_IsTrue(PyTuple_GET_ITEM(reduced, i));
        if (r < 0)
            return NULL;
        if (r) {
            rd[nr] = in[0]->shape[i];
            for (Py_ssize_t k = 0; k < m; ++k)
                rs[k][nr] = in[k]->strides[i];
            a.n_red *= in[0]->shape[i];
            nr++;
        } else {
            if (ko >= out->ndim || out->shape[ko] != in[0]->shape[i]) {
                PyErr_SetString(PyExc_ValueError, "_reduce_launch: the output's shape is not "
                                "the inputs' kept dims");
                return NULL;
            }
            kd[nk] = in[0]->shape[i];
            for (Py_ssize_t k = 0; k < m; ++k)
                ks[k][nk] = in[k]->strides[i];
            ostr[nk] = out->strides[ko++];
            a.n_out *= in[0]->shape[i];
            nk++;
        }
    }
    if (ko != out->ndim) {
        PyErr_SetString(PyExc_ValueError, "_reduce_launch: the output's shape is not the "
                        "inputs' kept dims");
        return NULL;
    }
    if (a.n_out == 0)
        Py_RETURN_NONE;
    memcpy(ks[m], ostr, sizeof(npy_intp) * nk);
    const npy_intp *kops[USER_RED_MAX_INPUTS + 1], *rops[USER_RED_MAX_INPUTS];
    for (Py_ssize_t k = 0; k <= m; ++k)
        kops[k] = ks[k];
    for (Py_ssize_t k = 0; k < m; ++k)
        rops[k] = rs[k];
    ga_kstrides kst[USER_RED_MAX_INPUTS + 1], rst[USER_RED_MAX_INPUTS];
    if (ga_plan_collapse(nk, kd, (int)m + 1, kops, &a.kept, kst) < 0 ||
        ga_plan_collapse(nr, rd, (int)m, rops, &a.red, rst) < 0)
        return NULL;
    if (a.n_red == 0) {          /* every output is the identity's post-map */
        a.red.ndim = 1;
        a.red.shape[0] = 0;
    }
    a.kind = -1;
    a.in_type = (ga_type)in[0]->type;
    a.out_type = (ga_type)out->type;
    a.in = in[0]->data;
    a.out = out->data;
    a.kept_in = kst[0];
    a.kept_out = kst[m];
    a.red_in = rst[0];
    plan_grid(&a, ga_array_itemsize(in[0]), ga_runtime_sm_count(device));
    if (m > 1)
        a.contiguous = 0;        /* the vector path reads one input */

    /* the extra operands and the scalars, as _ga_f lays them out */
    unsigned char extra[(USER_RED_MAX_INPUTS - 1) * (sizeof(void *) + 2 * sizeof(ga_kstrides)) +
                        USER_RED_MAX_SCALARS * sizeof(ga_kscalar)];
    size_t used = 0;
    for (Py_ssize_t k = 1; k < m; ++k) {
        memcpy(extra + used, &in[k]->data, sizeof(void *));
        used += sizeof(void *);
    }
    for (Py_ssize_t k = 1; k < m; ++k) {
        memcpy(extra + used, &kst[k], sizeof(ga_kstrides));
        used += sizeof(ga_kstrides);
    }
    for (Py_ssize_t k = 1; k < m; ++k) {
        memcpy(extra + used, &rst[k], sizeof(ga_kstrides));
        used += sizeof(ga_kstrides);
    }
    for (Py_ssize_t k = 0; k < ns; ++k) {
        PyArray_Descr *d = NULL;
        ga_kscalar v;
        if (!PyArray_DescrConverter(PyTuple_GET_ITEM(dtypes, k), &d))
            return NULL;
        int rc = ga_scalar_to_bytes(PyTuple_GET_ITEM(scalars, k), d, &v);
        Py_DECREF(d);
        if (rc < 0)
            return NULL;
        memcpy(extra + used, &v, sizeof v);
        used += sizeof v;
    }
    if (used == 0)
        extra[used++] = 0;       /* an empty _ga_f still has one byte */

    void *fmain = PyLong_AsVoidPtr(main_h), *ffinish = PyLong_AsVoidPtr(finish_h);
    if (PyErr_Occurred())
        return NULL;
    void *partial = NULL;
    size_t partial_bytes = 0;
    int failed = 0;
    if (ga_runtime_use_device(device) < 0)
        return NULL;
    if (a.splits > 1) {
        partial_bytes = (size_t)a.splits * (size_t)a.n_out * GA_REDUCE_ACC_BYTES;
        partial = ga_pool_malloc(device, partial_bytes, stream, &failed);
        if (partial == NULL)
            return NULL;
        a.partial = partial;
    }
    void *kargs[2] = {&a, extra};
    unsigned int grid[3] = {(unsigned int)a.main.grid_x, (unsigned int)a.splits, 1};
    unsigned int block[3] = {(unsigned int)a.main.bx, (unsigned int)a.main.by, 1};
    int rc = ga_uk_launch(fmain, 0, grid, block, 0, kargs, stream, "launching a user reduction");
    if (rc == 0 && a.splits > 1) {
        unsigned int fgrid[3] = {(unsigned int)a.finish.grid_x, 1, 1};
        unsigned int fblock[3] = {(unsigned int)a.finish.bx, (unsigned int)a.finish.by, 1};
        rc = ga_uk_launch(ffinish, 0, fgrid, fblock, 0, kargs, stream,
                          "launching a user reduction's finishing kernel");
    }
    if (partial != NULL)
        ga_pool_free(device, partial, partial_bytes, stream);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

#define GA_FASTCALL_KW METH_FASTCALL | METH_KEYWORDS
#define GA_FN(name, doc) \
    {#name, (PyCFunction)(void (*)(void))py_##name, GA_FASTCALL_KW, doc}

static PyMethodDef reduction_functions[] = {
    GA_FN(sum, "sum($module, /, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, "
               "where=True)\n--\n\n"
               "Sum of elements over the given axes (a 0-d device array for axis=None: reading it "
               "is the synchronisation)."),
    GA_FN(prod, "prod($module, /, a, axis=None, dtype=None, out=None, keepdims=False, "
                "initial=None, where=True)\n--\n\n"
                "Product of elements over the given axes."),
    GA_FN(mean, "mean($module, /, a, axis=None, dtype=None, out=None, keepdims=False, *, "
                "where=True)\n--\n\n"
                "Arithmetic mean (float64 for integer inputs), one pass over the data."),
    GA_FN(var, "var($module, /, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, "
               "where=True, mean=None, correction=None)\n--\n\n"
               "Variance, one pass over the data (Chan's merge of per-thread moments in double)."),
    GA_FN(std, "std($module, /, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, "
               "where=True, mean=None, correction=None)\n--\n\n"
               "Standard deviation, one pass over the data."),
    GA_FN(min, "min($module, /, a, axis=None, out=None, keepdims=False, initial=None, "
               "where=True)\n--\n\n"
               "Minimum (NaN propagates)."),
    GA_FN(max, "max($module, /, a, axis=None, out=None, keepdims=False, initial=None, "
               "where=True)\n--\n\n"
               "Maximum (NaN propagates)."),
    GA_FN(ptp, "ptp($module, /, a, axis=None, out=None, keepdims=False)\n--\n\n"
               "max - min in one pass."),
    GA_FN(argmin, "argmin($module, /, a, axis=None, out=None, *, keepdims=False)\n--\n\n"
                  "Index of the first minimum (of the first NaN if any); flat C-order index for "
                  "axis=None."),
    GA_FN(argmax, "argmax($module, /, a, axis=None, out=None, *, keepdims=False)\n--\n\n"
                  "Index of the first maximum (of the first NaN if any); flat C-order index for "
                  "axis=None."),
    GA_FN(all, "all($module, /, a, axis=None, out=None, keepdims=False, *, where=True)\n--\n\n"
               "Whether every element is true (a bool device array)."),
    GA_FN(any, "any($module, /, a, axis=None, out=None, keepdims=False, *, where=True)\n--\n\n"
               "Whether any element is true (a bool device array)."),
    GA_FN(count_nonzero, "count_nonzero($module, /, a, axis=None, *, keepdims=False)\n--\n\n"
                         "Number of non-zero elements (an int64 device array, 0-d for axis=None)."),
    GA_FN(nansum, "nansum($module, /, a, axis=None, dtype=None, out=None, keepdims=False, "
                  "initial=None, where=True)\n--\n\n"
                  "Sum leaving NaNs out (0 for an all-NaN slice)."),
    GA_FN(nanprod, "nanprod($module, /, a, axis=None, dtype=None, out=None, keepdims=False, "
                   "initial=None, where=True)\n--\n\n"
                   "Product leaving NaNs out."),
    GA_FN(nanmean, "nanmean($module, /, a, axis=None, dtype=None, out=None, keepdims=False, *, "
                   "where=True)\n--\n\n"
                   "Mean of the non-NaN elements; NaN with NumPy's RuntimeWarning for an all-NaN "
                   "slice (reading whether one was all NaN is a synchronisation, done only when "
                   "the result holds a NaN)."),
    GA_FN(nanvar, "nanvar($module, /, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, "
                  "*, where=True, mean=None, correction=None)\n--\n\n"
                  "Variance of the non-NaN elements (NaN and a RuntimeWarning where count - ddof "
                  "<= 0)."),
    GA_FN(nanstd, "nanstd($module, /, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, "
                  "*, where=True, mean=None, correction=None)\n--\n\n"
                  "Standard deviation of the non-NaN elements."),
    GA_FN(nanmin, "nanmin($module, /, a, axis=None, out=None, keepdims=False, initial=None, "
                  "where=True)\n--\n\n"
                  "Minimum leaving NaNs out; NaN with a RuntimeWarning for an all-NaN slice (one "
                  "synchronisation to find out)."),
    GA_FN(nanmax, "nanmax($module, /, a, axis=None, out=None, keepdims=False, initial=None, "
                  "where=True)\n--\n\n"
                  "Maximum leaving NaNs out; NaN with a RuntimeWarning for an all-NaN slice (one "
                  "synchronisation to find out)."),
    GA_FN(nanargmin, "nanargmin($module, /, a, axis=None, out=None, *, keepdims=False)\n--\n\n"
                     "Index of the minimum leaving NaNs out; ValueError for an all-NaN slice (one "
                     "synchronisation to find out)."),
    GA_FN(nanargmax, "nanargmax($module, /, a, axis=None, out=None, *, keepdims=False)\n--\n\n"
                     "Index of the maximum leaving NaNs out; ValueError for an all-NaN slice (one "
                     "synchronisation to find out)."),
    {"_plan_reduce", (PyCFunction)(void (*)(void))py_plan_reduce, METH_VARARGS | METH_KEYWORDS,
     "Layout and launch plan of a reduction (for tests)."},
    {"_reduce_launch", py_reduce_launch, METH_VARARGS,
     "_reduce_launch(main, finish, inputs, reduced, out, scalars, dtypes, acc_bytes, stream, /)"
     "\n--\n\nPlan and launch a user reduction's generated kernels."},
    {NULL, NULL, 0, NULL},
};

int
ga_reduction_init(PyObject *m)
{
    return PyModule_AddFunctions(m, reduction_functions);
}
