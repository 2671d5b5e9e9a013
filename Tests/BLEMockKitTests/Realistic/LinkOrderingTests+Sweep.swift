import BLECore
import BLEMockKit
import Foundation
import Testing

/// The ordering under a sweep of seeds: ATT_MTU, queue capacities and counts drawn from each.
extension LinkOrderingTests {
    /// One run of the sweep, drawn from its seed.
    struct Sweep: CustomStringConvertible {
        let seed: UInt64
        let mode: Mode
        let mtu: Int
        let writeCapacity: Int
        let updateCapacity: Int
        let commands: Int
        let commitLength: Int
        let updates: Int

        init(seed: UInt64) {
            var random = SeededGenerator(seed: seed)
            self.seed = seed
            mode = seed % 2 == 0 ? .fast : .realistic
            mtu = random.int(in: 23...517)
            writeCapacity = random.int(in: 1...8)
            updateCapacity = random.int(in: 1...8)
            commands = random.int(in: 1...20)
            commitLength = random.int(in: 1...512)
            updates = random.int(in: 2...12)
        }

        /// The exchanges of the commit: one Write Request, or Prepare Writes and an Execute Write.
        var commitExchanges: Int { commitLength <= mtu - 3 ? 1 : (commitLength + mtu - 6) / (mtu - 5) + 1 }

        var description: String {
            "seed \(seed) (\(mode), ATT_MTU \(mtu), write queue \(writeCapacity), update queue \(updateCapacity), "
                + "\(commands) commands, commit of \(commitLength) bytes, \(updates) updates)"
        }
    }

    /// Runs the simulation one event at a time until `condition` holds; returns whether it did.
    static func step(_ bridge: MockBLEBridge, until condition: () async throws -> Bool) async rethrows -> Bool {
        for _ in 0..<1_000 {
            if try await condition() { return true }
            if await bridge.run(maximumEvents: 1) { break }
        }
        return try await condition()
    }

    @Test("The ordering holds across 100 seeds of ATT_MTU, queue capacities and counts", arguments: 0..<100)
    func sweep(seed: Int) async throws {
        let sweep = Sweep(seed: UInt64(seed))
        for answering in Answering.allCases { try await Self.run(sweep, answering: answering) }
    }

    /// A burst of writes without response at the largest size the MTU allows (waiting for
    /// room when the queue is full), a commit written with response, then updates with a read
    /// in their middle (waiting for room when the update queue is full).
    static func run(_ sweep: Sweep, answering: Answering) async throws {
        let context: Comment = "\(sweep), \(answering)"
        let bridge =
            sweep.mode == .fast
            ? MockBLEBridge(seed: sweep.seed) : MockBLEBridge(configuration: .realistic(seed: sweep.seed))
        let rig = try await Self.rig(
            bridge, answering: answering,
            central: .init(
                mtu: .fixed(sweep.mtu), writeWithoutResponseQueue: .realistic(capacity: sweep.writeCapacity)),
            updateQueue: .realistic(capacity: sweep.updateCapacity))
        let (central, peripheral) = (rig.central, rig.peripheral.identifier)
        let centralEvents = central.events()
        let peripheralEvents = rig.peripheral.events()

        let pdus = await bridge.attPDUCount
        // As long as a command can be: ATT_MTU − 3 bytes, and an attribute holds at most 512.
        let values = (0..<sweep.commands).map { testBytes(min(sweep.mtu - 3, 512), startingAt: $0) }
        var fills = 0
        for value in values {
            let room = await Self.step(bridge) { await central.canSendWriteWithoutResponse(to: peripheral) }
            #expect(room, context)
            try await central.writeValue(value, for: rig.remote(UUIDs.data), type: .withoutResponse)
            if await !central.canSendWriteWithoutResponse(to: peripheral) { fills += 1 }
        }
        let commit = testBytes(sweep.commitLength, startingAt: 0x40)
        try await central.writeValue(commit, for: rig.remote(UUIDs.control), type: .withResponse)
        #expect(await bridge.attPDUCount - pdus == sweep.commands + 2 * sweep.commitExchanges, context)
        if answering == .automatic {
            #expect(try await central.readValue(for: rig.remote(UUIDs.data)) == values.last, context)
        } else {
            let arrivals = await rig.arrivals()
            #expect(arrivals.prefix(sweep.commands).map(\.value) == values, context)
            let parts = arrivals.dropFirst(sweep.commands)
            #expect(parts.allSatisfy { $0.characteristic == UUIDs.control }, context)
            #expect(parts.map(\.value).reduce(Data(), +) == commit, context)
            let completed = try #require(await rig.commitTime(), context)
            #expect(arrivals.allSatisfy { $0.at <= completed }, context)
        }

        try await central.setNotifyValue(true, for: rig.remote(UUIDs.notifying))
        try await central.setNotifyValue(true, for: rig.remote(UUIDs.indicating))
        let half = sweep.updates / 2
        var refused = 0
        for index in 0..<sweep.updates {
            if index == half { _ = try await central.readValue(for: rig.remote(UUIDs.status)) }
            let characteristic = rig.local(index % 2 == 0 ? UUIDs.notifying : UUIDs.indicating)
            let value = Data([0x80 + UInt8(index)])
            var attempts = 0
            let sent = try await Self.step(bridge) {
                attempts += 1
                return try await rig.peripheral.updateValue(value, for: characteristic, onSubscribedCentrals: nil)
            }
            #expect(sent, context)
            if attempts > 1 { refused += 1 }
        }
        #expect(await bridge.run(), context)
        let arrived = await bridge.log.filter {
            ($0.kind == .notification || $0.kind == .indication) && $0.central != nil
                || $0.kind == .read && $0.attribute == UUIDs.status
        }
        let expected = (0..<sweep.updates).map { "\(0x80 + $0)" }
        let names = arrived.map { $0.kind == .read ? "read" : "\($0.value?.first ?? 0)" }
        // The updates keep the order they were sent in. The read's answer comes after the
        // updates sent after it (the read returned before they were sent) and after the first
        // one, but may go on past updates sent before it that wait behind an indication's
        // confirmation (a response does not wait for that).
        #expect(names.filter { $0 != "read" } == expected, context)
        let readIndex = try #require(names.firstIndex(of: "read"), context)
        #expect((min(half, 1)...half).contains(readIndex), context)

        await rig.finish()
        let ready = CentralEvent.readyToSendWriteWithoutResponse(
            RemotePeripheral(identifier: peripheral, name: "Sensor"))
        #expect(await Realistic.drain(centralEvents).filter { $0 == ready }.count == fills, context)
        #expect(
            await Realistic.drain(peripheralEvents).filter { $0 == .readyToUpdateSubscribers }.count == refused, context
        )
    }
}
