import BLECBM
import BLECore
import BLEMockKit
import BLEMockKitTesting
import Foundation
import Testing

/// The Swift Testing trait, used as a user's test target uses it: only the public API.
@Suite("The mock bridge trait", .timeLimit(.minutes(10)))
struct MockBridgeTraitTests {
    /// Seeds each run of a multi-seed test saw, per test (each test has its own recorder).
    actor Seen {
        var seeds: [UInt64] = []
        func add(_ seed: UInt64) { seeds.append(seed) }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(.mockBridge)
    func aTestWithTheTraitRunsOnAFastBridgeItsManagersShare() async throws {
        let bridge = try #require(MockBLEBridge.current)
        #expect(bridge.configuration.timing == .instant)
        let sensor = MockPeripheralManager()
        let central = MockCentralManager()
        #expect(sensor.bridge === bridge)
        #expect(central.bridge === bridge)
        _ = try await sensor.add(GATTService(uuid: "180F", characteristics: []))
        try await sensor.startAdvertising(AdvertisementData(localName: "Tag", serviceUUIDs: ["180F"]))
        try await central.scanForPeripherals(withServices: ["180F"])
        try await central.connect(sensor.identifier)
        #expect(await central.isConnected(sensor.identifier))
        await central.stopScan()
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(.mockBridge(.realistic(seed: 7)))
    func aRealisticTraitGivesTheSeedAndTimeThatDrivesItself() async throws {
        let bridge = try #require(MockBLEBridge.current)
        #expect(bridge.configuration.seed == 7)
        #expect(bridge.configuration.timing == .realistic)
        // Code waiting on the clock finishes with no advance: time drives itself.
        try await bridge.clock.sleep(for: .seconds(5))
        #expect(await bridge.now == .zero + .seconds(5))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(.mockBridge(seeds: [3, 1, 4]))
    func eachSeedOfASeededTraitRunsOnAFreshRealisticBridge() async throws {
        let bridge = try #require(MockBLEBridge.current)
        #expect(await bridge.log.isEmpty)
        #expect(bridge.configuration.timing == .realistic)
        #expect([3, 1, 4].contains(bridge.configuration.seed))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aSeededTraitRunsTheBodyOncePerSeedInOrder() async throws {
        let trait = MockBridgeTrait.mockBridge(seeds: [3, 1, 4])
        let test = try #require(Test.current)
        let seen = Seen()
        try await trait.provideScope(for: test, testCase: Test.Case.current) {
            let bridge = try #require(MockBLEBridge.current)
            await seen.add(bridge.configuration.seed)
            _ = MockCentralManager()
        }
        #expect(await seen.seeds == [3, 1, 4])
    }

    /// A test's own `.mockBridge` takes the place of its suite's (or an outer suite's), as the
    /// trait's documentation says. Both used to apply, one inside the other: the body ran once
    /// per seed of the suite's trait, each time on the test's own bridge, inside a run of the
    /// suite's that stood idle (and issues named the suite's seed).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A test's own .mockBridge takes the place of its suite's: its body runs once per seed of its own")
    func aTestsOwnTraitTakesThePlaceOfItsSuites() async throws {
        var scoped = try #require(Test.current)
        let suite = MockBridgeTrait.mockBridge(seeds: [1, 2], timing: .instant)
        let own = MockBridgeTrait.mockBridge(.realistic(seed: 7))
        // As the testing library gives a test its suites' recursive traits, first, and scopes it
        // with each in that order.
        scoped.traits += [suite, own]
        let test = scoped
        let seen = Seen()
        try await suite.provideScope(for: test, testCase: Test.Case.current) {
            try await own.provideScope(for: test, testCase: Test.Case.current) {
                let bridge = try #require(MockBLEBridge.current)
                await seen.add(bridge.configuration.seed)
            }
        }
        #expect(await seen.seeds == [7])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func leftoversAreRecordedWithTheSeed() async throws {
        let trait = MockBridgeTrait.mockBridge(seeds: [5], timing: .instant)
        let test = try #require(Test.current)
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                let bridge = try #require(MockBLEBridge.current)
                await bridge.inject(ErrorInjection(.read, failure: .att(.readNotPermitted)))
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.hasPrefix("finish() found leftovers on bridge seed 5:") }
        }
    }

    /// A plan without a seed used to run nothing, and the test passed without testing anything.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [MockBridgeTrait.mockBridge(seeds: []), .mockBridge(seedCount: 0), .mockBridge(seedCount: -3)])
    func aTraitWithNoSeedRecordsAnIssueAndDoesNotRunTheBody(trait: MockBridgeTrait) async throws {
        let test = try #require(Test.current)
        let seen = Seen()
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) { await seen.add(0) }
        } matching: { issue in
            issue.comments.map(\.rawValue) == [BridgeTestPlan.EmptyPlan().description]
        }
        #expect(await seen.seeds.isEmpty)
    }

    /// A refused time limit or patience used to leave the trait waiting 10 s for a body that
    /// never started, then stop the test process saying the body did not end when cancelled.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [(Duration.zero, Duration.seconds(1)), (.seconds(3_600), .seconds(-1))])
    func aTraitWhoseRunArgumentsAreRefusedRecordsWhyAndDoesNotRunTheBody(
        timeLimit: Duration, stallPatience: Duration
    ) async throws {
        let trait = MockBridgeTrait.mockBridge(.realistic(seed: 3), timeLimit: timeLimit, stallPatience: stallPatience)
        let test = try #require(Test.current)
        let seen = Seen()
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) { await seen.add(0) }
        } matching: { issue in
            guard case .invalidArgument(let message)? = issue.error as? APIMisuseError else { return false }
            return message.hasPrefix("MockBLEBridge.run(timeLimit:stallPatience:_:): ")
                && issue.comments.contains { $0.rawValue == "the test threw on bridge seed 3" }
        }
        #expect(await seen.seeds.isEmpty)
        let outcome = await trait.plan.run(seed: 3) { await seen.add(1) }
        #expect(outcome.bodyNeverStarted)
        #expect(outcome.error is APIMisuseError)
        #expect(await seen.seeds.isEmpty)
    }

    /// Every seed is listed before the first runs: `Int.max` of them crashed the process.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [Int.max, MockBridgeTrait.maximumSeedCount + 1])
    func aTraitOfMoreSeedsThanItRunsRecordsAnIssueAndDoesNotRunTheBody(count: Int) async throws {
        let trait = MockBridgeTrait.mockBridge(seedCount: count)
        #expect(trait.plan.seeds.isEmpty)
        let test = try #require(Test.current)
        let seen = Seen()
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) { await seen.add(0) }
        } matching: { issue in
            issue.comments.map(\.rawValue) == [
                "mockBridge(seedCount: \(count)) is more seeds than a trait runs: give at most 10000000 "
                    + "(from: picks where they start)"
            ]
        }
        #expect(await seen.seeds.isEmpty)
        #expect(MockBridgeTrait.mockBridge(seedCount: 3, from: 5).plan.seeds == [5, 6, 7])
    }

    @Test func aPlanWithNoSeedIsRefusedWhateverTheSeedVariableSays() {
        let plan = BridgeTestPlan(configuration: .realistic(seed: 0), seeds: [])
        #expect(throws: BridgeTestPlan.EmptyPlan()) { try plan.seedsToRun(environment: [:]) }
        #expect(throws: BridgeTestPlan.EmptyPlan()) { try plan.seedsToRun(environment: ["BLEMOCKKIT_SEED": "17"]) }
        #expect(
            BridgeTestPlan.EmptyPlan().description
                == "the bridge test plan has no seed, so the test body would never run: give at least one seed "
                + "(seeds: [0], or seedCount: 1 or more)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aRunThatCannotEndIsRecordedAsAStallWithTheSeed() async throws {
        let trait = MockBridgeTrait(plan: BridgeTestPlan(configuration: .init(seed: 9), timeLimit: .seconds(5)))
        let test = try #require(Test.current)
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                // A peripheral that went out of range after it was found: a connection to it
                // can never come up.
                let sensor = MockPeripheralManager()
                try await sensor.startAdvertising(AdvertisementData(localName: "Gone"))
                let central = MockCentralManager()
                try await central.scanForPeripherals(withServices: nil)
                await sensor.simulateProximityChange(.outOfRange)
                try await central.connect(sensor.identifier)
            }
        } matching: { issue in
            guard let stall = issue.error as? MockBLEBridge.Stall else { return false }
            return stall.seed == 9 && issue.comments.contains { $0.rawValue == "the test threw on bridge seed 9" }
        }
    }

    /// The trait's own issues (an error the body threw, leftovers `finish()` found, a bad seed
    /// variable) point at the test, as the testing library's own do, not at the trait's source.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theTraitsIssuesPointAtTheTest() async throws {
        struct Boom: Error {}
        let test = try #require(Test.current)
        let thrower = MockBridgeTrait(plan: BridgeTestPlan(configuration: .init(seed: 3)))
        try await withKnownIssue {
            try await thrower.provideScope(for: test, testCase: Test.Case.current) { throw Boom() }
        } matching: { issue in
            issue.error is Boom && issue.sourceLocation == test.sourceLocation
                && issue.comments.contains { $0.rawValue == "the test threw on bridge seed 3" }
        }
        let leaver = MockBridgeTrait(plan: BridgeTestPlan(configuration: .init(seed: 4)))
        try await withKnownIssue {
            try await leaver.provideScope(for: test, testCase: Test.Case.current) {
                // An injection nothing ever meets: finish() reports it.
                await MockCentralManager().inject(ErrorInjection(.read, failure: .att(.readNotPermitted)))
            }
        } matching: { issue in
            issue.sourceLocation == test.sourceLocation
                && issue.comments.contains { $0.rawValue.hasPrefix("finish() found leftovers on bridge seed 4") }
        }
        let empty = MockBridgeTrait(plan: BridgeTestPlan(configuration: .init(seed: 0), seeds: []))
        try await withKnownIssue {
            try await empty.provideScope(for: test, testCase: Test.Case.current) {}
        } matching: { issue in
            issue.sourceLocation == test.sourceLocation
                && issue.comments.contains { $0.rawValue.hasPrefix("the bridge test plan has no seed") }
        }
    }

    /// A body that waits on a continuation of its own does not end when the stall cancels it;
    /// the trait waits for it to end before its scope returns (it used to return at once, and
    /// the process trapped: the testing library's closure had escaped its scope). Here the
    /// continuation is resumed half a second of wall-clock time after the stall.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aStalledBodyThatIgnoresCancellationIsWaitedForBeforeTheTestEnds() async throws {
        let trait = MockBridgeTrait(plan: BridgeTestPlan(configuration: .init(seed: 10), timeLimit: .seconds(5)))
        let test = try #require(Test.current)
        try await withKnownIssue {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                // Nothing the bridge knows of: the run stalls after its patience (1 s).
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1_500)) {
                        continuation.resume()
                    }
                }
            }
        } matching: { issue in
            (issue.error as? MockBLEBridge.Stall)?.seed == 10
        }
    }

    /// The same body in a test cancelled meanwhile (its time limit): the trait waits for it as
    /// well. It used to return at once, its own task being cancelled cutting the wait short, and
    /// the process trapped ("closure argument was escaped in withoutActuallyEscaping block").
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A cancelled test's body that ignores cancellation is waited for before the test ends")
    func aCancelledBodyThatIgnoresCancellationIsWaitedFor() async throws {
        let test = try #require(Test.current)
        let trait = MockBridgeTrait.mockBridge(seeds: [4, 5], stallPatience: .seconds(60))
        let ended = AppFlag()
        let (started, start) = AsyncStream<Void>.makeStream()
        let scope = Task {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                start.yield()
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) {
                        continuation.resume()
                    }
                }
                ended.set()
            }
        }
        for await _ in started { break }
        scope.cancel()
        await #expect(throws: CancellationError.self) { try await scope.value }
        #expect(ended.isSet)
    }

    /// A test cancelled before its body starts: the run throws before starting it, and the trait
    /// does not wait for a body that never began (it used to wait ten seconds for it, then stop
    /// the process).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A test cancelled before its body starts ends cancelled at once, its body never run")
    func aTestCancelledBeforeItsBodyStartsEndsAtOnce() async throws {
        let test = try #require(Test.current)
        let trait = MockBridgeTrait.mockBridge(seeds: [4, 5])
        let ran = AppFlag()
        let scope = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await trait.provideScope(for: test, testCase: Test.Case.current) { ran.set() }
        }
        await #expect(throws: CancellationError.self) { try await scope.value }
        #expect(!ran.isSet)
    }

    #if compiler(>=6.2)
        /// The comments of the issues recorded in `body`, which are then dropped.
        final class Captured: @unchecked Sendable {
            // @unchecked Sendable: `comments` is only touched under `lock`.
            private let lock = NSLock()
            private var stored: [[String]] = []
            func add(_ comments: [String]) { lock.withLock { stored.append(comments) } }
            var comments: [[String]] { lock.withLock { stored } }

            /// The comments of the issues the current test records while `trait` runs `body`
            /// once per seed with the seed's bridge (the issues are kept from the test).
            @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
            static func comments(
                of trait: MockBridgeTrait, _ body: @escaping @Sendable (MockBLEBridge) throws -> Void
            ) async throws -> [[String]] {
                let test = try #require(Test.current)
                let captured = Captured()
                let capture = IssueHandlingTrait.compactMapIssues { issue in
                    captured.add(issue.comments.map(\.rawValue))
                    return nil
                }
                try await capture.provideScope(for: test, testCase: Test.Case.current) {
                    try await trait.provideScope(for: test, testCase: Test.Case.current) {
                        try body(try #require(MockBLEBridge.current))
                    }
                }
                return captured.comments
            }
        }

        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        @Test func anIssueOnOneOfSeveralSeedsNamesThatSeedAndHowToRerunIt() async throws {
            let comments = try await Captured.comments(of: .mockBridge(seeds: [1, 2, 3], timing: .instant)) {
                if $0.configuration.seed == 2 { Issue.record("the app lost a chunk") }
            }
            #expect(
                comments == [
                    [
                        "the app lost a chunk",
                        "bridge seed 2; rerun only it: BLEMOCKKIT_SEED=2 swift test --filter "
                            + "anIssueOnOneOfSeveralSeedsNamesThatSeedAndHowToRerunIt",
                        "the run's timeline and bridge log are attached to the test as "
                            + "anIssueOnOneOfSeveralSeedsNamesThatSeedAndHowToRerunIt-seed-2-timeline.html and "
                            + "anIssueOnOneOfSeveralSeedsNamesThatSeedAndHowToRerunIt-seed-2-log.txt "
                            + "(swift test --attachments-path DIR saves them, into a folder that exists: mkdir -p DIR first)",
                    ]
                ])
        }

        /// A failed `#require` throws after the testing library recorded its issue: the trait
        /// records nothing more (it used to add a second issue, "An API was misused", with the
        /// `ExpectationFailedError`, as if the test had thrown an error of its own).
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        @Test("A failed #require on one of several seeds is one issue, naming the seed")
        func aFailedRequireIsRecordedOnce() async throws {
            let comments = try await Captured.comments(of: .mockBridge(seeds: [1, 2], timing: .instant)) {
                try #require($0.configuration.seed != 2, "the watch answered")
            }
            let name = "aFailedRequireIsRecordedOnce"
            #expect(
                comments == [
                    [
                        "the watch answered",
                        "bridge seed 2; rerun only it: BLEMOCKKIT_SEED=2 swift test --filter \(name)",
                        "the run's timeline and bridge log are attached to the test as \(name)-seed-2-timeline.html "
                            + "and \(name)-seed-2-log.txt (swift test --attachments-path DIR saves them, into a "
                            + "folder that exists: mkdir -p DIR first)",
                    ]
                ])
        }

        /// A test cancelled while one of its seeds runs (`Test.cancel()`, its time limit) ends
        /// there, with the cancellation, for the testing library to report the test cancelled.
        /// The trait used to record the body's `CancellationError` as a failure naming the seed,
        /// with the run's files and leftovers, then run every seed left, each failing the same way.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        @Test("A test cancelled during a seed's run ends cancelled, with no issue and no further seed")
        func aCancelledTestEndsWithItsCancellation() async throws {
            let test = try #require(Test.current)
            let trait = MockBridgeTrait.mockBridge(seeds: [1, 2, 3], stallPatience: .seconds(60))
            let captured = Captured()
            let seen = Seen()
            let (started, start) = AsyncStream<Void>.makeStream()
            let scope = Task {
                let capture = IssueHandlingTrait.compactMapIssues { issue in
                    captured.add(issue.comments.map(\.rawValue))
                    return nil
                }
                try await capture.provideScope(for: test, testCase: Test.Case.current) {
                    try await trait.provideScope(for: test, testCase: Test.Case.current) {
                        let bridge = try #require(MockBLEBridge.current)
                        await seen.add(bridge.configuration.seed)
                        // Something on its way, left over when the run ends.
                        await bridge.inject(ErrorInjection(.read, failure: .att(.readNotPermitted)))
                        start.yield()
                        try await Task.sleep(for: .seconds(3_600))  // (ends when cancelled)
                    }
                }
            }
            for await _ in started { break }
            scope.cancel()
            await #expect(throws: CancellationError.self) { try await scope.value }
            #expect(await seen.seeds == [1])
            #expect(captured.comments == [])
        }

        /// A test with parameters is named by its base name: `swift test --filter` takes a
        /// regular expression, in which `(_:)` is a group that matches no test, and a shell
        /// takes unquoted parentheses as syntax (the command used to be
        /// `swift test --filter aParameterizedTest…(_:)`, which ran nothing when quoted).
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        @Test(arguments: [7])
        func aParameterizedTestsRerunCommandNamesItWithoutItsParameters(_ argument: Int) async throws {
            let comments = try await Captured.comments(of: .mockBridge(seeds: [1, 2], timing: .instant)) {
                if $0.configuration.seed == 2 { Issue.record("chunk \(argument) was lost") }
            }
            let name = "aParameterizedTestsRerunCommandNamesItWithoutItsParameters"
            #expect(
                comments.first?.dropFirst().first
                    == "bridge seed 2; rerun only it: BLEMOCKKIT_SEED=2 swift test --filter \(name)")
            // (The files are the case's: see FailureArtifactsTests.)
            #expect(comments.first?.last?.contains("\(name)-case-1-seed-2-timeline.html") == true)
        }
    #endif

    @Test func aSeedCountRunsThatManySeedsFromTheFirst() {
        #expect(MockBridgeTrait.mockBridge(seedCount: 3).plan.seeds == [0, 1, 2])
        #expect(MockBridgeTrait.mockBridge(seedCount: 2, from: 40).plan.seeds == [40, 41])
        #expect(MockBridgeTrait.mockBridge(seedCount: 0).plan.seeds == [])
        #expect(MockBridgeTrait.mockBridge(seedCount: -1).plan.seeds == [])
        #expect(MockBridgeTrait.mockBridge(seedCount: 1).plan.configuration.timing == .realistic)
        #expect(MockBridgeTrait.mockBridge.plan.seeds == [0])
        #expect(MockBridgeTrait.mockBridge.plan.configuration.timing == .instant)
        #expect(MockBridgeTrait.mockBridge(.realistic(seed: 8)).plan.seeds == [8])
    }

    @Test func everyFormOfTheTraitTakesATimeLimitAndAStallPatience() {
        #expect(MockBridgeTrait.mockBridge.plan.stallPatience == .seconds(1))
        #expect(MockBridgeTrait.mockBridge.plan.timeLimit == .seconds(3_600))
        for trait in [
            MockBridgeTrait.mockBridge(.fast, timeLimit: .seconds(9), stallPatience: .milliseconds(50)),
            .mockBridge(seedCount: 2, timeLimit: .seconds(9), stallPatience: .milliseconds(50)),
            .mockBridge(seeds: [5], timeLimit: .seconds(9), stallPatience: .milliseconds(50)),
        ] {
            #expect(trait.plan.timeLimit == .seconds(9))
            #expect(trait.plan.stallPatience == .milliseconds(50))
        }
        #expect(MockBridgeTrait.mockBridge(seedCount: 1).plan.stallPatience == .seconds(1))
    }

    /// The flag app code sets on a queue of its own, `delay` of wall time after the wait began,
    /// while the run holds the simulation for it: within the plan's patience the wait ends,
    /// past it the run stalls (paused).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func waitForAppWork(
        _ plan: BridgeTestPlan, delay: DispatchTimeInterval
    ) async -> BridgeTestPlan.Outcome {
        await plan.run(seed: 1) {
            let bridge = try #require(MockBLEBridge.current)
            let done = AppFlag()
            DispatchQueue(label: "app-work").asyncAfter(deadline: .now() + delay) { done.set() }
            try await bridge.waitForApp(pausingSimulation: true) { done.isSet }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aPlansStallPatienceIsHowLongItsRunsWaitForAppWork() async throws {
        let patient = await Self.waitForAppWork(
            BridgeTestPlan(stallPatience: .seconds(30)), delay: .milliseconds(300))
        #expect(patient.isClean, "\(String(describing: patient.error))")
        let impatient = await Self.waitForAppWork(BridgeTestPlan(stallPatience: .zero), delay: .milliseconds(300))
        let stall = try #require(impatient.error as? MockBLEBridge.Stall)
        #expect(stall.reason == .paused)
        #expect(stall.seed == 1)
        let negative = await Self.waitForAppWork(BridgeTestPlan(stallPatience: .seconds(-1)), delay: .seconds(0))
        #expect(
            negative.error as? APIMisuseError
                == .invalidArgument("MockBLEBridge.run(timeLimit:stallPatience:_:): stallPatience: -1s is outside 0s…"))
    }

    @Test func theSeedVariableNarrowsAPlanToOneSeed() throws {
        let plan = BridgeTestPlan(configuration: .realistic(seed: 0), seeds: [1, 2, 3])
        #expect(try plan.seedsToRun(environment: [:]) == [1, 2, 3])
        #expect(try plan.seedsToRun(environment: ["BLEMOCKKIT_SEED": "17"]) == [17])
        #expect(try plan.seedsToRun(environment: ["BLEMOCKKIT_SEED": " 2 "]) == [2])
        #expect(throws: BridgeTestPlan.BadSeedVariable(text: "x7")) {
            try plan.seedsToRun(environment: ["BLEMOCKKIT_SEED": "x7"])
        }
        #expect(
            BridgeTestPlan.BadSeedVariable(text: "-1").description
                == "BLEMOCKKIT_SEED=-1 is not a seed: give a whole number from 0 to 2^64-1")
        #expect(BridgeTestPlan(configuration: .init(seed: 42)).seeds == [42])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aPlansRunReportsWhatTheBodyThrewAndWhatWasLeftOver() async throws {
        let plan = BridgeTestPlan(configuration: .fast)
        struct Boom: Error {}
        let thrown = await plan.run(seed: 3) { throw Boom() }
        #expect(thrown.error is Boom)
        #expect(thrown.finish.isClean)
        #expect(!thrown.isClean)
        #expect(thrown.rerun(testName: "uploads") == "BLEMOCKKIT_SEED=3 swift test --filter uploads")
        let clean = await plan.run(seed: 4) { _ = MockCentralManager() }
        #expect(clean.isClean)
        #expect(clean.seed == 4)
    }
}

