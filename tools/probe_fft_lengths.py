"""Probe: cuFFT's time for a 2-d real transform and its inverse of every
square length L that is a product of 2, 3, 5, 7 (and 11, 13, for
comparison) from 2048 to 2700, float64 and float32: the measurements
behind gpuarr.scipy.signal._length_cost, which picks the FFT
convolution's cyclic lengths.  Prints one line per length: dtype, L, its
factors, R2C and C2R median microseconds (gpuarr.fft.rfft2/irfft2, plans
warm), and the model's cost per point.

    python tools/probe_fft_lengths.py [--lo 2048] [--hi 2700]
"""
import argparse
import faulthandler

import numpy as np

faulthandler.dump_traceback_later(280, exit=True)

import gpuarr as gp  # noqa: E402
from gpuarr.scipy.signal import _length_cost  # noqa: E402
from _probe import timed  # noqa: E402


def factors(n):
    out = []
    for p in (2, 3, 5, 7, 11, 13):
        k = 0
        while n % p == 0:
            n //= p
            k += 1
        if k:
            out.append(f"{p}^{k}" if k > 1 else str(p))
    return "*".join(out) if n == 1 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lo", type=int, default=2048)
    ap.add_argument("--hi", type=int, default=2700)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print("dtype L factors r2c_us c2r_us model_cost_per_point")
    for dt in (np.float64, np.float32):
        for n in range(args.lo, args.hi + 1):
            f = factors(n)
            if f is None:
                continue
            x = gp.asarray(rng.random((n, n)).astype(dt))
            spec = gp.fft.rfft2(x)
            r2c = timed(lambda: gp.fft.rfft2(x), n=15)[0]
            c2r = timed(lambda: gp.fft.irfft2(spec, s=(n, n)), n=15)[0]
            model = _length_cost(n) / n if set(_primes(n)) <= {2, 3, 5, 7} else float("nan")
            print(f"{np.dtype(dt).name} {n} {f} {r2c:.1f} {c2r:.1f} {model:.1f}", flush=True)


def _primes(n):
    return [p for p in (2, 3, 5, 7, 11, 13) if n % p == 0]


if __name__ == "__main__":
    main()
