"""The lesson's code cells (../shared/seeds: "Using your GPU with CuPy"),
run with gpuarr in place of CuPy -- imports changed only -- and the answers
the lesson shows.  IPython magics (%timeit) become plain calls; the image is
gpuarr.datasets' synthetic sky instead of the GMRT FITS file (which needs a
download and astropy).  One test per part of the lesson, each cell in order."""
import os
import subprocess
import sys

import numpy as np
import pytest

import gpuarr as cp  # the lesson's `import cupy as cp`, imports changed only
from gpuarr import datasets
from gpuarr.profiler import benchmark

from _lesson import lesson_clipper as kappa_sigma_clipper  # the lesson's cell, shared
from conftest import SANITIZER

# The lesson's timings are under a second; compute-sanitizer slows a launch
# by 10-1000x (racecheck: 11 s a clip of the 4M sky), so there only their sign
SECOND = float("inf") if SANITIZER else 1.0

pytestmark = pytest.mark.gpu

scipy_signal = pytest.importorskip("scipy.signal")
scipy_ndimage = pytest.importorskip("scipy.ndimage")


@pytest.fixture(scope="module")
def deltas():
    deltas = np.zeros((2048, 2048))
    deltas[8::16, 8::16] = 1
    return deltas


@pytest.fixture(scope="module")
def gauss():
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    dst = np.sqrt(x * x + y * y)
    sigma = 1
    muu = 0.000
    return np.exp(-((dst - muu) ** 2 / (2.0 * sigma ** 2)))


def test_convolution_part(deltas, gauss):
    from scipy.signal import convolve2d as convolve2d_cpu
    convolved_image_using_CPU = convolve2d_cpu(deltas, gauss)

    deltas_gpu = cp.asarray(deltas)
    gauss_gpu = cp.asarray(gauss)

    from gpuarr.scipy.signal import convolve2d as convolve2d_gpu
    convolved_image_using_GPU = convolve2d_gpu(deltas_gpu, gauss_gpu)

    execution_gpu = benchmark(convolve2d_gpu, (deltas_gpu, gauss_gpu), n_repeat=10)
    gpu_avg_time = np.average(execution_gpu.gpu_times)
    assert f"{gpu_avg_time:.6f} s".endswith(" s") and 0 < gpu_avg_time < SECOND
    assert execution_gpu.gpu_times.shape == (1, 10)

    # Challenge: convolution on the GPU without CuPy -- host arrays are refused.
    with pytest.raises(TypeError):
        convolve2d_gpu(deltas, gauss)

    # The lesson shows `array(True)`: a 0-d device bool.
    same = np.allclose(convolved_image_using_GPU, convolved_image_using_CPU)
    assert isinstance(same, cp.ndarray) and same.shape == () and same.dtype == np.bool_
    assert repr(same).startswith("array(True")
    assert bool(same)

    # Challenge: fairer comparison, transfers inside the timed function.
    def transfer_compute_transferback():
        deltas_gpu = cp.asarray(deltas)
        gauss_gpu = cp.asarray(gauss)
        convolved_image_using_GPU = convolve2d_gpu(deltas_gpu, gauss_gpu)
        convolved_image_using_GPU_copied_to_host = cp.asnumpy(convolved_image_using_GPU)
        return convolved_image_using_GPU_copied_to_host

    execution_gpu = benchmark(transfer_compute_transferback, (), n_repeat=10)
    assert np.average(execution_gpu.gpu_times) > 0
    np.testing.assert_allclose(transfer_compute_transferback(), convolved_image_using_CPU,
                               rtol=1e-9, atol=1e-12)

    # SciPy refuses device arrays, with the message the lesson shows.
    with pytest.raises(TypeError, match=r"Implicit conversion to a NumPy array is not allowed"):
        convolve2d_cpu(deltas_gpu, gauss_gpu)

    # A shortcut: NumPy routines on the GPU.
    deltas_1d = deltas.ravel()
    gauss_1d = gauss.diagonal()
    cpu_1d = np.convolve(deltas_1d, gauss_1d)
    deltas_1d_gpu = cp.asarray(deltas_1d)
    gauss_1d_gpu = cp.asarray(gauss_1d)
    execution_gpu = benchmark(np.convolve, (deltas_1d_gpu, gauss_1d_gpu), n_repeat=10)
    gpu_avg_time = np.average(execution_gpu.gpu_times)
    assert gpu_avg_time > 0
    gpu_1d = np.convolve(deltas_1d_gpu, gauss_1d_gpu)
    assert isinstance(gpu_1d, cp.ndarray)
    np.testing.assert_allclose(gpu_1d.get(), cpu_1d, rtol=1e-9, atol=1e-12)


