"""Shape manipulation: reshape, ravel, flatten, transpose/T/swapaxes/moveaxis,
squeeze, expand_dims, diagonal, flip*, copy, astype, view, broadcast_to,
concatenate/stack/hstack/vstack.  Each result must hold NumPy's values and
be a view exactly where NumPy's is (same strides and data offset), and a
copy where NumPy copies."""
import numpy as np
import pytest
from numpy.exceptions import AxisError

import gpuarr as gp
from _arrays import KINDS, assert_same, cast_source, is_view_of, random_array

pytestmark = pytest.mark.gpu

# Layouts of the input, all views of one (4, 6, 10) array.
LAYOUTS = {
    "c": lambda a: a,
    "f": lambda a: a.T,                      # Fortran-contiguous
    "strided": lambda a: a[:, ::2, 1:9],
    "negative": lambda a: a[::-1, :, ::-2],
    "f_strided": lambda a: a.T[::2],
    "empty": lambda a: a[:, 2:2],
}

# Each op is applied as op(np, x) and op(gp, x).  "K" marks ops whose
# result layout follows the input's memory order (checked only for inputs
# that are C- or F-contiguous, where gpuarr and NumPy agree).
OPS = {
    "reshape_flat": lambda xp, a: a.reshape(-1),
    "reshape_2d": lambda xp, a: a.reshape(a.shape[0], -1),
    "reshape_merge_leading": lambda xp, a: xp.reshape(a, (-1, a.shape[-1])),
    "reshape_tuple_kw": lambda xp, a: a.reshape(shape=(a.shape[-1], -1)) if xp is gp
    else a.reshape((a.shape[-1], -1)),
    "reshape_F": lambda xp, a: a.reshape(-1, order="F"),
    "reshape_F_2d": lambda xp, a: xp.reshape(a, (a.shape[0], -1), order="F"),
    "reshape_insert_ones": lambda xp, a: a.reshape((1,) + a.shape[:2] + (1,) + a.shape[2:]),
    "ravel": lambda xp, a: xp.ravel(a),
    "ravel_F": lambda xp, a: a.ravel("F"),
    "ravel_A": lambda xp, a: a.ravel("A"),
    "ravel_K": lambda xp, a: xp.ravel(a, order="K"),
    "flatten": lambda xp, a: a.flatten(),
    "flatten_F": lambda xp, a: a.flatten("F"),
    "flatten_A": lambda xp, a: a.flatten("A"),
    "flatten_K": lambda xp, a: a.flatten("K"),
    "T": lambda xp, a: a.T,
    "transpose": lambda xp, a: xp.transpose(a),
    "transpose_axes": lambda xp, a: xp.transpose(a, (1, 0, 2)),
    "transpose_method_args": lambda xp, a: a.transpose(2, 0, 1),
    "transpose_negative_axes": lambda xp, a: a.transpose((-1, -3, -2)),
    "swapaxes": lambda xp, a: xp.swapaxes(a, 0, -1),
    "swapaxes_method": lambda xp, a: a.swapaxes(1, 2),
    "moveaxis": lambda xp, a: xp.moveaxis(a, 0, -1),
    "moveaxis_multi": lambda xp, a: xp.moveaxis(a, [0, 1], [-1, 0]),
    "expand_dims": lambda xp, a: xp.expand_dims(a, 1),
    "expand_dims_multi": lambda xp, a: xp.expand_dims(a, (0, -1)),
    "squeeze": lambda xp, a: xp.squeeze(a[:, :1]),
    "squeeze_axis": lambda xp, a: a[:1, :, None].squeeze(axis=(0, 2)),
    "squeeze_noop": lambda xp, a: a.squeeze(),
    "diagonal": lambda xp, a: a.diagonal(),
    "diagonal_offset": lambda xp, a: xp.diagonal(a, 1, 0, 2),
    "diagonal_negative": lambda xp, a: a.diagonal(-1, 2, 1),
    "diagonal_past_the_end": lambda xp, a: a.diagonal(20),
    "flip": lambda xp, a: xp.flip(a),
    "flip_axis": lambda xp, a: xp.flip(a, 1),
    "flip_axes": lambda xp, a: xp.flip(a, (0, 2)),
    "fliplr": lambda xp, a: xp.fliplr(a),
    "flipud": lambda xp, a: xp.flipud(a),
    "copy": lambda xp, a: a.copy(),
    "copy_F": lambda xp, a: a.copy(order="F"),
    "copy_function": lambda xp, a: xp.copy(a),
    "astype_same": lambda xp, a: a.astype(a.dtype),
    "astype_no_copy": lambda xp, a: a.astype(a.dtype, copy=False),
    "astype_float32": lambda xp, a: a.astype(np.float32),
    "astype_int8_F": lambda xp, a: a.astype(np.int8, order="F"),
    "view_same_size": lambda xp, a: a.view(np.int64),
    "broadcast_to": lambda xp, a: xp.broadcast_to(a[:1], (2, 3) + a.shape[1:]),
    "newaxis": lambda xp, a: a[None, ..., None],
    "atleast_2d": lambda xp, a: xp.atleast_2d(a[0, 0]),
    "atleast_1d": lambda xp, a: xp.atleast_1d(a[0, 0, 0, ...]),
    "ascontiguousarray": lambda xp, a: xp.ascontiguousarray(a),
    "asfortranarray": lambda xp, a: xp.asfortranarray(a),
}
KEEP_ORDER = {"copy_function", "astype_same", "astype_float32"}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("op", list(OPS))
def test_views_and_copies_like_numpy(rng, op, layout):
    h = cast_source(rng, (4, 6, 10), np.float64, np.int8)  # exact in every dtype used
    d = gp.asarray(h)
    hin, din = LAYOUTS[layout](h), LAYOUTS[layout](d)
    try:
        want = OPS[op](np, hin)
    except IndexError:  # indexing into the empty layout
        with pytest.raises(IndexError):
            OPS[op](gp, din)
        return
    got = OPS[op](gp, din)
    assert isinstance(got, gp.ndarray)
    assert_same(got.get(), want)
    assert got.flags.writeable == want.flags.writeable
    if want.size == 0:
        return
    numpy_view = np.shares_memory(want, h)
    assert is_view_of(got, d) == numpy_view
    if numpy_view:
        assert got.strides == want.strides
        assert got.data.ptr - d.data.ptr == want.ctypes.data - h.ctypes.data
    elif op not in KEEP_ORDER or hin.flags.c_contiguous or hin.flags.f_contiguous:
        assert got.flags.c_contiguous == want.flags.c_contiguous
        assert got.flags.f_contiguous == want.flags.f_contiguous


