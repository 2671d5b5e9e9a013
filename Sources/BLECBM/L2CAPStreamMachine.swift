import Foundation

/// What an L2CAP stream's state machine (``L2CAPInputMachine``, ``L2CAPOutputMachine``) offers
/// the object that delivers its events (``L2CAPStreamCore``).
///
/// The machines are plain values: the simulation's news (`Item`) and the app's calls change them,
/// and they say which stream event is due next. Events are level-based, as CFStream's: an event
/// is due while its condition holds and it has not been delivered since the app last acted on
/// it (`.hasBytesAvailable` again after a read, `.hasSpaceAvailable` again after a write).
protocol L2CAPStreamMachine: Sendable {
    /// What the simulation reports to the stream.
    associatedtype Item: Sendable

    /// The stream's status.
    var status: Stream.Status { get }
    /// Takes in what the simulation reported.
    mutating func apply(_ item: Item)
    /// The app opened the stream.
    mutating func open()
    /// The app closed the stream: no events after this.
    mutating func close()
    /// The event to deliver next, if any but those in `excluding` (delivered already in this
    /// pass).
    func dueEvent(excluding: Stream.Event) -> Stream.Event?
    /// Notes that `event` was delivered.
    mutating func delivered(_ event: Stream.Event)
}

extension Stream.Status {
    /// Whether the app has opened the stream and not closed it (events may be due).
    var isOpened: Bool {
        switch self {
        case .notOpen, .closed: false
        default: true
        }
    }
}
