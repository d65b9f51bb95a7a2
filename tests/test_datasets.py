"""gpuarr.datasets: the built-in synthetic sky (deterministic, with the
properties issue 8 asks for) and the FITS reader and writer (big-endian
files that astropy reads, and astropy's files read back).  No GPU needed."""
import os

import numpy as np
import pytest

from gpuarr import datasets

from _lesson import lesson_clipper


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """Every test writes its cache under its own temporary directory."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def sky():
    return datasets.synthetic_sky(2048)


# ============================================================== the sky ====

def test_deterministic():
    a = datasets.synthetic_sky(256)
    b = datasets.synthetic_sky(256)
    assert a.dtype == np.float32 and a.shape == (256, 256)
    assert a.tobytes() == b.tobytes()
    assert datasets.synthetic_sky(256, seed=1).tobytes() != a.tobytes()


def test_bad_size():
    with pytest.raises(ValueError, match="size"):
        datasets.synthetic_sky(8)
    with pytest.raises(TypeError):
        datasets.synthetic_sky("big")


def test_noise_and_central_source(sky):
    """Background sigma 0.0133 Jy/beam as the lesson's clipper finds and
    prints it (4 decimals), and a central source of about 2.5 Jy/beam."""
    assert sky.shape == (2048, 2048) and sky.dtype == np.float32
    background = lesson_clipper(sky.ravel())
    assert np.std(background) == pytest.approx(datasets.NOISE, rel=2e-3)
    assert f"{np.std(background):.4f}" == "0.0133"
    assert 0.9 * sky.size < background.size < sky.size
    centre = sky[1014:1034, 1014:1034]
    assert centre.max() == sky.max()
    assert 2.2 < sky.max() < 2.8


def test_a_few_hundred_sources_and_shells(sky):
    ndimage = pytest.importorskip("scipy.ndimage")
    std = np.std(lesson_clipper(sky.ravel()))
    _, n = ndimage.label(np.where(sky > 5 * std, 1, 0))
    assert 200 <= n <= 900
    # Shells: rings around an empty middle once the image is smoothed a
    # little (at full resolution their faint sides break up).
    smooth = ndimage.gaussian_filter(sky, 2.0)
    ring = smooth > 5 * datasets.NOISE / (2 * np.sqrt(np.pi) * 2.0)
    holes = ndimage.binary_fill_holes(ring) & ~ring
    labels, nh = ndimage.label(holes)
    areas = np.asarray(ndimage.sum_labels(holes, labels, range(1, nh + 1)))
    assert (areas > 100).sum() >= 3


def test_smaller_skies_keep_the_density():
    small = datasets.synthetic_sky(512)
    background = lesson_clipper(small.ravel())
    assert np.std(background) == pytest.approx(datasets.NOISE, rel=0.03)
    assert small.max() > 1.0


# ============================================================== FITS =======

def fits_cards(raw):
    """The header cards of a FITS file's bytes, up to END."""
    cards = []
    for i in range(0, len(raw), 80):
        card = raw[i:i + 80].decode("ascii")
        cards.append(card)
        if card.startswith("END "):
            return cards
    raise AssertionError("no END card")


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.int64, np.float32,
                                   np.float64])
