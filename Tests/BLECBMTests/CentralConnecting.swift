import BLECBM
import BLEMockKit
import Foundation
import Testing

extension MockCentralManager {
    /// Scans for `service`, connects to the first peripheral heard advertising it and discovers
    /// all its attributes; returns its identifier.
    func connectToFirst(advertising service: CBMUUID) async throws -> UUID {
        let events = events()
        try await scanForPeripherals(withServices: [service.bluetoothUUID])
        var identifier: UUID?
        for await event in events {
            if case .discovered(let discovery) = event {
                identifier = discovery.peripheral.identifier
                break
            }
        }
        let peripheral = try #require(identifier)
        try await connect(peripheral)
        try await discoverAll(for: peripheral)
        return peripheral
    }
}
