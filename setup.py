"""Build gpuarr._core: C sources compiled by the host compiler and CUDA
kernels (src/kernels/*.cu) compiled by nvcc, all in one pool of parallel
jobs, longest first; the CUDA runtime linked statically so the module needs
only the driver at run time.

Every object goes to a cache keyed by its content (build/gpuarr-cache/ in
this folder): the source, every header it can include, the compiler's
version and the flags, with the temporary folder of pip's isolated build
environment replaced by the NumPy version it holds.  `pip install .` and
`pip install -e .` in the same clone therefore compile each file once, and
so does switching back and forth between GPU targets.  Delete the folder
to compile everything again.

A non-editable build also copies the module into gpuarr/ here (as
`build_ext --inplace` does; git ignores it), so that `python -m gpuarr`
and `import gpuarr` work in this folder too, where the source folder
shadows the installed package.

Environment:
  CUDA_HOME           toolkit root (default: from nvcc on PATH, else /usr/local/cuda)
  GPUARR_CUDA_ARCHS   GPU targets, e.g. "90" or "75;80;90" (default); machine
                      code for each, compiled from the lowest one's PTX, which
                      is embedded too for GPUs newer than the list
  GPUARR_NVCC_JOBS    compilers run at once, nvcc and the C compiler
                      (default: the CPUs this process may use)
  GPUARR_FATBIN_COMPRESS=0   GPU code stored uncompressed (see NVCC_FLAGS)
"""
import copy
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import numpy
from setuptools import Extension, setup
from setuptools.errors import CompileError
from setuptools.command.build_ext import build_ext

# SASS for sm_75 (T4), sm_80 (A100; the same binary runs on sm_86 and sm_89)
# and sm_90 (H100/H200), all from one compute_75 front-end pass, plus that
# PTX so newer GPUs JIT-compile it.  One front-end pass for all targets
# roughly halves the build time.
DEFAULT_ARCHS = "75;80;90"

# Kernel headers shipped in the package for run-time compiled user kernels
# (gpuarr/cuda/compiler.py passes -I<gpuarr/include> to NVRTC).
RTC_HEADERS = ("kernel_types.h", "kernel_common.cuh", "ufunc_ops.cuh", "reduce.cuh")

# nvcc's -O is the optimisation of the host code only (the launchers and the
# kernel stubs; the device code is compiled at full optimisation whatever it
# says), and -O1 compiles that code in two thirds of the time of -O3.
# -compress-all: the machine code too is stored compressed (nvcc compresses
# only the PTX, and fatbinaries past some size), cast.cu's object 11.3 MB ->
# 0.8 MB at no cost in build time; the driver decompresses a module when it
# loads it, on the first launch of one of its kernels.
# GPUARR_FATBIN_COMPRESS=0 stores everything uncompressed instead (to compare).
NVCC_FLAGS = ["-O1", "-std=c++17", "-Xcompiler", "-fPIC,-fvisibility=hidden",
              "--expt-relaxed-constexpr", "-Isrc/kernels"] + (
    ["--no-compress"] if os.environ.get("GPUARR_FATBIN_COMPRESS") == "0"
    else ["-Xfatbin=-compress-all"])

# Python's CFLAGS carry -g: the module is built without debug information.
C_FLAGS = ["-std=c11", "-O2", "-g0", "-fvisibility=hidden", "-Wall", "-Wextra",
           "-Wno-unused-parameter", "-Wno-missing-field-initializers",
           "-Wno-cast-function-type"]

