import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension MockBLEBridge {
    // MARK: Faults

    /// Applies a fault now.
    ///
    /// A fault naming a manager that is not on this bridge (a mistyped identifier, or another
    /// bridge's) does nothing, and ``finish()`` lists it (``Leftover/unknownTarget(_:)``); so
    /// does a scheduled one when it fires, and ``simulateDisconnection(central:peripheral:error:)``.
    public func simulate(_ fault: Fault) {
        admitArrivals()
        applyHeldCalls()
        mutate { $0.apply(fault) }
    }

    /// Schedules a fault at a virtual time (at once if that time has passed); it fires when
    /// the simulation reaches it, in order with everything else scheduled.
    public func schedule(_ fault: Fault, at instant: VirtualClock.Instant) {
        world.scheduleFault(fault, at: max(instant, world.now))
    }

    /// Schedules a fault `delay` from now. A negative delay names a time already past, which
    /// is taken as for ``schedule(_:at:)``: the fault fires at once, in order with what is due
    /// now (as SwiftNIO's event loops run a task scheduled in the past). It is not refused, so
    /// that a delay computed from times that moved on (`deadline - now`) still fires.
    public func schedule(_ fault: Fault, after delay: Duration) {
        schedule(fault, at: world.now.advanced(by: max(delay, .zero)))
    }

    /// Simulates the peripheral side dropping a link (a reset, a crash, a supervision
    /// timeout): the central sees a disconnect with `error` (peripheralDisconnected by
    /// default) and its operations on the link fail with the same error.
    public func simulateDisconnection(
        central: UUID, peripheral: UUID, error: CoreBluetoothError = CoreBluetoothError(.peripheralDisconnected)
    ) {
        admitArrivals()
        applyHeldCalls()
        mutate { world in
            guard world.knows(central: central, peripheral: peripheral, in: "simulateDisconnection") else { return }
            world.tearDown(LinkKey(central: central, peripheral: peripheral), reason: error, pendingError: error)
        }
    }

    // MARK: Answers

    /// A manual peripheral answers a request: the answer crosses the link (in the connection
    /// event its request crossed in, when given in that instant), and the schedule runs until
    /// the central's operation ends or needs another answer.
    func respond(
        peripheral: UUID, to request: ATTRequest, result: ATTError.Code, value: Data?,
        call: String = "respond(to:withResult:value:)"
    ) throws {
        forgetCancelled()
        try mutate { _ = try $0.respond(peripheral: peripheral, to: request, result: result, value: value, call: call) }
    }

    /// A peripheral's handler answers a request it left for later (see
    /// `MockPeripheralManager.Configuration.deferringHandler`), as ``respond(peripheral:to:result:value:)``
    /// does for a manual peripheral's, without the log's response entry.
    func answerLater(peripheral: UUID, to request: ATTRequest, with response: RequestResponse) {
        forgetCancelled()
        mutate { $0.answerLater(peripheral: peripheral, to: request, with: response) }
    }

    // MARK: Injection and bonds

    /// Installs an injection for every manager on the bridge (optionally narrowed to one
    /// peripheral or characteristic by its own fields).
    ///
    /// It is checked as a manager's configured ``MockCentralManager/Configuration/errorInjection``
    /// is: an injection a configuration would refuse (see ``ErrorInjection``: a count below 1, a
    /// probability outside 0…1, an ATT error for an operation no ATT response answers,
    /// `neverAnswers` for a peripheral's operation) is not installed, and every manager on the
    /// bridge then refuses every call with `APIMisuseError.invalidConfiguration(_:)`, whose
    /// message begins `"MockBLEBridge.inject(_:): "` and names the problem.
    ///
    /// Like the other hooks, it comes after the calls the app has made before it: an operation an
    /// app asked for earlier (a write queued behind others, still held for the run) is not failed
    /// by it, as an injection is checked when an operation is asked for.
    public func inject(_ injection: ErrorInjection) {
        admitArrivals()
        applyHeldCalls()
        world.inject(injection, owner: nil)
    }

    /// Whether a central keeps a bond with a peripheral.
    public func isBonded(central: UUID, peripheral: UUID) -> Bool {
        world.isBonded(LinkKey(central: central, peripheral: peripheral))
    }
}
