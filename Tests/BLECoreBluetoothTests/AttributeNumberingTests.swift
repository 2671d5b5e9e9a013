import Testing

@testable import BLECoreBluetooth

private final class Attribute {}

@Suite("AttributeNumbering", .timeLimit(.minutes(10)))
struct AttributeNumberingTests {
    @Test("Objects are numbered from 1 in the order they are first seen")
    func numbersFollowDiscoveryOrder() {
        var numbering = AttributeNumbering<Attribute>()
        let objects = (0..<4).map { _ in Attribute() }
        #expect(objects.map { numbering.number(for: $0) } == [1, 2, 3, 4])
    }

    @Test("The same object keeps its number and maps back to itself")
    func numbersAreStableBothWays() {
        var numbering = AttributeNumbering<Attribute>()
        let service = Attribute(), characteristic = Attribute()
        let serviceNumber = numbering.number(for: service)!
        let characteristicNumber = numbering.number(for: characteristic)!
        #expect(numbering.number(for: service) == serviceNumber)
        #expect(numbering.existingNumber(for: characteristic) == characteristicNumber)
        #expect(numbering.object(numbered: serviceNumber) === service)
        #expect(numbering.object(numbered: characteristicNumber) === characteristic)
        #expect(numbering.existingNumber(for: Attribute()) == nil)
    }

    @Test("Forgotten objects become stale and their numbers are never reused")
    func forgottenNumbersAreNotReused() {
        var numbering = AttributeNumbering<Attribute>()
        let old = Attribute()
        let oldNumber = numbering.number(for: old)!
        numbering.forget([old])
        #expect(numbering.object(numbered: oldNumber) == nil)
        let replacement = Attribute()
        #expect(numbering.number(for: replacement) == oldNumber + 1)
        numbering.forgetAll()
        #expect(numbering.count == 0)
        #expect(numbering.number(for: Attribute()) == oldNumber + 2)
    }

    @Test("Numbering stops at 65,535 instead of wrapping around")
    func numberingIsBounded() {
        var numbering = AttributeNumbering<Attribute>()
        var kept: [Attribute] = []
        for _ in 0..<Int(UInt16.max) {
            let object = Attribute()
            kept.append(object)
            _ = numbering.number(for: object)
        }
        #expect(numbering.existingNumber(for: kept.last!) == UInt16.max)
        #expect(numbering.nextNumber == nil)
        #expect(numbering.number(for: Attribute()) == nil)
    }
}
