import Foundation
import Testing

@testable import BLECBM

/// The order a run applies the app's calls in, and what its driver leaves for the next batch
/// (``HeldCommands``).
@Suite("The app's calls a run holds back", .timeLimit(.minutes(10)))
struct HeldCommandsTests {
    static let (low, high) = (
        UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!,
        UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!
    )

    @Test func callsAreTakenByWhereTheyWereMadeThenInTheOrderTheyWereMade() {
        var held = HeldCommands<String>()
        held.hold("manager high", from: .manager(Self.high))
        held.hold("queue high 1", from: .queue(Self.high))
        held.hold("main 1", from: .main)
        held.hold("manager low", from: .manager(Self.low))
        held.hold("queue low", from: .queue(Self.low))
        held.hold("body", from: .body)
        held.hold("queue high 2", from: .queue(Self.high))
        held.hold("main 2", from: .main)
        var batch: [String] = []
        held.take(upToMark: false, into: &batch)
        #expect(
            batch == [
                "body", "main 1", "main 2", "queue low", "queue high 1", "queue high 2", "manager low", "manager high",
            ])
        #expect(held.isEmpty)
    }

    // A call held after the driver's pass began (code that ran as the pass went on) waits for
    // the next batch, where the siblings of its instant join it: the widget's connect, held
    // before the companion's on the main queue had run, still comes after it.
    @Test func aCallHeldAfterTheMarkWaitsForTheNextTakeAndItsSiblings() {
        var held = HeldCommands<String>()
        held.hold("earlier", from: .queue(Self.low))
        held.mark()
        held.hold("widget connect", from: .queue(Self.high))
        var batch: [String] = []
        held.take(upToMark: true, into: &batch)
        #expect(batch == ["earlier"])
        #expect(held.count == 1)
        held.hold("companion connect", from: .main)
        held.mark()
        batch.removeAll()
        held.take(upToMark: true, into: &batch)
        #expect(batch == ["companion connect", "widget connect"])
        #expect(held.isEmpty)
    }

    @Test func aMarkBeforeAnythingWasHeldTakesNothingAndLeavesTheBatchAsItWas() {
        var held = HeldCommands<String>()
        held.mark()
        held.hold("late", from: .body)
        var batch = ["arrived outside the run"]
        held.take(upToMark: true, into: &batch)
        #expect(batch == ["arrived outside the run"])
        #expect(held.count == 1)
        // A direct call takes everything held, mark or not.
        held.take(upToMark: false, into: &batch)
        #expect(batch == ["arrived outside the run", "late"])
        #expect(held.isEmpty)
    }

    @Test func takingWithNothingHeldChangesNothing() {
        var held = HeldCommands<String>()
        var batch: [String] = []
        held.take(upToMark: false, into: &batch)
        held.take(upToMark: true, into: &batch)
        #expect(batch.isEmpty)
        #expect(held.isEmpty)
    }

    // Releases made next to each other shut down in the order of their managers' identifiers,
    // whichever thread let go first; a call between two releases keeps them apart.
    @Test func releasesNextToEachOtherAreTakenByTheirManagersIdentifiers() {
        var held = HeldCommands<String>()
        held.hold("release high", from: .body, releasing: Self.high)
        held.hold("release low", from: .body, releasing: Self.low)
        held.hold("call", from: .body)
        held.hold("release high again", from: .body, releasing: Self.high)
        held.hold("release low again", from: .body, releasing: Self.low)
        var batch: [String] = []
        held.take(upToMark: false, into: &batch)
        #expect(batch == ["release low", "release high", "call", "release low again", "release high again"])
    }
}
