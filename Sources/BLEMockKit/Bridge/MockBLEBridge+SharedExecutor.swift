extension MockBLEBridge {
    /// Runs `body` isolated to the bridge, from code already running on the bridge's executor:
    /// a manager's own isolated methods (a manager runs on its bridge's executor, see
    /// ``MockCentralManager/unownedExecutor``).
    ///
    /// It does what `assumeIsolated` does, at a cost a manager can pay on every call:
    /// `assumeIsolated` makes its closure escaping, which allocates it (twice, with its
    /// reabstraction), and asks the runtime which executor is current. Here the closure is
    /// handed, as a plain non-escaping argument, to a function isolated to the bridge, called
    /// through a reference to it without the isolation in its type (the two have one calling
    /// convention). Some result and error types still need a reabstraction thunk (one
    /// allocation); the rest allocate nothing. Debug builds still check that the caller is on
    /// the bridge's executor.
    @inline(__always)
    nonisolated func onSharedExecutor<T, E: Error>(
        _ body: @Sendable (isolated MockBLEBridge) throws(E) -> T
    ) throws(E) -> T {
        typealias Isolated = (isolated MockBLEBridge, @Sendable (isolated MockBLEBridge) throws(E) -> T) throws(E) -> T
        typealias Unisolated = (MockBLEBridge, @Sendable (isolated MockBLEBridge) throws(E) -> T) throws(E) -> T
        let run: Isolated = MockBLEBridge.runIsolated
        return try unsafeBitCast(run, to: Unisolated.self)(self, body)
    }

    /// `body`, on the bridge (see ``onSharedExecutor(_:)``).
    private static func runIsolated<T, E: Error>(
        _ bridge: isolated MockBLEBridge, _ body: @Sendable (isolated MockBLEBridge) throws(E) -> T
    ) throws(E) -> T {
        #if DEBUG
            bridge.preconditionIsolated("a manager calls its bridge only from the bridge's executor")
        #endif
        return try body(bridge)
    }
}
