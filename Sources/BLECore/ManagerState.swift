/// The state of a central or peripheral manager, with `CBManagerState`'s raw values.
///
/// Operations that use the radio need ``poweredOn``. ``unauthorized`` and ``unsupported``
/// are terminal for the app: a manager in either state never reaches ``poweredOn``
/// without outside change (the user granting permission, other hardware).
public enum ManagerState: Int, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The state is not yet known; a new manager starts here.
    case unknown = 0
    /// The connection with the system service was momentarily lost; an update follows.
    case resetting = 1
    /// The platform does not support Bluetooth Low Energy.
    case unsupported = 2
    /// The app is not authorized to use Bluetooth Low Energy.
    case unauthorized = 3
    /// Bluetooth is turned off.
    case poweredOff = 4
    /// Bluetooth is on and available.
    case poweredOn = 5

    /// The case name, e.g. `"poweredOn"`.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .resetting: "resetting"
        case .unsupported: "unsupported"
        case .unauthorized: "unauthorized"
        case .poweredOff: "poweredOff"
        case .poweredOn: "poweredOn"
        }
    }

    /// Creates a state from its case name (`"poweredOn"`), as used by fixtures and scenarios.
    public init?(name: String) {
        guard let state = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = state
    }

    /// Whether a manager in this state can never reach ``poweredOn`` by itself.
    public var isTerminal: Bool { self == .unsupported || self == .unauthorized }
}
