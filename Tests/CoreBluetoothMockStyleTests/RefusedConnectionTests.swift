import BLECBM
import BLEMockKit
import Foundation
import Testing

/// A spec delegate that refuses every connection with `error`, and counts the requests.
final class RefusingDelegate: CBMPeripheralSpecDelegate, @unchecked Sendable {
    // @unchecked Sendable: `requests` is guarded by `lock`; `error` is set once.
    private let lock = NSLock()
    private var requests = 0
    let error: any Error

    init(_ error: any Error) { self.error = error }

    var asked: Int { lock.withLock { requests } }

    func peripheralDidReceiveConnectionRequest(_ peripheral: CBMPeripheralSpec) -> Result<Void, Error> {
        lock.withLock { requests += 1 }
        return .failure(error)
    }
}

/// A connection a spec's delegate refuses is an attempt of the simulation like any other: it
/// fails where its link would have come up (at once in fast mode, after the connection latency
/// in realistic timing, as CoreBluetoothMock waits a connection interval), the bridge's log has
/// it, and the app hears the delegate's error as given.
@Suite(.timeLimit(.minutes(10)), .finishesOwnBridges)
struct RefusedConnectionTests {
    /// Connects a new app to a spec refusing with `error`; returns what the app heard, the
    /// virtual time from the call to the failure, how many times the delegate was asked, and the
    /// bridge's connection log entries for the spec.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func refusedConnect(
        realistic: Bool, seed: UInt64, error: any Error
    ) async throws -> (lines: [String], took: Duration, asked: Int, log: [String]) {
        let bridge = CoreBluetoothMockParityTests.bridge(realistic: realistic, seed: seed)
        let delegate = RefusingDelegate(error)
        let spec = CBMPeripheralSpec.simulatePeripheral(proximity: .near)
            .advertising(advertisementData: [CBMAdvertisementDataLocalNameKey: "Lock"], withInterval: 0.100)
            .connectable(
                name: "Lock", services: [CBMServiceMock(type: .batteryService, primary: true)], delegate: delegate
            )
            .allowForRetrieval().build()
        let (lines, took) = try await bridge.run { @MainActor () -> ([String], Duration) in
            CBMCentralManagerMock.simulatePeripherals([spec])
            let (app, peripheral) = try await SpecConnectionTests.app(for: spec, on: bridge)
            let start = bridge.clock.now
            app.manager?.connect(peripheral)
            try await bridge.waitForApp { !app.lines.isEmpty }
            return (app.lines, start.duration(to: bridge.clock.now))
        }
        let log = await bridge.log.filter { $0.peripheral == spec.identifier }.map { "\($0.kind)" }
        return (lines, took, delegate.asked, log)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func inRealisticTimingTheRefusalTakesTheConnectionLatencyAndIsLogged() async throws {
        let refused = try await Self.refusedConnect(
            realistic: true, seed: 90, error: CBMError(.peerRemovedPairingInformation))
        #expect(refused.lines == ["failed \(CBMErrorDomain) \(CBMError.Code.peerRemovedPairingInformation.rawValue)"])
        #expect(refused.asked == 1)
        // Not on the next turn of the app's queue: where the link would have come up.
        #expect(refused.took > .zero)
        #expect(refused.log.suffix(2) == ["connecting", "connectionFailed"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func inFastModeTheRefusalIsImmediateAndLogged() async throws {
        let refused = try await Self.refusedConnect(realistic: false, seed: 91, error: CBMError(.connectionFailed))
        #expect(refused.lines == ["failed \(CBMErrorDomain) \(CBMError.Code.connectionFailed.rawValue)"])
        #expect(refused.took == .zero)
        #expect(refused.log.suffix(2) == ["connecting", "connectionFailed"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func anErrorOfTheTestsOwnReachesTheAppAsGiven(realistic: Bool) async throws {
        let refused = try await Self.refusedConnect(
            realistic: realistic, seed: 92, error: NSError(domain: "LockRefusal", code: 7))
        #expect(refused.lines == ["failed LockRefusal 7"])
        #expect(refused.log.suffix(2) == ["connecting", "connectionFailed"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theSameSeedGivesTheSameLog() async throws {
        let first = try await Self.refusedConnect(realistic: true, seed: 93, error: CBMError(.connectionFailed))
        let again = try await Self.refusedConnect(realistic: true, seed: 93, error: CBMError(.connectionFailed))
        #expect(first.took == again.took)
        #expect(first.log == again.log)
    }
}
