import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ScenarioTrace {
    /// `--format json`: one compact JSON object per step, one per line (with a final newline).
    /// The same scenario and seed give byte-identical text.
    public var json: String {
        records.map { $0.json + "\n" }.joined()
    }

    /// `--format text`: a human timeline, one line per step, then the expectations' verdict.
    ///
    /// Each line shows the step's time, index, op and outcome: `ok`, `xfail` for a step that
    /// failed as its `expect` said (`"ok": false`, or an `error` or `attError`), `FAILED` for
    /// one that failed without such an expectation (see ``outcome(of:in:)``). A legend line follows the verdict when
    /// some step is `xfail`.
    public func text(for scenario: Scenario) -> String {
        var lines = [Self.oneLine("\(name) (\(mode.rawValue) mode, seed \(seed))")]
        let width = max(4, scenario.steps.map { Self.oneLine(Self.label($0.operation)).count }.max() ?? 4)
        for record in records {
            let label = Self.oneLine(scenario.step(indexed: record.step).map { Self.label($0.operation) } ?? record.op)
            let time = Self.milliseconds(record.time)
            let padded = label + String(repeating: " ", count: max(0, width - label.count))
            let marker = outcome(of: record, in: scenario).marker
            let verdict = marker + String(repeating: " ", count: 6 - marker.count)
            let details = Self.details(record)
            lines.append(
                String(repeating: " ", count: max(0, 12 - time.count)) + time + "  #\(record.step)"
                    + String(repeating: " ", count: max(1, 4 - String(record.step).count)) + padded + "  " + verdict
                    + (details.isEmpty ? "" : "  " + details))
        }
        lines += verdict(for: scenario)
        if records.contains(where: { outcome(of: $0, in: scenario) == .expectedFailure }) {
            lines.append(
                #"xfail: the step failed, as its "expect" said ("ok": false, or an error); FAILED: unexpectedly"#)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `text` on one line, each line break a space: one in a name or id (a `\r\n` is one
    /// `Character`, and U+2028 ends a line too) would break the timeline's columns and start a
    /// Mermaid diagram's line of its own.
    static func oneLine(_ text: String) -> String {
        guard text.contains(where: \.isNewline) else { return text }
        return String(text.map { $0.isNewline ? " " : $0 })
    }

    /// The expectations' verdict, as the text timeline ends it.
    func verdict(for scenario: Scenario) -> [String] {
        if failures.isEmpty {
            let count = scenario.steps.filter { $0.expectation != nil }.count
            return [count == 0 ? "no expectations" : "all \(count) expectations held"]
        }
        return ["\(failures.count) expectation\(failures.count == 1 ? "" : "s") failed:"]
            + failures.map { "  " + $0.description }
    }

    /// A time rounded to the millisecond for the timeline, e.g. `1.294s`. A time whose
    /// milliseconds an `Int64` does not count (past about 292 million years, as a run that
    /// waited `Duration.seconds(Int64.max)` reaches) is cut to the millisecond instead.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.saturatingComponents
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (total, carryOverflow) = scaled.addingReportingOverflow(
            (attoseconds + 500_000_000_000_000) / 1_000_000_000_000_000)
        if overflow || carryOverflow {
            let fraction = String(attoseconds.magnitude / 1_000_000_000_000_000)
            return "\(seconds)." + String(repeating: "0", count: 3 - fraction.count) + fraction + "s"
        }
        var milliseconds = total
        let whole = milliseconds / 1000
        milliseconds %= 1000
        let fraction = String(milliseconds)
        return "\(whole)." + String(repeating: "0", count: 3 - fraction.count) + fraction + "s"
    }

    /// The op and what it acts on, e.g. `read loc` or `advance 10s`.
    static func label(_ operation: ScenarioStep.Operation) -> String {
        switch operation {
        case .read(let c), .subscribe(let c), .unsubscribe(let c): "\(operation.name) \(c)"
        case .readOnce(let c): "read \(c) (one request)"
        case .subscribeToIndications(let c): "subscribe \(c) (indications)"
        case .readDescriptor(let c, let d): "readDescriptor \(c) \(d)"
        case .writeDescriptor(let c, let d, _): "writeDescriptor \(c) \(d)"
        case .setMTU(let mtu, let role): "setMTU \(role.rawValue) \(mtu)"
        case .write(let c, _, let withResponse): "write \(c)" + (withResponse ? "" : " (no response)")
        case .writeWithoutResponseBurst(let c, let values): "write \(c) (no response, \(values.count) values)"
        case .notify(let c, _), .indicate(let c, _): "\(operation.name) \(c)"
        case .notifyBurst(let c, let values): "notify \(c) (\(values.count) values)"
        case .readRequest(let c, let offset): "readRequest \(c) @\(offset)"
        case .advance(let by): "advance \(FixtureDuration.string(by))"
        case .advanceTo(let to, let origin): "advance to \(FixtureDuration.string(to)) from \(origin.rawValue)"
        case .setState(let state, let role): "setState \(role.rawValue) \(state)"
        case .powerOn(let role): "powerOn \(role.rawValue)"
        case .fault(let kind, _, _): "fault \(kind.rawValue)"
        case .disconnect(let side): "disconnect by \(side.rawValue)"
        case .inject(let injection): "inject \(injection.target.rawValue)"
        case .setValue(let c, _): "setValue \(c)"
        default: operation.name
        }
    }

    /// The record's fields beyond step, op, ok and time, briefly.
    static func details(_ record: Record) -> String {
        var parts: [String] = []
        if let error = record.error { parts.append("\(error.domain) \(error.code) \(error.name)") }
        if let value = record.value {
            parts.append("value " + (value.isEmpty ? "<empty>" : FixtureBytes.hexString(value)))
        }
        if let received = record.received {
            parts.append(
                received.isEmpty
                    ? "received nothing"
                    : "received " + received.map { FixtureBytes.hexString($0) }.joined(separator: ", "))
        }
        if let stored = record.stored {
            parts.append("stored " + (stored.isEmpty ? "<empty>" : FixtureBytes.hexString(stored)))
        }
        if let state = record.state { parts.append("state \(state)") }
        if let rssi = record.rssi { parts.append("rssi \(rssi)") }
        if case .array(let found)? = record.discovered { parts.append("found \(found.count)") }
        if case .object(let fields)? = record.discovered, case .array(let services)? = fields.first?.value {
            parts.append("\(services.count) service\(services.count == 1 ? "" : "s")")
        }
        if case .object(let fields)? = record.reason, let central = fields.first?.value {
            // A connect whose attempt failed lost no link (its reason has no `peripheral`).
            let what =
                record.op == "connect" && !fields.contains { $0.key == "peripheral" }
                ? "attempt ended" : "central disconnected"
            if case .object(let error) = central, case .string(let name)? = error.last?.value {
                parts.append("\(what): \(name)")
            } else {
                parts.append(what)
            }
        }
        if record.op == "connect", let mtu = record.mtu { parts.append("mtu \(mtu)") }
        if let attPDUs = record.attPDUs { parts.append("\(attPDUs) ATT PDU\(attPDUs == 1 ? "" : "s")") }
        return parts.joined(separator: ", ")
    }
}
