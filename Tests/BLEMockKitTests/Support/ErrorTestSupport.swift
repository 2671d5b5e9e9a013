import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// Expects a manager given `injection` in its configuration (a central's, or with `inCentral`
/// false a peripheral manager's) to refuse its first call with
/// `APIMisuseError.invalidConfiguration` whose text names the role's configuration and starts
/// with `message`, and the bridge to owe nothing after it (a refused injection is not owed).
func expectConfigurationRefusal(of injection: ErrorInjection, inCentral: Bool, saying message: String) async {
    let bridge = MockBLEBridge()
    let thrown: (any Error)?
    let role = inCentral ? "MockCentralManager" : "MockPeripheralManager"
    if inCentral {
        let central = MockCentralManager(configuration: .init(errorInjection: [injection]), bridge: bridge)
        thrown = await #expect(throws: APIMisuseError.self) { try await central.scanForPeripherals(withServices: nil) }
    } else {
        let peripheral = MockPeripheralManager(configuration: .init(errorInjection: [injection]), bridge: bridge)
        thrown = await #expect(throws: APIMisuseError.self) { try await peripheral.add(TestPeripherals.heartRate) }
    }
    guard case .invalidConfiguration(let text) = thrown as? APIMisuseError else {
        Issue.record("expected invalidConfiguration, got \(String(describing: thrown))")
        return
    }
    #expect(text.hasPrefix("\(role).Configuration.errorInjection: \(message)"), "\(text)")
    #expect(await bridge.finish() == .clean)
}

/// The attributes of the test service published by ``Rig``.
enum RigUUID {
    /// The service.
    static let service: BluetoothUUID = "FFF0"
    /// Dynamic: read, write, write without response, notify; readable and writeable.
    static let value: BluetoothUUID = "FFF1"
    /// Dynamic: write (with response) only; writeable.
    static let writeOnly: BluetoothUUID = "FFF2"
    /// Static (value 01 02 03): read only, with a user description descriptor.
    static let readOnly: BluetoothUUID = "FFF3"
    /// Dynamic: read, but only on an encrypted link.
    static let encrypted: BluetoothUUID = "FFF4"
}

/// A peripheral publishing the test service and a central connected to it, with every
/// characteristic and descriptor discovered — on a bridge of their own.
struct Rig: Sendable {
    let bridge: MockBLEBridge
    let peripheral: MockPeripheralManager
    let central: MockCentralManager
    let service: LocalService
    let remoteService: RemoteService
    let remoteCharacteristics: [RemoteCharacteristic]
    let remoteDescriptors: [BluetoothUUID: [RemoteDescriptor]]

    /// The test service's description.
    static var testService: GATTService {
        GATTService(
            uuid: RigUUID.service,
            characteristics: [
                GATTCharacteristic(
                    uuid: RigUUID.value, properties: [.read, .write, .writeWithoutResponse, .notify],
                    permissions: [.readable, .writeable]),
                GATTCharacteristic(uuid: RigUUID.writeOnly, properties: .write, permissions: .writeable),
                GATTCharacteristic(
                    uuid: RigUUID.readOnly, properties: .read, permissions: .readable, value: Data([1, 2, 3]),
                    descriptors: [.userDescription("Read only")]),
                GATTCharacteristic(uuid: RigUUID.encrypted, properties: .read, permissions: .readEncryptionRequired),
            ])
    }

    /// Builds the rig: the peripheral publishes and advertises the test service; the central
    /// (asking for `centralMTU`, with `writeQueue`) scans, connects, and discovers everything.
    /// `strictMisuse` goes to both managers; `preparedWriteCapacity` to the peripheral.
    static func make(
        requestHandling: RequestHandling = .automatic, centralMTU: Int = 517, strictMisuse: Bool = false,
        writeQueue: QueueBehavior = .unlimited, preparedWriteCapacity: Int? = nil,
        bridge: MockBLEBridge = MockBLEBridge()
    ) async throws -> Rig {
        let peripheral = MockPeripheralManager(
            configuration: .init(
                strictMisuse: strictMisuse, requestHandling: requestHandling,
                preparedWriteCapacity: preparedWriteCapacity),
            bridge: bridge)
        let service = try await peripheral.add(testService)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Rig", serviceUUIDs: [RigUUID.service]))
        let central = MockCentralManager(
            configuration: .init(
                mtu: .fixed(centralMTU), strictMisuse: strictMisuse, writeWithoutResponseQueue: writeQueue),
            bridge: bridge)
        try await central.scanForPeripherals(withServices: [RigUUID.service])
        try await central.connect(peripheral.identifier)
        let services = try await central.discoverServices(nil, for: peripheral.identifier)
        let characteristics = try await central.discoverCharacteristics(nil, for: services[0])
        var descriptors: [BluetoothUUID: [RemoteDescriptor]] = [:]
        for characteristic in characteristics {
            descriptors[characteristic.uuid] = try await central.discoverDescriptors(for: characteristic)
        }
        return Rig(
            bridge: bridge, peripheral: peripheral, central: central, service: service, remoteService: services[0],
            remoteCharacteristics: characteristics, remoteDescriptors: descriptors)
    }

    /// The central's reference to a characteristic of the test service.
    func remote(_ uuid: BluetoothUUID) -> RemoteCharacteristic {
        remoteCharacteristics.first { $0.uuid == uuid }!
    }

    /// The peripheral's reference to a characteristic of the test service.
    func local(_ uuid: BluetoothUUID) -> LocalCharacteristic {
        service.characteristic(uuid)!
    }

    /// The user description descriptor of the read-only characteristic.
    var userDescription: RemoteDescriptor {
        remoteDescriptors[RigUUID.readOnly]!.first { $0.uuid == .characteristicUserDescription }!
    }

    /// The CCCD of the notifying characteristic.
    var clientConfiguration: RemoteDescriptor {
        remoteDescriptors[RigUUID.value]!.first { $0.uuid == .clientCharacteristicConfiguration }!
    }

    /// The bridge's log, by kind.
    func logEntries(_ kind: BridgeLogEntry.Kind) async -> [BridgeLogEntry] {
        await bridge.log.filter { $0.kind == kind }
    }

    /// The last log entry of a kind.
    func lastLogEntry(_ kind: BridgeLogEntry.Kind) async -> BridgeLogEntry? {
        await bridge.log.last { $0.kind == kind }
    }
}

/// Bytes 0, 1, 2, … (mod 256), `count` of them.
func testBytes(_ count: Int, startingAt start: Int = 0) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: start + $0) })
}

/// Reads peripheral events until a read request arrives.
func nextReadRequest(_ events: inout AsyncStream<PeripheralEvent>.Iterator) async -> ATTRequest? {
    while let event = await events.next() {
        if case .readRequest(let request) = event { return request }
    }
    return nil
}

/// Reads peripheral events until a batch of write requests arrives.
func nextWriteRequests(_ events: inout AsyncStream<PeripheralEvent>.Iterator) async -> [ATTRequest]? {
    while let event = await events.next() {
        if case .writeRequests(let requests) = event { return requests }
    }
    return nil
}

/// Reads central events until one matches.
func nextCentralEvent(
    _ events: inout AsyncStream<CentralEvent>.Iterator, where matches: (CentralEvent) -> Bool
) async -> CentralEvent? {
    while let event = await events.next() {
        if matches(event) { return event }
    }
    return nil
}
