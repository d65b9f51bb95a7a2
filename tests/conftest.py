"""One mechanism for GPU tests: modules or tests marked `gpu` are skipped
when no device can be used, unless GPUARR_REQUIRE_GPU=1, in which case a
missing GPU ends the run with an error (a GPU run cannot pass by skipping)."""
import os

import numpy
import pytest

import gpuarr

REQUIRE_GPU = os.environ.get("GPUARR_REQUIRE_GPU") == "1"


def pytest_collection_modifyitems(config, items):
    if gpuarr.is_available():
        return
    if REQUIRE_GPU:
        try:
            gpuarr.zeros(1)
        except Exception as exc:  # the reason, as the user would see it
            reason = f"{type(exc).__name__}: {exc}"
        else:
            reason = "is_available() is False"
        pytest.exit(f"GPUARR_REQUIRE_GPU=1 but no GPU can be used ({reason})", returncode=3)
    skip = pytest.mark.skip(reason="no CUDA device (set GPUARR_REQUIRE_GPU=1 to make this an error)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng():
    """Fresh random data every run (the seed is printed on failure)."""
    seed = int.from_bytes(os.urandom(4), "little")
    print(f"random seed: {seed}")
    return numpy.random.default_rng(seed)


@pytest.fixture
def private_kernel_cache(tmp_path, monkeypatch):
    """User kernels compile into a fresh kernel cache of the test's own."""
    monkeypatch.setenv("GPUARR_CACHE_DIR", str(tmp_path / "kernels"))
    return tmp_path / "kernels"


def _have_nvrtc():
    from gpuarr.cuda import compiler
    try:
        compiler.find_nvrtc()
        return True
    except compiler.NVRTCError:
        return False


requires_nvrtc = pytest.mark.skipif(not _have_nvrtc(), reason="NVRTC is not installed here")
