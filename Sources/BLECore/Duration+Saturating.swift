extension Duration {
    /// `components`, held to `Int64`'s range of seconds instead of trapping: a duration past
    /// what `components` splits reads as `(Int64.max, 0)`, or `(Int64.min, 0)` below zero.
    ///
    /// `Duration` holds about 1.7 × 10²⁰ seconds either way, and `components` traps past the
    /// 9.2 × 10¹⁸ an `Int64` counts, on a value a user may give (`.seconds(1e19)`, or the
    /// negation of `.seconds(Int64.min)`). Every place that splits a duration a user gave
    /// reads this instead.
    @inlinable
    package var saturatingComponents: (seconds: Int64, attoseconds: Int64) {
        guard hasComponents else { return self < .zero ? (Int64.min, 0) : (Int64.max, 0) }
        return components
    }

    /// Whether `components` can split this duration: its whole seconds (rounded toward zero)
    /// fit an `Int64`.
    @inlinable
    package var hasComponents: Bool {
        self > .seconds(Int64.min) - .seconds(1) && self < .seconds(Int64.max) + .seconds(1)
    }
}
