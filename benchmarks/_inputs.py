"""The cases' inputs: the lesson's sizes and images, made on the host."""
import functools

import numpy as np

GiB = 1 << 30
N4M = 2048 * 2048        # the lesson's image, as a vector
NOISE = 0.0133           # the lesson's background sigma, Jy/beam


def host_random(n, dtype=np.float32, seed=0):
    """n values uniform on [0, 1): a 4M-element random block tiled, so 1 GiB
    inputs take a fraction of a second to make."""
    block = np.random.default_rng(seed).random(min(n, 1 << 22)).astype(dtype)
    return np.resize(block, n)


@functools.lru_cache(maxsize=None)
def sky():
    """A synthetic 2048x2048 float32 radio image like the lesson's GMRT one:
    Gaussian noise of sigma NOISE plus 500 Gaussian sources of 8 to 200 sigma."""
    rng = np.random.default_rng(2048)
    img = rng.normal(0.0, NOISE, (2048, 2048)).astype(np.float32)
    r, n = 12, 500
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    ys, xs = rng.integers(r, 2048 - r, (2, n))
    peaks = NOISE * 10 ** rng.uniform(0.9, 2.3, n)
    widths = rng.uniform(1.0, 3.0, n)
    for y, x, peak, w in zip(ys, xs, peaks, widths):
        img[y - r:y + r + 1, x - r:x + r + 1] += peak * np.exp(-(xx * xx + yy * yy) / (2 * w * w))
    return img


@functools.lru_cache(maxsize=None)
def segmented():
    return np.where(sky() > 5 * NOISE, 1, 0)


@functools.lru_cache(maxsize=None)
def labelled():
    import scipy.ndimage
    return scipy.ndimage.label(segmented())


def deltas_and_gauss():
    """The lesson's convolution inputs: a Dirac every 16 pixels, 15x15 Gaussian."""
    deltas = np.zeros((2048, 2048))
    deltas[8::16, 8::16] = 1
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    dst = np.sqrt(x * x + y * y)
    sigma, muu = 1, 0.000
    gauss = np.exp(-((dst - muu) ** 2 / (2.0 * sigma ** 2)))
    return deltas, gauss
