import BLEMockKit
import Testing

@testable import BLECapture

/// Damaged copies of the bundled captures, made by a seeded generator: the importer must
/// never trap, and must never write a document the fixture format rejects — it imports what
/// it can trust, or says why it cannot.
@Suite("Importing damaged captures", .timeLimit(.minutes(10)))
struct CaptureMutationTests {
    /// The kit's seeded generator, for reproducible damage.
    struct Generator {
        var random: SeededGenerator

        init(state: UInt64) { random = SeededGenerator(seed: state) }

        mutating func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &random) }
    }

    @Test(arguments: [
        "discovery-reads", "notifications", "long-values", "att-errors", "two-peripherals",
        "notifications-peripheral-side",
    ])
    func damagedCapturesImportOrFailWithAReason(_ name: String) throws {
        let original = try CaptureTestSupport.bytes(name)
        for seed in UInt64(0)..<200 {
            var generator = Generator(state: seed)
            var bytes = original
            for _ in 0..<(1 + generator.below(8)) {
                let position = BTSnoopFile.headerLength + generator.below(bytes.count - BTSnoopFile.headerLength)
                switch generator.below(3) {
                case 0: bytes[position] ^= UInt8(1 + generator.below(255))
                case 1: bytes.removeSubrange(position..<min(bytes.count, position + 1 + generator.below(40)))
                default: bytes.insert(UInt8(generator.below(256)), at: position)
                }
            }
            do {
                _ = try CaptureImporter().importCapture(bytes: bytes, name: "damaged")
            } catch .invalidOutput(let error) {
                Issue.record("seed \(seed): the importer wrote an invalid document: \(error)")
            } catch {
                // A clear refusal (no connection left, say) is a fine answer to damage.
            }
        }
    }

    @Test(arguments: [
        "discovery-reads", "notifications", "long-values", "att-errors", "two-peripherals",
        "notifications-peripheral-side",
    ])
    func damagedPacketLoggerTwinsImportOrFailWithAReason(_ name: String) throws {
        let original = try CaptureTestSupport.bytes(name, "pklg")
        for seed in UInt64(0)..<200 {
            var generator = Generator(state: seed)
            var bytes = original
            for _ in 0..<(1 + generator.below(8)) {
                let position = generator.below(bytes.count)
                switch generator.below(3) {
                case 0: bytes[position] ^= UInt8(1 + generator.below(255))
                case 1: bytes.removeSubrange(position..<min(bytes.count, position + 1 + generator.below(40)))
                default: bytes.insert(UInt8(generator.below(256)), at: position)
                }
            }
            do {
                _ = try CaptureImporter().importCapture(bytes: bytes, name: "damaged", format: .packetLogger)
            } catch .invalidOutput(let error) {
                Issue.record("seed \(seed): the importer wrote an invalid document: \(error)")
            } catch {
                // A clear refusal (no connection left, say) is a fine answer to damage.
            }
        }
    }

    @Test func anErrorResponseWithTheReservedCodeZeroIsSkippedWithAWarning() throws {
        var bytes = try CaptureTestSupport.bytes("att-errors")
        // The capture's Error Response to a Read Request: 01 0A handle(2) 80.
        let start = try #require(
            bytes.indices.dropLast(4).first { bytes[$0] == 0x01 && bytes[$0 + 1] == 0x0A && bytes[$0 + 4] == 0x80 })
        bytes[start + 4] = 0x00
        let imported = try CaptureImporter().importCapture(bytes: bytes, name: "reserved-code")
        #expect(imported.warnings.contains { "\($0)".contains("reserved ATT error code 0x00") })
        #expect(!imported.scenarioJSON().contains("\"attError\": 0}"))
        #expect(!imported.scenarioJSON().contains("\"attError\": 128}"))
        #expect(imported.scenarioJSON().contains("\"attError\": 3}"))
    }
}
