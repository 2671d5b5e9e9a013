import BLECore
import BLEMockKit
import Foundation
import Testing

/// Each named phone profile streams notifications and writes without response over a
/// realistic bridge, through the public API; the throughput in virtual time is held within
/// 20 % of the figure its source publishes (the Link profiles article's table).
@Suite("Link profiles: simulated throughput against published figures", .timeLimit(.minutes(10)))
struct LinkProfileThroughputTests {
    /// One row of the article's table.
    struct Case: Sendable, CustomTestStringConvertible {
        var central: LinkProfile
        var peripheral: LinkProfile
        /// The value length streamed, or `nil` for the link's largest (ATT_MTU − 3).
        var valueLength: Int?
        /// The cited figure, in bytes per second.
        var cited: Double
        var testDescription: String { "\(central.name) with \(peripheral.name)" }
    }

    static let cases: [Case] = [
        // Punch Through: 4 packets of 20 bytes per 30 ms interval.
        Case(central: .iPhoneiOS9, peripheral: .unconstrained, valueLength: 20, cited: 4 * 20 / 0.030),
        // This kit's derivation: one 182-byte value (7 packets of 27 bytes) per 15 ms event.
        Case(central: .iPhoneiOS10, peripheral: .watch, valueLength: nil, cited: 182 / 0.015),
        // Apple Developer Forums 770717: 300–400 kb/s, taken at its middle.
        Case(central: .iPhoneiOS18, peripheral: .watch, valueLength: nil, cited: 350_000 / 8),
        // Nordic's S140 table: 1,327.5 kb/s over LE 2M at 50 ms.
        Case(central: .nRF52840, peripheral: .nRF52840, valueLength: nil, cited: 1_327_500 / 8),
        // Nordic DevZone: "just shy of 800 kbps" over LE 1M, taken as 800 kb/s.
        Case(central: .nRF52832, peripheral: .nRF52832, valueLength: nil, cited: 800_000 / 8),
    ]

    static let service: BluetoothUUID = "FD00"
    static let stream: BluetoothUUID = "FD01"
    static let values = 600

