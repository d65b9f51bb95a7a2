"""%gpu_timeit / %%gpu_timeit (``%load_ext gpuarr.profiler``): option
parsing, the code run in the user's namespace, the result with -o, IPython
syntax inside a timed cell; and, on a GPU, the summary line."""
import builtins
import contextlib
import types

import numpy as np
import pytest

import gpuarr as gp
import gpuarr.profiler as profiler

pytest.importorskip("IPython")


# Names an IPython shell puts into builtins and leaves there for good.
# astropy, imported later in the same process (a pytest-xdist worker),
# takes __IPYTHON__ to mean it runs inside IPython, asks get_ipython() for
# the shell and fails to import (AttributeError on None): the astropy
# comparisons of test_stats.py errored so in a GPU run.
IPYTHON_BUILTINS = ("__IPYTHON__", "display", "get_ipython")


@contextlib.contextmanager
def ipython_shell():
    """An IPython shell with the magics loaded; afterwards builtins are as
    they were."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config
    absent = [name for name in IPYTHON_BUILTINS if name not in vars(builtins)]
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    try:
        ip = InteractiveShell.instance(config=config)
        ip.run_line_magic("load_ext", "gpuarr.profiler")
        yield ip
    finally:
        InteractiveShell.clear_instance()
        for name in absent:
            vars(builtins).pop(name, None)


@pytest.fixture
def shell():
    with ipython_shell() as ip:
        yield ip


def test_the_shell_leaves_builtins_as_they_were():
    before = {name: name in vars(builtins) for name in IPYTHON_BUILTINS}
    with ipython_shell() as ip:
        assert "__IPYTHON__" in vars(builtins) and ip.user_ns is not None
    assert {name: name in vars(builtins) for name in IPYTHON_BUILTINS} == before


@pytest.fixture
def fake_loop(monkeypatch):
    """benchmark()'s C loop replaced by one that calls the function once
    and records its arguments."""
    calls = []

    def loop(func, args, kwargs, n_repeat, n_warmup, max_duration, devices):
        func(*args, **kwargs)
        calls.append({"n_repeat": n_repeat, "n_warmup": n_warmup,
                      "max_duration": max_duration, "devices": devices})
        return np.full(2, 1e-6), np.full((1, 2), 2e-6)

    monkeypatch.setattr(profiler, "_core", types.SimpleNamespace(_benchmark=loop,
                                                                 get_device_id=lambda: 0))
    return calls


def test_options_and_code():
    parse = profiler._parse_magic_line
    kwargs, want, code = parse("gp.sort(a)")
    assert (kwargs, want, code) == ({"n_repeat": 10000, "n_warmup": 10,
                                     "max_duration": float("inf")}, False, "gp.sort(a)")
    kwargs, want, code = parse("-n 100 -w 2 --max-duration 5 x  -  y")
    assert kwargs == {"n_repeat": 100, "n_warmup": 2, "max_duration": 5.0}
    assert code == "x  -  y"
    kwargs, want, code = parse("-o --n-repeat=7 --n-warmup 0 f(x)")
    assert want and kwargs["n_repeat"] == 7 and kwargs["n_warmup"] == 0 and code == "f(x)"
    with pytest.raises(ValueError, match="-n needs a value"):
        parse("-n")
    with pytest.raises(ValueError, match="not a number"):
        parse("-n many x")


def test_line_magic_runs_in_the_user_namespace(shell, fake_loop, capsys):
    shell.run_cell("x = 3")
    assert shell.run_line_magic("gpu_timeit", "-n 5 -w 1 y = x * 2") is None
    assert shell.user_ns["y"] == 6
    assert fake_loop[-1] == {"n_repeat": 5, "n_warmup": 1, "max_duration": float("inf"),
                             "devices": (0,)}
    out = capsys.readouterr().out
    assert out.startswith("run ") and "CPU:" in out and "GPU-0:" in out


def test_line_magic_returns_the_result_with_o(shell, fake_loop, capsys):
    shell.run_cell("x = 3")
    result = shell.run_line_magic("gpu_timeit", "-o x + 1")
    assert isinstance(result, profiler.PerfCaseResult)
    assert result.gpu_times.shape == (1, 2)


def test_cell_magic_takes_ipython_syntax(shell, fake_loop, capsys):
    shell.run_cell_magic("gpu_timeit", "--max-duration 2", "z = 5\n%time w = z + 1\n")
    assert shell.user_ns["w"] == 6
    assert fake_loop[-1]["max_duration"] == 2.0
    with pytest.raises(ValueError, match="options only"):
        shell.run_cell_magic("gpu_timeit", "-n 3 extra", "z = 1")


@pytest.mark.gpu
def test_gpu_timeit_on_the_gpu(shell, capsys):
    shell.user_ns.update(gp=gp, a=gp.ones((1024, 1024), dtype=gp.float32))
    result = shell.run_line_magic("gpu_timeit", "-o -n 20 -w 2 gp.sqrt(a)")
    assert "GPU-0:" in capsys.readouterr().out
    assert result.gpu_times.shape == (1, 20) and (result.gpu_times > 0).all()
