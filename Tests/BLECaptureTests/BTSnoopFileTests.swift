import Testing

@testable import BLECapture

@Suite("btsnoop files", .timeLimit(.minutes(10)))
struct BTSnoopFileTests {
    static func file(_ build: (inout SnoopWriter) -> Void) throws -> BTSnoopFile {
        var writer = SnoopWriter()
        build(&writer)
        return try BTSnoopFile(bytes: writer.bytes)
    }

    @Test func theHeaderAndRecordFieldsAreReadBigEndian() throws {
        var writer = SnoopWriter()
        writer.record([0x04, 0x0E, 0x00], flags: 0x03, drops: 2)
        let file = try BTSnoopFile(bytes: writer.bytes)
        #expect(file.version == 1)
        #expect(file.datalink == .h4)
        #expect(file.byteOrder == .bigEndian)
        #expect(file.problems.isEmpty)
        let record = try #require(file.records.first)
        #expect(record.index == 0)
        #expect(record.originalLength == 3)
        #expect(record.cumulativeDrops == 2)
        #expect(record.timestamp == BTSnoopRecord.epoch2000)
        #expect(record.data == [0x04, 0x0E, 0x00])
        #expect(record.isReceived && record.isCommandOrEvent && !record.isTruncated)
    }

    @Test func aLittleEndianFileIsReadAndReported() throws {
        var writer = SnoopWriter()
        writer.littleEndian = true
        writer.record([0x01, 0x03, 0x0C, 0x00], flags: 0x02)
        let file = try BTSnoopFile(bytes: writer.bytes)
        #expect(file.byteOrder == .littleEndian)
        #expect(file.datalink == .h4)
        #expect(file.problems == [.littleEndianHeader])
        #expect(file.records.first?.data == [0x01, 0x03, 0x0C, 0x00])
        #expect(file.records.first?.timestamp == BTSnoopRecord.epoch2000)
    }

    @Test(arguments: [
        (UInt32(1001), BTSnoopDatalink.h1), (1002, .h4), (1003, .bscp), (1004, .h5), (2001, .linuxMonitor),
    ])
    func datalinkCodesNameTheirTypes(code: UInt32, datalink: BTSnoopDatalink) throws {
        var writer = SnoopWriter()
        writer.datalink = code
        #expect(try BTSnoopFile(bytes: writer.bytes).datalink == datalink)
        #expect(datalink.rawValue == code)
        #expect(BTSnoopDatalink(rawValue: 7) == .other(7))
        #expect(BTSnoopDatalink.other(7).description == "7 (unassigned)")
    }

    @Test func bytesWithoutTheIdentificationPatternAreNotBTSnoop() {
        #expect(throws: BTSnoopError.notBTSnoop) { try BTSnoopFile(bytes: Array("pklg".utf8)) }
        #expect(throws: BTSnoopError.notBTSnoop) { try BTSnoopFile(bytes: Array("btsnoof".utf8)) }
    }

    @Test func anEmptyFileOrOneCutInsideThePatternIsShortNotAnotherFormat() {
        #expect(throws: BTSnoopError.truncatedHeader(length: 0)) { try BTSnoopFile(bytes: []) }
        #expect(throws: BTSnoopError.truncatedHeader(length: 5)) { try BTSnoopFile(bytes: Array("btsno".utf8)) }
        #expect(
            BTSnoopError.truncatedHeader(length: 0).description
                == "the file is empty: a btsnoop file starts with a 16-byte header")
        #expect(
            BTSnoopError.truncatedHeader(length: 5).description
                == "the file is 5 bytes long, shorter than the 16-byte btsnoop header")
    }

    @Test func aFileShorterThanItsHeaderIsRejected() {
        let bytes = Array(SnoopWriter().bytes.prefix(12))
        #expect(throws: BTSnoopError.truncatedHeader(length: 12)) { try BTSnoopFile(bytes: bytes) }
    }

    @Test func onlyVersionOneIsRead() {
        var bytes = SnoopWriter().bytes
        bytes[11] = 2
        #expect(throws: BTSnoopError.unsupportedVersion(2)) { try BTSnoopFile(bytes: bytes) }
        #expect(BTSnoopError.unsupportedVersion(2).description.contains("only version 1"))
    }

    @Test func aFileEndingInsideARecordHeaderKeepsTheRecordsBeforeIt() throws {
        var writer = SnoopWriter()
        writer.record([0x04, 0x0E, 0x00], flags: 0x03)
        writer.record([0x04, 0x0E, 0x00], flags: 0x03)
        let bytes = Array(writer.bytes.dropLast(3 + 10))
        let file = try BTSnoopFile(bytes: bytes)
        #expect(file.records.count == 1)
        #expect(file.problems == [.truncatedRecordHeader(records: 1, bytesLeft: 14)])
    }

    @Test func aFileEndingInsideARecordsPacketReportsIt() throws {
        var writer = SnoopWriter()
        writer.record([0x04, 0x0E, 0x00], flags: 0x03)
        writer.record([0x04, 0x0E, 0x02, 0x01, 0x02], flags: 0x03)
        let file = try BTSnoopFile(bytes: Array(writer.bytes.dropLast(2)))
        #expect(file.records.count == 1)
        #expect(file.problems == [.truncatedRecord(index: 1, included: 5, available: 3)])
        // In words records count from 1: the second record is record 2.
        #expect(
            file.problems[0].description == "the file ends inside record 2 (3 of its 5 bytes are there); it was skipped"
        )
    }

    @Test func aRecordIncludingMoreThanItsPacketIsCutToThePacket() throws {
        var writer = SnoopWriter()
        writer.record([0x04, 0x0E, 0x00, 0xFF], flags: 0x03, original: 3)
        let file = try BTSnoopFile(bytes: writer.bytes)
        #expect(file.records.first?.data == [0x04, 0x0E, 0x00])
        #expect(file.problems == [.includedLongerThanOriginal(index: 0, included: 4, original: 3)])
    }

    @Test func aRecordKeepingLessThanItsPacketIsTruncated() throws {
        var writer = SnoopWriter()
        writer.record([0x02, 0x40], flags: 0x01, original: 40)
        let record = try #require(try BTSnoopFile(bytes: writer.bytes).records.first)
        #expect(record.isTruncated)
        #expect(!record.isCommandOrEvent)
    }
}
