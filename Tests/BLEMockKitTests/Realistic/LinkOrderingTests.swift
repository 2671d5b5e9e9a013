import BLECore
import BLEMockKit
import Foundation
import Testing

/// The link is an ordered pipe, seen through the public API: what one side sends arrives in
/// the order sent, whoever answers the peripheral's requests, in fast and realistic mode.
@Suite("Realistic: link ordering", .timeLimit(.minutes(10)))
struct LinkOrderingTests {
    enum Mode: String, CaseIterable, CustomTestStringConvertible {
        case fast, realistic

        var testDescription: String { rawValue }
    }

    enum Answering: String, CaseIterable, CustomTestStringConvertible {
        case automatic, handler, manual

        var testDescription: String { rawValue }
    }

    enum UUIDs {
        static let service: BluetoothUUID = "FFE0"
        /// Dynamic: written without response (and read back).
        static let data: BluetoothUUID = "FFE1"
        /// Dynamic: written with response, the commit after a burst of data.
        static let control: BluetoothUUID = "FFE2"
        static let notifying: BluetoothUUID = "FFE3"
        static let indicating: BluetoothUUID = "FFE4"
        /// Dynamic: read.
        static let status: BluetoothUUID = "FFE5"
    }

    /// What a status read returns from a handler or manual peripheral.
    static let status = Data([0x5A])

    static var service: GATTService {
        GATTService(
            uuid: UUIDs.service,
            characteristics: [
                GATTCharacteristic(
                    uuid: UUIDs.data, properties: [.read, .writeWithoutResponse], permissions: [.readable, .writeable]),
                GATTCharacteristic(uuid: UUIDs.control, properties: .write, permissions: .writeable),
                GATTCharacteristic(uuid: UUIDs.notifying, properties: .notify, permissions: .readable),
                GATTCharacteristic(uuid: UUIDs.indicating, properties: .indicate, permissions: .readable),
                GATTCharacteristic(uuid: UUIDs.status, properties: .read, permissions: .readable),
            ])
    }

    /// A write a handler peripheral received, with the virtual time it arrived.
    struct Received: Hashable, Sendable {
        var characteristic: BluetoothUUID
        var value: Data
        var at: VirtualClock.Instant
    }

    /// A central linked to a peripheral publishing ``service``, everything discovered.
    struct Rig {
        let bridge: MockBLEBridge
        let peripheral: MockPeripheralManager
        let central: MockCentralManager
        let service: LocalService
        let characteristics: [RemoteCharacteristic]
        let answering: Answering
        /// What a handler peripheral received, in order.
        let handled: Recorder<Received>
        /// The task answering a manual peripheral's requests from its event stream.
        let responder: Task<Void, Never>?

        func remote(_ uuid: BluetoothUUID) -> RemoteCharacteristic { characteristics.first { $0.uuid == uuid }! }

        func local(_ uuid: BluetoothUUID) -> LocalCharacteristic { service.characteristic(uuid)! }

        /// Ends the simulation (which ends the responder's event stream) and waits for the responder.
        func finish() async {
            _ = await bridge.finish()
            await responder?.value
        }

        /// The writes the peripheral received, in order, with the time each arrived: from
        /// the handler's record, or from the log of a manual peripheral's write requests (a
        /// long write is one entry there, one per Prepare Write part for a handler).
        func arrivals() async -> [Received] {
            switch answering {
            case .automatic: return []
            case .handler: return handled.entries
            case .manual:
                return await bridge.log.filter { $0.kind == .writeRequest }.map {
                    Received(characteristic: $0.attribute!, value: $0.value ?? Data(), at: $0.time)
                }
            }
        }

        /// When the last write with response completed.
        func commitTime() async -> VirtualClock.Instant? {
            await bridge.log.last { $0.kind == .write && $0.writeType == .withResponse }?.time
        }
    }

    /// Makes a rig. A manual peripheral is answered by a task reading its events: a read after
    /// `beforeAnswering` ran (it may send updates), the control write at once, nothing else.
    static func rig(
        _ bridge: MockBLEBridge, answering: Answering,
        central configuration: MockCentralManager.Configuration = .init(),
        updateQueue: QueueBehavior = .unlimited,
        beforeAnswering: @escaping @Sendable (MockPeripheralManager, LocalService) async throws -> Void = { _, _ in }
    ) async throws -> Rig {
        let handled = Recorder<Received>()
        let clock = bridge.clock
        let handling: RequestHandling
        switch answering {
        case .automatic: handling = .automatic
        case .manual: handling = .manual
        case .handler:
            handling = .handler { request in
                handled.append(
                    Received(characteristic: request.characteristic.uuid, value: request.value ?? Data(), at: clock.now)
                )
                return .success(request.value == nil ? Self.status : nil)
            }
        }
        let peripheral = MockPeripheralManager(
            configuration: .init(name: "Sensor", updateQueue: updateQueue, requestHandling: handling), bridge: bridge)
        let local = try await peripheral.add(service)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Sensor", serviceUUIDs: [UUIDs.service]))
        var responder: Task<Void, Never>?
        if answering == .manual {
            let events = peripheral.events()
            responder = Task {
                do {
                    for await event in events {
                        switch event {
                        case .readRequest(let request):
                            try await beforeAnswering(peripheral, local)
                            try await peripheral.respond(to: request, withResult: .success, value: Self.status)
                        case .writeRequests(let requests) where requests[0].characteristic.uuid == UUIDs.control:
                            try await peripheral.respond(to: requests[0], withResult: .success, value: nil)
                        default:
                            break
                        }
                    }
                } catch {
                    Issue.record(error, "the manual peripheral could not answer")
                }
            }
        }
        let (central, characteristics) = try await Realistic.connectedCentral(
            to: peripheral, on: bridge, configuration: configuration)
        return Rig(
            bridge: bridge, peripheral: peripheral, central: central, service: local,
            characteristics: characteristics, answering: answering, handled: handled, responder: responder)
    }

