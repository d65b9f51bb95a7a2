#!/usr/bin/env bash
# data-apis/array-api-tests against gpuarr's array API namespace (standard
# 2024.12), as issue 24 measures it: --max-examples=20, hypothesis seed 0,
# the linalg and fft extensions on (ARRAY_API_TESTS_DISABLE="linalg fft" turns
# them off, as the issue's first figures were measured).  Run on a GPU machine from the
# repository root; logs and the JSON report go to $OUT (default
# /tmp/gpuarr-array-api).
#
#   tools/array-api-tests.sh [--suite DIR] [--wheels DIR] [--module NAME] [--no-build]
#                            [-- pytest arguments]
#
# --suite DIR   a checkout of data-apis/array-api-tests at $SUITE_COMMIT with
#               its array-api submodule (the spec) at $SPEC_COMMIT; default
#               $ARRAY_API_TESTS_DIR, else shared/array-api-tests
# --wheels DIR  install the suite's requirements from wheels in DIR first
#               (pip --no-index: the GPU machine has no package index):
#               ndindex, pytest-json-report, pytest-metadata (hypothesis and
#               pytest come with gpuarr's test extras)
# --module NAME the namespace to test (default gpuarr; numpy gives NumPy's
#               figures beside gpuarr's on the same machine)
# --no-build    do not run `setup.py build_ext --inplace` first
#
# Expected failures are listed in tools/array-api-tests-xfails.txt, each with
# its reason; they are reported as xfailed (or xpassed once fixed).  The run
# stops after $ARRAY_API_TESTS_TIMEOUT seconds (default 540, inside a device
# call's 600); its log keeps what ran.  NumPy 2.4 on the development machine:
# 1250 passed, 41 failed in 40 s (CPU).
set -uo pipefail
SUITE_COMMIT=55fcc60179efa2680ddd6cd926ddf17b83530e2b
SPEC_COMMIT=5f847a3858875c682ae901aa22b0413bf24be9da
ROOT=$(pwd)
OUT=${OUT:-/tmp/gpuarr-array-api}
suite=${ARRAY_API_TESTS_DIR:-$ROOT/shared/array-api-tests}
wheels="" module=gpuarr build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --suite) suite="$2"; shift ;;
        --wheels) wheels="$2"; shift ;;
        --module) module="$2"; shift ;;
        --no-build) build=0 ;;
        --) shift; break ;;
        *) echo "unknown argument $1 (pytest arguments go after --)"; exit 2 ;;
    esac
    shift
done
mkdir -p "$OUT"
if [ ! -f gpuarr/__init__.py ]; then
    echo "run from the repository root"; exit 2
fi
if [ ! -f "$suite/array_api_tests/__init__.py" ] ||
   [ ! -d "$suite/array-api/src/array_api_stubs" ]; then
    echo "no array-api-tests checkout with its array-api submodule at $suite (see --suite)"
    exit 2
fi
for pair in "$suite:$SUITE_COMMIT" "$suite/array-api:$SPEC_COMMIT"; do
    dir=${pair%%:*} want=${pair##*:}
    got=$(git -C "$dir" rev-parse HEAD 2>/dev/null || echo unknown)
    [ "$got" = "$want" ] || echo "warning: $dir is at $got, not $want (figures may differ)"
done
if [ -n "$wheels" ]; then
    python3 -m pip install -q --no-index --find-links "$wheels" ndindex pytest-json-report \
        pytest-metadata hypothesis || { echo "installing the suite's requirements failed"; exit 1; }
fi
export PYTHONUNBUFFERED=1
# shellcheck source=tools/_gpu_common.sh
. "$(dirname "$0")/_gpu_common.sh"
[ $build = 1 ] && [ "$module" = gpuarr ] && build_in_place
xfails=()
[ "$module" = gpuarr ] && xfails=(--xfails-file "$ROOT/tools/array-api-tests-xfails.txt")
log="$OUT/array-api-tests-$module.log"
t0=$(date +%s)
(cd "$suite" && ARRAY_API_TESTS_MODULE=$module ARRAY_API_TESTS_VERSION=2024.12 \
    PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" \
    timeout "${ARRAY_API_TESTS_TIMEOUT:-540}" python3 -m pytest array_api_tests/ \
        --rootdir "$suite" -p no:cacheprovider -q -rfE --max-examples=20 --hypothesis-seed=0 \
        ${ARRAY_API_TESTS_DISABLE:+--disable-extension $ARRAY_API_TESTS_DISABLE} \
        "${xfails[@]}" --json-report --json-report-file="$OUT/report-$module.json" "$@") \
    >"$log" 2>&1
rc=$?
grep -E "^(FAILED|ERROR)" "$log" | head -80
echo "=== $module: $(tail -1 "$log") ($(( $(date +%s) - t0 )) s; log $log) rc=$rc"
exit $rc
