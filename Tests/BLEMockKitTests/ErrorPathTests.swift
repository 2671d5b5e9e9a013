import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// Every call a central can make that touches the radio, with the operation name the bridge
/// reports when the central is not powered on.
enum CentralOperation: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case scan, connect, cancelConnection
    case discoverServices, discoverIncludedServices, discoverCharacteristics, discoverDescriptors
    case readCharacteristic, readDescriptor, writeWithResponse, writeWithoutResponse, writeDescriptor
    case subscribe, unsubscribe, readRSSI, maximumWriteWithResponse, maximumWriteWithoutResponse

    var testDescription: String { rawValue }

    /// The GATT operations: those that need a connected link.
    static var gattOperations: [CentralOperation] { allCases.filter(\.needsLink) }

    var needsLink: Bool { ![.scan, .connect, .cancelConnection].contains(self) }

    /// The `operation` of ``APIMisuseError/notPoweredOn(operation:state:)``.
    var bridgeName: String {
        switch self {
        case .scan: "scanForPeripherals"
        case .connect: "connect"
        case .cancelConnection: "cancelPeripheralConnection"
        case .discoverServices: "discoverServices"
        case .discoverIncludedServices: "discoverIncludedServices"
        case .discoverCharacteristics: "discoverCharacteristics"
        case .discoverDescriptors: "discoverDescriptors"
        case .readCharacteristic: "readValue"
        case .readDescriptor: "readValue(for:)"
        case .writeWithResponse, .writeWithoutResponse: "writeValue"
        case .writeDescriptor: "writeValue(_:for:)"
        case .subscribe, .unsubscribe: "setNotifyValue"
        case .readRSSI: "readRSSI"
        case .maximumWriteWithResponse, .maximumWriteWithoutResponse: "maximumWriteValueLength"
        }
    }

    /// Performs the operation on `central`, using the rig's discovered attributes.
    func perform(on central: MockCentralManager, rig: Rig) async throws {
        let peripheral = rig.peripheral.identifier
        let value = rig.remote(RigUUID.value)
        switch self {
        case .scan: try await central.scanForPeripherals(withServices: nil)
        case .connect: try await central.connect(peripheral)
        case .cancelConnection: try await central.cancelPeripheralConnection(peripheral)
        case .discoverServices: _ = try await central.discoverServices(nil, for: peripheral)
        case .discoverIncludedServices: _ = try await central.discoverIncludedServices(nil, for: rig.remoteService)
        case .discoverCharacteristics: _ = try await central.discoverCharacteristics(nil, for: rig.remoteService)
        case .discoverDescriptors: _ = try await central.discoverDescriptors(for: value)
        case .readCharacteristic: _ = try await central.readValue(for: value)
        case .readDescriptor: _ = try await central.readValue(for: rig.userDescription)
        case .writeWithResponse: try await central.writeValue(Data([1]), for: value, type: .withResponse)
        case .writeWithoutResponse: try await central.writeValue(Data([1]), for: value, type: .withoutResponse)
        case .writeDescriptor: try await central.writeValue(Data([1]), for: rig.userDescription)
        case .subscribe: try await central.setNotifyValue(true, for: value)
        case .unsubscribe: try await central.setNotifyValue(false, for: value)
        case .readRSSI: _ = try await central.readRSSI(for: peripheral)
        case .maximumWriteWithResponse:
            _ = try await central.maximumWriteValueLength(for: peripheral, type: .withResponse)
        case .maximumWriteWithoutResponse:
            _ = try await central.maximumWriteValueLength(for: peripheral, type: .withoutResponse)
        }
    }
}

/// How a central came to have no link to the rig's peripheral.
enum LinkLoss: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A second central that never connected.
    case neverConnected
    /// The rig's central disconnected itself.
    case cancelledByCentral
    /// The peripheral dropped the rig's central.
    case droppedByPeripheral

    var testDescription: String { rawValue }
}

@Suite("Error paths: manager state and connection", .timeLimit(.minutes(10)))
struct ErrorPathConnectionTests {
    static let notPoweredOnStates: [ManagerState] = [.poweredOff, .unauthorized, .unsupported, .resetting]
    // (A manager stays in `resetting` only `.stuck` there: an initial state of `resetting` is refused.)

    @Test(
        "Cancelling a connection while not powered on does nothing and does not throw, as CoreBluetooth",
        arguments: notPoweredOnStates)
    func cancelWhileNotPoweredOn(state: ManagerState) async throws {
        let rig = try await Rig.make()
        let subject = MockCentralManager(configuration: .init(stateTransition: .stuck(state)), bridge: rig.bridge)
        #expect(await subject.state == state)  // on the air
        let logCount = await rig.bridge.log.count
        try await subject.cancelPeripheralConnection(rig.peripheral.identifier)
        #expect(await rig.bridge.log.count == logCount)
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        // Powered off with a link: leaving poweredOn ended it, and cleaning up afterwards is quiet.
        await rig.central.simulateStateChange(.poweredOff)
        try await rig.central.cancelPeripheralConnection(rig.peripheral.identifier)
        #expect(await !rig.central.isConnected(rig.peripheral.identifier))
    }

    @Test(
        "A central that is not powered on refuses every radio operation with notPoweredOn and its name",
        arguments: notPoweredOnStates, CentralOperation.allCases.filter { $0 != .cancelConnection })
    func centralNotPoweredOn(state: ManagerState, operation: CentralOperation) async throws {
        let rig = try await Rig.make()
        let subject = MockCentralManager(configuration: .init(stateTransition: .stuck(state)), bridge: rig.bridge)
        #expect(await subject.state == state)
        let logCount = await rig.bridge.log.count

        await #expect(throws: APIMisuseError.notPoweredOn(operation: operation.bridgeName, state: state)) {
            try await operation.perform(on: subject, rig: rig)
        }