    /// A connected pair on a realistic bridge with `testCase`'s profiles, with roomy queues.
    static func pair(_ testCase: Case, seed: UInt64) async throws
        -> (MockBLEBridge, MockPeripheralManager, LocalCharacteristic, MockCentralManager, RemoteCharacteristic)
    {
        let timing = LinkTiming.realistic(central: testCase.central, peripheral: testCase.peripheral)
        let bridge = MockBLEBridge(configuration: .init(seed: seed, timing: timing))
        var peripheralConfiguration = MockPeripheralManager.Configuration(name: "Watch", requestHandling: .manual)
        peripheralConfiguration.mtu = .fixed(517)
        peripheralConfiguration.updateQueue = .realistic(capacity: 64)
        let peripheral = MockPeripheralManager(configuration: peripheralConfiguration, bridge: bridge)
        _ = await peripheral.waitForPoweredOn()
        let local = try await peripheral.add(
            GATTService(
                uuid: service,
                characteristics: [
                    GATTCharacteristic(
                        uuid: stream, properties: [.notify, .writeWithoutResponse], permissions: .writeable)
                ]))
        try await peripheral.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: [service]))
        var centralConfiguration = MockCentralManager.Configuration()
        centralConfiguration.mtu = .fixed(517)
        centralConfiguration.writeWithoutResponseQueue = .realistic(capacity: 64)
        let (central, characteristics) = try await Realistic.connectedCentral(
            to: peripheral, on: bridge, configuration: centralConfiguration)
        let remote = try #require(characteristics.first { $0.uuid == stream })
        return (bridge, peripheral, local.characteristics[0], central, remote)
    }

    /// The entries of `kind` that record a value arriving (a notification at a central, a write
    /// without response at a peripheral), not an `updateValue` that found the queue full.
    static func delivered(_ kind: BridgeLogEntry.Kind, in log: [BridgeLogEntry]) -> [BridgeLogEntry] {
        log.filter { $0.kind == kind && $0.central != nil && $0.detail?.hasPrefix("transmit queue full") != true }
    }

    /// Bytes per second of virtual time among the log entries of `kind`: the bytes that
    /// arrived after the first connection event that carried any, over the time from that
    /// event to the last.
    static func throughput(of kind: BridgeLogEntry.Kind, in log: [BridgeLogEntry]) throws -> Double {
        let entries = delivered(kind, in: log)
        let first = try #require(entries.first).time
        let last = try #require(entries.last).time
        let bytes = entries.filter { $0.time > first }.reduce(0) { $0 + ($1.value?.count ?? 0) }
        let seconds = first.duration(to: last) / .seconds(1)
        return Double(bytes) / seconds
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A notification stream runs within 20 % of the published figure", arguments: cases)
    func notifications(testCase: Case) async throws {
        let (bridge, peripheral, local, central, remote) = try await Self.pair(testCase, seed: 38)
        try await central.setNotifyValue(true, for: remote)
        let largest = await peripheral.maximumUpdateValueLength(for: central.identifier)
        let length = try testCase.valueLength ?? #require(largest)
        try await bridge.run {
            var events = peripheral.events().makeAsyncIterator()
            var sent = 0
            while sent < Self.values {
                if try await peripheral.updateValue(Data(repeating: UInt8(sent & 0xFF), count: length), for: local) {
                    sent += 1
                } else {
                    while let event = await events.next(), event != .readyToUpdateSubscribers {}
                }
            }
        }
        await bridge.advance(by: .seconds(1))
        let log = await bridge.log
        #expect(Self.delivered(.notification, in: log).count == Self.values)
        let measured = try Self.throughput(of: .notification, in: log)
        #expect(abs(measured - testCase.cited) / testCase.cited <= 0.2, "\(testCase.central.name): \(measured) B/s")
        _ = await bridge.finish()
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A stream of writes without response runs within 20 % of the published figure", arguments: cases)
    func writesWithoutResponse(testCase: Case) async throws {
        let (bridge, peripheral, _, central, remote) = try await Self.pair(testCase, seed: 38)
        let largest = try await central.maximumWriteValueLength(for: peripheral.identifier, type: .withoutResponse)
        let length = testCase.valueLength ?? largest
        try await bridge.run {
            var events = central.events().makeAsyncIterator()
            var sent = 0
            while sent < Self.values {
                if await central.canSendWriteWithoutResponse(to: peripheral.identifier) {
                    try await central.writeValue(
                        Data(repeating: UInt8(sent & 0xFF), count: length), for: remote, type: .withoutResponse)
                    sent += 1
                } else {
                    while let event = await events.next() {
                        if case .readyToSendWriteWithoutResponse = event { break }
                    }
                }
            }
        }
        await bridge.advance(by: .seconds(1))
        let log = await bridge.log
        #expect(Self.delivered(.writeRequest, in: log).count == Self.values)
        let measured = try Self.throughput(of: .writeRequest, in: log)
        #expect(abs(measured - testCase.cited) / testCase.cited <= 0.2, "\(testCase.central.name): \(measured) B/s")
        _ = await bridge.finish()
    }

    /// Streams `count` notifications of `length` bytes from the peripheral (in a run), with
    /// `alongside` running beside it.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func notify(
        _ count: Int, of length: Int, from peripheral: MockPeripheralManager, _ local: LocalCharacteristic,
        on bridge: MockBLEBridge, alongside: @escaping @Sendable () async throws -> Void = {}
    ) async throws {
        try await bridge.run {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask(operation: alongside)
                var events = peripheral.events().makeAsyncIterator()
                var sent = 0
                while sent < count {
                    if try await peripheral.updateValue(Data(repeating: UInt8(sent & 0xFF), count: length), for: local)
                    {
                        sent += 1
                    } else {
                        while let event = await events.next(), event != .readyToUpdateSubscribers {}
                    }
                }
                try await group.waitForAll()
            }
        }
        await bridge.advance(by: .seconds(2))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("Streams both ways at once share the air: each gets what full packets both ways leave it")
    func streamsBothWaysShareTheAir() async throws {
        let both = Case(central: .nRF52832, peripheral: .nRF52832, valueLength: 244, cited: 0)
        let (bridge, peripheral, local, central, remote) = try await Self.pair(both, seed: 38)
        try await central.setNotifyValue(true, for: remote)
        let count = 300
        try await Self.notify(count, of: 244, from: peripheral, local, on: bridge) {
            var events = central.events().makeAsyncIterator()
            var sent = 0
            while sent < count {
                if await central.canSendWriteWithoutResponse(to: peripheral.identifier) {
                    try await central.writeValue(Data(repeating: 2, count: 244), for: remote, type: .withoutResponse)
                    sent += 1
                } else {
                    while let event = await events.next() {
                        if case .readyToSendWriteWithoutResponse = event { break }
                    }
                }
            }
        }
        let log = await bridge.log
        #expect(Self.delivered(.notification, in: log).count == count)
        #expect(Self.delivered(.writeRequest, in: log).count == count)
        // LE 1M, 251-byte packets each way: 2 × (2,088 + 150) µs an exchange, so 11 of them in
        // the 50 ms interval: 11 × 244 bytes every 50 ms each way (the air carries no more:
        // 244 bytes every 4,476 µs), where one way alone carries 20 (97,600 B/s).
        let notified = try Self.throughput(of: .notification, in: log)
        let written = try Self.throughput(of: .writeRequest, in: log)
        let shared = 11.0 * 244 / 0.050
        #expect(abs(notified - shared) / shared <= 0.05, "notifications: \(notified) B/s")
        #expect(abs(written - shared) / shared <= 0.05, "writes without response: \(written) B/s")
        #expect(notified <= 244 / 0.004_476 && written <= 244 / 0.004_476)
        _ = await bridge.finish()
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A coded PHY link with a short interval carries no more than the PHY's bit rate")
    func codedLinksStayUnderTheirBitRate() async throws {
        // LE Coded S=8 carries 125 kb/s: 15,625 bytes a second at most. A 251-byte packet takes
        // 17 ms there, more than the 7.5 ms interval the tag asks for: the link sends shorter ones.
        var tag = LinkProfile.unconstrained
        tag.phys = [.leCodedS8]
        tag.preferredConnectionIntervals = .microseconds(7_500) ... .microseconds(7_500)
        let negotiated = NegotiatedLink(central: .unconstrained, peripheral: tag)
        #expect(negotiated.phy == .leCodedS8 && negotiated.dataLength == 251)
        #expect(negotiated.packetPayload < 251)
        #expect(negotiated.exchangeTime(mtu: 247) <= .microseconds(7_500))
        let coded = Case(central: .unconstrained, peripheral: tag, valueLength: nil, cited: 0)
        let (bridge, peripheral, local, central, remote) = try await Self.pair(coded, seed: 38)
        try await central.setNotifyValue(true, for: remote)
        let length = try #require(await peripheral.maximumUpdateValueLength(for: central.identifier))
        try await Self.notify(30, of: length, from: peripheral, local, on: bridge)
        let log = await bridge.log
        #expect(Self.delivered(.notification, in: log).count == 30)
        let measured = try Self.throughput(of: .notification, in: log)
        #expect(measured <= 15_625, "\(measured) B/s")
        #expect(measured >= 2_000, "\(measured) B/s")
        _ = await bridge.finish()
    }
}
