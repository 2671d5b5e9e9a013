/// A btsnoop capture file: a header naming the datalink, then one record per HCI packet.
///
/// The format (Frontline's BTSnoop, after RFC 1761's snoop) is a 16-byte header — the
/// identification pattern `btsnoop\0`, a 32-bit version (1) and a 32-bit datalink type — then
/// records of six 32-bit fields and the packet bytes: original length, included length,
/// packet flags, cumulative drops, and a 64-bit timestamp in microseconds since midnight,
/// 1 January of year 0. The format writes these integers big-endian; a file whose header
/// reads as version 1 only little-endian is read that way and the fact reported in
/// ``problems``. The packets themselves are HCI, whose fields are little-endian.
///
/// Decoding is forgiving past the header: a record cut short by the end of the file ends the
/// records and is reported in ``problems``, as is a record that claims more bytes than the
/// packet had.
///
/// ```swift
/// let file = try BTSnoopFile(bytes: Array(data))
/// for record in file.records where record.isReceived { … }
/// ```
public struct BTSnoopFile: Sendable, Hashable {
    /// The identification pattern every btsnoop file starts with: `btsnoop` and a zero byte.
    public static let identification: [UInt8] = Array("btsnoop".utf8) + [0]
    /// The length of the file header.
    public static let headerLength = 16
    /// The length of a record's header, before its packet bytes.
    public static let recordHeaderLength = 24

    /// The order the file's own integers are in.
    public enum ByteOrder: String, Sendable, Hashable {
        /// As the format specifies.
        case bigEndian
        /// Seen in files some tools write; read, and reported.
        case littleEndian
    }

    /// Something in the file that was read around rather than rejected. Descriptions number
    /// records from 1, as capture tools number frames (and as import warnings number packets);
    /// the `index` values count from 0, as ``BTSnoopRecord/index`` does.
    public enum Problem: Sendable, Hashable, CustomStringConvertible {
        /// The header's integers are little-endian, which the format does not allow.
        case littleEndianHeader
        /// The file ends inside a record's 24-byte header, after `records` whole records.
        case truncatedRecordHeader(records: Int, bytesLeft: Int)
        /// The file ends inside record `index`'s packet: `included` bytes declared, `available` left.
        case truncatedRecord(index: Int, included: Int, available: Int)
        /// Record `index` includes more bytes than the packet had (`original`); the extra
        /// bytes are dropped.
        case includedLongerThanOriginal(index: Int, included: Int, original: Int)
        /// Record `index` declares more bytes (`included`) than both its packet had
        /// (`original`) and the file holds after its header (`available`): its length field is
        /// damaged, not the file cut, and nothing from it on can be read.
        case damagedLength(index: Int, included: Int, original: Int, available: Int)

        public var description: String {
            switch self {
            case .littleEndianHeader:
                "the file's header and record fields are little-endian (btsnoop specifies big-endian); read them so"
            case .truncatedRecordHeader(let records, let left):
                "the file ends \(left) bytes into the header of record \(records + 1) (truncated file); "
                    + "the \(records) records before it were read"
            case .truncatedRecord(let index, let included, let available):
                "the file ends inside record \(index + 1) (\(available) of its \(included) bytes are there); it was "
                    + "skipped"
            case .includedLongerThanOriginal(let index, let included, let original):
                "record \(index + 1) includes \(included) bytes of a \(original)-byte packet; the extra bytes were "
                    + "ignored"
            case .damagedLength(let index, let included, let original, let available):
                "record \(index + 1)'s length field is damaged: it declares \(included) bytes, more than its packet "
                    + "had (\(original)) and than the file holds after it (\(available)); the \(index) records before "
                    + "it were read, and none from it on"
            }
        }
    }

    /// The file format version (1).
    public var version: UInt32
    /// The datalink type of the records' packets.
    public var datalink: BTSnoopDatalink
    /// The byte order of the file's integers.
    public var byteOrder: ByteOrder
    /// The records, in file order.
    public var records: [BTSnoopRecord]
    /// What was read around: a little-endian header, a truncated last record.
    public var problems: [Problem]