@pytest.mark.parametrize("dtype", KINDS, ids=str)
def test_reshape_ravel_transpose_every_dtype(rng, dtype):
    h = random_array(rng, (3, 4, 5), dtype)
    d = gp.asarray(h)
    assert_same(d.reshape(5, 12).get(), h.reshape(5, 12))
    assert_same(d.T.reshape(-1).get(), h.T.reshape(-1))
    assert_same(d[:, ::-1].ravel().get(), h[:, ::-1].ravel())
    assert_same(d.transpose(1, 2, 0).copy().get(), h.transpose(1, 2, 0).copy())
    assert_same(gp.flip(d, -1).get(), np.flip(h, -1))


def test_reshape_of_0d_and_to_0d(rng):
    h = random_array(rng, (), np.int32)
    d = gp.asarray(h)
    assert_same(d.reshape(1, 1).get(), h.reshape(1, 1))
    assert_same(d.reshape(-1).get(), h.reshape(-1))
    one = gp.asarray(np.array([3.5]))
    assert one.reshape(()).shape == () and float(one.reshape(())) == 3.5
    assert gp.zeros((0, 3)).reshape(3, 0, 5).shape == (3, 0, 5)
    with pytest.raises(ValueError):
        gp.zeros((0, 3)).reshape(3, 0, -1)


def test_copies_are_independent_of_their_source(rng):
    h = random_array(rng, (4, 5), np.float32)
    d = gp.asarray(h)
    for copy in (d.copy(), gp.copy(d), d.flatten(), d.T.reshape(-1), d.astype(np.float32),
                 d[:, ::2].ravel()):
        assert not is_view_of(copy, d)
        copy.fill(0)
    assert_same(d.get(), h)
    view = d.reshape(-1)
    view[3] = 99
    h.reshape(-1)[3] = 99
    assert_same(d.get(), h)


@pytest.mark.parametrize("shape", [(4,), (2, 2, 2), (3, 5), (-1, -1), (-2, -1), (5, -1), (0, -1)],
                         ids=str)
def test_impossible_reshapes_raise_value_error(shape):
    d = gp.zeros((3, 4))
    with pytest.raises(ValueError) as exc:
        d.reshape(shape)
    with pytest.raises(ValueError):
        np.zeros((3, 4)).reshape(shape)
    if -1 not in shape and min(shape) >= 0:
        assert "cannot reshape array of size 12 into shape" in str(exc.value)


@pytest.mark.parametrize("call", [
    lambda xp, a: xp.swapaxes(a, 0, 3), lambda xp, a: xp.moveaxis(a, -4, 0),
    lambda xp, a: xp.expand_dims(a, 4), lambda xp, a: xp.squeeze(a, 3),
    lambda xp, a: a.transpose(0, 1, 3), lambda xp, a: xp.diagonal(a, 0, 0, 5),
    lambda xp, a: xp.flip(a, 3), lambda xp, a: xp.concatenate([a, a], axis=3),
    lambda xp, a: xp.stack([a, a], axis=-5),
], ids=["swapaxes", "moveaxis", "expand_dims", "squeeze", "transpose", "diagonal", "flip",
        "concatenate", "stack"])
def test_bad_axes_raise_numpy_axis_error(call):
    h = np.zeros((2, 1, 3))
    with pytest.raises(AxisError):
        call(np, h)
    with pytest.raises(AxisError):
        call(gp, gp.asarray(h))


