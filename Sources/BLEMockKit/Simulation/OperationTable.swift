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

    /// Runs `body` on the operation at `position`, in place. (Reading a field through
    /// ``entries``' getter copies the whole operation first, retaining everything it holds.)
    @inline(__always)
    mutating func inPlace<R>(at position: Int, _ body: (inout PendingOperation) -> R) -> R {
        body(&entries[position]!)
    }

    /// Whether an operation with this id is in progress.
    func contains(_ id: OperationID) -> Bool { positions[id] != nil }

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

    /// Removes an operation without handing it back.
    mutating func remove(_ id: OperationID) {
        guard let position = positions[id] else { return }
        entries[position] = nil
        release(position, id)
    }

    /// Whether no operation is in progress.
    var isEmpty: Bool { positions.isEmpty }

    /// The operations in progress, in no particular order.
    var values: [PendingOperation] { entries.compactMap { $0 } }

    /// The ids of the operations in progress, in no particular order.
    var keys: Dictionary<OperationID, Int>.Keys { positions.keys }

    /// Adds an operation (its id must not be in progress).
    mutating func insert(_ operation: PendingOperation) {
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