@pytest.fixture(scope="module")
def data():
    return datasets.galactic_center()


def test_radio_astronomy_part(data):
    from scipy.ndimage import label as label_cpu
    from scipy.ndimage import center_of_mass as com_cpu
    from scipy.ndimage import sum_labels as sl_cpu
    from gpuarr.scipy.ndimage import label as label_gpu
    from gpuarr.scipy.ndimage import center_of_mass as com_gpu
    from gpuarr.scipy.ndimage import sum_labels as sl_gpu

    # The statistics cell, printed with format specs on both sides.
    mean_ = data.mean()
    median_ = np.median(data)
    stddev_ = np.std(data)
    max_ = np.amax(data)
    line_cpu = (f"mean = {mean_:.3e}, median = {median_:.3e}, sttdev = {stddev_:.3e},"
                f"maximum = {max_:.3e}")
    data_gpu = cp.asarray(data)
    mean_g = data_gpu.mean()
    median_g = np.median(data_gpu)
    stddev_g = np.std(data_gpu)
    max_g = np.amax(data_gpu)
    assert all(isinstance(v, cp.ndarray) for v in (mean_g, median_g, stddev_g, max_g))
    line_gpu = (f"mean = {mean_g:.3e}, median = {median_g:.3e}, sttdev = {stddev_g:.3e},"
                f"maximum = {max_g:.3e}")
    assert line_gpu == line_cpu

    # Background: kappa-sigma clipping, the same function on both.
    data_flat = data.ravel()
    data_clipped = kappa_sigma_clipper(data_flat)
    data_flat_gpu = cp.asarray(data_flat)
    data_gpu_clipped = kappa_sigma_clipper(data_flat_gpu)
    assert len(data_gpu_clipped) == len(data_clipped)
    timing_ks_clipping_gpu = benchmark(kappa_sigma_clipper, (data_flat_gpu.ravel(),), n_repeat=10)
    fastest_ks_clipping_gpu = np.min(timing_ks_clipping_gpu.gpu_times)
    assert 0 < fastest_ks_clipping_gpu < SECOND
    stddev_ = np.std(data_clipped)
    stddev_gpu_ = np.std(data_gpu_clipped)
    assert f"{stddev_gpu_:.4f}" == f"{stddev_:.4f}" == "0.0133"

    # Segmentation at 5 sigma.
    threshold = 5 * stddev_
    segmented_image = np.where(data > threshold, 1, 0)
    threshold_gpu = 5 * stddev_gpu_
    segmented_image_gpu = np.where(data_gpu > threshold_gpu, 1, 0)
    assert isinstance(segmented_image_gpu, cp.ndarray)
    assert segmented_image_gpu.dtype == segmented_image.dtype
    timing = benchmark(np.where, (data_gpu > threshold_gpu, 1, 0), n_repeat=10)
    assert np.min(timing.gpu_times) > 0
    # The thresholds may differ in the last bit (float32 std); compare away from it.
    near = np.abs(data - threshold) < 1e-6
    assert np.array_equal(segmented_image_gpu.get()[~near], segmented_image[~near])

    # Labelling, output= a float64 array as the lesson passes it.
    labeled_image = np.empty(data.shape)
    number_of_sources_in_image = label_cpu(segmented_image, output=labeled_image)
    labeled_image_gpu = cp.empty(data_gpu.shape)
    number_of_sources_gpu = label_gpu(cp.asarray(segmented_image), output=labeled_image_gpu)
    assert int(number_of_sources_gpu) == number_of_sources_in_image > 100
    assert np.array_equal(labeled_image_gpu.get(), labeled_image)
    assert np.array_equal(np.unique(labeled_image_gpu).get(), np.unique(labeled_image))

    # Source measurements, and the lesson's final comparison.
    all_positions = com_cpu(data, labeled_image, range(1, number_of_sources_in_image + 1))
    all_integrated_fluxes = sl_cpu(data, labeled_image, range(1, number_of_sources_in_image + 1))
    index = cp.arange(1, number_of_sources_in_image + 1)
    positions_gpu = com_gpu(data_gpu, labeled_image_gpu, index)
    fluxes_gpu = sl_gpu(data_gpu, labeled_image_gpu, index)
    assert isinstance(positions_gpu, list) and isinstance(positions_gpu[0], tuple)
    # "We want to return ndarrays (NumPy) and what we have are lists."
    positions_host = cp.asnumpy(cp.asarray(positions_gpu))
    fluxes_host = cp.asnumpy(cp.asarray(fluxes_gpu))
    assert bool(np.allclose(np.array(all_positions), positions_host))
    assert bool(np.allclose(np.array(all_integrated_fluxes), fluxes_host))


