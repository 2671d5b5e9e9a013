extension Reassembler {
    /// A partial message that ``Reassembler/expire(now:)`` dropped.
    public struct ExpiredMessage: Sendable, Hashable {
        /// The link the message arrived on.
        public var link: Link
        /// The message id.
        public var messageID: UInt16
        /// Distinct packets received before it expired.
        public var receivedPackets: Int
        /// The packet count declared by packet 0, or `nil` if packet 0 never arrived.
        public var packetCount: Int?
        /// The instant of its last packet.
        public var lastActivity: Instant

        /// Creates a description of an expired message.
        public init(link: Link, messageID: UInt16, receivedPackets: Int, packetCount: Int?, lastActivity: Instant) {
            self.link = link
            self.messageID = messageID
            self.receivedPackets = receivedPackets
            self.packetCount = packetCount
            self.lastActivity = lastActivity
        }
    }

    /// An entry for a recently finished message.
    struct Remembered: Sendable {
        var expiry: Instant
        var serial: Int
    }

    /// Drops every partial message that has received no packet for
    /// ``TransportConfiguration/partialMessageTimeout`` as of `now`, and forgets
    /// remembered ids that are as old.
    ///
    /// `receive` does this too whenever a deadline has passed; call it from a timer to
    /// reclaim memory on idle links.
    ///
    /// - Parameter now: The current instant of the time source that drives expiry.
    /// - Returns: The dropped messages, in no particular order.
    @discardableResult
    public mutating func expire(now: Instant) -> [ExpiredMessage] {
        var expired: [ExpiredMessage] = []
        let timeout = configuration.effectivePartialMessageTimeout
        var earliest: Instant?
        var position = slots.count - 1
        while position >= 0 {
            let slot = slots[position]
            let deadline = slot.lastActivity.advanced(by: timeout)
            if deadline <= now {
                expired.append(
                    ExpiredMessage(
                        link: slot.key.link, messageID: slot.key.id,
                        receivedPackets: slot.message.distinctPacketsReceived,
                        packetCount: slot.message.isLaidOut ? slot.message.packetCount : nil,
                        lastActivity: slot.lastActivity))
                remove(at: position)
                remember(slot.key, at: now)
            } else if earliest.map({ deadline < $0 }) ?? true {
                earliest = deadline
            }
            position -= 1
        }
        earliestDeadline = earliest
        forgetRemembered(before: now)
        return expired
    }

    /// Whether `key` belongs to a recently finished message; forgets it once expired.
    @usableFromInline
    mutating func isRemembered(_ key: Key, at now: Instant) -> Bool {
        guard let entry = remembered[key] else { return false }
        if entry.expiry <= now {
            remembered[key] = nil
            return false
        }
        return true
    }

    /// Remembers `key` as finished, forgetting the oldest entries beyond the limit.
    mutating func remember(_ key: Key, at now: Instant) {
        let limit = configuration.effectiveMaximumRememberedMessages
        guard limit > 0 else { return }
        // Entries that expired (or that `isRemembered` already forgot) leave the order too:
        // a peer reusing a few ids, each after its last one expired, would otherwise grow it
        // by one entry a message for ever.
        forgetRemembered(before: now)
        rememberedSerial += 1
        remembered[key] = Remembered(
            expiry: now.advanced(by: configuration.effectivePartialMessageTimeout), serial: rememberedSerial)
        rememberedOrder.append((key, rememberedSerial))
        while remembered.count > limit {
            popOldestRemembered()
        }
        compactRememberedOrder()
    }

    /// Forgets remembered entries from the oldest on while they have expired.
    private mutating func forgetRemembered(before now: Instant) {
        while rememberedHead < rememberedOrder.count {
            let oldest = rememberedOrder[rememberedHead]
            if let entry = remembered[oldest.key], entry.serial == oldest.serial, now < entry.expiry {
                break
            }
            popOldestRemembered()
        }
        compactRememberedOrder()
    }

    /// Removes the oldest entry of `rememberedOrder`, and its `remembered` entry unless
    /// the key was remembered again since.
    private mutating func popOldestRemembered() {
        let oldest = rememberedOrder[rememberedHead]
        rememberedHead += 1
        if remembered[oldest.key]?.serial == oldest.serial {
            remembered[oldest.key] = nil
        }
    }

    /// Drops consumed entries from the front of `rememberedOrder` once they dominate it.
    private mutating func compactRememberedOrder() {
        if rememberedHead == rememberedOrder.count {
            rememberedOrder.removeAll(keepingCapacity: true)
            rememberedHead = 0
        } else if rememberedHead >= 64, rememberedHead * 2 >= rememberedOrder.count {
            rememberedOrder.removeFirst(rememberedHead)
            rememberedHead = 0
        }
    }

    /// Forgets the remembered ids of `link`: its next messages start afresh whatever ids
    /// they reuse. For a link that went down, or a peer that started a new session on it (a
    /// new sender's ids start again from the first), when no late packet of an old message
    /// can arrive any more.
    public mutating func forgetRemembered(for link: Link) {
        guard !remembered.isEmpty else { return }
        remembered = remembered.filter { $0.key.link != link }
        if remembered.isEmpty {
            rememberedOrder.removeAll(keepingCapacity: true)
            rememberedHead = 0
        }
    }
}
