import BLECore
import BLEMockKit
import Foundation
import Testing

/// The example of the Link profiles article, compiled and run.
@Suite("Documentation: link profiles example", .timeLimit(.minutes(10)))
struct LinkProfileExampleTests {
    /// How long a watch face of `size` bytes takes to reach the watch from `phone`, written
    /// without response in chunks of the link's largest write.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func uploadTime(of size: Int, from phone: LinkProfile) async throws -> Duration {
        let timing = LinkTiming.realistic(central: phone, peripheral: .watch)
        let bridge = MockBLEBridge(configuration: .init(seed: 1, timing: timing))
        return try await bridge.run {
            let watch = MockPeripheralManager(configuration: .init(requestHandling: .manual), bridge: bridge)
            _ = try await watch.add(
                GATTService(
                    uuid: "FE00",
                    characteristics: [
                        GATTCharacteristic(uuid: "FE01", properties: .writeWithoutResponse, permissions: .writeable)
                    ]))
            try await watch.startAdvertising(AdvertisementData(localName: "Watch", serviceUUIDs: ["FE00"]))
            let app = MockCentralManager(
                configuration: .init(writeWithoutResponseQueue: .realistic(capacity: 32)), bridge: bridge)
            var events = app.events().makeAsyncIterator()
            try await app.scanForPeripherals(withServices: ["FE00"])
            while let event = await events.next() {
                if case .discovered = event { break }
            }
            await app.stopScan()
            try await app.connect(watch.identifier)
            let upload = try await app.discoverAll(for: watch.identifier)[0]
            let chunk = try await app.maximumWriteValueLength(for: watch.identifier, type: .withoutResponse)
            let face = Data(repeating: 0xA5, count: size)
            let start = await bridge.now
            var offset = 0
            while offset < face.count {
                if await app.canSendWriteWithoutResponse(to: watch.identifier) {
                    let end = min(offset + chunk, face.count)
                    try await app.writeValue(face[offset..<end], for: upload, type: .withoutResponse)
                    offset = end
                } else {
                    while let event = await events.next() {
                        if case .readyToSendWriteWithoutResponse = event { break }
                    }
                }
            }
            try await bridge.clock.sleep(for: .seconds(1))  // the queue drains: virtual time, free
            let arrived = await bridge.log.last { $0.kind == .writeRequest }
            return start.duration(to: try #require(arrived).time)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aWatchFaceUploadTakesFourTimesLongerFromAnIPhone6s() async throws {
        let older = try await Self.uploadTime(of: 32_768, from: .iPhoneiOS10)
        let newer = try await Self.uploadTime(of: 32_768, from: .iPhoneiOS18)
        // iOS 10: one 182-byte write per 15 ms event, about 12 kB/s. iOS 18: three 244-byte
        // writes per 15 ms event over LE 2M, about 49 kB/s.
        #expect(older > .milliseconds(2_500) && older < .milliseconds(2_900))
        #expect(newer > .milliseconds(600) && newer < .milliseconds(750))
        // A timeout of 1 s that passes on the iPhone 16 fails on the iPhone 6s.
    }
}
