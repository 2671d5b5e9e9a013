import Foundation
import Testing

@testable import BLEMockKit

/// What a run's driver waits for before it applies the app calls front ends held for an instant:
/// every app queue passed until a pass finds no more activity
/// (``MockBLEBridge/passProbesUntilQuiet()``).
@Suite("A run's passes through the app queues", .timeLimit(.minutes(10)))
struct SettlingPassesTests {
    /// What the app queues' blocks did, in the order they did it.
    final class Calls: @unchecked Sendable {
        // @unchecked Sendable: `made` and `handed` are only read and written with `lock` held.
        private let lock = NSLock()
        private var made: [String] = []
        private var handed: Set<String> = []

        func note(_ call: String) { lock.withLock { made.append(call) } }
        var all: [String] { lock.withLock { made } }

        /// How many probes handed their block before `name` did, when it hands its block now (the
        /// first time it is asked); `nil` after.
        func handsFirstTime(_ name: String) -> Int? {
            lock.withLock { handed.insert(name).inserted ? handed.count - 1 : nil }
        }
    }

    /// A probe through `queue`, as a front end's (twice through it), that the first time it is
    /// passed hands `other` a block taking a moment and then calling the kit (noted activity):
    /// code running as a pass goes on, handing work to a queue the pass may have passed already.
    /// The first probe passed hands a short block, the next a long one: the pass through the
    /// first's queue, over before either was handed, waits for neither; the pass through the
    /// next's queue waits for the short one, which was handed to it.
    static func probe(
        named name: String, through queue: DispatchQueue, handing other: DispatchQueue, _ calls: Calls,
        _ outside: OutsideWork
    ) -> @Sendable () async -> Void {
        {
            if let order = calls.handsFirstTime(name) {
                let moment: DispatchTimeInterval = order == 0 ? .milliseconds(20) : .milliseconds(200)
                other.async {
                    _ = DispatchSemaphore(value: 0).wait(timeout: .now() + moment)
                    calls.note("call handed by \(name)")
                    outside.noteActivity()
                }
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                queue.async { queue.async { continuation.resume() } }
            }
        }
    }

    @Test func aBlockOneAppQueueHandsAnotherDuringAPassHasRunBeforeTheHeldCallsAreApplied() async {
        let bridge = MockBLEBridge()
        let calls = Calls()
        let (first, second) = (DispatchQueue(label: "first"), DispatchQueue(label: "second"))
        // Whichever probe passes first, the block the second hands its queue comes after that
        // queue's pass: one pass leaves it out.
        let outside = bridge.outside
        let tokens = [
            outside.addProbe(Self.probe(named: "first", through: first, handing: second, calls, outside)),
            outside.addProbe(Self.probe(named: "second", through: second, handing: first, calls, outside)),
        ]
        defer { for token in tokens { outside.removeProbe(token) } }
        _ = await bridge.passProbesUntilQuiet()
        #expect(calls.all.sorted() == ["call handed by first", "call handed by second"])
    }

    @Test func anAppThatNeverStopsCallingIsPassedABoundedNumberOfTimes() async {
        let bridge = MockBLEBridge()
        let passes = Calls()
        let queue = DispatchQueue(label: "busy")
        let outside = bridge.outside
        let token = outside.addProbe {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                queue.async {
                    passes.note("pass")
                    outside.noteActivity()
                    continuation.resume()
                }
            }
        }
        defer { outside.removeProbe(token) }
        _ = await bridge.passProbesUntilQuiet()
        #expect(passes.all.count == 1 + MockBLEBridge.settlingPasses)
    }

    @Test func quietAppQueuesArePassedOnce() async {
        let bridge = MockBLEBridge()
        let passes = Calls()
        let queue = DispatchQueue(label: "quiet")
        let token = bridge.outside.addProbe {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                queue.async {
                    passes.note("pass")
                    continuation.resume()
                }
            }
        }
        defer { bridge.outside.removeProbe(token) }
        #expect(await bridge.passProbesUntilQuiet())
        #expect(passes.all.count == 1)
    }

    // A step moves time only if nothing happened outside since the driver last found the app
    // queues quiet: a body on the main actor that goes on as its pause ends (a `waitForApp`
    // returning) calls the simulation at that instant, not one event later.
    @Test func aStepAfterActivitySinceTheQueuesWereFoundQuietDoesNotMoveTime() async {
        let bridge = MockBLEBridge()
        await bridge.schedule(.reset(peripheral: UUID()), after: .seconds(1))
        let outside = bridge.outside
        let token = outside.addProbe(reportingQuiet: { true })
        defer { outside.removeProbe(token) }
        #expect(await bridge.settleOutside() == false)
        outside.noteActivity()
        #expect(await bridge.step() == .lookAgain)
        #expect(bridge.clock.now == .zero)
        // Found quiet again: the step runs the event.
        #expect(await bridge.settleOutside() == false)
        #expect(await bridge.step() == .ran)
        #expect(bridge.clock.now == VirtualClock.Instant.zero.advanced(by: .seconds(1)))
    }

    @Test func thePauseEndingCountsAsActivityOnlyWhenTheLastHoldIsReleased() {
        let outside = MockBLEBridge().outside
        let before = outside.activity
        outside.holdTime()
        outside.holdTime()
        outside.releaseTime()
        #expect(outside.activity == before)
        #expect(outside.isHoldingTime)
        outside.releaseTime()
        #expect(outside.activity == before + 1)
        #expect(!outside.isHoldingTime)
    }

    @Test func aBridgeWithNoOutsideWorkStepsWhateverActivityThereWas() async {
        let bridge = MockBLEBridge()
        await bridge.schedule(.reset(peripheral: UUID()), after: .seconds(2))
        let outside = bridge.outside
        let token = outside.addProbe(reportingQuiet: { true })
        #expect(await bridge.settleOutside() == false)
        outside.removeProbe(token)
        outside.noteActivity()
        #expect(outside.timeGate(owedTo: { _, _ in true }) == .lookAgain)
        // No probe or settler left: nothing outside to wait for.
        #expect(await bridge.settleOutside() == false)
        #expect(outside.timeGate(owedTo: { _, _ in true }) == .open)
        #expect(await bridge.step() == .ran)
        #expect(bridge.clock.now == VirtualClock.Instant.zero.advanced(by: .seconds(2)))
    }

    // The driver marks what the settlers hold as it begins each pass, and applies only that.
    @Test func eachPassBeginsByMarkingWhatTheSettlersHold() async {
        let bridge = MockBLEBridge()
        let calls = Calls()
        let queue = DispatchQueue(label: "app")
        let outside = bridge.outside
        let settler = outside.addSettler(
            OutsideWork.Settler(
                mark: { calls.note("mark") },
                apply: { _, upToMark in
                    calls.note("apply upToMark=\(upToMark)")
                    return false
                }))
        let probe = outside.addProbe { () async -> Void in
            calls.note("pass")
            // The first pass sees a call: a second pass follows, marked anew.
            if calls.handsFirstTime("probe") != nil { outside.noteActivity() }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                queue.async { continuation.resume() }
            }
        }
        defer {
            outside.removeProbe(probe)
            outside.removeSettler(settler)
        }
        _ = await bridge.settleOutside()
        #expect(Array(calls.all.prefix(5)) == ["mark", "pass", "mark", "pass", "apply upToMark=true"])
    }
}
