import BLECore
import BLEMockKit
import Foundation
import Transport

/// One seeded chaos run: a central and two or three peripherals on one bridge, a random mix
/// of operations while faults fire at random virtual times, then the invariant checks of
/// `ChaosRun+Invariants.swift`. Everything random is drawn from `random`, seeded with the
/// run's seed, and the bridge is seeded with it too, so a seed replays the same run.
///
/// Two kinds of peripheral: a *messenger* answers requests manually and carries Transport
/// messages both ways over `FFF1` through a pair of message channels; a *sensor* answers
/// automatically and offers a notifying measurement, a static value and a control point.
final class ChaosRun {
    static let messageService: BluetoothUUID = "FFF0"
    static let messageCharacteristic: BluetoothUUID = "FFF1"
    static let staticCharacteristic: BluetoothUUID = "FFF2"
    static let sensorService: BluetoothUUID = "180D"
    static let measurement: BluetoothUUID = "2A37"
    static let bodyLocation: BluetoothUUID = "2A38"
    static let controlPoint: BluetoothUUID = "2A39"
    /// The longest any single operation may take in virtual time (ATT's 30 s plus margin).
    static let operationBound = Duration.seconds(45)

    /// One peripheral of the run and what the central knows of it.
    struct Peer {
        let manager: MockPeripheralManager
        let isMessenger: Bool
        /// The notifying characteristic (`FFF1` or `2A37`) as published.
        let notifying: LocalCharacteristic
        /// The peripheral's side of the message channel (messengers only).
        let peripheralChannel: PeripheralMessageChannel<VirtualClock>?
        /// The central's side, created once the central has discovered `FFF1`.
        var centralChannel: CentralMessageChannel<VirtualClock>?
        /// Characteristics the central discovered on the current link.
        var remote: [BluetoothUUID: RemoteCharacteristic] = [:]

        var identifier: UUID { manager.identifier }
    }

    /// A message sent through a channel.
    struct SentMessage {
        let bytes: [UInt8]
        let toPeripheral: Bool
        let peer: UUID
        /// The bridge log's length when sending began: disconnects after it excuse a loss.
        let logIndex: Int
        var completed = false
    }

    let seed: UInt64
    let realistic: Bool
    var random: SeededGenerator
    let bridge: MockBLEBridge
    let central: MockCentralManager
    var peers: [Peer] = []
    var sent: [SentMessage] = []
    /// (peripheral, characteristic) pairs the central subscribed to, with the log length then.
    var subscriptions: [UUID: Int] = [:]
    /// Descriptions of the error injections installed, which may legitimately never fire.
    var injections: Set<String> = []
    /// Invariant violations, each a sentence naming what went wrong.
    var problems: [String] = []
    /// What happened, one line per operation, printed with a failing seed (and as it happens
    /// with `BLEMOCKKIT_CHAOS_VERBOSE=1`, to locate a hang).
    var steps: [String] = [] {
        didSet {
            guard Self.verbose, let last = steps.last else { return }
            // Unbuffered, so that the last step before a hang shows.
            FileHandle.standardError.write(Data("chaos seed \(seed): \(last)\n".utf8))
        }
    }
    static let verbose = ProcessInfo.processInfo.environment["BLEMOCKKIT_CHAOS_VERBOSE"] == "1"

    init(seed: UInt64) async throws {
        self.seed = seed
        random = SeededGenerator(seed: seed)
        realistic = seed % 8 == 7
        bridge =
            realistic
            ? MockBLEBridge(configuration: .realistic(seed: seed)) : MockBLEBridge(seed: seed)
        var centralConfiguration: MockCentralManager.Configuration =
            realistic ? .realistic(seed: seed) : .init()
        centralConfiguration.mtu = [MTUMode.fixed(23), .fixed(185), .realistic(23...517)][random.int(in: 0..<3)]
        if random.bool(probability: 0.5) {
            centralConfiguration.writeWithoutResponseQueue = .realistic(capacity: random.int(in: 1...4))
        }
        central = MockCentralManager(configuration: centralConfiguration, bridge: bridge)
        _ = await central.waitForPoweredOn()
        let messengers = random.int(in: 1...2)
        let sensors = random.int(in: 0...1) + (messengers == 1 ? 1 : 0)
        for index in 0..<(messengers + sensors) {
            peers.append(try await makePeer(messenger: index < messengers))
        }
        // The central must have seen a peripheral before it can connect to it.
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .seconds(2))
        await central.stopScan()
    }

    /// A powered-on, advertising peripheral of either kind.
    private func makePeer(messenger: Bool) async throws -> Peer {
        var configuration: MockPeripheralManager.Configuration = realistic ? .realistic(seed: seed) : .init()
        configuration.mtu = [MTUMode.fixed(23), .fixed(247), .realistic(23...517)][random.int(in: 0..<3)]
        configuration.requestHandling = messenger ? .manual : .automatic
        configuration.updateQueue = messenger ? .unlimited : .realistic(capacity: random.int(in: 1...3))
        let manager = MockPeripheralManager(configuration: configuration, bridge: bridge)
        _ = await manager.waitForPoweredOn()
        let service = try await manager.add(messenger ? Self.messengerService : Self.sensorGATTService)
        try await manager.startAdvertising(AdvertisementData(localName: "chaos", serviceUUIDs: [service.uuid]))
        let notifying = service.characteristics[0]
        let channel =
            messenger
            ? await PeripheralMessageChannel(peripheral: manager, characteristic: notifying, clock: bridge.clock)
            : nil
        return Peer(manager: manager, isMessenger: messenger, notifying: notifying, peripheralChannel: channel)
    }

    static var messengerService: GATTService {
        GATTService(
            uuid: messageService,
            characteristics: [
                GATTCharacteristic(
                    uuid: messageCharacteristic, properties: [.write, .writeWithoutResponse, .notify],
                    permissions: .writeable),
                GATTCharacteristic(
                    uuid: staticCharacteristic, properties: .read, permissions: .readable, value: Data("v1".utf8)),
            ])
    }

    static var sensorGATTService: GATTService {
        GATTService(
            uuid: sensorService,
            characteristics: [
                GATTCharacteristic(uuid: measurement, properties: [.notify, .read], permissions: .readable),
                GATTCharacteristic(uuid: bodyLocation, properties: .read, permissions: .readable, value: Data([1])),
                GATTCharacteristic(
                    uuid: controlPoint, properties: [.write, .writeWithoutResponse], permissions: .writeable),
            ])
    }

    /// Records a violated invariant.
    func fail(_ problem: String) {
        problems.append(problem)
    }

    /// A short name for a peer in step descriptions.
    func name(_ index: Int) -> String {
        "\(peers[index].isMessenger ? "messenger" : "sensor")\(index)"
    }
}
