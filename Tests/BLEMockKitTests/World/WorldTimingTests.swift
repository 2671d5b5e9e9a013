import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: timing of exchanges", .timeLimit(.minutes(10)))
struct WorldTimingTests {
    /// An operation whose cost is compared across the ways a peripheral answers.
    enum Operation: String, CaseIterable, CustomTestStringConvertible {
        case read, longRead, write, longWrite

        var testDescription: String { rawValue }

        /// The value read or written.
        var value: Data {
            switch self {
            case .read: testBytes(10)
            case .longRead, .longWrite: testBytes(300)
            case .write: testBytes(20)
            }
        }

        var isRead: Bool { self == .read || self == .longRead }

        /// The request/response exchanges it takes at ATT_MTU `mtu`.
        func exchanges(mtu: Int) -> Int {
            switch (self, mtu) {
            case (.read, _), (.write, _): 1
            case (.longRead, 23): 14  // 300 / 22 + 1
            case (.longRead, _): 2  // 300 / 184 + 1
            case (.longWrite, 23): 18  // 17 Prepare Writes of 18 bytes, and the Execute Write
            case (.longWrite, _): 3  // 2 Prepare Writes of 180 bytes, and the Execute Write
            }
        }
    }

    /// Runs `operation` on a fresh link at ATT_MTU `mtu` with a peripheral answering the way
    /// `handling` says (a manual one at the instant each request arrives); returns how long it
    /// took and what it returned.
    static func run(_ operation: Operation, mtu: Int, handling: RequestHandling) throws -> (Duration?, Reply?) {
        let value = operation.value
        var (harness, link) = try WorldLink.make(
            central: .init(mtu: .fixed(mtu)), peripheral: .init(name: "Sensor", requestHandling: handling))
        if case .automatic = handling, operation.isRead { try harness.setValue(value, of: WorldUUID.value, on: link) }
        let request = operation.isRead ? link.read(WorldUUID.value) : link.write(WorldUUID.value, value)
        let start = harness.world.now
        let id = try harness.perform(request, answering: link.peripheral) { request in
            .success(request.value == nil ? Data(value.dropFirst(request.offset)) : nil)
        }
        return (harness.elapsed(id, since: start), harness.reply(of: id))
    }

    @Test(
        "Each exchange costs one connection event, whether the stack, a handler or the app answers",
        arguments: Operation.allCases, [23, 185])
    func answersCostTheSame(operation: Operation, mtu: Int) throws {
        let value = operation.value
        let expected = ms(30 * operation.exchanges(mtu: mtu))
        let reply: Reply = operation.isRead ? .value(value) : .done
        let automatic = try Self.run(operation, mtu: mtu, handling: .automatic)
        let handler = try Self.run(
            operation, mtu: mtu,
            handling: .handler { request in
                .success(request.value == nil ? Data(value.dropFirst(request.offset)) : nil)
            })
        let manual = try Self.run(operation, mtu: mtu, handling: .manual)
        #expect(automatic.0 == expected)
        #expect(handler.0 == expected)
        #expect(manual.0 == expected)
        #expect([automatic.1, handler.1, manual.1] == [reply, reply, reply])
    }

    @Test("An answer the app gives later crosses one connection interval after it is given")
    func lateAnswer() throws {
        var (harness, link) = try WorldLink.make(peripheral: .init(name: "Sensor", requestHandling: .manual))
        let start = harness.world.now
        let read = harness.perform(link.read(WorldUUID.value))
        #expect(harness.world.now == start.advanced(by: ms(30)))
        let request = try #require(harness.outstandingRequests(of: link.peripheral).first)
        harness.advance(to: start.advanced(by: ms(75)))
        #expect(harness.world.isParked(read))
        try harness.respond(link.peripheral, to: request, result: .success, value: Data([7]))
        #expect(harness.elapsed(read, since: start) == ms(105))
        #expect(harness.reply(of: read) == .value(Data([7])))
    }

    @Test("Procedures on one link take the ATT bearer in turn: the second starts when the first ends")
    func proceduresTakeTurns() throws {
        var (harness, link) = try WorldLink.make(central: .init(mtu: .fixed(23)))
        let start = harness.world.now
        let long = harness.start(link.read(WorldUUID.long))
        let short = harness.start(link.read(WorldUUID.value))
        #expect(harness.world.pending[short]?.stage == .queued)
        harness.serve(short)
        #expect(harness.elapsed(long, since: start) == ms(420))
        #expect(harness.elapsed(short, since: start) == ms(450))
        #expect(harness.reply(of: long) == .value(testBytes(300)))
    }

    @Test(
        "A connection to a peripheral the system holds a link to comes up at once; to an advertiser, after its latency",
        arguments: [false, true])
    func aConnectionTheSystemHoldsComesUpAtOnce(heldBySystem: Bool) throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let device = harness.addPeripheral(.init(name: "Watch", advertisingInterval: ms(100), seed: 5))
        try harness.startAdvertising(device, AdvertisementData(localName: "Watch"))
        harness.mutate { $0.cache(peripheral: device) }
        if heldBySystem { harness.mutate { $0.setConnectedToSystem(peripheral: device, true) } }
        let central = harness.addCentral()
        let start = harness.world.now
        let connect = harness.perform(.connect(central: central, peripheral: device, timeout: nil))
        #expect(harness.reply(of: connect) == .done)
        let elapsed = try #require(harness.elapsed(connect, since: start))
        // Another app's link is joined, not made; a new one takes the steady timing's one interval.
        #expect(elapsed == (heldBySystem ? .zero : ms(30)))
    }

    // A Read Response carries at most ATT_MTU − 1 bytes (Core Vol 3, Part F, 3.4.4.4): an app
    // answering with the whole of a long value has the rest asked for again by Read Blob. The
    // log's response entry had the whole value (300 bytes where 184 crossed). Peripheral-role probe.
    @Test("A response's log entry holds what the Read Response carries, cut at ATT_MTU − 1")
    func aResponsesLogEntryHoldsWhatCrossed() throws {
        var (harness, link) = try WorldLink.make(
            central: .init(mtu: .fixed(185)), peripheral: .init(name: "Sensor", requestHandling: .manual))
        let value = testBytes(300)
        let read = try harness.perform(link.read(WorldUUID.value), answering: link.peripheral) { request in
            .success(Data(value.dropFirst(request.offset)))
        }
        #expect(harness.reply(of: read) == .value(value))
        #expect(harness.log(.response).map { $0.value?.count } == [184, 116])
    }
}
