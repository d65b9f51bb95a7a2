#!/usr/bin/env bash
# The test suite under compute-sanitizer on a lent GPU, from the repository
# root: build gpuarr there, run shards of the suite under one tool or more
# (memcheck, racecheck, initcheck, synccheck) with GPUARR_POOL=0, so the
# sanitizer sees every allocation at its exact size, and print a summary
# per tool last.  Logs go to $OUT/sanitize/<tool>/shard-K-of-N/ (default
# OUT=/tmp/gpuarr-sanitize): pytest.log, one sanitizer-<pid>.log per process
# (child processes are sanitized too), meta.txt and unreached.txt (the
# node ids the shard selected that did not finish); the summary to
# $OUT/sanitize-summary.md.  Shards from several device calls add up:
#   python3 tools/sanitize_summary.py OUT1 OUT2 ... \
#       --out benchmarks/results/<GPU>-sanitize-<commit>.md
# which also writes <out>-unreached-<tool>.txt: the tests no call finished,
# for the next call to run as `-- @FILE`.
#
#   tools/sanitize.sh [--tool T[,T...]] [--shard K/N | --shard K1-K2/N] [--jobs J]
#                     [--timeout S] [--budget S] [--print-limit N] [--leak-check full|no]
#                     [--racecheck-report analysis|hazard|all] [--api-errors no|explicit|all]
#                     [--kernels FILTER] [--exclude-kernels FILTER] [--backtrace MODE]
#                     [--no-build] [-- pytest args]
#
# pytest args may name tests (tests/test_label.py, a node id, @file of node
# ids): then only those are sharded and run, else the whole suite.
# --tool        memcheck (default), racecheck, initcheck, synccheck, a list
#               (memcheck,racecheck) or all
# --shard       which of N equal shards (GPUARR_TEST_SHARD: every N-th test,
#               so each shard is a cross-section of the suite); a range runs
#               several, --jobs J of them at a time as separate processes on
#               the one GPU (default 1 shard of 1: the whole suite)
# --timeout S   limit of one shard (default 540 s): no test starts after
#               S - 60 s (GPUARR_TEST_DEADLINE), so the sanitizer still
#               prints its summary; the rest of the shard is reported as not
#               run; killed at S + 20 s if it still runs
# --budget S    limit of the whole call, build included (default 550 s):
#               every shard ends by then as by its own limit, and shards
#               that would start with less than 120 s left are not started
# --api-errors  compute-sanitizer's --report-api-errors (default no: the
#               suite provokes CUDA errors on purpose, e.g. a bad device
#               number, which would be counted; explicit lists them)
# --backtrace   compute-sanitizer's --show-backtrace (default device); with
#               host or yes memcheck runs without its leak check (see options())
# --kernels, --exclude-kernels   compute-sanitizer's --kernel-name and
#               --kernel-name-exclude filters (e.g. kns=label, regex=k_.*)
# The sanitizer's own options are passed only where `compute-sanitizer
# --help` lists them.  Tests that fault on purpose, fork, or time work are
# skipped under the sanitizer (GPUARR_SANITIZER: tests/conftest.py's
# SANITIZER_SKIPS and the sanitizer_skip marker).
set -uo pipefail
OUT=${OUT:-/tmp/gpuarr-sanitize}
mkdir -p "$OUT/sanitize"
OUT=$(cd "$OUT" && pwd)          # the log files are named for processes in other folders
tools=memcheck first=1 last=1 nshards=1 jobs=1 limit=540 budget=550 print_limit=100000
leak=full race_report=analysis api_errors=no kernels="" exclude_kernels="" backtrace=device
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --tool) tools="$2"; shift ;;
        --shard)
            range=${2%/*} nshards=${2#*/}
            first=${range%-*} last=${range#*-}
            shift ;;
        --jobs) jobs="$2"; shift ;;
        --timeout) limit="$2"; shift ;;
        --budget) budget="$2"; shift ;;
        --print-limit) print_limit="$2"; shift ;;
        --leak-check) leak="$2"; shift ;;
        --racecheck-report) race_report="$2"; shift ;;
        --api-errors) api_errors="$2"; shift ;;
        --kernels) kernels="$2"; shift ;;
        --exclude-kernels) exclude_kernels="$2"; shift ;;
        --backtrace) backtrace="$2"; shift ;;
        --no-build) build=0 ;;
        --) shift; break ;;
        *) break ;;
    esac
    shift
done
if ! [ "$first" -ge 1 ] 2>/dev/null || ! [ "$last" -ge "$first" ] 2>/dev/null ||
   ! [ "$nshards" -ge "$last" ] 2>/dev/null; then
    echo "--shard: K/N or K1-K2/N with 1 <= K1 <= K2 <= N"; exit 2
