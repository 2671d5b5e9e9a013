import BLECore
import BLEMockKit
import Foundation

/// A reconnecting subscriber, for exploration tests: a sensor notifies a counter every
/// 100 ms to whoever subscribed; the app collects readings, reconnecting and subscribing
/// again after anything drops its link.
enum SubscriberRig {
    static let service: BluetoothUUID = "FB00"
    static let reading: BluetoothUUID = "FB01"

    static var gattService: GATTService {
        GATTService(
            uuid: service,
            characteristics: [GATTCharacteristic(uuid: reading, properties: .notify, permissions: [])])
    }

    /// Collects `count` readings with an app that subscribes again after a reconnection unless
    /// `resubscribes` is false (the planted bug); throws when it cannot.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func collect(_ count: Int, resubscribes: Bool, bridge: MockBLEBridge) async throws {
        let sensor = MockPeripheralManager(bridge: bridge)
        _ = await sensor.waitForPoweredOn()
        let local = try await sensor.add(gattService)
        try await sensor.startAdvertising(AdvertisementData(localName: "Band", serviceUUIDs: [service]))
        let characteristic = local.characteristics[0]
        let clock = bridge.clock
        let ticking = bridge.task {
            var counter: UInt16 = 0
            while !Task.isCancelled {
                try await clock.sleep(for: .milliseconds(100))
                counter &+= 1
                _ = try? await sensor.updateValue(
                    Data([UInt8(counter & 0xFF), UInt8(counter >> 8)]), for: characteristic)
            }
        }
        defer { ticking.cancel() }
        let app = SubscriberApp(central: MockCentralManager(bridge: bridge), resubscribes: resubscribes)
        let readings = try await app.collect(count)
        try Exploration.require(readings.count == count, "collected \(readings.count) readings, not \(count)")
        try Exploration.require(readings == readings.sorted() && Set(readings).count == count, "readings out of order")
    }
}

/// The app of ``SubscriberRig``.
actor SubscriberApp: CentralEventReader {
    let central: MockCentralManager
    let resubscribes: Bool
    var events: AsyncStream<CentralEvent>.Iterator
    private var connections = 0

    init(central: MockCentralManager, resubscribes: Bool) {
        self.central = central
        self.resubscribes = resubscribes
        events = central.events().makeAsyncIterator()
    }

    /// Collects `count` readings, reconnecting as often as needed.
    func collect(_ count: Int) async throws -> [UInt16] {
        var readings: [UInt16] = []
        while readings.count < count {
            while await central.state != .poweredOn {
                if case .stateChanged(.poweredOn) = try await nextEvent() { break }
            }
            try await central.scanForPeripherals(withServices: [SubscriberRig.service])
            var found: UUID?
            scanning: while found == nil {
                switch try await nextEvent() {
                case .discovered(let peripheral): found = peripheral.identifier
                // Bluetooth went off: the scan ended with it; start over once it is on.
                case .stateChanged(let state) where state != .poweredOn: break scanning
                default: continue
                }
            }
            guard let peripheral = found else { continue }
            await central.stopScan()
            do {
                try await central.connect(peripheral, timeout: .seconds(5))
                connections += 1
                let characteristics = try await central.discoverAll(for: peripheral)
                guard let reading = characteristics.first(where: { $0.uuid == SubscriberRig.reading }) else { continue }
                if resubscribes || connections == 1 { try await central.setNotifyValue(true, for: reading) }
                while readings.count < count {
                    switch try await nextEvent() {
                    case .valueUpdated(let characteristic, let value)
                    where characteristic == reading && value.count == 2:
                        let number = UInt16(value[value.startIndex]) | UInt16(value[value.startIndex + 1]) << 8
                        if number > (readings.last ?? 0) { readings.append(number) }
                    case .disconnected(let remote, _) where remote.identifier == peripheral:
                        if await !central.isConnected(peripheral) { throw CancellationError() }
                    case .stateChanged(let state) where state != .poweredOn:
                        throw CancellationError()
                    default:
                        continue
                    }
                }
                try? await central.cancelPeripheralConnection(peripheral)
            } catch is CancellationError where !Task.isCancelled {
                continue  // the link dropped: connect again
            } catch let error as ATTError {
                _ = error  // an injected error: start over
                try? await central.cancelPeripheralConnection(peripheral)
            } catch let error as CoreBluetoothError {
                _ = error
                try? await central.cancelPeripheralConnection(peripheral)
            }
        }
        return readings
    }
}
