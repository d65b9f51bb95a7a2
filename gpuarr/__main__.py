"""`python -m gpuarr`: a self-check of the installation.

Prints the versions and whether a GPU can be used; with one, moves data to
the device and back, runs a few operations and compares them with NumPy.
(The radio-astronomy main job will replace this.)"""
import sys
import time

import numpy as np

import gpuarr as gp


def main():
    driver, runtime = gp._core._versions()
    print(f"gpuarr {gp.__version__}, NumPy {np.__version__}, CUDA runtime {runtime // 1000}."
          f"{runtime % 1000 // 10}, driver {'none' if not driver else f'{driver // 1000}.{driver % 1000 // 10}'}")
    if not gp.is_available():
        try:
            gp.zeros(1)
        except gp.cuda.NoDeviceError as exc:
            print(f"No GPU can be used, so the device checks did not run: {exc}")
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


if __name__ == "__main__":
    sys.exit(main())
