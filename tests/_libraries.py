"""Checks shared by the tests of the libraries gpuarr loads at run time
(cuFFT, cuSOLVER: gpuarr/cuda/_libs.py)."""
import os
import subprocess
import sys
import textwrap

import pytest

import gpuarr
from gpuarr.cuda import _libs


def check_missing_library(monkeypatch, tmp_path, module, soname, find, error, advice):
    """With the library nowhere (module._LIB unloaded, module._candidates
    pointing at empty folders), find() raises `error`, a CUDARuntimeError
    whose message names every place searched and each piece of `advice`."""
    monkeypatch.setattr(module._LIB, "lib", None)
    site = tmp_path / "site-packages" / "nvidia" / "cu13" / "lib"
    monkeypatch.setattr(module, "_candidates", lambda: [
        ("$CUDA_HOME/lib64", str(tmp_path / "no-cuda" / "lib64" / soname)),
        (str(site), str(site / soname)),
        (_libs.SYSTEM, soname.replace(".so", "-does-not-exist.so")),
        ("/usr/local/cuda/lib64", str(tmp_path / "no-local" / soname))])
    with pytest.raises(error) as info:
        find()
    msg = str(info.value)
    for place in ("$CUDA_HOME/lib64", str(site), _libs.SYSTEM, "/usr/local/cuda/lib64"):
        assert place in msg
    for text in advice:
        assert text in msg
    assert isinstance(info.value, gpuarr.cuda.CUDARuntimeError)


def check_loads_where_installed(find, error, name, get_version, at_least):
    """find() gives a file named for the library and get_version() a
    version of at least `at_least`; skips where the library is not installed."""
    try:
        path = find()
    except error:
        pytest.skip(f"{name} is not installed here")
    assert name in os.path.basename(path)
    assert get_version() >= at_least


def check_import_does_not_load(code, name):
    """Running `code` (imports and calls that need no library) in a fresh
    interpreter leaves the library `name` out of the process's memory map."""
    code = textwrap.dedent(code) + textwrap.dedent(f"""
        print(any({name!r} in line for line in open('/proc/self/maps')))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False"]
