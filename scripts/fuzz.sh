#!/usr/bin/env bash
# Builds the libFuzzer targets in FuzzTesting/ (with AddressSanitizer, leak detection on) and
# runs each for SECONDS, starting from its checked-in seed corpus in Fixtures/fuzz/TARGET/.
#
#   scripts/fuzz.sh [TARGET] [SECONDS]
#
# TARGET is reassembly (Transport's Reassembler fed arbitrary packet sequences), fixtures
# (arbitrary bytes as a peripheral profile and as a scenario), scenarios (arbitrary bytes
# loaded as a scenario and, when accepted, run twice, each run within a wall-time budget),
# uuid (BluetoothUUID parsing), capture (arbitrary bytes imported as a btsnoop and as a
# PacketLogger capture), recording (arbitrary bytes read as a session recording, written back,
# and imported as a profile and a scenario) or all (the default, one after the other). SECONDS defaults to 60 per
# target.
#
# Every run is bounded: -max_total_time=SECONDS, -timeout=10 (an input taking longer is a
# hang), -rss_limit_mb=2048 and -malloc_limit_mb=512 (memory growth), -detect_leaks=1 (but for
# scenarios: libFuzzer checks for leaks as each input returns, while the runner's tasks may
# still be finishing on other threads, which it reports as leaks that do not reproduce; the
# runner's memory is checked by LeakSanitizer at the end of scripts/sanitizers.sh address). New
# inputs go to FuzzTesting/.build/corpus/TARGET (not checked in); a failing input is saved
# as FuzzTesting/.build/artifacts/TARGET/crash-* (or leak-*, timeout-*, oom-*) and the script
# exits non-zero. Reproduce one with:
#   FuzzTesting/.build/release/FuzzUUID FuzzTesting/.build/artifacts/uuid/crash-...
# then fix it, copy the input into Fixtures/fuzz/TARGET/ and add a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:-all}"
seconds="${2:-60}"
case "$target" in
    all) targets=(reassembly fixtures scenarios uuid capture recording) ;;
    reassembly | fixtures | scenarios | uuid | capture | recording) targets=("$target") ;;
    *)
        echo "usage: scripts/fuzz.sh [reassembly|fixtures|scenarios|uuid|capture|recording|all] [SECONDS]" >&2
        exit 2
        ;;
esac
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
    echo "SECONDS must be a positive whole number, not '$seconds'" >&2
    exit 2
fi

product() {
    case "$1" in
        reassembly) echo FuzzReassembly ;;
        fixtures) echo FuzzFixtures ;;
        scenarios) echo FuzzScenarioRun ;;
        uuid) echo FuzzUUID ;;
        capture) echo FuzzCapture ;;
        recording) echo FuzzRecording ;;
    esac
}

echo "== building the fuzz targets (release, -sanitize=fuzzer,address)"
swift build --package-path FuzzTesting -c release -Xswiftc -sanitize=fuzzer,address 2>&1 | tail -n 5
binaries="$(swift build --package-path FuzzTesting -c release -Xswiftc -sanitize=fuzzer,address --show-bin-path)"

status=0
for name in "${targets[@]}"; do
    corpus="FuzzTesting/.build/corpus/$name"
    artifacts="FuzzTesting/.build/artifacts/$name/"
    mkdir -p "$corpus" "$artifacts"
    log="FuzzTesting/.build/fuzz-$name.log"
    echo "== fuzzing $name for ${seconds}s (seeds: Fixtures/fuzz/$name, log: $log)"
    started=$(date +%s)
    leaks=1
    if [ "$name" = scenarios ]; then leaks=0; fi
    if SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="detect_leaks=$leaks:allocator_may_return_null=1" \
        "$binaries/$(product "$name")" "$corpus" "Fixtures/fuzz/$name" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
        -detect_leaks="$leaks" -print_final_stats=1 -artifact_prefix="$artifacts" > "$log" 2>&1; then
        runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
        peak="$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")"
        # libFuzzer's last status line: "#N ... cov: EDGES ft: FEATURES corp: INPUTS/SIZE ...".
        status_line="$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)"
        coverage="$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1 edges, \2 features, corpus \3/p' <<< "$status_line")"
        echo "$name: clean after $(($(date +%s) - started))s, $runs inputs run, peak RSS ${peak} MB; ${coverage}"
    else
        status=1
        tail -n 40 "$log"
        echo "$name: FAILED; the input is in $artifacts (reproduce: $binaries/$(product "$name") FILE)" >&2
    fi
done
exit $status
