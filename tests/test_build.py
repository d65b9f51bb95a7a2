"""setup.py's object cache: the key of an object is its source, the headers
it can include, the compiler's version and the flags, and no temporary
path (pip's isolated build environment puts NumPy's headers under a new
/tmp/pip-build-env-* folder every time), so `pip install .` and
`pip install -e .` share every object.  No GPU or compiler needed."""
import os

import numpy
import pytest

from _repo import REPO as ROOT, load_script


@pytest.fixture(scope="module")
def setup_py():
    pytest.importorskip("setuptools")
    return load_script("gpuarr_setup", "setup.py")   # defines; setup() runs only as __main__


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A small source tree: a.c includes a.h, which includes b.h; c.c
    includes nothing of it."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.c").write_text('#include "a.h"\n#include <stdio.h>\nint a;\n')
    (tmp_path / "src" / "a.h").write_text('#if X\n#  include "b.h"\n#endif\n')
    (tmp_path / "src" / "b.h").write_text("int b;\n")
    (tmp_path / "src" / "c.c").write_text("int c;\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_local_headers_follow_includes(setup_py, tree):
    assert setup_py.local_headers("src/a.c", ["src"]) == ["src/a.h", "src/b.h"]
    assert setup_py.local_headers("src/c.c", ["src"]) == []


def test_real_kernel_headers(setup_py, monkeypatch):
    monkeypatch.chdir(ROOT)
    headers = setup_py.local_headers("src/kernels/ew_arith.cu", ["src/kernels"])
    assert {"src/kernels/ew_kernels.cuh", "src/kernels/kernel_common.cuh",
            "src/kernels/ufunc_table.h", "src/kernels/kernels.h"} <= set(headers)


def key(setup_py, include, **kw):
    args = ["gcc", "-O2", f"-I{include}", "-Isrc"]
    return setup_py.cache_key("src/a.c", setup_py.local_headers("src/a.c", ["src"]),
                              kw.get("tool", "gcc 12"), kw.get("args", args),
                              {include: "<numpy 2.0 headers>"})


def test_key_has_no_temporary_path(setup_py, tree):
    first = "/tmp/pip-build-env-abc123/overlay/lib/python3.11/site-packages/numpy/_core/include"
    second = "/tmp/pip-build-env-xyz789/overlay/lib/python3.11/site-packages/numpy/_core/include"
    assert key(setup_py, first) == key(setup_py, second)
    args = setup_py.normalise_args(["gcc", f"-I{first}"], {first: "<numpy 2.0 headers>"})
    assert args == ["gcc", "-I<numpy 2.0 headers>"]


def test_key_follows_sources_headers_tool_and_flags(setup_py, tree):
    base = key(setup_py, "/x")
    assert key(setup_py, "/x") == base
    assert key(setup_py, "/x", tool="gcc 13") != base
    assert key(setup_py, "/x", args=["gcc", "-O3"]) != base
    (tree / "src" / "b.h").write_text("int b2;\n")        # a header inside #if
    assert key(setup_py, "/x") != base


def test_nvcc_flags_need_no_numpy(setup_py, monkeypatch):
    """The kernels include no NumPy header, so nvcc's flags name none."""
    monkeypatch.chdir(ROOT)
    flags = setup_py.NVCC_FLAGS + setup_py.gencode_flags("75;80;90")
    assert not any(numpy.get_include() in f or "numpy" in f for f in flags)
    for cu in os.listdir("src/kernels"):
        if cu.endswith(".cu"):
            for header in ["src/kernels/" + cu] + setup_py.local_headers("src/kernels/" + cu,
                                                                         ["src/kernels"]):
                with open(header) as f:
                    assert "numpy/" not in f.read(), header
    assert flags[-1] == "-gencode=arch=compute_75,code=[sm_75,sm_80,sm_90,compute_75]"


def test_c_flags_build_without_debug_information(setup_py):
    assert "-g0" in setup_py.C_FLAGS


def test_source_groups(setup_py, monkeypatch):
    """Every .cu file is compiled once; the ew_*.cu files share jobs only
    when there are fewer jobs than files."""
    monkeypatch.chdir(ROOT)
    sources = sorted("src/kernels/" + f for f in os.listdir("src/kernels") if f.endswith(".cu"))
    ew = [s for s in sources if os.path.basename(s).startswith("ew_")]
    assert len(ew) > 4
    for n_jobs in (1, 2, 4, len(ew), 64):
        groups = setup_py.source_groups(sources, n_jobs)
        assert sorted(s for g in groups for s in g) == sources
        merged = [g for g in groups if len(g) > 1]
        assert all(s in ew for g in merged for s in g)
        assert all(len(g) <= setup_py.EW_GROUP_MAX for g in groups)
        if n_jobs >= len(ew):
            assert not merged
        else:
            assert len([g for g in groups if g[0] in ew]) >= n_jobs


def test_unity_source_includes_its_files(setup_py, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(setup_py, "CACHE_DIR", str(tmp_path / "cache"))
    path, label = setup_py.unity_source(["src/kernels/ew_arith.cu", "src/kernels/ew_bit_logic.cu"])
    assert label == "src/kernels/ew_arith.cu+ew_bit_logic.cu"
    headers = setup_py.local_headers(path, ["src/kernels"])
    assert {"src/kernels/ew_arith.cu", "src/kernels/ew_bit_logic.cu", "src/kernels/ew_kernels.cuh"} <= \
        {os.path.relpath(h, ROOT) if os.path.isabs(h) else h for h in headers}


def test_every_subpackage_is_installed():
    """pyproject.toml lists every package under gpuarr/ (a folder with an
    __init__.py), so `pip install .` installs it, not only the checkout."""
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    found = {os.path.relpath(d, ROOT).replace(os.sep, ".")
             for d, _, files in os.walk(os.path.join(ROOT, "gpuarr"))
             if "__init__.py" in files and "__pycache__" not in d}
    assert found <= listed, f"not in pyproject.toml's packages: {sorted(found - listed)}"
