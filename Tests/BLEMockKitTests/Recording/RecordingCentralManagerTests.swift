import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// The recording wrapper is transparent: the app gets what the wrapped central gives, errors
/// included, and cancellation reaches the wrapped call; the recorder sees each outcome.
@Suite("The recording central", .timeLimit(.minutes(10)))
struct RecordingCentralManagerTests {
    static let thermometer = """
        {"name": "Thermo", "advertisement": {"localName": "Thermo", "serviceUUIDs": ["1809"]},
         "services": [{"uuid": "1809", "characteristics": [
           {"id": "temperature", "uuid": "2A1C", "properties": ["indicate"], "permissions": []},
           {"id": "interval", "uuid": "2A21", "properties": ["read"], "permissions": ["readable"], "value": {"hex": "0a00"}}
         ]}]}
        """

    /// A peripheral to write without response to: `up` allows it, `config` only with response.
    static let pipe = """
        {"name": "Pipe", "advertisement": {"localName": "Pipe", "serviceUUIDs": ["FFF0"]},
         "services": [{"uuid": "FFF0", "characteristics": [
           {"id": "up", "uuid": "FFF1", "properties": ["writeWithoutResponse"], "permissions": ["writeable"]},
           {"id": "config", "uuid": "FFF2", "properties": ["write"], "permissions": ["writeable"]}
         ]}]}
        """

    /// A bridge with `profile`'s peripheral, and a recording central connected to it.
    static func connected(
        _ profile: PeripheralProfile, configuration: MockCentralManager.Configuration = .init()
    ) async throws -> (LoadedPeripheral, RecordingCentralManager<MockCentralManager>, SessionRecorder) {
        let bridge = MockBLEBridge()
        let peripheral = try await profile.makePeripheral(on: bridge)
        let recorder = SessionRecorder(clock: bridge.clock)
        let central = await RecordingCentralManager(
            MockCentralManager(configuration: configuration, bridge: bridge), recorder: recorder)
        _ = await central.waitForPoweredOn()
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        try await central.connect(peripheral.identifier)
        try await central.discoverAll(for: peripheral.identifier)
        return (peripheral, central, recorder)
    }

