"""Cases of issue 8: sigma clipping, labels, source measurements and the
lesson's whole pipeline."""
import numpy as np

from _checks import EXACT
from _inputs import N4M, labelled, segmented, sky
from _lesson import lesson_clipper
from _registry import Host, Registry

CASES = Registry()
case, fresh_case = CASES.case, CASES.fresh_case


def check_clipped(got):
    """sigma_clip's survivors against the lesson's clipper run by NumPy."""
    want = lesson_clipper(sky().ravel())
    if got.size != want.size:
        return f"{got.size} survivors, NumPy's clipper {want.size}"
    if not np.isclose(got.std(), want.std(), rtol=1e-5):
        return f"std {got.std()}, NumPy {want.std()}"
    return None


def four_steps(xp, data_host):
    """The lesson's whole pipeline, transfers included: background by
    clipping, segmentation at 5 sigma, labelling, positions and fluxes."""
    data = xp.asarray(data_host)
    clipped = lesson_clipper(data.ravel(), xp=xp)
    threshold = 5 * xp.std(clipped)
    segmented_image = xp.where(data > threshold, 1, 0)
    labels, n = xp.ndimage.label(segmented_image)
    index = xp.arange(1, n + 1)
    positions = xp.ndimage.center_of_mass(data, labels, index)
    fluxes = xp.ndimage.sum_labels(data, labels, index)
    return xp.asnumpy(xp.asarray(positions)), xp.asnumpy(fluxes)


@case("sigma_clip_2048", issue=8, desc="stats.sigma_clip, the lesson's mode (strict, to convergence)",
      size="2048^2 f32", goal="<= 0.3 ms", bytes=4 * N4M * 6, requires=("stats.sigma_clip",),
      reference=False, setup=lambda: (sky(),), check=lambda got, ref: check_clipped(got))
def sigma_clip(xp, data):
    return lambda: xp.stats.sigma_clip(data, sigma=3, maxiters=None, masked=False,
                                       inclusive=False)


@case("label_2048", issue=8, desc="ndimage.label of the segmented sky", size="2048^2 i64",
      goal="<= 0.1 ms", bytes=N4M * (8 + 4), cupy_ref="0.51 ms", cpu=True, tol=EXACT,
      requires=("scipy.ndimage.label",), setup=lambda: (segmented(),))
def label(xp, segmented_image):
    return lambda: xp.ndimage.label(segmented_image)


@case("label_lesson_2048", issue=22, desc="the lesson's own label call: float64 output= "
      "made by empty(), the count read back", size="2048^2 i64 -> f64", goal="<= 80 us",
      bytes=N4M * (8 + 8), cupy_ref="", cpu=True, tol=EXACT,
      requires=("empty", "scipy.ndimage.label"), setup=lambda: (segmented(),))
def label_lesson(xp, segmented_image):
    def call():
        labelled_image = xp.empty(segmented_image.shape)
        number_of_sources = xp.ndimage.label(segmented_image, output=labelled_image)
        return labelled_image, int(number_of_sources)
    return call


@case("com_sum_labels", issue=8, desc="center_of_mass + sum_labels for every label",
      size="2048^2 f32, ~500 labels", goal="<= 50 us", bytes=N4M * 8, cupy_ref="4.18 ms",
      cpu=True, tol=(1e-4, 1e-6),
      requires=("arange", "scipy.ndimage.center_of_mass", "scipy.ndimage.sum_labels"),
      setup=lambda: (sky(), *labelled()))
def measure_sources(xp, data, labels, n):
    index = xp.arange(1, n + 1)
    return lambda: (xp.ndimage.center_of_mass(data, labels, index),
                    xp.ndimage.sum_labels(data, labels, index))


@case("pipeline_4step", issue=8, desc="clip, segment, label, measure; transfers included",
      size="2048^2 f32", goal="<= 2 ms", h2d=4 * N4M, cupy_ref="26.6 ms", cpu=True,
      tol=(1e-4, 1e-6),
      requires=("median", "std", "greater", "less", "add", "subtract", "multiply", "where",
                "arange", "ndarray.compress", "scipy.ndimage.label",
                "scipy.ndimage.center_of_mass", "scipy.ndimage.sum_labels"),
      setup=lambda: (Host(sky()),))
def pipeline(xp, data):
    return lambda: four_steps(xp, data)
