import BLECore

extension TimelinePage {
    /// The header: title, mode, seed, counts, the verdict and a legend.
    func header(into page: inout HTMLWriter, rows: [Row]) {
        page.open("header")
        page.element("h1", text: title)
        if let subtitle, !subtitle.isEmpty { page.element("p", ["class": "subtitle"], text: subtitle) }
        page.open("ul", ["class": "facts"])
        for (name, value) in facts(rows: rows) {
            page.raw("<li><b>\(HTMLWriter.escape(name))</b> \(HTMLWriter.escape(value))</li>\n")
        }
        page.close("ul")
        if !verdict.isEmpty {
            let failed =
                verdictIsFailure ?? steps.contains { $0.outcome == .unexpectedFailure || !$0.mismatches.isEmpty }
            page.open("div", ["class": failed ? "verdict bad" : "verdict good"])
            for line in verdict { page.element("p", text: line) }
            page.close("div")
        }
        legend(into: &page)
        page.close("header")
    }

    /// The header's facts: mode, seed, steps by outcome, time, ATT PDUs, MTUs, faults.
    func facts(rows: [Row]) -> [(String, String)] {
        var facts: [(String, String)] = []
        if let mode { facts.append(("mode", mode)) }
        facts.append(("seed", seed.map { String($0) } ?? "unknown"))
        if !steps.isEmpty {
            let counts = ScenarioTrace.Outcome.allCases.map { outcome in steps.filter { $0.outcome == outcome }.count }
            var parts = ["\(counts[0]) ok"]
            if counts[1] > 0 { parts.append("\(counts[1]) failed as expected") }
            if counts[2] > 0 { parts.append("\(counts[2]) failed unexpectedly") }
            facts.append(("steps", "\(steps.count): " + parts.joined(separator: ", ")))
        }
        let end = max(log.last.map { $0.time - VirtualClock.Instant.zero } ?? .zero, steps.last?.ended ?? .zero)
        facts.append(("virtual time", ScenarioTrace.milliseconds(end)))
        facts.append(("ATT PDUs", String(log.last?.attPDUCount ?? 0)))
        var mtus: [String] = []
        for entry in log where entry.kind == .connected {
            if let detail = entry.detail, detail.hasPrefix("mtu="), !mtus.contains(String(detail.dropFirst(4))) {
                mtus.append(String(detail.dropFirst(4)))
            }
        }
        if !mtus.isEmpty { facts.append(("ATT_MTU", mtus.joined(separator: ", "))) }
        let faults = steps.filter { $0.op == "fault" }.count
        let injections = steps.filter { $0.op == "inject" }.count
        if faults > 0 { facts.append(("faults", String(faults))) }
        if injections > 0 { facts.append(("injections", String(injections))) }
        facts.append(("errors logged", String(log.filter { $0.error != nil }.count)))
        facts.append(("log entries", String(log.count)))
        return facts
    }

    /// What the colours and marks mean, and how time is drawn.
    func legend(into page: inout HTMLWriter) {
        page.open("ul", ["class": "legend"])
        let swatches: [(String, String)] = [
            ("sw ok", "step ok"), ("sw xfail", "✗ step failed, as its expect said (\"ok\": false, or an error)"),
            ("sw fail", "✗ step FAILED unexpectedly"), ("sw mismatch", "expectation did not hold"),
            ("sw fault", "fault or injection"), ("sw error", "error"), ("sw link", "connected link"),
            ("sw queue", "transmit queue full"),
        ]
        for (swatch, meaning) in swatches {
            page.open("li")
            page.raw("<span class=\"\(swatch)\"></span>")
            page.content(meaning)
            page.close("li")
        }
        page.close("ul")
        page.element(
            "p", ["class": "note"],
            text: "Time runs down in virtual time, not to scale: each log entry has a row; rows at the same instant "
                + "follow one another, the space between rows grows with the time between them (0.4 px per ms) up "
                + "to \(Layout.longestGap) px, and longer stretches are cut (≈) and labelled with their length. "
                + "Arrows are ATT exchanges (request, then the dashed answer), packets one way and lost links (×), "
                + "labelled with the ATT PDUs that crossed. Beside a lane, a red bar marks its transmit queue full: "
                + "from a write without response dropped or an updateValue that returned false, until the manager "
                + "was told it could send again (▲); grey ticks are writes without response queued. "
                + "Hover over anything for the log entry.")
    }

    /// A table of the steps: when each ran, its outcome, what it did and why its expectation failed.
    func stepTable(into page: inout HTMLWriter) {
        page.open("section")
        page.element("h2", text: "Steps")
        page.open("table")
        page.raw("<thead><tr><th>#</th><th>step</th><th>began</th><th>ended</th><th>outcome</th>")
        page.raw("<th>what it did</th></tr></thead>\n<tbody>\n")
        for step in steps {
            let mismatch = step.mismatches.isEmpty ? "" : " mismatch"
            page.open("tr", ["class": Self.outcomeClass(step.outcome) + mismatch, "id": "step-\(step.index)"])
            page.element("td", text: String(step.index))
            page.element("td", ["class": "op"], text: step.label)
            page.element("td", ["class": "time"], text: ScenarioTrace.milliseconds(step.started))
            page.element("td", ["class": "time"], text: ScenarioTrace.milliseconds(step.ended))
            page.element("td", ["class": "outcome"], text: Self.outcomeText(step.outcome))
            page.open("td")
            page.content(step.details)
            for mismatch in step.mismatches { page.element("div", ["class": "why"], text: "expect: " + mismatch) }
            page.close("td")
            page.close("tr")
        }
        page.raw("</tbody>\n")
        page.close("table")
        page.close("section")
        page.element(
            "footer",
            text: "Drawn by BLEMockKit from the bridge's log"
                + (seed.map { "; the same scenario with seed \($0) draws the same page" } ?? "") + ".")
    }

    static func outcomeClass(_ outcome: ScenarioTrace.Outcome) -> String {
        switch outcome {
        case .ok: "ok"
        case .expectedFailure: "xfail"
        case .unexpectedFailure: "fail"
        }
    }

    static func outcomeText(_ outcome: ScenarioTrace.Outcome) -> String {
        switch outcome {
        case .ok: "✓ ok"
        case .expectedFailure: "✗ failed, as expected"
        case .unexpectedFailure: "✗ FAILED"
        }
    }
}
