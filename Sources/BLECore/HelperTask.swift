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

    /// Starts a helper task (as ``start(_:)``) that owns `payload` and lets go of it before it
    /// ends: once the task's `value` returns, the task holds nothing of it any more.
    ///
    /// A task keeps what its closure captured until the task object itself goes, which can be
    /// after those awaiting its `value` have moved on; a helper that reads a manager's event
    /// stream or sleeps on a clock would keep the manager or the clock alive a moment after it
    /// was said to be done. Passed here instead, the payload is handed to `operation` and
    /// released when `operation` returns.
    @discardableResult
    public static func start<Payload: Sendable>(
        holding payload: Payload, _ operation: @escaping @Sendable (Payload) async -> Void
    ) -> Task<Void, Never> {
        let box = PayloadBox(payload)
        return start {
            guard let payload = box.take() else { return }
            await operation(payload)
        }
    }
}

/// A helper task's payload, taken once by the task (see ``HelperTask/start(holding:_:)``).
private final class PayloadBox<Payload: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `payload` is written when the box is made, before the task that
    // takes it starts (task creation orders the two), and then only by that task, once.
    private var payload: Payload?

    init(_ payload: Payload) {
        self.payload = payload
    }

    func take() -> Payload? {
        defer { payload = nil }
        return payload
    }
}
