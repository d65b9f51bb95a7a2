"""The lesson notebooks, notebooks/NN_*.ipynb.

Without a GPU (CI): each notebook is valid nbformat, imports gpuarr and
neither CuPy nor cupyx (CuPy only in notebook 9, as a library to exchange
arrays with), is linked from the README, and carries the outputs of a run
on a GPU (tools/run_notebooks.py) that are not stale: every code cell's
source still has the SHA-256 recorded when its outputs were made, and no
output is an error.

On a GPU: each notebook runs top to bottom in a fresh kernel, with the
runner of tools/run_notebooks.py; a cell error fails the test, naming the
notebook and the cell.
"""
import glob
import os
import re
import sys

import pytest

from _repo import REPO, load_script

nbformat = pytest.importorskip("nbformat")

PATHS = sorted(glob.glob(os.path.join(REPO, "notebooks", "[0-9][0-9]_*.ipynb")))
CUPY_ALLOWED = {"09_numba_and_friends.ipynb"}     # CuPy as an exchange partner only
RERUN = ("run tools/run_notebooks.py on a GPU machine and commit the notebooks it writes "
         "(from its notebooks.tar.gz)")


def runner():
    return load_script("run_notebooks", "tools", "run_notebooks.py")


@pytest.fixture(params=PATHS, ids=os.path.basename)
def notebook(request):
    return os.path.basename(request.param), nbformat.read(request.param, as_version=4)


def code_cells(nb):
    return [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]


def imported_modules(nb):
    """Top-level names of the modules the notebook's code imports."""
    names = set()
    for _, cell in code_cells(nb):
        for line in cell.source.splitlines():
            m = re.match(r"\s*(?:from\s+([\w.]+)\s+import|import\s+([\w., ]+))", line)
            if m:
                for module in (m.group(1) or m.group(2)).split(","):
                    names.add(module.split(" as ")[0].strip().split(".")[0])
    return names


def test_nine_lessons_numbered_in_order():
    numbers = [os.path.basename(p)[:2] for p in PATHS]
    assert numbers == [f"{i:02d}" for i in range(1, 10)], numbers


def test_valid_nbformat(notebook):
    name, nb = notebook
    nbformat.validate(nb)


def test_imports_gpuarr_not_cupy(notebook):
    name, nb = notebook
    modules = imported_modules(nb)
    assert "gpuarr" in modules, f"{name} does not import gpuarr"
    assert "cupyx" not in modules, f"{name} imports cupyx"
    if name not in CUPY_ALLOWED:
        assert "cupy" not in modules, f"{name} imports cupy"


def test_readme_links_every_notebook():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    missing = [os.path.basename(p) for p in PATHS
               if f"](notebooks/{os.path.basename(p)})" not in readme]
    assert not missing, f"README.md does not link {missing}"


def test_outputs_come_from_a_gpu_run(notebook):
    name, nb = notebook
    run = nb.metadata.get("gpuarr")
    assert run, f"{name} has no stored outputs from a GPU run: {RERUN}"
    assert run.get("gpu"), f"{name}: its outputs come from a run without a GPU: {RERUN}"
    assert run.get("status") == "ok", f"{name}: the stored run failed ({run.get('status')}): {RERUN}"
    first = code_cells(nb)[0][1]
    text = "".join(o.get("text", "") for o in first.outputs)
    assert re.search(r"Run on \d{4}-\d\d-\d\d \d\d:\d\d UTC", text) and run["gpu"] in text, \
        f"{name}: the first cell's output does not give the date and the GPU ({run['gpu']})"


def test_outputs_are_not_stale(notebook):
    name, nb = notebook
    hash_of = runner().source_sha256
    stale = [i for i, cell in code_cells(nb)
             if cell.metadata.get("gpuarr", {}).get("source_sha256") != hash_of(cell.source)]
    assert not stale, (f"{name}: code cells {stale} were changed or added after their outputs "
                       f"were made: {RERUN}")
    errors = [i for i, cell in code_cells(nb)
              if any(o.get("output_type") == "error" for o in cell.outputs)]
    assert not errors, f"{name}: cells {errors} have an error as output: {RERUN}"


def test_notebooks_stay_small(notebook):
    name, _ = notebook
    size = os.path.getsize(os.path.join(REPO, "notebooks", name))
    assert size < (1 << 20), f"{name} is {size} bytes (pictures too large?)"


@pytest.mark.gpu
def test_notebook_runs_on_the_gpu(notebook, tmp_path, monkeypatch):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    name, _ = notebook
    run = runner()
    for key in ("JUPYTER_PATH", "JUPYTER_PLATFORM_DIRS", "JUPYTER_RUNTIME_DIR"):
        monkeypatch.delenv(key, raising=False)       # restored after the test
    python_path = [REPO] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    kernel = run.kernel_spec(str(tmp_path), python_path)
    nb, result = run.run_notebook(os.path.join(REPO, "notebooks", name), kernel, timeout=300)
    if result["error"]:
        cell = result["failed_cell"]
        source = nb.cells[cell].source if cell is not None else "?"
        pytest.fail(f"{name}, cell {cell}: {result['error']}\n--- the cell:\n{source}",
                    pytrace=False)
    print("\n".join(result["skipped"]), file=sys.stderr)
