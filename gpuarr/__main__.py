"""`python -m gpuarr`: the lesson's radio-astronomy pipeline, CPU vs GPU.

On the built-in synthetic GMRT-like sky (gpuarr.datasets; or a FITS file
given on the command line) it runs the four steps of the lesson

  1. kappa-sigma clipping of the background (median +- 3 std, strict bounds,
     until nothing is clipped),
  2. segmentation at 5 sigma with where(data > threshold, 1, 0),
  3. labelling of the segments (scipy.ndimage.label, float64 output),
  4. centre of mass and integrated flux of every source,

with NumPy/SciPy on the CPU and with gpuarr on the GPU, prints each step's
time on both (GPU times from CUDA events: the best of several runs after a
warm-up; CPU times: the best of a few runs), the speedups, the number of
sources and whether positions and fluxes agree (np.allclose), and writes a
PNG of the image (log colour scale, a title and a colour scale) with the
sources circled, to gpuarr_sky<size>.png or gpuarr_<FITS file name>.png in
the current folder unless --png says otherwise; a file of that name that
holds anything but gpuarr's picture of the same input is kept, and -2, -3,
... is added to the new file's name.  Without a GPU the CPU half runs and
the output says in one line why the GPU half did not.

    python -m gpuarr                      # the 2048 x 2048 synthetic sky
    python -m gpuarr GMRT_image_of_Galactic_Center.fits   # the lesson's image
    python -m gpuarr --size 512 --png sky.png
    python -m gpuarr --self-check         # installation check only

With --mosaic N it runs the same four steps across the chunks of an N x N
synthetic mosaic instead (gpuarr.dask.mosaic: made chunk by chunk, never
whole in host memory; gpuarr chunks on a GPU, NumPy chunks without one or
with --cpu-only), printing each step's time and the sources found:

    python -m gpuarr --mosaic 16384 --chunk 4096
    python -m gpuarr --mosaic 32768 --workers 4   # a local cluster, one worker a GPU
    GPUARR_GPU_MEMORY_LIMIT=268435456 python -m gpuarr --mosaic 16384 --chunk 2048   # kept in host memory
"""
import argparse
import os
import struct
import sys
import time
import zlib

import numpy as np

import gpuarr as gp


# ============================================================== self-check =

def self_check():
    """Versions, whether a GPU can be used, and a few operations compared
    with NumPy.  Returns the exit status."""
    driver, runtime = gp._core._versions()
    print(f"gpuarr {gp.__version__}, NumPy {np.__version__}, CUDA runtime {runtime // 1000}."
          f"{runtime % 1000 // 10}, driver {'none' if not driver else f'{driver // 1000}.{driver % 1000 // 10}'}")
    reason = _gpu_unavailable()
    if reason:
        print(f"No GPU can be used, so the device checks did not run: {reason}")
        return 0
    t = time.perf_counter()
    gp.zeros(1)
    print(f"device ready in {1e3 * (time.perf_counter() - t):.1f} ms "
          f"({gp.cuda.get_device_count()} device(s))")
    rng = np.random.default_rng()
    host = rng.standard_normal((512, 512)).astype(np.float32)
    checks = {
        "round trip": lambda d: (gp.asnumpy(d), host),
        "where": lambda d: (gp.where(d > 0.5, 1, 0).get(), np.where(host > 0.5, 1, 0)),
        "sin + cos/sqrt": lambda d: ((gp.sin(d) + gp.cos(d) / gp.sqrt(gp.abs(d) + 1)).get(),
                                     np.sin(host) + np.cos(host) / np.sqrt(np.abs(host) + 1)),
        "strided view": lambda d: (d[::-3, 1::2].T.copy().get(), host[::-3, 1::2].T),
    }
    dev = gp.asarray(host)
    failed = 0
    for name, fn in checks.items():
        got, expected = fn(dev)
        ok = got.dtype == expected.dtype and np.allclose(got, expected, rtol=1e-5, atol=1e-6)
        failed += not ok
        print(f"  {name:16s} {'ok' if ok else 'MISMATCH'}")
    print("all checks passed" if not failed else f"{failed} check(s) failed")
    return 1 if failed else 0


