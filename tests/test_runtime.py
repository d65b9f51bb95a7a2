"""Devices, streams, events and benchmark(): timing GPU work the right way.

CPU-only tests cover argument checking and the result's formatting; GPU
tests time a spin kernel (a known number of SM clock cycles) against the
device's clock rate, check stream ordering with wait_event, and measure
benchmark()'s own host overhead.  Multi-GPU tests skip on one device."""
import re
import threading
import time

import numpy as np
import pytest

import gpuarr as gp
from gpuarr import _core
from gpuarr.cuda import Device, Event, Stream, get_current_stream, get_elapsed_time, runtime
from gpuarr.profiler import PerfCaseResult



def clock_khz(device=None):
    dev = gp.cuda.get_device_id() if device is None else device
    return runtime.deviceGetAttribute(runtime.cudaDevAttrClockRate, dev)


def noop():
    pass


# ====================================================== CPU only: arguments

@pytest.mark.parametrize("kw, message", [
    (dict(args=[1]), "`args` should be of tuple type"),
    (dict(kwargs=[("a", 1)]), "`kwargs` should be of dict type"),
    (dict(devices=[0]), "`devices` should be of tuple type"),
    (dict(n_repeat=1.5), "`n_repeat` should be an integer"),
    (dict(n_warmup="3"), "`n_warmup` should be an integer"),
    (dict(name=3), "`name` should be a string"),
    (dict(max_duration="1s"), "`max_duration` should be given in seconds"),
    (dict(devices=("0",)), "device numbers"),
])
def test_benchmark_argument_types(kw, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        gp.benchmark(noop, **kw)


def test_benchmark_argument_values_and_callable():
    with pytest.raises(TypeError, match="callable"):
        gp.benchmark(3)
    with pytest.raises(ValueError, match="n_repeat"):
        gp.benchmark(noop, n_repeat=0)
    with pytest.raises(ValueError, match="n_warmup"):
        gp.benchmark(noop, n_warmup=-1)
    assert gp.benchmark is gp.profiler.benchmark


def test_stream_constructor_errors_need_no_gpu():
    with pytest.raises(ValueError, match="exclude"):
        Stream(null=True, ptr=5)
    with pytest.raises(ValueError, match="non_blocking"):
        Stream(null=True, non_blocking=True)
    with pytest.raises(ValueError, match="not a valid address"):
        Stream(ptr=-1)
    with pytest.raises(TypeError, match="ptr must be an int"):
        Stream(ptr=1.5)
    with pytest.raises(TypeError):
        Stream(True)  # keyword-only: CuPy's first positional is `null`
    with pytest.raises(ValueError, match="disable_timing=True"):
        Event(interprocess=True)
    with pytest.raises(TypeError, match="start_event must be a gpuarr.cuda.Event"):
        get_elapsed_time(1, 2)
    with pytest.raises(ValueError, match="negative"):
        _core._spin(-1)


def test_null_stream_needs_no_gpu():
    null = Stream.null
    assert Stream(null=True) is null and Stream(ptr=0) is null
    assert null.ptr == 0 and null.device_id == -1
    assert repr(null) == "<gpuarr.cuda.Stream null>"
    assert get_current_stream() is null
    with null as s:
        assert s is null and get_current_stream() is null
        with null:
            assert get_current_stream() is null
    assert get_current_stream() is null
    assert null == Stream(null=True) and hash(null) == hash(Stream(null=True))
    with pytest.raises(RuntimeError, match="reverse order"):
        null.__exit__(None, None, None)


def test_device_object_needs_no_gpu():
    assert Device(0) == Device(0) and Device(0) != Device(1) and Device(0) < Device(1)
    assert repr(Device(1)) == "<CUDA Device 1>"
    assert int(Device(Device(1))) == 1 and hash(Device(2)) == hash(2)
    assert Device().id == gp.cuda.get_device_id()
    assert Device(0) != 0


def test_runtime_module_without_a_device():
    assert isinstance(runtime.runtimeGetVersion(), int) and runtime.runtimeGetVersion() >= 11000
    assert isinstance(runtime.driverGetVersion(), int)
    assert runtime.cudaDevAttrClockRate == 13
    assert runtime.cudaDevAttrComputeCapabilityMajor == 75
    assert runtime.is_hip is False and runtime.getDevice() == gp.cuda.get_device_id()
    if not gp.is_available():
        with pytest.raises(gp.cuda.NoDeviceError):
            runtime.getDeviceCount()
        with pytest.raises(gp.cuda.CUDARuntimeError):
            Event()


# ================================================ CPU only: result formatting

def test_result_format_matches_cupy_layout():
    r = PerfCaseResult("f", [[1e-6, 3e-6], [10e-6, 30e-6]], devices=(0,))
    expected = ("f                   :    CPU:     2.000 us   +/-  1.000 "
                "(min:     1.000 / max:     3.000) us     GPU-0:    20.000 us   +/- 10.000 "
                "(min:    10.000 / max:    30.000) us")
    assert str(r) == expected and repr(r) == expected
    assert r.to_str() == expected[:expected.index("     GPU-0")]
    assert r.to_str(show_gpu=True) == expected
    assert r.name == "f" and r.devices == (0,)
    np.testing.assert_array_equal(r.cpu_times, [1e-6, 3e-6])
    assert r.gpu_times.shape == (1, 2)


def times_with(mean, std, lo, hi, m=9):
    """2 + 2m times (seconds) whose mean, population std, min and max are the
    given microsecond figures: lo, hi and m values either side of a centre."""
    n = 2 + 2 * m
    c = (mean * n - lo - hi) / (2 * m)
    d = np.sqrt((n * std ** 2 - (lo - mean) ** 2 - (hi - mean) ** 2) / (2 * m) - (c - mean) ** 2)
    return np.array([lo, hi] + [c - d] * m + [c + d] * m) * 1e-6


def test_result_format_reproduces_the_issue_line():
    line = ("name                :    CPU:    44.407 us   +/-  2.428 (min:    42.516 / max:"
            "    53.098) us     GPU-0:   181.565 us   +/-  2.131 (min:   179.872 / max:   "
            "190.464) us")
    ts = [times_with(44.407, 2.428, 42.516, 53.098), times_with(181.565, 2.131, 179.872, 190.464)]
    assert str(PerfCaseResult("name", ts, (0,))) == line


def test_result_format_single_repeat_devices_and_long_names():
    r = PerfCaseResult("a_rather_long_function_name", [[5e-3], [2.5e-3], [1e-9]], devices=(0, 3))
    assert str(r) == ("a_rather_long_function_name:    CPU:  5000.000 us     GPU-0:  2500.000 us"
                      "     GPU-3:     0.001 us")
    with pytest.raises(ValueError, match="shape"):
        PerfCaseResult("x", [[1.0], [1.0]], devices=(0, 1))
    with pytest.raises(ValueError, match="shape"):
        PerfCaseResult("x", np.zeros((2, 0)), devices=(0,))


# ============================================================ GPU: devices

@pytest.mark.gpu
def test_device_context_and_properties():
    with Device(0) as d:
        assert gp.cuda.get_device_id() == 0 and d.id == 0
        x = gp.zeros(4)
        assert x.device == Device(0)
        d.synchronize()
    props = runtime.getDeviceProperties(0)
    for key in ("name", "totalGlobalMem", "multiProcessorCount", "major", "minor",
                "clockRate", "l2CacheSize", "sharedMemPerBlock", "maxThreadsPerBlock",
                "warpSize", "memoryClockRate", "memoryBusWidth", "maxThreadsDim",
                "maxGridSize", "uuid"):
        assert key in props, key
    assert isinstance(props["name"], bytes) and props["name"]
    assert props["warpSize"] == 32 and props["clockRate"] > 0
    assert len(props["maxThreadsDim"]) == 3
    dev = Device(0)
    assert dev.compute_capability == f"{props['major']}{props['minor']}"
    assert dev.name == props["name"].decode()
    free, total = dev.mem_info
    assert 0 < free <= total and abs(total - props["totalGlobalMem"]) <= total // 20
    assert runtime.memGetInfo()[1] == total
    assert runtime.getDeviceCount() >= 1
    assert runtime.deviceGetAttribute(runtime.cudaDevAttrMultiProcessorCount, 0) == \
        props["multiProcessorCount"]
    runtime.setDevice(0)
    assert runtime.getDevice() == 0
    runtime.deviceSynchronize()
    print(f"device 0: {dev.name}, cc {dev.compute_capability}, "
          f"{props['clockRate'] / 1e3:.0f} MHz, driver {runtime.driverGetVersion()}")


@pytest.mark.gpu
def test_device_out_of_range_names_the_count():
    n = runtime.getDeviceCount()
    before = gp.cuda.get_device_id()
    pattern = rf"device 99 is out of range: this machine has {n} CUDA device"
    with pytest.raises(ValueError, match=pattern):
        with Device(99):
            pass
    assert gp.cuda.get_device_id() == before
    with pytest.raises(ValueError, match=pattern):
        runtime.getDeviceProperties(99)
    with pytest.raises(ValueError, match=pattern):
        Device(99).compute_capability
    with pytest.raises(ValueError, match=pattern):
        gp.benchmark(noop, n_repeat=1, devices=(99,))


# ============================================================= GPU: events

@pytest.mark.gpu
def test_a_destroyed_streams_cached_blocks_wait_for_its_work():
    """A block freed on a stream is cached under the stream's handle; the
    stream's destruction waits for its work, so a next stream that gets the
    same handle (and the block) never sees the old stream's late writes."""
    khz = clock_khz()
    n = 1 << 20
    (gp.zeros(n, dtype=gp.float32) + 1).get()       # kernels loaded before the spin
    for _ in range(3):
        s1 = Stream(non_blocking=True)
        with s1:
            a = gp.zeros(n, dtype=gp.float32)
            _core._spin(20 * khz)                   # s1 busy for ~20 ms ...
            a.fill(1.0)                             # ... then writes a's block
        del a, s1                                   # the block cached under s1's handle
        s2 = Stream(non_blocking=True)
        with s2:
            b = gp.zeros(n, dtype=gp.float32)
        gp.cuda.Device().synchronize()
        assert int(gp.count_nonzero(b)) == 0
        del b, s2


@pytest.mark.gpu
def test_events_time_a_spin_kernel_against_the_clock_rate():
    khz = clock_khz()
    _core._spin(200 * khz)          # ~200 ms so the clocks are up
    cycles = 20 * khz               # 20 ms at the peak clock
    times = []
    for n in (cycles, 2 * cycles):
        start, end = Event(), Event()
        start.record()
        _core._spin(n)
        end.record()
        end.synchronize()
        assert start.done and end.done and end.query()
        times.append(get_elapsed_time(start, end))
    expected = cycles / khz         # milliseconds
    print(f"spin of {cycles} cycles: {times[0]:.3f} ms (at the peak clock {expected:.3f} ms); "
          f"implied SM clock {cycles / times[0] / 1e3:.0f} MHz; twice as many: {times[1]:.3f} ms")
    assert 0.9 * expected <= times[0] <= 2.0 * expected
    assert 1.7 <= times[1] / times[0] <= 2.3


@pytest.mark.gpu
def test_event_errors_are_exceptions():
    with pytest.raises(ValueError, match="start_event has not been recorded"):
        get_elapsed_time(Event(), Event())
    e = Event()
    e.record()
    with pytest.raises(ValueError, match="end_event has not been recorded"):
        get_elapsed_time(e, Event())
    nt = Event(disable_timing=True)
    nt.record()
    with pytest.raises(ValueError, match="disable_timing=True"):
        get_elapsed_time(e, nt)
    with pytest.raises(TypeError, match="Stream or None"):
        e.record("stream")
    with pytest.raises(TypeError, match="Event"):
        Stream.null.wait_event("e")
    blocking = Event(block=True)
    blocking.record(Stream.null)
    blocking.synchronize()
    assert blocking.done
    ipc = Event(disable_timing=True, interprocess=True)
    ipc.record()
    ipc.synchronize()
    assert e.ptr != 0 and e.device_id == 0 and "device 0" in repr(e)
    assert "timing disabled" in repr(nt)


# ============================================================ GPU: streams

@pytest.mark.gpu
def test_stream_basics_and_foreign_ptr():
    s = Stream()
    assert s.ptr != 0 and s.device_id == gp.cuda.get_device_id()
    assert re.fullmatch(r"<gpuarr\.cuda\.Stream 0x[0-9a-f]+ on device \d+>", repr(s))
    assert s.query() and s.done
    ext = Stream(ptr=s.ptr)
    assert ext == s and ext is not s and hash(ext) == hash(s)
    assert ext.device_id == s.device_id and "not owned" in repr(ext)
    with ext:
        _core._spin(1000)
        e = ext.record()
    del ext                          # does not destroy s's handle
    e.synchronize()
    s.synchronize()
    assert s.query()
    nb = Stream(non_blocking=True)
    assert nb != s
    ev = Event()
    assert nb.record(ev) is ev and isinstance(s.record(), Event)
    nb.wait_event(ev)
    nb.synchronize()


@pytest.mark.gpu
def test_stream_context_nesting_and_threads():
    s1, s2 = Stream(), Stream(non_blocking=True)
    assert get_current_stream() is Stream.null
    with s1 as entered:
        assert entered is s1 and get_current_stream() is s1
        with s2:
            assert get_current_stream() is s2
            with s1:
                assert get_current_stream() is s1
            assert get_current_stream() is s2
        assert get_current_stream() is s1
        seen = []
        t = threading.Thread(target=lambda: seen.append(get_current_stream()))
        t.start()
        t.join()
        assert seen == [Stream.null]          # the current stream is per thread
        x = gp.arange(10)                     # allocated and filled on s1
    assert get_current_stream() is Stream.null
    np.testing.assert_array_equal(gp.asnumpy(x), np.arange(10))
    s1.__enter__()
    s2.__enter__()
    with pytest.raises(RuntimeError, match="reverse order"):
        s1.__exit__(None, None, None)
    s2.__exit__(None, None, None)
    s1.__exit__(None, None, None)
    assert get_current_stream() is Stream.null
    try:
        assert s2.use() is s2 and get_current_stream() is s2
    finally:
        Stream.null.use()
    assert get_current_stream() is Stream.null


@pytest.mark.gpu
def test_query_is_false_while_a_spin_runs():
    s = Stream()
    with s:
        _core._spin(200 * clock_khz())
        e = s.record()
    assert s.query() is False and s.done is False and e.query() is False and not e.done
    s.synchronize()
    assert s.query() is True and e.query() is True and e.done


@pytest.mark.gpu
def test_wait_event_orders_two_streams():
    n = 1 << 20
    a = gp.zeros(n, dtype=gp.float32)
    b = gp.zeros(n, dtype=gp.float32)
    c = gp.zeros(n, dtype=gp.float32)
    # The CUDA runtime loads a kernel's module on its first launch (lazy
    # loading), and a load waits for running kernels: launch the fill of a
    # non-zero value (zero is a memset) and the copy once before the spin, so
    # that loading cannot reorder them behind it.
    a.fill(1)
    c[...] = a
    a.fill(0)
    c.fill(0)
    gp.cuda.device_synchronize()
    s1, s2 = Stream(), Stream()
    with s1:
        _core._spin(200 * clock_khz())   # s1 is busy for ~200 ms ...
        a.fill(1)                         # ... then writes a
        e = s1.record()
    with s2:
        c[...] = a                        # no wait: runs during the spin, reads zeros
        s2.wait_event(e)
        b[...] = a                        # waits for the fill
    s2.synchronize()
    assert s1.query()                     # e was s1's last work, and s2 waited for it
    np.testing.assert_array_equal(gp.asnumpy(b), np.ones(n, np.float32))
    np.testing.assert_array_equal(gp.asnumpy(c), np.zeros(n, np.float32))


@pytest.mark.gpu
def test_events_on_a_non_blocking_stream_time_its_work():
    khz = clock_khz()
    s = Stream(non_blocking=True)
    with s:
        start = s.record()
        _core._spin(20 * khz)
        end = s.record()
    assert 0.9 * 20 <= get_elapsed_time(start, end) <= 2.0 * 20


# ========================================================== GPU: benchmark

@pytest.mark.gpu
def test_benchmark_result_shapes_name_and_repr():
    x = gp.ones(1 << 16, dtype=gp.float32)
    r = gp.benchmark(gp.sqrt, (x,), n_repeat=20)
    assert r.name == "sqrt"
    assert r.cpu_times.shape == (20,) and r.gpu_times.shape == (1, 20)
    assert r.cpu_times.dtype == np.float64 and r.gpu_times.dtype == np.float64
    assert (r.cpu_times > 0).all() and (r.gpu_times > 0).all()
    assert (r.cpu_times < 1).all() and (r.gpu_times < 1).all()
    num = r" *\d+\.\d{3}"

    def item(label):
        return rf"    {label}: {num} us   \+/- {num} \(min: {num} / max: {num}\) us"

    dev = gp.cuda.get_device_id()
    pattern = "sqrt {16}:" + item("CPU") + " " + item(f"GPU-{dev}")
    assert re.fullmatch(pattern, repr(r)), repr(r)
    assert str(r) == repr(r)
    r = gp.benchmark(gp.sqrt, (x,), n_repeat=3, name="custom")
    assert str(r).startswith("custom              :    CPU:")
    print(r)


@pytest.mark.gpu
def test_benchmark_warmup_kwargs_and_errors():
    calls = []

    def f(a, b=0):
        calls.append((a, b))

    r = gp.benchmark(f, (1,), {"b": 2}, n_repeat=5, n_warmup=3)
    assert calls == [(1, 2)] * 8 and r.cpu_times.shape == (5,)
    calls.clear()
    gp.benchmark(f, (7,), n_repeat=2, n_warmup=0)
    assert calls == [(7, 0)] * 2

    def boom():
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        gp.benchmark(boom, n_repeat=3)
    assert gp.benchmark(noop, n_repeat=2).cpu_times.shape == (2,)   # still usable


@pytest.mark.gpu
def test_benchmark_max_duration_stops_early():
    def slow():
        time.sleep(0.01)

    t0 = time.perf_counter()
    r = gp.benchmark(slow, n_repeat=1000, n_warmup=0, max_duration=0.05)
    assert time.perf_counter() - t0 < 1.0
    assert 1 <= r.cpu_times.size <= 10 and r.gpu_times.shape == (1, r.cpu_times.size)
    r = gp.benchmark(slow, n_repeat=1000, n_warmup=0, max_duration=0)
    assert r.cpu_times.shape == (1,)          # at least one repeat


@pytest.mark.gpu
def test_benchmark_gpu_time_of_a_spin_kernel():
    khz = clock_khz()
    _core._spin(100 * khz)
    r = gp.benchmark(_core._spin, (10 * khz,), n_repeat=5, n_warmup=1)
    gpu_ms = r.gpu_times.mean() * 1e3
    print(r)
    assert 0.9 * 10 <= gpu_ms <= 2.0 * 10
    assert r.cpu_times.mean() < 0.25 * r.gpu_times.mean()   # the launch does not wait
    s = Stream(non_blocking=True)
    with s:                                  # events go on the current stream
        r = gp.benchmark(_core._spin, (10 * khz,), n_repeat=3, n_warmup=0)
    assert 0.9 * 10 <= r.gpu_times.mean() * 1e3 <= 2.0 * 10


@pytest.mark.gpu
def test_benchmark_host_overhead_per_repeat():
    gp.benchmark(noop, n_repeat=100)
    n = 20000
    t0 = time.perf_counter()
    r = gp.benchmark(noop, n_repeat=n, n_warmup=0)
    wall = (time.perf_counter() - t0) / n
    overhead = wall - r.cpu_times.mean()
    print(f"benchmark() on a no-op: {wall * 1e6:.2f} us per repeat, of which "
          f"{overhead * 1e6:.2f} us is the harness (goal <= 3 us: two event records, "
          f"one event wait, the elapsed-time reads); CPU {r.cpu_times.mean() * 1e6:.3f} us, "
          f"GPU gap {r.gpu_times.mean() * 1e6:.2f} us")
    assert r.gpu_times.shape == (1, n) and (r.gpu_times >= 0).all()
    assert overhead < 50e-6


@pytest.mark.gpu
def test_benchmark_fairer_comparison_and_host_only_functions(rng):
    host = rng.random(1 << 20, dtype=np.float32)

    def gpu_round_trip(h):
        return gp.asnumpy(gp.sqrt(gp.asarray(h)))

    np.testing.assert_allclose(gpu_round_trip(host), np.sqrt(host), rtol=1e-6)
    r = gp.benchmark(gpu_round_trip, (host,), n_repeat=10)
    assert r.gpu_times.shape == (1, 10) and (r.gpu_times > 0).all()
    # asnumpy waits, so the host interval and the device interval agree
    assert 0.5 * r.cpu_times.mean() <= r.gpu_times.mean() <= 2 * r.cpu_times.mean() + 1e-3

    def host_only(h):
        return np.fft.fft(h)

    r = gp.benchmark(host_only, (host[: 1 << 16],), n_repeat=10)
    assert r.name == "host_only" and (r.cpu_times > 0).all()
    # the GPU time of host-only work is the idle gap between the events
    assert r.gpu_times.mean() >= 0.5 * r.cpu_times.mean()
    print(r)


# ========================================================= multi-GPU tests

@pytest.mark.gpu(devices=2)
def test_second_device_arrays_and_peer_copy():
    a = gp.arange(10, dtype=gp.float64)
    with Device(1) as d1:
        assert gp.cuda.get_device_id() == 1
        b = gp.asarray(a)                    # peer copy
        c = gp.ones(10)
        assert b.device == d1 and c.device == Device(1)
        np.testing.assert_array_equal(gp.asnumpy(b + c), np.arange(10) + 1)
        d1.synchronize()
    assert gp.cuda.get_device_id() == 0 and a.device == Device(0)
    with pytest.raises(ValueError, match="different devices"):
        a + b
    assert Device(1).compute_capability and Device(1).mem_info[1] > 0


@pytest.mark.gpu(devices=2)
def test_streams_and_events_of_another_device():
    s0 = Stream()
    with Device(1):
        assert get_current_stream() is Stream.null
        with pytest.raises(ValueError, match="belongs to device 0 but the current device is 1"):
            with s0:
                pass
        e1 = Event()
        with pytest.raises(ValueError, match="device 1 and the stream to device 0"):
            e1.record(s0)
        e1.record()
        s1 = Stream()
    with s0:
        with Device(1):
            assert get_current_stream() is Stream.null   # current streams are per device
        assert get_current_stream() is s0
    e0 = Event()
    e0.record()
    with pytest.raises(ValueError, match="current device is 0"):
        e1.record()
    with pytest.raises(ValueError, match="device 0 and end_event on device 1"):
        get_elapsed_time(e0, e1)
    s1.wait_event(e0)                        # cross-device waits are allowed
    s1.synchronize()
    r = gp.benchmark(noop, n_repeat=4, devices=(0, 1))
    assert r.gpu_times.shape == (2, 4) and "GPU-1:" in str(r)


@pytest.mark.gpu(devices=2)
def test_peer_copies_both_ways_keep_values_and_layout(rng):
    host = rng.random((64, 48))
    a = gp.asarray(host)
    with Device(1):
        b = gp.asarray(a)                       # device 0 -> device 1
        assert b.device == Device(1) and b.data.ptr != a.data.ptr
        v = gp.asarray(a[::-2, 1::3])           # a strided view copies too
        assert v.device == Device(1)
        same = gp.asarray(b)                    # already on device 1: no copy
        assert same.data.ptr == b.data.ptr
    np.testing.assert_array_equal(b.get(), host)
    np.testing.assert_array_equal(gp.asnumpy(v), host[::-2, 1::3])
    back = gp.asarray(b)                        # device 1 -> device 0
    assert back.device == Device(0)
    np.testing.assert_array_equal(back.get(), host)
    big = gp.arange(1 << 24, dtype=gp.float32)  # 64 MB
    with Device(1):
        big1 = gp.asarray(big)
        assert bool((big1 == gp.arange(1 << 24, dtype=gp.float32)).all())


@pytest.mark.gpu(devices=2)
def test_operations_run_on_the_arrays_device():
    with Device(1):
        b = gp.arange(1000, dtype=gp.float64)
    assert gp.cuda.get_device_id() == 0
    for r in (b * 2, gp.sin(b), gp.where(b > 500, b, 0.0), b[::3].copy(), b.astype(gp.float32)):
        assert r.device == Device(1)
    np.testing.assert_allclose((b * 2 + 1).get(), np.arange(1000) * 2 + 1)
    np.testing.assert_allclose(gp.sin(b).get(), np.sin(np.arange(1000.0)))
    assert float(b.sum()) == 499500.0
    assert float(b[7]) == 7.0
    b += 1                                      # in place, from device 0's context
    np.testing.assert_array_equal(b.get(), np.arange(1000) + 1.0)
    assert gp.cuda.get_device_id() == 0


@pytest.mark.gpu(devices=2)
def test_mixed_devices_raise_value_error_naming_both():
    a = gp.ones(8)
    with Device(1):
        b = gp.ones(8)
    with pytest.raises(ValueError, match=r"different devices \(0 and 1\)"):
        a + b
    with pytest.raises(ValueError, match=r"different devices \(1 and 0\)"):
        gp.multiply(b, a)
    with pytest.raises(ValueError, match=r"different devices"):
        gp.where(a > 0, a, b)
    with pytest.raises(ValueError, match=r"out is on device 1 and the inputs on device 0"):
        gp.add(a, a, out=b)
    before = b.get()
    with pytest.raises(ValueError, match=r"different devices"):
        b += a
    np.testing.assert_array_equal(b.get(), before)


@pytest.mark.gpu(devices=2)
def test_device_ids_at_the_edge_of_the_count():
    n = runtime.getDeviceCount()
    with Device(n - 1) as d:
        assert gp.cuda.get_device_id() == n - 1 and gp.zeros(3).device == d
    for bad in (n, -1):
        with pytest.raises(ValueError, match=rf"this machine has {n} CUDA devices"):
            with Device(bad):
                pass
    assert gp.cuda.get_device_id() == 0


@pytest.mark.gpu(devices=2)
def test_stream_of_another_device_in_an_operation():
    with Device(1):
        s1 = Stream(non_blocking=True)
        b = gp.arange(100, dtype=gp.float32)
    with pytest.raises(ValueError, match="belongs to device 1 but the current device is 0"):
        with s1:
            pass
    s0 = Stream(non_blocking=True)
    with s0:                                    # device 0's stream is current
        r = b + 1                               # runs on device 1 (its own current stream)
    assert r.device == Device(1)
    np.testing.assert_array_equal(r.get(), np.arange(100, dtype=np.float32) + 1)


@pytest.mark.gpu(devices=2)
def test_peer_copy_waits_for_the_source_devices_queued_work():
    # A peer copy runs on the destination's stream; it must first wait for
    # the work already queued on the source device (here a spin, then the
    # fill that writes the source), else it reads the old values.
    with Device(1):
        b = gp.zeros(1 << 20, dtype=gp.float32)
        b.fill(2)                                  # load the fill kernel before the spin
        b.fill(0)
        Device(1).synchronize()
        _core._spin(100 * clock_khz(1))            # device 1 busy for ~100 ms ...
        b.fill(3)                                  # ... then writes b
    c = gp.asarray(b)                              # device 1 -> device 0, queued at once
    assert c.device == Device(0)
    np.testing.assert_array_equal(c.get(), np.full(1 << 20, 3, np.float32))


@pytest.mark.gpu(devices=2)
def test_astype_and_copy_stay_on_the_arrays_device():
    with Device(1):
        b = gp.arange(12, dtype=gp.int32).reshape(3, 4)
    assert gp.cuda.get_device_id() == 0
    for r in (b.astype(gp.float64), b.astype(gp.int32), b.astype(gp.float32, order="F"),
              b.T.astype(gp.int64), b.copy()):
        assert r.device == Device(1)
    assert b.astype(gp.int32, copy=False) is b
    f = b.astype(gp.float32, order="F")
    assert f.flags.f_contiguous
    np.testing.assert_array_equal(f.get(), np.arange(12, dtype=np.float32).reshape(3, 4))
    moved = gp.asarray(b, dtype=gp.float64)        # asarray moves to the current device
    assert moved.device == Device(0)
    np.testing.assert_array_equal(moved.get(), np.arange(12.0).reshape(3, 4))
    with pytest.raises(ValueError, match="another device"):
        gp.asarray(b, copy=False)
