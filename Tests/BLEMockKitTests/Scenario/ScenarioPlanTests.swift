import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("Scenario plans: the conditions and timed faults an exploration replays", .timeLimit(.minutes(10)))
struct ScenarioPlanTests {
    static func scenario(_ fields: String) throws(FixtureError) -> Scenario {
        try Scenario(json: Data("{\(fields), \"peripheral\": {}, \"steps\": []}".utf8))
    }

    static let plan = ExplorationPlan(
        seed: 17,
        conditions: LinkConditions(
            mtu: 23, connectionInterval: .microseconds(7_500), jitter: .milliseconds(1), packetsPerConnectionEvent: 2,
            writeWithoutResponseQueueCapacity: 3, updateQueueCapacity: 4),
        faults: [
            PlannedFault(.disconnect, at: .milliseconds(1200), target: 2, coreBluetoothError: .connectionTimeout),
            PlannedFault(.attError, at: .seconds(2), operation: .read, attError: .unlikelyError),
            PlannedFault(
                .attError, at: .seconds(2), operation: .write, characteristic: "2A39",
                attError: ATTError.Code(rawValue: 0x80)),
            PlannedFault(.outOfRange, at: .seconds(3), duration: .milliseconds(1500)),
            PlannedFault(.neverAnswered, at: .seconds(4), operation: .subscribe),
        ])

