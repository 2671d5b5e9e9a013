import Foundation

/// Where a `mockble` command writes: standard output for results, standard error for diagnostics.
///
/// The tool uses ``standard``; tests use ``capturing()`` and read back what a command printed.
public struct Console: Sendable {
    private let writeOutput: @Sendable (String) -> Void
    private let writeError: @Sendable (String) -> Void
    /// Whether standard output is a terminal a person watches: commands then show live
    /// progress (on standard error) as well as their result.
    public let isTerminal: Bool

    /// Creates a console from two line sinks.
    public init(
        output: @escaping @Sendable (String) -> Void, error: @escaping @Sendable (String) -> Void,
        isTerminal: Bool = false
    ) {
        writeOutput = output
        writeError = error
        self.isTerminal = isTerminal
    }

    /// Writes `text` and a newline to the output stream.
    public func print(_ text: String) { writeOutput(text + "\n") }

    /// Writes `text` as it is to the output stream.
    public func write(_ text: String) { writeOutput(text) }

    /// Writes `text` as it is to the error stream.
    public func writeToError(_ text: String) { writeError(text) }

    /// Writes `text` and a newline to the error stream.
    public func printError(_ text: String) { writeError(text + "\n") }

    /// The process's standard output and standard error.
    public static var standard: Console {
        Console(
            output: { FileHandle.standardOutput.write(Data($0.utf8)) },
            error: { FileHandle.standardError.write(Data($0.utf8)) }, isTerminal: isatty(STDOUT_FILENO) != 0)
    }

    /// A console that keeps everything written to it, for tests; `terminal` says whether it
    /// plays a terminal.
    public static func capturing(terminal: Bool = false) -> (console: Console, captured: CapturedOutput) {
        let captured = CapturedOutput()
        return (
            Console(
                output: { captured.append(output: $0) }, error: { captured.append(error: $0) }, isTerminal: terminal),
            captured
        )
    }
}

/// Text a ``Console/capturing()`` console received.
// @unchecked Sendable: both strings are only touched with `lock` held.
public final class CapturedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var outputText = ""
    private var errorText = ""

    init() {}

    func append(output text: String) { lock.withLock { outputText += text } }
    func append(error text: String) { lock.withLock { errorText += text } }

    /// Everything written to standard output so far.
    public var output: String { lock.withLock { outputText } }
    /// Everything written to standard error so far.
    public var error: String { lock.withLock { errorText } }
}
