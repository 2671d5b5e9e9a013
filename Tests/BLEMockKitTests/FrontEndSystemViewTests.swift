import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// What a callback-style front end (the CoreBluetooth-shaped API) answers synchronously from
/// the system view must hold when it hands the app the callback that made it so: the app's
/// queue runs that callback at once, while the bridge may still be performing the rest.
@Suite("The system view and front-end callbacks", .timeLimit(.minutes(10)))
struct FrontEndSystemViewTests {
    /// Set on the bridge's executor, read by the test once the operation has ended.
    private final class Seen: @unchecked Sendable {
        // @unchecked Sendable: `value` is only read and written with `lock` held.
        private let lock = Lock()
        private var stored: [UUID]?
        var value: [UUID]? { lock.withLock { stored } }
        func set(_ value: [UUID]) { lock.withLock { stored = value } }
    }

    @Test(arguments: [false, true])
    func aPeripheralWhoseServicesWereJustDiscoveredIsRetrievableByThemWhenTheOutcomeIsHandedOut(
        realistic: Bool
    ) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 4) : .init(seed: 4))
        let (sensor, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
        let central = MockCentralManager(bridge: bridge)
        let seen = Seen()
        try await bridge.run {
            #expect(await central.waitForPoweredOn() == .poweredOn)
            await central.attachFrontEnd(
                CentralFrontEnd(event: { _ in }, commandQueue: { _, _ in }, linkOpened: { _, _ in }))
            let events = central.events()
            try await central.scanForPeripherals(withServices: [TestPeripherals.heartRateService])
            for await event in events {
                if case .discovered(let found) = event, found.identifier == sensor.identifier { break }
            }
            await central.stopScan()
            try await central.connect(sensor.identifier)
            #expect(bridge.systemView.connectedPeripherals(withServices: [TestPeripherals.heartRateService]).isEmpty)
            await central.begin(.discoverServices(nil, sensor.identifier)) { result in
                guard case .success = result else { return }
                // What a delegate's peripheral(_:didDiscoverServices:) would see, at the moment
                // the outcome leaves the bridge.
                seen.set(
                    bridge.systemView.connectedPeripherals(withServices: [TestPeripherals.heartRateService]).map(
                        \.identifier))
            }
            await bridge.waitUntil { _ in seen.value != nil }
        }
        #expect(seen.value == [sensor.identifier])
    }
}
