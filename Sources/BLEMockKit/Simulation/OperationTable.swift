/// The world's operations in progress, by id.
typealias OperationTable = SlotTable<OperationID, PendingOperation>

extension SlotTable where Key == OperationID, Value == PendingOperation {
    /// Adds an operation (its id must not be in progress).
    mutating func insert(_ operation: consuming PendingOperation) {
        let id = operation.id
        insert(consume operation, for: id)
    }
}