def test_putting_it_all_together(data):
    """The "putting it all together" challenge: one function for both
    devices for the first two steps, benchmark() on the CPU function too."""
    from gpuarr.scipy.ndimage import label as label_gpu
    from gpuarr.scipy.ndimage import center_of_mass as com_gpu
    from gpuarr.scipy.ndimage import sum_labels as sl_gpu
    from scipy.ndimage import label as label_cpu
    from scipy.ndimage import center_of_mass as com_cpu
    from scipy.ndimage import sum_labels as sl_cpu

    def first_two_steps_for_both_CPU_and_GPU(data):
        data_flat = data.ravel()
        data_clipped = kappa_sigma_clipper(data_flat)
        stddev_ = np.std(data_clipped)
        threshold = 5 * stddev_
        segmented_image = np.where(data > threshold, 1, 0)
        return segmented_image

    def ccl_and_source_measurements_on_CPU(data_CPU, segmented_image_CPU):
        labeled_image_CPU = np.empty(data_CPU.shape)
        number_of_sources_in_image = label_cpu(segmented_image_CPU, output=labeled_image_CPU)
        all_positions = com_cpu(data_CPU, labeled_image_CPU,
                                np.arange(1, number_of_sources_in_image + 1))
        all_fluxes = sl_cpu(data_CPU, labeled_image_CPU,
                            np.arange(1, number_of_sources_in_image + 1))
        return np.array(all_positions), np.array(all_fluxes)

    def ccl_and_source_measurements_on_GPU(data_GPU, segmented_image_GPU):
        labeled_image_GPU = cp.empty(data_GPU.shape)
        number_of_sources_in_image = label_gpu(segmented_image_GPU, output=labeled_image_GPU)
        all_positions = com_gpu(data_GPU, labeled_image_GPU,
                                cp.arange(1, number_of_sources_in_image + 1))
        all_fluxes = sl_gpu(data_GPU, labeled_image_GPU,
                            cp.arange(1, number_of_sources_in_image + 1))
        return cp.asnumpy(cp.asarray(all_positions)), cp.asnumpy(cp.asarray(all_fluxes))

    CPU_output = ccl_and_source_measurements_on_CPU(data, first_two_steps_for_both_CPU_and_GPU(data))
    timing_complete_processing_CPU = benchmark(
        ccl_and_source_measurements_on_CPU, (data, first_two_steps_for_both_CPU_and_GPU(data)),
        n_repeat=1)
    assert np.amin(timing_complete_processing_CPU.cpu_times) > 0

    GPU_output = ccl_and_source_measurements_on_GPU(
        cp.asarray(data), first_two_steps_for_both_CPU_and_GPU(cp.asarray(data)))
    timing_complete_processing_GPU = benchmark(
        ccl_and_source_measurements_on_GPU,
        (cp.asarray(data), first_two_steps_for_both_CPU_and_GPU(cp.asarray(data))), n_repeat=10)
    assert np.amin(timing_complete_processing_GPU.gpu_times) > 0

    all_positions_agree = np.allclose(CPU_output[0], GPU_output[0])
    all_fluxes_agree = np.allclose(CPU_output[1], GPU_output[1])
    assert f"The CPU and GPU positions agree: {all_positions_agree}" == \
        "The CPU and GPU positions agree: True"
    assert f"The CPU and GPU fluxes agree: {all_fluxes_agree}" == "The CPU and GPU fluxes agree: True"


def test_course_agnostic_softplus():
    """The CUDA-Python course's CPU/GPU-agnostic softplus with get_array_module."""
    def softplus(x):
        xp = cp.get_array_module(x)
        return xp.maximum(0, x) + xp.log1p(xp.exp(-abs(x)))

    x = np.linspace(-5, 5, 1001)
    ref = softplus(x)
    got = softplus(cp.asarray(x))
    assert isinstance(got, cp.ndarray)
    np.testing.assert_allclose(got.get(), ref, rtol=1e-12)


