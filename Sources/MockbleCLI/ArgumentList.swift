/// A small hand-written parser for `mockble`'s arguments: `--name value` options, `--flag` flags
/// and positional words, in any order; after a lone `--`, every word is positional (a file whose
/// name starts with a dash).
struct ArgumentList {
    /// Why the arguments could not be understood; the message says what to type instead.
    struct Problem: Error, Equatable {
        let message: String

        init(message: String) {
            self.message = message
        }

        /// `argument` is no option the command knows: suggests the nearest of `known` (names
        /// without `--`), or lists them all when none is close.
        init(unknownOption argument: String, named name: String, among known: Set<String>) {
            let names = known.sorted()
            if let nearest = Suggestion.nearest(to: name, among: names) {
                message = "unknown option \"\(argument)\"; did you mean `--\(nearest)`?"
            } else if names.isEmpty {
                message = "unknown option \"\(argument)\" (the only option is --help)"
            } else {
                message =
                    "unknown option \"\(argument)\" (known: \(names.map { "--\($0)" }.joined(separator: ", ")))"
            }
        }
    }

    private(set) var positionals: [String] = []
    private var options: [String: String] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments`, accepting only the listed option and flag names (without `--`).
    init(_ arguments: [String], options optionNames: Set<String>, flags flagNames: Set<String>) throws(Problem) {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--", !optionsEnded {
                optionsEnded = true
                continue
            }
            guard !optionsEnded, argument.hasPrefix("--"), argument.count > 2 else {
                if !optionsEnded, let letter = argument.dropFirst().first, argument.hasPrefix("-"), letter.isLetter {
                    // Options are spelled with two dashes: -seed is a mistyped --seed.
                    throw Problem(
                        unknownOption: argument, named: String(argument.dropFirst()),
                        among: optionNames.union(flagNames))
                }
                // An empty word names no file (as a path it would read the current folder).
                guard !argument.isEmpty else {
                    throw Problem(message: "an empty argument names no file (a variable left unset?)")
                }
                positionals.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if flagNames.contains(name) {
                guard inlineValue == nil else { throw Problem(message: "--\(name) takes no value") }
                flags.insert(name)
            } else if optionNames.contains(name) {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < arguments.count else { throw Problem(message: "--\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                guard options[name] == nil else { throw Problem(message: "--\(name) is given twice") }
                options[name] = value
            } else {
                throw Problem(unknownOption: "--\(name)", named: name, among: optionNames.union(flagNames))
            }
        }
    }

    /// The value given for `--name`, if any.
    func option(_ name: String) -> String? { options[name] }

    /// Whether `--name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The one positional word a command takes (a file): `command` names the command, `what`
    /// what it takes, and `example` an argument to show when none was given.
    func onlyPositional(of command: String, naming what: String, example: String) throws(Problem) -> String {
        guard positionals.count == 1 else {
            throw Problem(
                message: positionals.isEmpty
                    ? "name a \(what), e.g. mockble \(command) \(example)"
                    : "\(command) takes one \(what), not \(positionals.count)")
        }
        return positionals[0]
    }

    /// The value of `--name` as a whole number within `range`; `nil` when absent.
    func number(_ name: String, in range: ClosedRange<Int>) throws(Problem) -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw Problem(
                message:
                    "--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
        }
        return value
    }

    /// The value of `--name` as a whole number from 0 to 2^64 − 1 (a seed); `nil` when absent.
    func seed(_ name: String) throws(Problem) -> UInt64? {
        guard let text = options[name] else { return nil }
        guard let value = UInt64(text) else {
            throw Problem(message: "--\(name) must be a whole number from 0 to 2^64-1, not \"\(text)\"")
        }
        return value
    }

    /// The value of `--name`, which must be one of `choices`; `defaultValue` when absent.
    func choice(_ name: String, of choices: [String], default defaultValue: String) throws(Problem) -> String {
        guard let value = options[name] else { return defaultValue }
        guard choices.contains(value) else {
            throw Problem(
                message: "--\(name) must be one of \(choices.joined(separator: ", ")), not \"\(value)\""
                    + Suggestion.clause(for: value, among: choices))
        }
        return value
    }
}
