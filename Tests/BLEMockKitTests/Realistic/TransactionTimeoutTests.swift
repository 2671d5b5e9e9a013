import BLECore
import BLEMockKit
import Foundation
import Testing

/// The ATT transaction timeout (Core Vol 3, Part F, 3.3.3): a request nobody answers ends its
/// transaction 30 s after it was sent; the central's stack drops the link, the operation fails
/// with `connectionTimeout`, and the disconnect event carries no error, as on iOS.
@Suite("ATT transaction timeout", .timeLimit(.minutes(10)))
struct TransactionTimeoutTests {
    /// What the central asks of a peripheral that leaves it unanswered.
    enum Unanswered: String, CaseIterable, Sendable {
        case read, write, longRead, longWrite
    }

    /// A manual peripheral with one dynamic characteristic, a central connected to it with
    /// the characteristic discovered, and the central's events.
    struct Setup {
        let bridge: MockBLEBridge
        let peripheral: MockPeripheralManager
        let central: MockCentralManager
        let characteristic: RemoteCharacteristic
        /// A characteristic of a second service.
        let other: RemoteCharacteristic
        /// The second service, as the peripheral published it.
        let otherService: LocalService
        let centralEvents: AsyncStream<CentralEvent>

        static let service: BluetoothUUID = "FE10"
        static let value: BluetoothUUID = "FE11"
        static let secondService: BluetoothUUID = "FE20"
        static let secondValue: BluetoothUUID = "FE21"

        static func make(realistic: Bool, seed: UInt64 = 3, timeout: Duration = .seconds(30)) async throws -> Setup {
            var configuration: MockBLEBridge.Configuration = realistic ? .realistic(seed: seed) : .init(seed: seed)
            configuration.timing.attTransactionTimeout = timeout
            let bridge = MockBLEBridge(configuration: configuration)
            let peripheral = MockPeripheralManager(configuration: .init(requestHandling: .manual), bridge: bridge)
            let central = MockCentralManager(configuration: .init(mtu: .fixed(23)), bridge: bridge)
            let centralEvents = central.events()
            let (characteristic, other, otherService) = try await bridge.run {
                for (uuid, characteristic) in [(service, value), (secondService, secondValue)] {
                    _ = try await peripheral.add(
                        GATTService(
                            uuid: uuid,
                            characteristics: [
                                GATTCharacteristic(
                                    uuid: characteristic, properties: [.read, .write],
                                    permissions: [.readable, .writeable])
                            ]))
                }
                try await peripheral.startAdvertising(AdvertisementData(localName: "Quiet", serviceUUIDs: [service]))
                try await central.scanForPeripherals(withServices: [service])
                try await bridge.clock.sleep(for: .milliseconds(300))
                try await central.connect(peripheral.identifier)
                let services = try await central.discoverServices(nil, for: peripheral.identifier)
                let first = try await central.discoverCharacteristics(nil, for: services[0])[0]
                let second = try await central.discoverCharacteristics(nil, for: services[1])[0]
                let published = await peripheral.services.first { $0.uuid == secondService }!
                return (first, second, published)
            }
            return Setup(
                bridge: bridge, peripheral: peripheral, central: central, characteristic: characteristic,
                other: other, otherService: otherService, centralEvents: centralEvents)
        }

