"""gpuarr.profiler: timing GPU work the right way (cupyx.profiler's API).

GPU work runs asynchronously: a host timer around a call measures only the
time to *queue* the work.  benchmark() records CUDA events on each device's
current stream around every call and waits for them, so it reports both
the host time of the call and the device time of the work it queued:

    import gpuarr as gp
    a = gp.ones((2048, 2048), dtype=gp.float32)
    print(gp.benchmark(gp.sqrt, (a,), n_repeat=100))

prints one line in CuPy's layout (the figures here only show the layout):

    sqrt                :    CPU:     6.812 us   +/-  0.911 (min:     6.102 / max:    14.690) us     GPU-0:    43.120 us   +/-  1.224 (min:    41.984 / max:    52.224) us

The loop itself (event records, host clock, synchronisation) is C
(src/benchmark.c); this module checks the arguments and holds the result.

In IPython or Jupyter, ``%load_ext gpuarr.profiler`` adds ``%gpu_timeit``
(a statement) and ``%%gpu_timeit`` (a cell), which print benchmark()'s
summary, with CuPy's options: ``-n`` repeats, ``-w`` warm-up calls,
``--max-duration`` seconds; ``-o`` also returns the PerfCaseResult.
"""
import inspect
import math
import numbers

import numpy as _numpy

from . import _core

__all__ = ["benchmark", "PerfCaseResult"]


class PerfCaseResult:
    """The times recorded by benchmark(), in seconds.

    ``cpu_times``: shape (n_repeat,), the host time of each call (monotonic
    clock).  ``gpu_times``: shape (len(devices), n_repeat), the device time
    between the events recorded before and after each call.  ``str()`` and
    ``repr()`` give CuPy's one-line summary (mean +/- standard deviation,
    min and max, in microseconds).
    """

    __slots__ = ("name", "_ts", "devices")

    def __init__(self, name, ts, devices):
        ts = _numpy.asarray(ts, dtype=_numpy.float64)
        if ts.ndim != 2 or ts.shape[0] != len(devices) + 1 or ts.shape[1] == 0:
            raise ValueError("PerfCaseResult: ts must have shape (1 + len(devices), n) "
                             "with n >= 1")
        self.name = name
        self._ts = ts
        self.devices = tuple(devices)

    @property
    def cpu_times(self):
        """numpy array (n_repeat,): host seconds per call."""
        return self._ts[0]

    @property
    def gpu_times(self):
        """numpy array (len(devices), n_repeat): device seconds per call."""
        return self._ts[1:]

    @staticmethod
    def _item_str(label, t):
        us = t * 1e6
        s = f"    {label}: {us.mean():9.3f} us"
        if us.size > 1:
            s += (f"   +/- {us.std():6.3f} "
                  f"(min: {us.min():9.3f} / max: {us.max():9.3f}) us")
        return s

    def to_str(self, show_gpu=False):
        """The summary line; GPU columns only when ``show_gpu``."""
        items = [self._item_str("CPU", self._ts[0])]
        if show_gpu:
            items += [self._item_str(f"GPU-{d}", t) for d, t in zip(self.devices, self._ts[1:])]
        return f"{self.name:<20s}:" + " ".join(items)

    def __str__(self):
        return self.to_str(show_gpu=True)

    __repr__ = __str__


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def benchmark(func, args=(), kwargs={}, n_repeat=10000, *, name=None, n_warmup=10,
              max_duration=math.inf, devices=None):
    """Time ``func(*args, **kwargs)`` on the host and on the GPU.

    Calls it ``n_warmup`` times untimed, then up to ``n_repeat`` times, each
    between CUDA events recorded on the current stream of every device in
    ``devices`` (a tuple of device numbers; default: the current device).
    Stops early once ``max_duration`` seconds have passed (after at least
    one repeat).  ``name`` defaults to ``func.__name__``.  Returns a
    PerfCaseResult.  A function that does only host work can be timed too:
    its GPU time is then the idle gap between the two events.
    """
    if not callable(func):
        raise TypeError("`func` should be a callable object.")
    if not isinstance(args, tuple):
        raise TypeError("`args` should be of tuple type.")
    if not isinstance(kwargs, dict):
        raise TypeError("`kwargs` should be of dict type.")
    if not _is_int(n_repeat):
        raise TypeError("`n_repeat` should be an integer.")
    if n_repeat < 1:
        raise ValueError("`n_repeat` should be at least 1.")
    if name is None:
        name = getattr(func, "__name__", type(func).__name__)
    if not isinstance(name, str):
        raise TypeError("`name` should be a string.")
    if not _is_int(n_warmup):
        raise TypeError("`n_warmup` should be an integer.")
    if n_warmup < 0:
        raise ValueError("`n_warmup` should not be negative.")
    if isinstance(max_duration, bool) or not isinstance(max_duration, numbers.Real):
        raise TypeError("`max_duration` should be given in seconds (a real number).")
    if devices is None:
        devices = (_core.get_device_id(),)
    if not isinstance(devices, tuple):
        raise TypeError("`devices` should be of tuple type")
    if not devices or not all(_is_int(d) for d in devices):
        raise TypeError("`devices` should be a non-empty tuple of device numbers (int)")
    cpu, gpu = _core._benchmark(func, args, kwargs, n_repeat, n_warmup, float(max_duration),
                                devices)
    return PerfCaseResult(name, _numpy.concatenate([cpu[None, :], gpu]), devices)


