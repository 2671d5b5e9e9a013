import BLECore

/// The durations of fixture and scenario files: strings of a non-negative number and a
/// unit, `ns`, `us`, `ms` or `s` — `"100ms"`, `"1.5s"`, `"7.5ms"`, `"0s"`.
///
/// The number is decimal digits with an optional fraction (`"0.5s"`, not `".5s"` or
/// `"5.s"`); no sign, spaces or exponent. A fraction may have as many digits as the unit
/// allows down to the attosecond (9 for `ns`, 18 for `s`), so every value converts to a
/// `Duration` exactly. Shared by peripheral profiles (`advertisingInterval`) and scenario
/// steps (`for`, `timeout`, `by`, `connectionInterval`).
public enum FixtureDuration {
    /// The units, with attoseconds per unit.
    public static let units: [(name: String, attoseconds: Int64)] = [
        ("ns", 1_000_000_000), ("us", 1_000_000_000_000), ("ms", 1_000_000_000_000_000),
        ("s", 1_000_000_000_000_000_000),
    ]

    /// Why a duration string is malformed.
    public enum Problem: Error, Hashable, Sendable {
        /// The string is empty.
        case empty
        /// The value is negative.
        case negative
        /// No unit follows the number.
        case missingUnit
        /// The unit is not one of ``FixtureDuration/units``.
        case unknownUnit(String)
        /// The number is not digits with an optional fraction.
        case malformedNumber
        /// The fraction is finer than an attosecond in this unit.
        case tooPrecise
        /// The value does not fit a `Duration` of whole seconds up to 10^15.
        case tooLarge
    }

    /// Parses a duration string.
    ///
    /// - Returns: the duration, or the problem with the string.
    public static func parse(text: String) -> Result<Duration, Problem> {
        guard !text.isEmpty else { return .failure(.empty) }
        if text.hasPrefix("-") { return .failure(.negative) }
        let numberEnd = text.firstIndex { !($0.isASCII && ($0.isNumber || $0 == ".")) } ?? text.endIndex
        let number = text[..<numberEnd]
        let unitName = String(text[numberEnd...])
        guard !unitName.isEmpty else { return .failure(number.isEmpty ? .malformedNumber : .missingUnit) }
        guard let unit = units.first(where: { $0.name == unitName }) else {
            return .failure(number.isEmpty ? .malformedNumber : .unknownUnit(unitName))
        }
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty }) else {
            return .failure(.malformedNumber)
        }
        guard parts[0].count <= 15, let whole = Int64(parts[0]) else { return .failure(.tooLarge) }
        let unitsPerSecond = 1_000_000_000_000_000_000 / unit.attoseconds
        var attoseconds = (whole % unitsPerSecond) * unit.attoseconds
        if parts.count == 2 {
            let fraction = parts[1]
            let resolution = String(unit.attoseconds).count - 1
            guard fraction.count <= resolution, let digits = Int64(fraction) else { return .failure(.tooPrecise) }
            var scale: Int64 = 1
            for _ in 0..<fraction.count { scale *= 10 }
            attoseconds += digits * (unit.attoseconds / scale)
        }
        return .success(Duration(secondsComponent: whole / unitsPerSecond, attosecondsComponent: attoseconds))
    }

    /// Reads a duration node: a string as described above.
    ///
    /// - Throws: ``FixtureError/Kind/badDuration(_:)`` for a malformed string,
    ///   ``FixtureError/Kind/wrongType(expected:)`` for anything but a string.
    public static func parse(_ node: FixtureJSON) throws(FixtureError) -> Duration {
        guard let text = node.string else {
            throw FixtureError.wrongType(node, expected: "a duration string", example: "\"100ms\"")
        }
        switch parse(text: text) {
        case .success(let duration):
            return duration
        case .failure(let problem):
            let (what, fix) = explain(problem)
            throw FixtureError(
                .badDuration(text), at: node, message: "\"\(text)\" is not a duration: \(what)", fix: fix)
        }
    }

    /// The longest wait a scenario field may ask for: an hour of virtual time (a step's `for`,
    /// `timeout` and `by`, a pairing's `after`, a planned fault's `at` and `for`). Simulated
    /// time costs wall time while anything repeats (a scan hears every advertisement), so the
    /// bound keeps every accepted file's run short; a longer wait is several steps.
    public static let maximumScenarioWait = Duration.seconds(3_600)

    /// Reads a duration node for the scenario field `field`, refusing one longer than
    /// ``maximumScenarioWait``.
    ///
    /// - Throws: what ``parse(_:)`` throws, or ``FixtureError/Kind/valueOutOfRange`` naming
    ///   `field`.
    public static func parseWait(_ node: FixtureJSON, field: String) throws(FixtureError) -> Duration {
        let duration = try parse(node)
        guard duration <= maximumScenarioWait else {
            throw FixtureError.outOfRange(
                node, what: field, value: string(duration), range: "0s…\(string(maximumScenarioWait))",
                hint: "at most an hour of virtual time: split a longer wait into several steps")
        }
        return duration
    }

    static func explain(_ problem: Problem) -> (what: String, fix: String) {
        let example = "write a number and a unit (ns, us, ms or s), e.g. \"100ms\" or \"1.5s\""
        switch problem {
        case .empty: return ("it is empty", example)
        case .negative: return ("durations cannot be negative", "use zero or a positive value, e.g. \"0s\"")
        case .missingUnit: return ("it has no unit", "add one of ns, us, ms or s, e.g. \"100ms\"")
        case .unknownUnit(let unit): return ("unknown unit \"\(unit)\"", "use one of ns, us, ms or s")
        case .malformedNumber: return ("the number is malformed", example)
        case .tooPrecise: return ("the fraction is finer than an attosecond", "use fewer decimal places")
        case .tooLarge: return ("it is too large", "use at most 15 digits before the decimal point")
        }
    }

    /// A duration in its shortest exact spelling in seconds, e.g. `"0.245s"`, `"10s"` —
    /// the trace's `time` format, and a value ``parse(text:)`` reads back. A negative duration
    /// (never a trace time) gets a leading minus sign, e.g. `"-0.001s"`. One past the `Int64`
    /// seconds `Duration.components` counts (about 292 billion years either way, only ever a
    /// value a check refuses, such as `.seconds(1e19)`) is written in floating point, e.g.
    /// `"1e+19s"`, and is not read back.
    public static func string(_ duration: Duration) -> String {
        guard duration.hasComponents else { return "\(duration / .seconds(1))s" }
        // `components` of a negative duration has negative seconds and attoseconds.
        if duration < .zero { return "-" + string(.zero - duration) }
        let (seconds, attoseconds) = duration.components
        guard attoseconds != 0 else { return "\(seconds)s" }
        var fraction = String(attoseconds)
        fraction = String(repeating: "0", count: 18 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(seconds).\(fraction)s"
    }
}
