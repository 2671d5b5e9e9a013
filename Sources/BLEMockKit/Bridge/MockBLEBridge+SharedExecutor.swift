extension MockBLEBridge {
    /// Runs `body` isolated to the bridge, from code already running on the bridge's executor:
    /// a manager's own isolated methods (a manager runs on its bridge's executor, see
    /// ``MockCentralManager/unownedExecutor``).
    ///
    /// It does what `assumeIsolated` does, at a cost a manager can pay on every call:
    /// `assumeIsolated` makes its closure escaping, which allocates it (twice, with its
    /// reabstraction), and asks the runtime which executor is current. Here `body` is wrapped
    /// in a non-escaping closure that stores its outcome and handed, as a plain argument, to a
    /// function isolated to the bridge, called through a reference to it without the isolation
    /// in its type (the two have one calling convention). The reference is reinterpreted inside
    /// a struct: bit-casting a function value itself (a generic call) would wrap it in
    /// reabstraction thunks, which allocate on every call. Nothing is allocated. Debug builds
    /// still check that the caller is on the bridge's executor.
    @inline(__always)
    nonisolated func onSharedExecutor<T, E: Error>(
        _ body: @Sendable (isolated MockBLEBridge) throws(E) -> T
    ) throws(E) -> T {
        // Written and read on this thread, within this call: `body` runs synchronously.
        nonisolated(unsafe) var outcome: Result<T, E>?
        unsafeBitCast(IsolatedRunner(run: runIsolated), to: PlainRunner.self).run(self) { bridge in
            outcome = Result { () throws(E) -> T in try body(bridge) }
        }
        return try outcome.unsafelyUnwrapped.get()
    }
}

/// A function isolated to a bridge, and the same function without the isolation in its type
/// (see ``MockBLEBridge/onSharedExecutor(_:)``).
private struct IsolatedRunner {
    let run: (isolated MockBLEBridge, (isolated MockBLEBridge) -> Void) -> Void
}

private struct PlainRunner {
    let run: (MockBLEBridge, (isolated MockBLEBridge) -> Void) -> Void
}

/// `body`, on the bridge (see ``MockBLEBridge/onSharedExecutor(_:)``).
private func runIsolated(_ bridge: isolated MockBLEBridge, _ body: (isolated MockBLEBridge) -> Void) {
    #if DEBUG
        bridge.preconditionIsolated("a manager calls its bridge only from the bridge's executor")
    #endif
    body(bridge)
}
