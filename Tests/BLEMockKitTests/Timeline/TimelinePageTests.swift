import BLECore
import Foundation
import Testing

@testable import BLEMockKit

private typealias S = ScenarioTestSupport

@Suite("Timeline page: a run as one HTML page", .timeLimit(.minutes(10)))
struct TimelinePageTests {
    static func bundled(_ name: String) async throws -> (Scenario, ScenarioTrace) {
        let scenario = try Scenario.load(contentsOf: S.scenariosFolder.appendingPathComponent("\(name).json"))
        return (scenario, await ScenarioRunner(scenario).run())
    }

    /// What a self-contained page must not have: anything fetched from elsewhere.
    static func externalReferences(in html: String) -> [String] {
        let forbidden = ["http://", "https://", "src=", "<link", "<script", "@import", "//cdn", "href="]
        var found = forbidden.filter { html.lowercased().contains($0) }
        // `url(…)` may only point into the page itself (`url(#hatch)`).
        var rest = html[...]
        while let range = rest.range(of: "url(") {
            if !rest[range.upperBound...].hasPrefix("#") { found.append(String(rest[range.lowerBound...].prefix(20))) }
            rest = rest[range.upperBound...]
        }
        return found
    }

    @Test("Every bundled scenario's page is one self-contained document: no URL, no file, no script, no link")
    func selfContained() async throws {
        for name in S.bundledScenarios {
            let (scenario, trace) = try await Self.bundled(name)
            let html = trace.html(for: scenario)
            #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"), "\(name)")
            #expect(html.hasSuffix("</body>\n</html>\n"), "\(name)")
            #expect(Self.externalReferences(in: html).isEmpty, "\(name): \(Self.externalReferences(in: html))")
            #expect(html.contains("<style>") && html.contains("<svg "), "\(name)")
        }
    }

    @Test("Two runs of the same realistic scenario give byte-identical pages")
    func deterministic() async throws {
        let (scenario, first) = try await Self.bundled("faults-realistic")
        let second = await ScenarioRunner(scenario).run()
        #expect(first.html(for: scenario) == second.html(for: scenario))
        #expect(first.log == second.log)
    }

    @Test("The header names the scenario, its mode and its seed, and the page has a lane per manager")
    func headerAndLanes() async throws {
        let (scenario, trace) = try await Self.bundled("faults-realistic")
        let html = trace.html(for: scenario)
        #expect(html.contains("<h1>faults-realistic</h1>"))
        #expect(html.contains("<b>mode</b> realistic"))
        #expect(html.contains("<b>seed</b> 99"))
        #expect(trace.participants.map(\.role) == [.central, .peripheral])
        for participant in trace.participants {
            #expect(html.contains("\(participant.role.rawValue) · \(participant.shortIdentifier)"))
        }
        #expect(html.contains(">Nordic_Blinky</text>"))
        #expect(html.components(separatedBy: "class=\"lifeline\"").count - 1 == 2)
    }

    @Test("Every step appears in the timeline and in the table, with its times")
    func everyStep() async throws {
        let (scenario, trace) = try await Self.bundled("faults-realistic")
        let html = trace.html(for: scenario)
        for record in trace.records {
            #expect(html.contains("<tr class=\"") && html.contains("id=\"step-\(record.step)\""), "step \(record.step)")
            #expect(html.contains(">#\(record.step) "), "step \(record.step)")
            #expect(html.contains("<td class=\"time\">\(ScenarioTrace.milliseconds(record.time))</td>"))
        }
    }

