import BLECore
import BLEMockKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The session with one peripheral, as a recording shows it, in the capture importer's terms:
/// the GATT database the app discovered, each connection with the operations on it (times in
/// microseconds, "packets" numbering the recording's events from 1), and the advertisement
/// last heard before the first connection. The profile and scenario builders then work on it
/// as they do on a capture.
struct RecordedConversation {
    struct Connection {
        var log: ConnectionLog
        var mtu: Int
        var operations: [TimedOperation] = []
        var discoveryTime: Int64?
    }

    private(set) var gatt = CapturedGATT()
    private(set) var connections: [Connection] = []
    private(set) var advertising: AdvertisingLog?
    private(set) var warnings: [CaptureWarning] = []
    private var isConnected = false
    private let placeholders: [String: [UInt8]]

    /// The Bluetooth address a recording's connections are filed under: a recording names
    /// peripherals by identifier, not by address, and the builders do not read it.
    static let noAddress = BluetoothAddress(bytes: [0, 0, 0, 0, 0, 0])!

    init(
        _ recording: SessionRecording, peripheral: UUID, placeholders: [String: [UInt8]]
    ) throws(RecordingImportError) {
        self.placeholders = placeholders
        let entries = recording.entries.enumerated().filter { $0.element.event.peripheral == peripheral }
        // A recording made on CoreBluetooth numbers attributes in discovery order, not as handles.
        let events = RecordedLayout.rebased(entries.map(\.element.event))
        for ((index, entry), event) in zip(entries, events) {
            try add(event, time: Self.microseconds(entry.time), event: index + 1)
        }
    }

