import BLECBM
import BLEMockKit
import BLEMockKitTesting
import Foundation
import Testing

@testable import BlinkyExample

/// The `.simulatedSystem` trait with a hybrid-watch companion and its watch, delegate-style apps
/// on queues of their own, as a team writes new Swift Testing tests for them: the trait on a
/// suite and on a test, `confirmation()`, continuations wrapping the apps' callbacks. Part of
/// ``SimulatedSystemTraitTests`` (so they run in its process of their own). The waits' wall-clock
/// limits only bound a failure.
extension SimulatedSystemTraitTests {
    /// Returns once the app has noted `event` (`times` times), `false` after `seconds` of wall
    /// time without it.
    static func event(_ event: String, times: Int = 1, of app: HybridWatchCompanion, within seconds: Double = 10)
        async -> Bool
    {
        let waiter = Waiter<Bool>()
        app.when(event, times: times) { waiter.give(true) }
        return await waiter.wait(seconds: seconds) == true
    }

    static func event(_ event: String, of watch: HybridWatch, within seconds: Double = 10) async -> Bool {
        let waiter = Waiter<Bool>()
        watch.when(event) { waiter.give(true) }
        return await waiter.wait(seconds: seconds) == true
    }

    /// A watch advertising and a companion connected to it, subscribed and ready.
    static func connectedApps() async throws -> (HybridWatchCompanion, HybridWatch) {
        let watch = HybridWatch()
        try #require(await event("advertising", of: watch))
        let companion = HybridWatchCompanion(connectTimeout: 5)
        try #require(await event("powered on", of: companion))
        companion.findWatch()
        try #require(await event("ready", of: companion))
        try #require(await event("subscribed", of: watch))
        return (companion, watch)
    }

    static func sequence(_ count: Int) -> [Data] { (0..<count).map { Data([UInt8($0 >> 8), UInt8($0 & 0xFF)]) } }

    @Suite(
        "The hybrid watch apps on the trait's realistic system", .simulatedSystem(.realistic(seed: 9)),
        .timeLimit(.minutes(10)))
    struct HybridWatchSuite {
        @Test("The companion connects within its own timeout and streams a file paced by readiness")
        func theCompanionStreamsAFile() async throws {
            let (companion, watch) = try await connectedApps()
            let length = try #require(companion.maximumWriteWithoutResponse)
            #expect(length > 20)
            let file = (0..<(length * 60)).map { UInt8(truncatingIfNeeded: $0 &* 11) }
            try await confirmation("the watch received the whole file") { received in
                companion.send(file: file)
                try #require(await event("received \(file.count)", of: watch))
                received()
            }
            #expect(watch.queue.sync { watch.received } == file)
            #expect(companion.queue.sync { companion.pausesForReadiness } > 0)
            #expect(!companion.queue.sync { companion.events }.contains("connect timed out"))
        }

        @Test("The companion reads RSSI through a continuation and gets a burst of notifications in order")
        func rssiAndNotifications() async throws {
            let (companion, watch) = try await connectedApps()
            let rssi = await withCheckedContinuation { (continuation: CheckedContinuation<Int?, Never>) in
                companion.when("rssi") { continuation.resume(returning: companion.lastRSSI) }
                companion.readRSSI()
            }
            #expect((-127 ... -1).contains(try #require(rssi)))
            watch.notifyActivity(count: 150)
            try #require(await event("activity 150", of: companion))
            #expect(companion.queue.sync { companion.activity } == sequence(150))
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "In virtual time, the companion reconnects by identifier after Bluetooth is turned off and on",
        .simulatedSystem(.realistic(seed: 9), time: .virtual))
    func aPowerCycleInVirtualTime() async throws {
        let bridge = try #require(SimulatedSystem.current).bridge
        let events = try await bridge.run { () -> [String] in
            let watch = HybridWatch()
            let companion = HybridWatchCompanion(connectTimeout: 5)
            try await bridge.waitForApp { watch.queue.sync { watch.events.contains("advertising") } }
            try await bridge.waitForApp { companion.queue.sync { companion.events.contains("powered on") } }
            companion.findWatch()
            try await bridge.waitForApp { companion.queue.sync { companion.events.contains("ready") } }
            CBMCentralManagerMock.simulatePowerOff()
            try await bridge.waitForApp { companion.queue.sync { companion.events.contains("powered off") } }
            CBMCentralManagerMock.simulatePowerOn()
            try await bridge.waitForApp {
                companion.queue.sync { companion.events.filter { $0 == "ready" }.count == 2 }
            }
            return companion.queue.sync { companion.events }
        }
        #expect(
            events == [
                "powered on", "discovered", "connected", "ready", "powered off", "powered on", "retrieved",
                "connected", "ready",
            ])
    }

    @Test("A fast system: a connection within the app's timeout, confirmed once", .simulatedSystem)
    func aFastConnectionIsConfirmedOnce() async throws {
        let watch = HybridWatch()
        try #require(await Self.event("advertising", of: watch))
        let companion = HybridWatchCompanion(connectTimeout: 5)
        try #require(await Self.event("powered on", of: companion))
        try await confirmation("connected", expectedCount: 1) { connected in
            companion.when("connected") { connected() }
            companion.findWatch()
            try #require(await Self.event("ready", of: companion))
        }
        #expect(companion.queue.sync { companion.events } == ["powered on", "discovered", "connected", "ready"])
    }

    #if compiler(>=6.2)
        @Test("A failed test whose app left a connection waiting is told which, with the app's central")
        func aFailedTestNamesTheWatchConnectionLeftWaiting() async throws {
            let identifier = UUID(uuidString: "5A7E0000-0000-0000-0000-0000000010F2")!
            let kept = KeptCompanion()
            let comments = try await Self.capturingIssues {
                CBMCentralManagerMock.simulatePeripherals([SimulatedSystemTraitTests.farSpec(identifier)])
                // The app forgot to arm its timeout (an hour).
                let companion = HybridWatchCompanion(connectTimeout: 3_600)
                kept.app = companion
                guard await Self.event("powered on", of: companion) else { return }
                companion.reconnect(to: identifier)
                guard await Self.event("retrieved", of: companion) else { return }
                if !(await Self.event("connected", of: companion, within: 0.2)) {
                    Issue.record("the companion did not connect")
                }
            }
            kept.app = nil
            #expect(comments.count == 2, "\(comments)")
            #expect(comments.first == "the companion did not connect")
            let note = try #require(comments.last)
            #expect(
                note.hasPrefix(
                    "operations the app started on the simulated system that were still waiting for their callback "
                        + "(a connection attempt does not time out, as with CoreBluetooth):\n- central "), "\(note)")
            #expect(note.contains(": connect on peripheral 5A7E0000 was still waiting (since "), "\(note)")
        }

        final class KeptCompanion: @unchecked Sendable {
            // @unchecked Sendable: set by the test's body, then after it.
            var app: HybridWatchCompanion?
        }
    #endif
}
