#!/usr/bin/env bash
# Type-checks the sources guarded by `#if canImport(CoreBluetooth)` on a machine without
# CoreBluetooth: builds the declaration-only stub in scripts/corebluetooth-stub as a module
# named CoreBluetooth, then type-checks each module that has CoreBluetooth code against it
# with warnings as errors. This proves the code compiles against CoreBluetooth's API shape;
# it cannot run it (see scripts/corebluetooth-stub/README.md for the stub's known gaps).
# Swift files inside a DocC catalog (BLECBM's typealias file for apps) are not part of their
# module, as in a package build, and are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=.build-cbstub
swift build --package-path scripts/corebluetooth-stub --scratch-path "$scratch" -q
modules="$(swift build --package-path scripts/corebluetooth-stub --scratch-path "$scratch" --show-bin-path)/Modules"
[ -d "$modules" ] || modules="$(dirname "$modules")"

typecheck() { # module-name, source dir, extra flags...
    local name=$1 dir=$2
    shift 2
    mapfile -t files < <(find "$dir" -name '*.swift' -not -path '*.docc/*' | sort)
    swiftc -typecheck -swift-version 6 -module-name "$name" -parse-as-library \
        -enable-upcoming-feature ExistentialAny -warnings-as-errors \
        -I "$modules" "$@" "${files[@]}"
    echo "type-checked $name (${#files[@]} files) against the CoreBluetooth stub"
}

typecheck BLECore Sources/BLECore -package-name blemockkit

# BLECoreBluetooth imports BLECore, so it is checked against BLECore's public interface as
# built with the stub (so BLECore's CoreBluetooth extensions are in it): emit BLECore's
# module into a temporary directory, then type-check BLECoreBluetooth with both on the path.
# BLECore's `public` and `package` API is visible, as in a package build (one package).
interfaces="$(mktemp -d)"
trap 'rm -rf "$interfaces"' EXIT
mapfile -t core_files < <(find Sources/BLECore -name '*.swift' -not -path '*.docc/*' | sort)
swiftc -emit-module -swift-version 6 -module-name BLECore -parse-as-library \
    -enable-upcoming-feature ExistentialAny -warnings-as-errors -package-name blemockkit \
    -I "$modules" -emit-module-path "$interfaces/BLECore.swiftmodule" "${core_files[@]}"
echo "emitted BLECore's module (built against the CoreBluetooth stub)"
typecheck BLECoreBluetooth Sources/BLECoreBluetooth -I "$interfaces" -package-name blemockkit

# The shared role-contract tests' CoreBluetooth side: emit BLECoreBluetooth's module (emitting
# runs the SIL diagnostics, such as region-based isolation, that -typecheck alone skips), then
# type-check the contract with its CoreBluetooth suite (it runs only on Apple platforms).
mapfile -t adapter_files < <(find Sources/BLECoreBluetooth -name '*.swift' -not -path '*.docc/*' | sort)
swiftc -emit-module -swift-version 6 -module-name BLECoreBluetooth -parse-as-library \
    -enable-upcoming-feature ExistentialAny -warnings-as-errors -package-name blemockkit \
    -I "$modules" -I "$interfaces" -emit-module-path "$interfaces/BLECoreBluetooth.swiftmodule" "${adapter_files[@]}"
swiftc -typecheck -swift-version 6 -module-name BLECoreBluetoothContract -parse-as-library \
    -enable-upcoming-feature ExistentialAny -warnings-as-errors -I "$modules" -I "$interfaces" \
    Tests/BLECoreBluetoothTests/Contract/RoleContract.swift \
    Tests/BLECoreBluetoothTests/Contract/CoreBluetoothRoleContractTests.swift
echo "type-checked the role contract's CoreBluetooth suite against the CoreBluetooth stub"


# BLECBM (CoreBluetooth's own API) forwards to CoreBluetooth outside a bridge scope. It imports
# BLEMockKit, which imports Transport and its C target: emit those modules too (against the
# stub-built BLECore; the C target through a module map of its header), then type-check BLECBM.
cat > "$interfaces/module.modulemap" <<MAP
module CTransportCRC32C {
    umbrella header "$PWD/Sources/CTransportCRC32C/include/CTransportCRC32C.h"
    export *
}
MAP
emit() { # module-name, source dir
    local name=$1 dir=$2
    mapfile -t files < <(find "$dir" -name '*.swift' -not -path '*.docc/*' | sort)
    swiftc -emit-module -swift-version 6 -module-name "$name" -parse-as-library \
        -enable-upcoming-feature ExistentialAny -warnings-as-errors -package-name blemockkit \
        -I "$modules" -I "$interfaces" -emit-module-path "$interfaces/$name.swiftmodule" "${files[@]}"
}
emit Transport Sources/Transport
emit BLEMockKit Sources/BLEMockKit
typecheck BLECBM Sources/BLECBM -I "$interfaces" -package-name blemockkit
