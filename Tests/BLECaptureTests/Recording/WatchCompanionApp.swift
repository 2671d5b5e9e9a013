import BLECore
import BLEMockKit
import Foundation
import Testing

/// A companion app of the bundled hybrid watch (`fitness-watch.json`), written against the
/// role protocol as an app is: scan, connect, discover, read the device's details, subscribe,
/// run a command, sync a configuration, and a file transfer over notifications.
struct WatchCompanionApp {
    static let service: BluetoothUUID = "3DDA0001-957F-7D4A-34A6-74696673696D"
    static let deviceInfo: BluetoothUUID = "3DDA0002-957F-7D4A-34A6-74696673696D"
    static let fileOperations: BluetoothUUID = "3DDA0003-957F-7D4A-34A6-74696673696D"
    static let fileData: BluetoothUUID = "3DDA0004-957F-7D4A-34A6-74696673696D"
    static let configuration: BluetoothUUID = "3DDA0005-957F-7D4A-34A6-74696673696D"
    static let command: BluetoothUUID = "3DDA0006-957F-7D4A-34A6-74696673696D"

    enum Failure: Error {
        case streamEnded
    }

    let central: any CentralManaging
    var events: AsyncStream<CentralEvent>.Iterator

    init(central: any CentralManaging) async {
        self.central = central
        events = await central.events().makeAsyncIterator()
    }

    /// The next event the test waits for.
    mutating func next(where matches: (CentralEvent) -> Bool) async throws -> CentralEvent {
        while let event = await events.next() {
            if matches(event) { return event }
        }
        throw Failure.streamEnded
    }

    /// Scans for the watch and connects to it; returns its identifier.
    mutating func connect() async throws -> UUID {
        _ = await central.waitForPoweredOn()
        try await central.scanForPeripherals(withServices: [Self.service], options: ScanOptions())
        let found = try await next {
            if case .discovered = $0 { return true }
            return false
        }
        guard case .discovered(let discovery) = found else { throw Failure.streamEnded }
        await central.stopScan()
        try await central.connect(discovery.identifier, options: ConnectOptions())
        return discovery.identifier
    }

    /// The short session: details, a command and its answer, a configuration write and read
    /// back, a write without response, then the app disconnects.
    mutating func shortSession(watch: LoadedPeripheral) async throws -> UUID {
        let id = try await connect()
        try await central.discoverAll(for: id)
        for uuid in [Self.deviceInfo, "2A24", "2A26", "2A19", Self.configuration] as [BluetoothUUID] {
            _ = try await central.readValue(for: central.characteristic(uuid, of: id))
        }
        let operations = try await central.characteristic(Self.fileOperations, of: id)
        try await central.setNotifyValue(true, for: operations)
        try await central.writeValue(
            Data([0x01, 0x02]), for: central.characteristic(Self.command, of: id), type: .withResponse)
        let answer = try #require(try watch.characteristic(uuid: Self.fileOperations))
        _ = try await watch.manager.updateValue(Data([0x81, 0x00, 0x02]), for: answer, onSubscribedCentrals: nil)
        _ = try await next {
            if case .valueUpdated = $0 { return true }
            return false
        }
        let configuration = try await central.characteristic(Self.configuration, of: id)
        try await central.writeValue(Data([0x0A, 0x0B, 0x0C]), for: configuration, type: .withResponse)
        _ = try await central.readValue(for: configuration)
        try await central.writeValue(
            Data([0x10, 0x20]), for: central.characteristic(Self.fileData, of: id), type: .withoutResponse)
        try await central.cancelPeripheralConnection(id)
        return id
    }
}
