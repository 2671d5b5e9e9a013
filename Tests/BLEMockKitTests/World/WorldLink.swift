import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// The attributes of the service ``WorldLink`` publishes.
enum WorldUUID {
    static let service: BluetoothUUID = "FFF0"
    /// Dynamic: read, write, write without response; readable and writeable.
    static let value: BluetoothUUID = "FFF1"
    /// Dynamic: read and notify, with a user description.
    static let notifying: BluetoothUUID = "FFF2"
    /// Dynamic: indicate.
    static let indicating: BluetoothUUID = "FFF3"
    /// Static: 300 bytes (0, 1, 2, …), read only.
    static let long: BluetoothUUID = "FFF4"
    /// Dynamic: read, only on an encrypted link.
    static let encrypted: BluetoothUUID = "FFF5"
}

/// A central linked to a peripheral publishing the ``WorldUUID`` service, with every
/// characteristic discovered and the schedule run empty: the identifiers a test needs, and
/// the requests it starts.
struct WorldLink {
    let central: UUID
    let peripheral: UUID
    let service: LocalService
    let characteristics: [RemoteCharacteristic]

    var key: LinkKey { LinkKey(central: central, peripheral: peripheral) }

    /// The service's description.
    static var testService: GATTService {
        GATTService(
            uuid: WorldUUID.service,
            characteristics: [
                GATTCharacteristic(
                    uuid: WorldUUID.value, properties: [.read, .write, .writeWithoutResponse],
                    permissions: [.readable, .writeable]),
                GATTCharacteristic(
                    uuid: WorldUUID.notifying, properties: [.read, .notify], permissions: .readable,
                    descriptors: [.userDescription("Notifying")]),
                GATTCharacteristic(uuid: WorldUUID.indicating, properties: .indicate, permissions: .readable),
                GATTCharacteristic(
                    uuid: WorldUUID.long, properties: .read, permissions: .readable, value: testBytes(300)),
                GATTCharacteristic(
                    uuid: WorldUUID.encrypted, properties: [.read, .write],
                    permissions: [.readEncryptionRequired, .writeEncryptionRequired]),
            ])
    }

    /// Makes a world with a linked central and peripheral (the central scans, connects,
    /// discovers the service and its characteristics), then runs the schedule empty.
    static func make(
        timing: LinkTiming = WorldHarness.steadyTiming, seed: UInt64 = 1,
        central configuration: MockCentralManager.Configuration = .init(),
        peripheral peripheralConfiguration: MockPeripheralManager.Configuration = .init(name: "Sensor")
    ) throws -> (WorldHarness, WorldLink) {
        var harness = WorldHarness(seed: seed, timing: timing)
        let peripheral = harness.addPeripheral(peripheralConfiguration)
        let service = try harness.addService(testService, to: peripheral)
        try harness.startAdvertising(peripheral, AdvertisementData(localName: "Sensor"))
        let central = harness.addCentral(configuration)
        let link = try connect(central, to: peripheral, service: service, in: &harness)
        return (harness, link)
    }

    /// Links a central to a peripheral publishing `service`: scans, connects, discovers.
    static func connect(
        _ central: UUID, to peripheral: UUID, service: LocalService, in harness: inout WorldHarness
    ) throws -> WorldLink {
        try harness.discover(peripheral, by: central)
        let connect = harness.perform(.connect(central: central, peripheral: peripheral, timeout: nil))
        try #require(harness.reply(of: connect) == .done)
        let services = harness.perform(.gatt(central: central, peripheral: peripheral, .discoverServices(nil)))
        let remoteService = try #require(harness.services(of: services)?.first)
        let discovery = harness.perform(
            .gatt(central: central, peripheral: peripheral, .discoverCharacteristics(remoteService, nil)))
        let characteristics = try #require(harness.characteristics(of: discovery))
        let idle = harness.runUntilIdle()
        #expect(idle)
        return WorldLink(central: central, peripheral: peripheral, service: service, characteristics: characteristics)
    }

    /// The central's reference to a characteristic.
    func remote(_ uuid: BluetoothUUID) -> RemoteCharacteristic {
        characteristics.first { $0.uuid == uuid }!
    }

    /// The peripheral's reference to a characteristic.
    func local(_ uuid: BluetoothUUID) -> LocalCharacteristic {
        service.characteristic(uuid)!
    }

    /// The peripheral as the central sees it.
    var remotePeripheral: RemotePeripheral { RemotePeripheral(identifier: peripheral, name: "Sensor") }

