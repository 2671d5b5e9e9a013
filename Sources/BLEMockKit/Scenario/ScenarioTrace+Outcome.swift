extension ScenarioTrace {
    /// How a step ended, measured against its `expect`: the text timeline and the HTML page
    /// mark the three differently.
    public enum Outcome: String, Sendable, Hashable, CaseIterable {
        /// The step succeeded.
        case ok
        /// The step failed, and its `expect` said it would: `"ok": false`, or the `error` or
        /// `attError` it failed with (matching or not: a wrong error is a failed expectation).
        case expectedFailure
        /// The step failed without an `expect` saying it would.
        case unexpectedFailure

        /// The timeline's marker, six columns wide: `ok`, `xfail` or `FAILED`.
        public var marker: String {
            switch self {
            case .ok: "ok"
            case .expectedFailure: "xfail"
            case .unexpectedFailure: "FAILED"
            }
        }
    }

    /// How `record`'s step ended: ``Outcome/ok`` when it succeeded; when it failed,
    /// ``Outcome/expectedFailure`` if the step's `expect` in `scenario` says it fails
    /// (`"ok": false`, or an `error` or `attError`), else ``Outcome/unexpectedFailure``. (Whether the rest of the expectation held is
    /// ``failures``' business: a step can fail as expected with the wrong error.)
    public func outcome(of record: Record, in scenario: Scenario) -> Outcome {
        guard !record.ok else { return .ok }
        let step = scenario.step(indexed: record.step)
        return step?.expectation?.expectsFailure == true ? .expectedFailure : .unexpectedFailure
    }
}

extension ScenarioExpectation {
    /// Whether the expectation says the step fails: `"ok": false`, or an `error` or
    /// `attError` that only a failed step has.
    var expectsFailure: Bool {
        fields.contains { member in
            switch member.key {
            case "ok": member.value.value == .bool(false)
            case "error", "attError": member.value.value != .null
            default: false
            }
        }
    }
}
