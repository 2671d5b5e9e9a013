import BLECBM
import BLEMockKit
import Foundation
import Testing

/// Records discoveries.
final class DiscoveryCounter: NSObject, CBMCentralManagerDelegate {
    var found: [UUID] = []
    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}
    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        found.append(peripheral.identifier)
    }
}

/// A report had realistic mode miss Nordic's 250 ms power pack in 300 ms scans through the spec
/// API. These set-ups (each scan option, moved into range before or during the scan, scans in a
/// row, one spec shared by simulations in turn; 20 seeds, fast and realistic) all hear it, on
/// this build and on the one the report was made with: the first advertisement after a scan
/// starts is due within the interval plus advDelay (at most 260 ms). They stay as regression
/// tests.
@Suite("Scanning for a spec that comes into range", .timeLimit(.minutes(10)), .finishesOwnBridges)
struct ScanParityTests {
    /// The four scan set-ups: with and without a service filter, with and without duplicates.
    static let setUps = [(false, false), (false, true), (true, false), (true, true)]

    static func bridge(realistic: Bool, seed: UInt64) -> MockBLEBridge {
        ownBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
    }

    /// A powered-on manager whose delegate counts discoveries.
    @MainActor
    static func manager(on bridge: MockBLEBridge) async throws -> (CBMCentralManager, DiscoveryCounter) {
        let counter = DiscoveryCounter()
        let manager = CBMCentralManagerMock(delegate: counter, queue: nil)
        try await bridge.waitForApp { manager.state == .poweredOn }
        return (manager, counter)
    }

    /// Scans with one set-up; `during` runs once the scan has started. Returns what was found.
    @MainActor
    static func scan(
        _ manager: CBMCentralManager, _ counter: DiscoveryCounter, filtered: Bool, duplicates: Bool,
        on bridge: MockBLEBridge, during: @MainActor () async throws -> Void = {}
    ) async throws -> [UUID] {
        counter.found = []
        manager.scanForPeripherals(
            withServices: filtered ? [.batteryService] : nil,
            options: [CBMCentralManagerScanOptionAllowDuplicatesKey: duplicates])
        try await during()
        try await bridge.clock.sleep(for: .milliseconds(300))
        manager.stopScan()
        return counter.found
    }

    /// Nordic's power pack (250 ms) moved into range, then a 300 ms scan: every scan set-up hears
    /// it, in fast and realistic mode (CoreBluetoothMock's CBMCentralManagerMock.swift reports an
    /// advertisement to every scanning manager whose filter matches, at each interval).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: setUps)
    func aScanOf300msHearsA250msAdvertiserMovedIntoRange(filtered: Bool, duplicates: Bool) async throws {
        for realistic in [false, true] {
            for seed in UInt64(0)..<20 {
                let bridge = Self.bridge(realistic: realistic, seed: seed)
                let powerPack = makePowerPack()
                let found = try await bridge.run { @MainActor () -> [UUID] in
                    CBMCentralManagerMock.simulatePeripherals([powerPack])
                    powerPack.simulateProximityChange(.immediate)
                    let (manager, counter) = try await Self.manager(on: bridge)
                    return try await Self.scan(manager, counter, filtered: filtered, duplicates: duplicates, on: bridge)
                }
                #expect(found.contains(powerPack.identifier), "realistic \(realistic), seed \(seed): \(found)")
            }
        }
    }

    /// The same with the power pack moved into range 50 ms into the scan.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: setUps)
    func aRunningScanHearsA250msAdvertiserMovedIntoRangeWithin300ms(filtered: Bool, duplicates: Bool) async throws {
        for realistic in [false, true] {
            for seed in UInt64(0)..<20 {
                let bridge = Self.bridge(realistic: realistic, seed: seed)
                let powerPack = makePowerPack()
                let found = try await bridge.run { @MainActor () -> [UUID] in
                    CBMCentralManagerMock.simulatePeripherals([powerPack])
                    let (manager, counter) = try await Self.manager(on: bridge)
                    return try await Self.scan(manager, counter, filtered: filtered, duplicates: duplicates, on: bridge)
                    {
                        try await bridge.clock.sleep(for: .milliseconds(50))
                        powerPack.simulateProximityChange(.immediate)
                    }
                }
                #expect(found.contains(powerPack.identifier), "realistic \(realistic), seed \(seed): \(found)")
            }
        }
    }

