/*
 * convolve.c -- direct correlation on the device: NumPy's convolve and
 * correlate, and the planning under gpuarr.scipy.signal's convolutions and
 * gpuarr.scipy.ndimage's linear and order-statistic filters.
 *
 * Every linear filter is one correlation, per axis d
 *     out[p] = sum over q < k_d of w[q] * X[p + q + off_d]
 * with X the input extended past its edges by one ga_ext_mode (a
 * convolution reads the taps reversed: GA_CONV_FLIP).  The Python layer
 * turns SciPy's arguments (modes, origins, 'full'/'same'/'valid') into the
 * output shape and the offsets; this file plans the launch:
 *
 * 1. Axes that pass through unfiltered (one tap, offset 0, same length in
 *    and out) are merged with their unfiltered neighbours.
 * 2. One merged axis, or an unfiltered axis followed by a filtered one,
 *    runs the line kernel (rows of a contiguous axis: np.convolve, the
 *    last-axis pass of a separable filter); one filtered axis between
 *    unfiltered ones runs the column kernel (the other passes of a
 *    separable filter: each thread slides down 16 bytes of columns);
 *    anything else runs the tile kernel on the last two merged axes,
 *    looping the leading ones inside the kernel (convolve2d, N-d
 *    correlate).  Shared memory stays within 48 KiB by staging long
 *    filters in balanced chunks.  A 2-d float filter of up to 24 x 24
 *    taps with enough work also launches the separable kernel and a small
 *    kernel that factors the taps: the device decides which of the two
 *    computes (sep_wanted), so no copy of the filter reaches the host.
 * 3. Inputs are cast to the compute type (float32, float64, int64 --
 *    complex for the line kernel) and made C-contiguous only when they are
 *    not already; the result is written in place when `out` is a
 *    C-contiguous array of the compute type that shares no memory with the
 *    inputs, else through a temporary that is then cast into `out`.
 *
 * NumPy's np.convolve / np.correlate are planned here end to end (dtype
 * promotion by NumPy's PyArray_PromoteTypes, NumPy's output lengths and
 * lags, the swap when the second input is longer), so gpuarr.convolve is
 * one C call.  The order-statistic filters (median, rank, minimum,
 * maximum) take their taps as a device table built by the Python layer.
 *
 * References: every function borrows its arguments; arrays made here are
 * released at the one fail/done label of each function.
 */
#include "gpuarr.h"

#define CONV_SMEM_MAX (48 * 1024)
#define TILE_CHUNK_MAX 24          /* taps per staged chunk of a tile axis */
#define TILE_AXIS_MAX (1 << 30)    /* the tile kernel indexes its axes in 32 bits */

/* ------------------------------------------------------------ helpers --- */

static int
ctype_itemsize(int type)
{
    switch (type) {
    case GA_FLOAT32: return 4;
    case GA_COMPLEX128: return 16;
    default: return 8;
    }
}

/* ------------------------------------------------------------ planning -- */

/* Balanced chunks of at most `cap` taps: the chunk size. */
static int
chunk_of(int64_t k, int64_t cap)
{
    int64_t n = (k + cap - 1) / cap;
    return (int)((k + n - 1) / n);
}

/* A line launch over `rows` lines for elements of `itemsize` bytes. */
#define LINE_WARP_K 64       /* the warp line variant takes filters up to this long */
#define LINE_WARP_TILES 4    /* tiles a warp of the warp variant takes (see its kernel) */

/* Whether the warp line variant runs a filter of k taps: up to LINE_WARP_K
 * taps when its two slots a warp fit the shared memory of a block (not for
 * complex128).  src/kernels/dev/convolve_bench.cu compares it with the
 * block-staged variant. */
static int
line_warp_wanted(int64_t k, int itemsize)
{
    return k <= LINE_WARP_K &&
           2 * GA_CONV_LINE_WARPS * ga_conv_line_slot(32, (int32_t)k) * itemsize <= CONV_SMEM_MAX;
}

static void
plan_line(ga_conv_line *p, int64_t rows, const ga_conv_axis *ax, int itemsize)
{
    memset(p, 0, sizeof(*p));
    p->rows = rows;
    p->ax = *ax;
    int64_t need = (ax->n_out + GA_CONV_LINE_C - 1) / GA_CONV_LINE_C;
    int bx = 32;
    while (bx < 256 && bx < need)
        bx *= 2;
    p->bx = bx;
    if (line_warp_wanted(ax->k, itemsize)) {
        p->warp = LINE_WARP_TILES;
        p->bx = 32;
        p->by = 1;
        p->kchunk = (int)ax->k;
        return;
    }
    p->by = (int)(rows < 256 / bx ? rows : 256 / bx);
    /* Largest chunk whose slots fit: by * (len + (len-1)/C) * itemsize with
     * len = bx*C + kchunk - 1. */
    int64_t per_slot = CONV_SMEM_MAX / itemsize / p->by;
    int64_t len = per_slot * GA_CONV_LINE_C / (GA_CONV_LINE_C + 1);
    int64_t cap = len - (int64_t)bx * GA_CONV_LINE_C + 1;
    p->kchunk = chunk_of(ax->k, cap < 1 ? 1 : cap);
}

