#!/usr/bin/env bash
# One batch on a lent GPU, from the repository root: build, the whole test
# suite with GPUARR_REQUIRE_GPU=1, then every probe (tools/probe_*.py: the
# diagnostics each area's developers want from the device), and pack all the
# logs into $OUT/batch.tar.gz (the device tool returns few files).
#
#   tools/gpu-batch.sh [--no-tests] [--no-probes] [-- pytest args]
set -uo pipefail
OUT=${OUT:-/tmp/gpuarr-batch}
mkdir -p "$OUT/logs"
tests=1 probes=1
while [ $# -gt 0 ]; do
    case "$1" in
        --no-tests) tests=0 ;;
        --no-probes) probes=0 ;;
        --) shift; break ;;
        *) break ;;
    esac
    shift
done
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 GPUARR_CUDA_ARCHS=${GPUARR_CUDA_ARCHS:-90}
t0=$(date +%s)
if ! python3 setup.py build_ext --inplace >"$OUT/logs/build.log" 2>&1; then
    tail -40 "$OUT/logs/build.log"; echo "BUILD FAILED"
    tar -C "$OUT" -czf "$OUT/batch.tar.gz" logs; exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s"
if [ $tests = 1 ]; then
    GPUARR_REQUIRE_GPU=1 timeout 300 python3 -m pytest -q -rfE -p no:cacheprovider "$@" tests \
        >"$OUT/logs/tests.log" 2>&1
    echo "tests rc=$?"
    grep -E "^(FAILED|ERROR)" "$OUT/logs/tests.log" | head -60
    tail -1 "$OUT/logs/tests.log"
fi
if [ $probes = 1 ]; then
    for p in tools/probe_*.py; do
        [ -e "$p" ] || continue
        name=$(basename "$p" .py)
        t1=$(date +%s)
        timeout 90 python3 "$p" >"$OUT/logs/$name.log" 2>&1
        echo "$name rc=$? ($(( $(date +%s) - t1 )) s)"
    done
fi
tar -C "$OUT" -czf "$OUT/batch.tar.gz" logs
rm -rf "$OUT/logs"
