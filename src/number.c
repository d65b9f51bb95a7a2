/*
 * number.c -- the number protocol of ndarray.  Conversions of one-element
 * arrays to Python numbers (bool(), int(), float(), operator.index()) read
 * the element with one synchronising copy.  The operators (+, <, ...) are
 * the ufuncs of elementwise.c, in place for +=; @ is blas.c's matmul.
 */
#include "gpuarr.h"
#include "ufunc_table.h"

static int
array_bool(ga_array *a)
{
    npy_intp n = ga_array_size(a);
    if (n != 1) {
        PyErr_SetString(PyExc_ValueError, n == 0
            ? "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
              "that an array is not empty."
            : "The truth value of an array with more than one element is ambiguous. Use a.any() "
              "or a.all()");
        return -1;
    }
    PyObject *s = ga_array_scalar(a, NULL);
    if (s == NULL)
        return -1;
    int r = PyObject_IsTrue(s);
    Py_DECREF(s);
    return r;
}

static PyObject *
array_convert(ga_array *a, PyObject *(*conv)(PyObject *), const char *what)
{
    PyObject *s = ga_array_scalar(a, what);
    if (s == NULL)
        return NULL;
    PyObject *r = conv(s);
    Py_DECREF(s);
    return r;
}

static PyObject *array_int(ga_array *a) { return array_convert(a, PyNumber_Long, "int()"); }
static PyObject *array_float(ga_array *a) { return array_convert(a, PyNumber_Float, "float()"); }

static PyObject *
array_index(ga_array *a)
{
    if (a->ndim != 0 || !(a->descr->kind == 'i' || a->descr->kind == 'u')) {
        PyErr_SetString(PyExc_TypeError,
                        "only integer scalar arrays can be converted to a scalar index");
        return NULL;
    }
    return array_convert(a, PyNumber_Index, "index");
}


/* ---------------------------------------------------------- operators ---- */

/* Operands the operators accept; anything else gives NotImplemented so the
 * other operand's reflected method (NumPy's, for a host array) can run. */
static int
operator_operand(PyObject *o)
{
    return ga_array_check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o) ||
           PyArray_IsScalar(o, Generic) || PyList_Check(o) || PyTuple_Check(o);
}

static PyObject *
binop(PyObject *a, PyObject *b, int id)
{
    if (!operator_operand(a) || !operator_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    return ga_ufunc_call2(id, a, b);
}

static PyObject *
inplace(PyObject *a, PyObject *b, int id)
{
    if (!operator_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *in[2] = {a, b};
    return ga_ufunc_apply(id, in, a, NULL, NPY_SAME_KIND_CASTING);
}

#define GA_BINARY_SLOTS(slot, id)                                                        \
    static PyObject *array_##slot(PyObject *a, PyObject *b) { return binop(a, b, id); }  \
    static PyObject *array_i##slot(PyObject *a, PyObject *b) { return inplace(a, b, id); }
GA_BINARY_SLOTS(add, GA_UF_add)
GA_BINARY_SLOTS(sub, GA_UF_subtract)
GA_BINARY_SLOTS(mul, GA_UF_multiply)
GA_BINARY_SLOTS(truediv, GA_UF_true_divide)
GA_BINARY_SLOTS(floordiv, GA_UF_floor_divide)
GA_BINARY_SLOTS(mod, GA_UF_remainder)
GA_BINARY_SLOTS(lshift, GA_UF_left_shift)
GA_BINARY_SLOTS(rshift, GA_UF_right_shift)
GA_BINARY_SLOTS(and, GA_UF_bitwise_and)
GA_BINARY_SLOTS(or, GA_UF_bitwise_or)
GA_BINARY_SLOTS(xor, GA_UF_bitwise_xor)

static PyObject *
array_pow(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    return binop(a, b, GA_UF_power);
}

static PyObject *
array_ipow(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None)
        Py_RETURN_NOTIMPLEMENTED;
    return inplace(a, b, GA_UF_power);
}

static PyObject *
array_divmod(PyObject *a, PyObject *b)
{
    if (!operator_operand(a) || !operator_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *q = ga_ufunc_call2(GA_UF_floor_divide, a, b);
    PyObject *r = q ? ga_ufunc_call2(GA_UF_remainder, a, b) : NULL;
    if (r == NULL) {
        Py_XDECREF(q);
        return NULL;
    }
    return Py_BuildValue("(NN)", q, r);
}

/* a @ b, b @ a (the reflected slot is this one), a @= b: NumPy's matmul,
 * in place only when the product has a's shape (checked as out=). */
static PyObject *
array_matmul(PyObject *a, PyObject *b)
{
    if (!operator_operand(a) || !operator_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    return ga_matmul(a, b, NULL, NULL);
}

static PyObject *
array_imatmul(PyObject *a, PyObject *b)
{
    if (!operator_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    return ga_matmul(a, b, a, NULL);
}

static PyObject *array_neg(PyObject *a) { return ga_ufunc_call1(GA_UF_negative, a); }
static PyObject *array_pos(PyObject *a) { return ga_ufunc_call1(GA_UF_positive, a); }
static PyObject *array_abs(PyObject *a) { return ga_ufunc_call1(GA_UF_absolute, a); }
static PyObject *array_invert(PyObject *a) { return ga_ufunc_call1(GA_UF_invert, a); }

PyObject *
ga_array_richcompare(PyObject *a, PyObject *b, int op)
{
    static const int ids[] = {
        [Py_LT] = GA_UF_less, [Py_LE] = GA_UF_less_equal, [Py_EQ] = GA_UF_equal,
        [Py_NE] = GA_UF_not_equal, [Py_GT] = GA_UF_greater, [Py_GE] = GA_UF_greater_equal,
    };
    if (!operator_operand(b))
        Py_RETURN_NOTIMPLEMENTED;
    return ga_ufunc_call2(ids[op], a, b);
}

PyNumberMethods ga_array_as_number = {
    .nb_add = array_add, .nb_subtract = array_sub, .nb_multiply = array_mul,
    .nb_remainder = array_mod, .nb_divmod = array_divmod, .nb_power = array_pow,
    .nb_negative = array_neg, .nb_positive = array_pos, .nb_absolute = array_abs,
    .nb_bool = (inquiry)array_bool, .nb_invert = array_invert, .nb_lshift = array_lshift,
    .nb_rshift = array_rshift, .nb_and = array_and, .nb_xor = array_xor, .nb_or = array_or,
    .nb_int = (unaryfunc)array_int, .nb_float = (unaryfunc)array_float,
    .nb_inplace_add = array_iadd, .nb_inplace_subtract = array_isub,
    .nb_inplace_multiply = array_imul, .nb_inplace_remainder = array_imod,
    .nb_inplace_power = array_ipow, .nb_inplace_lshift = array_ilshift,
    .nb_inplace_rshift = array_irshift, .nb_inplace_and = array_iand,
    .nb_inplace_xor = array_ixor, .nb_inplace_or = array_ior,
    .nb_floor_divide = array_floordiv, .nb_true_divide = array_truediv,
    .nb_inplace_floor_divide = array_ifloordiv, .nb_inplace_true_divide = array_itruediv,
    .nb_index = (unaryfunc)array_index,
    .nb_matrix_multiply = array_matmul, .nb_inplace_matrix_multiply = array_imatmul,
};