def test_course_benchmark_internals():
    """The course's slide on what benchmark() does inside, verbatim."""
    import time

    def my_func(a):
        return a * 2

    a = cp.ones((1000, 1000))
    start_gpu = cp.cuda.Event()
    end_gpu = cp.cuda.Event()

    start_gpu.record()
    start_cpu = time.perf_counter()
    out = my_func(a)
    end_cpu = time.perf_counter()
    end_gpu.record()
    end_gpu.synchronize()
    t_gpu = cp.cuda.get_elapsed_time(start_gpu, end_gpu)
    t_cpu = end_cpu - start_cpu
    assert t_gpu > 0 and t_cpu > 0
    assert float(out.sum()) == 2e6

    def cpu_init():
        return np.ones((1000, 1000, 200))

    def gpu_init():
        return cp.ones((1000, 1000, 200))

    cpu_bench = benchmark(cpu_init, n_repeat=3)
    gpu_bench = benchmark(gpu_init, n_repeat=20)
    assert cpu_bench.cpu_times.shape == (3,) and gpu_bench.gpu_times.shape == (1, 20)
    assert "GPU-0" in str(gpu_bench) and str(gpu_bench).startswith("gpu_init")


def test_course_memory_pool():
    """The course's memory-management cells, with the numbers they print.
    With caching (the default) a freed block stays reserved until
    free_all_blocks(); under GPUARR_POOL=0 (no caching, for
    compute-sanitizer) every block is exactly the bytes asked for and goes
    back to CUDA when freed, so total_bytes() equals used_bytes(): the live
    bytes.  test_course_memory_pool_in_the_other_mode runs this again with
    the mode switched."""
    caching = cp._core._pool_caching()
    block = 512 if caching else 400     # the size class, or the bytes themselves
    mempool = cp.get_default_memory_pool()
    pinned_mempool = cp.get_default_pinned_memory_pool()
    cp.cuda.Device().synchronize()
    mempool.free_all_blocks()
    pinned_mempool.free_all_blocks()
    base_used, base_total = mempool.used_bytes(), mempool.total_bytes()
    assert base_total == base_used

    a_cpu = np.ndarray(100, dtype=np.float32)
    assert a_cpu.nbytes == 400
    a = cp.array(a_cpu)
    assert a.nbytes == 400
    assert mempool.used_bytes() - base_used == block
    assert mempool.total_bytes() - base_total == block
    a = None  # noqa: F841
    assert mempool.used_bytes() == base_used
    assert mempool.total_bytes() - base_total == (block if caching else 0)
    assert mempool.n_free_blocks() == (1 if caching else 0)
    mempool.free_all_blocks()
    pinned_mempool.free_all_blocks()
    assert mempool.used_bytes() == base_used
    assert mempool.total_bytes() == base_used  # only blocks in use stay
    assert mempool.n_free_blocks() == 0 and mempool.free_bytes() == 0
    assert pinned_mempool.n_free_blocks() == 0

    with cp.cuda.Device(0):
        mempool.set_limit(size=1024 ** 3)
    assert mempool.get_limit() == 1024 ** 3
    mempool.set_limit(size=0)


def test_course_memory_pool_in_the_other_mode():
    """test_course_memory_pool in a fresh process with caching switched the
    other way (GPUARR_POOL is read at start-up), so both modes are stated
    whichever one the suite runs in."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, GPUARR_POOL="1" if not cp._core._pool_caching() else "0",
               GPUARR_REQUIRE_GPU="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"{os.path.abspath(__file__)}::test_course_memory_pool"],
                       cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


def test_course_differences_from_numpy():
    """Reductions return 0-d device arrays, as the course shows."""
    assert type(cp.sum(cp.arange(3))) is cp.ndarray
    assert type(np.sum(np.arange(3))) is not np.ndarray
    with cp.cuda.Device(0):
        x = cp.array([1, 2, 3, 4, 5])
    assert x.device.id == 0
    x_gpu_0 = cp.ndarray([1, 2, 3])
    assert x_gpu_0.shape == (1, 2, 3)


def test_course_streams_and_events():
    """The course's two-stream cells: an event orders stream2 after stream1."""
    a = cp.arange(10, dtype=cp.float64)
    b = cp.arange(10, 20, dtype=cp.float64)
    c = cp.arange(20, 30, dtype=cp.float64)

    def elementwise_comp(x, y, z):
        return cp.sin(x) + cp.cos(y) / cp.sqrt(z)

    def squared_diff(x, y):
        return (x - y) * (x - y)

    stream1 = cp.cuda.Stream()
    stream2 = cp.cuda.Stream()
    sync_point = cp.cuda.Event()
    with stream1:
        r1 = elementwise_comp(a, b, c)
        sync_point.record(stream=stream1)
    with stream2:
        stream2.wait_event(sync_point)
        r2 = squared_diff(r1, a)
    stream2.synchronize()
    an, bn, cn = (v.get() for v in (a, b, c))
    ref1 = np.sin(an) + np.cos(bn) / np.sqrt(cn)
    np.testing.assert_allclose(r2.get(), (ref1 - an) ** 2, rtol=1e-12)
