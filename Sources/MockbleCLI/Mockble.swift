/// The `mockble` command-line tool as a library, so tests can run it without a process.
public enum Mockble {
    /// The tool's version.
    public static let version = "0.1.0-dev"

    /// Every subcommand, in the order `mockble --help` lists them.
    public static let subcommands: [Subcommand] = [
        .run, .validate, .fixtures, .import, .bench,
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
            Exit status: 0 success, 1 a check failed, 2 bad input.
            """
    }

    /// Runs the tool with `arguments` (without the program name) and returns its exit status.
    public static func main(arguments: [String], console: Console) async -> CommandStatus {
        guard let first = arguments.first else {
            console.print(help)
            return .success
        }
        switch first {
        case "-h", "--help", "help":
            if first == "help", arguments.count > 1, let command = subcommand(named: arguments[1]) {
                console.print(command.help)
            } else {
                console.print(help)
            }
            return .success
        case "--version":
            console.print("mockble \(version)")
            return .success
        default:
            guard let command = subcommand(named: first) else {
                console.printError("mockble: unknown command or option \"\(first)\". Run mockble --help for usage.")
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
}
