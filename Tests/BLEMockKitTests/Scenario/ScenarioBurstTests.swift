import BLECore
import BLEMockKit
import Foundation
import Testing

private typealias S = ScenarioTestSupport

/// `write` and `notify` with `values` (back to back, several per connection event), and
/// `advance` with `to` and `from` (to a time, not by a gap).
@Suite("Scenario bursts and advances to a time", .timeLimit(.minutes(10)))
struct ScenarioBurstTests {
    static func scenario(_ steps: String, mode: String = "realistic") -> String {
        """
        {"name": "burst", "mode": "\(mode)", "seed": 5, "central": {"preferredMTU": 185},
         "peripheral": {"name": "Watch", "services": [{"uuid": "FFF0", "characteristics": [
           {"id": "up", "uuid": "FFF1", "properties": ["writeWithoutResponse"], "permissions": ["writeable"]},
           {"id": "down", "uuid": "FFF2", "properties": ["notify"], "permissions": []}
         ]}]},
         "steps": [{"op": "scan"}, {"op": "connect"}, {"op": "discover"}, {"op": "subscribe", "char": "down"},
                   \(steps)]}
        """
    }

    static let values = (0..<8).map { #"{"pattern": \#(100 + $0)}"# }.joined(separator: ", ")

    @Test func aBurstCrossesSeveralPacketsPerConnectionEventWhereSingleStepsTakeOneEventEach() async throws {
        let singles = (0..<8).map {
            #"{"op": "write", "char": "up", "value": {"pattern": \#(100 + $0)}, "withResponse": false}"#
        }
        let burst = try await S.run(
            Self.scenario(
                #"{"op": "write", "char": "up", "values": [\#(Self.values)], "withResponse": false, "expect": {"ok": true}}, "#
                    + #"{"op": "notify", "char": "down", "values": [\#(Self.values)], "expect": {"ok": true}}"#))
        let one = try await S.run(Self.scenario(singles.joined(separator: ", ")))
        #expect(burst.passed && one.passed, "\(burst.failures) \(one.failures)")
        let write = burst.records[4]
        let notify = burst.records[5]
        #expect(write.attPDUs == 8 && notify.attPDUs == 8)
        #expect(write.stored == Data((0..<107).map { UInt8($0) }))
        #expect(notify.received == (0..<8).map { n in Data((0..<(100 + n)).map { UInt8($0) }) })
        // 4 packets per connection event of about 30 ms: two events, not eight.
        let duration = { (record: ScenarioTrace.Record) in record.time - (record.started ?? record.time) }
        #expect(duration(write) < .milliseconds(70) && duration(notify) < .milliseconds(70))
        let singlesTime = one.records.last!.time - one.records[3].time
        #expect(singlesTime > .milliseconds(200))
    }

    @Test func aBurstInFastModeReceivesEveryValueAtOnce() async throws {
        let trace = try await S.run(
            Self.scenario(
                #"{"op": "notify", "char": "down", "values": [{"hex": "01"}, {"hex": "0203"}]}"#, mode: "fast"))
        #expect(trace.passed)
        #expect(trace.records[4].received == [Data([1]), Data([2, 3])])
        #expect(trace.records[4].time == .zero)
    }

    @Test func advanceToATimeWaitsOnlyForWhatRemainsAfterTheConnectionOrTheStart() async throws {
        let trace = try await S.run(
            Self.scenario(
                #"{"op": "advance", "to": "1s", "from": "connect"}, {"op": "advance", "to": "500ms", "from": "connect"}, "#
                    + #"{"op": "advance", "to": "3s", "from": "start"}"#))
        #expect(trace.passed)
        let connected = trace.records[1].time
        #expect(trace.records[4].time == connected + .seconds(1))
        #expect(trace.records[5].time == trace.records[4].time)
        #expect(trace.records[6].time == .seconds(3))
    }

    @Test func badBurstsAndAdvancesAreRejectedSayingWhich() throws {
        let withResponse = try #require(
            S.loadError(Self.scenario(#"{"op": "write", "char": "up", "values": [{"hex": "01"}]}"#)))
        #expect(withResponse.kind == .unknownField("values"))
        let both = try #require(
            S.loadError(
                Self.scenario(
                    #"{"op": "notify", "char": "down", "value": {"hex": "01"}, "values": [{"hex": "01"}]}"#)))
        #expect(both.kind == .unknownField("value"))
        let empty = try #require(S.loadError(Self.scenario(#"{"op": "notify", "char": "down", "values": []}"#)))
        #expect(empty.kind == .wrongType(expected: "at least one byte value"))
        let noOrigin = try #require(S.loadError(Self.scenario(#"{"op": "advance", "to": "1s"}"#)))
        #expect(noOrigin.kind == .missingField("from"))
        let byAndTo = try #require(
            S.loadError(Self.scenario(#"{"op": "advance", "by": "1s", "to": "1s", "from": "start"}"#)))
        #expect(byAndTo.kind == .unknownField("by"))
        let fromAlone = try #require(S.loadError(Self.scenario(#"{"op": "advance", "by": "1s", "from": "start"}"#)))
        #expect(fromAlone.kind == .unknownField("from"))
        let origin = try #require(S.loadError(Self.scenario(#"{"op": "advance", "to": "1s", "from": "then"}"#)))
        #expect(origin.kind == .unknownValue("then"))
    }
}
