/// One figure `mockble bench` prints: a median over repeated runs, with the target it is held
/// against.
public struct BenchFigure: Sendable, Equatable {
    /// What a figure is held against.
    public enum Target: Sendable, Equatable {
        /// The median must be at most this value.
        case atMost(Double)
        /// The median must be at least this value.
        case atLeast(Double)
        /// The median must equal this value exactly (a count, e.g. of distinct traces).
        case exactly(Double)
        /// The median must lie within `fraction` of this value either way (a simulated figure
        /// held to a published one).
        case within(Double, fraction: Double)
        /// Reported for reference only; nothing is required of it.
        case reference
    }

    /// The figure's name, e.g. `fast.workflow`.
    public let name: String
    /// The median over the repetitions.
    public let median: Double
    /// The unit of ``median``, e.g. `µs` or `ops/s`.
    public let unit: String
    /// What the median is held against.
    public let target: Target
    /// How many repetitions the median was taken over.
    public let repetitions: Int

    /// Creates a figure.
    public init(name: String, median: Double, unit: String, target: Target, repetitions: Int) {
        self.name = name
        self.median = median
        self.unit = unit
        self.target = target
        self.repetitions = repetitions
    }

    /// Whether the median meets the target (always `true` for a reference figure).
    public var meets: Bool {
        switch target {
        case .atMost(let limit): median <= limit
        case .atLeast(let floor): median >= floor
        case .exactly(let value): median == value
        case .within(let value, let fraction): abs(median - value) <= abs(value) * fraction
        case .reference: true
        }
    }

    /// The comparison the target makes and the value it compares with; `nil` for a
    /// reference figure.
    private var comparison: (symbol: String, value: Double)? {
        switch target {
        case .atMost(let limit): ("<=", limit)
        case .atLeast(let floor): (">=", floor)
        case .exactly(let value): ("=", value)
        case .within(let value, let fraction): ("±\(BenchFigure.format(fraction * 100))%", value)
        case .reference: nil
        }
    }

    /// The target as printed, e.g. `<= 50 µs`, or `-` for a reference figure.
    public var targetDescription: String {
        comparison.map { "\($0.symbol) \(BenchFigure.format($0.value)) \(unit(agreeingWith: $0.value))" } ?? "-"
    }

    /// The singulars of the units that count things, for a value of exactly one (`= 1 trace`).
    private static let countedNouns = ["actor call", "byte", "peripheral", "trace"]

    /// ``unit`` as printed after `value`: the singular of a counted unit for exactly one.
    private func unit(agreeingWith value: Double) -> String {
        guard value == 1, let noun = Self.countedNouns.first(where: { Plural.regular($0) == unit }) else {
            return unit
        }
        return noun
    }

    /// The target for JSON: the comparison and a plain number, e.g. `<= 50`; `nil` for a
    /// reference figure.
    public var targetExpression: String? {
        comparison.map { "\($0.symbol) \(BenchFigure.jsonNumber($0.value))" }
    }

    /// The figure as one line of `--format text`.
    public var textLine: String {
        let verdict =
            switch target {
            case .reference: "reference"
            default: meets ? "meets" : "MISSES"
            }
        let value = BenchFigure.format(median) + " " + unit(agreeingWith: median)
        return pad(name, 34) + pad(value, 22) + pad(targetDescription, 22) + verdict
    }

    /// The figure as one JSON object of `--format json`: `name`, `median`, `unit`, `target`
    /// (e.g. `"<= 50"`, in the figure's unit; `null` for a reference figure), `meets` (and
    /// `repetitions`).
    public var jsonLine: String {
        let target = targetExpression.map { "\"\($0)\"" } ?? "null"
        return "{\"name\":\"\(name)\",\"median\":\(BenchFigure.jsonNumber(median)),\"unit\":\"\(unit)\","
            + "\"target\":\(target),\"meets\":\(meets),\"repetitions\":\(repetitions)}"
    }

    /// A number for people: whole numbers without decimals, others with at most three; no
    /// exponent; thousands grouped by `,`.
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        let decimals =
            value == value.rounded() || abs(value) >= 100 ? 0 : (abs(value) >= 10 ? 1 : (abs(value) >= 1 ? 2 : 3))
        let scaled = (abs(value) * pow10(decimals)).rounded()
        var whole = String(UInt64(scaled / pow10(decimals)))
        var grouped = ""
        while whole.count > 3 {
            grouped = "," + whole.suffix(3) + grouped
            whole.removeLast(3)
        }
        var text = (value < 0 ? "-" : "") + whole + grouped
        if decimals > 0 {
            let fraction = UInt64(scaled) % UInt64(pow10(decimals))
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: decimals - digits.count) + digits
        }
        return text
    }

    /// A JSON number: integers without a fraction, others with up to six significant decimals.
    static func jsonNumber(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let scaled = (value * 1_000_000).rounded() / 1_000_000
        return "\(scaled)"
    }

    private static func pow10(_ exponent: Int) -> Double {
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
