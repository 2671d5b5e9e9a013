import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    /// Takes a central off the air: its scan stops, its links drop (peripherals see it
    /// unsubscribe), its waiting operations fail with `operationCancelled`, and its event
    /// streams finish.
    func shutDown(central: UUID) {
        guard let record = world.centrals[central] else { return }
        stopScan(central: central)
        for key in world.links(ofCentral: central) {
            tearDown(key, reason: nil, pendingError: CoreBluetoothError(.operationCancelled))
        }
        resumeWaiting(where: { $0.link.central == central }, with: .failure(CoreBluetoothError(.operationCancelled)))
        world.centrals[central]!.state = .unknown
        world.record(.stateChanged, central: central, detail: "shut down")
        record.events.finish()
    }

    /// Takes a peripheral off the air: advertising stops, its links drop (centrals see
    /// `peripheralDisconnected`), its requests are forgotten, and its event streams finish.
    func shutDown(peripheral: UUID) {
        guard let record = world.peripherals[peripheral] else { return }
        stopAdvertising(peripheral: peripheral)
        for key in world.links(ofPeripheral: peripheral) {
            let error = CoreBluetoothError(.peripheralDisconnected)
            tearDown(key, reason: error, pendingError: error)
        }
        resumeWaiting(
            where: { $0.link.peripheral == peripheral && $0.kind == .connect },
            with: .failure(CoreBluetoothError(.operationCancelled)))
        world.peripherals[peripheral]!.state = .unknown
        world.record(.stateChanged, peripheral: peripheral, detail: "shut down")
        record.events.finish()
    }
}
