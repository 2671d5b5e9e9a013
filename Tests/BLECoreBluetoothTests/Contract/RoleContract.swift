import BLECore
import Foundation
import Testing

/// The behaviours every implementation of the role protocols shares that need no radio:
/// written once against `any CentralManaging` / `any PeripheralManaging`, and run against
/// the mocks (``MockRoleContractTests``) and, on Apple platforms, against the
/// CoreBluetooth-backed adapters (``CoreBluetoothRoleContractTests``), so the two cannot drift.
///
/// Each check works from whatever state the manager settles in: a mock can be made powered
/// on or off at will, while the adapters run in whatever state the host's Bluetooth is. A
/// check that applies only in some states returns whether it applied, so that a caller
/// cannot pass without checking anything: the mock tests require it to apply, the
/// adapter tests run the powered-on and the powered-off check together and require one.
enum RoleContract {
    /// A peripheral identifier no system knows.
    static let unknownPeripheral = UUID(uuidString: "00000000-0000-4000-8000-00000000DEAD")!

    // MARK: Central

    static func centralWithoutConnections(_ central: any CentralManaging) async throws {
        let state = await central.waitForPoweredOn()
        #expect(await central.state == state)
        #expect(await !central.isScanning)
        await central.stopScan()  // stopping a scan that is not running changes nothing
        #expect(await !central.isScanning)
        #expect(await central.retrievePeripherals(withIdentifiers: [unknownPeripheral]).isEmpty)
        #expect(await !central.isConnected(unknownPeripheral))
        #expect(await central.services(of: unknownPeripheral).isEmpty)
        #expect(await !central.canSendWriteWithoutResponse(to: unknownPeripheral))
        #expect(await !central.isANCSAuthorized(unknownPeripheral))
        await central.registerForConnectionEvents(options: ConnectionEventOptions(serviceUUIDs: ["180D"]))
        // Clean-up code must not throw in tests only: cancelling what was never connected does
        // nothing, powered on or not.
        try await central.cancelPeripheralConnection(unknownPeripheral)
        #expect(await central.retrievePeripherals(withIdentifiers: [unknownPeripheral, unknownPeripheral]).isEmpty)
        #expect(await central.state == state)
    }

