import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: state restoration", .timeLimit(.minutes(10)))
struct WorldRestorationTests {
    /// Whether the timeline holds the end of a manager's event streams.
    static func finished(_ harness: WorldHarness, _ manager: Manager) -> Bool {
        harness.timeline.contains {
            if case .finishEvents(manager) = $0.effect { return true }
            return false
        }
    }

    @Test(
        "A terminated central with a restore identifier keeps its links, attempts and scan; restoring hands them over")
    func centralRestoration() throws {
        let configuration = MockCentralManager.Configuration(restoreIdentifier: "app.central")
        var (harness, link) = try WorldLink.make(timing: .instant, central: configuration)
        let other = harness.addPeripheral(.init(name: "Other"))
        try harness.startAdvertising(other, AdvertisementData(localName: "Other"))
        try harness.discover(other, by: link.central)
        harness.mutate { $0.stopAdvertising(peripheral: other) }
        let attempt = harness.perform(.connect(central: link.central, peripheral: other, timeout: nil))
        #expect(harness.world.isParked(attempt))
        try harness.startScan(link.central, services: [WorldUUID.service])

        harness.mutate { $0.terminate(central: link.central) }
        #expect(harness.error(of: attempt) as? CoreBluetoothError == CoreBluetoothError(.operationCancelled))
        #expect(Self.finished(harness, .central(link.central)))
        #expect(harness.world.state(of: .central(link.central)) == .unknown)
        #expect(harness.world.awaitsRestoration(.central(link.central)))
        #expect(harness.world.links[link.key] != nil)
        // The system completes the attempt while the app is gone.
        try harness.startAdvertising(other, AdvertisementData(localName: "Other"))
        #expect(harness.world.links[LinkKey(central: link.central, peripheral: other)] != nil)

        harness.mutate { $0.restore(central: link.central, configuration: configuration, releasingAtOnce: false) }
        let expected = RestoredCentralState(
            peripherals: [link.remotePeripheral, RemotePeripheral(identifier: other, name: "Other")],
            scanServices: [WorldUUID.service], scanOptions: ScanOptions())
        // The restored state, then the state, as CoreBluetooth calls them.
        #expect(
            harness.centralEvents(link.central).suffix(2) == [.willRestoreState(expected), .stateChanged(.poweredOn)])
        #expect(harness.world.restoredState(central: link.central) == expected)
        #expect(harness.world.state(of: .central(link.central)) == .poweredOn)
        #expect(!harness.world.awaitsRestoration(.central(link.central)))
        #expect(harness.world.isScanning(central: link.central))
        let read = harness.perform(link.read(WorldUUID.long))
        #expect(harness.reply(of: read) == .value(testBytes(300)))
    }

    @Test("A terminated central without a restore identifier shuts down: links drop, operations are cancelled")
    func centralWithoutRestoreIdentifier() throws {
        var (harness, link) = try WorldLink.make(
            timing: .instant, peripheral: .init(name: "Sensor", requestHandling: .manual))
        try harness.subscribe(WorldUUID.notifying, on: link)
        let read = harness.perform(link.read(WorldUUID.value))
        harness.mutate { $0.terminate(central: link.central) }
        #expect(harness.error(of: read) as? CoreBluetoothError == CoreBluetoothError(.operationCancelled))
        #expect(harness.world.links[link.key] == nil)
        #expect(!harness.world.awaitsRestoration(.central(link.central)))
        #expect(Self.finished(harness, .central(link.central)))
        #expect(
            harness.peripheralEvents(link.peripheral).last
                == .unsubscribed(link.remoteCentral(mtu: 517), link.local(WorldUUID.notifying)))
    }

    @Test("A terminated peripheral with a restore identifier keeps its services, advertising and links")
    func peripheralRestoration() throws {
        let advertisement = AdvertisementData(localName: "Sensor")
        var (harness, link) = try WorldLink.make(
            timing: .instant, peripheral: .init(name: "Sensor", restoreIdentifier: "app.peripheral"))
        harness.mutate { $0.terminate(peripheral: link.peripheral) }
        #expect(Self.finished(harness, .peripheral(link.peripheral)))
        #expect(harness.world.links[link.key] != nil)
        #expect(harness.world.isAdvertising(peripheral: link.peripheral))
        // The relaunched app answers requests by hand.
        let relaunched = MockPeripheralManager.Configuration(
            name: "Sensor", requestHandling: .manual, restoreIdentifier: "app.peripheral")
        harness.mutate { $0.restore(peripheral: link.peripheral, configuration: relaunched, releasingAtOnce: false) }
        let expected = RestoredPeripheralState(services: [link.service], advertisement: advertisement)
        #expect(
            harness.peripheralEvents(link.peripheral).suffix(2) == [
                .willRestoreState(expected), .stateChanged(.poweredOn),
            ])
        #expect(harness.world.restoredState(peripheral: link.peripheral) == expected)
        let read = harness.perform(link.read(WorldUUID.value))
        #expect(harness.world.isParked(read))
        #expect(harness.outstandingRequests(of: link.peripheral).map(\.characteristic) == [link.local(WorldUUID.value)])
    }

    /// What was held for a relaunched central follows its restored state and its state: at once
    /// for a manager of the async API (whose calls run only what they need of the schedule), at a
    /// step of the same instant for a front end's (whose command runs the instant's steps).
    @Test(
        "Events held for a relaunched central come at once, or at a step of the same instant", arguments: [true, false])
    func heldEventsFollowTheRestoredState(atOnce: Bool) throws {
        var (harness, link) = try WorldLink.make(timing: .instant, central: .init(restoreIdentifier: "app.central"))
        let configuration = harness.world.centrals[link.central]!.configuration
        harness.mutate { $0.terminate(central: link.central) }
        // The peripheral drops the link while the app is gone: its disconnection is held.
        harness.apply(
            .disconnect(
                central: link.central, peripheral: link.peripheral, error: CoreBluetoothError(.peripheralDisconnected)))
        let before = harness.centralEvents(link.central).count
        harness.mutate { $0.restore(central: link.central, configuration: configuration, releasingAtOnce: atOnce) }
        let afterRestore = Array(harness.centralEvents(link.central).dropFirst(before))
        guard case .willRestoreState = afterRestore.first else {
            Issue.record("expected the restored state first, got \(afterRestore)")
            return
        }
        let disconnected = { (events: [CentralEvent]) in
            events.contains { if case .disconnected = $0 { true } else { false } }
        }
        #expect(disconnected(afterRestore) == atOnce)
        #expect(harness.world.schedule.nextDeadline == (atOnce ? nil : harness.world.now))
        _ = harness.runUntilIdle()
        #expect(disconnected(Array(harness.centralEvents(link.central).dropFirst(before))))
    }
}
