import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECapture

/// Imports the PacketLogger twins of the bundled captures (made by
/// `Fixtures/captures/make-pklg.py`, some big-endian, some little-endian, with Apple's own
/// records inserted): each must give exactly what its btsnoop capture gives.
@Suite("Importing PacketLogger captures", .timeLimit(.minutes(10)))
struct PacketLoggerImportTests {
    typealias S = CaptureTestSupport
    typealias Kind = PacketLoggerRecord.Kind

    /// Each twin's byte order and the records of Apple's that make-pklg.py inserted, by kind
    /// in the order they first appear.
    static let twins: [(name: String, order: PacketLoggerFile.ByteOrder, skipped: [Kind: Int], kinds: [Kind])] = [
        (
            "discovery-reads", .bigEndian, [.note: 2, .config: 1, .syslog: 1, .other(0x28): 1],
            [.note, .config, .syslog, .other(0x28)]
        ),
        ("long-values", .bigEndian, [.note: 2], [.note]),
        ("notifications", .littleEndian, [.note: 2, .power: 1], [.note, .power]),
        ("notifications-peripheral-side", .bigEndian, [.note: 2], [.note]),
        ("att-errors", .bigEndian, [.note: 2], [.note]),
        (
            "two-peripherals", .littleEndian, [.note: 2, .newController: 1, .kernel: 1],
            [.note, .newController, .kernel]
        ),
    ]

    static let names = twins.map(\.name)

    /// The warnings about skipped records, as (kind, count).
    static func skipped(_ imported: CaptureImport) -> [(Kind, Int)] {
        imported.warnings.compactMap { warning in
            guard case .skippedRecords(let kind, let count) = warning.kind else { return nil }
            return (kind, count)
        }
    }

    @Test(arguments: names)
    func eachTwinImportsToExactlyWhatItsBtsnoopCaptureImportsTo(_ name: String) throws {
        let snoop = try CaptureImporter().importCapture(contentsOf: S.url(name))
        let pklg = try CaptureImporter().importCapture(contentsOf: S.url(name, "pklg"))
        #expect(snoop.format == .btsnoop)
        #expect(pklg.format == .packetLogger)
        #expect(pklg.name == snoop.name)
        #expect(pklg.profileJSON == snoop.profileJSON)
        #expect(pklg.scenarioJSON() == snoop.scenarioJSON())
        #expect(pklg.profile == snoop.profile)
        #expect(pklg.scenario == snoop.scenario)
        #expect(pklg.peer == snoop.peer)
        #expect(pklg.connectionHandle == snoop.connectionHandle)
        #expect(pklg.isLocalCentral == snoop.isLocalCentral)
        let folder = S.capturesFolder.appendingPathComponent("imported")
        let profile = try String(contentsOf: folder.appendingPathComponent(pklg.profileFileName), encoding: .utf8)
        #expect(pklg.profileJSON == profile)
    }

    @Test func theOtherPeerOfTwoPeripheralsImportsAlikeFromBothFormats() throws {
        let importer = CaptureImporter(peer: BluetoothAddress(string: "C2:C2:C2:C2:C2:C2"))
        let snoop = try importer.importCapture(contentsOf: S.url("two-peripherals"))
        let pklg = try importer.importCapture(contentsOf: S.url("two-peripherals", "pklg"))
        #expect(pklg.peer.description == "C2:C2:C2:C2:C2:C2")
        #expect(pklg.profileJSON == snoop.profileJSON)
        #expect(pklg.scenarioJSON() == snoop.scenarioJSON())
    }

    @Test(arguments: names)
    func eachTwinWarnsOnceForEachKindOfRecordItSkippedAndOtherwiseAsItsBtsnoopCapture(_ name: String) throws {
        let twin = try #require(Self.twins.first { $0.name == name })
        let snoop = try CaptureImporter().importCapture(contentsOf: S.url(name))
        let pklg = try CaptureImporter().importCapture(contentsOf: S.url(name, "pklg"))
        let skipped = Self.skipped(pklg)
        #expect(skipped.map(\.0) == twin.kinds)
        #expect(Dictionary(uniqueKeysWithValues: skipped) == twin.skipped)
        let others = pklg.warnings.filter { if case .skippedRecords = $0.kind { false } else { true } }
        #expect(others.map(\.kind) == snoop.warnings.map(\.kind))
        #expect(pklg.warnings.count == snoop.warnings.count + twin.skipped.count)
        for warning in pklg.warnings where warning.packet == nil {
            if case .skippedRecords = warning.kind {
                #expect(warning.message.hasPrefix("skipped "))
                #expect(warning.message.contains("which hold"))
            }
        }
    }

