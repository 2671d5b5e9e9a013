import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A peripheral app on its own queue: publishes one readable, writable characteristic and an
/// L2CAP channel, advertises, and counts the requests and channels it hears.
private final class ChannelFirmware: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on `queue` (the manager's queue).
    let queue = DispatchQueue(label: "simultaneous.firmware")
    var manager: CBMPeripheralManager?
    var psm: CBML2CAPPSM = 0
    /// What its delegate heard, in order.
    var heard: [String] = []
    var channels: [CBML2CAPChannel] = []

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let service = CBMMutableService(type: CBMUUID(string: "AAA0"), primary: true)
        service.characteristics = [
            CBMMutableCharacteristic(
                type: CBMUUID(string: "AAA1"), properties: [.read, .write], value: nil,
                permissions: [.readable, .writeable])
        ]
        peripheral.add(service)
        peripheral.publishL2CAPChannel(withEncryption: false)
        peripheral.startAdvertising([CBMAdvertisementDataLocalNameKey: "Watch"])
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, didPublishL2CAPChannel psm: CBML2CAPPSM, error: (any Error)?
    ) {
        self.psm = psm
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveWrite requests: [CBMATTRequest]) {
        heard.append("write")
        peripheral.respond(to: requests[0], withResult: .success)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didOpen channel: CBML2CAPChannel?, error: (any Error)?) {
        heard.append("open")
        if let channel { channels.append(channel) }
    }
}

/// A central app on its own queue: connects to the first peripheral it finds and discovers its
/// first service's characteristics.
private final class ChannelPhone: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on `queue` (the manager's queue).
    let queue = DispatchQueue(label: "simultaneous.phone")
    var manager: CBMCentralManager?
    var peripheral: CBMPeripheral?
    var ready = false
    /// What its delegate heard, in order.
    var heard: [String] = []
    var channels: [CBML2CAPChannel] = []

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: nil) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard self.peripheral == nil else { return }
        self.peripheral = peripheral
        peripheral.delegate = self
        central.stopScan()
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        peripheral.discoverCharacteristics(nil, for: peripheral.services![0])
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?)
    {
        ready = true
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        heard.append("wrote")
    }

    func peripheral(_ peripheral: CBMPeripheral, didOpen channel: CBML2CAPChannel?, error: (any Error)?) {
        heard.append("open")
        if let channel { channels.append(channel) }
    }
}

/// Requests that reach a peripheral app at one instant, each heard once.
@Suite(.timeLimit(.minutes(10)))
struct SimultaneousRequestsTests {
    /// The phone writes with response and opens the firmware's channel in one instant; returns
    /// what each app's delegate heard and the bridge log.
    private func writeAndOpenTogether(_ configuration: MockBLEBridge.Configuration) async throws -> (
        firmware: [String], phone: [String], log: String
    ) {
        let bridge = MockBLEBridge(configuration: configuration)
        let firmware = ChannelFirmware()
        let phone = ChannelPhone()
        try await bridge.run {
            try await bridge.runOnAppQueue(firmware.queue) {
                firmware.manager = CBMPeripheralManager(bridge: bridge, delegate: firmware, queue: firmware.queue)
            }
            try await bridge.runOnAppQueue(phone.queue) {
                phone.manager = CBMCentralManager(bridge: bridge, delegate: phone, queue: phone.queue)
            }
            try await bridge.waitForApp {
                phone.queue.sync { phone.ready } && firmware.queue.sync { firmware.psm != 0 }
            }
            let psm = firmware.queue.sync { firmware.psm }
            try await bridge.runOnAppQueue(phone.queue) {
                let peripheral = phone.peripheral!
                peripheral.writeValue(
                    Data(count: 20), for: peripheral.services![0].characteristics![0], type: .withResponse)
                peripheral.openL2CAPChannel(psm)
            }
            await bridge.advance(by: .seconds(2))
        }
        let log = await bridge.log.map { "\($0)" }.joined(separator: "\n")
        return (firmware.queue.sync { firmware.heard }, phone.queue.sync { phone.heard }, log)
    }

    @Test(
        "A write request and a channel opened at one instant each reach the peripheral app's delegate once",
        arguments: [MockBLEBridge.Configuration(seed: 97), .realistic(seed: 97)])
    func writeAndChannelEachHeardOnce(configuration: MockBLEBridge.Configuration) async throws {
        // (Twice, before: handing the first on, the front end read the manager's state, which
        // performed the batch being handed on a second time.)
        var logs: Set<String> = []
        for _ in 0..<12 {
            let (firmware, phone, log) = try await writeAndOpenTogether(configuration)
            #expect(firmware.sorted() == ["open", "write"])
            #expect(phone.sorted() == ["open", "wrote"])
            logs.insert(log)
        }
        #expect(logs.count == 1, "one seed, one log")
    }
}
