import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: an exploration's planned faults", .timeLimit(.minutes(10)))
struct WorldExplorationTests {
    static func handlerLink(central: MockCentralManager.Configuration = .init()) throws -> (WorldHarness, WorldLink) {
        try WorldLink.make(
            central: central,
            peripheral: .init(name: "Sensor", requestHandling: .handler { _ in .success(Data([5])) }))
    }

    static func plan(_ faults: [PlannedFault], in harness: inout WorldHarness) {
        harness.mutate { $0.plan(faults) }
    }

    @Test("A planned disconnect drops the link at its time with its error and counts as fired")
    func disconnectFires() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        Self.plan([PlannedFault(.disconnect, at: ms(100), coreBluetoothError: .peripheralDisconnected)], in: &harness)
        harness.advance(to: start.advanced(by: ms(99)))
        #expect(harness.world.links[link.key] != nil)
        #expect(harness.world.plannedFaultsFired == [false])
        harness.advance(to: start.advanced(by: ms(100)))
        #expect(harness.world.links[link.key] == nil)
        let error = CoreBluetoothError(.peripheralDisconnected)
        #expect(harness.centralEvents(link.central).last == .disconnected(link.remotePeripheral, error))
        #expect(harness.world.plannedFaultsFired == [true])
        #expect(harness.log(.stateChanged).last?.detail?.hasPrefix("explored fault: at 0.1s a link drops") == true)
    }

    @Test("A planned fault with nothing to hit when its time comes does nothing and is not counted as fired")
    func faultWithoutTargetDoesNotFire() {
        var harness = WorldHarness(seed: 1, timing: WorldHarness.steadyTiming)
        let central = harness.addCentral()
        Self.plan(
            [PlannedFault(.disconnect, at: ms(10)), PlannedFault(.reset, at: ms(10)), PlannedFault(.fade, at: ms(10))],
            in: &harness)
        harness.advance(to: harness.world.now.advanced(by: ms(50)))
        #expect(harness.world.plannedFaultsFired == [false, false, false])
        #expect(harness.world.state(of: .central(central)) == .poweredOn)
    }

    @Test("A planned fade delays what crosses the link and drops nothing; the peripheral is heard again after it")
    func fadeDelaysAndKeepsTheLink() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        Self.plan([PlannedFault(.fade, at: .zero, duration: ms(300))], in: &harness)
        _ = harness.runNextEvent()
        let read = harness.start(link.read(WorldUUID.value))
        harness.serve(read)
        #expect(harness.reply(of: read) == .value(Data([5])))
        // Nothing crossed during the fade; the first connection event after it (at once: the
        // link had nothing scheduled) carried the read and its answer.
        #expect(harness.elapsed(read, since: start) == ms(300))
        #expect(harness.world.links[link.key] != nil)
        #expect(harness.world.plannedFaultsFired == [true])
    }

    @Test("A planned out-of-range period drops the link at the supervision timeout and ends with the peripheral back")
    func outOfRangeDropsAndReturns() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        Self.plan([PlannedFault(.outOfRange, at: ms(10), duration: ms(2_000))], in: &harness)
        harness.advance(to: start.advanced(by: ms(10 + 720)))
        #expect(harness.world.links[link.key] == nil)
        #expect(
            harness.centralEvents(link.central).last
                == .disconnected(link.remotePeripheral, CoreBluetoothError(.connectionTimeout)))
        harness.advance(to: start.advanced(by: ms(2_010)))
        #expect(harness.log(.stateChanged).last?.detail == "proximity=near")
        #expect(harness.world.plannedFaultsFired == [true])
    }

    @Test(
        "A fade inside an out-of-range period ends with neither: the link drops at the supervision timeout as it would alone",
        arguments: [
            // (the fade's start and length, ms)
            (100, 200), (0, 3_000), (700, 2_000),
        ])
    func overlappingProximityFaultsEndWithTheLast(fadeAt: Int, fadeFor: Int) throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        Self.plan(
            [
                PlannedFault(.outOfRange, at: ms(10), duration: ms(2_000)),
                PlannedFault(.fade, at: ms(fadeAt), duration: ms(fadeFor)),
            ], in: &harness)
        // The fade starting first holds the peripheral out of range from 0: its links drop 720 ms on.
        let dropAt = min(10, fadeAt) + 720
        harness.advance(to: start.advanced(by: ms(dropAt - 1)))
        #expect(harness.world.links[link.key] != nil)
        harness.advance(to: start.advanced(by: ms(dropAt)))
        #expect(harness.world.links[link.key] == nil)
        #expect(
            harness.centralEvents(link.central).last
                == .disconnected(link.remotePeripheral, CoreBluetoothError(.connectionTimeout)))
        // Back in range only when the later of the two ends.
        let backAt = max(2_010, fadeAt + fadeFor)
        harness.advance(to: start.advanced(by: ms(backAt - 1)))
        #expect(harness.world.peripherals[link.peripheral]?.proximity == .outOfRange)
        harness.advance(to: start.advanced(by: ms(backAt)))
        #expect(harness.world.peripherals[link.peripheral]?.proximity == .near)
    }

    @Test("Two overlapping fades end with the later: nothing crosses until then")
    func overlappingFadesEndWithTheLater() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        Self.plan(
            [
                PlannedFault(.fade, at: .zero, duration: ms(200)),
                PlannedFault(.fade, at: ms(100), duration: ms(300)),
            ], in: &harness)
        _ = harness.runNextEvent()
        let read = harness.start(link.read(WorldUUID.value))
        harness.serve(read)
        #expect(harness.reply(of: read) == .value(Data([5])))
        // Nothing crossed until the later fade ended; the next connection event (the link's
        // interval is 30 ms) carried the read and its answer.
        let elapsed = try #require(harness.elapsed(read, since: start))
        #expect(elapsed >= ms(400) && elapsed < ms(430), "\(elapsed)")
        #expect(harness.world.plannedFaultsFired == [true, true])
    }

    @Test("A planned reset ends the peripheral's end of the link; the central notices at the supervision timeout")
    func resetIsNoticedLater() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        Self.plan([PlannedFault(.reset, at: ms(5))], in: &harness)
        harness.advance(to: start.advanced(by: ms(5 + 719)))
        #expect(harness.world.links[link.key] != nil)
        harness.advance(to: start.advanced(by: ms(5 + 720)))
        #expect(harness.world.links[link.key] == nil)
        #expect(harness.world.plannedFaultsFired == [true])
    }

    @Test("A planned power cycle turns the central's Bluetooth off for its duration, then on")
    func powerCycleTurnsTheCentralOffAndOn() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        Self.plan([PlannedFault(.powerCycle, at: ms(10), duration: ms(1_000))], in: &harness)
        harness.advance(to: start.advanced(by: ms(10)))
        #expect(harness.world.state(of: .central(link.central)) == .poweredOff)
        #expect(harness.world.links[link.key] == nil)
        harness.advance(to: start.advanced(by: ms(1_010)))
        #expect(harness.world.state(of: .central(link.central)) == .poweredOn)
        #expect(harness.centralEvents(link.central).suffix(2).contains(.stateChanged(.poweredOn)))
        #expect(harness.world.plannedFaultsFired == [true])
    }

    @Test("A planned Bluetooth reset puts the central in resetting for its duration, ending its links, then on")
    func bluetoothResetResetsTheCentral() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        Self.plan([PlannedFault(.bluetoothReset, at: ms(10), duration: ms(800))], in: &harness)
        harness.advance(to: start.advanced(by: ms(10)))
        #expect(harness.world.state(of: .central(link.central)) == .resetting)
        #expect(harness.world.links[link.key] == nil)
        #expect(harness.centralEvents(link.central).contains(.stateChanged(.resetting)))
        harness.advance(to: start.advanced(by: ms(809)))
        #expect(harness.world.state(of: .central(link.central)) == .resetting)
        harness.advance(to: start.advanced(by: ms(810)))
        #expect(harness.world.state(of: .central(link.central)) == .poweredOn)
        #expect(harness.centralEvents(link.central).suffix(2).contains(.stateChanged(.poweredOn)))
        #expect(harness.world.plannedFaultsFired == [true])
    }

    @Test("A Bluetooth reset inside a power cycle leaves the central off until the power cycle ends")
    func bluetoothResetInsideAPowerCycle() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        Self.plan(
            [
                PlannedFault(.powerCycle, at: ms(10), duration: ms(1_000)),
                PlannedFault(.bluetoothReset, at: ms(20), duration: ms(100)),
            ], in: &harness)
        harness.advance(to: start.advanced(by: ms(200)))
        // Only a powered-on central is a reset's target: none was left.
        #expect(harness.world.state(of: .central(link.central)) == .poweredOff)
        #expect(harness.world.plannedFaultsFired == [true, false])
        harness.advance(to: start.advanced(by: ms(1_010)))
        #expect(harness.world.state(of: .central(link.central)) == .poweredOn)
    }

    @Test("A planned ATT error fails the next matching operation, and counts as fired only once it did")
    func attErrorFiresOnTheNextOperation() throws {
        var (harness, link) = try Self.handlerLink()
        Self.plan(
            [PlannedFault(.attError, at: .zero, operation: .read, attError: .insufficientResources)], in: &harness)
        _ = harness.runNextEvent()
        #expect(harness.world.plannedFaultsFired == [false])
        let write = harness.perform(link.write(WorldUUID.value, Data([1])))
        #expect(harness.error(of: write) == nil)
        let read = harness.perform(link.read(WorldUUID.value))
        #expect(harness.error(of: read) as? ATTError == ATTError(.insufficientResources))
        #expect(harness.world.plannedFaultsFired == [true])
        let again = harness.perform(link.read(WorldUUID.value))
        #expect(harness.reply(of: again) == .value(Data([5])))
    }

    @Test("A planned never-answered request leaves the operation waiting while the link lives")
    func neverAnsweredWaits() throws {
        var (harness, link) = try Self.handlerLink()
        Self.plan([PlannedFault(.neverAnswered, at: .zero, operation: .write)], in: &harness)
        _ = harness.runNextEvent()
        let write = harness.perform(link.write(WorldUUID.value, Data([1])))
        #expect(harness.world.pending[write] != nil)
        #expect(harness.world.plannedFaultsFired == [true])
    }

    @Test("A planned pairing refusal makes the next pairing fail, and counts as fired only when a pairing happened")
    func pairingRefusal() throws {
        var (harness, link) = try Self.handlerLink(central: .init(pairing: .onFirstAccess))
        Self.plan([PlannedFault(.pairingRefused, at: .zero)], in: &harness)
        _ = harness.runNextEvent()
        #expect(harness.world.plannedFaultsFired == [false])
        let read = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.error(of: read) as? ATTError == ATTError(.insufficientAuthentication))
        #expect(harness.world.plannedFaultsFired == [true])
        // The next pairing is the central's own again: it succeeds.
        let again = harness.perform(link.read(WorldUUID.encrypted))
        #expect(harness.error(of: again) == nil)
    }

    @Test("A fault aims at the target-th link, counting modulo the links up")
    func targetCountsModuloTheCandidates() throws {
        var (harness, link) = try Self.handlerLink()
        let start = harness.world.now
        // One link: targets 0, 1 and 5 all hit it.
        Self.plan([PlannedFault(.disconnect, at: ms(1), target: 5)], in: &harness)
        harness.advance(to: start.advanced(by: ms(1)))
        #expect(harness.world.links[link.key] == nil)
    }
}