static int
plan_tile(ga_conv_tile *p, const ga_conv_axis *ax, int nax)
{
    memset(p, 0, sizeof(*p));
    if (nax - 2 > GA_CONV_MAX_OUTER) {
        PyErr_Format(PyExc_ValueError, "correlation over %d filtered or unmergeable axes: at "
                     "most %d are supported", nax, GA_CONV_MAX_OUTER + 2);
        return -1;
    }
    p->nouter = nax - 2;
    for (int d = 0; d < nax - 2; ++d)
        p->outer[d] = ax[d];
    p->h = ax[nax - 2];
    p->w = ax[nax - 1];
    const ga_conv_axis *hw[2] = {&p->h, &p->w};
    for (int i = 0; i < 2; ++i) {
        const ga_conv_axis *a = hw[i];
        if (a->n_in >= TILE_AXIS_MAX || a->n_out >= TILE_AXIS_MAX || a->k >= TILE_AXIS_MAX ||
            a->off <= -TILE_AXIS_MAX || a->off >= TILE_AXIS_MAX) {
            PyErr_SetString(PyExc_ValueError, "correlation: an axis of 2^30 or more elements "
                            "next to a filtered axis is not supported");
            return -1;
        }
    }
    p->kh_chunk = chunk_of(p->h.k, TILE_CHUNK_MAX);
    p->kw_chunk = chunk_of(p->w.k, TILE_CHUNK_MAX);
    return 0;
}

/* A column launch: `outer` planes, filtered axis h, `cols` unfiltered
 * contiguous columns.  Runs along h are as long as they can be while the
 * grid still has about COLS_THREADS threads (long runs re-read fewer halo
 * rows), and no shorter than COLS_RUN_MIN. */
#define COLS_THREADS (1 << 18)
#define COLS_RUN_MIN 32
static void
plan_cols(ga_conv_cols *p, int64_t outer, const ga_conv_axis *h, int64_t cols, int itemsize)
{
    memset(p, 0, sizeof(*p));
    p->outer = outer;
    p->h = *h;
    p->cols = cols;
    int vec = 16 / itemsize;
    p->vec = cols % vec == 0 ? vec : 1;
    int64_t lanes = outer * ((cols + p->vec - 1) / p->vec);
    int64_t nruns = (COLS_THREADS + lanes - 1) / lanes;
    int64_t most = (h->n_out + COLS_RUN_MIN - 1) / COLS_RUN_MIN;
    if (nruns > most) nruns = most;
    if (nruns < 1) nruns = 1;
    int64_t run = (h->n_out + nruns - 1) / nruns;
    run = (run + GA_CONV_COLS_C - 1) / GA_CONV_COLS_C * GA_CONV_COLS_C;
    p->run = (int)(run < INT32_MAX ? run : INT32_MAX / GA_CONV_COLS_C * GA_CONV_COLS_C);
}

enum { PLAN_LINE, PLAN_COLS, PLAN_TILE };

typedef struct {
    int kind;            /* PLAN_LINE, PLAN_COLS or PLAN_TILE */
    ga_conv_line l;
    ga_conv_cols c;
    ga_conv_tile t;
} conv_plan;

/* Merge the unfiltered axes, then pick and size the kernel.  0 / -1. */
static int
plan_correlation(int ndim, const npy_intp *x_shape, const npy_intp *w_shape,
                 const npy_intp *out_shape, const int64_t *offsets, int itemsize,
                 conv_plan *plan)
{
    ga_conv_axis ax[NPY_MAXDIMS];
    int plain[NPY_MAXDIMS];
    int n = 0;
    for (int d = 0; d < ndim; ++d) {
        ga_conv_axis a = {x_shape[d], out_shape[d], w_shape[d], offsets[d]};
        int pass = a.k == 1 && a.off == 0 && a.n_in == a.n_out;
        if (pass && n > 0 && plain[n - 1]) {
            ax[n - 1].n_in *= a.n_in;
            ax[n - 1].n_out *= a.n_out;
            continue;
        }
        ax[n] = a;
        plain[n++] = pass;
    }
    memset(plan, 0, sizeof(*plan));
    if (n == 1 || (n == 2 && plain[0])) {
        plan->kind = PLAN_LINE;
        plan_line(&plan->l, n == 1 ? 1 : ax[0].n_in, &ax[n - 1], itemsize);
        return 0;
    }
    /* One filtered axis followed by unfiltered ones (a separable pass
     * along an outer axis): the column kernel. */
    if (ax[n - 2].k <= INT32_MAX && ((n == 2 && !plain[0] && plain[1]) ||
                                     (n == 3 && plain[0] && !plain[1] && plain[2]))) {
        plan->kind = PLAN_COLS;
        plan_cols(&plan->c, n == 3 ? ax[0].n_in : 1, &ax[n - 2], ax[n - 1].n_in, itemsize);
        return 0;
    }
    plan->kind = PLAN_TILE;
    return plan_tile(&plan->t, ax, n);
}

