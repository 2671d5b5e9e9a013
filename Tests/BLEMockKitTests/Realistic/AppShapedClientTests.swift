import BLECore
import BLEMockKit
import Foundation
import Testing

/// A file uploader as a companion app writes one: it reacts to its central's events, streams
/// chunks with writes without response (waiting for `readyToSendWriteWithoutResponse` when
/// the queue is full), commits with a write request, and starts over after a disconnect.
actor Uploader {
    let central: MockCentralManager
    let payload: Data
    private(set) var committed = false
    private(set) var attempts = 0
    private var waiter: CheckedContinuation<Void, Never>?

    init(central: MockCentralManager, payload: Data) {
        self.central = central
        self.payload = payload
    }

    /// Reacts to events until the upload is committed.
    func run(events: AsyncStream<CentralEvent>) async throws {
        var events = events.makeAsyncIterator()
        while !committed, let event = await events.next(isolation: self) {
            switch event {
            case .stateChanged(.poweredOn):
                try await central.scanForPeripherals(withServices: [UploadRig.service])
            case .discovered(let found):
                await central.stopScan()
                try await upload(to: found.identifier, events: &events)
            case .disconnected(let peripheral, _):
                try await upload(to: peripheral.identifier, events: &events)
            default:
                break
            }
        }
        waiter?.resume()
        waiter = nil
    }

    /// Connects and sends the whole payload, then commits; returns early if the link drops.
    private func upload(to peripheral: UUID, events: inout AsyncStream<CentralEvent>.Iterator) async throws {
        attempts += 1
        try await central.connect(peripheral)
        let characteristics = try await central.discoverAll(for: peripheral)
        guard let data = characteristics.first(where: { $0.uuid == UploadRig.data }),
            let commit = characteristics.first(where: { $0.uuid == UploadRig.commit })
        else { return }
        let chunk = try await central.maximumWriteValueLength(for: peripheral, type: .withoutResponse)
        var offset = 0
        while offset < payload.count {
            while await !central.canSendWriteWithoutResponse(to: peripheral) {
                guard let event = await events.next(isolation: self) else { return }
                if case .disconnected = event { return try await upload(to: peripheral, events: &events) }
            }
            let end = min(offset + chunk, payload.count)
            do {
                try await central.writeValue(payload[offset..<end], for: data, type: .withoutResponse)
            } catch {
                return  // the link dropped: the disconnect event brings us back
            }
            offset = end
        }
        do {
            try await central.writeValue(
                Data([UInt8(truncatingIfNeeded: payload.count)]), for: commit, type: .withResponse)
            committed = true
        } catch {
            return
        }
    }

    /// Returns once the upload is committed.
    func untilCommitted() async {
        guard !committed else { return }
        await withCheckedContinuation { waiter = $0 }
    }
}

/// The receiving side of the upload: a peripheral that collects what is written to its data
/// characteristic until a commit.
enum UploadRig {
    static let service: BluetoothUUID = "F00D"
    static let data: BluetoothUUID = "F00E"
    static let commit: BluetoothUUID = "F00F"

    static var gattService: GATTService {
        GATTService(
            uuid: service,
            characteristics: [
                GATTCharacteristic(uuid: data, properties: .writeWithoutResponse, permissions: .writeable),
                GATTCharacteristic(uuid: commit, properties: .write, permissions: .writeable),
            ])
    }

    /// Runs one upload of `payload` on a realistic bridge with `seed`, the link dropped once
    /// mid-transfer; returns what the peripheral received before the commit, the number of
    /// connection attempts, and the log.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func upload(_ payload: Data, seed: UInt64) async throws -> (Data, Int, [BridgeLogEntry]) {
        let bridge = MockBLEBridge(configuration: .realistic(seed: seed))
        let (received, attempts) = try await bridge.run {
            let peripheral = MockPeripheralManager(
                configuration: .realistic(seed: seed).with(requestHandling: .manual), bridge: bridge)
            let requests = peripheral.events()
            _ = await peripheral.waitForPoweredOn()
            _ = try await peripheral.add(gattService)
            try await peripheral.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: [service]))
            let collector = bridge.task { () -> Data in
                var received = Data()
                for await event in requests {
                    guard case .writeRequests(let batch) = event, let first = batch.first else { continue }
                    if first.characteristic.uuid == commit {
                        try await peripheral.respond(to: first, withResult: .success)
                        return received
                    }
                    if first.offset == 0, first.value?.first == payload.first, !received.isEmpty {
                        received = Data()  // a new attempt starts over
                    }
                    received += first.value ?? Data()
                }
                return received
            }
            let central = MockCentralManager(configuration: .realistic(seed: seed), bridge: bridge)
            let uploader = Uploader(central: central, payload: payload)
            let events = central.events()
            bridge.task { try await uploader.run(events: events) }
            // One disconnection mid-transfer, a little after the first chunks.
            bridge.task {
                await bridge.waitUntil { $0.log.contains { $0.kind == .writeRequest } }
                await bridge.simulateDisconnection(
                    central: central.identifier, peripheral: peripheral.identifier,
                    error: CoreBluetoothError(.connectionTimeout))
            }
            await uploader.untilCommitted()
            return (try await collector.value, await uploader.attempts)
        }
        return (received, attempts, await bridge.log)
    }
}

extension MockPeripheralManager.Configuration {
    /// This configuration with another request handling.
    func with(requestHandling: RequestHandling) -> Self {
        var copy = self
        copy.requestHandling = requestHandling
        return copy
    }
}

@Suite("App-shaped clients with time that drives itself", .timeLimit(.minutes(10)))
struct AppShapedClientTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("An uploader that streams, waits for ready events, reconnects after a drop and commits, for 100 seeds")
    func uploaderOverHundredSeeds() async throws {
        let payload = Data((0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) })
        for seed in UInt64(1)...100 {
            let (received, attempts, log) = try await UploadRig.upload(payload, seed: seed)
            #expect(received == payload, "seed \(seed)")
            #expect(attempts == 2, "seed \(seed): one drop, one reconnection")
            let (again, _, secondLog) = try await UploadRig.upload(payload, seed: seed)
            #expect(again == payload, "seed \(seed)")
            #expect(secondLog == log, "seed \(seed): the rerun's log differs")
        }
    }
}
