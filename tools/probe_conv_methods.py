"""Probe: signal.convolve's two engines, method='direct' and method='fft',
timed over a grid of shapes, dtypes and modes beside signal.conv_costs'
estimates -- the measurements behind method='auto' (issue 22) -- and the
fit of the cost model's constants to them.

    python tools/probe_conv_methods.py [--out FILE.json] [--quick]   # on a GPU
    python tools/probe_conv_methods.py --fit FILE.json               # anywhere

Without --fit it measures (into --out, by default $OUT/conv-methods.json or
./conv-methods.json) and then fits what it measured.

Measuring: each case is the user's call, signal.convolve(a, k, mode=mode,
method=m), timed by gpuarr.profiler.benchmark (CUDA events around each
call), the median of the repeats after warm-up.  A direct call the current
model puts over 40 ms is not timed (its time is then None).  Each record
holds the shapes, dtype, mode and both medians in seconds.  One line per
case is printed as it is measured.

Fitting: conv_costs prices each engine as the sum of its work terms from
signal._conv_work (fixed, result elements, multiply-adds by compute type;
fixed, N log2 N units by precision) times their seconds (signal's
DIRECT_COSTS and FFT_COSTS).  Each engine's seconds are fitted by least
squares on relative error over its measured cases.  Printed: the fitted
constants as signal.py's lines; every case's measured times and the
current and fitted estimates; the cases where 'auto' picks the slower
engine by more than 10 % (current and fitted constants) and by how much;
and each family's crossover, the smallest filter measured faster by FFT.
"""
import argparse
import faulthandler
import json
import math
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)     # gpuarr from the repository (built in place)

DTYPES = ("float32", "float64", "complex64", "complex128", "int16")
# (family, input shape, filter sizes, modes): square filters for 2-d.
GRID = [
    ("2d-256", (256, 256), (3, 5, 9, 15, 23, 31, 47, 63), ("same",)),
    ("2d-1024", (1024, 1024), (3, 5, 9, 15, 23, 31, 47, 63, 95), ("same",)),
    ("2d-2048", (2048, 2048), (3, 5, 9, 15, 23, 31, 47, 63, 95, 127), ("same", "full", "valid")),
    ("1d-1M", (1 << 20,), (15, 63, 255, 1023, 4095), ("full",)),
    ("1d-4M", (4194304,), (15, 63, 255, 1023, 4095), ("full",)),
    ("3d-128", (128, 128, 128), (3, 5, 9, 15), ("same",)),
]
QUICK_DTYPES = ("float32", "float64")
MAX_DIRECT_SECONDS = 0.04
SLOWER = 1.10      # 'auto' is wrong where its pick is this much slower


def cases(quick):
    for family, shape, sizes, modes in GRID:
        for dtype in QUICK_DTYPES if quick else DTYPES:
            for mode in modes:
                if quick and mode != modes[0]:
                    continue
                for k in sizes:
                    yield family, shape, (k,) * len(shape), dtype, mode


def measure(out_path, quick):
    faulthandler.dump_traceback_later(500, exit=True)
    import gpuarr as gp
    from gpuarr.scipy import signal
    from _probe import timed    # tools/ is the script's directory
    rng = np.random.default_rng(22)
    records, arrays = [], {}

    def array(shape, dtype):
        key = (shape, dtype)
        if key not in arrays:
            h = rng.random(shape)
            if np.dtype(dtype).kind == "c":
                h = h + 1j * rng.random(shape)
            if len(arrays) > 8:
                arrays.clear()
            arrays[key] = gp.asarray(h.astype(dtype))
        return arrays[key]

    print("family shape1 shape2 dtype mode direct_us fft_us model_direct_us model_fft_us",
          flush=True)
    for family, s1, s2, dtype, mode in cases(quick):
        a, k = array(s1, dtype), array(s2, dtype)
        model_fft, model_direct = signal.conv_costs(s1, s2, dtype, dtype, mode)
        times = {}
        for method in ("direct", "fft"):
            if method == "direct" and model_direct > MAX_DIRECT_SECONDS:
                times[method] = None
                continue
            n = 5 if (model_direct if method == "direct" else model_fft) > 2e-3 else 15
            times[method] = timed(lambda: signal.convolve(a, k, mode=mode, method=method),
                                  n=n, warmup=2)[0] * 1e-6
        records.append({"family": family, "shape1": list(s1), "shape2": list(s2), "dtype": dtype,
                        "mode": mode, "direct": times["direct"], "fft": times["fft"]})
        us = ["-" if t is None else f"{t * 1e6:.1f}" for t in (times["direct"], times["fft"])]
        print(f"{family} {s1} {s2} {dtype} {mode} {us[0]} {us[1]} "
              f"{model_direct * 1e6:.1f} {model_fft * 1e6:.1f}", flush=True)
    with open(out_path, "w") as f:
        json.dump({"device": gp.cuda.Device().name, "records": records}, f, indent=1)
    print(f"wrote {len(records)} cases to {out_path}")


