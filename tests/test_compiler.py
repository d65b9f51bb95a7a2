"""Run-time compilation and the kernel cache, without a GPU: NVRTC compiles
for an explicit architecture, so everything here runs in CI.  Tests skip
when this machine has no NVRTC (the missing-NVRTC error is tested by
hiding it)."""
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from gpuarr.cuda import compiler

from conftest import requires_nvrtc

VADD = r'''
extern "C" __global__ void vector_add(const float *A, const float *B, float *C, const int size)
{
    int item = (blockIdx.x * blockDim.x) + threadIdx.x;
    if (item < size) C[item] = A[item] + B[item];
}
'''


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "kernels"
    monkeypatch.setenv("GPUARR_CACHE_DIR", str(d))
    monkeypatch.setattr(compiler, "_memory", {})
    monkeypatch.setattr(compiler, "_warned", set())
    monkeypatch.setattr(compiler, "_dir_checked", None)
    return d


def _files(d):
    return sorted(p for p in os.listdir(d) if p.endswith(".bin")) if d.exists() else []


@requires_nvrtc
def test_cubin_for_an_explicit_architecture(cache):
    b = compiler.compile_code(VADD, arch=90)
    assert b.kind == "cubin" and b.arch == 90
    assert b.data[:4] == b"\x7fELF"
    assert len(_files(cache)) == 1


@requires_nvrtc
def test_ptx_for_a_gpu_newer_than_nvrtc(cache, monkeypatch):
    monkeypatch.setattr(compiler, "_archs", (75, 80, 90))
    assert compiler.target_for(120) == ("ptx", 90)
    assert compiler.target_for(86) == ("ptx", 80)
    with pytest.raises(compiler.NVRTCError, match="cannot compile for compute capability 6.0"):
        compiler.target_for(60)


@requires_nvrtc
def test_name_expressions_are_lowered(cache):
    code = "template <class T> __global__ void g(T *x) { x[0] = T(1); }"
    b = compiler.compile_code(code, arch=90, name_expressions=("g<float>", "g<int>"))
    assert b.lowered == {"g<float>": "_Z1gIfEvPT_", "g<int>": "_Z1gIiEvPT_"}
    # the lowered names survive the disk cache
    compiler._memory.clear()
    assert compiler.compile_code(code, arch=90, name_expressions=("g<float>", "g<int>")).lowered \
        == b.lowered


@requires_nvrtc
def test_compile_error_shows_log_options_and_numbered_source(cache):
    src = 'extern "C" __global__ void f(float *x)\n{\n    int unused = 1;\n    x[0] = nope;\n}\n'
    with pytest.raises(compiler.CompileException) as info:
        compiler.compile_code(src, name="mine.cu", options=("-DFOO=1",), arch=90)
    e = info.value
    text = str(e)
    assert 'identifier "nope" is undefined' in e.log
    assert "-DFOO=1" in text and "mine.cu" in text
    assert ">    4 |     x[0] = nope;" in text
    assert "     3 |     int unused = 1;" in text      # context, not marked: only a warning
    assert _files(cache) == []


def test_bad_arguments():
    with pytest.raises(TypeError, match="code must be a str"):
        compiler.compile_code(b"bytes", arch=90)
    with pytest.raises(TypeError, match="options must be strings"):
        compiler.compile_code("x", options=(1,), arch=90)


@requires_nvrtc
def test_cache_key_covers_gpuarr_headers(tmp_path, monkeypatch):
    """With gpuarr's kernel headers on the include path, their contents are
    part of the key: a header changed by a rebuild of the same version
    gives another key; without them on the path, the key ignores them."""
    (tmp_path / "ufunc_ops.cuh").write_text("// one")
    monkeypatch.setattr(compiler, "_own_include", lambda: str(tmp_path))
    monkeypatch.setattr(compiler, "_folder_digests", {})
    opts = ("-arch=sm_90", f"-I{tmp_path}")
    first = compiler.cache_key("src", opts, (), "cubin", 90)
    plain = compiler.cache_key("src", ("-arch=sm_90",), (), "cubin", 90)
    (tmp_path / "ufunc_ops.cuh").write_text("// two")
    monkeypatch.setattr(compiler, "_folder_digests", {})
    assert compiler.cache_key("src", opts, (), "cubin", 90) != first
    assert compiler.cache_key("src", ("-arch=sm_90",), (), "cubin", 90) == plain


