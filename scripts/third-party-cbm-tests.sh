#!/usr/bin/env bash
# Runs another project's CoreBluetoothMock-based test suite against BLECBM, with only the import
# changed (and what Linux forces), and prints how many of its tests pass.
#
# Three suites (THIRD_PARTY_SUITE selects one; AsyncCoreBluetooth by default). In all, the files
# are fetched, never committed, and the only edits made to them are:
#   - `import CoreBluetoothMock` becomes `import BLECBM` (`@preconcurrency` and `@testable`
#     kept where they are, and the line's indentation);
#   - `import CoreBluetooth` becomes `import CoreBluetoothNames` (`@preconcurrency` kept): there
#     is no CoreBluetooth on Linux, and the suites use a few of its names (CBUUID, CBError,
#     CBCharacteristicProperties, CFAbsoluteTime), which CoreBluetoothMock makes aliases of its
#     own. CoreBluetoothNames is ours: BLECBM's typealias file (its DocC catalog's
#     CoreBluetoothTypeAliases.swift) made public, exporting Foundation as CoreBluetooth does,
#     and, on Linux, BLECBM's CFAbsoluteTime (which Apple's Foundation, so CoreBluetooth,
#     exports; Foundation on Linux does not).
#     (A module named CoreBluetooth would make the kit's `#if canImport(CoreBluetooth)` code
#     compile against it on a rebuild.)
#
# THIRD_PARTY_SUITE=AsyncCoreBluetooth: meech-ward/AsyncCoreBluetooth (an async wrapper of
# CoreBluetooth, its library built on CoreBluetoothMock's CBM… classes, its Swift Testing tests on
# CoreBluetoothMock's statics, CBMPeripheralSpec and a CBMPeripheralSpecDelegate). Its files: the
# library's Swift sources and its test files.
# Its two other dependencies are built from their own sources at the revisions its
# Package.resolved pins: meech-ward/AsyncObservable and apple/swift-collections (DequeModule).
# The test target is compiled in Swift 5 language mode: Swift 6.3 finds a data race in three of
# its tests (a `var` a `Task {}` sets and the test reads, in NotifyCharacteristicTests) that the
# Swift 6.0 of its CI let pass, and reports it as an error in Swift 6 mode, a warning in Swift 5.
# Its CI runs `swift test --no-parallel`; here each test runs alone (`--no-parallel`, one test
# per process, on Linux's test binary), with a wall-clock bound, so that a test that waits for
# ever is reported as hung and the others still run.
#
# THIRD_PARTY_SUITE=ReliaBLE: Five3Apps/ReliaBLE (a BLE library; its Swift Testing suite drives
# CoreBluetoothMock's statics and CBMPeripheralSpecs). As its own manifest does, its test target
# tests the ReliaBLEMock module: the library's Swift sources but CBCentralManagerFactory.swift,
# with its CoreBluetoothMockAliases.swift (Nordic's alias file, importing CoreBluetoothMock). Its
# dependency itsniper/Willow (logging) is built from its sources (Source/) at the revision
# ReliaBLE's Package.resolved pins, as a target of the assembled package, unchanged. What Linux
# forces:
#   - Willow's LogWriter.swift and ReliaBLE's LogWriters.swift `import os` (OSLog, OSLogType,
#     os_log), which Linux has not: the assembled package has a stand-in module `os` (OSLog,
#     OSLogType and an os_log writing to standard error; nothing else), so their files are
#     taken unchanged;
#   - CFAbsoluteTime (in its didDisconnectPeripheral:timestamp:… delegate method) comes from
#     CoreBluetoothNames, as said above.
# All three targets are compiled in Swift 6 language mode, as in its manifest. Its CI runs its
# serialized suite in one process; here, as above, each test runs alone in its own process.
#
# THIRD_PARTY_SUITE=CombineCB: kaphacius/CombineCB (a Combine wrapper of CoreBluetooth; its XCTest
# suite drives CoreBluetoothMock's statics, CBMPeripheralSpecs whose delegate returns errors, and
# waits for expectations on the main thread). Its files: the library's Swift sources (with its
# copy of Nordic's alias file, importing CoreBluetoothMock) and its test target's files (with its
# XCTestManifests.swift; not Tests/LinuxMain.swift, which SwiftPM no longer uses). Its manifest
# depends on a fork of CoreBluetoothMock only; it has no other dependency. What Linux forces:
#   - `import Combine` becomes `import OpenCombine` (indentation kept): Linux has no Combine;
#     OpenCombine (OpenCombine/OpenCombine 0.14.0, a dependency of the assembled package) has
#     the same API under that name. (Neither the library nor its tests use a Combine scheduler,
#     so OpenCombineDispatch and OpenCombineFoundation are not needed.)
#   - its two library files import CoreBluetooth (indented, in the `#else` of an `#if TEST` its
#     manifest never defines), which becomes CoreBluetoothNames, as said above.
# Its targets are compiled in Swift 5 language mode, as its manifest (tools version 5.3) makes
# them, with its test target's `TESTS` define. Its tests are XCTest's: each runs alone in its own
# process (the test binary given `Module.Class/test`), as above.
#
# Usage: scripts/third-party-cbm-tests.sh [SOURCE]
#   SOURCE: a clone (or bare mirror) of the suite's repository, or its URL (default:
#           https://github.com/meech-ward/AsyncCoreBluetooth.git, or
#           https://github.com/Five3Apps/ReliaBLE.git with THIRD_PARTY_SUITE=ReliaBLE, or
#           https://github.com/kaphacius/CombineCB.git with THIRD_PARTY_SUITE=CombineCB).
#   THIRD_PARTY_SUITE: AsyncCoreBluetooth (the default), ReliaBLE or CombineCB.
#   ASYNC_OBSERVABLE_SOURCE, SWIFT_COLLECTIONS_SOURCE: the same for AsyncCoreBluetooth's two
#           dependencies (default: their GitHub URLs).
#   WILLOW_SOURCE: the same for ReliaBLE's dependency (default: its GitHub URL).
#   THIRD_PARTY_WORK: where the package is assembled (default: a temporary directory).
#   THIRD_PARTY_REVISION: the revision to test (default: the source's HEAD).
#   THIRD_PARTY_FILTER: an extended regular expression; only the tests whose identifiers match
#           run (default: every test).
#   THIRD_PARTY_TEST_TIMEOUT: seconds each test may take before it counts as hung (default: 60).
# Exit status: 0 when every test passes. Not part of CI (it needs the other projects' sources).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
suite="${THIRD_PARTY_SUITE:-AsyncCoreBluetooth}"
case "$suite" in
AsyncCoreBluetooth) default_source=https://github.com/meech-ward/AsyncCoreBluetooth.git ;;
ReliaBLE) default_source=https://github.com/Five3Apps/ReliaBLE.git ;;
CombineCB) default_source=https://github.com/kaphacius/CombineCB.git ;;
*)
    echo "THIRD_PARTY_SUITE: AsyncCoreBluetooth, ReliaBLE or CombineCB, not $suite" >&2
    exit 2
    ;;
