/// The world's operations in progress, by id.
typealias OperationTable = SlotTable<OperationID, PendingOperation>

extension SlotTable where Key == OperationID, Value == PendingOperation {
    /// Adds an operation (its id must not be in progress).
    mutating func insert(_ operation: PendingOperation) {
        insert(operation, for: operation.id)
    }
}