def test_other_bad_shape_arguments_raise_value_error():
    d = gp.zeros((2, 1, 3))
    with pytest.raises(ValueError):
        d.squeeze(axis=0)
    with pytest.raises(ValueError):
        d.squeeze(axis=(1, -2))
    with pytest.raises(ValueError):
        d.transpose(0, 0, 1)
    with pytest.raises(ValueError):
        d.transpose(0, 1)
    with pytest.raises(ValueError):
        d.diagonal(0, 1, 1)
    with pytest.raises(ValueError):
        gp.zeros(3).diagonal()
    with pytest.raises(ValueError):
        gp.expand_dims(d, (0, 0))
    with pytest.raises(ValueError):
        gp.fliplr(gp.zeros(3))


def test_item_reads_one_element(rng):
    h = random_array(rng, (3, 4), np.int32)
    d = gp.asarray(h)
    for args in [(5,), (-1,), (1, 2), ((2, 3),), (np.int64(7),)]:
        assert d.item(*args) == h.item(*args)
        assert type(d.item(*args)) is type(h.item(*args))
    assert gp.asarray(np.array([2.5])).item() == 2.5
    assert gp.asarray(np.float32(4)).item(0) == 4.0
    with pytest.raises(IndexError):
        d.item(12)
    with pytest.raises(ValueError):
        d.item()


# ------------------------------------------------------------ broadcast_to

def test_broadcast_to_is_a_read_only_view_with_zero_strides(rng):
    h = random_array(rng, (3, 1), np.int16)
    d = gp.asarray(h)
    b = gp.broadcast_to(d, (2, 3, 4))
    want = np.broadcast_to(h, (2, 3, 4))
    assert_same(b.get(), want)
    assert b.base is d and not b.flags.writeable
    assert b.strides[0] == 0 and b.strides[2] == 0 and b.strides[1] == want.strides[1]
    assert_same(gp.broadcast_to(gp.asarray(np.float32(2)), 5).get(), np.broadcast_to(np.float32(2), 5))
    assert gp.broadcast_to(gp.asarray([7]), np.int64(3)).shape == np.broadcast_to([7], np.int64(3)).shape

    with pytest.raises(ValueError, match=r"\(3, 1\).*\(2, 2\)") as exc:
        gp.broadcast_to(d, (2, 2))
    assert "broadcast" in str(exc.value)
    with pytest.raises(ValueError):
        gp.broadcast_to(d, (3,))
    with pytest.raises(ValueError):
        gp.broadcast_to(d, (-1, 3, 1))


# ------------------------------------------------------------ joining

@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concatenate_matches_numpy(rng, axis):
    hs = [random_array(rng, (2, 3), np.int32), random_array(rng, (2, 3), np.float32)[::-1],
          random_array(rng, (2, 3), np.uint8).T.copy().T]
    got = gp.concatenate([gp.asarray(h) for h in hs], axis=axis)
    assert_same(got.get(), np.concatenate(hs, axis=axis))


def test_concatenate_dtype_out_and_casting(rng):
    a = random_array(rng, (2, 3), np.float64)
    b = random_array(rng, (4, 3), np.float64)
    da, db = gp.asarray(a), gp.asarray(b)
    got = gp.concatenate([da, db], dtype=np.float32)
    assert_same(got.get(), np.concatenate([a, b], dtype=np.float32))
    out = gp.empty((6, 3))
    assert gp.concatenate([da, db], out=out) is out
    assert_same(out.get(), np.concatenate([a, b]))
    with pytest.raises(TypeError):
        gp.concatenate([da, db], dtype=np.int32, casting="safe")
    with pytest.raises(ValueError):
        gp.concatenate([da, db], axis=1)
    with pytest.raises(ValueError):
        gp.concatenate([da, gp.zeros(3)])
    with pytest.raises(ValueError):
        gp.concatenate([])
    with pytest.raises(ValueError):
        gp.concatenate([da, db], out=gp.empty((5, 3)))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack_matches_numpy(rng, axis):
    hs = [random_array(rng, (2, 3), np.complex64) for _ in range(3)]
    got = gp.stack([gp.asarray(h) for h in hs], axis=axis)
    assert_same(got.get(), np.stack(hs, axis=axis))
    with pytest.raises(ValueError):
        gp.stack([gp.zeros(2), gp.zeros(3)])


@pytest.mark.parametrize("shapes", [[(3,), (4,)], [(2, 3), (2, 1)], [(), ()], [(2, 2, 2), (2, 3, 2)]],
                         ids=str)
def test_hstack_matches_numpy(rng, shapes):
    hs = [random_array(rng, s, np.int16) for s in shapes]
    assert_same(gp.hstack([gp.asarray(h) for h in hs]).get(), np.hstack(hs))


@pytest.mark.parametrize("shapes", [[(3,), (3,)], [(2, 3), (1, 3)], [(), ()], [(1, 2, 2), (3, 2, 2)]],
                         ids=str)
def test_vstack_matches_numpy(rng, shapes):
    hs = [random_array(rng, s, np.float16) for s in shapes]
    assert_same(gp.vstack([gp.asarray(h) for h in hs]).get(), np.vstack(hs))


def test_joining_refuses_host_arrays():
    with pytest.raises(TypeError, match="asarray"):
        gp.concatenate([gp.zeros(2), np.zeros(2)])
