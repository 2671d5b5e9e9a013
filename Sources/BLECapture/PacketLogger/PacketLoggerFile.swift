/// A PacketLogger capture: the format of Apple's PacketLogger (`.pklg` files, and the
/// Bluetooth log of an iOS sysdiagnose).
///
/// The file has no header. It is a run of records, each a 32-bit length (of the rest of the
/// record), a timestamp of two 32-bit fields — seconds since 1 January 1970, then
/// microseconds; in a big-endian file, a 64-bit value with the seconds in its upper half — a
/// type byte (``PacketLoggerRecord/Kind``) and the packet or Apple's own record. HCI packets
/// carry no H4 type byte; the record type says what each is.
///
/// The classic files are big-endian; newer ones are little-endian. Nothing in the file says
/// which, so the reader walks the records both ways and keeps the order whose records tile
/// the file (or, in a damaged file, the one that reads more of them; a first length that is
/// plausible breaks a tie, then big-endian). Readers disagree on how a little-endian file
/// lays out its timestamp (seconds first, as Wireshark reads it, or as one 64-bit value with
/// the microseconds first), so the reader checks which field holds microseconds (always
/// under 1,000,000) and reports it in ``timestampLayout``.
///
/// Reading is forgiving past the first record: a record that cannot be read (cut short, or
/// with a length no record has) ends the records, and the error is kept in
/// ``unreadableTail``. Nothing is allocated for a length before its bytes are known to be in
/// the file.
///
/// ```swift
/// let file = try PacketLoggerFile(bytes: Array(data))
/// for record in file.records where record.kind == .hciEvent { … }
/// ```
public struct PacketLoggerFile: Sendable, Hashable {
    /// The length of a record's header: length, timestamp and type.
    public static let recordHeaderLength = 13
    /// The smallest length field a record can have: its timestamp and type byte.
    public static let minimumRecordLength: UInt32 = 9
    /// The largest length field accepted: the timestamp, the type byte and the largest HCI
    /// packet (an ACL packet: a 4-byte header and 65,535 bytes of data).
    public static let maximumRecordLength: UInt32 = 9 + 4 + 65_535

    /// The order the file's integers are in.
    public enum ByteOrder: String, Sendable, Hashable {
        /// The classic form.
        case bigEndian
        /// Written by newer versions of PacketLogger.
        case littleEndian
    }

    /// Which of the timestamp's two 32-bit fields comes first.
    public enum TimestampLayout: String, Sendable, Hashable {
        /// Seconds, then microseconds (every big-endian file, and little-endian files as
        /// Wireshark reads them).
        case secondsFirst
        /// Microseconds, then seconds: a little-endian 64-bit value with the seconds in its
        /// upper half.
        case microsecondsFirst
    }

    /// The byte order of the file's integers.
    public var byteOrder: ByteOrder
    /// How the records' timestamps were laid out.
    public var timestampLayout: TimestampLayout
    /// The records, in file order.
    public var records: [PacketLoggerRecord]
    /// Why reading stopped before the end of the file, if it did; ``records`` holds every
    /// record before that point.
    public var unreadableTail: PacketLoggerError?

    /// Reads a PacketLogger file.
    ///
    /// - Throws: ``PacketLoggerError/empty`` for no bytes,
    ///   ``PacketLoggerError/notPacketLogger(bigEndianLength:littleEndianLength:)`` when the
    ///   first length is no record's length either way, or the error that stops the first
    ///   record from being read (``PacketLoggerError/truncatedRecordHeader(index:offset:available:)``,
    ///   ``PacketLoggerError/recordTooShort(index:offset:length:)``,
    ///   ``PacketLoggerError/truncatedRecord(index:offset:length:available:)``).
    public init(bytes: [UInt8]) throws(PacketLoggerError) {
        let walk = try Self.choose(bytes)
        byteOrder = walk.order
        unreadableTail = walk.failure
        let isBig = walk.order == .bigEndian
        var records: [PacketLoggerRecord] = []
        records.reserveCapacity(walk.records)
        var offset = 0
        var microsecondsFirst = true
        var anyLargeSecondField = false
        for index in 0..<walk.records {
            // The walk checked that this record is whole.
            let length = Int(Self.uint32(bytes, at: offset, bigEndian: isBig))
            let first = Self.uint32(bytes, at: offset + 4, bigEndian: isBig)
            let second = Self.uint32(bytes, at: offset + 8, bigEndian: isBig)
            if first >= 1_000_000 { microsecondsFirst = false }
            if second >= 1_000_000 { anyLargeSecondField = true }
            records.append(
                PacketLoggerRecord(
                    index: index, kind: PacketLoggerRecord.Kind(rawValue: bytes[offset + 12]), seconds: first,
                    microseconds: second, data: Array(bytes[offset + Self.recordHeaderLength..<offset + 4 + length])))
            offset += 4 + length
        }
        if microsecondsFirst && anyLargeSecondField {
            timestampLayout = .microsecondsFirst
            for index in records.indices {
                let microseconds = records[index].seconds
                records[index].seconds = records[index].microseconds
                records[index].microseconds = microseconds
            }
        } else {
            timestampLayout = .secondsFirst
        }
        self.records = records
    }