    @Test("A plan's scenario fragment reads back as the same plan")
    func fragmentRoundTrips() throws {
        let scenario = try Self.scenario(Self.plan.scenarioFragment)
        #expect(scenario.plan == Self.plan)
        #expect(scenario.seed == 17 && scenario.mode == .realistic)
        #expect(
            Self.plan.scenarioFragment == """
                "mode": "realistic",
                "seed": 17,
                "plan": {
                  "conditions": {"mtu":23,"connectionInterval":"0.0075s","jitter":"0.001s","packetsPerConnectionEvent":2,"writeWithoutResponseQueue":3,"updateQueue":4},
                  "faults": [
                    {"at":"1.2s","kind":"disconnect","target":2,"error":"connectionTimeout"},
                    {"at":"2s","kind":"attError","operation":"read","attError":"unlikelyError"},
                    {"at":"2s","kind":"attError","operation":"write","characteristic":"2A39","attError":128},
                    {"at":"3s","kind":"outOfRange","for":"1.5s"},
                    {"at":"4s","kind":"neverAnswered","operation":"subscribe"}
                  ]
                }
                """)
        let empty = try Self.scenario(ExplorationPlan(seed: 2).scenarioFragment)
        #expect(empty.plan == ExplorationPlan(seed: 2))
    }

    @Test("A plan's Bluetooth reset is written with its duration and reads back")
    func bluetoothResetRoundTrips() throws {
        let plan = ExplorationPlan(
            seed: 5, conditions: .roomy,
            faults: [PlannedFault(.bluetoothReset, at: .seconds(1), duration: .milliseconds(1_500), target: 1)])
        #expect(plan.scenarioFragment.contains(#""kind":"bluetoothReset""#))
        #expect(plan.scenarioFragment.contains(#""for":"1.5s""#))
        #expect(try Self.scenario(plan.scenarioFragment).plan == plan)
    }

    @Test("A plan's phone is written by its name and reads back; a phone of the caller's own is left out")
    func planPhoneRoundTrips() throws {
        var plan = Self.plan
        plan.conditions.centralProfile = .iPhoneiOS10
        #expect(plan.scenarioFragment.contains(#""updateQueue":4,"centralProfile":"iPhoneiOS10"}"#))
        #expect(try Self.scenario(plan.scenarioFragment).plan == plan)
        var own = LinkProfile.iPhoneiOS10
        own.name = "my phone"
        plan.conditions.centralProfile = own
        #expect(!plan.scenarioFragment.contains("centralProfile"))
    }

    @Test("A scenario's link profiles time its link: named phone and device, negotiated, with a plan's phone first")
    func linkProfilesDriveTheRun() async throws {
        let json = """
            {"mode": "realistic", "seed": 5, "peripheral": {"bundled": "battery"},
             "link": {"centralProfile": "iPhoneiOS10", "peripheralProfile": "watch"},
             "steps": [{"op": "scan", "for": "1s"}, {"op": "connect"}, {"op": "discover"}, {"op": "read", "char": "2A19"}]}
            """
        var scenario = try Scenario(json: Data(json.utf8))
        #expect(scenario.centralProfile == .iPhoneiOS10)
        #expect(scenario.peripheralProfile == .watch)
        let timing = ScenarioRunner(scenario).bridgeConfiguration.timing
        #expect(timing.centralProfile == .iPhoneiOS10)
        #expect(timing.peripheralProfile == .watch)
        let trace = await ScenarioRunner(scenario).run()
        #expect(trace.passed, "\(trace.failures)")
        let negotiated = NegotiatedLink(central: .iPhoneiOS10, peripheral: .watch)
        #expect(trace.records.first { $0.op == "connect" }?.mtu == negotiated.attMTU)
        // A plan's phone rules over the scenario's; its device stays.
        scenario.plan = ExplorationPlan(seed: 5, conditions: LinkConditions(mtu: 185, centralProfile: .iPhoneiOS18))
        let planned = ScenarioRunner(scenario).bridgeConfiguration.timing
        #expect(planned.centralProfile == .iPhoneiOS18)
        #expect(planned.peripheralProfile == .watch)
    }

    @Test("The plan object is the scenario's plan field")
    func oneLinePlan() throws {
        let scenario = try Self.scenario(#""mode": "realistic", "seed": 17, "plan": "# + Self.plan.scenarioPlan.json)
        #expect(scenario.plan == Self.plan)
    }

    @Test("A plan's conditions and faults drive the run: the ATT_MTU is capped and a planned disconnect drops the link")
    func planDrivesTheRun() async throws {
        let profile =
            #"{"name": "S", "preferredMTU": 247, "services": [{"uuid": "180F", "characteristics": [{"uuid": "2A19", "properties": ["read"], "permissions": ["readable"], "value": {"hex": "64"}}]}]}"#
        let json = """
            {"mode": "realistic", "seed": 3, "peripheral": \(profile),
             "plan": {"conditions": {"mtu": 50}, "faults": [{"at": "5s", "kind": "disconnect"}]},
             "steps": [{"op": "scan", "for": "1s"}, {"op": "connect", "expect": {"mtu": 50}},
                       {"op": "advance", "by": "10s"}, {"op": "read", "char": "2A19", "expect": {"ok": false}}]}
            """
        let trace = await ScenarioRunner(try Scenario(json: Data(json.utf8))).run()
        #expect(trace.passed, "\(trace.failures)")
    }

    @Test("A plan run in fast mode from outside says the override is what to change")
    func planWithAFastModeOverride() throws {
        let json = #"{"mode": "realistic", "seed": 1, "plan": {"faults": []}, "peripheral": {}, "steps": []}"#
        let error = #expect(throws: FixtureError.self) {
            try Scenario(json: Data(json.utf8), overrides: .init(mode: .fast))
        }
        #expect(error?.message == "a plan needs realistic mode, and the run asks for fast mode (--mode fast)")
        #expect(error?.fix == "run it in realistic mode (leave out --mode fast), or remove \"plan\"")
        #expect(try Scenario(json: Data(json.utf8)).plan != nil)
    }

    @Test(
        "A bad plan is refused with the field and a fix",
        arguments: [
            (#""mode": "fast", "plan": {}"#, "a plan needs realistic mode"),
            (#""mode": "realistic", "seed": 1, "plan": {"faults": [], "extra": 1}"#, "unknown field \"extra\""),
            (#""mode": "realistic", "seed": 1, "plan": {"conditions": {"mtu": 600}}"#, "mtu"),
            (#""mode": "realistic", "seed": 1, "plan": {"conditions": {"jitter": "40ms"}}"#, "jitter"),
            (
                #""mode": "realistic", "seed": 1, "plan": {"conditions": {"connectionInterval": "1ms"}}"#,
                "connectionInterval"
            ),
            (#""mode": "realistic", "seed": 1, "plan": {"faults": [{"kind": "reset"}]}"#, "missing field \"at\""),
            (
                #""mode": "realistic", "seed": 1, "plan": {"faults": [{"at": "1s", "kind": "explode"}]}"#,
                "unknown fault kind \"explode\""
            ),
            (
                #""mode": "realistic", "seed": 1, "plan": {"faults": [{"at": "1s", "kind": "attError"}]}"#,
                "an attError fault needs an operation"
            ),
            // An injection the bridge would refuse when it fired (failing every call after it), or
            // one no scenario op could meet.
            (
                #""mode": "realistic", "seed": 1, "plan": {"faults": [{"at": "1s", "kind": "attError", "operation": "connect"}]}"#,
                "plan.faults[0].operation: an attError fault cannot aim at \"connect\": no ATT response answers it"
            ),
            (
                #""mode": "realistic", "seed": 1, "plan": {"faults": [{"at": "1s", "kind": "neverAnswered", "operation": "updateValue"}]}"#,
                "a neverAnswered fault cannot aim at \"updateValue\": a peripheral manager's operation waits for no "
                    + "answer from a peer"
            ),
            (
                #""mode": "realistic", "seed": 1, "plan": {"faults": [{"at": "1s", "kind": "coreBluetoothError", "operation": "l2capOpen"}]}"#,
                "a coreBluetoothError fault cannot aim at \"l2capOpen\": no scenario op opens or publishes an L2CAP "
                    + "channel, so it would never fire"
            ),
            (
                #""mode": "realistic", "seed": 1, "plan": {"faults": [{"at": "1s", "kind": "coreBluetoothError", "operation": "connect", "characteristic": "2A19"}]}"#,
                "plan.faults[0].characteristic: a coreBluetoothError fault on \"connect\" cannot aim at characteristic "
                    + "2A19: \"connect\" is not made on a characteristic, so it would never fire; remove "
                    + "\"characteristic\", or aim the fault at an operation made on one"
            ),
            // A field the kind never reads.
            (
                #""mode": "realistic", "seed": 1, "plan": {"faults": [{"at": "1s", "kind": "disconnect", "operation": "read"}]}"#,
                "plan.faults[0].operation: a disconnect fault does not take \"operation\""
            ),
            (
                #""mode": "realistic", "seed": 1, "plan": {"faults": [{"at": "1s", "kind": "coreBluetoothError", "operation": "connect", "attError": 3}]}"#,
                "a coreBluetoothError fault does not take \"attError\""
            ),
            (
                #""mode": "realistic", "seed": 1, "plan": {"faults": [{"at": "1s", "kind": "attError", "operation": "read", "error": "unknown"}]}"#,
                "an attError fault does not take \"error\""
            ),
            (
                #""mode": "realistic", "seed": 1, "plan": {"faults": [{"at": "1s", "kind": "reset", "for": "1s"}]}"#,
                "a reset fault does not take \"for\"; remove \"for\""
            ),
            (
                #""mode": "realistic", "seed": 1, "plan": {"faults": [{"at": "1s", "kind": "fade", "characteristic": "2A19"}]}"#,
                "a fade fault does not take \"characteristic\"; remove \"characteristic\"; it takes \"for\""
            ),
            (#""mode": "realistic", "seed": 1, "plan": {"faults": {}}"#, "expected an array"),
            (
                #""mode": "realistic", "seed": 1, "plan": {"conditions": {"centralProfile": "iPhone"}}"#,
                "unknown link profile \"iPhone\""
            ),
            (#""mode": "fast", "link": {"centralProfile": "iPhoneiOS10"}"#, "a link profile needs realistic mode"),
            (
                #""mode": "realistic", "seed": 1, "link": {"peripheralProfile": "watchOS"}"#,
                "unknown link profile \"watchOS\""
            ),
            (#""mode": "realistic", "seed": 1, "link": {"peripheralProfile": 3}"#, "expected a string"),
            // The profiles negotiate the interval: a fixed one would only time the connecting.
            (
                #""mode": "realistic", "seed": 1, "link": {"connectionInterval": "1s", "centralProfile": "iPhoneiOS18"}"#,
                "link.connectionInterval: link.connectionInterval cannot be given with a link profile: the profiles "
                    + "negotiate each link's interval"
            ),
            (
                #""mode": "realistic", "seed": 1, "link": {"peripheralProfile": "watch", "connectionInterval": "30ms"}"#,
                "link.connectionInterval cannot be given with a link profile"
            ),
        ])
    func badPlans(fields: String, message: String) {
        #expect {
            try Self.scenario(fields)
        } throws: { error in
            // (The description: the field's path, the message and the fix.)
            (error as? FixtureError).map { "\($0)".contains(message) } == true
        }
    }
}
