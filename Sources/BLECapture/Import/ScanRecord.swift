/// What the scan needs of one record, whatever the capture's format.
struct ScanRecord: Sendable {
    /// The 1-based packet number, as Wireshark counts frames.
    var packet: Int
    /// When the record was written, in microseconds (from the format's own origin).
    var time: Int64
    /// How many packets the writer had lost up to this one.
    var drops: UInt32 = 0
    /// How many of the packet's bytes the record kept, and how many the packet had.
    var kept: Int
    var original: Int
    /// The controller the packet went through: a Linux monitor capture's controller index
    /// (the upper 16 bits of the record's flags), 0 in formats that record one controller.
    var controller: UInt16 = 0

    /// Whether the record kept fewer bytes than the packet had.
    var isTruncated: Bool { kept < original }

    init(_ record: BTSnoopRecord, datalink: BTSnoopDatalink) {
        packet = record.index + 1
        if datalink == .linuxMonitor { controller = UInt16(truncatingIfNeeded: record.flags >> 16) }
        time = record.timestamp
        drops = record.cumulativeDrops
        kept = record.data.count
        original = record.originalLength
    }

    init(_ record: PacketLoggerRecord) {
        packet = record.index + 1
        time = record.timestamp
        kept = record.data.count
        original = record.data.count
    }
}
