import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("Exploration plans: drawing, words, Swift code and shrinking", .timeLimit(.minutes(10)))
struct ExplorationPlanTests {
    static let window = Duration.zero ... .seconds(2)

    @Test("The same seed and budget draw the same plan; other seeds draw other plans")
    func drawingIsDeterministic() {
        let budget = ExplorationBudget()
        let plans = (0..<50).map { ExplorationPlan.draw(seed: $0, budget: budget, window: Self.window) }
        let again = (0..<50).map { ExplorationPlan.draw(seed: $0, budget: budget, window: Self.window) }
        #expect(plans == again)
        #expect(Set(plans).count == 50)
        #expect(Set(plans.map(\.conditions.mtu)).count > 10)
    }

    @Test("Every draw stays within the budget: conditions in their ranges, faults of the allowed kinds in the window")
    func drawsStayWithinTheBudget() {
        let budget = ExplorationBudget(
            faultKinds: [.disconnect, .fade, .outOfRange], faultCount: 1...2, window: nil,
            faultDuration: .seconds(1) ... .seconds(2), mtu: 30...100,
            connectionInterval: .milliseconds(10) ... .milliseconds(20), jitter: .zero ... .milliseconds(1),
            packetsPerConnectionEvent: 2...3, writeWithoutResponseQueueCapacity: 3...5, updateQueueCapacity: nil)
        let window = Duration.milliseconds(500) ... .seconds(1)
        for seed in UInt64(0)..<300 {
            let plan = ExplorationPlan.draw(seed: seed, budget: budget, window: window)
            let conditions = plan.conditions
            #expect((30...100).contains(conditions.mtu), "seed \(seed)")
            #expect(
                (Duration.milliseconds(10) ... .milliseconds(20)).contains(conditions.connectionInterval),
                "seed \(seed)")
            let units = conditions.connectionInterval / .microseconds(1_250)
            #expect(units == units.rounded(), "seed \(seed): a connection interval is a multiple of 1.25 ms")
            #expect((Duration.zero ... .milliseconds(1)).contains(conditions.jitter), "seed \(seed)")
            #expect((2...3).contains(conditions.packetsPerConnectionEvent), "seed \(seed)")
            #expect(conditions.writeWithoutResponseQueueCapacity.map { (3...5).contains($0) } == true, "seed \(seed)")
            #expect(conditions.updateQueueCapacity == nil, "seed \(seed)")
            #expect((1...2).contains(plan.faults.count), "seed \(seed)")
            #expect(plan.faults.map(\.at) == plan.faults.map(\.at).sorted(), "seed \(seed): faults in time order")
            for fault in plan.faults {
                #expect([.disconnect, .fade, .outOfRange].contains(fault.kind), "seed \(seed)")
                #expect(window.contains(fault.at), "seed \(seed)")
                #expect(fault.at == .milliseconds(Int64(fault.at / .milliseconds(1))), "seed \(seed): whole ms")
                switch fault.kind {
                case .fade: #expect(fault.duration > .zero && fault.duration < .milliseconds(720), "seed \(seed)")
                case .outOfRange:
                    #expect(fault.duration > .milliseconds(720) && fault.duration <= .seconds(2), "seed \(seed)")
                case .disconnect: #expect(fault.coreBluetoothError != nil, "seed \(seed)")
                default: break
                }
            }
        }
    }

    @Test("A Bluetooth reset is drawn after the other faults: without it a seed's plan is the same, less the reset")
    func bluetoothResetsAreDrawnApart() {
        let all = ExplorationBudget()
        var without = ExplorationBudget()
        without.faultKinds.remove(.bluetoothReset)
        var roomy = 0
        var resets = 0
        for seed in UInt64(0)..<400 {
            let plan = ExplorationPlan.draw(seed: seed, budget: all, window: Self.window)
            let before = ExplorationPlan.draw(seed: seed, budget: without, window: Self.window)
            #expect(plan.conditions == before.conditions, "seed \(seed)")
            #expect(plan.faults.filter { $0.kind != .bluetoothReset } == before.faults, "seed \(seed)")
            let drawn = plan.faults.filter { $0.kind == .bluetoothReset }
            #expect(drawn.count <= 1, "seed \(seed)")
            #expect(plan.faults.count <= all.faultCount.upperBound, "seed \(seed)")
            if before.faults.count < all.faultCount.upperBound { roomy += 1 }
            resets += drawn.count
            for reset in drawn {
                #expect(Self.window.contains(reset.at), "seed \(seed)")
                #expect(all.faultDuration.contains(reset.duration), "seed \(seed)")
                #expect(reset.problem == nil, "seed \(seed)")
            }
        }
        // One seed in four with room for another fault.
        #expect((roomy / 6)...(roomy / 3) ~= resets, "\(resets) resets in \(roomy) seeds with room")
    }

    @Test("A budget of Bluetooth resets alone draws them as any other kind")
    func bluetoothResetsAloneAreDrawnAsAnyKind() {
        let budget = ExplorationBudget(faultKinds: [.bluetoothReset], faultCount: 2...2)
        for seed in UInt64(0)..<50 {
            let plan = ExplorationPlan.draw(seed: seed, budget: budget, window: Self.window)
            #expect(plan.faults.map(\.kind) == [.bluetoothReset, .bluetoothReset], "seed \(seed)")
        }
    }

    @Test("Injected-error faults name an operation the budget allows and an error (an ATT error only an ATT request)")
    func injectedErrorsNameTheirOperation() {
        let budget = ExplorationBudget(
            faultKinds: [.attError, .coreBluetoothError, .neverAnswered], faultCount: 3...3,
            operations: [.read, .connect, .readRSSI], attErrors: [.writeRequestRejected])
        for seed in UInt64(0)..<100 {
            for fault in ExplorationPlan.draw(seed: seed, budget: budget, window: Self.window).faults {
                switch fault.kind {
                case .attError:
                    #expect(fault.operation == .read && fault.attError == .writeRequestRejected)
                    #expect(fault.injection == ErrorInjection(.read, failure: .att(.writeRequestRejected)))
                case .coreBluetoothError:
                    #expect(fault.operation == .connect && fault.coreBluetoothError == .connectionFailed)
                case .neverAnswered:
                    #expect(fault.operation == .read)
                    #expect(fault.injection == ErrorInjection(.read, failure: .neverAnswers))
                default:
                    Issue.record("unexpected kind \(fault.kind)")
                }
            }
        }
    }

    @Test("Half the ATT_MTU draws are values real devices negotiate, the rest any value in range")
    func mtuDrawsMixRealWorldValues() {
        let mtus = (UInt64(0)..<1_000).map {
            ExplorationPlan.draw(seed: $0, budget: ExplorationBudget(), window: Self.window).conditions.mtu
        }
        let realWorld = mtus.filter(MTUMode.realWorldValues.contains).count
        #expect((400...650).contains(realWorld))
        #expect(Set(mtus).count > 200)
        #expect(mtus.min() == 23)
    }

    @Test("A budget without fault kinds, or conditions only, draws no faults")
    func noFaultKindsNoFaults() {
        for budget in [ExplorationBudget.conditionsOnly, ExplorationBudget(faultKinds: [], faultCount: 2...3)] {
            for seed in UInt64(0)..<50 {
                #expect(ExplorationPlan.draw(seed: seed, budget: budget, window: Self.window).faults.isEmpty)
            }
        }
    }

    @Test(
        "A bad budget names the field, the value and the range",
        arguments: [
            (ExplorationBudget(faultCount: -1...2), "ExplorationBudget.faultCount: -1...2 is outside 0…10000"),
            (
                ExplorationBudget(faultCount: 0...Int.max),
                "ExplorationBudget.faultCount: 0...\(Int.max) is outside 0…10000"
            ),
            (ExplorationBudget(mtu: 10...100), "ExplorationBudget.mtu.lowerBound: 10 is outside 23…517"),
            (ExplorationBudget(mtu: 23...600), "ExplorationBudget.mtu.upperBound: 600 is outside 23…517"),
            (
                ExplorationBudget(connectionInterval: .milliseconds(1) ... .milliseconds(30)),
                "ExplorationBudget.connectionInterval.lowerBound: 0.001s is outside 0.0075s…4s"
            ),
            (
                ExplorationBudget(connectionInterval: .milliseconds(30) ... .seconds(5)),
                "ExplorationBudget.connectionInterval.upperBound: 5s is outside 0.0075s…4s"
            ),
            (
                ExplorationBudget(jitter: .milliseconds(-1) ... .zero),
                "ExplorationBudget.jitter: -0.001s is outside 0s…"
            ),
            (
                ExplorationBudget(packetsPerConnectionEvent: 0...4),
                "ExplorationBudget.packetsPerConnectionEvent: 0 is outside 1…"
            ),
            (
                ExplorationBudget(writeWithoutResponseQueueCapacity: 0...4),
                "ExplorationBudget.writeWithoutResponseQueueCapacity: 0 is outside 1…"
            ),
            (ExplorationBudget(updateQueueCapacity: 0...4), "ExplorationBudget.updateQueueCapacity: 0 is outside 1…"),
            (
                ExplorationBudget(attErrors: [.unlikelyError, .success]),
                "ExplorationBudget.attErrors: 0x00 (success) is not an error; give ATT error codes (0x01 or above)"
            ),
            (
                ExplorationBudget(window: .milliseconds(-5) ... .zero),
                "ExplorationBudget.window: -0.005s is outside 0s…1000000000s"
            ),
            (
                ExplorationBudget(window: .zero ... .seconds(1 << 61)),
                "ExplorationBudget.window: 2305843009213693952s is outside 0s…1000000000s"
            ),
            (
                ExplorationBudget(faultDuration: .seconds(-1) ... .seconds(1)),
                "ExplorationBudget.faultDuration: -1s is outside 0s…1000000000s"
            ),
            (
                ExplorationBudget(faultDuration: .seconds(1) ... .seconds(2_000_000_000)),
                "ExplorationBudget.faultDuration: 2000000000s is outside 0s…1000000000s"
            ),
            (
                ExplorationBudget(attErrors: []),
                "ExplorationBudget.attErrors: empty, but .attError faults may be drawn; give an error or leave the kind out"
            ),
        ])
    func badBudgetIsNamed(budget: ExplorationBudget, message: String) {
        #expect(budget.problem == message)
    }

    /// (Such a budget drew no fault in 50 seeds, and its exploration passed.)
    @Test("A budget whose fault kinds could never be drawn with its operations is refused")
    func undrawableBudgetsAreRefused() {
        let tail = "so the exploration would inject nothing; add an operation they fail, or other kinds"
        #expect(
            ExplorationBudget(faultKinds: [.attError], faultCount: 1...1, operations: [.connect]).problem
                == "ExplorationBudget.operations: no fault of faultKinds can be drawn with them (.attError needs an "
                + "ATT request (.read, .write, .subscribe, a discovery)), " + tail)
        #expect(
            ExplorationBudget(faultKinds: [.neverAnswered, .coreBluetoothError], operations: [.serviceDiscovery])
                .problem
                == "ExplorationBudget.operations: no fault of faultKinds can be drawn with them (.coreBluetoothError "
                + "needs .connect; .neverAnswered needs .read, .write or .subscribe), " + tail)
    }

    @Test("A budget some of whose kinds cannot be drawn is accepted while others can, and so is one with no fault")
    func partlyDrawableBudgetsAreAccepted() {
        #expect(ExplorationBudget(faultKinds: [.attError, .reset], operations: [.connect]).problem == nil)
        #expect(
            ExplorationBudget(faultKinds: [.coreBluetoothError], faultCount: 0...0, operations: [.read]).problem == nil)
        #expect(ExplorationBudget(operations: [.read]).problem == nil)
    }

    static let badFaults: [(PlannedFault, String)] = {
        let refused = "operation: an attError fault's error would be refused as it fires: "
        return [
            (
                PlannedFault(.attError, at: .zero),
                "operation: an attError fault needs an operation to fail (.read, .connect, …)"
            ),
            (
                PlannedFault(.disconnect, at: .seconds(5), operation: .read, attError: .unlikelyError),
                "operation: a disconnect fault does not read it (it reads coreBluetoothError); leave it out"
            ),
            (
                PlannedFault(.reset, at: .seconds(1), duration: .seconds(2)),
                "duration: a reset fault does not read it; leave it out"
            ),
            (
                PlannedFault(.fade, at: .seconds(1), duration: .seconds(1), coreBluetoothError: .unknown),
                "coreBluetoothError: a fade fault does not read it (it reads duration); leave it out"
            ),
            (PlannedFault(.reset, at: .seconds(-1)), "at: -1s is before the run's start; give a time of 0s or later"),
            (PlannedFault(.fade, at: .zero, duration: .seconds(-2)), "duration: -2s is negative; give 0s or more"),
            (
                PlannedFault(.attError, at: .milliseconds(1), operation: .connect),
                refused + ".att(0x0E unlikelyError) cannot "
                    + "fail .connect: no ATT response answers it (ATT errors answer .serviceDiscovery, "
                    + ".characteristicDiscovery, .descriptorDiscovery, .read, .write and .subscribe); inject a "
                    + ".coreBluetooth(_:) failure"
            ),
            (
                PlannedFault(.attError, at: .zero, operation: .read, attError: .success),
                refused + ".att(0x00 success) is not an "
                    + "error: ATT result 0x00 is the answer to a granted request, so .read could not fail with it; "
                    + "inject an ATT error code (0x01 or above)"
            ),
        ]
    }()

    @Test("A planned fault that could not do what it says names the field", arguments: badFaults)
    func badPlannedFaultIsNamed(fault: PlannedFault, message: String) {
        #expect(fault.problem == message)
    }

    @Test("Every fault an exploration draws is one a plan accepts")
    func drawnFaultsHaveNoProblem() {
        let budget = ExplorationBudget(faultCount: 3...6)
        let targets: [PlannedFault.Target] = [
            .init(.read, on: BluetoothUUID(0x2A37)), .init(.connect), .init(.subscribe, on: BluetoothUUID(0x2A38)),
        ]
        for seed in UInt64(0)..<200 {
            let plan = ExplorationPlan.draw(seed: seed, budget: budget, window: Self.window, targets: targets)
            #expect(plan.problem == nil, "seed \(seed): \(plan)")
        }
    }

    @Test("The default budget and conditions-only have no problem")
    func defaultBudgetsAreFine() {
        #expect(ExplorationBudget().problem == nil)
        #expect(ExplorationBudget.conditionsOnly.problem == nil)
        #expect(ExplorationBudget(faultKinds: [.disconnect], attErrors: []).problem == nil)
    }

    // MARK: Words and code

    @Test("Each fault kind reads as a sentence")
    func faultsInWords() {
        let cases: [(PlannedFault, String)] = [
            (
                PlannedFault(.disconnect, at: .milliseconds(1200), coreBluetoothError: .peripheralDisconnected),
                "at 1.2s a link drops with peripheralDisconnected"
            ),
            (
                PlannedFault(.outOfRange, at: .seconds(1), duration: .seconds(2), target: 1),
                "at 1s a peripheral goes out of range for 2s (target 1)"
            ),
            (
                PlannedFault(.fade, at: .zero, duration: .milliseconds(300)),
                "at 0s a peripheral's signal fades for 0.3s (packets wait)"
            ),
            (PlannedFault(.reset, at: .milliseconds(5)), "at 0.005s a peripheral resets"),
            (
                PlannedFault(.powerCycle, at: .seconds(2), duration: .seconds(1)),
                "at 2s a central's Bluetooth turns off for 1s"
            ),
            (
                PlannedFault(.attError, at: .seconds(1), operation: .write, attError: .insufficientResources),
                "at 1s the next write fails with ATT \(ATTError.Code.insufficientResources)"
            ),
            (
                PlannedFault(
                    .coreBluetoothError, at: .seconds(1), operation: .connect, coreBluetoothError: .connectionFailed),
                "at 1s the next connect fails with connectionFailed"
            ),
            (
                PlannedFault(.neverAnswered, at: .seconds(1), operation: .subscribe),
                "at 1s the next subscribe is never answered"
            ),
            (PlannedFault(.pairingRefused, at: .seconds(3)), "at 3s the next pairing is refused"),
            (
                PlannedFault(.bluetoothReset, at: .seconds(2), duration: .milliseconds(1_500), target: 2),
                "at 2s a central's Bluetooth resets for 1.5s (target 2)"
            ),
        ]
        for (fault, words) in cases { #expect(fault.description == words) }
        #expect(Set(cases.map(\.0.kind)) == Set(PlannedFault.Kind.allCases))
    }

    @Test("Conditions and a plan read as words")
    func planInWords() {
        let conditions = LinkConditions(
            mtu: 23, connectionInterval: .microseconds(7_500), jitter: .microseconds(1_300),
            packetsPerConnectionEvent: 1, writeWithoutResponseQueueCapacity: 3)
        #expect(
            conditions.description
                == "ATT_MTU 23, interval 0.0075s ± 0.0013s, 1 packet per event, write-without-response queue 3")
        #expect(LinkConditions.roomy.description == "ATT_MTU 517, interval 0.03s, 4 packets per event")
        let plan = ExplorationPlan(
            seed: 9, conditions: .roomy,
            faults: [
                PlannedFault(.reset, at: .seconds(1)),
                PlannedFault(.fade, at: .seconds(2), duration: .milliseconds(100)),
            ])
        #expect(
            plan.description == """
                seed 9; ATT_MTU 517, interval 0.03s, 4 packets per event
                - at 1s a peripheral resets
                - at 2s a peripheral's signal fades for 0.1s (packets wait)
                """)
        #expect(
            ExplorationPlan(seed: 1).description
                == "seed 1; ATT_MTU 517, interval 0.03s, 4 packets per event\nno faults")
    }

    @Test("A plan's Swift code names only what differs from the defaults")
    func planAsSwiftCode() {
        let plan = ExplorationPlan(
            seed: 17,
            conditions: LinkConditions(
                mtu: 23, connectionInterval: .microseconds(7_500), jitter: .milliseconds(1),
                packetsPerConnectionEvent: 2,
                writeWithoutResponseQueueCapacity: 3, updateQueueCapacity: 4),
            faults: [
                PlannedFault(.disconnect, at: .milliseconds(1200), target: 2, coreBluetoothError: .connectionTimeout),
                PlannedFault(.attError, at: .seconds(2), operation: .read, attError: ATTError.Code(rawValue: 0x80)),
                PlannedFault(.powerCycle, at: .nanoseconds(5), duration: .seconds(3)),
            ])
        #expect(
            plan.swiftCode == """
                let plan = ExplorationPlan(
                    seed: 17,
                    conditions: LinkConditions(mtu: 23, connectionInterval: .microseconds(7500), jitter: .milliseconds(1), packetsPerConnectionEvent: 2, writeWithoutResponseQueueCapacity: 3, updateQueueCapacity: 4),
                    faults: [
                        PlannedFault(.disconnect, at: .milliseconds(1200), target: 2, coreBluetoothError: .connectionTimeout),
                        PlannedFault(.attError, at: .seconds(2), operation: .read, attError: ATTError.Code(rawValue: 0x80)),
                        PlannedFault(.powerCycle, at: .nanoseconds(5), duration: .seconds(3)),
                    ])
                let outcome = await Exploration.replay(plan) { run in
                    // the explored test body
                }
                """)
        #expect(ExplorationPlan(seed: 3).swiftCode.contains("conditions: LinkConditions(mtu: 517),\n    faults: [])"))
        #expect(LinkConditions.swiftCode(.zero) == ".zero")
        #expect(LinkConditions.swiftCode(.milliseconds(-3)) == ".milliseconds(-3)")
    }

    @Test("The code a plan writes compiles and replays that plan")
    func writtenCodeCompiles() async {
        // What `swiftCode` wrote for the plan above, pasted:
        let plan = ExplorationPlan(
            seed: 17,
            conditions: LinkConditions(
                mtu: 23, connectionInterval: .microseconds(7500), jitter: .milliseconds(1),
                packetsPerConnectionEvent: 2,
                writeWithoutResponseQueueCapacity: 3, updateQueueCapacity: 4),
            faults: [
                PlannedFault(.disconnect, at: .milliseconds(1200), target: 2, coreBluetoothError: .connectionTimeout),
                PlannedFault(.attError, at: .seconds(2), operation: .read, attError: ATTError.Code(rawValue: 0x80)),
                PlannedFault(.powerCycle, at: .nanoseconds(5), duration: .seconds(3)),
            ])
        guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else { return }
        let outcome = await Exploration.replay(plan) { run in
            #expect(run.plan == plan)
            #expect(MockBLEBridge.current === run.bridge)
            #expect(run.bridge.configuration == plan.configuration)
            // A central and one second: the power cycle's time comes, the others' do not.
            let central = MockCentralManager()
            _ = await central.waitForPoweredOn()
            await run.bridge.advance(by: .seconds(1))
        }
        #expect(outcome.error == nil)
        #expect(outcome.faultsFired == [false, false, true])
        #expect(outcome.duration == .seconds(1))
    }

    // MARK: Shrinking

    /// Runs a shrinker to its end against a predicate.
    static func shrink(
        _ plan: ExplorationPlan, windowEnd: Duration = .seconds(2), maximumTries: Int = 300,
        fails: (ExplorationPlan) -> Bool
    ) -> ExplorationShrinker {
        var shrinker = ExplorationShrinker(failing: plan, windowEnd: windowEnd, maximumTries: maximumTries)
        while let candidate = shrinker.next() { shrinker.record(stillFails: fails(candidate)) }
        return shrinker
    }

    static let busyPlan = ExplorationPlan(
        seed: 4,
        conditions: LinkConditions(
            mtu: 40, connectionInterval: .milliseconds(45), jitter: .milliseconds(2), packetsPerConnectionEvent: 1,
            writeWithoutResponseQueueCapacity: 2, updateQueueCapacity: 3),
        faults: [
            PlannedFault(.fade, at: .milliseconds(100), duration: .milliseconds(200)),
            PlannedFault(.disconnect, at: .milliseconds(400), target: 3, coreBluetoothError: .unknown),
            PlannedFault(.powerCycle, at: .milliseconds(900), duration: .seconds(1)),
        ])

    @Test("A fault aimed at an operation on a characteristic shrinks keeping its aim, the other faults removed")
    func anAimedFaultKeepsItsAim() {
        let aimed = PlannedFault(
            .attError, at: .milliseconds(400), target: 2, operation: .write, characteristic: "FA02",
            attError: .unlikelyError)
        let plan = ExplorationPlan(
            seed: 3, conditions: Self.busyPlan.conditions,
            faults: [PlannedFault(.fade, at: .milliseconds(100), duration: .milliseconds(200)), aimed])
        let shrinker = Self.shrink(plan) { candidate in
            candidate.faults.contains { $0.operation == .write && $0.characteristic == "FA02" }
        }
        #expect(shrinker.current.faults.count == 1)
        #expect(shrinker.current.faults.first?.characteristic == "FA02")
        #expect(shrinker.current.faults.first?.operation == .write)
        #expect(shrinker.current.faults.first?.target == 0)
        // Its description and replay code say what it aims at.
        #expect("\(aimed)" == "at 0.4s the next write on FA02 fails with ATT \(ATTError.Code.unlikelyError)")
        #expect(aimed.swiftCode.contains("characteristic: \"FA02\""))
    }

    @Test("Drawn with the operations a calibration run made, injected errors aim at them; drawn without, at none")
    func injectedErrorsAimAtTheCalibrationsOperations() {
        let targets = [
            PlannedFault.Target(.connect), PlannedFault.Target(.write, on: "FA02"),
            PlannedFault.Target(.subscribe, on: "FA03"),
        ]
        let budget = ExplorationBudget(faultKinds: [.attError, .coreBluetoothError, .neverAnswered], faultCount: 3...3)
        var aimed = 0
        var injected = 0
        for seed in UInt64(0)..<200 {
            let plan = ExplorationPlan.draw(seed: seed, budget: budget, window: .zero ... .seconds(5), targets: targets)
            #expect(
                plan
                    == ExplorationPlan.draw(seed: seed, budget: budget, window: .zero ... .seconds(5), targets: targets)
            )
            for fault in plan.faults {
                injected += 1
                if let characteristic = fault.characteristic {
                    aimed += 1
                    #expect(targets.contains(PlannedFault.Target(fault.operation!, on: characteristic)))
                }
            }
            let unaimed = ExplorationPlan.draw(seed: seed, budget: budget, window: .zero ... .seconds(5))
            #expect(unaimed.faults.allSatisfy { $0.characteristic == nil })
        }
        // About three in four of the faults that can aim do (connect faults aim at no characteristic).
        #expect(aimed > injected / 3, "\(aimed) of \(injected)")
    }

    @Test("After a step is kept the pass starts again: a fault removable only once a later move was kept goes too")
    func aKeptStepRestartsThePass() {
        // Faults are removed latest first: the reset (tried first) cannot go while the power
        // cycle is there, the power cycle can; once it has gone, the reset can too. A pass that
        // went on after a kept step, rather than starting again, would end with the reset kept.
        let plan = ExplorationPlan(
            seed: 9, conditions: .roomy,
            faults: [
                PlannedFault(.disconnect, at: .milliseconds(100)),
                PlannedFault(.powerCycle, at: .milliseconds(300), duration: .seconds(1)),
                PlannedFault(.reset, at: .milliseconds(500)),
            ])
        let shrinker = Self.shrink(plan) { candidate in
            let kinds = Set(candidate.faults.map(\.kind))
            return kinds.contains(.disconnect) && (kinds.contains(.reset) || !kinds.contains(.powerCycle))
        }
        #expect(shrinker.current.faults.map(\.kind) == [.disconnect])
        #expect(shrinker.steps.prefix(2).map { $0.hasPrefix("removed:") } == [true, true])
    }

    @Test(
        "A failure that needs one disconnect before 1 s shrinks to that fault alone, in roomy conditions, as late as it fails"
    )
    func shrinksToTheOneFaultNeeded() {
        let shrinker = Self.shrink(Self.busyPlan) { plan in
            plan.faults.contains { $0.kind == .disconnect && $0.at < .seconds(1) }
        }
        #expect(shrinker.isFinished)
        let minimal = shrinker.current
        #expect(minimal.conditions == .roomy)
        #expect(minimal.faults.count == 1)
        let fault = minimal.faults[0]
        #expect(fault.kind == .disconnect && fault.target == 0)
        #expect(fault.at >= .milliseconds(900) && fault.at < .seconds(1))
        #expect(shrinker.steps.first == "removed: at 0.9s a central's Bluetooth turns off for 1s")
        #expect(shrinker.steps.contains("ATT_MTU raised to 517"))
        #expect(shrinker.steps.contains { $0.hasPrefix("moved later: ") })
        #expect(shrinker.steps.contains("first target: at 0.4s a link drops with unknown"))
    }

    @Test(
        "A heavier fault that ends links becomes a plain disconnect at its instant, and what it needed beside it goes"
    )
    func aHeavierFaultBecomesAPlainDisconnect() {
        // An app that never reconnects fails after any fault that ends its link; with a power
        // cycle it also needs the discovery error before it (say), with a disconnect it does not.
        let plan = ExplorationPlan(
            seed: 5, conditions: .roomy,
            faults: [
                PlannedFault(
                    .attError, at: .milliseconds(100), operation: .serviceDiscovery, attError: .unlikelyError),
                PlannedFault(.powerCycle, at: .milliseconds(500), duration: .seconds(1), target: 1),
            ])
        let fails: (ExplorationPlan) -> Bool = { candidate in
            let kinds = Set(candidate.faults.map(\.kind))
            return kinds.contains(.disconnect) || kinds.isSuperset(of: [.attError, .powerCycle])
        }
        let shrinker = Self.shrink(plan, fails: fails)
        #expect(shrinker.current.faults.map(\.kind) == [.disconnect])
        #expect(shrinker.current.faults.first?.target == 0)
        #expect(shrinker.current.faults.first?.duration == .zero)
        #expect(
            shrinker.steps.first
                == "a plain disconnect instead: at 0.5s a link drops with connectionTimeout (target 1) "
                + "(was: at 0.5s a central's Bluetooth turns off for 1s (target 1))")
        #expect(
            shrinker.steps.contains(
                "removed: at 0.1s the next serviceDiscovery fails with ATT \(ATTError.Code.unlikelyError)"))
        // Without disconnects among the kinds to try, the power cycle stays, and so does the error.
        let kept = ExplorationShrinker(failing: plan, windowEnd: .seconds(2), faultKinds: [.attError, .powerCycle])
        var shrinking = kept
        while let candidate = shrinking.next() { shrinking.record(stillFails: fails(candidate)) }
        #expect(shrinking.current.faults.map(\.kind) == [.attError, .powerCycle])
        #expect(!shrinking.steps.contains { $0.hasPrefix("a plain disconnect") })
    }

    @Test(
        "Only an out-of-range, a reset, a power cycle or a Bluetooth reset becomes a plain disconnect",
        arguments: PlannedFault.Kind.allCases)
    func whichKindsBecomeADisconnect(kind: PlannedFault.Kind) {
        let fault = PlannedFault(
            kind, at: .milliseconds(300),
            duration: [.outOfRange, .fade, .powerCycle, .bluetoothReset].contains(kind) ? .seconds(1) : .zero,
            operation: kind.isInjection ? .read : nil)
        let plan = ExplorationPlan(seed: 1, conditions: .roomy, faults: [fault])
        // Any one fault fails; none does not.
        let shrinker = Self.shrink(plan) { !$0.faults.isEmpty }
        let heavier: Set<PlannedFault.Kind> = [.outOfRange, .reset, .powerCycle, .bluetoothReset]
        #expect(shrinker.current.faults.map(\.kind) == [heavier.contains(kind) ? .disconnect : kind])
        #expect(shrinker.steps.contains { $0.hasPrefix("a plain disconnect instead: ") } == heavier.contains(kind))
    }

    @Test("A failure below an ATT_MTU shrinks to no faults and the largest ATT_MTU that still fails")
    func shrinksTheMTUByBinarySearch() {
        let shrinker = Self.shrink(Self.busyPlan) { $0.conditions.mtu < 185 }
        #expect(shrinker.current.faults.isEmpty)
        #expect(shrinker.current.conditions.mtu == 184)
        #expect(shrinker.current.conditions.writeWithoutResponseQueueCapacity == nil)
        #expect(shrinker.steps.last == "ATT_MTU raised to 184")
        #expect(shrinker.steps.filter { $0.hasPrefix("ATT_MTU raised to") }.count == 1)
    }

    @Test("A failure that needs a small queue keeps a queue, doubled as far as it still fails")
    func shrinksQueuesByDoubling() {
        let shrinker = Self.shrink(Self.busyPlan) { ($0.conditions.writeWithoutResponseQueueCapacity ?? .max) < 8 }
        #expect(shrinker.current.conditions.writeWithoutResponseQueueCapacity == 4)
        #expect(shrinker.current.faults.isEmpty)
        #expect(shrinker.current.conditions.mtu == 517)
    }

    @Test("A plan nothing simpler fails stays as it is")
    func nothingSimplerFails() {
        let shrinker = Self.shrink(Self.busyPlan) { $0 == Self.busyPlan }
        #expect(shrinker.current == Self.busyPlan)
        #expect(shrinker.steps.isEmpty)
        #expect(shrinker.isFinished)
        #expect(shrinker.tried > 10)
    }

    @Test("Shrinking stops after its most tries, keeping the simplest failing plan so far")
    func shrinkingIsBounded() {
        let shrinker = Self.shrink(Self.busyPlan, maximumTries: 2) { _ in true }
        #expect(shrinker.tried == 2)
        #expect(shrinker.isFinished)
        #expect(shrinker.current.faults.count == 1)
        let none = Self.shrink(Self.busyPlan, maximumTries: 0) { _ in true }
        #expect(none.tried == 0 && none.current == Self.busyPlan)
    }

    /// (It made every candidate of a plan up front, each a copy of the plan: memory in the square
    /// of the faults, 1.3 GB for 2,000, even when nothing was to be tried.)
    @Test("A plan of thousands of faults shrinks one candidate at a time, and not at all when no try is allowed")
    func aLargePlanShrinksOneCandidateAtATime() {
        let faults = (0..<2_000).map { PlannedFault(.disconnect, at: .milliseconds(Int64($0) * 5)) }
        let plan = ExplorationPlan(seed: 1, conditions: .roomy, faults: faults)
        var none = ExplorationShrinker(failing: plan, windowEnd: .seconds(20), maximumTries: 0)
        #expect(none.isFinished)
        #expect(none.next() == nil)
        #expect(none.current == plan)
        var shrinker = ExplorationShrinker(failing: plan, windowEnd: .seconds(20), maximumTries: 3)
        // The latest fault first; then, that one kept, the latest of the rest.
        let first = shrinker.next()
        #expect(first?.faults == Array(faults.dropLast()))
        shrinker.record(stillFails: false)
        #expect(shrinker.next()?.faults == Array(faults.prefix(1_998)) + [faults[1_999]])
        shrinker.record(stillFails: true)
        // (The pass starts again from the latest fault: now the one the first try kept.)
        #expect(shrinker.next()?.faults == Array(faults.prefix(1_998)))
        shrinker.record(stillFails: false)
        #expect(shrinker.isFinished)
        #expect(shrinker.tried == 3)
        #expect(shrinker.steps == ["removed: \(faults[1_998])"])
    }
}
