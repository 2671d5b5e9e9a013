import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// The channel's streams against what Foundation's `InputStream` and `OutputStream` document
/// (and CFStream does), for app code written as iOS apps write it: polled without a run loop,
/// closed before being opened, their default delegate.
@Suite(.timeLimit(.minutes(10)))
struct L2CAPStreamFoundationTests {
    /// Apple's `schedule(in:forMode:)`: "Unless the client is polling the stream, it is
    /// responsible for ensuring that the stream is scheduled on at least one run loop and that at
    /// least one of the run loops on which the stream is scheduled is being run." A polled stream
    /// sees what has arrived, whatever run loop it is scheduled in.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aStreamScheduledInARunLoopNobodyRunsSeesWhatArrivedWhenPolled(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 81) : .init(seed: 81))
        try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let central = StreamEnd(try #require(client.opened), sending: patterned(10_000, seed: 7))
            let peripheral = StreamEnd(try #require(server.opened))
            peripheral.start()
            let streams = UncheckedStreams(central.input, central.output)
            onAnotherThreadAndWait {
                for stream: Stream in [streams.input, streams.output] {
                    stream.schedule(in: .current, forMode: .default)
                    stream.open()
                }
            }
            try await #require(server.opened?.channel).send(Data("early".utf8))
            try await bridge.waitForApp { central.input.hasBytesAvailable }
            var buffer = [UInt8](repeating: 0, count: 16)
            #expect(central.input.read(&buffer, maxLength: 16) == 5)
            #expect(Data(buffer.prefix(5)) == Data("early".utf8))
            #expect(!central.input.hasBytesAvailable)
            // The output stream takes what fits, then space comes back as the bytes cross.
            #expect(central.writePending() == [8_192, 0])
            try await bridge.waitForApp { peripheral.received.count == 8_192 && central.output.hasSpaceAvailable }
            #expect(central.writePending().first ?? 0 > 0)
            try await bridge.waitForApp { peripheral.received == patterned(10_000, seed: 7) }
        }
    }

    /// CFStream's close of a stream that was never opened does nothing: the stream stays
    /// `.notOpen` (it can still be opened), and the channel stays open.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func closingStreamsNeverOpenedLeavesThemNotOpenAndTheChannelOpen(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 82) : .init(seed: 82))
        try await bridge.run { @MainActor in
            let (client, server) = try await openChannel(on: bridge)
            let central = StreamEnd(try #require(client.opened))
            let peripheral = StreamEnd(try #require(server.opened), sending: Data("after".utf8))
            central.input.close()
            central.output.close()
            #expect(central.input.streamStatus == .notOpen && central.output.streamStatus == .notOpen)
            try await bridge.waitForApp { true }
            central.start()
            peripheral.start()
            try await bridge.waitForApp { central.received == Data("after".utf8) }
            #expect(central.input.streamStatus == .open && central.output.streamStatus == .open)
            #expect(!central.events.contains { $0.hasSuffix("endEncountered") })
            // (Checked while the apps hold the channels: letting go of them closes them.)
            let closed = await bridge.log.filter { $0.kind == .l2cap && ($0.detail ?? "").hasPrefix("closed") }
            #expect(closed.isEmpty)
        }
    }

    /// Apple's `Stream.delegate`: "By default, a stream is its own delegate … passing nil must
    /// restore the receiver as its own delegate."
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aStreamIsItsOwnDelegateUntilOneIsSetAndAgainOnceItIsSetToNil() async throws {
        let bridge = MockBLEBridge(seed: 83)
        try await bridge.run { @MainActor in
            let (client, _) = try await openChannel(on: bridge)
            let channel = try #require(client.opened)
            let streams: [Stream] = [channel.inputStream, channel.outputStream]
            let log = L2CAPStreamTests.EventLog()
            for stream in streams {
                #expect(stream.delegate === stream)
                stream.delegate = log
                #expect(stream.delegate === log)
                stream.delegate = nil
                #expect(stream.delegate === stream)
            }
        }
    }
}

/// A channel's two streams handed to another thread (Foundation's streams are not `Sendable`).
struct UncheckedStreams: @unchecked Sendable {
    // @unchecked Sendable: the test hands them to one thread at a time.
    let input: InputStream
    let output: OutputStream
    init(_ input: InputStream, _ output: OutputStream) {
        self.input = input
        self.output = output
    }
}
