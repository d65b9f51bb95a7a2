"""Issue 21's figures on the lent GPUs: the lesson's pipeline on a chunked
mosaic through gpuarr.dask against the same four steps on the whole image
as one gpuarr array.

    python tools/probe_mosaic.py compare SIZE CHUNK [--repeat R]
        one process, Dask's synchronous scheduler: the mosaic's chunks made
        and persisted on the GPU, gpuarr.dask.mosaic.pipeline timed R times,
        then the assembled image through gpuarr.stats and
        gpuarr.scipy.ndimage (the same steps) timed R times; the answers
        compared (background sigma, count, every label, centres, fluxes) and
        the ratio of the two pipelines' times (the last run of each).
    python tools/probe_mosaic.py scale SIZE CHUNK --workers 1,2 [--repeat R]
        the pipeline on a local distributed cluster of K single-threaded
        workers, worker i on GPU i % the GPU count, for each K; Dask's task
        stream splits each step's worker time into compute and transfer.
    python tools/probe_mosaic.py save SIZE CHUNK --to DIR [--keep K] [--against DIR2]
        mosaic.run in this process (e.g. under GPUARR_GPU_MEMORY_LIMIT),
        its answers saved to DIR and compared with those saved in DIR2.

One JSON line per result (prefixed "RESULT ") for the results file.
"""
import argparse
import json
import sys
import time

import numpy as np


def emit(**kw):
    print("RESULT " + json.dumps(kw, default=float), flush=True)


def whole_steps(img):
    """The mosaic pipeline's four steps on one gpuarr array (timed each,
    synchronised): gpuarr.stats.sigma_clipped_stats in the lesson's mode,
    img > 5 std, label (int32), center_of_mass and sum_labels."""
    import gpuarr as gp
    from gpuarr.scipy import ndimage
    from gpuarr.stats import sigma_clipped_stats
    times = []

    def step(fn):
        gp.cuda.Device().synchronize()
        t = time.perf_counter()
        out = fn()
        gp.cuda.Device().synchronize()
        times.append(time.perf_counter() - t)
        return out

    std = step(lambda: float(sigma_clipped_stats(img, sigma=3, maxiters=None,
                                                 inclusive=False)[2]))
    seg = step(lambda: img > 5 * std)
    labels, count = step(lambda: ndimage.label(seg))
    index = np.arange(1, count + 1)
    com, flux = step(lambda: (np.array(ndimage.center_of_mass(img, labels, index)).reshape(-1, 2),
                              ndimage.sum_labels(img, labels, index).get()))
    return dict(std=std, count=int(count), labels=labels, positions=com, fluxes=flux,
                times=times)


def answer_diffs(positions, fluxes, want_positions, want_fluxes):
    """(largest centre difference, largest relative flux difference) of
    two runs' answers with the same count."""
    if not len(want_fluxes):
        return 0.0, 0.0
    return (float(np.max(np.abs(positions - want_positions))),
            float(np.max(np.abs(fluxes - want_fluxes) / np.maximum(np.abs(want_fluxes), 1e-30))))


def _shape(block):
    return block.shape


def count_calls(fn):
    """How many times fn calls dask.compute or dask.persist (a
    collection's own .compute()/.persist() included)."""
    import dask
    import dask.base
    n = [0]
    saved = {name: getattr(dask.base, name) for name in ("compute", "persist")}

    def counted(f):
        def call(*a, **k):
            n[0] += 1
            return f(*a, **k)
        return call
    try:
        for name, f in saved.items():
            setattr(dask.base, name, counted(f))
            setattr(dask, name, getattr(dask.base, name))
        fn()
    finally:
        for name, f in saved.items():
            setattr(dask.base, name, f)
            setattr(dask, name, f)
    return n[0]


