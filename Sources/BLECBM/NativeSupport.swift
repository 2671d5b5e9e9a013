import BLECore
import BLEMockKit
import Foundation

#if canImport(CoreBluetooth)
    import CoreBluetooth
#endif

/// Where a manager created outside any bridge scope runs: on Apple platforms, CoreBluetooth
/// itself (``NativeCentralBackend``); elsewhere, a system without Bluetooth LE (the manager
/// reports `unsupported` and ignores every call).
enum NativeSupport {
    /// Whether the platform has CoreBluetooth with a radio: not on Linux, nor in the iOS
    /// simulator (where CoreBluetoothMock's factory, too, hands out mocks).
    static var hasBluetooth: Bool {
        #if canImport(CoreBluetooth) && !targetEnvironment(simulator)
            true
        #else
            false
        #endif
    }

    /// The app's authorization outside any bridge.
    static var authorization: CBMManagerAuthorization {
        #if canImport(CoreBluetooth)
            CBMManagerAuthorization(rawValue: CBManager.authorization.rawValue) ?? .notDetermined
        #else
            .allowedAlways
        #endif
    }

    /// The backend of a central manager created outside any bridge scope.
    static func centralBackend(queue: DispatchQueue?, options: [String: Any]?) -> any CentralBackend {
        #if canImport(CoreBluetooth)
            NativeCentralBackend(queue: queue, options: options)
        #else
            UnsupportedCentralBackend(queue: queue ?? .main)
        #endif
    }

    /// The backend of a peripheral manager created outside any bridge scope.
    static func peripheralBackend(queue: DispatchQueue?, options: [String: Any]?) -> any PeripheralBackend {
        #if canImport(CoreBluetooth)
            NativePeripheralBackend(queue: queue, options: options)
        #else
            UnsupportedPeripheralBackend(queue: queue ?? .main)
        #endif
    }

    /// CoreBluetooth's errors as the module's: `NSError`s in CoreBluetooth's domains become
    /// ``CBMError`` and ``CBMATTError`` with the same codes, so `error as? CBMError` works.
    static func bridging(_ error: (any Error)?) -> (any Error)? {
        guard let error else { return nil }
        let nsError = error as NSError
        switch nsError.domain {
        case CBMErrorDomain: return CBMError(CBMError.Code(rawValue: nsError.code) ?? .unknown)
        case CBMATTErrorDomain: return CBMATTError(rawCode: UInt8(truncatingIfNeeded: nsError.code))
        default: return error
        }
    }

    #if canImport(CoreBluetooth)
        /// CoreBluetooth's advertisement dictionary with its UUIDs as ``CBMUUID``s.
        static func advertisement(_ dictionary: [String: Any]) -> [String: Any] {
            var converted = dictionary
            for key in [
                CBMAdvertisementDataServiceUUIDsKey, CBMAdvertisementDataOverflowServiceUUIDsKey,
                CBMAdvertisementDataSolicitedServiceUUIDsKey,
            ] {
                if let uuids = dictionary[key] as? [CBUUID] { converted[key] = uuids.map(CBMUUID.init(cbUUID:)) }
            }
            if let serviceData = dictionary[CBMAdvertisementDataServiceDataKey] as? [CBUUID: Data] {
                var data: [CBMUUID: Data] = [:]
                for (uuid, value) in serviceData { data[CBMUUID(cbUUID: uuid)] = value }
                converted[CBMAdvertisementDataServiceDataKey] = data
            }
            return converted
        }
    #endif
}

/// The commands a manager on a system without Bluetooth LE ignored, noted as CoreBluetooth logs
/// "API MISUSE" for commands while not powered on; and, once, a warning that says why the
/// manager is unsupported (no test bridge was current and no ``SimulatedSystem`` installed when
/// it was made), so a test that forgot to install one hears of it.
final class UnsupportedSystemNotes: @unchecked Sendable {
    // @unchecked Sendable: `misuses` is only read and written with `lock` held.
    private let lock = Lock()
    private var misuses: [String] = []
    private let manager: String

    /// Notes for a manager described as `manager` ("manager", "peripheral manager").
    init(manager: String, type: String) {
        self.manager = manager
        Warning.emit(
            "a \(type) was created with no test bridge current and no SimulatedSystem installed: this platform "
                + "has no Bluetooth LE, so it reports unsupported and ignores every call. Create it inside "
                + "bridge.run { } or on a bridge (init(bridge:delegate:queue:)), or install a SimulatedSystem first "
                + "(installSimulatedSystem() in XCTest, the .simulatedSystem trait in Swift Testing).")
    }

    /// Notes a command the manager ignored.
    func ignored(_ call: String) {
        lock.withLock {
            misuses.append(
                "\(call): the \(manager) is not powered on (unsupported: no test bridge or SimulatedSystem)")
        }
    }

    /// The ignored commands, oldest first.
    var all: [String] { lock.withLock { misuses } }
}

/// A central on a system without Bluetooth LE: `unsupported`, and every call ignored.
final class UnsupportedCentralBackend: CentralBackend, @unchecked Sendable {
    // @unchecked Sendable: immutable after init (`notes` keeps its own lock).
    let queue: DispatchQueue
    let notes = UnsupportedSystemNotes(manager: "manager", type: "CBMCentralManager")

    init(queue: DispatchQueue) { self.queue = queue }

    var state: CBMManagerState { .unsupported }
    var authorization: CBMManagerAuthorization { .allowedAlways }
    var isScanning: Bool { false }
    /// Nothing happens here to record.
    var recording: CentralRecording? { nil }
    func recordingChanged(_ recording: CentralRecording?) {}

    func attach(_ manager: CBMCentralManager) {
        queue.async { [weak manager] in
            guard let manager, let delegate = manager.delegate else { return }
            delegate.centralManagerDidUpdateState(manager)
        }
    }

    func scanForPeripherals(withServices serviceUUIDs: [CBMUUID]?, options: [String: Any]?) {
        notes.ignored("scanForPeripherals")
    }
    func stopScan() {}
    func connect(_ peripheral: CBMPeripheral, options: [String: Any]?) { notes.ignored("connect") }
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