    /// A recording time in microseconds (the builders' unit), rounded down.
    static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.saturatingComponents
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        return overflow ? .max : scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000).partialValue
    }

    private mutating func add(_ event: RecordedEvent, time: Int64, event number: Int) throws(RecordingImportError) {
        switch event {
        case .scanStarted, .scanStopped:
            break
        case .discovered(_, _, let advertisement, let rssi):
            if connections.isEmpty { advertising = AdvertisingLog(advertisement: advertisement, rssi: rssi) }
        case .connected(_, let mtu):
            if isConnected {
                // The app heard no disconnection of the link before (CoreBluetooth tells none when
                // Bluetooth goes off, and a relaunched app was not there to hear it): the replay
                // loses that link as this connection starts.
                connections[connections.count - 1].log.end = time
                connections[connections.count - 1].log.disconnectReason = 0x08
                warnings.append(
                    CaptureWarning(
                        .notReplayed(
                            "a connection with no disconnection recorded since the one before: the replay loses the "
                                + "earlier link just before it"), packet: number))
            }
            let log = ConnectionLog(
                handle: UInt16(truncatingIfNeeded: connections.count + 1), peer: Self.noAddress, isLocalCentral: true,
                start: time)
            connections.append(Connection(log: log, mtu: mtu))
            isConnected = true
            if mtu == SessionRecording.lowerBoundMTU {
                warnings.append(
                    CaptureWarning(
                        .profileAdjusted(
                            "the recorded ATT_MTU \(mtu) means at least \(mtu) (a recorder reads it from "
                                + "maximumWriteValueLength(for: .withoutResponse), at most 512, plus 3): the link may "
                                + "have had 516 or 517; the replay uses \(mtu), which no ATT operation tells apart from "
                                + "them (every value, at most 512 bytes, fits one PDU)"), packet: number))
            }
        case .connectionFailed(_, let error):
            skip("a failed connection attempt (\(error.domain.rawValue) error \(error.code))", number)
        case .disconnected(_, let error):
            guard isConnected else { return }
            isConnected = false
            connections[connections.count - 1].log.end = time
            if error == nil {
                connections[connections.count - 1].log.disconnectedLocally = true
            } else if error == RecordedError(CoreBluetoothError(.connectionTimeout)) {
                connections[connections.count - 1].log.disconnectReason = 0x08  // supervision timeout
            } else if let error, error.domain == .coreBluetooth,
                let code = CoreBluetoothError.Code(rawValue: error.code),
                code != .peripheralDisconnected
            {
                // Another error the app saw (`encryptionTimedOut`, `peerRemovedPairingInformation`,
                // …): the replay's link ends with it.
                connections[connections.count - 1].log.disconnectError = code
            }
        case .servicesDiscovered(_, let services):
            for service in services {
                gatt.services[service.handle] = CapturedGATT.Service(
                    handle: service.handle, endHandle: service.endHandle, uuid: service.uuid,
                    isPrimary: service.isPrimary)
            }
            if isConnected, connections[connections.count - 1].discoveryTime == nil {
                connections[connections.count - 1].discoveryTime = time
            }
        case .characteristicsDiscovered(_, _, let characteristics):
            for characteristic in characteristics where characteristic.handle > 1 {
                gatt.characteristics[characteristic.handle - 1] = CapturedGATT.Characteristic(
                    declarationHandle: characteristic.handle - 1, valueHandle: characteristic.handle,
                    properties: UInt8(truncatingIfNeeded: characteristic.properties.rawValue), uuid: characteristic.uuid
                )
            }
        case .descriptorsDiscovered(_, _, let descriptors):
            for descriptor in descriptors { gatt.types[descriptor.handle] = descriptor.uuid }
        case .read(_, let handle, .success(let value)):
            let bytes = try resolve(value)
            gatt.values[handle] = bytes
            append(.read(handle: handle, result: .success(bytes)), time: time, event: number)
        case .read(_, let handle, .failure(let error)):
            guard let code = Self.attCode(error) else {
                return skip("a read of handle 0x\(hex(handle)) that failed with \(Self.describe(error))", number)
            }
            append(.read(handle: handle, result: .failure(ATTFailure(code: code))), time: time, event: number)
        case .write(_, let handle, let value, let withResponse, let error):
            var code: UInt8?
            if let error {
                guard let att = Self.attCode(error) else {
                    return skip("a write of handle 0x\(hex(handle)) that failed with \(Self.describe(error))", number)
                }
                code = att
            }
            append(
                .write(handle: handle, value: try resolve(value), withResponse: withResponse, error: code), time: time,
                event: number)
        case .notificationState(_, let handle, let enabled, let error):
            try configure(handle: handle, enabled: enabled, error: error, time: time, event: number)
        case .valueUpdated(_, let handle, let value, let isIndication):
            append(
                .update(handle: handle, value: try resolve(value), isIndication: isIndication), time: time,
                event: number)
        }
    }

    /// A subscription change: a write of the characteristic's Client Characteristic
    /// Configuration descriptor, as the stack makes it.
    private mutating func configure(
        handle: UInt16, enabled: Bool, error: RecordedError?, time: Int64, event number: Int
    ) throws(RecordingImportError) {
        guard let characteristic = gatt.characteristic(valueHandle: handle),
            let cccd = gatt.descriptors(of: characteristic).first(where: {
                $0.uuid == .clientCharacteristicConfiguration
            })
        else {
            return skip(
                "a subscription change of handle 0x\(hex(handle)) before its descriptors were discovered (a "
                    + "notification after it subscribes the scenario first)", number)
        }
        var code: UInt8?
        if let error {
            guard let att = Self.attCode(error) else {
                return skip("a subscription change that failed with \(Self.describe(error))", number)
            }
            code = att
        }
        let properties = CharacteristicProperties(rawValue: UInt(characteristic.properties))
        let bits: UInt8 = !enabled ? 0 : properties.contains(.notify) ? 1 : 2
        append(
            .write(handle: cccd.handle, value: [bits, 0], withResponse: true, error: code), time: time, event: number)
    }

    private mutating func append(_ operation: CapturedOperation, time: Int64, event number: Int) {
        guard isConnected else {
            return skip("\(operation.phrase) outside a connection", number)
        }
        connections[connections.count - 1].operations.append(
            TimedOperation(time: time, packet: number, operation: operation))
    }

    private mutating func skip(_ what: String, _ number: Int) {
        warnings.append(CaptureWarning(.notReplayed(what + " is not replayed"), packet: number))
    }

    private func resolve(_ value: RecordedValue) throws(RecordingImportError) -> [UInt8] {
        switch value {
        case .bytes(let bytes): return Array(bytes)
        case .placeholder(let name):
            guard let bytes = placeholders[name] else {
                throw .missingPlaceholder(name, supplied: placeholders.keys.sorted())
            }
            return bytes
        }
    }

    private static func attCode(_ error: RecordedError) -> UInt8? {
        guard error.domain == .att, let code = UInt8(exactly: error.code), code != 0 else { return nil }
        return code
    }

    private static func describe(_ error: RecordedError) -> String {
        "\(error.domain.rawValue) error \(error.code)"
    }

    /// The conversation of one connection, or of them all (for the profile), as the builders take it.
    func conversation(of connection: Connection?) -> ATTConversation {
        var conversation = ATTConversation([])
        conversation.gatt = gatt
        conversation.operations = connection.map(\.operations) ?? connections.flatMap(\.operations)
        let mtu = UInt16(connection?.mtu ?? connections.first?.mtu ?? 23)
        conversation.clientMTU = mtu
        conversation.serverMTU = mtu
        conversation.discoveryTime = connection?.discoveryTime
        return conversation
    }
}
