import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The ATT transaction timeout (Core, Vol 3, Part F, 3.3.3): a request whose response has not
/// arrived within ``LinkTiming/attTransactionTimeout`` (30 s) ends its transaction, and no
/// further request may be sent on that bearer; the central's stack then drops the link.
///
/// What iOS reports: the unanswered operation gets no answer of its own, and the central's
/// disconnect callback comes 30 s after the request with no error (react-native-ble-plx
/// issue 566, iOS 12.1.4: `discoverServices` unanswered, `didDisconnect … error: nil`
/// 30.001 s later). The kit's async calls cannot stay unanswered: the timed-out operation
/// and every other one on the link fail with `CoreBluetoothError.Code.connectionTimeout`,
/// whose reason names the timeout; the disconnect event carries no error, as on iOS. The
/// peripheral sees its central's subscriptions end, as for any lost link.
///
/// Each link has one timer, armed when a request is sent with none on the schedule, re-armed
/// when it fires for the request outstanding then, and taken off the schedule when the bearer
/// falls idle: requests answered in time, one after another, cost no schedule entry each, and
/// an idle link leaves nothing on the schedule (time run "until nothing is left" does not
/// jump 30 s ahead for it).
extension World {
    /// A request is sent on the link's ATT bearer: its transaction starts now.
    ///
    /// With packets crossing at once (a zero connection interval: fast mode), a request is
    /// answered within the call that sent it unless it parks (a peripheral's app or handler
    /// is asked, or an injection swallows it): the timer is armed there, by
    /// ``armTransactionTimer(on:)``, so a request answered at once costs no schedule entry.
    mutating func startTransaction(on key: LinkKey) {
        guard let slot = links.position(of: key) else { return }
        links.entries[slot]!.requestSentAt = now
        guard timing.connectionInterval > .zero else { return }
        armTransactionTimer(at: slot)
    }

    /// The request outstanding on the link waits for something outside the stack (a
    /// peripheral's app or handler, or nothing at all): its transaction's timer must run.
    mutating func armTransactionTimer(on key: LinkKey) {
        guard let slot = links.position(of: key) else { return }
        armTransactionTimer(at: slot)
    }

    /// Puts the link's timer on the schedule, for the request outstanding, unless it is there.
    private mutating func armTransactionTimer(at slot: Int) {
        guard !links[at: slot].transactionTimerArmed, let sentAt = links[at: slot].requestSentAt else { return }
        links.entries[slot]!.transactionTimerArmed = true
        schedule.schedule(
            .transactionTimer(links[at: slot].key, generation: links[at: slot].generation),
            at: sentAt.advanced(by: timing.attTransactionTimeout))
    }

    /// No request is outstanding on the link in `slot` any more, nor waiting: its timer goes.
    mutating func stopTransactionTimer(at slot: Int) {
        links.entries[slot]!.requestSentAt = nil
        guard links[at: slot].transactionTimerArmed else { return }
        links.entries[slot]!.transactionTimerArmed = false
        let timer = ScheduledEvent.transactionTimer(links[at: slot].key, generation: links[at: slot].generation)
        schedule.removeFirst { $0 == timer }
    }

    /// The link's transaction timer fired: the request outstanding, if it was sent a timeout
    /// ago, timed out; one sent later gets the timer again, for its own deadline.
    mutating func transactionTimerFired(_ key: LinkKey, generation: Int) {
        guard let slot = links.position(of: key), links[at: slot].generation == generation else { return }
        links.entries[slot]!.transactionTimerArmed = false
        guard let sentAt = links[at: slot].requestSentAt, let holder = links[at: slot].bearer,
            pending.contains(holder)
        else {
            links.entries[slot]!.requestSentAt = nil
            return
        }
        let deadline = sentAt.advanced(by: timing.attTransactionTimeout)
        guard now >= deadline else {
            links.entries[slot]!.transactionTimerArmed = true
            schedule.schedule(.transactionTimer(key, generation: generation), at: deadline)
            return
        }
        transactionTimedOut(holder, on: key)
    }

    /// How the log's refusal of a request whose transaction timed out begins its detail (a stall
    /// report finds the disconnection it caused by it: see ``stallHints()``).
    static let transactionTimeoutDetail = "ATT transaction timeout after "

    /// The transaction of `id`'s request timed out: the link goes, failing everything on it.
    private mutating func transactionTimedOut(_ id: OperationID, on key: LinkKey) {
        let timeout = FixtureDuration.string(timing.attTransactionTimeout)
        let operation = pending[id]
        let summary = operation?.summary ?? "request"
        if let operation, case .awaitingAnswer(let request) = operation.stage,
            let characteristic = operation.procedure?.characteristic
        {
            // The peripheral's app never answered: `finish()` still reports it.
            timedOutRequests.append(
                .unansweredRequest(
                    id: request, peripheral: key.peripheral, characteristic: characteristic.uuid,
                    offset: operation.procedure?.requestOffset ?? 0))
        }
        let error = CoreBluetoothError(
            .connectionTimeout,
            reason: "ATT transaction timeout: \(summary) had no response within \(timeout) "
                + "(Core Vol 3, Part F, 3.3.3); the link was dropped")
        record(
            .refused, central: key.central, peripheral: key.peripheral,
            attribute: operation?.procedure?.characteristic?.uuid,
            handle: operation?.procedure?.characteristic?.handle, error: error,
            detail: Self.transactionTimeoutDetail + "\(timeout): \(summary)")
        tearDown(key, reason: nil, pendingError: error)
    }
}
