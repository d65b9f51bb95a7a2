"""Issue 20: where compute-sanitizer's initcheck reports the float16 cuBLAS
product.  The suite's one initcheck finding is the cudaMemcpy that reads
back the (3, 64, 128) @ (128, 128) float16 product: every 32-byte sector of
its 49,152-byte output reported uninitialised.  This probe makes that
product three ways, each in its own process:

    GPUARR_POOL=0 compute-sanitizer --tool initcheck \
        python tools/probe_initcheck_f16.py fresh|out|f32

    fresh  a @ b into a new array (the test's call)
    out    the same product into an out= array zeroed first
    f32    the float32 product into a new array

and prints the largest error against NumPy's float64 product.  If cuBLAS
left any of the output unwritten, `out` would show zeros there (an error of
the product's size, ~30) and `fresh` whatever the allocation held; if it
wrote it all, both show float16 rounding only (~0.016 at values ~32) and the
reports of `fresh` are writes initcheck does not see.  Measured on the lent
H100 (benchmarks/results/...-session-2026-11-27e.md): fresh 1536 reports,
out 0, f32 0, the same error in fresh and out."""
import sys

import numpy as np

import gpuarr as gp

mode = sys.argv[1] if len(sys.argv) > 1 else "fresh"
if mode not in ("fresh", "out", "f32"):
    sys.exit(f"mode must be fresh, out or f32, not {mode!r}")
dtype = np.float32 if mode == "f32" else np.float16
rng = np.random.default_rng(0)
ha, hb = rng.random((3, 64, 128)).astype(dtype), rng.random((128, 128)).astype(dtype)
a, b = gp.asarray(ha), gp.asarray(hb)
if mode == "out":
    r = gp.zeros((3, 64, 128), dtype)
    gp.matmul(a, b, out=r)
else:
    r = a @ b
err = np.abs(r.get().astype(np.float64) - ha.astype(np.float64) @ hb.astype(np.float64)).max()
print(f"{mode}: largest error against NumPy's float64 product {float(err):.3g}")
