import BLEMockKit
import Foundation
import Testing

/// The bridges the tests of this target make themselves, finished as each test ends.
///
/// A `CBMCentralManagerMock`'s peripheral keeps its delegate, as CoreBluetoothMock's does, until
/// the test's simulation ends. On a bridge a test makes itself, `finish()` marks that end: these
/// suites make their bridges with ``ownBridge(seed:)`` and ``ownBridge(configuration:)`` and
/// carry ``Trait/finishesOwnBridges``, so an app that is its kept peripheral's delegate goes with
/// its test rather than staying for the rest of the process (what the address sanitizer's leak
/// check reports). What `finish()` reports is the tests' own business: they check it where it
/// matters.
final class OwnBridges: @unchecked Sendable {
    // @unchecked Sendable: `bridges` is only read and written with `lock` held.
    private let lock = NSLock()
    private var bridges: [MockBLEBridge] = []

    /// The bridges of the test running (bound by the trait).
    @TaskLocal static var current: OwnBridges?

    func add(_ bridge: MockBLEBridge) {
        lock.withLock { bridges.append(bridge) }
    }

    /// Finishes every bridge made, in the order made, and lets go of them.
    func finishAll() async {
        let made = lock.withLock {
            defer { bridges = [] }
            return bridges
        }
        for bridge in made { _ = await bridge.finish() }
    }
}

/// A bridge of the test's own, with `seed`, finished as the test ends.
func ownBridge(seed: UInt64) -> MockBLEBridge {
    noted(MockBLEBridge(seed: seed))
}

/// A bridge of the test's own, with `configuration`, finished as the test ends.
func ownBridge(configuration: MockBLEBridge.Configuration) -> MockBLEBridge {
    noted(MockBLEBridge(configuration: configuration))
}

private func noted(_ bridge: MockBLEBridge) -> MockBLEBridge {
    OwnBridges.current?.add(bridge)
    return bridge
}

/// Finishes the bridges each test of a suite made with ``ownBridge(seed:)`` as the test ends.
struct FinishesOwnBridgesTrait: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite else { return try await function() }
        let bridges = OwnBridges()
        do {
            try await OwnBridges.$current.withValue(bridges) { try await function() }
        } catch {
            await bridges.finishAll()
            throw error
        }
        await bridges.finishAll()
    }
}

extension Trait where Self == FinishesOwnBridgesTrait {
    /// Finishes the bridges each test made with ``ownBridge(seed:)`` as it ends.
    static var finishesOwnBridges: Self { Self() }
}
