import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// One end of a channel as a CoreBluetooth app drives it: both streams scheduled in the main run
/// loop, a delegate that reads whatever arrives and writes what it has to send whenever there is
/// room.
final class StreamEnd: NSObject, StreamDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    let channel: CBML2CAPChannel
    var pending: Data
    var received = Data()
    var events: [String] = []
    /// How many bytes one read asks for.
    let readSize: Int

    init(_ channel: CBML2CAPChannel, sending: Data = Data(), readSize: Int = 100) {
        self.channel = channel
        pending = sending
        self.readSize = readSize
    }

    var input: InputStream { channel.inputStream }
    var output: OutputStream { channel.outputStream }

    func start(input startsInput: Bool = true, output startsOutput: Bool = true) {
        var streams: [Stream] = []
        if startsInput { streams.append(input) }
        if startsOutput { streams.append(output) }
        for stream in streams {
            stream.delegate = self
            stream.schedule(in: .main, forMode: .default)
            stream.open()
        }
    }

    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
        let side = aStream === input ? "in" : "out"
        switch eventCode {
        case .openCompleted: events.append("\(side) openCompleted")
        case .hasBytesAvailable:
            events.append("\(side) hasBytesAvailable")
            drain()
        case .hasSpaceAvailable:
            events.append("\(side) hasSpaceAvailable")
            writePending()
        case .endEncountered: events.append("\(side) endEncountered")
        case .errorOccurred: events.append("\(side) errorOccurred")
        default: events.append("\(side) \(eventCode.rawValue)")
        }
    }

    func drain() {
        var buffer = [UInt8](repeating: 0, count: readSize)
        while input.hasBytesAvailable {
            let count = input.read(&buffer, maxLength: readSize)
            guard count > 0 else { break }
            received.append(contentsOf: buffer[0..<count])
        }
    }

    /// Writes as much of `pending` as the stream takes; returns the counts `write` returned.
    @discardableResult
    func writePending() -> [Int] {
        var counts: [Int] = []
        while !pending.isEmpty {
            let count = pending.withUnsafeBytes { bytes in
                output.write(bytes.bindMemory(to: UInt8.self).baseAddress!, maxLength: bytes.count)
            }
            counts.append(count)
            guard count > 0 else { break }
            pending.removeFirst(count)
        }
        return counts
    }
}

/// `count` bytes that show their order (a byte lost, doubled or moved changes them).
func patterned(_ count: Int, seed: UInt8) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed) &+ $0 / 251) })
}

/// Runs `body` twice, each time in a run on a new realistic bridge of `seed`, and expects the
/// same bridge log and the same events (what `body` returns) both times.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
func expectTheSameRunTwice(
    seed: UInt64, _ body: @escaping @MainActor @Sendable (MockBLEBridge) async throws -> [String]
) async throws {
    func transfer() async throws -> ([String], [String]) {
        let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
        let events = try await bridge.run { @MainActor in try await body(bridge) }
        return (await bridge.log.map(\.description), events)
    }
    let first = try await transfer()
    let second = try await transfer()
    #expect(first.0 == second.0)
    #expect(first.1 == second.1)
}

/// Two apps with a channel open between them (the central's end and the peripheral's).
@MainActor
func openChannel(on bridge: MockBLEBridge) async throws -> (ChannelCentral, ChannelPeripheral) {
    let server = ChannelPeripheral(bridge: bridge)
    try await bridge.waitForApp { server.psm != nil && server.manager.isAdvertising }
    let client = ChannelCentral(bridge: bridge)
    client.psm = server.psm!
    try await bridge.waitForApp { client.manager.state == .poweredOn }
    client.manager.scanForPeripherals(withServices: nil)
    try await bridge.waitForApp { client.opened != nil && server.opened != nil }
    return (client, server)
}

