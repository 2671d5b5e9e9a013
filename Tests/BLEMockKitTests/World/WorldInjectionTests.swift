import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: error injection", .timeLimit(.minutes(10)))
struct WorldInjectionTests {
    /// A peripheral that is not on the air.
    static let elsewhere = UUID(uuid: (0xEE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))

    static func link(injecting injections: [ErrorInjection], handling: RequestHandling = .automatic) throws
        -> (WorldHarness, WorldLink)
    {
        try WorldLink.make(
            central: .init(mtu: .fixed(23), errorInjection: injections),
            peripheral: .init(name: "Sensor", requestHandling: handling))
    }

    @Test("An injected ATT error answers the first request: one exchange, then the long read fails with it")
    func injectedATTError() throws {
        var (harness, link) = try Self.link(injecting: [ErrorInjection(.read, failure: .att(.readNotPermitted))])
        var (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let failed = harness.perform(link.read(WorldUUID.long))
        #expect(harness.error(of: failed) as? ATTError == ATTError(.readNotPermitted))
        #expect(harness.world.attPDUCount - pdus == 2)
        #expect(harness.elapsed(failed, since: start) == ms(30))
        #expect(harness.log(.read).last?.error == .att(ATTError(.readNotPermitted)))
        // Once: the next read runs its 14 exchanges.
        (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let read = harness.perform(link.read(WorldUUID.long))
        #expect(harness.reply(of: read) == .value(testBytes(300)))
        #expect(harness.world.attPDUCount - pdus == 28)
        #expect(harness.elapsed(read, since: start) == ms(420))
    }

    @Test("An injected CoreBluetooth error fails a long write at its first Prepare Write, without asking the app")
    func injectedCoreBluetoothError() throws {
        var (harness, link) = try Self.link(
            injecting: [ErrorInjection(.write, failure: .coreBluetooth(.connectionFailed))],
            handling: .handler { _ in .success() })
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let write = harness.perform(link.write(WorldUUID.value, testBytes(100)))
        #expect(harness.error(of: write) as? CoreBluetoothError == CoreBluetoothError(.connectionFailed))
        #expect(harness.world.attPDUCount - pdus == 2)
        #expect(harness.elapsed(write, since: start) == ms(30))
        #expect(harness.handled[link.peripheral] == nil)
    }

    @Test("An injected ATT error refuses a long write's first Prepare Write, which the client then cancels")
    func injectedATTErrorOnALongWrite() throws {
        var (harness, link) = try Self.link(
            injecting: [ErrorInjection(.write, failure: .att(.insufficientResources))],
            handling: .handler { _ in .success() })
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let write = harness.perform(link.write(WorldUUID.value, testBytes(100)))
        #expect(harness.error(of: write) as? ATTError == ATTError(.insufficientResources))
        // The Prepare Write and its Error Response, the Execute Write (flags 0x00) and its response.
        #expect(harness.world.attPDUCount - pdus == 4)
        #expect(harness.elapsed(write, since: start) == ms(60))
        #expect(harness.handled[link.peripheral] == nil)
        // Once: the next long write goes through, and reaches the handler whole.
        let next = harness.perform(link.write(WorldUUID.value, testBytes(100)))
        #expect(harness.reply(of: next) == .done)
        #expect((harness.handled[link.peripheral] ?? []).compactMap(\.value).reduce(Data(), +) == testBytes(100))
    }

    @Test("neverAnswers parks the read after its request crosses, and holds the ATT bearer")
    func neverAnswers() throws {
        var (harness, link) = try Self.link(injecting: [ErrorInjection(.read, failure: .neverAnswers)])
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let first = harness.perform(link.read(WorldUUID.value))
        #expect(harness.world.isParked(first))
        #expect(harness.world.pending[first]?.stage == .neverAnswered)
        #expect(harness.world.now == start.advanced(by: ms(30)))
        #expect(harness.world.attPDUCount - pdus == 1)  // the request, and no response
        let second = harness.perform(link.read(WorldUUID.value))
        #expect(harness.world.pending[second]?.stage == .queued)
        #expect(harness.world.isParked(second))
        #expect(harness.world.parkedOperations == [first, second])
        #expect(harness.world.now == start.advanced(by: ms(30)))
        #expect(harness.world.attPDUCount - pdus == 1)
        #expect(harness.completions[first] == nil && harness.completions[second] == nil)
        // The link dropping is what ends them, in the order they started.
        let error = CoreBluetoothError(.peripheralDisconnected)
        harness.apply(.disconnect(central: link.central, peripheral: link.peripheral, error: error))
        #expect(harness.error(of: first) as? CoreBluetoothError == error)
        #expect(harness.error(of: second) as? CoreBluetoothError == error)
        let order = harness.timeline.compactMap { happening -> OperationID? in
            if case .complete(let id, _) = happening.effect, id >= first { return id }
            return nil
        }
        #expect(order == [first, second])
    }

    @Test("An injection fires as often as its frequency says, and the book counts what fired and what did not")
    func frequencies() throws {
        let twice = ErrorInjection(.read, failure: .att(.prepareQueueFull), frequency: .times(2))
        let unused = ErrorInjection(.subscribe, failure: .att(.unlikelyError))
        let always = ErrorInjection(.readRSSI, failure: .coreBluetooth(.unknown), frequency: .always)
        let never = ErrorInjection(.write, failure: .att(.writeNotPermitted), frequency: .probability(0))
        var (harness, link) = try Self.link(injecting: [twice, unused, always, never])
        let reads = (0..<3).map { _ in harness.perform(link.read(WorldUUID.value)) }
        #expect(
            reads.map { harness.error(of: $0) as? ATTError } == [
                ATTError(.prepareQueueFull), ATTError(.prepareQueueFull), nil,
            ])
        #expect(harness.reply(of: reads[2]) == .value(Data()))
        let rssi = (0..<2).map { _ in harness.perform(.readRSSI(central: link.central, peripheral: link.peripheral)) }
        #expect(
            rssi.map { harness.error(of: $0) as? CoreBluetoothError } == [
                CoreBluetoothError(.unknown), CoreBluetoothError(.unknown),
            ])
        let write = harness.perform(link.write(WorldUUID.value, Data([1])))
        #expect(harness.reply(of: write) == .done)
        #expect(harness.world.injections.entries.map(\.fired) == [2, 0, 2, 0])
        #expect(harness.world.injections.entries.map(\.met) == [2, 0, 2, 1])
        // A probability entry the write met was reached, though it drew no failure.
        #expect(harness.world.injections.unfired.map(\.injection) == [unused])
    }

