import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Scenario expectations and trace formats", .timeLimit(.minutes(10)))
struct ScenarioExpectationTests {
    typealias S = ScenarioTestSupport

    func failures(_ steps: String) async throws -> [String] {
        try await S.run(S.inline(steps: steps)).failures.map(\.description)
    }

    @Test func matchingExpectationsPass() async throws {
        let result = try await failures(
            """
            [\(S.connected),
             {"op": "read", "char": "loc", "expect": {"ok": true, "value": "01", "attPDUs": 2, "error": null}},
             {"op": "read", "char": "ctl", "expect": {"ok": false, "attError": 2, "error": "readNotPermitted"}},
             {"op": "write", "char": "loc", "value": {"hex": "00"}, "expect": {"error": {"domain": "att", "code": 3}}},
             {"op": "subscribe", "char": "hrm"},
             {"op": "notify", "char": "hrm", "value": {"hex": "aBcD"}, "expect": {"received": ["AbCd"]}}]
            """)
        #expect(result.isEmpty)
    }

    @Test func aMismatchNamesTheStepTheLineTheFieldAndBothValues() async throws {
        let result = try await failures(
            """
            [\(S.connected),
             {"op": "read", "char": "loc", "expect": {"value": "02", "mtu": 23}}]
            """)
        #expect(result == [#"step 3 (read, line 11): expected value "02", got "01"; expected mtu 23, got 517"#])
    }

    @Test func anExpectedFieldTheRecordLacksIsReportedAsNothing() async throws {
        let result = try await failures(#"[{"op": "scan", "expect": {"attError": 3, "value": null}}]"#)
        #expect(result == ["step 0 (scan, line 10): expected attError 3, got nothing"])
    }

    @Test func objectsMatchByTheirExpectedFieldsAndArraysElementByElement() async throws {
        let result = try await failures(
            """
            [\(S.connected), {"op": "read", "char": "ctl", "expect": {"error": {"code": 3}}},
             {"op": "subscribe", "char": "hrm"},
             {"op": "notify", "char": "hrm", "value": {"hex": "01"}, "expect": {"received": ["01", "02"]}},
             {"op": "read", "char": "ctl", "expect": {"error": "writeNotPermitted", "ok": true}}]
            """)
        #expect(
            result == [
                #"step 3 (read, line 10): expected error {"code":3}, got {"domain":"att","code":2,"name":"readNotPermitted"}"#,
                #"step 5 (notify, line 12): expected received ["01","02"], got ["01"]"#,
                #"step 6 (read, line 13): expected error "writeNotPermitted", got {"domain":"att","code":2,"name":"readNotPermitted"}; expected ok true, got false"#,
            ])
    }