    /// Four 300 ms scans one after another on one manager, each set-up in turn: each hears the
    /// power pack.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func fourScansInARowEachHearThePowerPack() async throws {
        for realistic in [false, true] {
            for seed in UInt64(0)..<20 {
                let bridge = Self.bridge(realistic: realistic, seed: seed)
                let powerPack = makePowerPack()
                let counts = try await bridge.run { @MainActor () -> [Int] in
                    CBMCentralManagerMock.simulatePeripherals([powerPack])
                    powerPack.simulateProximityChange(.immediate)
                    let (manager, counter) = try await Self.manager(on: bridge)
                    var counts: [Int] = []
                    for (filtered, duplicates) in Self.setUps {
                        let found = try await Self.scan(
                            manager, counter, filtered: filtered, duplicates: duplicates, on: bridge)
                        counts.append(found.count)
                    }
                    return counts
                }
                #expect(!counts.contains(0), "realistic \(realistic), seed \(seed): \(counts)")
            }
        }
    }

    /// One power pack spec, made once as Nordic's example makes it (a global `let`), used by
    /// bridges in turn, each with a scan set-up: every scan hears it.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func oneSpecSharedBySimulationsInTurnIsHeardByEach() async throws {
        for realistic in [false, true] {
            let powerPack = makePowerPack()
            for seed in UInt64(0)..<5 {
                for (filtered, duplicates) in Self.setUps {
                    let bridge = Self.bridge(realistic: realistic, seed: seed)
                    let found = try await bridge.run { @MainActor () -> [UUID] in
                        CBMCentralManagerMock.simulatePeripherals([powerPack])
                        powerPack.simulateProximityChange(.immediate)
                        let (manager, counter) = try await Self.manager(on: bridge)
                        let found = try await Self.scan(
                            manager, counter, filtered: filtered, duplicates: duplicates, on: bridge)
                        powerPack.simulateProximityChange(.outOfRange)
                        return found
                    }
                    #expect(found.contains(powerPack.identifier), "realistic \(realistic), seed \(seed): \(found)")
                }
            }
        }
    }
}

extension ScanParityTests {
    /// Intervals no spec should have (infinite, absurdly long, negative, not a number) are taken
    /// without trapping: an infinite or absurdly long one is capped (the spec waits that long to
    /// advertise again), a negative or NaN one leaves the default interval, and such a spec is
    /// heard as any other.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aSpecWithAnAbsurdAdvertisingIntervalOrDelayDoesNotTrap() async throws {
        func spec(interval: TimeInterval, delay: TimeInterval = 0) -> CBMPeripheralSpec {
            CBMPeripheralSpec.simulatePeripheral()
                .advertising(
                    advertisementData: [CBMAdvertisementDataServiceUUIDsKey: [CBMUUID.batteryService]],
                    withInterval: interval, delay: delay
                )
                .build()
        }
        let long = [spec(interval: .infinity), spec(interval: 1e13), spec(interval: 0.1, delay: .infinity)]
        let ordinary = [spec(interval: -1), spec(interval: .nan), spec(interval: 0.1, delay: -5)]
        let bridge = Self.bridge(realistic: true, seed: 71)
        let found = try await bridge.run { @MainActor () -> [UUID] in
            CBMCentralManagerMock.simulatePeripherals(long + ordinary)
            let (manager, counter) = try await Self.manager(on: bridge)
            return try await Self.scan(manager, counter, filtered: false, duplicates: false, on: bridge)
        }
        for peripheral in ordinary { #expect(found.contains(peripheral.identifier)) }
        #expect(!found.contains(long[2].identifier))
    }
}