    /// The central as the peripheral sees it, on a link of ATT_MTU `mtu`.
    func remoteCentral(mtu: Int) -> RemoteCentral {
        RemoteCentral(identifier: central, maximumUpdateValueLength: min(mtu - 3, 512))
    }

    // MARK: Requests

    func request(_ kind: GATTProcedure.Kind) -> World.Request {
        .gatt(central: central, peripheral: peripheral, kind)
    }

    func read(_ uuid: BluetoothUUID) -> World.Request { request(.read(remote(uuid))) }

    func write(_ uuid: BluetoothUUID, _ value: Data) -> World.Request { request(.write(remote(uuid), value)) }

    func subscribe(_ uuid: BluetoothUUID, _ enabled: Bool = true) -> World.Request {
        request(.setNotify(remote(uuid), enabled: enabled))
    }
}

extension WorldHarness {
    /// Queues a write without response on a link.
    mutating func writeWithoutResponse(_ value: Data, to uuid: BluetoothUUID, on link: WorldLink) throws {
        try mutate {
            try $0.writeWithoutResponse(central: link.central, characteristic: link.remote(uuid), value: value)
        }
    }

    /// Sends a notification or indication to the characteristic's subscribers.
    @discardableResult
    mutating func updateValue(_ value: Data, of uuid: BluetoothUUID, on link: WorldLink) throws -> Bool {
        try mutate {
            try $0.updateValue(
                peripheral: link.peripheral, value: value, characteristic: link.local(uuid), centrals: nil)
        }
    }

    /// Sets a dynamic characteristic's current value (what automatic answering serves).
    mutating func setValue(_ value: Data, of uuid: BluetoothUUID, on link: WorldLink) throws {
        try mutate { try $0.setValue(peripheral: link.peripheral, value: value, characteristic: link.local(uuid)) }
    }

    /// Subscribes the link's central to a characteristic and checks that it worked.
    mutating func subscribe(_ uuid: BluetoothUUID, on link: WorldLink) throws {
        let id = perform(link.subscribe(uuid))
        try #require(reply(of: id) == .done)
    }

    /// The values a peripheral's app (manual) or handler received in write requests and
    /// commands, with the time since `start` each arrived, in order.
    func writesReceived(by peripheral: UUID, since start: VirtualClock.Instant) -> [Arrival] {
        timeline.flatMap { happening -> [Arrival] in
            let requests: [ATTRequest]
            switch happening.effect {
            case .peripheral(peripheral, .writeRequests(let batch)): requests = batch
            case .ask(peripheral, .command(let request)): requests = [request]
            case .ask(peripheral, .write(let batch, _)): requests = batch
            default: return []
            }
            return requests.map { Arrival(value: $0.value ?? Data(), at: start.duration(to: happening.time)) }
        }
    }

    /// Where in the timeline operation `id` completed.
    func completionIndex(of id: OperationID) -> Int? {
        timeline.firstIndex {
            if case .complete(id, _) = $0.effect { return true }
            return false
        }
    }

    /// Where in the timeline the last write request or command reached `peripheral`.
    func lastArrivalIndex(at peripheral: UUID) -> Int? {
        timeline.lastIndex {
            switch $0.effect {
            case .peripheral(peripheral, .writeRequests), .ask(peripheral, .command), .ask(peripheral, .write): true
            default: false
            }
        }
    }

    /// What reached a central, in order, with the time since `start`: a value update is
    /// named by its bytes in hex, an operation's completion by `names[id]`.
    func centralTimeline(
        _ central: UUID, since start: VirtualClock.Instant, naming names: [OperationID: String]
    ) -> [Arrival.Named] {
        timeline.compactMap { happening in
            let at = start.duration(to: happening.time)
            switch happening.effect {
            case .central(central, .valueUpdated(_, let value)):
                return Arrival.Named(value.map { BridgeLogEntry.hex($0) }.joined(), at: at)
            case .complete(let id, _):
                return names[id].map { Arrival.Named($0, at: at) }
            default:
                return nil
            }
        }
    }
}

/// Something arriving at a virtual time, relative to a test's start.
struct Arrival: Hashable, CustomStringConvertible {
    var value: Data
    var at: Duration

    var description: String { "\(value.map { BridgeLogEntry.hex($0) }.joined())@\(at)" }

    /// Something named arriving at a time.
    struct Named: Hashable, CustomStringConvertible {
        var name: String
        var at: Duration

        init(_ name: String, at: Duration) {
            self.name = name
            self.at = at
        }

        var description: String { "\(name)@\(at)" }
    }
}

/// `count` milliseconds.
func ms(_ count: Int) -> Duration { .milliseconds(count) }
