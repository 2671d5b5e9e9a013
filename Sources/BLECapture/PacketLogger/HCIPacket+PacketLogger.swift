extension HCIPacket {
    /// Decodes a PacketLogger record's packet.
    ///
    /// The record's kind says what the packet is (PacketLogger writes no H4 type byte): a
    /// command, an event, ACL data sent or received, or SCO data (``HCIPacket/audio``).
    ///
    /// - Returns: the packet, or `nil` for a record that holds no HCI packet (Apple's log,
    ///   note, power, configuration and other records, and LMP data).
    /// - Throws: ``HCIDecodingError`` — an empty record, a packet shorter than its header or
    ///   than its declared length.
    public static func decode(_ record: PacketLoggerRecord) throws(HCIDecodingError) -> HCIPacket? {
        let type: PacketType
        let received: Bool
        switch record.kind {
        case .hciCommand: (type, received) = (.command, false)
        case .hciEvent: (type, received) = (.event, true)
        case .aclSent: (type, received) = (.acl, false)
        case .aclReceived: (type, received) = (.acl, true)
        case .scoSent, .scoReceived: return .audio
        default: return nil
        }
        guard !record.data.isEmpty else { throw .empty }
        return try decode(type, record.data[...], received: received)
    }
}
