import BLECore
import BLEMockKit
import Foundation
import Testing

/// Error injection into L2CAP channels: opening one (`.l2capOpen`, a central's) and publishing
/// one (`.l2capPublish`, a peripheral manager's), through the async API.
extension ErrorInjectionTests {
    typealias L2CAPRig = L2CAPTests.Rig

    @Test(
        "An open injected with an L2CAP refusal fails with exactly that refusal, then the next open succeeds",
        arguments: L2CAPError.Code.allCases)
    func openRefusedOnce(code: L2CAPError.Code) async throws {
        let rig = try await L2CAPRig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        await rig.central.inject(ErrorInjection(.l2capOpen, failure: .l2cap(code)))
        await #expect(throws: L2CAPError(code)) {
            try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
        }
        let (centralEnd, _) = try await rig.open(psm)
        #expect(centralEnd.psm == psm)
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        let opens = await rig.bridge.log.filter { $0.kind == .l2cap && $0.detail == "open \(hex(psm))" }
        #expect(opens.map(\.error) == [.l2cap(L2CAPError(code))])
        // Pairing `.never`: a refusal for want of security is reported, not paired over.
        #expect(await !rig.bridge.log.contains { $0.kind == .paired })
        #expect(await rig.bridge.finish() == .clean)
    }

    @Test("An open injected with a CoreBluetooth error fails with it; the link and the PSM are untouched")
    func openFailsWithCoreBluetoothError() async throws {
        let rig = try await L2CAPRig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        await rig.central.inject(ErrorInjection(.l2capOpen, failure: .coreBluetooth(.unknown)))
        await #expect(throws: CoreBluetoothError(.unknown)) {
            try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
        }
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        _ = try await rig.open(psm)
        #expect(await rig.bridge.finish() == .clean)
    }

    @Test("Frequencies: twice fails two opens, always fails every one, a probability follows the seed")
    func frequencies() async throws {
        let twice = try await L2CAPRig.make()
        let psm = try await twice.peripheral.publishL2CAPChannel(requiresEncryption: false)
        await twice.central.inject(
            ErrorInjection(.l2capOpen, failure: .l2cap(.noResourcesAvailable), frequency: .times(2)))
        for _ in 0..<2 {
            await #expect(throws: L2CAPError(.noResourcesAvailable)) {
                try await twice.central.openL2CAPChannel(psm, on: twice.peripheral.identifier)
            }
        }
        _ = try await twice.open(psm)
        #expect(await twice.bridge.finish() == .clean)

        let always = try await L2CAPRig.make()
        let alwaysPSM = try await always.peripheral.publishL2CAPChannel(requiresEncryption: false)
        await always.central.inject(
            ErrorInjection(.l2capOpen, failure: .coreBluetooth(.connectionFailed), frequency: .always))
        for _ in 0..<4 {
            await #expect(throws: CoreBluetoothError(.connectionFailed)) {
                try await always.central.openL2CAPChannel(alwaysPSM, on: always.peripheral.identifier)
            }
        }

        func pattern(seed: UInt64) async throws -> [Bool] {
            let rig = try await L2CAPRig.make(bridge: .init(seed: seed))
            let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
            await rig.central.inject(
                ErrorInjection(.l2capOpen, failure: .l2cap(.psmNotSupported), frequency: .probability(0.5)))
            var outcomes: [Bool] = []
            for _ in 0..<16 {
                do {
                    let channel = try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
                    await channel.close()
                    outcomes.append(true)
                } catch {
                    #expect(error as? L2CAPError == L2CAPError(.psmNotSupported))
                    outcomes.append(false)
                }
            }
            return outcomes
        }
        let first = try await pattern(seed: 12)
        #expect(try await pattern(seed: 12) == first, "seed 12")
        #expect(first.contains(true) && first.contains(false), "seed 12 gave \(first)")
    }

    @Test("A bridge-wide open injection for one peripheral leaves channels to another alone")
    func openTargetsOnePeripheral() async throws {
        let bridge = MockBLEBridge()
        let first = MockPeripheralManager(bridge: bridge)
        let second = MockPeripheralManager(bridge: bridge)
        for peripheral in [first, second] { try await peripheral.startAdvertising(AdvertisementData()) }
        let firstPSM = try await first.publishL2CAPChannel(requiresEncryption: false)
        let secondPSM = try await second.publishL2CAPChannel(requiresEncryption: false)
        await bridge.inject(
            ErrorInjection(
                .l2capOpen, failure: .l2cap(.noResourcesAvailable), frequency: .always,
                peripheral: second.identifier))
        let central = MockCentralManager(bridge: bridge)
        try await central.scanForPeripherals(withServices: nil)
        await bridge.advance(by: .milliseconds(200))
        try await central.connect(first.identifier)
        try await central.connect(second.identifier)
        #expect(try await central.openL2CAPChannel(firstPSM, on: first.identifier).psm == firstPSM)
        await #expect(throws: L2CAPError(.noResourcesAvailable)) {
            try await central.openL2CAPChannel(secondPSM, on: second.identifier)
        }
    }

    @Test("An injected refusal for want of authentication makes a central that pairs pair, then open the channel")
    func anAuthenticationRefusalPairs() async throws {
        let rig = try await L2CAPRig.make(pairing: .automatic(duration: .zero, outcome: .succeeds))
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        await rig.central.inject(ErrorInjection(.l2capOpen, failure: .l2cap(.insufficientAuthentication)))
        let channel = try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
        #expect(channel.psm == psm)
        let paired = await rig.bridge.log.filter { $0.kind == .paired }
        #expect(paired.count == 1 && paired[0].error == nil)
        #expect(await rig.bridge.finish() == .clean)
    }

    @Test("An open that never answers waits until the link drops, then fails with the link's error")
    func openNeverAnswersUntilDisconnect() async throws {
        let rig = try await L2CAPRig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        await rig.central.inject(ErrorInjection(.l2capOpen, failure: .neverAnswers))
        let central = rig.central
        let peripheral = rig.peripheral.identifier
        let opening = Task { try await central.openL2CAPChannel(psm, on: peripheral) }
        await rig.bridge.waitUntil { !$0.pendingOperations.isEmpty }
        // Running the schedule does not end it: the request is swallowed.
        await rig.bridge.advance(by: .seconds(60))
        #expect(await rig.bridge.waitingOperations.count == 1)
        await rig.peripheral.simulateDisconnection(
            of: central.identifier, error: CoreBluetoothError(.connectionTimeout))
        await #expect(throws: CoreBluetoothError(.connectionTimeout)) { try await opening.value }
        #expect(await rig.bridge.finish() == .clean)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A run waiting on an open that never answers stalls, and the stall names the open")
    func aRunStallsOnAnOpenThatNeverAnswers() async throws {
        let rig = try await L2CAPRig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        await rig.central.inject(ErrorInjection(.l2capOpen, failure: .neverAnswers))
        let thrown = await #expect(throws: MockBLEBridge.Stall.self) {
            try await rig.bridge.run(stallPatience: .zero) {
                _ = try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
            }
        }
        let stall = try #require(thrown)
        #expect(stall.reason == .nothingScheduled)
        let central = rig.central.identifier
        let peripheral = rig.peripheral.identifier
        #expect(
            stall.waiting.contains {
                guard case .operation("openL2CAPChannel(\(hex(psm)))", central, peripheral, nil, _) = $0 else {
                    return false
                }
                return true
            }, "\(stall)")
        #expect(
            "\(stall)".contains(
                "central \(central.uuidString.prefix(8)): openL2CAPChannel(\(hex(psm))) on peripheral "
                    + "\(peripheral.uuidString.prefix(8)) was still waiting"))
    }

    @Test("finish() reports L2CAP injections that never fired, for either role")
    func finishReportsUnfiredL2CAPInjections() async throws {
        let rig = try await L2CAPRig.make()
        await rig.central.inject(ErrorInjection(.l2capOpen, failure: .l2cap(.psmNotSupported)))
        await rig.peripheral.inject(ErrorInjection(.l2capPublish, failure: .coreBluetooth(.outOfSpace)))
        guard case .leftovers(let items) = await rig.bridge.finish() else {
            Issue.record("expected leftovers")
            return
        }
        let central = rig.central.identifier.uuidString.prefix(8)
        let peripheral = rig.peripheral.identifier.uuidString.prefix(8)
        #expect(
            items.map(\.description).prefix(2) == [
                "error injection never fired: l2capOpen fails with L2CAP 0x0002 psmNotSupported once "
                    + "(installed for \(central))",
                "error injection never fired: l2capPublish fails with CoreBluetooth 4 outOfSpace once "
                    + "(installed for \(peripheral))",
            ])
    }

    /// Realistic mode: the connection request waits for the next connection event, and the
    /// caller gives up before it. The injection never took effect: the next open meets it, and
    /// `finish()` reports it if no open comes.
    @Test(
        "An open cancelled before its request was sent gives its injection back to the next open",
        arguments: [true, false])
    func anOpenCancelledBeforeItWasSentKeepsItsInjection(retrying: Bool) async throws {
        let rig = try await L2CAPRig.make(bridge: .realistic(seed: 22))
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        let injection = ErrorInjection(.l2capOpen, failure: .l2cap(.noResourcesAvailable))
        await rig.central.inject(injection)
        try await rig.bridge.run {
            let opening = rig.bridge.task { try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier) }
            try await rig.bridge.clock.sleep(for: .milliseconds(1))  // before the next connection event
            opening.cancel()
            await #expect(throws: CancellationError.self) { try await opening.value }
            guard retrying else { return }
            await #expect(throws: L2CAPError(.noResourcesAvailable)) {
                try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
            }
            _ = try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier)
        }
        let opens = await rig.bridge.log.filter { $0.kind == .l2cap && $0.detail?.hasPrefix("open") == true }
        #expect(opens.map(\.error) == (retrying ? [.l2cap(L2CAPError(.noResourcesAvailable)), nil] : []))
        let finish = await rig.bridge.finish()
        #expect(
            finish
                == (retrying
                    ? .clean : .leftovers([.unfiredInjection(injection, owner: rig.central.identifier), .seed(22)])))
    }

    @Test("Publishing fails with an injected CoreBluetooth error or no resources, and publishes afterwards")
    func publishFails() async throws {
        let bridge = MockBLEBridge()
        let peripheral = MockPeripheralManager(
            configuration: .init(errorInjection: [
                ErrorInjection(.l2capPublish, failure: .coreBluetooth(.outOfSpace)),
                ErrorInjection(.l2capPublish, failure: .l2cap(.noResourcesAvailable)),
            ]),
            bridge: bridge)
        await #expect(throws: CoreBluetoothError(.outOfSpace)) {
            try await peripheral.publishL2CAPChannel(requiresEncryption: false)
        }
        await #expect(throws: L2CAPError(.noResourcesAvailable)) {
            try await peripheral.publishL2CAPChannel(requiresEncryption: true)
        }
        // Nothing was published by the failed calls: the first PSM of the dynamic range is free.
        #expect(try await peripheral.publishL2CAPChannel(requiresEncryption: false) == 0x0080)
        let publishes = await bridge.log.filter { $0.kind == .l2cap && $0.detail == "publish" }
        #expect(
            publishes.map(\.error) == [
                .coreBluetooth(CoreBluetoothError(.outOfSpace)), .l2cap(L2CAPError(.noResourcesAvailable)),
            ])
        #expect(await bridge.finish() == .clean)
    }

    @Test(
        "L2CAP injections that could never apply are refused with invalidConfiguration naming the problem",
        arguments: [
            (
                ErrorInjection(.l2capOpen, failure: .att(.insufficientAuthentication)), true,
                ".att(0x05 insufficientAuthentication) cannot fail .l2capOpen: no ATT response answers it (ATT "
                    + "errors answer .serviceDiscovery, .characteristicDiscovery, .descriptorDiscovery, .read, .write "
                    + "and .subscribe); inject a .coreBluetooth(_:) failure"
            ),
            (
                ErrorInjection(.l2capPublish, failure: .att(.unlikelyError)), false,
                ".att(0x0E unlikelyError) cannot fail .l2capPublish: no ATT response answers it (ATT errors answer "
                    + ".serviceDiscovery, .characteristicDiscovery, .descriptorDiscovery, .read, .write and "
                    + ".subscribe); inject a .coreBluetooth(_:) failure"
            ),
            (
                ErrorInjection(.read, failure: .l2cap(.insufficientEncryption)), true,
                ".l2cap(.insufficientEncryption) cannot fail .read: no L2CAP connection response answers it (L2CAP "
                    + "refusals answer .l2capOpen, and .l2capPublish with .noResourcesAvailable); inject a .att(_:) "
                    + "or .coreBluetooth(_:) failure"
            ),
            (
                ErrorInjection(.connect, failure: .l2cap(.noResourcesAvailable)), true,
                ".l2cap(.noResourcesAvailable) cannot fail .connect: no L2CAP connection response answers it (L2CAP "
                    + "refusals answer .l2capOpen, and .l2capPublish with .noResourcesAvailable); inject a "
                    + ".coreBluetooth(_:) failure"
            ),
            (
                ErrorInjection(.serviceAdd, failure: .l2cap(.noResourcesAvailable)), false,
                ".l2cap(.noResourcesAvailable) cannot fail .serviceAdd: no L2CAP connection response answers it"
            ),
            (
                ErrorInjection(.l2capPublish, failure: .l2cap(.psmNotSupported)), false,
                ".l2cap(.psmNotSupported) cannot fail .l2capPublish: publishing a channel asks no peer, and the one "
                    + "L2CAP refusal it meets is .noResourcesAvailable (no PSM left); inject "
                    + ".l2cap(.noResourcesAvailable) or a .coreBluetooth(_:) failure"
            ),
            (
                ErrorInjection(.l2capPublish, failure: .neverAnswers), false,
                ".neverAnswers cannot apply to .l2capPublish: a peripheral manager's operation waits for no answer "
                    + "from a peer (.neverAnswers applies to a central manager's operations); inject a "
                    + ".coreBluetooth(_:) failure"
            ),
            (
                ErrorInjection(.l2capOpen, failure: .l2cap(.psmNotSupported)), false,
                ".l2capOpen is a central manager's operation and never happens on a peripheral manager; put it in a "
                    + "MockCentralManager's configuration"
            ),
            (
                ErrorInjection(.l2capPublish, failure: .coreBluetooth(.outOfSpace)), true,
                ".l2capPublish is a peripheral manager's operation and never happens on a central manager; put it in "
                    + "a MockPeripheralManager's configuration"
            ),
        ])
    func refusedCombinations(injection: ErrorInjection, inCentral: Bool, message: String) async throws {
        await expectConfigurationRefusal(of: injection, inCentral: inCentral, saying: message)
    }

    @Test("A refused open injection from inject(_:) makes the central refuse its next open with the problem")
    func aRefusedRuntimeInjectionIsReported() async throws {
        let rig = try await L2CAPRig.make()
        let psm = try await rig.peripheral.publishL2CAPChannel(requiresEncryption: false)
        await rig.central.inject(ErrorInjection(.l2capOpen, failure: .att(.unlikelyError)))
        await #expect(
            throws: APIMisuseError.invalidConfiguration(
                "MockCentralManager.inject(_:): .att(0x0E unlikelyError) cannot fail .l2capOpen: no ATT response "
                    + "answers it (ATT errors answer .serviceDiscovery, .characteristicDiscovery, "
                    + ".descriptorDiscovery, .read, .write and .subscribe); inject a .coreBluetooth(_:) failure")
        ) { try await rig.central.openL2CAPChannel(psm, on: rig.peripheral.identifier) }
    }

    private func hex(_ psm: UInt16) -> String {
        "0x" + String(repeating: "0", count: 4 - String(psm, radix: 16).count) + String(psm, radix: 16, uppercase: true)
    }
}