def _gpu_unavailable():
    """None when a GPU can be used, else the reason as a user would read it."""
    if gp.is_available():
        return None
    try:
        gp.zeros(1)
    except Exception as exc:  # the reason, as the user would see it
        return f"{type(exc).__name__}: {exc}"
    return "gpuarr.is_available() is False"


# ============================================================== timing =====

def _time_cpu(fn, repeat):
    best, result = float("inf"), None
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def _time_gpu(fn, repeat):
    """Best device time of fn over `repeat` runs after one warm-up: CUDA
    events around each call when gpuarr.cuda.Event exists, else a device
    synchronisation and the host clock."""
    result = fn()
    gp.cuda.device_synchronize()
    best = float("inf")
    event = getattr(gp.cuda, "Event", None)
    for _ in range(max(1, repeat)):
        if event is not None:
            start, stop = event(), event()
            start.record()
            result = fn()
            stop.record()
            stop.synchronize()
            best = min(best, gp.cuda.get_elapsed_time(start, stop) / 1e3)
        else:
            gp.cuda.device_synchronize()
            t = time.perf_counter()
            result = fn()
            gp.cuda.device_synchronize()
            best = min(best, time.perf_counter() - t)
    return best, result


# ============================================================== the steps ==

def _cpu_steps(data):
    """The lesson's CPU code, one callable per step."""
    from scipy.ndimage import center_of_mass, label, sum_labels

    def clip():
        # the lesson's clipper as the command shows it to the user; the tests'
        # copy (tests/_lesson.py) adds hooks and cannot be imported from here
        d = data.ravel()
        while True:
            med = np.median(d)
            std = np.std(d)
            clipped = d.compress(d > med - 3 * std)
            clipped = clipped.compress(clipped < med + 3 * std)
            if len(clipped) == len(d):
                return np.std(d)
            d = clipped

    def segment(std):
        return np.where(data > 5 * std, 1, 0)

    def labelling(segmented):
        labels = np.empty(data.shape)
        return labels, label(segmented, output=labels)

    def measure(labels, n):
        index = range(1, n + 1)
        return (np.array(center_of_mass(data, labels, index)).reshape(-1, 2),
                np.array(sum_labels(data, labels, index)))

    return clip, segment, labelling, measure


def _gpu_steps(data):
    """The same steps with gpuarr (the lesson's GPU code, with gpuarr's
    interval clipper in place of the compress loop)."""
    from gpuarr.scipy.ndimage import center_of_mass, label, sum_labels
    from gpuarr.stats import sigma_clipped_stats

    def clip():
        return sigma_clipped_stats(data, sigma=3, maxiters=None, inclusive=False)[2]

    def segment(std):
        return gp.where(data > 5 * std, 1, 0)

    def labelling(segmented):
        labels = gp.empty(data.shape)
        return labels, label(segmented, output=labels)

    def measure(labels, n):
        index = range(1, n + 1)
        return (np.array(center_of_mass(data, labels, index)).reshape(-1, 2),
                sum_labels(data, labels, index).get())

    return clip, segment, labelling, measure


_STEPS = ("kappa-sigma background", "segmentation (5 sigma)", "labelling",
          "centre of mass + flux")


def _run(steps, timer, repeat, side):
    """Run the four steps, timing each, with a progress line per step
    (its name as it starts, its time and result when done); returns
    (times, results)."""
    clip, segment, labelling, measure = steps
    times = []

    def step(i, fn, note):
        print(f"  [{i + 1}/4] {side} {_STEPS[i]:24s} ", end="", flush=True)
        t, result = timer(fn, repeat)
        times.append(t)
        print(f"{_ms(t):>11s}   {note(result)}", flush=True)
        return result

    std = step(0, clip, lambda s: f"background sigma {float(s):.6g} Jy/beam")
    segmented = step(1, lambda: segment(std), lambda _: f"threshold {5 * float(std):.6g} Jy/beam")
    labels, n = step(2, lambda: labelling(segmented), lambda r: f"{r[1]} sources")
    positions, fluxes = step(3, lambda: measure(labels, n),
                             lambda r: f"brightest {np.max(r[1]):.4g} Jy" if n else "no sources")
    return times, (float(std), n, positions, fluxes)


def _ms(seconds):
    return f"{1e3 * seconds:.3f} ms" if seconds >= 1e-3 else f"{1e6 * seconds:.1f} us"


