import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A watch's firmware written against `CBMPeripheralManager`: publishes one service of the given
/// characteristics once powered on, advertises it, and records what it hears (main queue).
private final class FirmwareApp: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue (the manager's queue).
    static let service = CBMUUID(string: "7A100001-9C2B-4F1A-8D3E-6B0F1C2D3E4F")

    var manager: CBMPeripheralManager!
    let characteristics: [CBMMutableCharacteristic]
    var addError: (any Error)?
    /// The code of each `didAdd`'s error (`nil` for none), in order.
    var addErrors: [Int?] = []
    var added = false
    var subscribed: [CBMCentral] = []
    /// The values of the writes it received, in order.
    var written: [Data] = []
    var onSubscribe: ((CBMPeripheralManager) -> Void)?
    var onReady: ((CBMPeripheralManager) -> Void)?
    var onRead: ((CBMPeripheralManager, CBMATTRequest) -> Void)?

    init(
        bridge: MockBLEBridge, characteristics: [CBMMutableCharacteristic],
        configuration: MockPeripheralManager.Configuration?
    ) {
        self.characteristics = characteristics
        super.init()
        manager = CBMPeripheralManager(bridge: bridge, delegate: self, queue: nil, configuration: configuration)
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let service = CBMMutableService(type: Self.service, primary: true)
        service.characteristics = characteristics
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        addError = error
        addErrors.append((error as NSError?)?.code)
        added = true
        if error == nil { peripheral.startAdvertising([CBMAdvertisementDataServiceUUIDsKey: [Self.service]]) }
    }

    func peripheralManager(
        _ peripheral: CBMPeripheralManager, central: CBMCentral, didSubscribeTo characteristic: CBMCharacteristic
    ) {
        subscribed.append(central)
        onSubscribe?(peripheral)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveWrite requests: [CBMATTRequest]) {
        written += requests.compactMap(\.value)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest) {
        onRead?(peripheral, request)
    }

    func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBMPeripheralManager) { onReady?(peripheral) }
}

/// A phone app written against `CBMCentralManager`: finds the firmware's service, connects and
/// discovers its characteristics, and records the values it hears (main queue).
private final class PhoneApp: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue (the manager's queue).
    var manager: CBMCentralManager!
    var peripheral: CBMPeripheral?
    var characteristics: [CBMUUID: CBMCharacteristic] = [:]
    /// Each value heard (a read's or a notification's), or its error's domain and code.
    var values: [String] = []

    init(bridge: MockBLEBridge, configuration: MockCentralManager.Configuration? = nil) {
        super.init()
        manager = CBMCentralManager(bridge: bridge, delegate: self, queue: nil, configuration: configuration)
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {
        if central.state == .poweredOn { central.scanForPeripherals(withServices: [FirmwareApp.service]) }
    }

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        guard self.peripheral == nil else { return }
        central.stopScan()
        self.peripheral = peripheral
        peripheral.delegate = self
        central.connect(peripheral)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        peripheral.discoverServices([FirmwareApp.service])
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: (any Error)?) {
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: (any Error)?
    ) {
        for characteristic in service.characteristics ?? [] { characteristics[characteristic.uuid] = characteristic }
    }

    func peripheral(
        _ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: (any Error)?
    ) {
        if let error = error as NSError? {
            values.append("\(error.domain) \(error.code)")
        } else {
            values.append(characteristic.value.map { String(decoding: $0, as: UTF8.self) } ?? "nil")
        }
    }
}

/// What `updateValue` and a write without response promise through the CoreBluetooth-shaped API:
/// an update the app was told was sent is sent, a strict manager's refusal (which the call cannot
/// throw) is not silent, and a cached value makes a characteristic readable, as CoreBluetooth
/// documents.
@Suite(.timeLimit(.minutes(10)))
struct UpdateContractTests {
    private static func characteristic(_ number: Int) -> CBMUUID {
        CBMUUID(string: String(format: "7A1000%02X-9C2B-4F1A-8D3E-6B0F1C2D3E4F", number))
    }

    /// Both apps, the phone connected with the firmware's characteristics discovered.
    @MainActor
    private static func connect(
        _ bridge: MockBLEBridge, _ characteristics: [CBMMutableCharacteristic],
        firmware: MockPeripheralManager.Configuration? = nil, phone: MockCentralManager.Configuration? = nil
    ) async throws -> (FirmwareApp, PhoneApp) {
        let watch = FirmwareApp(bridge: bridge, characteristics: characteristics, configuration: firmware)
        try await bridge.waitForApp { watch.manager.isAdvertising }
        let app = PhoneApp(bridge: bridge, configuration: phone)
        try await bridge.waitForApp { app.characteristics.count == characteristics.count }
        return (watch, app)
    }