esac
source="${1:-$default_source}"
observable_source="${ASYNC_OBSERVABLE_SOURCE:-https://github.com/meech-ward/AsyncObservable.git}"
collections_source="${SWIFT_COLLECTIONS_SOURCE:-https://github.com/apple/swift-collections.git}"
willow_source="${WILLOW_SOURCE:-https://github.com/itsniper/Willow.git}"
work="${THIRD_PARTY_WORK:-$(mktemp -d)}"
revision="${THIRD_PARTY_REVISION:-HEAD}"
mkdir -p "$work"

echo "== fetching $suite from $source ($revision)"
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
rm -rf "$work/deps"
if [ "$suite" = AsyncCoreBluetooth ]; then
    dependency "$observable_source" AsyncObservable asyncobservable
    dependency "$collections_source" swift-collections swift-collections
elif [ "$suite" = ReliaBLE ]; then
    dependency "$willow_source" Willow willow
fi

rm -rf "$work/Sources" "$work/Tests"
mkdir -p "$work/Sources/CoreBluetoothNames"
retarget() { # the import changes, and nothing else
    sed -E -e 's/^([[:space:]]*(@preconcurrency |@testable )*)import CoreBluetoothMock$/\1import BLECBM/' \
        -e 's/^([[:space:]]*(@preconcurrency )?)import CoreBluetooth$/\1import CoreBluetoothNames/' \
        -e 's/^([[:space:]]*)import Combine$/\1import OpenCombine/'
}
changed=0
cbm_imports=0
combine_imports=0
take() { # path in the suite's repository, destination
    local source_path=$1 destination=$2 added lines cbm combine
    mkdir -p "$(dirname "$destination")"
    upstream "$source_path" | retarget >"$destination"
    added=$(diff <(upstream "$source_path") "$destination" | grep '^>' || true)
    lines=$(grep -c . <<<"$added" || true)
    cbm=$(grep -c '^> .*import BLECBM$' <<<"$added" || true)
    combine=$(grep -c '^> .*import OpenCombine$' <<<"$added" || true)
    changed=$((changed + lines))
    cbm_imports=$((cbm_imports + cbm))
    combine_imports=$((combine_imports + combine))
    echo "   $source_path: $lines line(s) changed"
}
swift_files() { # folder in the suite's repository: its Swift files, not its DocC catalog's
    git -C "$work/upstream" ls-tree -r --name-only "$revision" "$1/" | grep '\.swift$' | grep -v '\.docc/' | sort
}
take_folder() { # folder in the suite's repository (Sources/X or Tests/X), its destination here
    local file
    for file in $(swift_files "$1"); do take "$file" "$2/${file#"$1"/}"; done
}
if [ "$suite" = AsyncCoreBluetooth ] || [ "$suite" = CombineCB ]; then
    library="$work/Sources/$suite"
    tests="$work/Tests/${suite}Tests"
    take_folder "Sources/$suite" "$library"
    take_folder "Tests/${suite}Tests" "$tests"
