"""Built-in data for the lessons: a synthetic radio image of the sky and a
tiny FITS reader and writer, so the radio-astronomy pipeline runs with no
download and no astropy.

The image imitates the lesson's GMRT image of the Galactic Centre: 2048 x
2048 float32 pixels in Jy/beam, Gaussian noise for which the lesson's
kappa-sigma clipper measures a background sigma of 0.0133 Jy/beam (NOISE,
as the lesson shows; the noise itself has a sigma of 0.013444), a bright
extended centre peaking at about 2.5 Jy/beam, a few hundred point-like and
extended sources and a few ring-like shells (supernova remnants) -- about
500 sources above 5 sigma.  It is generated on the host with
numpy.random.default_rng and a fixed seed (the same bytes every time, in
well under a second) and cached as a big-endian FITS file under
$XDG_CACHE_HOME/gpuarr (~/.cache/gpuarr), or a temporary directory when that
is not writable.

    >>> from gpuarr import datasets
    >>> data = datasets.galactic_center()          # numpy float32 (2048, 2048)
    >>> path = datasets.galactic_center_path()     # the cached FITS file
    >>> data = datasets.galactic_center("GMRT_image_of_Galactic_Center.fits")

Every function that takes a ``path`` reads that FITS file instead of the
synthetic one (the real lesson image works).
"""
import os
import tempfile

import numpy

__all__ = ["synthetic_sky", "galactic_center", "galactic_center_path", "read_fits",
           "write_fits", "NOISE", "SEED"]

NOISE = 0.0133        # Jy/beam, the lesson's clipped background sigma
SEED = 20211209       # the fixed seed of the synthetic sky
_VERSION = 2          # bump when the generator changes (new cache file)
# The sigma the noise is drawn with, so that the lesson's clipper (median
# +- 3 std, repeated until nothing is cut) measures NOISE.  The clipper
# measures less than a Gaussian's sigma: it stops where the std of the
# normal truncated at +-3 of that std equals it, at 0.98485 sigma.  The
# faint wings of the sources below the cut add 0.45 % back (measured on the
# 2048-pixel sky: 0.013300 Jy/beam with SEED, 0.013296 to 0.013310 with
# other seeds).  NOISE / 0.98485 / 1.0045 = 0.013444.
_SIGMA = 0.013444
_BLOCK = 2880         # FITS block size
_CARD = 80            # FITS card size
_BEAM = 1.6           # beam sigma in pixels


# ============================================================== the sky ====

def _add_gaussian(img, y, x, peak, sy, sx=None, angle=0.0):
    """Add an elliptical Gaussian (sigmas sy, sx in pixels, rotated by
    angle) centred at (y, x), on a stamp of +-5 sigma."""
    sx = sy if sx is None else sx
    r = int(numpy.ceil(5 * max(sy, sx)))
    y0, y1 = max(int(y) - r, 0), min(int(y) + r + 1, img.shape[0])
    x0, x1 = max(int(x) - r, 0), min(int(x) + r + 1, img.shape[1])
    if y0 >= y1 or x0 >= x1:
        return
    yy = numpy.arange(y0, y1, dtype=numpy.float64)[:, None] - y
    xx = numpy.arange(x0, x1, dtype=numpy.float64)[None, :] - x
    c, s = numpy.cos(angle), numpy.sin(angle)
    u = c * xx + s * yy
    v = -s * xx + c * yy
    img[y0:y1, x0:x1] += (peak * numpy.exp(-0.5 * ((u / sx) ** 2 + (v / sy) ** 2))).astype(
        numpy.float32)


def _add_shell(img, y, x, radius, width, peak, rng):
    """Add a ring (a supernova-remnant shell) with a brighter side."""
    r = int(numpy.ceil(radius + 5 * width))
    y0, y1 = max(int(y) - r, 0), min(int(y) + r + 1, img.shape[0])
    x0, x1 = max(int(x) - r, 0), min(int(x) + r + 1, img.shape[1])
    yy = numpy.arange(y0, y1, dtype=numpy.float64)[:, None] - y
    xx = numpy.arange(x0, x1, dtype=numpy.float64)[None, :] - x
    rr = numpy.hypot(yy, xx)
    phase = rng.uniform(0, 2 * numpy.pi)
    limb = 0.65 + 0.35 * numpy.cos(numpy.arctan2(yy, xx) - phase)
    img[y0:y1, x0:x1] += (peak * limb * numpy.exp(-0.5 * ((rr - radius) / width) ** 2)).astype(
        numpy.float32)