# ============================================================== the picture

# A 5 x 7 bitmap font for the picture drawn without matplotlib: seven rows a
# glyph, five bits a row (bit 4 leftmost); text is drawn in capitals.
_FONT = {
    "0": "0e11131519110e", "1": "040c040404040e", "2": "0e11010204081f",
    "3": "1f02040201110e", "4": "02060a121f0202", "5": "1f101e0101110e",
    "6": "0608101e11110e", "7": "1f010204080808", "8": "0e11110e11110e",
    "9": "0e11110f01020c", "A": "0e1111111f1111", "B": "1e11111e11111e",
    "C": "0e11101010110e", "D": "1c12111111121c", "E": "1f10101e10101f",
    "F": "1f10101e101010", "G": "0e11101711110f", "H": "1111111f111111",
    "I": "0e04040404040e", "J": "0702020202120c", "K": "11121418141211",
    "L": "1010101010101f", "M": "111b1515111111", "N": "11111915131111",
    "O": "0e11111111110e", "P": "1e11111e101010", "Q": "0e11111115120d",
    "R": "1e11111e141211", "S": "0f10100e01011e", "T": "1f040404040404",
    "U": "1111111111110e", "V": "11111111110a04", "W": "1111111515150a",
    "X": "11110a040a1111", "Y": "1111110a040404", "Z": "1f01020408101f",
    " ": "00000000000000", ".": "00000000000c0c", ":": "000c0c000c0c00",
    "-": "0000001f000000", "_": "0000000000001f", "(": "02040808080402",
    ")": "08040202020408", "/": "00010204081000", "+": "0004041f040400",
    ",": "000000000c0408", "=": "00001f001f0000", "%": "18190204081303",
    "?": "0e110102040004",
}


def _glyph(ch):
    rows = bytes.fromhex(_FONT.get(ch, _FONT["?"]).replace(" ", ""))
    return np.array([[(r >> (4 - i)) & 1 for i in range(5)] for r in rows], dtype=bool)


def _text_width(text, scale):
    return 6 * scale * len(text) - scale


def _draw_text(rgb, text, y, x, scale, colour=(0, 0, 0)):
    """Draw `text` (in capitals) with its top-left corner at (y, x), clipped
    to the image."""
    h, w, _ = rgb.shape
    for k, ch in enumerate(text.upper()):
        mask = np.kron(_glyph(ch), np.ones((scale, scale), dtype=bool))
        top, left = y, x + 6 * scale * k
        sub = mask[:max(0, min(h - top, mask.shape[0])), :max(0, min(w - left, mask.shape[1]))]
        if top >= 0 and left >= 0 and sub.size:
            rgb[top:top + sub.shape[0], left:left + sub.shape[1]][sub] = colour


def _wrap(text, width, scale):
    """Words of `text` in lines no wider than `width` pixels."""
    lines, line = [], ""
    for word in text.split():
        candidate = f"{line} {word}".strip()
        if line and _text_width(candidate, scale) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    return lines + [line]


def _log_image(data, floor, vmax):
    """Log-scaled grey values from floor to vmax (bright = dark, as the
    lesson's gray_r)."""
    scaled = np.log10(np.clip(data, floor, vmax) / floor) / np.log10(vmax / floor)
    return (255 * (1 - np.nan_to_num(scaled))).astype(np.uint8)


