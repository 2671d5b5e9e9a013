import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A watch whose battery level (2A19) and command characteristic (2A1A) need an encrypted link,
/// as a bonded device's do.
private func makeSecureWatch(on bridge: MockBLEBridge) async throws -> MockPeripheralManager {
    let watch = MockPeripheralManager(configuration: .init(name: "Watch"), bridge: bridge)
    _ = try await watch.add(
        GATTService(
            uuid: "180F",
            characteristics: [
                GATTCharacteristic(
                    uuid: "2A19", properties: .read, permissions: .readEncryptionRequired, value: Data([7])),
                GATTCharacteristic(uuid: "2A1A", properties: .write, permissions: .writeEncryptionRequired),
            ]))
    try await watch.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: ["180F"]))
    return watch
}

/// Encrypted attributes through the CoreBluetooth-shaped API: CoreBluetooth pairs on its own when
/// a peripheral answers that an access needs encryption, so the app's calls succeed (or fail as
/// the pairing does), in fast mode as in realistic mode.
@Suite(.timeLimit(.minutes(10)))
struct PairingThroughDelegatesTests {
    /// Connects a delegate app to the secure watch, reads 2A19 and writes 2A1A, and returns the
    /// callbacks of those two calls.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private func readAndWrite(
        on bridge: MockBLEBridge, configuration: MockCentralManager.Configuration? = nil
    ) async throws -> [String] {
        _ = try await makeSecureWatch(on: bridge)
        return try await bridge.run { @MainActor () -> [String] in
            let recorder = Recorder()
            let manager = CBMCentralManager(
                bridge: bridge, delegate: recorder, queue: nil, configuration: configuration)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try await connectAndDiscover(manager, bridge: bridge) { recorder.peripheral }
            let characteristics = try #require(peripheral.services?.first?.characteristics)
            let start = recorder.calls.count
            peripheral.readValue(for: characteristics[0])
            peripheral.writeValue(Data([1]), for: characteristics[1], type: .withResponse)
            try await bridge.waitForApp { recorder.calls.count >= start + 2 }
            return Array(recorder.calls[start...])
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A delegate app's first encrypted access pairs, as CoreBluetooth does, and succeeds", arguments: [false, true])
    func theFirstEncryptedAccessPairsAndSucceeds(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 14) : .init(seed: 14))
        let calls = try await readAndWrite(on: bridge)
        #expect(calls == ["value [7]", "wrote"])
        let pairings = await bridge.log.filter { $0.kind == .paired }
        #expect(pairings.count == 1)
        #expect(pairings.first?.succeeded == true)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A pairing the user declines fails the access with the peripheral's ATT error")
    func aDeclinedPairingFailsTheAccess() async throws {
        let bridge = MockBLEBridge(seed: 15)
        var configuration = MockCentralManager.Configuration.fast
        configuration.pairing = .automatic(duration: .zero, outcome: .rejected)
        let calls = try await readAndWrite(on: bridge, configuration: configuration)
        let insufficientAuthentication = CBMATTError.Code.insufficientAuthentication.rawValue
        #expect(
            calls == [
                "value [] error=\(CBMATTErrorDomain)/\(insufficientAuthentication)",
                "wrote error=\(CBMATTErrorDomain)/\(insufficientAuthentication)",
            ])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A central configured never to pair keeps that choice: encrypted accesses fail and nothing pairs")
    func aCentralConfiguredNeverToPairKeepsIt() async throws {
        let bridge = MockBLEBridge(seed: 16)
        let calls = try await readAndWrite(on: bridge, configuration: .fast)
        let insufficientAuthentication = CBMATTError.Code.insufficientAuthentication.rawValue
        #expect(
            calls == [
                "value [] error=\(CBMATTErrorDomain)/\(insufficientAuthentication)",
                "wrote error=\(CBMATTErrorDomain)/\(insufficientAuthentication)",
            ])
        #expect(await bridge.log.filter { $0.kind == .paired }.isEmpty)
    }
}
