import BLECore
import BLEMockKit
import Foundation
import Testing

/// Helpers for the fixture tests: the bundled files, and parsing that expects an error.
enum FixtureTestSupport {
    /// The repository's `Fixtures/peripherals` folder, found from this file's path.
    static var peripheralsFolder: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Fixtures
            .deletingLastPathComponent()  // BLEMockKitTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository root
            .appendingPathComponent("Fixtures/peripherals")
    }

    /// The bundled profile files, by name: every profile the library bundles (one per file in
    /// `Fixtures/peripherals`, which `BundledFixtureDataTests` checks).
    static let bundledFiles = BundledProfile.allCases.map(\.fileName)

    /// Loads a bundled profile.
    static func bundled(_ name: String) throws -> PeripheralProfile {
        try PeripheralProfile.load(contentsOf: peripheralsFolder.appendingPathComponent(name))
    }

    /// Parses `json` as a profile and returns the error it must fail with.
    static func profileError(
        _ json: String, file: String? = "test.json", sourceLocation: SourceLocation = #_sourceLocation
    ) -> FixtureError? {
        do {
            let profile = try PeripheralProfile(json: Data(json.utf8), file: file)
            Issue.record("expected an error, got \(profile)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    /// Parses `json` with the JSON reader and returns the error it must fail with.
    static func jsonError(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> FixtureError? {
        jsonError(bytes: Array(json.utf8), sourceLocation: sourceLocation)
    }

    /// Parses raw bytes with the JSON reader and returns the error it must fail with.
    static func jsonError(bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> FixtureError? {
        do {
            let node = try FixtureJSON.parse(Data(bytes))
            Issue.record("expected an error, got \(node)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    /// A minimal valid profile with `characteristic` as the only characteristic of a 180D service.
    static func withCharacteristic(_ characteristic: String) -> String {
        """
        {"services": [{"uuid": "180D", "characteristics": [
        \(characteristic)
        ]}]}
        """
    }

    /// A central on `bridge` connected to `peripheral`, everything discovered, with the
    /// characteristics of primary and included services.
    static func connectedCentral(
        to peripheral: LoadedPeripheral, on bridge: MockBLEBridge
    ) async throws -> (MockCentralManager, [RemoteCharacteristic]) {
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        try await central.connect(peripheral.identifier)
        var all: [RemoteCharacteristic] = []
        for service in try await central.discoverServices(nil, for: peripheral.identifier) {
            for included in try await central.discoverIncludedServices(nil, for: service) {
                all += try await central.discoverCharacteristics(nil, for: included)
            }
            all += try await central.discoverCharacteristics(nil, for: service)
        }
        for characteristic in all { _ = try await central.discoverDescriptors(for: characteristic) }
        return (central, all)
    }
}