        // The refused call changed nothing: no scan, no link, nothing succeeded for it.
        #expect(await subject.state == state)
        #expect(await !subject.isScanning)
        #expect(await !subject.isConnected(rig.peripheral.identifier))
        let newEntries = await rig.bridge.log.dropFirst(logCount)
        #expect(newEntries.allSatisfy { $0.central != subject.identifier || !$0.succeeded })
        // The other central is unaffected.
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.readOnly)) == Data([1, 2, 3]))
    }

    @Test(
        "A peripheral that is not powered on refuses add, startAdvertising and updateValue with notPoweredOn",
        arguments: notPoweredOnStates)
    func peripheralNotPoweredOn(state: ManagerState) async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(configuration: .init(stateTransition: .stuck(state)), bridge: bridge)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "add", state: state)) {
            try await peripheral.add(Rig.testService)
        }
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "startAdvertising", state: state)) {
            try await peripheral.startAdvertising(AdvertisementData(localName: "Off"))
        }
        let characteristic = LocalCharacteristic(
            serviceUUID: RigUUID.service, serviceHandle: 1, uuid: RigUUID.value, properties: [.read, .notify],
            permissions: .readable, handle: 3)
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "updateValue", state: state)) {
            try await peripheral.updateValue(Data([1]), for: characteristic)
        }
        #expect(await peripheral.services.isEmpty)
        #expect(await !peripheral.isAdvertising)
        #expect(await peripheral.state == state)
        // Nothing was published or advertised.
        #expect(await bridge.log.allSatisfy { $0.kind != .serviceAdded || !$0.succeeded })
        #expect(await bridge.log.allSatisfy { $0.kind != .advertisingStarted || !$0.succeeded })
    }

    @Test(
        "Every GATT operation without a link throws notConnected",
        arguments: LinkLoss.allCases, CentralOperation.gattOperations)
    func notConnected(loss: LinkLoss, operation: CentralOperation) async throws {
        let rig = try await Rig.make()
        let subject: MockCentralManager
        switch loss {
        case .neverConnected:
            subject = MockCentralManager(bridge: rig.bridge)
        case .cancelledByCentral:
            subject = rig.central
            try await rig.central.cancelPeripheralConnection(rig.peripheral.identifier)
        case .droppedByPeripheral:
            subject = rig.central
            await rig.peripheral.simulateDisconnection(of: rig.central.identifier)
        }

        await #expect(throws: CoreBluetoothError(.notConnected)) {
            try await operation.perform(on: subject, rig: rig)
        }

        #expect(await !subject.isConnected(rig.peripheral.identifier))
        #expect(await subject.services(of: rig.peripheral.identifier).isEmpty)
        #expect(await subject.state == .poweredOn)
        if loss == .neverConnected {
            // The rig's own central keeps its link and its discovered attributes.
            #expect(await rig.central.isConnected(rig.peripheral.identifier))
            #expect(await rig.central.services(of: rig.peripheral.identifier) == [rig.remoteService])
            #expect(try await rig.central.readValue(for: rig.remote(RigUUID.readOnly)) == Data([1, 2, 3]))
        } else {
            // Reconnecting and rediscovering makes the same operation work again.
            try await rig.central.connect(rig.peripheral.identifier)
            let services = try await rig.central.discoverServices(nil, for: rig.peripheral.identifier)
            #expect(services == [rig.remoteService])
            #expect(try await rig.central.discoverCharacteristics(nil, for: services[0]) == rig.remoteCharacteristics)
            if operation == .writeDescriptor {
                // Descriptors are read-only: on a link the write reaches the server and fails there.
                await #expect(throws: ATTError(.writeNotPermitted)) {
                    try await operation.perform(on: rig.central, rig: rig)
                }
            } else {
                try await operation.perform(on: rig.central, rig: rig)
            }
        }
    }

    @Test("Connecting to an identifier no scan reported throws unknownDevice")
    func connectUnknownDevice() async throws {
        let rig = try await Rig.make()
        let stranger = UUID(uuid: (0xDE, 0xAD, 0xBE, 0xEF, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1))
        await #expect(throws: CoreBluetoothError(.unknownDevice)) { try await rig.central.connect(stranger) }

        // A peripheral on the air that never advertised is unknown too.
        let silent = MockPeripheralManager(bridge: rig.bridge)
        _ = await silent.state
        await #expect(throws: CoreBluetoothError(.unknownDevice)) { try await rig.central.connect(silent.identifier) }
        #expect(await !rig.central.isConnected(silent.identifier))
        #expect(
            await rig.bridge.log.allSatisfy { $0.kind != .connecting || $0.peripheral == rig.peripheral.identifier })
        // The existing link is untouched.
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
    }

    @Test(
        "In fast mode connecting to a peripheral advertising as non-connectable fails at once with connectionFailed and an event"
    )
    func connectNonConnectable() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Beacon", isConnectable: false))
        let central = MockCentralManager(bridge: bridge)
        let events = central.events()
        var iterator = events.makeAsyncIterator()
        try await central.scanForPeripherals(withServices: nil)

        await #expect(throws: CoreBluetoothError(.connectionFailed)) {
            try await central.connect(peripheral.identifier)
        }

        let event = await nextCentralEvent(&iterator) {
            if case .failedToConnect = $0 { return true }
            return false
        }
        #expect(
            event
                == .failedToConnect(
                    RemotePeripheral(identifier: peripheral.identifier, name: "Beacon"),
                    CoreBluetoothError(.connectionFailed)))
        #expect(await !central.isConnected(peripheral.identifier))
        let failure = await bridge.log.last { $0.kind == .connectionFailed }
        #expect(failure?.error == .coreBluetooth(CoreBluetoothError(.connectionFailed)))
        #expect(failure?.central == central.identifier)
        #expect(await !bridge.log.contains { $0.kind == .connected })
        // The peripheral keeps advertising.
        #expect(await peripheral.isAdvertising)
    }
}

