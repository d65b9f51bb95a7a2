#!/usr/bin/env python3
"""Execute the lesson notebooks (notebooks/NN_*.ipynb), each in a fresh
kernel, and store their outputs: the one command that refreshes the outputs
the repository shows.  Run it from anywhere on a GPU machine:

    python3 tools/run_notebooks.py --build        # build gpuarr in place first
    python3 tools/run_notebooks.py --only 03 07   # some notebooks only

What it does:

* Jupyter: when nbclient, ipykernel or IPython cannot be imported, it
  installs the wheels of .whl-nb/ (the repository's untracked folder of
  Jupyter wheels for a machine without them or without internet) into a
  temporary folder (pip install --no-index --no-deps --target, default
  /tmp/nbsite) and puts it on the path of this process and of the kernels.
* A kernel spec for this Python (with gpuarr's repository on PYTHONPATH,
  so an in-place build is used) in a temporary JUPYTER_PATH.
* Each notebook runs top to bottom in a fresh kernel, with a time limit per
  cell (--timeout).  A cell error stops that notebook; the summary names the
  notebook, the cell and the error, and the exit status is 1.
* On a machine with a GPU the outputs are written back into the notebooks
  (or into --dest), with the SHA-256 of each executed cell's source in the
  cell's metadata (gpuarr.source_sha256: tests/test_notebooks.py checks that
  no cell changed after its outputs were made) and the run's GPU, date and
  versions in the notebook's metadata (gpuarr).  Without a GPU nothing in
  notebooks/ is touched: the executed copies go to $OUT/notebooks-no-gpu/.
* The executed notebooks are packed into $OUT/notebooks.tar.gz (default OUT:
  /tmp/gpuarr-notebooks), re-packed after every notebook so a run that is cut
  short still returns the finished ones, with a summary in $OUT/summary.txt.

To bring the outputs of a GPU run into a checkout, from its root:

    tar -xzf /path/to/notebooks.tar.gz      # writes notebooks/NN_*.ipynb
    git add notebooks/*.ipynb

(the archive of a run without a GPU unpacks into notebooks-no-gpu/ instead).
"""
import argparse
import glob
import hashlib
import importlib
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(REPO, "notebooks")
WHEELS = os.path.join(REPO, ".whl-nb")
KERNEL_NAME = "gpuarr-lessons"
JUPYTER_MODULES = ("nbformat", "nbclient", "jupyter_client", "ipykernel", "IPython")
SIZE_WARNING = 1 << 20          # bytes: a notebook larger than this is reported


def source_sha256(source):
    """The hash recorded for a code cell's source (nbformat's joined string)."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def notebook_paths(only=()):
    paths = sorted(glob.glob(os.path.join(NOTEBOOKS, "[0-9][0-9]_*.ipynb")))
    if only:
        paths = [p for p in paths if any(os.path.basename(p).startswith(o) for o in only)]
    return paths


# ============================================================== set-up =====

def build(out):
    """python setup.py build_ext --inplace (GPUARR_CUDA_ARCHS=90 unless set)."""
    env = dict(os.environ)
    env.setdefault("GPUARR_CUDA_ARCHS", "90")
    print(f"building gpuarr in place (GPUARR_CUDA_ARCHS={env['GPUARR_CUDA_ARCHS']}) ...",
          flush=True)
    t = time.perf_counter()
    log = os.path.join(out, "build.log")
    with open(log, "w") as f:
        rc = subprocess.call([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=REPO,
                             stdout=f, stderr=subprocess.STDOUT, env=env)
    if rc != 0:
        with open(log) as f:
            print("".join(f.readlines()[-40:]))
        sys.exit(f"build failed (rc {rc}); the log is {log}")
    print(f"built in {time.perf_counter() - t:.0f} s", flush=True)


def missing_jupyter():
    return [m for m in JUPYTER_MODULES if importlib.util.find_spec(m) is None]


def ensure_jupyter(site):
    """Make the Jupyter modules importable; returns the folder added to the
    path for them, or None when they were there already."""
    missing = missing_jupyter()
    if not missing:
        return None
    wheels = sorted(glob.glob(os.path.join(WHEELS, "*.whl")))
    if not wheels:
        sys.exit(f"missing {', '.join(missing)} and no wheels in {WHEELS}: "
                 f"pip install nbclient ipykernel (or the repository's notebooks extra)")
    marker = os.path.join(site, ".installed-wheels")
    names = "\n".join(os.path.basename(w) for w in wheels)
    if not (os.path.exists(marker) and open(marker).read() == names):
        print(f"installing {len(wheels)} Jupyter wheels from {WHEELS} into {site} ...",
              flush=True)
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "--no-index",
                               "--no-deps", "--disable-pip-version-check", "--upgrade",
                               "--target", site, *wheels])
        with open(marker, "w") as f:
            f.write(names)
    sys.path.insert(0, site)
    importlib.invalidate_caches()
    still = missing_jupyter()
    if still:
        sys.exit(f"still missing after installing the wheels: {', '.join(still)}")
    return site


def kernel_spec(folder, python_path):
    """A kernel spec for this Python under folder/kernels, found through
    JUPYTER_PATH; kernels get python_path on PYTHONPATH."""
    spec_dir = os.path.join(folder, "kernels", KERNEL_NAME)
    os.makedirs(spec_dir, exist_ok=True)
    env = {"PYTHONPATH": os.pathsep.join(python_path), "JUPYTER_PLATFORM_DIRS": "1",
           "IPYTHONDIR": os.path.join(folder, "ipython"),
           "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    with open(os.path.join(spec_dir, "kernel.json"), "w") as f:
        # Log level ERROR: ipykernel's warning about local TCP sockets is noise here.
        json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                            "{connection_file}", "--IPKernelApp.log_level=ERROR"],
                   "display_name": f"Python {platform.python_version()} (gpuarr lessons)",
                   "language": "python", "env": env}, f)
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        [folder] + [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p])
    os.environ["JUPYTER_PLATFORM_DIRS"] = "1"
    os.environ["JUPYTER_RUNTIME_DIR"] = os.path.join(folder, "runtime")
    return KERNEL_NAME


_MACHINE = r"""
import datetime, json, platform
import numpy
import gpuarr as gp
info = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "gpus": [], "python": platform.python_version(), "numpy": numpy.__version__,
        "gpuarr": gp.__version__}