    @Test func anATTErrorReachesTheAppUnchangedAndIsRecorded() async throws {
        let (watch, central, recorder) = try await Self.connected(.bundled(.fitnessWatch))
        let id = watch.identifier
        let operations = try await central.characteristic("3DDA0003-957F-7D4A-34A6-74696673696D", of: id)
        let info = try await central.characteristic("3DDA0002-957F-7D4A-34A6-74696673696D", of: id)
        await #expect(throws: ATTError(.readNotPermitted)) { try await central.readValue(for: operations) }
        await #expect(throws: ATTError(.readNotPermitted)) { try await central.base.readValue(for: operations) }
        await #expect(throws: ATTError(.writeNotPermitted)) {
            try await central.writeValue(Data([1]), for: info, type: .withResponse)
        }
        let recorded = recorder.recording.entries.suffix(2).map(\.event)
        #expect(
            recorded == [
                .read(
                    peripheral: id, handle: operations.handle, result: .failure(RecordedError(domain: .att, code: 2))),
                .write(
                    peripheral: id, handle: info.handle, value: .bytes(Data([1])), withResponse: true,
                    error: RecordedError(domain: .att, code: 3)),
            ])
    }

    @Test func aCallRefusedByTheWrappedCentralIsRefusedTheSameWay() async throws {
        let (watch, central, recorder) = try await Self.connected(.bundled(.fitnessWatch))
        let info = try await central.characteristic("3DDA0002-957F-7D4A-34A6-74696673696D", of: watch.identifier)
        try await central.cancelPeripheralConnection(watch.identifier)
        let count = recorder.recording.entries.count
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await central.readValue(for: info) }
        await #expect(throws: CoreBluetoothError(.notConnected)) { try await central.base.readValue(for: info) }
        #expect(
            recorder.recording.entries.dropFirst(count).map(\.event) == [
                .read(
                    peripheral: watch.identifier, handle: info.handle,
                    result: .failure(RecordedError(domain: .coreBluetooth, code: 3)))
            ])
    }

    @Test func theSynchronousQuestionsAreAnsweredByTheWrappedCentral() async throws {
        let (watch, central, _) = try await Self.connected(.bundled(.fitnessWatch))
        let base = central.base
        let id = watch.identifier
        #expect(await central.state == base.state)
        #expect(await central.isScanning == base.isScanning)
        let connected = (await central.isConnected(id), await base.isConnected(id))
        #expect(connected == (true, true))
        let services = await central.services(of: id)
        let baseServices = await base.services(of: id)
        #expect(services.count == 3 && services == baseServices)
        let characteristics = await central.characteristics(of: services[0])
        #expect(await characteristics == base.characteristics(of: services[0]))
        let retrieved = await central.retrievePeripherals(withIdentifiers: [id])
        #expect(await retrieved == base.retrievePeripherals(withIdentifiers: [id]))
        let withBattery = await central.retrieveConnectedPeripherals(withServices: ["180F"])
        #expect(await withBattery == base.retrieveConnectedPeripherals(withServices: ["180F"]))
        let length = try await central.maximumWriteValueLength(for: id, type: .withoutResponse)
        #expect(try await length == base.maximumWriteValueLength(for: id, type: .withoutResponse))
        let canSend = await central.canSendWriteWithoutResponse(to: id)
        #expect(await canSend == base.canSendWriteWithoutResponse(to: id))
        let ancs = await central.isANCSAuthorized(id)
        #expect(await ancs == base.isANCSAuthorized(id))
        let rssi = try await central.readRSSI(for: id)
        #expect(try await rssi == base.readRSSI(for: id))
    }

    @Test func aCancelledConnectThrowsCancellationAndIsRecordedAsCancelled() async throws {
        let bridge = MockBLEBridge()
        let watch = try await PeripheralProfile.bundled(.fitnessWatch).makePeripheral(on: bridge)
        let recorder = SessionRecorder(clock: bridge.clock)
        let central = await RecordingCentralManager(MockCentralManager(bridge: bridge), recorder: recorder)
        _ = await central.waitForPoweredOn()
        try await central.scanForPeripherals(withServices: nil)
        await central.stopScan()
        await watch.manager.stopAdvertising()
        let attempt = Task { try await central.connect(watch.identifier) }
        attempt.cancel()
        await #expect(throws: CancellationError.self) { try await attempt.value }
        #expect(await !central.isConnected(watch.identifier))
        #expect(
            recorder.recording.entries.last?.event
                == .connectionFailed(peripheral: watch.identifier, error: RecordedError(domain: .kit, code: 1)))
    }

    @Test func indicationsAndALinkThePeripheralDropsAreRecordedAsSuch() async throws {
        let profile = try PeripheralProfile(json: Data(Self.thermometer.utf8), file: "thermo.json")
        let (thermometer, central, recorder) = try await Self.connected(profile)
        let id = thermometer.identifier
        var events = central.events().makeAsyncIterator()
        let temperature = try await central.characteristic("2A1C", of: id)
        try await central.setNotifyValue(true, for: temperature)
        let local = try #require(thermometer.characteristic(id: "temperature"))
        _ = try await thermometer.manager.updateValue(Data([0x25]), for: local, onSubscribedCentrals: nil)
        let first = await events.next()
        #expect(first == .valueUpdated(temperature, Data([0x25])))
        await thermometer.manager.simulateDisconnection(of: central.base.identifier)
        guard case .disconnected = await events.next() else {
            Issue.record("the app's stream did not get the disconnection")
            return
        }
        #expect(
            recorder.recording.entries.suffix(3).map(\.event) == [
                .notificationState(peripheral: id, handle: temperature.handle, enabled: true, error: nil),
                .valueUpdated(
                    peripheral: id, handle: temperature.handle, value: .bytes(Data([0x25])), isIndication: true),
                .disconnected(peripheral: id, error: RecordedError(domain: .coreBluetooth, code: 7)),
            ])
    }

    @Test func aWriteWithoutResponseIsRecordedAsTheStackTookItNotAsTheAppMadeIt() async throws {
        // A queue of one that fast mode holds until time passes: the second write finds it full.
        let profile = try PeripheralProfile(json: Data(Self.pipe.utf8), file: "pipe.json")
        let (pipe, central, recorder) = try await Self.connected(
            profile, configuration: .init(mtu: .fixed(23), writeWithoutResponseQueue: .realistic(capacity: 1)))
        let id = pipe.identifier
        let up = try await central.characteristic("FFF1", of: id)
        let config = try await central.characteristic("FFF2", of: id)
        let count = recorder.recording.entries.count
        try await central.writeValue(Data(repeating: 1, count: 30), for: up, type: .withoutResponse)
        try await central.writeValue(Data([2]), for: up, type: .withoutResponse)
        try await central.writeValue(Data([3]), for: config, type: .withoutResponse)
        #expect(
            recorder.recording.entries.dropFirst(count).map(\.event) == [
                // Cut to ATT_MTU 23 - 3, as it crossed.
                .write(
                    peripheral: id, handle: up.handle, value: .bytes(Data(repeating: 1, count: 20)),
                    withResponse: false, error: nil),
                // Dropped, the queue full: with the error the bridge logs for it.
                .write(
                    peripheral: id, handle: up.handle, value: .bytes(Data([2])), withResponse: false,
                    error: RecordedError(domain: .coreBluetooth, code: 4)),
                // Not sent, the characteristic without the property.
                .write(
                    peripheral: id, handle: config.handle, value: .bytes(Data([3])), withResponse: false,
                    error: RecordedError(domain: .kit, code: 0)),
            ])
        let bridge = central.base.bridge
        #expect(
            await bridge.misuses.map(\.kind) == [
                .valueTruncated, .writeWithoutResponseDropped, .writeWithoutResponseNotSupported,
            ])
        // What the app sees is unchanged: nothing thrown, and the same answer to its question.
        #expect(await !central.canSendWriteWithoutResponse(to: id))
    }

    @Test func aWriteWithoutResponseAStrictCentralRefusesIsRecordedWithTheErrorTheAppGot() async throws {
        let profile = try PeripheralProfile(json: Data(Self.pipe.utf8), file: "pipe.json")
        let (pipe, central, recorder) = try await Self.connected(profile, configuration: .init(strictMisuse: true))
        let config = try await central.characteristic("FFF2", of: pipe.identifier)
        await #expect(throws: APIMisuseError.writeWithoutResponseNotSupported("FFF2", handle: config.handle)) {
            try await central.writeValue(Data([3]), for: config, type: .withoutResponse)
        }
        #expect(
            recorder.recording.entries.last?.event
                == .write(
                    peripheral: pipe.identifier, handle: config.handle, value: .bytes(Data([3])), withResponse: false,
                    error: RecordedError(domain: .kit, code: 0)))
    }

    @Test func shuttingDownShutsTheWrappedCentralDownAndEndsTheAppsStreams() async throws {
        let (_, central, _) = try await Self.connected(.bundled(.battery))
        var events = central.events().makeAsyncIterator()
        await central.shutDown()
        while await events.next() != nil {}
        await #expect(throws: APIMisuseError.self) { try await central.base.scanForPeripherals(withServices: nil) }
    }
}
