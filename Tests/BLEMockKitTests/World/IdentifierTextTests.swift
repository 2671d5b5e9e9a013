import Foundation
import Testing

@testable import BLEMockKit

@Suite("Identifier text", .timeLimit(.minutes(10)))
struct IdentifierTextTests {
    @Test("An identifier's canonical string is its uuidString, for edge values and 1,000 seeded identifiers")
    func canonicalStringMatchesFoundation() {
        var generator = SeededGenerator(seed: 99)
        var identifiers = [
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
            UUID(uuidString: "0123ABCD-4567-89EF-FEDC-BA9876543210")!,
        ]
        for _ in 0..<1_000 {
            let high = generator.next()
            let low = generator.next()
            identifiers.append(
                UUID(
                    uuid: (
                        UInt8(truncatingIfNeeded: high >> 56), UInt8(truncatingIfNeeded: high >> 48),
                        UInt8(truncatingIfNeeded: high >> 40), UInt8(truncatingIfNeeded: high >> 32),
                        UInt8(truncatingIfNeeded: high >> 24), UInt8(truncatingIfNeeded: high >> 16),
                        UInt8(truncatingIfNeeded: high >> 8), UInt8(truncatingIfNeeded: high),
                        UInt8(truncatingIfNeeded: low >> 56), UInt8(truncatingIfNeeded: low >> 48),
                        UInt8(truncatingIfNeeded: low >> 40), UInt8(truncatingIfNeeded: low >> 32),
                        UInt8(truncatingIfNeeded: low >> 24), UInt8(truncatingIfNeeded: low >> 16),
                        UInt8(truncatingIfNeeded: low >> 8), UInt8(truncatingIfNeeded: low)
                    )))
        }
        for identifier in identifiers {
            #expect(identifier.canonicalString == identifier.uuidString)
        }
    }
}
