import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A peripheral's GATT server as plain data: services with the handles a stack would assign,
/// the values it serves, and the rules of the Attribute Protocol (Bluetooth Core
/// Specification, Vol 3, Parts F and G) for who may read, write and subscribe.
///
/// Handles are assigned in order, starting at 1: the service declaration, one include
/// declaration per included service, then for each characteristic its declaration, its
/// value, a Client Characteristic Configuration descriptor when it can notify or indicate,
/// and its other descriptors. Removing a service leaves its handles unused; later services
/// are placed after the last handle ever used.
struct GATTDatabase: Sendable {
    /// A published characteristic and what the server holds for it.
    struct Characteristic: Sendable {
        var local: LocalCharacteristic
        var declarationHandle: UInt16
        /// The static value, or the current value of a dynamic characteristic (what an
        /// automatic responder answers with).
        var value: Data
        var isStatic: Bool
        var cccdHandle: UInt16?
        var descriptors: [Descriptor]
    }

    /// A published descriptor and its value.
    struct Descriptor: Sendable {
        var uuid: BluetoothUUID
        var handle: UInt16
        var value: Data
    }

    /// A published service.
    struct Service: Sendable {
        var local: LocalService
        var characteristics: [Characteristic]
    }

    /// The published services in handle order.
    var services: [Service] = []
    /// The next unused handle; 0 after the last handle (0xFFFF) has been used.
    private var nextHandle: UInt32 = 1

    /// The largest value an attribute can hold.
    static let maximumValueLength = 512

    /// Whether `uuid` names one of the system's own services (Generic Access 1800, Generic
    /// Attribute 1801), which a peripheral manager may not publish.
    static func isSystemService(_ uuid: BluetoothUUID) -> Bool {
        uuid == BluetoothUUID(UInt16(0x1800)) || uuid == BluetoothUUID(UInt16(0x1801))
    }

    /// The attribute handles a characteristic takes: its declaration, its value, a Client
    /// Characteristic Configuration descriptor when it can notify or indicate, and its
    /// `descriptors`.
    static func handles(of properties: CharacteristicProperties, descriptors: Int) -> Int {
        2 + (properties.supportsSubscription ? 1 : 0) + descriptors
    }

    /// Publishes a service, validating it as CoreBluetooth would.
    ///
    /// - Throws: `CoreBluetoothError` `uuidNotAllowed` for the reserved GAP (1800) and GATT
    ///   (1801) services; `APIMisuseError.invalidService(_:reason:)` for descriptions a
    ///   stack rejects.
    mutating func add(_ description: GATTService) throws -> LocalService {
        if Self.isSystemService(description.uuid) { throw CoreBluetoothError(.uuidNotAllowed) }
        try validate(description)
        let includedHandles = try description.includedServices.map { uuid in
            guard let included = services.first(where: { $0.local.uuid == uuid }) else {
                throw APIMisuseError.invalidService(description.uuid, reason: .includedServiceNotPublished(uuid))
            }
            return included.local.handle
        }
        let needed =
            1 + includedHandles.count
            + description.characteristics.reduce(0) { total, characteristic in
                total + Self.handles(of: characteristic.properties, descriptors: characteristic.descriptors.count)
            }
        guard nextHandle + UInt32(needed) - 1 <= 0xFFFF, nextHandle != 0 else {
            throw APIMisuseError.invalidService(description.uuid, reason: .outOfHandles)
        }
        var handle = UInt16(nextHandle)
        func take() -> UInt16 {
            defer { handle &+= 1 }
            return handle
        }
        let serviceHandle = take()
        for _ in includedHandles { _ = take() }
        var characteristics: [Characteristic] = []
        characteristics.reserveCapacity(description.characteristics.count)
        for item in description.characteristics {
            let declaration = take()
            let valueHandle = take()
            let cccd = item.properties.supportsSubscription ? take() : nil
            let descriptors = item.descriptors.map { Descriptor(uuid: $0.uuid, handle: take(), value: $0.value) }
            let local = LocalCharacteristic(
                serviceUUID: description.uuid, serviceHandle: serviceHandle, uuid: item.uuid,
                properties: item.properties, permissions: item.permissions, handle: valueHandle)
            characteristics.append(
                Characteristic(
                    local: local, declarationHandle: declaration, value: item.value ?? Data(),
                    isStatic: item.isStatic, cccdHandle: cccd, descriptors: descriptors))
        }
        let endHandle = handle &- 1
        nextHandle = UInt32(endHandle) + 1
        if nextHandle > 0xFFFF { nextHandle = 0 }
        let local = LocalService(
            uuid: description.uuid, isPrimary: description.isPrimary, handle: serviceHandle, endHandle: endHandle,
            includedServiceHandles: includedHandles, characteristics: characteristics.map(\.local))
        services.append(Service(local: local, characteristics: characteristics))
        return local
    }

    private func validate(_ description: GATTService) throws {
        func invalid(_ reason: APIMisuseError.InvalidServiceReason) -> APIMisuseError {
            .invalidService(description.uuid, reason: reason)
        }
        for characteristic in description.characteristics {
            if let value = characteristic.value {
                let mutable: CharacteristicProperties = [.write, .writeWithoutResponse, .authenticatedSignedWrites]
                if !characteristic.properties.intersection(mutable).isEmpty
                    || characteristic.properties.supportsSubscription
                {
                    throw invalid(.staticValueNotReadOnly(characteristic.uuid))
                }
                if value.count > Self.maximumValueLength {
                    throw invalid(.valueTooLong(characteristic.uuid, length: value.count))
                }
            }
            for descriptor in characteristic.descriptors {
                if descriptor.uuid == .clientCharacteristicConfiguration {
                    throw invalid(.managedDescriptor(characteristic.uuid))
                }
                if descriptor.value.count > Self.maximumValueLength {
                    throw invalid(.valueTooLong(descriptor.uuid, length: descriptor.value.count))
                }
            }
        }
    }

    /// Removes a published service.
    ///
    /// - Throws: `APIMisuseError.serviceNotPublished(_:handle:)` if it is not published
    ///   (with these handles).
    @discardableResult
    mutating func remove(_ service: LocalService) throws -> Service {
        guard
            let index = services.firstIndex(where: {
                $0.local.handle == service.handle && $0.local.uuid == service.uuid
            })
        else {
            throw APIMisuseError.serviceNotPublished(service.uuid, handle: service.handle)
        }
        return services.remove(at: index)
    }

    /// Removes every service and returns what was removed. Handles are not reused.
    @discardableResult
    mutating func removeAll() -> [Service] {
        defer { services.removeAll() }
        return services
    }

    /// The published services as the peripheral manager sees them.
    var localServices: [LocalService] { services.map(\.local) }
}
