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
