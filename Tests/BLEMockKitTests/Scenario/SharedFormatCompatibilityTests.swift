import BLECore
import BLEMockKit
import Foundation
import Testing

/// Files the shared scenario format allows load and run as it says.
@Suite("Files the shared format allows", .timeLimit(.minutes(10)))
struct SharedFormatCompatibilityTests {
    typealias S = ScenarioTestSupport

    /// The ATT_MTU `connect` reports with `central` as the scenario's `central` object and
    /// `profileMTU` as the inline profile's `preferredMTU` (when given).
    func connectMTU(central: String? = nil, profileMTU: String? = nil) async throws -> Int? {
        let centralField = central.map { #" "central": {"preferredMTU": \#($0)},"# } ?? ""
        let profileField = profileMTU.map { #""preferredMTU": \#($0), "# } ?? ""
        let json = """
            {\(centralField) "peripheral": {\(profileField)"name": "P", "services": []},
             "steps": [{"op": "scan"}, {"op": "connect"}]}
            """
        let trace = await ScenarioRunner(try Scenario(json: Data(json.utf8))).run()
        #expect(trace.records[1].ok)
        return trace.records[1].mtu
    }

    @Test func aCentralPreferredMTUAbove517NegotiatesTheClampedATTMTU() async throws {
        #expect(try await connectMTU(central: "600") == 517)
        #expect(try await connectMTU(central: "1e30") == 517)
    }

    @Test func aCentralPreferredMTUBelow23NegotiatesTheMinimumATTMTU() async throws {
        #expect(try await connectMTU(central: "10") == 23)
        #expect(try await connectMTU(central: "-5") == 23)
    }

    @Test func aProfilePreferredMTUAbove517CountsAs517() async throws {
        #expect(try await connectMTU(profileMTU: "1000") == 517)
        #expect(try await connectMTU(central: "300", profileMTU: "1000") == 300)
        let profile = try PeripheralProfile(json: Data(#"{"preferredMTU": 1000}"#.utf8))
        #expect(profile.preferredMTU == 517)
    }

    @Test func aPreferredMTUThatIsNotAnIntegerIsStillRefused() throws {
        let error = try #require(
            S.loadError(#"{"central": {"preferredMTU": 185.5}, "peripheral": {}, "steps": []}"#))
        #expect(error.kind == .wrongType(expected: "an integer"))
        #expect(error.path == "central.preferredMTU")
        let profileError = try #require(
            S.loadError(#"{"peripheral": {"preferredMTU": "185"}, "steps": []}"#))
        #expect(profileError.kind == .wrongType(expected: "an integer"))
        #expect(profileError.path == "peripheral.preferredMTU")
    }
}

extension SharedFormatCompatibilityTests {
    @Test(arguments: ["600", "70000", "1e30"])
    func aReadRequestFarBeyondTheValueIsAnsweredWithInvalidOffset(_ offset: String) async throws {
        let trace = try await S.run(
            S.inline(
                steps: "[\(S.connected), "
                    + #"{"op": "readRequest", "char": "loc", "offset": \#(offset)}, "#
                    + #"{"op": "readRequest", "char": "dyn", "offset": \#(offset)}]"#))
        for record in trace.records[3...] {
            #expect(!record.ok)
            #expect(record.error == ScenarioTrace.TraceError(domain: "att", code: 7, name: "invalidOffset"))
        }
    }

    @Test func aNegativeReadRequestOffsetIsStillRefused() throws {
        let error = try #require(
            S.loadError(S.inline(steps: #"[{"op": "readRequest", "char": "loc", "offset": -1}]"#)))
        #expect(error.kind == .valueOutOfRange)
        #expect(error.path == "steps[0].offset")
    }
}

extension SharedFormatCompatibilityTests {
    @Test func anExpectationMayNameTheStepAndOpAndTheyAreComparedWithTheTrace() async throws {
        func read(expecting expect: String) -> String {
            S.inline(steps: "[\(S.connected), " + #"{"op": "read", "char": "loc", "expect": "# + expect + "}]")
        }
        #expect(try await S.run(read(expecting: #"{"step": 3, "op": "read"}"#)).passed)
        let wrong = try await S.run(read(expecting: #"{"step": 2, "op": "write"}"#))
        #expect(
            wrong.failures.map(\.mismatches) == [[#"expected step 2, got 3"#, #"expected op "write", got "read""#]])
    }
}

extension SharedFormatCompatibilityTests {
    struct NestedTypo: CustomTestStringConvertible, Sendable {
        let expect: String
        let key: String
        let path: String
        let fix: String
        var testDescription: String { expect }
    }

    static let nestedTypos = [
        NestedTypo(
            expect: #"{"reason": {"centrl": null}}"#, key: "centrl", path: "steps[3].expect.reason.centrl",
            fix: #"did you mean "central"? use one of central, peripheral"#),
        NestedTypo(
            expect: #"{"error": {"nmae": null}}"#, key: "nmae", path: "steps[3].expect.error.nmae",
            fix: #"did you mean "name"? use one of domain, code, name"#),
        NestedTypo(
            expect: #"{"reason": {"central": {"cod": 7}}}"#, key: "cod", path: "steps[3].expect.reason.central.cod",
            fix: "use one of domain, code, name"),
        NestedTypo(
            expect: #"{"reason": {"peripheral": {"unsubscribe": []}}}"#, key: "unsubscribe",
            path: "steps[3].expect.reason.peripheral.unsubscribe", fix: "use one of unsubscribed"),
        NestedTypo(
            expect: #"{"discovered": [{"localname": null}]}"#, key: "localname",
            path: "steps[3].expect.discovered[0].localname", fix: #"did you mean "localName"?"#),
        NestedTypo(
            expect: #"{"discovered": {"services": [{"characteristics": [{"descriptor": null}]}]}}"#,
            key: "descriptor", path: "steps[3].expect.discovered.services[0].characteristics[0].descriptor",
            fix: #"did you mean "descriptors"?"#),
    ]

    @Test(arguments: nestedTypos)
    func aMisspeltKeyInANestedExpectationIsRefusedWhenTheFileIsRead(_ typo: NestedTypo) throws {
        let json = S.inline(
            steps: "[\(S.connected), " + #"{"op": "disconnect", "by": "peripheral", "expect": "# + typo.expect + "}]")
        let error = try #require(S.loadError(json))
        #expect(error.kind == .unknownField(typo.key))
        #expect(error.path == typo.path)
        #expect(error.fix.contains(typo.fix))
    }

    @Test func nestedExpectationsWithTheTraceFieldsKeysStillLoadAndMatch() async throws {
        let expect = #"{"reason": {"central": {"name": "peripheralDisconnected"}, "peripheral": {"unsubscribed": []}}}"#
        let trace = try await S.run(
            S.inline(
                steps:
                    "[{\"op\": \"scan\", \"expect\": {\"discovered\": [{\"name\": \"Sensor\", \"serviceData\": null}]}}, "
                    + #"{"op": "connect"}, {"op": "discover"}, {"op": "disconnect", "by": "peripheral", "expect": "#
                    + expect + "}]"))
        #expect(trace.passed)
    }
}

extension SharedFormatCompatibilityTests {
    /// The central's reason on the fault step, or on the step after it that saw the link drop.
    func centralReason(fault: String) async throws -> [TraceValue?] {
        let trace = try await S.run(
            S.inline(steps: "[\(S.connected), \(fault), " + #"{"op": "advance", "by": "10s"}]"#))
        #expect(trace.records[3].ok)
        return trace.records[3...].map { record in
            guard case .object(let reason)? = S.field(record, "reason") else { return nil }
            return reason.first { $0.key == "central" }?.value
        }
    }

    static let peripheralDisconnected = TraceValue.object([
        ("domain", .string("cb")), ("code", .int(7)), ("name", .string("peripheralDisconnected")),
    ])
    static let connectionTimeout = TraceValue.object([
        ("domain", .string("cb")), ("code", .int(6)), ("name", .string("connectionTimeout")),
    ])

    @Test func aDisconnectFaultEndsTheLinkWithItsError() async throws {
        let reasons = try await centralReason(
            fault: #"{"op": "fault", "kind": "disconnect", "error": "peripheralDisconnected"}"#)
        #expect(reasons.compactMap { $0 } == [Self.peripheralDisconnected])
    }

    @Test(arguments: ["reset", "outOfRange"])
    func aResetOrOutOfRangeFaultTakesAnErrorAndStillEndsTheLinkWithConnectionTimeout(_ kind: String) async throws {
        let reasons = try await centralReason(
            fault: #"{"op": "fault", "kind": "\#(kind)", "error": "peripheralDisconnected"}"#)
        #expect(reasons.compactMap { $0 } == [Self.connectionTimeout])
    }

    @Test func aPowerOffFaultTakesAnErrorAndTurnsTheManagerOff() async throws {
        let trace = try await S.run(
            S.inline(steps: "[\(S.connected), " + #"{"op": "fault", "kind": "powerOff", "error": 7}]"#))
        #expect(trace.records[3].ok)
        #expect(trace.records[3].state == .poweredOff)
    }

    @Test func aFaultErrorThatIsNoCoreBluetoothErrorIsStillRefused() throws {
        let error = try #require(
            S.loadError(S.inline(steps: #"[{"op": "fault", "kind": "reset", "error": "sunspots"}]"#)))
        #expect(error.kind == .unknownValue("sunspots"))
        #expect(error.path == "steps[0].error")
    }

    /// The keys an expected object may have are listed apart from the code that writes traces:
    /// every structured value a committed trace has, expected as it is, must load (else a new
    /// key in a trace would make a faithful expectation of it an error).
    @Test func everyStructuredValueACommittedTraceHasLoadsAsAnExpectation() throws {
        let folder = S.fixturesFolder.appendingPathComponent("expected")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".jsonl") }
        var checked = 0
        for file in files.sorted() {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                for key in ["error", "reason", "discovered"] {
                    guard let value = record[key] else { continue }
                    let expected = try #require(
                        String(
                            data: JSONSerialization.data(withJSONObject: value, options: .fragmentsAllowed),
                            encoding: .utf8))
                    let json = """
                        {"peripheral": {"bundled": "battery"}, "steps": [{"op": "scan", "expect": {"\(key)": \(expected)}}]}
                        """
                    #expect(throws: Never.self, "\(file): \(key) \(expected)") { try S.scenario(json) }
                    checked += 1
                }
            }
        }
        #expect(checked > 20)
    }
}
