import Testing

@testable import MockbleCLI

@Suite("ArgumentList", .timeLimit(.minutes(10)))
struct ArgumentListTests {
    @Test func optionsFlagsAndPositionalsParseInAnyOrder() throws {
        let list = try ArgumentList(
            ["a.json", "--format", "json", "--quick", "b.json", "--seed=7"], options: ["format", "seed"],
            flags: ["quick"])
        #expect(list.positionals == ["a.json", "b.json"])
        #expect(list.option("format") == "json")
        #expect(list.option("seed") == "7")
        #expect(list.flag("quick"))
        #expect(!list.flag("other"))
    }

    /// After a lone `--` every word is a file, one whose name starts with a dash too, as in
    /// POSIX utilities; options before it still count, and a second `--` is a file's name.
    @Test func wordsAfterADoubleDashAreFilesEvenWhenTheyStartWithADash() throws {
        let list = try ArgumentList(
            ["--format", "json", "--", "-dash.json", "--quick", "--"], options: ["format"], flags: ["quick"])
        #expect(list.positionals == ["-dash.json", "--quick", "--"])
        #expect(list.option("format") == "json")
        #expect(!list.flag("quick"))
        #expect(try ArgumentList(["--", "a.json"], options: [], flags: []).positionals == ["a.json"])
        #expect(throws: ArgumentList.Problem(unknownOption: "-dash.json", named: "dash.json", among: ["quick"])) {
            try ArgumentList(["-dash.json"], options: [], flags: ["quick"])
        }
    }

    @Test func anEmptyWordIsRefusedAsNamingNoFileWhileAnEmptyOptionValueIsKept() throws {
        #expect(
            throws: ArgumentList.Problem(message: "an empty argument names no file (a variable left unset?)")
        ) {
            try ArgumentList(["a.json", ""], options: [], flags: [])
        }
        let list = try ArgumentList(["a.json", "--out", ""], options: ["out"], flags: [])
        #expect(list.positionals == ["a.json"])
        #expect(list.option("out") == "")
    }

    @Test func anUnknownOptionCloseToAKnownOneSuggestsIt() {
        #expect(throws: ArgumentList.Problem(message: "unknown option \"--fromat\"; did you mean `--format`?")) {
            try ArgumentList(["--fromat", "json"], options: ["format"], flags: ["quick"])
        }
        #expect(throws: ArgumentList.Problem(message: "unknown option \"--quik\"; did you mean `--quick`?")) {
            try ArgumentList(["--quik"], options: ["format"], flags: ["quick"])
        }
    }

    @Test func anUnknownOptionFarFromEveryKnownOneListsThemAll() {
        #expect(throws: ArgumentList.Problem(message: "unknown option \"--verbose\" (known: --format, --quick)")) {
            try ArgumentList(["--verbose"], options: ["format"], flags: ["quick"])
        }
        #expect(throws: ArgumentList.Problem(message: "unknown option \"--verbose\" (the only option is --help)")) {
            try ArgumentList(["--verbose"], options: [], flags: [])
        }
    }

    @Test func anOptionWrittenWithOneDashIsUnknownAndSuggestsTheTwoDashSpelling() {
        #expect(throws: ArgumentList.Problem(message: "unknown option \"-seed\"; did you mean `--seed`?")) {
            try ArgumentList(["x.json", "-seed", "3"], options: ["seed"], flags: [])
        }
    }

    @Test func aLoneDashAndANegativeNumberStayPositional() throws {
        let list = try ArgumentList(["-", "-5"], options: [], flags: [])
        #expect(list.positionals == ["-", "-5"])
    }

    @Test func anOptionWithoutItsValueIsRejected() {
        #expect(throws: ArgumentList.Problem(message: "--format needs a value")) {
            try ArgumentList(["--format"], options: ["format"], flags: [])
        }
    }

    @Test func anOptionGivenTwiceIsRejected() {
        #expect(throws: ArgumentList.Problem(message: "--seed is given twice")) {
            try ArgumentList(["--seed", "1", "--seed", "2"], options: ["seed"], flags: [])
        }
    }

    @Test func aFlagWithAValueIsRejected() {
        #expect(throws: ArgumentList.Problem(message: "--quick takes no value")) {
            try ArgumentList(["--quick=yes"], options: [], flags: ["quick"])
        }
    }

    @Test func aChoiceOutsideItsListIsRejectedAndAbsentMeansTheDefault() throws {
        let list = try ArgumentList(["--format", "xml"], options: ["format"], flags: [])
        #expect(throws: ArgumentList.Problem(message: "--format must be one of text, json, not \"xml\"")) {
            try list.choice("format", of: ["text", "json"], default: "text")
        }
        let empty = try ArgumentList([], options: ["format"], flags: [])
        #expect(try empty.choice("format", of: ["text", "json"], default: "text") == "text")
    }

    @Test func aMistypedChoiceSuggestsTheNearestOne() throws {
        let list = try ArgumentList(["--format", "jsno"], options: ["format"], flags: [])
        #expect(
            throws: ArgumentList.Problem(
                message: "--format must be one of text, json, mermaid, not \"jsno\"; did you mean `json`?")
        ) {
            try list.choice("format", of: ["text", "json", "mermaid"], default: "text")
        }
    }
}