def draw_picture(data, positions, floor, title):
    """The picture without matplotlib, as an (h, w, 3) uint8 array: a title
    above the image (log grey scale from `floor` to the maximum, sources
    circled in red) and a labelled colour scale bar in Jy/beam below it."""
    h, w = data.shape
    vmax = max(float(np.nanmax(data)), floor * 10)
    scale = max(1, w // 700 + 1)
    pad, line = 4 * scale, 9 * scale
    title_lines = _wrap(title, w - 2 * pad, scale)
    top = pad + line * len(title_lines) + pad
    bar_h = 8 * scale
    bottom = pad + bar_h + 2 * scale + line + pad
    rgb = np.full((top + h + bottom, w, 3), 255, np.uint8)
    for i, text in enumerate(title_lines):
        _draw_text(rgb, text, pad + i * line, pad, scale)
    grey = _log_image(data, floor, vmax)
    image = rgb[top:top + h]
    image[...] = grey[:, :, None]
    rgb[top - 1] = rgb[top + h] = 160          # the image's upper and lower edges
    angles = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    for y, x in positions:
        if not (np.isfinite(y) and np.isfinite(x)):
            continue
        yy = np.clip(np.round(y + 5 * np.sin(angles)).astype(int), 0, h - 1)
        xx = np.clip(np.round(x + 5 * np.cos(angles)).astype(int), 0, w - 1)
        image[yy, xx] = (230, 30, 30)
    # the colour scale: the same log mapping from floor to vmax, left to right
    y0, x0, x1 = top + h + pad, pad, w - pad
    ramp = floor * (vmax / floor) ** np.linspace(0, 1, max(2, x1 - x0))
    rgb[y0:y0 + bar_h, x0:x1] = _log_image(ramp, floor, vmax)[None, :, None]
    rgb[y0 - 1, x0:x1] = rgb[y0 + bar_h, x0:x1] = 0
    rgb[y0 - 1:y0 + bar_h + 1, x0 - 1] = rgb[y0 - 1:y0 + bar_h + 1, x1] = 0
    labels = [f"{floor:.3g}", "JY/BEAM (LOG)", f"{vmax:.3g}"]
    ty = y0 + bar_h + 2 * scale
    _draw_text(rgb, labels[0], ty, x0, scale)
    _draw_text(rgb, labels[1], ty, (w - _text_width(labels[1], scale)) // 2, scale)
    _draw_text(rgb, labels[2], ty, x1 - _text_width(labels[2], scale), scale)
    return rgb


def _write_png(path, rgb, text=None):
    """A minimal PNG: 8-bit RGB, no interlace, filter 0 on every row, with
    `text` (a dict) as tEXt chunks."""
    h, w, _ = rgb.shape
    raw = np.concatenate([np.zeros((h, 1), np.uint8), rgb.reshape(h, 3 * w)], axis=1)

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)))
        for key, value in (text or {}).items():
            f.write(chunk(b"tEXt", key.encode("latin-1") + b"\0" +
                          value.encode("latin-1", "replace")))
        f.write(chunk(b"IDAT", zlib.compress(raw.tobytes(), 1)))
        f.write(chunk(b"IEND", b""))


