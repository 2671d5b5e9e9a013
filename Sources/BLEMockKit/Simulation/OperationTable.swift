/// The world's operations in progress, by id.
///
/// Operations come and go with every call, and the world reads them several times per packet;
/// a `Dictionary`'s getter would hand back a copy of the whole operation each time. Here ids
/// index a table of positions, and the operations sit in an array read and changed in place.
struct OperationTable: Sendable {
    /// The operations by position (`nil` for a free one). Hot paths read them here directly,
    /// at a position from ``position(of:)``.
    var entries: [PendingOperation?] = []
    private var positions: [OperationID: Int] = [:]
    private var freePositions: [Int] = []

    /// Where an operation is in ``entries``.
    func position(of id: OperationID) -> Int? { positions[id] }

    /// The operation with this id; assigning `nil` removes it.
    subscript(id: OperationID) -> PendingOperation? {
        get { positions[id].flatMap { entries[$0] } }
        _modify {
            if let position = positions[id] {
                yield &entries[position]
                if entries[position] == nil { release(position, id) }
            } else {
                var added: PendingOperation? = nil
                yield &added
                if let added { insert(added) }
            }
        }
    }

    /// Removes and returns an operation.
    @discardableResult
    mutating func removeValue(forKey id: OperationID) -> PendingOperation? {
        guard let position = positions[id], let operation = entries[position] else { return nil }
        entries[position] = nil
        release(position, id)
        return operation
    }

    /// Whether no operation is in progress.
    var isEmpty: Bool { positions.isEmpty }

    /// The operations in progress, in no particular order.
    var values: [PendingOperation] { entries.compactMap { $0 } }

    /// The ids of the operations in progress, in no particular order.
    var keys: Dictionary<OperationID, Int>.Keys { positions.keys }

    private mutating func insert(_ operation: PendingOperation) {
        let position: Int
        if let reused = freePositions.popLast() {
            position = reused
            entries[position] = operation
        } else {
            position = entries.count
            entries.append(operation)
        }
        positions[operation.id] = position
    }

    private mutating func release(_ position: Int, _ id: OperationID) {
        positions[id] = nil
        freePositions.append(position)
    }
}
