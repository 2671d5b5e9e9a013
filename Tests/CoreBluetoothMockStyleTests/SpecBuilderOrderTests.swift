import BLECBM
import Foundation
import Testing

/// The builder's `connected` and `connectable` as CoreBluetoothMock has them: the last one
/// called says whether another app is connected from the start.
@Suite("Spec builder: connected and connectable", .timeLimit(.minutes(10)))
struct SpecBuilderOrderTests {
    @Test("connectable after connected: not connected but known; connected after connectable: connected")
    func theLastOfConnectedAndConnectableDecides() {
        let id = UUID(uuidString: "0C0A0000-0000-4000-8000-000000000001")!
        let connectable = CBMPeripheralSpec.simulatePeripheral(identifier: id)
            .connected(name: "Watch", services: [], delegate: nil)
            .connectable(name: "Watch", services: [], delegate: nil)
            .build()
        #expect(!connectable.isInitiallyConnected)
        // (What connected made known stays known, as in CoreBluetoothMock.)
        #expect(connectable.isKnown)
        let connected = CBMPeripheralSpec.simulatePeripheral(identifier: id)
            .connectable(name: "Watch", services: [], delegate: nil, mtu: 185)
            .connected(name: "Watch", services: [], delegate: nil, mtu: 247)
            .build()
        #expect(connected.isInitiallyConnected)
        #expect(connected.isKnown)
        #expect(connected.mtu == 247)
    }
}
