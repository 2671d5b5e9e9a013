/// Hands out 16-bit message ids for one link direction, so that concurrent messages on
/// the link never share an id.
///
/// Ids are allocated sequentially, wrapping from 65,535 to 0, and an id stays *in use*
/// until ``release(_:)``; ``allocate()`` skips ids still in use, so no two outstanding
/// messages ever share an id, whatever the order in which they finish. Up to 65,536
/// messages may be outstanding at once; one more throws
/// ``TransportError/messageIDsExhausted(inUse:)``.
///
/// Sequential allocation also protects the receiver: an id recurs on the link only after
/// 65,536 further allocations, while ``Reassembler`` holds far fewer partial or
/// remembered messages (see ``Reassembler``). Use one allocator per link direction,
/// owned by whoever owns the link; when several tasks send on one link, share a
/// ``SharedMessageIDAllocator`` instead.
///
/// ```swift
/// var ids = MessageIDAllocator()
/// let id = try ids.allocate()
/// try Fragmenter.fragment(message, maxPacketLength: 244, id: id) { send($0) }
/// ids.release(id)
/// ```
///
/// The in-use set is a 65,536-bit bitset (8 KiB), allocated on first use.
public struct MessageIDAllocator: Sendable, Hashable {
    /// The number of distinct message ids.
    public static let idCount = 65_536

    /// The id the next ``allocate()`` tries first.
    public private(set) var nextID: UInt16

    /// How many ids are allocated and not yet released.
    public private(set) var inUseCount = 0

    private var inUse: [UInt64] = []

    /// Creates an allocator whose first id is `firstID`.
    ///
    /// - Parameter firstID: The first id to hand out. Defaults to 0.
    public init(firstID: UInt16 = 0) {
        self.nextID = firstID
    }

    /// Whether `id` is allocated and not yet released.
    public func isInUse(_ id: UInt16) -> Bool {
        guard !inUse.isEmpty else { return false }
        return inUse[Int(id) >> 6] & (1 << UInt64(id & 63)) != 0
    }

    /// Allocates the next id that is not in use.
    ///
    /// - Returns: An id no other outstanding message uses.
    /// - Throws: ``TransportError/messageIDsExhausted(inUse:)`` when all 65,536 ids are
    ///   in use.
    public mutating func allocate() throws(TransportError) -> UInt16 {
        guard inUseCount < Self.idCount else {
            throw .messageIDsExhausted(inUse: inUseCount)
        }
        if inUse.isEmpty {
            inUse = [UInt64](repeating: 0, count: Self.idCount / 64)
        }
        var candidate = nextID
        while isInUse(candidate) {
            candidate &+= 1
        }
        inUse[Int(candidate) >> 6] |= 1 << UInt64(candidate & 63)
        inUseCount += 1
        nextID = candidate &+ 1
        return candidate
    }

    /// Returns `id` to the pool once its last packet has been sent (or the message was
    /// abandoned). Releasing an id that is not in use does nothing.
    public mutating func release(_ id: UInt16) {
        guard isInUse(id) else { return }
        inUse[Int(id) >> 6] &= ~(1 << UInt64(id & 63))
        inUseCount -= 1
    }
}
