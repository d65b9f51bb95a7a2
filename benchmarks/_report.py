"""The results as Markdown (the console table and benchmarks/results/<gpu>.md)
and as JSON."""
import json
import pathlib
import re

from _format import fmt_rate, fmt_time, num, time_unit
from _registry import Goal


def fmt_cell(cell, rec, both=True):
    if cell is None:
        return "-"
    if cell["status"] != "ok":
        return cell["status"]
    med, best = cell["median_s"], cell["min_s"]
    if Goal.parse(rec["goal"]).is_rate:
        moved = rec["bytes"]
        return f"{num(moved / med / 1e9)} / {num(moved / best / 1e9)} GB/s" if both else \
            fmt_rate(moved / med)
    unit, scale = time_unit(med)
    return f"{num(med / scale)} / {num(best / scale)} {unit}" if both else fmt_time(med)


def fmt_floor(rec):
    if rec["floor_s"] is None:
        return rec["floor_note"] or "-"
    if Goal.parse(rec["goal"]).is_rate:
        return fmt_rate(rec["bytes"] / rec["floor_s"])
    return fmt_time(rec["floor_s"])


def markdown(run, full=True):
    """The results as Markdown.  full=False is the console copy, read from
    its last lines: notes come before the table, shortened, without those
    that only say which operation a library lacks."""
    m, v = run["machine"], run["machine"]["versions"]
    copy = m["copy_rate"]
    intro = [
        f"# gpuarr benchmarks: {m['gpu']}",
        "",
        f"{run['date']} | driver {m['driver']} | "
        + (f"code {run['commit']} | " if run.get("commit") else "")
        + ", ".join(f"{k} {val}" for k, val in v.items()),
        "",
        "Device copy rate (1 GiB, bytes read + written): "
        + (fmt_rate(copy) if copy else "not measured")
        + "".join(f"; {k} {fmt_rate(r)}" for k, r in m["copy_by"].items())
        + (f". Pinned bus: h2d {fmt_rate(m['h2d'])}, d2h {fmt_rate(m['d2h'])}" if m["h2d"] else "")
        + (f". Peak FP64 {m['fp64'] / 1e12:.1f} TFLOP/s" if m["fp64"] else "") + ".",
        "",
        f"GPU times: CUDA events ({m['events']}), median / min after warm-up; NumPy: CPU "
        "median. Floor: bytes / copy rate (+ bus bytes / pinned rate) or flops / peak. "
        "met?: gpuarr median (fresh processes: best run) against the goal. gp/CuPy: ratio of medians (< 1: gpuarr faster)."
        + (f" Selection: {run['selection']}." if run["selection"] else ""),
        "",
    ]
    table = ["| case | # | size | gpuarr med / min | CuPy med / min | NumPy | floor | goal | met? "
             "| gp/CuPy |", "|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for rec in run["cases"]:
        cells = rec["cells"]
        met = {True: "yes", False: "no", None: "-"}[rec["met"]]
        ratio = f"{rec['ratio']:.2f}x" if rec["ratio"] else "-"
        table.append(
            f"| {rec['name']} | {rec['issue']} | {rec['size']} | {fmt_cell(cells.get('gpuarr'), rec)} "
            f"| {fmt_cell(cells.get('cupy'), rec)} | {fmt_cell(cells.get('numpy'), rec, both=False)} "
            f"| {fmt_floor(rec)} | {Goal.parse(rec['goal']).describe(copy)} | {met} | {ratio} |")
        for lib, c in cells.items():
            text = c["note"] or c["detail"]
            if text and (full or c["status"] not in ("n/i", "n/a")):
                note = f"- {rec['name']} {lib}: {c['status'] + ': ' if c['detail'] else ''}{text}"
                notes.append(note if full else note[:150])
    notes = ["Notes:"] + notes if notes else []
    lines = intro + table + [""] + notes if full else intro + notes + [""] * bool(notes) + table
    return "\n".join(lines).rstrip("\n") + "\n"


def write_results(run, out_dirs, tag=None):
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", run["machine"]["gpu"]).strip("_") or "unknown_gpu"
    if tag:
        stem += "-" + re.sub(r"[^A-Za-z0-9_-]+", "_", tag)
    written = []
    for d in dict.fromkeys(pathlib.Path(p).resolve() for p in out_dirs):
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{stem}.json").write_text(json.dumps(run, indent=1) + "\n")
        (d / f"{stem}.md").write_text(markdown(run))
        written += [d / f"{stem}.json", d / f"{stem}.md"]
    return written
