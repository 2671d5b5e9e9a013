/// Values by key, in slots that keep their place while the value lives.
///
/// The world reads its links and operations many times per packet. A `Dictionary`'s getter
/// would hand back a copy of the whole value each time; here a key finds a slot (one hash
/// lookup), and the values sit in an array that hot paths read and change in place, at a
/// slot from ``position(of:)``. A freed slot is reused by the next value added.
struct SlotTable<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The values by slot (`nil` for a free slot).
    var entries: [Value?] = []
    private var positions: [Key: Int] = [:]
    private var freePositions: [Int] = []

    /// The slot of the value for `key`, if any.
    func position(of key: Key) -> Int? { positions[key] }

    /// Whether a value is stored for `key`. (Comparing the subscript with `nil` copies the
    /// whole value first: the array's getter hands out a copy.)
    func contains(_ key: Key) -> Bool { positions[key] != nil }

    /// Runs `body` on the value in slot `position`, in place. (Reading a field through
    /// ``entries``' getter copies the whole value first, retaining everything it holds.)
    @inline(__always)
    mutating func inPlace<R>(at position: Int, _ body: (inout Value) -> R) -> R {
        body(&entries[position]!)
    }

    /// The value at `position`, for reading; `position` must hold one (a position from
    /// ``position(of:)``; checked in debug builds). Read through `entries[position]!`, each
    /// field costs an out-of-line test of the optional, and calling a method of a field
    /// copies the whole record first; read through this, neither happens.
    @inline(__always)
    subscript(at position: Int) -> Value { entries[position].unsafelyUnwrapped }

    /// The value for `key`, for reading; `key` must have one (a missing key traps, as
    /// `table[key]!` does). Read through it, a field of the value, or a method of a field, is
    /// reached without copying the whole value, as the subscript's getter does (see
    /// ``subscript(at:)``). A key's slot always holds a value: removing a value frees its slot.
    @inline(__always)
    subscript(existing key: Key) -> Value { entries[positions[key]!].unsafelyUnwrapped }

    /// The value for `key`; assigning `nil` removes it, assigning to a new key adds it.
    subscript(key: Key) -> Value? {
        @inline(__always) _read {
            if let position = positions[key] {
                yield entries[position]
            } else {
                yield nil
            }
        }
        @inline(__always) _modify {
            // One `yield`, with a provisional slot for a new key (given back if the access
            // leaves it empty), so that the accessor is inlined into its caller rather than
            // called with its frame on the heap (see `IdentifierMap`'s subscript).
            let existing = positions[key]
            let position: Int
            if let existing {
                position = existing
            } else if let reused = freePositions.popLast() {
                position = reused
            } else {
                position = entries.count
                entries.append(nil)
            }
            yield &entries[position]
            if entries[position] == nil {
                if existing == nil {
                    freePositions.append(position)
                } else {
                    release(position, key)
                }
            } else if existing == nil {
                positions[key] = position
            }
        }
    }

    /// Adds a value for a key that has none.
    mutating func insert(_ value: consuming Value, for key: Key) {
        let position: Int
        if let reused = freePositions.popLast() {
            position = reused
            entries[position] = consume value
        } else {
            position = entries.count
            entries.append(consume value)
        }
        positions[key] = position
    }

    /// Removes and returns the value for `key`.
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let position = positions[key] else { return nil }
        let value = entries[position].take()
        release(position, key)
        return value
    }

    /// Removes the value for `key` without handing it back.
    mutating func remove(_ key: Key) {
        guard let position = positions[key] else { return }
        _ = entries[position].take()
        release(position, key)
    }

    /// Whether nothing is stored.
    var isEmpty: Bool { positions.isEmpty }

    /// The stored values, in no particular order.
    var values: [Value] { entries.compactMap { $0 } }

    /// The keys of the values `matching`, in ascending order. Each value is read in its slot,
    /// where ``values`` copies every value (retaining all it holds) into a new array.
    func keys(where matching: (Value) -> Bool) -> [Key] where Key: Comparable {
        var found: [Key] = []
        for (key, position) in positions where matching(entries[position].unsafelyUnwrapped) {
            found.append(key)
        }
        found.sort()
        return found
    }

    /// Whether a stored value is `matching`, read in its slot (see ``keys(where:)``).
    func containsValue(where matching: (Value) -> Bool) -> Bool {
        positions.values.contains { matching(entries[$0].unsafelyUnwrapped) }
    }

    /// The keys of the stored values, in no particular order.
    var keys: Dictionary<Key, Int>.Keys { positions.keys }

    private mutating func release(_ position: Int, _ key: Key) {
        positions[key] = nil
        freePositions.append(position)
    }
}