CACHE_DIR = os.path.join("build", "gpuarr-cache")
CACHE_DAYS = 14          # objects unused for this long are deleted
INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def cuda_home():
    if os.environ.get("CUDA_HOME"):
        return os.environ["CUDA_HOME"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        return os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    return "/usr/local/cuda"


def gencode_flags(archs_text=None):
    archs = [a.strip() for a in (archs_text or os.environ.get("GPUARR_CUDA_ARCHS", DEFAULT_ARCHS))
             .replace(",", ";").split(";") if a.strip()]
    lowest = min(archs, key=int)
    codes = ",".join([f"sm_{a}" for a in archs] + [f"compute_{lowest}"])
    return [f"-gencode=arch=compute_{lowest},code=[{codes}]"]


# ============================================================== the cache ==

def local_headers(source, include_dirs):
    """Every file that `source` can reach through #include "..." (looked up
    beside the including file, then in include_dirs), transitively; includes
    inside #if count too.  System headers (<...>) are covered by the
    compiler's version and the NumPy version in the key."""
    seen, todo = set(), [source]
    while todo:
        path = todo.pop()
        with open(path, "rb") as f:
            names = INCLUDE.findall(f.read())
        for name in names:
            for d in [os.path.dirname(path)] + list(include_dirs):
                candidate = os.path.normpath(os.path.join(d, name.decode()))
                if os.path.isfile(candidate):
                    if candidate not in seen:
                        seen.add(candidate)
                        todo.append(candidate)
                    break
    return sorted(seen)


def normalise_args(args, replacements):
    """The compiler arguments with each path in `replacements` (a dict: path
    -> what it stands for) replaced, so that temporary folders do not enter
    the key."""
    out = []
    for arg in args:
        for path, stands_for in replacements.items():
            arg = arg.replace(path, stands_for)
        out.append(arg)
    return out


def cache_key(source, headers, tool, args, replacements):
    """Hex digest naming the object of `source`: its bytes and those of its
    headers (paths relative to this folder), the compiler's version text
    `tool`, and the arguments after normalise_args."""
    h = hashlib.sha256()
    for path in [source] + sorted(headers):
        with open(path, "rb") as f:
            data = f.read()
        h.update(f"{path}\0{len(data)}\0".encode())
        h.update(data)
    h.update(tool.encode() + b"\0")
    for arg in normalise_args(args, replacements):
        h.update(arg.encode() + b"\0")
    return h.hexdigest()


def tool_version(cmd):
    """`cmd --version` (the first line for the C compiler, all of nvcc's)."""
    try:
        return subprocess.run(cmd + ["--version"], capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"{cmd} (no version: {exc})"


# The elementwise loops are spread over the ew_*.cu files so that many cores
# build them at once; each is one GA_EW_DEFINE_GROUP line under the same
# header, whose parsing and host compilation cost about 3 s a file.  Given
# fewer jobs than files, the build compiles them in groups of up to
# EW_GROUP_MAX neighbours, at least as many groups as jobs, each group one
# source that #includes its files: the same kernels and launchers, with that
# fixed cost paid once a group.  The bound keeps each group's module (what
# the driver loads, and decompresses, on the first launch of one of its
# kernels) a few of today's files large.
EW_FILE = re.compile(r"(^|/)ew_[a-z0-9_]+\.cu$")
EW_GROUP_MAX = 4


def source_groups(sources, n_jobs):
    """The .cu sources as the lists compiled together: a list per file,
    except the ew_*.cu files, which make min(count, max(n_jobs,
    count / EW_GROUP_MAX rounded up)) lists of neighbours in name order."""
    ew = sorted(s for s in sources if EW_FILE.search(s))
    groups = [[s] for s in sorted(sources) if s not in ew]
    n = min(len(ew), max(n_jobs, -(-len(ew) // EW_GROUP_MAX), 1))
    groups += [ew[len(ew) * i // n:len(ew) * (i + 1) // n] for i in range(n)]
    return groups


def unity_source(files):
    """(path, label) of a generated source that #includes `files` (kept in
    the cache folder; rewritten only when its text changes)."""
    names = [os.path.basename(f) for f in files]
    label = f"{os.path.dirname(files[0])}/{'+'.join(names)}"
    path = os.path.join(CACHE_DIR, "unity", f"{names[0][:-3]}-{names[-1]}")
    text = ("// Generated by setup.py: these files compiled as one (see source_groups).\n" +
            "".join(f'#include "{os.path.relpath(f, os.path.dirname(path))}"\n' for f in files))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path) as f:
            current = f.read()
    except OSError:
        current = None
    if current != text:
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
    return path, label


class Progress:
    """One line per finished compilation, on stdout (pip captures it; `pip
    install -v` shows it) and, when stdout is not a terminal but there is
    one, on /dev/tty too, so a user of plain `pip install` sees it."""

    def __init__(self, total):
        self.total, self.done, self.lock = total, 0, threading.Lock()
        self.tty = None
        if not sys.stdout.isatty():
            try:
                self.tty = open("/dev/tty", "w")
                self.tty.write("\n")       # below pip's "Building wheel ..." line
            except OSError:
                self.tty = None

    def say(self, text):
        with self.lock:
            print(text, flush=True)
            if self.tty is not None:
                try:
                    self.tty.write("\r\033[K" + text + "\n")
                    self.tty.flush()
                except OSError:
                    self.tty = None

    def finished(self, what, source, seconds):
        with self.lock:
            self.done += 1
            k = self.done
        self.say(f"[{k}/{self.total}] {what} {source} ({seconds:.1f} s)")

    def close(self):
        if self.tty is not None:
            self.tty.close()


# ============================================================== the build ==

def copy_headers(package_dir):
    """RTC_HEADERS into <package_dir>/include (what user kernels include)."""
    dest = os.path.join(package_dir, "include")
    os.makedirs(dest, exist_ok=True)
    for h in RTC_HEADERS:
        shutil.copyfile(os.path.join("src", "kernels", h), os.path.join(dest, h))


class BuildExtNvcc(build_ext):
    """Compile the C and CUDA sources in one pool (objects from the cache
    where it has them), link them, and copy the module into the source
    tree's gpuarr/ when the build was not in place already."""

    def run(self):
        super().run()
        if not self.inplace:
            self.copy_into_source_tree()
        build_py = self.get_finalized_command("build_py")
        package_dir = build_py.get_package_dir("gpuarr")
        if os.access(package_dir or ".", os.W_OK):
            copy_headers(package_dir)       # the source folder works as the package

    def build_extension(self, ext):
        t0 = time.time()
        cache = os.path.join(CACHE_DIR, "objects")
        os.makedirs(cache, exist_ok=True)
        times_path = os.path.join(CACHE_DIR, "times.json")
        try:
            with open(times_path) as f:
                known_times = json.load(f)
        except (OSError, ValueError):
            known_times = {}

        n_jobs = int(os.environ.get("GPUARR_NVCC_JOBS", 0)) or (
            len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
        jobs = self.cuda_jobs([s for s in ext.sources if s.endswith(".cu")], n_jobs)
        jobs += self.c_jobs(ext, [s for s in ext.sources if s.endswith(".c")])
        missing = [j for j in jobs if not os.path.exists(j["object"])]
        # Longest first (times of earlier builds; unknown ones first, groups
        # of files before single files, CUDA before C), so that the short C
        # compilations fill the end.
        missing.sort(key=lambda j: (j["kind"] != "nvcc", "+" not in j["source"],
                                    -known_times.get(j["source"], 1e9)))
        progress = Progress(len(missing))
        if missing:
            progress.say(f"gpuarr: compiling {len(missing)} of {len(jobs)} objects, {n_jobs} at a "
                         f"time ({len(jobs) - len(missing)} found in {CACHE_DIR}); "
                         f"`pip install -v` shows the commands")
        else:
            progress.say(f"gpuarr: all {len(jobs)} objects found in {CACHE_DIR}")

        def compile_one(job):
            start = time.time()
            tmp = f"{job['object']}.{os.getpid()}.{threading.get_ident()}.tmp"
            job["compile"](tmp)
            os.replace(tmp, job["object"])
            seconds = time.time() - start
            progress.finished(job["kind"], job["source"], seconds)
            return job["source"], seconds

        pool = ThreadPoolExecutor(max_workers=max(1, n_jobs))
        try:
            for future in as_completed([pool.submit(compile_one, j) for j in missing]):
                source, seconds = future.result()
                known_times[source] = round(seconds, 1)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)   # stop at the first failure
            raise
        finally:
            pool.shutdown()
            progress.close()
        with open(times_path, "w") as f:
            json.dump(known_times, f, indent=0, sort_keys=True)
        self.prune(cache, {j["object"] for j in jobs})

        objects = [j["object"] for j in jobs]
        for path in objects:
            os.utime(path)          # the pruning's clock
        ext_path = self.get_ext_fullpath(ext.name)
        if os.path.exists(ext_path):
            os.remove(ext_path)     # relink whatever the objects' times say
        compile_s = time.time() - t0
        linked = copy.copy(ext)
        linked.sources, linked.extra_objects = [], objects + list(ext.extra_objects or [])
        super().build_extension(linked)
        copy_headers(os.path.dirname(ext_path))
        print(f"gpuarr: compiled in {compile_s:.0f} s, linked in "
              f"{time.time() - t0 - compile_s:.0f} s: {ext_path} "
              f"({os.path.getsize(ext_path) / 1e6:.1f} MB)", flush=True)

    def cuda_jobs(self, sources, n_jobs):
        nvcc = [os.path.join(cuda_home(), "bin", "nvcc")]
        flags = NVCC_FLAGS + gencode_flags()
        version = tool_version(nvcc) + tool_version(["g++"])
        print(f"gpuarr: nvcc -c SOURCE -o OBJECT {' '.join(flags)}", flush=True)
        jobs = []
        for group in source_groups(sources, n_jobs):
            if len(group) == 1:
                src = label = group[0]
                headers = local_headers(src, ["src/kernels"])
            else:
                src, label = unity_source(group)
                headers = local_headers(src, ["src/kernels"])

            def compile_cu(out, src=src, label=label):
                if subprocess.call(nvcc + ["-c", src, "-o", out] + flags) != 0:
                    raise CompileError(f"nvcc failed on {label} (its messages are above)")

            key = cache_key(src, headers, version, flags, {})
            jobs.append(self.job("nvcc", label, src, key, compile_cu))
        return jobs

    def c_jobs(self, ext, sources):
        # the command distutils would run, as one list: the compiler and
        # Python's flags, macros, include folders, then ours
        cc = self.compiler
        macros = [f"-U{m[0]}" if len(m) == 1 else f"-D{m[0]}" if m[1] is None
                  else f"-D{m[0]}={m[1]}" for m in list(ext.define_macros) + list(cc.macros)]
        includes = [f"-I{d}" for d in list(ext.include_dirs) + list(cc.include_dirs)]
        args = list(cc.compiler_so) + macros + includes + list(ext.extra_compile_args)
        replacements = {numpy.get_include(): f"<numpy {numpy.__version__} headers>"}
        version = (tool_version(cc.compiler_so[:1]) + sys.version +
                   sysconfig.get_config_var("EXT_SUFFIX"))
        print(f"gpuarr: {' '.join(args)} -c SOURCE -o OBJECT", flush=True)
        jobs = []
        for src in sorted(sources):
            key = cache_key(src, local_headers(src, ["src", "src/kernels"]), version, args,
                            replacements)

            def compile_c(out, src=src):
                if subprocess.call(args + ["-c", src, "-o", out]) != 0:
                    raise CompileError(f"the C compiler failed on {src} (its messages are above)")

            jobs.append(self.job("cc", src, src, key, compile_c))
        return jobs

    @staticmethod
    def job(kind, label, source, key, compile_fn):
        name = os.path.basename(source)
        obj = os.path.join(CACHE_DIR, "objects", f"{name}-{key[:24]}.o")
        return {"kind": kind, "source": label, "object": obj, "compile": compile_fn}

    @staticmethod
    def prune(cache, keep):
        """Delete cached objects not used for CACHE_DAYS days."""
        limit = time.time() - CACHE_DAYS * 86400
        for name in os.listdir(cache):
            path = os.path.join(cache, name)
            if path not in keep and os.path.getmtime(path) < limit:
                os.remove(path)

    def copy_into_source_tree(self):
        """The built module beside gpuarr/__init__.py here, so the source
        folder works as the package too (skipped when it is not writable)."""
        build_py = self.get_finalized_command("build_py")
        for ext in self.extensions:
            fullname = self.get_ext_fullname(ext.name)
            package_dir = build_py.get_package_dir(".".join(fullname.split(".")[:-1]))
            dest = os.path.join(package_dir, os.path.basename(self.get_ext_filename(fullname)))
            if not os.access(package_dir or ".", os.W_OK):
                continue
            shutil.copyfile(self.get_ext_fullpath(ext.name), dest + ".tmp")
            os.chmod(dest + ".tmp", 0o755)
            os.replace(dest + ".tmp", dest)
            print(f"gpuarr: copied the module to {dest} (for `python -m gpuarr` in this folder)",
                  flush=True)


def sources():
    c = sorted(os.path.join("src", f) for f in os.listdir("src") if f.endswith(".c"))
    cu = sorted(os.path.join("src/kernels", f) for f in os.listdir("src/kernels")
                if f.endswith(".cu"))
    return c + cu


def core_extension():
    home = cuda_home()
    lib_dir = os.path.join(home, "lib64")
    if not os.path.isdir(lib_dir):
        lib_dir = os.path.join(home, "targets", "x86_64-linux", "lib")
    return Extension(
        "gpuarr._core",
        sources=sources(),
        include_dirs=["src", "src/kernels", numpy.get_include(), os.path.join(home, "include")],
        library_dirs=[lib_dir],
        libraries=["cudart_static", "stdc++", "rt", "pthread", "dl"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
        extra_compile_args=C_FLAGS,
        extra_link_args=["-Wl,--strip-debug"],
    )


if __name__ == "__main__":      # also under pip (setuptools runs this file as __main__)
    setup(ext_modules=[core_extension()], cmdclass={"build_ext": BuildExtNvcc})