static void
set_launch_fields(conv_plan *plan, int mode, int flags, double divisor, const ga_kscalar *cval)
{
    if (plan->kind == PLAN_LINE) {
        plan->l.mode = mode;
        plan->l.flags = flags;
        plan->l.divisor = divisor;
        plan->l.cval = *cval;
    } else if (plan->kind == PLAN_COLS) {
        plan->c.mode = mode;
        plan->c.flags = flags;
        plan->c.divisor = divisor;
        plan->c.cval = *cval;
    } else {
        plan->t.mode = mode;
        plan->t.flags = flags;
        plan->t.divisor = divisor;
        plan->t.cval = *cval;
    }
}

static int
check_blocks(const conv_plan *plan)
{
    int64_t blocks = plan->kind == PLAN_LINE ? ga_conv_line_blocks(&plan->l) :
                     plan->kind == PLAN_TILE ? ga_conv_tile_blocks(&plan->t) : 0;
    if (plan->kind == PLAN_COLS) {
        ga_conv_cols scalar = plan->c;     /* the launcher may fall back to vec 1 */
        scalar.vec = 1;
        blocks = ga_conv_cols_blocks(&scalar);
    }
    if (blocks > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "correlation: output too large for one launch");
        return -1;
    }
    return 0;
}

/* Whether a tile plan also launches the separable kernel (the device then
 * decides which of the two runs): a 2-d float filter of at least 2 x 2 taps
 * staged in one chunk, with enough work that kh*kw multiply-adds an output
 * outweigh two more launches (about 2^25 of them, ~2 us of FP64 work).
 * src/kernels/dev/convolve_bench.cu compares the two paths. */
#define SEP_MIN_WORK ((int64_t)1 << 25)
static int
sep_wanted(const conv_plan *plan, int type)
{
    const ga_conv_tile *t = &plan->t;
    return plan->kind == PLAN_TILE && (type == GA_FLOAT32 || type == GA_FLOAT64) &&
           t->nouter == 0 && t->h.k >= 2 && t->w.k >= 2 && t->h.k <= GA_CONV_SEP_K &&
           t->w.k <= GA_CONV_SEP_K && t->kh_chunk == t->h.k && t->kw_chunk == t->w.k &&
           t->h.n_out * t->w.n_out * t->h.k * t->w.k >= SEP_MIN_WORK;
}

static int
launch_plan(const conv_plan *plan, int type, const ga_array *x, const ga_array *w, ga_array *out)
{
    cudaStream_t stream = ga_runtime_device_stream(out->device);
    ga_array *fac = NULL;
    if (sep_wanted(plan, type)) {
        /* flag, u, v: written and read on the device only */
        npy_intp n = 1 + (npy_intp)(plan->t.h.k + plan->t.w.k);
        if ((fac = ga_array_empty(1, &n, ga_dtype_from_code(type), 0, out->device)) == NULL)
            return -1;
        GA_LAUNCH_TRY(ga_launch_conv_tile_sep((ga_type)type, &plan->t, x->data, w->data,
                                              fac->data, out->data, stream), stream);
        Py_DECREF(fac);
        return 0;
    }
    if (plan->kind == PLAN_LINE)
        GA_LAUNCH_TRY(ga_launch_conv_line((ga_type)type, &plan->l, x->data, w->data, out->data,
                                          stream), stream);
    else if (plan->kind == PLAN_COLS)
        GA_LAUNCH_TRY(ga_launch_conv_cols((ga_type)type, &plan->c, x->data, w->data, out->data,
                                          stream), stream);
    else
        GA_LAUNCH_TRY(ga_launch_conv_tile((ga_type)type, &plan->t, x->data, w->data, out->data,
                                          stream), stream);
    return 0;
fail:
    Py_XDECREF(fac);
    return -1;
}

/* out[...] = correlation computed in `type` (see the essay above).  Every
 * array is on the current device; x and w are non-empty.  0 / -1. */