# ============================================================== IPython ====
#
# %load_ext gpuarr.profiler adds %gpu_timeit and %%gpu_timeit (CuPy 14's
# magic of the same name and options): benchmark() of a statement or a cell,
# printing its summary line.  IPython is imported only here.

_MAGIC_OPTIONS = {"-n": "n_repeat", "--n-repeat": "n_repeat", "-w": "n_warmup",
                  "--n-warmup": "n_warmup", "--max-duration": "max_duration"}
_MAGIC_USAGE = ("usage: %gpu_timeit [-n N_REPEAT] [-w N_WARMUP] [--max-duration SECONDS] [-o] "
                "statement   (or %%gpu_timeit [options] with the code in the cell)")


def _parse_magic_line(line):
    """Split ``[options] code`` into (benchmark keyword arguments, return
    the result?, code).  Options come first; the first word that is not one
    starts the code."""
    kwargs = {key: inspect.signature(benchmark).parameters[key].default
              for key in set(_MAGIC_OPTIONS.values())}
    want_result = False
    words = line.split(" ")
    i = 0
    while i < len(words):
        word = words[i]
        if word == "":
            i += 1
            continue
        if word == "-o":
            want_result = True
            i += 1
            continue
        name, eq, value = word.partition("=")
        if name not in _MAGIC_OPTIONS:
            break
        if not eq:
            i += 1
            while i < len(words) and words[i] == "":
                i += 1
            if i == len(words):
                raise ValueError(f"{name} needs a value; {_MAGIC_USAGE}")
            value = words[i]
        key = _MAGIC_OPTIONS[name]
        try:
            kwargs[key] = float(value) if key == "max_duration" else int(value)
        except ValueError:
            raise ValueError(f"{name} {value!r}: not a number; {_MAGIC_USAGE}") from None
        i += 1
    return kwargs, want_result, " ".join(words[i:]).strip()


def load_ipython_extension(ipython):
    """Register %gpu_timeit / %%gpu_timeit (``%load_ext gpuarr.profiler``)."""
    from IPython.core.magic import Magics, line_cell_magic, magics_class

    @magics_class
    class GpuTimeitMagics(Magics):
        @line_cell_magic
        def gpu_timeit(self, line, cell=None):
            """Time a statement (%gpu_timeit) or a cell (%%gpu_timeit) with
            gpuarr.profiler.benchmark and print its summary: host and GPU
            time per run.  Options: -n/--n-repeat (default 10000),
            -w/--n-warmup (default 10), --max-duration SECONDS (stop early),
            -o (return the PerfCaseResult)."""
            kwargs, want_result, code = _parse_magic_line(line)
            shell = self.shell
            if cell is None:
                if not code:
                    raise ValueError(_MAGIC_USAGE)
                source = shell.transform_cell(code)
                try:
                    compiled = compile(source, "<gpu_timeit>", "eval")
                except SyntaxError:
                    compiled = compile(source, "<gpu_timeit>", "exec")
            else:
                if code:
                    raise ValueError(f"%%gpu_timeit takes options only on its first line, "
                                     f"got {code!r}; {_MAGIC_USAGE}")
                compiled = compile(shell.transform_cell(cell), "<gpu_timeit>", "exec")
            namespace = shell.user_ns

            def run():
                return eval(compiled, namespace)

            result = benchmark(run, **kwargs)
            print(result)
            return result if want_result else None

    ipython.register_magics(GpuTimeitMagics)
