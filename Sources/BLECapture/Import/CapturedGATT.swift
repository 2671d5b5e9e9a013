import BLECore

/// The GATT database a capture's discovery showed, attribute by attribute (Bluetooth Core
/// Specification, Vol 3, Part G, 3): service groups, include and characteristic
/// declarations, the types Find Information reported, and the values that were read.
struct CapturedGATT: Sendable {
    struct Service: Sendable, Hashable {
        var handle: UInt16
        var endHandle: UInt16
        var uuid: BluetoothUUID
        var isPrimary: Bool
    }

    struct Include: Sendable, Hashable {
        var declarationHandle: UInt16
        var serviceHandle: UInt16
        var endHandle: UInt16
        var uuid: BluetoothUUID?
    }

    struct Characteristic: Sendable, Hashable {
        var declarationHandle: UInt16
        var valueHandle: UInt16
        var properties: UInt8
        var uuid: BluetoothUUID
    }

    struct Descriptor: Sendable, Hashable {
        var handle: UInt16
        var uuid: BluetoothUUID
    }

    static let primaryService = BluetoothUUID(UInt16(0x2800))
    static let secondaryService = BluetoothUUID(UInt16(0x2801))
    static let include = BluetoothUUID(UInt16(0x2802))
    static let characteristic = BluetoothUUID(UInt16(0x2803))
    static let declarationTypes: Set<BluetoothUUID> = [primaryService, secondaryService, include, characteristic]

    /// Services by declaration handle.
    var services: [UInt16: Service] = [:]
    /// Include declarations by handle.
    var includes: [UInt16: Include] = [:]
    /// Characteristic declarations by handle.
    var characteristics: [UInt16: Characteristic] = [:]
    /// Attribute types Find Information reported, by handle.
    var types: [UInt16: BluetoothUUID] = [:]
    /// The last value read from each handle.
    var values: [UInt16: [UInt8]] = [:]

    /// The services in handle order: those discovered, and the secondary services only
    /// include declarations revealed (with the UUID the include carried, or that a read of
    /// the included service's declaration returned).
    var sortedServices: [Service] {
        var all = services
        for include in includes.values where all[include.serviceHandle] == nil {
            let read = values[include.serviceHandle].flatMap { try? ATTPDU.uuid($0[...], opcode: 0x0B) }
            guard let uuid = include.uuid ?? read else { continue }
            all[include.serviceHandle] = Service(
                handle: include.serviceHandle, endHandle: include.endHandle, uuid: uuid, isPrimary: false)
        }
        return all.values.sorted { $0.handle < $1.handle }
    }

    /// The service whose group holds `handle`.
    func service(containing handle: UInt16) -> Service? {
        sortedServices.last { $0.handle <= handle && handle <= $0.endHandle }
    }

    /// A service's characteristics in handle order.
    func characteristics(of service: Service) -> [Characteristic] {
        characteristics.values.filter {
            service.handle < $0.declarationHandle && $0.declarationHandle <= service.endHandle
        }
        .sorted { $0.declarationHandle < $1.declarationHandle }
    }

    /// A service's include declarations in handle order.
    func includes(of service: Service) -> [Include] {
        includes.values.filter { service.handle < $0.declarationHandle && $0.declarationHandle <= service.endHandle }
            .sorted { $0.declarationHandle < $1.declarationHandle }
    }

    /// The last handle of a characteristic: before the next declaration of its service, or
    /// the service's end.
    func endHandle(of characteristic: Characteristic) -> UInt16 {
        guard let service = service(containing: characteristic.declarationHandle) else {
            return characteristic.valueHandle
        }
        let next = characteristics(of: service).first { $0.declarationHandle > characteristic.declarationHandle }
        return next.map { $0.declarationHandle - 1 } ?? service.endHandle
    }

    /// A characteristic's descriptors: the typed handles after its value, up to its end.
    func descriptors(of characteristic: Characteristic) -> [Descriptor] {
        let end = endHandle(of: characteristic)
        guard characteristic.valueHandle < end else { return [] }
        return (characteristic.valueHandle + 1...end).compactMap { handle in
            guard let uuid = types[handle], !Self.declarationTypes.contains(uuid) else { return nil }
            return Descriptor(handle: handle, uuid: uuid)
        }
    }

    /// The characteristic whose value is at `handle`.
    func characteristic(valueHandle handle: UInt16) -> Characteristic? {
        characteristics.values.first { $0.valueHandle == handle }
    }

    /// The descriptors of every characteristic by handle, worked out once: a lookup is a
    /// dictionary access, where walking each characteristic's handles took up to 65,535 steps
    /// (a service running to 0xFFFF) and sorted the services again for every lookup.
    struct DescriptorIndex: Sendable {
        private var byHandle: [UInt16: (Characteristic, Descriptor)] = [:]

        init(_ gatt: CapturedGATT) {
            let services = gatt.sortedServices
            // Characteristics in declaration order, so the first of two whose (malformed)
            // ranges overlap wins, as it does in handle order.
            let characteristics = gatt.characteristics.values.sorted { $0.declarationHandle < $1.declarationHandle }
            let typed = gatt.types.filter { !CapturedGATT.declarationTypes.contains($0.value) }.keys.sorted()
            for (position, characteristic) in characteristics.enumerated() {
                // The characteristic's end, as ``CapturedGATT/endHandle(of:)`` works it out.
                let declaration = characteristic.declarationHandle
                guard let service = services.last(where: { $0.handle <= declaration && declaration <= $0.endHandle })
                else { continue }
                // The next declaration in handle order, if the service holds it (it follows this
                // one, so it is in the service unless it is past the service's end).
                let next = characteristics.dropFirst(position + 1).first.map(\.declarationHandle)
                let end = next.flatMap { $0 <= service.endHandle ? $0 - 1 : nil } ?? service.endHandle
                guard characteristic.valueHandle < end else { continue }
                // The typed handles after the value, up to the end: binary search for the first.
                var low = 0
                var high = typed.count
                while low < high {
                    let middle = (low + high) / 2
                    if typed[middle] <= characteristic.valueHandle { low = middle + 1 } else { high = middle }
                }
                for handle in typed[low...] {
                    guard handle <= end else { break }
                    guard byHandle[handle] == nil, let uuid = gatt.types[handle] else { continue }
                    byHandle[handle] = (characteristic, Descriptor(handle: handle, uuid: uuid))
                }
            }
        }

        /// The characteristic a descriptor handle belongs to, and the descriptor.
        func descriptor(at handle: UInt16) -> (Characteristic, Descriptor)? {
            byHandle[handle]
        }
    }
}
