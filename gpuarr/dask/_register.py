"""gpuarr as a Dask chunk type (the backend is in _backend.py).

What Dask needs to know about a chunk type, registered for gpuarr.ndarray:

* sizeof: the bytes of the chunk (``nbytes``), so Dask's memory accounting
  and distributed's spilling see device chunks;
* normalize_token: a token made from the chunk's identity -- its device
  pointer, shape, strides, dtype and a per-object random id kept for the
  object's life -- never from its values, so tokenizing a chunk does not
  copy it to the host.  The caveat: the token is stable for one array
  object in one process, not across processes, and does not change if the
  array is modified in place (Dask takes chunks as immutable);
  ``tokenize.ensure-deterministic`` therefore refuses it;
* the array dispatches (concatenate, take, tensordot, einsum, empty,
  numel/nannumel for mean and var, to_numpy for ``to_backend("numpy")``);
* distributed serialization (when distributed is installed): a chunk
  travels as one header and one frame of host memory -- device to pinned
  host memory (``ndarray.get``), over the wire, back to the current device
  of the receiving worker (``gpuarr.asarray``).

When they are registered: the ``dask.sizeof`` entry point (pyproject.toml)
runs register_lazily when Dask is imported, which costs nothing until a
gpuarr chunk reaches Dask's sizeof; gpuarr.dask's functions, the backend
and register() register everything at once.  Until then a gpuarr array
has no token Dask can make (it does not pickle), so Dask gives it a random
one: never a host copy.  distributed's serializers are registered with the
rest if distributed is imported by then (workers import it first), on a
worker's first sizeof of a chunk, or by register(), which imports it; the
client needs them to receive chunks: call register() there, or use the
backend.

The backend: ``dask.config.set({"array.backend": "gpuarr"})`` (found
through the ``dask.array.backends`` entry point) makes ``da.ones``,
``da.zeros``, ``da.empty``, ``da.full``, ``da.arange`` and
``da.random``'s functions make gpuarr chunks; ``x.to_backend("gpuarr")``
moves a dask array's NumPy chunks to the GPU and ``to_backend("numpy")``
back.  ``da.from_array`` does not consult Dask's backend: chunk a host
array (or memmap) and move it with ``.map_blocks(gpuarr.asarray)``, or
``.to_backend("gpuarr")``.
"""
import sys
import threading
import uuid
import weakref

import numpy

__all__ = ["register", "register_lazily", "normalize_array", "sizeof_array", "serialize_array",
           "deserialize_array"]

_lock = threading.RLock()
_registered = set()          # of "dask", "distributed"


# --------------------------------------------------- one chunk's identity ----

_ids = {}                    # id(array) -> (weak reference, random hex)


def _object_id(x):
    """A random id for this array object, the same while it lives."""
    key = id(x)
    with _lock:
        entry = _ids.get(key)
        if entry is not None and entry[0]() is x:
            return entry[1]
        token = uuid.uuid4().hex
        _ids[key] = (weakref.ref(x, lambda _, key=key: _ids.pop(key, None)), token)
        return token


def normalize_array(x):
    """Dask's token of a gpuarr array, without reading its values."""
    import dask
    if dask.config.get("tokenize.ensure-deterministic", False):
        raise RuntimeError("a gpuarr array has no deterministic token: it is tokenized by "
                           "identity (device pointer and a per-object id), not by value, so "
                           "that tokenizing never copies it to the host")
    return ("gpuarr.ndarray", int(x.data.ptr), tuple(x.shape), tuple(x.strides),
            numpy.dtype(x.dtype).str, _object_id(x))


def sizeof_array(x):
    """Bytes of a gpuarr array for Dask's accounting."""
    if "distributed" not in _registered and "distributed.protocol" in sys.modules:
        _register_distributed()
    return int(x.nbytes)


# ----------------------------------------------------- distributed frames ----

def serialize_array(x):
    """(header, frames) of a gpuarr array: its bytes in one host frame,
    copied from the device through pinned memory."""
    import gpuarr
    host = gpuarr.ascontiguousarray(x).get() if x.size else numpy.empty(x.shape, x.dtype)
    header = {"shape": tuple(x.shape), "dtype": numpy.dtype(x.dtype).str}
    return header, [memoryview(numpy.ascontiguousarray(host).reshape(-1)).cast("B")]


def deserialize_array(header, frames):
    """A gpuarr array on the current device from serialize_array's frames."""
    import gpuarr
    dtype = numpy.dtype(header["dtype"])
    host = numpy.frombuffer(frames[0], dtype=dtype) if len(frames[0]) else \
        numpy.empty(0, dtype)
    return gpuarr.asarray(host.reshape(header["shape"]))


# ------------------------------------------------------------ registration ----

def _register_dask():
    import gpuarr
    from dask.sizeof import sizeof
    from dask.tokenize import normalize_token
    sizeof.register(gpuarr.ndarray, sizeof_array)
    normalize_token.register(gpuarr.ndarray, normalize_array)
    if "dask.array" in sys.modules or _importable("dask.array"):
        from dask.array import backends, dispatch
        dispatch.concatenate_lookup.register(gpuarr.ndarray, gpuarr.concatenate)
        dispatch.take_lookup.register(gpuarr.ndarray, gpuarr.take)
        dispatch.tensordot_lookup.register(gpuarr.ndarray, gpuarr.tensordot)
        dispatch.einsum_lookup.register(gpuarr.ndarray, gpuarr.einsum)
        dispatch.empty_lookup.register(gpuarr.ndarray, gpuarr.empty)
        dispatch.divide_lookup.register(gpuarr.ndarray, gpuarr.divide)
        dispatch.numel_lookup.register(gpuarr.ndarray, backends._numel_arraylike)
        dispatch.nannumel_lookup.register(gpuarr.ndarray, backends._nannumel)
        dispatch.to_numpy_dispatch.register(gpuarr.ndarray, gpuarr.asnumpy)


def _register_distributed():
    import gpuarr
    from distributed.protocol import dask_deserialize, dask_serialize
    dask_serialize.register(gpuarr.ndarray)(serialize_array)
    dask_deserialize.register(gpuarr.ndarray)(deserialize_array)
    _registered.add("distributed")


def _importable(name):
    import importlib.util
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _register_now():
    """Everything Dask needs, once; distributed's serializers if
    distributed is imported already."""
    with _lock:
        if "dask" not in _registered:
            _register_dask()
            _registered.add("dask")
        if "distributed" not in _registered and "distributed.protocol" in sys.modules:
            _register_distributed()


def register():
    """Register gpuarr with Dask now: sizeof, tokens, the array
    dispatches, and distributed's serializers when distributed is
    installed (importing it).  Idempotent."""
    with _lock:
        _register_now()
        if "distributed" not in _registered and _importable("distributed"):
            _register_distributed()


def register_lazily(sizeof):
    """The ``dask.sizeof`` entry point: Dask calls it with its sizeof
    dispatch while dask.sizeof is imported; the registrations run when a
    gpuarr type first reaches sizeof (or tokenize, where dask.tokenize is
    imported by then: it cannot be imported from here, half-way through
    Dask's own imports)."""
    sizeof.register_lazy("gpuarr", _register_now)
    tokenize = sys.modules.get("dask.tokenize")
    if getattr(tokenize, "normalize_token", None) is not None:
        tokenize.normalize_token.register_lazy("gpuarr", _register_now)
