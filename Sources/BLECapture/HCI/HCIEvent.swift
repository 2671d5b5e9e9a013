/// The HCI events the importer follows, decoded (Bluetooth Core Specification, Vol 4,
/// Part E, 7.7); every other event is ``other(code:subevent:)``.
public enum HCIEvent: Sendable, Hashable {
    /// An LE connection was made (LE Connection Complete, or LE Enhanced Connection Complete
    /// v1 or v2).
    case leConnectionComplete(LEConnection)
    /// A connection's parameters changed (LE Connection Update Complete): its status, handle
    /// and new connection interval, in units of 1.25 ms.
    case leConnectionUpdateComplete(status: UInt8, handle: UInt16, interval: UInt16)
    /// LE advertising reports (legacy or extended).
    case leAdvertisingReports([AdvertisingReport])
    /// A connection ended: its status, handle and reason (an HCI error code, e.g. 0x13
    /// remote user terminated, 0x16 terminated by the local host, 0x08 supervision timeout).
    case disconnectionComplete(status: UInt8, handle: UInt16, reason: UInt8)
    /// Encryption was turned on or off on a connection (Encryption Change v1 or v2).
    case encryptionChange(status: UInt8, handle: UInt16, isEnabled: Bool)
    /// Any other event (or LE subevent: `0x3E` events carry their subevent code as `subevent`).
    case other(code: UInt8, subevent: UInt8?)

    /// An LE connection as the controller reported it.
    public struct LEConnection: Sendable, Hashable {
        /// 0 when the connection was made.
        public var status: UInt8
        /// The connection handle ACL data carries.
        public var handle: UInt16
        /// Whether the capturing device is the central (role 0) or the peripheral (role 1).
        public var isLocalCentral: Bool
        /// The peer's address type (0 public, 1 random, 2 and 3 identity addresses).
        public var peerAddressType: UInt8
        /// The peer's address.
        public var peerAddress: BluetoothAddress
        /// The connection interval, in units of 1.25 ms.
        public var interval: UInt16

        /// Creates a connection description.
        public init(
            status: UInt8, handle: UInt16, isLocalCentral: Bool, peerAddressType: UInt8,
            peerAddress: BluetoothAddress, interval: UInt16
        ) {
            self.status = status
            self.handle = handle
            self.isLocalCentral = isLocalCentral
            self.peerAddressType = peerAddressType
            self.peerAddress = peerAddress
            self.interval = interval
        }
    }

    /// One advertising report.
    public struct AdvertisingReport: Sendable, Hashable {
        /// The advertiser's address.
        public var address: BluetoothAddress
        /// Whether the advertisement invites connections.
        public var isConnectable: Bool
        /// Whether this is a scan response rather than an advertisement.
        public var isScanResponse: Bool
        /// The advertising data (AD structures).
        public var data: [UInt8]
        /// The signal strength in dBm, when the controller gave one.
        public var rssi: Int?

        /// Creates a report.
        public init(address: BluetoothAddress, isConnectable: Bool, isScanResponse: Bool, data: [UInt8], rssi: Int?) {
            self.address = address
            self.isConnectable = isConnectable
            self.isScanResponse = isScanResponse
            self.data = data
            self.rssi = rssi
        }
    }

    /// The LE Meta event code.
    static let leMeta: UInt8 = 0x3E

    /// Decodes an event's parameters.
    ///
    /// - Throws: ``HCIDecodingError/truncated(what:needed:available:)`` when a followed
    ///   event is shorter than its fields.
    public static func decode(code: UInt8, parameters: [UInt8]) throws(HCIDecodingError) -> HCIEvent {
        var reader = ByteReader(parameters)
        var what = "event 0x\(hex(code))"
        do throws(ByteReader.Shortfall) {
            switch code {
            case 0x05:
                what = "Disconnection Complete event"
                return .disconnectionComplete(
                    status: try reader.uint8(), handle: try reader.uint16() & 0x0FFF, reason: try reader.uint8())
            case 0x08, 0x59:
                what = "Encryption Change event"
                return .encryptionChange(
                    status: try reader.uint8(), handle: try reader.uint16() & 0x0FFF, isEnabled: try reader.uint8() != 0
                )
            case leMeta:
                let subevent = try reader.uint8()
                switch subevent {
                case 0x01, 0x0A, 0x29:
                    what = "LE Connection Complete event"
                    return .leConnectionComplete(try connection(&reader, enhanced: subevent != 0x01))
                case 0x03:
                    what = "LE Connection Update Complete event"
                    return .leConnectionUpdateComplete(
                        status: try reader.uint8(), handle: try reader.uint16() & 0x0FFF, interval: try reader.uint16())
                case 0x02:
                    what = "LE Advertising Report event"
                    return .leAdvertisingReports(try legacyReports(&reader))
                case 0x0D:
                    what = "LE Extended Advertising Report event"
                    return .leAdvertisingReports(try extendedReports(&reader))
                default:
                    return .other(code: code, subevent: subevent)
                }
            default:
                return .other(code: code, subevent: nil)
            }
        } catch {
            throw .truncated(what: what, needed: error.needed, available: error.available)
        }
    }

    private static func connection(_ reader: inout ByteReader, enhanced: Bool) throws(ByteReader.Shortfall)
        -> LEConnection
    {
        let status = try reader.uint8()
        let handle = try reader.uint16() & 0x0FFF
        let role = try reader.uint8()
        let type = try reader.uint8()
        let address = BluetoothAddress(hciBytes: try reader.bytes(6))
        if enhanced { _ = try reader.bytes(12) }  // local and peer resolvable private addresses
        let interval = try reader.uint16()
        return LEConnection(
            status: status, handle: handle, isLocalCentral: role == 0, peerAddressType: type, peerAddress: address,
            interval: interval)
    }

    /// Legacy reports, each laid out in turn (event type, address type, address, data
    /// length, data, RSSI), as controllers send them.
    private static func legacyReports(_ reader: inout ByteReader) throws(ByteReader.Shortfall) -> [AdvertisingReport] {
        let count = Int(try reader.uint8())
        var reports: [AdvertisingReport] = []
        for _ in 0..<count {
            let type = try reader.uint8()
            _ = try reader.uint8()
            let address = BluetoothAddress(hciBytes: try reader.bytes(6))
            let data = Array(try reader.bytes(Int(try reader.uint8())))
            let rssi = Int8(bitPattern: try reader.uint8())
            reports.append(
                AdvertisingReport(
                    address: address, isConnectable: type == 0x00 || type == 0x01, isScanResponse: type == 0x04,
                    data: data, rssi: rssi == 127 ? nil : Int(rssi)))
        }
        return reports
    }

    private static func extendedReports(_ reader: inout ByteReader) throws(ByteReader.Shortfall) -> [AdvertisingReport]
    {
        let count = Int(try reader.uint8())
        var reports: [AdvertisingReport] = []
        for _ in 0..<count {
            let type = try reader.uint16()
            _ = try reader.uint8()
            let address = BluetoothAddress(hciBytes: try reader.bytes(6))
            _ = try reader.bytes(4)  // primary PHY, secondary PHY, SID, TX power
            let rssi = Int8(bitPattern: try reader.uint8())
            _ = try reader.bytes(9)  // periodic advertising interval, direct address type and address
            let data = Array(try reader.bytes(Int(try reader.uint8())))
            reports.append(
                AdvertisingReport(
                    address: address, isConnectable: type & 0x01 != 0, isScanResponse: type & 0x08 != 0, data: data,
                    rssi: rssi == 127 ? nil : Int(rssi)))
        }
        return reports
    }
}
