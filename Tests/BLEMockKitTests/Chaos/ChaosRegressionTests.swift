import BLECore
import BLEMockKit
import Foundation
import Testing

/// Bugs the chaos runs found, each kept as a test of its own and as its seed.
@Suite("Chaos regressions", .timeLimit(.minutes(10)))
struct ChaosRegressionTests {
    /// A realistic link to a peripheral whose body-location value is static, connected and discovered.
    static func link() async throws -> (MockBLEBridge, MockPeripheralManager, MockCentralManager, RemoteCharacteristic)
    {
        let bridge = Realistic.steadyBridge()
        let (peripheral, _) = try await Realistic.advertisingPeripheral(on: bridge)
        let (central, characteristics) = try await Realistic.connectedCentral(to: peripheral, on: bridge)
        let value = try #require(characteristics.first { $0.uuid == Realistic.longValue })
        return (bridge, peripheral, central, value)
    }

    @Test(
        "A read whose peripheral leaves range mid-read and returns before the supervision timeout is answered at the next connection event"
    )
    func outOfRangeAndBackMidOperation() async throws {
        // Chaos seed 263: a discovery was left waiting for ever once the peripheral came back.
        let (bridge, peripheral, central, value) = try await Self.link()
        let start = await bridge.now
        await bridge.schedule(.proximity(peripheral: peripheral.identifier, .outOfRange), after: .milliseconds(10))
        await bridge.schedule(.proximity(peripheral: peripheral.identifier, .near), after: .milliseconds(500))
        #expect(try await central.readValue(for: value) == testBytes(300))
        // Connection events go on every 30 ms while nothing is heard; the first after the
        // peripheral is back (at 510 ms) carries the read.
        #expect(await bridge.now == start.advanced(by: .milliseconds(510)))
        #expect(await central.isConnected(peripheral.identifier))
        #expect(await bridge.finish() == .clean)
    }

    @Test(
        "A read sent while the peripheral is out of range is answered at the first connection event after it comes back"
    )
    func outOfRangeAtStart() async throws {
        let (bridge, peripheral, central, value) = try await Self.link()
        await peripheral.simulateProximityChange(.outOfRange)
        let start = await bridge.now
        await bridge.schedule(.proximity(peripheral: peripheral.identifier, .far), after: .milliseconds(300))
        #expect(try await central.readValue(for: value) == testBytes(300))
        #expect(await bridge.now == start.advanced(by: .milliseconds(300)))
        #expect(await bridge.finish() == .clean)
    }

    @Test("A read sent while the peripheral is out of range fails when the supervision timeout ends the link")
    func outOfRangeUntilTimeout() async throws {
        let (bridge, peripheral, central, value) = try await Self.link()
        await peripheral.simulateProximityChange(.outOfRange)
        let start = await bridge.now
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) { try await central.readValue(for: value) }
        #expect(await bridge.now == start.advanced(by: .milliseconds(720)))
        #expect(await !central.isConnected(peripheral.identifier))
    }

    @Test("The seeds that found bugs pass", arguments: [263] as [UInt64])
    func seed(_ seed: UInt64) async {
        let problems = await ChaosTests.run(seed: seed)
        #expect(problems.isEmpty, "chaos seed \(seed):\n\(problems.joined(separator: "\n"))")
    }
}
