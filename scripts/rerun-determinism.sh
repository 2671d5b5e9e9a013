#!/usr/bin/env bash
# Runs the suite's same-seed tests in many fresh test processes and counts the runs in which
# one failed. Each of those tests runs a session, then runs it again in the same process, and
# compares the bridge logs (apps calling from the main queue and their own queues, the test's
# body on the main actor, relaunches, faults); thread timing differs from process to process,
# so a log that depends on which thread got somewhere first fails some of the runs.
#
# Usage: scripts/rerun-determinism.sh [RUNS] [FILTER]
#   RUNS:   how many test processes to run (default: 100).
#   FILTER: the `swift test --filter` of the tests to run (default: every same-seed test).
#   DETERMINISM_LOGS: where the failing runs' output is kept (default: a temporary directory).
# Prints "n/RUNS runs failed" and, for each failing run, the tests that failed.
# Exit status: 0 when no run failed. Not part of CI (a few minutes per 100 runs).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-100}"
filter="${2:-[Ss]ameSeed|sameSeedSameLog}"
logs="${DETERMINISM_LOGS:-$(mktemp -d)}"
mkdir -p "$logs"
case "$runs" in '' | *[!0-9]* | 0)
    echo "error: RUNS must be a positive whole number, not '$runs'" >&2
    exit 2
    ;;
esac

echo "== build (debug, tests)"
swift build --build-tests 2>&1 | tail -n 1

failed=0
for run in $(seq 1 "$runs"); do
    log="$logs/run-$run.log"
    if swift test --skip-build --filter "$filter" > "$log" 2>&1; then
        rm -f "$log"
    else
        failed=$((failed + 1))
        echo "run $run failed:"
        grep -a "✘ Test .* recorded an issue" "$log" | sed -E 's/ recorded an issue.*//; s/^/  /' | sort -u || true
    fi
done
echo "$failed/$runs runs failed (filter: $filter; failing runs' output in $logs)"
[ "$failed" -eq 0 ]