    static func bridge(_ mode: Mode, seed: UInt64 = 1) -> MockBLEBridge {
        mode == .fast ? MockBLEBridge(seed: seed) : Realistic.steadyBridge(seed: seed)
    }

    // MARK: Writes without response, then a write with response

    @Test(
        "Six writes without response then a write with response arrive in issue order; the write completes last",
        arguments: Mode.allCases, Answering.allCases)
    func commandsThenCommit(mode: Mode, answering: Answering) async throws {
        let bridge = Self.bridge(mode)
        let rig = try await Self.rig(
            bridge, answering: answering,
            central: .init(mtu: .fixed(23), writeWithoutResponseQueue: .realistic(capacity: 8)))
        let data = rig.remote(UUIDs.data)
        let (start, pdus) = (await bridge.now, await bridge.attPDUCount)
        for byte in UInt8(1)...6 { try await rig.central.writeValue(Data([byte]), for: data, type: .withoutResponse) }
        try await rig.central.writeValue(Data([0xC0]), for: rig.remote(UUIDs.control), type: .withResponse)
        // All six commands crossed before the write's exchange ended.
        #expect(await bridge.attPDUCount - pdus == 8)
        let completed = try #require(await rig.commitTime())
        let interval = mode == .fast ? Duration.zero : .milliseconds(30)
        #expect(start.duration(to: completed) == interval * 2)
        if answering == .automatic {
            #expect(try await rig.central.readValue(for: data) == Data([6]))
        } else {
            let arrivals = await rig.arrivals()
            #expect(arrivals.map(\.value) == [1, 2, 3, 4, 5, 6, 0xC0].map { Data([$0]) })
            #expect(arrivals.map(\.characteristic) == Array(repeating: UUIDs.data, count: 6) + [UUIDs.control])
            let times = [1, 1, 1, 1, 2, 2, 2].map { start.advanced(by: interval * $0) }
            #expect(arrivals.map(\.at) == times)
        }
        await rig.finish()
    }

    // MARK: Updates around a read

    @Test(
        "Notifications and indications sent around a read reach the central in the order sent",
        arguments: Mode.allCases, Answering.allCases)
    func updatesAroundARead(mode: Mode, answering: Answering) async throws {
        let bridge = Self.bridge(mode)
        // A manual peripheral sends the third and fourth update before it answers the read.
        let rig = try await Self.rig(bridge, answering: answering) { peripheral, service in
            _ = try await peripheral.updateValue(
                Data([3]), for: service.characteristic(UUIDs.notifying)!, onSubscribedCentrals: nil)
            _ = try await peripheral.updateValue(
                Data([4]), for: service.characteristic(UUIDs.indicating)!, onSubscribedCentrals: nil)
        }
        try await rig.central.setNotifyValue(true, for: rig.remote(UUIDs.notifying))
        try await rig.central.setNotifyValue(true, for: rig.remote(UUIDs.indicating))
        let centralEvents = rig.central.events()
        let start = await bridge.now
        let notifying = rig.local(UUIDs.notifying)
        let indicating = rig.local(UUIDs.indicating)
        #expect(try await rig.peripheral.updateValue(Data([1]), for: notifying, onSubscribedCentrals: nil))
        #expect(try await rig.peripheral.updateValue(Data([2]), for: indicating, onSubscribedCentrals: nil))
        let read = try await rig.central.readValue(for: rig.remote(UUIDs.status))
        #expect(read == (answering == .automatic ? Data() : Self.status))
        if answering != .manual {
            #expect(try await rig.peripheral.updateValue(Data([3]), for: notifying, onSubscribedCentrals: nil))
            #expect(try await rig.peripheral.updateValue(Data([4]), for: indicating, onSubscribedCentrals: nil))
        }
        await bridge.advance(by: .milliseconds(100))
        // What reached the central, in log order: the updates, and the read's completion.
        let arrived = await bridge.log.filter {
            ($0.kind == .notification || $0.kind == .indication) && $0.central != nil || $0.kind == .read
        }
        let names = arrived.map { $0.kind == .read ? "read" : "\($0.value?.first ?? 0)" }
        let times = arrived.map { start.duration(to: $0.time) }
        let interval = mode == .fast ? Duration.zero : .milliseconds(30)
        if answering == .manual {
            #expect(names == ["1", "2", "3", "4", "read"])
            #expect(times == [1, 1, 2, 2, 2].map { interval * $0 })
        } else {
            #expect(names == ["1", "2", "read", "3", "4"])
            #expect(times == [1, 1, 1, 2, 2].map { interval * $0 })
        }
        await rig.finish()
        #expect(await Realistic.drain(centralEvents).updatedValues == [1, 2, 3, 4].map { Data([$0]) })
    }
}
