import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A peripheral with a write-only characteristic (2A19), a readable, writable one that also takes
/// writes without response (2A1A), neither of which notifies, and one that notifies (2A1B).
private func makeGATTRulesPeripheral(
    on bridge: MockBLEBridge, configuration: MockPeripheralManager.Configuration = .init(name: "Rules")
) async throws -> MockPeripheralManager {
    let peripheral = MockPeripheralManager(configuration: configuration, bridge: bridge)
    _ = try await peripheral.add(
        GATTService(
            uuid: "180F",
            characteristics: [
                GATTCharacteristic(uuid: "2A19", properties: .write, permissions: .writeable),
                GATTCharacteristic(
                    uuid: "2A1A", properties: [.read, .write, .writeWithoutResponse],
                    permissions: [.readable, .writeable]),
                GATTCharacteristic(uuid: "2A1B", properties: .notify, permissions: .readable),
            ]))
    try await peripheral.startAdvertising(AdvertisementData(localName: "Rules", serviceUUIDs: ["180F"]))
    return peripheral
}

/// The rules of ATT and of CoreBluetooth's client, as a delegate app meets them: each refusal
/// arrives as the callback of the call with CoreBluetooth's error domain and code, and writes
/// without response follow CoreBluetooth's (never answered; cut to the link's length; not sent
/// to a characteristic without the property).
@Suite(.timeLimit(.minutes(10)))
struct GATTRulesThroughDelegatesTests {
    /// A connected app and what it discovered.
    @MainActor
    fileprivate struct Rig {
        let bridge: MockBLEBridge
        let manager: CBMCentralManager
        let peripheral: CBMPeripheral
        let recorder: Recorder
        /// 2A19: write only.
        let writeOnly: CBMCharacteristic
        /// 2A1A: read, write, write without response.
        let readWrite: CBMCharacteristic
        /// 2A1B: notify.
        let notifying: CBMCharacteristic

        /// Waits until the app has heard `count` more callbacks than `start`.
        func waitForCallbacks(_ count: Int, after start: Int) async throws {
            try await bridge.waitForApp { recorder.calls.count >= start + count }
        }

        /// Writes `first`, then `second`, with response to 2A1A, each once the one before is
        /// answered, then reads it: the two writes' callbacks, and the value read.
        func writeTwiceThenRead(_ first: Data, _ second: Data) async throws -> ([String], Data?) {
            let start = recorder.calls.count
            peripheral.writeValue(first, for: readWrite, type: .withResponse)
            try await waitForCallbacks(1, after: start)
            peripheral.writeValue(second, for: readWrite, type: .withResponse)
            try await waitForCallbacks(2, after: start)
            peripheral.readValue(for: readWrite)
            try await waitForCallbacks(3, after: start)
            return (Array(recorder.calls[start...].prefix(2)), readWrite.value)
        }
    }