extension ErrorPathConnectionTests {
    @Test("A connection attempt to a peripheral that stopped advertising times out in virtual time")
    func connectTimeout() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "Gone"))
        let central = MockCentralManager(bridge: bridge)
        var events = central.events().makeAsyncIterator()
        try await central.scanForPeripherals(withServices: nil)
        await peripheral.stopAdvertising()
        let start = await bridge.now

        await #expect(throws: CoreBluetoothError(.connectionTimeout)) {
            try await central.connect(peripheral.identifier, timeout: .seconds(2))
        }

        #expect(await bridge.now == start.advanced(by: .seconds(2)))
        #expect(await !central.isConnected(peripheral.identifier))
        let event = await nextCentralEvent(&events) {
            if case .failedToConnect = $0 { return true }
            return false
        }
        // (The central heard its name before it stopped advertising, and keeps knowing it.)
        #expect(
            event
                == .failedToConnect(
                    RemotePeripheral(identifier: peripheral.identifier, name: "Gone"),
                    CoreBluetoothError(.connectionTimeout)))
        let failure = await bridge.log.last { $0.kind == .connectionFailed }
        #expect(failure?.error == .coreBluetooth(CoreBluetoothError(.connectionTimeout)))
        // Nothing is left pending: advertising again does not connect, and a new attempt does.
        try await peripheral.startAdvertising(AdvertisementData(localName: "Back"))
        #expect(await !central.isConnected(peripheral.identifier))
        try await central.connect(peripheral.identifier, timeout: .seconds(2))
        #expect(await central.isConnected(peripheral.identifier))
        #expect(await bridge.now == start.advanced(by: .seconds(2)))
    }
}

/// Operations on attributes of a service the peripheral removed.
enum StaleOperation: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case read, writeWithResponse, writeWithoutResponse, subscribe, unsubscribe
    case discoverDescriptors, readDescriptor, writeDescriptor, discoverCharacteristics, discoverIncludedServices

    var testDescription: String { rawValue }

    func perform(on rig: Rig) async throws {
        let central = rig.central
        let value = rig.remote(RigUUID.value)
        switch self {
        case .read: _ = try await central.readValue(for: value)
        case .writeWithResponse: try await central.writeValue(Data([1]), for: value, type: .withResponse)
        case .writeWithoutResponse: try await central.writeValue(Data([1]), for: value, type: .withoutResponse)
        case .subscribe: try await central.setNotifyValue(true, for: value)
        case .unsubscribe: try await central.setNotifyValue(false, for: value)
        case .discoverDescriptors: _ = try await central.discoverDescriptors(for: value)
        case .readDescriptor: _ = try await central.readValue(for: rig.userDescription)
        case .writeDescriptor: try await central.writeValue(Data([1]), for: rig.userDescription)
        case .discoverCharacteristics: _ = try await central.discoverCharacteristics(nil, for: rig.remoteService)
        case .discoverIncludedServices: _ = try await central.discoverIncludedServices(nil, for: rig.remoteService)
        }
    }
}

@Suite("Error paths: stale references", .timeLimit(.minutes(10)))
struct ErrorPathStaleReferenceTests {
    @Test(
        "After the peripheral removes a service, its old attributes throw invalidHandle",
        arguments: StaleOperation.allCases)
    func removedService(operation: StaleOperation) async throws {
        let rig = try await Rig.make()
        try await rig.central.setNotifyValue(true, for: rig.remote(RigUUID.value))
        var events = rig.central.events().makeAsyncIterator()

        try await rig.peripheral.remove(rig.service)

        let modified = await nextCentralEvent(&events) {
            if case .servicesModified = $0 { return true }
            return false
        }
        let remotePeripheral = RemotePeripheral(identifier: rig.peripheral.identifier, name: "Rig")
        #expect(modified == .servicesModified(remotePeripheral, invalidated: [rig.remoteService]))

        await #expect(throws: CoreBluetoothError(.invalidHandle)) { try await operation.perform(on: rig) }

        // The link survives, the central forgot the service, and the subscription ended.
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        #expect(await rig.central.services(of: rig.peripheral.identifier).isEmpty)
        #expect(await rig.central.characteristics(of: rig.remoteService).isEmpty)
        #expect(await rig.peripheral.subscribedCentrals(for: rig.local(RigUUID.value)).isEmpty)
        #expect(await rig.peripheral.services.isEmpty)
    }

    @Test("Publishing the service again gives new handles: old references stay invalid, rediscovered ones work")
    func republishedService() async throws {
        let rig = try await Rig.make()
        try await rig.peripheral.remove(rig.service)
        let again = try await rig.peripheral.add(Rig.testService)
        #expect(again.handle > rig.service.endHandle)

        await #expect(throws: CoreBluetoothError(.invalidHandle)) {
            try await rig.central.readValue(for: rig.remote(RigUUID.readOnly))
        }
        await #expect(throws: CoreBluetoothError(.invalidHandle)) {
            try await rig.central.discoverCharacteristics(nil, for: rig.remoteService)
        }
        let services = try await rig.central.discoverServices(nil, for: rig.peripheral.identifier)
        #expect(services.map(\.handle) == [again.handle])
        let characteristics = try await rig.central.discoverCharacteristics(nil, for: services[0])
        let fresh = try #require(characteristics.first { $0.uuid == RigUUID.readOnly })
        #expect(fresh.handle != rig.remote(RigUUID.readOnly).handle)
        #expect(try await rig.central.readValue(for: fresh) == Data([1, 2, 3]))
    }
}

