import BLECore
import BLEMockKit

/// Puts the handles of a recording's events where the capture builders can read them.
///
/// The builders work out the GATT database from handles, as a capture shows it: a service
/// groups the handles from its declaration to its end, a characteristic's declaration comes
/// just before its value, and its descriptors follow the value. A recording made on a bridge
/// has the peripheral's real handles, laid out so. One made on CoreBluetooth, which hides
/// handles, has the numbers the kit gave each object in discovery order: every service is one
/// number wide (its end is its own number), its characteristics are numbered after all the
/// services, and after a reconnection the rediscovered objects get new numbers. Read as
/// handles, those put no characteristic in any service, and a second connection's discovery
/// describes a second copy of the device.
///
/// So each attribute is known by where discovery put it — a service by its type (and its
/// rank among the services of that type), a characteristic by its service and type, a
/// descriptor by its characteristic and type — and the numbers an attribute was reported
/// with all stand for it. When the numbers first reported lay the attributes out as handles
/// do, they are kept (a bridge's recording imports as before); else the attributes are
/// numbered again in ATT order: each service's declaration, then each characteristic's
/// declaration, value and descriptors, in the order discovery reported them.
struct RecordedLayout {
    private enum Kind { case service, characteristic, descriptor }

    /// An attribute discovery reported: its kind, type, parent, children, and the first
    /// number (and, for a service, end) it was reported with.
    private struct Node {
        var kind: Kind
        var uuid: BluetoothUUID
        var parent: Int?
        var children: [Int] = []
        var handle: UInt16
        var endHandle: UInt16
    }

    private var nodes: [Node] = []
    /// The node each number reported so far stands for.
    private var alias: [UInt16: Int] = [:]
    /// The nodes a number stood for since the last connection: a rediscovery gives each
    /// object of the new connection to an attribute not yet claimed in it.
    private var claimed: Set<Int> = []

    /// The events of one peripheral, with their handles put where the builders read them.
    static func rebased(_ events: [RecordedEvent]) -> [RecordedEvent] {
        var layout = RecordedLayout()
        for event in events { layout.observe(event) }
        let numbers = layout.numbers()
        let taken = Set(numbers.values.map(\.handle))
        var replay = RecordedLayout()
        return events.map { event in
            replay.observe(event)
            return replay.rebase(event, numbers: numbers, taken: taken, later: layout)
        }
    }

    /// Takes in what `event` says of the layout: a connection, or a discovery.
    private mutating func observe(_ event: RecordedEvent) {
        switch event {
        case .connected:
            claimed = []
        case .servicesDiscovered(_, let services):
            for service in services {
                _ = resolve(
                    service.handle, kind: .service, uuid: service.uuid, parent: nil, endHandle: service.endHandle)
            }
        case .characteristicsDiscovered(_, let service, let characteristics):
            guard let parent = alias[service], nodes[parent].kind == .service else { return }
            for characteristic in characteristics {
                _ = resolve(characteristic.handle, kind: .characteristic, uuid: characteristic.uuid, parent: parent)
            }
        case .descriptorsDiscovered(_, let characteristic, let descriptors):
            guard let parent = alias[characteristic], nodes[parent].kind == .characteristic else { return }
            for descriptor in descriptors {
                _ = resolve(descriptor.handle, kind: .descriptor, uuid: descriptor.uuid, parent: parent)
            }
        default:
            break
        }
    }

    /// The node a reported number stands for: the one it stood for before, if of the same
    /// kind, type and parent; else the first such attribute not claimed since the connection;
    /// else a new one.
    private mutating func resolve(
        _ handle: UInt16, kind: Kind, uuid: BluetoothUUID, parent: Int?, endHandle: UInt16? = nil
    ) -> Int {
        if let known = alias[handle], nodes[known].kind == kind, nodes[known].uuid == uuid,
            nodes[known].parent == parent
        {
            claimed.insert(known)
            return known
        }
        let siblings = parent.map { nodes[$0].children } ?? nodes.indices.filter { nodes[$0].kind == .service }
        let node: Int
        if let free = siblings.first(where: { nodes[$0].uuid == uuid && !claimed.contains($0) }) {
            node = free
        } else {
            node = nodes.count
            nodes.append(Node(kind: kind, uuid: uuid, parent: parent, handle: handle, endHandle: endHandle ?? handle))
            if let parent { nodes[parent].children.append(node) }
        }
        alias[handle] = node
        claimed.insert(node)
        return node
    }

    /// The services in the order of their first numbers, and a node's children so.
    private var services: [Int] {
        nodes.indices.filter { nodes[$0].kind == .service }.sorted { nodes[$0].handle < nodes[$1].handle }
    }

