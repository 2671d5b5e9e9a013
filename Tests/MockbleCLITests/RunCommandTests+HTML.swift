import BLEMockKit
import Foundation
import Testing

@testable import MockbleCLI

extension RunCommandTests {
    @Test("run --format html prints one self-contained page with the seed and exits zero when every expect holds")
    func htmlFormat() async throws {
        let file = Self.scenarios.appendingPathComponent("faults-realistic.json").path
        let (status, output) = await run("run", file, "--format", "html")
        #expect(status == .success)
        #expect(output.error.isEmpty)
        #expect(output.output.hasPrefix("<!DOCTYPE html>\n"))
        #expect(output.output.hasSuffix("</html>\n"))
        #expect(output.output.contains("<b>seed</b> 99"))
        #expect(!output.output.contains("http://") && !output.output.contains("https://"))
        let (_, again) = await run("run", file, "--format=html")
        #expect(again.output == output.output)
        let (_, reseeded) = await run("run", file, "--format", "html", "--seed", "5")
        #expect(reseeded.output.contains("<b>seed</b> 5"))
    }

    @Test("run --format html still writes the page when an expectation fails, and exits one naming the step")
    func htmlFormatWithAFailedExpectation() async throws {
        let url = try temporaryFile(
            "failing.json",
            #"{"peripheral": {"services": []}, "steps": [{"op": "scan"}, {"op": "readRSSI", "expect": {"ok": true}}]}"#)
        let (status, output) = await run("run", url.path, "--format", "html")
        #expect(status == .failure)
        #expect(output.output.contains("<tr class=\"fail mismatch\" id=\"step-1\">"))
        #expect(output.error == "mockble run: \(url.path): step 1 (readRSSI, line 1): expected ok true, got false\n")
    }

    @Test("run --out writes the trace to a file instead of standard output, in any format")
    func outWritesAFile() async throws {
        let file = Self.scenarios.appendingPathComponent("nordic-uart.json").path
        let target = try temporaryFile("page.html", "old contents")
        let (status, output) = await run("run", file, "--format", "html", "--out", target.path)
        #expect(status == .success)
        #expect(output.output.isEmpty && output.error.isEmpty)
        let written = try String(contentsOf: target, encoding: .utf8)
        #expect(written.hasPrefix("<!DOCTYPE html>\n") && written.contains("<h1>nordic-uart</h1>"))
        let json = target.deletingLastPathComponent().appendingPathComponent("trace.jsonl")
        let (jsonStatus, _) = await run("run", file, "--format", "json", "--out", json.path)
        #expect(jsonStatus == .success)
        let (_, printed) = await run("run", file, "--format", "json")
        #expect(try String(contentsOf: json, encoding: .utf8) == printed.output)
    }

    @Test("run --out into a folder that does not exist is bad input and says which path")
    func outIntoAMissingFolder() async {
        let file = Self.scenarios.appendingPathComponent("nordic-uart.json").path
        let (status, output) = await run("run", file, "--format", "html", "--out", "/nonexistent/folder/page.html")
        #expect(status == .badInput)
        #expect(output.error.hasPrefix("mockble run: cannot write /nonexistent/folder/page.html"))
        #expect(output.output.isEmpty)
    }
}
