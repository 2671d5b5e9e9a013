import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BlinkyExample

/// Records a plain central's callbacks (for the specs the Blinky app does not look for).
final class Observer: NSObject, CBMCentralManagerDelegate, CBMPeripheralDelegate {
    var discoveries: [(peripheral: CBMPeripheral, data: [String: Any])] = []
    var values: [Data] = []
    var connected = false
    var onDiscovery: (([String: Any]) -> Void)?
    var rssis: [Int] = []
    var restored: [String] = []
    var invalidated: [CBMUUID] = []
    var disconnectTimes: [CFAbsoluteTime] = []
    var disconnectErrors: [NSError] = []

    func centralManager(
        _ central: CBMCentralManager, didDisconnectPeripheral peripheral: CBMPeripheral, timestamp: CFAbsoluteTime,
        isReconnecting: Bool, error: Error?
    ) {
        disconnectTimes.append(timestamp)
        if let error { disconnectErrors.append(error as NSError) }
    }

    func peripheral(_ peripheral: CBMPeripheral, didModifyServices invalidatedServices: [CBMService]) {
        invalidated += invalidatedServices.map(\.uuid)
    }

    func centralManager(_ central: CBMCentralManager, willRestoreState dict: [String: Any]) {
        restored = dict.keys.sorted()
    }

    func centralManagerDidUpdateState(_ central: CBMCentralManager) {}

    func centralManager(
        _ central: CBMCentralManager, didDiscover peripheral: CBMPeripheral, advertisementData: [String: Any],
        rssi: NSNumber
    ) {
        discoveries.append((peripheral, advertisementData))
        rssis.append(rssi.intValue)
        onDiscovery?(advertisementData)
    }

    func centralManager(_ central: CBMCentralManager, didConnect peripheral: CBMPeripheral) {
        connected = true
        peripheral.delegate = self
        peripheral.discoverServices(nil)
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverServices error: Error?) {
        for service in peripheral.services ?? [] { peripheral.discoverCharacteristics(nil, for: service) }
    }

    func peripheral(_ peripheral: CBMPeripheral, didDiscoverCharacteristicsFor service: CBMService, error: Error?) {
        for characteristic in service.characteristics ?? [] where characteristic.properties.contains(.read) {
            peripheral.readValue(for: characteristic)
        }
    }

    func peripheral(_ peripheral: CBMPeripheral, didUpdateValueFor characteristic: CBMCharacteristic, error: Error?) {
        if let value = characteristic.value { values.append(value) }
    }
}