    /// Whether `bytes` read as a PacketLogger file: at least their first record is whole in
    /// one byte order, with a length a record can have.
    public static func isPacketLogger(_ bytes: [UInt8]) -> Bool {
        (try? choose(bytes)) != nil
    }

    /// How far the records tile the file in one byte order.
    struct Walk {
        var order: ByteOrder
        /// How many whole records were read from the start.
        var records = 0
        /// What stopped the walk before the end of the file.
        var failure: PacketLoggerError?
        /// The first record's length field, if the file has four bytes.
        var firstLength: UInt32?

        /// Orders walks: tiling the file beats not, more records beat fewer, then a plausible
        /// first length, then one that is at least not too long.
        var rank: [Int] {
            let length = firstLength ?? 0
            return [
                failure == nil ? 1 : 0, records, length >= minimumRecordLength && length <= maximumRecordLength ? 1 : 0,
                length <= maximumRecordLength ? 1 : 0,
            ]
        }
    }

    /// The byte order to read `bytes` in, with its walk.
    static func choose(_ bytes: [UInt8]) throws(PacketLoggerError) -> Walk {
        guard !bytes.isEmpty else { throw .empty }
        let big = walk(bytes, order: .bigEndian)
        let little = walk(bytes, order: .littleEndian)
        let chosen = little.rank.lexicographicallyPrecedes(big.rank) || little.rank == big.rank ? big : little
        guard chosen.records == 0 else { return chosen }
        if let bigLength = big.firstLength, let littleLength = little.firstLength,
            bigLength > maximumRecordLength, littleLength > maximumRecordLength
        {
            throw .notPacketLogger(bigEndianLength: bigLength, littleEndianLength: littleLength)
        }
        // A walk that read no record stopped at the first one, with a failure.
        throw chosen.failure ?? .empty
    }

    /// Reads records in `order` from the start until the end of the file or the first record
    /// that cannot be read.
    static func walk(_ bytes: [UInt8], order: ByteOrder) -> Walk {
        var walk = Walk(order: order)
        let isBig = order == .bigEndian
        if bytes.count >= 4 { walk.firstLength = uint32(bytes, at: 0, bigEndian: isBig) }
        var offset = 0
        while offset < bytes.count {
            let available = bytes.count - offset
            let index = walk.records
            guard available >= 4 else {
                walk.failure = .truncatedRecordHeader(index: index, offset: offset, available: available)
                break
            }
            let length = uint32(bytes, at: offset, bigEndian: isBig)
            if length < minimumRecordLength {
                walk.failure = .recordTooShort(index: index, offset: offset, length: length)
            } else if length > maximumRecordLength {
                walk.failure = .recordTooLong(index: index, offset: offset, length: length)
            } else if available < recordHeaderLength {
                walk.failure = .truncatedRecordHeader(index: index, offset: offset, available: available)
            } else if available - 4 < Int(length) {
                walk.failure = .truncatedRecord(index: index, offset: offset, length: length, available: available - 4)
            }
            if walk.failure != nil { break }
            offset += 4 + Int(length)
            walk.records += 1
        }
        return walk
    }

    /// The 32-bit integer at `offset` (which the caller has checked lies inside `bytes`).
    static func uint32(_ bytes: [UInt8], at offset: Int, bigEndian: Bool) -> UInt32 {
        let (a, b, c, d) = (
            UInt32(bytes[offset]), UInt32(bytes[offset + 1]), UInt32(bytes[offset + 2]), UInt32(bytes[offset + 3])
        )
        return bigEndian ? a << 24 | b << 16 | c << 8 | d : d << 24 | c << 16 | b << 8 | a
    }
}
