import BLECore
import BLEMockKit
import Foundation

extension Benchmark {
    /// `throughput.<profile>.notify` and `.write`: for each named phone profile, the simulated
    /// throughput of a stream of notifications and of writes without response, in kb/s of
    /// virtual time, held within 20 % of the figure its source publishes (see the Link
    /// profiles article). Virtual time makes these figures the same on every machine.
    func throughputFigures() async throws -> [BenchFigure] {
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else { return [] }
        var figures: [BenchFigure] = []
        for row in ThroughputRig.rows {
            for direction in ThroughputRig.Direction.allCases {
                let rate = try await ThroughputRig.measure(row, direction, values: sizes.throughputValues)
                figures.append(
                    BenchFigure(
                        name: "throughput.\(row.key).\(direction.rawValue)", median: rate / 1_000, unit: "kb/s",
                        target: .within(row.cited / 1_000, fraction: 0.2), repetitions: 1))
            }
        }
        return figures
    }
}

/// A watch-style stream over a realistic bridge with a phone's link profile: the peripheral
/// notifies, or the central writes without response, values as long as the link allows (or a
/// row's fixed length), refilling its queue when told it has room.
enum ThroughputRig {
    /// Which way the data flows.
    enum Direction: String, CaseIterable {
        /// The peripheral notifies.
        case notify
        /// The central writes without response.
        case write
    }

    /// A phone, the peripheral it talks to, and the figure its source publishes.
    struct Row {
        var key: String
        var central: LinkProfile
        var peripheral: LinkProfile
        /// The value length streamed, or `nil` for ATT_MTU − 3.
        var valueLength: Int?
        /// The published (or, for iOS 10, derived) figure, in bits per second.
        var cited: Double
    }

    static let rows: [Row] = [
        Row(key: "iphone-ios9", central: .iPhoneiOS9, peripheral: .unconstrained, valueLength: 20, cited: 21_333),
        Row(key: "iphone-ios10", central: .iPhoneiOS10, peripheral: .watch, valueLength: nil, cited: 97_067),
        Row(key: "iphone-ios18", central: .iPhoneiOS18, peripheral: .watch, valueLength: nil, cited: 350_000),
        Row(key: "nrf52840", central: .nRF52840, peripheral: .nRF52840, valueLength: nil, cited: 1_327_500),
        Row(key: "nrf52832", central: .nRF52832, peripheral: .nRF52832, valueLength: nil, cited: 800_000),
    ]

    static let service: BluetoothUUID = "FD00"
    static let stream: BluetoothUUID = "FD01"

    /// Streams `values` values one way and returns bits per second of virtual time: the bits
    /// that arrived after the first connection event carrying any, over the time from it to
    /// the last. The stream runs in the bridge's self-driving scope: virtual time moves while
    /// the sender waits to be told its queue has room.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func measure(_ row: Row, _ direction: Direction, values: Int) async throws -> Double {
        let timing = LinkTiming.realistic(central: row.central, peripheral: row.peripheral)
        let bridge = MockBLEBridge(configuration: .init(seed: 38, timing: timing))
        let peripheral = MockPeripheralManager(
            configuration: .init(
                name: "Watch", mtu: .fixed(517), updateQueue: .realistic(capacity: 64), requestHandling: .manual),
            bridge: bridge)
        let local = try await peripheral.add(
            GATTService(
                uuid: service,
                characteristics: [
                    GATTCharacteristic(
                        uuid: stream, properties: [.notify, .writeWithoutResponse], permissions: .writeable)
                ]))
        try await peripheral.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: [service]))
        let central = MockCentralManager(
            configuration: .init(mtu: .fixed(517), writeWithoutResponseQueue: .realistic(capacity: 64)), bridge: bridge)
        try await central.scanForPeripherals(withServices: [service])
        await bridge.advance(by: .milliseconds(250))
        await central.stopScan()
        try await central.connect(peripheral.identifier)
        let remote = try await central.discoverAll(for: peripheral.identifier)[0]
        let largest = try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse)
        let value = Data(repeating: 0x5A, count: row.valueLength ?? largest)
        let kind: BridgeLogEntry.Kind = direction == .notify ? .notification : .writeRequest
        let characteristic = local.characteristics[0]
        if direction == .notify { try await central.setNotifyValue(true, for: remote) }
        try await bridge.run {
            switch direction {
            case .notify:
                var events = peripheral.events().makeAsyncIterator()
                var sent = 0
                while sent < values {
                    if try await peripheral.updateValue(value, for: characteristic) {
                        sent += 1
                    } else {
                        while let event = await events.next(), event != .readyToUpdateSubscribers {}
                    }
                }
            case .write:
                var events = central.events().makeAsyncIterator()
                var sent = 0
                while sent < values {
                    if await central.canSendWriteWithoutResponse(to: peripheral.identifier) {
                        try await central.writeValue(value, for: remote, type: .withoutResponse)
                        sent += 1
                    } else {
                        while let event = await events.next() {
                            if case .readyToSendWriteWithoutResponse = event { break }
                        }
                    }
                }
            }
        }
        await bridge.advance(by: .seconds(1))
        // What arrived: not the `updateValue` calls that found the queue full.
        let entries = await bridge.log.filter {
            $0.kind == kind && $0.central != nil && $0.detail?.hasPrefix("transmit queue full") != true
        }
        _ = await bridge.finish()
        guard entries.count == values, let first = entries.first?.time, let last = entries.last?.time, first < last
        else {
            throw BenchFailure(
                description: "throughput \(row.key) \(direction.rawValue): \(entries.count) of \(values)")
        }
        let bytes = entries.filter { $0.time > first }.reduce(0) { $0 + ($1.value?.count ?? 0) }
        return Double(bytes * 8) / (first.duration(to: last) / .seconds(1))
    }
}
