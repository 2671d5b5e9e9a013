import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An open L2CAP connection-oriented channel between a central and a peripheral, with the
/// inbound byte streams of both ends.
struct L2CAPChannelRecord: Sendable {
    /// Which end of a channel.
    enum End: Sendable, Hashable {
        case central, peripheral
    }

    /// The largest SDU a channel carries in one piece (the kit's channel MTU).
    static let mtu = 2_048
    /// The largest K-frame payload (the kit's MPS).
    static let mps = 247
    /// The credits each end grants: K-frames the other may have in flight.
    static let initialCredits = 10

    let link: SimulationWorld.LinkKey
    let psm: UInt16
    /// Feeds the central end's `L2CAPChannel.incoming`.
    let toCentral: AsyncStream<Data>.Continuation
    /// Feeds the peripheral end's `L2CAPChannel.incoming`.
    let toPeripheral: AsyncStream<Data>.Continuation

    /// The K-frames an SDU of `length` bytes takes: the first carries the 2-byte SDU length
    /// and up to MPS − 2 bytes, the others up to MPS bytes each (Bluetooth Core
    /// Specification, Vol 3, Part A, 3.4.3).
    static func frames(sduLength length: Int) -> Int {
        let first = mps - 2
        return length <= first ? 1 : 1 + (length - first + mps - 1) / mps
    }

    /// The SDUs `data` is cut into, and the K-frames they take in all.
    static func segment(_ data: Data) -> (sdus: [Data], frames: Int) {
        var sdus: [Data] = []
        var frames = 0
        var start = data.startIndex
        while start < data.endIndex {
            let end = data.index(start, offsetBy: mtu, limitedBy: data.endIndex) ?? data.endIndex
            let sdu = Data(data[start..<end])
            frames += Self.frames(sduLength: sdu.count)
            sdus.append(sdu)
            start = end
        }
        return (sdus, frames)
    }

    func finish() {
        toCentral.finish()
        toPeripheral.finish()
    }
}

/// A channel end of a mock manager: sends and closes through the bridge.
final class MockL2CAPEndpoint: L2CAPEndpoint {
    let bridge: MockBLEBridge
    let channel: UInt64
    let end: L2CAPChannelRecord.End
    let incoming: AsyncStream<Data>

    init(bridge: MockBLEBridge, channel: UInt64, end: L2CAPChannelRecord.End, incoming: AsyncStream<Data>) {
        self.bridge = bridge
        self.channel = channel
        self.end = end
        self.incoming = incoming
    }

    func send(_ data: Data) async throws {
        try await bridge.sendL2CAP(data, channel: channel, from: end)
    }

    func close() async {
        await bridge.closeL2CAPChannel(channel)
    }
}
