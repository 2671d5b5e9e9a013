import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: cancellation", .timeLimit(.minutes(10)))
struct WorldCancellationTests {
    static func link(_ handling: RequestHandling) throws -> (WorldHarness, WorldLink) {
        try WorldLink.make(peripheral: .init(name: "Sensor", requestHandling: handling))
    }

    /// The operations from `first` on that completed, in order.
    static func completed(_ harness: WorldHarness, from first: OperationID) -> [OperationID] {
        harness.timeline.compactMap { happening in
            if case .complete(let id, _) = happening.effect, id >= first { return id }
            return nil
        }
    }

    @Test("Procedures waiting for the ATT bearer are served in the order they started, one request at a time")
    func theBearerServesWaitingProceduresInOrder() throws {
        var (harness, link) = try Self.link(.manual)
        let first = harness.perform(link.read(WorldUUID.value))
        let second = harness.perform(link.write(WorldUUID.value, Data([2])))
        let third = harness.perform(link.read(WorldUUID.notifying))
        let fourth = harness.perform(link.write(WorldUUID.value, Data([4])))
        #expect([second, third, fourth].map { harness.world.pending[$0]?.stage } == [.queued, .queued, .queued])
        var served: [String] = []
        while let request = harness.outstandingRequests(of: link.peripheral).first {
            // One request is handed to the peripheral at a time.
            #expect(harness.outstandingRequests(of: link.peripheral).count == 1)
            served.append("\(request.characteristic.uuid) \(request.value.map { Array($0) } ?? [])")
            try harness.respond(link.peripheral, to: request, result: .success, value: Data([0]))
            // Until the next request reaches the peripheral (running until idle would run on
            // to that request's ATT transaction timeout).
            while harness.outstandingRequests(of: link.peripheral).isEmpty, !harness.world.pending.isEmpty,
                harness.runNextEvent()
            {}
        }
        #expect(served == ["FFF1 []", "FFF1 [2]", "FFF2 []", "FFF1 [4]"])
        #expect(Self.completed(harness, from: first) == [first, second, third, fourth])
    }

    @Test(
        "Once the bearer is idle its transaction timer is off the schedule: time run until nothing is left stays put",
        arguments: [true, false])
    func anIdleBearerLeavesNoTransactionTimer(realistic: Bool) throws {
        var (harness, link) = try WorldLink.make(
            timing: realistic ? WorldHarness.steadyTiming : .instant,
            peripheral: .init(name: "Sensor", requestHandling: .manual))
        let read = harness.start(link.read(WorldUUID.value))
        // The request parks with the peripheral's app: its timer is on the schedule.
        while harness.outstandingRequests(of: link.peripheral).isEmpty, harness.runNextEvent() {}
        let request = try #require(harness.outstandingRequests(of: link.peripheral).first)
        #expect(harness.world.nextDeadline != nil)
        try harness.respond(link.peripheral, to: request, result: .success, value: Data([1]))
        while harness.completionTimes[read] == nil, harness.runNextEvent() {}
        #expect(harness.reply(of: read) == .value(Data([1])))
        let done = harness.world.now
        harness.runUntilIdle()
        #expect(harness.world.now == done)
        #expect(harness.world.nextDeadline == nil)
    }

    @Test("Cancelling a procedure queued for the ATT bearer removes it: it is never sent")
    func queuedProcedure() throws {
        var (harness, link) = try Self.link(.manual)
        let pdus = harness.world.attPDUCount
        let first = harness.perform(link.read(WorldUUID.value))
        let second = harness.perform(link.read(WorldUUID.value))
        #expect(harness.world.pending[second]?.stage == .queued)
        harness.cancel(second)
        #expect(harness.world.pending[second] == nil)
        let request = try #require(harness.outstandingRequests(of: link.peripheral).first)
        try harness.respond(link.peripheral, to: request, result: .success, value: Data([1]))
        harness.runUntilIdle()
        #expect(harness.world.nextDeadline == nil)
        #expect(Self.completed(harness, from: first) == [first])
        #expect(harness.reply(of: first) == .value(Data([1])))
        #expect(harness.world.attPDUCount - pdus == 2)
        #expect(harness.delivered[link.peripheral]?.count == 1)
    }

