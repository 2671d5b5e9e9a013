import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ScenarioTrace {
    /// `--format mermaid`: the run as a Mermaid sequence diagram between the central and
    /// the peripheral, one exchange per step, with times and failures.
    public func mermaid(for scenario: Scenario) -> String {
        var lines = [
            "sequenceDiagram",
            "    participant C as Central",
            "    participant P as " + Self.escape(scenario.peripheral.name ?? "Peripheral"),
        ]
        for record in records {
            guard let step = scenario.step(indexed: record.step) else { continue }
            lines += Self.exchange(step.operation, record).map { "    " + $0 }
        }
        if !failures.isEmpty {
            lines.append("    Note over C,P: " + Self.escape("\(failures.count) expectation(s) failed"))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The arrows and notes of one step.
    static func exchange(_ operation: ScenarioStep.Operation, _ record: Record) -> [String] {
        let time = FixtureDuration.string(record.time)
        let result = record.error.map { "\($0.name) (\($0.domain) \($0.code))" }
        let answer: (String) -> String = { success in
            result.map { "P--xC: " + escape($0) } ?? "P-->>C: " + escape(success)
        }
        let request = "C->>P: " + escape("\(label(operation)) at \(time)")
        switch operation {
        case .connect:
            return [request, answer(record.mtu.map { "connected, ATT_MTU \($0)" } ?? "connected")]
        case .discover:
            return [request, answer(details(record))]
        case .read, .readOnce, .readRequest, .readDescriptor:
            return [request, answer(record.value.map { $0.isEmpty ? "empty" : FixtureBytes.hexString($0) } ?? "")]
        case .writeDescriptor(_, _, let value):
            let sent = "C->>P: " + escape("\(label(operation)) \(FixtureBytes.hexString(value)) at \(time)")
            return [sent, answer("written")]
        case .write(_, let value, let withResponse):
            let sent =
                "C" + (withResponse ? "->>" : "-)") + "P: "
                + escape(
                    "\(label(operation)) \(FixtureBytes.hexString(value)) at \(time)")
            return withResponse || result != nil ? [sent, answer("written")] : [sent]
        case .writeWithoutResponseBurst(_, let values):
            let written = values.map { FixtureBytes.hexString($0) }.joined(separator: ", ")
            let sent = "C-)P: " + escape("\(label(operation)) \(written) at \(time)")
            return result != nil ? [sent, answer("written")] : [sent]
        case .notifyBurst(_, let values):
            let sent = values.map { FixtureBytes.hexString($0) }.joined(separator: ", ")
            let arrow = "P-)C: " + escape("\(label(operation)) \(sent) at \(time)")
            guard let result else {
                return [arrow]
                    + (record.received?.isEmpty ?? true ? ["Note over C: " + escape("nothing received")] : [])
            }
            return ["Note over P: " + escape("\(label(operation)) failed: \(result)")]
        case .subscribe, .subscribeToIndications, .unsubscribe:
            return [request, answer("CCCD written")]
        case .notify(_, let value), .indicate(_, let value):
            let arrow = "P-)C: " + escape("\(label(operation)) \(FixtureBytes.hexString(value)) at \(time)")
            guard let result else {
                return [arrow]
                    + (record.received?.isEmpty ?? true ? ["Note over C: " + escape("nothing received")] : [])
            }
            return ["Note over P: " + escape("\(label(operation)) failed: \(result)")]
        case .disconnect(let side):
            // (A disconnect that failed, of a link that was not up, crossed nothing.)
            if let result {
                return ["Note over \(side == .central ? "C" : "P"): " + escape("disconnect failed: \(result)")]
            }
            let arrow = side == .central ? "C-xP: " : "P-xC: "
            return [arrow + escape("disconnect at \(time)")]
        case .scan, .readRSSI, .stopScan, .powerOn(.central), .setState(_, .central):
            return [
                "Note over C: "
                    + escape("\(label(operation)) at \(time): \(details(record).isEmpty ? "done" : details(record))")
            ]
        case .setValue(_, let value):
            let text = "\(label(operation)) \(value.isEmpty ? "empty" : FixtureBytes.hexString(value)) at \(time)"
            return ["Note over P: " + escape(result.map { "\(text) failed: \($0)" } ?? text)]
        case .setMTU(_, let role):
            let side = role == .central ? "C" : "P"
            return ["Note over \(side): " + escape("\(label(operation)) at \(time)" + (result.map { ": \($0)" } ?? ""))]
        case .powerOn(.peripheral), .setState(_, .peripheral):
            return ["Note over P: " + escape("\(label(operation)) at \(time): \(details(record))")]
        case .advance, .advanceTo, .inject, .fault:
            let extra = details(record)
            return ["Note over C,P: " + escape("\(label(operation)) at \(time)" + (extra.isEmpty ? "" : ": " + extra))]
        }
    }

    /// Text safe in a Mermaid message: no line breaks, and `;` and `#` (which Mermaid reads
    /// as syntax) replaced.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in oneLine(text) {
            switch character {
            case ";": escaped += ","
            case "#": escaped += "no. "
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