@Suite(.timeLimit(.minutes(10)))
struct L2CAPStreamTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func bothEndsWriteAndReadThroughTheStreamsInOrder(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 71) : .init(seed: 71))
        let toPeripheral = patterned(20_000, seed: 1)
        let toCentral = patterned(9_000, seed: 2)
        let (clientEvents, serverEvents) = try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let central = StreamEnd(try #require(client.opened), sending: toPeripheral)
            let peripheral = StreamEnd(try #require(server.opened), sending: toCentral, readSize: 333)
            #expect(central.channel.channel!.mtu == 2_048)
            central.start()
            peripheral.start()
            try await bridge.waitForApp {
                central.received.count == toCentral.count && peripheral.received.count == toPeripheral.count
            }
            #expect(central.received == toCentral)
            #expect(peripheral.received == toPeripheral)
            #expect(central.pending.isEmpty && peripheral.pending.isEmpty)
            return (central.events, peripheral.events)
        }
        for events in [clientEvents, serverEvents] {
            #expect(Array(events.prefix(2)).sorted() == ["in openCompleted", "out openCompleted"])
            #expect(events.contains("in hasBytesAvailable"))
            #expect(!events.contains("in endEncountered") && !events.contains("out errorOccurred"))
        }
        // 20,000 bytes against a buffer of four 2,048-byte SDUs: space came back several times.
        #expect(clientEvents.filter { $0 == "out hasSpaceAvailable" }.count >= 3)
        let sent = await bridge.log.filter { $0.kind == .l2cap && ($0.detail ?? "").contains(" sent ") }
        #expect(sent.reduce(0) { $0 + ($1.value?.count ?? 0) } == toPeripheral.count + toCentral.count)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theSameSeedGivesTheSameLogAndEvents() async throws {
        try await expectTheSameRunTwice(seed: 72) { bridge in
            let (client, server) = try await openChannel(on: bridge)
            let central = StreamEnd(try #require(client.opened), sending: patterned(12_000, seed: 3))
            let peripheral = StreamEnd(try #require(server.opened), sending: patterned(5_000, seed: 4))
            central.start()
            peripheral.start()
            try await bridge.waitForApp { central.received.count == 5_000 && peripheral.received.count == 12_000 }
            return central.events + ["—"] + peripheral.events
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func closingBothStreamsEndsTheOtherEndAfterTheBytesWritten(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 73) : .init(seed: 73))
        try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let central = StreamEnd(try #require(client.opened))
            let peripheral = StreamEnd(try #require(server.opened), sending: patterned(3_000, seed: 5))
            central.start()
            peripheral.start()
            try await bridge.waitForApp { peripheral.pending.isEmpty }
            // Written, not yet crossed (realistic) when the app closes: the bytes still arrive.
            peripheral.input.close()
            peripheral.output.close()
            #expect(peripheral.input.streamStatus == .closed && peripheral.output.streamStatus == .closed)
            try await bridge.waitForApp { central.events.contains("in endEncountered") }
            #expect(central.received == patterned(3_000, seed: 5))
            #expect(central.input.streamStatus == .atEnd)
            #expect(central.events.last == "out endEncountered" || central.events.contains("out endEncountered"))
            #expect(central.output.streamStatus == .atEnd)
            var byte: UInt8 = 1
            #expect(central.input.read(&byte, maxLength: 1) == 0)
            #expect(central.output.write(&byte, maxLength: 1) == -1)
            #expect(!central.output.hasSpaceAvailable && !central.input.hasBytesAvailable)
            // The closed side refuses too.
            #expect(peripheral.output.write(&byte, maxLength: 1) == -1)
            #expect(peripheral.input.read(&byte, maxLength: 1) == -1)
            // No event reaches a closed stream's delegate.
            #expect(!peripheral.events.contains { $0.hasSuffix("endEncountered") })
        }
        let closed = await bridge.log.filter { $0.kind == .l2cap && ($0.detail ?? "").hasPrefix("closed") }
        #expect(closed.count == 1)
    }

    /// The central app's streams, opened and scheduled in the main run loop, after it let go of
    /// the channel object (`client.opened`, the only reference): what an app that keeps only
    /// the streams has.
    @MainActor
    static func streamsWithoutTheChannel(of client: ChannelCentral, delegate: EventLog) throws -> (
        InputStream, OutputStream
    ) {
        let channel = try #require(client.opened)
        let streams = (channel.inputStream!, channel.outputStream!)
        client.opened = nil
        for stream: Stream in [streams.0, streams.1] {
            stream.delegate = delegate
            stream.schedule(in: .main, forMode: .default)
            stream.open()
        }
        return streams
    }

    /// A stream delegate that notes the events of each stream.
    final class EventLog: NSObject, StreamDelegate, @unchecked Sendable {
        // @unchecked Sendable: only touched on the main queue.
        var events: [String] = []

        func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
            let side = aStream is InputStream ? "in" : "out"
            switch eventCode {
            case .openCompleted: events.append("\(side) openCompleted")
            case .endEncountered: events.append("\(side) endEncountered")
            default: break
            }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "Letting go of the channel object closes the channel, as CoreBluetooth's does when its CBL2CAPChannel goes",
        arguments: [false, true])
    func lettingGoOfTheChannelClosesIt(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 75) : .init(seed: 75))
        try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let peripheral = StreamEnd(try #require(server.opened))
            peripheral.start()
            let log = EventLog()
            let (input, output) = try Self.streamsWithoutTheChannel(of: client, delegate: log)
            try await bridge.waitForApp {
                peripheral.events.contains("in endEncountered") && log.events.contains("in endEncountered")
                    && log.events.contains("out endEncountered")
            }
            #expect(input.streamStatus == .atEnd && output.streamStatus == .atEnd)
            var byte: UInt8 = 0
            #expect(output.write(&byte, maxLength: 1) == -1)
            #expect(peripheral.output.write(&byte, maxLength: 1) == -1)
        }
        let closed = await bridge.log.filter { $0.kind == .l2cap && ($0.detail ?? "").hasPrefix("closed") }
        #expect(closed.count == 1)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aDroppedLinkEndsBothStreamsAtBothEnds(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 74) : .init(seed: 74))
        try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let central = StreamEnd(try #require(client.opened))
            let peripheral = StreamEnd(try #require(server.opened))
            central.start()
            peripheral.start()
            try await bridge.waitForApp { central.events.count == 3 && peripheral.events.count == 3 }
            client.manager.cancelPeripheralConnection(try #require(client.peripheral))
            try await bridge.waitForApp {
                [central, peripheral].allSatisfy {
                    $0.events.contains("in endEncountered") && $0.events.contains("out endEncountered")
                }
            }
            for end in [central, peripheral] {
                #expect(end.input.streamStatus == .atEnd && end.output.streamStatus == .atEnd)
                #expect(end.input.streamError == nil && end.output.streamError == nil)
                var byte: UInt8 = 0
                #expect(end.output.write(&byte, maxLength: 1) == -1)
            }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "Unpublishing the PSM ends the streams at both ends as the peer's close does, after the bytes that crossed",
        arguments: [false, true])
    func unpublishingThePSMEndsTheStreamsAtBothEnds(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 76) : .init(seed: 76))
        try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let central = StreamEnd(try #require(client.opened))
            let peripheral = StreamEnd(try #require(server.opened), sending: patterned(3_000, seed: 6))
            central.start()
            peripheral.start()
            try await bridge.waitForApp { central.received.count == 3_000 }
            server.manager.unpublishL2CAPChannel(try #require(server.psm))
            try await bridge.waitForApp {
                [central, peripheral].allSatisfy {
                    $0.events.contains("in endEncountered") && $0.events.contains("out endEncountered")
                }
            }
            #expect(central.received == patterned(3_000, seed: 6))
            for end in [central, peripheral] {
                #expect(end.input.streamStatus == .atEnd && end.output.streamStatus == .atEnd)
                #expect(end.input.streamError == nil && end.output.streamError == nil)
                var byte: UInt8 = 1
                #expect(end.input.read(&byte, maxLength: 1) == 0)
                #expect(end.output.write(&byte, maxLength: 1) == -1)
                #expect(!end.output.hasSpaceAvailable && !end.input.hasBytesAvailable)
                #expect(!end.events.contains("in errorOccurred") && !end.events.contains("out errorOccurred"))
            }
            // The kit's channel under the central's streams is closed too.
            let channel = try #require(client.opened?.channel)
            await #expect(throws: CoreBluetoothError(.notConnected)) { try await channel.send(Data([1])) }
        }
        let l2cap = await bridge.log.filter { $0.kind == .l2cap && $0.value == nil }.compactMap(\.detail)
        #expect(l2cap.suffix(2) == ["unpublished 0x0080", "closed #1"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "Closing a channel while bytes an output stream took are crossing ends the streams, without an error",
        arguments: [false, true], [false, true])
    func closingWhileBytesAreCrossingEndsTheStreams(realistic: Bool, byUnpublishing: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 77) : .init(seed: 77))
        let payload = patterned(20_000, seed: 8)
        try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let central = StreamEnd(try #require(client.opened))
            let peripheral = StreamEnd(try #require(server.opened), sending: payload)
            central.start()
            peripheral.start()
            try await bridge.waitForApp { !central.received.isEmpty }
            if byUnpublishing {
                server.manager.unpublishL2CAPChannel(try #require(server.psm))
            } else {
                // The central's app closes its streams: with nothing of its own to send, the
                // channel closes at once, under the peripheral's sends.
                central.input.close()
                central.output.close()
            }
            let ends = byUnpublishing ? [central, peripheral] : [peripheral]
            try await bridge.waitForApp {
                ends.allSatisfy { $0.events.contains("in endEncountered") && $0.events.contains("out endEncountered") }
            }
            // The output stream took the bytes (as CoreBluetooth's does): what had not crossed is lost.
            #expect(payload.starts(with: central.received))
            if realistic { #expect(central.received.count < payload.count) }
            for end in ends {
                #expect(end.input.streamStatus == .atEnd && end.output.streamStatus == .atEnd)
                #expect(!end.events.contains("in errorOccurred") && !end.events.contains("out errorOccurred"))
            }
            var byte: UInt8 = 1
            #expect(peripheral.output.write(&byte, maxLength: 1) == -1)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func bytesThatArrivedBeforeTheStreamWasOpenedAreAnnouncedWhenItIs() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 75))
        try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let central = StreamEnd(try #require(client.opened))
            // The peripheral sends with the kit's channel: the send returns once the bytes crossed.
            try await #require(server.opened?.channel).send(Data("early".utf8))
            try await bridge.waitForApp { true }
            #expect(central.input.streamStatus == .notOpen)
            #expect(!central.input.hasBytesAvailable)
            var byte: UInt8 = 0
            #expect(central.input.read(&byte, maxLength: 1) == -1)
            central.start(output: false)
            try await bridge.waitForApp { central.received == Data("early".utf8) }
            #expect(central.events == ["in openCompleted", "in hasBytesAvailable"])
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aFullOutputStreamTakesNothingUntilItsSendsHaveCrossed() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 76))
        try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let central = StreamEnd(try #require(client.opened), sending: patterned(20_000, seed: 6))
            let peripheral = StreamEnd(try #require(server.opened))
            peripheral.start()
            // Opened but not scheduled: no events; the app writes on its own.
            central.output.open()
            #expect(central.output.streamStatus == .open && central.output.hasSpaceAvailable)
            #expect(central.writePending() == [8_192, 0])
            #expect(!central.output.hasSpaceAvailable)
            #expect(central.pending.count == 20_000 - 8_192)
            // Scheduled now: space comes back as the sends cross, and the app writes the rest.
            central.output.delegate = central
            central.output.schedule(in: .main, forMode: .default)
            try await bridge.waitForApp { peripheral.received.count == 20_000 }
            #expect(peripheral.received == patterned(20_000, seed: 6))
            #expect(central.events.first == "out openCompleted")
            #expect(central.events.filter { $0 == "out hasSpaceAvailable" }.count >= 2)
            #expect(central.output.hasSpaceAvailable)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func badArgumentsAndUnopenedStreamsAreRefusedWithoutChangingTheStream() async throws {
        let bridge = MockBLEBridge(seed: 77)
        try await bridge.run { @MainActor in
            let (client, _) = try await openChannel(on: bridge)
            let channel = try #require(client.opened)
            var bytes: [UInt8] = [1, 2, 3]
            #expect(channel.inputStream.streamStatus == .notOpen)
            #expect(channel.outputStream.streamStatus == .notOpen)
            #expect(channel.outputStream.write(&bytes, maxLength: 3) == -1)
            #expect(!channel.outputStream.hasSpaceAvailable)
            channel.inputStream.open()
            channel.outputStream.open()
            #expect(channel.inputStream.read(&bytes, maxLength: -1) == -1)
            #expect(channel.outputStream.write(&bytes, maxLength: -1) == -1)
            #expect(channel.inputStream.read(&bytes, maxLength: 0) == 0)
            #expect(channel.outputStream.write(&bytes, maxLength: 0) == 0)
            #expect(channel.inputStream.read(&bytes, maxLength: 3) == 0)
            #expect(channel.inputStream.streamStatus == .open && channel.outputStream.streamStatus == .open)
            #expect(channel.inputStream.streamError == nil && channel.outputStream.streamError == nil)
            #expect(channel.inputStream.property(forKey: .dataWrittenToMemoryStreamKey) == nil)
            #expect(channel.outputStream.hasSpaceAvailable)
        }
    }

    /// Bytes handed to a run loop that never runs them (a dispatch queue's thread's: an app that
    /// scheduled the stream in `RunLoop.current` there) reach the stream once it is moved to the
    /// main run loop, with their event.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func bytesOnTheirWayToAnotherRunLoopReachTheStreamWhenItMovesToTheMainOne() async throws {
        let bridge = MockBLEBridge(seed: 78)
        try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let central = StreamEnd(try #require(client.opened))
            let input = UncheckedStream(central.input)
            let scheduled = LockedRunLoop()
            // Waited for outside the simulation: a run sees no activity while a dispatch thread
            // is slow to start, and under load a wait for it stalled the run.
            onAnotherThreadAndWait {
                input.stream.schedule(in: .current, forMode: .default)
                input.stream.open()
                scheduled.set(.current)
            }
            try await #require(server.opened?.channel).send(Data("early".utf8))
            try await bridge.waitForApp { true }
            central.input.delegate = central
            central.input.remove(from: try #require(scheduled.value), forMode: .default)
            central.input.schedule(in: .main, forMode: .default)
            try await bridge.waitForApp { central.received == Data("early".utf8) }
            #expect(central.events == ["in openCompleted", "in hasBytesAvailable"])
        }
    }
}

/// Runs `body` on a dispatch thread (not the caller's) and returns once it has run.
func onAnotherThreadAndWait(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        body()
        done.signal()
    }
    done.wait()
}

/// A stream handed to another thread (Foundation's streams are not `Sendable`).
struct UncheckedStream: @unchecked Sendable {
    // @unchecked Sendable: the test hands it to one thread at a time.
    let stream: InputStream
    init(_ stream: InputStream) { self.stream = stream }
}

/// The run loop a thread scheduled a stream in.
final class LockedRunLoop: @unchecked Sendable {
    // @unchecked Sendable: `runLoop` is only read and written with `lock` held.
    private let lock = NSLock()
    private var runLoop: RunLoop?
    func set(_ value: RunLoop) { lock.withLock { runLoop = value } }
    var value: RunLoop? { lock.withLock { runLoop } }
}
