import BLECore

extension VirtualClock {
    /// A point in a ``VirtualClock``'s time: a duration since the clock's zero.
    ///
    /// Instants of different clocks are comparable as plain offsets; the kit only ever
    /// compares instants of the same clock.
    ///
    /// ## Text format
    ///
    /// ``description`` prints the offset in seconds with up to nine fractional digits
    /// (nanoseconds), trailing zeros removed, and no decimal point for whole seconds:
    /// `"0s"`, `"1s"`, `"1.5s"`, `"0.245s"`, `"0.000001s"`, `"-0.5s"`. Sub-nanosecond parts
    /// are truncated toward zero in the text (not in the value).
    ///
    /// ## Coding
    ///
    /// An instant encodes losslessly as `{"seconds": Int64, "attoseconds": Int64}`, the two
    /// components of its ``offset`` (`Duration.components`).
    ///
    /// ## Range
    ///
    /// Instants saturate at ±`Int64.max` seconds (about 292 billion years) from the clock's
    /// zero, the range those two components hold: time advanced past it (by an effectively
    /// infinite timeout, say) stays there, rather than making an instant that cannot be printed
    /// or encoded.
    public struct Instant: InstantProtocol, Hashable, Codable, Sendable, CustomStringConvertible {
        public typealias Duration = Swift.Duration

        /// The clock's zero instant.
        public static let zero = Instant(offset: .zero)

        /// The latest instant (see "Range" above).
        public static let latest = Instant(offset: latestOffset)

        private static let latestOffset = Duration(
            secondsComponent: .max, attosecondsComponent: 999_999_999_999_999_999)
        private static let earliestOffset = Duration.zero - latestOffset

        /// The time elapsed since the clock's zero.
        public let offset: Duration

        /// Creates the instant `offset` after the clock's zero (kept within the range above).
        public init(offset: Duration) {
            self.offset = min(max(offset, Self.earliestOffset), Self.latestOffset)
        }

        /// The instant `duration` after (or, if negative, before) this one, kept within the range
        /// above.
        public func advanced(by duration: Duration) -> Instant {
            // Compared before adding: a duration near `Duration`'s own limits (`.seconds(1e20)`)
            // would overflow the sum, which traps.
            if duration > .zero, duration >= Self.latestOffset - offset { return .latest }
            if duration < .zero, duration <= Self.earliestOffset - offset {
                return Instant(offset: Self.earliestOffset)
            }
            return Instant(offset: offset + duration)
        }

        /// The duration from this instant to `other` (negative if `other` is earlier).
        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        /// Whether `lhs` comes before `rhs`.
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }

        /// The instant `rhs` after `lhs`.
        public static func + (lhs: Instant, rhs: Duration) -> Instant {
            lhs.advanced(by: rhs)
        }

        /// The instant `rhs` before `lhs`, kept within the range above.
        public static func - (lhs: Instant, rhs: Duration) -> Instant {
            // As `advanced(by:)`, without negating `rhs` (which overflows at `Duration`'s least).
            if rhs > .zero, rhs >= lhs.offset - earliestOffset { return Instant(offset: earliestOffset) }
            if rhs < .zero, rhs <= lhs.offset - latestOffset { return .latest }
            return Instant(offset: lhs.offset - rhs)
        }

        /// The duration from `rhs` to `lhs`.
        public static func - (lhs: Instant, rhs: Instant) -> Duration {
            rhs.duration(to: lhs)
        }

        /// Moves `lhs` forward by `rhs`.
        public static func += (lhs: inout Instant, rhs: Duration) {
            lhs = lhs + rhs
        }

        /// Moves `lhs` back by `rhs`.
        public static func -= (lhs: inout Instant, rhs: Duration) {
            lhs = lhs - rhs
        }

        /// The offset in seconds, for example `"1.5s"`; see the type's documentation.
        public var description: String {
            let isNegative = offset < .zero
            let magnitude = isNegative ? Duration.zero - offset : offset
            let (seconds, attoseconds) = magnitude.saturatingComponents
            let nanoseconds = attoseconds / 1_000_000_000
            var text = String(seconds)
            if nanoseconds > 0 {
                var fraction = String(nanoseconds)
                fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
                while fraction.hasSuffix("0") { fraction.removeLast() }
                text += "." + fraction
            }
            let sign = isNegative && (seconds > 0 || nanoseconds > 0) ? "-" : ""
            return sign + text + "s"
        }

        private enum CodingKeys: String, CodingKey {
            case seconds
            case attoseconds
        }

        /// Decodes an instant from `{"seconds": …, "attoseconds": …}`, kept within the range
        /// above (components past it, which no encoded instant has, saturate as time does).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let seconds = try container.decode(Int64.self, forKey: .seconds)
            let attoseconds = try container.decode(Int64.self, forKey: .attoseconds)
            self.init(offset: Duration(secondsComponent: seconds, attosecondsComponent: attoseconds))
        }

        /// Encodes the instant as `{"seconds": …, "attoseconds": …}`.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            let (seconds, attoseconds) = offset.saturatingComponents
            try container.encode(seconds, forKey: .seconds)
            try container.encode(attoseconds, forKey: .attoseconds)
        }
    }
}
