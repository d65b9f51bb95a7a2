"""Set-up shared by the lesson notebooks: ``%load_ext lesson`` in a notebook's
first cell.

It prints where the notebook runs (the date, the GPU or why there is none,
the versions that matter), sets matplotlib's inline pictures to PNG at
100 dpi, and adds one cell magic, ``%%requires``, for cells that need
something a machine may lack:

    %%requires gpu numba
    kernel[blocks, threads](x_gpu)

runs the cell when every requirement is met; otherwise it prints one line
saying what is missing and skips the cell, so "Run All" goes on to the end
without a traceback.  Requirements:

    gpu          a CUDA device gpuarr can use
    multi-gpu    two or more of them
    nvrtc        NVRTC, which compiles the kernels you write (RawKernel ...)
    numba        numba.cuda, able to compile and run a kernel on the GPU
    torch        PyTorch with CUDA
    cupy         CuPy, able to use the GPU
    cuda.core    NVIDIA's cuda.core package
    matplotlib   matplotlib
    scipy        SciPy
    gp.NAME      a gpuarr attribute, e.g. gp.ElementwiseKernel
    gpuarr.MOD.NAME   an attribute of a gpuarr submodule, e.g. gpuarr.jit.rawkernel

A skipped cell defines nothing, so later cells that use its results name
the same requirements.
"""
import ast
import datetime
import importlib
import platform
import sys

import numpy as np

import gpuarr as gp

_checked = {}


def _gpu_reason():
    """None when gpuarr can use a GPU, else why not, as gpuarr words it."""
    if gp.is_available():
        return None
    try:
        gp.zeros(1)
    except Exception as exc:
        return _first_line(exc)
    return "gpuarr.is_available() is False"


def _gpu():
    return "no GPU (the first cell says why)" if _gpu_reason() else None


def _multi_gpu():
    if _gpu_reason():
        return _gpu()
    n = gp.cuda.get_device_count()
    return None if n >= 2 else f"needs two GPUs, this machine has {n}"


def _nvrtc():
    try:
        gp.cuda.compiler.find_nvrtc()
    except Exception as exc:
        return f"no NVRTC to compile kernels ({_first_line(exc)})"
    return None


def _first_line(exc):
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _module(name, usable=None, what=None):
    def check():
        try:
            mod = importlib.import_module(name)
        except Exception as exc:  # ImportError, or a broken installation
            return f"{what or name} is not installed ({_first_line(exc)})"
        if usable is not None:
            try:
                problem = usable(mod)
            except Exception as exc:
                problem = _first_line(exc)
            if problem:
                return f"{what or name} cannot use the GPU ({problem})"
        return None
    return check


def _numba_works(cuda):
    """None when numba.cuda can compile and run a kernel, else why not."""
    if not cuda.is_available():
        return "numba.cuda.is_available() is False"

    def probe(x):
        x[0] = 1

    x = cuda.device_array(1, dtype=np.int32)
    cuda.jit(probe)[1, 1](x)
    return None if x.copy_to_host()[0] == 1 else "a test kernel gave a wrong result"


def _attribute(spec):
    def check():
        parts = spec.split(".")
        root = {"gp": "gpuarr"}.get(parts[0], parts[0])
        obj = importlib.import_module(root)
        path = root
        for part in parts[1:]:
            path = f"{path}.{part}"
            try:
                obj = getattr(obj, part)
            except AttributeError:
                try:
                    obj = importlib.import_module(path)
                except ImportError:
                    return f"this gpuarr has no {path} yet"
        return None
    return check


_CHECKS = {
    "gpu": _gpu,
    "multi-gpu": _multi_gpu,
    "nvrtc": _nvrtc,
    "numba": _module("numba.cuda", _numba_works, "Numba"),
    "torch": _module("torch", lambda m: None if m.cuda.is_available() else
                     "torch.cuda.is_available() is False", "PyTorch"),
    "cupy": _module("cupy", lambda m: None if m.cuda.runtime.getDeviceCount() > 0 else
                    "no device", "CuPy"),
    "cuda.core": _module("cuda.core", None, "cuda.core"),
    "matplotlib": _module("matplotlib"),
    "scipy": _module("scipy", None, "SciPy"),
}


def missing(*requirements):
    """The reasons the requirements are not met (an empty list when they all are)."""
    reasons = []
    for req in requirements:
        if req not in _checked:
            if req in _CHECKS:
                check = _CHECKS[req]
            elif req.startswith(("gp.", "gpuarr.")):
                check = _attribute(req)
            else:
                raise ValueError(f"%%requires: unknown requirement {req!r} (known: "
                                 f"{', '.join(_CHECKS)}, gp.NAME, gpuarr.MODULE.NAME)")
            _checked[req] = check()
        if _checked[req]:
            reasons.append(_checked[req])
    return reasons


def environment():
    """One line each: when, on which GPU, with which versions."""
    now = datetime.datetime.now(datetime.timezone.utc)
    lines = [f"Run on {now:%Y-%m-%d %H:%M} UTC"]
    reason = _gpu_reason()
    if reason:
        lines.append(f"GPU: none ({reason}); the cells that need one print 'Skipped'")
    else:
        driver = gp.cuda.runtime.driverGetVersion()
        for i in range(gp.cuda.get_device_count()):
            dev = gp.cuda.Device(i)
            cc = dev.compute_capability
            total = gp.cuda.runtime.getDeviceProperties(i)["totalGlobalMem"]
            lines.append(f"GPU {i}: {dev.name} (compute capability {cc[:-1]}.{cc[-1]}, "
                         f"{total / 2**30:.1f} GiB), CUDA driver {driver // 1000}."
                         f"{driver % 1000 // 10}")
    lines.append(f"gpuarr {gp.__version__}, NumPy {np.__version__}, "
                 f"Python {platform.python_version()}")
    return "\n".join(lines)


def _inline_pictures(ipython):
    """PNG pictures in the notebook at 100 dpi (small files)."""
    try:
        import matplotlib
    except ImportError:
        return
    ipython.run_line_magic("matplotlib", "inline")
    matplotlib.rcParams["figure.dpi"] = 100
    matplotlib.rcParams["savefig.dpi"] = 100


def load_ipython_extension(ipython):
    from IPython.core.magic import register_cell_magic

    @register_cell_magic
    def requires(line, cell):
        """%%requires REQ ...: run the cell only when every requirement is met."""
        __tracebackhide__ = True     # a cell's error shows the cell, not this function
        reasons = missing(*line.split())
        if reasons:
            print("Skipped: " + "; ".join(reasons))
            return None
        code = ipython.transform_cell(cell)
        tree = ast.parse(code)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        filename = ipython.compile.cache(code, ipython.execution_count, raw_code=cell)
        exec(compile(tree, filename, "exec"), ipython.user_ns)
        if last is not None:
            return eval(compile(last, filename, "eval"), ipython.user_ns)
        return None

    _inline_pictures(ipython)
    print(environment())
    sys.stdout.flush()
