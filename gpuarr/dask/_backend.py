"""gpuarr as a Dask array backend: the ``dask.array.backends`` entry
point "gpuarr" (what it makes is described in _register.py, with what Dask
needs of a gpuarr chunk).  Imports dask.array: Dask loads it only when
the backend is asked for.
"""
import dask
import dask.array as da
import numpy
from dask.array.backends import ArrayBackendEntrypoint
from dask.utils import Dispatch

from ._register import register

__all__ = ["GpuarrBackendEntrypoint", "Philox"]

# to_backend("gpuarr"): NumPy chunks to the current device
to_gpuarr_dispatch = Dispatch("to_gpuarr_dispatch")


@to_gpuarr_dispatch.register(numpy.ndarray)
def _numpy_to_gpuarr(data, **kwargs):
    import gpuarr
    return gpuarr.asarray(data, **kwargs)


@to_gpuarr_dispatch.register_lazy("gpuarr")
def _register_gpuarr():
    import gpuarr
    to_gpuarr_dispatch.register(gpuarr.ndarray, lambda data, **kwargs: data)


class Philox(tuple):
    """The bit generator Dask's ``da.random.default_rng()`` asks the backend
    for: a NumPy SeedSequence (``_seed_seq``, which Dask spawns one child
    of per chunk) whose four 32-bit words seed gpuarr's Philox generator
    (the tuple itself, which gpuarr.random.default_rng takes as a seed)."""

    def __new__(cls, seed=None):
        seq = seed if isinstance(seed, numpy.random.SeedSequence) else \
            numpy.random.SeedSequence(seed)
        self = super().__new__(cls, (int(w) for w in seq.generate_state(4, numpy.uint32)))
        self._seed_seq = seq
        return self

    def __reduce__(self):
        return (Philox, (self._seed_seq,))

    def __repr__(self):
        return f"Philox(entropy={self._seed_seq.entropy!r})"


def _with_meta(name, *args, meta_keyword="meta", **kwargs):
    """dask.array's creation function `name` with gpuarr chunks: a gpuarr
    meta given as its keyword `meta_keyword` (meta=, or like= for arange)
    unless the caller gave one."""
    import gpuarr
    if kwargs.get(meta_keyword) is None:
        # zeros, not empty: dask casts the meta (astype), which reads its
        # element (compute-sanitizer initcheck reported the unwritten one)
        kwargs[meta_keyword] = gpuarr.zeros(())
    with dask.config.set({"array.backend": "numpy"}):
        return getattr(da, name)(*args, **kwargs)


class GpuarrBackendEntrypoint(ArrayBackendEntrypoint):
    """Dask's array backend "gpuarr" (the ``dask.array.backends`` entry
    point): creation functions and random numbers make gpuarr chunks."""

    def __init__(self):
        register()

    @classmethod
    def to_backend_dispatch(cls):
        return to_gpuarr_dispatch

    @classmethod
    def to_backend(cls, data, **kwargs):
        import gpuarr
        if isinstance(data._meta, gpuarr.ndarray):
            return data
        return data.map_blocks(cls.to_backend_dispatch(), **kwargs)

    @property
    def RandomState(self):
        import gpuarr.random
        return gpuarr.random.RandomState

    @property
    def default_bit_generator(self):
        return Philox

    @staticmethod
    def ones(*args, **kwargs):
        return _with_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args, **kwargs):
        return _with_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args, **kwargs):
        return _with_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args, **kwargs):
        return _with_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args, **kwargs):
        return _with_meta("arange", *args, meta_keyword="like", **kwargs)
