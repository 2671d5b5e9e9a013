import BLECore
import BLEMockKit
import Foundation
import Testing

/// A peripheral with encryption-required characteristics and a central connected to it.
struct SecureRig {
    let bridge: MockBLEBridge
    let peripheral: MockPeripheralManager
    let central: MockCentralManager
    let secret: RemoteCharacteristic
    let lock: RemoteCharacteristic
    let alarm: RemoteCharacteristic
    let open: RemoteCharacteristic

    static func make(
        pairing: PairingBehavior, bridge: MockBLEBridge.Configuration = .fast
    ) async throws -> SecureRig {
        let bridge = MockBLEBridge(configuration: bridge)
        let peripheral = MockPeripheralManager(bridge: bridge)
        let service = try await peripheral.add(
            GATTService(
                uuid: "FEE0",
                characteristics: [
                    GATTCharacteristic(uuid: "FEE1", properties: .read, permissions: .readEncryptionRequired),
                    GATTCharacteristic(uuid: "FEE2", properties: .write, permissions: .writeEncryptionRequired),
                    GATTCharacteristic(uuid: "FEE3", properties: .notifyEncryptionRequired, permissions: []),
                    GATTCharacteristic(uuid: "FEE4", properties: .read, permissions: .readable, value: Data([4])),
                ]))
        try await peripheral.setValue(Data([0x5E]), for: service.characteristics[0])
        try await peripheral.startAdvertising(AdvertisementData(localName: "Lock", serviceUUIDs: ["FEE0"]))
        let central = MockCentralManager(configuration: .init(pairing: pairing), bridge: bridge)
        try await central.scanForPeripherals(withServices: ["FEE0"])
        await bridge.advance(by: .milliseconds(200))
        try await central.connect(peripheral.identifier)
        let all = try await central.discoverAll(for: peripheral.identifier)
        return SecureRig(
            bridge: bridge, peripheral: peripheral, central: central, secret: all[0], lock: all[1], alarm: all[2],
            open: all[3])
    }

    var bonded: Bool {
        get async { await bridge.isBonded(central: central.identifier, peripheral: peripheral.identifier) }
    }

    var pairings: [BridgeLogEntry] {
        get async { await bridge.log.filter { $0.kind == .paired } }
    }

    func reconnect() async throws {
        try await central.cancelPeripheralConnection(peripheral.identifier)
        try await central.connect(peripheral.identifier)
    }
}

