/// How a central writes a characteristic value, with `CBCharacteristicWriteType`'s raw values.
public enum WriteType: Int, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// A Write Request: the peripheral confirms (or rejects with an ATT error). Values longer
    /// than ATT_MTU − 3 are sent by the stack as a long write (Prepare Write + Execute Write),
    /// up to 512 bytes.
    case withResponse = 0
    /// A Write Command: no confirmation, at most ATT_MTU − 3 bytes, subject to the
    /// central's transmit queue (`canSendWriteWithoutResponse`).
    case withoutResponse = 1

    /// The case name, e.g. `"withResponse"`.
    public var description: String {
        switch self {
        case .withResponse: "withResponse"
        case .withoutResponse: "withoutResponse"
        }
    }
}
