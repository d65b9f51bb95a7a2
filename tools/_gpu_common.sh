# shellcheck shell=bash
# tools/_gpu_common.sh -- what the GPU scripts in tools/ share; sourced from
# the repository root, not run.  Logs go under $OUT.

# Unbuffered Python, and the GPU's name, driver and memory, printed and kept
# in $OUT/gpu.txt.
gpu_setup() {
    export PYTHONUNBUFFERED=1
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
}

# gpuarr built in place for GPUARR_CUDA_ARCHS (90 unless set), the log in
# $OUT/build.log and the time printed; the script stops with the log's end
# when the build fails.
build_in_place() {
    local t0
    export GPUARR_CUDA_ARCHS=${GPUARR_CUDA_ARCHS:-90}
    t0=$(date +%s)
    if ! python3 setup.py build_ext --inplace >"$OUT/build.log" 2>&1; then
        tail -40 "$OUT/build.log"; echo "BUILD FAILED"; exit 1
    fi
    echo "build: $(( $(date +%s) - t0 )) s (archs $GPUARR_CUDA_ARCHS)"
}
