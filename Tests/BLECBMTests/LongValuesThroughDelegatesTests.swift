// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (These names mirror CoreBluetooth's API.)

import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A peripheral app that serves a long dynamic value by offset, as a watch serves its device
/// log: each read request gets the part from its offset (the stack reads the rest with Read
/// Blob requests), an offset past the end gets `invalidOffset`.
final class LongValuePeripheral: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: only touched on the main queue.
    static let service = CBMUUID(string: "6E410001-B5A3-F393-E0A9-E50E24DCCA9E")
    static let logUUID = CBMUUID(string: "6E410002-B5A3-F393-E0A9-E50E24DCCA9E")

    var manager: CBMPeripheralManager!
    let log = CBMMutableCharacteristic(type: logUUID, properties: [.read], value: nil, permissions: [.readable])
    var value: Data
    var offsets: [Int] = []
    /// What the value becomes after the first read request (a log rotated mid-read).
    var afterFirstRead: Data?

    init(value: Data) {
        self.value = value
        super.init()
        manager = CBMPeripheralManager(delegate: self, queue: nil)
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let service = CBMMutableService(type: Self.service, primary: true)
        service.characteristics = [log]
        peripheral.add(service)
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didAdd service: CBMService, error: (any Error)?) {
        peripheral.startAdvertising([CBMAdvertisementDataServiceUUIDsKey: [Self.service]])
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest) {
        offsets.append(request.offset)
        guard request.offset <= value.count else {
            return peripheral.respond(to: request, withResult: .invalidOffset)
        }
        request.value = value.subdata(in: request.offset..<value.count)
        peripheral.respond(to: request, withResult: .success)
        if let next = afterFirstRead {
            value = next
            afterFirstRead = nil
        }
    }
}

@Suite(.timeLimit(.minutes(10)))
struct LongValuesThroughDelegatesTests {
    /// Reads the long value through a central of the async API; returns it and the offsets the
    /// app was asked for.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func read(_ value: Data, realistic: Bool, thenBecomes next: Data? = nil) async throws -> (
        Result<Data, any Error>, [Int]
    ) {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: 41) : .init(seed: 41))
        let central = MockCentralManager(configuration: realistic ? .realistic(seed: 41) : .fast, bridge: bridge)
        return try await bridge.run { @MainActor () -> (Result<Data, any Error>, [Int]) in
            let app = LongValuePeripheral(value: value)
            app.afterFirstRead = next
            try await bridge.waitForApp { app.manager.isAdvertising }
            let identifier = app.manager.simulatedPeripheral!.identifier
            try await central.scanForPeripherals(withServices: [LongValuePeripheral.service.bluetoothUUID])
            await bridge.waitUntil { bridge in
                bridge.log.contains { $0.kind == .discovered && $0.peripheral == identifier }
            }
            try await central.connect(identifier)
            let found = try await central.discoverAll(for: identifier)
            let log = try #require(found.first { $0.uuid == LongValuePeripheral.logUUID.bluetoothUUID })
            do {
                return (.success(try await central.readValue(for: log)), app.offsets)
            } catch {
                return (.failure(error), app.offsets)
            }
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A long dynamic value is read whole, the app answering each Read Blob from its offset (MTU 185: 184 bytes a response)"
    )
    func aLongDynamicValueIsReadWholeInPartsOfTheLinksLength() async throws {
        let value = Data((0..<500).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let (realisticRead, realisticOffsets) = try await Self.read(value, realistic: true)
        #expect(try realisticRead.get() == value)
        #expect(realisticOffsets == [0, 184, 368])
        // Fast mode's link (ATT_MTU 517) takes it in one response.
        let (fastRead, fastOffsets) = try await Self.read(value, realistic: false)
        #expect(try fastRead.get() == value)
        #expect(fastOffsets == [0])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A value that fills its last response exactly is followed by one Read Blob at its end, answered empty")
    func aValueEndingOnAResponseBoundaryEndsWithAnEmptyBlob() async throws {
        let value = Data((0..<368).map { UInt8(truncatingIfNeeded: $0) })
        let (read, offsets) = try await Self.read(value, realistic: true)
        #expect(try read.get() == value)
        #expect(offsets == [0, 184, 368])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A value that shrinks under a long read fails the read with the app's invalidOffset")
    func aValueThatShrinksMidReadFailsWithInvalidOffset() async throws {
        let value = Data(repeating: 1, count: 300)
        let (read, offsets) = try await Self.read(value, realistic: true, thenBecomes: Data(repeating: 2, count: 100))
        #expect(offsets == [0, 184])
        #expect(throws: ATTError(.invalidOffset)) { try read.get() }
    }
}
