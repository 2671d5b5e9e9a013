/// A small, fast, seeded pseudo-random number generator whose output sequence is a
/// compatibility promise.
///
/// Every random decision the kit makes (latency jitter, packet loss, advertisement timing,
/// identifiers) draws from a `SeededGenerator`, so the same seed and the same test steps
/// always produce the same trace, on every platform and toolchain.
///
/// ## Algorithm
///
/// The core is **xoshiro256\*\*** by David Blackman and Sebastiano Vigna
/// ("Scrambled Linear Pseudorandom Number Generators", 2018; reference C code at
/// <https://prng.di.unimi.it/xoshiro256starstar.c>): 256 bits of state, period 2²⁵⁶ − 1,
/// 64-bit outputs.
///
/// The four state words are filled from the 64-bit seed with **SplitMix64** (Steele, Lea and
/// Flood, the generator behind Java's `SplittableRandom`), as the xoshiro authors recommend.
/// SplitMix64's output function is a bijection, so at most one of the four words can be zero
/// and the forbidden all-zero state cannot occur: every seed, including 0, is good.
///
/// ## Stability
///
/// For a given seed, the sequence of ``next()`` values, the derivation scheme of
/// ``derived(_:)-(String)`` and the helpers in `SeededGenerator+Draws.swift` are part of the
/// public contract: recorded traces and golden tests depend on them, and they are pinned by
/// golden-value tests. They never use `Hasher` (seeded per process) or the standard
/// library's `random(in:using:)` algorithms (not promised across Swift versions).
///
/// ## Child streams
///
/// Give each simulated entity its own stream with ``derived(_:)-(String)``: the child depends
/// only on this generator's ``seed`` and the name, never on how many values have been drawn,
/// so adding a peripheral or an extra draw in one place never perturbs another entity's
/// draws.
///
/// ```swift
/// var root = SeededGenerator(seed: 42)
/// var mtu = root.derived("peripheral-1").derived("mtu")
/// let jitter = mtu.duration(in: .milliseconds(5) ... .milliseconds(15))
/// ```
///
/// Print ``seed`` in failure messages so a failing run can be reproduced.
public struct SeededGenerator: RandomNumberGenerator, Sendable, Hashable {
    /// The seed this generator was created from.
    ///
    /// For a derived stream this is the derived seed, so `SeededGenerator(seed: child.seed)`
    /// reproduces `child`'s sequence from its start. Include it in failure messages.
    public let seed: UInt64

    /// The xoshiro256** state; never all zero.
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// Creates a generator whose sequence is fully determined by `seed`.
    ///
    /// Every `UInt64`, including 0 and `UInt64.max`, is a valid seed.
    ///
    /// - Parameter seed: The seed. The state is expanded from it with SplitMix64.
    public init(seed: UInt64) {
        self.seed = seed
        var expander = SplitMix64(state: seed)
        s0 = expander.next()
        s1 = expander.next()
        s2 = expander.next()
        s3 = expander.next()
    }

    /// Returns the next 64 uniformly distributed bits and advances the state.
    ///
    /// This is xoshiro256**: `rotl(s1 * 5, 7) * 9` scrambles the output, then the
    /// linear engine steps with shifts of 17 and a rotation of 45.
    public mutating func next() -> UInt64 {
        let result = rotateLeft(s1 &* 5, by: 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotateLeft(s3, by: 45)
        return result
    }

    /// Creates a generator with an explicit xoshiro256** state, for tests of the core.
    ///
    /// - Precondition: The state words are not all zero.
    init(seed: UInt64, state: (UInt64, UInt64, UInt64, UInt64)) {
        precondition(
            state.0 | state.1 | state.2 | state.3 != 0,
            "xoshiro256** state must not be all zero")
        self.seed = seed
        (s0, s1, s2, s3) = state
    }

    /// The current xoshiro256** state, for tests.
    var state: (UInt64, UInt64, UInt64, UInt64) { (s0, s1, s2, s3) }
}

@inline(__always)
private func rotateLeft(_ value: UInt64, by amount: UInt64) -> UInt64 {
    (value << amount) | (value >> (64 - amount))
}
