#!/usr/bin/env bash
# The project's GPU check, run on a lent GPU machine from the repository
# root: build gpuarr there, run the whole test suite with GPUARR_REQUIRE_GPU=1,
# then the benchmarks, and print a short summary last.  Logs and results go
# to $OUT (default /tmp/gpuarr-check).
#
#   tools/gpu-check.sh [--no-bench] [--no-tests] [--bench-args "..."] [-- pytest args]
set -uo pipefail
OUT=${OUT:-/tmp/gpuarr-check}
mkdir -p "$OUT"
bench=1 tests=1 bench_args=""
while [ $# -gt 0 ]; do
    case "$1" in
        --no-bench) bench=0 ;;
        --no-tests) tests=0 ;;
        --bench-args) bench_args="$2"; shift ;;
        --) shift; break ;;
        *) break ;;
    esac
    shift
done
# shellcheck source=tools/_gpu_common.sh
. "$(dirname "$0")/_gpu_common.sh"
gpu_setup
build_in_place
# bytecode as an installed package has it (pip compiles it), so fresh-process
# timings do not include compiling gpuarr's own .py files
python3 -m compileall -q gpuarr
test_rc=skipped
if [ $tests = 1 ]; then
    GPUARR_REQUIRE_GPU=1 timeout 420 python3 -m pytest -q -rfE -p no:cacheprovider "$@" tests >"$OUT/tests.log" 2>&1
    test_rc=$?
    grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -40
fi
bench_rc=skipped
if [ $bench = 1 ]; then
    timeout 300 python3 benchmarks/run.py --out "$OUT" $bench_args >"$OUT/bench.log" 2>&1
    bench_rc=$?
    tail -60 "$OUT/bench.log"
fi
echo "=== summary ==="
[ "$tests" = 1 ] && tail -1 "$OUT/tests.log"
echo "tests rc=$test_rc bench rc=$bench_rc"