    private func children(of node: Int) -> [Int] {
        nodes[node].children.sorted { nodes[$0].handle < nodes[$1].handle }
    }

    /// Each node's handle and end: the first numbers reported when they lay the attributes out
    /// as handles do, else new ones in ATT order.
    private func numbers() -> [Int: (handle: UInt16, endHandle: UInt16)] {
        if isHandleLayout {
            return Dictionary(uniqueKeysWithValues: nodes.indices.map { ($0, (nodes[$0].handle, nodes[$0].endHandle)) })
        }
        var numbers: [Int: (handle: UInt16, endHandle: UInt16)] = [:]
        var next: UInt32 = 1
        func take() -> UInt16? {
            guard next <= UInt32(UInt16.max) else { return nil }
            defer { next += 1 }
            return UInt16(next)
        }
        for service in services {
            guard let start = take() else { break }
            for characteristic in children(of: service) {
                guard take() != nil, let value = take() else { break }
                numbers[characteristic] = (value, value)
                for descriptor in children(of: characteristic) {
                    guard let handle = take() else { break }
                    numbers[descriptor] = (handle, handle)
                }
            }
            numbers[service] = (start, UInt16(next - 1))
        }
        return numbers
    }

    /// Whether the first numbers are handles: each service's group holds its characteristics
    /// (a declaration before each value) and their descriptors, in increasing order, and the
    /// groups do not overlap.
    private var isHandleLayout: Bool {
        var last: UInt32 = 0
        for service in services {
            let group = nodes[service]
            guard UInt32(group.handle) > last, group.endHandle >= group.handle else { return false }
            last = UInt32(group.handle)
            for characteristic in children(of: service) {
                let value = UInt32(nodes[characteristic].handle)
                guard value >= last + 2 else { return false }  // its declaration comes after `last`
                last = value
                for descriptor in children(of: characteristic) {
                    guard UInt32(nodes[descriptor].handle) > last else { return false }
                    last = UInt32(nodes[descriptor].handle)
                }
            }
            guard last <= UInt32(group.endHandle) else { return false }
            last = UInt32(group.endHandle)
        }
        return true
    }

    /// `event` with each number replaced by the handle of the attribute it stands for (as
    /// discovery so far says, or else as a later discovery, in `later`, says: an operation
    /// recorded before the discovery that reported its attribute). A number no discovery
    /// reported keeps its value unless that is another attribute's handle, when it becomes 0,
    /// which names no attribute (`taken` holds every attribute's handle).
    private func rebase(
        _ event: RecordedEvent, numbers: [Int: (handle: UInt16, endHandle: UInt16)], taken: Set<UInt16>,
        later: RecordedLayout
    ) -> RecordedEvent {
        func handle(_ number: UInt16) -> UInt16 {
            if let node = alias[number] ?? later.alias[number], let new = numbers[node] { return new.handle }
            return taken.contains(number) ? 0 : number
        }
        switch event {
        case .servicesDiscovered(let peripheral, let services):
            return .servicesDiscovered(
                peripheral: peripheral,
                services: services.map { service in
                    var moved = service
                    if let node = alias[service.handle], let new = numbers[node] {
                        moved.handle = new.handle
                        moved.endHandle = new.endHandle
                    } else {
                        moved.handle = handle(service.handle)
                        moved.endHandle = moved.handle
                    }
                    return moved
                })
        case .characteristicsDiscovered(let peripheral, let service, let characteristics):
            return .characteristicsDiscovered(
                peripheral: peripheral, service: handle(service),
                characteristics: characteristics.map { characteristic in
                    var moved = characteristic
                    moved.handle = handle(characteristic.handle)
                    return moved
                })
        case .descriptorsDiscovered(let peripheral, let characteristic, let descriptors):
            return .descriptorsDiscovered(
                peripheral: peripheral, characteristic: handle(characteristic),
                descriptors: descriptors.map { descriptor in
                    var moved = descriptor
                    moved.handle = handle(descriptor.handle)
                    return moved
                })
        case .read(let peripheral, let number, let result):
            return .read(peripheral: peripheral, handle: handle(number), result: result)
        case .write(let peripheral, let number, let value, let withResponse, let error):
            return .write(
                peripheral: peripheral, handle: handle(number), value: value, withResponse: withResponse, error: error)
        case .notificationState(let peripheral, let number, let enabled, let error):
            return .notificationState(peripheral: peripheral, handle: handle(number), enabled: enabled, error: error)
        case .valueUpdated(let peripheral, let number, let value, let isIndication):
            return .valueUpdated(
                peripheral: peripheral, handle: handle(number), value: value, isIndication: isIndication)
        case .scanStarted, .scanStopped, .discovered, .connected, .connectionFailed, .disconnected:
            return event
        }
    }
}