fi
t_start=$(date +%s)
export PATH="$PATH:${CUDA_HOME:-/usr/local/cuda}/bin:/usr/local/cuda/bin"
export PYTHONUNBUFFERED=1
export GPUARR_CUDA_ARCHS=${GPUARR_CUDA_ARCHS:-90}
export GPUARR_POOL=0 GPUARR_REQUIRE_GPU=1
export GPUARR_TEST_SEED=${GPUARR_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
if ! command -v compute-sanitizer >/dev/null; then
    echo "compute-sanitizer is not on PATH (nor in ${CUDA_HOME:-/usr/local/cuda}/bin)"; exit 1
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu, $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
version=$(compute-sanitizer --version 2>/dev/null | grep -oE "[0-9]{4}\.[0-9.]+" | head -1)
commit=${GPUARR_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}  # GPUARR_COMMIT first: a copied tree may carry a stale .git
echo "compute-sanitizer ${version:-?}; commit $commit; GPUARR_TEST_SEED=$GPUARR_TEST_SEED"
# shellcheck source=tools/_gpu_common.sh
. "$(dirname "$0")/_gpu_common.sh"
[ $build = 1 ] && build_in_place
help=$(compute-sanitizer --help 2>&1)
has() { grep -q -- "$1" <<<"$help"; }

# The sanitizer's options for one tool, into the array OPTS.
options() {
    OPTS=(--tool "$1")
    has --target-processes && OPTS+=(--target-processes all)
    has --print-limit && OPTS+=(--print-limit "$print_limit")
    has --error-exitcode && OPTS+=(--error-exitcode 86)
    has --show-backtrace && OPTS+=(--show-backtrace "$backtrace")
    has --report-api-errors && OPTS+=(--report-api-errors "$api_errors")
    has --require-cuda-init && OPTS+=(--require-cuda-init no)
    # Host backtraces include Python frames, which the sanitizer appears to
    # keep alive, and every array with them: at eeda51f, test_fft + test_sorting
    # with GPUARR_POOL=0 end with 0 bytes in use without the sanitizer and
    # 810 MB (its whole LEAK SUMMARY) under memcheck with host backtraces,
    # while the suite under device backtraces (8a891a4) had 6 leaks.  Not yet
    # confirmed at one commit with both; until then leak counts come from
    # device backtraces only.
    local lk=$leak
    [ "$backtrace" != device ] && [ "$backtrace" != no ] && lk=no
    [ "$1" = memcheck ] && has --leak-check && OPTS+=(--leak-check "$lk")
    [ "$1" = racecheck ] && has --racecheck-report && OPTS+=(--racecheck-report "$race_report")
    [ -n "$kernels" ] && has --kernel-name && OPTS+=(--kernel-name "$kernels")
    [ -n "$exclude_kernels" ] && has --kernel-name-exclude &&
        OPTS+=(--kernel-name-exclude "$exclude_kernels")
    return 0
}

# One shard: compute-sanitizer over pytest (arguments from the third on),
# its logs and meta.txt in $dir.
run_shard() {
    local tool=$1 k=$2 dir="$OUT/sanitize/$1/shard-$2-of-$nshards" t0 rc end stop
    rm -rf "$dir"; mkdir -p "$dir"
    options "$tool"
    t0=$(date +%s)
    end=$(( t0 + limit ))
    [ $end -gt $(( t_start + budget )) ] && end=$(( t_start + budget ))
    stop=$(( end - 60 ))
    {
        echo "tool=$tool"; echo "shard=$k/$nshards"; echo "gpu=$gpu"; echo "commit=$commit"
        echo "sanitizer_version=${version:-?}"; echo "seed=$GPUARR_TEST_SEED"
        echo "started=$(date -u +%Y-%m-%dT%H:%M:%S)"; echo "options=${OPTS[*]}"
        echo "pytest_args=${*:3}"
    } >"$dir/meta.txt"
    GPUARR_SANITIZER=$tool GPUARR_SANITIZER_BACKTRACE=$backtrace \
        GPUARR_TEST_SHARD=$k/$nshards GPUARR_TEST_DEADLINE=$stop GPUARR_TEST_IDS_LOG="$dir/ids" \
        timeout -k 5 $(( end - t0 + 20 )) compute-sanitizer "${OPTS[@]}" \
        --log-file "$dir/sanitizer-%p.log" \
        python3 -m pytest -q -rfE -p no:cacheprovider --durations=15 \
        --basetemp "${TMPDIR:-/tmp}/gpuarr-sanitize-$tool-$k" "${@:3}" ${suite[@]+"${suite[@]}"} \
        >"$dir/pytest.log" 2>&1
    rc=$?
    # the selected tests that did not finish, for a later call (-- @file)
    if [ -f "$dir/ids.selected" ]; then
        touch "$dir/ids.done"
        grep -vxF -f "$dir/ids.done" "$dir/ids.selected" >"$dir/unreached.txt"
    fi
    { echo "rc=$rc"; echo "seconds=$(( $(date +%s) - t0 ))"
      echo "timed_out=$([ $rc = 124 ] || [ $rc = 137 ] && echo 1 || echo 0)"; } >>"$dir/meta.txt"
    echo "$tool shard $k/$nshards: rc=$rc, $(( $(date +%s) - t0 )) s: $(tail -1 "$dir/pytest.log")"
}

# The whole suite unless the pytest arguments name tests (tests/..., or @file
# with node ids, one a line: pytest >= 8.2).
suite=(tests)
for arg in "$@"; do
    case "$arg" in tests|tests/*|@*) suite=() ;; esac
done
[ "$tools" = all ] && tools=memcheck,racecheck,initcheck,synccheck
for tool in ${tools//,/ }; do
    case "$tool" in
        memcheck|racecheck|initcheck|synccheck) ;;
        *) echo "unknown tool $tool"; exit 2 ;;
    esac
    for k in $(seq "$first" "$last"); do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
        if [ $(( t_start + budget - $(date +%s) )) -lt 120 ]; then
            echo "$tool shard $k/$nshards: not started (less than 120 s of the budget left)"
            continue
        fi
        run_shard "$tool" "$k" "$@" &
    done
done
wait
echo "=== summary ==="
python3 tools/sanitize_summary.py "$OUT" --out "$OUT/sanitize-summary.md" &&
    sed -n '1,/^## /p' "$OUT/sanitize-summary.md" | head -n -1
grep -h -A12 "^| kernel or API call" "$OUT/sanitize-summary.md" | head -40
