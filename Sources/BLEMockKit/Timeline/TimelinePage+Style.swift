extension TimelinePage {
    /// The tones' colours: text and lines.
    static let toneColours: [(Row.Tone, String)] = [
        (.plain, "#24292f"), (.muted, "#6e7781"), (.link, "#0969da"), (.error, "#cf222e"), (.fault, "#bc4c00"),
        (.warning, "#9a6700"), (.queue, "#8250df"),
    ]

    /// The page's style sheet.
    static var style: String {
        var css = """
            :root { color-scheme: light; }
            body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
              color: #1f2328; background: #fff; }
            header { padding: 14px 24px 6px; border-bottom: 1px solid #d0d7de; background: #f6f8fa; }
            h1 { margin: 0 0 2px; font-size: 22px; }
            h2 { font-size: 17px; margin: 18px 24px 6px; }
            .subtitle { margin: 0 0 6px; color: #57606a; }
            .facts { list-style: none; padding: 0; margin: 6px 0; display: flex; flex-wrap: wrap; gap: 4px 20px; }
            .facts b { color: #57606a; font-weight: 600; }
            .verdict { margin: 8px 0; padding: 6px 10px; border-radius: 6px; }
            .verdict p { margin: 0; }
            .verdict.good { background: #dafbe1; color: #116329; }
            .verdict.bad { background: #ffebe9; color: #a40e26; font-weight: 600; }
            .legend { list-style: none; padding: 0; margin: 8px 0 4px; display: flex; flex-wrap: wrap;
              gap: 4px 18px; font-size: 13px; }
            .sw { display: inline-block; width: 16px; height: 12px; margin-right: 6px; vertical-align: -1px;
              border-radius: 2px; box-sizing: border-box; }
            .sw.ok { background: #eef6f0; border-left: 4px solid #2da44e; }
            .sw.xfail { background: repeating-linear-gradient(135deg, #fff8c5 0 3px, #d4a72c 3px 5px); }
            .sw.fail { background: #ffebe9; border: 2px solid #cf222e; }
            .sw.mismatch { border: 2px dashed #cf222e; }
            .sw.fault { background: #bc4c00; }
            .sw.error { background: #cf222e; }
            .sw.link { background: #0969da; width: 4px; }
            .sw.queue { background: #ff8182; width: 8px; }
            .note { font-size: 12.5px; color: #57606a; max-width: 1180px; margin: 4px 0 6px; }
            main { overflow-x: auto; padding: 6px 0 6px 6px; }
            svg { display: block; }
            svg text { font: 12px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; white-space: pre; }
            svg .step text { font-size: 11.5px; }
            svg .step .label { font-weight: 700; }
            svg .heading { font-weight: 700; font-size: 13px; }
            svg .small { font-size: 10.5px; fill: #57606a; }
            svg .time { fill: #57606a; font-size: 11px; text-anchor: end; }
            svg .cut { fill: #8c959f; font-size: 10.5px; font-style: italic; text-anchor: end; }
            svg .cutline { stroke: #d0d7de; stroke-dasharray: 2 4; }
            svg .axis { stroke: #d0d7de; }
            svg .lifeline { stroke: #8c959f; stroke-dasharray: 4 4; }
            svg .linked { stroke: #0969da; stroke-width: 3; }
            svg .lane { fill: #fff; stroke: #57606a; }
            svg .band-ok0 { fill: #ffffff; } svg .band-ok1 { fill: #f6f8fa; }
            svg .band-xfail { fill: #fff8c5; fill-opacity: 0.55; } svg .band-fail { fill: #ffebe9; }
            svg .band-none { fill: #f3f4f6; }
            svg .box-ok { fill: #eef6f0; stroke: #aceebb; } svg .box-none { fill: #eaeef2; stroke: #d0d7de; }
            svg .box-xfail { fill: #fff8c5; stroke: #d4a72c; }
            svg .box-fail { fill: #ffebe9; stroke: #cf222e; stroke-width: 2; }
            svg .box-mismatch { stroke: #cf222e; stroke-width: 2; stroke-dasharray: 5 3; }
            svg .bar-ok { fill: #2da44e; } svg .bar-xfail { fill: url(#hatch); } svg .bar-fail { fill: #cf222e; }
            svg .bar-none { fill: #8c959f; }
            svg .badge-ok { fill: #1a7f37; } svg .badge-xfail { fill: #7d4e00; font-weight: 700; }
            svg .badge-fail { fill: #cf222e; font-weight: 700; } svg .badge-none { fill: #57606a; }
            svg .answer { stroke-dasharray: 5 3; }
            svg .dashed { stroke-dasharray: 2 3; }
            svg .queue-full { fill: #ff8182; } svg .queue-tick { fill: #8c959f; }
            svg .queue-ready { fill: #1a7f37; } svg .queue-strip { fill: none; stroke: #eaeef2; }
            table { border-collapse: collapse; margin: 0 24px 12px; font-size: 13px; }
            th, td { text-align: left; padding: 3px 10px; border-bottom: 1px solid #eaeef2; vertical-align: top; }
            th { background: #f6f8fa; }
            td.op, td.time { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
              white-space: nowrap; }
            tr.ok td.outcome { color: #1a7f37; }
            tr.xfail td { background: #fffbe6; } tr.xfail td.outcome { color: #7d4e00; font-weight: 700; }
            tr.fail td { background: #ffebe9; } tr.fail td.outcome { color: #cf222e; font-weight: 700; }
            tr.mismatch td:first-child { box-shadow: inset 4px 0 #cf222e; }
            .why { color: #cf222e; }
            footer { margin: 0 24px 24px; color: #57606a; font-size: 12.5px; }

            """
        for (tone, colour) in toneColours {
            css += "svg .t-\(tone.rawValue) { stroke: \(colour); fill: none; stroke-width: 1.5; }\n"
            css += "svg text.x-\(tone.rawValue) { fill: \(colour); stroke: none; }\n"
            css += "svg .n-\(tone.rawValue) { fill: #ffffff; stroke: \(colour); stroke-opacity: 0.6; }\n"
        }
        css += "svg .n-fault { fill: #fff1e5; } svg .n-error { fill: #ffebe9; } svg .n-queue { fill: #fbefff; }\n"
        return css
    }
}
