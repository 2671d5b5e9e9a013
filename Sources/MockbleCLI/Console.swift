import Foundation

/// Where a `mockble` command writes: standard output for results, standard error for diagnostics.
///
/// The tool uses ``standard``; tests use ``capturing()`` and read back what a command printed.
public struct Console: Sendable {
    private let writeOutput: @Sendable (String) throws -> Void
    private let writeError: @Sendable (String) throws -> Void
    /// Each stream's first failure (shared by copies of this console).
    private let outputFailed = StreamFailure()
    private let errorFailed = StreamFailure()
    /// Whether standard output is a terminal a person watches: commands then show live
    /// progress (on standard error) as well as their result.
    public let isTerminal: Bool
    /// How many columns the terminal the error stream writes to has, if it is one whose width
    /// is known: a line rewritten in place must fit in it, or each rewrite starts a new line.
    public let width: Int?

    /// Creates a console from two line sinks.
    ///
    /// A sink that throws has failed (standard output on a full disk, say): nothing more is
    /// written to it, and ``outputFailure`` or ``errorFailure`` says why.
    public init(
        output: @escaping @Sendable (String) throws -> Void, error: @escaping @Sendable (String) throws -> Void,
        isTerminal: Bool = false, width: Int? = nil
    ) {
        writeOutput = output
        writeError = error
        self.isTerminal = isTerminal
        self.width = width
    }

    /// Writes `text` and a newline to the output stream.
    public func print(_ text: String) { write(text + "\n") }

    /// Writes `text` as it is to the output stream.
    public func write(_ text: String) { outputFailed.write(text, with: writeOutput) }

    /// Writes `text` as it is to the error stream.
    public func writeToError(_ text: String) { errorFailed.write(text, with: writeError) }

    /// Writes `text` and a newline to the error stream.
    public func printError(_ text: String) { writeToError(text + "\n") }

    /// Why writing to the output stream failed, if it has: what was written after it was lost.
    public var outputFailure: String? { outputFailed.reason }

    /// Why writing to the error stream failed, if it has.
    public var errorFailure: String? { errorFailed.reason }

    /// The process's standard output and standard error.
    public static var standard: Console {
        Console(
            output: { try OutputFile.write(Data($0.utf8), to: STDOUT_FILENO) },
            error: { try OutputFile.write(Data($0.utf8), to: STDERR_FILENO) },
            isTerminal: isatty(STDOUT_FILENO) != 0, width: errorTerminalWidth())
    }

    /// The width of the terminal standard error writes to: `COLUMNS` when it is set (it
    /// overrides the terminal's own, as environ(7) says), else what the terminal reports.
    static func errorTerminalWidth() -> Int? {
        if let columns = ProcessInfo.processInfo.environment["COLUMNS"], let width = Int(columns), width > 0 {
            return width
        }
        #if canImport(Glibc) || canImport(Darwin)
            var size = winsize()
            guard isatty(STDERR_FILENO) != 0, ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0
            else { return nil }
            return Int(size.ws_col)
        #else
            return nil
        #endif
    }

    /// A console that keeps everything written to it, for tests; `terminal` says whether it
    /// plays a terminal, `width` how many columns that terminal has.
    public static func capturing(terminal: Bool = false, width: Int? = nil) -> (
        console: Console, captured: CapturedOutput
    ) {
        let captured = CapturedOutput()
        return (
            Console(
                output: { captured.append(output: $0) }, error: { captured.append(error: $0) }, isTerminal: terminal,
                width: width),
            captured
        )
    }
}

/// The first failure of one of a console's streams: once the stream has failed, nothing more is
/// written to it.
// @unchecked Sendable: `first` is only touched with `lock` held.
private final class StreamFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var first: String?

    /// Why the stream failed, if it has.
    var reason: String? { lock.withLock { first } }

    /// Writes `text` with `sink` unless the stream has failed; notes the failure if it throws.
    func write(_ text: String, with sink: @Sendable (String) throws -> Void) {
        guard reason == nil else { return }
        do {
            try sink(text)
        } catch {
            let why = (error as? any LocalizedError)?.errorDescription ?? error.localizedDescription
            lock.withLock { if first == nil { first = why } }
        }
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
