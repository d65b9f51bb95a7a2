/*
 * plan.c -- host-side planning shared by every kernel family: broadcasting
 * and collapsing an N-d iteration into the fewest kernel dimensions.
 *
 * All of it is plain arithmetic on shapes and strides, runs without a GPU,
 * and is exposed to the tests as _core._plan_collapse / _plan_broadcast.
 */
#include "gpuarr.h"

PyObject *
ga_shape_tuple(int ndim, const npy_intp *shape)
{
    PyObject *t = PyTuple_New(ndim);
    if (t == NULL)
        return NULL;
    for (int i = 0; i < ndim; ++i) {
        PyObject *v = PyLong_FromSsize_t(shape[i]);
        if (v == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

int
ga_plan_broadcast_to(int a_ndim, const npy_intp *a_shape, const npy_intp *a_strides,
                     int ndim, const npy_intp *shape, npy_intp *out_strides)
{
    int off = ndim - a_ndim;
    if (off < 0)
        goto fail;
    for (int i = 0; i < ndim; ++i) {
        if (i < off) {
            out_strides[i] = 0;
            continue;
        }
        npy_intp n = a_shape[i - off];
        if (n == shape[i])
            out_strides[i] = n == 1 ? 0 : a_strides[i - off];
        else if (n == 1)
            out_strides[i] = 0;
        else
            goto fail;
    }
    return 0;
fail: {
        PyObject *from = ga_shape_tuple(a_ndim, a_shape);
        PyObject *to = ga_shape_tuple(ndim, shape);
        if (from && to)
            PyErr_Format(PyExc_ValueError, "could not broadcast input array from shape %R "
                         "into shape %R", from, to);
        Py_XDECREF(from);
        Py_XDECREF(to);
        return -1;
    }
}

int
ga_plan_collapse(int ndim, const npy_intp *dims, int nops,
                 const npy_intp *const *op_strides, ga_kshape *shape, ga_kstrides *strides)
{
    int perm[NPY_MAXDIMS];
    int n = 0;

    for (int i = 0; i < ndim; ++i) {
        if (dims[i] == 0) {
            shape->ndim = 1;
            shape->shape[0] = 0;
            for (int k = 0; k < nops; ++k)
                strides[k].s[0] = 0;
            return 0;
        }
        if (dims[i] != 1)
            perm[n++] = i;
    }
    /* Order dims by the first operand's stride magnitude, largest first
     * (stable), so its innermost kernel dim is its densest: a Fortran-ordered
     * destination is then written as contiguously as a C-ordered one. */
    for (int i = 1; i < n; ++i) {
        int p = perm[i];
        npy_intp sp = op_strides[0][p] < 0 ? -op_strides[0][p] : op_strides[0][p];
        int j = i;
        while (j > 0) {
            npy_intp sq = op_strides[0][perm[j - 1]];
            if (sq < 0)
                sq = -sq;
            if (sq >= sp)
                break;
            perm[j] = perm[j - 1];
            --j;
        }
        perm[j] = p;
    }
    int out = 0;
    for (int i = 0; i < n; ++i) {
        int d = perm[i];
        if (out > 0) {
            int merge = 1;
            for (int k = 0; k < nops; ++k)
                if (strides[k].s[out - 1] != op_strides[k][d] * dims[d]) {
                    merge = 0;
                    break;
                }
            if (merge) {
                shape->shape[out - 1] *= dims[d];
                for (int k = 0; k < nops; ++k)
                    strides[k].s[out - 1] = op_strides[k][d];
                continue;
            }
        }
        if (out == GA_KMAX_DIMS) {
            PyErr_Format(PyExc_ValueError, "gpuarr kernels take at most %d dimensions after "
                         "merging contiguous ones; this operation needs more", GA_KMAX_DIMS);
            return -1;
        }
        shape->shape[out] = dims[d];
        for (int k = 0; k < nops; ++k)
            strides[k].s[out] = op_strides[k][d];
        out++;
    }
    if (out == 0) {
        shape->shape[0] = 1;
        for (int k = 0; k < nops; ++k)
            strides[k].s[0] = 0;
        out = 1;
    }
    shape->ndim = out;
    return 0;
}

/* ---------------------------------------------------------------- Python */

int
ga_plan_intp_seq(PyObject *seq, npy_intp *out, int max, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, what);
    if (fast == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > max) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: too many dimensions", what);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        out[i] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(fast, i));
        if (out[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return (int)n;
}

/* _plan_collapse(shape, [strides, ...]) -> (shape, [strides, ...]) */
static PyObject *
py_plan_collapse(PyObject *self, PyObject *args)
{
    PyObject *shape_obj, *ops;
    npy_intp dims[NPY_MAXDIMS], st[4][NPY_MAXDIMS];
    const npy_intp *stp[4];
    ga_kshape ks;
    ga_kstrides kst[4];
    if (!PyArg_ParseTuple(args, "OO", &shape_obj, &ops))
        return NULL;
    int ndim = ga_plan_intp_seq(shape_obj, dims, NPY_MAXDIMS, "shape");
    if (ndim < 0)
        return NULL;
    Py_ssize_t nops = PySequence_Size(ops);
    if (nops < 1 || nops > 4) {
        PyErr_SetString(PyExc_ValueError, "1 to 4 operands");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < nops; ++k) {
        PyObject *item = PySequence_GetItem(ops, k);
        int n = item ? ga_plan_intp_seq(item, st[k], NPY_MAXDIMS, "strides") : -1;
        Py_XDECREF(item);
        if (n < 0)
            return NULL;
        if (n != ndim) {
            PyErr_SetString(PyExc_ValueError, "strides and shape differ in length");
            return NULL;
        }
        stp[k] = st[k];
    }
    if (ga_plan_collapse(ndim, dims, (int)nops, stp, &ks, kst) < 0)
        return NULL;
    npy_intp outs[GA_KMAX_DIMS];
    for (int i = 0; i < ks.ndim; ++i)
        outs[i] = ks.shape[i];
    PyObject *res_strides = PyList_New(nops);
    if (res_strides == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < nops; ++k) {
        npy_intp s[GA_KMAX_DIMS];
        for (int i = 0; i < ks.ndim; ++i)
            s[i] = kst[k].s[i];
        PyList_SET_ITEM(res_strides, k, ga_shape_tuple(ks.ndim, s));
    }
    PyObject *res_shape = ga_shape_tuple(ks.ndim, outs);
    return Py_BuildValue("(NN)", res_shape, res_strides);
}

/* _plan_broadcast(shape, strides, target_shape) -> strides */
static PyObject *
py_plan_broadcast(PyObject *self, PyObject *args)
{
    PyObject *a, *b, *c;
    npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS], target[NPY_MAXDIMS], out[NPY_MAXDIMS];
    if (!PyArg_ParseTuple(args, "OOO", &a, &b, &c))
        return NULL;
    int n1 = ga_plan_intp_seq(a, shape, NPY_MAXDIMS, "shape");
    int n2 = n1 < 0 ? -1 : ga_plan_intp_seq(b, strides, NPY_MAXDIMS, "strides");
    int n3 = n2 < 0 ? -1 : ga_plan_intp_seq(c, target, NPY_MAXDIMS, "target");
    if (n3 < 0)
        return NULL;
    if (n2 != n1) {
        PyErr_SetString(PyExc_ValueError, "strides and shape differ in length");
        return NULL;
    }
    if (ga_plan_broadcast_to(n1, shape, strides, n3, target, out) < 0)
        return NULL;
    return ga_shape_tuple(n3, out);
}

static PyMethodDef plan_functions[] = {
    {"_plan_collapse", py_plan_collapse, METH_VARARGS, "Kernel layout for shape/strides."},
    {"_plan_broadcast", py_plan_broadcast, METH_VARARGS, "Broadcast strides to a shape."},
    {NULL, NULL, 0, NULL},
};

int
ga_plan_init(PyObject *m)
{
    return PyModule_AddFunctions(m, plan_functions);
}