@Suite("Pairing and encryption", .timeLimit(.minutes(10)))
struct PairingTests {
    @Test func withoutPairingEncryptedAttributesAnswerInsufficientAuthentication() async throws {
        let rig = try await SecureRig.make(pairing: .never)
        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await rig.central.readValue(for: rig.secret)
        }
        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await rig.central.writeValue(Data([1]), for: rig.lock, type: .withResponse)
        }
        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await rig.central.setNotifyValue(true, for: rig.alarm)
        }
        #expect(try await rig.central.readValue(for: rig.open) == Data([4]))
        #expect(await !rig.bonded)
        #expect(await rig.pairings.isEmpty)
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
    }

    /// A characteristic declaration's properties are one byte: a central sees a characteristic
    /// published as notifying (or indicating) only with encryption as one that notifies (or
    /// indicates), whose CCCD needs an encrypted link.
    @Test func aCentralSeesEncryptionRequiredPropertiesAsTheNotifyAndIndicateBits() async throws {
        let rig = try await SecureRig.make(pairing: .never)
        #expect(rig.alarm.properties == .notify)
        #expect(rig.secret.properties == .read)
        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await rig.central.setNotifyValue(true, for: rig.alarm)
        }
    }

    @Test func pairingOnFirstAccessTakesItsTimeThenTheAccessSucceeds() async throws {
        let rig = try await SecureRig.make(pairing: .automatic(duration: .milliseconds(800), outcome: .succeeds))
        let before = await rig.bridge.now
        #expect(try await rig.central.readValue(for: rig.secret) == Data([0x5E]))
        #expect(before.duration(to: await rig.bridge.now) == .milliseconds(800))
        #expect(await rig.bonded)
        let pairings = await rig.pairings
        #expect(pairings.count == 1)
        #expect(pairings.first?.succeeded == true)
        #expect(pairings.first?.central == rig.central.identifier)

        // The link is encrypted now: no second pairing for other encrypted attributes.
        try await rig.central.writeValue(Data([1]), for: rig.lock, type: .withResponse)
        try await rig.central.setNotifyValue(true, for: rig.alarm)
        #expect(await rig.pairings.count == 1)
    }

    @Test(arguments: ["write", "subscribe"])
    func writesAndSubscriptionsPairToo(_ access: String) async throws {
        let rig = try await SecureRig.make(pairing: .onFirstAccess)
        if access == "write" {
            try await rig.central.writeValue(Data([1]), for: rig.lock, type: .withResponse)
        } else {
            try await rig.central.setNotifyValue(true, for: rig.alarm)
        }
        #expect(await rig.bonded)
        #expect(await rig.pairings.count == 1)
    }

    @Test func realisticPairingCostsTheRefusedRoundTripAndTheDuration() async throws {
        let rig = try await SecureRig.make(
            pairing: .automatic(duration: .seconds(2), outcome: .succeeds), bridge: .realistic(seed: 5))
        let before = await rig.bridge.now
        _ = try await rig.central.readValue(for: rig.secret)
        let elapsed = before.duration(to: await rig.bridge.now)
        // A refused read, two seconds of pairing, the retried read: two round trips of ~30 ms.
        #expect(elapsed > .milliseconds(2_050) && elapsed < .milliseconds(2_070))
    }

    @Test func aRejectedPairingFailsWithThePeripheralsErrorAndLeavesNoBond() async throws {
        let rig = try await SecureRig.make(pairing: .automatic(duration: .milliseconds(300), outcome: .rejected))
        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await rig.central.readValue(for: rig.secret)
        }
        #expect(await !rig.bonded)
        #expect(await rig.pairings.map(\.error) == [.att(ATTError(.insufficientAuthentication))])
        // Each access asks again.
        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await rig.central.readValue(for: rig.secret)
        }
        #expect(await rig.pairings.count == 2)
    }

    @Test func aPairingThatTimesOutFailsWithEncryptionTimedOut() async throws {
        let rig = try await SecureRig.make(pairing: .automatic(duration: .seconds(30), outcome: .timesOut))
        await #expect(throws: CoreBluetoothError(.encryptionTimedOut)) {
            try await rig.central.readValue(for: rig.secret)
        }
        #expect(await !rig.bonded)
        #expect(await rig.bridge.now == .zero.advanced(by: .milliseconds(200) + .seconds(30)))
    }

    @Test("After a pairing times out, no pairing starts again on that link: accesses fail at once; a new link may pair")
    func noPairingAfterATimeoutOnTheSameLink() async throws {
        let rig = try await SecureRig.make(pairing: .automatic(duration: .seconds(30), outcome: .timesOut))
        await #expect(throws: CoreBluetoothError(.encryptionTimedOut)) {
            try await rig.central.readValue(for: rig.secret)
        }
        let after = await rig.bridge.now
        // Vol 3, Part H, 3.4: the Security Manager is done on this link; the server's refusal stands.
        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await rig.central.writeValue(Data([1]), for: rig.lock, type: .withResponse)
        }
        await #expect(throws: ATTError(.insufficientAuthentication)) {
            try await rig.central.setNotifyValue(true, for: rig.alarm)
        }
        #expect(await rig.pairings.count == 1)
        #expect(await rig.bridge.now < after.advanced(by: .seconds(1)))
        // A new link may try again (and here times out again).
        try await rig.reconnect()
        try await rig.central.discoverAll(for: rig.peripheral.identifier)
        let secret = try await rig.central.characteristic("FEE1", of: rig.peripheral.identifier)
        await #expect(throws: CoreBluetoothError(.encryptionTimedOut)) { try await rig.central.readValue(for: secret) }
        #expect(await rig.pairings.count == 2)
    }

    @Test("A write without response to an attribute that needs encryption starts no pairing and never arrives")
    func writeCommandsNeverPair() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(configuration: .init(requestHandling: .manual), bridge: bridge)
        _ = try await peripheral.add(
            GATTService(
                uuid: "FEE0",
                characteristics: [
                    GATTCharacteristic(
                        uuid: "FEE5", properties: .writeWithoutResponse, permissions: .writeEncryptionRequired)
                ]))
        try await peripheral.startAdvertising(AdvertisementData(localName: "Lock"))
        let central = MockCentralManager(
            configuration: .init(pairing: .automatic(duration: .seconds(1), outcome: .succeeds)), bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        try await central.connect(peripheral.identifier)
        let command = try await central.discoverAll(for: peripheral.identifier)[0]
        try await central.writeValue(Data([7]), for: command, type: .withoutResponse)
        await bridge.advance(by: .seconds(5))
        #expect(await bridge.log.filter { $0.kind == .paired }.isEmpty)
        #expect(await !bridge.isBonded(central: central.identifier, peripheral: peripheral.identifier))
        let dropped = await bridge.log.last { $0.kind == .refused }
        #expect(dropped?.error == .att(ATTError(.insufficientAuthentication)))
        #expect(dropped?.detail?.hasPrefix("write command dropped by the peripheral") == true)
        #expect(await bridge.log.filter { $0.kind == .writeRequest }.isEmpty)
    }

    @Test func bondsSurviveReconnectionAndEncryptTheNewLinkAtOnce() async throws {
        let rig = try await SecureRig.make(pairing: .onFirstAccess)
        _ = try await rig.central.readValue(for: rig.secret)
        try await rig.reconnect()
        try await rig.central.discoverAll(for: rig.peripheral.identifier)
        let secret = try await rig.central.characteristic("FEE1", of: rig.peripheral.identifier)
        let before = await rig.bridge.now
        #expect(try await rig.central.readValue(for: secret) == Data([0x5E]))
        #expect(await rig.bridge.now == before)  // no pairing this time
        #expect(await rig.pairings.count == 1)
    }

    @Test func aBondThePeripheralRemovedFailsReconnectionUntilTheCentralForgetsIt() async throws {
        let rig = try await SecureRig.make(pairing: .onFirstAccess)
        _ = try await rig.central.readValue(for: rig.secret)
        try await rig.central.cancelPeripheralConnection(rig.peripheral.identifier)
        await rig.peripheral.simulateBondRemoval(of: rig.central.identifier)
        #expect(await rig.bridge.log.last?.kind == .bondRemoved)
        #expect(await rig.bridge.log.last?.detail == "by the peripheral")

        for _ in 0..<2 {
            await #expect(throws: CoreBluetoothError(.peerRemovedPairingInformation)) {
                try await rig.central.connect(rig.peripheral.identifier)
            }
            #expect(await !rig.central.isConnected(rig.peripheral.identifier))
        }
        #expect(await rig.bonded)  // the central still has its stale keys

        await rig.central.simulateBondRemoval(of: rig.peripheral.identifier)
        #expect(await !rig.bonded)
        try await rig.central.connect(rig.peripheral.identifier)
        try await rig.central.discoverAll(for: rig.peripheral.identifier)
        let secret = try await rig.central.characteristic("FEE1", of: rig.peripheral.identifier)
        #expect(try await rig.central.readValue(for: secret) == Data([0x5E]))  // pairs again
        #expect(await rig.pairings.count == 2)
    }

    @Test func removingABondThatDoesNotExistChangesNothing() async throws {
        let rig = try await SecureRig.make(pairing: .never)
        await rig.peripheral.simulateBondRemoval(of: rig.central.identifier)
        await rig.central.simulateBondRemoval(of: rig.peripheral.identifier)
        #expect(await !rig.bridge.log.contains { $0.kind == .bondRemoved })
    }

    @Test func theRealisticPresetPairsOnFirstAccessAndTheFastOneNever() {
        #expect(MockCentralManager.Configuration.realistic(seed: 1).pairing == .onFirstAccess)
        #expect(MockCentralManager.Configuration.fast.pairing == .never)
        #expect(PairingBehavior.onFirstAccess == .automatic(duration: .seconds(1), outcome: .succeeds))
    }
}
