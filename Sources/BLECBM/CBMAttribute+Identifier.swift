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

    /// The identifier of `attribute`, kept at `stored` (read and written with `lock` held) once
    /// worked out: a local attribute's (an app's own, or a spec's mock: `remote`'s peripheral is
    /// the placeholder) from its identity; a discovered one's, its mock's (`mockIdentifier`), else
    /// one derived from its peripheral and handle.
    static func identifier<Attribute: CBMAttribute>(
        of attribute: Attribute, kept stored: ReferenceWritableKeyPath<Attribute, UUID?>, lock: Lock,
        remote: (peripheral: UUID, handle: UInt16), mockIdentifier: () -> UUID?
    ) -> UUID {
        if let known = lock.withLock({ attribute[keyPath: stored] }) { return known }
        let found =
            remote.peripheral == localPlaceholder
            ? localIdentifier(of: attribute)
            : mockIdentifier() ?? remoteIdentifier(peripheral: remote.peripheral, handle: remote.handle)
        return lock.withLock {
            if attribute[keyPath: stored] == nil { attribute[keyPath: stored] = found }
            return attribute[keyPath: stored] ?? found
        }
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
        Self.identifier(of: self, kept: \.storedIdentifier, lock: lock, remote: (remote.peripheral, remote.handle)) {
            Self.simulation(of: peripheral)?.serviceMock(at: remote.handle, of: remote.peripheral)?.identifier
        }
    }
}

extension CBMCharacteristic {
    /// CoreBluetoothMock's internal identifier: a characteristic mock's own; for a discovered
    /// characteristic, that of the mock the spec declared at its handle.
    var identifier: UUID {
        Self.identifier(of: self, kept: \.storedIdentifier, lock: lock, remote: (remote.peripheral, remote.handle)) {
            Self.simulation(of: service?.peripheral)?.characteristicMock(at: remote.handle, of: remote.peripheral)?
                .identifier
        }
    }
}

extension CBMDescriptor {
    /// CoreBluetoothMock's internal identifier: a descriptor mock's own; for a discovered
    /// descriptor, that of the mock the spec declared for it.
    var identifier: UUID {
        Self.identifier(of: self, kept: \.storedIdentifier, lock: lock, remote: (remote.peripheral, remote.handle)) {
            Self.simulation(of: characteristic?.service?.peripheral)?.descriptorMock(of: remote)?.identifier
        }
    }
}