if gp.is_available():
    info["gpus"] = [gp.cuda.Device(i).name for i in range(gp.cuda.get_device_count())]
else:
    try:
        gp.zeros(1)
    except Exception as exc:
        info["no_gpu"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(info))
"""


def machine():
    """What the run's metadata records: GPUs (empty without one), date,
    versions, commit.  Asked in a separate process, so that this one holds
    no CUDA context while the notebooks run."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [REPO] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", _MACHINE], env=env, capture_output=True,
                         text=True)
    if out.returncode:
        sys.exit(f"cannot import gpuarr from {REPO} (build it first, e.g. with --build):\n"
                 f"{out.stderr.strip()}")
    info = json.loads(out.stdout)
    # GPUARR_COMMIT names the commit where the checkout's .git is not the
    # source's (a copy of the working tree on a lent GPU machine)
    info["commit"] = os.environ.get("GPUARR_COMMIT", "")
    if not info["commit"]:
        try:
            info["commit"] = subprocess.check_output(["git", "rev-parse", "HEAD"], cwd=REPO,
                                                     stderr=subprocess.DEVNULL, text=True).strip()
        except (OSError, subprocess.CalledProcessError):
            del info["commit"]
    return info


# ============================================================== running ====

def run_notebook(path, kernel_name, timeout):
    """Run one notebook top to bottom in a fresh kernel (working directory:
    notebooks/), stopping at the first cell error.  Returns the executed
    notebook, with the hash of each executed cell's source in its metadata,
    and a dict: name, seconds, error (None or 'Type: message'), failed_cell
    (the index of the cell that failed or timed out) and failed_source (its
    first lines), skipped (the 'Skipped: ...' lines of the cells that
    skipped their work)."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    nb = nbformat.read(path, as_version=4)
    kernelspec = nb.metadata.get("kernelspec")
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("gpuarr", None)
            cell.metadata.pop("execution", None)
    current = [None]
    client = NotebookClient(nb, kernel_name=kernel_name, timeout=timeout, startup_timeout=120,
                            allow_errors=False, record_timing=False,
                            resources={"metadata": {"path": NOTEBOOKS}},
                            on_cell_start=lambda cell, cell_index: current.__setitem__(0, cell_index))
    error = None
    t = time.perf_counter()
    try:
        client.execute()
    except CellTimeoutError:
        error = f"timed out after {timeout} s"
    except DeadKernelError as exc:
        error = f"the kernel died: {exc}"
    except CellExecutionError as exc:
        error = f"{exc.ename}: {exc.evalue}"
    seconds = time.perf_counter() - t
    failed = current[0] if error else None
    skipped = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        cell.outputs = coalesce_streams(cell.outputs)
        if cell.execution_count is None or i == failed:
            continue
        cell.metadata["gpuarr"] = {"source_sha256": source_sha256(cell.source)}
        for out in cell.outputs:
            if out.get("name") == "stdout" and out.get("text", "").startswith("Skipped: "):
                skipped.append(f"cell {i}: {out['text'].splitlines()[0]}")
    if kernelspec is not None:
        nb.metadata["kernelspec"] = kernelspec
    where = ""
    if failed is not None:
        where = " | ".join(line for line in nb.cells[failed].source.splitlines()[:3] if line)
    return nb, {"name": os.path.basename(path), "seconds": seconds, "error": error,
                "failed_cell": failed, "failed_source": where, "skipped": skipped}


def coalesce_streams(outputs):
    """Join consecutive pieces of one stream (a print with flush=True and
    the next print arrive as separate outputs)."""
    merged = []
    for out in outputs:
        prev = merged[-1] if merged else None
        if (out.get("output_type") == "stream" and prev is not None
                and prev.get("output_type") == "stream" and prev.get("name") == out.get("name")):
            prev["text"] += out["text"]
        else:
            merged.append(out)
    return merged


def store(nb, result, info, dest):
    """Write the executed notebook into dest with the run's description in
    its metadata (gpuarr: GPUs, date, versions, status); adds target and
    size to result."""
    import nbformat
    run = dict(info, seconds=round(result["seconds"], 1))
    run["gpu"] = info["gpus"][0] if info["gpus"] else None
    run["status"] = "ok" if result["error"] is None else \
        f"failed at cell {result['failed_cell']}: {result['error']}"
    nb.metadata["gpuarr"] = run
    result["target"] = os.path.join(dest, result["name"])
    nbformat.write(nb, result["target"])
    result["size"] = os.path.getsize(result["target"])


def pack(out, results, folder):
    """$OUT/notebooks.tar.gz with the written notebooks under folder/."""
    archive = os.path.join(out, "notebooks.tar.gz")
    tmp = archive + ".part"
    with tarfile.open(tmp, "w:gz") as tar:
        for r in results:
            tar.add(r["target"], arcname=f"{folder}/{r['name']}")
    os.replace(tmp, archive)
    return archive


def summary_lines(info, results, total):
    gpu = ", ".join(info["gpus"]) if info["gpus"] else f"none ({info.get('no_gpu', '?')})"
    lines = [f"notebooks run {info['date']} on GPU: {gpu}",
             f"Python {info['python']}, NumPy {info['numpy']}, gpuarr {info['gpuarr']}"
             + (f", commit {info['commit'][:12]}" if "commit" in info else ""), ""]
    for r in results:
        status = "ok" if r["error"] is None else f"FAILED at cell {r['failed_cell']}"
        size = r.get("size", 0)
        flag = "  (over 1 MiB)" if size > SIZE_WARNING else ""
        lines.append(f"{r['name']:40s} {status:22s} {r['seconds']:7.1f} s {size / 1024:8.0f} KiB"
                     f"{flag}")
        if r["error"]:
            lines.append(f"    {r['error']}")
            lines.append(f"    the cell begins: {r['failed_source']}")
        lines += [f"    {s}" for s in r["skipped"]]
    failed = sum(r["error"] is not None for r in results)
    lines += ["", f"{len(results) - failed} of {len(results)} notebooks ran without an error "
              f"in {total:.0f} s"]
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="tools/run_notebooks.py", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", default=(), metavar="PREFIX",
                        help="run only the notebooks whose names start so (e.g. 03 07)")
    parser.add_argument("--timeout", type=int, default=300,
                        help="seconds a cell may run (default 300)")
    parser.add_argument("--build", action="store_true",
                        help="build gpuarr in place first (setup.py build_ext --inplace)")
    parser.add_argument("--out", default=os.environ.get("OUT") or "/tmp/gpuarr-notebooks",
                        help="folder for notebooks.tar.gz and summary.txt (default $OUT, else "
                             "/tmp/gpuarr-notebooks)")
    parser.add_argument("--dest", help="write the executed notebooks here instead of in place")
    parser.add_argument("--site", default="/tmp/nbsite",
                        help="where the .whl-nb wheels are installed when needed")
    args = parser.parse_args(argv)

    os.makedirs(args.out, exist_ok=True)
    t0 = time.perf_counter()
    if args.build:
        build(args.out)
    added = ensure_jupyter(args.site)
    info = machine()
    if info["gpus"]:
        dest, folder = args.dest or NOTEBOOKS, "notebooks"
    else:
        dest, folder = args.dest or os.path.join(args.out, "notebooks-no-gpu"), "notebooks-no-gpu"
        print(f"no GPU ({info.get('no_gpu')}): the GPU cells print 'Skipped', and nothing in "
              f"notebooks/ is changed; the executed copies go to {dest}", flush=True)
    os.makedirs(dest, exist_ok=True)
    paths = notebook_paths(args.only)
    if not paths:
        sys.exit(f"no notebooks to run in {NOTEBOOKS}")
    python_path = [REPO] + ([added] if added else []) + \
        [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    results = []
    summary = os.path.join(args.out, "summary.txt")
    with tempfile.TemporaryDirectory(prefix="gpuarr-jupyter-") as folder_tmp:
        name = kernel_spec(folder_tmp, python_path)
        for path in paths:
            print(f"running {os.path.basename(path)} ...", flush=True)
            nb, result = run_notebook(path, name, args.timeout)
            store(nb, result, info, dest)
            results.append(result)
            status = "ok" if result["error"] is None else \
                f"FAILED at cell {result['failed_cell']}: {result['error']}"
            print(f"    {status} ({result['seconds']:.1f} s, {result['size'] / 1024:.0f} KiB, "
                  f"{len(result['skipped'])} cell(s) skipped)", flush=True)
            with open(summary, "w") as f:
                f.write("\n".join(summary_lines(info, results, time.perf_counter() - t0)) + "\n")
            archive = pack(args.out, results, folder)
    print()
    print("\n".join(summary_lines(info, results, time.perf_counter() - t0)))
    print(f"\nexecuted notebooks packed in {archive} (unpack from the repository root: "
          f"tar -xzf notebooks.tar.gz)")
    return 1 if any(r["error"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
