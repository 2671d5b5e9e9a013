import BLEMockKit
import Foundation
import Testing

@testable import BLECapture

/// The capture fuzzer's checked-in inputs (`Fixtures/fuzz/capture`, made by
/// `scripts/make-fuzz-seeds.py`, plus each input a fuzz run found a bug with, as `crash-*`):
/// the seeds import as the session they hold, every input imports or fails with a reason, and
/// each bug found has a test of its own below.
@Suite("The capture fuzzer's inputs", .timeLimit(.minutes(10)))
struct CaptureFuzzCorpusTests {
    static var folder: URL {
        CaptureTestSupport.capturesFolder.deletingLastPathComponent().appendingPathComponent("fuzz/capture")
    }

    static var inputs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    @Test func theSyntheticSeedsImportToTheSameSessionInEveryFormat() throws {
        let names = [
            "seed-btsnoop-h4", "seed-btsnoop-h4-little-endian", "seed-btsnoop-h1", "seed-btsnoop-monitor",
            "seed-pklg-big-endian", "seed-pklg-little-endian",
        ]
        var profiles: [String] = []
        var scenarios: [String] = []
        for name in names {
            let bytes = Array(try Data(contentsOf: Self.folder.appendingPathComponent(name)))
            let imported = try CaptureImporter().importCapture(bytes: bytes, name: "seed")
            #expect(imported.format == (name.hasPrefix("seed-pklg") ? .packetLogger : .btsnoop), "\(name)")
            #expect(imported.profile.services.map(\.uuid) == ["180D"], "\(name)")
            profiles.append(imported.profileJSON)
            scenarios.append(imported.scenarioJSON())
        }
        #expect(Set(profiles).count == 1)
        #expect(Set(scenarios).count == 1)
    }

    /// Imports `bytes` the three ways the fuzzer does.
    static func importEveryWay(_ bytes: [UInt8]) -> [Result<CaptureImport, CaptureImportError>] {
        var inputs: [([UInt8], CaptureFormat?)] = [(bytes, nil), (bytes, .packetLogger)]
        if let first = bytes.first, !bytes.starts(with: BTSnoopFile.identification) {
            let datalink: [UInt8] = [[0, 0, 0x03, 0xEA], [0, 0, 0x03, 0xE9], [0, 0, 0x07, 0xD1]][Int(first % 3)]
            inputs.append((BTSnoopFile.identification + [0, 0, 0, 1] + datalink + bytes.dropFirst(), .btsnoop))
        }
        return inputs.map { input in
            Result { () throws(CaptureImportError) in
                try CaptureImporter().importCapture(bytes: input.0, name: "fuzz", format: input.1)
            }
        }
    }

    @Test func everyInputImportsOrFailsWithAReason() throws {
        #expect(Self.inputs.count >= 8)
        for name in Self.inputs {
            let bytes = Array(try Data(contentsOf: Self.folder.appendingPathComponent(name)))
            for result in Self.importEveryWay(bytes) {
                switch result {
                case .success(let imported):
                    #expect(imported.warnings.allSatisfy { !$0.message.isEmpty }, "\(name)")
                case .failure(.invalidOutput(let error)):
                    Issue.record("\(name): the importer wrote an invalid document: \(error)")
                case .failure(let error):
                    #expect(!error.description.isEmpty, "\(name)")
                }
            }
        }
    }

    /// crash-a1ada81f…: a Linux monitor capture whose clock jumps by more than an Int64 holds
    /// between the connection and a later packet; the time from the connection overflowed.
    @Test func aClockJumpLargerThanAnInt64HoldsImportsWithoutOverflow() throws {
        let bytes = Array(
            try Data(contentsOf: Self.folder.appendingPathComponent("crash-a1ada81f82dcb443008b601f82358d355eaab4c3")))
        _ = Self.importEveryWay(bytes)
        var writer = SnoopWriter()
        writer.time = .min + 1
        writer.connected()
        writer.time = .max - 10_000
        writer.att([0x0A, 0x03, 0x00], sent: true)
        writer.att([0x0B, 0x48], sent: false)
        let imported = try CaptureImporter().importCapture(bytes: writer.bytes, name: "jump")
        let advance = try #require(imported.scenario.steps.first { $0.operation.name == "advance" })
        // The saturated gap, Int64.max microseconds, is replayed as the longest wait a scenario
        // takes, with a warning that says so.
        #expect(advance.operation == .advance(FixtureDuration.maximumScenarioWait))
        #expect(
            imported.warnings.contains {
                "\($0)".contains("a gap of 9223372036854.775807s in the capture is replayed as 3600s")
            })
    }

    /// crash-e8ed531b…: a PacketLogger capture whose advertisement carries a TX power level of
    /// 0x80 (-128 dBm, outside the -127…127 the specification allows); the profile written
    /// held it, and the fixture format rejected the profile.
    @Test func aTXPowerLevelOutsideTheSpecifiedRangeIsLeftOutOfTheProfile() throws {
        let bytes = Array(
            try Data(contentsOf: Self.folder.appendingPathComponent("crash-e8ed531bc3a64d72ab5ef7f56d400a624823e574")))
        for result in Self.importEveryWay(bytes) {
            if case .failure(.invalidOutput(let error)) = result { Issue.record("\(error)") }
        }
        for power: UInt8 in [0x80, 0x81, 0x7F] {
            var writer = SnoopWriter()
            writer.event(
                0x3E, [0x02, 0x01, 0x00, 0x01, 0xA6, 0xB5, 0xC4, 0xD3, 0xE2, 0xF1, 0x03, 0x02, 0x0A, power, 0xC4])
            writer.connected()
            writer.att([0x0A, 0x03, 0x00], sent: true)
            writer.att([0x0B, 0x48], sent: false)
            let imported = try CaptureImporter().importCapture(bytes: writer.bytes, name: "power")
            let level = Int(Int8(bitPattern: power))
            let adjusted = imported.warnings.contains {
                $0.kind
                    == .profileAdjusted(
                        "the advertised TX power level, \(level) dBm, is outside the -127…127 dBm the specification "
                            + "allows; it was left out")
            }
            #expect(imported.profile.advertisement?.txPowerLevel == (power == 0x80 ? nil : level))
            #expect(adjusted == (power == 0x80))
        }
    }
}
