import BLECore

extension ScenarioTrace {
    /// `--format html`: the run as one self-contained HTML page (see ``TimelinePage``) — a
    /// timeline with a lane for the central and the peripheral, each step marked ok, failed
    /// as expected or failed unexpectedly, and every exchange, packet, fault and error the
    /// bridge logged. The same scenario and seed give the same bytes.
    ///
    /// ```swift
    /// let trace = await ScenarioRunner(scenario).run()
    /// let page = trace.html(for: scenario)
    /// ```
    public func html(for scenario: Scenario) -> String {
        timelinePage(for: scenario).html
    }

    /// The page ``html(for:)`` prints, to change before printing (a title, say).
    public func timelinePage(for scenario: Scenario) -> TimelinePage {
        var previous = Duration.zero
        let steps = records.map { record in
            let step = scenario.step(indexed: record.step)
            let label = step.map { Self.label($0.operation) } ?? record.op
            let started = record.started ?? previous
            previous = record.time
            var details = Self.details(record)
            if case .inject(let injection)? = step?.operation { details = Self.describe(injection) }
            return TimelinePage.Step(
                index: record.step, label: label, op: record.op, started: started, ended: record.time,
                outcome: outcome(of: record, in: scenario), details: details,
                mismatches: failures.filter { $0.step == record.step }.flatMap(\.mismatches),
                logRange: record.logRange)
        }
        return TimelinePage(
            title: name, subtitle: scenario.description, mode: mode.rawValue, seed: seed,
            participants: participants, steps: steps, log: log, attributeNames: Self.attributeNames(of: scenario),
            verdict: verdict(for: scenario))
    }

    /// The profile's characteristic `id`s by UUID, where one characteristic has the UUID.
    static func attributeNames(of scenario: Scenario) -> [BluetoothUUID: String] {
        let characteristics = scenario.peripheral.services.flatMap(\.characteristics)
        var names: [BluetoothUUID: String] = [:]
        for characteristic in characteristics {
            guard let id = characteristic.id, characteristics.filter({ $0.uuid == characteristic.uuid }).count == 1
            else { continue }
            names[characteristic.uuid] = id
        }
        return names
    }

    /// What an `inject` step installs, e.g. `the next read of loc fails: insufficientAuthentication (att 5)`.
    static func describe(_ injection: ScenarioStep.Injection) -> String {
        let times = injection.times == 1 ? "" : " \(injection.times)"
        let target = injection.target.rawValue + (injection.times == 1 ? "" : "s")
        let of = injection.characteristic.map { " of \($0.name)" } ?? ""
        let how: String =
            switch injection.failure {
            case .att(let code): "fail\(injection.times == 1 ? "s" : ""): \(code.name) (att \(code.rawValue))"
            case .coreBluetooth(let code):
                "fail\(injection.times == 1 ? "s" : ""): \(code.description) (cb \(code.rawValue))"
            case .l2cap(let code):
                "fail\(injection.times == 1 ? "s" : ""): \(code) (l2cap \(code.rawValue))"
            case .neverAnswers: "never answer\(injection.times == 1 ? "s" : "")"
            }
        return "the next\(times) \(target)\(of) \(how)"
    }
}