@Suite(.timeLimit(.minutes(10)), .finishesOwnBridges)
struct CoreBluetoothMockStyleTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func theBlinkySpecServesTheAppsReadsWritesAndNotifications(realistic: Bool) async throws {
        let bridge = ownBridge(configuration: realistic ? .realistic(seed: 50) : .init(seed: 50))
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulateInitialState(.poweredOn)
            CBMCentralManagerMock.simulatePeripherals([blinky, heartRateMonitor, beacon])
            let app = BlinkyManager()
            try await bridge.waitForApp { !app.discovered.isEmpty }
            #expect(app.discovered.count == 1)
            let device = app.discovered[0]
            #expect(device.basePeripheral.identifier == blinky.identifier)
            #expect(device.advertisedName == "nRF Blinky")
            device.connect()
            try await bridge.waitForApp { device.isReady && device.isButtonPressed != nil && device.isLEDOn != nil }
            #expect(device.isButtonPressed == true)
            device.turnOnLED()
            try await bridge.waitForApp { device.ledWrites == 1 }
            #expect(device.isLEDOn == true)
            await bridge.waitUntil { $0.log.contains { $0.kind == .subscribe } }
            blinky.simulateValueUpdate(Data([0x00]), for: .buttonCharacteristic)
            try await bridge.waitForApp { device.isButtonPressed == false }
            #expect(device.lastError == nil)
            CBMCentralManagerMock.tearDownSimulation()
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func proximityResetAndDisconnectionReachTheApp(realistic: Bool) async throws {
        let bridge = ownBridge(configuration: realistic ? .realistic(seed: 51) : .init(seed: 51))
        let errors = try await bridge.run { @MainActor () -> [Int] in
            CBMCentralManagerMock.simulatePeripherals([blinky])
            let app = BlinkyManager()
            try await bridge.waitForApp { !app.discovered.isEmpty }
            let device = app.discovered[0]
            device.connect()
            try await bridge.waitForApp { device.isReady && device.isLEDOn != nil }
            var codes: [Int] = []
            // The peripheral drops the link with an error; the app reconnects.
            blinky.simulateDisconnection(withError: CBMError(.connectionTimeout))
            try await bridge.waitForApp { device.disconnections == 1 }
            codes.append((device.lastError as NSError?)?.code ?? -1)
            try await bridge.waitForApp { device.isReady && device.isLEDOn != nil }
            // It resets: the link drops again, and the spec's delegate is told.
            let resets = BlinkyDelegate.resets
            blinky.simulateReset()
            try await bridge.waitForApp { device.disconnections == 2 }
            #expect(BlinkyDelegate.resets > resets)
            codes.append((device.lastError as NSError?)?.code ?? -1)
            try await bridge.waitForApp { device.isReady && device.isLEDOn != nil }
            // It moves out of range: the link times out; back in range, the app reconnects.
            blinky.simulateProximityChange(.outOfRange)
            try await bridge.waitForApp { device.disconnections == 3 }
            codes.append((device.lastError as NSError?)?.code ?? -1)
            blinky.simulateProximityChange(.near)
            try await bridge.waitForApp { device.isReady }
            return codes
        }
        // The error given, then a reset and going out of range, both noticed by the supervision
        // timeout (as CoreBluetoothMock's simulateReset reports too).
        #expect(
            errors == [
                CBMError.Code.connectionTimeout.rawValue, CBMError.Code.connectionTimeout.rawValue,
                CBMError.Code.connectionTimeout.rawValue,
            ])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aRetrievableSpecConnectsWithoutAScanAndItsDelegateAnswersReads() async throws {
        let bridge = ownBridge(configuration: .realistic(seed: 52))
        let values = try await bridge.run { @MainActor () -> [Data] in
            CBMCentralManagerMock.simulatePeripherals([heartRateMonitor])
            let observer = Observer()
            let manager = CBMCentralManagerFactory.instance(delegate: observer, queue: nil, forceMock: false)
            #expect(manager is CBMCentralManagerMock)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let known = manager.retrievePeripherals(withIdentifiers: [heartRateMonitor.identifier])
            #expect(known.count == 1)
            manager.connect(known[0])
            try await bridge.waitForApp { observer.values.count == 1 }
            #expect(known[0].maximumWriteValueLength(for: .withoutResponse) == 182)
            return observer.values
        }
        #expect(values == [Data([0x01])])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func theBeaconsTwoAdvertisingSetsKeepTheirOwnDelaysAndIntervals() async throws {
        let bridge = ownBridge(configuration: .realistic(seed: 53))
        let heard = try await bridge.run { @MainActor () -> [(time: VirtualClock.Instant, data: [String: Any])] in
            CBMCentralManagerMock.simulatePeripherals([beacon])
            let observer = Observer()
            let manager = CBMCentralManagerMock(delegate: observer, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            var heard: [(time: VirtualClock.Instant, data: [String: Any])] = []
            observer.onDiscovery = { data in heard.append((bridge.clock.now, data)) }
            manager.scanForPeripherals(
                withServices: nil, options: [CBMCentralManagerScanOptionAllowDuplicatesKey: true])
            await bridge.advance(by: .seconds(12))
            manager.stopScan()
            return heard
        }
        let named = heard.filter { $0.data[CBMAdvertisementDataLocalNameKey] as? String == "Beacon" }
        let withServiceData = heard.filter { $0.data[CBMAdvertisementDataServiceDataKey] != nil }
        #expect(named.count + withServiceData.count == heard.count)
        // The first set: after its 2 s delay, every second (10 or 11 in 12 s).
        #expect(named.first.map { $0.time >= VirtualClock.Instant(offset: .seconds(2)) } == true)
        #expect((10...11).contains(named.count))
        #expect((named.first?.data[CBMAdvertisementDataIsConnectable] as? NSNumber)?.boolValue == false)
        // The second: every 5 s.
        #expect(withServiceData.count == 2)
        let serviceData = withServiceData.first?.data[CBMAdvertisementDataServiceDataKey] as? [CBMUUID: Data]
        #expect(serviceData?[CBMUUID.beaconService] == Data([0x10, 0x20]))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func twoTestsUseTheSameGlobalSpecAtOnceWithoutInterfering() async throws {
        @Sendable func session(outOfRange: Bool, seed: UInt64) async throws -> Int {
            let bridge = ownBridge(configuration: .realistic(seed: seed))
            return try await bridge.run(timeLimit: .seconds(30)) { @MainActor () -> Int in
                CBMCentralManagerMock.simulatePeripherals([blinky])
                if outOfRange { blinky.simulateProximityChange(.outOfRange) }
                blinky.simulateReset()
                let observer = Observer()
                let manager = CBMCentralManagerMock(delegate: observer, queue: nil)
                try await bridge.waitForApp { manager.state == .poweredOn }
                manager.scanForPeripherals(withServices: nil)
                await bridge.advance(by: .seconds(5))
                return observer.discoveries.count
            }
        }
        async let away = session(outOfRange: true, seed: 60)
        async let nearby = session(outOfRange: false, seed: 61)
        let (farCount, nearCount) = try await (away, nearby)
        #expect(farCount == 0)
        #expect(nearCount == 1)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func powerOffAuthorizationAndFeaturesAreSetOnTheTestsBridge() async throws {
        let bridge = ownBridge(seed: 54)
        try await bridge.run { @MainActor in
            let observer = Observer()
            let manager = CBMCentralManagerMock(delegate: observer, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            CBMCentralManagerMock.simulatePowerOff()
            try await bridge.waitForApp { manager.state == .poweredOff }
            CBMCentralManagerMock.simulatePowerOn()
            try await bridge.waitForApp { manager.state == .poweredOn }
            CBMCentralManagerMock.simulateAuthorization(.denied)
            #expect(CBMCentralManager.authorization == .denied)
            CBMCentralManagerMock.simulateFeaturesSupport = { _ in false }
            #expect(!CBMCentralManager.supports(.extendedScanAndConnect))
        }
        // Another bridge keeps the defaults.
        try await ownBridge(seed: 55).run { @MainActor in
            #expect(CBMCentralManager.authorization == .allowedAlways)
            #expect(CBMCentralManager.supports(.extendedScanAndConnect))
        }
    }

    // CoreBluetoothMock's simulateMacChange (CBMPeripheralSpec.swift) gives the spec a new
    // identifier and makes it unknown (`isKnown = false`), and leaves its connections alone.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aMacChangeGivesANewIdentifierUnknownToTheSystemAndKeepsTheLink() async throws {
        let bridge = ownBridge(seed: 56)
        let newIdentifier = UUID(uuidString: "A0A0A0A0-0000-4000-8000-000000000056")!
        let (found, errorCode) = try await bridge.run { @MainActor () -> ([UUID], Int?) in
            CBMCentralManagerMock.simulatePeripherals([heartRateMonitor])
            let observer = Observer()
            let manager = CBMCentralManagerFactory.instance(forceMock: true)
            manager.delegate = observer
            try await bridge.waitForApp { manager.state == .poweredOn }
            let old = heartRateMonitor.identifier
            let peripheral = try #require(manager.retrievePeripherals(withIdentifiers: [old]).first)
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.state == .connected }

            heartRateMonitor.simulateMacChange(newIdentifier)
            // At once: the new identifier, unknown to the system (not retrievable), the link kept.
            #expect(heartRateMonitor.identifier == newIdentifier)
            #expect(!heartRateMonitor.isKnown)
            #expect(manager.retrievePeripherals(withIdentifiers: [newIdentifier]).isEmpty)
            #expect(peripheral.state == .connected)

            // A scan finds it under the new address, and then the system knows it.
            manager.scanForPeripherals(withServices: nil)
            try await bridge.waitForApp { !observer.discoveries.isEmpty }
            manager.stopScan()
            #expect(heartRateMonitor.isKnown)
            #expect(manager.retrievePeripherals(withIdentifiers: [newIdentifier]).count == 1)

            // The old link still drops as the test says, with the error it gives.
            heartRateMonitor.simulateDisconnection(withError: CBMATTError(.insufficientResources))
            try await bridge.waitForApp { peripheral.state == .disconnected }
            #expect(observer.disconnectTimes.count == 1)
            #expect(observer.disconnectTimes.allSatisfy { $0 >= 0 })
            #expect(peripheral.state == .disconnected)
            return (observer.discoveries.map(\.peripheral.identifier), observer.disconnectErrors.first?.code)
        }
        #expect(found.allSatisfy { $0 == newIdentifier })
        #expect(errorCode == CBMATTError.Code.insufficientResources.rawValue)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aMacChangeWithoutAnIdentifierDerivesOneFromTheSeed() async throws {
        func change(seed: UInt64) async throws -> (old: UUID, new: UUID) {
            try await ownBridge(seed: seed).run { @MainActor in
                CBMCentralManagerMock.simulatePeripherals([heartRateMonitor])
                let old = heartRateMonitor.identifier
                heartRateMonitor.simulateMacChange()
                return (old, heartRateMonitor.identifier)
            }
        }
        let first = try await change(seed: 5)
        let again = try await change(seed: 5)
        let other = try await change(seed: 6)
        #expect(first.new != first.old)
        #expect(first == again)
        #expect(other.new != first.new)
        // Outside any simulation the spec shows the identifier it was built with.
        #expect(heartRateMonitor.identifier == first.old)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func rssiDeviationStateRestorationAndFeatureNamesWorkAsInCoreBluetoothMock() async throws {
        let bridge = ownBridge(configuration: .realistic(seed: 57))
        let (rssis, restored, supports) = try await bridge.run { @MainActor () -> ([Int], [String], Bool) in
            CBMCentralManagerMock.simulateRSSIDeviation(.custom(10))
            CBMCentralManagerMock.simulatePeripherals([heartRateMonitor])
            CBMCentralManagerMock.simulateStateRestoration = { identifier in
                identifier == "watch"
                    ? [CBMCentralManagerRestoredStateScanServicesKey: [CBMUUID.heartRateService]] : nil
            }
            let observer = Observer()
            let manager = CBMCentralManagerMock(
                delegate: observer, queue: nil, options: [CBMCentralManagerOptionRestoreIdentifierKey: "watch"])
            try await bridge.waitForApp { manager.state == .poweredOn }
            let feature: CBMCentralManager.Feature = .extendedScanAndConnect
            manager.scanForPeripherals(
                withServices: nil, options: [CBMCentralManagerScanOptionAllowDuplicatesKey: true])
            try await bridge.waitForApp { observer.rssis.count >= 20 }
            return (observer.rssis, observer.restored, CBMCentralManager.supports(feature))
        }
        // -100 dBm (far, as CoreBluetoothMock has it) ± 10.
        #expect(rssis.allSatisfy { (-110 ... -90).contains($0) })
        #expect(Set(rssis).count > 1)
        #expect(restored == [CBMCentralManagerRestoredStateScanServicesKey])
        #expect(supports)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func serviceAdvertisementAndSystemConnectionChangesReachTheCentral() async throws {
        let bridge = ownBridge(seed: 58)
        try await bridge.run { @MainActor in
            CBMCentralManagerMock.simulatePeripherals([blinky, heartRateMonitor])
            let observer = Observer()
            let manager = CBMCentralManagerMock(delegate: observer, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }

            // Another app connects to the heart-rate monitor: it is retrievable as connected.
            #expect(manager.retrieveConnectedPeripherals(withServices: [.heartRateService]).isEmpty)
            heartRateMonitor.simulateConnection()
            try await bridge.waitForApp {
                manager.retrieveConnectedPeripherals(withServices: [.heartRateService]).count == 1
            }

            // The Blinky advertises a new name.
            manager.scanForPeripherals(
                withServices: [.nordicBlinkyService], options: [CBMCentralManagerScanOptionAllowDuplicatesKey: true])
            try await bridge.waitForApp { !observer.discoveries.isEmpty }
            blinky.simulateAdvertisementChange([
                CBMAdvertisementConfig(
                    data: [
                        CBMAdvertisementDataLocalNameKey: "Blinky 2",
                        CBMAdvertisementDataServiceUUIDsKey: [CBMUUID.nordicBlinkyService],
                    ], interval: 0.25)
            ])
            try await bridge.waitForApp {
                observer.discoveries.contains { $0.data[CBMAdvertisementDataLocalNameKey] as? String == "Blinky 2" }
            }
            manager.stopScan()

            // Its services change while connected: the central hears which went away.
            let peripheral = observer.discoveries[0].peripheral
            manager.connect(peripheral)
            try await bridge.waitForApp { peripheral.services?.count == 1 }
            blinky.simulateServiceChange(newName: "Blinky 3", newServices: [.heartRateService])
            try await bridge.waitForApp { observer.invalidated == [.nordicBlinkyService] }
            peripheral.discoverServices(nil)
            try await bridge.waitForApp { peripheral.services?.map(\.uuid) == [.heartRateService] }
        }
    }
}
