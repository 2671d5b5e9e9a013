#!/usr/bin/env bash
# Runs another project's CoreBluetoothMock-based test suite against BLECBM, with only the import
# changed (and what Linux forces), and prints how many of its tests pass.
#
# The suite: meech-ward/AsyncCoreBluetooth (an async wrapper of CoreBluetooth, its library built
# on CoreBluetoothMock's CBM… classes, its Swift Testing tests on CoreBluetoothMock's statics,
# CBMPeripheralSpec and a CBMPeripheralSpecDelegate). Its files are fetched, never committed:
# the library's Swift sources and its test files. The only edits made to them:
#   - `import CoreBluetoothMock` becomes `import BLECBM` (`@preconcurrency` and `@testable`
#     kept where they are);
#   - `import CoreBluetooth` becomes `import CoreBluetoothNames` (`@preconcurrency` kept): there
#     is no CoreBluetooth on Linux, and the library and its tests use a few of its names
#     (CBUUID, CBError, CBCharacteristicProperties), which CoreBluetoothMock makes aliases of
#     its own. CoreBluetoothNames is ours: BLECBM's typealias file (its DocC catalog's
#     CoreBluetoothTypeAliases.swift) made public, exporting Foundation as CoreBluetooth does.
#     (A module named CoreBluetooth would make the kit's `#if canImport(CoreBluetooth)` code
#     compile against it on a rebuild.)
# Its two other dependencies are built from their own sources at the revisions its
# Package.resolved pins: meech-ward/AsyncObservable and apple/swift-collections (DequeModule).
# The test target is compiled in Swift 5 language mode: Swift 6.3 finds a data race in three of
# its tests (a `var` a `Task {}` sets and the test reads, in NotifyCharacteristicTests) that the
# Swift 6.0 of its CI let pass, and reports it as an error in Swift 6 mode, a warning in Swift 5.
# Its CI runs `swift test --no-parallel`; here each test runs alone (`--no-parallel`, one test
# per process, on Linux's test binary), with a wall-clock bound, so that a test that waits for
# ever is reported as hung and the others still run.
#
# Usage: scripts/third-party-cbm-tests.sh [SOURCE]
#   SOURCE: a clone (or bare mirror) of meech-ward/AsyncCoreBluetooth, or its URL
#           (default: https://github.com/meech-ward/AsyncCoreBluetooth.git).
#   ASYNC_OBSERVABLE_SOURCE, SWIFT_COLLECTIONS_SOURCE: the same for the two dependencies
#           (default: their GitHub URLs).
#   THIRD_PARTY_WORK: where the package is assembled (default: a temporary directory).
#   THIRD_PARTY_REVISION: the revision to test (default: the source's HEAD).
#   THIRD_PARTY_FILTER: an extended regular expression; only the tests whose identifiers match
#           run (default: every test).
#   THIRD_PARTY_TEST_TIMEOUT: seconds each test may take before it counts as hung (default: 60).
# Exit status: 0 when every test passes. Not part of CI (it needs the other projects' sources).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
source="${1:-https://github.com/meech-ward/AsyncCoreBluetooth.git}"
observable_source="${ASYNC_OBSERVABLE_SOURCE:-https://github.com/meech-ward/AsyncObservable.git}"
collections_source="${SWIFT_COLLECTIONS_SOURCE:-https://github.com/apple/swift-collections.git}"
work="${THIRD_PARTY_WORK:-$(mktemp -d)}"
revision="${THIRD_PARTY_REVISION:-HEAD}"
mkdir -p "$work"

echo "== fetching AsyncCoreBluetooth from $source ($revision)"
rm -rf "$work/upstream"
git clone -q --no-checkout "$source" "$work/upstream"
upstream() { git -C "$work/upstream" show "$revision:$1"; }

# The dependencies, at the revisions the suite's Package.resolved pins.
pinned() { # identity in Package.resolved
    upstream Package.resolved | python3 -c '
import json, sys
pins = json.load(sys.stdin)["pins"]
print(next(p["state"]["revision"] for p in pins if p["identity"] == sys.argv[1]))' "$1"
}
dependency() { # source, directory name (the package identity), pinned identity
    local from=$1 name=$2 pin
    pin=$(pinned "$3")
    echo "== fetching $name from $from ($pin)"
    rm -rf "${work:?}/deps/$name"
    git clone -q --no-checkout "$from" "$work/deps/$name"
    git -C "$work/deps/$name" -c advice.detachedHead=false checkout -q "$pin"
}
dependency "$observable_source" AsyncObservable asyncobservable
dependency "$collections_source" swift-collections swift-collections

library="$work/Sources/AsyncCoreBluetooth"
tests="$work/Tests/AsyncCoreBluetoothTests"
rm -rf "$work/Sources" "$work/Tests"
mkdir -p "$library" "$tests" "$work/Sources/CoreBluetoothNames"
retarget() { # the import changes, and nothing else
    sed -E -e 's/^((@preconcurrency |@testable )*)import CoreBluetoothMock$/\1import BLECBM/' \
        -e 's/^((@preconcurrency )?)import CoreBluetooth$/\1import CoreBluetoothNames/'
}
changed=0
cbm_imports=0
take() { # path in the suite's repository, destination
    local source_path=$1 destination=$2 lines cbm
    mkdir -p "$(dirname "$destination")"
    upstream "$source_path" | retarget >"$destination"
    lines=$(diff <(upstream "$source_path") "$destination" | grep -c '^>' || true)
    cbm=$(diff <(upstream "$source_path") "$destination" | grep -c '^> .*import BLECBM$' || true)
    changed=$((changed + lines))
    cbm_imports=$((cbm_imports + cbm))
    echo "   $source_path: $lines line(s) changed"
}
for file in $(git -C "$work/upstream" ls-tree -r --name-only "$revision" Sources/AsyncCoreBluetooth/ \
    | grep '\.swift$' | grep -v '\.docc/' | sort); do
    take "$file" "$library/${file#Sources/AsyncCoreBluetooth/}"
