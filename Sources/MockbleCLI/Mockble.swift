/// The `mockble` command-line tool as a library, so tests can run it without a process.
public enum Mockble {
    /// The tool's version.
    public static let version = "0.1.0-dev"

    /// Every subcommand, in the order `mockble --help` lists them.
    public static let subcommands: [Subcommand] = [
        .run, .explore, .validate, .fixtures, .import, .bench,
    ]

    /// The text `mockble --help` prints.
    public static var help: String {
        let width = subcommands.map(\.name.count).max() ?? 0
        let lines = subcommands.map { command in
            "  " + command.name + String(repeating: " ", count: width - command.name.count + 2) + command.summary
        }
        return """
            mockble \(version): runs BLEMockKit scenarios against simulated Bluetooth LE peripherals.

            Usage: mockble COMMAND [ARGUMENTS] [--help]
                   mockble [--help | --version]

            Commands:
            \(lines.joined(separator: "\n"))

            Run mockble COMMAND --help for a command's arguments.
            Exit status: 0 success, 1 a check failed, 2 bad input (no command, an unknown
            command or option, a missing or invalid file) or output that cannot be written.
            """
    }

    /// Runs the tool with `arguments` (without the program name) and returns its exit status.
    ///
    /// Without arguments it prints ``help`` to standard output, as `--help` does, and returns
    /// ``CommandStatus/badInput``: no command was given. When the console's output stream
    /// failed (a full disk, a closed descriptor), it says so on the error stream and returns
    /// ``CommandStatus/badInput`` whatever the command returned: its output was lost.
    public static func main(arguments: [String], console: Console) async -> CommandStatus {
        let status = await perform(arguments, console)
        guard let failure = console.outputFailure else { return status }
        console.printError("mockble: cannot write standard output: \(failure)")
        return .badInput
    }

    private static func perform(_ arguments: [String], _ console: Console) async -> CommandStatus {
        guard let first = arguments.first else {
            console.print(help)
            return .badInput
        }
        switch first {
        case "-h", "--help", "help":
            guard first == "help", arguments.count > 1 else {
                console.print(help)
                return .success
            }
            guard let command = subcommand(named: arguments[1]) else {
                console.printError(unknownCommandMessage(arguments[1]))
                return .badInput
            }
            console.print(command.help)
            return .success
        case "--version":
            console.print("mockble \(version)")
            return .success
        default:
            guard let command = subcommand(named: first) else {
                console.printError(unknownCommandMessage(first))
                return .badInput
            }
            let rest = Array(arguments.dropFirst())
            if rest.contains("--help") || rest.contains("-h") {
                console.print(command.help)
                return .success
            }
            return await command.perform(rest, console)
        }
    }

    static func subcommand(named name: String) -> Subcommand? {
        subcommands.first { $0.name == name }
    }

    /// What `mockble WORD` says when `WORD` is neither a command nor an option: the nearest
    /// command or option when one is close, else the commands.
    static func unknownCommandMessage(_ word: String) -> String {
        let usage = " Run mockble --help for usage."
        if word.hasPrefix("-") {
            let name = String(word.drop { $0 == "-" })
            let suggestion = Suggestion.nearest(to: name, among: ["help", "version"]).map {
                "; did you mean `--\($0)`?"
            }
            return "mockble: unknown option \"\(word)\"" + (suggestion ?? "; mockble takes a command first.") + usage
        }
        let names = subcommands.map(\.name)
        let suggestion = Suggestion.nearest(to: word, among: names).map { "; did you mean `\($0)`?" }
        return "mockble: unknown command \"\(word)\""
            + (suggestion ?? "; the commands are \(names.joined(separator: ", ")).") + usage
    }
}