    /// Connects the app, discovers the one service's characteristics, runs `body`, and returns
    /// what it returns.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    private func withConnectedApp<T: Sendable>(
        realistic: Bool, peripheral configuration: MockPeripheralManager.Configuration = .init(name: "Rules"),
        _ body: @escaping @MainActor @Sendable (Rig) async throws -> T
    ) async throws -> T {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 12) : .init(seed: 12))
        _ = try await makeGATTRulesPeripheral(on: bridge, configuration: configuration)
        return try await bridge.run { @MainActor () -> T in
            let recorder = Recorder()
            let manager = CBMCentralManager(delegate: recorder, queue: nil)
            try await bridge.waitForApp { manager.state == .poweredOn }
            let peripheral = try await connectAndDiscover(manager, bridge: bridge) { recorder.peripheral }
            let characteristics = peripheral.services![0].characteristics!
            return try await body(
                Rig(
                    bridge: bridge, manager: manager, peripheral: peripheral, recorder: recorder,
                    writeOnly: characteristics[0], readWrite: characteristics[1], notifying: characteristics[2]))
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func readingACharacteristicWithoutTheReadPropertyFailsWithReadNotPermitted(realistic: Bool) async throws {
        let (calls, value) = try await withConnectedApp(realistic: realistic) { rig in
            let start = rig.recorder.calls.count
            rig.peripheral.readValue(for: rig.writeOnly)
            try await rig.waitForCallbacks(1, after: start)
            return (Array(rig.recorder.calls[start...]), rig.writeOnly.value)
        }
        #expect(calls == ["value [] error=\(CBMATTErrorDomain)/\(CBMATTError.Code.readNotPermitted.rawValue)"])
        #expect(value == nil)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func subscribingToACharacteristicThatCannotNotifyFailsWithRequestNotSupported(realistic: Bool) async throws {
        let calls = try await withConnectedApp(realistic: realistic) { rig in
            let start = rig.recorder.calls.count
            rig.peripheral.setNotifyValue(true, for: rig.readWrite)
            try await rig.waitForCallbacks(1, after: start)
            return Array(rig.recorder.calls[start...])
        }
        #expect(
            calls == ["notifying false error=\(CBMATTErrorDomain)/\(CBMATTError.Code.requestNotSupported.rawValue)"])
    }

    /// ATT values are at most 512 bytes: a longer write fails with invalidAttributeValueLength and
    /// changes nothing; a write longer than one packet but within 512 is written whole (a long
    /// write, as CoreBluetooth makes it).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aWriteLongerThan512BytesFailsAndALongWriteWithinItIsWrittenWhole(realistic: Bool) async throws {
        let (calls, readBack) = try await withConnectedApp(realistic: realistic) { rig in
            try await rig.writeTwiceThenRead(Data(repeating: 1, count: 513), Data(repeating: 2, count: 300))
        }
        #expect(
            calls == [
                "wrote error=\(CBMATTErrorDomain)/\(CBMATTError.Code.invalidAttributeValueLength.rawValue)", "wrote",
            ])
        #expect(readBack == Data(repeating: 2, count: 300))
    }

    /// A peripheral whose GATT server holds 100 bytes of a long write (firmware with a small
    /// buffer for them), at ATT_MTU 23: a long write of 101 bytes fails with prepareQueueFull at
    /// its sixth Prepare Write and changes nothing; one of 100 bytes is written whole.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func aLongWriteThePeripheralCannotQueueFailsWithPrepareQueueFull(realistic: Bool) async throws {
        let smallBuffer = MockPeripheralManager.Configuration(
            name: "Rules", mtu: .fixed(23), preparedWriteCapacity: 100)
        let (calls, readBack) = try await withConnectedApp(realistic: realistic, peripheral: smallBuffer) { rig in
            try await rig.writeTwiceThenRead(Data(repeating: 1, count: 101), Data(repeating: 2, count: 100))
        }
        #expect(calls == ["wrote error=\(CBMATTErrorDomain)/\(CBMATTError.Code.prepareQueueFull.rawValue)", "wrote"])
        #expect(readBack == Data(repeating: 2, count: 100))
    }

    /// A write without response longer than the link carries is cut to
    /// `maximumWriteValueLength(for: .withoutResponse)`; one to a characteristic without the
    /// property is not sent. Neither is answered; both are noted as misuses.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func writesWithoutResponseAreCutToTheLinkOrNotSentWithoutTheProperty(realistic: Bool) async throws {
        let (calls, readBack, maximum, misuses) = try await withConnectedApp(realistic: realistic) { rig in
            let maximum = rig.peripheral.maximumWriteValueLength(for: .withoutResponse)
            let start = rig.recorder.calls.count
            rig.peripheral.writeValue(Data(repeating: 3, count: 600), for: rig.readWrite, type: .withoutResponse)
            rig.peripheral.writeValue(Data([4]), for: rig.writeOnly, type: .withoutResponse)
            // The read is answered after the writes without response have crossed the link.
            rig.peripheral.readValue(for: rig.readWrite)
            try await rig.waitForCallbacks(1, after: start)
            return (
                Array(rig.recorder.calls[start...]), rig.readWrite.value, maximum,
                await rig.bridge.misuses.map(\.kind)
            )
        }
        #expect(calls.count == 1 && calls[0].hasPrefix("value ") && !calls[0].contains("error"), "\(calls)")
        #expect(maximum == (realistic ? 182 : 512))
        #expect(readBack == Data(repeating: 3, count: maximum))
        #expect(misuses == [.valueTruncated, .writeWithoutResponseNotSupported])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func writingTheCCCDWithWriteValueIsNotSentAndIsNotedAsAMisuse(realistic: Bool) async throws {
        let (calls, misuses, subscriptionWrites) = try await withConnectedApp(realistic: realistic) { rig in
            let start = rig.recorder.calls.count
            rig.peripheral.discoverDescriptors(for: rig.notifying)
            try await rig.waitForCallbacks(1, after: start)
            let cccd = try #require(
                rig.notifying.descriptors?.first {
                    $0.uuid == CBMUUID(string: CBMUUIDClientCharacteristicConfigurationString)
                })
            rig.peripheral.writeValue(Data([1, 0]), for: cccd)
            // Nothing answers it, however long the app waits; setNotifyValue is the way.
            try await rig.bridge.clock.sleep(for: .seconds(1))
            rig.peripheral.setNotifyValue(true, for: rig.notifying)
            try await rig.waitForCallbacks(2, after: start)
            let kinds = await rig.bridge.log.map(\.kind)
            return (
                Array(rig.recorder.calls[start...]), rig.manager.apiMisuses,
                [kinds.filter { $0 == .writeDescriptor }.count, kinds.filter { $0 == .subscribe }.count]
            )
        }
        #expect(calls == ["descriptors [\"2902\"]", "notifying true"])
        #expect(
            misuses == [
                "writeValue: the Client Characteristic Configuration descriptor is written with "
                    + "setNotifyValue(_:for:), not writeValue(_:for:) (CoreBluetooth raises "
                    + "NSInternalInconsistencyException, and the app crashes)"
            ])
        // No descriptor write crossed the link; the subscription did, once.
        #expect(subscriptionWrites == [0, 1])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func discoveringServicesWithAnEmptyListFindsThemAll() async throws {
        let (calls, services) = try await withConnectedApp(realistic: false) { rig in
            let start = rig.recorder.calls.count
            rig.peripheral.discoverServices([])
            try await rig.waitForCallbacks(1, after: start)
            return (Array(rig.recorder.calls[start...]), rig.peripheral.services?.map(\.uuid.uuidString))
        }
        #expect(calls == ["services 1"])
        #expect(services == ["180F"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(arguments: [false, true])
    func cancellingAConnectionTwiceReportsOneDisconnectionWithNoError(realistic: Bool) async throws {
        let (calls, state, misuses) = try await withConnectedApp(realistic: realistic) { rig in
            let start = rig.recorder.calls.count
            rig.manager.cancelPeripheralConnection(rig.peripheral)
            rig.manager.cancelPeripheralConnection(rig.peripheral)
            try await rig.waitForCallbacks(1, after: start)
            // Anything more would come at once (fast) or within a connection interval.
            try await rig.bridge.clock.sleep(for: .seconds(1))
            return (Array(rig.recorder.calls[start...]), rig.peripheral.state, rig.manager.apiMisuses)
        }
        #expect(calls == ["disconnect services=nil"])
        #expect(state == .disconnected)
        #expect(misuses.isEmpty)
    }
}
