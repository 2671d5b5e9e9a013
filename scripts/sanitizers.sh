#!/usr/bin/env bash
# Runs the whole test suite under a sanitizer:
#
#   scripts/sanitizers.sh [thread|address|all]
#
# thread:  ThreadSanitizer (data races), build in .build-tsan.
# address: AddressSanitizer with LeakSanitizer on (out-of-bounds, use-after-free, leaks),
#          build in .build-asan.
# all:     both, one after the other (the default).
#
# Each pass builds the package and its tests with the sanitizer and runs every test; any
# report fails the pass (halt_on_error), and the script exits non-zero if a pass failed.
# It prints how long each pass took and the tail of the test output; the whole output is kept
# in SCRATCH/sanitizer-tests.log. Leaks LeakSanitizer reports from outside the kit (false
# positives of the runtime and Foundation) are suppressed, each with its reason, in
# scripts/lsan-suppressions.txt; matched suppressions are listed after the run.
set -euo pipefail
cd "$(dirname "$0")/.."

which="${1:-all}"
case "$which" in
    all) passes=(thread address) ;;
    thread | address) passes=("$which") ;;
    *)
        echo "usage: scripts/sanitizers.sh [thread|address|all]" >&2
        exit 2
        ;;
esac

# Sanitizer reports should name the failing test, not the Swift runtime's own backtracer.
export SWIFT_BACKTRACE=enable=no
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=1"

status=0
for pass in "${passes[@]}"; do
    case "$pass" in
        thread) scratch=.build-tsan ;;
        address) scratch=.build-asan ;;
    esac
    echo "== $pass sanitizer: building (scratch path $scratch)"
    started=$(date +%s)
    swift build --build-tests --sanitize="$pass" --scratch-path "$scratch" 2>&1 | tail -n 3
    built=$(date +%s)
    echo "== $pass sanitizer: running every test"
    log="$scratch/sanitizer-tests.log"
    if swift test --skip-build --sanitize="$pass" --scratch-path "$scratch" --parallel > "$log" 2>&1; then
        result=passed
    else
        result=FAILED
        status=1
    fi
    tail -n 25 "$log"
    finished=$(date +%s)
    echo "$pass sanitizer: $result (build $((built - started))s, tests $((finished - built))s)"
done
exit $status
