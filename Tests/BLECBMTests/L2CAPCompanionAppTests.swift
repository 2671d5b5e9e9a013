import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// The companion app's file transfer over L2CAP streams (``PhoneFileSender``,
/// ``WatchFileReceiver``), and the run loops its streams may be scheduled in.
@Suite(.timeLimit(.minutes(10)))
struct L2CAPCompanionAppTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func thePhoneSendsAFileInPartialWritesAndTheWatchConfirmsItsChecksum(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 301) : .init(seed: 301))
        let file = patterned(300_000, seed: 21)
        let (writes, phoneEvents, watchEvents) = try await bridge.run { @MainActor in
            let (phone, watch) = try await startCompanionApps(on: bridge, file: file, chunkSize: 3_000)
            try await bridge.waitForApp { phone.isDone }
            #expect(watch.files == [file])
            #expect(phone.acknowledged == [companionChecksum(file)])
            #expect(phone.sent == 4 + file.count)
            return (phone.writeResults, phone.events, watch.events)
        }
        // Four 2,048-byte SDUs of room: 3,000-byte chunks are often taken in part, and nothing
        // is refused.
        #expect(writes.contains { $0 > 0 && $0 < 3_000 })
        #expect(writes.allSatisfy { $0 >= 0 })
        #expect(writes.reduce(0, +) == 4 + file.count)
        #expect(phoneEvents == ["connected", "channel open", "in open", "out open"])
        #expect(watchEvents == ["state 5", "in open", "out open"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func afterTheLinkDropsMidTransferThePhoneSendsTheFileAgainOnANewChannel(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 302) : .init(seed: 302))
        let file = patterned(200_000, seed: 22)
        try await bridge.run { @MainActor in
            let (phone, watch) = try await startCompanionApps(on: bridge, file: file, chunkSize: 1_500)
            try await bridge.waitForApp { phone.sent > 50_000 }
            let first = try #require(phone.channel)
            let firstAtWatch = try #require(watch.channel)
            phone.manager.cancelPeripheralConnection(try #require(phone.peripheral))
            try await bridge.waitForApp { phone.isDone }
            #expect(phone.channelsOpened == 2 && watch.channelsOpened == 2)
            #expect(phone.disconnections == 1)
            // The first transfer never completed; the second delivered the file whole.
            #expect(watch.files == [file])
            #expect(phone.acknowledged == [companionChecksum(file)])
            #expect(
                phone.events == [
                    "connected", "channel open", "in open", "out open", "in end", "disconnected", "connected",
                    "channel open", "in open", "out open",
                ])
            #expect(watch.events == ["state 5", "in open", "out open", "in end", "in open", "out open"])
            // The first channel's streams were closed by the apps, and refuse to read or write.
            let streams: [Stream] = [
                first.inputStream, first.outputStream, firstAtWatch.inputStream, firstAtWatch.outputStream,
            ]
            for stream in streams {
                #expect(stream.streamStatus == .closed)
                #expect(stream.streamError == nil)
            }
            var byte: UInt8 = 0
            #expect(first.outputStream.write(&byte, maxLength: 1) == -1)
            #expect(first.inputStream.read(&byte, maxLength: 1) == -1)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func thePhoneOpensTheChannelAgainAfterTheSimulationRefusedIt() async throws {
        let bridge = MockBLEBridge(seed: 303)
        let file = patterned(10_000, seed: 23)
        try await bridge.run { @MainActor in
            let refusal = ErrorInjection(.l2capOpen, failure: .l2cap(.noResourcesAvailable))
            let (phone, watch) = try await startCompanionApps(
                on: bridge, file: file, central: .init(errorInjection: [refusal])
            ) { $0.openRetries = 1 }
            try await bridge.waitForApp { phone.isDone }
            #expect(phone.openErrors.count == 1)
            #expect(phone.openErrors.first as? L2CAPError == L2CAPError(.noResourcesAvailable))
            #expect(phone.channelsOpened == 1 && watch.channelsOpened == 1)
            #expect(watch.files == [file])
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theSameSeedGivesTheCompanionAppTheSameLogAndStreamEvents() async throws {
        try await expectTheSameRunTwice(seed: 304) { bridge in
            let (phone, watch) = try await startCompanionApps(
                on: bridge, file: patterned(60_000, seed: 24), chunkSize: 1_777)
            try await bridge.waitForApp { phone.sent > 20_000 }
            phone.manager.cancelPeripheralConnection(try #require(phone.peripheral))
            try await bridge.waitForApp { phone.isDone }
            return phone.events + ["—"] + watch.events + ["—"] + phone.writeResults.map(String.init)
        }
    }

    /// On a device a callback on the main queue runs on the main thread, whose current run loop
    /// is the main one; on Linux a worker thread may serve the main queue (Swift's test runners
    /// call `dispatchMain()`), and its current run loop is one nobody runs.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func streamsScheduledInTheCurrentRunLoopFromTheMainQueueGetTheirEventsThere(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 305) : .init(seed: 305))
        let file = patterned(40_000, seed: 25)
        try await bridge.run { @MainActor in
            let (phone, watch) = try await startCompanionApps(on: bridge, file: file) {
                $0.schedulesInCurrentRunLoop = true
            }
            try await bridge.waitForApp { phone.isDone }
            #expect(watch.files == [file])
            #expect(phone.events == ["connected", "channel open", "in open", "out open"])
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aThreadThatRunsItsRunLoopForAStreamRunsUntilTheAppClosesTheStream(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 306) : .init(seed: 306))
        let data = patterned(30_000, seed: 26)
        let (received, events) = try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let reader = RunLoopThreadReader(try #require(client.opened).inputStream)
            let thread = Thread { reader.run() }
            thread.start()
            let peripheral = StreamEnd(try #require(server.opened), sending: data)
            peripheral.start()
            try await bridge.waitForApp { peripheral.pending.isEmpty }
            peripheral.input.close()
            peripheral.output.close()
            try await bridge.waitForApp { reader.state.events.last == "run returned" }
            return (reader.state.received, reader.state.events)
        }
        #expect(received == data)
        #expect(events.first == "openCompleted")
        #expect(events.suffix(2) == ["endEncountered", "run returned"])
    }

    /// An app that, with nothing to send, answers every `.hasSpaceAvailable` with a zero-length
    /// write (`min(chunk, remaining)` once `remaining` is 0), while the watch sends it 50 kB.
    /// (Such an app kept the main queue busy for ever in realistic mode, and the run never moved
    /// time: the suite's time limit is what ends that. A tighter one failed under the thread
    /// sanitizer on a loaded machine, where the test took over a minute of wall time.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anAppThatWritesZeroBytesInEachSpaceEventStillReceivesWhatTheOtherEndSends(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 307) : .init(seed: 307))
        let data = patterned(50_000, seed: 27)
        try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let phone = ZeroLengthWriter(try #require(client.opened))
            let watch = StreamEnd(try #require(server.opened), sending: data)
            watch.start()
            try await bridge.waitForApp { phone.received.count == data.count }
            #expect(phone.received == data)
            // It heard .hasSpaceAvailable once: its zero-length write took nothing, so no more.
            #expect(phone.zeroLengthWrites == 1)
        }
    }
}

/// A phone app with nothing to send that still writes, zero bytes, whenever its output stream
/// says it has room; it reads what arrives.
final class ZeroLengthWriter: NSObject, StreamDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    let channel: CBML2CAPChannel
    var received = Data()
    var zeroLengthWrites = 0
    private let pending = Data()

    init(_ channel: CBML2CAPChannel) {
        self.channel = channel
        super.init()
        for stream in [channel.inputStream!, channel.outputStream!] as [Stream] {
            stream.delegate = self
            stream.schedule(in: .main, forMode: .default)
            stream.open()
        }
    }

    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
        switch eventCode {
        case .hasSpaceAvailable:
            var none: UInt8 = 0
            if channel.outputStream.write(&none, maxLength: pending.count) == 0 { zeroLengthWrites += 1 }
        case .hasBytesAvailable:
            var buffer = [UInt8](repeating: 0, count: 1_024)
            while true {
                let count = channel.inputStream.read(&buffer, maxLength: buffer.count)
                guard count > 0 else { break }
                received.append(contentsOf: buffer[0..<count])
            }
        default:
            break
        }
    }
}