@Suite("Error paths: ATT errors with their real codes", .timeLimit(.minutes(10)))
struct ErrorPathATTTests {
    /// Checks the last log entry of `kind` recorded `error` for the rig's central.
    static func expectLogged(_ rig: Rig, _ kind: BridgeLogEntry.Kind, _ error: ATTError, attribute: BluetoothUUID) async
    {
        let entry = await rig.lastLogEntry(kind)
        #expect(entry?.error == .att(error))
        #expect(entry?.central == rig.central.identifier)
        #expect(entry?.attribute == attribute)
    }

    @Test("Reading a characteristic without the read property throws readNotPermitted (0x02)")
    func readNotPermitted() async throws {
        let rig = try await Rig.make()
        let error = await #expect(throws: ATTError(.readNotPermitted)) {
            try await rig.central.readValue(for: rig.remote(RigUUID.writeOnly))
        }
        #expect(error?.code.rawValue == 0x02)
        await Self.expectLogged(rig, .read, ATTError(.readNotPermitted), attribute: RigUUID.writeOnly)
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.readOnly)) == Data([1, 2, 3]))
    }

    @Test(
        "A write request without the write property or permission is answered writeNotPermitted (0x03)",
        arguments: [RigUUID.readOnly, RigUUID.encrypted])
    func writeNotPermitted(uuid: BluetoothUUID) async throws {
        let rig = try await Rig.make()
        let error = await #expect(throws: ATTError(.writeNotPermitted)) {
            try await rig.central.writeValue(Data([9]), for: rig.remote(uuid), type: .withResponse)
        }
        #expect(error?.code.rawValue == 0x03)
        await Self.expectLogged(rig, .write, ATTError(.writeNotPermitted), attribute: uuid)
        #expect(await rig.lastLogEntry(.write)?.writeType == .withResponse)
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        // A static value is untouched.
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.readOnly)) == Data([1, 2, 3]))
    }

    @Test(
        "A write without response to a characteristic without that property is not sent, and is recorded as a misuse",
        arguments: [RigUUID.readOnly, RigUUID.writeOnly])
    func writeWithoutResponseNeedsTheProperty(uuid: BluetoothUUID) async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        let characteristic = rig.remote(uuid)
        let refusal = APIMisuseError.writeWithoutResponseNotSupported(uuid, handle: characteristic.handle)
        // A Write Command is never answered, so CoreBluetooth checks the property itself: it
        // warns and sends nothing, and the app's call returns as if all went well.
        try await rig.central.writeValue(Data([9]), for: characteristic, type: .withoutResponse)
        let entry = await rig.lastLogEntry(.write)
        #expect(entry?.error == .misuse(refusal))
        #expect(entry?.writeType == .withoutResponse)
        #expect(entry?.detail == "not sent")
        #expect(await rig.bridge.misuses.map(\.error) == [refusal])
        #expect(await rig.bridge.misuses.map(\.kind) == [.writeWithoutResponseNotSupported])
        await rig.bridge.advance(by: .seconds(1))
        #expect(await rig.bridge.log.filter { $0.kind == .writeRequest }.isEmpty)
        #expect(await rig.central.canSendWriteWithoutResponse(to: rig.peripheral.identifier))
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
    }

    // bumble 0.0.236 (scripts/bumble-att-checks.py, check 4): a Write Command to a characteristic
    // that needs encryption gets nothing back and is not stored. (bumble never checks the
    // plain write permission, so it stores a command without it; CoreBluetooth's peripheral
    // manager refuses it, as the kit does.)
    @Test(
        "A write command the peripheral cannot accept is dropped there without an answer; the central sees success")
    func writeCommandWithoutPermissionIsDroppedSilently() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(configuration: .init(requestHandling: .manual), bridge: bridge)
        let service = try await peripheral.add(
            GATTService(
                uuid: RigUUID.service,
                characteristics: [
                    GATTCharacteristic(
                        uuid: "FFF9", properties: .writeWithoutResponse, permissions: .writeEncryptionRequired),
                    GATTCharacteristic(uuid: "FFFA", properties: .writeWithoutResponse, permissions: .readable),
                    GATTCharacteristic(uuid: "FFFB", properties: .writeWithoutResponse, permissions: .writeable),
                ]))
        try await peripheral.startAdvertising(AdvertisementData(localName: "Rig"))
        let requests = peripheral.events()
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)
        let characteristics = try await central.discoverAll(for: peripheral.identifier)
        for characteristic in characteristics {
            try await central.writeValue(
                Data([characteristic.uuid == "FFFB" ? 1 : 0]), for: characteristic,
                type: .withoutResponse)
        }
        // Only the command to the writeable characteristic reaches the app.
        var iterator = requests.makeAsyncIterator()
        guard case .writeRequests(let batch) = await iterator.next() else {
            Issue.record("expected the one accepted write command")
            return
        }
        #expect(batch.map(\.characteristic) == [service.characteristics[2]])
        #expect(batch.map(\.value) == [Data([1])])
        let dropped = await bridge.log.filter { $0.kind == .refused && $0.writeType == .withoutResponse }
        #expect(dropped.map(\.attribute) == ["FFF9", "FFFA"])
        #expect(
            dropped.map(\.error) == [
                .att(ATTError(.insufficientAuthentication)), .att(ATTError(.writeNotPermitted)),
            ])
        #expect(dropped.allSatisfy { $0.detail?.hasPrefix("write command dropped by the peripheral") == true })
        #expect(await bridge.log.filter { $0.kind == .writeRequest }.count == 1)
    }

    // bumble 0.0.236 (scripts/bumble-att-checks.py, check 3): subscribing to a characteristic
    // without a CCCD sends no PDU at all; its client only logs a warning. CoreBluetooth fails
    // the call with "The request is not supported"; nothing goes on the air either.
    @Test(
        "Subscribing to a characteristic that can neither notify nor indicate (no CCCD) sends nothing and throws requestNotSupported (0x06)"
    )
    func subscribeNotSupported() async throws {
        let rig = try await Rig.make()
        var events = rig.peripheral.events().makeAsyncIterator()
        let before = await rig.bridge.attPDUCount
        let error = await #expect(throws: ATTError(.requestNotSupported)) {
            try await rig.central.setNotifyValue(true, for: rig.remote(RigUUID.readOnly))
        }
        #expect(error?.code.rawValue == 0x06)
        #expect(await rig.bridge.attPDUCount == before)
        await Self.expectLogged(rig, .subscribe, ATTError(.requestNotSupported), attribute: RigUUID.readOnly)
        #expect(await rig.peripheral.subscribedCentrals(for: rig.local(RigUUID.readOnly)).isEmpty)
        // A valid subscription still works, and it is the first event the peripheral sees.
        try await rig.central.setNotifyValue(true, for: rig.remote(RigUUID.value))
        let remoteCentral = RemoteCentral(identifier: rig.central.identifier, maximumUpdateValueLength: 512)
        #expect(await events.next() == .subscribed(remoteCentral, rig.local(RigUUID.value)))
    }

    // The length of a long write is checked at the Execute Write (Vol 3, Part F, 3.4.6.1), so
    // the client sends every Prepare Write first. bumble 0.0.236 (scripts/bumble-att-checks.py,
    // check 1): 29 Prepare Writes and an Execute Write at ATT_MTU 23 (60 PDUs both ways), 3 and
    // one at 247 (8 PDUs), each Prepare answered, the Execute answered with 0x0D. At 517 the
    // value fits one Write Request (up to 514 bytes), refused at once.
    @Test(
        "A 513-byte write with response throws invalidAttributeValueLength (0x0D) after every Prepare Write; 512 bytes succeed",
        arguments: [(517, 2), (247, 8), (23, 60)])
    func valueLengthLimit(mtu: Int, pdus: Int) async throws {
        let rig = try await Rig.make(centralMTU: mtu)
        let characteristic = rig.remote(RigUUID.value)
        try await rig.central.writeValue(Data([7, 7, 7, 7]), for: characteristic, type: .withResponse)

        let before = await rig.bridge.attPDUCount
        let error = await #expect(throws: ATTError(.invalidAttributeValueLength)) {
            try await rig.central.writeValue(testBytes(513), for: characteristic, type: .withResponse)
        }
        #expect(await rig.bridge.attPDUCount - before == pdus)
        #expect(error?.code.rawValue == 0x0D)
        await Self.expectLogged(rig, .write, ATTError(.invalidAttributeValueLength), attribute: RigUUID.value)
        #expect(await rig.lastLogEntry(.write)?.value == testBytes(513))
        // The failed write left the value alone.
        #expect(try await rig.central.readValue(for: characteristic) == Data([7, 7, 7, 7]))

        try await rig.central.writeValue(testBytes(512), for: characteristic, type: .withResponse)
        #expect(await rig.lastLogEntry(.write)?.succeeded == true)
        #expect(try await rig.central.readValue(for: characteristic) == testBytes(512))
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
    }

    @Test(
        "Reading an encryption-required characteristic on an unencrypted link without keys throws insufficientAuthentication (0x05)"
    )
    func insufficientEncryption() async throws {
        let rig = try await Rig.make()
        let error = await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await rig.central.readValue(for: rig.remote(RigUUID.encrypted))
        }
        #expect(error?.code.rawValue == 0x05)
        await Self.expectLogged(rig, .read, ATTError(.insufficientAuthentication), attribute: RigUUID.encrypted)
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
    }

    @Test(
        "Writing an encryption-required characteristic or subscribing to an encrypted notify on a plain link without keys throws insufficientAuthentication (0x05)"
    )
    func encryptionRequiredWriteAndSubscribe() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        _ = try await peripheral.add(
            GATTService(
                uuid: "FFA0",
                characteristics: [
                    GATTCharacteristic(uuid: "FFA1", properties: .write, permissions: .writeEncryptionRequired),
                    GATTCharacteristic(uuid: "FFA2", properties: .notifyEncryptionRequired, permissions: .readable),
                ]))
        try await peripheral.startAdvertising(AdvertisementData(localName: "Secure"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)
        try await central.discoverAll(for: peripheral.identifier)
        let write = try await central.characteristic("FFA1", of: peripheral.identifier)
        let notify = try await central.characteristic("FFA2", of: peripheral.identifier)

        let writeError = await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await central.writeValue(Data([1]), for: write, type: .withResponse)
        }
        #expect(writeError?.code.rawValue == 0x05)
        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await central.setNotifyValue(true, for: notify)
        }
        #expect(await bridge.log.last { $0.kind == .subscribe }?.error == .att(ATTError(.insufficientAuthentication)))
        #expect(await central.isConnected(peripheral.identifier))
    }

    @Test("Writing a descriptor throws writeNotPermitted (0x03) and leaves its value alone; the CCCD is refused")
    func descriptorWrite() async throws {
        let rig = try await Rig.make()
        let error = await #expect(throws: ATTError(.writeNotPermitted)) {
            try await rig.central.writeValue(Data("Changed".utf8), for: rig.userDescription)
        }
        #expect(error?.code.rawValue == 0x03)
        let entry = await rig.lastLogEntry(.writeDescriptor)
        #expect(entry?.error == .att(ATTError(.writeNotPermitted)))
        #expect(entry?.attribute == .characteristicUserDescription)
        #expect(try await rig.central.readValue(for: rig.userDescription) == Data("Read only".utf8))

        // The CCCD is written by subscribing, never directly: CoreBluetooth refuses the call.
        await #expect(
            throws: APIMisuseError.clientConfigurationWrite(
                characteristic: RigUUID.value, handle: rig.remote(RigUUID.value).handle)
        ) {
            try await rig.central.writeValue(Data([1, 0]), for: rig.clientConfiguration)
        }
        let refusal = await rig.bridge.log.last { $0.kind == .refused }
        #expect(refusal?.attribute == .clientCharacteristicConfiguration)
        #expect(refusal?.detail == "writeValue(_:for:)")
        #expect(try await rig.central.readValue(for: rig.clientConfiguration) == Data([0, 0]))
        #expect(await rig.peripheral.subscribedCentrals(for: rig.local(RigUUID.value)).isEmpty)
    }
}

