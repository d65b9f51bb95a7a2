"""Cases of issue 7: convolution and filters."""
from _inputs import N4M, deltas_and_gauss, host_random
from _registry import Host, Registry

CASES = Registry()
case, fresh_case = CASES.case, CASES.fresh_case


fresh_case("first_convolve2d", issue=7, desc="fresh process: first signal.convolve2d",
           size="2048^2 f64 * 15x15", goal="<= 10 ms", cupy_ref="2.1 s",
           requires=("scipy.signal.convolve2d",),
           prep=("import importlib; signal = importlib.import_module(sp.__name__ + '.signal'); "
                 "d = xp.zeros((2048, 2048)); d[8::16, 8::16] = 1; g = xp.ones((15, 15)) / 225"),
           steps=(("convolve2d", "signal.convolve2d(d, g)"),))

CONV2D_FULL = 2062 * 2062  # 2048 + 15 - 1 squared


@case("convolve2d_2048_15", issue=7, desc="signal.convolve2d(deltas, gauss), mode full",
      size="2048^2 f64 * 15x15", goal="<= 0.1 ms", bytes=8 * (N4M + CONV2D_FULL),
      flops=2 * 225 * CONV2D_FULL, cupy_ref="1.63 ms", cpu=True, tol=(1e-9, 1e-12),
      ref_key="convolve2d", requires=("scipy.signal.convolve2d",), setup=deltas_and_gauss)
def convolve2d(xp, image, kernel):
    return lambda: xp.signal.convolve2d(image, kernel)


@case("convolve2d_2048_15_xfer", issue=7, desc="the same with both transfers, as the lesson times",
      size="2048^2 f64 * 15x15", goal="<= 3 ms", bytes=8 * (N4M + CONV2D_FULL),
      flops=2 * 225 * CONV2D_FULL, h2d=8 * (N4M + 225), d2h=8 * CONV2D_FULL,
      cupy_ref="20.2 ms", tol=(1e-9, 1e-12), ref_key="convolve2d",
      requires=("scipy.signal.convolve2d",),
      setup=lambda: tuple(map(Host, deltas_and_gauss())))
def convolve2d_xfer(xp, image, kernel):
    return lambda: xp.asnumpy(xp.signal.convolve2d(xp.asarray(image), xp.asarray(kernel)))


@case("convolve_4M_15", issue=7, desc="np.convolve(deltas.ravel(), gauss.diagonal())",
      size="4.2M f64 * 15", goal="<= 30 us", bytes=8 * 2 * N4M, flops=2 * 15 * N4M,
      cupy_ref="0.52 ms (FFT)", cpu=True, tol=(1e-9, 1e-12), requires=("convolve",),
      setup=lambda: (deltas_and_gauss()[0].ravel(), deltas_and_gauss()[1].diagonal().copy()))
def convolve(xp, signal, taps):
    return lambda: xp.convolve(signal, taps)


@case("gaussian_filter_100x1024x1024", issue=7, desc="ndimage.gaussian_filter(x, sigma=2)",
      size="100x1024^2 f32", goal="<= 2 ms", bytes=2 * 4 * 100 * 1024 * 1024,
      cupy_ref="10.5 ms", tol=(1e-4, 1e-6), requires=("scipy.ndimage.gaussian_filter",),
      setup=lambda: (host_random(100 * 1024 * 1024).reshape(100, 1024, 1024),))
def gaussian_filter(xp, x):
    return lambda: xp.ndimage.gaussian_filter(x, sigma=2)
