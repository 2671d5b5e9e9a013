import BLECBM
import BLEMockKit
import Foundation
import Testing

@testable import CoreBluetoothTypeAliasesSwift6

/// The typealias file BLECBM ships (Sources/BLECBM/BLECBM.docc/Resources), compiled in Swift 6
/// language mode by CoreBluetoothTypeAliasesSwift6 (and in Swift 5 mode by BlinkyExample).
@Suite("The shipped typealias file", .timeLimit(.minutes(10)))
struct TypeAliasFileTests {
    @Test("Every CoreBluetooth type name it brings is BLECBM's type")
    func everyTypeName() {
        #expect(typeAliases.count == 32)
        for alias in typeAliases {
            #expect(ObjectIdentifier(alias.aliased) == ObjectIdentifier(alias.expected), "\(alias.name)")
        }
    }

    @Test("Every key and string it brings is BLECBM's, for both roles")
    func everyKey() {
        #expect(constants.count == 38)
        for constant in constants {
            #expect(constant.value == constant.expected, "\(constant.name)")
        }
        #expect(Set(constants.map(\.name)).count == constants.count)
    }

    @Test("Errors written with its names match by code in catch clauses and switch cases")
    func errorShapes() {
        #expect(describe(CBMError(.connectionTimeout)) == "timed out")
        #expect(describe(CBMATTError(.insufficientAuthentication)) == "needs pairing")
        #expect(describe(CBMATTError(.readNotPermitted)) == "not readable")
        #expect(describe(CBMError(.unknown)) == "other (7, true)")
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A peripheral app written with its names in Swift 6 mode answers a central on the test's bridge")
    func aSwift6PeripheralApp() async throws {
        let bridge = MockBLEBridge(seed: 31)
        let value = try await bridge.run { () -> Data in
            let app = ThermometerPeripheral(queue: DispatchQueue(label: "thermometer"))
            let central = MockCentralManager(bridge: bridge)
            try await central.scanForPeripherals(withServices: [ThermometerPeripheral.service.bluetoothUUID])
            var peripheral: UUID?
            for await event in central.events() {
                if case .discovered(let discovery) = event {
                    peripheral = discovery.peripheral.identifier
                    break
                }
            }
            let identifier = try #require(peripheral)
            try await central.connect(identifier)
            try await central.discoverAll(for: identifier)
            let temperature = try await central.characteristic("2A1C", of: identifier)
            let value = try await central.readValue(for: temperature)
            _ = app
            return value
        }
        #expect(value == Data([36, 6]))
    }
}
