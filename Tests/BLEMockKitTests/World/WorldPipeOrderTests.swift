import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: the ordered pipe", .timeLimit(.minutes(10)))
struct WorldPipeOrderTests {
    /// How a peripheral answers, for parameterised tests.
    enum Answering: String, CaseIterable, CustomTestStringConvertible {
        case automatic, handler, manual

        var testDescription: String { rawValue }

        var requestHandling: RequestHandling {
            switch self {
            case .automatic: .automatic
            case .handler: .handler { _ in .success() }
            case .manual: .manual
            }
        }
    }

    static func link(_ answering: Answering, timing: LinkTiming = WorldHarness.steadyTiming) throws
        -> (WorldHarness, WorldLink)
    {
        try WorldLink.make(
            timing: timing, central: .init(mtu: .fixed(23)),
            peripheral: .init(name: "Sensor", requestHandling: answering.requestHandling))
    }

    @Test(
        "Six writes without response then a write with response cross in issue order, the write completing last",
        arguments: Answering.allCases)
    func commandsThenWrite(answering: Answering) throws {
        var (harness, link) = try Self.link(answering)
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        for byte in UInt8(1)...6 { try harness.writeWithoutResponse(Data([byte]), to: WorldUUID.value, on: link) }
        let write = harness.start(link.write(WorldUUID.value, Data([0xC0])))
        // First connection event: four packets (commands 1–4) cross.
        let ran = harness.runNextEvent()
        #expect(ran)
        #expect(harness.world.now == start.advanced(by: ms(30)))
        #expect(harness.world.attPDUCount - pdus == 4)
        #expect(harness.completions[write] == nil)
        // Second: commands 5 and 6, then the Write Request, answered in the same event.
        try harness.serve(write, answering: link.peripheral)
        #expect(harness.elapsed(write, since: start) == ms(60))
        #expect(harness.reply(of: write) == .done)
        if answering != .automatic {
            let arrivals = harness.writesReceived(by: link.peripheral, since: start)
            #expect(
                arrivals == [
                    Arrival(value: Data([1]), at: ms(30)), Arrival(value: Data([2]), at: ms(30)),
                    Arrival(value: Data([3]), at: ms(30)), Arrival(value: Data([4]), at: ms(30)),
                    Arrival(value: Data([5]), at: ms(60)), Arrival(value: Data([6]), at: ms(60)),
                    Arrival(value: Data([0xC0]), at: ms(60)),
                ])
            let completed = try #require(harness.completionIndex(of: write))
            #expect(try #require(harness.lastArrivalIndex(at: link.peripheral)) < completed)
        }
        // Six commands and one exchange.
        #expect(harness.world.attPDUCount - pdus == 8)
        if answering == .automatic {
            // The write with response arrived last: its value is the one stored.
            let read = harness.perform(link.read(WorldUUID.value))
            #expect(harness.reply(of: read) == .value(Data([0xC0])))
        }
    }

    @Test(
        "In fast mode, writes without response queued behind a bounded queue still arrive before the write",
        arguments: [Answering.handler, .manual])
    func commandsThenWriteFast(answering: Answering) throws {
        var (harness, link) = try WorldLink.make(
            timing: .instant, central: .init(mtu: .fixed(23), writeWithoutResponseQueue: .realistic(capacity: 8)),
            peripheral: .init(name: "Sensor", requestHandling: answering.requestHandling))
        let start = harness.world.now
        for byte in UInt8(1)...6 { try harness.writeWithoutResponse(Data([byte]), to: WorldUUID.value, on: link) }
        // A bounded queue holds its packets until the simulation runs.
        #expect(harness.writesReceived(by: link.peripheral, since: start).isEmpty)
        let write = try harness.perform(link.write(WorldUUID.value, Data([0xC0])), answering: link.peripheral)
        #expect(harness.reply(of: write) == .done)
        #expect(
            harness.writesReceived(by: link.peripheral, since: start).map(\.value)
                == [1, 2, 3, 4, 5, 6, 0xC0].map { Data([$0]) })
        let completed = try #require(harness.completionIndex(of: write))
        #expect(try #require(harness.lastArrivalIndex(at: link.peripheral)) < completed)
        #expect(harness.world.now == .zero)
    }

    @Test(
        "Notifications and indications sent around a read reach the central in the order sent",
        arguments: [Answering.automatic, .handler])
    func updatesAroundARead(answering: Answering) throws {
        var (harness, link) = try Self.link(answering)
        try harness.subscribe(WorldUUID.notifying, on: link)
        try harness.subscribe(WorldUUID.indicating, on: link)
        harness.runUntilIdle()
        let start = harness.world.now
        try harness.updateValue(Data([1]), of: WorldUUID.notifying, on: link)
        try harness.updateValue(Data([2]), of: WorldUUID.indicating, on: link)
        let read = harness.start(link.read(WorldUUID.value))
        try harness.updateValue(Data([3]), of: WorldUUID.notifying, on: link)
        try harness.updateValue(Data([4]), of: WorldUUID.indicating, on: link)
        harness.serve(read)
        harness.runUntilIdle()
        // 1, 2 and 3 cross in the first event; 4 waits for the confirmation of 2, but the Read
        // Response (answered in the first event) goes on past it: ATT's requests and its
        // indications are separate transactions.
        #expect(
            harness.centralTimeline(link.central, since: start, naming: [read: "read"]) == [
                .init("01", at: ms(30)), .init("02", at: ms(30)), .init("03", at: ms(30)), .init("read", at: ms(30)),
                .init("04", at: ms(60)),
            ])
        #expect(harness.reply(of: read) == .value(Data()))
    }

    @Test("A manual peripheral's updates sent before it answers a read reach the central before the answer")
    func manualUpdatesBeforeTheAnswer() throws {
        var (harness, link) = try Self.link(.manual)
        try harness.subscribe(WorldUUID.notifying, on: link)
        try harness.subscribe(WorldUUID.indicating, on: link)
        harness.runUntilIdle()
        let start = harness.world.now
        try harness.updateValue(Data([1]), of: WorldUUID.notifying, on: link)
        try harness.updateValue(Data([2]), of: WorldUUID.indicating, on: link)
        let read = harness.perform(link.read(WorldUUID.value))
        #expect(harness.world.isParked(read))
        #expect(harness.world.now == start.advanced(by: ms(30)))
        let request = try #require(harness.outstandingRequests(of: link.peripheral).first)
        try harness.updateValue(Data([3]), of: WorldUUID.notifying, on: link)
        try harness.updateValue(Data([4]), of: WorldUUID.indicating, on: link)
        try harness.respond(link.peripheral, to: request, result: .success, value: Data([0xAA]))
        #expect(
            harness.centralTimeline(link.central, since: start, naming: [read: "read"]) == [
                .init("01", at: ms(30)), .init("02", at: ms(30)), .init("03", at: ms(60)), .init("04", at: ms(60)),
                .init("read", at: ms(60)),
            ])
        #expect(harness.reply(of: read) == .value(Data([0xAA])))
    }

    @Test(
        "Each connection event carries at most packetsPerConnectionEvent packets each way",
        arguments: [1, 2, 4, 6])
    func packetsPerEvent(perEvent: Int) throws {
        var timing = WorldHarness.steadyTiming
        timing.packetsPerConnectionEvent = perEvent
        var (harness, link) = try Self.link(.handler, timing: timing)
        try harness.subscribe(WorldUUID.notifying, on: link)
        harness.runUntilIdle()
        let start = harness.world.now
        for byte in UInt8(0)..<10 {
            try harness.writeWithoutResponse(Data([byte]), to: WorldUUID.value, on: link)
            let sent = try harness.updateValue(Data([byte]), of: WorldUUID.notifying, on: link)
            #expect(sent)
        }
        harness.runUntilIdle()
        let expected = (0..<10).map { ms(30 * ($0 / perEvent + 1)) }
        #expect(harness.writesReceived(by: link.peripheral, since: start).map(\.at) == expected)
        #expect(harness.centralTimeline(link.central, since: start, naming: [:]).map(\.at) == expected)
        #expect(harness.centralEvents(link.central).updatedValues == (0..<10).map { Data([UInt8($0)]) })
    }

    @Test("A read is answered in the next event while indications queued before its answer wait for confirmations")
    func aReadPassesIndicationsWaitingForConfirmations() throws {
        var (harness, link) = try Self.link(.automatic)
        try harness.subscribe(WorldUUID.indicating, on: link)
        harness.runUntilIdle()
        let start = harness.world.now
        for byte in UInt8(1)...5 { try harness.updateValue(Data([byte]), of: WorldUUID.indicating, on: link) }
        let read = harness.start(link.read(WorldUUID.value))
        harness.serve(read)
        // One indication an event, each after the confirmation of the one before; the Read
        // Response, queued behind them all at the first event, crosses at once.
        #expect(
            harness.centralTimeline(link.central, since: start, naming: [read: "read"]) == [
                .init("01", at: ms(30)), .init("read", at: ms(30)),
            ])
        #expect(harness.reply(of: read) == .value(Data()))
        harness.runUntilIdle()
        #expect(
            harness.centralTimeline(link.central, since: start, naming: [read: "read"]).map(\.at)
                == [30, 30, 60, 90, 120, 150].map(ms))
    }

    @Test(
        "One indication crosses per connection event: the next waits for the confirmation, and so do the updates after it"
    )
    func oneIndicationPerEvent() throws {
        var (harness, link) = try Self.link(.automatic)
        try harness.subscribe(WorldUUID.notifying, on: link)
        try harness.subscribe(WorldUUID.indicating, on: link)
        harness.runUntilIdle()
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        for byte in UInt8(1)...3 { try harness.updateValue(Data([byte]), of: WorldUUID.indicating, on: link) }
        try harness.updateValue(Data([4]), of: WorldUUID.notifying, on: link)
        let idle = harness.runUntilIdle()
        #expect(idle)
        #expect(
            harness.centralTimeline(link.central, since: start, naming: [:]) == [
                .init("01", at: ms(30)), .init("02", at: ms(60)), .init("03", at: ms(90)), .init("04", at: ms(90)),
            ])
        #expect(harness.world.attPDUCount - pdus == 7)
        // The last confirmation crosses at the fourth event.
        #expect(harness.world.now == start.advanced(by: ms(120)))
    }
}
