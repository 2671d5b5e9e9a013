import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("Link figures", .timeLimit(.minutes(10)))
struct LinkFiguresTests {
    static let p = UUID(uuidString: "E4546FDA-DA9E-4A73-96DA-AEC92CD44D42")!
    static let other = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    static func update(_ milliseconds: Int, bytes: Int = 20) -> SessionRecording.Entry {
        SessionRecording.Entry(
            time: .milliseconds(milliseconds),
            event: .valueUpdated(peripheral: p, handle: 3, value: .bytes(Data(count: bytes)), isIndication: false))
    }

    static func write(_ milliseconds: Int, bytes: Int = 20) -> SessionRecording.Entry {
        SessionRecording.Entry(
            time: .milliseconds(milliseconds),
            event: .write(peripheral: p, handle: 5, value: .bytes(Data(count: bytes)), withResponse: false, error: nil))
    }

    @Test func arrivalsGiveTheIntervalPacketsPerEventJitterAndThroughput() {
        var entries = [SessionRecording.Entry(time: .zero, event: .connected(peripheral: Self.p, mtu: 23))]
        // A burst: 4, 4 and 2 notifications at 0, 30 and 62 ms; a second burst a second later.
        entries += [0, 0, 0, 0, 30, 30, 30, 30, 62, 62].map { Self.update($0) }
        entries += [1_000, 1_000, 1_030].map { Self.update($0) }
        // Another peripheral's notifications do not count.
        entries.append(
            SessionRecording.Entry(
                time: .milliseconds(1_031),
                event: .valueUpdated(
                    peripheral: Self.other, handle: 3, value: .bytes(Data(count: 20)), isIndication: false)))
        let figures = SessionRecording(entries: entries).linkFigures(of: Self.p)
        #expect(figures.mtu == 23 && figures.connections == 1)
        #expect(figures.notifications == 13 && figures.notificationEvents == 5)
        // Gaps 30, 32, 938, 30 ms: the median is 32 ms.
        #expect(figures.connectionInterval == .milliseconds(32))
        #expect(figures.jitter == .milliseconds(2))
        #expect(figures.packetsPerConnectionEvent == 4)
        // 260 bytes over (62 + 32) + (30 + 32) ms = 156 ms.
        #expect(figures.notificationThroughput == Int((260.0 / 0.156).rounded()))
        #expect(figures.writeWithoutResponseThroughput == nil)
        let timing = figures.linkTiming
        #expect(timing.connectionInterval == .milliseconds(32))
        #expect(timing.jitter == .milliseconds(2))
        #expect(timing.packetsPerConnectionEvent == 4)
        #expect(timing.connectionLatency == LinkTiming.realistic.connectionLatency)
        #expect(timing.supervisionTimeout == LinkTiming.realistic.supervisionTimeout)
    }

    @Test func arrivalsLessThanTheWindowAfterTheOneBeforeShareAConnectionEvent() {
        // The first test's session as a device's clock times it: within a connection event each
        // notification 1 ms after the one before (the event's first a few microseconds late).
        var entries = [SessionRecording.Entry(time: .zero, event: .connected(peripheral: Self.p, mtu: 23))]
        var previous = -1
        var index = 0
        for milliseconds in [0, 0, 0, 0, 30, 30, 30, 30, 62, 62, 1_000, 1_000, 1_030] {
            index = milliseconds == previous ? index + 1 : 0
            previous = milliseconds
            let time = Duration.milliseconds(milliseconds) + .microseconds(7) + .milliseconds(index)
            entries.append(
                SessionRecording.Entry(
                    time: time,
                    event: .valueUpdated(
                        peripheral: Self.p, handle: 3, value: .bytes(Data(count: 20)), isIndication: false)))
        }
        let figures = SessionRecording(entries: entries).linkFigures(of: Self.p)
        #expect(figures.notifications == 13 && figures.notificationEvents == 5)
        #expect(figures.connectionInterval == .milliseconds(32))
        #expect(figures.jitter == .milliseconds(2))
        #expect(figures.packetsPerConnectionEvent == 4)
        #expect(LinkFigures.connectionEventWindow == .milliseconds(3))
    }

