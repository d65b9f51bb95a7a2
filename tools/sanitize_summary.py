"""Summarise tools/sanitize.sh runs as markdown: per tool, what each shard
ran (tests, time, how it ended) and the sanitizer's findings per kernel.

    python3 tools/sanitize_summary.py OUT [OUT ...] [--out FILE.md]

Each OUT is a folder sanitize.sh wrote into (the $OUT of one device call,
or its sanitize/ folder): <tool>/shard-K-of-N/ holding meta.txt (key=value
lines), pytest.log, one sanitizer-<pid>.log per process, and ids.selected /
ids.done (the node ids the shard selected and those that finished).
Shards of the same tool from several calls add up; a shard run twice (the
same K, N and named tests) counts once (the later run).  A test counts as
run when any call finished it; with --out, those no call finished go to
<out without .md>-unreached-<tool>.txt, one node id a line, for a later
call's `tools/sanitize.sh ... -- @FILE`.  Without --out the markdown goes to
standard output.

What is read from compute-sanitizer's logs: every report (a line
"========= <what>" opening it, such as "Invalid __global__ read of size 4
bytes", "Error: Race reported between Write access at ...", "Uninitialized
__global__ memory read", "Barrier error detected", "Program hit
cudaErrorX (error N) due to ... on CUDA API call to cudaY", "Leaked N bytes
at 0x..."), attributed to the kernel named on its first "at ..." line (or
to the API call), and each process's summary line: "ERROR SUMMARY: N
errors", "RACECHECK SUMMARY: N hazards displayed (N errors, N warnings)",
"LEAK SUMMARY: N bytes leaked in N allocations".  A process whose log has
no summary was cut short (the shard's time limit) and is listed.
"""
import argparse
import collections
import glob
import os
import re
import sys

PREFIX = "========="
SUMMARY_ERRORS = re.compile(r"ERROR SUMMARY:\s*(\d+) errors?")
SUMMARY_RACES = re.compile(
    r"RACECHECK SUMMARY:\s*(\d+) hazards? displayed\s*\((\d+) errors?,\s*(\d+) warnings?\)")
SUMMARY_LEAKS = re.compile(r"LEAK SUMMARY:\s*(\d+) bytes? leaked in (\d+) allocations?")
API_ERROR = re.compile(r"Program hit (\w+) \(error \d+\) due to \"(.*?)\" on CUDA API call to "
                       r"(\w+)")
NO_CUDA = "terminated before first instrumented API call"    # a process that used no CUDA
LEAK = re.compile(r"Leaked (\d+) bytes? at 0x[0-9a-fA-F]+")
# The first line of a report, after the prefix (indented lines continue one).
REPORT_KINDS = [
    (re.compile(r"(Invalid __\w+__ (?:read|write|atomic)\w* of size \d+ bytes?)"), None),
    (re.compile(r"((?:Misaligned|Out-of-range|Invalid) [\w ]*?(?:address|access|read|write|"
                r"atomic|PC|instruction)[\w ]*)"), None),
    (re.compile(r"(Uninitialized __\w+__ memory (?:read|access)\w*)"), None),
    (re.compile(r"(?:(Error|Warning): )?(Race reported between \w+ access)"), "race"),
    (re.compile(r"(ERROR|WARNING|INFO): (Potential \w+ hazard detected)"), "hazard"),
    (re.compile(r"(Barrier error detected[\w .-]*|Invalid arguments? [\w ]*|"
                r"[\w ]*(?:barrier|syncwarp|shfl)[\w ]* error[\w .-]*)", re.I), None),
    (re.compile(r"(Malloc/Free error[\w .-]*|Cuda \w+ error[\w .-]*|"
                r"Hardware exception[\w .-]*|Device-side assert[\w .-]*)", re.I), None),
]


def kernel_name(location):
    """The kernel (function) named by a report's "at ..." location, in its
    forms: "0x1a0 in k(float*)", "file.cu:17:k(float*)", "k(float*)+0x140
    in file.cu:17", "void k<float>(float*)+0x50", "k_label_local+0x140"."""
    loc = location.strip()
    loc = re.sub(r"^0x[0-9a-fA-F]+ in ", "", loc)
    loc = re.sub(r" in \S+:\d+\s*$", "", loc)
    loc = re.sub(r"^\S+\.\w+:\d+:", "", loc)              # file.cu:17:name
    depth, cut = 0, len(loc)
    for i, ch in enumerate(loc):                         # the argument list ends the name
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            cut = i
            break
    loc = loc[:cut]
    loc = re.sub(r"\+0x[0-9a-fA-F]+$", "", loc)
    loc = re.sub(r"^(?:void|static|__global__)\s+", "", loc)
    return loc.strip() or "?"


