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

    @Test("A map of records reads a record by position and by identifier without an optional, as its getter does")
    func identifierMapReads() {
        var map = IdentifierMap<[Int]>()
        for (index, identifier) in Self.identifiers.prefix(8).enumerated() { map[identifier] = [index, index * 2] }
        for (index, identifier) in Self.identifiers.prefix(8).enumerated() {
            let position = map.position(of: identifier)!
            #expect(map[at: position] == [index, index * 2])
            #expect(map[existing: identifier] == map[identifier])
            #expect(map[existing: identifier].count == 2)
        }
        map[Self.identifiers[2]]!.append(9)
        #expect(map[existing: Self.identifiers[2]] == [2, 4, 9])
    }

    @Test("A slot table reads a value by slot and by key, also in a freed slot taken again")
    func slotTableReads() {
        var table = SlotTable<Int, String>()
        table.insert("a", for: 10)
        table.insert("b", for: 20)
        #expect(table[at: table.position(of: 10)!] == "a")
        #expect(table[existing: 20] == "b")
        let freed = table.position(of: 10)!
        table.remove(10)
        table.insert("c", for: 30)
        // The freed slot is reused: the new value is read there, under its own key.
        #expect(table.position(of: 30) == freed)
        #expect(table[at: freed] == "c")
        #expect(table[existing: 30] == "c")
        #expect(table[existing: 20] == "b")
        #expect(table[30] == table[existing: 30])
    }

    @Test("A map of records changed through an identifier it lacks stays as it was, and one assigned a record adds it")
    func identifierMapWritesThroughMissingIdentifiers() {
        var map = IdentifierMap<[Int]>()
        map[Self.identifiers[0]] = [1]
        // Optional chaining on a missing identifier changes nothing, and leaves no slot behind.
        map[Self.identifiers[1]]?.append(2)
        #expect(map[Self.identifiers[1]] == nil)
        #expect(!map.contains(Self.identifiers[1]))
        #expect(map.entries.count == 1)
        // Assigning nil to a missing identifier adds nothing either.
        map[Self.identifiers[2]] = nil
        #expect(map.entries.count == 1 && !map.contains(Self.identifiers[2]))
        // Then a record assigned to it takes the next position.
        map[Self.identifiers[1]] = [5]
        #expect(map.position(of: Self.identifiers[1]) == 1)
        #expect(map.values == [[1], [5]])
        map[Self.identifiers[1]]?.append(6)
        #expect(map[existing: Self.identifiers[1]] == [5, 6])
    }

    @Test("A slot table changed through a key it lacks stays as it was; assigning nil to a key removes its value")
    func slotTableWritesThroughMissingKeys() {
        var table = SlotTable<Int, [Int]>()
        table[1] = [1]
        table[2] = [2]
        table[3]?.append(3)
        #expect(table[3] == nil && !table.contains(3))
        #expect(table.values == [[1], [2]])
        // Removing through the subscript frees the slot; a later key takes it.
        let freed = table.position(of: 1)!
        table[1] = nil
        #expect(!table.contains(1) && table[1] == nil)
        table[4]?.append(4)
        #expect(table[4] == nil && !table.contains(4))
        table[5] = [5]
        #expect(table.position(of: 5) == freed)
        table[5]!.append(6)
        #expect(table[existing: 5] == [5, 6])
        #expect(table.values.sorted { $0[0] < $1[0] } == [[2], [5, 6]])
        // A key assigned nil that it never had adds nothing.
        table[9] = nil
        #expect(!table.contains(9))
        table[6] = [6]
        #expect(table.contains(6) && table[existing: 6] == [6])
    }

    @Test("A slot table lists the keys of the values a condition matches, in ascending order, and says if any does")
    func slotTableKeysWhere() {
        var table = SlotTable<Int, String>()
        for (key, value) in [(30, "c"), (10, "a"), (20, "b"), (40, "a")] { table.insert(value, for: key) }
        #expect(table.keys(where: { $0 == "a" }) == [10, 40])
        #expect(table.keys(where: { _ in true }) == [10, 20, 30, 40])
        #expect(table.keys(where: { $0 == "z" }).isEmpty)
        #expect(table.containsValue(where: { $0 == "b" }))
        #expect(!table.containsValue(where: { $0 == "z" }))
        // A removed value is no longer seen, and a freed slot taken again is read under its new key.
        table.remove(10)
        table.insert("a", for: 5)
        #expect(table.keys(where: { $0 == "a" }) == [5, 40])
        table.remove(20)
        #expect(!table.containsValue(where: { $0 == "b" }))
        #expect(SlotTable<Int, String>().keys(where: { _ in true }).isEmpty)
        #expect(!SlotTable<Int, String>().containsValue(where: { _ in true }))
    }

    @Test("An identifier's words are its bytes, first byte most significant")
    func identifierWords() {
        let identifier = UUID(
            uuid: (0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0xF0))
        #expect(identifier.words == (0x0102_0304_0506_0708, 0x090A_0B0C_0D0E_0FF0))
        let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        #expect(zero.words == (0, 0))
        // The words order identifiers as their strings do.
        let sorted = Self.identifiers.sorted { $0.words < $1.words }
        #expect(sorted.map(\.uuidString) == Self.identifiers.map(\.uuidString).sorted())
    }
}