def png_text(path):
    """The tEXt chunks of a PNG file as a dict (empty for anything else)."""
    text = {}
    try:
        with open(path, "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                return text
            while True:
                head = f.read(8)
                if len(head) < 8:
                    return text
                length, kind = struct.unpack(">I4s", head)
                if kind in (b"IDAT", b"IEND"):
                    return text
                body = f.read(length)
                f.read(4)
                if kind == b"tEXt" and b"\0" in body:
                    key, value = body.split(b"\0", 1)
                    text[key.decode("latin-1")] = value.decode("latin-1")
    except OSError:
        return text


def picture_path(requested, source):
    """Where to write the picture of `source` (a text naming the input):
    `requested` unless it holds something other than gpuarr's picture of
    the same input, else the first of requested-2.png, -3, ... that is
    free or holds that picture.  Returns (path, the file that was kept or
    None)."""
    stem, ext = os.path.splitext(requested)
    k = 1
    path = requested
    while os.path.exists(path):
        text = png_text(path)
        if text.get("Software", "").startswith("gpuarr") and text.get("Source") == source:
            break
        k += 1
        path = f"{stem}-{k}{ext or '.png'}"
    return path, (requested if k > 1 else None)


def default_picture_name(fits, size):
    """gpuarr_<input>.png in the current folder: gpuarr_sky<size>.png for the
    synthetic sky, gpuarr_<file stem>.png for a FITS file."""
    if fits is None:
        return f"gpuarr_sky{size}.png"
    name = os.path.basename(os.fspath(fits))
    for ext in (".gz", ".fits", ".fit", ".fts"):
        if name.lower().endswith(ext):
            name = name[:-len(ext)]
    return f"gpuarr_{name}.png"


def write_picture(path, data, positions, sigma, title, text):
    """The image on a log scale with every source circled, a title and a
    colour scale; matplotlib (Agg) when it is installed, else draw_picture
    and a plain PNG.  `text` goes into the file's tEXt metadata.  Returns
    the writer's name."""
    floor = max(sigma, 1e-12)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import LogNorm
    except ImportError:
        _write_png(path, draw_picture(data, positions, floor, title), text)
        return "built-in PNG writer"
    fig = plt.figure(figsize=(10, 9.5), dpi=100)
    ax = fig.add_axes([0.08, 0.05, 0.8, 0.88])
    vmax = max(float(np.nanmax(data)), floor * 10)
    im = ax.imshow(np.clip(data, floor, None), cmap="gray_r",
                   norm=LogNorm(vmin=floor, vmax=vmax))
    if len(positions):
        ax.scatter(positions[:, 1], positions[:, 0], s=60, facecolors="none",
                   edgecolors="red", linewidths=0.6)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("x (pixels)")
    ax.set_ylabel("y (pixels)")
    fig.colorbar(im, cax=fig.add_axes([0.9, 0.05, 0.025, 0.88]), label="Jy/beam")
    fig.savefig(path, metadata=text)
    plt.close(fig)
    return "matplotlib"


# ============================================================== main =======

def _mosaic(parser, args):
    """--mosaic N: the pipeline across the chunks of a synthetic mosaic."""
    try:
        import dask  # noqa: F401
    except ImportError:
        parser.error('--mosaic needs Dask: pip install "gpuarr[dask]"')
    if args.workers:
        try:
            import distributed  # noqa: F401
        except ImportError:
            parser.error('--workers needs dask.distributed: pip install "gpuarr[dask]"')
    from gpuarr.dask import mosaic
    reason = "--cpu-only given" if args.cpu_only else _gpu_unavailable()
    if reason:
        print(f"NumPy chunks on the CPU: {reason}")
    try:
        mosaic.run(args.mosaic, args.chunk, args.workers, use_gpu=not reason, keep=args.keep)
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m gpuarr",
        description="The lesson's radio-astronomy pipeline (kappa-sigma clipping, "
                    "segmentation, labelling, source measurement) on the CPU and the GPU.")
    parser.add_argument("fits", nargs="?", help="a FITS image (default: the built-in "
                        "synthetic GMRT-like sky)")
    parser.add_argument("--size", type=int, default=2048,
                        help="side of the synthetic sky in pixels (default 2048)")
    parser.add_argument("--png", help="where to write the picture (default: gpuarr_sky<size>.png "
                        "or gpuarr_<FITS file name>.png in the current folder; a file that "
                        "holds something else is kept and -2, -3, ... is added to the name)")
    parser.add_argument("--no-png", action="store_true", help="do not write a picture")
    parser.add_argument("--repeat", type=int, default=20,
                        help="GPU runs per step, the best is reported (default 20)")
    parser.add_argument("--cpu-repeat", type=int, default=2,
                        help="CPU runs per step, the best is reported (default 2)")
    parser.add_argument("--cpu-only", action="store_true", help="skip the GPU half")
    parser.add_argument("--self-check", action="store_true",
                        help="only check the installation (versions, a few device operations)")
    parser.add_argument("--mosaic", type=int, metavar="N",
                        help="run the pipeline with Dask across the chunks of an N x N synthetic "
                        "mosaic instead (needs gpuarr[dask])")
    parser.add_argument("--chunk", type=int, default=4096, metavar="C",
                        help="with --mosaic: chunks of C x C pixels (default 4096)")
    parser.add_argument("--workers", type=int, default=0, metavar="K",
                        help="with --mosaic: run on a local distributed cluster of K worker "
                        "processes, worker i on GPU i modulo the GPU count (default 0: in "
                        "this process)")
    parser.add_argument("--keep", choices=("device", "host"),
                        help="with --mosaic: keep the mosaic and the pipeline's persisted arrays "
                        "on the GPU(s) or in host memory, each chunk moved to its GPU by the "
                        "task that reads it (default: host when they would not fit the GPU "
                        "memory, or GPUARR_GPU_MEMORY_LIMIT)")
    args = parser.parse_args(argv)
    if args.self_check:
        return self_check()
    if args.mosaic is not None:
        return _mosaic(parser, args)

    from gpuarr import datasets
    t = time.perf_counter()
    if args.fits is None:
        print(f"built-in synthetic sky, {args.size} x {args.size} (gpuarr.datasets; made and "
              f"cached on first use)", flush=True)
    try:
        path = datasets.galactic_center_path(args.fits, size=args.size)
        data = datasets.galactic_center(path)
    except (OSError, ValueError) as exc:
        parser.error(f"cannot read the image: {exc}")
    if data.ndim != 2:
        parser.error(f"{path}: expected a 2-d image, got shape {data.shape}")
    data = np.ascontiguousarray(data, dtype=np.float32 if data.dtype.itemsize <= 4
                                else np.float64)
    print(f"image {path}\n  {data.shape[0]} x {data.shape[1]} {data.dtype}, "
          f"max {np.nanmax(data):.4g} Jy/beam (loaded in {_ms(time.perf_counter() - t)})",
          flush=True)

    cpu = gpu = None
    try:
        import scipy  # noqa: F401
    except ImportError:
        print("CPU half skipped: SciPy, a dependency of gpuarr, is not installed "
              "(pip install scipy)")
    else:
        print("CPU (NumPy/SciPy):", flush=True)
        cpu = _run(_cpu_steps(data), _time_cpu, args.cpu_repeat, "CPU")

    reason = "--cpu-only given" if args.cpu_only else _gpu_unavailable()
    if reason:
        print(f"GPU half skipped: {reason}")
    else:
        name = gp.cuda.runtime.getDeviceProperties(gp.cuda.get_device_id())["name"] \
            if hasattr(gp.cuda.runtime, "getDeviceProperties") else "GPU"
        name = name.decode() if isinstance(name, bytes) else name
        t = time.perf_counter()
        dev = gp.asarray(data)
        gp.cuda.device_synchronize()
        print(f"GPU (gpuarr on {name}; image copied in {_ms(time.perf_counter() - t)}; "
              f"step 1 is gpuarr.stats.sigma_clipped_stats(sigma=3, maxiters=None, "
              f"inclusive=False): the lesson's clipper without compacting the data):",
              flush=True)
        gpu = _run(_gpu_steps(dev), _time_gpu, args.repeat, "GPU")

    status = 0
    if cpu and gpu:
        print("speedups (CPU time / GPU time):")
        for i, step in enumerate(_STEPS):
            print(f"  {step:24s} {cpu[0][i] / gpu[0][i]:10.1f}x")
        total_cpu, total_gpu = sum(cpu[0]), sum(gpu[0])
        print(f"  {'all four steps':24s} {total_cpu / total_gpu:10.1f}x   "
              f"({_ms(total_cpu)} vs {_ms(total_gpu)})")
        same_n = cpu[1][1] == gpu[1][1]
        pos_ok = same_n and np.allclose(cpu[1][2], gpu[1][2])
        flux_ok = same_n and np.allclose(cpu[1][3], gpu[1][3])
        print(f"background sigma: CPU {cpu[1][0]:.8g}, GPU {gpu[1][0]:.8g} Jy/beam (agree: "
              f"{bool(np.isclose(cpu[1][0], gpu[1][0], rtol=1e-5))})")
        print(f"number of sources: CPU {cpu[1][1]}, GPU {gpu[1][1]}")
        print(f"The CPU and GPU positions agree: {pos_ok}")
        print(f"The CPU and GPU fluxes agree: {flux_ok}")
        status = 0 if pos_ok and flux_ok else 1
    if not args.no_png and (cpu or gpu):
        std, n, positions, _ = (gpu or cpu)[1]
        if args.fits is None:
            label = f"synthetic sky {args.size} x {args.size}"
            source = f"{label}, seed {datasets.SEED} (gpuarr.datasets)"
        else:
            label, source = os.path.basename(args.fits), os.path.realpath(args.fits)
        requested = args.png or default_picture_name(args.fits, args.size)
        png, kept = picture_path(requested, source)
        title = f"{label}: {n} sources above 5 sigma (background sigma {std:.4g} Jy/beam)"
        writer = write_picture(png, data, positions, std, title,
                               {"Software": f"gpuarr {gp.__version__}", "Source": source,
                                "Title": title})
        print(f"picture: {os.path.abspath(png)} ({n} sources circled, {writer})")
        if kept:
            print(f"  ({kept} holds another picture and was kept)")
    return status


if __name__ == "__main__":
    sys.exit(main())
