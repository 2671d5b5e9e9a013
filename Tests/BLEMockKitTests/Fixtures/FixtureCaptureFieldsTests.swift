import BLECore
import BLEMockKit
import Foundation
import Testing

/// The profile fields `mockble import` writes: captured handles, and the initial value of a
/// dynamic characteristic; and the `setValue` step that changes that value later.
@Suite("Peripheral profiles: captured handles and initial values", .timeLimit(.minutes(10)))
struct FixtureCaptureFieldsTests {
    typealias S = ScenarioTestSupport

    static let captured = """
        {"services": [{"uuid": "180D", "handle": 16, "endHandle": 22, "characteristics": [
          {"id": "hrm", "uuid": "2A37", "properties": ["read", "notify"], "permissions": ["readable"],
           "handle": 17, "valueHandle": 18, "initialValue": {"hex": "0648"},
           "descriptors": [{"uuid": "2901", "value": {"utf8": "Rate"}, "handle": 20}]},
          {"id": "loc", "uuid": "2A38", "properties": ["read"], "permissions": ["readable"],
           "descriptors": [{"uuid": "2901", "value": {"utf8": "Where"}}]}
        ]}]}
        """

    @Test func handlesAndInitialValuesAreRead() throws {
        let profile = try PeripheralProfile(json: Data(Self.captured.utf8))
        let service = profile.services[0]
        #expect(service.handle == 16)
        #expect(service.endHandle == 22)
        let hrm = service.characteristics[0]
        #expect(hrm.handle == 17)
        #expect(hrm.valueHandle == 18)
        #expect(hrm.initialValue == Data([0x06, 0x48]))
        #expect(hrm.descriptorHandles == [20])
        #expect(!hrm.isStatic)
        let loc = service.characteristics[1]
        #expect(loc.handle == nil && loc.valueHandle == nil && loc.initialValue == nil)
        #expect(loc.descriptorHandles.isEmpty)
    }

    @Test func theHandleFieldsAreOptional() throws {
        let profile = try PeripheralProfile(json: Data(#"{"services": [{"uuid": "180D"}]}"#.utf8))
        #expect(profile.services[0].handle == nil)
        #expect(profile.services[0].endHandle == nil)
    }

    @Test func aDynamicCharacteristicAnswersReadsWithItsInitialValue() async throws {
        let json = """
            {"peripheral": \(Self.captured),
             "steps": [\(S.connected), {"op": "read", "char": "hrm"}]}
            """
        let trace = await ScenarioRunner(try Scenario(json: Data(json.utf8))).run()
        #expect(trace.records[3].value == Data([0x06, 0x48]))
    }

    @Test func setValueChangesWhatTheNextReadGets() async throws {
        let steps = """
            [\(S.connected), {"op": "setValue", "char": "dyn", "value": {"hex": "0a0b"}},
             {"op": "read", "char": "dyn", "expect": {"value": "0A0B"}}]
            """
        let trace = try await S.run(S.inline(steps: steps))
        #expect(trace.passed, "\(trace.failures)")
        #expect(trace.records[3].ok)
        #expect(trace.records[3].attPDUs == nil)
        #expect(trace.records[4].value == Data([0x0A, 0x0B]))
    }

    @Test func setValueOnAStaticCharacteristicFailsWithStaticCharacteristic() async throws {
        let steps = #"[{"op": "setValue", "char": "loc", "value": {"hex": "02"}}]"#
        let trace = try await S.run(S.inline(steps: steps))
        #expect(trace.records[0].ok == false)
        #expect(trace.records[0].error?.name == "staticCharacteristic")
        #expect(trace.text(for: try S.scenario(S.inline(steps: steps))).contains("setValue loc"))
    }

    @Test func setValueShowsInTheMermaidDiagram() async throws {
        let scenario = try S.scenario(
            S.inline(steps: #"[{"op": "setValue", "char": "dyn", "value": {"hex": "01"}}]"#))
        let trace = await ScenarioRunner(scenario).run()
        #expect(trace.mermaid(for: scenario).contains("Note over P: setValue dyn 01 at 0s"))
    }

    @Test func setValueNeedsAValueOfAtMost512Bytes() throws {
        let missing = S.loadError(S.inline(steps: #"[{"op": "setValue", "char": "dyn"}]"#))
        #expect(missing?.kind == .missingField("value"))
        let long = S.loadError(S.inline(steps: #"[{"op": "setValue", "char": "dyn", "value": {"zeros": 513}}]"#))
        #expect(long?.kind == .valueOutOfRange)
        #expect(long?.path == "steps[0].value")
        let unknown = S.loadError(S.inline(steps: #"[{"op": "setValue", "char": "nope", "value": {"hex": "01"}}]"#))
        #expect(unknown?.kind == .unknownCharacteristic("nope"))
    }

    static let characteristic = "services[0].characteristics[0]"

    @Test func aStaticCharacteristicCannotHaveAnInitialValue() {
        let error = FixtureTestSupport.profileError(
            FixtureTestSupport.withCharacteristic(
                #"{"uuid": "2A38", "properties": ["read"], "permissions": [], "value": {"hex": "01"}, "#
                    + #""initialValue": {"hex": "02"}}"#))
        #expect(error?.kind == .unknownField("initialValue"))
        #expect(error?.path == Self.characteristic + ".initialValue")
        #expect(error?.fix.contains("remove \"value\"") == true)
    }

    @Test func anInitialValueHoldsAtMost512Bytes() {
        let error = FixtureTestSupport.profileError(
            FixtureTestSupport.withCharacteristic(
                #"{"uuid": "2A38", "properties": ["read"], "permissions": [], "initialValue": {"zeros": 513}}"#))
        #expect(error?.kind == .valueOutOfRange)
        #expect(error?.path == Self.characteristic + ".initialValue")
    }

    @Test(arguments: [
        (#"{"uuid": "180D", "handle": 0}"#, "services[0].handle"),
        (#"{"uuid": "180D", "handle": 65536}"#, "services[0].handle"),
        (#"{"uuid": "180D", "handle": 5, "endHandle": 4}"#, "services[0].endHandle"),
    ])
    func serviceHandlesOutsideTheirRangeAreRejected(service: String, path: String) {
        let error = FixtureTestSupport.profileError(#"{"services": ["# + service + "]}")
        #expect(error?.kind == .valueOutOfRange)
        #expect(error?.path == path)
    }

    @Test(arguments: [
        (#""handle": 3, "valueHandle": 3"#, ".valueHandle"),
        (#""valueHandle": 0"#, ".valueHandle"),
        (#""handle": -1"#, ".handle"),
    ])
    func characteristicHandlesOutsideTheirRangeAreRejected(fields: String, path: String) {
        let error = FixtureTestSupport.profileError(
            FixtureTestSupport.withCharacteristic(
                #"{"uuid": "2A38", "properties": ["read"], "permissions": [], "# + fields + "}"))
        #expect(error?.kind == .valueOutOfRange)
        #expect(error?.path == Self.characteristic + path)
    }

    @Test func aDescriptorHandleMustBeAnAttributeHandle() {
        let error = FixtureTestSupport.profileError(
            FixtureTestSupport.withCharacteristic(
                #"{"uuid": "2A38", "properties": ["read"], "permissions": [], "#
                    + #""descriptors": [{"uuid": "2901", "value": {"utf8": "x"}, "handle": "7"}]}"#))
        #expect(error?.kind == .wrongType(expected: "an integer"))
        #expect(error?.path == Self.characteristic + ".descriptors[0].handle")
    }
}
