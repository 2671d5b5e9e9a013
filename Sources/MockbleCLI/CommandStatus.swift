/// How a `mockble` command ended; the raw value is the process exit status.
public enum CommandStatus: Int32, Sendable, Hashable {
    /// The command did its job (for `run`: every `expect` held).
    case success = 0
    /// The command ran but its check failed (for `run`: an `expect` did not hold).
    case failure = 1
    /// The input was bad (the usage status): no command, an unknown command or option, a
    /// missing, unreadable or invalid file, or a file of the wrong kind.
    case badInput = 2
}
