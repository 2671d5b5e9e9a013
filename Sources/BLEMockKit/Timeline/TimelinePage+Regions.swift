extension TimelinePage {
    /// The steps' regions: a band across the page and a box in the step column with the
    /// step's label and outcome; rows outside every step (set-up, shut-down) get a grey one.
    func drawSteps(into page: inout HTMLWriter, rows: [Row], layout: Layout) {
        var start = 0
        while start < rows.count {
            var end = start
            while end + 1 < rows.count, rows[end + 1].step == rows[start].step { end += 1 }
            let top = layout.y[start] - 2
            let bottom = layout.y[end] + rows[end].height + 2
            drawRegion(into: &page, step: rows[start].step, top: top, bottom: bottom, first: start == 0, layout: layout)
            start = end + 1
        }
    }

    private func drawRegion(
        into page: inout HTMLWriter, step position: Int?, top: Int, bottom: Int, first: Bool, layout: Layout
    ) {
        let height = bottom - top
        let kind: String
        var label: String
        var line2: (badge: String, rest: String)
        var tooltip: String
        var mismatches: [String] = []
        if let position {
            let step = steps[position]
            kind = Self.outcomeClass(step.outcome)
            let mark = step.op == "fault" ? "⚡ " : step.op == "inject" ? "⚑ " : ""
            label = "#\(step.index) \(mark)\(step.label)"
            line2 = (Self.outcomeText(step.outcome), step.details.isEmpty ? "" : " · " + step.details)
            mismatches = step.mismatches
            tooltip =
                "step \(step.index): \(step.label) — \(Self.outcomeText(step.outcome)), "
                + "\(ScenarioTrace.milliseconds(step.started))–\(ScenarioTrace.milliseconds(step.ended))"
                + (step.details.isEmpty ? "" : "\n" + step.details)
                + mismatches.map { "\nexpect: " + $0 }.joined()
        } else {
            kind = "none"
            label = steps.isEmpty ? "log" : first ? "set-up" : "after the steps"
            line2 = ("", steps.isEmpty ? "" : first ? "managers powered on, peripheral published" : "shut down")
            tooltip = label
        }
        let band = kind == "ok" ? "ok\((position ?? 0) % 2)" : kind
        page.open("g", ["class": "step"])
        page.element("title", text: tooltip)
        page.shape(
            "rect",
            [
                "class": "band-\(band)", "x": Layout.stepLeft, "y": top, "width": layout.width - Layout.stepLeft - 4,
                "height": height,
            ])
        page.shape(
            "rect",
            [
                "class": "box-\(kind)" + (mismatches.isEmpty ? "" : " box-mismatch"), "x": Layout.stepLeft,
                "y": top, "width": Layout.stepWidth, "height": height, "rx": 3,
            ])
        page.shape("rect", ["class": "bar-\(kind)", "x": Layout.stepLeft, "y": top, "width": 6, "height": height])
        let x = Layout.stepLeft + 12
        let room = Layout.stepWidth - 18
        page.element("text", ["class": "label", "x": x, "y": top + 14], text: Self.fit(label, width: room))
        // The outcome, then the details wrapped over the lines the region has room for, and
        // the first mismatch on the last.
        let lines = max(2, (height - 4) / 13)
        let reserved = mismatches.isEmpty || lines < 3 ? 0 : 1
        let wrapped = Self.wrap(line2.badge + line2.rest, width: room, lines: lines - 1 - reserved)
        for (number, line) in wrapped.enumerated() {
            page.open("text", ["x": x, "y": top + 27 + 13 * number])
            if number == 0 {
                page.element("tspan", ["class": "badge-\(kind)"], text: String(line.prefix(line2.badge.count)))
                page.element("tspan", ["class": "small"], text: String(line.dropFirst(line2.badge.count)))
            } else {
                page.element("tspan", ["class": "small"], text: line)
            }
            page.close("text")
        }
        if !mismatches.isEmpty {
            let y = reserved == 1 ? top + 27 + 13 * wrapped.count : top + 14
            let x = reserved == 1 ? x : Layout.stepLeft + Layout.stepWidth - 70
            let text = reserved == 1 ? Self.fit("expect ✗ " + mismatches[0], width: room) : "expect ✗"
            page.element("text", ["class": "badge-fail", "x": x, "y": y], text: text)
        }
        page.close("g")
    }

    /// Beside each lane with queue activity: a tick per write without response queued, and a
    /// red bar while the transmit queue was full — from a dropped write or an `updateValue`
    /// that returned `false` (or, for a central that was never refused, the write that filled
    /// it: the last queued before), until the ready event (▲).
    func drawQueues(into page: inout HTMLWriter, rows: [Row], lanes: Lanes, layout: Layout) {
        var fullSince = [Int?](repeating: nil, count: lanes.all.count)
        var lastQueued = [Int?](repeating: nil, count: lanes.all.count)
        var active = Set<Int>()
        for row in rows {
            switch row.queue {
            case .queued(let lane), .full(let lane), .ready(let lane): active.insert(lane)
            case nil: break
            }
        }
        for lane in active.sorted() {
            page.shape(
                "rect",
                [
                    "class": "queue-strip", "x": Layout.laneX(lane) - 19, "y": Layout.top, "width": 10,
                    "height": layout.height - Layout.top - 12,
                ])
        }
        func bar(_ lane: Int, from top: Int, to bottom: Int) {
            page.open("g")
            page.element("title", text: "transmit queue full")
            page.shape(
                "rect",
                [
                    "class": "queue-full", "x": Layout.laneX(lane) - 18, "y": top, "width": 8,
                    "height": max(2, bottom - top),
                ])
            page.close("g")
        }
        // Marks go on top of the bars, so they are written after them.
        var marks = HTMLWriter()
        for (index, row) in rows.enumerated() {
            let y = layout.y[index]
            switch row.queue {
            case .queued(let lane):
                lastQueued[lane] = y + 18
                marks.shape(
                    "rect", ["class": "queue-tick", "x": Layout.laneX(lane) - 18, "y": y + 17, "width": 8, "height": 2])
            case .full(let lane):
                if fullSince[lane] == nil { fullSince[lane] = y + 10 }
                let x = Layout.laneX(lane) - 14
                marks.shape("path", ["class": "t-error", "d": "M\(x - 4),\(y + 9) l8,8 m0,-8 l-8,8"])
            case .ready(let lane):
                if let start = fullSince[lane] ?? lastQueued[lane] { bar(lane, from: start, to: y + 13) }
                fullSince[lane] = nil
                lastQueued[lane] = nil
                let x = Layout.laneX(lane) - 14
                marks.shape("path", ["class": "queue-ready", "d": "M\(x - 5),\(y + 19) l5,-9 l5,9 z"])
            case nil:
                break
            }
        }
        for lane in active.sorted() {
            if let start = fullSince[lane] { bar(lane, from: start, to: layout.height - 12) }
        }
        page.raw(marks.text)
    }
}