def test_fits_round_trip(tmp_path, dtype, rng):
    data = (rng.standard_normal((5, 7, 3)) * 50).astype(dtype)
    path = datasets.write_fits(tmp_path / "x.fits", data, {"BUNIT": "JY/BEAM", "BMAJ": 1.5,
                                                          "NITER": 3, "FLAG": False})
    raw = open(path, "rb").read()
    assert len(raw) % 2880 == 0
    cards = fits_cards(raw)
    assert cards[0].startswith("SIMPLE  =                    T")
    bitpix = {1: 8, 2: 16, 4: 32, 8: 64}[data.itemsize] * (-1 if data.dtype.kind == "f" else 1)
    assert cards[1].split("=")[1].split("/")[0].strip() == str(bitpix)
    assert [c[:8].strip() for c in cards[2:6]] == ["NAXIS", "NAXIS1", "NAXIS2", "NAXIS3"]
    assert [int(c[10:30]) for c in cards[2:6]] == [3, 3, 7, 5]   # NAXIS1 is the last axis
    # the data block: big-endian, right after the header blocks
    start = 2880 * ((len(cards) * 80 + 2879) // 2880)
    body = raw[start:start + data.nbytes]
    assert body == data.astype(data.dtype.newbyteorder(">")).tobytes()
    back, header = datasets.read_fits(path, header=True)
    assert back.dtype == data.dtype and back.dtype.isnative
    np.testing.assert_array_equal(back, data)
    assert header["BUNIT"] == "JY/BEAM" and header["BMAJ"] == 1.5
    assert header["NITER"] == 3 and header["FLAG"] is False


def test_fits_errors(tmp_path):
    with pytest.raises(TypeError, match="complex"):
        datasets.write_fits(tmp_path / "c.fits", np.zeros(3, np.complex64))
    bad = tmp_path / "bad.fits"
    bad.write_bytes(b"NOT A FITS FILE".ljust(2880))
    with pytest.raises(ValueError, match="not a FITS file"):
        datasets.read_fits(bad)
    short = tmp_path / "short.fits"
    short.write_bytes(b"SIMPLE  =                    T")
    with pytest.raises(ValueError, match="truncated"):
        datasets.read_fits(short)
    path = datasets.write_fits(tmp_path / "t.fits", np.zeros((4, 4), np.float32))
    with open(path, "r+b") as f:
        f.truncate(2880 + 10)
    with pytest.raises(ValueError, match="truncated FITS data"):
        datasets.read_fits(path)
    with pytest.raises(FileNotFoundError):
        datasets.galactic_center_path(tmp_path / "missing.fits")


def test_cached_path_and_data(cache_dir):
    path = datasets.galactic_center_path(size=128)
    assert os.path.dirname(path) == str(cache_dir / "gpuarr")
    first = os.path.getmtime(path)
    assert datasets.galactic_center_path(size=128) == path
    assert os.path.getmtime(path) == first          # cached, not rewritten
    data, header = datasets.read_fits(path, header=True)
    assert header["BITPIX"] == -32 and header["NAXIS1"] == header["NAXIS2"] == 128
    assert header["BUNIT"] == "JY/BEAM"
    assert data.dtype == np.float32
    assert data.tobytes() == datasets.synthetic_sky(128).tobytes()
    np.testing.assert_array_equal(datasets.galactic_center(size=128), data)


def test_astropy_reads_our_file(tmp_path):
    fits = pytest.importorskip("astropy.io.fits")
    path = datasets.galactic_center_path(size=256)
    with fits.open(path) as hdul:
        hdu = hdul[0]
        assert hdu.header["BITPIX"] == -32
        assert hdu.header["NAXIS1"] == hdu.header["NAXIS2"] == 256
        assert hdu.header["BUNIT"] == "JY/BEAM"
        assert hdu.data.dtype == np.dtype(">f4")          # big-endian on disk, as the lesson's
        np.testing.assert_array_equal(hdu.data, datasets.synthetic_sky(256))


def test_real_fits_file_from_astropy(tmp_path, rng):
    """A file astropy wrote, shaped like the GMRT image (Stokes and
    frequency axes of length 1, BSCALE/BZERO scaling), read by path."""
    fits = pytest.importorskip("astropy.io.fits")
    image = rng.standard_normal((64, 48)).astype(np.float32)
    path = tmp_path / "gmrt_like.fits"
    fits.PrimaryHDU(image[None, None]).writeto(path)
    assert datasets.galactic_center_path(path) == os.fspath(path)
    got = datasets.galactic_center(path)
    assert got.shape == (64, 48) and got.dtype == np.float32
    np.testing.assert_array_equal(got, image)
    scaled = tmp_path / "scaled.fits"
    hdu = fits.PrimaryHDU(np.arange(12, dtype=np.int16).reshape(3, 4))
    hdu.header["BSCALE"] = 0.5
    hdu.header["BZERO"] = 10.0
    hdu.writeto(scaled)
    with fits.open(scaled) as hdul:
        want = hdul[0].data
    np.testing.assert_allclose(datasets.read_fits(scaled), want)
