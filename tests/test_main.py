"""`python -m gpuarr`, the main job: the lesson's four steps on the CPU and
the GPU.  Without a GPU (CI, or CUDA_VISIBLE_DEVICES hiding it) it runs the
CPU half and says why the GPU half did not run; on a GPU it runs both, and
the positions and fluxes agree.  Either way it writes a valid PNG."""
import os
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_main(tmp_path, *args, hide_gpu=False):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=ROOT,
               MPLBACKEND="Agg")
    if hide_gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    proc = subprocess.run([sys.executable, "-m", "gpuarr", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240)
    return proc.returncode, proc.stdout + proc.stderr


def read_png(path):
    """(width, height, channels, pixels or None): checks the signature,
    every chunk's CRC, IHDR and the size of the decompressed image; the
    pixels come back when every row uses filter 0 (gpuarr's own writer)."""
    raw = open(path, "rb").read()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, chunks = 8, []
    while pos < len(raw):
        (length,) = struct.unpack(">I", raw[pos:pos + 4])
        kind, body = raw[pos + 4:pos + 8], raw[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", raw[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, f"bad CRC in {kind!r}"
        chunks.append((kind, body))
        pos += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert depth == 8 and colour in (2, 6) and interlace == 0
    channels = 3 if colour == 2 else 4
    data = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(data) == h * (1 + w * channels)
    rows = np.frombuffer(data, np.uint8).reshape(h, 1 + w * channels)
    pixels = rows[:, 1:].reshape(h, w, channels) if not rows[:, 0].any() else None
    return w, h, channels, pixels


def check_picture(path, size):
    w, h, channels, pixels = read_png(path)
    if pixels is not None:          # gpuarr's writer: title, image (sources in red), scale
        assert w == size and h > size + 20
        red = (pixels[..., 0] > 200) & (pixels[..., 1] < 80) & (pixels[..., 2] < 80)
        assert red.sum() > 30          # one circle at least
    else:                           # matplotlib's figure
        assert w >= 300 and h >= 300
    text = main_module().png_text(path)
    assert text["Software"].startswith("gpuarr") and "sources above 5 sigma" in text["Title"]


def main_module():
    import gpuarr.__main__
    return gpuarr.__main__


def test_cpu_half_without_a_gpu(tmp_path):
    """The CPU half runs and the output says why the GPU half did not."""
    pytest.importorskip("scipy")
    png = tmp_path / "sky.png"
    rc, out = run_main(tmp_path, "--size", "256", "--png", str(png), "--cpu-repeat", "1",
                       hide_gpu=True)
    assert rc == 0, out
    for i in range(1, 5):
        assert f"[{i}/4] CPU" in out, out
    assert "GPU half skipped:" in out and "[1/4] GPU" not in out, out
    reason = out.split("GPU half skipped:")[1].splitlines()[0].strip()
    assert len(reason) > 10, out
    assert "sources" in out
    check_picture(png, 256)


def test_cpu_only_flag_and_no_png(tmp_path):
    pytest.importorskip("scipy")
    rc, out = run_main(tmp_path, "--size", "128", "--cpu-only", "--no-png", "--cpu-repeat", "1")
    assert rc == 0, out
    assert "GPU half skipped: --cpu-only given" in out
    assert not list(tmp_path.glob("*.png"))


def test_fits_path_and_bad_input(tmp_path):
    pytest.importorskip("scipy")
    from gpuarr import datasets
    image = datasets.synthetic_sky(128)
    path = datasets.write_fits(tmp_path / "image.fits", image[None])
    rc, out = run_main(tmp_path, str(path), "--cpu-only", "--no-png", "--cpu-repeat", "1")
    assert rc == 0, out
    assert "image.fits" in out and "128 x 128" in out
    rc, out = run_main(tmp_path, str(tmp_path / "missing.fits"), "--cpu-only")
    assert rc != 0 and "missing.fits" in out
    cube = datasets.write_fits(tmp_path / "cube.fits", np.zeros((2, 8, 8), np.float32))
    rc, out = run_main(tmp_path, str(cube), "--cpu-only")
    assert rc != 0 and "2-d image" in out


@pytest.mark.gpu
def test_main_job_on_the_gpu(tmp_path):
    pytest.importorskip("scipy")
    png = tmp_path / "sky.png"
    rc, out = run_main(tmp_path, "--size", "512", "--png", str(png), "--repeat", "3",
                       "--cpu-repeat", "1")
    assert rc == 0, out
    for i in range(1, 5):
        assert f"[{i}/4] CPU" in out and f"[{i}/4] GPU" in out, out
    assert "speedups" in out and "all four steps" in out, out
    assert "The CPU and GPU positions agree: True" in out, out
    assert "The CPU and GPU fluxes agree: True" in out, out
    counts = out.split("number of sources: ")[1].splitlines()[0]
    cpu, gpu = (int(part.split()[-1]) for part in counts.split(","))
    assert cpu == gpu > 10, out
    check_picture(png, 512)


def test_self_check_without_gpu(tmp_path):
    rc, out = run_main(tmp_path, "--self-check", hide_gpu=True)
    assert rc == 0, out
    assert "No GPU can be used" in out


def picture_line(out):
    lines = [line for line in out.splitlines() if line.startswith("picture: ")]
    assert len(lines) == 1, out
    return lines[0][len("picture: "):].split(" (")[0]


def test_default_picture_name_and_no_overwrite(tmp_path):
    """Without --png the picture is gpuarr_sky<size>.png in the current
    folder, printed; a second run of the same input replaces its own
    picture; a file of that name holding something else is kept and the
    picture gets a numbered name, which the output says."""
    common = ("--size", "96", "--cpu-only", "--cpu-repeat", "1")
    rc, out = run_main(tmp_path, *common)
    assert rc == 0, out
    first = tmp_path / "gpuarr_sky96.png"
    assert picture_line(out) == str(first) and first.exists()
    check_picture(first, 96)
    rc, out = run_main(tmp_path, *common)
    assert rc == 0 and picture_line(out) == str(first) and "kept" not in out, out
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["gpuarr_sky96.png"]

    other = tmp_path / "gpuarr_sky64.png"
    other.write_bytes(b"someone else's file")
    rc, out = run_main(tmp_path, "--size", "64", "--cpu-only", "--cpu-repeat", "1")
    assert rc == 0, out
    assert other.read_bytes() == b"someone else's file"
    assert picture_line(out) == str(tmp_path / "gpuarr_sky64-2.png"), out
    assert "gpuarr_sky64.png holds another picture and was kept" in out, out
    check_picture(tmp_path / "gpuarr_sky64-2.png", 64)


def test_picture_path_rules(tmp_path):
    m = main_module()
    assert m.default_picture_name(None, 2048) == "gpuarr_sky2048.png"
    assert m.default_picture_name("/data/GMRT_image_of_Galactic_Center.fits", 2048) == \
        "gpuarr_GMRT_image_of_Galactic_Center.png"
    target = str(tmp_path / "p.png")
    assert m.picture_path(target, "input A") == (target, None)
    rgb = np.zeros((4, 4, 3), np.uint8)
    m._write_png(target, rgb, {"Software": "gpuarr 0", "Source": "input A"})
    assert m.png_text(target) == {"Software": "gpuarr 0", "Source": "input A"}
    assert m.picture_path(target, "input A") == (target, None)          # its own picture
    second = str(tmp_path / "p-2.png")
    assert m.picture_path(target, "input B") == (second, target)        # another input's
    m._write_png(second, rgb, {"Software": "gpuarr 0", "Source": "input B"})
    assert m.picture_path(target, "input B") == (second, target)
    assert m.picture_path(target, "input C") == (str(tmp_path / "p-3.png"), target)
    (tmp_path / "q.png").write_text("not a picture")
    assert m.picture_path(str(tmp_path / "q.png"), "input A")[0] == str(tmp_path / "q-2.png")


def test_built_in_drawing_has_title_and_scale_bar():
    """The picture drawn without matplotlib: the title's text in the band
    above the image, and below it a colour scale that runs from white (the
    floor) to black (the maximum), with labels under it."""
    m = main_module()
    data = np.full((200, 300), 0.1, np.float32)     # mid-grey on a log scale 0.01 .. 1
    data[100, 150] = 1.0
    rgb = m.draw_picture(data, np.array([[100.0, 150.0]]), 0.01, "sky: 1 sources")
    assert rgb.shape[1] == 300 and rgb.dtype == np.uint8
    image_rows = np.flatnonzero((rgb[:, :, 0] == 127).mean(axis=1) > 0.9)
    assert image_rows.size == 200 and np.all(np.diff(image_rows) == 1)
    above, below = rgb[:image_rows[0]], rgb[image_rows[-1] + 1:]

    dark = above.sum(axis=2) < 100
    ys, xs = np.nonzero(dark)
    assert ys.size, "no title"
    expected = np.zeros((7, 6 * 14 - 1), bool)
    for k, ch in enumerate("SKY: 1 SOURCES"):
        expected[:, 6 * k:6 * k + 5] = m._glyph(ch)
    y, x = ys.min(), xs.min()
    assert np.array_equal(dark[y:y + 7, x:x + expected.shape[1]], expected)
    assert dark.sum() == expected.sum()

    red = below[:, :, 0].astype(int)
    middle = red[:, 30:270]
    ramp = [r for r in range(len(red)) if np.all(np.diff(middle[r]) <= 0) and
            middle[r, 0] - middle[r, -1] > 200]
    assert ramp, "no white-to-black scale bar"
    under = below[max(ramp) + 2:].sum(axis=2) < 100
    assert under[:, :60].sum() > 5 and under[:, -60:].sum() > 5, "no labels at the bar's ends"