def compare(args):
    import dask
    import gpuarr as gp
    from gpuarr.dask import mosaic
    dev = gp.cuda.Device()
    with dask.config.set(scheduler="synchronous"):
        t = time.perf_counter()
        sky = dask.persist(mosaic.synthetic_mosaic(args.size, args.chunk, xp=gp))[0]
        dev.synchronize()
        emit(what="made", seconds=time.perf_counter() - t)
        runs = []
        for r in range(args.repeat):
            res = mosaic.pipeline(sky, report=lambda line: print(line, flush=True))
            runs.append(res["times"])
            emit(what="dask_pipeline", run=r, times=res["times"], total=sum(res["times"]),
                 count=res["count"], std=float(res["std"]))
        calls = count_calls(lambda: mosaic.pipeline(sky, report=lambda _: None))
        blocks = list(sky.to_delayed().ravel())
        floor = []
        for _ in range(21):
            t = time.perf_counter()
            dask.compute(*[dask.delayed(_shape)(b) for b in blocks])
            floor.append(time.perf_counter() - t)
        emit(what="dask_floor", computes_and_persists=calls, chunks=len(blocks),
             trivial_compute_median=float(np.median(floor)), trivial_compute_min=min(floor))
        from gpuarr.dask import ndmeasure
        seg = sky > 5 * res["std"]
        dlabels, dcount = ndmeasure.label(seg)
        dlabels = dlabels.compute()
        img = sky.compute()
    assert isinstance(img, gp.ndarray) and img.shape == (args.size, args.size)
    sky = None                # the chunks go; the assembled image stays
    wruns = []
    for r in range(args.repeat):
        whole = whole_steps(img)
        wruns.append(whole["times"])
        emit(what="whole_pipeline", run=r, times=whole["times"], total=sum(whole["times"]),
             count=whole["count"], std=whole["std"])
    same_labels = int((dlabels != whole["labels"]).sum()) == 0
    pos_diff, flux_rel = answer_diffs(res["positions"], res["fluxes"], whole["positions"],
                                      whole["fluxes"])
    emit(what="compare", std_dask=float(res["std"]), std_whole=whole["std"],
         std_equal=float(res["std"]) == whole["std"], count_dask=res["count"],
         count_whole=whole["count"], label_count_dask=int(dcount), labels_equal=same_labels,
         max_abs_centre_diff=pos_diff, max_rel_flux_diff=flux_rel,
         ratio_last=sum(runs[-1]) / sum(wruns[-1]),
         ratio_best=min(map(sum, runs)) / min(map(sum, wruns)))


def scale(args):
    import dask
    import distributed
    import gpuarr as gp
    from gpuarr.dask import mosaic
    for k in [int(w) for w in args.workers.split(",")]:
        from gpuarr.dask import local_cluster
        client = local_cluster(k, True)
        try:
            t = time.perf_counter()
            sky = dask.persist(mosaic.synthetic_mosaic(args.size, args.chunk, xp=gp))[0]
            distributed.wait(sky)
            emit(what="made", workers=k, seconds=time.perf_counter() - t)
            for r in range(args.repeat):
                with distributed.get_task_stream(client) as ts:
                    t = time.perf_counter()
                    res = mosaic.pipeline(sky, report=lambda line: print(line, flush=True))
                    wall = time.perf_counter() - t
                split = {}
                for task in ts.data:
                    for ss in task.get("startstops", ()):
                        split[ss["action"]] = split.get(ss["action"], 0.0) + \
                            ss["stop"] - ss["start"]
                emit(what="scale", workers=k, run=r, times=res["times"], wall=wall,
                     count=res["count"], std=float(res["std"]),
                     worker_seconds=split, tasks=len(ts.data))
            sky = None
        finally:
            client.shutdown()


def save(args):
    """`save SIZE CHUNK --to DIR [--keep K]`: mosaic.run in this process
    (under the caller's environment, e.g. GPUARR_GPU_MEMORY_LIMIT), its
    answers saved to DIR; `--against DIR2` then compares them with a
    run saved there."""
    import os
    from gpuarr.dask import mosaic
    res = mosaic.run(args.size, args.chunk, keep=args.keep,
                     report=lambda line: print(line, flush=True))
    os.makedirs(args.to, exist_ok=True)
    np.save(os.path.join(args.to, "positions.npy"), res["positions"])
    np.save(os.path.join(args.to, "fluxes.npy"), res["fluxes"])
    with open(os.path.join(args.to, "answers.json"), "w") as f:
        json.dump(dict(std=float(res["std"]), count=int(res["count"]), times=res["times"]), f)
    emit(what="saved", to=args.to, std=float(res["std"]), count=int(res["count"]),
         times=res["times"], total=sum(res["times"]))
    if args.against:
        with open(os.path.join(args.against, "answers.json")) as f:
            other = json.load(f)
        pos = np.load(os.path.join(args.against, "positions.npy"))
        flux = np.load(os.path.join(args.against, "fluxes.npy"))
        same = other["count"] == res["count"]
        pos_diff, flux_rel = (answer_diffs(res["positions"], res["fluxes"], pos, flux) if same
                              else (None, None))
        emit(what="against", other=args.against, std_equal=other["std"] == float(res["std"]),
             count_equal=same, max_abs_centre_diff=pos_diff, max_rel_flux_diff=flux_rel)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("compare", "scale", "save"))
    p.add_argument("size", type=int)
    p.add_argument("chunk", type=int)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--workers", default="1,2")
    p.add_argument("--to", help="save: where the answers go")
    p.add_argument("--against", help="save: a folder of answers saved before, to compare with")
    p.add_argument("--keep", choices=("device", "host"), help="save: mosaic.run's keep")
    args = p.parse_args()
    {"compare": compare, "scale": scale, "save": save}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
