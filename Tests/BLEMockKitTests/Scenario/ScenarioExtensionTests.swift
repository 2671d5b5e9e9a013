import BLECore
import BLEMockKit
import Foundation
import Testing

private typealias S = ScenarioTestSupport

/// The format's extensions: descriptors, a single Read Request, indications chosen on a
/// characteristic with both kinds, an MTU preference per connection, the central's pairing,
/// and the peripheral's side of writes and disconnections. Each is also in the bundled
/// `gatt-details` scenario and its golden trace.
@Suite("Scenario format extensions", .timeLimit(.minutes(10)))
struct ScenarioExtensionTests {
    @Test func readWithLongFalseSendsOneReadRequest() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected), {"op": "write", "char": "dyn", "value": {"pattern": 100}},
                     {"op": "read", "char": "dyn"}, {"op": "read", "char": "dyn", "long": false},
                     {"op": "read", "char": "dyn", "long": true}]
                    """, extra: #" "central": {"preferredMTU": 23},"#))
        #expect(trace.records[4].value?.count == 100)
        #expect(trace.records[4].attPDUs == 10)
        #expect(trace.records[5].op == "read")
        #expect(trace.records[5].value == Data((0..<22).map { UInt8($0) }))
        #expect(trace.records[5].attPDUs == 2)
        #expect(trace.records[6].value?.count == 100)
    }

    @Test func descriptorsAreReadAndWrittenAsTheStackDoes() async throws {
        let json = """
            {"peripheral": {"name": "D", "services": [{"uuid": "180D", "characteristics": [
               {"id": "c", "uuid": "2A39", "properties": ["write", "notify"], "permissions": ["writeable"],
                "descriptors": [{"uuid": "2901", "value": {"utf8": "Ctl"}}]}]}]},
             "steps": [\(S.connected),
               {"op": "readDescriptor", "char": "c", "descriptor": "2901"},
               {"op": "readDescriptor", "char": "c", "descriptor": "2902"},
               {"op": "subscribe", "char": "c"},
               {"op": "readDescriptor", "char": "c", "descriptor": "2902"},
               {"op": "writeDescriptor", "char": "c", "descriptor": "2901", "value": {"hex": "00"}},
               {"op": "writeDescriptor", "char": "c", "descriptor": "2902", "value": {"hex": "0100"}},
               {"op": "readDescriptor", "char": "c", "descriptor": "2904"}]}
            """
        let trace = try await S.run(json)
        #expect(trace.records[3].value == Data("Ctl".utf8))
        #expect(trace.records[3].attPDUs == 2)
        #expect(trace.records[4].value == Data([0, 0]))
        #expect(trace.records[6].value == Data([1, 0]))
        #expect(trace.records[7].error == .init(domain: "att", code: 3, name: "writeNotPermitted"))
        #expect(trace.records[8].error?.name == "clientConfigurationWrite")
        #expect(trace.records[8].attPDUs == 0)
        #expect(
            trace.records[9].error
                == .init(
                    domain: "kit", code: ScenarioTrace.TraceError.kitNames.firstIndex(of: "descriptorNotFound")!,
                    name: "descriptorNotFound"))
        #expect(trace.records[9].attPDUs == 0)
    }

    @Test func subscribingWithIndicateTrueEnablesIndicationsWhereBothExist() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected), {"op": "subscribe", "char": "both", "indicate": true},
                     {"op": "notify", "char": "both", "value": {"hex": "01"}},
                     {"op": "unsubscribe", "char": "both"}, {"op": "subscribe", "char": "both"},
                     {"op": "indicate", "char": "both", "value": {"hex": "02"}},
                     {"op": "subscribe", "char": "hrm", "indicate": true},
                     {"op": "notify", "char": "hrm", "value": {"hex": "03"}}]
                    """))
        // A notify op to a central that enabled indications sends an indication (2 PDUs).
        #expect(trace.records[4].received == [Data([1])])
        #expect(trace.records[4].attPDUs == 2)
        // Without the flag a characteristic with both kinds gets notifications (1 PDU), even
        // from an indicate op.
        #expect(trace.records[7].received == [Data([2])])
        #expect(trace.records[7].attPDUs == 1)
        // On a characteristic that only notifies, the flag changes nothing.
        #expect(trace.records[8].ok)
        #expect(trace.records[9].attPDUs == 1)
    }

    @Test func aSecondSubscribeOfTheOtherKindSwitchesTheUpdatesToIt() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected), {"op": "subscribe", "char": "both"},
                     {"op": "subscribe", "char": "both", "indicate": true},
                     {"op": "readDescriptor", "char": "both", "descriptor": "2902"},
                     {"op": "notify", "char": "both", "value": {"hex": "06"}},
                     {"op": "subscribe", "char": "both"},
                     {"op": "readDescriptor", "char": "both", "descriptor": "2902"},
                     {"op": "indicate", "char": "both", "value": {"hex": "07"}},
                     {"op": "subscribe", "char": "both"}]
                    """))
        #expect(trace.passed, "\(trace.failures)")
        // The switch is a CCCD write (a request and its response), and the descriptor holds the
        // new kind's bit: updates go as indications (2 PDUs with the confirmation).
        #expect(trace.records[4].attPDUs == 2)
        #expect(trace.records[5].value == Data([2, 0]))
        #expect(trace.records[6].received == [Data([6])])
        #expect(trace.records[6].attPDUs == 2)
        // And back to notifications (1 PDU), even from an indicate op.
        #expect(trace.records[8].value == Data([1, 0]))
        #expect(trace.records[9].received == [Data([7])])
        #expect(trace.records[9].attPDUs == 1)
        // The log has a subscribe entry per CCCD write that changed it, none for the last (the same kind).
        let subscribes = trace.log.filter { $0.kind == .subscribe }.map(\.detail)
        #expect(subscribes == ["notify", "indicate", "notify"])
    }

    @Test func setMTUChangesTheNextConnectionsNegotiationOnly() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected), {"op": "setMTU", "mtu": 100}, {"op": "read", "char": "loc"},
                     {"op": "disconnect"}, {"op": "connect"},
                     {"op": "setMTU", "mtu": 50, "role": "peripheral"}, {"op": "disconnect"}, {"op": "connect"}]
                    """))
        #expect(trace.records[1].mtu == 517)
        #expect(trace.records[4].mtu == 517)
        #expect(trace.records[6].mtu == 100)
        #expect(trace.records[6].maxWriteWithoutResponse == 97)
        #expect(trace.records[7].mtu == 100)
        #expect(trace.records[9].mtu == 50)
    }

    @Test(
        "central.pairing sets what the central does when an access needs encryption",
        arguments: [
            (#""never""#, String?("insufficientAuthentication"), Duration.zero),
            (#""onFirstAccess""#, nil, .seconds(1)),
            (#"{"after": "250ms", "outcome": "rejected"}"#, "insufficientAuthentication", .milliseconds(250)),
            (#"{"outcome": "timesOut"}"#, "encryptionTimedOut", .seconds(1)),
        ])
    func pairing(json: String, error: String?, pairingTime: Duration) async throws {
        let scenario = """
            {"mode": "fast", "central": {"pairing": \(json)},
             "peripheral": {"name": "Lock", "services": [{"uuid": "FE00", "characteristics": [
               {"id": "s", "uuid": "FE01", "properties": ["read"], "permissions": ["readEncryptionRequired"],
                "value": {"hex": "2a"}}]}]},
             "steps": [\(S.connected), {"op": "read", "char": "s"}]}
            """
        let trace = try await S.run(scenario)
        #expect(trace.records[3].error?.name == error)
        #expect(trace.records[3].value == (error == nil ? Data([0x2A]) : nil))
        #expect(trace.records[3].time - trace.records[2].time == pairingTime)
    }

    @Test func aWriteRecordsWhatThePeripheralStored() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected), {"op": "write", "char": "dyn", "value": {"hex": "0a"}},
                     {"op": "write", "char": "dyn", "value": {"zeros": 513}},
                     {"op": "write", "char": "loc", "value": {"hex": "02"}}]
                    """))
        #expect(trace.records[3].stored == Data([0x0A]))
        #expect(S.field(trace.records[3], "stored") == .string("0a"))
        // A refused write leaves the stored value alone, and says so.
        #expect(trace.records[4].stored == Data([0x0A]))
        #expect(trace.records[5].stored == Data([0x01]))
        #expect(trace.records[2].stored == nil)
    }

    @Test func aLostLinkTellsWhatThePeripheralSaw() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected), {"op": "subscribe", "char": "hrm"}, {"op": "subscribe", "char": "ind"},
                     {"op": "fault", "kind": "disconnect"}]
                    """))
        #expect(
            trace.records[5].reason?.json
                == #"{"central":{"domain":"cb","code":6,"name":"connectionTimeout"},"#
                + #""peripheral":{"unsubscribed":["2A37","FFF2"]}}"#)
    }

    @Test func badValuesOfTheNewFieldsAreRejectedWithWhereAndWhy() throws {
        let mtu = try #require(S.loadError(S.inline(steps: #"[{"op": "setMTU", "mtu": 600}]"#)))
        #expect(mtu.path == "steps[0].mtu")
        let missing = try #require(S.loadError(S.inline(steps: #"[{"op": "setMTU"}]"#)))
        #expect(missing.kind == .missingField("mtu"))
        let descriptor = try #require(
            S.loadError(S.inline(steps: #"[{"op": "readDescriptor", "char": "hrm", "descriptor": "29X1"}]"#)))
        #expect(descriptor.path == "steps[0].descriptor")
        let long = try #require(S.loadError(S.inline(steps: #"[{"op": "read", "char": "loc", "long": "no"}]"#)))
        #expect(long.path == "steps[0].long")
        let pairing = try #require(
            S.loadError(S.inline(steps: "[]", extra: #" "central": {"pairing": "sometimes"},"#)))
        #expect(pairing.kind == .unknownValue("sometimes"))
        let outcome = try #require(
            S.loadError(S.inline(steps: "[]", extra: #" "central": {"pairing": {"outcome": "maybe"}},"#)))
        #expect(outcome.path == "central.pairing.outcome")
        let indicate = try #require(
            S.loadError(S.inline(steps: #"[{"op": "unsubscribe", "char": "hrm", "indicate": true}]"#)))
        #expect(indicate.kind == .unknownField("indicate"))
    }
}
