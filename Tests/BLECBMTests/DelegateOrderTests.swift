// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A delegate that records every callback, in order, as text.
final class Recorder: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue (the managers' queue in these tests).
    var calls: [String] = []
    var peripheral: CBMPeripheral?
    var errors: [any Error] = []

    func note(_ call: String, _ error: (any Error)? = nil) {
        calls.append(error.map { "\(call) error=\(($0 as NSError).domain)/\(($0 as NSError).code)" } ?? call)
        if let error { errors.append(error) }
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) { note("state \(central.state)") }
    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi RSSI: NSNumber
    ) {
        if self.peripheral == nil {
            self.peripheral = peripheral
            peripheral.delegate = self
            note("discover \(advertisementData[CBMAdvertisementDataLocalNameKey] as? String ?? "?")")
        }
    }
    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        note("connect state=\(peripheral.state)")
    }
    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, error: (any Error)?
    ) {
        note("disconnect services=\(peripheral.services == nil ? "nil" : "kept")", error)
    }
    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        note("services \(peripheral.services?.count ?? -1)", error)
    }
    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?)
    {
        note("characteristics \(service.characteristics?.count ?? -1)", error)
    }
    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        note("value \(characteristic.value.map { Array($0) } ?? [])", error)
    }
    func peripheral(
        _ peripheral: CBMPeripheral, didWriteValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        note("wrote", error)
    }
    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateNotificationStateFor characteristic: CBMCharacteristic,
        error: (any Error)?
    ) {
        note("notifying \(characteristic.isNotifying)", error)
    }
    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBMPeripheral) { note("ready") }
    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverDescriptorsFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        note("descriptors \(characteristic.descriptors?.map(\.uuid.uuidString) ?? [])", error)
    }
    func peripheral(_ peripheral: CBMPeripheral, didWriteValueFor descriptor: CBMDescriptor, error: (any Error)?) {
        note("wrote descriptor \(descriptor.uuid.uuidString)", error)
    }
}

