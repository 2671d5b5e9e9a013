#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Reassembler {
    /// Receives one packet from `link` at `now`.
    ///
    /// See ``receive(_:from:at:)-(UnsafeRawBufferPointer,_,_)``.
    ///
    /// - Returns: The complete message, or `nil` while it is incomplete.
    /// - Throws: A ``TransportError`` describing why the packet was rejected.
    public mutating func receive(
        _ packet: [UInt8], from link: Link, at now: Instant
    ) throws(TransportError) -> [UInt8]? {
        try packet.withUnsafeBytes { bytes in
            Result { () throws(TransportError) in try receive(bytes, from: link, at: now) }
        }.get()
    }

    /// Receives one packet, as delivered by `peripheral(_:didUpdateValueFor:error:)` or
    /// `peripheralManager(_:didReceiveWrite:)`, from `link` at `now`.
    ///
    /// The packet's bytes are read in place; no copy of the packet is made.
    ///
    /// - Returns: The complete message, or `nil` while it is incomplete.
    /// - Throws: A ``TransportError`` describing why the packet was rejected.
    public mutating func receive(
        _ packet: Data, from link: Link, at now: Instant
    ) throws(TransportError) -> [UInt8]? {
        try packet.withUnsafeBytes { bytes in
            Result { () throws(TransportError) in try receive(bytes, from: link, at: now) }
        }.get()
    }

    /// Receives one packet from `link` at `now` and returns the completed message as
    /// `Data`.
    ///
    /// - Returns: The complete message, or `nil` while it is incomplete.
    /// - Throws: A ``TransportError`` describing why the packet was rejected.
    public mutating func receiveData(
        _ packet: Data, from link: Link, at now: Instant
    ) throws(TransportError) -> Data? {
        try receive(packet, from: link, at: now).map { Data($0) }
    }
}