def _weighted_fit(rows, times):
    """Least squares on relative error: rows . c ~= times, each row divided
    by its time.  Non-negative constants (a negative one is fixed at 0 and
    the rest refitted)."""
    a = np.array(rows, float) / np.array(times, float)[:, None]
    b = np.ones(len(times))
    free = list(range(a.shape[1]))
    while True:
        c = np.zeros(a.shape[1])
        c[free] = np.linalg.lstsq(a[:, free], b, rcond=None)[0]
        neg = [j for j in free if c[j] < 0]
        if not neg:
            return c
        free = [j for j in free if j not in neg]


def record_work(r):
    """signal._conv_work of a measured record: ({direct term: amount},
    {FFT term: amount})."""
    from gpuarr.scipy import signal
    dt = np.dtype(r["dtype"])
    return signal._conv_work(tuple(r["shape1"]), tuple(r["shape2"]), dt, dt, r["mode"])


def _fit_engine(pairs):
    """{term: seconds} fitted to [(work terms, measured seconds)]."""
    terms = sorted({t for work, _ in pairs for t in work})
    c = _weighted_fit([[work.get(t, 0.0) for t in terms] for work, _ in pairs],
                      [sec for _, sec in pairs])
    return dict(zip(terms, map(float, c)))


def fit_constants(records, work):
    """The cost model's seconds fitted to measured records and their
    record_work: ({direct term: seconds}, {FFT term: seconds})."""
    direct = _fit_engine([(w[0], r["direct"]) for r, w in zip(records, work)
                          if r["direct"] is not None])
    return direct, _fit_engine([(w[1], r["fft"]) for r, w in zip(records, work)])


def _price(costs, work):
    return sum(costs.get(t, math.nan) * v for t, v in work.items())


def _dict_line(name, d):
    return f"{name} = {{" + ", ".join(f'"{k}": {v:.3g}' for k, v in d.items()) + "}"


def fit(path):
    from gpuarr.scipy import signal
    data = json.load(open(path))
    recs = data["records"]
    work = [record_work(r) for r in recs]
    dcost, fcost = fit_constants(recs, work)
    print(f"# fitted to {len(recs)} cases on {data.get('device', '?')} ({path})")
    print(_dict_line("DIRECT_COSTS", dcost))
    print(_dict_line("FFT_COSTS", fcost))

    print("\nfamily shape2 dtype mode | direct_us measured / current / fitted | "
          "fft_us measured / current / fitted | auto current, fitted | faster")
    wrong = {"current": [], "fitted": []}
    crossover = {}
    for r, (dwork, fwork) in zip(recs, work):
        s1, s2 = tuple(r["shape1"]), tuple(r["shape2"])
        cur_f, cur_d = signal.conv_costs(s1, s2, r["dtype"], r["dtype"], r["mode"])
        fit_d, fit_f = _price(dcost, dwork), _price(fcost, fwork)
        d, f = r["direct"], r["fft"]
        faster = "fft" if d is None or f < d else "direct"
        picks = {"current": "fft" if cur_f < cur_d else "direct",
                 "fitted": "fft" if not fit_d <= fit_f else "direct"}
        best = min(t for t in (d, f) if t is not None)
        for name, pick in picks.items():
            chosen = f if pick == "fft" else d
            if chosen is None or chosen > SLOWER * best:
                wrong[name].append((r, pick, math.inf if chosen is None else chosen / best))
        key = (r["family"], r["dtype"], r["mode"])
        crossover.setdefault(key, None)
        if faster == "fft" and (crossover[key] is None or s2[0] < crossover[key]):
            crossover[key] = s2[0]
        dm = "-" if d is None else f"{d * 1e6:.1f}"
        print(f"{r['family']} {s2} {r['dtype']} {r['mode']} | {dm} / {cur_d * 1e6:.1f} / "
              f"{fit_d * 1e6:.1f} | {f * 1e6:.1f} / {cur_f * 1e6:.1f} / {fit_f * 1e6:.1f} | "
              f"{picks['current']}, {picks['fitted']} | {faster}")
    for name, bad in wrong.items():
        worst = max((x for _, _, x in bad), default=1.0)
        print(f"\n'auto' with the {name} constants picks the slower engine (> {SLOWER:.2f}x) "
              f"in {len(bad)} of {len(recs)} cases (at worst {worst:.2f}x the faster one's time)")
        for r, pick, x in bad:
            print(f"  {r['family']} {tuple(r['shape2'])} {r['dtype']} {r['mode']}: picks {pick}, "
                  f"{x:.2f}x")
    print("\ncrossover (smallest filter measured faster by FFT; None: direct throughout)")
    for (family, dtype, mode), k in crossover.items():
        print(f"  {family} {dtype} {mode}: {k}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "conv-methods.json"),
                    help="where the measured records go (JSON)")
    ap.add_argument("--fit", help="only fit the cost model to these records (no GPU)")
    ap.add_argument("--quick", action="store_true", help="float32 and float64, one mode a family")
    args = ap.parse_args()
    if args.fit:
        fit(args.fit)
        return
    measure(args.out, args.quick)
    fit(args.out)


if __name__ == "__main__":
    main()
