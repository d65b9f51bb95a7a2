"""Cases of issue 22: FFTs and FFT convolution."""
import numpy as np

from _inputs import N4M, host_random
from _registry import Registry

CASES = Registry()
case, fresh_case = CASES.case, CASES.fresh_case


def image_and_filter(k):
    """The lesson's image size in float64 and a random k x k filter."""
    def setup():
        rng = np.random.default_rng(22)
        return rng.random((2048, 2048)), rng.random((k, k))
    return setup


def fftconvolve_same(xp, image, kernel):
    return lambda: xp.signal.fftconvolve(image, kernel, mode="same")


def convolve_auto_same(xp, image, kernel):
    return lambda: xp.signal.convolve(image, kernel, mode="same", method="auto")


for _k, _cupy in ((31, "705 us"), (63, "648 us"), (127, "548 us")):
    case(f"fftconvolve_2048_{_k}", issue=22, desc="signal.fftconvolve(image, filter, mode='same')",
         size=f"2048^2 f64 * {_k}^2", goal="<= 0.4 ms", bytes=8 * 2 * N4M, cupy_ref=_cupy,
         tol=(1e-9, 1e-8), ref_key=f"conv_same_{_k}", requires=("scipy.signal.fftconvolve",),
         setup=image_and_filter(_k))(fftconvolve_same)
    case(f"convolve_auto_2048_{_k}", issue=22,
         desc="signal.convolve(image, filter, mode='same', method='auto')",
         size=f"2048^2 f64 * {_k}^2", goal="<= 0.4 ms", bytes=8 * 2 * N4M, tol=(1e-9, 1e-8),
         ref_key=f"conv_same_{_k}", requires=("scipy.signal.convolve",),
         setup=image_and_filter(_k))(convolve_auto_same)


@case("fft2_2048_c128", issue=22, desc="fft.fft2(x); goal: not slower than CuPy",
      size="2048^2 c128", goal="<= 1x CuPy", bytes=2 * 16 * N4M, tol=(1e-9, 1e-7),
      requires=("fft.fft2",),
      setup=lambda: (host_random(N4M, np.float64).reshape(2048, 2048)
                     + 1j * host_random(N4M, np.float64, seed=1).reshape(2048, 2048),))
def fft2(xp, x):
    return lambda: xp.fft.fft2(x)


@case("rfft_2e24_f32", issue=22, desc="fft.rfft(x); goal: not slower than CuPy",
      size="2^24 f32", goal="<= 1x CuPy", bytes=4 * (1 << 24) + 8 * ((1 << 23) + 1),
      tol=(1e-4, 0.05), requires=("fft.rfft",),
      setup=lambda: (host_random(1 << 24) - 0.5,))
def rfft(xp, x):
    return lambda: xp.fft.rfft(x)
