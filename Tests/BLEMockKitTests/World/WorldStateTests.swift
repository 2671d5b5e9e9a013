import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: manager state", .timeLimit(.minutes(10)))
struct WorldStateTests {
    static let central = UUID(uuid: (0xCE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))
    static let peripheral = UUID(uuid: (0x9E, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2))

    /// An instant world with a powered-on central and a peripheral stuck `unauthorized`.
    static func instantWorld() -> World {
        var world = World(seed: 1, timing: .instant)
        world.addCentral(central, configuration: .init())
        world.addPeripheral(peripheral, configuration: .init(stateTransition: .stuck(.unauthorized)))
        return world
    }

    @Test("A manager that starts settled reports its state once, as it joins")
    func settledManagerReportsItsStateOnce() {
        var world = Self.instantWorld()
        let (central, peripheral) = (Self.central, Self.peripheral)
        let effects = world.takeEffects()
        #expect(effects.count == 2)
        guard case .central(central, .stateChanged(.poweredOn)) = effects.first,
            case .peripheral(peripheral, .stateChanged(.unauthorized)) = effects.last
        else {
            Issue.record("expected the two initial states, got \(effects)")
            return
        }
    }

    @Test("A realistic manager reports each step of its power-on, starting when it joins")
    func realisticManagerReportsItsSteps() {
        var world = World(seed: 1, timing: .realistic)
        let central = Self.central
        world.moveTime(to: VirtualClock.Instant(offset: .milliseconds(500)))
        world.addCentral(central, configuration: .realistic(seed: 1))
        #expect(world.takeEffects().isEmpty)
        var steps: [(VirtualClock.Instant, ManagerState)] = []
        while world.runNextEvent() {
            for case .central(central, .stateChanged(let state)) in world.takeEffects() {
                steps.append((world.now, state))
            }
        }
        #expect(steps.map(\.1) == [.resetting, .poweredOn])
        #expect(steps.map(\.0) == [550, 600].map { VirtualClock.Instant(offset: .milliseconds($0)) })
    }

    @Test("A manager's settled state is there at once in instant timing, and only after its steps in realistic timing")
    func settledStateFollowsTheSteps() {
        let world = Self.instantWorld()
        let (central, peripheral) = (Self.central, Self.peripheral)
        #expect(world.settledState(of: .central(central)) == .poweredOn)
        #expect(world.settledState(of: .peripheral(peripheral)) == .unauthorized)

        var realistic = World(seed: 1, timing: .realistic)
        realistic.addCentral(central, configuration: .realistic(seed: 1))
        #expect(realistic.settledState(of: .central(central)) == nil)
        while realistic.runNextEvent() {}
        #expect(realistic.settledState(of: .central(central)) == .poweredOn)
    }
}
