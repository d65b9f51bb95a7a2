"""Probe for issue 20 (tests/test_stress.py's short-lived streams): can a
block freed on a stream that is then destroyed reach a new stream while the
old stream's work on it is still queued?

The pool caches a freed block under its stream's handle and hands it out
again on that handle only (src/mempool.c), which is safe while the stream
lives.  When the stream object dies, cudaStreamDestroy returns at once and
the queued work still runs; a stream created next may get the same handle
back from the runtime, and with it the cached block.  The probe:

1. creates and destroys streams and prints whether handles come back;
2. twenty times: on stream s1, a ~50 ms spin then a fill of 1.0 into an
   array a; drops a (its block cached under s1's handle) and s1; on a new
   stream s2, a zeroed array b of the same size; waits for the device and
   counts b's non-zero elements (the fill landing in b's memory).

Prints "HAZARD" with the trials that saw it, else "no hazard seen".  With
GPUARR_POOL=0 (no cache) there can be none.

Usage: python tools/probe_stream_reuse.py   (a few seconds)
"""
import signal

signal.alarm(58)       # never hang the batch

import numpy as np  # noqa: E402

import gpuarr as gp  # noqa: E402
from gpuarr import _core  # noqa: E402
from gpuarr.cuda import runtime  # noqa: E402

khz = runtime.deviceGetAttribute(runtime.cudaDevAttrClockRate, gp.cuda.get_device_id())
print(f"pool caching: {_core._pool_caching()}")

handles = []
for _ in range(8):
    s = gp.cuda.Stream(non_blocking=True)
    handles.append(s.ptr)
    del s
print(f"handles of 8 streams made and destroyed in turn: {len(set(handles))} distinct")

n = 1 << 22
(gp.zeros(n, dtype=gp.float32) + 1).get()          # modules loaded before the timing
gp.cuda.Device().synchronize()
seen = []
for trial in range(20):
    s1 = gp.cuda.Stream(non_blocking=True)
    with s1:
        a = gp.zeros(n, dtype=gp.float32)
        _core._spin(50 * khz)                       # s1 busy for ~50 ms ...
        a.fill(1.0)                                 # ... then writes a's block
        h1 = s1.ptr
    del a, s1
    s2 = gp.cuda.Stream(non_blocking=True)
    with s2:
        b = gp.zeros(n, dtype=gp.float32)
        same = s2.ptr == h1
    gp.cuda.Device().synchronize()
    bad = int(np.count_nonzero(b.get()))
    if bad:
        seen.append((trial, same, bad))
    del b, s2
print(f"HAZARD in {len(seen)} of 20 trials (trial, same handle, non-zero elements): {seen}"
      if seen else "no hazard seen in 20 trials")
