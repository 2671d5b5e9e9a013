/// The world's links by their pair of managers. A link keeps its slot while it lives: the
/// scheduled connection events and the packets crossing them find it by slot, an array index,
/// and calls that name a central and a peripheral by key.
typealias LinkTable = SlotTable<LinkKey, Link>

extension SlotTable where Value == Link {
    /// Whether a slot holds a link of this generation (a scheduled event may name a link
    /// that has gone).
    /// (Read through the buffer: the array's getter would copy the whole link.)
    func contains(slot: Int, generation: Int) -> Bool {
        slot < entries.count && entries.withUnsafeBufferPointer { $0[slot]?.generation == generation }
    }

    /// Whether a slot holds a link.
    func contains(slot: Int) -> Bool {
        slot < entries.count && entries.withUnsafeBufferPointer { $0[slot] != nil }
    }
}