/// Managers made without a bridge, and what they say when they end up on different ones.
@Suite("Managers and their bridge", .timeLimit(.minutes(10)))
struct ManagerBridgeTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aManagerMadeWithoutABridgeInsideARunJoinsTheRunsBridge() async throws {
        let bridge = MockBLEBridge()
        try await bridge.run {
            #expect(MockCentralManager().bridge === bridge)
            #expect(MockPeripheralManager().bridge === bridge)
        }
        #expect(MockCentralManager().bridge !== bridge)
    }

    @Test func connectingToAPeripheralOnAnotherBridgeSaysHowToShareOne() async throws {
        let sensor = MockPeripheralManager()
        try await sensor.startAdvertising(AdvertisementData(localName: "Tag"))
        let central = MockCentralManager()
        let error = await #expect(throws: CoreBluetoothError(.unknownDevice)) {
            try await central.connect(sensor.identifier)
        }
        #expect(
            error?.reason
                == "No manager on this central's bridge has identifier \(sensor.identifier.uuidString): a manager "
                + "created without a bridge gets one of its own. Create one MockBLEBridge and pass it to both "
                + "managers (bridge: bridge), or create them inside bridge.run { } or a test with the .mockBridge "
                + "trait, where they share its bridge.")
        #expect(error.map(String.init(describing:))?.hasPrefix("CoreBluetooth error 12 unknownDevice: ") == true)
        // Errors still compare by code.
        #expect(error == CoreBluetoothError(.unknownDevice, reason: "anything"))
        #expect(error?.hashValue == CoreBluetoothError(.unknownDevice).hashValue)
    }
}

