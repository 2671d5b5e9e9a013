extension TimelinePage {
    /// The width of a character of the timeline's monospaced 12 px text, in tenths of a pixel.
    static let characterWidth = 73

    /// `text` cut with `…` to fit `width` pixels of the timeline's text.
    static func fit(_ text: String, width: Int) -> String {
        let room = max(1, width * 10 / characterWidth)
        return text.count <= room ? text : String(text.prefix(room - 1)) + "…"
    }

    /// `text` in at most `lines` lines of `width` pixels, broken at spaces where it can be,
    /// the last cut with `…` if the rest does not fit.
    static func wrap(_ text: String, width: Int, lines: Int) -> [String] {
        let room = max(2, width * 10 / characterWidth)
        var result: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty, result.count < max(1, lines) {
            if rest.count <= room || result.count == max(1, lines) - 1 {
                result.append(fit(String(rest), width: width))
                break
            }
            let window = rest.prefix(room)
            let cut = window.lastIndex(of: " ").map { rest.index(after: $0) } ?? window.endIndex
            result.append(String(rest[..<cut]).trimmingSuffix())
            rest = rest[cut...]
        }
        return result
    }

    /// The timeline: one SVG picture of the lanes, the steps and the rows.
    func drawTimeline(into page: inout HTMLWriter, rows: [Row], lanes: Lanes, layout: Layout) {
        page.open(
            "svg",
            [
                "width": layout.width, "height": layout.height,
                "viewBox": "0 0 \(layout.width) \(layout.height)", "role": "img",
                "aria-label": "timeline of \(title)",
            ])
        page.raw("\n<defs>\n")
        for (tone, colour) in Self.toneColours {
            page.raw(
                "<marker id=\"head-\(tone.rawValue)\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" "
                    + "markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"\(colour)\"/>"
                    + "</marker>\n")
        }
        page.raw(
            "<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                + "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff8c5\"/>"
                + "<rect width=\"3\" height=\"6\" fill=\"#d4a72c\"/></pattern>\n</defs>\n")
        drawSteps(into: &page, rows: rows, layout: layout)
        drawAxis(into: &page, rows: rows, layout: layout)
        drawLanes(into: &page, rows: rows, lanes: lanes, layout: layout)
        drawQueues(into: &page, rows: rows, lanes: lanes, layout: layout)
        for (index, row) in rows.enumerated() {
            drawRow(row, top: layout.y[index], into: &page, laneCount: lanes.all.count)
        }
        page.close("svg")
    }

    /// The time column: each row's time where it changes, and the cut stretches.
    func drawAxis(into page: inout HTMLWriter, rows: [Row], layout: Layout) {
        let x = Layout.axisRight + 4
        page.shape("line", ["class": "axis", "x1": x, "y1": Layout.top - 8, "x2": x, "y2": layout.height - 12])
        var shown: Duration?
        for (index, row) in rows.enumerated() where row.time != shown {
            shown = row.time
            page.element(
                "text", ["class": "time", "x": Layout.axisRight, "y": layout.y[index] + 15],
                text: ScenarioTrace.milliseconds(row.time))
        }
        for cut in layout.cuts {
            let middle = cut.y + cut.height / 2
            page.shape(
                "line", ["class": "cutline", "x1": Layout.stepLeft, "y1": middle, "x2": layout.width - 8, "y2": middle])
            page.shape(
                "path",
                [
                    "class": "t-muted", "d": "M\(x - 6),\(middle - 2) l4,-4 l4,8 l4,-4",
                ])
            page.element(
                "text", ["class": "cut", "x": Layout.axisRight - 6, "y": middle + 4],
                text: "≈ +" + ScenarioTrace.milliseconds(cut.duration))
        }
    }

    /// The lane headings, their lines, and the stretches where a lane has a link up.
    func drawLanes(into page: inout HTMLWriter, rows: [Row], lanes: Lanes, layout: Layout) {
        for (lane, participant) in lanes.all.enumerated() {
            let x = Layout.laneX(lane)
            page.open("g")
            page.element("title", text: "\(participant.role.rawValue) \(participant.identifier.uuidString)")
            page.shape("rect", ["class": "lane", "x": x - 110, "y": 8, "width": 220, "height": 42, "rx": 6])
            let name = participant.name ?? participant.role.rawValue
            page.element(
                "text", ["class": "heading", "x": x, "y": 26, "text-anchor": "middle"],
                text: Self.fit(name, width: 200))
            page.element(
                "text", ["class": "small", "x": x, "y": 42, "text-anchor": "middle"],
                text: "\(participant.role.rawValue) · \(participant.shortIdentifier)")
            page.close("g")
            page.shape("line", ["class": "lifeline", "x1": x, "y1": 50, "x2": x, "y2": layout.height - 8])
        }
        // A lane's line is solid while it has a link: from `connected` to the end of that link.
        var linked = [Int](repeating: 0, count: lanes.all.count)
        var since = [Int?](repeating: nil, count: lanes.all.count)
        func change(_ lane: Int, by delta: Int, at y: Int) {
            let before = linked[lane]
            linked[lane] = max(0, before + delta)
            if before == 0, linked[lane] > 0 { since[lane] = y }
            if before > 0, linked[lane] == 0, let start = since[lane] {
                let x = Layout.laneX(lane)
                page.shape("line", ["class": "linked", "x1": x, "y1": start, "x2": x, "y2": y])
                since[lane] = nil
            }
        }
        for (index, row) in rows.enumerated() {
            guard let entry = row.entry else { continue }
            let kind = log[entry].kind
            switch (kind, row.shape) {
            case (.connected, .exchange(let central, let peripheral)):
                change(central, by: 1, at: layout.y[index] + 36)
                change(peripheral, by: 1, at: layout.y[index] + 36)
            case (.disconnected, .lost(let central, let peripheral)) where log[entry].detail != "attempt cancelled":
                change(central, by: -1, at: layout.y[index] + 18)
                change(peripheral, by: -1, at: layout.y[index] + 18)
            default:
                break
            }
        }
        for lane in lanes.all.indices where linked[lane] > 0 { change(lane, by: -linked[lane], at: layout.height - 8) }
    }

    /// One row: an exchange, a packet, a lost link or a note.
    func drawRow(_ row: Row, top y: Int, into page: inout HTMLWriter, laneCount: Int) {
        let tone = row.tone.rawValue
        page.open("g")
        if !row.tooltip.isEmpty { page.element("title", text: row.tooltip) }
        switch row.shape {
        case .exchange(let from, let to):
            let (x1, x2) = (Layout.laneX(from), Layout.laneX(to))
            let room = abs(x2 - x1) - 16
            arrow(into: &page, from: x1, to: x2, y: y + 16, tone: tone)
            label(into: &page, Self.fit(row.label, width: room), x: (x1 + x2) / 2, y: y + 12, tone: tone)
            arrow(into: &page, from: x2, to: x1, y: y + 34, tone: tone, extra: " answer")
            label(into: &page, Self.fit(row.answer, width: room), x: (x1 + x2) / 2, y: y + 30, tone: tone)
        case .message(let from, let to, let dashed):
            let (x1, x2) = (Layout.laneX(from), Layout.laneX(to))
            arrow(into: &page, from: x1, to: x2, y: y + 18, tone: tone, extra: dashed ? " dashed" : "")
            label(into: &page, Self.fit(row.label, width: abs(x2 - x1) - 16), x: (x1 + x2) / 2, y: y + 13, tone: tone)
        case .lost(let from, let to):
            let (x1, x2) = (Layout.laneX(from), Layout.laneX(to))
            let end = x1 + (x2 - x1) * 3 / 4
            page.shape("line", ["class": "t-\(tone)", "x1": x1, "y1": y + 18, "x2": end, "y2": y + 18])
            page.shape("path", ["class": "t-\(tone)", "d": "M\(end - 5),\(y + 13) l10,10 m0,-10 l-10,10"])
            label(into: &page, Self.fit(row.label, width: abs(end - x1) - 16), x: (x1 + end) / 2, y: y + 13, tone: tone)
        case .note(let lane):
            let room = (lane == laneCount - 1 ? Layout.rightMargin : Layout.laneSpacing) - 40
            let text = Self.fit(row.label, width: room - 12)
            let width = text.count * Self.characterWidth / 10 + 14
            let x = Layout.laneX(lane) + 10
            page.shape(
                "rect", ["class": "n-\(tone)", "x": x, "y": y + 4, "width": width, "height": 19, "rx": 4])
            page.element("text", ["class": "x-\(tone)", "x": x + 7, "y": y + 18], text: text)
        case .empty:
            break
        }
        page.close("g")
    }

    func arrow(into page: inout HTMLWriter, from x1: Int, to x2: Int, y: Int, tone: String, extra: String = "") {
        let inset = x2 > x1 ? 2 : -2
        page.shape(
            "line",
            [
                "class": "t-\(tone)\(extra)", "x1": x1 + inset, "y1": y, "x2": x2 - inset, "y2": y,
                "marker-end": "url(#head-\(tone))",
            ])
    }

    func label(into page: inout HTMLWriter, _ text: String, x: Int, y: Int, tone: String) {
        guard !text.isEmpty else { return }
        page.element("text", ["class": "x-\(tone)", "x": x, "y": y, "text-anchor": "middle"], text: text)
    }
}

extension String {
    /// The string without trailing spaces.
    func trimmingSuffix() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
