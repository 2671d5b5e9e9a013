#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The interval a peripheral's links run at.
///
/// A link comes up at the central's interval (``LinkTiming/connectionInterval`` times its
/// establishment and MTU exchange); then the peripheral asks for the intervals it prefers and
/// the central grants one within its rules (``NegotiatedLink``). The bridge's
/// ``LinkTiming/peripheralProfile`` states every peripheral's preference; a peripheral with its
/// own (`MockPeripheralManager.Configuration.preferredConnectionIntervals`, a
/// CoreBluetoothMock-style spec's `connectionInterval`) asks for that instead, for its links
/// only. The answer depends on the timing and the peripheral's configuration alone, so it is
/// the same for every link of the peripheral and in every run.
extension World {
    /// How the links to `peripheral` are timed: what the link profiles negotiate for them
    /// (`nil` without profiles: every ATT packet is one link-layer packet), and the interval
    /// their connection events fall at (`nil`: the timing's ``LinkTiming/connectionInterval``).
    /// Both `nil` with instant timing.
    func linkTiming(toPeripheral peripheral: UUID) -> (negotiated: NegotiatedLink?, interval: Duration?) {
        guard timing.connectionInterval > .zero else { return (nil, nil) }
        guard let position = peripherals.position(of: peripheral),
            let own = peripherals[at: position].configuration.preferredConnectionIntervals
        else {
            let negotiated = timing.negotiated
            return (negotiated, negotiated?.connectionInterval)
        }
        // The peripheral profile with the peripheral's own preference; without profiles, a
        // central that grants any interval the Core specification allows.
        var asking = timing.peripheralProfile ?? .unconstrained
        asking.preferredConnectionIntervals = own
        let granted = NegotiatedLink(central: timing.centralProfile ?? .unconstrained, peripheral: asking)
        return (timing.negotiated == nil ? nil : granted, granted.connectionInterval)
    }

    /// How long a peripheral's links survive once nothing is heard from it: its own supervision
    /// timeout (a CoreBluetoothMock spec's, see `MockPeripheralManager.Configuration`), else
    /// the bridge's ``LinkTiming/supervisionTimeout``. One that is not zero and not more than
    /// twice the interval the peripheral's links run at (which its own interval preference can
    /// make longer than the bridge's) is the shortest the Core specification allows with that
    /// interval (Vol 6, Part B, 4.5.2, without peripheral latency): the next 10 ms above twice
    /// it, as ``LinkTiming`` fits a timeout to an interval found elsewhere.
    func supervisionTimeout(of peripheral: UUID) -> Duration {
        let given = max(peripherals[peripheral]?.configuration.supervisionTimeout ?? timing.supervisionTimeout, .zero)
        guard given > .zero, let interval = linkTiming(toPeripheral: peripheral).interval, given <= interval * 2 else {
            return given
        }
        return LinkTiming.shortestSupervisionTimeout(above: interval)
    }
}
