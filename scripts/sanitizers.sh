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
#
# The address pass runs the Swift Testing tests with LeakSanitizer, then the XCTest tests
# without it (AddressSanitizer's other checks stay on): swift-corelibs-xctest leaks the test
# case of every async test and of every test that waits for expectations (its side table is
# all that points to it), and with it whatever the test case holds, a bridge included. What
# the XCTest helpers make is released as they document, tested in the Swift Testing suites
# (an uninstalled simulated system goes, with its bridge).
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
# Swift Testing starts every test at once, so a test's time limit runs while all the others
# share the machine: under a sanitizer (several times slower) the whole run outlasts the
# longest limits (five and ten minutes) and heavy tests fail for it, not for what they check.
# A bounded number of tests at a time keeps each test's time its own.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}"

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
    result=passed
    if [ "$pass" = address ]; then
        swift test --skip-build --sanitize="$pass" --scratch-path "$scratch" --parallel --disable-xctest \
            > "$log" 2>&1 || result=FAILED
        ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" swift test --skip-build --sanitize="$pass" \
            --scratch-path "$scratch" --parallel --disable-swift-testing >> "$log" 2>&1 || result=FAILED
    else
        swift test --skip-build --sanitize="$pass" --scratch-path "$scratch" --parallel > "$log" 2>&1 \
            || result=FAILED
    fi
    [ "$result" = passed ] || status=1
    tail -n 25 "$log"
    finished=$(date +%s)
    echo "$pass sanitizer: $result (build $((built - started))s, tests $((finished - built))s)"
done
exit $status
