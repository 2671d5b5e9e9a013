import Testing

@testable import MockbleCLI

@Suite("Suggestion: did you mean", .timeLimit(.minutes(10)))
struct SuggestionTests {
    static let commands = ["run", "validate", "fixtures", "import", "bench"]

    @Test func eachInsertionDeletionReplacementOrSwapIsOneEdit() {
        #expect(Suggestion.editDistance("run", "run") == 0)
        #expect(Suggestion.editDistance("rnu", "run") == 1)
        #expect(Suggestion.editDistance("runn", "run") == 1)
        #expect(Suggestion.editDistance("rn", "run") == 1)
        #expect(Suggestion.editDistance("ran", "run") == 1)
        #expect(Suggestion.editDistance("", "run") == 3)
        #expect(Suggestion.editDistance("run", "") == 3)
        #expect(Suggestion.editDistance("kitten", "sitting") == 3)
        #expect(Suggestion.editDistance("ca", "abc") == 3)
    }

    @Test func aWordAFewEditsFromACommandSuggestsIt() {
        #expect(Suggestion.nearest(to: "rnu", among: Self.commands) == "run")
        #expect(Suggestion.nearest(to: "Validate", among: Self.commands) == "validate")
        #expect(Suggestion.nearest(to: "fixturs", among: Self.commands) == "fixtures")
        #expect(Suggestion.nearest(to: "benhc", among: Self.commands) == "bench")
    }

    @Test func theStartOfExactlyOneWordSuggestsIt() {
        #expect(Suggestion.nearest(to: "val", among: Self.commands) == "validate")
        #expect(Suggestion.nearest(to: "i", among: Self.commands) == nil)
        #expect(Suggestion.nearest(to: "fo", among: ["format", "force"]) == nil)
    }

    @Test func aWordFarFromEveryCandidateSuggestsNothing() {
        #expect(Suggestion.nearest(to: "frobnicate", among: Self.commands) == nil)
        #expect(Suggestion.nearest(to: "test", among: Self.commands) == nil)
        #expect(Suggestion.nearest(to: "x", among: Self.commands) == nil)
        #expect(Suggestion.nearest(to: "run", among: []) == nil)
        #expect(Suggestion.clause(for: "frobnicate", among: Self.commands) == "")
    }

    @Test func theClosestCandidateWinsAndTiesGoToTheFirstListed() {
        #expect(Suggestion.nearest(to: "seed", among: ["speed", "seed"]) == "seed")
        #expect(Suggestion.nearest(to: "mod", among: ["mode", "mood"]) == "mode")
        #expect(Suggestion.clause(for: "jsno", among: ["text", "json"]) == "; did you mean `json`?")
    }
}
