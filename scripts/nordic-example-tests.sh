#!/usr/bin/env bash
# Runs Nordic's own nRF Blinky example tests (IOS-CoreBluetooth-Mock, Example/Tests) against
# BLECBM, with only what Linux forces changed, and prints how many pass.
#
# Nordic's files are fetched, never committed: the app's models, mock peripherals, typealias
# file, app delegate and string helper, and the six test classes. The only edits made to them:
#   - `import CoreBluetoothMock` becomes `import BLECBM` (`@testable` kept where it is);
#   - the app delegate's `@UIApplicationMain` line goes (there is no UIKit app on Linux).
# What stands in for UIKit is ours (scripts/nordic-example): a small UIKit module, the two
# view controllers' Bluetooth flow, and a runner that launches the app before the tests run,
# as iOS launches the host app of a test bundle.
#
# Usage: scripts/nordic-example-tests.sh [SOURCE]
#   SOURCE: a clone (or bare mirror) of NordicSemiconductor/IOS-CoreBluetooth-Mock, or its URL
#           (default: https://github.com/NordicSemiconductor/IOS-CoreBluetooth-Mock.git).
#   NORDIC_WORK: where the package is assembled (default: a temporary directory).
#   NORDIC_REVISION: the revision to test (default: the source's HEAD).
# Exit status: 0 when every test passes. Not part of CI (it needs Nordic's repository).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
source="${1:-https://github.com/NordicSemiconductor/IOS-CoreBluetooth-Mock.git}"
work="${NORDIC_WORK:-$(mktemp -d)}"
revision="${NORDIC_REVISION:-HEAD}"
mkdir -p "$work"

echo "== fetching Nordic's example from $source ($revision)"
rm -rf "$work/nordic"
git clone -q --no-checkout "$source" "$work/nordic"
nordic() { git -C "$work/nordic" show "$revision:$1"; }

app="$work/Sources/nRF_Blinky"
tests="$work/Sources/nRFBlinkyTests"
rm -rf "$work/Sources"
mkdir -p "$app" "$tests" "$work/Sources/UIKit"
retarget() { # the import change, and nothing else
    sed -e 's/^@testable import CoreBluetoothMock$/@testable import BLECBM/' \
        -e 's/^import CoreBluetoothMock$/import BLECBM/'
}
changed=0
take() { # path in Nordic's repository, destination, extra sed expression (optional)
    local source_path=$1 destination=$2 extra=${3:-}
    if [ -n "$extra" ]; then nordic "$source_path" | retarget | sed -e "$extra" >"$destination"
    else nordic "$source_path" | retarget >"$destination"; fi
    local lines
    lines=$(diff <(nordic "$source_path") "$destination" | grep -c '^>' || true)
    changed=$((changed + lines))
    echo "   $source_path: $lines line(s) changed"
}
for file in Models/BlinkyManager.swift Models/BlinkyManagerEvents.swift Models/BlinkyPeripheral.swift \
    Models/BlinkyPeripheralEvents.swift MockPeripherals.swift CoreBluetoothTypeAliases.swift \
    Utils/String+Localization.swift; do
    take "Example/nRFBlinky/$file" "$app/$(basename "$file")"
done
take Example/nRFBlinky/AppDelegate.swift "$app/AppDelegate.swift" '/^@UIApplicationMain$/d'
test_classes=()
for file in $(git -C "$work/nordic" ls-tree --name-only "$revision" Example/Tests/ | grep '\.swift$' | sort); do
    take "$file" "$tests/$(basename "$file")"
    if grep -q 'XCTestCase' "$tests/$(basename "$file")"; then test_classes+=("$(basename "$file" .swift)"); fi
done
echo "   lines changed in Nordic's files: $changed"
cp "$repo/scripts/nordic-example/UIKit/UIKit.swift" "$work/Sources/UIKit/"
cp "$repo/scripts/nordic-example/App/"*.swift "$app/"

# The runner: launches the app, then runs every test method of every class, in name order (as
# Xcode does).
{
    echo "import UIKit"
    echo "import XCTest"
    echo "@testable import nRF_Blinky"
    echo
    echo "UIApplication.shared.launch("
    echo "    delegate: AppDelegate(),"
    echo "    rootViewController: UINavigationController(rootViewController: ScannerTableViewController()))"
    echo "XCTMain(["
    for class in "${test_classes[@]}"; do
        methods=$(grep -oE 'func test[A-Za-z0-9_]*\(\)' "$tests/$class.swift" | sed -E 's/func (test[A-Za-z0-9_]*)\(\)/\1/' | sort)
        echo "    testCase(["
        for method in $methods; do echo "        (\"$method\", $class.$method),"; done
        echo "    ]),"
    done
    echo "])"
} >"$tests/main.swift"

identity="$(basename "$repo" | tr '[:upper:]' '[:lower:]')"
cat >"$work/Package.swift" <<MANIFEST
// swift-tools-version:5.9
import PackageDescription

let package = Package(
    name: "NordicBlinkyExample",
    platforms: [.macOS(.v13)],
    dependencies: [.package(path: "$repo")],
    targets: [
        .target(name: "UIKit"),
        .target(name: "nRF_Blinky", dependencies: ["UIKit", .product(name: "BLECBM", package: "$identity")]),
        .executableTarget(
            name: "nRFBlinkyTests",
            dependencies: ["nRF_Blinky", "UIKit", .product(name: "BLECBM", package: "$identity")],
            linkerSettings: [.linkedLibrary("XCTest")]),
    ],
    swiftLanguageVersions: [.v5]
)
MANIFEST

echo "== building in $work"
swift build --package-path "$work" >"$work/build.log" 2>&1 || true
grep -E '^/.*(error|warning):' "$work/build.log" | sort -u | head -n 60 || true
binary="$(swift build --package-path "$work" --show-bin-path)/nRFBlinkyTests"
[ -x "$binary" ] || { echo "the example did not build"; exit 1; }

echo "== running Nordic's tests"
log="$work/tests.log"
set +e
(cd "$work" && "$binary") 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
passed=$(grep -cE "^Test Case '.*' passed" "$log" || true)
failed=$(grep -cE "^Test Case '.*' failed" "$log" || true)
echo "== Nordic's nRF Blinky example tests: $passed/$((passed + failed)) passed ($changed lines of Nordic's files changed)"
exit "$status"