    @Test("A central's injection applies to its own operations; a bridge-wide one narrowed to a peripheral to that one")
    func scopes() throws {
        var (harness, link) = try Self.link(injecting: [])
        let other = harness.addCentral(
            .init(errorInjection: [ErrorInjection(.read, failure: .att(.readNotPermitted), frequency: .always)]))
        let otherLink = try WorldLink.connect(other, to: link.peripheral, service: link.service, in: &harness)
        let mine = harness.perform(link.read(WorldUUID.value))
        let theirs = harness.perform(otherLink.read(WorldUUID.value))
        #expect(harness.reply(of: mine) == .value(Data()))
        #expect(harness.error(of: theirs) as? ATTError == ATTError(.readNotPermitted))
        harness.mutate {
            $0.inject(
                ErrorInjection(.read, failure: .att(.invalidPdu), frequency: .always, peripheral: Self.elsewhere),
                owner: nil)
        }
        let elsewhere = harness.perform(link.read(WorldUUID.value))
        #expect(harness.reply(of: elsewhere) == .value(Data()))
        harness.mutate {
            $0.inject(ErrorInjection(.read, failure: .att(.invalidPdu), peripheral: link.peripheral), owner: nil)
        }
        let here = harness.perform(link.read(WorldUUID.value))
        #expect(harness.error(of: here) as? ATTError == ATTError(.invalidPdu))
    }

