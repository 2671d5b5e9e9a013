extension SeededGenerator {
    /// Returns an independent child stream identified by `name`.
    ///
    /// The child depends only on this generator's ``seed`` and `name`: deriving does not
    /// read or advance this generator's state, so it returns the same child however many
    /// values have already been drawn, and deriving never perturbs this generator's own
    /// sequence. Use one stable name per simulated entity or concern (for example
    /// `"peripheral-1"`, then `"mtu"`); nesting is stable too.
    ///
    /// The child seed is computed with functions that are the same in every process and on
    /// every platform (never Swift's per-process-seeded `Hasher`):
    ///
    /// ```text
    /// h     = FNV-1a-64(UTF-8 bytes of name)      // offset 0xCBF29CE484222325, prime 0x100000001B3
    /// child = S(seed XOR S(h))                    // S(x) = SplitMix64.mix(x &+ 0x9E3779B97F4A7C15)
    /// ```
    ///
    /// and the child is `SeededGenerator(seed: child)`. This derivation is part of the
    /// generator's compatibility promise.
    ///
    /// - Parameter name: A stable name. Names are compared by their UTF-8 bytes, so
    ///   canonically equivalent strings with different encodings give different streams.
    /// - Returns: A new generator at the start of the child stream.
    public func derived(_ name: String) -> SeededGenerator {
        SeededGenerator(seed: Self.derivedSeed(parent: seed, nameHash: Self.fnv1a64(name.utf8)))
    }

    /// Returns an independent child stream identified by a number.
    ///
    /// Equivalent to `derived(String(index))` (the decimal digits of `index`), so
    /// `derived(3)` and `derived("3")` are the same stream. Convenient for numbered
    /// entities and for iterations of a repeated scenario.
    ///
    /// - Parameter index: The child's number.
    /// - Returns: A new generator at the start of the child stream.
    public func derived(_ index: UInt64) -> SeededGenerator {
        SeededGenerator(seed: Self.derivedSeed(parent: seed, nameHash: Self.fnv1a64(decimalDigitsOf: index)))
    }

    /// The derived seed for a parent seed and the FNV-1a hash of a child's name.
    static func derivedSeed(parent: UInt64, nameHash: UInt64) -> UInt64 {
        SplitMix64.scramble(parent ^ SplitMix64.scramble(nameHash))
    }

    /// 64-bit FNV-1a (Fowler, Noll and Vo) of a byte sequence.
    ///
    /// Not a cryptographic hash; chosen because it is tiny, fully specified and stable.
    static func fnv1a64(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// ``fnv1a64(_:)`` of the ASCII decimal digits of `value` (`String(value).utf8`), without
    /// making the string.
    static func fnv1a64(decimalDigitsOf value: UInt64) -> UInt64 {
        // The divisor of the leading digit, then each digit from the most significant.
        var divisor: UInt64 = 1
        while value / divisor >= 10 { divisor &*= 10 }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        var rest = value
        while true {
            let digit = rest / divisor
            rest -= digit &* divisor
            hash ^= 0x30 &+ digit
            hash &*= 0x0000_0100_0000_01B3
            if divisor == 1 { return hash }
            divisor /= 10
        }
    }
}
