/// Tasks that BLE libraries start for themselves (reading a manager's events, running a
/// timer), started so they run where the code that uses the library runs.
///
/// A library built on BLECore (the kit's Transport, say) starts its helper tasks with
/// ``start(_:)`` instead of `Task {}`. In production that is a plain task. Inside a test scope
/// that sets ``preferredExecutor`` (BLEMockKit's `MockBLEBridge.run`), the helper runs on that
/// scope's executor, so the scope sees it and virtual time waits for it as for the test's own
/// tasks; a plain `Task {}` would run elsewhere, unseen.
public enum HelperTask {
    /// The executor helper tasks prefer in the current scope (task-local, so each test has its
    /// own); `nil` outside a scope.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @TaskLocal public static var preferredExecutor: (any TaskExecutor)?

    /// Starts a helper task: on ``preferredExecutor`` when a scope sets one, else as `Task {}`.
    @discardableResult
    public static func start(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *),
            let executor = preferredExecutor
        {
            return Task(executorPreference: executor, operation: operation)
        }
        return Task(operation: operation)
    }
}
