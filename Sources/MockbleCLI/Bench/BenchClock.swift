/// Wall-clock measurement for `mockble bench` (the only place the kit reads a real clock: the
/// simulation itself runs on virtual time).
enum BenchClock {
    /// Seconds `body` took on the monotonic clock.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        return (clock.now - start).seconds
    }

    /// Seconds `body` took on the monotonic clock.
    static func seconds(_ body: () async throws -> Void) async rethrows -> Double {
        try await timed(body).seconds
    }

    /// What `body` returned and the seconds it took on the monotonic clock.
    static func timed<Result>(_ body: () async throws -> Result) async rethrows -> (result: Result, seconds: Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try await body()
        return (result, (clock.now - start).seconds)
    }

    /// The median of `samples` (the mean of the middle two for an even count).
    static func median(_ samples: [Double]) -> Double {
        precondition(!samples.isEmpty, "a median needs at least one sample")
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
