import BLECore
import BLEMockKit
import Foundation

extension CBML2CAPChannel {
    /// A channel end on a bridge, with its input and output streams over it: the bytes that
    /// arrive at the end from now on reach its input stream (and its `incoming` stream too).
    ///
    /// Call it on the bridge's executor as the front end gets the end (the peripheral's as its
    /// opening event is handed over, the central's as its opening operation completes), so no
    /// byte arrives before the streams hear of it. `command` runs a body on the bridge's
    /// executor as a command of the manager's lane; `appQueue` is the manager's queue.
    static func streams(
        over channel: L2CAPChannel, atCentral: Bool, on bridge: isolated MockBLEBridge, appQueue: DispatchQueue,
        command: @escaping @Sendable (@escaping @Sendable (isolated MockBLEBridge) -> Void) -> Void
    ) -> L2CAPChannelStreams {
        let link = L2CAPStreamLink(
            channel: channel, atCentral: atCentral, bridge: bridge, appQueue: appQueue, command: command)
        let input = CBML2CAPInputStream(link: link)
        let output = CBML2CAPOutputStream(link: link)
        // Weak: the bridge keeps the tap while the channel is open; the app keeps the streams.
        let (inputCore, outputCore) = (input.core, output.core)
        bridge.tapL2CAPChannel(channel, atCentral: atCentral) { [weak inputCore, weak outputCore, weak link] event in
            switch event {
            case .data(let data):
                inputCore?.arrived(.data(data))
            case .closed:
                link?.channelEnded()
                inputCore?.arrived(.ended)
                outputCore?.arrived(.ended)
            }
        }
        return L2CAPChannelStreams(input: input, output: output, link: link)
    }
}

/// The two streams of a channel end on a bridge, on their way from the bridge's executor, where
/// they are made, to the app's `didOpen` callback.
struct L2CAPChannelStreams: @unchecked Sendable {
    // @unchecked Sendable: Foundation's streams are not Sendable; these are handed over once
    // (made on the bridge's executor, then only touched by the app), and their state is behind
    // their cores' locks.
    let input: CBML2CAPInputStream
    let output: CBML2CAPOutputStream
    /// What the streams share: the channel object's release closes the channel through it.
    let link: L2CAPStreamLink
}