@Suite(.timeLimit(.minutes(10)))
struct DelegateOrderTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func callbacksFollowCoreBluetoothsOrder(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 8) : .init(seed: 8))
        let device = try await BlinkyDevice.make(on: bridge, buttonPressed: true)
        let calls = try await bridge.run { @MainActor () -> [String] in
            let recorder = Recorder()
            let manager = CBMCentralManager(delegate: recorder, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            manager.scanForPeripherals(withServices: [CBMUUID(string: "00001523-1212-EFDE-1523-785FEABCD123")])
            try await bridge.waitForApp { recorder.peripheral != nil }
            let peripheral = recorder.peripheral!
            manager.stopScan()
            manager.connect(peripheral)
            #expect(peripheral.state == .connecting)
            try await bridge.waitForApp { peripheral.state == .connected }
            peripheral.discoverServices(nil)
            try await bridge.waitForApp { peripheral.services != nil }
            let service = peripheral.services![0]
            #expect(peripheral.services![0] === service)
            peripheral.discoverCharacteristics(nil, for: service)
            try await bridge.waitForApp { service.characteristics?.count == 2 }
            let button = service.characteristics![0]
            let led = service.characteristics![1]
            peripheral.readValue(for: button)
            peripheral.writeValue(Data([1]), for: led, type: .withResponse)
            peripheral.setNotifyValue(true, for: button)
            try await bridge.waitForApp { button.isNotifying }
            // The same objects while connected.
            #expect(peripheral.services![0] === service && service.characteristics![0] === button)
            await device.peripheral.simulateDisconnection(
                of: manager.simulatedCentral!.identifier, error: CoreBluetoothError(.connectionTimeout))
            try await bridge.waitForApp { peripheral.state == .disconnected }
            #expect(peripheral.services == nil)
            #expect(!button.isNotifying)
            #expect(manager.apiMisuses.isEmpty)
            // An attribute of the old connection is refused, as CoreBluetooth refuses it.
            peripheral.readValue(for: button)
            #expect(manager.apiMisuses.count == 1)
            return recorder.calls
        }
        #expect(
            calls == [
                "state poweredOn", "discover nRF Blinky", "connect state=connected", "services 1", "characteristics 2",
                "value [1]", "wrote", "notifying true", "disconnect services=nil error=CBErrorDomain/6",
            ])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anInjectedReadErrorArrivesAsAnATTErrorInCoreBluetoothsDomain() async throws {
        let bridge = MockBLEBridge(configuration: .realistic(seed: 2))
        _ = try await BlinkyDevice.make(on: bridge, buttonPressed: true)
        let error = try await bridge.run { @MainActor () -> NSError? in
            let recorder = Recorder()
            let manager = CBMCentralManager(delegate: recorder, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            await manager.simulatedCentral!.inject(
                ErrorInjection(.read, failure: .att(.insufficientAuthorization)))
            manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { recorder.peripheral != nil }
            let peripheral = recorder.peripheral!
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            peripheral.discoverServices(nil)
            try await bridge.waitForApp { peripheral.services != nil }
            peripheral.discoverCharacteristics(nil, for: peripheral.services![0])
            try await bridge.waitForApp { peripheral.services![0].characteristics != nil }
            peripheral.readValue(for: peripheral.services![0].characteristics![0])
            try await bridge.waitForApp { !recorder.errors.isEmpty }
            return recorder.errors.first.map { $0 as NSError }
        }
        #expect(error?.domain == CBMATTErrorDomain)
        #expect(error?.code == 0x08)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theSameSeedGivesTheSameLog() async throws {
        func once() async throws -> [String] {
            let bridge = MockBLEBridge(configuration: .realistic(seed: 99))
            _ = try await BlinkyDevice.make(on: bridge)
            try await bridge.run { @MainActor in
                let recorder = Recorder()
                let manager = CBMCentralManager(delegate: recorder, queue: nil)
                try await bridge.waitForApp { manager.state == .poweredOn }
                manager.scanForPeripherals(withServices: nil)
                try await bridge.waitForApp { recorder.peripheral != nil }
                let peripheral = recorder.peripheral!
                manager.connect(peripheral)
                try await bridge.waitForApp { peripheral.state == .connected }
                peripheral.discoverServices(nil)
                try await bridge.waitForApp { peripheral.services != nil }
                peripheral.discoverCharacteristics(nil, for: peripheral.services![0])
                try await bridge.waitForApp { peripheral.services![0].characteristics != nil }
                for characteristic in peripheral.services![0].characteristics! {
                    peripheral.readValue(for: characteristic)
                }
                try await bridge.waitForApp { recorder.calls.filter { $0.hasPrefix("value") }.count == 2 }
            }
            return await bridge.log.map { "\($0.time) \($0.kind) \($0.handle.map(String.init) ?? "-")" }
        }
        let first = try await once()
        #expect(first.count > 10)
        #expect(try await once() == first)
    }

    /// The queue holds the realistic central's 20 write commands, or fewer when the bridge's
    /// limits say so (as an exploration's conditions do); a larger limit changes nothing.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [(nil, 20), (3, 3), (40, 20)] as [(Int?, Int)])
    func writesWithoutResponseStopWhenTheQueueIsFullAndTheDelegateHearsWhenItDrains(limit: Int?, capacity: Int)
        async throws
    {
        var configuration = MockBLEBridge.Configuration.realistic(seed: 4)
        configuration.limits.writeWithoutResponseQueueCapacity = limit
        let bridge = MockBLEBridge(configuration: configuration)
        _ = try await BlinkyDevice.make(on: bridge, ledWithoutResponse: true)
        let (sent, calls) = try await bridge.run { @MainActor () -> (Int, [String]) in
            let recorder = Recorder()
            let manager = CBMCentralManager(delegate: recorder, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { recorder.peripheral != nil }
            let peripheral = recorder.peripheral!
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }
            #expect(peripheral.maximumWriteValueLength(for: .withoutResponse) == 182)
            #expect(peripheral.maximumWriteValueLength(for: .withResponse) == 512)
            peripheral.discoverServices(nil)
            try await bridge.waitForApp { peripheral.services != nil }
            peripheral.discoverCharacteristics(nil, for: peripheral.services![0])
            try await bridge.waitForApp { peripheral.services![0].characteristics != nil }
            let led = peripheral.services![0].characteristics![1]
            var sent = 0
            while peripheral.canSendWriteWithoutResponse && sent < 100 {
                peripheral.writeValue(Data([UInt8(sent)]), for: led, type: .withoutResponse)
                sent += 1
            }
            try await bridge.waitForApp { recorder.calls.contains("ready") }
            #expect(peripheral.canSendWriteWithoutResponse)
            return (sent, recorder.calls)
        }
        #expect(sent == capacity)
        // No callback for writes without response; the ready callback once the queue drained.
        #expect(!calls.contains("wrote"))
        #expect(calls.last == "ready")
        // Every write was sent (none dropped for a full queue).
        let written = await bridge.log.filter { $0.kind == .write && $0.writeType == .withoutResponse }
        #expect(written.map { $0.value?.first } == (0..<capacity).map { UInt8($0) })
        #expect(written.allSatisfy { $0.error == nil })
    }

    #if !canImport(CoreBluetooth)
        // (Where CoreBluetooth exists, such a manager is CoreBluetooth's own.)
        @Test func aManagerCreatedOutsideAnyBridgeScopeReportsUnsupportedAndListsWhatItIgnored() async {
            let manager = CBMCentralManager(delegate: nil, queue: DispatchQueue(label: "test"))
            #expect(manager.state == .unsupported)
            #expect(manager.simulatedCentral == nil)
            #expect(manager.retrievePeripherals(withIdentifiers: [UUID()]).isEmpty)
            #expect(manager.apiMisuses == [])
            manager.scanForPeripherals(withServices: nil)
            #expect(
                manager.apiMisuses == [
                    "scanForPeripherals: the manager is not powered on (unsupported: no test bridge or SimulatedSystem)"
                ])
        }

        // A `Task {}` inherits the task-local bridge of the code that starts it; a detached task,
        // or code on a queue of the app's own, does not (README, BLECBM's articles). (Checked with
        // the bridge current, not in a run: a run's driver takes the body's waits on tasks and
        // queues outside it for a stall when they take longer than its patience, on a loaded
        // machine.)
        @Test func aManagerCreatedInATaskStartedWithTheBridgeCurrentJoinsItAndOneInADetachedTaskDoesNot() async {
            let bridge = MockBLEBridge()
            let (inTask, detached, onOwnQueue) = await MockBLEBridge.$current.withValue(bridge) {
                let inTask = await Task { CBMCentralManager(delegate: nil, queue: DispatchQueue(label: "app")).bridge }
                    .value
                let detached = await Task.detached {
                    CBMCentralManager(delegate: nil, queue: DispatchQueue(label: "app")).bridge
                }.value
                let onOwnQueue: MockBLEBridge? = await withCheckedContinuation { continuation in
                    DispatchQueue(label: "app").async {
                        continuation.resume(
                            returning: CBMCentralManager(delegate: nil, queue: DispatchQueue(label: "app")).bridge)
                    }
                }
                return (inTask, detached, onOwnQueue)
            }
            #expect(inTask === bridge)
            #expect(detached == nil)
            #expect(onOwnQueue == nil)
        }
    #endif

    @Test func uuidsBehaveAsCoreBluetoothsDo() throws {
        #expect(CBMUUID(string: "180d").uuidString == "180D")
        #expect(CBMUUID(string: "0000180D-0000-1000-8000-00805F9B34FB") == CBMUUID(string: "180D"))
        #expect(CBMUUID(string: "0000180D-0000-1000-8000-00805F9B34FB").data == Data([0x18, 0x0D]))
        #expect(CBMUUID(string: "12345678").uuidString == "12345678")
        #expect(
            CBMUUID(string: "00001523-1212-efde-1523-785feabcd123").uuidString == "00001523-1212-EFDE-1523-785FEABCD123"
        )
        #expect(throws: BluetoothUUID.ParseError.self) { try CBMUUID(validating: "not a uuid") }
        #expect(Set([CBMUUID(string: "180D"), CBMUUID(string: "180d")]).count == 1)
    }

    // Apps write 16-bit UUIDs as "0x180D" (CoreBluetooth takes the prefix; AsyncCoreBluetooth's
    // tests, run on CoreBluetoothMock, whose CBMUUID is CBUUID, use "0xFFE0").
    @Test func aShortUUIDWrittenWithA0xPrefixIsTheSameUUID() throws {
        #expect(CBMUUID(string: "0x180D") == CBMUUID(string: "180D"))
        #expect(CBMUUID(string: "0x180d").uuidString == "180D")
        #expect(CBMUUID(string: "0x12345678").uuidString == "12345678")
        // The prefix is taken only before 4 or 8 digits; a bad digit after it is named where
        // it stands in the string given.
        #expect(throws: BluetoothUUID.ParseError(input: "0x18G0", reason: .invalidCharacter("G", offset: 4))) {
            try CBMUUID(validating: "0x18G0")
        }
        #expect(throws: BluetoothUUID.ParseError(input: "0x180", reason: .invalidLength(5))) {
            try CBMUUID(validating: "0x180")
        }
        #expect(throws: BluetoothUUID.ParseError(input: "0X180D", reason: .invalidLength(6))) {
            try CBMUUID(validating: "0X180D")
        }
        // A hyphen after the prefix too, and the message does not tell the app to drop a prefix
        // that was taken.
        #expect(throws: BluetoothUUID.ParseError(input: "0x-180", reason: .misplacedHyphen(offset: 2))) {
            try CBMUUID(validating: "0x-180")
        }
        #expect(throws: BluetoothUUID.ParseError(input: "0x18-0", reason: .misplacedHyphen(offset: 4))) {
            try CBMUUID(validating: "0x18-0")
        }
        let badDigit = BluetoothUUID.ParseError(input: "0x18G0", reason: .invalidCharacter("G", offset: 4))
        #expect(
            badDigit.description
                == "\"0x18G0\" is not a Bluetooth UUID: \"G\" at offset 4 is not a hexadecimal digit (0-9, A-F); "
                + "remove spaces and braces.")
        // Where the prefix itself is the problem (a BluetoothUUID takes none), the message says so.
        #expect(
            BluetoothUUID.ParseError(input: "0x18", reason: .invalidCharacter("x", offset: 1)).description.hasSuffix(
                "remove spaces, braces and prefixes such as \"0x\"."))
    }

    @Test func errorsBridgeToNSErrorWithCoreBluetoothsDomainsAndCodes() {
        let disconnected = CBMError(.peripheralDisconnected) as NSError
        #expect(disconnected.domain == "CBErrorDomain" && disconnected.code == 7)
        let att = CBMATTError(.invalidAttributeValueLength) as NSError
        #expect(att.domain == "CBATTErrorDomain" && att.code == 0x0D)
        #expect((CBMError(.connectionTimeout) as any Error as? CBMError)?.code == .connectionTimeout)
    }
}