/// Reads a channel's input stream on a thread of its own, as apps that keep stream work off the
/// main thread do: it schedules the stream in the thread's run loop and runs that run loop
/// (`RunLoop.current.run()`, which returns once nothing is scheduled in it), closes the stream at
/// its end and removes it from the run loop.
final class RunLoopThreadReader: NSObject, StreamDelegate, @unchecked Sendable {
    // @unchecked Sendable: `recorded` is only read and written with `lock` held; `input` is only
    // touched on the thread.
    private let lock = NSLock()
    private let input: InputStream
    private var recorded: (received: Data, events: [String]) = (Data(), [])

    init(_ input: InputStream) { self.input = input }

    var state: (received: Data, events: [String]) { lock.withLock { recorded } }

    func run() {
        input.delegate = self
        input.schedule(in: .current, forMode: .default)
        input.open()
        RunLoop.current.run()
        lock.withLock { recorded.events.append("run returned") }
    }

    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
        switch eventCode {
        case .openCompleted:
            lock.withLock { recorded.events.append("openCompleted") }
        case .hasBytesAvailable:
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while true {
                let count = input.read(&buffer, maxLength: buffer.count)
                guard count > 0 else { break }
                lock.withLock { recorded.received.append(contentsOf: buffer[0..<count]) }
            }
        case .endEncountered:
            lock.withLock { recorded.events.append("endEncountered") }
            input.close()
            input.remove(from: .current, forMode: .default)
        default:
            lock.withLock { recorded.events.append("event \(eventCode.rawValue)") }
        }
    }
}
