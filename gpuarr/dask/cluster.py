"""gpuarr.dask.local_cluster: one Dask worker process per GPU of this
machine, each seeing one GPU, in one line:

    >>> from gpuarr.dask import local_cluster
    >>> client = local_cluster()          # then dask.compute(...) runs there
    >>> client.shutdown()                 # the workers and the scheduler

dask-cuda's LocalCUDACluster does the same for CuPy; this is the
distributed.SpecCluster it amounts to for gpuarr, without dask-cuda's
dependencies.
"""
import os

import numpy

__all__ = ["local_cluster"]


def local_cluster(workers=None, gpu=None, threads=1):
    """A distributed.Client on a new local cluster of `workers` worker
    processes (default: one per GPU, or 1 without a GPU), worker i given
    GPU i % the GPU count through CUDA_VISIBLE_DEVICES (the i-th of those
    this process sees, where it has CUDA_VISIBLE_DEVICES itself), `threads` threads
    each (one thread drives a GPU best), and gpuarr's Dask registrations
    made in every process.  The workers have no host memory limit: their
    chunks live on the GPU, and Dask's sizeof gives a gpuarr chunk's
    device bytes, so with the default limit (a share of the host's memory)
    a worker counted them as host memory and spilled GPU chunks to disk
    (a 32768^2 mosaic on one worker of the lent 2-GPU host: 37-41 s of
    its 54-58 s reading them back).  Nothing is spilled then: host-held
    chunks (gpuarr.keep = "host", NumPy chunks) must fit the host's memory.
    gpu=False: no GPU is assigned (NumPy chunks).  client.shutdown() stops
    the workers and the scheduler."""
    import distributed
    import gpuarr
    from ._register import register

    if gpu is None:
        gpu = gpuarr.is_available()
    gpus = gpuarr.cuda.get_device_count() if gpu else 0
    # the devices this process sees, as CUDA_VISIBLE_DEVICES names them
    visible = [d.strip() for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
               if d.strip()][:gpus] or [str(i) for i in range(gpus)]
    if workers is None:
        workers = max(gpus, 1)
    for name, value, least in (("workers", workers, 1), ("threads", threads, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)):
            raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
        if value < least:
            raise ValueError(f"{name} must be at least {least}, got {value}")
    register()
    specs = {}
    for i in range(int(workers)):
        env = {"CUDA_VISIBLE_DEVICES": visible[i % gpus]} if gpus else {}
        specs[f"worker-{i}"] = {"cls": distributed.Nanny,
                                "options": {"nthreads": int(threads), "env": env,
                                            "memory_limit": 0}}
    cluster = distributed.SpecCluster(
        workers=specs, scheduler={"cls": distributed.Scheduler,
                                  "options": {"dashboard_address": None}},
        silence_logs=40)
    client = distributed.Client(cluster)
    try:
        client.run(register)
    except BaseException:
        client.shutdown()
        raise
    return client
