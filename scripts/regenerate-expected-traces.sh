#!/usr/bin/env bash
# Regenerates the golden traces in Fixtures/expected from the scenarios in Fixtures/scenarios:
# each NAME.json scenario's `mockble run --format json` output goes to Fixtures/expected/NAME.jsonl.
# Run it only when a change to the engine's output is deliberate, and review the diff:
# ScenarioGoldenTraceTests compares every run with these files byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product mockble -q
mockble="$(swift build --show-bin-path)/mockble"
mkdir -p Fixtures/expected
for scenario in Fixtures/scenarios/*.json; do
    name="$(basename "$scenario" .json)"
    # Exit status 1 (an expectation failed) still writes the trace; only bad input stops here.
    status=0
    "$mockble" run "$scenario" --format json > "Fixtures/expected/$name.jsonl" || status=$?
    if [ "$status" -eq 2 ]; then echo "bad scenario: $scenario" >&2; exit 2; fi
    echo "wrote Fixtures/expected/$name.jsonl$([ "$status" -eq 1 ] && echo ' (an expectation failed)')"
done
