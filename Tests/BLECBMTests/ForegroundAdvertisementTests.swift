import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECBM

/// What a CoreBluetooth-shaped peripheral manager in the foreground advertises of what the app
/// asks: 28 bytes of the advertising packet (each field with its 2-byte header) for the service
/// UUIDs, then the local name, which may take the scan response's 10 bytes instead; UUIDs that
/// do not fit go to the overflow area.
@Suite("Foreground advertising space", .timeLimit(.minutes(10)))
struct ForegroundAdvertisementTests {
    static let custom1: BluetoothUUID = "A0000001-1111-2222-3333-444455556666"
    static let custom2: BluetoothUUID = "A0000002-1111-2222-3333-444455556666"

    static func fitted(name: String?, _ services: [BluetoothUUID]) -> AdvertisementData {
        ForegroundAdvertisement.fitted(AdvertisementData(localName: name, serviceUUIDs: services))
    }

    @Test("A 128-bit service and a long name: the service, and the name's first 8 bytes (as on an iPhone)")
    func oneCustomServiceAndALongName() {
        let fitted = Self.fitted(name: "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", [Self.custom1])
        #expect(fitted.serviceUUIDs == [Self.custom1])
        #expect(fitted.overflowServiceUUIDs.isEmpty)
        #expect(fitted.localName == "01234567")
    }

    @Test("Two 128-bit services: the second goes to the overflow area, the name to the scan response")
    func twoCustomServices() {
        let fitted = Self.fitted(name: "A-very-long-watch-name", [Self.custom1, Self.custom2])
        #expect(fitted.serviceUUIDs == [Self.custom1])
        #expect(fitted.overflowServiceUUIDs == [Self.custom2])
        #expect(fitted.localName == "A-very-l")
    }

    @Test("Thirteen 16-bit services fit with their header; a fourteenth overflows")
    func sixteenBitServices() {
        let thirteen = (0..<13).map { BluetoothUUID(UInt16(0x1800 + $0) as UInt16) }
        #expect(Self.fitted(name: nil, thirteen).serviceUUIDs == thirteen)
        let fourteen = thirteen + [BluetoothUUID(UInt16(0x180D))]
        let fitted = Self.fitted(name: nil, fourteen)
        #expect(fitted.serviceUUIDs == thirteen)
        #expect(fitted.overflowServiceUUIDs == [BluetoothUUID(UInt16(0x180D))])
    }

    @Test("A name alone takes 26 bytes of the packet; a longer one is shortened to them")
    func nameAlone() {
        let fits = String(repeating: "n", count: 26)
        #expect(Self.fitted(name: fits, []).localName == fits)
        #expect(Self.fitted(name: fits + "x", []).localName == fits)
    }

    @Test("Widths keep their own lists, and the UUIDs the order the app gave")
    func mixedWidths() {
        let battery = BluetoothUUID(UInt16(0x180F))
        let information = BluetoothUUID(UInt16(0x180A))
        let fitted = Self.fitted(name: "Tag", [Self.custom1, battery, information])
        // 16-bit list 2 + 4, 128-bit list 2 + 16: 24 bytes; the name's 2 + 3 do not fit in the
        // packet's 4 left, but do in the scan response.
        #expect(fitted.serviceUUIDs == [Self.custom1, battery, information])
        #expect(fitted.localName == "Tag")
    }

    @Test("A name is shortened in whole characters, never inside one")
    func shortenedInWholeCharacters() {
        #expect(ForegroundAdvertisement.shortened("Montre-é-Zürich", toBytes: 8) == "Montre-")
        #expect(ForegroundAdvertisement.shortened("ééééé", toBytes: 8) == "éééé")
        #expect(ForegroundAdvertisement.shortened("⌚️", toBytes: 2) == nil)
        #expect(ForegroundAdvertisement.shortened("", toBytes: 0) == "")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A central hears the fitted advertisement, and finds an overflowed service only by scanning for it")
    func aCentralHearsTheFittedAdvertisement() async throws {
        let bridge = MockBLEBridge(seed: 51)
        let queue = DispatchQueue(label: "watch")
        let heard = try await bridge.run { () -> (AdvertisementData, AdvertisementData) in
            let app = AdvertisingApp(
                name: "A-very-long-watch-name-that-does-not-fit",
                services: [CBMUUID(bluetoothUUID: Self.custom1), CBMUUID(bluetoothUUID: Self.custom2)])
            queue.async { app.manager = CBMPeripheralManager(bridge: bridge, delegate: app, queue: queue) }
            try await bridge.waitForApp { queue.sync { app.advertising } }
            func heard(scanningFor services: [BluetoothUUID]?) async throws -> AdvertisementData {
                let central = MockCentralManager(bridge: bridge)
                let events = central.events()
                try await central.scanForPeripherals(withServices: services)
                for await event in events {
                    if case .discovered(let discovery) = event { return discovery.advertisementData }
                }
                throw CancellationError()
            }
            return (try await heard(scanningFor: nil), try await heard(scanningFor: [Self.custom2]))
        }
        #expect(heard.0.localName == "A-very-l")
        #expect(heard.0.serviceUUIDs == [Self.custom1])
        #expect(heard.0.overflowServiceUUIDs.isEmpty)
        #expect(heard.1.overflowServiceUUIDs == [Self.custom2])
    }
}

/// A peripheral app that advertises a name and services once powered on.
private final class AdvertisingApp: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: `manager` and `advertising` are only touched on the app's queue.
    let name: String
    let services: [CBMUUID]
    var manager: CBMPeripheralManager?
    var advertising = false

    init(name: String, services: [CBMUUID]) {
        self.name = name
        self.services = services
    }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        peripheral.startAdvertising([
            CBMAdvertisementDataLocalNameKey: name, CBMAdvertisementDataServiceUUIDsKey: services,
        ])
    }

    func peripheralManagerDidStartAdvertising(_ peripheral: CBMPeripheralManager, error: (any Error)?) {
        advertising = error == nil
    }
}