else
    # ReliaBLEMock, as its manifest makes it: Sources/ReliaBLEMock (its alias file, and a link to
    # Sources/ReliaBLE) less ReliaBLE/CBCentralManagerFactory.swift.
    library="$work/Sources/ReliaBLEMock"
    tests="$work/Tests/ReliaBLETests"
    for file in $(swift_files Sources/ReliaBLE | grep -vx 'Sources/ReliaBLE/CBCentralManagerFactory\.swift'); do
        take "$file" "$library/ReliaBLE/${file#Sources/ReliaBLE/}"
    done
    take_folder Sources/ReliaBLEMock "$library"
    take_folder Tests/ReliaBLETests "$tests"
    # Willow's sources, unchanged, where the package's target finds them.
    mkdir -p "$work/Sources/Willow"
    cp "$work/deps/Willow/Source/"*.swift "$work/Sources/Willow/"
    # The stand-in for Apple's `os` (what Willow's and ReliaBLE's OSLogWriter, and ReliaBLE's tests
    # of it, use; nothing else).
    mkdir -p "$work/Sources/os"
    cat >"$work/Sources/os/os.swift" <<'OS'
// A stand-in for Apple's `os` module on Linux: what Willow's and ReliaBLE's OSLogWriter use.
import Foundation

public final class OSLog: Sendable {
    let prefix: String
    public init(subsystem: String, category: String) { prefix = "[\(subsystem) \(category)]" }
}

public struct OSLogType: Equatable, Sendable {  // (ReliaBLE's tests compare them)
    let name: String
    public static let `default` = OSLogType(name: "default")
    public static let info = OSLogType(name: "info")
    public static let debug = OSLogType(name: "debug")
    public static let error = OSLogType(name: "error")
}

/// Writes the arguments (the format is always "%@" in those writers) to standard error.
public func os_log(_ format: StaticString, log: OSLog, type: OSLogType, _ arguments: Any...) {
    let text = arguments.map { "\($0)" }.joined(separator: " ")
    FileHandle.standardError.write(Data("\(log.prefix) \(type.name): \(text)\n".utf8))
}
OS
fi
echo "   lines changed in the suite's files: $changed" \
    "($cbm_imports CoreBluetoothMock imports, $combine_imports Combine imports," \
    "$((changed - cbm_imports - combine_imports)) CoreBluetooth imports)"

# CoreBluetooth's names as aliases of BLECBM's; and, as `import CoreBluetooth` does on Apple
# platforms, Foundation (two of AsyncCoreBluetooth's library files use Data and NSNumber with no
# import of Foundation of their own) and CoreFoundation's CFAbsoluteTime (ReliaBLE's delegate
# uses it), which BLECBM defines on Linux.
sed -e 's/^@_exported import BLECBM$/import BLECBM\n@_exported import Foundation\n#if !canImport(Darwin)\n    @_exported import typealias BLECBM.CFAbsoluteTime\n#endif/' \
    -e 's/^typealias /public typealias /' -e 's/^let /public let /' \
    "$repo/Sources/BLECBM/BLECBM.docc/Resources/CoreBluetoothTypeAliases.swift" \
    >"$work/Sources/CoreBluetoothNames/CoreBluetoothNames.swift"