static int
correlate_into(ga_array *x, ga_array *w, ga_array *out, const int64_t *offsets, int type,
               int mode, int flags, double divisor, const ga_kscalar *cval)
{
    ga_array *xc = NULL, *wc = NULL, *res = NULL;
    conv_plan plan;
    int rc = -1;
    if (ga_array_size(out) == 0)
        return 0;
    if (plan_correlation(x->ndim, x->shape, w->shape, out->shape, offsets,
                         ctype_itemsize(type), &plan) < 0 || check_blocks(&plan) < 0)
        return -1;
    set_launch_fields(&plan, mode, flags, divisor, cval);
    if ((xc = ga_array_contiguous_as(x, ga_dtype_from_code(type))) == NULL ||
        (wc = ga_array_contiguous_as(w, ga_dtype_from_code(type))) == NULL)
        goto done;
    if (out->type == type && (out->flags & GA_C_CONTIGUOUS) && (out->flags & GA_WRITEABLE) &&
        !ga_array_overlaps(out, xc) && !ga_array_overlaps(out, wc)) {
        res = out;
        Py_INCREF(res);
    } else if ((res = ga_array_empty(out->ndim, out->shape, ga_dtype_from_code(type), 0,
                                     out->device)) == NULL) {
        goto done;
    }
    if (launch_plan(&plan, type, xc, wc, res) < 0)
        goto done;
    if (res != out && ga_assign_array(out, res) < 0)
        goto done;
    rc = 0;
done:
    Py_XDECREF(xc);
    Py_XDECREF(wc);
    Py_XDECREF(res);
    return rc;
}

/* ------------------------------------------------ np.convolve/correlate - */

enum { NP_VALID = 0, NP_SAME = 1, NP_FULL = 2 };

static int
parse_np_mode(PyObject *obj, int *mode)
{
    if (PyUnicode_Check(obj)) {
        const char *s = PyUnicode_AsUTF8(obj);
        if (s == NULL)
            return -1;
        if (strcmp(s, "valid") == 0) *mode = NP_VALID;
        else if (strcmp(s, "same") == 0) *mode = NP_SAME;
        else if (strcmp(s, "full") == 0) *mode = NP_FULL;
        else {
            PyErr_Format(PyExc_ValueError, "mode must be one of 'valid', 'same', or 'full' "
                         "(got %R)", obj);
            return -1;
        }
        return 0;
    }
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        long v = PyLong_AsLong(obj);
        if (v == -1 && PyErr_Occurred())
            PyErr_Clear();
        if (v < 0 || v > 2) {
            PyErr_SetString(PyExc_ValueError, "integer convolve/correlate mode must be 0, 1, "
                            "or 2");
            return -1;
        }
        *mode = (int)v;
        return 0;
    }
    PyErr_SetString(PyExc_TypeError, "convolve/correlate mode not understood");
    return -1;
}

typedef struct {
    int swap;            /* x is the second input, w the first */
    int flags;
    ga_conv_axis ax;
} np_plan;

/* NumPy's lengths and lags for inputs of na and nv elements (both >= 1):
 * convolve puts the longer input under the shorter, reversed; correlate
 * conjugates v and, when v is the longer, correlates v with a and reverses
 * and conjugates the result (c_av[k] = conj(c_va[-k])). */
static void
np_plan_make(int64_t na, int64_t nv, int mode, int correlate, np_plan *p)
{
    p->swap = nv > na;
    int64_t n1 = p->swap ? nv : na, n2 = p->swap ? na : nv;
    int64_t left = mode == NP_FULL ? n2 - 1 : mode == NP_SAME ? n2 / 2 : 0;
    int64_t right = mode == NP_FULL ? n2 - 1 : mode == NP_SAME ? n2 - left - 1 : 0;
    p->ax.n_in = n1;
    p->ax.k = n2;
    p->ax.n_out = n1 - n2 + 1 + left + right;
    p->ax.off = -left;
    if (!correlate)
        p->flags = GA_CONV_FLIP;
    else
        p->flags = GA_CONV_CONJ_TAPS |
                   (p->swap ? GA_CONV_REVERSE_OUT | GA_CONV_CONJ_OUT : 0);
}

/* The kernel type that NumPy's dot loops effectively compute `t` in. */
static int
np_compute_type(int t)
{
    switch (t) {
    case GA_FLOAT16:
    case GA_FLOAT32: return GA_FLOAT32;
    case GA_FLOAT64: return GA_FLOAT64;
    case GA_COMPLEX64: return GA_COMPLEX64;
    case GA_COMPLEX128: return GA_COMPLEX128;
    default: return GA_INT64;   /* bool and integers: wrapping int64 is exact mod 2^bits */
    }
}

/* np.convolve's operand, before any device work: a device array (or an
 * object exporting __cuda_array_interface__) as a device array; a Python
 * scalar or sequence as a host NumPy array, uploaded by np_upload once
 * every check has passed.  NumPy arrays are refused.  New reference. */
static PyObject *
np_operand(PyObject *obj, const char *fname, const char *argname)
{
    if (ga_array_check(obj) || PyObject_HasAttrString(obj, "__cuda_array_interface__"))
        return (PyObject *)ga_device_arg(obj, fname, argname);
    if (PyArray_Check(obj))
        return (PyObject *)ga_device_arg(obj, fname, argname);   /* raises */
    return PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
}

static int
np_ndim(PyObject *op)
{
    return ga_array_check(op) ? ((ga_array *)op)->ndim : PyArray_NDIM((PyArrayObject *)op);
}

