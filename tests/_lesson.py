"""The lesson's own code that several test modules compare against."""
import numpy as np


def lesson_clipper(data_flat, kappa=3, xp=np):
    """The lesson's kappa_sigma_clipper, verbatim but for kappa (3 in the
    lesson) and the array module (np in the lesson; np dispatches device
    arrays to gpuarr, xp=gpuarr calls it directly)."""
    while True:
        med = xp.median(data_flat)
        std = xp.std(data_flat)
        clipped_lower = data_flat.compress(data_flat > med - kappa * std)
        clipped_both = clipped_lower.compress(clipped_lower < med + kappa * std)
        if len(clipped_both) == len(data_flat):
            break
        data_flat = clipped_both
    return data_flat
