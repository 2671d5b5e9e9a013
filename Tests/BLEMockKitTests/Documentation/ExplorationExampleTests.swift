import BLECore
import BLEMockKit
import Foundation
import Testing

// The examples of the "Exploring seeds and faults" article and README's realistic section,
// verbatim: `everyDocumentedSwiftBlockIsCompiled` checks that each appears here.

/// App code with a planted bug: it sends a file in chunks of 182 bytes, as if every link had
/// the ATT_MTU of 185 an iPhone often negotiates.
func sendFirmware(_ file: Data, central: MockCentralManager) async throws {
    let events = central.events()
    try await central.scanForPeripherals(withServices: ["FE59"])
    guard case .discovered(let found) = await events.first(where: { if case .discovered = $0 { true } else { false } })
    else { return }
    await central.stopScan()
    let peripheral = found.identifier
    try await central.connect(peripheral)
    let data = try await central.discoverAll(for: peripheral)[0]
    for start in stride(from: 0, to: file.count, by: 182) {
        while await !central.canSendWriteWithoutResponse(to: peripheral) {
            _ = await central.events().first { if case .readyToSendWriteWithoutResponse = $0 { true } else { false } }
        }
        try await central.writeValue(file[start..<min(start + 182, file.count)], for: data, type: .withoutResponse)
    }
}

/// A peripheral that takes writes without response.
func firmwareTarget(bridge: MockBLEBridge) async throws -> MockPeripheralManager {
    let target = MockPeripheralManager(bridge: bridge)
    _ = try await target.add(
        GATTService(
            uuid: "FE59",
            characteristics: [
                GATTCharacteristic(uuid: "FE5A", properties: .writeWithoutResponse, permissions: .writeable)
            ]))
    try await target.startAdvertising(AdvertisementData(serviceUUIDs: ["FE59"]))
    return target
}

@Suite(.timeLimit(.minutes(10)))
struct ExplorationExampleTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func explorationFindsTheChunkSizeBug() async throws {
        let report = await Exploration(budget: .conditionsOnly, seeds: 200).run { run in
            _ = try await firmwareTarget(bridge: run.bridge)
            let central = MockCentralManager()  // joins the run's bridge
            try await sendFirmware(Data(count: 4_096), central: central)
            // A write longer than the link carries is cut, as on a device: the bridge says so.
            let misuses = await run.bridge.misuses
            try Exploration.require(misuses.isEmpty, "\(misuses.count) writes were cut")
        }
        let failure = try #require(report.failures.first)
        // Shrunk: no faults were needed, and the largest ATT_MTU that still fails is 184.
        #expect(failure.minimal.plan.faults.isEmpty)
        #expect(failure.minimal.plan.conditions.mtu == 184)
        print(failure)  // in words, and the Swift code that replays it
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func replayingAnExploredFailure() async throws {
        // What the report above printed to replay the failure:
        let plan = ExplorationPlan(
            seed: 0,
            conditions: LinkConditions(mtu: 184),
            faults: [])
        let outcome = await Exploration.replay(plan) { run in
            _ = try await firmwareTarget(bridge: run.bridge)
            try await sendFirmware(Data(count: 4_096), central: MockCentralManager())
            let misuses = await run.bridge.misuses
            try Exploration.require(misuses.isEmpty, "\(misuses.count) writes were cut")
        }
        #expect(outcome.error as? ExplorationFailure == ExplorationFailure("22 writes were cut"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func narrowingTheFaultBudget() async throws {
        var budget = ExplorationBudget()
        budget.faultKinds = [.disconnect, .outOfRange]  // only lost links
        budget.faultCount = 1...1
        budget.mtu = 185...517  // the chunk size bug aside
        let report = await Exploration(budget: budget, seeds: 50).run { run in
            _ = try await firmwareTarget(bridge: run.bridge)
            try await sendFirmware(Data(count: 4_096), central: MockCentralManager())
        }
        // sendFirmware does not reconnect: a link lost mid-transfer fails it.
        let failure = try #require(report.failures.first)
        #expect(failure.minimal.plan.faults.count == 1)
        print(report.coverage.summary(budget: budget))  // what was drawn, what took effect
    }
}