    /// Reads a btsnoop file.
    ///
    /// - Throws: ``BTSnoopError/notBTSnoop`` when the identification pattern is missing,
    ///   ``BTSnoopError/truncatedHeader(length:)`` when the file is shorter than its header
    ///   (also when it is empty, or ends inside the pattern),
    ///   ``BTSnoopError/unsupportedVersion(_:)`` for a version other than 1.
    public init(bytes: [UInt8]) throws(BTSnoopError) {
        guard bytes.count >= Self.identification.count, Array(bytes.prefix(8)) == Self.identification else {
            // Empty, or cut inside the pattern: a short file, not another format.
            if Self.identification.starts(with: bytes) { throw .truncatedHeader(length: bytes.count) }
            throw .notBTSnoop
        }
        guard bytes.count >= Self.headerLength else { throw .truncatedHeader(length: bytes.count) }
        var problems: [Problem] = []
        let order: ByteOrder
        if bytes[8..<12].elementsEqual([1, 0, 0, 0]) {
            order = .littleEndian
            problems.append(.littleEndianHeader)
        } else {
            order = .bigEndian
        }
        let isBig = order == .bigEndian
        var header = ByteReader(bytes[8..<16])
        guard let version = try? header.uint32(bigEndian: isBig), let type = try? header.uint32(bigEndian: isBig)
        else { throw .truncatedHeader(length: bytes.count) }
        guard version == 1 else { throw .unsupportedVersion(version) }
        self.version = version
        datalink = BTSnoopDatalink(rawValue: type)
        byteOrder = order
        records = []
        var body = ByteReader(bytes[Self.headerLength...])
        while !body.isAtEnd {
            let index = records.count
            guard body.remaining >= Self.recordHeaderLength else {
                problems.append(.truncatedRecordHeader(records: index, bytesLeft: body.remaining))
                break
            }
            do throws(ByteReader.Shortfall) {
                let original = Int(try body.uint32(bigEndian: isBig))
                let included = Int(try body.uint32(bigEndian: isBig))
                let flags = try body.uint32(bigEndian: isBig)
                let drops = try body.uint32(bigEndian: isBig)
                let timestamp = Int64(bitPattern: try body.uint64(bigEndian: isBig))
                guard included <= body.remaining else {
                    // More than the packet had as well: the length is damaged, not the file cut.
                    problems.append(
                        included > original
                            ? .damagedLength(
                                index: index, included: included, original: original, available: body.remaining)
                            : .truncatedRecord(index: index, included: included, available: body.remaining))
                    break
                }
                var data = Array(try body.bytes(included))
                if included > original {
                    problems.append(.includedLongerThanOriginal(index: index, included: included, original: original))
                    data = Array(data.prefix(original))
                }
                records.append(
                    BTSnoopRecord(
                        index: index, originalLength: original, flags: flags, cumulativeDrops: drops,
                        timestamp: timestamp, data: data))
            } catch {
                problems.append(.truncatedRecordHeader(records: index, bytesLeft: body.remaining))
                break
            }
        }
        self.problems = problems
    }
}

/// Why bytes are not a btsnoop file this reader can use.
public enum BTSnoopError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes do not start with `btsnoop\0`.
    case notBTSnoop
    /// The file ends inside its 16-byte header (or is empty).
    case truncatedHeader(length: Int)
    /// The version is not 1.
    case unsupportedVersion(UInt32)

    public var description: String {
        switch self {
        case .notBTSnoop:
            "not a btsnoop file: it does not start with \"btsnoop\\0\" (save the capture in btsnoop format, "
                + "e.g. Android's btsnoop_hci.log or btmon -w)"
        case .truncatedHeader(let length):
            length == 0
                ? "the file is empty: a btsnoop file starts with a 16-byte header"
                : "the file is \(length) bytes long, shorter than the 16-byte btsnoop header"
        case .unsupportedVersion(let version):
            "btsnoop version \(version) is not supported (only version 1 is defined)"
        }
    }
}