@Suite("Error paths: peripheral manager misuse", .timeLimit(.minutes(10)))
struct ErrorPathPeripheralTests {
    @Test("Starting to advertise twice throws alreadyAdvertising and keeps the first advertisement")
    func alreadyAdvertising() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        try await peripheral.startAdvertising(AdvertisementData(localName: "First", serviceUUIDs: ["180D"]))
        await #expect(throws: CoreBluetoothError(.alreadyAdvertising)) {
            try await peripheral.startAdvertising(AdvertisementData(localName: "Second"))
        }
        #expect(await peripheral.isAdvertising)
        let failed = await bridge.log.last { $0.kind == .advertisingStarted }
        #expect(failed?.error == .coreBluetooth(CoreBluetoothError(.alreadyAdvertising)))

        let central = MockCentralManager(bridge: bridge)
        var events = central.events().makeAsyncIterator()
        try await central.scanForPeripherals(withServices: ["180D"])
        #expect(await events.next() == .stateChanged(.poweredOn))
        guard case .discovered(let found) = await events.next() else {
            Issue.record("expected a discovery")
            return
        }
        #expect(found.advertisementData.localName == "First")
        #expect(found.peripheral.name == "First")
    }

    @Test(
        "Publishing a reserved GAP or GATT service throws uuidNotAllowed",
        arguments: ["1800", "1801"] as [BluetoothUUID])
    func reservedService(uuid: BluetoothUUID) async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        let first = try await peripheral.add(Rig.testService)
        await #expect(throws: CoreBluetoothError(.uuidNotAllowed)) { try await peripheral.add(GATTService(uuid: uuid)) }
        #expect(await peripheral.services == [first])
        let entry = await bridge.log.last { $0.kind == .serviceAdded }
        #expect(entry?.error == .coreBluetooth(CoreBluetoothError(.uuidNotAllowed)))
        #expect(entry?.attribute == uuid)
    }

    static let invalidServices: [(GATTService, APIMisuseError.InvalidServiceReason)] = [
        (
            GATTService(
                uuid: "180D",
                characteristics: [
                    GATTCharacteristic(
                        uuid: "2A38", properties: [.read, .write], permissions: [.readable, .writeable],
                        value: Data([1]))
                ]),
            .staticValueNotReadOnly("2A38")
        ),
        (
            GATTService(
                uuid: "180D",
                characteristics: [
                    GATTCharacteristic(uuid: "2A38", properties: .read, permissions: .readable, value: Data(count: 513))
                ]),
            .valueTooLong("2A38", length: 513)
        ),
        (
            GATTService(
                uuid: "180D",
                characteristics: [
                    GATTCharacteristic(
                        uuid: "2A37", properties: .notify, permissions: [],
                        descriptors: [GATTDescriptor(uuid: .clientCharacteristicConfiguration, value: Data([0, 0]))])
                ]),
            .managedDescriptor("2A37")
        ),
        (GATTService(uuid: "180D", includedServices: ["180F"]), .includedServiceNotPublished("180F")),
    ]

    @Test(
        "Invalid service descriptions throw invalidService with the reason and publish nothing",
        arguments: invalidServices)
    func invalidService(service: GATTService, reason: APIMisuseError.InvalidServiceReason) async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        let first = try await peripheral.add(Rig.testService)
        await #expect(throws: APIMisuseError.invalidService("180D", reason: reason)) {
            try await peripheral.add(service)
        }
        #expect(await peripheral.services == [first])
        let entry = await bridge.log.last { $0.kind == .serviceAdded }
        #expect(entry?.error == .misuse(.invalidService("180D", reason: reason)))
        // The refused description used no handles.
        let next = try await peripheral.add(GATTService(uuid: "180F"))
        #expect(next.handle == first.endHandle + 1)
    }

    @Test("Removing a service that is not published throws serviceNotPublished and notifies nobody again")
    func removeUnpublished() async throws {
        let rig = try await Rig.make()
        try await rig.peripheral.remove(rig.service)
        var events = rig.central.events().makeAsyncIterator()
        await #expect(throws: APIMisuseError.serviceNotPublished(RigUUID.service, handle: rig.service.handle)) {
            try await rig.peripheral.remove(rig.service)
        }
        var moved = rig.service
        moved.handle = 40
        await #expect(throws: APIMisuseError.serviceNotPublished(RigUUID.service, handle: 40)) {
            try await rig.peripheral.remove(moved)
        }
        #expect(await rig.logEntries(.serviceRemoved).count == 1)
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        // No second servicesModified reached the central: the next event is the disconnect.
        try await rig.central.cancelPeripheralConnection(rig.peripheral.identifier)
        guard case .disconnected = await events.next() else {
            Issue.record("expected the disconnect as the next event")
            return
        }
    }

    @Test("updateValue on a characteristic without notify or indicate throws characteristicCannotNotify")
    func cannotNotify() async throws {
        let rig = try await Rig.make()
        let readOnly = rig.local(RigUUID.readOnly)
        await #expect(throws: APIMisuseError.characteristicCannotNotify(RigUUID.readOnly, handle: readOnly.handle)) {
            try await rig.peripheral.updateValue(Data([9]), for: readOnly)
        }
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.readOnly)) == Data([1, 2, 3]))
        #expect(await rig.logEntries(.notification).isEmpty)
    }

    @Test("updateValue and setValue with a characteristic that is not published throw characteristicNotPublished")
    func characteristicNotPublished() async throws {
        let rig = try await Rig.make()
        var moved = rig.local(RigUUID.value)
        moved.handle += 100
        await #expect(throws: APIMisuseError.characteristicNotPublished(RigUUID.value, handle: moved.handle)) {
            try await rig.peripheral.updateValue(Data([9]), for: moved)
        }
        await #expect(throws: APIMisuseError.characteristicNotPublished(RigUUID.value, handle: moved.handle)) {
            try await rig.peripheral.setValue(Data([9]), for: moved)
        }
        // Same handle, different properties: not the published characteristic either.
        var altered = rig.local(RigUUID.value)
        altered.properties.insert(.indicate)
        await #expect(throws: APIMisuseError.characteristicNotPublished(RigUUID.value, handle: altered.handle)) {
            try await rig.peripheral.setValue(Data([9]), for: altered)
        }
        // A characteristic of a removed service.
        let removed = rig.local(RigUUID.value)
        let kept = try await rig.peripheral.add(GATTService(uuid: "180F"))
        try await rig.peripheral.remove(rig.service)
        await #expect(throws: APIMisuseError.characteristicNotPublished(RigUUID.value, handle: removed.handle)) {
            try await rig.peripheral.setValue(Data([9]), for: removed)
        }
        #expect(await rig.peripheral.services == [kept])
    }

    @Test("setValue cannot change a static characteristic's cached value or make a read return more than 512 bytes")
    func setValueOnStaticCharacteristic() async throws {
        let rig = try await Rig.make()
        let cached = rig.local(RigUUID.readOnly)
        await #expect(throws: APIMisuseError.staticCharacteristic(RigUUID.readOnly, handle: cached.handle)) {
            try await rig.peripheral.setValue(Data([9]), for: cached)
        }
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.readOnly)) == Data([1, 2, 3]))
        await #expect(throws: APIMisuseError.staticCharacteristic(RigUUID.readOnly, handle: cached.handle)) {
            try await rig.peripheral.setValue(testBytes(600), for: cached)
        }
        let read = try await rig.central.readValue(for: rig.remote(RigUUID.readOnly))
        #expect(read.count <= 512, "a read returned \(read.count) bytes; attribute values are at most 512")
    }

    @Test("Responding to a request id nobody sent throws unknownRequest")
    func respondUnknownRequest() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        let request = ATTRequest(
            id: 999, central: RemoteCentral(identifier: rig.central.identifier, maximumUpdateValueLength: 512),
            characteristic: rig.local(RigUUID.value), offset: 0, value: nil)
        await #expect(throws: APIMisuseError.unknownRequest(id: 999)) {
            try await rig.peripheral.respond(to: request, withResult: .success, value: Data([1]))
        }
        #expect(await rig.logEntries(.response).isEmpty)
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
    }

    @Test("Another peripheral manager cannot answer a request, and the right one still can")
    func respondFromOtherPeripheral() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        let other = MockPeripheralManager(configuration: .init(requestHandling: .manual), bridge: rig.bridge)
        _ = try await other.add(Rig.testService)
        var events = rig.peripheral.events().makeAsyncIterator()
        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let request = try #require(await nextReadRequest(&events))
        await #expect(throws: APIMisuseError.unknownRequest(id: request.id)) {
            try await other.respond(to: request, withResult: .success, value: Data([6]))
        }
        try await rig.peripheral.respond(to: request, withResult: .success, value: Data([5]))
        #expect(try await read.value == Data([5]))
    }
}

