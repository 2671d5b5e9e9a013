import BLEMockKit
import Foundation
import Testing

@testable import BLECBM

/// Where a command made on an app queue takes its place in a run's order (``CommandQueue/Origin``).
@Suite("The place of an app queue's calls in a run's order", .timeLimit(.minutes(10)))
struct CommandQueueOriginTests {
    /// The origin a command made now on `queue`, for the manager `key` on `bridge`, has.
    static func origin(on queue: DispatchQueue, of bridge: MockBLEBridge, for key: UUID) -> CommandQueue.Origin {
        queue.sync { CommandQueue.of(bridge).origin(for: key) }
    }

    @Test("A call made on an app queue takes the place of the smallest identifier of the managers registered on it")
    func aQueueTakesThePlaceOfItsSmallestManager() {
        let bridge = MockBLEBridge()
        let queue = DispatchQueue(label: "app")
        let (small, large) = (
            UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!,
            UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!
        )
        CommandQueue.of(bridge).register(queue, for: large)
        CommandQueue.of(bridge).register(queue, for: small)
        #expect(Self.origin(on: queue, of: bridge, for: large) == .queue(small))
        // Off every registered queue, a call takes the place of its manager.
        #expect(Self.origin(on: DispatchQueue(label: "other"), of: bridge, for: large) == .manager(large))
    }

    @Test("One app queue used by managers of two bridges takes its place in each bridge's order")
    func aQueueSharedByTwoBridges() {
        let (first, second) = (MockBLEBridge(), MockBLEBridge())
        let queue = DispatchQueue(label: "app")
        let (one, two) = (
            UUID(uuidString: "00000000-0000-0000-0000-000000000001")!,
            UUID(uuidString: "00000000-0000-0000-0000-000000000002")!
        )
        CommandQueue.of(first).register(queue, for: two)
        CommandQueue.of(second).register(queue, for: one)
        #expect(Self.origin(on: queue, of: first, for: two) == .queue(two))
        #expect(Self.origin(on: queue, of: second, for: one) == .queue(one))
    }
}