/* Elements of a 0-d or 1-d operand. */
static npy_intp
np_len(PyObject *op)
{
    if (np_ndim(op) == 0)
        return 1;
    return ga_array_check(op) ? ((ga_array *)op)->shape[0] : PyArray_DIM((PyArrayObject *)op, 0);
}

static PyArray_Descr *
np_descr(PyObject *op)
{
    return ga_array_check(op) ? ((ga_array *)op)->descr : PyArray_DESCR((PyArrayObject *)op);
}

/* The operand as a 1-d device array (ndmin=1, as NumPy).  Steals op. */
static ga_array *
np_upload(PyObject *op)
{
    ga_array *a = (ga_array *)ga_asarray(op, NULL, -1, 'K');
    Py_DECREF(op);
    if (a == NULL || a->ndim == 1)
        return a;
    npy_intp one = 1;
    ga_array *v = (ga_array *)ga_array_reshape(a, 1, &one, 'C');
    Py_DECREF(a);
    return v;
}

static PyObject *
np_convolve(PyObject *args, PyObject *kwds, int correlate)
{
    static char *kwlist[] = {"a", "v", "mode", NULL};
    const char *fname = correlate ? "correlate" : "convolve";
    PyObject *a_obj, *v_obj, *mode_obj = NULL, *a_op = NULL, *v_op = NULL;
    ga_array *a = NULL, *v = NULL, *out = NULL;
    PyArray_Descr *rdescr = NULL;
    int mode = correlate ? NP_VALID : NP_FULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|O", kwlist, &a_obj, &v_obj, &mode_obj))
        return NULL;
    if (mode_obj != NULL && parse_np_mode(mode_obj, &mode) < 0)
        return NULL;
    if ((a_op = np_operand(a_obj, fname, "a")) == NULL ||
        (v_op = np_operand(v_obj, fname, "v")) == NULL)
        goto fail;
    /* NumPy's depth checks, a before v: convolve takes 0-d inputs as one
     * element (ndmin=1); correlate converts each with a minimum depth of 1,
     * so a 0-d input is an error there. */
    for (int i = 0; i < 2; ++i) {
        int nd = np_ndim(i == 0 ? a_op : v_op);
        if (nd > 1 || (correlate && nd == 0)) {
            PyErr_SetString(PyExc_ValueError, nd > 1 ? "object too deep for desired array" :
                            "object of too small depth for desired array");
            goto fail;
        }
    }
    if (np_len(a_op) == 0) {
        PyErr_SetString(PyExc_ValueError, "a cannot be empty");
        goto fail;
    }
    if (np_len(v_op) == 0) {
        PyErr_SetString(PyExc_ValueError, "v cannot be empty");
        goto fail;
    }
    if ((rdescr = PyArray_PromoteTypes(np_descr(a_op), np_descr(v_op))) == NULL)
        goto fail;
    int rtype = ga_dtype_code(rdescr, fname);
    if (rtype < 0)
        goto fail;
    a = np_upload(a_op);
    a_op = NULL;
    if (a == NULL)
        goto fail;
    v = np_upload(v_op);
    v_op = NULL;
    if (v == NULL)
        goto fail;
    np_plan np;
    np_plan_make(a->shape[0], v->shape[0], mode, correlate, &np);
    npy_intp n_out = np.ax.n_out;
    out = ga_array_empty(1, &n_out, rdescr, 0, ga_runtime_current_device());
    rdescr = NULL;
    if (out == NULL)
        goto fail;
    int64_t off = np.ax.off;
    ga_kscalar zero;
    memset(&zero, 0, sizeof(zero));
    if (correlate_into(np.swap ? v : a, np.swap ? a : v, out, &off, np_compute_type(rtype),
                       GA_EXT_CONSTANT, np.flags, 0.0, &zero) < 0)
        goto fail;
    Py_DECREF(a);
    Py_DECREF(v);
    return (PyObject *)out;
fail:
    Py_XDECREF(a_op);
    Py_XDECREF(v_op);
    Py_XDECREF(rdescr);
    Py_XDECREF(a);
    Py_XDECREF(v);
    Py_XDECREF(out);
    return NULL;
}

static PyObject *
py_convolve(PyObject *self, PyObject *args, PyObject *kwds)
{
    return np_convolve(args, kwds, 0);
}

static PyObject *
py_correlate(PyObject *self, PyObject *args, PyObject *kwds)
{
    return np_convolve(args, kwds, 1);
}

/* ------------------------------------------------ scipy planning entry -- */