@Suite("Error paths: finding a discovered characteristic by UUID", .timeLimit(.minutes(10)))
struct ErrorPathCharacteristicLookupTests {
    /// A peripheral with two services that both have a 2A19 characteristic, fully discovered.
    static func twoServices() async throws -> (MockCentralManager, UUID, [RemoteCharacteristic]) {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(bridge: bridge)
        for uuid in ["FFE0", "FFE1"] as [BluetoothUUID] {
            _ = try await peripheral.add(
                GATTService(
                    uuid: uuid,
                    characteristics: [
                        GATTCharacteristic(
                            uuid: "2A19", properties: .read, permissions: .readable,
                            value: Data([uuid == "FFE0" ? 0 : 1]))
                    ]))
        }
        try await peripheral.startAdvertising(AdvertisementData(localName: "Twins"))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)
        let all = try await central.discoverAll(for: peripheral.identifier)
        return (central, peripheral.identifier, all)
    }

    @Test("A UUID nobody discovered throws characteristicNotFound, with the service when one was named")
    func notFound() async throws {
        let (central, peripheral, _) = try await Self.twoServices()
        await #expect(throws: APIMisuseError.characteristicNotFound("2A00", service: nil, peripheral: peripheral)) {
            try await central.characteristic("2A00", of: peripheral)
        }
        await #expect(throws: APIMisuseError.characteristicNotFound("2A19", service: "FFE2", peripheral: peripheral)) {
            try await central.characteristic("2A19", service: "FFE2", of: peripheral)
        }
    }

    @Test("Before discovery nothing is found")
    func notDiscoveredYet() async throws {
        let rig = try await Rig.make()
        let central = MockCentralManager(bridge: rig.bridge)
        try await central.connect(rig.peripheral.identifier)
        await #expect(
            throws: APIMisuseError.characteristicNotFound(
                RigUUID.value, service: nil, peripheral: rig.peripheral.identifier)
        ) {
            try await central.characteristic(RigUUID.value, of: rig.peripheral.identifier)
        }
        #expect(
            try await rig.central.characteristic(RigUUID.value, of: rig.peripheral.identifier)
                == rig.remote(RigUUID.value))
    }

    @Test("A UUID in two services throws ambiguousCharacteristic with both handles; naming the service resolves it")
    func ambiguous() async throws {
        let (central, peripheral, all) = try await Self.twoServices()
        #expect(all.count == 2)
        let handles = all.map(\.handle)
        await #expect(throws: APIMisuseError.ambiguousCharacteristic("2A19", peripheral: peripheral, handles: handles))
        {
            try await central.characteristic("2A19", of: peripheral)
        }
        let second = try await central.characteristic("2A19", service: "FFE1", of: peripheral)
        #expect(second == all[1])
        #expect(try await central.readValue(for: second) == Data([1]))
        let first = try await central.characteristic("2A19", service: "FFE0", of: peripheral)
        #expect(try await central.readValue(for: first) == Data([0]))
    }
}