def synthetic_sky(size=2048, seed=SEED):
    """A GMRT-like radio image (numpy float32, size x size, Jy/beam).

    Deterministic for a given (size, seed).  Source counts scale with the
    area, so smaller images (tests) keep the same density of sources.
    """
    if isinstance(size, bool) or not isinstance(size, (int, numpy.integer)):
        raise TypeError(f"size must be an integer number of pixels, got {type(size).__name__}")
    size = int(size)
    if size < 16:
        raise ValueError(f"size must be at least 16 pixels, got {size}")
    rng = numpy.random.default_rng(seed)
    img = rng.standard_normal((size, size), dtype=numpy.float32)
    img *= numpy.float32(_SIGMA)
    scale = (size / 2048.0) ** 2
    c = (size - 1) / 2.0
    # The Galactic Centre: a bright core in extended emission along the plane.
    _add_gaussian(img, c, c, 2.15, _BEAM)
    _add_gaussian(img, c + 0.4, c - 0.3, 0.2, 3.0)
    for _ in range(max(1, int(round(5 * scale ** 0.5)))):
        dy, dx = rng.normal(0, size / 200, 2)
        _add_gaussian(img, c + dy, c + dx, rng.uniform(0.1, 0.2), rng.uniform(3, 7),
                      rng.uniform(3, 7), rng.uniform(0, numpy.pi))
    margin = 8
    # Point-like sources: fluxes from a steep power law, most of them faint.
    n_point = int(round(250 * scale))
    flux = 0.1 * (1 - rng.random(n_point)) ** (-1 / 1.5)
    pos = rng.uniform(margin, size - margin, (n_point, 2))
    for (y, x), f in zip(pos, numpy.minimum(flux, 1.0)):
        _add_gaussian(img, y, x, f, _BEAM)
    # Extended sources: elliptical blobs a few beams across.
    n_ext = int(round(100 * scale))
    pos = rng.uniform(margin, size - margin, (n_ext, 2))
    for y, x in pos:
        _add_gaussian(img, y, x, rng.uniform(0.09, 0.3), rng.uniform(1.5, 4), rng.uniform(1.5, 4),
                      rng.uniform(0, numpy.pi))
    # Shells: supernova remnants.
    n_shell = max(1, int(round(6 * scale ** 0.5)))
    for _ in range(n_shell):
        radius = rng.uniform(12, 40) * size / 2048 + 4
        y, x = rng.uniform(radius + margin, size - radius - margin, 2)
        _add_shell(img, y, x, radius, rng.uniform(1.5, 3.0), rng.uniform(0.15, 0.25), rng)
    return img


# ============================================================== FITS =======

_BITPIX = {numpy.dtype(numpy.uint8): 8, numpy.dtype(numpy.int16): 16,
           numpy.dtype(numpy.int32): 32, numpy.dtype(numpy.int64): 64,
           numpy.dtype(numpy.float32): -32, numpy.dtype(numpy.float64): -64}
_DTYPE = {v: k for k, v in _BITPIX.items()}


def _card(key, value, comment=""):
    if isinstance(value, bool):
        text = f"{'T' if value else 'F':>20}"
    elif isinstance(value, (int, numpy.integer)):
        text = f"{int(value):>20}"
    elif isinstance(value, (float, numpy.floating)):
        text = f"{float(value):>20.12G}"
    else:
        s = str(value).replace("'", "''")
        text = f"'{s:<8}'"
    card = f"{key.upper():<8}= {text}"
    if comment:
        card += f" / {comment}"
    if len(card) > _CARD:
        raise ValueError(f"FITS card too long: {card!r}")
    return card.ljust(_CARD)


