import Testing

@testable import BLECapture

/// The PacketLogger reader on files built byte by byte: both byte orders, both timestamp
/// layouts, every record kind, and each way a file can be unreadable.
@Suite("PacketLogger files", .timeLimit(.minutes(10)))
struct PacketLoggerFileTests {
    /// An HCI Reset command, and the Command Complete event answering it.
    static func resetExchange(littleEndian: Bool = false) -> PacketLoggerWriter {
        var writer = PacketLoggerWriter(littleEndian: littleEndian)
        writer.record(0x00, [0x03, 0x0C, 0x00])
        writer.note("hello")
        writer.record(0x01, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        return writer
    }

    @Test func aBigEndianFileIsReadRecordByRecord() throws {
        let file = try PacketLoggerFile(bytes: Self.resetExchange().bytes)
        #expect(file.byteOrder == .bigEndian)
        #expect(file.timestampLayout == .secondsFirst)
        #expect(file.unreadableTail == nil)
        #expect(file.records.map(\.kind) == [.hciCommand, .note, .hciEvent])
        #expect(file.records.map(\.index) == [0, 1, 2])
        let command = try #require(file.records.first)
        #expect(command.seconds == 1_704_067_200)
        #expect(command.microseconds == 0)
        #expect(command.timestamp == 1_704_067_200_000_000)
        #expect(command.data == [0x03, 0x0C, 0x00])
        #expect(file.records[1].data == Array("hello".utf8) + [0])
        #expect(file.records[2].microseconds == 2_000)
    }

    @Test func aLittleEndianFileReadsToTheSameRecords() throws {
        let big = try PacketLoggerFile(bytes: Self.resetExchange().bytes)
        let little = try PacketLoggerFile(bytes: Self.resetExchange(littleEndian: true).bytes)
        #expect(little.byteOrder == .littleEndian)
        #expect(little.timestampLayout == .secondsFirst)
        #expect(little.records == big.records)
    }

    @Test(arguments: [false, true])
    func aTimestampWithItsMicrosecondsFirstIsRecognised(littleEndian: Bool) throws {
        var writer = Self.resetExchange(littleEndian: littleEndian)
        writer.records = []
        writer.microsecondsFirst = true
        writer.time = 1_704_067_200_123_456
        writer.record(0x00, [0x03, 0x0C, 0x00])
        writer.record(0x01, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        let file = try PacketLoggerFile(bytes: writer.bytes)
        #expect(file.timestampLayout == .microsecondsFirst)
        #expect(file.records.map(\.timestamp) == [1_704_067_200_123_456, 1_704_067_200_124_456])
    }

    @Test func everyTypeByteRoundTripsThroughItsKind() {
        for raw in UInt8.min...UInt8.max {
            let kind = PacketLoggerRecord.Kind(rawValue: raw)
            #expect(kind.rawValue == raw)
            #expect(kind.isHCI == [0x00, 0x01, 0x02, 0x03, 0x08, 0x09].contains(raw))
            #expect(kind.description.hasPrefix("0x\(hex(raw)) ("))
        }
        #expect(PacketLoggerRecord.Kind(rawValue: 0xFC) == .note)
        #expect(PacketLoggerRecord.Kind(rawValue: 0x28) == .other(0x28))
        #expect(PacketLoggerRecord.Kind.note.description == "0xFC (note)")
        #expect(PacketLoggerRecord.Kind.other(0x28).description == "0x28 (unknown)")
    }

    static func record(_ kind: PacketLoggerRecord.Kind, _ data: [UInt8]) -> PacketLoggerRecord {
        PacketLoggerRecord(index: 0, kind: kind, seconds: 0, microseconds: 0, data: data)
    }

    @Test func hciRecordsDecodeByTheirKindAndTheOthersAreNoPacket() throws {
        #expect(
            try HCIPacket.decode(Self.record(.hciCommand, [0x06, 0x04, 0x03, 0x40, 0x00, 0x13]))
                == .command(opcode: 0x0406, parameters: [0x40, 0x00, 0x13]))
        #expect(
            try HCIPacket.decode(Self.record(.hciEvent, [0x05, 0x01, 0x00])) == .event(code: 0x05, parameters: [0]))
        let fragment = ACLFragment(handle: 0x0041, boundary: .firstFlushable, data: [0xCC])
        #expect(
            try HCIPacket.decode(Self.record(.aclSent, [0x41, 0x20, 0x01, 0x00, 0xCC]))
                == .acl(fragment, .hostToController))
        #expect(
            try HCIPacket.decode(Self.record(.aclReceived, [0x41, 0x20, 0x01, 0x00, 0xCC]))
                == .acl(fragment, .controllerToHost))
        #expect(try HCIPacket.decode(Self.record(.scoReceived, [0x01, 0x00, 0x00])) == .audio)
        for kind in [PacketLoggerRecord.Kind.note, .syslog, .power, .config, .newController, .lmpSent, .other(0x28)] {
            #expect(try HCIPacket.decode(Self.record(kind, [0x41, 0x00])) == nil)
        }
        #expect(throws: HCIDecodingError.empty) { try HCIPacket.decode(Self.record(.hciEvent, [])) }
        #expect(throws: HCIDecodingError.lengthMismatch(what: "event packet", declared: 3, actual: 1)) {
            try HCIPacket.decode(Self.record(.hciEvent, [0x05, 0x03, 0x00]))
        }
    }

    /// The first record of `resetExchange()`: 16 bytes, a length field of 12.
    static let firstRecord = Array(resetExchange().records[0])

    @Test(arguments: [
        ([], PacketLoggerError.empty),
        (
            Array("hello, this is no capture".utf8),
            .notPacketLogger(bigEndianLength: 0x6865_6C6C, littleEndianLength: 0x6C6C_6568)
        ),
        (
            [0xFF, 0xFF, 0xFF, 0xF0, 0x00, 0x00, 0x00, 0x00, 0x00],
            .notPacketLogger(bigEndianLength: 0xFFFF_FFF0, littleEndianLength: 0xF0FF_FFFF)
        ),
        ([0x00, 0x00, 0x0C], .truncatedRecordHeader(index: 0, offset: 0, available: 3)),
        (Array(firstRecord.prefix(10)), .truncatedRecordHeader(index: 0, offset: 0, available: 10)),
        (Array(firstRecord.prefix(14)), .truncatedRecord(index: 0, offset: 0, length: 12, available: 10)),
        ([0x00, 0x00, 0x00, 0x05] + Array(repeating: 0, count: 12), .recordTooShort(index: 0, offset: 0, length: 5)),
        (Array(repeating: 0, count: 16), .recordTooShort(index: 0, offset: 0, length: 0)),
    ])
    func bytesWhoseFirstRecordCannotBeReadAreRejected(bytes: [UInt8], error: PacketLoggerError) {
        #expect(throws: error) { try PacketLoggerFile(bytes: bytes) }
        #expect(!PacketLoggerFile.isPacketLogger(bytes))
        #expect(!error.description.isEmpty)
    }

    @Test(arguments: [
        ([0x00, 0x00], PacketLoggerError.truncatedRecordHeader(index: 3, offset: 54, available: 2)),
        (Array(firstRecord.prefix(12)), .truncatedRecordHeader(index: 3, offset: 54, available: 12)),
        (Array(firstRecord.prefix(15)), .truncatedRecord(index: 3, offset: 54, length: 12, available: 11)),
        ([0x00, 0x00, 0x00, 0x08] + Array(repeating: 0, count: 9), .recordTooShort(index: 3, offset: 54, length: 8)),
        (
            [0x7F, 0xFF, 0xFF, 0xFF] + Array(repeating: 0, count: 9),
            .recordTooLong(index: 3, offset: 54, length: 0x7FFF_FFFF)
        ),
        (
            [0x00, 0x01, 0x00, 0x0E] + Array(repeating: 0, count: 9),
            .recordTooLong(index: 3, offset: 54, length: 65_550)
        ),
    ])
    func aRecordThatCannotBeReadEndsTheRecordsAndIsKept(tail: [UInt8], error: PacketLoggerError) throws {
        let good = Self.resetExchange().bytes
        #expect(good.count == 54)
        let file = try PacketLoggerFile(bytes: good + tail)
        #expect(file.byteOrder == .bigEndian)
        #expect(file.records.count == 3)
        #expect(file.unreadableTail == error)
        #expect(file.unreadableTail?.recordIndex == 3)
    }

    @Test func theLargestRecordIsReadAndOneByteMoreIsNot() throws {
        var writer = PacketLoggerWriter()
        writer.record(0x03, [0x40, 0x20, 0xFF, 0xFF] + Array(repeating: 0xAB, count: 65_535))
        let file = try PacketLoggerFile(bytes: writer.bytes)
        #expect(file.records.first?.data.count == 65_539)
        #expect(PacketLoggerFile.maximumRecordLength == 65_548)
        writer.record(0xFC, Array(repeating: 0x41, count: 65_540))
        #expect(try PacketLoggerFile(bytes: writer.bytes).unreadableTail?.recordIndex == 1)
    }

    @Test func theByteOrderWhoseRecordsTileTheFileWins() throws {
        // A length of 256 big-endian reads as 65,536 little-endian, also a length a record can have.
        var writer = PacketLoggerWriter()
        writer.record(0xFC, Array(repeating: 0x20, count: 247))
        writer.note("end")
        let file = try PacketLoggerFile(bytes: writer.bytes)
        #expect(Array(writer.bytes.prefix(4)) == [0x00, 0x00, 0x01, 0x00])
        #expect(file.byteOrder == .bigEndian)
        #expect(file.records.count == 2 && file.unreadableTail == nil)
        var little = writer
        little.littleEndian = true
        little.records = []
        little.record(0xFC, Array(repeating: 0x20, count: 247))
        #expect(try PacketLoggerFile(bytes: little.bytes).byteOrder == .littleEndian)
    }

    @Test func aFileThatReadsEquallyFarInBothByteOrdersIsReadBigEndian() throws {
        // The first length is 256 big-endian and 65,536 little-endian: each order reads that one
        // record and stops at the next (FF FF FF FF is too long either way), so the walks tie
        // record for record, and big-endian, PacketLogger's own order, wins.
        var bytes: [UInt8] = [0x00, 0x00, 0x01, 0x00] + Array(repeating: 0x00, count: 256)
        bytes += [0xFF, 0xFF, 0xFF, 0xFF]
        bytes += Array(repeating: 0x00, count: 4 + 65_536 - bytes.count)
        bytes += [0xFF]
        let big = PacketLoggerFile.walk(bytes, order: .bigEndian)
        let little = PacketLoggerFile.walk(bytes, order: .littleEndian)
        #expect(big.records == 1 && little.records == 1)
        #expect(big.rank == little.rank)
        let file = try PacketLoggerFile(bytes: bytes)
        #expect(file.byteOrder == .bigEndian)
        #expect(file.records.count == 1)
        #expect(file.records.first?.data.count == 256 - 9)
        #expect(file.unreadableTail == .recordTooLong(index: 1, offset: 260, length: 0xFFFF_FFFF))
        // A tie at the first record: both orders fail to read it, and the big-endian reading's
        // error is the one reported.
        #expect(throws: PacketLoggerError.truncatedRecord(index: 0, offset: 0, length: 256, available: 9)) {
            try PacketLoggerFile(bytes: [0x00, 0x00, 0x01, 0x00] + Array(repeating: 0, count: 9))
        }
    }

    @Test func aDamagedFileIsReadInTheOrderThatReadsMoreRecords() throws {
        var writer = Self.resetExchange(littleEndian: true)
        writer.records.append([0x01, 0x02])
        let file = try PacketLoggerFile(bytes: writer.bytes)
        #expect(file.byteOrder == .littleEndian)
        #expect(file.records.count == 3)
        #expect(file.unreadableTail == .truncatedRecordHeader(index: 3, offset: 54, available: 2))
    }

    @Test func btsnoopBytesAreNoPacketLoggerFile() throws {
        var snoop = SnoopWriter()
        snoop.command(0x0C03, [])
        #expect(!PacketLoggerFile.isPacketLogger(snoop.bytes))
        #expect(PacketLoggerFile.isPacketLogger(Self.resetExchange().bytes))
        #expect(
            throws: PacketLoggerError.notPacketLogger(bigEndianLength: 0x6274_736E, littleEndianLength: 0x6E73_7462)
        ) {
            try PacketLoggerFile(bytes: snoop.bytes)
        }
    }
}