static int
parse_offsets(PyObject *obj, int ndim, int64_t *off)
{
    PyObject *seq = PySequence_Fast(obj, "offsets must be a sequence of ints");
    if (seq == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(seq) != ndim) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "offsets: expected %d values", ndim);
        return -1;
    }
    for (int d = 0; d < ndim; ++d) {
        off[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, d));
        if (off[d] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

static int
parse_ctype(PyObject *obj, int *type)
{
    PyArray_Descr *d = ga_dtype_converter_or(obj, NULL, "ctype");
    if (d == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "ctype is required");
        return -1;
    }
    *type = ga_dtype_code(d, "ctype");
    Py_DECREF(d);
    if (*type == GA_FLOAT32 || *type == GA_FLOAT64 || *type == GA_INT64)
        return 0;
    PyErr_SetString(PyExc_TypeError, "ctype must be float32, float64 or int64");
    return -1;
}

static int
check_mode(int mode)
{
    if (mode < GA_EXT_CONSTANT || mode > GA_EXT_WRAP) {
        PyErr_Format(PyExc_ValueError, "unknown extension mode %d", mode);
        return -1;
    }
    return 0;
}

/* _correlate(x, w, out, offsets, mode, cval, flip, ctype, divisor=0.0):
 * out[...] = the correlation of x with w (any dtypes, cast to ctype) at
 * the given offsets, extended by `mode` (ga_ext_mode) with cval; flip
 * reverses the taps (convolution); a nonzero divisor divides each sum. */
static PyObject *
py_correlate_nd(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"x", "w", "out", "offsets", "mode", "cval", "flip", "ctype",
                             "divisor", NULL};
    PyObject *x_obj, *w_obj, *out_obj, *off_obj, *cval_obj, *ctype_obj;
    int mode, flip, type;
    double divisor = 0.0;
    int64_t off[NPY_MAXDIMS];
    ga_kscalar cval;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOiOpO|d", kwlist, &x_obj, &w_obj, &out_obj,
                                     &off_obj, &mode, &cval_obj, &flip, &ctype_obj, &divisor))
        return NULL;
    if (!ga_array_check(x_obj) || !ga_array_check(w_obj) || !ga_array_check(out_obj)) {
        PyErr_SetString(PyExc_TypeError, "_correlate: x, w and out must be device arrays");
        return NULL;
    }
    ga_array *x = (ga_array *)x_obj, *w = (ga_array *)w_obj, *out = (ga_array *)out_obj;
    if (x->ndim != w->ndim || x->ndim != out->ndim || x->ndim < 1) {
        PyErr_SetString(PyExc_ValueError, "_correlate: x, w and out need one number of "
                        "dimensions (at least 1)");
        return NULL;
    }
    if (ga_array_size(x) == 0 || ga_array_size(w) == 0) {
        PyErr_SetString(PyExc_ValueError, "_correlate: x and w must not be empty");
        return NULL;
    }
    if (x->device != out->device || w->device != out->device) {
        PyErr_SetString(PyExc_ValueError, "_correlate: arrays are on different devices");
        return NULL;
    }
    if (parse_offsets(off_obj, x->ndim, off) < 0 || check_mode(mode) < 0 ||
        parse_ctype(ctype_obj, &type) < 0)
        return NULL;
    PyArray_Descr *cd = ga_dtype_from_code(type);
    int rc = ga_scalar_to_bytes(cval_obj, cd, &cval);
    Py_DECREF(cd);
    if (rc < 0 || ga_runtime_use_device(out->device) < 0)
        return NULL;
    if (correlate_into(x, w, out, off, type, mode, flip ? GA_CONV_FLIP : 0, divisor, &cval) < 0)
        return NULL;
    Py_INCREF(out);
    return out_obj;
}

/* _rank_filter(x, out, taps, lo, hi, rank, mode, cval): out[...] = the
 * rank-th smallest value of x over the taps (an int64 device table of
 * ntaps rows: offsets per axis, then the flat offset in a C-contiguous x),
 * lo/hi the smallest and largest offset per axis. */
