/// Reassembles messages produced by ``Fragmenter``, per link and per message id.
///
/// `Link` identifies where packets come from (a peripheral or central identifier, a
/// connection handle); `Instant` is the time source's instant, passed in with every
/// packet, so `ContinuousClock.Instant` and a virtual clock's instant both work and
/// expiry is deterministic under test. Nothing here reads a wall clock.
///
/// ```swift
/// var reassembler = Reassembler<UUID, ContinuousClock.Instant>()
/// if let message = try reassembler.receive(packet, from: peer, at: .now) {
///     handle(message)
/// }
/// ```
///
/// ## Behaviour
///
/// - Packets of one message may arrive in any order, including packet 0 last; packets
///   of different messages and links may interleave freely.
/// - An identical duplicate of a packet already received is ignored.
/// - Every malformed, truncated, inconsistent, oversized or corrupted packet throws a
///   ``TransportError``; nothing traps. A packet shorter than the header, or one that
///   would start a partial message beyond ``TransportConfiguration/maximumPartialMessages``,
///   is rejected without affecting any message. Any other error drops its whole message.
/// - When a message completes, fails or expires, its link and id are remembered for
///   ``TransportConfiguration/partialMessageTimeout`` (at most
///   ``TransportConfiguration/maximumRememberedMessages`` of them): its later packets,
///   such as duplicates or the rest of a failed message, are **ignored** (`receive`
///   returns `nil`) rather than starting a new partial message.
/// - A partial message that receives no packet for
///   ``TransportConfiguration/partialMessageTimeout`` is dropped, either during a later
///   `receive` or by ``expire(now:)``, which reports what it dropped.
///
/// ## Why 16-bit ids are safe
///
/// Each link direction has one sender-side ``MessageIDAllocator``, which hands out ids
/// sequentially, so an id recurs only after 65,536 further messages on that link. The
/// reassembler holds at most ``TransportConfiguration/maximumPartialMessages`` partial
/// messages (16 by default) and remembers at most 32,768 finished ids, both far below
/// 2¹⁶, so a recurring id can only meet stale state if tens of thousands of messages
/// on the link were lost in between, and even then the CRC-32C check rejects a mix.
/// A new sender on the link (a new channel after a reconnect) starts its ids from the first
/// again: when the link's session ends, the owner calls ``forgetRemembered(for:)`` so that its
/// first messages are not taken for late packets of the old session's (the message channels
/// do so when their link goes down, and a peripheral's when a central subscribes or
/// unsubscribes).
///
/// The reassembler is a value type: the owner of the links owns it and serializes access
/// (for example inside an actor).
public struct Reassembler<Link: Hashable & Sendable, Instant: InstantProtocol>: Sendable
where Instant.Duration == Swift.Duration {
    /// The limits this reassembler enforces.
    public typealias Configuration = TransportConfiguration

    /// Identifies one message: the link it arrives on and its id.
    @usableFromInline
    struct Key: Hashable, Sendable {
        @usableFromInline var link: Link
        @usableFromInline var id: UInt16

        @usableFromInline
        init(link: Link, id: UInt16) {
            self.link = link
            self.id = id
        }
    }

    /// One partial message and its bookkeeping.
    @usableFromInline
    struct Slot: Sendable {
        @usableFromInline var key: Key
        @usableFromInline var lastActivity: Instant
        @usableFromInline var message: PartialMessage

        @usableFromInline
        init(key: Key, lastActivity: Instant, message: PartialMessage) {
            self.key = key
            self.lastActivity = lastActivity
            self.message = message
        }
    }

    /// The limits this reassembler enforces.
    public let configuration: Configuration

    /// Partial messages, compact; `index` maps each key to its position.
    @usableFromInline var slots: [Slot] = []
    @usableFromInline var index: [Key: Int] = [:]
    /// The key of the last packet's message and its position in `slots` (packets of one
    /// message usually arrive back to back, so this spares hashing the key per packet);
    /// cleared whenever a slot moves or goes.
    @usableFromInline var lastKey: Key?
    @usableFromInline var lastPosition = 0
    /// No partial message expires before this instant (a lower bound).
    @usableFromInline var earliestDeadline: Instant?
    /// Recently finished messages: key → (expiry, serial).
    var remembered: [Key: Remembered] = [:]
    /// `remembered` keys oldest first, from `rememberedHead`.
    var rememberedOrder: [(key: Key, serial: Int)] = []
    var rememberedHead = 0
    var rememberedSerial = 0

    /// Creates a reassembler with the default ``TransportConfiguration``.
    public init() {
        self.init(configuration: Configuration())
    }

    /// Creates a reassembler with the given limits.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The number of partial messages currently held, across all links.
    public var partialMessageCount: Int { slots.count }

    /// Receives one packet from `link` at `now`.
    ///
    /// - Parameters:
    ///   - packet: One packet exactly as ``Fragmenter`` produced it.
    ///   - link: The link the packet arrived on.
    ///   - now: The current instant of the time source that drives expiry.
    /// - Returns: The complete message when this packet completes one whose CRC-32C
    ///   matches; otherwise `nil`.
    /// - Throws: A ``TransportError`` describing why the packet was rejected.
    ///
    /// Inlinable so that the per-packet path is specialized for the caller's `Link`
    /// and `Instant`; the copying and checking happen in the non-generic
    /// `PartialMessage`.
    @inlinable
    public mutating func receive(
        _ packet: UnsafeRawBufferPointer, from link: Link, at now: Instant
    ) throws(TransportError) -> [UInt8]? {
        guard packet.count >= Fragmenter.headerLength else {
            throw .packetShorterThanHeader(length: packet.count, headerLength: Fragmenter.headerLength)
        }
        let id = UInt16(bigEndian: packet.loadUnaligned(fromByteOffset: 0, as: UInt16.self))
        let sequence = UInt16(bigEndian: packet.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        if let deadline = earliestDeadline, deadline <= now {
            _ = expire(now: now)
        }
        let key = Key(link: link, id: id)
        let position: Int
        if let lastKey, lastKey == key {
            position = lastPosition
        } else if let existing = index[key] {
            position = existing
            lastKey = key
            lastPosition = existing
        } else {
            if isRemembered(key, at: now) { return nil }
            guard slots.count < configuration.effectiveMaximumPartialMessages else {
                throw .tooManyPartialMessages(limit: configuration.effectiveMaximumPartialMessages)
            }
            position = slots.count
            slots.append(Slot(key: key, lastActivity: now, message: PartialMessage(id: id)))
            index[key] = position
            lastKey = key
            lastPosition = position
            let deadline = now.advanced(by: configuration.effectivePartialMessageTimeout)
            if earliestDeadline.map({ deadline < $0 }) ?? true { earliestDeadline = deadline }
        }
        slots[position].lastActivity = now
        do {
            let message = try slots[position].message.accept(
                sequence: sequence,
                payload: UnsafeRawBufferPointer(rebasing: packet[Fragmenter.headerLength...]),
                maximumMessageLength: configuration.effectiveMaximumMessageLength)
            guard let message else { return nil }
            finish(at: position, now: now)
            return message
        } catch {
            finish(at: position, now: now)
            throw error
        }
    }

    /// Drops every partial message of `link`, for example when it disconnects, and
    /// returns how many were dropped. Their ids are not remembered.
    @discardableResult
    public mutating func discardPartialMessages(for link: Link) -> Int {
        var dropped = 0
        var position = slots.count - 1
        while position >= 0 {
            if slots[position].key.link == link {
                remove(at: position)
                dropped += 1
            }
            position -= 1
        }
        return dropped
    }

    /// Removes the partial message at `position` and remembers its key.
    @usableFromInline
    mutating func finish(at position: Int, now: Instant) {
        let key = slots[position].key
        remove(at: position)
        remember(key, at: now)
    }

    /// Removes the partial message at `position`, moving the last one into its place.
    mutating func remove(at position: Int) {
        lastKey = nil
        index[slots[position].key] = nil
        let last = slots.count - 1
        if position != last {
            slots.swapAt(position, last)
            index[slots[position].key] = position
        }
        slots.removeLast()
        if slots.isEmpty { earliestDeadline = nil }
    }
}
