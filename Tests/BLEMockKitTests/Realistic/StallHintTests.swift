import BLECore
import BLEMockKit
import Foundation
import Testing

/// A stall report says what happened that may explain the hang, beside what waited: a link lost
/// and not made again, an update nobody was subscribed to, the last operations that failed.
@Suite("What a stall report says may explain it", .timeLimit(.minutes(10)))
struct StallHintTests {
    static let service: BluetoothUUID = "FFA0"
    static let level: BluetoothUUID = "FFA1"
    static let status: BluetoothUUID = "FFA2"

    /// A sensor with one readable, notifying characteristic, and a central connected to it.
    struct Pair {
        let bridge: MockBLEBridge
        let sensor: MockPeripheralManager
        let central: MockCentralManager
        /// The sensor's notifying characteristic, as it and the central see it.
        let local: LocalCharacteristic
        let remote: RemoteCharacteristic
        /// The central's view of the sensor's readable characteristic.
        let readable: RemoteCharacteristic

        var central8: Substring { central.identifier.uuidString.prefix(8) }
        var sensor8: Substring { sensor.identifier.uuidString.prefix(8) }

        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        static func connected(realistic: Bool) async throws -> Pair {
            let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 5) : .init(seed: 5))
            let sensor = MockPeripheralManager(
                configuration: realistic ? .realistic(seed: 5) : .init(), bridge: bridge)
            let central = MockCentralManager(configuration: realistic ? .realistic(seed: 5) : .fast, bridge: bridge)
            let (local, remote, readable) = try await bridge.run {
                _ = await sensor.waitForPoweredOn()
                _ = await central.waitForPoweredOn()
                let published = try await sensor.add(
                    GATTService(
                        uuid: service,
                        characteristics: [
                            GATTCharacteristic(
                                uuid: level, properties: .read, permissions: .readable, value: Data([1])),
                            GATTCharacteristic(uuid: status, properties: .notify, permissions: .readable),
                        ]))
                try await sensor.startAdvertising(AdvertisementData(localName: "Hint", serviceUUIDs: [service]))
                try await central.scanForPeripherals(withServices: [service])
                try await bridge.clock.sleep(for: .milliseconds(300))  // discovered by then
                try await central.connect(sensor.identifier)
                await central.stopScan()
                try await central.discoverAll(for: sensor.identifier)
                let status = try await central.characteristic(status, of: sensor.identifier)
                return (
                    published.characteristics[1], status, try await central.characteristic(level, of: sensor.identifier)
                )
            }
            return Pair(
                bridge: bridge, sensor: sensor, central: central, local: local, remote: remote, readable: readable)
        }

        /// The stall of a run of `body` that then waits for what never comes.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        func stall(after body: @escaping @Sendable () async throws -> Void) async throws -> MockBLEBridge.Stall {
            let bridge = bridge
            return try await #require(throws: MockBLEBridge.Stall.self) {
                try await bridge.run(stallPatience: .zero) {
                    try await body()
                    try await bridge.waitForApp { false }
                }
            }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A link that went down with an error and was not made again is named", arguments: [false, true])
    func aLostLinkIsNamed(realistic: Bool) async throws {
        let pair = try await Pair.connected(realistic: realistic)
        let bridge = pair.bridge
        let (central, sensor) = (pair.central.identifier, pair.sensor.identifier)
        let stall = try await pair.stall {
            await bridge.simulateDisconnection(
                central: central, peripheral: sensor, error: CoreBluetoothError(.connectionTimeout))
        }
        let lostAt = try #require(await bridge.log.last { $0.kind == .disconnected }?.time)
        #expect(
            stall.hints == [
                "central \(pair.central8) lost its link to peripheral \(pair.sensor8) at \(lostAt) "
                    + "(\(CoreBluetoothError(.connectionTimeout))) and has not connected to it again: nothing the "
                    + "app waits for over that link can come"
            ])
        #expect(stall.description.contains("What may explain it:\n- central \(pair.central8) lost its link"))
    }

    /// The central's own Bluetooth leaving powered on takes its links down (logged with
    /// peripheralDisconnected), but the app hears only the state change, as from CoreBluetooth: the
    /// hint says so rather than quote an error the app never saw.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A link the central's own Bluetooth reset took down, and not made again, is named with the state change",
        arguments: [false, true])
    func aLinkLostToTheCentralsOwnResetIsNamedWithTheStateChange(realistic: Bool) async throws {
        let pair = try await Pair.connected(realistic: realistic)
        let (bridge, central) = (pair.bridge, pair.central)
        let stall = try await pair.stall {
            await central.simulateStateChange(.resetting)
            await central.simulateStateChange(.poweredOn)
        }
        let lost = try #require(await bridge.log.last { $0.kind == .disconnected })
        let dropped: LoggedError = .coreBluetooth(CoreBluetoothError(.peripheralDisconnected))
        #expect(lost.error == dropped)
        let expected: String =
            "central \(pair.central8) lost its link to peripheral \(pair.sensor8) at \(lost.time) when its own "
            + "Bluetooth went resetting (the app heard the state change, not a disconnection, as from "
            + "CoreBluetooth: once powered on again it connects again, after a reset with the peripheral objects "
            + "it retrieves or discovers again) and has not connected to it again: nothing the app waits for over "
            + "that link can come"
        #expect(stall.hints.first == expected, "\(stall.hints)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A link an ATT transaction timeout took down, heard with no error, and not made again is named with why",
        arguments: [false, true])
    func aLinkLostToATransactionTimeoutIsNamed(realistic: Bool) async throws {
        let pair = try await Pair.connected(realistic: realistic)
        let (bridge, central, readable) = (pair.bridge, pair.central, pair.readable)
        await bridge.inject(ErrorInjection(.read, failure: .neverAnswers, frequency: .once))
        let stall = try await pair.stall {
            // The read's answer never comes: 30 s later the transaction times out and the link
            // goes; the app, which took a disconnection with no error for its own, waits on.
            _ = try? await central.readValue(for: readable)
        }
        let lost = try #require(await bridge.log.last { $0.kind == .disconnected })
        #expect(lost.error == nil)
        let hint = try #require(stall.hints.first)
        #expect(
            hint
                == "central \(pair.central8) lost its link to peripheral \(pair.sensor8) at \(lost.time) when an ATT "
                + "transaction timed out (the central heard of the disconnection with no error, as CoreBluetooth "
                + "reports this one: an app that takes no error for its own cancellation does not reconnect) and has "
                + "not connected to it again: nothing the app waits for over that link can come")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A stall after the run's stall patience says how long it waited, and that an app's own wall-clock timer longer than that looks the same"
    )
    func aStallNamesItsPatience() async throws {
        let bridge = MockBLEBridge()
        let stall = try await #require(throws: MockBLEBridge.Stall.self) {
            try await bridge.run(stallPatience: .milliseconds(20)) { try await bridge.waitForApp { false } }
        }
        #expect(stall.reason == .nothingScheduled)
        #expect(stall.stallPatience == .milliseconds(20))
        #expect(
            stall.description.contains(
                "no call or callback came from outside the run for \(Duration.milliseconds(20)) of wall-clock time"))
        #expect(stall.description.contains("longer than that stall patience looks the same"))
        // With no patience, nothing outside the run was waited for: the report does not speak of it.
        let impatient = try await #require(throws: MockBLEBridge.Stall.self) {
            try await bridge.run(stallPatience: .zero) { try await bridge.waitForApp { false } }
        }
        #expect(impatient.stallPatience == .zero)
        #expect(
            impatient.description.contains(
                "every task waits and nothing is scheduled: what they wait for cannot happen"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A peripheral whose refused update it did not send again, once told it may, is named, until it sends one")
    func aRefusedUpdateNotSentAgainIsNamed() async throws {
        let pair = try await Pair.connected(realistic: true)
        let (bridge, sensor, central, local, remote) = (pair.bridge, pair.sensor, pair.central, pair.local, pair.remote)
        let stall = try await pair.stall {
            try await central.setNotifyValue(true, for: remote)
            // A receipt sent until the transmit queue refuses one, which the app then drops.
            for count in 0..<10_000 where try await !sensor.updateValue(Data([UInt8(count % 256)]), for: local) {
                break
            }
        }
        let refusal = try #require(
            await bridge.log.last { $0.detail == "transmit queue full: updateValue returned false" })
        let ready = try #require(await bridge.log.last { $0.kind == .readyToUpdateSubscribers })
        #expect(ready.time > refusal.time)
        #expect(
            stall.hints.contains(
                "peripheral \(pair.sensor8) had updateValue of FFA2@\(local.handle) refused at \(refusal.time) (its "
                    + "transmit queue was full) and has sent no update since, though told at \(ready.time) that it may "
                    + "(peripheralManagerIsReady): a refused update is not sent, so an app that does not send it again "
                    + "loses it"), "\(stall.hints)")
        // Sent again, it is not named.
        let after = try await pair.stall { _ = try await sensor.updateValue(Data([0xFF]), for: local) }
        #expect(!after.hints.contains { $0.contains("had updateValue of") }, "\(after.hints)")
    }

    /// Why a peripheral cannot be connected to, and how a stall names it.
    enum Unconnectable: String, CaseIterable, Sendable {
        case outOfRange = "which is out of range"
        case poweredOff = "whose Bluetooth is poweredOff"
        case notAdvertising = "which is not advertising"
    }

    /// A connection attempt that cannot complete does not time out (as with CoreBluetooth): a run
    /// whose app waits for it stalls, and the report says why the attempt waits.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A connection attempt waiting for a peripheral that cannot be connected to says why",
        arguments: Unconnectable.allCases, [false, true])
    func aWaitingAttemptSaysWhy(reason: Unconnectable, realistic: Bool) async throws {
        let pair = try await Pair.connected(realistic: realistic)
        let (bridge, central, sensor) = (pair.bridge, pair.central, pair.sensor)
        let stall = try await pair.stall {
            try await central.cancelPeripheralConnection(sensor.identifier)
            switch reason {
            case .outOfRange: await sensor.simulateProximityChange(.outOfRange)
            case .poweredOff: await sensor.simulateStateChange(.poweredOff)
            case .notAdvertising: await sensor.stopAdvertising()
            }
            bridge.task { try await central.connect(sensor.identifier) }
        }
        #expect(
            stall.hints == [
                "central \(pair.central8) is still trying to connect to peripheral \(pair.sensor8), "
                    + "\(reason.rawValue): a connection attempt does not time out (as with CoreBluetooth); it "
                    + "completes once the peripheral is in range, powered on and connectable"
            ])
        #expect(stall.description.contains("What may explain it:\n- central \(pair.central8) is still trying"))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A lost link is not named once the app connects again, or while it tries to")
    func aLinkMadeAgainOrBeingMadeIsNotNamed() async throws {
        let again = try await Pair.connected(realistic: false)
        let (bridge, central, sensor) = (again.bridge, again.central, again.sensor)
        let reconnected = try await again.stall {
            await bridge.simulateDisconnection(
                central: central.identifier, peripheral: sensor.identifier,
                error: CoreBluetoothError(.connectionTimeout))
            try await central.connect(sensor.identifier)
        }
        #expect(reconnected.hints.isEmpty, "\(reconnected.hints)")
        #expect(!reconnected.description.contains("What may explain it"))

        let trying = try await Pair.connected(realistic: true)
        let (gone, phone) = (trying.sensor, trying.central)
        let tryingBridge = trying.bridge
        let pending = try await trying.stall {
            await gone.simulateProximityChange(.outOfRange)
            await tryingBridge.simulateDisconnection(
                central: phone.identifier, peripheral: gone.identifier, error: CoreBluetoothError(.connectionTimeout))
            // A connect that cannot complete (out of range): pending, so the app did try.
            tryingBridge.task { try await phone.connect(gone.identifier) }
        }
        #expect(!pending.hints.contains { $0.contains("lost its link") }, "\(pending.hints)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A disconnection the app asked for is not a lost link", arguments: [false, true])
    func anAppsOwnDisconnectionIsNotNamed(realistic: Bool) async throws {
        let pair = try await Pair.connected(realistic: realistic)
        let (central, sensor) = (pair.central, pair.sensor)
        let stall = try await pair.stall { try await central.cancelPeripheralConnection(sensor.identifier) }
        #expect(stall.hints.isEmpty, "\(stall.hints)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("An update nobody was subscribed to is named once per characteristic, until one is heard")
    func anUnheardUpdateIsNamed() async throws {
        let pair = try await Pair.connected(realistic: false)
        let (bridge, central, sensor, local, remote) = (pair.bridge, pair.central, pair.sensor, pair.local, pair.remote)
        let second = await bridge.now.advanced(by: .seconds(1))
        let stall = try await pair.stall {
            _ = try await sensor.updateValue(Data([2]), for: local)
            try await bridge.clock.sleep(for: .seconds(1))
            _ = try await sensor.updateValue(Data([3]), for: local)
        }
        #expect(
            stall.hints == [
                "peripheral \(pair.sensor8) updated FFA2@\(local.handle) at \(second) with no central subscribed, so nobody "
                    + "received it (subscriptions end with the link: a central that connects again subscribes again)"
            ])

        // Once an update reaches a subscriber, the characteristic's unheard one is not named.
        let heard = try await pair.stall {
            _ = try await sensor.updateValue(Data([4]), for: local)
            try await central.setNotifyValue(true, for: remote)
            _ = try await sensor.updateValue(Data([5]), for: local)
        }
        #expect(heard.hints.isEmpty, "\(heard.hints)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("The last three failed operations are recalled, oldest first")
    func theLastFailuresAreRecalled() async throws {
        let pair = try await Pair.connected(realistic: false)
        let (bridge, central, remote) = (pair.bridge, pair.central, pair.readable)
        let codes: [ATTError.Code] = [
            .readNotPermitted, .insufficientAuthentication, .unlikelyError, .insufficientEncryption,
        ]
        let stall = try await pair.stall {
            for code in codes {
                await central.inject(ErrorInjection(.read, failure: .att(code), frequency: .once))
                await #expect(throws: ATTError(code)) { try await central.readValue(for: remote) }
            }
        }
        let failed = await bridge.log.filter { $0.error != nil }.suffix(3)
        #expect(failed.count == 3)
        #expect(stall.hints == failed.map { "an operation failed (did the app handle it?): \($0)" })
        #expect(stall.hints.last?.contains("insufficientEncryption") == true)
    }

    /// A peripheral whose manager was shut down (a `CBMPeripheralManager` the app let go of) is
    /// named so by a scan's hint and a waiting connection's, rather than by the state it was left in.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A peripheral whose manager was shut down is named so", arguments: [false, true])
    func aShutDownPeripheralIsNamedSo(realistic: Bool) async throws {
        let pair = try await Pair.connected(realistic: realistic)
        let (bridge, central, sensor) = (pair.bridge, pair.central, pair.sensor)
        await sensor.shutDown()
        let stall = try await pair.stall {
            try await central.scanForPeripherals(withServices: [Self.service])
        }
        let phrase: String =
            "whose manager was shut down (its app let go of it: an app keeps its CBPeripheralManager, as with "
            + "CoreBluetooth, or the test keeps its MockPeripheralManager)"
        #expect(stall.hints.contains { $0.contains("peripheral \(pair.sensor8) \(phrase)") }, "\(stall.hints)")
        #expect(!stall.hints.contains { $0.contains("has Bluetooth") }, "\(stall.hints)")
        let connect = try #require(
            await #require(throws: MockBLEBridge.Stall.self) {
                try await bridge.run(stallPatience: .zero) {
                    try await central.connect(sensor.identifier)
                }
            }.hints.first { $0.contains("is still trying to connect") })
        #expect(connect.contains(", \(phrase): a connection attempt does not time out"), "\(connect)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A stall with nothing to explain it has no such section")
    func aPlainStallHasNoHints() async throws {
        let pair = try await Pair.connected(realistic: true)
        let stall = try await pair.stall {}
        #expect(stall.hints.isEmpty)
        #expect(!stall.description.contains("What may explain it"))
    }
}