identity="$(basename "$repo" | tr '[:upper:]' '[:lower:]')"
if [ "$suite" = AsyncCoreBluetooth ]; then
    package=AsyncCoreBluetoothOnBLECBM
    cat >"$work/Package.swift" <<MANIFEST
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "$package",
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
elif [ "$suite" = CombineCB ]; then
    package=CombineCBOnBLECBM
    cat >"$work/Package.swift" <<MANIFEST
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "$package",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6)],
    dependencies: [
        .package(path: "$repo"),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", exact: "0.14.0"),
    ],
    targets: [
        .target(name: "CoreBluetoothNames", dependencies: [.product(name: "BLECBM", package: "$identity")]),
        .target(
            name: "CombineCB",
            dependencies: [
                "CoreBluetoothNames",
                .product(name: "BLECBM", package: "$identity"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(
            name: "CombineCBTests",
            dependencies: [
                "CombineCB",
                .product(name: "BLECBM", package: "$identity"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: [.define("TESTS"), .swiftLanguageMode(.v5)]),
    ]
)
MANIFEST
else
    package=ReliaBLEOnBLECBM
    cat >"$work/Package.swift" <<MANIFEST
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "$package",
    platforms: [.iOS(.v18), .macOS(.v14), .watchOS(.v10), .tvOS(.v17), .visionOS(.v2)],
    dependencies: [
        .package(path: "$repo"),
    ],
    targets: [
        .target(name: "CoreBluetoothNames", dependencies: [.product(name: "BLECBM", package: "$identity")]),
        .target(name: "os"),
        .target(name: "Willow", dependencies: ["os"], swiftSettings: [.swiftLanguageMode(.v6)]),
        .target(
            name: "ReliaBLEMock",
            dependencies: ["CoreBluetoothNames", "os", "Willow", .product(name: "BLECBM", package: "$identity")],
            swiftSettings: [.swiftLanguageMode(.v6)]),
        .testTarget(
            name: "ReliaBLETests",
            dependencies: ["ReliaBLEMock", "Willow", .product(name: "BLECBM", package: "$identity")],
            swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
MANIFEST
fi

echo "== building in $work"
if ! swift build --package-path "$work" --build-tests >"$work/build.log" 2>&1; then
    grep -E '^/.*error:' "$work/build.log" | sort -u | head -n 60 || true
    echo "the suite did not build (log: $work/build.log)"
    exit 1
fi
grep -E '^/.*warning:' "$work/build.log" | grep -v '/deps/' | sort -u | head -n 30 || true

echo "== running $suite's tests, each in a process of its own (a test that waits for ever would"
echo "   hold up every test after it: each gets ${THIRD_PARTY_TEST_TIMEOUT:-60} s of wall-clock time)"
binary="$(swift build --package-path "$work" --show-bin-path)/${package}PackageTests.xctest"
logs="$work/test-logs"
rm -rf "$logs"
mkdir -p "$logs"
if [ "$suite" = CombineCB ]; then # XCTest's tests, listed and run as Module.Class/test
    mapfile -t all_tests < <("$binary" --list-tests 2>/dev/null | grep -E '^[A-Za-z0-9_]+\.[A-Za-z0-9_]+/' |
        grep -E "${THIRD_PARTY_FILTER:-.}")
else
    mapfile -t all_tests < <("$binary" --testing-library swift-testing --list-tests 2>/dev/null |
        grep -E "${THIRD_PARTY_FILTER:-.}")
fi
passed=0
failed=()
for test in "${all_tests[@]}"; do
    pattern=$(printf '%s' "$test" | sed -e 's/[][().*+?^$|\\]/\\&/g')
    log="$logs/$(printf '%s' "$test" | tr -c 'A-Za-z0-9_.\n' '_').log"
    set +e
    if [ "$suite" = CombineCB ]; then
        timeout "${THIRD_PARTY_TEST_TIMEOUT:-60}" "$binary" "$test" >"$log" 2>&1
        status=$?
        ran_one='Executed 1 test, with 0 failures'
    else
        NO_COLOR=1 timeout "${THIRD_PARTY_TEST_TIMEOUT:-60}" "$binary" --testing-library swift-testing \
            --no-parallel --filter "^${pattern}" >"$log" 2>&1
        status=$?
        ran_one='Test run with 1 test .* passed'
    fi
    set -e
    if [ "$status" -eq 0 ] && grep -qE "$ran_one" "$log"; then
        passed=$((passed + 1))
        echo "   passed: $test"
    elif [ "$status" -eq 124 ]; then
        failed+=("$test")
        echo "   HUNG:   $test (still waiting after ${THIRD_PARTY_TEST_TIMEOUT:-60} s; log: $log)"
    else
        failed+=("$test")
        echo "   FAILED: $test (log: $log)"
        grep -E 'Test .* recorded an issue|Fatal error|error: .* : ' "$log" | sed -e 's/^/       /' | head -n 5 || true
    fi
done
echo "== $suite's tests on BLECBM: $passed/${#all_tests[@]} passed" \
    "($changed lines of its files changed)"
[ "${#failed[@]}" -eq 0 ]