def test_cache_key_covers_everything_that_changes_the_binary():
    base = compiler.cache_key("src", ("-arch=sm_90",), (), "cubin", 90)
    assert base != compiler.cache_key("src ", ("-arch=sm_90",), (), "cubin", 90)
    assert base != compiler.cache_key("src", ("-arch=sm_80",), (), "cubin", 80)
    assert base != compiler.cache_key("src", ("-arch=sm_90", "-DX"), (), "cubin", 90)
    assert base != compiler.cache_key("src", ("-arch=sm_90",), ("f<int>",), "cubin", 90)
    assert base != compiler.cache_key("src", ("-arch=sm_90",), (), "ptx", 90)
    assert base == compiler.cache_key("src", ("-arch=sm_90",), (), "cubin", 90)


@requires_nvrtc
def test_disk_cache_hit_across_processes(cache):
    script = textwrap.dedent(f"""
        import time
        from gpuarr.cuda import compiler
        calls = []
        real = compiler._raw_compile
        compiler._raw_compile = lambda *a: calls.append(1) or real(*a)
        b = compiler.compile_code({VADD!r}, arch=90)
        nvrtc_loaded = any("nvrtc" in line for line in open("/proc/self/maps"))
        print(len(calls), b.key, nvrtc_loaded)
    """)
    env = dict(os.environ, GPUARR_CACHE_DIR=str(cache))
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, check=True).stdout.split()
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, check=True).stdout.split()
    assert first[0] == "1" and second[0] == "0"       # compiled once, then loaded
    assert first[1] == second[1]
    assert second[2] == "False"                        # a hit does not even load NVRTC
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700


@requires_nvrtc
def test_damaged_or_truncated_file_is_recompiled(cache):
    b = compiler.compile_code(VADD, arch=90)
    path = cache / (b.key + ".bin")
    good = path.read_bytes()
    for damaged in (good[:-100], good[:-1] + bytes([good[-1] ^ 1]), b"", b"garbage\n" + good):
        path.write_bytes(damaged)
        compiler._memory.clear()
        again = compiler.compile_code(VADD, arch=90)
        assert again.data == b.data
        assert path.read_bytes() == good                  # replaced by a good file


