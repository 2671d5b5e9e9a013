import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: faults", .timeLimit(.minutes(10)))
struct WorldFaultTests {
    static func handlerLink() throws -> (WorldHarness, WorldLink) {
        try WorldLink.make(peripheral: .init(name: "Sensor", requestHandling: .handler { _ in .success(Data([5])) }))
    }

    @Test("Out of range, nothing crosses; the first connection event after it is heard again carries the packets")
    func outOfRangeFreezesThePipes() throws {
        var (harness, link) = try Self.handlerLink()
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        try harness.writeWithoutResponse(Data([1]), to: WorldUUID.value, on: link)
        let read = harness.start(link.read(WorldUUID.value))
        harness.apply(.proximity(peripheral: link.peripheral, .outOfRange))
        harness.schedule(.proximity(peripheral: link.peripheral, .near), at: start.advanced(by: ms(100)))
        // Connection events at 30, 60 and 90 ms carry nothing.
        harness.advance(to: start.advanced(by: ms(99)))
        #expect(harness.world.attPDUCount == pdus)
        #expect(harness.world.pending[read] != nil)
        #expect(harness.writesReceived(by: link.peripheral, since: start).isEmpty)
        harness.serve(read)
        #expect(harness.elapsed(read, since: start) == ms(120))
        #expect(harness.reply(of: read) == .value(Data([5])))
        #expect(harness.writesReceived(by: link.peripheral, since: start) == [Arrival(value: Data([1]), at: ms(120))])
        #expect(harness.world.attPDUCount - pdus == 3)
        #expect(harness.world.links[link.key] != nil)
        #expect(harness.log(.stateChanged).suffix(2).map { start.duration(to: $0.time) } == [.zero, ms(100)])
        #expect(harness.log(.stateChanged).suffix(2).map(\.detail) == ["proximity=outOfRange", "proximity=near"])
    }

    @Test("Scheduled faults fire in time order, each once, and the world lets go of each as it fires")
    func scheduledFaultsFireOnceAndAreReleased() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        harness.schedule(.nameChange(peripheral: link.peripheral, "Second"), at: start.advanced(by: ms(20)))
        harness.schedule(.nameChange(peripheral: link.peripheral, "First"), at: start.advanced(by: ms(10)))
        #expect(harness.world.scheduledFaults.count == 2)
        harness.advance(to: start.advanced(by: ms(15)))
        #expect(harness.world.scheduledFaults.count == 1)
        #expect(harness.world.peripherals[link.peripheral]?.name == "First")
        harness.advance(to: start.advanced(by: ms(50)))
        #expect(harness.world.scheduledFaults.isEmpty)
        #expect(harness.world.peripherals[link.peripheral]?.name == "Second")
    }

    @Test("The supervision timeout tears an out-of-range link down with connectionTimeout and fails its operations")
    func supervisionTimeout() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        let read = harness.start(link.read(WorldUUID.value))
        let write = harness.start(link.write(WorldUUID.value, Data([1])))
        harness.apply(.proximity(peripheral: link.peripheral, .outOfRange))
        harness.serve(write)
        let error = CoreBluetoothError(.connectionTimeout)
        #expect(harness.elapsed(read, since: start) == ms(720))
        #expect(harness.elapsed(write, since: start) == ms(720))
        #expect(harness.error(of: read) as? CoreBluetoothError == error)
        #expect(harness.error(of: write) as? CoreBluetoothError == error)
        #expect(harness.centralEvents(link.central).last == .disconnected(link.remotePeripheral, error))
        #expect(harness.world.links[link.key] == nil)
        #expect(harness.log(.disconnected).map(\.error) == [.coreBluetooth(error)])
    }

    @Test("With instant timing going out of range drops the links at once")
    func instantSupervisionTimeout() throws {
        var (harness, link) = try WorldLink.make(timing: .instant)
        harness.apply(.proximity(peripheral: link.peripheral, .outOfRange))
        #expect(harness.world.links[link.key] == nil)
        #expect(
            harness.centralEvents(link.central).last
                == .disconnected(link.remotePeripheral, CoreBluetoothError(.connectionTimeout)))
    }

    @Test("Coming back before the supervision timeout keeps the link")
    func backInTime() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        harness.apply(.proximity(peripheral: link.peripheral, .outOfRange))
        harness.schedule(.proximity(peripheral: link.peripheral, .far), at: start.advanced(by: ms(719)))
        harness.advance(to: start.advanced(by: ms(2_000)))
        #expect(harness.world.links[link.key] != nil)
        let rssi = harness.perform(.readRSSI(central: link.central, peripheral: link.peripheral))
        #expect(harness.reply(of: rssi) == .rssi(-100))
    }

    @Test(
        "A reset ends the peripheral's end at once; centrals notice at the supervision timeout with connectionTimeout; services and advertising stay"
    )
    func reset() throws {
        var (harness, link) = try Self.handlerLink()
        let timeout = harness.world.timing.supervisionTimeout
        #expect(timeout == .milliseconds(720))
        let other = harness.addCentral()
        let otherLink = try WorldLink.connect(other, to: link.peripheral, service: link.service, in: &harness)
        harness.perform(link.subscribe(WorldUUID.notifying))
        let start = harness.world.now
        let read = harness.start(link.read(WorldUUID.value))
        harness.apply(.reset(peripheral: link.peripheral))
        // The peripheral's side is gone: its subscriptions ended with the reboot.
        let unsubscribed = harness.peripheralEvents(link.peripheral).filter {
            if case .unsubscribed = $0 { true } else { false }
        }
        #expect(unsubscribed.count == 1)
        // The centrals hear nothing and still think they are connected.
        harness.advance(to: start.advanced(by: timeout - .milliseconds(1)))
        #expect(harness.world.links[link.key] != nil)
        #expect(harness.error(of: read) == nil)
        harness.advance(to: start.advanced(by: timeout))
        let error = CoreBluetoothError(.connectionTimeout)
        #expect(harness.error(of: read) as? CoreBluetoothError == error)
        #expect(harness.world.links[link.key] == nil)
        #expect(harness.world.links[otherLink.key] == nil)
        #expect(harness.centralEvents(link.central).last == .disconnected(link.remotePeripheral, error))
        #expect(harness.centralEvents(other).last == .disconnected(link.remotePeripheral, error))
        #expect(harness.log(.stateChanged).last?.detail == "reset")
        #expect(harness.world.localServices(peripheral: link.peripheral) == [link.service])
        #expect(harness.world.isAdvertising(peripheral: link.peripheral))
    }

    @Test("A disconnect fails pending operations with its error and loses what waited in the pipes")
    func disconnect() throws {
        var (harness, link) = try Self.handlerLink()
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        try harness.writeWithoutResponse(Data([1]), to: WorldUUID.value, on: link)
        let read = harness.start(link.read(WorldUUID.value))
        let error = CoreBluetoothError(.connectionFailed)
        harness.apply(.disconnect(central: link.central, peripheral: link.peripheral, error: error))
        #expect(harness.error(of: read) as? CoreBluetoothError == error)
        #expect(harness.centralEvents(link.central).last == .disconnected(link.remotePeripheral, error))
        harness.runUntilIdle()
        #expect(harness.world.attPDUCount == pdus)
        #expect(harness.writesReceived(by: link.peripheral, since: start).isEmpty)
        // The central's discovered attributes went with the link.
        #expect(harness.world.discoveredServices(central: link.central, peripheral: link.peripheral).isEmpty)
        let refused = harness.perform(link.read(WorldUUID.value))
        #expect(harness.error(of: refused) as? CoreBluetoothError == CoreBluetoothError(.notConnected))
    }
}
