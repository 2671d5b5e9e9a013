#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TimelinePage {
    /// The timeline's lanes: the listed participants, then every other manager the log
    /// names, centrals before peripherals.
    struct Lanes {
        /// The lanes, left to right.
        private(set) var all: [Participant] = []
        private var positions: [UUID: Int] = [:]

        init(participants: [Participant], log: [BridgeLogEntry]) {
            var found = participants
            var seen = Set(participants.map(\.identifier))
            for entry in log {
                if let central = entry.central, seen.insert(central).inserted {
                    found.append(Participant(central, role: .central))
                }
                if let peripheral = entry.peripheral, seen.insert(peripheral).inserted {
                    found.append(Participant(peripheral, role: .peripheral))
                }
            }
            all = found.filter { $0.role == .central } + found.filter { $0.role == .peripheral }
            for (position, participant) in all.enumerated() { positions[participant.identifier] = position }
        }

        /// The lane of a manager the log names, if any.
        func lane(_ identifier: UUID?) -> Int? {
            identifier.flatMap { positions[$0] }
        }
    }
}