    /// A UUID matches in every spelling the format allows: any case, 16-bit or 32-bit, or the
    /// 128-bit form on the Bluetooth base; a value's hex is still compared as bytes.
    @Test func expectedUUIDsMatchInAnySpellingOfTheSameUUID() async throws {
        let spellings = #"""
            [{"op": "scan", "expect": {"discovered": [{"serviceUUIDs": ["ffe0", "a0b40001-926d-4d61-98df-8c5c62ee53b3"],
               "solicitedServiceUUIDs": ["00001812"],
               "serviceData": {"a0b40001-926d-4d61-98df-8c5c62ee53b3": "0000", "0000ffe0-0000-1000-8000-00805f9b34fb": "00010203"}}]}},
             {"op": "connect"},
             {"op": "discover", "expect": {"discovered": {"services": [
               {"uuid": "a0b40001-926d-4d61-98df-8c5c62ee53b3", "includedServices": ["1234abcd"]},
               {"uuid": "0000FFE0-0000-1000-8000-00805F9B34FB", "characteristics": [{"uuid": "ffe1", "descriptors": ["00002902"]}]}]}}}]
            """#
        let passing = try await S.run(#"{"peripheral": {"bundled": "kitchen-sink"}, "steps": "# + spellings + "}")
        #expect(passing.failures.isEmpty, "\(passing.failures)")
        // Another UUID still fails, and so do bytes that read as a UUID in another length.
        let other = #"""
            [{"op": "scan", "expect": {"discovered": [{"serviceUUIDs": ["FFE1", "A0B40001-926D-4D61-98DF-8C5C62EE53B3"],
               "manufacturerData": "0000ffff0102"}]}}]
            """#
        let failing = try await S.run(#"{"peripheral": {"bundled": "kitchen-sink"}, "steps": "# + other + "}")
        #expect(failing.failures.count == 1)
        #expect(failing.failures.first?.description.contains(#"expected discovered [{"serviceUUIDs":["FFE1""#) == true)
    }

    @Test func anExpectedUUIDThatIsNoUUIDIsAnErrorInTheFile() throws {
        for (expect, path) in [
            (#"{"discovered": [{"serviceUUIDs": ["18G0"]}]}"#, "steps[0].expect.discovered[0].serviceUUIDs[0]"),
            (#"{"discovered": [{"serviceData": {"xyz": "00"}}]}"#, "steps[0].expect.discovered[0].serviceData.xyz"),
        ] {
            let json = #"{"peripheral": {"bundled": "battery"}, "steps": [{"op": "scan", "expect": "# + expect + "}]}"
            let error = #expect(throws: FixtureError.self) { try Scenario(json: Data(json.utf8)) }
            guard case .badUUID = error?.kind else {
                Issue.record("expected badUUID, got \(String(describing: error))")
                continue
            }
            #expect(error?.path == path)
        }
    }

    /// An expected value of a type its field never has could never match: the file is refused
    /// where it says so (it used to load, and fail every run with a mismatch).
    @Test(
        arguments: [
            (#"{"ok": "yes"}"#, "expected true or false, found string"),
            (#"{"ok": 0}"#, "expected true or false, found number"),
            (#"{"mtu": "abc"}"#, "expected an integer, found string"),
            (#"{"attError": 3.5}"#, "expected an integer, found number"),
            (#"{"attPDUs": true}"#, "expected an integer, found boolean"),
            (#"{"value": {"hex": "01"}}"#, "expected a string of hex digits, found object"),
            (#"{"value": "hello"}"#, "expected a string of hex digits, found string"),
            (#"{"received": "01"}"#, "expected an array of strings of hex digits, found string"),
            (#"{"error": 3}"#, "expected an error's name or an object of its fields, found number"),
            (#"{"time": 1}"#, "expected a time as the trace prints it, found number"),
            (#"{"state": true}"#, "expected a manager state, found boolean"),
            (#"{"discovered": "x"}"#, "expected an object or an array, found string"),
        ])
    func anExpectedValueOfTheWrongTypeIsAnErrorInTheFile(expect: String, message: String) throws {
        let json = #"{"peripheral": {"bundled": "battery"}, "steps": [{"op": "scan", "expect": "# + expect + "}]}"
        let error = #expect(throws: FixtureError.self) { try Scenario(json: Data(json.utf8)) }
        guard let error else { return }
        guard case .wrongType = error.kind else {
            Issue.record("\(error)")
            return
        }
        #expect(error.description.contains(message), "\(error)")
        #expect(error.line == 1)
    }

    /// A value of the right type that no trace can show (an error name, domain, state or op
    /// that does not exist, a time that is no duration) could never match either: refused where
    /// it is, naming what it may be instead.
    @Test(
        arguments: [
            (#"{"error": "totallyBogus"}"#, "unknown error name \"totallyBogus\"", "steps[0].expect.error"),
            (#"{"error": "readNotPermited"}"#, "did you mean \"readNotPermitted\"?", "steps[0].expect.error"),
            (
                #"{"error": {"domain": "att", "name": "connectionFailed"}}"#,
                "\"connectionFailed\" is not the name of an error of domain \"att\"", "steps[0].expect.error.name"
            ),
            (#"{"error": {"domain": "usb"}}"#, "unknown error domain \"usb\"", "steps[0].expect.error.domain"),
            (#"{"error": {"name": "application(0x8a)"}}"#, "unknown error name", "steps[0].expect.error.name"),
            (
                #"{"reason": {"central": {"domain": "bt"}}}"#, "unknown error domain \"bt\"",
                "steps[0].expect.reason.central.domain"
            ),
            (#"{"state": "on"}"#, "unknown manager state \"on\"", "steps[0].expect.state"),
            (#"{"op": "raed"}"#, "did you mean \"read\"?", "steps[0].expect.op"),
            (#"{"time": "soon"}"#, "\"soon\" is not a duration", "steps[0].expect.time"),
        ])
    func anExpectedValueNoTraceShowsIsAnErrorInTheFile(expect: String, message: String, path: String) throws {
        let json = #"{"peripheral": {"bundled": "battery"}, "steps": [{"op": "scan", "expect": "# + expect + "}]}"
        let error = #expect(throws: FixtureError.self) { try Scenario(json: Data(json.utf8)) }
        guard let error else { return }
        switch (error.kind, path) {
        case (.unknownValue, _), (.unknownOp, "steps[0].expect.op"), (.badDuration, "steps[0].expect.time"): break
        default: Issue.record("unexpected kind: \(error)")
        }
        #expect(error.description.contains(message), "\(error)")
        #expect(error.path == path, "\(error)")
    }

    @Test("Every error name a trace can show is accepted in an expectation, in its domain and without one")
    func everyErrorNameATraceShowsIsAccepted() throws {
        var expected: [(String, String)] = ScenarioTrace.TraceError.kitNames.map { ("kit", $0) }
        expected += CoreBluetoothError.Code.allCases.map { ("cb", $0.description) }
        expected += (0...255).map { ("att", ATTError.Code(rawValue: UInt8($0)).name) }
        for (domain, name) in expected {
            for expect in [#"{"error": "\#(name)"}"#, #"{"error": {"domain": "\#(domain)", "name": "\#(name)"}}"#] {
                let json =
                    #"{"peripheral": {"bundled": "battery"}, "steps": [{"op": "scan", "expect": "# + expect + "}]}"
                #expect(throws: Never.self, "\(expect)") { try Scenario(json: Data(json.utf8)) }
            }
        }
    }

    @Test("An expected time matches the trace's time when both name one instant, in any spelling")
    func anExpectedTimeMatchesAsADuration() async throws {
        let result = try await failures(
            """
            [{"op": "advance", "by": "250ms", "expect": {"time": "250ms"}},
             {"op": "advance", "by": "1s", "expect": {"time": "1.25s"}},
             {"op": "advance", "by": "1ms", "expect": {"time": "1251000us"}},
             {"op": "advance", "by": "1ms", "expect": {"time": "1.2s"}}]
            """)
        #expect(result == [#"step 3 (advance, line 13): expected time "1.2s", got "1.252s""#])
    }

    @Test func nullAndValuesOfTheirFieldsTypesAreAccepted() throws {
        let expect = #"""
            {"ok": false, "attError": 3, "mtu": null, "value": "0A1b", "received": ["01", ""], "error": {"code": 3},
             "time": "0.5s", "state": "poweredOn", "reason": {"central": null}, "discovered": []}
            """#
        let json = #"{"peripheral": {"bundled": "battery"}, "steps": [{"op": "scan", "expect": "# + expect + "}]}"
        let scenario = try Scenario(json: Data(json.utf8))
        #expect(scenario.steps[0].expectation?.fields.count == 10)
    }

    @Test func theJSONTraceIsOneCompactObjectPerStepInFieldOrder() async throws {
        let trace = try await S.run(S.inline(steps: "[\(S.connected), {\"op\": \"read\", \"char\": \"loc\"}]"))
        let lines = trace.json.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(trace.json.hasSuffix("\n"))
        #expect(lines[3] == #"{"step":3,"op":"read","ok":true,"time":"0s","value":"01","mtu":517,"attPDUs":2}"#)
        #expect(ScenarioTrace.Record.fieldNames.first == "step")
    }

    @Test func traceStringsAreEscapedAsJSON() {
        let value = TraceValue.string("a\"b\\c\nd\u{01}é")
        #expect(value.json == #""a\"b\\c\nd\u0001é""#)
        // Unicode's other line breaks too (NEL, LS, PS): a trace's objects stay one per line
        // for a reader that splits on them.
        #expect(TraceValue.string("a\u{85}b\u{2028}c\u{2029}d").json == #""a\u0085b\u2028c\u2029d""#)
        #expect(TraceValue.object([("k", .array([.null, .bool(false), .int(-3)]))]).json == #"{"k":[null,false,-3]}"#)
    }

    @Test func kitErrorsAreNumberedInTheirListedOrder() {
        #expect(ScenarioTrace.TraceError(APIMisuseError.notPoweredOn(operation: "x", state: .poweredOff)).code == 0)
        let stale = ScenarioTrace.TraceError(APIMisuseError.staticCharacteristic("2A38", handle: 3))
        #expect(stale == .init(domain: "kit", code: 9, name: "staticCharacteristic"))
        #expect(ScenarioTrace.TraceError.kitNames.count == Set(ScenarioTrace.TraceError.kitNames).count)
        let cb = ScenarioTrace.TraceError(CoreBluetoothError(.peripheralDisconnected))
        #expect(cb == .init(domain: "cb", code: 7, name: "peripheralDisconnected"))
        let att = ScenarioTrace.TraceError(ATTError(.init(rawValue: 0x80)))
        #expect(att == .init(domain: "att", code: 128, name: "application(0x80)"))
    }

    @Test func theTextTimelineHasOneLinePerStepAndTheVerdict() async throws {
        let scenario = try S.scenario(
            S.inline(steps: #"[{"op": "scan"}, {"op": "read", "char": "loc", "expect": {"ok": true}}]"#))
        let trace = await ScenarioRunner(scenario).run()
        let text = trace.text(for: scenario)
        let lines = text.split(separator: "\n")
        #expect(lines[0] == "inline (fast mode, seed 1)")
        #expect(lines[1].hasSuffix("#0   scan      ok      found 1"))
        #expect(lines[2].contains("#1   read loc  FAILED  cb 3 notConnected, 0 ATT PDUs"))
        #expect(lines[3] == "1 expectation failed:")
        #expect(lines[4].hasPrefix("  step 1 (read, line 10): expected ok true, got false"))
    }

    @Test func theMermaidDiagramHasAnExchangePerStep() async throws {
        let scenario = try S.scenario(
            S.inline(
                steps: """
                    [\(S.connected), {"op": "read", "char": "loc"}, {"op": "read", "char": "ctl"},
                     {"op": "subscribe", "char": "hrm"}, {"op": "notify", "char": "hrm", "value": {"hex": "07"}},
                     {"op": "advance", "by": "1s"}, {"op": "disconnect", "by": "peripheral"}]
                    """))
        let trace = await ScenarioRunner(scenario).run()
        let mermaid = trace.mermaid(for: scenario)
        let lines = mermaid.split(separator: "\n").map(String.init)
        #expect(lines[0] == "sequenceDiagram")
        #expect(lines[1] == "    participant C as Central")
        #expect(lines[2] == "    participant P as Sensor")
        #expect(lines.contains("    C->>P: read loc at 0s"))
        #expect(lines.contains("    P-->>C: 01"))
        #expect(lines.contains("    P--xC: readNotPermitted (att 2)"))
        #expect(lines.contains("    P-)C: notify hrm 07 at 0s"))
        #expect(lines.contains("    Note over C,P: advance 1s at 1s"))
        #expect(lines.contains("    P-xC: disconnect at 1s"))
        #expect(!mermaid.contains(";"))
    }

    /// A disconnect of a link that is not up fails: the diagram says so, with its error, and
    /// draws no arrow (it drew the disconnection as if it had happened).
    @Test func aFailedDisconnectIsDrawnAsAFailureNotAnArrow() async throws {
        let scenario = try S.scenario(
            S.inline(steps: #"[{"op": "disconnect", "by": "central"}, {"op": "disconnect", "by": "peripheral"}]"#))
        let trace = await ScenarioRunner(scenario).run()
        let lines = trace.mermaid(for: scenario).split(separator: "\n").map(String.init)
        #expect(lines.contains("    Note over C: disconnect failed: notConnected (cb 3)"))
        #expect(lines.contains("    Note over P: disconnect failed: notConnected (cb 3)"))
        #expect(!lines.contains { $0.contains("-xP:") || $0.contains("-xC:") })
    }
}

@Suite("Scenario documentation", .timeLimit(.minutes(10)))
struct ScenarioDocumentationTests {
    static func document(_ path: String) throws -> String {
        try String(
            contentsOf: ScenarioTestSupport.fixturesFolder.deletingLastPathComponent().appendingPathComponent(path),
            encoding: .utf8)
    }

    @Test func theFormatReferenceListsEveryOpItsFieldsAndEveryKitErrorCode() throws {
        let reference = try Self.document("Fixtures/README.md")
        for op in ScenarioStep.Operation.names {
            #expect(reference.contains("`\(op)`"), "\(op)")
        }
        for field in Set(ScenarioStep.fields.values.flatMap { $0 }) {
            #expect(reference.contains("`\(field)`"), "\(field)")
        }
        for field in ScenarioTrace.Record.fieldNames {
            #expect(reference.contains("`\(field)`"), "\(field)")
        }
        for (code, name) in ScenarioTrace.TraceError.kitNames.enumerated() {
            #expect(reference.contains("\(code) \(name)"), "\(code) \(name)")
        }
    }

    @Test func theScenarioArticleNamesEveryOp() throws {
        let readme = try Self.document("Sources/BLEMockKit/BLEMockKit.docc/FixturesAndScenarios.md")
        for op in ScenarioStep.Operation.names {
            #expect(readme.contains("`\(op)`"), "\(op)")
        }
    }
}
