import BLECore
import BLEMockKit
import Foundation
import Testing

/// What ATT_MTU an exploration's links get: its conditions describe the run's phone and
/// peripheral, so a side that prefers what its device does takes their ATT_MTU, an explicit
/// preference below it still wins, and the coverage counts what the links had.
@Suite("Exploration: the links' ATT_MTU", .timeLimit(.minutes(10)))
struct ExplorationMTUTests {
    /// The ATT_MTU of one link between a central and a peripheral configured as given, on a
    /// bridge configured as given.
    static func linkMTU(
        on configuration: MockBLEBridge.Configuration, central: MTUMode, peripheral: MTUMode
    ) async throws -> Int {
        let bridge = MockBLEBridge(configuration: configuration)
        let (sensor, _) = try await Realistic.advertisingPeripheral(
            on: bridge, configuration: .init(name: "Sensor", mtu: peripheral))
        let phone = MockCentralManager(configuration: .init(mtu: central), bridge: bridge)
        try await Realistic.discover(sensor, by: phone, on: bridge)
        try await phone.connect(sensor.identifier)
        let mtus = Realistic.linkMTUs(in: await bridge.log)
        #expect(mtus.count == 1)
        return try #require(mtus.first)
    }

    @Test(
        "Under an exploration's conditions a side that prefers its device's ATT_MTU takes the conditions'",
        arguments: [23, 185, 300, 517])
    func deviceSidesTakeTheConditionsMTU(mtu: Int) async throws {
        let plan = ExplorationPlan(seed: 3, conditions: LinkConditions(mtu: mtu))
        #expect(try await Self.linkMTU(on: plan.configuration, central: .device, peripheral: .device) == mtu)
        // One side's device preference is enough when the other prefers more.
        #expect(try await Self.linkMTU(on: plan.configuration, central: .device, peripheral: .fixed(517)) == mtu)
    }

    @Test(
        "Under an exploration's conditions an explicit preference below their ATT_MTU still decides",
        arguments: [(100, 100), (300, 200), (517, 200)])
    func explicitPreferencesAreCapped(conditions: Int, expected: Int) async throws {
        let plan = ExplorationPlan(seed: 3, conditions: LinkConditions(mtu: conditions))
        #expect(try await Self.linkMTU(on: plan.configuration, central: .fixed(200), peripheral: .device) == expected)
    }

    @Test("A bridge's own maximumMTU only caps: device sides keep their devices' 185 and 247")
    func plainLimitsOnlyCap() async throws {
        var configuration = MockBLEBridge.Configuration.realistic(seed: 3)
        configuration.limits = LinkLimits(maximumMTU: 300)
        #expect(try await Self.linkMTU(on: configuration, central: .device, peripheral: .device) == 185)
        configuration.limits = LinkLimits(maximumMTU: 100)
        #expect(try await Self.linkMTU(on: configuration, central: .device, peripheral: .device) == 100)
        // An exploration's limits are told apart from the same numbers set by hand.
        #expect(LinkConditions(mtu: 300).limits != LinkLimits(maximumMTU: 300))
    }

    @Test("A run's outcome says the ATT_MTU its links had, and nil when it made no link")
    func outcomeSaysTheLinksMTU() async throws {
        let plan = ExplorationPlan(seed: 5, conditions: LinkConditions(mtu: 400))
        let linked = await Exploration.replay(plan) { run in
            let (sensor, _) = try await Realistic.advertisingPeripheral(
                on: run.bridge, configuration: .init(name: "Sensor", mtu: .device))
            let phone = MockCentralManager(configuration: .init(mtu: .fixed(247)), bridge: run.bridge)
            try await Realistic.discover(sensor, by: phone, on: run.bridge)
            try await phone.connect(sensor.identifier)
        }
        #expect(linked.error == nil)
        #expect(linked.linkMTU == 247)
        let unlinked = await Exploration.replay(plan) { run in
            _ = MockCentralManager(bridge: run.bridge)
        }
        #expect(unlinked.error == nil)
        #expect(unlinked.linkMTU == nil)
    }

    @Test("The coverage counts the ATT_MTUs the links had, not the ones drawn")
    func coverageCountsRealizedMTUs() async throws {
        // A central that prefers 100: whatever the draw, no link goes above it.
        let capped = await Exploration(budget: ExplorationBudget(faultKinds: []), seeds: 20).run { run in
            let (sensor, _) = try await Realistic.advertisingPeripheral(
                on: run.bridge, configuration: .init(name: "Sensor", mtu: .device))
            let phone = MockCentralManager(configuration: .init(mtu: .fixed(100)), bridge: run.bridge)
            try await Realistic.discover(sensor, by: phone, on: run.bridge)
            try await phone.connect(sensor.identifier)
        }
        #expect(capped.passed, "\(capped)")
        let mtu = try #require(capped.coverage.mtu)
        #expect(mtu.upperBound <= 100, "\(capped.coverage)")
        #expect(capped.coverage.mtuBands["185…255", default: 0] == 0)
        #expect(capped.coverage.mtuBands["256…517", default: 0] == 0)
        #expect(capped.coverage.mtuBands.values.reduce(0, +) == capped.coverage.runs)
        // Runs that make no link are not counted in any band.
        let unlinked = await Exploration(budget: ExplorationBudget(faultKinds: []), seeds: 5).run { run in
            _ = MockCentralManager(bridge: run.bridge)
        }
        #expect(unlinked.passed)
        #expect(unlinked.coverage.mtuBands.isEmpty)
        #expect(unlinked.coverage.mtu == nil)
    }
}