    @Test func anArrivalTheWholeWindowAfterTheOneBeforeStartsAConnectionEvent() {
        let window = LinkFigures.connectionEventWindow
        // Two events: the third arrival just under the window after the second, the fourth the
        // whole window after the third.
        let third = window / 2 + window - .nanoseconds(1)
        let entries = [.zero, window / 2, third, third + window].map { time in
            SessionRecording.Entry(
                time: time,
                event: .valueUpdated(peripheral: Self.p, handle: 3, value: .bytes(Data(count: 20)), isIndication: false)
            )
        }
        let figures = SessionRecording(entries: entries).linkFigures(of: Self.p)
        #expect(figures.notificationEvents == 2)
        #expect(figures.packetsPerConnectionEvent == 3)
        // The interval runs from the first event's first arrival to the second event's.
        #expect(figures.connectionInterval == third + window)
    }

    @Test func writesAloneGiveTheIntervalAndTheirThroughputButNotPacketsPerEvent() {
        let entries = [0, 0, 15, 15, 30].map { Self.write($0, bytes: 100) }
        let figures = SessionRecording(entries: entries).linkFigures(of: Self.p)
        #expect(figures.connections == 0 && figures.mtu == nil)
        #expect(figures.connectionInterval == .milliseconds(15))
        #expect(figures.packetsPerConnectionEvent == nil)
        #expect(figures.notificationThroughput == nil)
        #expect(figures.writeWithoutResponseThroughput == Int((500.0 / 0.045).rounded()))
        #expect(figures.linkTiming.packetsPerConnectionEvent == LinkTiming.realistic.packetsPerConnectionEvent)
    }

    @Test func aSessionWithoutArrivalsKeepsRealisticTiming() {
        let entries = [Self.update(5), Self.write(9)]
        let figures = SessionRecording(entries: entries).linkFigures(of: Self.p)
        #expect(figures.connectionInterval == nil && figures.notificationThroughput == nil)
        #expect(figures.notifications == 1 && figures.notificationEvents == 1)
        #expect(figures.linkTiming.connectionInterval == LinkTiming.realistic.connectionInterval)
        #expect(figures.packetsPerConnectionEvent == nil)
        #expect(figures.linkTiming == LinkTiming.realistic)
    }

    @Test func anAppsOwnPausesBetweenSingleArrivalsAreNotTakenForTheInterval() {
        // A sparse session on a 30 ms link: one notification or write at a time, when the app
        // acted. Nothing shows two connection events back to back.
        var entries = [SessionRecording.Entry(time: .zero, event: .connected(peripheral: Self.p, mtu: 185))]
        entries += [Self.update(95), Self.write(120), Self.update(250), Self.update(300), Self.write(400)]
        entries += [Self.update(480)]
        let figures = SessionRecording(entries: entries).linkFigures(of: Self.p)
        #expect(figures.notifications == 4 && figures.notificationEvents == 4)
        #expect(figures.connectionInterval == nil)
        #expect(figures.jitter == .zero)
        #expect(figures.packetsPerConnectionEvent == nil)
        #expect(figures.notificationThroughput == nil && figures.writeWithoutResponseThroughput == nil)
        #expect(figures.linkTiming == LinkTiming.realistic)
    }

    @Test func onlyFullConnectionEventsFollowedByTheNextOneGiveTheInterval() {
        // A burst of full events 30 ms apart, then the app's own pauses between single
        // notifications (and between two half-full events), which say nothing of the link.
        var entries = [0, 0, 0, 30, 30, 30, 60, 60].map { Self.update($0) }
        entries += [500, 700, 700, 1_000, 1_000, 1_400].map { Self.update($0) }
        let figures = SessionRecording(entries: entries).linkFigures(of: Self.p)
        #expect(figures.connectionInterval == .milliseconds(30))
        #expect(figures.jitter == .zero)
        #expect(figures.packetsPerConnectionEvent == 3)
    }

    @Test func seededTimingStaysInTheRangesLinkTimingAccepts() {
        var figures = LinkFigures(
            connectionInterval: .milliseconds(1), jitter: .milliseconds(10), packetsPerConnectionEvent: 0)
        #expect(figures.linkTiming.connectionInterval == .microseconds(7_500))
        #expect(figures.linkTiming.jitter == .microseconds(7_500))
        #expect(figures.linkTiming.packetsPerConnectionEvent == 1)
        figures.connectionInterval = .seconds(9)
        #expect(figures.linkTiming.connectionInterval == .seconds(4))
        #expect(figures.linkTiming.jitter == .milliseconds(10))
    }
}
