import BLEMockKit
import Foundation

// CoreBluetoothMock gives each service, characteristic and descriptor an internal `identifier`:
// a mock's own, which the objects a central discovers from it share. Tests that import it
// `@testable` compare them, to tell that the attribute discovered is the one the spec declared.
// Here a mock's comes from the object's identity (CoreBluetoothMock draws a random one), and a
// discovered attribute's is its mock's, found when first read.

extension CBMAttribute {
    /// The identifier of an attribute of the app's own or of a spec's (a mock): derived from
    /// the object's identity, so unique among the attributes alive.
    static func localIdentifier(of attribute: CBMAttribute) -> UUID {
        let address = UInt64(UInt(bitPattern: ObjectIdentifier(attribute)))
        var generator = SeededGenerator(seed: 0).derived("BLECBM.localAttribute").derived(address)
        return generator.uuid()
    }

    /// The identifier of a discovered attribute that has no mock behind it (or whose manager is
    /// gone): derived from its peripheral and handle.
    static func remoteIdentifier(peripheral: UUID, handle: UInt16) -> UUID {
        var generator = SeededGenerator(seed: 0).derived("BLECBM.remoteAttribute").derived(peripheral.uuidString)
            .derived(UInt64(handle))
        return generator.uuid()
    }

    /// The spec simulation behind a peripheral object, if its manager simulates one.
    static func simulation(of peripheral: CBMPeripheral?) -> SpecSimulation? {
        guard let peripheral, let engine = peripheral.backend as? MockCentralEngine else { return nil }
        return engine.spec(peripheral.identifier)
    }
}

extension CBMService {
    /// CoreBluetoothMock's internal identifier: a service mock's own; for a discovered service,
    /// that of the mock the spec declared at its handle.
    var identifier: UUID {
        if let known = lock.withLock({ storedIdentifier }) { return known }
        let found =
            remote.peripheral == localPlaceholder
            ? Self.localIdentifier(of: self)
            : Self.simulation(of: peripheral)?.serviceMock(at: remote.handle, of: remote.peripheral)?.identifier
                ?? Self.remoteIdentifier(peripheral: remote.peripheral, handle: remote.handle)
        return lock.withLock {
            if storedIdentifier == nil { storedIdentifier = found }
            return storedIdentifier ?? found
        }
    }
}

extension CBMCharacteristic {
    /// CoreBluetoothMock's internal identifier: a characteristic mock's own; for a discovered
    /// characteristic, that of the mock the spec declared at its handle.
    var identifier: UUID {
        if let known = lock.withLock({ storedIdentifier }) { return known }
        let found =
            remote.peripheral == localPlaceholder
            ? Self.localIdentifier(of: self)
            : Self.simulation(of: service?.peripheral)?.characteristicMock(at: remote.handle, of: remote.peripheral)?
                .identifier ?? Self.remoteIdentifier(peripheral: remote.peripheral, handle: remote.handle)
        return lock.withLock {
            if storedIdentifier == nil { storedIdentifier = found }
            return storedIdentifier ?? found
        }
    }
}

extension CBMDescriptor {
    /// CoreBluetoothMock's internal identifier: a descriptor mock's own; for a discovered
    /// descriptor, that of the mock the spec declared for it.
    var identifier: UUID {
        if let known = lock.withLock({ storedIdentifier }) { return known }
        let found =
            remote.peripheral == localPlaceholder
            ? Self.localIdentifier(of: self)
            : Self.simulation(of: characteristic?.service?.peripheral)?.descriptorMock(of: remote)?.identifier
                ?? Self.remoteIdentifier(peripheral: remote.peripheral, handle: remote.handle)
        return lock.withLock {
            if storedIdentifier == nil { storedIdentifier = found }
            return storedIdentifier ?? found
        }
    }
}
