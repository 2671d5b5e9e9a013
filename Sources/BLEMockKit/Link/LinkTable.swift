/// The world's links, in slots that keep their place while the link lives.
///
/// A link is found by its key (a hash lookup, for calls that name a central and a
/// peripheral) or by its slot (an array index, for the scheduled connection events and the
/// packets crossing them, which run far more often).
struct LinkTable: Sendable {
    /// The links by slot (`nil` for a free slot). Hot paths read and change links here
    /// directly: a stored array element is accessed in place, where an accessor would copy it.
    var slots: [Link?] = []
    private var byKey: [LinkKey: Int] = [:]
    private var freeSlots: [Int] = []

    /// The link between these two, if any.
    subscript(key: LinkKey) -> Link? {
        @inline(__always) _read {
            if let slot = byKey[key] {
                yield slots[slot]
            } else {
                yield nil
            }
        }
        @inline(__always) _modify {
            if let slot = byKey[key] {
                yield &slots[slot]
                if slots[slot] == nil { release(slot, key) }
            } else {
                var added: Link? = nil
                yield &added
                if let added { insert(added, for: key) }
            }
        }
    }

    /// The slot of the link between these two, if any.
    func slot(of key: LinkKey) -> Int? { byKey[key] }

    /// Whether a slot holds a link of this generation (a scheduled event may name a link
    /// that has gone).
    func contains(slot: Int, generation: Int) -> Bool {
        slot < slots.count && slots[slot]?.generation == generation
    }

    /// Whether a slot holds a link.
    func contains(slot: Int) -> Bool { slot < slots.count && slots[slot] != nil }

    /// The keys of every link.
    var keys: Dictionary<LinkKey, Int>.Keys { byKey.keys }

    /// Removes and returns the link between these two.
    mutating func removeValue(forKey key: LinkKey) -> Link? {
        guard let slot = byKey[key], let link = slots[slot] else { return nil }
        slots[slot] = nil
        release(slot, key)
        return link
    }

    private mutating func insert(_ link: Link, for key: LinkKey) {
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[slot] = link
        } else {
            slot = slots.count
            slots.append(link)
        }
        byKey[key] = slot
    }

    private mutating func release(_ slot: Int, _ key: LinkKey) {
        byKey[key] = nil
        freeSlots.append(slot)
    }
}
