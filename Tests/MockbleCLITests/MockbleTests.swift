import Testing

@testable import MockbleCLI

@Suite("mockble: help, version and dispatch", .timeLimit(.minutes(10)))
struct MockbleTests {
    func run(_ arguments: String...) async -> (CommandStatus, CapturedOutput) {
        let (console, captured) = Console.capturing()
        return (await Mockble.main(arguments: arguments, console: console), captured)
    }

    @Test func helpListsEverySubcommandAndExitsZero() async {
        let (status, output) = await run("--help")
        #expect(status == .success)
        for command in Mockble.subcommands {
            #expect(output.output.contains("  \(command.name)"))
            #expect(output.output.contains(command.summary))
        }
        #expect(output.error.isEmpty)
    }

    @Test func noArgumentsPrintsTheHelp() async {
        let (status, output) = await run()
        #expect(status == .success)
        #expect(output.output == Mockble.help + "\n")
    }

    @Test func versionPrintsTheVersion() async {
        let (status, output) = await run("--version")
        #expect(status == .success)
        #expect(output.output == "mockble \(Mockble.version)\n")
    }

    @Test func everySubcommandAnswersHelpWithItsOwnText() async {
        for command in Mockble.subcommands {
            let (status, output) = await run(command.name, "--help")
            #expect(status == .success)
            #expect(output.output == command.help + "\n")
            #expect(command.help.hasPrefix("Usage: mockble \(command.name)"))
            let (helpStatus, helpOutput) = await run("help", command.name)
            #expect(helpStatus == .success)
            #expect(helpOutput.output == command.help + "\n")
        }
    }

    @Test func anUnknownCommandIsBadInputNamingIt() async {
        let (status, output) = await run("frobnicate")
        #expect(status == .badInput)
        #expect(output.error.contains("\"frobnicate\""))
        #expect(output.output.isEmpty)
    }
}

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

    @Test func anUnknownOptionIsRejectedListingTheKnownOnes() {
        #expect(throws: ArgumentList.Problem(message: "unknown option \"--fromat\" (known: --format, --quick)")) {
            try ArgumentList(["--fromat", "json"], options: ["format"], flags: ["quick"])
        }
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
}
