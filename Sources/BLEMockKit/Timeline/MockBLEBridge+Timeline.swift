extension MockBLEBridge {
    /// The bridge's log so far as a ``TimelinePage``: a lane per central and peripheral
    /// manager created on it (peripherals named by their configured or advertised name,
    /// centrals by their restore identifier), with the bridge's seed and mode. Write its
    /// ``TimelinePage/html`` to a file when a test fails, and look.
    ///
    /// - Parameter title: What to call the run, e.g. the test's name.
    public func timelinePage(title: String) -> TimelinePage {
        var participants: [TimelinePage.Participant] = []
        for central in world.centrals.entries.compactMap({ $0 }) {
            participants.append(
                TimelinePage.Participant(
                    central.identifier, role: .central, name: central.configuration.restoreIdentifier))
        }
        for peripheral in world.peripherals.entries.compactMap({ $0 }) {
            participants.append(
                TimelinePage.Participant(peripheral.identifier, role: .peripheral, name: peripheral.name))
        }
        return TimelinePage(
            title: title, mode: modeName, seed: configuration.seed,
            participants: participants, log: world.log)
    }
}

extension MockBLEBridge {
    /// `fast`, `realistic`, or `custom timing` for a bridge with timing of its own.
    nonisolated var modeName: String {
        if configuration.timing.isInstant { return "fast" }
        return configuration.timing == .realistic ? "realistic" : "custom timing"
    }
}