    /// A strict peripheral manager (`strictLengths` or `strictMisuse`) refuses an update longer
    /// than a subscriber's link carries, where CoreBluetooth would cut it: as `updateValue`
    /// cannot throw, the refusal is noted in `apiMisuses` and recorded in the bridge's misuses
    /// (which `finish()` reports), and nothing reaches the central. It used to vanish without a
    /// trace, so strictness made a test quieter than the default, which cuts the value and
    /// records that.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aStrictPeripheralManagersTooLongUpdateIsNotSentAndIsRecordedAsAMisuse(strictMisuse: Bool) async throws {
        let bridge = MockBLEBridge(seed: 1)
        var configuration = MockPeripheralManager.Configuration.fast
        if strictMisuse { configuration.strictMisuse = true } else { configuration.strictLengths = true }
        let firmware = configuration
        let (sent, heard, noted) = try await bridge.run { @MainActor () -> (Bool, [String], [String]) in
            let file = CBMMutableCharacteristic(
                type: Self.characteristic(2), properties: [.notify], value: nil, permissions: [])
            let (watch, phone) = try await Self.connect(bridge, [file], firmware: firmware)
            phone.peripheral!.setNotifyValue(true, for: phone.characteristics[Self.characteristic(2)]!)
            try await bridge.waitForApp { watch.subscribed.count == 1 }
            let limit = watch.subscribed[0].maximumUpdateValueLength
            let sent = watch.manager.updateValue(Data(count: limit + 1), for: file, onSubscribedCentrals: nil)
            try await bridge.clock.sleep(for: .seconds(1))
            return (sent, phone.values, watch.manager.apiMisuses)
        }
        let misuses = await bridge.misuses
        #expect(sent)
        #expect(heard.isEmpty)
        #expect(noted.count == 1)
        #expect(noted.first?.hasPrefix("updateValue: ") == true && noted.first?.hasSuffix("; not sent") == true)
        #expect(misuses.map(\.kind) == [.valueTruncated])
        #expect(misuses.first?.error == .valueTooLong(operation: "updateValue", length: 513, maximum: 512))
        #expect(misuses.first?.peripheral != nil)
        #expect(misuses.first?.characteristic == Self.characteristic(2).bluetoothUUID)
    }

    /// A strict central manager refuses a write without response longer than the link carries:
    /// the write is not sent, the refusal is noted in `apiMisuses` and recorded in the bridge's
    /// misuses; the next write goes out. It used to leave only a line in the bridge's log.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aStrictCentralManagersTooLongWriteWithoutResponseIsNotSentAndIsRecordedAsAMisuse(strictMisuse: Bool)
        async throws
    {
        let bridge = MockBLEBridge(seed: 1)
        var configuration = MockCentralManager.Configuration.fast
        if strictMisuse { configuration.strictMisuse = true } else { configuration.strictLengths = true }
        let phoneConfiguration = configuration
        let (limit, arrived, noted) = try await bridge.run { @MainActor () -> (Int, [Data], [String]) in
            let chunk = CBMMutableCharacteristic(
                type: Self.characteristic(2), properties: [.writeWithoutResponse], value: nil,
                permissions: [.writeable])
            let (watch, phone) = try await Self.connect(bridge, [chunk], phone: phoneConfiguration)
            let peripheral = phone.peripheral!
            let limit = peripheral.maximumWriteValueLength(for: .withoutResponse)
            let target = phone.characteristics[Self.characteristic(2)]!
            peripheral.writeValue(Data(count: limit + 1), for: target, type: .withoutResponse)
            peripheral.writeValue(Data([1]), for: target, type: .withoutResponse)
            try await bridge.clock.sleep(for: .seconds(1))
            return (limit, watch.written, phone.manager.apiMisuses)
        }
        let misuses = await bridge.misuses
        #expect(arrived == [Data([1])])
        #expect(noted.count == 1)
        #expect(noted.first?.hasPrefix("writeValue(_:for:type: .withoutResponse): ") == true)
        #expect(misuses.map(\.kind) == [.valueTruncated])
        #expect(
            misuses.first?.error
                == .valueTooLong(
                    operation: "writeValue(_:for:type: .withoutResponse)", length: limit + 1, maximum: limit))
    }

    /// An update of a published characteristic that can neither notify nor indicate is not
    /// sent, and noted (the async API throws `characteristicCannotNotify` for it).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anUpdateOfACharacteristicThatCannotNotifyIsNotedAsNotSent() async throws {
        let bridge = MockBLEBridge(seed: 1)
        let noted = try await bridge.run { @MainActor () -> [String] in
            let status = CBMMutableCharacteristic(
                type: Self.characteristic(2), properties: [.read], value: nil, permissions: [.readable])
            let (watch, _) = try await Self.connect(bridge, [status])
            _ = watch.manager.updateValue(Data([1]), for: status, onSubscribedCentrals: nil)
            try await bridge.clock.sleep(for: .milliseconds(10))
            return watch.manager.apiMisuses
        }
        #expect(noted.count == 1)
        #expect(noted.first?.hasPrefix("updateValue: Characteristic \(Self.characteristic(2).bluetoothUUID)") == true)
        #expect(noted.first?.contains("has neither the notify nor the indicate property") == true)
        #expect(noted.first?.hasSuffix("; not sent") == true)
        #expect(await bridge.misuses.isEmpty)
    }

    /// Two phones subscribe at one instant, and the firmware pumps updates from the first
    /// `didSubscribeTo` it hears, through a queue of five (or two): the second phone's
    /// subscription is in the simulation before its callback reaches the firmware, so each update
    /// takes two places of the queue where the firmware counted one. Every update `updateValue`
    /// said was sent still reaches each phone subscribed by then, in order (those the queue had no
    /// room for wait for it to drain, before any later one): two of them used to be dropped. The
    /// firmware hears it may send again only once those held updates leave room: through a queue
    /// of two they filled it again, and the ready callback came with no room.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [21, 22, 23] as [UInt64], [5, 2])
    func everyUpdateTheAppWasToldWasSentReachesTheSubscribersInOrder(seed: UInt64, capacity: Int) async throws {
        let bridge = MockBLEBridge(seed: seed)
        var configuration = MockPeripheralManager.Configuration.fast
        configuration.updateQueue = .realistic(capacity: capacity)
        let firmware = configuration
        let total = 20
        let (first, second, refusedInLog, refusals, readyMatchesRefusals, refusedAfterReady) = try await bridge.run {
            @MainActor () -> ([Int], [Int], Int, Int, Bool, Int) in
            let file = CBMMutableCharacteristic(
                type: Self.characteristic(2), properties: [.notify], value: nil, permissions: [])
            let (watch, phone) = try await Self.connect(bridge, [file], firmware: firmware)
            let other = PhoneApp(bridge: bridge)
            try await bridge.waitForApp { other.characteristics.count == 1 }
            var sent = 0
            var refusals = 0
            var readies = 0
            var refusedAfterReady = 0
            func pump(_ manager: CBMPeripheralManager, afterReady: Bool = false) {
                var first = afterReady
                while sent < total {
                    guard manager.updateValue(Data("\(sent)".utf8), for: file, onSubscribedCentrals: nil) else {
                        refusals += 1
                        if first { refusedAfterReady += 1 }
                        return
                    }
                    first = false
                    sent += 1
                }
            }
            watch.onSubscribe = { manager in if watch.subscribed.count == 1 { pump(manager) } }
            watch.onReady = { manager in
                readies += 1
                pump(manager, afterReady: true)
            }
            phone.peripheral!.setNotifyValue(true, for: phone.characteristics[Self.characteristic(2)]!)
            other.peripheral!.setNotifyValue(true, for: other.characteristics[Self.characteristic(2)]!)
            try await bridge.waitForApp { sent == total }
            try await bridge.clock.sleep(for: .seconds(1))
            let refused = await bridge.log.filter { ($0.detail ?? "").contains("updateValue returned false") }.count
            return (
                phone.values.compactMap { Int($0) }, other.values.compactMap { Int($0) }, refused, refusals,
                readies == refusals && refusals > 0, refusedAfterReady
            )
        }
        #expect(first == Array(0..<total))
        #expect(second == Array(0..<total).suffix(second.count))
        #expect(!second.isEmpty)
        // Each `false` the firmware heard is in the log, and no update it was told was sent.
        #expect(refusedInLog == refusals)
        // A ready callback for each `false` the firmware heard, and none for the queue filling
        // with updates it was told were sent.
        #expect(readyMatchesRefusals)
        // A ready callback comes once there is room: the first update after it is sent (the
        // updates held for the queue to drain, sent before it, may fill the queue again).
        #expect(refusedAfterReady == 0)
    }

    /// A firmware that drops an update `updateValue` refused (its transmit queue full) and never
    /// sends it again leaves its phone waiting: the refusal is in the bridge's log, as the async
    /// API's is, and the stall report names the update not sent again (through this API both
    /// were missing: the front end refused from its own count of the queue and told no one).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func anUpdateRefusedForAFullQueueIsLoggedAndOneNeverSentAgainIsNamedInTheStall() async throws {
        let bridge = MockBLEBridge(seed: 1)
        var configuration = MockPeripheralManager.Configuration.fast
        configuration.updateQueue = .realistic(capacity: 2)
        let firmware = configuration
        let status = CBMMutableCharacteristic(
            type: Self.characteristic(2), properties: [.notify], value: nil, permissions: [])
        let box = SentValues()
        let stall = try await #require(throws: MockBLEBridge.Stall.self) {
            try await bridge.run(stallPatience: .zero) { @MainActor in
                let (watch, phone) = try await Self.connect(bridge, [status], firmware: firmware)
                phone.peripheral!.setNotifyValue(true, for: phone.characteristics[Self.characteristic(2)]!)
                try await bridge.waitForApp { watch.subscribed.count == 1 }
                box.sent = (0..<5).map {
                    watch.manager.updateValue(Data([UInt8($0)]), for: status, onSubscribedCentrals: nil)
                }
                // The phone waits for the last update, which the firmware dropped.
                try await bridge.waitForApp { phone.values.count == 5 }
            }
        }
        #expect(box.sent == [true, true, false, false, false])
        let refusals = await bridge.log.filter { $0.detail == "transmit queue full: updateValue returned false" }
        #expect(refusals.map(\.value) == [Data([2]), Data([3]), Data([4])])
        #expect(
            refusals.allSatisfy { $0.kind == .notification && $0.attribute == Self.characteristic(2).bluetoothUUID })
        let last = try #require(refusals.last)
        let ready = try #require(await bridge.log.last { $0.kind == .readyToUpdateSubscribers })
        #expect(ready.time >= last.time)
        #expect(
            stall.hints.contains {
                $0.contains(
                    "had updateValue of \(Self.characteristic(2).bluetoothUUID)@\(last.handle!) refused at \(last.time)"
                )
                    && $0.contains("has sent no update since")
            }, "\(stall.hints)")
    }

    /// A read answered with more than an attribute holds is cut to 512 bytes and recorded as a
    /// misuse naming the call the app made, `respond(to:withResult:)` (it named the async API's
    /// `respond(to:withResult:value:)`, which a CoreBluetooth app never calls).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aTooLongReadAnswerIsAMisuseOfTheCallTheAppMade() async throws {
        let bridge = MockBLEBridge(seed: 1)
        let log = CBMMutableCharacteristic(
            type: Self.characteristic(3), properties: [.read], value: nil, permissions: [.readable])
        let heard = try await bridge.run { @MainActor () -> [String] in
            let (watch, phone) = try await Self.connect(bridge, [log])
            watch.onRead = { manager, request in
                request.value = Data(count: 600)
                manager.respond(to: request, withResult: .success)
            }
            phone.peripheral!.readValue(for: phone.characteristics[Self.characteristic(3)]!)
            try await bridge.waitForApp { !phone.values.isEmpty }
            return phone.values
        }
        #expect(heard == [String(decoding: Data(count: 512), as: UTF8.self)])
        let misuses = await bridge.misuses
        #expect(misuses.map(\.kind) == [.valueTruncated])
        #expect(misuses.first?.error == .valueTooLong(operation: "respond(to:withResult:)", length: 600, maximum: 512))
    }

    /// One characteristic object in two services is refused when the second is added
    /// (`CBError.invalidParameters`, and a note in `apiMisuses`): a characteristic has one
    /// service, and an update of the object could reach one copy only, chosen by the order of a
    /// dictionary, which differed from process to process. The first service keeps it.
    @Test func oneCharacteristicObjectInTwoServicesIsRefused() async throws {
        let bridge = MockBLEBridge(seed: 1)
        let status = CBMMutableCharacteristic(
            type: Self.characteristic(2), properties: [.notify], value: nil, permissions: [])
        let (errors, noted, owner) = try await bridge.run { @MainActor () -> ([Int?], [String], CBMUUID?) in
            let watch = FirmwareApp(bridge: bridge, characteristics: [], configuration: nil)
            try await bridge.waitForApp { watch.added }
            let first = CBMMutableService(type: Self.characteristic(0x10), primary: true)
            first.characteristics = [status]
            let second = CBMMutableService(type: Self.characteristic(0x11), primary: true)
            second.characteristics = [status]
            watch.manager.add(first)
            watch.manager.add(second)
            try await bridge.waitForApp { watch.addErrors.count == 3 }
            return (watch.addErrors, watch.manager.apiMisuses, status.service?.uuid)
        }
        #expect(errors == [nil, nil, CBMError.Code.invalidParameters.rawValue])
        #expect(
            noted
                == [
                    "add: characteristic \(Self.characteristic(2)) of service \(Self.characteristic(0x11)) is already "
                        + "in service \(Self.characteristic(0x10)), published by this manager; a characteristic belongs "
                        + "to one service (make another CBMMutableCharacteristic)"
                ])
        #expect(owner == Self.characteristic(0x10))
    }

    /// A characteristic listed twice in the one service added is refused the same way.
    @Test func oneCharacteristicObjectTwiceInAServiceIsRefused() async throws {
        let bridge = MockBLEBridge(seed: 1)
        let status = CBMMutableCharacteristic(
            type: Self.characteristic(2), properties: [.notify], value: nil, permissions: [])
        let (errors, noted) = try await bridge.run { @MainActor () -> ([Int?], [String]) in
            let watch = FirmwareApp(bridge: bridge, characteristics: [status, status], configuration: nil)
            try await bridge.waitForApp { watch.added }
            return ([(watch.addError as NSError?)?.code], watch.manager.apiMisuses)
        }
        #expect(errors == [CBMError.Code.invalidParameters.rawValue])
        #expect(
            noted
                == [
                    "add: characteristic \(Self.characteristic(2)) of service \(FirmwareApp.service) appears twice in "
                        + "service \(FirmwareApp.service); a characteristic belongs to one service (make another "
                        + "CBMMutableCharacteristic)"
                ])
    }

    /// CoreBluetooth: a characteristic made with a value "caches the value and sets its properties
    /// and permissions to read and readable". So one made `.read` without `readable`, or readable
    /// with no properties, is read with its cached value (it used to be published unreadable:
    /// every read failed with ATT's Read Not Permitted), and its object says `read` and
    /// `readable`. One that may also be written keeps that property, and is refused as before.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aCachedValueMakesACharacteristicReadableAsCoreBluetoothDocuments(realistic: Bool) async throws {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 1) : .init(seed: 1))
        let version = CBMMutableCharacteristic(
            type: Self.characteristic(2), properties: [.read], value: Data("1.0".utf8), permissions: [])
        let model = CBMMutableCharacteristic(
            type: Self.characteristic(3), properties: [], value: Data("W1".utf8), permissions: [.readable])
        let dynamic = CBMMutableCharacteristic(
            type: Self.characteristic(4), properties: [.write], value: nil, permissions: [.writeable])
        #expect([version.properties, model.properties, dynamic.properties] == [.read, .read, .write])
        #expect([version.permissions, model.permissions, dynamic.permissions] == [.readable, .readable, .writeable])
        let writable = CBMMutableCharacteristic(
            type: Self.characteristic(5), properties: [.write], value: Data([1]), permissions: [.writeable])
        #expect(writable.properties == [.read, .write])
        let (heard, misuses) = try await bridge.run { @MainActor () -> ([String], [String]) in
            let (watch, phone) = try await Self.connect(bridge, [version, model])
            for uuid in [Self.characteristic(2), Self.characteristic(3)] {
                phone.peripheral!.readValue(for: phone.characteristics[uuid]!)
            }
            try await bridge.waitForApp { phone.values.count == 2 }
            return (phone.values, watch.manager.apiMisuses)
        }
        #expect(heard == ["1.0", "W1"])
        #expect(misuses.isEmpty)
        let refused = try await bridge.run { @MainActor () -> String? in
            let watch = FirmwareApp(bridge: bridge, characteristics: [writable], configuration: nil)
            try await bridge.waitForApp { watch.added }
            return watch.addError.map { "\(($0 as NSError).domain) \(($0 as NSError).code)" }
        }
        #expect(refused == "CBErrorDomain 1")
    }
}

/// What a firmware's `updateValue` calls returned, written on the main actor in a run that
/// ends in a stall and read after it.
private final class SentValues: @unchecked Sendable {
    // @unchecked Sendable: written by the run's body before the run ends, read after.
    var sent: [Bool] = []
}
