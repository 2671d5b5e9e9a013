import BLECBM
import BLECore
import BLEMockKit
import BLEMockKitTesting
import Foundation
import Testing

// The "Using with Swift Testing" examples of README.md and the DocC article, verbatim
// (checked by `everyDocumentedSwiftBlockIsCompiled`).

/// The examples run with the suite-wide time limit, like every other suite.
@Suite(.timeLimit(.minutes(10)))
struct SwiftTestingExampleTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(.mockBridge(seedCount: 20))
    func theBatteryLevelArrivesOnEverySeed() async throws {
        // Managers made without a bridge join the test's bridge; time drives itself.
        let tag = MockPeripheralManager()
        let service = try await tag.add(
            GATTService(
                uuid: "180F",
                characteristics: [
                    GATTCharacteristic(uuid: "2A19", properties: [.read, .notify], permissions: .readable)
                ]))
        try await tag.startAdvertising(AdvertisementData(localName: "Tag", serviceUUIDs: ["180F"]))

        let central = MockCentralManager()
        let events = central.events()
        try await central.scanForPeripherals(withServices: ["180F"])
        // Realistic mode: the tag is heard at its next advertisement, not at once.
        _ = await events.first {
            if case .discovered = $0 { true } else { false }
        }
        try await central.connect(tag.identifier)
        await central.stopScan()
        try await central.discoverAll(for: tag.identifier)
        let level = try await central.characteristic("2A19", of: tag.identifier)
        try await central.setNotifyValue(true, for: level)
        _ = try await tag.updateValue(Data([76]), for: service.characteristic("2A19")!)
        let first = await events.first {
            if case .valueUpdated = $0 { true } else { false }
        }
        #expect(first == .valueUpdated(level, Data([76])))
        // At the end the trait checks finish(): an operation still waiting or an injection that
        // never fired fails the test, with the seed.
    }
}

/// The app of the `.simulatedSystem` example: a scanner that creates its central on its own
/// queue, in `queue.async`, as many apps do, and keeps the names it hears.
final class QueueScanningApp: NSObject, CBMCentralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: `central` and `names` are only touched on `queue`.
    let queue = DispatchQueue(label: "scanner")
    private var central: CBMCentralManager?
    private var names: [String] = []

    override init() {
        super.init()
        queue.async { self.central = CBMCentralManager(delegate: self, queue: self.queue) }
    }

    /// The names heard so far (read on the app's queue).
    var heard: [String] { queue.sync { names } }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: nil) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        if let name = peripheral.name, !names.contains(name) { names.append(name) }
    }
}

/// The `.simulatedSystem` example: time follows the wall clock (the default), tests with the
/// trait take turns. (With the trait's own tests, in a process of their own: the system it
/// installs would take in the managers other tests create outside their bridges.)
extension SimulatedSystemTraitTests {
    @Test(.simulatedSystem, .timeLimit(.minutes(1)))
    func anAppOnItsOwnQueueHearsTheWatch() async throws {
        let bridge = try #require(SimulatedSystem.current).bridge
        // The other side, with the async API: outside a run no bridge is current, so name the
        // system's (a manager made without one would get a bridge of its own, which the app
        // never sees).
        let watch = MockPeripheralManager(configuration: .init(name: "Watch"), bridge: bridge)
        try await watch.startAdvertising(AdvertisementData(localName: "Watch"))
        let app = QueueScanningApp()  // its CBMCentralManager joins the system from its queue
        try await bridge.waitForApp { app.heard == ["Watch"] }
        #expect(app.heard == ["Watch"])
    }
}