    @Test("A step that failed as expected and one that failed unexpectedly are drawn differently")
    func outcomesAreMarked() async throws {
        let steps = #"""
            [{"op": "scan"}, {"op": "read", "char": "loc", "expect": {"ok": false}}, {"op": "read", "char": "loc"},
             {"op": "connect"}, {"op": "discover"}, {"op": "read", "char": "loc", "expect": {"ok": false}}]
            """#
        let scenario = try S.scenario(S.inline(steps: steps))
        let trace = await ScenarioRunner(scenario).run()
        let outcomes: [ScenarioTrace.Outcome] = [.ok, .expectedFailure, .unexpectedFailure, .ok, .ok, .ok]
        #expect(trace.records.map { trace.outcome(of: $0, in: scenario) } == outcomes)
        let page = trace.timelinePage(for: scenario)
        #expect(page.steps.map(\.outcome) == outcomes)
        #expect(page.steps[5].mismatches == ["expected ok false, got true"])
        let html = page.html
        #expect(html.contains("<tr class=\"xfail\" id=\"step-1\">"))
        #expect(html.contains("<tr class=\"fail\" id=\"step-2\">"))
        #expect(html.contains("<tr class=\"ok mismatch\" id=\"step-5\">"))
        #expect(html.contains("class=\"box-xfail\"") && html.contains("class=\"box-fail\""))
        #expect(html.contains("class=\"bar-xfail\"") && html.contains("class=\"bar-fail\""))
        #expect(html.contains("✗ failed, as expected") && html.contains("✗ FAILED"))
        #expect(html.contains("class=\"box-ok box-mismatch\""))
        #expect(html.contains("<div class=\"verdict bad\">"))
    }

    @Test("A verdict is drawn as a failure when a step failed, or when the page says so; a run of no steps passes")
    func theVerdictIsAFailureOnlyWhenItIsOne() async throws {
        let scenario = try S.scenario(S.inline(steps: "[]"))
        let page = await ScenarioRunner(scenario).run().timelinePage(for: scenario)
        #expect(page.verdict == ["no expectations"])
        #expect(page.html.contains("<div class=\"verdict good\">"))
        var failed = TimelinePage(title: "t", log: [], verdict: ["the watch got 0 of 600 bytes"])
        #expect(failed.html.contains("<div class=\"verdict good\">"))
        failed.verdictIsFailure = true
        #expect(failed.html.contains("<div class=\"verdict bad\">"))
    }

    @Test("An expectation that names an error expects a failure")
    func anExpectedErrorIsAnExpectedFailure() async throws {
        let steps = #"""
            [{"op": "scan"}, {"op": "connect"}, {"op": "discover"},
             {"op": "write", "char": "loc", "value": {"hex": "01"}, "expect": {"attError": 3}},
             {"op": "write", "char": "loc", "value": {"hex": "01"}, "expect": {"error": "writeNotPermitted"}},
             {"op": "write", "char": "loc", "value": {"hex": "01"}, "expect": {"error": null}}]
            """#
        let scenario = try S.scenario(S.inline(steps: steps))
        let trace = await ScenarioRunner(scenario).run()
        let outcomes = trace.records.map { trace.outcome(of: $0, in: scenario) }
        #expect(outcomes == [.ok, .ok, .ok, .expectedFailure, .expectedFailure, .unexpectedFailure])
    }

    @Test("Names, descriptions and ids that look like markup are escaped everywhere")
    func escaping() async throws {
        let json = #"""
            {"name": "<script>alert(1)</script>", "description": "\"quotes\" & <b>tags</b>",
             "peripheral": {"name": "<img onerror=alert(2)>", "services": [{"uuid": "180D", "characteristics": [
               {"id": "<i>loc</i>", "uuid": "2A38", "properties": ["read"], "permissions": ["readable"],
                "value": {"utf8": "<script>"}}]}]},
             "steps": [{"op": "scan"}, {"op": "connect"}, {"op": "discover"}, {"op": "read", "char": "<i>loc</i>"}]}
            """#
        let scenario = try S.scenario(json)
        let trace = await ScenarioRunner(scenario).run()
        #expect(trace.passed)
        let html = trace.html(for: scenario)
        #expect(!html.contains("<script"))
        #expect(!html.contains("<img"))
        #expect(!html.contains("<i>"))
        #expect(!html.contains("<b>tags"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("&quot;quotes&quot; &amp; &lt;b&gt;tags&lt;/b&gt;"))
        #expect(html.contains("&lt;img onerror=alert(2)&gt;"))
        #expect(html.contains("read &lt;i&gt;loc&lt;/i&gt;"))
        #expect(Self.externalReferences(in: html).isEmpty)
    }

    @Test("Escaping covers the five markup characters and control characters")
    func escapeFunction() {
        #expect(HTMLWriter.escape(#"<a href="x">'&'</a>"#) == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        #expect(HTMLWriter.escape("a\u{0}b\u{1B}c\nd\té") == "a\u{FFFD}b\u{FFFD}c\nd\té")
    }
}