static PyObject *
py_rank_filter(PyObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"x", "out", "taps", "lo", "hi", "rank", "mode", "cval", NULL};
    PyObject *x_obj, *out_obj, *taps_obj, *lo_obj, *hi_obj, *cval_obj;
    long long rank;
    int mode;
    ga_rank_filter p;
    ga_array *xc = NULL, *res = NULL;
    PyObject *result = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOLiO", kwlist, &x_obj, &out_obj, &taps_obj,
                                     &lo_obj, &hi_obj, &rank, &mode, &cval_obj))
        return NULL;
    if (!ga_array_check(x_obj) || !ga_array_check(out_obj) || !ga_array_check(taps_obj)) {
        PyErr_SetString(PyExc_TypeError, "_rank_filter: x, out and taps must be device arrays");
        return NULL;
    }
    ga_array *x = (ga_array *)x_obj, *out = (ga_array *)out_obj, *taps = (ga_array *)taps_obj;
    memset(&p, 0, sizeof(p));
    p.ndim = x->ndim;
    if (x->ndim < 1 || x->ndim > GA_KMAX_DIMS || out->ndim != x->ndim) {
        PyErr_Format(PyExc_ValueError, "_rank_filter: x and out need one number of dimensions, "
                     "1 to %d", GA_KMAX_DIMS);
        return NULL;
    }
    for (int d = 0; d < x->ndim; ++d) {
        if (out->shape[d] != x->shape[d]) {
            PyErr_SetString(PyExc_ValueError, "_rank_filter: out must have x's shape");
            return NULL;
        }
        p.shape[d] = x->shape[d];
    }
    if (taps->type != GA_INT64 || !(taps->flags & GA_C_CONTIGUOUS) || taps->ndim != 2 ||
        taps->shape[1] != x->ndim + 1 || taps->shape[0] < 1) {
        PyErr_SetString(PyExc_ValueError, "_rank_filter: taps must be a C-contiguous int64 "
                        "array of shape (ntaps, x.ndim + 1), ntaps >= 1");
        return NULL;
    }
    p.ntaps = taps->shape[0];
    if (rank < 0 || rank >= p.ntaps) {
        PyErr_SetString(PyExc_ValueError, "_rank_filter: rank not within the footprint");
        return NULL;
    }
    p.rank = rank;
    if (parse_offsets(lo_obj, x->ndim, p.lo) < 0 || parse_offsets(hi_obj, x->ndim, p.hi) < 0 ||
        check_mode(mode) < 0)
        return NULL;
    p.mode = mode;
    switch (x->descr->kind) {
    case 'b': case 'u': p.kind = 0; break;
    case 'i': p.kind = 1; break;
    case 'f': p.kind = 2; break;
    default:
        PyErr_SetString(PyExc_TypeError, "Complex type not supported");
        return NULL;
    }
    if (ga_scalar_to_bytes(cval_obj, x->descr, &p.cval) < 0)
        return NULL;
    if (ga_array_size(x) == 0) {
        Py_INCREF(out);
        return out_obj;
    }
    if (ga_runtime_use_device(out->device) < 0 || (xc = ga_array_contiguous_as(x, NULL)) == NULL)
        goto done;
    if (out->type == x->type && (out->flags & GA_C_CONTIGUOUS) && (out->flags & GA_WRITEABLE) &&
        !ga_array_overlaps(out, xc)) {
        res = out;
        Py_INCREF(res);
    } else {
        Py_INCREF(x->descr);
        if ((res = ga_array_empty(x->ndim, x->shape, x->descr, 0, out->device)) == NULL)
            goto done;
    }
    cudaStream_t stream = ga_runtime_device_stream(out->device);
    GA_LAUNCH_TRY(ga_launch_rank_filter(ga_array_itemsize(x), &p, xc->data,
                                        (const int64_t *)taps->data, res->data, stream), stream);
    if (res != out && ga_assign_array(out, res) < 0)
        goto done;
    Py_INCREF(out);
    result = out_obj;
    goto done;
fail:
done:
    Py_XDECREF(xc);
    Py_XDECREF(res);
    return result;
}

/* ------------------------------------------------ plans, for the tests -- */

static PyObject *
axis_tuple(const ga_conv_axis *a)
{
    return Py_BuildValue("(LLLL)", (long long)a->n_in, (long long)a->n_out, (long long)a->k,
                         (long long)a->off);
}

/* _conv1d_plan(na, nv, mode, correlate) -> (swap, (n_in, n_out, k, off), flags):
 * np.convolve's plan, without a device. */
static PyObject *
py_conv1d_plan(PyObject *self, PyObject *args)
{
    long long na, nv;
    PyObject *mode_obj;
    int correlate, mode;
    np_plan p;
    if (!PyArg_ParseTuple(args, "LLOp", &na, &nv, &mode_obj, &correlate))
        return NULL;
    if (parse_np_mode(mode_obj, &mode) < 0)
        return NULL;
    if (na < 1 || nv < 1) {
        PyErr_SetString(PyExc_ValueError, "lengths must be positive");
        return NULL;
    }
    np_plan_make(na, nv, mode, correlate, &p);
    return Py_BuildValue("(iNi)", p.swap, axis_tuple(&p.ax), p.flags);
}

static int
parse_dims(PyObject *obj, npy_intp *dims, int ndim, const char *what)
{
    int n = ga_parse_shape(obj, dims, what);
    if (n < 0)
        return -1;
    if (n != ndim) {
        PyErr_Format(PyExc_ValueError, "%s: expected %d dimensions", what, ndim);
        return -1;
    }
    return 0;
}

/* _correlate_plan(x_shape, w_shape, out_shape, offsets, itemsize) ->
 * ("line", rows, axis, bx, by, kchunk, "warp" or "smem"),
 * ("cols", outer, h axis, cols, run, vec) or
 * ("tile", [outer axes], h axis, w axis, kh_chunk, kw_chunk),
 * an axis being (n_in, n_out, k, off): the launch _correlate would make. */