extension StallHintTests {
    /// Why a scan hears a peripheral not, and how a stall names it.
    enum Unheard: String, CaseIterable, Sendable {
        case outOfRange = "is out of range"
        case poweredOff = "has Bluetooth poweredOff"
        case notAdvertising = "is not advertising"
        case otherServices = "advertises services 180D, none the scan asks for"
        case noServices = "advertises no service UUIDs"
    }

    /// What ends every fruitless scan's hint.
    static let scanNote =
        " (a scan does not time out: it discovers a peripheral once it is in range, powered on and advertising "
        + "what the scan asks for)"

    /// A bridge with `count` sensors advertising the service (until `body` changes them) and a
    /// central; runs `body` with them, then lets the central scan for the service and waits for
    /// what never comes. Returns the stall and when the scan started.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func scanStall(
        realistic: Bool, sensors count: Int = 1, scanFor services: [BluetoothUUID]? = [service],
        afterDiscovery: (@Sendable ([MockPeripheralManager]) async -> Void)? = nil,
        _ body: @escaping @Sendable ([MockPeripheralManager], MockCentralManager) async throws -> Void
    ) async throws -> (MockBLEBridge.Stall, VirtualClock.Instant, [MockPeripheralManager], MockCentralManager) {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 8) : .init(seed: 8))
        let sensors = (0..<count).map { _ in
            MockPeripheralManager(configuration: realistic ? .realistic(seed: 8) : .init(), bridge: bridge)
        }
        let central = MockCentralManager(configuration: realistic ? .realistic(seed: 8) : .fast, bridge: bridge)
        let stall = try await #require(throws: MockBLEBridge.Stall.self) {
            // (Realistic scans keep hearing advertising events: the run ends at its time limit.)
            try await bridge.run(timeLimit: .seconds(60), stallPatience: .zero) {
                for sensor in sensors {
                    _ = await sensor.waitForPoweredOn()
                    try await sensor.startAdvertising(AdvertisementData(localName: "Hint", serviceUUIDs: [service]))
                }
                _ = await central.waitForPoweredOn()
                try await body(sensors, central)
                try await central.scanForPeripherals(withServices: services)
                if let afterDiscovery {
                    await bridge.waitUntil { bridge in bridge.log.contains { $0.kind == .discovered } }
                    await afterDiscovery(sensors)
                }
                try await bridge.waitForApp { false }
            }
        }
        let started = try #require(await bridge.log.last { $0.kind == .scanStarted }?.time)
        return (stall, started, sensors, central)
    }

    /// A scan does not time out: an app that waits for a discovery that cannot come stalls, and
    /// the report says why the peripheral on the bridge is not heard.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A scan that discovered nothing says why the peripheral is not heard", arguments: Unheard.allCases,
        [false, true])
    func aFruitlessScanSaysWhy(reason: Unheard, realistic: Bool) async throws {
        let (stall, started, sensors, central) = try await Self.scanStall(realistic: realistic) { sensors, _ in
            switch reason {
            case .outOfRange: await sensors[0].simulateProximityChange(.outOfRange)
            case .poweredOff: await sensors[0].simulateStateChange(.poweredOff)
            case .notAdvertising: await sensors[0].stopAdvertising()
            case .otherServices:
                await sensors[0].simulateAdvertisementChange(AdvertisementData(serviceUUIDs: ["180D"]))
            case .noServices: await sensors[0].simulateAdvertisementChange(AdvertisementData(localName: "Hint"))
            }
        }
        #expect(
            stall.hints == [
                "central \(central.identifier.uuidString.prefix(8)) has scanned for services FFA0 since \(started) "
                    + "and discovered nothing: peripheral \(sensors[0].identifier.uuidString.prefix(8)) "
                    + reason.rawValue + Self.scanNote
            ])
        #expect(stall.description.contains("What may explain it:\n- central "), "\(stall)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A fruitless scan on a bridge with no peripheral says so, and names what it scanned for")
    func aFruitlessScanWithNoPeripheral() async throws {
        let (stall, started, _, central) = try await Self.scanStall(realistic: false, sensors: 0, scanFor: nil) {
            _, _ in
        }
        #expect(
            stall.hints == [
                "central \(central.identifier.uuidString.prefix(8)) has scanned for any services since \(started) "
                    + "and discovered nothing: no peripheral is on this bridge" + Self.scanNote
            ])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A fruitless scan explains four peripherals and counts the rest")
    func aFruitlessScanExplainsFourPeripherals() async throws {
        let (stall, _, sensors, _) = try await Self.scanStall(realistic: false, sensors: 6) { sensors, _ in
            for sensor in sensors { await sensor.simulateProximityChange(.outOfRange) }
        }
        let hint = try #require(stall.hints.first)
        #expect(stall.hints.count == 1)
        for sensor in sensors.prefix(4) {
            #expect(hint.contains("peripheral \(sensor.identifier.uuidString.prefix(8)) is out of range"))
        }
        #expect(!hint.contains(sensors[4].identifier.uuidString.prefix(8)))
        #expect(hint.contains("is out of range; 2 more (a scan does not time out"), "\(hint)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A background scan for any services says the background discovers nothing with it")
    func aBackgroundScanForAnyServices() async throws {
        let (stall, started, _, central) = try await Self.scanStall(realistic: false, scanFor: nil) { _, central in
            await central.simulateBackgroundExecution(true)
        }
        #expect(
            stall.hints == [
                "central \(central.identifier.uuidString.prefix(8)) has scanned for any services since \(started) "
                    + "and discovered nothing: in the background a scan for any services discovers nothing (as on iOS)"
            ])
    }

    /// A scan that discovered the peripheral it looked for has nothing to explain, also once the
    /// peripheral has gone out of range since.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A scan that discovered a peripheral is not named", arguments: [false, true])
    func aScanThatDiscoveredIsNotNamed(realistic: Bool) async throws {
        let (stall, _, _, _) = try await Self.scanStall(realistic: realistic) { _, _ in }
        #expect(!stall.hints.contains { $0.contains("has scanned") }, "\(stall.hints)")
        let (gone, _, _, _) = try await Self.scanStall(
            realistic: realistic, afterDiscovery: { await $0[0].simulateProximityChange(.outOfRange) }
        ) { _, _ in }
        #expect(!gone.hints.contains { $0.contains("has scanned") }, "\(gone.hints)")
    }
}