@Suite("Error paths: messages suggest the fix", .timeLimit(.minutes(10)))
struct ErrorPathMessageTests {
    /// The description of the error `body` throws, or `nil` if it throws none.
    static func message(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch {
            return String(describing: error)
        }
    }

    @Test("Errors thrown by the mocks name the problem and the fix")
    func messages() async throws {
        let rig = try await Rig.make()
        let off = MockCentralManager(configuration: .init(initialState: .poweredOff), bridge: rig.bridge)

        let notPoweredOn = await Self.message { try await off.scanForPeripherals(withServices: nil) }
        #expect(
            notPoweredOn?.contains("scanForPeripherals needs the manager to be poweredOn, but it is poweredOff") == true
        )
        #expect(notPoweredOn?.contains("waitForPoweredOn()") == true)

        let readNotPermitted = await Self.message {
            _ = try await rig.central.readValue(for: rig.remote(RigUUID.writeOnly))
        }
        #expect(readNotPermitted?.hasPrefix("ATT error 0x02 readNotPermitted") == true)
        #expect(readNotPermitted?.contains(".read property") == true)

        let tooLong = await Self.message {
            try await rig.central.writeValue(testBytes(513), for: rig.remote(RigUUID.value), type: .withResponse)
        }
        #expect(tooLong?.contains("at most 512 bytes") == true)