static PyObject *
py_correlate_plan(PyObject *self, PyObject *args)
{
    PyObject *xs, *ws, *os, *offs;
    int itemsize;
    npy_intp x_shape[NPY_MAXDIMS], w_shape[NPY_MAXDIMS], out_shape[NPY_MAXDIMS];
    int64_t off[NPY_MAXDIMS];
    conv_plan plan;
    if (!PyArg_ParseTuple(args, "OOOOi", &xs, &ws, &os, &offs, &itemsize))
        return NULL;
    int ndim = ga_parse_shape(xs, x_shape, "x_shape");
    if (ndim < 1) {
        if (ndim == 0)
            PyErr_SetString(PyExc_ValueError, "x_shape: at least one dimension");
        return NULL;
    }
    if (parse_dims(ws, w_shape, ndim, "w_shape") < 0 ||
        parse_dims(os, out_shape, ndim, "out_shape") < 0 || parse_offsets(offs, ndim, off) < 0)
        return NULL;
    if (plan_correlation(ndim, x_shape, w_shape, out_shape, off, itemsize, &plan) < 0)
        return NULL;
    if (plan.kind == PLAN_LINE)
        return Py_BuildValue("(sLNiiis)", "line", (long long)plan.l.rows, axis_tuple(&plan.l.ax),
                             plan.l.bx, plan.l.by, plan.l.kchunk,
                             plan.l.warp ? "warp" : "smem");
    if (plan.kind == PLAN_COLS)
        return Py_BuildValue("(sLNLii)", "cols", (long long)plan.c.outer, axis_tuple(&plan.c.h),
                             (long long)plan.c.cols, plan.c.run, plan.c.vec);
    PyObject *outer = PyList_New(plan.t.nouter);
    if (outer == NULL)
        return NULL;
    for (int d = 0; d < plan.t.nouter; ++d) {
        PyObject *a = axis_tuple(&plan.t.outer[d]);
        if (a == NULL) {
            Py_DECREF(outer);
            return NULL;
        }
        PyList_SET_ITEM(outer, d, a);
    }
    return Py_BuildValue("(sNNNii)", "tile", outer, axis_tuple(&plan.t.h), axis_tuple(&plan.t.w),
                         plan.t.kh_chunk, plan.t.kw_chunk);
}

static PyMethodDef convolve_functions[] = {
    {"convolve", (PyCFunction)(void (*)(void))py_convolve, METH_VARARGS | METH_KEYWORDS,
     "convolve($module, /, a, v, mode='full')\n--\n\n"
     "NumPy's discrete linear convolution of two 1-d device arrays: modes 'full', 'same', 'valid' "
     "(or 2, 1, 0), NumPy's result dtype, either input the longer.  Computed directly on the "
     "device (no FFT): a shared-memory line kernel (one tile a warp), each thread sliding a window "
     "of 8 outputs; bool and integer inputs in wrapping int64 (exact, as NumPy), float16 in "
     "float32."},
    {"correlate", (PyCFunction)(void (*)(void))py_correlate, METH_VARARGS | METH_KEYWORDS,
     "correlate($module, /, a, v, mode='valid')\n--\n\n"
     "NumPy's cross-correlation of two 1-d device arrays, c[k] = sum_n a[n+k] * conj(v[n]), with "
     "NumPy's modes, lags and result dtype; computed directly as convolve is.  As NumPy's, 0-d "
     "inputs are a ValueError (convolve takes them as one element)."},
    {"_correlate", (PyCFunction)(void (*)(void))py_correlate_nd, METH_VARARGS | METH_KEYWORDS,
     "_correlate(x, w, out, offsets, mode, cval, flip, ctype, divisor=0.0): out[p] = "
     "sum_q w[q] X[p + q + offsets] (the engine under gpuarr.scipy)."},
    {"_rank_filter", (PyCFunction)(void (*)(void))py_rank_filter, METH_VARARGS | METH_KEYWORDS,
     "_rank_filter(x, out, taps, lo, hi, rank, mode, cval): order-statistic filter."},
    {"_conv1d_plan", py_conv1d_plan, METH_VARARGS,
     "_conv1d_plan(na, nv, mode, correlate): np.convolve's plan (for tests)."},
    {"_correlate_plan", py_correlate_plan, METH_VARARGS,
     "_correlate_plan(x_shape, w_shape, out_shape, offsets, itemsize): the launch plan of "
     "_correlate (for tests)."},
    {NULL, NULL, 0, NULL},
};

int
ga_convolve_init(PyObject *m)
{
    /* the edge modes, for the Python layer (gpuarr/_convolve.py) */
    if (PyModule_AddIntMacro(m, GA_EXT_CONSTANT) < 0 ||
        PyModule_AddIntMacro(m, GA_EXT_REFLECT) < 0 ||
        PyModule_AddIntMacro(m, GA_EXT_MIRROR) < 0 ||
        PyModule_AddIntMacro(m, GA_EXT_NEAREST) < 0 ||
        PyModule_AddIntMacro(m, GA_EXT_WRAP) < 0)
        return -1;
    return PyModule_AddFunctions(m, convolve_functions);
}
