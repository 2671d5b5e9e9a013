import Foundation
import Testing

@testable import BLEMockKit

@Suite("Identifier tables: maps and sets by manager identifier", .timeLimit(.minutes(10)))
struct IdentifierTableTests {
    static let identifiers = (0..<64).map { index in
        var generator = SeededGenerator(seed: UInt64(index))
        return generator.uuid()
    }

    @Test("A set of identifiers holds each once, and forgets what is removed")
    func identifierSet() {
        var set = IdentifierSet()
        #expect(set.isEmpty)
        let inserted = Self.identifiers.map { set.insert($0) }
        #expect(inserted.allSatisfy { $0 })
        let again = set.insert(Self.identifiers[3])
        #expect(!again)
        #expect(!set.isEmpty)
        #expect(Self.identifiers.allSatisfy(set.contains))
        let removed = set.remove(Self.identifiers[3])
        let removedAgain = set.remove(Self.identifiers[3])
        #expect(removed && !removedAgain)
        #expect(!set.contains(Self.identifiers[3]))
        #expect(set.contains(Self.identifiers[4]))
        // Identifiers that differ in one word only are told apart.
        let twin = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))
        let other = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1))
        set.insert(twin)
        #expect(!set.contains(other))
    }

    @Test("A map of records reads and changes a record in place by identifier, and nil for one it lacks")
    func identifierMapInPlace() {
        var map = IdentifierMap<[Int]>()
        map[Self.identifiers[0]] = [1]
        map[Self.identifiers[1]] = [2]
        let count = map.inPlace(Self.identifiers[1]) { record in
            record.append(3)
            return record.count
        }
        #expect(count == 2)
        #expect(map[Self.identifiers[1]] == [2, 3])
        let missing = map.inPlace(Self.identifiers[2]) { $0.count }
        #expect(missing == nil)
        #expect(map.values == [[1], [2, 3]])
    }
}
