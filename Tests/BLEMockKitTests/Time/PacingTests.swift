import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("Demo pacing", .timeLimit(.minutes(10)))
struct PacingTests {
    @Test("Real-time pacing waits exactly the scaled virtual time, on the wall clock, and changes nothing else")
    func pacingWaitsAndKeepsTheLog() async throws {
        func run(pacing: Double?) async throws -> (log: [String], wall: Duration, paced: Duration, now: Duration) {
            let bridge = MockBLEBridge(configuration: .init(seed: 3, timing: .realistic, realTimePacing: pacing))
            let (peripheral, _) = try await TestPeripherals.advertisingHeartRate(on: bridge)
            let central = MockCentralManager(bridge: bridge)
            try await central.scanForPeripherals(withServices: nil)
            let clock = ContinuousClock()
            let start = clock.now
            await bridge.advance(by: .seconds(1))
            try await central.connect(peripheral.identifier)
            try await central.discoverAll(for: peripheral.identifier)
            let wall = clock.now - start
            return (
                await bridge.log.map(\.description), wall, await bridge.pacedInAll,
                VirtualClock.Instant.zero.duration(to: await bridge.now)
            )
        }
        let paced = try await run(pacing: 0.05)
        let unpaced = try await run(pacing: nil)
        #expect(paced.log == unpaced.log)
        #expect(paced.now == unpaced.now)
        // Every virtual instant the test waited through was paced at 5 %: 1 s of advance plus
        // the connection and discovery.
        #expect(paced.paced == paced.now * 0.05)
        #expect(paced.now > .seconds(1))
        #expect(unpaced.paced == .zero)
        // The wait happened on the wall clock.
        #expect(paced.wall >= paced.paced)
    }
}