    @Test("Cancelling a request still in the pipe takes it out: it never crosses, and the bearer is free at once")
    func requestInThePipe() throws {
        var (harness, link) = try Self.link(.handler { _ in .success(Data([2])) })
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let cancelled = harness.start(link.read(WorldUUID.value))
        harness.cancel(cancelled)
        #expect(harness.world.pending[cancelled] == nil)
        let next = harness.perform(link.read(WorldUUID.value))
        #expect(harness.reply(of: next) == .value(Data([2])))
        #expect(harness.elapsed(next, since: start) == ms(30))
        harness.runUntilIdle()
        #expect(harness.world.nextDeadline == nil)
        #expect(Self.completed(harness, from: cancelled) == [next])
        #expect(harness.world.attPDUCount - pdus == 2)
        #expect(harness.handled[link.peripheral]?.count == 1)
    }

    @Test("Cancelling a request that crossed drops its answer when it arrives, and then frees the bearer")
    func crossedRequest() throws {
        var (harness, link) = try Self.link(.manual)
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let cancelled = harness.perform(link.read(WorldUUID.value))
        let next = harness.perform(link.read(WorldUUID.value))
        harness.cancel(cancelled)
        // ATT cannot take a request back: it stays outstanding, holding the bearer.
        #expect(harness.world.pending[cancelled]?.isCancelled == true)
        #expect(harness.world.isParked(cancelled))
        #expect(harness.world.pending[next]?.stage == .queued)
        let request = try #require(harness.outstandingRequests(of: link.peripheral).first)
        try harness.respond(link.peripheral, to: request, result: .success, value: Data([1]))
        #expect(harness.world.pending[cancelled] == nil)
        #expect(harness.completions[cancelled] == nil)
        try harness.serve(next, answering: link.peripheral) { _ in .success(Data([3])) }
        #expect(Self.completed(harness, from: cancelled) == [next])
        #expect(harness.reply(of: next) == .value(Data([3])))
        #expect(harness.elapsed(next, since: start) == ms(60))
        #expect(harness.world.attPDUCount - pdus == 4)
    }

    @Test("Cancelling the only wait for a connection cancels the attempt")
    func connectionAttempt() throws {
        var harness = WorldHarness()
        let peripheral = harness.addPeripheral()
        try harness.startAdvertising(peripheral, AdvertisementData(localName: "Sensor"))
        let central = harness.addCentral()
        try harness.discover(peripheral, by: central)
        harness.mutate { $0.stopAdvertising(peripheral: peripheral) }
        let connect = harness.perform(.connect(central: central, peripheral: peripheral, timeout: nil))
        #expect(harness.world.isParked(connect))
        harness.cancel(connect)
        #expect(harness.world.pending[connect] == nil)
        #expect(harness.log(.disconnected).map(\.detail) == ["attempt cancelled"])
        try harness.startAdvertising(peripheral, AdvertisementData(localName: "Sensor"))
        #expect(!harness.world.isConnected(central: central, peripheral: peripheral))
        #expect(harness.completions[connect] == nil)
    }

    @Test("Cancelling an RSSI reading still in the pipe takes it out")
    func rssiInThePipe() throws {
        var (harness, link) = try Self.link(.automatic)
        let rssi = harness.start(.readRSSI(central: link.central, peripheral: link.peripheral))
        harness.cancel(rssi)
        #expect(harness.world.pending[rssi] == nil)
        harness.runUntilIdle()
        #expect(harness.world.nextDeadline == nil)
        #expect(harness.completions[rssi] == nil)
        #expect(harness.log(.rssiRead).isEmpty)
    }
}
