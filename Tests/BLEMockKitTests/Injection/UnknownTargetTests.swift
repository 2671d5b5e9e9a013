import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// A fault or test hook naming a manager that is not on the bridge (a mistyped identifier, or
/// another bridge's) does nothing, and `finish()` says so, rather than a test passing without
/// the fault it meant to simulate.
@Suite("Faults naming no manager", .timeLimit(.minutes(10)))
struct UnknownTargetTests {
    static let stranger = UUID(uuidString: "00000000-0000-0000-0000-00000000BEEF")!

    /// What `finish()` left over (none when clean), and its notes of unknown targets.
    static func finishNotes(_ bridge: MockBLEBridge) async -> ([Leftover], [String]) {
        guard case .leftovers(let items) = await bridge.finish() else { return ([], []) }
        let notes = items.compactMap { item -> String? in
            if case .unknownTarget(let note) = item { return note }
            return nil
        }
        return (items, notes)
    }

    @Test(
        "Each fault kind naming an unknown manager is listed by finish(), and changes nothing",
        arguments: [
            Fault.reset(peripheral: stranger), .proximity(peripheral: stranger, .outOfRange),
            .advertisementChange(peripheral: stranger, AdvertisementData(localName: "X")),
            .nameChange(peripheral: stranger, "X"), .peripheralState(stranger, .poweredOff),
            .centralState(stranger, .poweredOff),
        ])
    func unknownFault(fault: Fault) async throws {
        let rig = try await Rig.make()
        let before = await rig.bridge.log.count
        await rig.bridge.simulate(fault)
        #expect(await rig.bridge.log.count == before)
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        let (items, notes) = await Self.finishNotes(rig.bridge)
        #expect(
            notes == [
                "the fault \(fault) names no \(fault.isCentralState ? "central" : "peripheral") "
                    + "\(Self.stranger.uuidString) on this bridge"
            ])
        #expect(items.last == .seed(rig.bridge.configuration.seed))
    }

    @Test("A disconnect naming an unknown central, or a scheduled fault that fires, is listed once")
    func unknownDisconnectAndScheduledFault() async throws {
        let rig = try await Rig.make()
        await rig.bridge.simulate(
            .disconnect(central: Self.stranger, peripheral: rig.peripheral.identifier, error: .init(.connectionTimeout))
        )
        await rig.bridge.schedule(.reset(peripheral: Self.stranger), after: .seconds(1))
        await rig.bridge.schedule(.reset(peripheral: Self.stranger), after: .seconds(2))
        await rig.bridge.advance(by: .seconds(3))
        await rig.bridge.simulateDisconnection(central: rig.central.identifier, peripheral: Self.stranger)
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        let (_, notes) = await Self.finishNotes(rig.bridge)
        #expect(notes.count == 3)
        #expect(notes[0].hasSuffix("names no central \(Self.stranger.uuidString) on this bridge"))
        // The same fault twice is one note.
        #expect(
            notes[1]
                == "the fault reset(peripheral: \(Self.stranger)) names no peripheral \(Self.stranger.uuidString) on this bridge"
        )
        #expect(notes[2] == "simulateDisconnection names no peripheral \(Self.stranger.uuidString) on this bridge")
        #expect(
            Leftover.unknownTarget(notes[2]).description
                == "\(notes[2]), so it did nothing (a mistyped identifier, or another bridge's?)")
    }

    @Test("A fault naming a manager that shut down is no mistake: finish() stays clean")
    func shutDownManagerIsKnown() async throws {
        let rig = try await Rig.make()
        try await rig.central.cancelPeripheralConnection(rig.peripheral.identifier)
        await rig.central.shutDown()
        await rig.bridge.simulate(.centralState(rig.central.identifier, .poweredOff))
        await rig.bridge.simulate(.reset(peripheral: rig.peripheral.identifier))
        #expect(await rig.bridge.finish() == .clean)
    }
}

extension Fault {
    /// Whether this is a central's state change (the one kind naming a central alone).
    fileprivate var isCentralState: Bool {
        if case .centralState = self { return true }
        return false
    }
}