def parse_log(text):
    """One process's log: (reports, summary) where reports is a list of
    (kind, severity, kernel, detail, hazards) -- hazards: the accesses a
    racecheck report groups ("[N hazards]"), else 0 -- and summary a dict
    of the summary lines' numbers (empty when the process was cut short)."""
    reports, summary = [], {}
    current = None
    for raw in text.splitlines():
        if not raw.startswith(PREFIX):
            continue
        body = raw[len(PREFIX):]
        line = body.strip()
        if not line:
            current = None
            continue
        m = SUMMARY_ERRORS.search(line)
        if m:
            summary["errors"] = int(m.group(1))
            continue
        m = SUMMARY_RACES.search(line)
        if m:
            summary["hazards"], summary["errors"], summary["warnings"] = map(int, m.groups())
            continue
        m = SUMMARY_LEAKS.search(line)
        if m:
            summary["leaked_bytes"], summary["leaked_allocations"] = map(int, m.groups())
            continue
        indented = body.startswith("    ")
        if current is not None and indented:
            grouped = re.search(r"\[(\d+) hazards?\]$", line)
            if grouped:
                current[4] += int(grouped.group(1))
            if current[2] is None:
                at = re.search(r"\bat (.+)$", line)
                if at and not line.startswith("Address") and "Host Frame" not in line:
                    current[2] = kernel_name(at.group(1))
            continue
        current = None
        m = API_ERROR.search(line)
        if m:
            reports.append(["API error", "error", f"{m.group(3)}: {m.group(1)}", m.group(2), 0])
            continue
        m = LEAK.search(line)
        if m:
            reports.append(["leak", "error", "(device allocation)", f"{m.group(1)} bytes", 0])
            continue
        for pattern, style in REPORT_KINDS:
            m = pattern.search(line)
            if not m:
                continue
            if style == "race":
                severity = (m.group(1) or "error").lower()
                kind = "race"
                at = re.search(r"\bat (.+?)(?: \[\d+ hazards?\])?$", line)
                kernel = kernel_name(at.group(1)) if at else None
            elif style == "hazard":
                severity, kind, kernel = m.group(1).lower(), m.group(2), None
            else:
                severity, kind, kernel = "error", re.sub(r"\d+ bytes?", "N bytes", m.group(1)), None
            current = [kind, severity, kernel, line, 0]
            reports.append(current)
            break
    for r in reports:
        if r[2] is None:
            r[2] = "?"
    return [tuple(r) for r in reports], summary


def read_meta(path):
    meta = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8", errors="replace"):
            key, sep, value = line.rstrip("\n").partition("=")
            if sep:
                meta[key.strip()] = value.strip()
    return meta


def pytest_outcome(path):
    """The last line of pytest's report ("N passed, M skipped in S s") and
    whether the run stopped at its deadline."""
    if not os.path.exists(path):
        return "no pytest log", False
    lines = [ln.strip() for ln in open(path, encoding="utf-8", errors="replace")]
    stopped = any("GPUARR_TEST_DEADLINE passed" in ln for ln in lines)
    counts = [ln.strip("= ") for ln in lines
              if re.search(r"\d+ (passed|failed|skipped|error|deselected)", ln)
              and re.search(r" in [\d.]+s", ln)]
    return (counts[-1] if counts else (lines[-1] if lines else "empty log")), stopped


def read_ids(path):
    if not os.path.exists(path):
        return set()
    return {ln.rstrip("\n") for ln in open(path, encoding="utf-8", errors="replace")
            if ln.strip()}


def collect(folders):
    """{tool: {(k, n, named tests): shard}} from the folders, a later run of
    a shard replacing an earlier one."""
    tools = collections.defaultdict(dict)
    for folder in folders:
        base = os.path.join(folder, "sanitize") if os.path.isdir(
            os.path.join(folder, "sanitize")) else folder
        for shard_dir in sorted(glob.glob(os.path.join(base, "*", "shard-*-of-*"))):
            m = re.search(r"shard-(\d+)-of-(\d+)$", shard_dir)
            tool = os.path.basename(os.path.dirname(shard_dir))
            meta = read_meta(os.path.join(shard_dir, "meta.txt"))
            processes = []
            for log in sorted(glob.glob(os.path.join(shard_dir, "sanitizer-*.log"))):
                text = open(log, encoding="utf-8", errors="replace").read()
                reports, summary = parse_log(text)
                cut_short = not summary and NO_CUDA not in text
                processes.append((os.path.basename(log), reports, summary, cut_short))
            outcome, stopped = pytest_outcome(os.path.join(shard_dir, "pytest.log"))
            shard = dict(dir=shard_dir, meta=meta, processes=processes, outcome=outcome,
                         stopped=stopped,
                         selected=read_ids(os.path.join(shard_dir, "ids.selected")),
                         done=read_ids(os.path.join(shard_dir, "ids.done")))
            key = (int(m.group(1)), int(m.group(2)), meta.get("pytest_args", ""))
            old = tools[tool].get(key)
            if old is None or meta.get("started", "") >= old["meta"].get("started", ""):
                tools[tool][key] = shard
    return tools


def unreached(shards):
    """The node ids some shard selected and none finished, sorted."""
    selected, done = set(), set()
    for s in shards.values():
        selected |= s["selected"]
        done |= s["done"]
    return sorted(selected - done)


