import Testing

@testable import MockbleCLI

@Suite("Plural: counts and their nouns", .timeLimit(.minutes(10)))
struct PluralTests {
    @Test func oneTakesTheSingularAndEveryOtherCountThePlural() {
        #expect(Plural.count(0, "service") == "0 services")
        #expect(Plural.count(1, "service") == "1 service")
        #expect(Plural.count(2, "service") == "2 services")
        #expect(Plural.count(1, "characteristic") == "1 characteristic")
        #expect(Plural.count(12, "step") == "12 steps")
        #expect(Plural.noun(for: 1, "warning") == "warning")
        #expect(Plural.noun(for: 3, "warning") == "warnings")
    }

    @Test func regularPluralsFollowTheWordsEnding() {
        #expect(Plural.regular("entry") == "entries")
        #expect(Plural.regular("key") == "keys")
        #expect(Plural.regular("match") == "matches")
        #expect(Plural.regular("address") == "addresses")
        #expect(Plural.regular("box") == "boxes")
        #expect(Plural.regular("peripheral") == "peripherals")
    }

    @Test func anIrregularPluralIsGivenExplicitly() {
        #expect(Plural.count(2, "datum", plural: "data") == "2 data")
        #expect(Plural.count(1, "datum", plural: "data") == "1 datum")
    }
}
