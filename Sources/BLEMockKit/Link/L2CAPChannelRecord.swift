import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An open L2CAP connection-oriented channel between a central and a peripheral.
struct L2CAPChannelRecord: Sendable, Hashable {
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
    /// The LE dynamic PSM range (Bluetooth Core Specification, Vol 3, Part A, 4.22).
    static let dynamicPSMs: ClosedRange<UInt16> = 0x0080...0x00FF

    let id: UInt64
    let link: LinkKey
    let psm: UInt16

    /// The K-frames an SDU of `length` bytes takes: the first carries the 2-byte SDU length
    /// and up to MPS − 2 bytes, the others up to MPS bytes each (Bluetooth Core
    /// Specification, Vol 3, Part A, 3.4.3).
    static func frames(sduLength length: Int) -> Int {
        let first = mps - 2
        return length <= first ? 1 : 1 + (length - first + mps - 1) / mps
    }

    /// The length, as an L2CAP PDU, of K-frame `index` of an SDU of `length` bytes: its
    /// 4-byte header, the SDU length on the first, and its part of the SDU.
    static func frameBytes(_ index: Int, sduLength length: Int) -> Int {
        let first = mps - 2
        guard index > 0 else { return 4 + 2 + min(length, first) }
        let offset = first + (index - 1) * mps
        return 4 + max(0, min(mps, length - offset))
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

    /// The L2CAP connection result matching an ATT encryption refusal.
    static func error(for refusal: ATTError) -> L2CAPError {
        L2CAPError(refusal.code == .insufficientAuthentication ? .insufficientAuthentication : .insufficientEncryption)
    }

    /// A PSM as the log writes it, e.g. `0x0080`.
    static func hex(_ psm: UInt16) -> String {
        let digits = String(psm, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