extension StallHintTests {
    /// A peripheral whose advertising stops while it is connected (as a device's connectable
    /// advertising does) is not heard by a second central's scan: the stall says so.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A fruitless scan names a peripheral that does not advertise while connected", arguments: [false, true])
    func aFruitlessScanNamesAConnectedPeripheral(realistic: Bool) async throws {
        let pair = try await Pair.connected(realistic: realistic)
        let (bridge, sensor) = (pair.bridge, pair.sensor)
        let other = MockCentralManager(configuration: realistic ? .realistic(seed: 5) : .fast, bridge: bridge)
        await sensor.setAdvertisesWhenConnected(false)
        let stall = try await #require(throws: MockBLEBridge.Stall.self) {
            try await bridge.run(timeLimit: .seconds(60), stallPatience: .zero) {
                _ = await other.waitForPoweredOn()
                try await other.scanForPeripherals(withServices: [Self.service])
                try await bridge.waitForApp { false }
            }
        }
        let started = try #require(await bridge.log.last { $0.kind == .scanStarted }?.time)
        #expect(
            stall.hints == [
                "central \(other.identifier.uuidString.prefix(8)) has scanned for services FFA0 since \(started) "
                    + "and discovered nothing: peripheral \(pair.sensor8) is connected and does not advertise while "
                    + "it is" + Self.scanNote
            ])
    }
}
