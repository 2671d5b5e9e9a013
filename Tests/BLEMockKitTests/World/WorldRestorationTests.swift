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

        harness.mutate { $0.restore(central: link.central, configuration: configuration) }
        let expected = RestoredCentralState(
            peripherals: [link.remotePeripheral, RemotePeripheral(identifier: other, name: "Other")],
            scanServices: [WorldUUID.service], scanOptions: ScanOptions())
        #expect(harness.centralEvents(link.central).last == .willRestoreState(expected))
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
        harness.mutate { $0.restore(peripheral: link.peripheral, configuration: relaunched) }
        let expected = RestoredPeripheralState(services: [link.service], advertisement: advertisement)
        #expect(harness.peripheralEvents(link.peripheral).last == .willRestoreState(expected))
        #expect(harness.world.restoredState(peripheral: link.peripheral) == expected)
        let read = harness.perform(link.read(WorldUUID.value))
        #expect(harness.world.isParked(read))
        #expect(harness.outstandingRequests(of: link.peripheral).map(\.characteristic) == [link.local(WorldUUID.value)])
    }
}
