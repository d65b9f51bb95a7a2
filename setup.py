"""Build gpuarr._core: C sources compiled by the host compiler, CUDA kernels
(src/kernels/*.cu) compiled by nvcc in parallel, CUDA runtime linked
statically so the module needs only the driver at run time.

Environment:
  CUDA_HOME           toolkit root (default: from nvcc on PATH, else /usr/local/cuda)
  GPUARR_CUDA_ARCHS   GPU targets, e.g. "90" or "75;80;90" (default); machine
                      code for each, compiled from the lowest one's PTX, which
                      is embedded too for GPUs newer than the list
  GPUARR_NVCC_JOBS    parallel nvcc processes (default: CPU count)
"""
import os
import shutil
import subprocess
import sysconfig
from concurrent.futures import ThreadPoolExecutor

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# SASS for sm_75 (T4), sm_80 (A100; the same binary runs on sm_86 and sm_89)
# and sm_90 (H100/H200), all from one compute_75 front-end pass, plus that
# PTX so newer GPUs JIT-compile it.  One front-end pass for all targets
# roughly halves the build time.
DEFAULT_ARCHS = "75;80;90"

# Kernel headers shipped in the package for run-time compiled user kernels
# (gpuarr/cuda/compiler.py passes -I<gpuarr/include> to NVRTC).
RTC_HEADERS = ("kernel_types.h", "kernel_common.cuh", "ufunc_ops.cuh", "reduce.cuh")


def cuda_home():
    if os.environ.get("CUDA_HOME"):
        return os.environ["CUDA_HOME"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        return os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    return "/usr/local/cuda"


def gencode_flags():
    archs = [a.strip() for a in os.environ.get("GPUARR_CUDA_ARCHS", DEFAULT_ARCHS)
             .replace(",", ";").split(";") if a.strip()]
    lowest = min(archs, key=int)
    codes = ",".join([f"sm_{a}" for a in archs] + [f"compute_{lowest}"])
    return [f"-gencode=arch=compute_{lowest},code=[{codes}]"]


def copy_headers(dest):
    os.makedirs(dest, exist_ok=True)
    for h in RTC_HEADERS:
        shutil.copyfile(os.path.join("src/kernels", h), os.path.join(dest, h))


class BuildExtNvcc(build_ext):
    """Compile the .cu files with nvcc (in parallel, skipping up-to-date
    objects), then hand the objects to the normal C link."""

    def build_extension(self, ext):
        cu_sources = [s for s in ext.sources if s.endswith(".cu")]
        ext.sources = [s for s in ext.sources if not s.endswith(".cu")]
        objects = self.compile_cuda(cu_sources)
        ext.extra_objects = list(ext.extra_objects or []) + objects
        super().build_extension(ext)
        self.copy_rtc_headers(ext)

    def copy_rtc_headers(self, ext):
        """Put the kernel headers that user kernels compiled at run time
        include (element types, NumPy's conversions, the ufunc functors)
        next to the extension, in gpuarr/include/."""
        copy_headers(os.path.join(os.path.dirname(self.get_ext_fullpath(ext.name)), "include"))

    def copy_extensions_to_source(self):
        """--inplace (and editable installs): the headers go with the module."""
        super().copy_extensions_to_source()
        build_py = self.get_finalized_command("build_py")
        for ext in self.extensions:
            copy_headers(os.path.join(build_py.get_package_dir(ext.name.rpartition(".")[0]),
                                      "include"))


    def compile_cuda(self, sources):
        home = cuda_home()
        nvcc = os.path.join(home, "bin", "nvcc")
        out_dir = os.path.join(self.build_temp, "kernels")
        os.makedirs(out_dir, exist_ok=True)
        headers = [os.path.join("src/kernels", h) for h in os.listdir("src/kernels")
                   if h.endswith((".h", ".cuh"))]
        newest_header = max((os.path.getmtime(h) for h in headers), default=0)
        flags = ["-O3", "-std=c++17", "-Xcompiler", "-fPIC,-fvisibility=hidden",
                 "--expt-relaxed-constexpr", "-Isrc/kernels",
                 f"-I{numpy.get_include()}"] + gencode_flags()

        def one(src):
            obj = os.path.join(out_dir, os.path.basename(src)[:-3] + ".o")
            stamp = obj + ".flags"
            key = " ".join(flags)
            if (os.path.exists(obj) and os.path.exists(stamp)
                    and open(stamp).read() == key
                    and os.path.getmtime(obj) >= max(os.path.getmtime(src), newest_header)):
                return obj
            cmd = [nvcc, "-c", src, "-o", obj] + flags
            print(" ".join(cmd), flush=True)
            subprocess.check_call(cmd)
            with open(stamp, "w") as f:
                f.write(key)
            return obj

        jobs = int(os.environ.get("GPUARR_NVCC_JOBS", os.cpu_count() or 1))
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(one, sorted(sources)))


def sources():
    c = sorted(os.path.join("src", f) for f in os.listdir("src") if f.endswith(".c"))
    cu = sorted(os.path.join("src/kernels", f) for f in os.listdir("src/kernels")
                if f.endswith(".cu"))
    return c + cu


home = cuda_home()
lib_dir = os.path.join(home, "lib64")
if not os.path.isdir(lib_dir):
    lib_dir = os.path.join(home, "targets", "x86_64-linux", "lib")

core = Extension(
    "gpuarr._core",
    sources=sources(),
    include_dirs=["src", "src/kernels", numpy.get_include(), os.path.join(home, "include")],
    library_dirs=[lib_dir],
    libraries=["cudart_static", "stdc++", "rt", "pthread", "dl"],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
    extra_compile_args=["-std=c11", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra",
                        "-Wno-unused-parameter", "-Wno-missing-field-initializers",
                        "-Wno-cast-function-type"],
)

setup(ext_modules=[core], cmdclass={"build_ext": BuildExtNvcc})
