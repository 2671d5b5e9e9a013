import Testing

@testable import BLECapture

/// Damaged copies of the bundled captures, made by a seeded generator: the importer must
/// never trap, and must never write a document the fixture format rejects — it imports what
/// it can trust, or says why it cannot.
@Suite("Importing damaged captures")
struct CaptureMutationTests {
    /// SplitMix64, for reproducible damage.
    struct Generator {
        var state: UInt64

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
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
}
