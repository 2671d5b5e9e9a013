import BLEMockKit
import Testing

@testable import BLECapture

/// The connection interval an imported scenario's realistic replay uses: the one the
/// controller reported for the link while it carried most of its traffic.
@Suite("Connection intervals of imported captures", .timeLimit(.minutes(10)))
struct CaptureIntervalTests {
    /// A capture of a connection made at `interval` (units of 1.25 ms) that reads a value
    /// `before` times, then gets the parameter updates `updates`, then reads `after` times.
    static func capture(
        interval: UInt16 = 0x0018, before: Int, updates: [(handle: UInt16, interval: UInt16, status: UInt8)] = [],
        after: Int = 0
    ) -> SnoopWriter {
        var writer = SnoopWriter()
        writer.connected(interval: interval)
        func reads(_ count: Int) {
            for _ in 0..<count {
                writer.att([0x0A, 0x03, 0x00], sent: true)
                writer.att([0x0B, 0x01], sent: false)
            }
        }
        reads(before)
        for update in updates {
            writer.updated(handle: update.handle, interval: update.interval, status: update.status)
        }
        reads(after)
        return writer
    }

    static func imported(_ writer: SnoopWriter) throws -> CaptureImport {
        try CaptureImporter().importCapture(bytes: writer.bytes, name: "interval")
    }

    @Test("A connection that kept its interval replays at it")
    func theConnectionsIntervalIsKept() throws {
        let imported = try Self.imported(Self.capture(interval: 0x0018, before: 3))
        #expect(imported.scenario.connectionInterval == .milliseconds(30))
        #expect(imported.scenarioJSON().contains(#""link": {"connectionInterval": "0.03s"}"#))
        #expect(!imported.warnings.contains { $0.message.contains("connection interval") })
    }

    @Test("An update before most of the traffic gives the interval after it; after most of it, the one before")
    func theBusiestIntervalWins() throws {
        let later = try Self.imported(Self.capture(before: 1, updates: [(0x0040, 0x000C, 0)], after: 4))
        #expect(later.scenario.connectionInterval == .milliseconds(15))
        let earlier = try Self.imported(Self.capture(before: 4, updates: [(0x0040, 0x000C, 0)], after: 1))
        #expect(earlier.scenario.connectionInterval == .milliseconds(30))
        // A tie goes to the later interval; an update with no traffic after it, to the last one's
        // traffic (none): the one before it.
        let tie = try Self.imported(Self.capture(before: 2, updates: [(0x0040, 0x0010, 0)], after: 2))
        #expect(tie.scenario.connectionInterval == .milliseconds(20))
        let quiet = try Self.imported(Self.capture(before: 2, updates: [(0x0040, 0x0010, 0)]))
        #expect(quiet.scenario.connectionInterval == .milliseconds(30))
    }

    @Test("A failed update, or one for another connection, changes nothing")
    func otherUpdatesAreIgnored() throws {
        let failed = try Self.imported(Self.capture(before: 1, updates: [(0x0040, 0x000C, 0x3B)], after: 4))
        #expect(failed.scenario.connectionInterval == .milliseconds(30))
        let other = try Self.imported(Self.capture(before: 1, updates: [(0x0041, 0x000C, 0)], after: 4))
        #expect(other.scenario.connectionInterval == .milliseconds(30))
    }

    @Test(
        "An interval no connection can have is left to the bridge, with a warning",
        arguments: [(UInt16(0x0005), "0x0005 (0.00625s)"), (0x0C81, "0x0C81 (4.00125s)"), (0x0000, "0x0000 (0s)")])
    func anImpossibleIntervalIsNotReplayed(units: UInt16, text: String) throws {
        let imported = try Self.imported(Self.capture(interval: units, before: 2))
        #expect(imported.scenario.connectionInterval == nil)
        #expect(!imported.scenarioJSON().contains("\"link\""))
        #expect(
            imported.warnings.map(\.message).contains(
                "the connection interval the capture reports, \(text), is outside 7.5ms…4s: a realistic replay takes "
                    + "the bridge's interval"))
    }

    @Test("The shortest and longest intervals a connection can have are replayed")
    func theLimitsAreReplayed() throws {
        #expect(
            try Self.imported(Self.capture(interval: 6, before: 1)).scenario.connectionInterval == .microseconds(7_500))
        #expect(try Self.imported(Self.capture(interval: 3_200, before: 1)).scenario.connectionInterval == .seconds(4))
    }
}
