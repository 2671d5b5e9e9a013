import BLECore
import BLEMockKit
import Foundation
import Testing

@Suite("Scenario runner", .timeLimit(.minutes(10)))
struct ScenarioRunnerTests {
    typealias S = ScenarioTestSupport

    @Test func connectReportsTheNegotiatedMTUAndMaximumWriteLengths() async throws {
        let trace = try await S.run(
            S.inline(steps: #"[{"op": "scan"}, {"op": "connect"}]"#, extra: #" "central": {"preferredMTU": 100},"#))
        let connect = trace.records[1]
        #expect(connect.ok)
        #expect(connect.mtu == 100)
        #expect(connect.maxWriteWithoutResponse == 97)
        #expect(connect.maxWriteWithResponse == 512)
        #expect(connect.attPDUs == 2)
        #expect(trace.records[0].mtu == nil)
    }

    @Test func theLinkMTUIsTheSmallerOfBothPreferences() async throws {
        let json = """
            {"central": {"preferredMTU": 300}, "peripheral": {"preferredMTU": 64, "services": []},
             "steps": [{"op": "scan"}, {"op": "connect"}]}
            """
        let trace = await ScenarioRunner(try Scenario(json: Data(json.utf8))).run()
        #expect(trace.records[1].mtu == 64)
    }

    @Test func discoverDescribesServicesCharacteristicsAndDescriptors() async throws {
        let trace = try await S.run(S.inline(steps: "[\(S.connected)]"))
        let discovered = try #require(trace.records[2].discovered)
        #expect(
            discovered.json.hasPrefix(
                #"{"services":[{"uuid":"180D","primary":true,"characteristics":[{"uuid":"2A37","properties":16,"#
                    + #""descriptors":["2902"]},{"uuid":"2A38","properties":2,"descriptors":[]}"#))
        #expect(trace.records[2].attPDUs ?? 0 > 0)
    }

    @Test func scanDescribesEachDiscoveryWithTheAdvertisementsFields() async throws {
        let json = """
            {"peripheral": {"name": "Tag", "rssi": -70, "advertisement": {"localName": "T", "serviceUUIDs": ["180F"],
               "manufacturerData": {"hex": "4c00"}, "serviceData": {"180F": {"hex": "64"}}, "txPowerLevel": 4,
               "isConnectable": false, "solicitedServiceUUIDs": ["1812"], "overflowServiceUUIDs": ["FFF0"]},
               "services": []},
             "steps": [{"op": "scan", "services": ["180F", "FFF0"]}, {"op": "scan", "services": ["1234"]}]}
            """
        let trace = await ScenarioRunner(try Scenario(json: Data(json.utf8))).run()
        #expect(
            trace.records[0].discovered?.json
                == #"[{"name":"Tag","rssi":-70,"localName":"T","serviceUUIDs":["180F"],"#
                + #""overflowServiceUUIDs":["FFF0"],"solicitedServiceUUIDs":["1812"],"manufacturerData":"4c00","#
                + #""serviceData":{"180F":"64"},"txPowerLevel":4,"isConnectable":false}]"#)
        #expect(trace.records[1].discovered == .array([]))
        #expect(trace.records[1].time == .seconds(10))
    }

    @Test func readsWritesAndReadRequestsCarryTheirValuesAndCosts() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected),
                     {"op": "write", "char": "dyn", "value": {"pattern": 600}},
                     {"op": "write", "char": "dyn", "value": {"hex": "0a0b0c"}},
                     {"op": "read", "char": "dyn"},
                     {"op": "readRequest", "char": "dyn", "offset": 1},
                     {"op": "readRequest", "char": "dyn", "offset": 3},
                     {"op": "readRequest", "char": "dyn", "offset": 4}]
                    """))
        #expect(trace.records[3].error == .init(domain: "att", code: 0x0D, name: "invalidAttributeValueLength"))
        #expect(S.field(trace.records[3], "attError") == .int(13))
        #expect(trace.records[4].ok)
        #expect(trace.records[5].value == Data([0x0A, 0x0B, 0x0C]))
        #expect(trace.records[6].value == Data([0x0B, 0x0C]))
        #expect(trace.records[7].value == Data())
        #expect(trace.records[8].error?.code == 7)
        #expect(trace.records[6...].allSatisfy { $0.attPDUs == 2 })
    }

    @Test func notificationsReachOnlySubscribedCentralsAndIndicationsCostTwoPDUs() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected),
                     {"op": "notify", "char": "hrm", "value": {"hex": "01"}},
                     {"op": "subscribe", "char": "hrm"},
                     {"op": "notify", "char": "hrm", "value": {"hex": "02"}},
                     {"op": "subscribe", "char": "ind"},
                     {"op": "indicate", "char": "ind", "value": {"hex": "03"}},
                     {"op": "unsubscribe", "char": "hrm"},
                     {"op": "notify", "char": "hrm", "value": {"hex": "04"}}]
                    """))
        #expect(trace.records[3].received == [])
        #expect(trace.records[3].attPDUs == 0)
        #expect(trace.records[5].received == [Data([2])])
        #expect(trace.records[5].attPDUs == 1)
        #expect(trace.records[7].received == [Data([3])])
        #expect(trace.records[7].attPDUs == 2)
        #expect(trace.records[9].received == [])
    }

    @Test func notificationsArrivingDuringLaterStepsAreReportedThere() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected), {"op": "subscribe", "char": "hrm"},
                     {"op": "notify", "char": "hrm", "value": {"hex": "05"}}, {"op": "advance", "by": "1s"}]
                    """, mode: "realistic"))
        #expect(trace.records[4].received == [Data([5])])
        #expect(trace.records[5].received == nil)
        #expect(trace.records[5].time - trace.records[4].time == .seconds(1))
    }

    @Test func readRSSIAndStateStepsReportWhatTheyRead() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [{"op": "setState", "state": "poweredOff"}, {"op": "scan"}, {"op": "powerOn"},
                     {"op": "setState", "state": "unsupported", "role": "peripheral"}, {"op": "scan"}]
                    """))
        #expect(trace.records[0].state == .poweredOff)
        #expect(trace.records[1].error == .init(domain: "kit", code: 0, name: "notPoweredOn"))
        #expect(trace.records[2].state == .poweredOn)
        #expect(trace.records[3].state == .unsupported)
        #expect(trace.records[4].discovered == .array([]))
    }

    @Test(arguments: ["fast", "realistic"])
    func aStepCanExpectTheATTTransactionTimeout(mode: String) async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected), {"op": "inject", "target": "write", "neverAnswers": true},
                     {"op": "write", "char": "ctl", "value": {"zeros": 100},
                      "expect": {"ok": false, "error": {"domain": "cb", "code": 6, "name": "connectionTimeout"}}},
                     {"op": "read", "char": "loc", "expect": {"ok": false, "error": "notConnected"}}]
                    """, mode: mode, seed: "4"))
        #expect(trace.passed, "\(trace.failures)")
        let timedOut = trace.records[4]
        let started = trace.records[3].time
        // In realistic mode the request leaves at a connection event after the step starts.
        #expect(timedOut.time - started >= .seconds(30))
        #expect(timedOut.time - started < .seconds(mode == "fast" ? 30.000_001 : 31))
        // A step expecting success where the timeout happens fails, naming the step.
        let failing = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected), {"op": "inject", "target": "read", "neverAnswers": true},
                     {"op": "read", "char": "loc", "expect": {"ok": true}}]
                    """, mode: mode, seed: "4"))
        #expect(failing.failures.map(\.step) == [4])
    }

    /// An `inject` naming a characteristic by its `id` fails operations on that characteristic
    /// only, not on another with its UUID (in another service): the id is the only way to name
    /// one of them. It used to fire on the first read of either.
    @Test(arguments: ["fast", "realistic"])
    func anInjectionAimedByIdFailsThatCharacteristicAloneNotAnotherWithItsUUID(mode: String) async throws {
        let trace = try await S.run(
            """
            {"name": "same-uuid", "mode": "\(mode)", "seed": 3,
             "peripheral": {"name": "Dup", "services": [
               {"uuid": "180D", "characteristics": [{"id": "a", "uuid": "2A19", "properties": ["read"],
                 "permissions": ["readable"], "value": {"hex": "aa"}}]},
               {"uuid": "180F", "characteristics": [{"id": "b", "uuid": "2A19", "properties": ["read"],
                 "permissions": ["readable"], "value": {"hex": "bb"}}]}]},
             "steps": [{"op": "scan"}, {"op": "connect"}, {"op": "discover"},
               {"op": "inject", "target": "read", "char": "a", "attError": 14},
               {"op": "read", "char": "b", "expect": {"ok": true, "value": "bb"}},
               {"op": "read", "char": "a", "expect": {"ok": false, "attError": 14}},
               {"op": "read", "char": "a", "expect": {"ok": true, "value": "aa"}}]}
            """)
        #expect(trace.passed, "\(trace.failures)")
    }

    @Test func anOperationNothingAnswersTimesOutAfterThirtySecondsAndDropsTheLink() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [\(S.connected), {"op": "inject", "target": "read", "neverAnswers": true},
                     {"op": "read", "char": "loc"}, {"op": "read", "char": "loc"}]
                    """))
        let stuck = trace.records[4]
        #expect(stuck.error == .init(domain: "cb", code: 6, name: "connectionTimeout"))
        #expect(stuck.time == .seconds(30))
        // The simulated stack's ATT transaction timeout dropped the link: the central's
        // disconnection carries no error, as iOS reports it (LinkTiming.attTransactionTimeout).
        #expect(
            stuck.reason
                == .object([
                    ("central", TraceValue.null),
                    ("peripheral", .object([("unsubscribed", .array([]))])),
                ]))
        #expect(trace.records[5].error?.name == "notConnected")
    }

    @Test func connectingToAPeripheralOutOfRangeWaitsForItsTimeout() async throws {
        let trace = try await S.run(
            S.inline(
                steps: """
                    [{"op": "scan"}, {"op": "fault", "kind": "outOfRange"}, {"op": "connect", "timeout": "3s"},
                     {"op": "fault", "kind": "inRange"}, {"op": "connect"}]
                    """))
        #expect(trace.records[2].error?.name == "connectionTimeout")
        #expect(trace.records[2].time == .seconds(3))
        #expect(trace.records[4].ok)
    }

    @Test func aConnectionThatNeverCompletesIsCancelledAfterThirtySeconds() async throws {
        let trace = try await S.run(
            S.inline(steps: #"[{"op": "scan"}, {"op": "fault", "kind": "outOfRange"}, {"op": "connect"}]"#))
        #expect(!trace.records[2].ok)
        #expect(trace.records[2].time == .seconds(30))
        // The session cancelled the attempt, as an app would: no link was up, so the peripheral
        // lost none (its `reason` has no `peripheral`), as for an attempt with a timeout.
        #expect(trace.records[2].error?.name == "operationCancelled")
        #expect(trace.records[2].reason == .object([("central", TraceValue.null)]))
        let timedOut = try await S.run(
            S.inline(
                steps: #"[{"op": "scan"}, {"op": "fault", "kind": "outOfRange"}, {"op": "connect", "timeout": "2s"}]"#))
        #expect(timedOut.records[2].reason?.json == #"{"central":{"domain":"cb","code":6,"name":"connectionTimeout"}}"#)
        let scenario = try S.scenario(
            S.inline(steps: #"[{"op": "scan"}, {"op": "fault", "kind": "outOfRange"}, {"op": "connect"}]"#))
        #expect(trace.text(for: scenario).contains("FAILED  cb 5 operationCancelled, attempt ended, 0 ATT PDUs"))
    }

    @Test func disconnectingWithoutALinkFailsAtOnce() async throws {
        let trace = try await S.run(
            S.inline(steps: #"[{"op": "disconnect"}, {"op": "disconnect", "by": "peripheral"}]"#))
        #expect(trace.records.map(\.error?.name) == ["notConnected", "notConnected"])
        #expect(trace.records[1].time == .zero)
    }

    @Test func operationsOnUndiscoveredCharacteristicsFailAsMisuse() async throws {
        let trace = try await S.run(
            S.inline(steps: #"[{"op": "scan"}, {"op": "connect"}, {"op": "read", "char": "loc"}]"#))
        #expect(trace.records[2].error == .init(domain: "kit", code: 1, name: "characteristicNotFound"))
    }

    @Test func aFailingSetupIsReportedAsAFailureBeforeTheFirstStep() async throws {
        var scenario = try S.scenario(S.inline(steps: #"[{"op": "scan"}]"#))
        scenario.peripheral.services[0].characteristics[1].value = Data(count: 600)
        let trace = await ScenarioRunner(scenario).run()
        #expect(trace.records.isEmpty)
        #expect(trace.failures.map(\.step) == [-1])
        #expect(trace.failures[0].description.hasPrefix("step -1 (setup): the peripheral could not be set up"))
    }

    @Test func stepsNamingCharacteristicsTheProfileLacksAreReportedAndNothingRuns() async throws {
        var scenario = try S.scenario(S.inline(steps: #"[{"op": "scan"}, {"op": "connect"}, {"op": "discover"}]"#))
        let services = scenario.peripheral.services.count
        let outside = ScenarioStep.CharacteristicReference(
            name: "ghost", serviceIndex: services, characteristicIndex: 0)
        let negative = ScenarioStep.CharacteristicReference(name: "loc", serviceIndex: 0, characteristicIndex: -1)
        scenario.steps += [
            ScenarioStep(index: 3, operation: .read(outside)),
            ScenarioStep(index: 4, operation: .notify(negative, value: Data([1]))),
            ScenarioStep(
                index: 5,
                operation: .inject(.init(target: .read, characteristic: outside, failure: .att(.unlikelyError)))),
        ]
        let trace = await ScenarioRunner(scenario).run()
        #expect(trace.records.isEmpty)
        #expect(trace.failures.map(\.step) == [3, 4, 5])
        #expect(trace.failures.map(\.op) == ["read", "notify", "inject"])
        #expect(
            trace.failures[0].mismatches == [
                "it names characteristic \"ghost\" as characteristic 0 of service \(services), which the peripheral's "
                    + "profile does not have (it has \(services) service\(services == 1 ? "" : "s"))"
            ])
        #expect(
            trace.failures[1].mismatches[0].hasPrefix(
                "it names characteristic \"loc\" as characteristic -1 of service 0"))
        // The same scenario with its references in range runs.
        scenario.steps.removeLast(3)
        #expect(await ScenarioRunner(scenario).run().failures.isEmpty)
    }

    @Test func configurationsFollowTheScenariosModeSeedAndLink() throws {
        let realistic = ScenarioRunner(
            try S.scenario(
                S.inline(
                    steps: "[]", mode: "realistic", seed: "9",
                    extra: #" "central": {"preferredMTU": 50}, "link": {"connectionInterval": "45ms"},"#)))
        #expect(realistic.seed == 9)
        #expect(realistic.bridgeConfiguration.seed == 9)
        #expect(realistic.bridgeConfiguration.timing.connectionInterval == .milliseconds(45))
        #expect(realistic.centralConfiguration.mtu == .fixed(50))
        #expect(realistic.centralConfiguration.seed == nil)
        #expect(realistic.centralConfiguration.stateTransition != .instant)
        #expect(realistic.peripheralConfiguration.seed == nil)
        #expect(realistic.peripheralConfiguration.mtu == .device)
        let fast = ScenarioRunner(try S.scenario(S.inline(steps: "[]")))
        #expect(fast.bridgeConfiguration.timing == .instant)
        #expect(fast.centralConfiguration == .fast)
    }

    @Test func aScenarioWithASlowIntervalGetsASupervisionTimeoutItAllows() throws {
        let slow = ScenarioRunner(
            try S.scenario(
                S.inline(steps: "[]", mode: "realistic", seed: "9", extra: #" "link": {"connectionInterval": "1s"},"#)))
        #expect(slow.bridgeConfiguration.timing.connectionInterval == .seconds(1))
        #expect(slow.bridgeConfiguration.timing.supervisionTimeout == .milliseconds(2_010))
    }
}
