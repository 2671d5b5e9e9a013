import Foundation
import Testing

@testable import BLECapture

/// Telling btsnoop from PacketLogger: the content decides, and a file's extension only says
/// which format's error bytes of neither format get.
@Suite("Capture formats", .timeLimit(.minutes(10)))
struct CaptureFormatTests {
    typealias S = CaptureTestSupport

    @Test func theContentTellsTheFormat() throws {
        #expect(CaptureFormat(detecting: try S.bytes("att-errors")) == .btsnoop)
        #expect(CaptureFormat(detecting: try S.bytes("att-errors", "pklg")) == .packetLogger)
        #expect(CaptureFormat(detecting: try S.bytes("notifications", "pklg")) == .packetLogger)
        #expect(CaptureFormat(detecting: Array("btsnoop".utf8) + [0]) == .btsnoop)
        #expect(CaptureFormat(detecting: Array("hello".utf8)) == nil)
        #expect(CaptureFormat(detecting: []) == nil)
        #expect(CaptureFormat.allCases.map(\.description) == ["btsnoop", "PacketLogger"])
    }

    @Test func theExtensionNamesAFormat() {
        #expect(CaptureFormat(fileExtension: "pklg") == .packetLogger)
        #expect(CaptureFormat(fileExtension: "PKLG") == .packetLogger)
        #expect(CaptureFormat(fileExtension: "btsnoop") == .btsnoop)
        #expect(CaptureFormat(fileExtension: "cfa") == .btsnoop)
        #expect(CaptureFormat(fileExtension: "log") == nil)
        #expect(CaptureFormat(fileExtension: "") == nil)
    }

    @Test func theContentWinsOverTheFormatTheCallerNames() throws {
        let pklg = try CaptureImporter().importCapture(
            bytes: try S.bytes("att-errors", "pklg"), name: "a", format: .btsnoop)
        #expect(pklg.format == .packetLogger)
        let snoop = try CaptureImporter().importCapture(
            bytes: try S.bytes("att-errors"), name: "a", format: .packetLogger)
        #expect(snoop.format == .btsnoop)
        #expect(pklg.scenarioJSON() == snoop.scenarioJSON())
    }

    @Test func aTwinWithTheWrongExtensionStillImports() throws {
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("capture-format-\(ProcessInfo.processInfo.processIdentifier)-renamed.btsnoop")
        try Data(try S.bytes("long-values", "pklg")).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let imported = try CaptureImporter().importCapture(contentsOf: file)
        #expect(imported.format == .packetLogger)
        #expect(imported.profileJSON == (try S.load("long-values")).profileJSON)
    }

    @Test(arguments: [
        ([], PacketLoggerError.empty),
        (Array("hello".utf8), .notPacketLogger(bigEndianLength: 0x6865_6C6C, littleEndianLength: 0x6C6C_6568)),
        ([0x00, 0x00, 0x00, 0x1A, 0x65, 0x92], .truncatedRecordHeader(index: 0, offset: 0, available: 6)),
        ([0x00, 0x00, 0x00, 0x03] + Array(repeating: 0, count: 12), .recordTooShort(index: 0, offset: 0, length: 3)),
    ])
    func bytesOfNeitherFormatGetThePacketLoggerErrorWhenTheCallerSaysPacketLogger(
        bytes: [UInt8], error: PacketLoggerError
    ) {
        #expect(throws: CaptureImportError.unreadablePacketLogger(error)) {
            try CaptureImporter().importCapture(bytes: bytes, name: "x", format: .packetLogger)
        }
        // (No bytes at all are a btsnoop file cut short, whose message says the file is empty.)
        let btsnoop = bytes.isEmpty ? BTSnoopError.truncatedHeader(length: 0) : .notBTSnoop
        #expect(throws: CaptureImportError.notACapture(btsnoop)) {
            try CaptureImporter().importCapture(bytes: bytes, name: "x")
        }
        #expect(throws: CaptureImportError.notACapture(btsnoop)) {
            try CaptureImporter().importCapture(bytes: bytes, name: "x", format: .btsnoop)
        }
        #expect(
            CaptureImportError.unreadablePacketLogger(error).description.hasPrefix(
                "not a usable PacketLogger capture: "))
    }

    @Test func aPklgFileOfNeitherFormatSaysWhyItIsNoPacketLoggerFile() throws {
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("capture-format-\(ProcessInfo.processInfo.processIdentifier)-garbage.pklg")
        try Data("hello".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let error = CaptureImportError.unreadablePacketLogger(
            .notPacketLogger(bigEndianLength: 0x6865_6C6C, littleEndianLength: 0x6C6C_6568))
        #expect(throws: error) { try CaptureImporter().importCapture(contentsOf: file) }
        #expect(error.description.contains("not a PacketLogger file"))
    }

    @Test func bytesOfNeitherFormatNameBoth() {
        let description = CaptureImportError.notACapture(.notBTSnoop).description
        #expect(description.hasPrefix("not a btsnoop file"))
        #expect(description.contains("nor a PacketLogger file"))
        #expect(
            CaptureImportError.notACapture(.truncatedHeader(length: 9)).description.contains("16-byte btsnoop header"))
    }

    @Test func aTruncatedPklgWithNoWholeRecordSaysWhere() throws {
        let bytes = Array(try S.bytes("att-errors", "pklg").prefix(20))
        let first = try #require(try PacketLoggerFile(bytes: try S.bytes("att-errors", "pklg")).records.first)
        #expect(
            throws: CaptureImportError.unreadablePacketLogger(
                .truncatedRecord(index: 0, offset: 0, length: UInt32(9 + first.data.count), available: 16))
        ) {
            try CaptureImporter().importCapture(bytes: bytes, name: "x", format: .packetLogger)
        }
    }
}
