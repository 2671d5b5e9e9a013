#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Values by manager identifier, in the order they were added.
///
/// The world looks its managers up many times per packet. A `Dictionary` keyed by `UUID`
/// hashes all sixteen bytes through `Hasher` and hands back a copy of the record for every
/// read; here the identifier's two words index a table of positions, and the records sit in
/// an array that is read and changed in place.
struct IdentifierMap<Value: Sendable>: Sendable {
    private var positions: [IdentifierKey: Int] = [:]
    /// The values by position. Hot paths read and change them here directly, at a position
    /// from ``position(of:)``: a stored array element is accessed in place, where the
    /// subscript's getter hands back a copy of the whole value.
    var entries: [Value?] = []

    /// Where an identifier's value is in ``entries``.
    func position(of identifier: UUID) -> Int? { positions[IdentifierKey(identifier)] }

    /// Whether a value is stored for an identifier. (Comparing the subscript with `nil` would
    /// copy the whole record first.)
    func contains(_ identifier: UUID) -> Bool { positions[IdentifierKey(identifier)] != nil }

    /// Runs `body` on the value at `position`, in place. Hot paths read several fields of a
    /// record this way: reading them through the array's getter (or binding the record)
    /// copies the whole record, retaining everything it holds, wherever the optimizer cannot
    /// tell that only a field is read.
    @inline(__always)
    mutating func inPlace<R>(at position: Int, _ body: (inout Value) -> R) -> R {
        body(&entries[position]!)
    }

    /// Runs `body` on the value for an identifier, in place; `nil` when there is none. (What
    /// a caller reading a few fields of a record uses: the subscript's getter copies all of it.)
    @inline(__always)
    mutating func inPlace<R>(_ identifier: UUID, _ body: (inout Value) -> R) -> R? {
        guard let position = positions[IdentifierKey(identifier)] else { return nil }
        return body(&entries[position]!)
    }

    /// The value at `position`, for reading; `position` must hold one (a position from
    /// ``position(of:)`` in a map whose values are never set to `nil`; checked in debug
    /// builds). Read through `entries[position]!`, each field costs an out-of-line test of the
    /// optional, and calling a method of a field copies the whole record first; read through
    /// this, neither happens.
    @inline(__always)
    subscript(at position: Int) -> Value { entries[position].unsafelyUnwrapped }

    /// The value for an identifier, for reading; the identifier must have one (an unknown
    /// identifier traps, as `map[identifier]!` does). Read through it, a field of the record,
    /// or a method of a field, is reached without copying the whole record, as the
    /// subscript's getter does (see ``subscript(at:)``). Only for maps whose values are never
    /// set to `nil` (the world's centrals and peripherals): a value set to `nil` keeps its
    /// position, and this would read it unchecked in release builds.
    @inline(__always)
    subscript(existing identifier: UUID) -> Value {
        entries[positions[IdentifierKey(identifier)]!].unsafelyUnwrapped
    }

    /// The value for an identifier; assigning a new identifier adds it at the end.
    subscript(identifier: UUID) -> Value? {
        get {
            guard let position = positions[IdentifierKey(identifier)] else { return nil }
            return entries[position]
        }
        @inline(__always) _modify {
            // One `yield`, with a provisional slot at the end for a new identifier (given back
            // if the access leaves it empty): a coroutine with one yield is inlined into its
            // caller, where one with two, or holding a `Value?` of its own across its yield,
            // is called with its frame allocated on the heap (2.7 KB for a world's central, on
            // every access).
            let key = IdentifierKey(identifier)
            let existing = positions[key]
            let position = existing ?? entries.count
            if existing == nil { entries.append(nil) }
            yield &entries[position]
            if existing == nil {
                if case .none = entries[position] {
                    entries.removeLast()
                } else {
                    positions[key] = position
                }
            }
        }
    }

    /// Whether nothing was added.
    var isEmpty: Bool { positions.isEmpty }

    /// The values, in the order they were added.
    var values: [Value] { entries.compactMap { $0 } }
}

/// A set of manager identifiers, hashed as ``IdentifierKey``s: the world asks whether it
/// knows a peripheral, or reported it in a scan, on every advertisement and connection, and a
/// `Set<UUID>` hashes all sixteen bytes through `Hasher` each time.
struct IdentifierSet: Sendable {
    private var keys: Set<IdentifierKey>

    /// An empty set, with room for `minimumCapacity` identifiers before it grows.
    init(minimumCapacity: Int = 0) {
        keys = Set(minimumCapacity: minimumCapacity)
    }

    /// Whether the set is empty.
    var isEmpty: Bool { keys.isEmpty }

    /// Whether the set holds `identifier`.
    func contains(_ identifier: UUID) -> Bool { keys.contains(IdentifierKey(identifier)) }

    /// Adds `identifier`; returns whether it was not there yet.
    @discardableResult
    mutating func insert(_ identifier: UUID) -> Bool { keys.insert(IdentifierKey(identifier)).inserted }

    /// Removes `identifier`; returns whether it was there.
    @discardableResult
    mutating func remove(_ identifier: UUID) -> Bool { keys.remove(IdentifierKey(identifier)) != nil }
}

/// A `UUID` as a dictionary key: two words compared and hashed directly. The kit's
/// identifiers are random bytes (derived from the seed), so a multiplicative mix of the words
/// spreads them as well as a full `Hasher` pass, in a few instructions.
struct IdentifierKey: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(_ identifier: UUID) {
        (high, low) = identifier.words
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(high)
        hasher.combine(low)
    }

    func _rawHashValue(seed: Int) -> Int {
        Int(
            truncatingIfNeeded: (high &* 0x9E37_79B9_7F4A_7C15 ^ low ^ UInt64(UInt(bitPattern: seed)))
                &* 0xBF58_476D_1CE4_E5B9)
    }
}
