import BLECBM
import BLECapture
import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BlinkyExample

/// The unchanged Blinky app, written in CoreBluetooth's delegate style, records a session
/// through a `CBMCentralManager` given a `SessionRecorder`.
@Suite(.timeLimit(.minutes(10)))
struct SessionRecordingTests {
    /// The GATT structure of a profile: each service's UUID, each characteristic's UUID,
    /// properties and static value, and its descriptors' UUIDs.
    static func structure(_ profile: PeripheralProfile) -> [String] {
        profile.services.flatMap { service in
            ["service \(service.uuid) primary=\(service.isPrimary)"]
                + service.characteristics.map { characteristic in
                    "  \(characteristic.uuid) \(characteristic.properties) static="
                        + (characteristic.value.map { FixtureBytes.hexString($0) } ?? "-")
                        + " descriptors=\(characteristic.descriptors.map(\.uuid))"
                }
        }
    }

    /// Runs the Blinky app against the bundled `nrf-blinky` profile, with a recorder on the
    /// bridge's clock set on its manager when `recording`: it connects, reads, turns the LED
    /// on, hears a button press, and disconnects. Returns what the app saw, and the recording.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func runBlinky(recording: Bool, realistic: Bool) async throws -> (seen: [String], SessionRecording?) {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 21) : .init(seed: 21))
        let recorder = recording ? SessionRecorder(clock: bridge.clock) : nil
        let device = try await PeripheralProfile.bundled(.nrfBlinky).makePeripheral(on: bridge)
        let button = try #require(device.characteristic(id: "button"))
        // The bundled profile's characteristics are dynamic and start empty; a Blinky holds a byte in each.
        _ = try await device.setValue(Data([0]), forCharacteristicID: "button")
        _ = try await device.setValue(Data([0]), forCharacteristicID: "led")
        return try await bridge.run { @MainActor in
            let app = BlinkyManager()
            app.centralManager.sessionRecorder = recorder
            #expect(app.centralManager.sessionRecorder === recorder)
            try await bridge.waitForApp { !app.discovered.isEmpty }
            let blinky = app.discovered[0]
            blinky.connect()
            try await bridge.waitForApp { blinky.isReady && blinky.isButtonPressed != nil && blinky.isLEDOn != nil }
            blinky.turnOnLED()
            try await bridge.waitForApp { blinky.ledWrites == 1 }
            await bridge.waitUntil { bridge in bridge.log.contains { $0.kind == .subscribe } }
            _ = try await device.manager.updateValue(Data([1]), for: button, onSubscribedCentrals: nil)
            try await bridge.waitForApp { blinky.buttonNotifications == 1 }
            blinky.reconnects = false
            blinky.disconnect()
            try await bridge.waitForApp { blinky.disconnections == 1 }
            let seen = [
                "\(blinky.buttonNotifications)", "\(String(describing: blinky.isLEDOn))",
                "\(String(describing: blinky.isButtonPressed))", "\(blinky.ledWrites)",
                "\(String(describing: blinky.lastError))",
            ]
            return (seen, recorder?.recording)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func theUnchangedAppRecordsASessionThatImportsToItsProfileAndReplays(realistic: Bool) async throws {
        let (seen, recorded) = try await Self.runBlinky(recording: true, realistic: realistic)
        // The app saw what it sees without a recorder.
        #expect(try await Self.runBlinky(recording: false, realistic: realistic).seen == seen)
        let recording = try #require(recorded)
        let imported = try RecordingImporter().importRecording(recording, name: "blinky")
        #expect(Self.structure(imported.profile) == Self.structure(.bundled(.nrfBlinky)))
        #expect(imported.profile.advertisement?.localName == "Nordic_Blinky")
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        #expect(trace.records.map(\.op).contains("notify"))
        #expect(trace.records.last?.op == "disconnect")
    }

    /// An app that ignores `canSendWriteWithoutResponse` loses writes to the full queue, as on a
    /// device; the recording keeps those with the error the bridge logs (so a replay does not
    /// deliver them) and a long one cut as it crossed.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func writesWithoutResponseAreRecordedAsTheStackTookThem() async throws {
        var configuration = MockBLEBridge.Configuration.realistic(seed: 4)
        configuration.limits.writeWithoutResponseQueueCapacity = 3
        let bridge = MockBLEBridge(configuration: configuration)
        let recorder = SessionRecorder(clock: bridge.clock)
        _ = try await BlinkyDevice.make(on: bridge, ledWithoutResponse: true)
        let id = try await bridge.run { @MainActor () -> UUID in
            let app = Recorder()
            let manager = CBMCentralManager(delegate: app, queue: nil)
            manager.sessionRecorder = recorder
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try await connectAndDiscover(manager, bridge: bridge) { app.peripheral }
            let led = peripheral.services![0].characteristics![1]
            peripheral.writeValue(Data(repeating: 0xAA, count: 200), for: led, type: .withoutResponse)
            for byte in 1...4 { peripheral.writeValue(Data([UInt8(byte)]), for: led, type: .withoutResponse) }
            try await bridge.waitForApp { app.calls.contains("ready") }
            return peripheral.identifier
        }
        // Each write without response as recorded: its peripheral, value and error.
        let writes = recorder.recording.entries.compactMap { entry -> (UUID, Data, RecordedError?)? in
            guard case .write(let peripheral, _, .bytes(let value), false, let error) = entry.event else { return nil }
            return (peripheral, value, error)
        }
        let full = RecordedError(domain: .coreBluetooth, code: 4)
        #expect(writes.allSatisfy { $0.0 == id })
        #expect(writes.map(\.1) == [Data(repeating: 0xAA, count: 182), Data([1]), Data([2]), Data([3]), Data([4])])
        #expect(writes.map(\.2) == [nil, nil, nil, full, full])
        // The bridge's log says the same.
        let logged = await bridge.log.filter { $0.kind == .write && $0.writeType == .withoutResponse }
        #expect(logged.map { $0.error == nil } == [true, true, true, false, false])
    }
}
