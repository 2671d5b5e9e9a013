import BLECore
import BLEMockKit
import Foundation

/// Where a manager created outside any bridge scope runs.
///
/// This version has no CoreBluetooth-backed implementation yet: such a manager reports
/// `unsupported` (once, as its first state callback) and refuses every call, as a system
/// without Bluetooth LE does. Tests create managers inside a bridge scope, or with
/// ``CBMCentralManager/init(bridge:delegate:queue:options:configuration:)``.
enum NativeSupport {
    /// The app's authorization outside any bridge.
    static var authorization: CBMManagerAuthorization { .allowedAlways }

    /// The backend of a manager created outside any bridge scope.
    static func centralBackend(queue: DispatchQueue?, options: [String: Any]?) -> any CentralBackend {
        UnsupportedCentralBackend(queue: queue ?? .main)
    }
}

/// A central on a system without Bluetooth LE: `unsupported`, and every call ignored.
final class UnsupportedCentralBackend: CentralBackend, @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    let queue: DispatchQueue

    init(queue: DispatchQueue) { self.queue = queue }

    var state: CBMManagerState { .unsupported }
    var authorization: CBMManagerAuthorization { .allowedAlways }
    var isScanning: Bool { false }

    func attach(_ manager: CBMCentralManager) {
        queue.async { [weak manager] in
            guard let manager, let delegate = manager.delegate else { return }
            delegate.centralManagerDidUpdateState(manager)
        }
    }

    func scanForPeripherals(withServices serviceUUIDs: [CBMUUID]?, options: [String: Any]?) {}
    func stopScan() {}
    func connect(_ peripheral: CBMPeripheral, options: [String: Any]?) {}
    func cancelPeripheralConnection(_ peripheral: CBMPeripheral) {}
    func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [CBMPeripheral] { [] }
    func retrieveConnectedPeripherals(withServices serviceUUIDs: [CBMUUID]) -> [CBMPeripheral] { [] }
    func registerForConnectionEvents(options: [CBMConnectionEventMatchingOption: Any]?) {}
    func canSendWriteWithoutResponse(_ peripheral: CBMPeripheral) -> Bool { false }
    func maximumWriteValueLength(_ peripheral: CBMPeripheral, type: CBMCharacteristicWriteType) -> Int {
        type == .withResponse ? 512 : 20
    }
    func discoverServices(_ uuids: [CBMUUID]?, for peripheral: CBMPeripheral) {}
    func discoverIncludedServices(_ uuids: [CBMUUID]?, for service: CBMService, of peripheral: CBMPeripheral) {}
    func discoverCharacteristics(_ uuids: [CBMUUID]?, for service: CBMService, of peripheral: CBMPeripheral) {}
    func discoverDescriptors(for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral) {}
    func readValue(for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral) {}
    func readValue(for descriptor: CBMDescriptor, of peripheral: CBMPeripheral) {}
    func writeValue(
        _ data: Data, for characteristic: CBMCharacteristic, type: CBMCharacteristicWriteType,
        of peripheral: CBMPeripheral
    ) {}
    func writeValue(_ data: Data, for descriptor: CBMDescriptor, of peripheral: CBMPeripheral) {}
    func setNotifyValue(_ enabled: Bool, for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral) {}
    func readRSSI(of peripheral: CBMPeripheral) {}
    func openL2CAPChannel(_ psm: UInt16, on peripheral: CBMPeripheral) {}
}

/// The app's simulated Bluetooth authorization, kept per bridge.
enum AuthorizationBook {
    private static let key = "BLECBM.authorization"

    static func value(for bridge: MockBLEBridge) -> CBMManagerAuthorization {
        bridge.frontEndSettings[key].flatMap(CBMManagerAuthorization.init(rawValue:)) ?? .allowedAlways
    }

    static func set(_ authorization: CBMManagerAuthorization, for bridge: MockBLEBridge) {
        bridge.frontEndSettings[key] = authorization.rawValue
    }
}
