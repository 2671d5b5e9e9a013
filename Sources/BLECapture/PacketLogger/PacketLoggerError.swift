/// Why bytes are not a PacketLogger file, or where one stops being readable.
///
/// ``PacketLoggerFile/init(bytes:)`` throws one when not even the first record can be read;
/// past the first record, the same error ends the records and is kept in
/// ``PacketLoggerFile/unreadableTail``. Offsets count bytes from the start of the file.
public enum PacketLoggerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file has no bytes.
    case empty
    /// The first four bytes read as a record length of `bigEndianLength` one way and
    /// `littleEndianLength` the other, and neither is a length a record can have
    /// (``PacketLoggerFile/minimumRecordLength`` to ``PacketLoggerFile/maximumRecordLength``):
    /// the bytes are not a PacketLogger file.
    case notPacketLogger(bigEndianLength: UInt32, littleEndianLength: UInt32)
    /// The file ends inside the 13-byte header (length, timestamp and type) of record `index`,
    /// which starts at `offset`, with `available` bytes left.
    case truncatedRecordHeader(index: Int, offset: Int, available: Int)
    /// Record `index` declares a `length` under 9 bytes, too short for its timestamp and type.
    case recordTooShort(index: Int, offset: Int, length: UInt32)
    /// Record `index` declares a `length` longer than any record holds.
    case recordTooLong(index: Int, offset: Int, length: UInt32)
    /// The file ends inside record `index`: its length field declares `length` bytes and only
    /// `available` follow it.
    case truncatedRecord(index: Int, offset: Int, length: UInt32, available: Int)

    public var description: String {
        switch self {
        case .empty:
            "the file is empty"
        case .notPacketLogger(let big, let little):
            "not a PacketLogger file: its first record's length reads as \(big) bytes (big-endian) or \(little) "
                + "(little-endian), and a record has \(PacketLoggerFile.minimumRecordLength) to "
                + "\(PacketLoggerFile.maximumRecordLength) (save the capture from PacketLogger as a .pklg file)"
        case .truncatedRecordHeader(let index, let offset, let available):
            "the file ends \(available) bytes into the header of record \(index) (at byte \(offset)), "
                + "which needs \(PacketLoggerFile.recordHeaderLength) (truncated file)"
        case .recordTooShort(let index, let offset, let length):
            "record \(index) (at byte \(offset)) declares a length of \(length) bytes, less than the "
                + "\(PacketLoggerFile.minimumRecordLength) of its timestamp and type (damaged file)"
        case .recordTooLong(let index, let offset, let length):
            "record \(index) (at byte \(offset)) declares a length of \(length) bytes, more than the "
                + "\(PacketLoggerFile.maximumRecordLength) any record holds (damaged file)"
        case .truncatedRecord(let index, let offset, let length, let available):
            "the file ends inside record \(index) (at byte \(offset)): \(available) of its \(length) bytes "
                + "are there (truncated file)"
        }
    }

    /// The index of the record the error is about, if one.
    public var recordIndex: Int? {
        switch self {
        case .empty, .notPacketLogger: nil
        case .truncatedRecordHeader(let index, _, _), .recordTooShort(let index, _, _),
            .recordTooLong(let index, _, _), .truncatedRecord(let index, _, _, _):
            index
        }
    }
}
