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

    @Test func noArgumentsPrintsTheHelpWhereHelpDoesAndExitsWithTheUsageStatus() async {
        let (status, output) = await run()
        let (_, help) = await run("--help")
        #expect(status == .badInput)
        #expect(status.rawValue == 2)
        #expect(output.output == Mockble.help + "\n")
        #expect(output.output == help.output)
        #expect(output.error.isEmpty)
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

    @Test func anUnknownCommandIsBadInputListingTheCommandsWhenNoneIsClose() async {
        let (status, output) = await run("frobnicate")
        #expect(status == .badInput)
        #expect(
            output.error
                == "mockble: unknown command \"frobnicate\"; the commands are run, explore, validate, fixtures, import, "
                + "bench. Run mockble --help for usage.\n")
        #expect(output.output.isEmpty)
    }

    @Test(
        "A mistyped command suggests the nearest one and exits with the usage status",
        arguments: [
            ("rnu", "run"), ("rn", "run"), ("RUN", "run"), ("validte", "validate"), ("valdiate", "validate"),
            ("fixture", "fixtures"), ("fix", "fixtures"), ("imprt", "import"), ("bnech", "bench"),
        ])
    func aMistypedCommandSuggestsTheNearestOne(typed: String, meant: String) async {
        let (status, output) = await run(typed, "Fixtures/scenarios/nordic-uart.json")
        #expect(status == .badInput)
        #expect(
            output.error
                == "mockble: unknown command \"\(typed)\"; did you mean `\(meant)`? Run mockble --help for usage.\n")
        #expect(output.output.isEmpty)
    }

    @Test func aMistypedTopLevelOptionSuggestsTheNearestOne() async {
        let (status, output) = await run("--verison")
        #expect(status == .badInput)
        #expect(
            output.error
                == "mockble: unknown option \"--verison\"; did you mean `--version`? Run mockble --help for usage.\n"
        )
        let (other, otherOutput) = await run("-x")
        #expect(other == .badInput)
        #expect(
            otherOutput.error
                == "mockble: unknown option \"-x\"; mockble takes a command first. Run mockble --help for usage.\n")
    }

    @Test func helpForAMistypedCommandSuggestsTheNearestOne() async {
        let (status, output) = await run("help", "bech")
        #expect(status == .badInput)
        #expect(
            output.error == "mockble: unknown command \"bech\"; did you mean `bench`? Run mockble --help for usage.\n")
        #expect(output.output.isEmpty)
    }

    @Test func aMistypedOptionOfASubcommandSuggestsItsNearestOption() async {
        let cases: [([String], String)] = [
            (
                ["run", "x.json", "--fromat", "json"],
                "mockble run: unknown option \"--fromat\"; did you mean `--format`?"
            ),
            (["run", "x.json", "--sed=4"], "mockble run: unknown option \"--sed\"; did you mean `--seed`?"),
            (["run", "x.json", "-mode", "fast"], "mockble run: unknown option \"-mode\"; did you mean `--mode`?"),
            (["bench", "--qiuck"], "mockble bench: unknown option \"--qiuck\"; did you mean `--quick`?"),
            (["fixtures", "--dri", "x"], "mockble fixtures: unknown option \"--dri\"; did you mean `--dir`?"),
            (
                ["run", "x.json", "--verbose"],
                "mockble run: unknown option \"--verbose\" (known: --format, --mode, --out, --seed)"
            ),
            (
                ["validate", "--strict", "x.json"],
                "mockble validate: unknown option \"--strict\" (the only option is --help)"
            ),
            (["validate", "x.json", ""], "mockble validate: an empty argument names no file (a variable left unset?)"),
            (["explore", ""], "mockble explore: an empty argument names no file (a variable left unset?)"),
            (["import", ""], "mockble import: an empty argument names no file (a variable left unset?)"),
        ]
        for (arguments, message) in cases {
            let (console, captured) = Console.capturing()
            let status = await Mockble.main(arguments: arguments, console: console)
            #expect(status == .badInput, "\(arguments)")
            #expect(captured.error == message + "\n", "\(arguments)")
            #expect(captured.output.isEmpty, "\(arguments)")
        }
    }
}