def write_fits(path, data, header=None):
    """Write ``data`` (a NumPy array of uint8, int16, int32, int64,
    float32 or float64) as the primary HDU of a FITS file: the header cards
    (SIMPLE, BITPIX, NAXIS, NAXISn, then ``header``'s key/value pairs, END)
    and the big-endian data, each padded to 2880-byte blocks.  The file is
    written to a temporary name and renamed, so readers never see half a
    file."""
    data = numpy.asarray(data)
    dtype = data.dtype.newbyteorder("=")
    if dtype not in _BITPIX:
        raise TypeError(f"FITS cannot store dtype {data.dtype}")
    cards = [_card("SIMPLE", True, "conforms to FITS standard"),
             _card("BITPIX", _BITPIX[dtype]), _card("NAXIS", data.ndim)]
    cards += [_card(f"NAXIS{i + 1}", n) for i, n in enumerate(reversed(data.shape))]
    for key, value in (header or {}).items():
        cards.append(_card(key, value))
    cards.append("END".ljust(_CARD))
    head = "".join(cards).encode("ascii")
    head += b" " * (-len(head) % _BLOCK)
    body = numpy.ascontiguousarray(data, dtype=dtype.newbyteorder(">")).tobytes()
    body += b"\0" * (-len(body) % _BLOCK)
    path = os.fspath(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(head)
        f.write(body)
    os.replace(tmp, path)
    return path


def _value(text):
    text = text.split(" /")[0].strip() if not text.lstrip().startswith("'") else text.strip()
    if text.startswith("'"):
        end = text.find("'", 1)
        while end != -1 and text[end + 1:end + 2] == "'":
            end = text.find("'", end + 2)
        return text[1:end].replace("''", "'").rstrip()
    if text in ("T", "F"):
        return text == "T"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text.replace("D", "E"))
    except ValueError:
        return text


def read_fits(path, header=False):
    """The primary image of a FITS file as a NumPy array in native byte
    order, shaped (NAXISn, ..., NAXIS1) as astropy shapes it; BSCALE/BZERO
    are applied when present.  ``header=True`` also returns the cards as a
    dict."""
    with open(path, "rb") as f:
        cards = {}
        ended = False
        while not ended:
            block = f.read(_BLOCK)
            if not cards and not block.startswith(b"SIMPLE  ="):
                raise ValueError(f"{path}: not a FITS file (it does not start with SIMPLE =)")
            if len(block) < _BLOCK:
                raise ValueError(f"{path}: truncated FITS header")
            for i in range(0, _BLOCK, _CARD):
                card = block[i:i + _CARD].decode("ascii", "replace")
                key = card[:8].strip()
                if key == "END":
                    ended = True
                    break
                if card[8:10] == "= " and key:
                    cards[key] = _value(card[10:])
        if cards.get("SIMPLE") is not True:
            raise ValueError(f"{path}: not a FITS file (SIMPLE = T missing)")
        bitpix = cards.get("BITPIX")
        if bitpix not in _DTYPE:
            raise ValueError(f"{path}: unsupported BITPIX {bitpix}")
        naxis = cards.get("NAXIS", 0)
        shape = tuple(int(cards[f"NAXIS{i}"]) for i in range(naxis, 0, -1))
        dtype = _DTYPE[bitpix].newbyteorder(">")
        count = int(numpy.prod(shape)) if shape else 0
        raw = f.read(count * dtype.itemsize)
        if len(raw) < count * dtype.itemsize:
            raise ValueError(f"{path}: truncated FITS data")
    data = numpy.frombuffer(raw, dtype=dtype).reshape(shape)
    data = data.astype(dtype.newbyteorder("="))
    scale, zero = cards.get("BSCALE", 1), cards.get("BZERO", 0)
    if scale != 1 or zero != 0:
        data = data * numpy.float32(scale) + numpy.float32(zero) if bitpix == -32 \
            else data * scale + zero
    return (data, cards) if header else data


# ============================================================== the cache ==

def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for d in (os.path.join(base, "gpuarr"), os.path.join(tempfile.gettempdir(), "gpuarr-cache")):
        try:
            os.makedirs(d, exist_ok=True)
            if os.access(d, os.W_OK):
                return d
        except OSError:
            continue
    raise OSError("no writable cache directory for gpuarr's datasets")


def galactic_center_path(path=None, *, size=2048):
    """The path of the lesson's image: ``path`` when given (it must exist),
    else the synthetic sky of ``size`` pixels square, written on first use
    and cached."""
    if path is not None:
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(path)
        return path
    cached = os.path.join(_cache_dir(), f"synthetic_sky_v{_VERSION}_{int(size)}_{SEED}.fits")
    if not os.path.isfile(cached):
        write_fits(cached, synthetic_sky(size), {
            "BUNIT": "JY/BEAM", "OBJECT": "SYNTHETIC GC", "ORIGIN": "gpuarr.datasets",
            "BMAJ": 2.3548 * _BEAM, "BMIN": 2.3548 * _BEAM})
    return cached


def galactic_center(path=None, *, size=2048):
    """The lesson's image as a NumPy float array (native byte order): the
    FITS file at ``path`` (leading axes of length 1, such as Stokes and
    frequency, dropped), or the cached synthetic sky."""
    data = read_fits(galactic_center_path(path, size=size))
    while data.ndim > 2 and data.shape[0] == 1:
        data = data[0]
    return data
