import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// A manager the app made again after letting go of its predecessor (same identifier, the
/// predecessor shut down) gets a fresh record: what was the manager's goes, what belongs to its
/// app or the system stays.
@Suite("World: a manager made again after its predecessor shut down", .timeLimit(.minutes(10)))
struct WorldRestartTests {
    static let later = VirtualClock.Instant.zero.advanced(by: .milliseconds(200))

    @Test("A central made again keeps its app's background, and none of its predecessor's start-up steps")
    func aCentralStartsAfresh() throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let central = harness.addCentral(.init(stateTransition: .realistic(duration: .milliseconds(100))))
        harness.mutate { world in
            world.setBackground(.central(central), true)
            world.shutDown(central: central)
            world.restart(central: central, configuration: .init())
        }
        let record = try #require(harness.world.centrals[central])
        #expect(record.state == .poweredOn)
        #expect(!record.isShutDown)
        #expect(record.isInBackground)
        harness.advance(to: Self.later)
        #expect(harness.world.state(of: .central(central)) == .poweredOn)
        let states = harness.log(.stateChanged).filter { $0.central == central }.map(\.detail)
        #expect(Array(states.drop { $0 != "shut down" }.dropFirst()) == ["poweredOn"])
    }
}
