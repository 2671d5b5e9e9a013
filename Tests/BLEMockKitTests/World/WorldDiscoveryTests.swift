import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: what discovery leaves the central knowing", .timeLimit(.minutes(10)))
struct WorldDiscoveryTests {
    @Test("A first discovery's list is what was found; a later one adds what is new, in handle order, once each")
    func mergingDiscoveries() {
        let found: [UInt16] = [3, 8, 12]
        #expect(World.merging(found, into: nil, by: { $0 }) == [3, 8, 12])
        #expect(World.merging(found, into: [], by: { $0 }) == [3, 8, 12])
        #expect(World.merging(found, into: [8, 20], by: { $0 }) == [3, 8, 12, 20])
        #expect(World.merging([], into: [20, 8], by: { $0 }) == [8, 20])
        #expect(World.merging([5, 5], into: [5], by: { $0 }) == [5])
    }

    @Test("A log entry lists UUIDs comma-separated in their shortest form, and nothing as empty")
    func uuidLists() {
        #expect(World.uuidList([BluetoothUUID]()) == "")
        #expect(World.uuidList(["180D"] as [BluetoothUUID]) == "180D")
        let custom: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
        #expect(World.uuidList(["2A37", custom, "2A38"] as [BluetoothUUID]) == "2A37,\(custom.uuidString),2A38")
    }
}