@requires_nvrtc
def test_concurrent_writers_both_succeed(cache):
    script = textwrap.dedent(f"""
        from gpuarr.cuda import compiler
        b = compiler.compile_code({VADD!r}, arch=90)
        print(b.key, len(b.data))
    """)
    env = dict(os.environ, GPUARR_CACHE_DIR=str(cache))
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              text=True) for _ in range(4)]
    outs = [p.communicate()[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len({tuple(o) for o in outs}) == 1
    assert len(_files(cache)) == 1
    assert not [f for f in os.listdir(cache) if f.startswith(".tmp-")]


@requires_nvrtc
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root can write to a read-only folder")
def test_read_only_directory_compiles_in_memory_with_one_warning(cache):
    cache.mkdir(mode=0o700)
    os.chmod(cache, 0o500)
    try:
        with pytest.warns(RuntimeWarning, match="cannot write"):
            b = compiler.compile_code(VADD, arch=90)
        assert b.kind == "cubin"
    finally:
        os.chmod(cache, 0o700)


@requires_nvrtc
def test_unwritable_cache_location_compiles_in_memory(cache, tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GPUARR_CACHE_DIR", str(blocker / "kernels"))
    with pytest.warns(RuntimeWarning, match="cannot create the folder"):
        b = compiler.compile_code(VADD, arch=90)
    assert b.data[:4] == b"\x7fELF"


@requires_nvrtc
def test_full_disk_compiles_in_memory_with_one_warning(cache, monkeypatch):
    import errno

    def no_space(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    import tempfile
    monkeypatch.setattr(tempfile, "mkstemp", no_space)
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiler.compile_code(VADD, arch=90)
        compiler.compile_code(VADD + "\n", arch=90)
    msgs = [str(w.message) for w in caught if "kernel cache" in str(w.message)]
    assert len(msgs) == 1 and "No space left" in msgs[0]


@requires_nvrtc
def test_cache_writable_by_others_is_not_trusted(cache):
    b = compiler.compile_code(VADD, arch=90)
    os.chmod(cache, 0o777)
    compiler._memory.clear()
    compiler._dir_checked = None              # as in a new process
    calls = []
    real = compiler._raw_compile
    compiler._raw_compile = lambda *a: calls.append(1) or real(*a)
    try:
        with pytest.warns(RuntimeWarning, match="not private"):
            again = compiler.compile_code(VADD, arch=90)
    finally:
        compiler._raw_compile = real
        os.chmod(cache, 0o700)
    assert calls == [1] and again.data == b.data


@requires_nvrtc
def test_planted_file_writable_by_others_is_not_loaded(cache):
    b = compiler.compile_code(VADD, arch=90)
    path = cache / (b.key + ".bin")
    os.chmod(path, 0o666)
    compiler._memory.clear()
    calls = []
    real = compiler._raw_compile
    compiler._raw_compile = lambda *a: calls.append(1) or real(*a)
    try:
        with pytest.warns(RuntimeWarning, match="file is not private"):
            compiler.compile_code(VADD, arch=90)
    finally:
        compiler._raw_compile = real
    assert calls == [1]


def test_missing_nvrtc_names_every_place_searched(monkeypatch, tmp_path):
    monkeypatch.setattr(compiler._LIB, "lib", None)
    monkeypatch.setattr(compiler, "_located", None)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "no-cuda"))
    site = tmp_path / "site-packages" / "nvidia" / "cu13" / "lib"
    monkeypatch.setattr(compiler, "_candidates", lambda: [
        ("$CUDA_HOME/lib64", str(tmp_path / "no-cuda" / "lib64" / "libnvrtc.so.13")),
        (str(site), str(site / "libnvrtc.so.13")),
        ("the system library path", "libnvrtc-does-not-exist.so.13")])
    with pytest.raises(compiler.NVRTCError) as info:
        compiler._nvrtc()
    msg = str(info.value)
    assert "$CUDA_HOME/lib64" in msg and str(site) in msg and "the system library path" in msg
    assert 'pip install "gpuarr[nvrtc]"' in msg


def test_import_does_not_load_nvrtc():
    code = ("import sys, gpuarr, gpuarr.cuda; gpuarr.zeros; "
            "print('compiler' in sys.modules.get('gpuarr.cuda').__dict__, "
            "any('nvrtc' in l for l in open('/proc/self/maps')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


@requires_nvrtc
def test_raw_kernel_checks_arguments_without_a_gpu():
    import gpuarr as gp
    with pytest.raises(TypeError, match="code must be a str"):
        gp.RawKernel(b"x", "f")
    with pytest.raises(ValueError, match="jitify=True is not supported"):
        gp.RawKernel(VADD, "vector_add", jitify=True)
    with pytest.raises(ValueError, match="backend must be 'nvrtc'"):
        gp.RawKernel(VADD, "vector_add", backend="nvcc")
    with pytest.raises(TypeError, match="exactly one of code="):
        gp.RawModule()
    with pytest.raises(FileNotFoundError):
        gp.RawModule(path="/no/such/file.cubin")


@requires_nvrtc
def test_translate_cucomplex_compiles():
    import gpuarr._raw as raw
    code = raw._translate_cucomplex(
        '#include <cuComplex.h>\nextern "C" __global__ void f(cuDoubleComplex *z, cuFloatComplex *w)'
        '{ z[0] = cuCdiv(cuCmul(z[0], make_cuDoubleComplex(1, 2)), cuConj(z[1]));'
        '  w[0] = cuCaddf(cuCdivf(w[1], w[2]), make_cuComplex(cuCabsf(w[3]), cuCimagf(w[4]))); }')
    assert compiler.compile_code(code, arch=90).kind == "cubin"
