/// One `mockble` subcommand: its name, its help, and what it does.
public struct Subcommand: Sendable {
    /// The word that selects it, e.g. `run`.
    public let name: String
    /// One line for `mockble --help`.
    public let summary: String
    /// The full text `mockble NAME --help` prints.
    public let help: String
    /// Runs the subcommand with the arguments after its name.
    public let perform: @Sendable (_ arguments: [String], _ console: Console) async -> CommandStatus

    /// Creates a subcommand.
    public init(
        name: String, summary: String, help: String,
        perform: @escaping @Sendable (_ arguments: [String], _ console: Console) async -> CommandStatus
    ) {
        self.name = name
        self.summary = summary
        self.help = help
        self.perform = perform
    }
}
