/// SplitMix64 (Steele, Lea and Flood 2014): a tiny, seedable generator for deterministic
/// test data. Every seed, including 0, gives a full-period sequence; the state advances
/// by the golden-ratio increment and the output is a 64-bit finalizer mix.
struct SplitMix64: RandomNumberGenerator {
    private(set) var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` pseudo-random bytes.
    mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(count)
        while result.count < count {
            let word = next()
            for shift in stride(from: 0, to: 64, by: 8) where result.count < count {
                result.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return result
    }
}

/// A minimal instant for expiry tests: an offset from an arbitrary origin.
struct TestInstant: InstantProtocol {
    var offset: Duration

    static let zero = TestInstant(offset: .zero)

    func advanced(by duration: Duration) -> TestInstant {
        TestInstant(offset: offset + duration)
    }

    func duration(to other: TestInstant) -> Duration {
        other.offset - offset
    }

    static func < (lhs: TestInstant, rhs: TestInstant) -> Bool {
        lhs.offset < rhs.offset
    }
}
