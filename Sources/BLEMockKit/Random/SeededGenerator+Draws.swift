import BLECore

import Foundation

/// Draw helpers with algorithms of the kit's own, so that results never change with the
/// Swift toolchain (the standard library's `random(in:using:)` algorithms are not a promise).
///
/// Each helper documents exactly how many 64-bit values it consumes; that count is part of
/// the compatibility promise, because it decides every later draw of the same stream.
extension SeededGenerator {
    /// Returns a uniformly distributed integer in `0 ..< bound`, without modulo bias.
    ///
    /// Uses Daniel Lemire's multiply-and-reject method ("Fast Random Integer Generation in
    /// an Interval", ACM TOMACS 2019): the 128-bit product `next() * bound` is computed; its
    /// high word is the result unless its low word falls in the biased zone
    /// `low < (2⁶⁴ − bound) mod bound`, in which case a new value is drawn. Consumes one
    /// value, occasionally more (never more than one on average for any bound).
    ///
    /// - Parameter bound: The exclusive upper bound. Must be greater than zero.
    /// - Returns: A value `v` with `0 <= v < bound`.
    public mutating func uniform(below bound: UInt64) -> UInt64 {
        precondition(bound > 0, "uniform(below:) needs a bound greater than zero")
        var product = next().multipliedFullWidth(by: bound)
        if product.low < bound {
            let threshold = (0 &- bound) % bound
            while product.low < threshold {
                product = next().multipliedFullWidth(by: bound)
            }
        }
        return product.high
    }

    /// Returns a uniformly distributed value in a closed range of `UInt64`.
    ///
    /// The full range `0 ... UInt64.max` consumes exactly one value (``next()`` itself);
    /// other ranges use ``uniform(below:)``.
    ///
    /// - Parameter range: The range to draw from; a single-value range returns its value
    ///   (still consuming one draw, so streams stay aligned).
    public mutating func uint64(in range: ClosedRange<UInt64>) -> UInt64 {
        let span = range.upperBound &- range.lowerBound
        if span == .max { return next() }
        return range.lowerBound &+ uniform(below: span &+ 1)
    }

    /// Returns a uniformly distributed value in a closed range of `Int`.
    ///
    /// Works for any range, including negative bounds and `Int.min ... Int.max` (which
    /// consumes exactly one value). Same draw rule as ``uint64(in:)`` on the offsets.
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        let span =
            UInt64(bitPattern: Int64(range.upperBound))
            &- UInt64(bitPattern: Int64(range.lowerBound))
        let offset = span == .max ? next() : uniform(below: span &+ 1)
        return range.lowerBound &+ Int(truncatingIfNeeded: offset)
    }

    /// Returns a uniformly distributed value in a half-open range of `Int`.
    ///
    /// - Parameter range: The range to draw from. Must not be empty.
    public mutating func int(in range: Range<Int>) -> Int {
        precondition(!range.isEmpty, "int(in:) cannot draw from an empty range \(range)")
        return int(in: range.lowerBound...range.upperBound - 1)
    }

    /// Returns a `Double` uniformly distributed in `[0, 1)`.
    ///
    /// Takes the top 53 bits of one value and scales them by 2⁻⁵³, so every result is a
    /// multiple of 2⁻⁵³ and 1.0 is never returned. Consumes exactly one value.
    public mutating func unitDouble() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// Returns `true` with the given probability.
    ///
    /// Computes `unitDouble() < probability`, so a probability of 0 (or less, or NaN) is
    /// never true and a probability of 1 (or more) is always true. Always consumes exactly
    /// one value, whatever the probability, so changing a probability in a configuration
    /// does not shift the draws that follow.
    public mutating func bool(probability: Double) -> Bool {
        unitDouble() < probability
    }

    /// Returns a uniformly chosen element of a collection, or `nil` if it is empty.
    ///
    /// The element at offset `int(in: 0 ..< count)` is returned. An empty collection
    /// consumes nothing.
    public mutating func element<C: Collection>(from collection: C) -> C.Element? {
        guard !collection.isEmpty else { return nil }
        let offset = int(in: 0..<collection.count)
        return collection[collection.index(collection.startIndex, offsetBy: offset)]
    }

    /// Returns a duration uniformly distributed over a closed range, at nanosecond
    /// granularity; use it for latency jitter.
    ///
    /// The result is `range.lowerBound + .nanoseconds(k)` with `k` drawn by
    /// ``uniform(below:)`` from `0 ... n`, where `n` is the width of the range in whole
    /// nanoseconds (sub-nanosecond remainders are dropped; widths beyond `Int64.max`
    /// nanoseconds, about 292 years, are clamped). The result never leaves the range.
    /// Consumes one value (occasionally more, see ``uniform(below:)``).
    ///
    /// - Parameter range: For example `.milliseconds(5) ... .milliseconds(15)`.
    public mutating func duration(in range: ClosedRange<Duration>) -> Duration {
        let width = range.upperBound - range.lowerBound
        let steps = Self.wholeNanoseconds(in: width)
        return range.lowerBound + .nanoseconds(Int64(bitPattern: uint64(in: 0...steps)))
    }

    /// Returns a deterministic identifier shaped like an RFC 4122 version-4 (random) UUID.
    ///
    /// Two values `a` and `b` are drawn; the sixteen bytes are `a` then `b` in big-endian
    /// order, with the version nibble (byte 6, high half) set to 4 and the variant bits
    /// (byte 8, top two bits) set to `10`. Mocks use it to derive peripheral and central
    /// identifiers from the seed instead of calling `UUID()`.
    public mutating func uuid() -> UUID {
        // The two words, most significant byte first, with the version (4) and variant bits
        // set: byte 6 is bits 15…8 of the high word, byte 8 bits 63…56 of the low one.
        let high = next() & ~0xF000 | 0x4000
        let low = next() & ~(0xC0 << 56) | (0x80 << 56)
        func byte(_ word: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: word >> (56 - 8 * index)) }
        return UUID(
            uuid: (
                byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3), byte(high, 4), byte(high, 5),
                byte(high, 6), byte(high, 7), byte(low, 0), byte(low, 1), byte(low, 2), byte(low, 3), byte(low, 4),
                byte(low, 5), byte(low, 6), byte(low, 7)
            ))
    }

    /// The number of whole nanoseconds in a non-negative duration, clamped to `Int64.max`.
    static func wholeNanoseconds(in duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.saturatingComponents
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return UInt64(Int64.max) }
        let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? UInt64(Int64.max) : UInt64(total)
    }
}
