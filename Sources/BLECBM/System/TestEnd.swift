import BLEMockKit

/// What the end of a test's bridge (the `.mockBridge` trait's scope, XCTest's `runOnMockBridge`,
/// `finish()` on a bridge of the test's own) does to the CoreBluetooth-shaped objects on it.
package enum TestEnd {
    /// The test that ran on `bridge` has ended: a ``CBMCentralManagerMock``'s peripheral objects
    /// on it keep their delegates no longer (they hold them weakly, as CoreBluetooth's do), so an
    /// app that keeps its peripheral and is its delegate, or keeps its manager, which keeps its
    /// peripherals, goes once the test lets go of it, with its manager and the bridge, instead of
    /// keeping itself alive for the rest of the process. Nothing is called back: an app still
    /// kept (by the test, to look at after it) goes on as it was.
    package static func release(_ bridge: MockBLEBridge) {
        for engine in MockCentralEngine.engines(on: bridge) { engine.releaseKeptDelegates() }
    }
}

extension MockCentralEngine {
    /// With the lock held: the peripheral objects stop keeping their delegates (the simulation
    /// they belong to has ended). Returns the delegates they kept: let go of them once the lock
    /// is released (an app may go with one, and its deinit is the app's code).
    func takeKeptDelegates() -> [any CBMPeripheralDelegate] {
        peripheralObjects.compactMap { $0.releaseKeptDelegate() }
    }

    /// Stops the peripheral objects keeping their delegates (see ``TestEnd/release(_:)``).
    func releaseKeptDelegates() {
        // (The delegates go as the array does, after `withLock` has returned.)
        _ = lock.withLock { takeKeptDelegates() }
    }
}
