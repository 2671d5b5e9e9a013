// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A hybrid watch that sends a file to its phone as notifications, as such firmware simulators
/// are written: on its own queue (its manager made in `queue.async`), it sends chunks of the
/// central's `maximumUpdateValueLength` until `updateValue` returns `false`, and goes on from
/// `peripheralManagerIsReady(toUpdateSubscribers:)`.
final class FileSendingWatch: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on `queue`.
    static let service = CBMUUID(string: "7A100001-9C2B-4F1A-8D3E-6B0F1C2D3E4F")
    static let fileUUID = CBMUUID(string: "7A100002-9C2B-4F1A-8D3E-6B0F1C2D3E4F")

    let queue = DispatchQueue(label: "file-sending-watch")
    private(set) var manager: CBMPeripheralManager?
    let file = CBMMutableCharacteristic(type: fileUUID, properties: [.notify], value: nil, permissions: [])
    /// What the delegate heard, in order.
    private(set) var journal: [String] = []
    /// The file, and how much of it has gone.
    private let outgoing: Data
    private(set) var sent = 0
    /// Whether the last `updateValue` was refused, and no ready callback followed yet.
    private(set) var waitsForReady = false
    private var chunk = 20

    init(bridge: MockBLEBridge, fileSize: Int) {
        outgoing = Data((0..<fileSize).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        super.init()
        queue.async { self.manager = CBMPeripheralManager(bridge: bridge, delegate: self, queue: self.queue) }
    }

    /// Reads the app's state on its queue.
    func sync<T>(_ body: () -> T) -> T { queue.sync(execute: body) }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        journal.append("state \(peripheral.state)")
        guard peripheral.state == .poweredOn else { return }
        let service = CBMMutableService(type: Self.service, primary: true)
        service.characteristics = [file]
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        journal.append("added")
        peripheral.startAdvertising([CBMAdvertisementDataServiceUUIDsKey: [Self.service]])
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didSubscribeTo characteristic: CBMCharacteristic
    ) {
        journal.append("subscribed")
        chunk = central.maximumUpdateValueLength
        pump()
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didUnsubscribeFrom characteristic: CBMCharacteristic
    ) {
        journal.append("unsubscribed")
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBMPeripheralManager) {
        journal.append("ready")
        waitsForReady = false
        pump()
    }

    /// Sends the file from where it stopped, until the update queue is full.
    private func pump() {
        guard let manager else { return }
        while sent < outgoing.count {
            let end = min(sent + chunk, outgoing.count)
            guard manager.updateValue(outgoing.subdata(in: sent..<end), for: file, onSubscribedCentrals: nil) else {
                journal.append("refused")
                waitsForReady = true
                return
            }
            sent = end
        }
    }
}

/// The phone companion: finds the watch, connects and subscribes to its file, on its own queue.
final class FileReceivingPhone: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on `queue`.
    let queue = DispatchQueue(label: "file-receiving-phone")
    private(set) var manager: CBMCentralManager?
    private(set) var watch: CBMPeripheral?
    /// What the delegates heard, in order.
    private(set) var journal: [String] = []
    /// The file's bytes received so far.
    private(set) var received = Data()

    init(bridge: MockBLEBridge) {
        super.init()
        queue.async { self.manager = CBMCentralManager(bridge: bridge, delegate: self, queue: self.queue) }
    }

    /// Reads the app's state on its queue.
    func sync<T>(_ body: () -> T) -> T { queue.sync(execute: body) }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: [FileSendingWatch.service]) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard watch == nil else { return }
        central.stopScan()
        watch = peripheral
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.discoverServices([FileSendingWatch.service])
    }

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        journal.append("disconnected")
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        guard let service = peripheral.services?.first else { return }
        peripheral.discoverCharacteristics([FileSendingWatch.fileUUID], for: service)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        guard let file = service.characteristics?.first else { return }
        peripheral.setNotifyValue(true, for: file)
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        if error == nil, let value = characteristic.value { received += value }
    }
}

@Suite(.timeLimit(.minutes(10)))
struct WatchFileTransferTests {
    /// Bluetooth turned off on the watch while its update queue is full: CoreBluetooth's queue
    /// goes with the power, and a manager that is not powered on takes no `updateValue` (an API
    /// misuse), so the app hears the state and the ends of its subscriptions, and no
    /// `peripheralManagerIsReady(toUpdateSubscribers:)`. Before, the link's teardown emptied
    /// the full queue and told the app it was ready, while powered off: its pump's
    /// `updateValue` was refused and noted as a misuse.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A watch powered off with its update queue full hears no ready callback while powered off")
    func aWatchPoweredOffWithItsQueueFullHearsNoReady() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 11))
        let (journal, misuses, phoneJournal) = try await bridge.run { () -> ([String], [String], [String]) in
            let watch = FileSendingWatch(bridge: bridge, fileSize: 50_000)
            try await bridge.waitForApp { watch.sync { watch.manager?.isAdvertising ?? false } }
            let phone = FileReceivingPhone(bridge: bridge)
            try await bridge.waitForApp { watch.sync { watch.waitsForReady } }
            let identifier = try #require(watch.sync { watch.manager?.simulatedPeripheral?.identifier })
            await bridge.simulate(.peripheralState(identifier, .poweredOff))
            try await bridge.waitForApp { phone.sync { phone.journal == ["disconnected"] } }
            await bridge.advance(by: .seconds(2))
            let journal = watch.sync { watch.journal }
            let misuses = watch.sync { watch.manager?.apiMisuses ?? [] }
            return (journal, misuses, phone.sync { phone.journal })
        }
        let poweredOff = try #require(journal.firstIndex(of: "state poweredOff"))
        #expect(journal[poweredOff...] == ["state poweredOff", "unsubscribed"])
        #expect(misuses == [])
        #expect(phoneJournal == ["disconnected"])
    }
}
