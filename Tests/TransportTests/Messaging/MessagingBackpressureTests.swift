import BLECore
import BLEMockKit
import Foundation
import Testing
import Transport

@Suite("Message channel backpressure", .timeLimit(.minutes(10)))
struct MessagingBackpressureTests {
    @Test("Writes without response wait for readyToSendWriteWithoutResponse whenever the queue is full")
    func centralWaitsForTransmitQueue() async throws {
        let fixture = try await MessagingFixture()
        let (mock, remote) = try await fixture.connectCentral(mtu: 23)
        let central = ThrottledCentral(mock, burst: 3)
        let receiver = await fixture.peripheralChannel()
        let sender = await CentralMessageChannel(central: central, characteristic: remote, clock: fixture.bridge.clock)
        let first = MessagingFixture.message(size: 1_000, salt: 1)
        let second = MessagingFixture.message(size: 333, salt: 2)
        try await sender.send(first)
        try await sender.send(second)
        #expect(await receiver.messages().next(2).map(\.bytes) == [first, second])
        let packets = 63 + 22  // ⌈1008 / 16⌉ + ⌈341 / 16⌉
        #expect(await fixture.bridge.log.filter { $0.kind == .write }.count == packets)
        #expect(await central.fullReports >= packets / 3 - 1)
        #expect(await central.violations == 0)
        await sender.close()
        await central.stop()
    }
}