    @Test(arguments: twins.map { ($0.name, $0.order) })
    func eachTwinIsInTheByteOrderItsGeneratorChose(_ name: String, _ order: PacketLoggerFile.ByteOrder) throws {
        let file = try PacketLoggerFile(bytes: try S.bytes(name, "pklg"))
        let snoop = try BTSnoopFile(bytes: try S.bytes(name))
        #expect(file.byteOrder == order)
        #expect(file.timestampLayout == .secondsFirst)
        #expect(file.unreadableTail == nil)
        let hci = file.records.filter(\.kind.isHCI)
        #expect(hci.count == snoop.records.count)
        #expect(hci.map(\.data) == snoop.records.map { Array($0.data.dropFirst()) })
        let offset = PacketLoggerWriter.btsnoop1970
        #expect(hci.map(\.timestamp) == snoop.records.map { $0.timestamp - offset })
    }

    @Test func theSkippedRecordWarningCountsEachKind() {
        #expect(
            CaptureWarning(.skippedRecords(.note, count: 1)).message
                == "skipped 1 PacketLogger record of type 0xFC (note), which holds no HCI packet")
        #expect(
            CaptureWarning(.skippedRecords(.other(0x28), count: 3)).description
                == "skipped 3 PacketLogger records of type 0x28 (unknown), which hold no HCI packet")
    }

    @Test(arguments: [false, true])
    func aCaptureWrittenByTheTestWriterImportsLikeItsBtsnoopOriginal(littleEndian: Bool) throws {
        var snoop = BadCaptureTests.discovered()
        snoop.att([0x0A, 0x03, 0x00], sent: true)
        snoop.att([0x0B, 0x48, 0x00], sent: false)
        snoop.disconnected()
        var pklg = try PacketLoggerWriter(converting: snoop.bytes, littleEndian: littleEndian)
        pklg.note("a note between the packets")
        let expected = try CaptureImporter().importCapture(bytes: snoop.bytes, name: "hr")
        let imported = try CaptureImporter().importCapture(bytes: pklg.bytes, name: "hr")
        #expect(imported.format == .packetLogger)
        #expect(imported.profileJSON == expected.profileJSON)
        #expect(imported.scenarioJSON() == expected.scenarioJSON())
        #expect(Self.skipped(imported).map(\.0) == [.note])
    }

    @Test func timestampsWithTheirMicrosecondsFirstGiveTheSameTimes() throws {
        let pklg = try PacketLoggerWriter(
            converting: try S.bytes("notifications"), littleEndian: true, microsecondsFirst: true)
        #expect(try PacketLoggerFile(bytes: pklg.bytes).timestampLayout == .microsecondsFirst)
        let imported = try CaptureImporter().importCapture(bytes: pklg.bytes, name: "notifications")
        let expected = try CaptureImporter().importCapture(contentsOf: S.url("notifications"))
        #expect(imported.scenarioJSON() == expected.scenarioJSON())
    }

    @Test func aTruncatedTwinImportsWhatCameBeforeTheCut() throws {
        let bytes = Array(try S.bytes("discovery-reads", "pklg").dropLast(3))
        let whole = try PacketLoggerFile(bytes: try S.bytes("discovery-reads", "pklg"))
        let imported = try CaptureImporter().importCapture(bytes: bytes, name: "cut")
        let last = whole.records.count - 1
        let tail = imported.warnings.compactMap { warning -> PacketLoggerError? in
            guard case .packetLoggerFile(let error) = warning.kind else { return nil }
            #expect(warning.packet == last + 1)
            return error
        }
        let length = UInt32(9 + whole.records[last].data.count)
        let offset = bytes.count + 3 - 4 - Int(length)
        #expect(tail == [.truncatedRecord(index: last, offset: offset, length: length, available: Int(length) - 3)])
        #expect(imported.warnings.contains { $0.message.hasSuffix("; the records before it were imported") })
        #expect(imported.profile.services.count == 3)
    }
}