done
for file in $(git -C "$work/upstream" ls-tree -r --name-only "$revision" Tests/AsyncCoreBluetoothTests/ \
    | grep '\.swift$' | sort); do
    take "$file" "$tests/${file#Tests/AsyncCoreBluetoothTests/}"
done
echo "   lines changed in the suite's files: $changed" \
    "($cbm_imports CoreBluetoothMock imports, $((changed - cbm_imports)) CoreBluetooth imports)"

# CoreBluetooth's names as aliases of BLECBM's; and, as `import CoreBluetooth` does on Apple
# platforms, Foundation (two of the suite's library files use Data and NSNumber with no import
# of Foundation of their own).
sed -e 's/^@_exported import BLECBM$/import BLECBM\n@_exported import Foundation/' \
    -e 's/^typealias /public typealias /' -e 's/^let /public let /' \
    "$repo/Sources/BLECBM/BLECBM.docc/Resources/CoreBluetoothTypeAliases.swift" \
    >"$work/Sources/CoreBluetoothNames/CoreBluetoothNames.swift"

identity="$(basename "$repo" | tr '[:upper:]' '[:lower:]')"
cat >"$work/Package.swift" <<MANIFEST
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "AsyncCoreBluetoothOnBLECBM",
    platforms: [.iOS(.v17), .macOS(.v14), .watchOS(.v10), .tvOS(.v17), .visionOS(.v2)],
    dependencies: [
        .package(path: "$repo"),
        .package(path: "deps/AsyncObservable"),
        .package(path: "deps/swift-collections"),
    ],
    targets: [
        .target(name: "CoreBluetoothNames", dependencies: [.product(name: "BLECBM", package: "$identity")]),
        .target(
            name: "AsyncCoreBluetooth",
            dependencies: [
                "CoreBluetoothNames",
                .product(name: "BLECBM", package: "$identity"),
                .product(name: "AsyncObservable", package: "AsyncObservable"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]),
        .testTarget(
            name: "AsyncCoreBluetoothTests",
            dependencies: [
                "AsyncCoreBluetooth", "CoreBluetoothNames",
                .product(name: "BLECBM", package: "$identity"),
                .product(name: "AsyncObservable", package: "AsyncObservable"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]),
    ]
)
MANIFEST

echo "== building in $work"
if ! swift build --package-path "$work" --build-tests >"$work/build.log" 2>&1; then
    grep -E '^/.*error:' "$work/build.log" | sort -u | head -n 60 || true
    echo "the suite did not build (log: $work/build.log)"
    exit 1
fi
grep -E '^/.*warning:' "$work/build.log" | grep -v '/deps/' | sort -u | head -n 30 || true

echo "== running AsyncCoreBluetooth's tests, each in a process of its own (a test that waits for ever would"
echo "   hold up every test after it: each gets ${THIRD_PARTY_TEST_TIMEOUT:-60} s of wall-clock time)"
binary="$(swift build --package-path "$work" --show-bin-path)/AsyncCoreBluetoothOnBLECBMPackageTests.xctest"
logs="$work/test-logs"
rm -rf "$logs"
mkdir -p "$logs"
mapfile -t all_tests < <("$binary" --testing-library swift-testing --list-tests 2>/dev/null | grep -E "${THIRD_PARTY_FILTER:-.}")
passed=0
failed=()
for test in "${all_tests[@]}"; do
    pattern=$(printf '%s' "$test" | sed -e 's/[][().*+?^$|\\]/\\&/g')
    log="$logs/$(printf '%s' "$test" | tr -c 'A-Za-z0-9_.\n' '_').log"
    set +e
    NO_COLOR=1 timeout "${THIRD_PARTY_TEST_TIMEOUT:-60}" "$binary" --testing-library swift-testing \
        --no-parallel --filter "^${pattern}" >"$log" 2>&1
    status=$?
    set -e
    if [ "$status" -eq 0 ] && grep -qE 'Test run with 1 test .* passed' "$log"; then
        passed=$((passed + 1))
        echo "   passed: $test"
    elif [ "$status" -eq 124 ]; then
        failed+=("$test")
        echo "   HUNG:   $test (still waiting after ${THIRD_PARTY_TEST_TIMEOUT:-60} s; log: $log)"
    else
        failed+=("$test")
        echo "   FAILED: $test (log: $log)"
        grep -E 'Test .* recorded an issue|Fatal error' "$log" | sed -e 's/^/       /' | head -n 5 || true
    fi
done
echo "== AsyncCoreBluetooth's tests on BLECBM: $passed/${#all_tests[@]} passed" \
    "($changed lines of its files changed)"
[ "${#failed[@]}" -eq 0 ]
