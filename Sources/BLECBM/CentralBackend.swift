import BLECore
import Foundation

/// What a ``CBMCentralManager`` and its peripherals run on: the simulation (a bridge) or, on
/// Apple platforms, CoreBluetooth itself.
protocol CentralBackend: AnyObject, Sendable {
    var state: CBMManagerState { get }
    var authorization: CBMManagerAuthorization { get }
    var isScanning: Bool { get }
    func attach(_ manager: CBMCentralManager)
    /// The manager's recording state, while it records.
    var recording: CentralRecording? { get }
    /// The manager started or stopped recording (called with the manager's lock held).
    func recordingChanged(_ recording: CentralRecording?)
    /// Whether the backend records the app's writes without response itself, once it knows
    /// what became of them; else the peripheral object records each as the app makes it.
    var recordsWritesWithoutResponse: Bool { get }
    func scanForPeripherals(withServices serviceUUIDs: [CBMUUID]?, options: [String: Any]?)
    func stopScan()
    func connect(_ peripheral: CBMPeripheral, options: [String: Any]?)
    func cancelPeripheralConnection(_ peripheral: CBMPeripheral)
    func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [CBMPeripheral]
    func retrieveConnectedPeripherals(withServices serviceUUIDs: [CBMUUID]) -> [CBMPeripheral]
    func registerForConnectionEvents(options: [CBMConnectionEventMatchingOption: Any]?)

    func canSendWriteWithoutResponse(_ peripheral: CBMPeripheral) -> Bool
    func maximumWriteValueLength(_ peripheral: CBMPeripheral, type: CBMCharacteristicWriteType) -> Int
    func discoverServices(_ uuids: [CBMUUID]?, for peripheral: CBMPeripheral)
    func discoverIncludedServices(_ uuids: [CBMUUID]?, for service: CBMService, of peripheral: CBMPeripheral)
    func discoverCharacteristics(_ uuids: [CBMUUID]?, for service: CBMService, of peripheral: CBMPeripheral)
    func discoverDescriptors(for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral)
    func readValue(for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral)
    func readValue(for descriptor: CBMDescriptor, of peripheral: CBMPeripheral)
    func writeValue(
        _ data: Data, for characteristic: CBMCharacteristic, type: CBMCharacteristicWriteType,
        of peripheral: CBMPeripheral)
    func writeValue(_ data: Data, for descriptor: CBMDescriptor, of peripheral: CBMPeripheral)
    func setNotifyValue(_ enabled: Bool, for characteristic: CBMCharacteristic, of peripheral: CBMPeripheral)
    func readRSSI(of peripheral: CBMPeripheral)
    func openL2CAPChannel(_ psm: UInt16, on peripheral: CBMPeripheral)
    /// The app let go of its object for the peripheral `identifier` (called from the object's
    /// `deinit`, on any thread, possibly with the manager's lock held: queue work, take no lock).
    func peripheralReleased(_ identifier: UUID)
}

extension CentralBackend {
    /// CoreBluetooth itself (and a manager with no system) needs nothing done.
    func peripheralReleased(_ identifier: UUID) {}

    /// CoreBluetooth itself does not say what became of a write without response.
    var recordsWritesWithoutResponse: Bool { false }
}

/// Options of ``CBMCentralManager/registerForConnectionEvents(options:)``
/// (`CBConnectionEventMatchingOption`).
public struct CBMConnectionEventMatchingOption: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Match peripherals with one of these services (`[CBMUUID]`).
    public static let serviceUUIDs = CBMConnectionEventMatchingOption(
        rawValue: "kCBConnectionEventMatchingOptionServiceUUIDs")
    /// Match peripherals with one of these identifiers (`[UUID]`).
    public static let peripheralUUIDs = CBMConnectionEventMatchingOption(
        rawValue: "kCBConnectionEventMatchingOptionPeripheralUUIDs")
}