        /// Calls `operation` on the characteristic, answering (for a long read) the first part
        /// only; returns the error it ended with and when.
        func leaveUnanswered(_ operation: Unanswered) async throws -> (error: any Error, start: VirtualClock.Instant) {
            let peripheral = peripheral
            let central = central
            let characteristic = characteristic
            let bridge = bridge
            return try await bridge.run {
                let stream = peripheral.events()
                if operation == .longRead {
                    // The first part fills a whole Read response, so the central asks for more,
                    // and that Read Blob is never answered.
                    _ = bridge.task {
                        var requests = stream.makeAsyncIterator()
                        guard let first = await nextReadRequest(&requests) else { return }
                        try? await peripheral.respond(to: first, withResult: .success, value: testBytes(40))
                    }
                }
                let start = await bridge.now
                do {
                    switch operation {
                    case .read, .longRead:
                        _ = try await central.readValue(for: characteristic)
                    case .write:
                        try await central.writeValue(Data([1, 2]), for: characteristic, type: .withResponse)
                    case .longWrite:
                        try await central.writeValue(testBytes(100), for: characteristic, type: .withResponse)
                    }
                } catch {
                    return (error, start)
                }
                throw CancellationError()
            }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "An unanswered read, write, long read or long write fails with connectionTimeout 30 s after its request, and the link drops with no error",
        arguments: Unanswered.allCases, [false, true])
    func anUnansweredRequestTimesOutAndDropsTheLink(operation: Unanswered, realistic: Bool) async throws {
        let setup = try await Setup.make(realistic: realistic)
        let (error, start) = try await setup.leaveUnanswered(operation)
        let timeout = try #require(error as? CoreBluetoothError)
        #expect(timeout == CoreBluetoothError(.connectionTimeout))
        #expect(timeout.reason?.contains("ATT transaction timeout") == true)
        // The timed-out request was sent at or after `start`: a long write's Prepare Writes and a
        // long read's first part take connection events first in realistic mode.
        let log = await setup.bridge.log
        let dropped = try #require(log.last { $0.kind == .disconnected })
        #expect(dropped.error == nil)
        let elapsed = dropped.time.offset - start.offset
        if realistic {
            #expect(elapsed >= .seconds(30) && elapsed < .seconds(31))
        } else {
            #expect(elapsed == .seconds(30))
        }
        let refusal = try #require(log.last { $0.kind == .refused })
        #expect(refusal.detail?.hasPrefix("ATT transaction timeout after 30s") == true)
        #expect(await !setup.central.isConnected(setup.peripheral.identifier))
        // The central heard of the disconnection, without an error.
        var events = setup.centralEvents.makeAsyncIterator()
        let disconnected = await nextCentralEvent(&events) {
            if case .disconnected = $0 { return true }
            return false
        }
        guard case .disconnected(let peripheral, let reason) = disconnected else {
            Issue.record("no disconnection event")
            return
        }
        #expect(peripheral.identifier == setup.peripheral.identifier)
        #expect(reason == nil)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A handler or automatic peripheral whose answer an injection swallows times out the same way",
        arguments: ["handler", "automatic"], [false, true])
    func aSwallowedAnswerTimesOut(handling: String, realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 8) : .init(seed: 8))
        let peripheral = MockPeripheralManager(
            configuration: .init(
                requestHandling: handling == "handler" ? .handler { _ in .success(Data([1])) } : .automatic),
            bridge: bridge)
        let central = MockCentralManager(bridge: bridge)
        let (error, waited, again) = try await bridge.run { () -> (any Error, Duration, Data) in
            _ = try await peripheral.add(
                GATTService(
                    uuid: Setup.service,
                    characteristics: [
                        GATTCharacteristic(uuid: Setup.value, properties: .read, permissions: .readable)
                    ]))
            try await peripheral.startAdvertising(AdvertisementData(localName: "Quiet"))
            try await central.scanForPeripherals(withServices: nil)
            try await bridge.clock.sleep(for: .milliseconds(300))
            try await central.connect(peripheral.identifier)
            let characteristic = try await central.discoverAll(for: peripheral.identifier)[0]
            await bridge.inject(ErrorInjection(.read, failure: .neverAnswers, frequency: .once))
            let start = await bridge.now
            do {
                _ = try await central.readValue(for: characteristic)
                throw CancellationError()
            } catch let error as CoreBluetoothError {
                let waited = await bridge.now.offset - start.offset
                // The app recovers: it connects again and reads.
                try await central.connect(peripheral.identifier)
                let fresh = try await central.discoverAll(for: peripheral.identifier)[0]
                return (error, waited, try await central.readValue(for: fresh))
            }
        }
        #expect(error as? CoreBluetoothError == CoreBluetoothError(.connectionTimeout))
        #expect(waited >= .seconds(30) && waited < .seconds(31))
        #expect(again == (handling == "handler" ? Data([1]) : Data()))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("finish() still reports the request the peripheral's app never answered, after its timeout")
    func finishReportsTheTimedOutRequest() async throws {
        let setup = try await Setup.make(realistic: false)
        _ = try await setup.leaveUnanswered(.read)
        let report = await setup.bridge.finish()
        guard case .leftovers(let leftovers) = report else {
            Issue.record("finish() was clean")
            return
        }
        #expect(
            leftovers.contains {
                if case .unansweredRequest(_, let peripheral, let characteristic, let offset) = $0 {
                    return peripheral == setup.peripheral.identifier && characteristic == Setup.value && offset == 0
                }
                return false
            })
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("The timeout is the timing's attTransactionTimeout, and an answer in time resets it for the next request")
    func theTimeoutFollowsTheTimingAndEachRequestHasItsOwn() async throws {
        let setup = try await Setup.make(realistic: false, timeout: .seconds(5))
        let (peripheral, central, characteristic, bridge) = (
            setup.peripheral, setup.central, setup.characteristic, setup.bridge
        )
        let before = await bridge.now
        let (error, start) = try await bridge.run { () -> (any Error, VirtualClock.Instant) in
            let stream = peripheral.events()
            // The first read is answered 4 s after it arrives; the second never.
            _ = bridge.task {
                var requests = stream.makeAsyncIterator()
                guard let first = await nextReadRequest(&requests) else { return }
                try? await bridge.clock.sleep(for: .seconds(4))
                try? await peripheral.respond(to: first, withResult: .success, value: Data([7]))
            }
            #expect(try await central.readValue(for: characteristic) == Data([7]))
            let start = await bridge.now
            do {
                _ = try await central.readValue(for: characteristic)
            } catch {
                return (error, start)
            }
            throw CancellationError()
        }
        #expect(start.offset - before.offset == .seconds(4))
        #expect(error as? CoreBluetoothError == CoreBluetoothError(.connectionTimeout))
        #expect(await bridge.now.offset - start.offset == .seconds(5))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A request answered just before its timeout succeeds and the link stays up")
    func anAnswerJustInTimeKeepsTheLink() async throws {
        let setup = try await Setup.make(realistic: false)
        let (peripheral, central, characteristic, bridge) = (
            setup.peripheral, setup.central, setup.characteristic, setup.bridge
        )
        let value = try await bridge.run {
            let stream = peripheral.events()
            _ = bridge.task {
                var requests = stream.makeAsyncIterator()
                guard let first = await nextReadRequest(&requests) else { return }
                try? await bridge.clock.sleep(for: .seconds(30) - .milliseconds(1))
                try? await peripheral.respond(to: first, withResult: .success, value: Data([9]))
            }
            return try await central.readValue(for: characteristic)
        }
        #expect(value == Data([9]))
        #expect(await central.isConnected(peripheral.identifier))
        // Long after, with nothing outstanding, the timer finds nothing to time out.
        await bridge.advance(by: .seconds(120))
        #expect(await central.isConnected(peripheral.identifier))
    }

    @Test(
        "A timing whose attTransactionTimeout is outside 1 ms…1 hour makes every call fail, naming the field",
        arguments: [Duration.zero, .microseconds(999), .seconds(3_601), .seconds(-1)])
    func anOutOfRangeTimeoutIsRefused(timeout: Duration) async throws {
        var configuration = MockBLEBridge.Configuration()
        configuration.timing.attTransactionTimeout = timeout
        let bridge = MockBLEBridge(configuration: configuration)
        let central = MockCentralManager(bridge: bridge)
        do {
            try await central.scanForPeripherals(withServices: nil)
            Issue.record("the call should have failed")
        } catch let error as APIMisuseError {
            guard case .invalidConfiguration(let problem) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(problem.hasPrefix("MockBLEBridge.Configuration.timing.attTransactionTimeout:"))
            #expect(problem.contains("is outside"))
        }
    }

    @Test("The default timeout is 30 s, in fast timing as in realistic")
    func theDefaultIs30Seconds() {
        #expect(LinkTiming().attTransactionTimeout == .seconds(30))
        #expect(LinkTiming.instant.attTransactionTimeout == .seconds(30))
        #expect(LinkTiming.realistic.attTransactionTimeout == .seconds(30))
    }
}