    /// Applies when the central settles in any state but powered on.
    static func centralRefusesWhatNeedsPower(_ central: any CentralManaging) async throws -> Bool {
        let state = await central.waitForPoweredOn()
        guard state != .poweredOn else { return false }
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "scanForPeripherals", state: state)) {
            try await central.scanForPeripherals(withServices: nil)
        }
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "connect", state: state)) {
            try await central.connect(unknownPeripheral)
        }
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "maximumWriteValueLength", state: state)) {
            try await central.maximumWriteValueLength(for: unknownPeripheral, type: .withResponse)
        }
        #expect(await !central.isScanning)
        return true
    }

    /// Applies when the central settles powered on.
    static func centralRejectsUnknownPeripherals(_ central: any CentralManaging) async throws -> Bool {
        guard await central.waitForPoweredOn() == .poweredOn else { return false }
        await #expect(throws: CoreBluetoothError(.unknownDevice)) { try await central.connect(unknownPeripheral) }
        await #expect(throws: CoreBluetoothError(.unknownDevice)) {
            try await central.maximumWriteValueLength(for: unknownPeripheral, type: .withoutResponse)
        }
        await #expect(throws: CoreBluetoothError(.unknownDevice)) {
            try await central.discoverServices(nil, for: unknownPeripheral)
        }
        await #expect(throws: CoreBluetoothError(.unknownDevice)) { try await central.readRSSI(for: unknownPeripheral) }
        return true
    }

    static func centralShutDownEndsStreamsAndRefusesCalls(_ central: any CentralManaging) async throws {
        let events = await central.events()
        await central.shutDown()
        var iterator = events.makeAsyncIterator()
        while await iterator.next() != nil {}  // buffered events, then the end
        await #expect(throws: APIMisuseError.managerShutDown(operation: "scanForPeripherals")) {
            try await central.scanForPeripherals(withServices: nil)
        }
        await #expect(throws: APIMisuseError.managerShutDown(operation: "connect")) {
            try await central.connect(unknownPeripheral)
        }
        #expect(await !central.isScanning)
    }

    // MARK: Peripheral

    static func peripheralWithoutServices(_ peripheral: any PeripheralManaging) async throws {
        let state = await peripheral.waitForPoweredOn()
        #expect(await peripheral.state == state)
        #expect(await peripheral.services.isEmpty)
        #expect(await !peripheral.isAdvertising)
        await peripheral.stopAdvertising()  // not advertising: nothing changes
        #expect(await !peripheral.isAdvertising)
        let stranger = LocalCharacteristic(
            serviceUUID: "180D", serviceHandle: 1, uuid: "2A37", properties: .notify, permissions: [], handle: 2)
        let refusal =
            state == .poweredOn
            ? APIMisuseError.characteristicNotPublished("2A37", handle: 2)
            : APIMisuseError.notPoweredOn(operation: "updateValue", state: state)
        await #expect(throws: refusal) {
            _ = try await peripheral.updateValue(Data([1]), for: stranger, onSubscribedCentrals: nil)
        }
        #expect(await peripheral.subscribedCentrals(for: stranger).isEmpty)
    }

    /// Applies when the peripheral settles in any state but powered on.
    static func peripheralRefusesWhatNeedsPower(_ peripheral: any PeripheralManaging) async throws -> Bool {
        let state = await peripheral.waitForPoweredOn()
        guard state != .poweredOn else { return false }
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "add", state: state)) {
            try await peripheral.add(GATTService(uuid: "180D"))
        }
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "startAdvertising", state: state)) {
            try await peripheral.startAdvertising(AdvertisementData(localName: "X"))
        }
        await #expect(throws: APIMisuseError.notPoweredOn(operation: "publishL2CAPChannel", state: state)) {
            try await peripheral.publishL2CAPChannel(requiresEncryption: false)
        }
        return true
    }

    /// Applies when the peripheral settles powered on.
    static func peripheralKeepsItsServiceBookkeeping(_ peripheral: any PeripheralManaging) async throws -> Bool {
        guard await peripheral.waitForPoweredOn() == .poweredOn else { return false }
        let service = try await peripheral.add(
            GATTService(
                uuid: "180D",
                characteristics: [GATTCharacteristic(uuid: "2A37", properties: .notify, permissions: [])]))
        #expect(service.uuid == "180D")
        #expect(service.characteristics.map(\.uuid) == ["2A37"])
        #expect(await peripheral.services == [service])
        #expect(await peripheral.subscribedCentrals(for: service.characteristics[0]).isEmpty)
        try await peripheral.remove(service)
        #expect(await peripheral.services.isEmpty)
        await #expect(throws: APIMisuseError.serviceNotPublished("180D", handle: service.handle)) {
            try await peripheral.remove(service)
        }
        let request = ATTRequest(
            id: 987_654, central: RemoteCentral(identifier: unknownPeripheral, maximumUpdateValueLength: 20),
            characteristic: service.characteristics[0], offset: 0, value: nil)
        await #expect(throws: APIMisuseError.unknownRequest(id: 987_654)) {
            try await peripheral.respond(to: request, withResult: .success)
        }
        return true
    }

    static func peripheralShutDownEndsStreams(_ peripheral: any PeripheralManaging) async throws {
        let events = await peripheral.events()
        await peripheral.shutDown()
        var iterator = events.makeAsyncIterator()
        while await iterator.next() != nil {}
        await #expect(throws: APIMisuseError.managerShutDown(operation: "add")) {
            try await peripheral.add(GATTService(uuid: "180F"))
        }
        await #expect(throws: APIMisuseError.managerShutDown(operation: "startAdvertising")) {
            try await peripheral.startAdvertising(AdvertisementData(localName: "X"))
        }
    }
}
