import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: transmit queues and backpressure", .timeLimit(.minutes(10)))
struct WorldQueueTests {
    static func writeLink(capacity: Int, timing: LinkTiming = WorldHarness.steadyTiming) throws
        -> (WorldHarness, WorldLink)
    {
        try WorldLink.make(
            timing: timing, central: .init(writeWithoutResponseQueue: .realistic(capacity: capacity)),
            peripheral: .init(name: "Sensor", requestHandling: .manual))
    }

    static func readyEvents(_ harness: WorldHarness, _ link: WorldLink) -> Int {
        harness.centralEvents(link.central).filter { $0 == .readyToSendWriteWithoutResponse(link.remotePeripheral) }
            .count
    }

    @Test("Filling the write queue exactly to capacity stops sends; the next connection event says ready once")
    func fillExactly() throws {
        var (harness, link) = try Self.writeLink(capacity: 3)
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        var canSend: [Bool] = []
        for byte in UInt8(1)...3 {
            try harness.writeWithoutResponse(Data([byte]), to: WorldUUID.value, on: link)
            canSend.append(
                harness.world.canSendWriteWithoutResponse(central: link.central, peripheral: link.peripheral))
        }
        #expect(canSend == [true, true, false])
        #expect(Self.readyEvents(harness, link) == 0)
        #expect(harness.log(.write).map(\.error) == [nil, nil, nil])
        let ran = harness.runNextEvent()
        #expect(ran)
        #expect(harness.world.now == start.advanced(by: ms(30)))
        #expect(harness.world.attPDUCount - pdus == 3)
        #expect(harness.world.canSendWriteWithoutResponse(central: link.central, peripheral: link.peripheral))
        #expect(Self.readyEvents(harness, link) == 1)
        // It is said once: a later write that does not fill the queue brings no other.
        try harness.writeWithoutResponse(Data([4]), to: WorldUUID.value, on: link)
        harness.runUntilIdle()
        #expect(Self.readyEvents(harness, link) == 1)
        #expect(
            harness.writesReceived(by: link.peripheral, since: start) == [
                Arrival(value: Data([1]), at: ms(30)), Arrival(value: Data([2]), at: ms(30)),
                Arrival(value: Data([3]), at: ms(30)), Arrival(value: Data([4]), at: ms(60)),
            ])
    }

    @Test("A queue larger than one event's packets says ready at the first event that leaves room")
    func readyWhenRoom() throws {
        var (harness, link) = try Self.writeLink(capacity: 6)
        let start = harness.world.now
        for byte in UInt8(1)...6 { try harness.writeWithoutResponse(Data([byte]), to: WorldUUID.value, on: link) }
        #expect(!harness.world.canSendWriteWithoutResponse(central: link.central, peripheral: link.peripheral))
        harness.runNextEvent()
        // Four of six crossed: two wait, and there is room for four.
        #expect(harness.world.canSendWriteWithoutResponse(central: link.central, peripheral: link.peripheral))
        #expect(Self.readyEvents(harness, link) == 1)
        harness.runUntilIdle()
        #expect(Self.readyEvents(harness, link) == 1)
        #expect(
            harness.writesReceived(by: link.peripheral, since: start).map(\.at) == [30, 30, 30, 30, 60, 60].map(ms))
    }

    @Test("A write into a full queue is dropped, logged with outOfSpace, and never reaches the peripheral")
    func overflowDrops() throws {
        var (harness, link) = try Self.writeLink(capacity: 3)
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        for byte in UInt8(1)...4 { try harness.writeWithoutResponse(Data([byte]), to: WorldUUID.value, on: link) }
        let writes = harness.log(.write)
        #expect(writes.map(\.value) == [1, 2, 3, 4].map { Data([$0]) })
        #expect(writes.map(\.error) == [nil, nil, nil, .coreBluetooth(CoreBluetoothError(.outOfSpace))])
        #expect(writes.map(\.detail) == [nil, nil, nil, "dropped: transmit queue full"])
        harness.runUntilIdle()
        #expect(harness.world.attPDUCount - pdus == 3)
        #expect(harness.writesReceived(by: link.peripheral, since: start).map(\.value) == [1, 2, 3].map { Data([$0]) })
        #expect(Self.readyEvents(harness, link) == 1)
    }

    @Test("In fast mode a bounded write queue holds its packets until the simulation runs, taking no time")
    func boundedQueueFast() throws {
        var (harness, link) = try Self.writeLink(capacity: 2, timing: .instant)
        for byte in UInt8(1)...2 { try harness.writeWithoutResponse(Data([byte]), to: WorldUUID.value, on: link) }
        #expect(!harness.world.canSendWriteWithoutResponse(central: link.central, peripheral: link.peripheral))
        #expect(harness.writesReceived(by: link.peripheral, since: .zero).isEmpty)
        harness.runUntilIdle()
        #expect(harness.world.canSendWriteWithoutResponse(central: link.central, peripheral: link.peripheral))
        #expect(Self.readyEvents(harness, link) == 1)
        #expect(
            harness.writesReceived(by: link.peripheral, since: .zero) == [
                Arrival(value: Data([1]), at: .zero), Arrival(value: Data([2]), at: .zero),
            ])
    }

    // MARK: The update queue

    /// A peripheral with an update queue of `capacity` and `centrals` subscribed centrals.
    static func updateLink(capacity: Int, centrals: Int = 1) throws -> (WorldHarness, [WorldLink]) {
        var (harness, first) = try WorldLink.make(
            peripheral: .init(name: "Sensor", updateQueue: .realistic(capacity: capacity)))
        var links = [first]
        for _ in 1..<centrals {
            let central = harness.addCentral()
            links.append(try WorldLink.connect(central, to: first.peripheral, service: first.service, in: &harness))
        }
        for link in links { try harness.subscribe(WorldUUID.notifying, on: link) }
        harness.runUntilIdle()
        return (harness, links)
    }

    @Test("A full update queue makes updateValue return false; the drain says ready to update subscribers once")
    func updateQueue() throws {
        var (harness, links) = try Self.updateLink(capacity: 2)
        let link = links[0]
        let start = harness.world.now
        var accepted: [Bool] = []
        for byte in UInt8(1)...3 {
            accepted.append(try harness.updateValue(Data([byte]), of: WorldUUID.notifying, on: link))
        }
        #expect(accepted == [true, true, false])
        let refused = try #require(harness.log(.notification).last)
        #expect(refused.central == nil)
        #expect(refused.detail == "transmit queue full: updateValue returned false")
        #expect(!harness.peripheralEvents(link.peripheral).contains(.readyToUpdateSubscribers))
        harness.runNextEvent()
        #expect(
            harness.centralTimeline(link.central, since: start, naming: [:]) == [
                .init("01", at: ms(30)), .init("02", at: ms(30)),
            ])
        #expect(harness.peripheralEvents(link.peripheral).filter { $0 == .readyToUpdateSubscribers }.count == 1)
        let again = try harness.updateValue(Data([4]), of: WorldUUID.notifying, on: link)
        #expect(again)
        harness.runUntilIdle()
        #expect(harness.centralEvents(link.central).updatedValues == [1, 2, 4].map { Data([$0]) })
        #expect(harness.peripheralEvents(link.peripheral).filter { $0 == .readyToUpdateSubscribers }.count == 1)
    }

    @Test("An update takes one place in the queue per subscribed central, and is refused only while the queue is full")
    func updatesTakeAPlacePerCentral() throws {
        var (harness, links) = try Self.updateLink(capacity: 3, centrals: 2)
        var accepted: [Bool] = []
        for byte in UInt8(1)...3 {
            accepted.append(try harness.updateValue(Data([byte]), of: WorldUUID.notifying, on: links[0]))
        }
        // 0 queued: taken (2 places); 2 of 3: taken (4, one over); 4 of 3: full.
        #expect(accepted == [true, true, false])
        harness.runUntilIdle()
        #expect(harness.centralEvents(links[0].central).updatedValues == [Data([1]), Data([2])])
        #expect(harness.centralEvents(links[1].central).updatedValues == [Data([1]), Data([2])])
    }

    @Test("An update to more subscribers than the queue holds is taken when the queue is empty, not refused for ever")
    func moreSubscribersThanTheQueueHolds() throws {
        var (harness, links) = try Self.updateLink(capacity: 1, centrals: 3)
        let start = harness.world.now
        #expect(try harness.updateValue(Data([1]), of: WorldUUID.notifying, on: links[0]))
        #expect(try !harness.updateValue(Data([2]), of: WorldUUID.notifying, on: links[0]))
        harness.runUntilIdle()
        #expect(harness.peripheralEvents(links[0].peripheral).filter { $0 == .readyToUpdateSubscribers }.count == 1)
        #expect(try harness.updateValue(Data([3]), of: WorldUUID.notifying, on: links[0]))
        harness.runUntilIdle()
        for link in links {
            #expect(harness.centralEvents(link.central).updatedValues == [Data([1]), Data([3])])
        }
        #expect(harness.world.now > start)
    }

    @Test("Updates lost with their link leave the queue: a full queue then says ready")
    func lostUpdatesLeaveTheQueue() throws {
        var (harness, links) = try Self.updateLink(capacity: 1)
        let link = links[0]
        let first = try harness.updateValue(Data([1]), of: WorldUUID.notifying, on: link)
        let second = try harness.updateValue(Data([2]), of: WorldUUID.notifying, on: link)
        #expect([first, second] == [true, false])
        harness.apply(
            .disconnect(
                central: link.central, peripheral: link.peripheral, error: CoreBluetoothError(.connectionTimeout)))
        #expect(harness.peripheralEvents(link.peripheral).last == .readyToUpdateSubscribers)
        harness.runUntilIdle()
        #expect(harness.centralEvents(link.central).updatedValues.isEmpty)
    }

    @Test("A full update queue lost with the peripheral's power says no ready: the manager takes no updates then")
    func aPowerOffOwesNoReady() throws {
        var (harness, links) = try Self.updateLink(capacity: 1)
        let link = links[0]
        let first = try harness.updateValue(Data([1]), of: WorldUUID.notifying, on: link)
        let second = try harness.updateValue(Data([2]), of: WorldUUID.notifying, on: link)
        #expect([first, second] == [true, false])
        harness.apply(.peripheralState(link.peripheral, .poweredOff))
        harness.runUntilIdle()
        let events = harness.peripheralEvents(link.peripheral)
        #expect(events.contains(.stateChanged(.poweredOff)))
        #expect(!events.contains(.readyToUpdateSubscribers))
        #expect(harness.centralEvents(link.central).updatedValues.isEmpty)
        // Powered on again, the queue is empty and owes nothing from before.
        harness.apply(.peripheralState(link.peripheral, .poweredOn))
        harness.runUntilIdle()
        #expect(!harness.peripheralEvents(link.peripheral).contains(.readyToUpdateSubscribers))
    }
}