        let alreadyAdvertising = await Self.message {
            try await rig.peripheral.startAdvertising(AdvertisementData(localName: "Again"))
        }
        #expect(alreadyAdvertising?.contains("stop advertising first") == true)

        let cannotNotify = await Self.message {
            _ = try await rig.peripheral.updateValue(Data(), for: rig.local(RigUUID.readOnly))
        }
        #expect(cannotNotify?.contains("Add .notify or .indicate") == true)

        let invalid = await Self.message {
            _ = try await rig.peripheral.add(
                GATTService(
                    uuid: "180D",
                    characteristics: [
                        GATTCharacteristic(
                            uuid: "2A38", properties: [.read, .notify], permissions: .readable, value: Data([1]))
                    ]))
        }
        #expect(invalid?.contains("Create it with value nil") == true)

        let unknownDevice = await Self.message {
            try await rig.central.connect(UUID(uuid: (1, 1, 1, 1, 1, 1, 0x41, 1, 0x81, 1, 1, 1, 1, 1, 1, 1)))
        }
        #expect(unknownDevice?.contains("discover or retrieve it first") == true)

        try await rig.peripheral.remove(rig.service)
        let invalidHandle = await Self.message { _ = try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        #expect(invalidHandle?.hasPrefix("CoreBluetooth error 2 invalidHandle") == true)
        #expect(invalidHandle?.contains("rediscover services") == true)

        await rig.peripheral.simulateDisconnection(of: rig.central.identifier)
        let notConnected = await Self.message { _ = try await rig.central.readRSSI(for: rig.peripheral.identifier) }
        #expect(notConnected?.contains("connect before using it") == true)
    }

    @Test("Lookup and request errors explain how to pick or answer correctly")
    func lookupAndRequestMessages() {
        let peripheral = UUID(uuid: (2, 2, 2, 2, 2, 2, 0x42, 2, 0x82, 2, 2, 2, 2, 2, 2, 2))
        let ambiguous = String(
            describing: APIMisuseError.ambiguousCharacteristic("2A19", peripheral: peripheral, handles: [3, 6]))
        #expect(ambiguous.contains("value handles 3, 6"))
        #expect(ambiguous.contains("Name the service"))
        let unknown = String(describing: APIMisuseError.unknownRequest(id: 7))
        #expect(unknown.contains("id 7"))
        #expect(unknown.contains("exactly once"))
        let notFound = String(
            describing: APIMisuseError.characteristicNotFound("2A19", service: "180F", peripheral: peripheral))
        #expect(notFound.contains("Discover services and characteristics first"))
    }
}
