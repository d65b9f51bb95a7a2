"""The machine a run measures: GPU name, driver, library versions, and the
rates the floors are made of (device copy, pinned bus, peak flops)."""
import dataclasses
import platform
import subprocess
import sys
import time
from typing import Optional

import numpy as np

from _backends import why
from _inputs import GiB
from _timing import time_gpu


# (FP64, FP32) flops per SM per clock, by compute capability: A100, H100/H200.
FLOPS_PER_SM_CLOCK = {(8, 0): (128, 128), (9, 0): (128, 256)}


@dataclasses.dataclass
class Machine:
    gpu: str = "unknown GPU"
    driver: str = "?"
    events: str = ""
    copy_rate: Optional[float] = None   # bytes/s, read + written
    copy_by: dict = dataclasses.field(default_factory=dict)
    h2d: Optional[float] = None         # pinned bus rates, bytes/s
    d2h: Optional[float] = None
    fp64: Optional[float] = None        # peak flop/s
    fp32: Optional[float] = None
    versions: dict = dataclasses.field(default_factory=dict)

    def floor(self, c):
        """Lower bound on one call of case c, in seconds, or None."""
        bus = [(c.h2d, self.h2d), (c.d2h, self.d2h)]
        if any(n and not rate for n, rate in bus + [(c.bytes, self.copy_rate)]):
            return None
        device = c.bytes / self.copy_rate if c.bytes else 0.0
        peak = self.fp64 if c.flop_dtype == "f64" else self.fp32
        if c.flops and peak:
            device = max(device, c.flops / peak)
        return device + sum(n / rate for n, rate in bus if n) or None


def nvidia_smi(fields):
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits",
                              "-i", "0"], capture_output=True, text=True, timeout=30).stdout
        return [v.strip() for v in out.splitlines()[0].split(",")]
    except (OSError, IndexError, subprocess.SubprocessError):
        return None


def probe_machine(backends, events, measure, cfg):
    """Name, driver, versions, and the rates floors are made of; what cannot
    be probed stays None and is said on stderr."""
    m = Machine(events=events or "none", versions=library_versions(backends))
    smi = nvidia_smi("name,driver_version,clocks.max.sm")
    if smi:
        m.gpu, m.driver = smi[0], smi[1]
    for lib in ("gpuarr", "cupy"):
        if lib in backends:
            xp = backends[lib]
            try:
                src = xp.empty(GiB // 4, dtype=np.float32)
                m.copy_by[lib] = 2 * GiB / time_gpu(src.copy, xp, measure, cfg).median
            except Exception as exc:
                print(f"copy rate with {lib}: {why(exc)}", file=sys.stderr)
            src = None
            xp.free()
    m.copy_rate = max(m.copy_by.values(), default=None)
    cupy = backends.get("cupy")
    if cupy:
        try:
            if not smi:
                m.gpu = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
            m.h2d, m.d2h = bus_rates(cupy.module)
            attrs = cupy.cuda.Device().attributes
            per_clock = FLOPS_PER_SM_CLOCK.get((attrs["ComputeCapabilityMajor"],
                                                attrs["ComputeCapabilityMinor"]))
            if per_clock and smi and smi[2].replace(".", "").isdigit():
                sm_clock = attrs["MultiProcessorCount"] * float(smi[2]) * 1e6
                m.fp64, m.fp32 = (sm_clock * f for f in per_clock)
        except Exception as exc:
            print(f"name, bus and flop rates with cupy: {why(exc)}", file=sys.stderr)
        cupy.free()
    return m


def bus_rates(cupy):
    """Best pinned host->device and device->host rates (bytes/s), 256 MiB copies."""
    import cupyx
    n, rt = 256 << 20, cupy.cuda.runtime
    host = cupyx.empty_pinned((n,), dtype=np.uint8)
    dev = cupy.empty((n,), dtype=np.uint8)

    def best(kind, dst, src):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            rt.memcpy(dst, src, n, kind)
            times.append(time.perf_counter() - t0)
        return n / min(times)

    return (best(rt.memcpyHostToDevice, dev.data.ptr, host.ctypes.data),
            best(rt.memcpyDeviceToHost, host.ctypes.data, dev.data.ptr))


def library_versions(backends):
    v = {"python": platform.python_version(), "numpy": np.__version__}
    try:
        import scipy
        v["scipy"] = scipy.__version__
    except ImportError:
        pass
    try:
        import gpuarr
        v["gpuarr"] = gpuarr.__version__
        if "gpuarr" in backends:
            v["gpuarr CUDA runtime"] = gpuarr._core._versions()[1]
    except Exception:
        pass
    if "cupy" in backends:
        try:
            cupy = backends["cupy"].module
            v["cupy"] = cupy.__version__
            v["cupy CUDA runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        except Exception:
            pass
    return v
