"""Every public callable of the C core has a signature that inspect (so
help() and Jupyter) can read: module functions, the methods of ndarray,
Stream, Event and ufunc, and those types' constructors.  The parameters a
signature names as keywords are accepted as keywords.  No GPU needed."""
import inspect
import types

import pytest

import gpuarr as gp
from gpuarr import _core

TYPES = [_core.ndarray, gp.cuda.Stream, gp.cuda.Event, gp.ufunc]


def public_functions():
    return sorted(name for name, obj in vars(_core).items()
                  if isinstance(obj, types.BuiltinFunctionType) and not name.startswith("_"))


def is_public(name):
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def methods(cls):
    """The methods the C type defines itself (its PyMethodDef table), not
    CPython's slot wrappers."""
    return sorted(name for name, obj in vars(cls).items()
                  if isinstance(obj, (types.MethodDescriptorType, types.ClassMethodDescriptorType))
                  and is_public(name))


def test_the_lists_are_not_empty():
    assert {"zeros", "sum", "where", "convolve", "get_elapsed_time"} <= set(public_functions())
    assert {"get", "astype", "sum", "reshape", "__dlpack__"} <= set(methods(_core.ndarray))
    assert {"record", "synchronize", "wait_event", "__exit__"} <= set(methods(gp.cuda.Stream))
    assert {"reduce", "outer", "accumulate"} <= set(methods(gp.ufunc))


@pytest.mark.parametrize("name", public_functions())
def test_module_function_signature(name):
    fn = getattr(_core, name)
    sig = inspect.signature(fn)
    assert fn.__text_signature__, name
    assert not fn.__doc__.startswith(name + "("), "the signature is still in the docstring"
    assert "self" not in sig.parameters and "module" not in sig.parameters


@pytest.mark.parametrize("cls, name", [(cls, name) for cls in TYPES for name in methods(cls)],
                         ids=lambda x: getattr(x, "__name__", x))
def test_method_signature(cls, name):
    method = getattr(cls, name)
    sig = inspect.signature(method)
    first = next(iter(sig.parameters.values()))
    assert first.name == "self" and first.kind is inspect.Parameter.POSITIONAL_ONLY, sig
    assert method.__text_signature__.startswith("($self"), name


@pytest.mark.parametrize("cls", [_core.ndarray, gp.cuda.Stream, gp.cuda.Event],
                         ids=lambda c: c.__name__)
def test_constructor_signature(cls):
    assert cls.__text_signature__
    assert list(inspect.signature(cls).parameters)


def test_signatures_read_as_expected():
    assert str(inspect.signature(gp.ones)) == \
        "(shape, dtype=None, order='C', *, device=None, memory='device')"
    assert str(inspect.signature(gp.ndarray.get)) == \
        "(self, /, out=None, stream=None, blocking=True)"
    assert str(inspect.signature(gp.cuda.Stream)) == \
        "(*, non_blocking=False, null=False, ptr=None)"
    assert str(inspect.signature(gp.where)) == "(condition, x, y, /)"
    assert "ones(shape, dtype=None" in _help_text(gp.ones)


def _help_text(obj):
    import pydoc
    return pydoc.render_doc(obj, renderer=pydoc.plaintext)


class _Probe:
    """An argument no parser takes for a real value."""


def _keyword_names(sig):
    return [p.name for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


@pytest.mark.parametrize("name", public_functions())
def test_module_function_keywords_are_accepted(name):
    """Each keyword a module function's signature names is one its parser
    knows: calling with it (and probes for the required arguments) fails,
    if at all, for another reason than an unknown keyword.  The probes
    never reach the device, so this runs without a GPU."""
    fn = getattr(_core, name)
    sig = inspect.signature(fn)
    required = [p for p in sig.parameters.values()
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for kw in _keyword_names(sig):
        args = [_Probe() for p in required if p.name != kw]
        try:
            fn(*args, **{kw: _Probe()})
        except Exception as exc:  # any failure but an unknown keyword
            text = str(exc)
            assert not ("keyword" in text and kw in text and
                        ("unexpected" in text or "invalid" in text)), f"{name}({kw}=...): {text}"


@pytest.mark.gpu
def test_stream_ptr_none_is_the_default():
    """Stream(ptr=None), as the signature reads, is Stream(): a new stream,
    not the null stream that ptr=0 wraps."""
    s = gp.cuda.Stream(ptr=None)
    assert s.ptr != 0 and s != gp.cuda.Stream.null
    assert gp.cuda.Stream(ptr=0) == gp.cuda.Stream.null