/// What a failed run says of the calls its app made that the CoreBluetooth-shaped API ignored.
@Suite("Unanswered calls in a failed run", .timeLimit(.minutes(10)))
struct UnansweredCallsInAFailedRunTests {
    /// Text noted from anywhere (issues' comments, a manager's name), in order.
    final class Notes: @unchecked Sendable {
        // @unchecked Sendable: `texts` is only read and written with `lock` held.
        private let lock = NSLock()
        private var texts: [String] = []
        func add(_ text: String) { lock.withLock { texts.append(text) } }
        var all: [String] { lock.withLock { texts } }
    }

    /// The classic mistake: a scan as soon as the manager is made (CoreBluetooth ignores it).
    /// Notes the manager's name in `names`.
    @MainActor
    static func scanTooEarly(noting names: Notes) {
        let manager = CBMCentralManager(delegate: nil, queue: nil)
        names.add(String(manager.simulatedCentral!.identifier.uuidString.prefix(8)))
        manager.scanForPeripherals(withServices: nil)
    }

    #if compiler(>=6.2)
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        @Test func aFailedTestsUnansweredCallsAreRecordedWithTheSeed() async throws {
            let trait = MockBridgeTrait.mockBridge(seeds: [21], timing: .instant)
            let test = try #require(Test.current)
            let comments = Notes()
            let names = Notes()
            // Every issue the scope records is captured instead of failing this test.
            let capture = IssueHandlingTrait.compactMapIssues { issue in
                for comment in issue.comments { comments.add(comment.rawValue) }
                return nil
            }
            try await capture.provideScope(for: test, testCase: Test.Case.current) {
                try await trait.provideScope(for: test, testCase: Test.Case.current) {
                    await Self.scanTooEarly(noting: names)
                    Issue.record("nothing was found")
                }
            }
            let name = try #require(names.all.first)
            #expect(comments.all.first == "nothing was found")
            #expect(
                comments.all.contains(
                    "calls the app made on bridge seed 21 that got no callback, as with CoreBluetooth:\n"
                        + "- CBMCentralManager \(name), ignored: scanForPeripherals: the manager is not powered on"),
                "\(comments.all)")
        }
    #endif

    /// A test that passes says nothing of them (its app may mean to make such calls).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aPassingTestsUnansweredCallsAreNotRecorded() async throws {
        let trait = MockBridgeTrait.mockBridge(seeds: [22], timing: .instant)
        let test = try #require(Test.current)
        let names = Notes()
        try await trait.provideScope(for: test, testCase: Test.Case.current) {
            await Self.scanTooEarly(noting: names)
        }
        #expect(names.all.count == 1)
    }

    /// The note of a run's outcome: the ignored calls, unless a stall named them already or
    /// there were none.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anOutcomesNoteListsTheUnansweredCallsUnlessAStallDid() async throws {
        let names = Notes()
        let plan = BridgeTestPlan(configuration: .init(seed: 23))
        let ignored = await plan.run(seed: 23) { await Self.scanTooEarly(noting: names) }
        let name = try #require(names.all.first)
        #expect(
            ignored.unansweredCallsNote
                == "calls the app made on bridge seed 23 that got no callback, as with CoreBluetooth:\n"
                + "- CBMCentralManager \(name), ignored: scanForPeripherals: the manager is not powered on")
        let none = await plan.run(seed: 24) {}
        #expect(none.unansweredCallsNote == nil)
        let stalled = await plan.run(seed: 25) {
            await Self.scanTooEarly(noting: names)
            try await MockBLEBridge.current!.waitForApp { false }
        }
        #expect(stalled.error is MockBLEBridge.Stall)
        #expect(stalled.unansweredCallsNote == nil)
        #expect((stalled.error as? MockBLEBridge.Stall)?.unansweredCalls.count == 1)
    }
}

/// A flag app code sets on its own queue and a test reads from another.
final class AppFlag: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read and written with `lock` held.
    private let lock = NSLock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }

    func set() { lock.withLock { value = true } }
}