    static let refusedAtRuntime: [(ErrorInjection, String)] = [
        (ErrorInjection(.read, failure: .att(.unlikelyError), frequency: .times(0)), ".times(0) must be at least 1"),
        (ErrorInjection(.read, failure: .att(.unlikelyError), frequency: .times(-1)), ".times(-1) must be at least 1"),
        (
            ErrorInjection(.read, failure: .att(.unlikelyError), frequency: .probability(2)),
            ".probability(2.0) must be in 0…1"
        ),
        (
            ErrorInjection(.read, failure: .att(.unlikelyError), frequency: .probability(.nan)),
            ".probability(nan) must be in 0…1"
        ),
        (
            ErrorInjection(.read, failure: .att(.unlikelyError), frequency: .probability(-1)),
            ".probability(-1.0) must be in 0…1"
        ),
        (
            ErrorInjection(.connect, failure: .att(.unlikelyError)),
            ".att(0x0E unlikelyError) cannot fail .connect: no ATT response answers it (ATT errors answer "
                + ".serviceDiscovery, .characteristicDiscovery, .descriptorDiscovery, .read, .write and .subscribe); "
                + "inject a .coreBluetooth(_:) failure"
        ),
        // (It used to be installed, and a read then threw ATTError(0x00 success).)
        (
            ErrorInjection(.read, failure: .att(.success)),
            ".att(0x00 success) is not an error: ATT result 0x00 is the answer to a granted request, so .read "
                + "could not fail with it; inject an ATT error code (0x01 or above)"
        ),
        (
            ErrorInjection(.serviceAdd, failure: .coreBluetooth(.unknown)),
            ".serviceAdd is a peripheral manager's operation and never happens on a central manager; "
                + "put it in a MockPeripheralManager's configuration"
        ),
    ]

    @Test(
        "A central's runtime injection its configuration would refuse is not installed; the central refuses every call",
        arguments: refusedAtRuntime)
    func centralRefusesARuntimeInjection(injection: ErrorInjection, problem: String) throws {
        var (harness, link) = try Self.link(injecting: [])
        harness.mutate { $0.inject(injection, owner: link.central) }
        #expect(harness.world.injections.isEmpty)
        let read = harness.perform(link.read(WorldUUID.value))
        let expected = APIMisuseError.invalidConfiguration("MockCentralManager.inject(_:): \(problem)")
        #expect(harness.error(of: read) as? APIMisuseError == expected)
        #expect(throws: expected) { try harness.startScan(link.central) }
        // The peripheral is not concerned.
        #expect(throws: Never.self) {
            try harness.addService(GATTService(uuid: "FFF9", characteristics: []), to: link.peripheral)
        }
    }

    @Test("A peripheral's runtime injection of a central's operation, or a bridge-wide one out of range, is refused")
    func peripheralAndBridgeRefuseRuntimeInjections() throws {
        var (harness, link) = try Self.link(injecting: [])
        harness.mutate { $0.inject(ErrorInjection(.read, failure: .att(.unlikelyError)), owner: link.peripheral) }
        #expect(harness.world.injections.isEmpty)
        #expect(
            throws: APIMisuseError.invalidConfiguration(
                "MockPeripheralManager.inject(_:): .read is a central manager's operation and never happens on a "
                    + "peripheral manager; put it in a MockCentralManager's configuration")
        ) { try harness.addService(GATTService(uuid: "FFF9", characteristics: []), to: link.peripheral) }
        let read = harness.perform(link.read(WorldUUID.value))
        #expect(harness.reply(of: read) == .value(Data()))
        harness.mutate {
            $0.inject(ErrorInjection(.read, failure: .att(.unlikelyError), frequency: .times(-5)), owner: nil)
        }
        #expect(harness.world.injections.isEmpty)
        let refused = harness.perform(link.read(WorldUUID.value))
        #expect(
            harness.error(of: refused) as? APIMisuseError
                == .invalidConfiguration("MockBLEBridge.inject(_:): .times(-5) must be at least 1"))
        // A bridge-wide injection of either role's operation is fine (on another world).
        var (other, otherLink) = try Self.link(injecting: [])
        other.mutate { $0.inject(ErrorInjection(.serviceAdd, failure: .coreBluetooth(.outOfSpace)), owner: nil) }
        other.mutate { $0.inject(ErrorInjection(.read, failure: .att(.unlikelyError)), owner: nil) }
        #expect(other.world.injections.entries.count == 2)
        let failed = other.perform(otherLink.read(WorldUUID.value))
        #expect(other.error(of: failed) as? ATTError == ATTError(.unlikelyError))
    }
}