def markdown(tools, title=None):
    out = []
    first = next((s["meta"] for shards in tools.values() for s in shards.values()), {})
    out.append(f"# {title or 'compute-sanitizer over the test suite'}")
    out.append("")
    out.append(f"GPU: {first.get('gpu', '?')}; commit {first.get('commit', '?')}; "
               f"compute-sanitizer {first.get('sanitizer_version', '?')}; "
               f"GPUARR_POOL=0; test seed GPUARR_TEST_SEED={first.get('seed', '?')}.  "
               "Made by tools/sanitize.sh and tools/sanitize_summary.py.")
    out.append("")
    out.append("ERROR SUMMARY counts every report, leaks and CUDA API errors (with "
               "`--api-errors explicit` or `all`) included; the kernel column counts the "
               "reports made inside kernels.")
    out.append("")
    out.append("| tool | shards | ERROR SUMMARY | in kernels | hazards (errors, warnings) | "
               "leaked | API errors | cut short |")
    out.append("|---|---|---|---|---|---|---|---|")
    for tool in sorted(tools):
        shards = tools[tool]
        sums = collections.Counter()
        cut = kernel = api = 0
        for s in shards.values():
            for _, reports, summary, cut_short in s["processes"]:
                sums.update(summary)
                api += sum(1 for r in reports if r[0] == "API error")
                kernel += sum(1 for r in reports if r[0] not in ("API error", "leak"))
                cut += cut_short
            if s["meta"].get("timed_out") == "1":
                cut += 1
        groups = sorted({(n, args) for _, n, args in shards}, key=lambda g: (g[1] != "", g))
        covered = ", ".join(f"{len([1 for _, m, a in shards if (m, a) == (n, args)])} of {n}"
                            + (" (named tests)" if args else "") for n, args in groups)
        racecheck = tool == "racecheck"
        hazards = f"{sums['hazards']} ({sums['errors']}, {sums['warnings']})" if racecheck else ""
        errors = "" if racecheck else str(sums["errors"])
        leaked = (f"{sums['leaked_bytes']} B in {sums['leaked_allocations']}"
                  if tool == "memcheck" else "")
        out.append(f"| {tool} | {covered} | {errors} | {kernel} | {hazards} | {leaked} | {api} "
                   f"| {cut} |")
    for tool in sorted(tools):
        selected = set().union(*(s["selected"] for s in tools[tool].values()))
        if selected:
            out.append("")
            out.append(f"{tool}: {len(unreached(tools[tool]))} of the {len(selected)} tests "
                       "the shards selected did not finish in any call.")
    for tool in sorted(tools):
        shards = tools[tool]
        out.append("")
        out.append(f"## {tool}")
        out.append("")
        options = next(iter(shards.values()))["meta"].get("options", "")
        if options:
            out.append(f"`compute-sanitizer {options}`")
            out.append("")
        out.append("| shard | seconds | rc | processes | tests | findings |")
        out.append("|---|---|---|---|---|---|")
        per_kernel = collections.Counter()
        grouped = collections.Counter()
        details = {}
        cut_short = []
        for key in sorted(shards):
            k, n, args = key
            s = shards[key]
            found = sum(len(p[1]) for p in s["processes"])
            ended = s["outcome"] + (" (stopped at the deadline)" if s["stopped"] else "")
            if s["meta"].get("timed_out") == "1":
                ended += " (killed at the time limit)"
            label = f"{k}/{n}" + (" (named tests)" if args else "")
            out.append(f"| {label} | {s['meta'].get('seconds', '?')} | {s['meta'].get('rc', '?')} "
                       f"| {len(s['processes'])} | {ended} | {found} |")
            for name, reports, summary, short in s["processes"]:
                if short:
                    cut_short.append(f"{k}/{n} {name}")
                for kind, severity, kernel, detail, hazards in reports:
                    per_kernel[(kernel, kind, severity)] += 1
                    grouped[(kernel, kind, severity)] += hazards
                    details.setdefault((kernel, kind, severity), detail)
        out.append("")
        if per_kernel:
            out.append("| kernel or API call | report | severity | reports | accesses | first |")
            out.append("|---|---|---|---|---|---|")
            for key, count in sorted(per_kernel.items(), key=lambda kv: (-kv[1], kv[0])):
                kernel, kind, severity = key
                first = str(details[key]).replace("|", "\\|")[:120]
                out.append(f"| `{kernel}` | {kind} | {severity} | {count} | {grouped[key] or ''} "
                           f"| {first} |")
        else:
            out.append("No reports.")
        if cut_short:
            out.append("")
            out.append("Processes without a summary (cut short): " + ", ".join(cut_short))
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--out", help="markdown file to write (default: standard output)")
    ap.add_argument("--title")
    args = ap.parse_args(argv)
    tools = collect(args.folders)
    if not tools:
        print(f"no sanitize.sh shards under {', '.join(args.folders)}", file=sys.stderr)
        return 1
    text = markdown(tools, args.title)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        for tool, shards in tools.items():
            if any(s["selected"] for s in shards.values()):
                path = f"{args.out.removesuffix('.md')}-unreached-{tool}.txt"
                with open(path, "w", encoding="utf-8") as f:
                    f.writelines(node + "\n" for node in unreached(shards))
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
