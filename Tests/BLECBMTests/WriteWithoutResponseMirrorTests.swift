import Testing

@testable import BLECBM

/// The mirror behind `canSendWriteWithoutResponse` owes the app a `peripheralIsReady` when it
/// answered `false` because of its own writes still on their way, and the simulation, whose queue
/// never filled, will not send one (the writes reached it at separate instants, some sent
/// meanwhile): an app that waits for the ready callback after a `false`, as CoreBluetooth asks,
/// would otherwise wait for ever.
@Suite(.timeLimit(.minutes(10)))
struct WriteWithoutResponseMirrorTests {
    /// A link's mirror with a queue of 10 (3 in one test), and what it answered.
    private final class Link {
        var mirror = MockCentralEngine.LinkMirror(generation: 1, maximumWriteLength: 20)
        var capacity = 10

        init(queued: Int, inFlight: Int, capacity: Int = 10) {
            mirror.queued = queued
            mirror.inFlight = inFlight
            self.capacity = capacity
        }

        /// `canSendWriteWithoutResponse`.
        func canSend() -> Bool { mirror.canSend(capacity: capacity) }

        /// Whether the app hears a ready callback as the bridge's queue holds `queued` (after one
        /// of the app's writes reached it, when `arrived`).
        func ready(holding queued: Int, arrived: Bool = true) -> Bool {
            mirror.bridgeQueue(holds: queued, arrived: arrived, capacity: capacity)
        }
    }

    @Test func aFalseCausedByWritesInFlightIsFollowedByOneReadyOnceThereIsRoom() {
        let link = Link(queued: 6, inFlight: 4)
        #expect(!link.canSend())
        // The first write reaches a bridge that sent two meanwhile: room, said once.
        #expect(link.ready(holding: 5))
        #expect(!link.ready(holding: 6))
        #expect(!link.ready(holding: 4, arrived: false))
        #expect(link.mirror.inFlight == 2)
        #expect(link.mirror.queued == 4)
        #expect(link.canSend())
    }

    @Test func noReadyIsOwedWhileTheWritesInFlightStillFillTheQueue() {
        let link = Link(queued: 0, inFlight: 3, capacity: 3)
        #expect(!link.canSend())
        // One in the queue and two on their way: still no room.
        #expect(!link.ready(holding: 1))
        // The next arrives as the first is sent: room.
        #expect(link.ready(holding: 1))
    }

    @Test func aSimulationWhoseQueueFilledSaysWhenItHasRoomAndTheMirrorDoesNot() {
        let link = Link(queued: 8, inFlight: 2)
        #expect(!link.canSend())
        #expect(!link.ready(holding: 9))
        #expect(!link.ready(holding: 10))
        // It drains: the simulation's own ready callback will tell the app.
        #expect(!link.ready(holding: 3, arrived: false))
        link.mirror.simulationReady()
        #expect(link.canSend())
        // A later false starts afresh.
        link.mirror.inFlight = 7
        #expect(!link.canSend())
        #expect(link.ready(holding: 3))
    }

    @Test func anAppNeverToldItCannotSendHearsNoReadyFromTheMirror() {
        let link = Link(queued: 9, inFlight: 1)
        #expect(!link.ready(holding: 4))
        #expect(!link.ready(holding: 0, arrived: false))
    }
}
