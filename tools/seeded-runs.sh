#!/usr/bin/env bash
# The whole test suite several times on a lent GPU, from the repository
# root, each run with its own GPUARR_TEST_SEED (every test draws its random
# data from that seed and its node id: tests/conftest.py), then the
# failures per seed and per test, last.  A test failing under some seeds
# only depends on its draw; replay one with
#   GPUARR_TEST_SEED=<seed> python3 -m pytest '<node id>'
# Logs go to $OUT (default /tmp/gpuarr-seeds): run-<seed>.log, summary.txt.
#
#   tools/seeded-runs.sh [--runs K] [--seeds "S1 S2 ..."] [-n N] [--timeout S]
#                        [--no-build] [-- pytest args]
#
# --runs K      K runs with fresh seeds from /dev/urandom (default 5)
# --seeds "..." these seeds instead (e.g. to repeat a run, or to split the
#               runs over several device calls)
# -n N          each run on N pytest-xdist workers, when pytest-xdist is
#               installed (they share the one GPU: timing tests may suffer)
# --timeout S   limit of one run in seconds (default 420); at the limit pytest
#               is interrupted (SIGINT), so it still lists the failures so far;
#               a test still running after 100 s dumps every thread's stack
#               into the log (pytest's faulthandler_timeout), naming a hang
# --no-build    the extension is already built here
set -uo pipefail
OUT=${OUT:-/tmp/gpuarr-seeds}
mkdir -p "$OUT"
runs=5 seeds="" workers=0 limit=420 build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift ;;
        --seeds) seeds="$2"; shift ;;
        -n) workers="$2"; shift ;;
        --timeout) limit="$2"; shift ;;
        --no-build) build=0 ;;
        --) shift; break ;;
        *) break ;;
    esac
    shift
done
# shellcheck source=tools/_gpu_common.sh
. "$(dirname "$0")/_gpu_common.sh"
gpu_setup
[ $build = 1 ] && build_in_place
if [ -z "$seeds" ]; then
    seeds=$(for _ in $(seq "$runs"); do od -An -N4 -tu4 /dev/urandom | tr -d ' '; done)
fi
nseeds=$(wc -w <<<"$seeds")
xdist=()
if [ "$workers" -gt 0 ]; then
    if python3 -c "import xdist" 2>/dev/null; then
        xdist=(-n "$workers")
    else
        echo "pytest-xdist is not installed: the runs are serial"
    fi
fi
: >"$OUT/failures.txt"
for seed in $seeds; do
    log="$OUT/run-$seed.log"
    t0=$(date +%s)
    GPUARR_TEST_SEED=$seed GPUARR_REQUIRE_GPU=1 timeout -s INT -k 30 "$limit" python3 -m pytest -q -rfE \
        -o faulthandler_timeout=100 -p no:cacheprovider ${xdist[@]+"${xdist[@]}"} "$@" tests >"$log" 2>&1
    rc=$?
    [ $rc = 124 ] && echo "TIMEOUT after $limit s" >>"$log"
    grep -E "^(FAILED|ERROR) " "$log" | sed -E 's/ - .*//' | awk -v s="$seed" '{print s, $2}' \
        >>"$OUT/failures.txt"
    echo "seed $seed: rc=$rc, $(( $(date +%s) - t0 )) s: $(tail -1 "$log")"
done
{
    echo "=== seeded runs: $nseeds on $(cat "$OUT/gpu.txt") ==="
    for seed in $seeds; do
        n=$(awk -v s="$seed" '$1 == s' "$OUT/failures.txt" | wc -l)
        echo "seed $seed: $n failed; $(tail -1 "$OUT/run-$seed.log")"
        awk -v s="$seed" '$1 == s {print "    " $2}' "$OUT/failures.txt"
    done
    echo "--- failing tests (seeds that failed them / runs) ---"
    awk '{print $2}' "$OUT/failures.txt" | sort | uniq -c | sort -rn |
        awk -v k="$nseeds" '{printf "%s  %d/%d%s\n", $2, $1, k,
                                             ($1 < k ? "  (depends on the draw?)" : "")}'
    [ -s "$OUT/failures.txt" ] || echo "none"
} | tee "$OUT/summary.txt"
