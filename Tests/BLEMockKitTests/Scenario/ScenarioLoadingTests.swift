import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Scenario loading errors", .timeLimit(.minutes(10)))
struct ScenarioLoadingTests {
    typealias S = ScenarioTestSupport

    struct Case: CustomTestStringConvertible, Sendable {
        let label: String
        let json: String
        let kind: FixtureError.Kind
        let path: String
        let message: String
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        Case(
            label: "bad JSON", json: #"{"steps": [}"#, kind: .invalidJSON, path: "",
            message: "expected a value"),
        Case(
            label: "unknown top-level field", json: S.inline(steps: "[]", extra: #" "colour": 1,"#),
            kind: .unknownField("colour"), path: "colour", message: "unknown field \"colour\""),
        Case(
            label: "unknown op with a suggestion", json: S.inline(steps: #"[{"op": "raed", "char": "loc"}]"#),
            kind: .unknownOp("raed"), path: "steps[0].op", message: "unknown op \"raed\""),
        Case(
            label: "field of another op", json: S.inline(steps: #"[{"op": "read", "char": "loc", "by": "1s"}]"#),
            kind: .unknownField("by"), path: "steps[0].by", message: "unknown field \"by\""),
        Case(
            label: "field no op has", json: S.inline(steps: #"[{"op": "read", "chr": "loc"}]"#),
            kind: .unknownField("chr"), path: "steps[0].chr", message: "unknown field \"chr\""),
        Case(
            label: "bad UUID", json: S.inline(steps: #"[{"op": "scan", "services": ["18G0"]}]"#),
            kind: .badUUID(.init(input: "18G0", reason: .invalidCharacter("G", offset: 2))),
            path: "steps[0].services[0]", message: "is not a Bluetooth UUID"),
        Case(
            label: "bad duration", json: S.inline(steps: #"[{"op": "advance", "by": "10 parsecs"}]"#),
            kind: .badDuration("10 parsecs"), path: "steps[0].by", message: "is not a duration"),
        Case(
            label: "missing peripheral file", json: #"{"peripheral": "nowhere.json", "steps": []}"#,
            kind: .missingFile("/nonexistent/nowhere.json"), path: "peripheral", message: "no such profile"),
        Case(
            label: "empty peripheral path", json: #"{"peripheral": "", "steps": []}"#,
            kind: .wrongType(expected: "a profile's path"), path: "peripheral",
            message: "the peripheral's path is empty"),
        // A profile that cannot be read at all is named at the scenario's field.
        Case(
            label: "peripheral path of a folder", json: #"{"peripheral": "/", "steps": []}"#,
            kind: .unreadableFile("/"), path: "peripheral", message: "cannot read /: it is a folder"),
        Case(
            label: "connect timeout of zero",
            json: S.inline(steps: #"[{"op": "scan"}, {"op": "connect", "timeout": "0s"}]"#),
            kind: .valueOutOfRange, path: "steps[1].timeout", message: "a connect timeout must be above zero"),
        Case(
            label: "unknown characteristic", json: S.inline(steps: #"[{"op": "read", "char": "lco"}]"#),
            kind: .unknownCharacteristic("lco"), path: "steps[0].char", message: "no characteristic \"lco\""),
        Case(
            label: "characteristic UUID unknown", json: S.inline(steps: #"[{"op": "read", "char": "2A99"}]"#),
            kind: .unknownCharacteristic("2A99"), path: "steps[0].char", message: "no characteristic"),
        Case(
            label: "unknown bundled profile", json: #"{"peripheral": {"bundled": "heartrate"}, "steps": []}"#,
            kind: .unknownValue("heartrate"), path: "peripheral.bundled",
            message: "unknown bundled profile \"heartrate\""),
        Case(
            label: "bundled profile with other fields",
            json: #"{"peripheral": {"bundled": "battery", "name": "X"}, "steps": []}"#,
            kind: .unknownField("name"), path: "peripheral.name", message: "unknown field \"name\""),
        Case(
            label: "bundled profile not a name", json: #"{"peripheral": {"bundled": 3}, "steps": []}"#,
            kind: .wrongType(expected: "a string"), path: "peripheral.bundled", message: "expected a string"),
        Case(
            label: "realistic without a seed", json: #"{"mode": "realistic", "peripheral": {}, "steps": []}"#,
            kind: .missingField("seed"), path: "", message: "realistic mode needs a seed"),
        Case(
            label: "unknown mode", json: #"{"mode": "slow", "peripheral": {}, "steps": []}"#,
            kind: .unknownValue("slow"), path: "mode", message: "unknown mode \"slow\""),
        Case(
            label: "negative seed", json: #"{"seed": -1, "peripheral": {}, "steps": []}"#,
            kind: .wrongType(expected: "a seed"), path: "seed", message: "expected a seed"),
        Case(
            label: "central MTU not an integer",
            json: #"{"central": {"preferredMTU": 185.5}, "peripheral": {}, "steps": []}"#,
            kind: .wrongType(expected: "an integer"), path: "central.preferredMTU",
            message: "expected an integer, found 185.5"),
        Case(
            label: "connection interval out of range",
            json: #"{"link": {"connectionInterval": "5ms"}, "peripheral": {}, "steps": []}"#,
            kind: .valueOutOfRange, path: "link.connectionInterval", message: "connectionInterval 0.005s"),
        Case(
            label: "unknown link field", json: #"{"link": {"latency": 1}, "peripheral": {}, "steps": []}"#,
            kind: .unknownField("latency"), path: "link.latency", message: "unknown field \"latency\""),
        Case(
            label: "missing steps", json: #"{"peripheral": {}}"#, kind: .missingField("steps"), path: "",
            message: "missing field \"steps\""),
        Case(
            label: "steps not an array", json: #"{"peripheral": {}, "steps": {}}"#,
            kind: .wrongType(expected: "an array"), path: "steps", message: "expected an array"),
        Case(
            label: "step not an object", json: #"{"peripheral": {}, "steps": [1]}"#,
            kind: .wrongType(expected: "a step object"), path: "steps[0]", message: "expected a step object"),
        Case(
            label: "step without op", json: #"{"peripheral": {}, "steps": [{}]}"#, kind: .missingField("op"),
            path: "steps[0]", message: "missing field \"op\""),
        Case(
            label: "peripheral of the wrong type", json: #"{"peripheral": 3, "steps": []}"#,
            kind: .wrongType(expected: "a profile path or object"), path: "peripheral",
            message: "expected a profile path or object"),
        Case(
            label: "bad profile inline", json: #"{"peripheral": {"rssi": 5}, "steps": []}"#, kind: .valueOutOfRange,
            path: "peripheral.rssi", message: "rssi 5 is out of range"),
        Case(
            label: "unknown state", json: S.inline(steps: #"[{"op": "setState", "state": "on"}]"#),
            kind: .unknownValue("on"), path: "steps[0].state", message: "unknown state \"on\""),
        Case(
            label: "unknown role", json: S.inline(steps: #"[{"op": "powerOn", "role": "observer"}]"#),
            kind: .unknownValue("observer"), path: "steps[0].role", message: "unknown role"),
        Case(
            label: "unknown fault kind", json: S.inline(steps: #"[{"op": "fault", "kind": "meteor"}]"#),
            kind: .unknownValue("meteor"), path: "steps[0].kind", message: "unknown fault kind"),
        Case(
            label: "error on an inRange fault",
            json: S.inline(steps: #"[{"op": "fault", "kind": "inRange", "error": 6}]"#),
            kind: .unknownField("error"), path: "steps[0].error", message: "an inRange fault has no error"),
        Case(
            label: "role on a disconnect fault",
            json: S.inline(steps: #"[{"op": "fault", "kind": "disconnect", "role": "central"}]"#),
            kind: .unknownField("role"), path: "steps[0].role", message: "acts on the peripheral's link"),
        Case(
            label: "unknown CoreBluetooth error name",
            json: S.inline(steps: #"[{"op": "fault", "kind": "disconnect", "error": "oops"}]"#),
            kind: .unknownValue("oops"), path: "steps[0].error", message: "unknown CoreBluetooth error"),
        Case(
            label: "CoreBluetooth error out of range",
            json: S.inline(steps: #"[{"op": "fault", "kind": "disconnect", "error": 99}]"#),
            kind: .valueOutOfRange, path: "steps[0].error", message: "error 99 is out of range"),
        Case(
            label: "inject without a failure", json: S.inline(steps: #"[{"op": "inject", "target": "read"}]"#),
            kind: .missingField("attError"), path: "steps[0]", message: "needs a failure"),
        Case(
            label: "inject with two failures",
            json: S.inline(steps: #"[{"op": "inject", "target": "read", "attError": 3, "cbError": 7}]"#),
            kind: .unknownField("cbError"), path: "steps[0]", message: "takes one failure"),
        Case(
            label: "inject of an unknown target",
            json: S.inline(steps: #"[{"op": "inject", "target": "reed", "attError": 3}]"#),
            kind: .unknownValue("reed"), path: "steps[0].target", message: "unknown target"),
        Case(
            label: "ATT error 0", json: S.inline(steps: #"[{"op": "inject", "target": "read", "attError": 0}]"#),
            kind: .valueOutOfRange, path: "steps[0].attError", message: "attError 0 is out of range"),
        Case(
            label: "unknown ATT error name",
            json: S.inline(steps: #"[{"op": "inject", "target": "read", "attError": "nope"}]"#),
            kind: .unknownValue("nope"), path: "steps[0].attError", message: "unknown ATT error"),
        Case(
            label: "neverAnswers false",
            json: S.inline(steps: #"[{"op": "inject", "target": "read", "neverAnswers": false}]"#),
            kind: .wrongType(expected: "true"), path: "steps[0].neverAnswers", message: "expected true"),
        Case(
            label: "ATT error for an operation no ATT response answers",
            json: S.inline(steps: #"[{"op": "inject", "target": "connect", "attError": 3}]"#),
            kind: .unknownField("attError"), path: "steps[0].attError",
            message: "target \"connect\" cannot fail with an ATT error"),
        Case(
            label: "neverAnswers for a peripheral's operation",
            json: S.inline(steps: #"[{"op": "inject", "target": "updateValue", "neverAnswers": true}]"#),
            kind: .unknownField("neverAnswers"), path: "steps[0].neverAnswers",
            message: "target \"updateValue\" cannot use \"neverAnswers\""),
        // No op opens or publishes an L2CAP channel: such an injection could never fire.
        Case(
            label: "inject into opening an L2CAP channel",
            json: S.inline(steps: #"[{"op": "inject", "target": "l2capOpen", "cbError": 7}]"#),
            kind: .unknownValue("l2capOpen"), path: "steps[0].target",
            message: "an inject step cannot target \"l2capOpen\": no scenario op opens or publishes an L2CAP channel"),
        Case(
            label: "inject into publishing an L2CAP channel",
            json: S.inline(steps: #"[{"op": "inject", "target": "l2capPublish", "cbError": 4}]"#),
            kind: .unknownValue("l2capPublish"), path: "steps[0].target",
            message: "an inject step cannot target \"l2capPublish\""),
        // A characteristic aims only operations made on one: elsewhere the injection never fires.
        Case(
            label: "inject aimed at a characteristic for a connect",
            json: S.inline(steps: #"[{"op": "inject", "target": "connect", "char": "loc", "cbError": 10}]"#),
            kind: .unknownField("char"), path: "steps[0].char",
            message: "an inject step of target \"connect\" cannot aim at a characteristic: the operation is not made "
                + "on one, so it would never fire"),
        Case(
            label: "inject aimed at a characteristic for a service discovery",
            json: S.inline(steps: #"[{"op": "inject", "target": "serviceDiscovery", "char": "loc", "attError": 3}]"#),
            kind: .unknownField("char"), path: "steps[0].char",
            message: "an inject step of target \"serviceDiscovery\" cannot aim at a characteristic"),
        Case(
            label: "inject aimed at a characteristic for an RSSI read",
            json: S.inline(steps: #"[{"op": "inject", "target": "readRSSI", "char": "loc", "cbError": 3}]"#),
            kind: .unknownField("char"), path: "steps[0].char",
            message: "an inject step of target \"readRSSI\" cannot aim at a characteristic"),
        Case(
            label: "times zero",
            json: S.inline(steps: #"[{"op": "inject", "target": "read", "attError": 3, "times": 0}]"#),
            kind: .valueOutOfRange, path: "steps[0].times", message: "times 0 is out of range"),
        Case(
            label: "write without value", json: S.inline(steps: #"[{"op": "write", "char": "ctl"}]"#),
            kind: .missingField("value"), path: "steps[0]", message: "missing field \"value\""),
        Case(
            label: "bad byte value",
            json: S.inline(steps: #"[{"op": "notify", "char": "hrm", "value": {"hex": "0"}}]"#),
            kind: .badByteValue, path: "steps[0].value.hex", message: "odd number of hex digits"),
        Case(
            label: "negative offset", json: S.inline(steps: #"[{"op": "readRequest", "char": "loc", "offset": -1}]"#),
            kind: .valueOutOfRange, path: "steps[0].offset", message: "offset -1 is out of range"),
        Case(
            label: "unknown expect field", json: S.inline(steps: #"[{"op": "scan", "expect": {"okay": true}}]"#),
            kind: .unknownField("okay"), path: "steps[0].expect.okay", message: "unknown field \"okay\""),
        Case(
            label: "expecting a step index that is not an integer",
            json: S.inline(steps: #"[{"op": "scan", "expect": {"step": "0"}}]"#),
            kind: .wrongType(expected: "an integer"), path: "steps[0].expect.step", message: "expected an integer"),
        Case(
            label: "unknown disconnect side", json: S.inline(steps: #"[{"op": "disconnect", "by": "both"}]"#),
            kind: .unknownValue("both"), path: "steps[0].by", message: "unknown side"),
    ]

    @Test(arguments: cases)
    func eachBadScenarioNamesTheProblemItsPathAndTheFile(_ testCase: Case) throws {
        let error = try #require(S.loadError(testCase.json))
        if case .missingFile = testCase.kind {
            guard case .missingFile(let path) = error.kind else {
                Issue.record("expected missingFile, got \(error.kind)")
                return
            }
            #expect(path.hasSuffix("nowhere.json"))
        } else if case .badUUID = testCase.kind {
            guard case .badUUID = error.kind else {
                Issue.record("expected badUUID, got \(error.kind)")
                return
            }
        } else if case .badDuration = testCase.kind {
            guard case .badDuration = error.kind else {
                Issue.record("expected badDuration, got \(error.kind)")
                return
            }
        } else {
            #expect(error.kind == testCase.kind)
        }
        #expect(error.file == "bad.json")
        #expect(error.path == testCase.path)
        #expect(error.line >= 1)
        #expect(error.column >= 1)
        #expect(error.message.contains(testCase.message), "\(error.message)")
        #expect(!error.fix.isEmpty || error.kind == .invalidJSON)
        #expect(error.description.hasPrefix("bad.json:\(error.line):\(error.column): "))
    }

    @Test func anUnknownOpSuggestsTheClosestOne() throws {
        let error = try #require(S.loadError(S.inline(steps: #"[{"op": "subscrbe", "char": "hrm"}]"#)))
        #expect(error.fix.hasPrefix("did you mean \"subscribe\"?"))
    }

    @Test func anAmbiguousUUIDAsksForAnID() throws {
        let json = """
            {"peripheral": {"services": [
              {"uuid": "180D", "characteristics": [{"id": "a", "uuid": "2A37", "properties": ["notify"], "permissions": []}]},
              {"uuid": "180F", "characteristics": [{"id": "b", "uuid": "2A37", "properties": ["notify"], "permissions": []}]}]},
             "steps": [{"op": "subscribe", "char": "2A37"}]}
            """
        let error = try #require(S.loadError(json))
        #expect(error.kind == .ambiguousCharacteristic("2A37"))
        #expect(error.fix == "name one by id: a, b")
        #expect(error.path == "steps[0].char")
    }

    /// A new, empty folder of the calling test's own under the temporary folder (named by the
    /// test's line); the test removes it.
    static func scratchFolder(line: Int = #line) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "scenario-loading-\(ProcessInfo.processInfo.processIdentifier)-\(line)")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The error reading the scenario at `url` fails with.
    static func loadError(
        contentsOf url: URL, sourceLocation: SourceLocation = #_sourceLocation
    ) -> FixtureError? {
        do {
            _ = try Scenario.load(contentsOf: url)
            Issue.record("expected an error", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    @Test func aProfileFileWithAnErrorIsReportedInThatFile() throws {
        let directory = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"name": "X", "rssi": 9}"#.utf8).write(to: directory.appendingPathComponent("device.json"))
        try Data(#"{"peripheral": "device.json", "steps": []}"#.utf8)
            .write(to: directory.appendingPathComponent("scenario.json"))
        let error = try #require(Self.loadError(contentsOf: directory.appendingPathComponent("scenario.json")))
        #expect(error.file == directory.appendingPathComponent("device.json").path)
        #expect(error.kind == .valueOutOfRange)
        #expect(error.path == "rssi")
    }

    /// Errors name a file by its path as the caller named it: a scenario and its profile, or two
    /// profiles of one name in different folders, are told apart (both used to be `p.json`).
    @Test func errorsNameFilesByThePathTheyWereReachedBy() throws {
        let directory = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        for folder in ["scenarios", "peripherals"] {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try Data(#"{"name": "X", "colour": 1}"#.utf8)
            .write(to: directory.appendingPathComponent("peripherals/p.json"))
        try Data(#"{"peripheral": "../peripherals/p.json", "steps": []}"#.utf8)
            .write(to: directory.appendingPathComponent("scenarios/p.json"))
        let base = URL(fileURLWithPath: directory.path, isDirectory: true)
        let relative = URL(fileURLWithPath: "scenarios/p.json", relativeTo: base)
        let error = try #require(Self.loadError(contentsOf: relative))
        #expect(error.kind == .unknownField("colour"))
        #expect(error.file == "scenarios/../peripherals/p.json")
        #expect(error.description.hasPrefix("scenarios/../peripherals/p.json:1:15: colour: unknown field"))
        // A relative scenario keeps its default name from its file's name alone.
        try Data(#"{"peripheral": {"services": []}, "steps": []}"#.utf8)
            .write(to: directory.appendingPathComponent("scenarios/unnamed.json"))
        let unnamed = try Scenario.load(
            contentsOf: URL(fileURLWithPath: "scenarios/unnamed.json", relativeTo: base))
        #expect(unnamed.name == "unnamed")
    }

    /// A `peripheral` that names a scenario file is said to be one (it was reported as a profile
    /// with an unknown field "peripheral").
    @Test func aPeripheralPathNamingAScenarioSaysSo() throws {
        let directory = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"peripheral": {"bundled": "battery"}, "steps": []}"#.utf8)
            .write(to: directory.appendingPathComponent("other.json"))
        try Data(#"{"peripheral": "other.json", "steps": []}"#.utf8)
            .write(to: directory.appendingPathComponent("scenario.json"))
        let error = try #require(Self.loadError(contentsOf: directory.appendingPathComponent("scenario.json")))
        #expect(error.kind == .wrongType(expected: "a profile's path"))
        #expect(error.file == directory.appendingPathComponent("scenario.json").path)
        #expect(error.path == "peripheral")
        #expect(error.message == "other.json is a scenario, not a peripheral profile")
    }

    /// A name that is one characteristic's id and, as a UUID, another's alone could mean either:
    /// refused, naming both (before, `"FE02"` meant the first and `"fe02"` the second).
    @Test func aNameThatIsOneCharacteristicsIDAndAnothersUUIDIsAmbiguous() throws {
        let profile = #"""
            {"services": [{"uuid": "FE00", "characteristics": [
              {"id": "FE02", "uuid": "FE01", "properties": ["read"], "permissions": ["readable"], "value": {"hex": "01"}},
              {"id": "x", "uuid": "FE02", "properties": ["read"], "permissions": ["readable"], "value": {"hex": "02"}}]}]}
            """#
        let error = try #require(
            S.loadError(#"{"peripheral": \#(profile), "steps": [{"op": "read", "char": "FE02"}]}"#))
        #expect(error.kind == .ambiguousCharacteristic("FE02"))
        #expect(error.path == "steps[0].char")
        #expect(
            error.message == #""FE02" is the id of the characteristic FE01 and the UUID of the characteristic FE02"#)
        #expect(error.fix == "give the characteristic FE01 an id that is not another characteristic's UUID")
        // Another spelling of the UUID is no id, and names the second alone; an id that is its
        // own characteristic's UUID is no ambiguity.
        let scenario = try S.scenario(#"{"peripheral": \#(profile), "steps": [{"op": "read", "char": "fe02"}]}"#)
        #expect(
            scenario.steps.first?.operation
                == .read(.init(name: "fe02", serviceIndex: 0, characteristicIndex: 1)))
        let own = try S.scenario(
            #"""
            {"peripheral": {"services": [{"uuid": "FE00", "characteristics": [
              {"id": "FE01", "uuid": "FE01", "properties": ["read"], "permissions": ["readable"], "value": {"hex": "01"}}]}]},
             "steps": [{"op": "read", "char": "FE01"}]}
            """#)
        #expect(own.steps.first?.operation == .read(.init(name: "FE01", serviceIndex: 0, characteristicIndex: 0)))
    }

    @Test func anUnknownBundledProfileNamesTheNearestOne() throws {
        let error = try #require(S.loadError(#"{"peripheral": {"bundled": "heartrate"}, "steps": []}"#))
        let names = BundledProfile.allCases.map(\.rawValue).joined(separator: ", ")
        #expect(error.fix == "did you mean \"heart-rate\"? use one of \(names)")
    }

    @Test func aScenarioMayNameABundledProfileAndRunsAsWithItsFile() async throws {
        let steps =
            #"[{"op": "scan", "for": "1s"}, {"op": "connect"}, {"op": "discover"}, {"op": "read", "char": "2A19"}]"#
        let named = try Scenario(
            json: Data(#"{"name": "b", "peripheral": {"bundled": "battery"}, "steps": \#(steps)}"#.utf8))
        #expect(named.peripheral == PeripheralProfile.bundled(.battery))
        #expect(named.peripheralPath == nil)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "scenario-bundled-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try BundledProfile.battery.json.write(to: directory.appendingPathComponent("battery.json"))
        let byFile = try Scenario(
            json: Data(#"{"name": "b", "peripheral": "battery.json", "steps": \#(steps)}"#.utf8),
            baseDirectory: directory)
        let namedTrace = await ScenarioRunner(named).run()
        #expect(namedTrace.failures.isEmpty)
        #expect(namedTrace == (await ScenarioRunner(byFile).run()))
    }

    @Test(
        "A seed is any JSON spelling of a whole number from 0 to 2^64 - 1, read exactly",
        arguments: [
            ("42", UInt64(42)), ("42.0", 42), ("4.2e1", 42), ("4200E-2", 42), ("0.5e1", 5), ("1e3", 1_000),
            ("-0", 0), ("0.0e-5", 0), ("0e99999", 0), ("18446744073709551615", .max),
            ("1.8446744073709551615e19", .max), ("9007199254740993", 9_007_199_254_740_993),
            ("9007199254740993.000", 9_007_199_254_740_993),
        ])
    func aSeedInAnyWholeNumberSpelling(text: String, seed: UInt64) throws {
        let json = #"{"mode": "realistic", "seed": "# + text + #", "peripheral": {"bundled": "battery"}, "steps": []}"#
        #expect(try Scenario(json: Data(json.utf8)).seed == seed)
    }

    @Test(
        "A seed that is not a whole number from 0 to 2^64 - 1 is refused where it is",
        arguments: [
            "1.5", "0.05", "-1", "-1e2", "18446744073709551616", "1.8446744073709551616e19", "1e20", "1e-1",
            "1e9223372036854775807", "\"7\"",
        ])
    func aSeedThatIsNoWholeNumberIsRefused(text: String) throws {
        let json = #"{"mode": "realistic", "seed": "# + text + #", "peripheral": {"bundled": "battery"}, "steps": []}"#
        let error = #expect(throws: FixtureError.self) { try Scenario(json: Data(json.utf8)) }
        #expect(error?.kind == .wrongType(expected: "a seed"))
        #expect(error?.path == "seed")
    }

    @Test func aMissingScenarioFileIsAMissingFileError() {
        do {
            _ = try Scenario.load(contentsOf: URL(fileURLWithPath: "/nonexistent/scenario.json"))
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .missingFile("/nonexistent/scenario.json"))
            #expect(
                error.description
                    == "/nonexistent/scenario.json: no such file: /nonexistent/scenario.json; check the path (relative "
                    + "paths are resolved from the scenario)"
            )
        }
    }

    @Test("A scenario path that is a symbolic link to nothing, or round a loop of links, says so")
    func aLinkToNothingIsAMissingFileErrorThatSaysItIsALink() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "scenario-links-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = folder.appendingPathComponent("first.json")
        let second = folder.appendingPathComponent("second.json")
        let dangling = folder.appendingPathComponent("dangling.json")
        try FileManager.default.createSymbolicLink(atPath: first.path, withDestinationPath: second.path)
        try FileManager.default.createSymbolicLink(atPath: second.path, withDestinationPath: first.path)
        try FileManager.default.createSymbolicLink(
            atPath: dangling.path, withDestinationPath: folder.appendingPathComponent("gone.json").path)
        for link in [first, dangling] {
            do {
                _ = try Scenario.load(contentsOf: link)
                Issue.record("expected an error")
            } catch {
                #expect(error.kind == .missingFile(link.path))
                #expect(
                    error.description
                        == "\(link.path): no file at the end of the symbolic link \(link.path) (it points "
                        + "at a missing file, or round a loop of links); check where the link points (`ls -l \(link.path)`)"
                )
            }
        }
    }

    @Test func aValidScenarioReadsEveryField() throws {
        let scenario = try S.scenario(
            S.inline(
                steps: """
                    [{"op": "scan", "services": ["180D"], "allowDuplicates": true, "solicited": ["1812"], "for": "2s"},
                     {"op": "connect", "timeout": "5s"},
                     {"op": "write", "char": "ctl", "value": {"utf8": "hi"}, "withResponse": false},
                     {"op": "readRequest", "char": "2A38", "offset": 4},
                     {"op": "inject", "target": "write", "char": "ctl", "cbError": 14, "times": 3},
                     {"op": "fault", "kind": "disconnect", "error": "connectionTimeout"},
                     {"op": "fault", "kind": "powerOff", "role": "peripheral"},
                     {"op": "setState", "state": "unauthorized"},
                     {"op": "disconnect", "by": "peripheral", "expect": {"ok": true}}]
                    """, mode: "realistic", seed: "18446744073709551615",
                extra:
                    #" "description": "d", "central": {"preferredMTU": 23}, "link": {"connectionInterval": "7.5ms"},"#
            ))
        #expect(scenario.name == "inline")
        #expect(scenario.description == "d")
        #expect(scenario.seed == .max)
        #expect(scenario.mode == .realistic)
        #expect(scenario.centralPreferredMTU == 23)
        #expect(scenario.connectionInterval == .microseconds(7_500))
        #expect(scenario.peripheralPath == nil)
        let ctl = ScenarioStep.CharacteristicReference(name: "ctl", serviceIndex: 0, characteristicIndex: 2)
        #expect(
            scenario.steps.map(\.operation) == [
                .scan(services: ["180D"], allowDuplicates: true, solicited: ["1812"], duration: .seconds(2)),
                .connect(timeout: .seconds(5)),
                .write(ctl, value: Data("hi".utf8), withResponse: false),
                .readRequest(.init(name: "2A38", serviceIndex: 0, characteristicIndex: 1), offset: 4),
                .inject(
                    .init(target: .write, characteristic: ctl, failure: .coreBluetooth(.init(rawValue: 14)!), times: 3)),
                .fault(.disconnect, role: .central, error: .connectionTimeout),
                .fault(.powerOff, role: .peripheral, error: nil),
                .setState(.unauthorized, .central),
                .disconnect(by: .peripheral),
            ])
        #expect(scenario.steps.map(\.index) == Array(0..<9))
        #expect(scenario.steps[8].expectation?.fields.map(\.key) == ["ok"])
        #expect(scenario.steps[0].line == 10)
    }

    @Test func overridesReplaceTheFilesModeAndSeed() throws {
        let json = Data(#"{"mode": "realistic", "peripheral": {}, "steps": []}"#.utf8)
        let scenario = try Scenario(json: json, overrides: Scenario.Overrides(seed: 5))
        #expect(scenario.seed == 5)
        let fast = try Scenario(json: json, overrides: Scenario.Overrides(mode: .fast))
        #expect(fast.mode == .fast)
        #expect(fast.seed == nil)
        #expect(fast.name == "scenario")
    }

    @Test func aFixtureDocumentIsAScenarioWhenItHasSteps() throws {
        let folder = ScenarioTestSupport.fixturesFolder
        guard
            case .scenario(let scenario) = try FixtureDocument.load(
                contentsOf: folder.appendingPathComponent("scenarios/nordic-uart.json"))
        else { throw Failure.wrongKind }
        #expect(scenario.peripheralPath == "../peripherals/nordic-uart.json")
        guard
            case .profile(let profile) = try FixtureDocument.load(
                contentsOf: folder.appendingPathComponent("peripherals/nordic-uart.json"))
        else { throw Failure.wrongKind }
        #expect(profile == scenario.peripheral)
    }

    @Test func aFixtureDocumentWithAPeripheralButNoStepsIsReportedAsAScenarioMissingThem() throws {
        let directory = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("no-steps.json")
        try Data(#"{"name": "s", "peripheral": {"bundled": "battery"}}"#.utf8).write(to: file)
        // Before, it was read as a profile with an unknown field "peripheral".
        do {
            _ = try FixtureDocument.load(contentsOf: file)
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .missingField("steps"))
        }
    }

    enum Failure: Error { case wrongKind }
}
