/// SplitMix64 (Steele, Lea and Flood, "Fast Splittable Pseudorandom Number Generators",
/// OOPSLA 2014), the generator behind Java's `SplittableRandom`.
///
/// The kit does not draw from it directly: it expands a 64-bit seed into the 256-bit
/// xoshiro256** state of ``SeededGenerator`` and mixes seeds when deriving child streams.
/// Each step adds the golden-ratio increment `0x9E37_79B9_7F4A_7C15` to the state and
/// returns ``mix(_:)`` of the result.
struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    /// The Weyl-sequence increment: 2⁶⁴ divided by the golden ratio, made odd.
    static let increment: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// The current state (the last value of the Weyl sequence).
    private(set) var state: UInt64

    /// Creates a generator starting from `state`.
    init(state: UInt64) {
        self.state = state
    }

    /// Advances the state and returns its mixed value.
    mutating func next() -> UInt64 {
        state &+= Self.increment
        return Self.mix(state)
    }

    /// The SplitMix64 output function (a variant of MurmurHash3's 64-bit finaliser).
    ///
    /// It is a bijection on `UInt64`, so distinct inputs give distinct outputs.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The first output of a SplitMix64 generator started at `value`:
    /// `mix(value &+ increment)`. Used as a one-shot hash of a 64-bit word.
    static func scramble(_ value: UInt64) -> UInt64 {
        mix(value &+ increment)
    }
}
