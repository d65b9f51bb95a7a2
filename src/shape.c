/*
 * shape.c -- the shapes of arrays, shared by every file that walks an axis
 * or flattens: an axis argument checked and normalised (numpy's AxisError
 * when out of range), reshape (a view when NumPy's rule allows one, else a
 * copy in the requested order) and ravel.
 *
 * Nothing here launches a kernel except the copy a reshape or ravel of a
 * layout that cannot be viewed needs (convert.c's ga_array_copy_as).  The
 * ndarray methods built on these (reshape, ravel, flatten, transpose ...)
 * stay in methods.c.
 */
#include "gpuarr.h"

static PyObject *AxisError = NULL;

int
ga_normalize_axis(PyObject *obj, int ndim, int *axis)
{
    long v = PyLong_AsLong(obj);
    if (v == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "'%s' object cannot be interpreted as an integer",
                         Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    if (v < -ndim || v >= ndim) {
        PyObject *exc = PyObject_CallFunction(AxisError, "li", v, ndim);
        if (exc != NULL) {
            PyErr_SetObject(AxisError, exc);
            Py_DECREF(exc);
        }
        return -1;
    }
    *axis = (int)(v < 0 ? v + ndim : v);
    return 0;
}

/* ------------------------------------------------------ reshape --------- */

/* New strides for viewing `a` as newdims without a copy (NumPy's rule),
 * 1 on success, 0 when a copy is needed. */
static int
nocopy_reshape(ga_array *a, int newnd, const npy_intp *newdims, npy_intp *newstrides, int is_f)
{
    npy_intp olddims[NPY_MAXDIMS], oldstrides[NPY_MAXDIMS];
    int oldnd = 0;
    for (int i = 0; i < a->ndim; ++i) {
        if (a->shape[i] != 1) {
            olddims[oldnd] = a->shape[i];
            oldstrides[oldnd++] = a->strides[i];
        }
    }
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < newnd && oi < oldnd) {
        npy_intp np_ = newdims[ni], op = olddims[oi];
        while (np_ != op) {
            if (np_ < op)
                np_ *= newdims[nj++];
            else
                op *= olddims[oj++];
        }
        for (int ok = oi; ok < oj - 1; ++ok) {
            if (is_f ? oldstrides[ok + 1] != olddims[ok] * oldstrides[ok]
                     : oldstrides[ok] != olddims[ok + 1] * oldstrides[ok + 1])
                return 0;
        }
        if (is_f) {
            newstrides[ni] = oldstrides[oi];
            for (int nk = ni + 1; nk < nj; ++nk)
                newstrides[nk] = newstrides[nk - 1] * newdims[nk - 1];
        } else {
            newstrides[nj - 1] = oldstrides[oj - 1];
            for (int nk = nj - 1; nk > ni; --nk)
                newstrides[nk - 1] = newstrides[nk] * newdims[nk];
        }
        ni = nj++;
        oi = oj++;
    }
    npy_intp last = ni >= 1 ? (is_f ? newstrides[ni - 1] * newdims[ni - 1] : newstrides[ni - 1])
                            : ga_array_itemsize(a);
    for (int nk = ni; nk < newnd; ++nk)
        newstrides[nk] = last;
    return 1;
}

/* Resolve -1 and check the size; returns 0 / -1. */
static int
fix_unknown_dim(ga_array *a, int nd, npy_intp *dims)
{
    npy_intp known = 1, size = ga_array_size(a);
    int unknown = -1;
    for (int i = 0; i < nd; ++i) {
        if (dims[i] < 0) {  /* NumPy takes any negative size as the unknown one */
            if (unknown >= 0) {
                PyErr_SetString(PyExc_ValueError, "can only specify one unknown dimension");
                return -1;
            }
            unknown = i;
        } else {
            known *= dims[i];
        }
    }
    if (unknown >= 0) {
        if (known == 0 || size % known != 0)
            goto mismatch;
        dims[unknown] = size / known;
    } else if (known != size) {
        goto mismatch;
    }
    return 0;
mismatch: {
        PyObject *t = ga_shape_tuple(nd, dims);
        if (t != NULL) {
            PyErr_Format(PyExc_ValueError, "cannot reshape array of size %zd into shape %R", size, t);
            Py_DECREF(t);
        }
        return -1;
    }
}

PyObject *
ga_array_reshape(ga_array *a, int nd, npy_intp *dims, char order)
{
    npy_intp strides[NPY_MAXDIMS];
    int is_f = order == 'F';
    if (fix_unknown_dim(a, nd, dims) < 0)
        return NULL;
    if (ga_array_size(a) == 0 || nocopy_reshape(a, nd, dims, strides, is_f)) {
        if (ga_array_size(a) == 0) {
            npy_intp s = ga_array_itemsize(a);
            for (int k = 0; k < nd; ++k) {
                int i = is_f ? k : nd - 1 - k;
                strides[i] = s;
                s *= dims[i] ? dims[i] : 1;
            }
        }
        return ga_array_view_of(a, nd, dims, strides, 1);
    }
    ga_array *c = ga_array_copy_as(a, NULL, is_f);
    if (c == NULL)
        return NULL;
    PyObject *r = ga_array_reshape(c, nd, dims, order);
    Py_DECREF(c);
    return r;
}

/* ------------------------------------------------------ ravel ----------- */

/* a flattened to 1-d as NumPy's ravel (copy=0) and flatten (copy=1) do: the
 * result is always contiguous, a view only when `a` already is in the
 * requested order.  'A' is 'F' for Fortran-only arrays, else 'C'; 'K' reads
 * memory order: axes by decreasing |stride| (stable), negative strides kept. */
PyObject *
ga_array_ravel(ga_array *a, char order, int copy)
{
    npy_intp n = -1;
    int f_only = (a->flags & GA_F_CONTIGUOUS) && !(a->flags & GA_C_CONTIGUOUS);
    if (order == 'A' || (order == 'K' && (a->flags & (GA_C_CONTIGUOUS | GA_F_CONTIGUOUS))))
        order = f_only ? 'F' : 'C';
    if (order == 'K') {
        npy_intp shape[NPY_MAXDIMS], strides[NPY_MAXDIMS];
        for (int i = 0; i < a->ndim; ++i) {
            npy_intp s = a->strides[i], m = s < 0 ? -s : s;
            int j = i;
            for (; j > 0 && (strides[j - 1] < 0 ? -strides[j - 1] : strides[j - 1]) < m; --j) {
                shape[j] = shape[j - 1];
                strides[j] = strides[j - 1];
            }
            shape[j] = a->shape[i];
            strides[j] = s;
        }
        PyObject *v = ga_array_view_of(a, a->ndim, shape, strides, 1);
        if (v == NULL)
            return NULL;
        PyObject *r = ga_array_ravel((ga_array *)v, 'C', copy);
        Py_DECREF(v);
        return r;
    }
    if (!copy && (a->flags & (order == 'F' ? GA_F_CONTIGUOUS : GA_C_CONTIGUOUS)))
        return ga_array_reshape(a, 1, &n, order);
    ga_array *c = ga_array_copy_as(a, NULL, order == 'F');
    if (c == NULL)
        return NULL;
    PyObject *r = ga_array_reshape(c, 1, &n, order);
    Py_DECREF(c);
    return r;
}

int
ga_shape_init(PyObject *m)
{
    PyObject *exc = PyImport_ImportModule("numpy.exceptions");
    if (exc == NULL)
        return -1;
    AxisError = PyObject_GetAttrString(exc, "AxisError");
    Py_DECREF(exc);
    return AxisError == NULL ? -1 : 0;
}
