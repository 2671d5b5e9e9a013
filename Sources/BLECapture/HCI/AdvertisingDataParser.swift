import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads advertising and scan response data — a list of AD structures, each a length byte,
/// an AD type and its data (Bluetooth Core Specification, Vol 3, Part C, 11; Core
/// Specification Supplement, Part A) — into the fields of an `AdvertisementData`.
public enum AdvertisingDataParser {
    /// Why advertising data could not be read to its end.
    public enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// An AD structure claims more bytes than are left.
        case truncatedStructure(offset: Int, length: Int, available: Int)
        /// A UUID list or service data entry has a length its UUID width does not divide.
        case badUUIDList(type: UInt8, length: Int)

        public var description: String {
            switch self {
            case .truncatedStructure(let offset, let length, let available):
                "an AD structure at byte \(offset) claims \(length) bytes but \(available) are left"
            case .badUUIDList(let type, let length):
                "AD type 0x\(hex(type)) has \(length) bytes, which is not a whole number of UUIDs"
            }
        }
    }

    /// Adds what `data` carries to `advertisement`: local name (complete, else shortened),
    /// service UUIDs (16-, 32- and 128-bit, complete or not), solicited UUIDs, service data,
    /// manufacturer data and TX power level. Unknown AD types (flags, appearance, …) are
    /// skipped.
    ///
    /// - Returns: the problem that stopped reading, if any; what came before it is kept.
    @discardableResult
    public static func merge(_ data: [UInt8], into advertisement: inout AdvertisementData) -> Problem? {
        var offset = 0
        var shortenedName: String?
        while offset < data.count {
            let length = Int(data[offset])
            if length == 0 {
                offset += 1
                continue
            }
            guard offset + 1 + length <= data.count else {
                return .truncatedStructure(offset: offset, length: length, available: data.count - offset - 1)
            }
            let type = data[offset + 1]
            let body = Array(data[(offset + 2)..<(offset + 1 + length)])
            offset += 1 + length
            do throws(Problem) {
                switch type {
                case 0x02, 0x03: appendUnique(try uuids(body, width: 2, type: type), to: &advertisement.serviceUUIDs)
                case 0x04, 0x05: appendUnique(try uuids(body, width: 4, type: type), to: &advertisement.serviceUUIDs)
                case 0x06, 0x07: appendUnique(try uuids(body, width: 16, type: type), to: &advertisement.serviceUUIDs)
                case 0x08: shortenedName = String(decoding: body, as: UTF8.self)
                case 0x09: advertisement.localName = String(decoding: body, as: UTF8.self)
                case 0x0A: if let power = body.first { advertisement.txPowerLevel = Int(Int8(bitPattern: power)) }
                case 0x14:
                    appendUnique(try uuids(body, width: 2, type: type), to: &advertisement.solicitedServiceUUIDs)
                case 0x1F:
                    appendUnique(try uuids(body, width: 4, type: type), to: &advertisement.solicitedServiceUUIDs)
                case 0x15:
                    appendUnique(try uuids(body, width: 16, type: type), to: &advertisement.solicitedServiceUUIDs)
                case 0x16, 0x20, 0x21:
                    let width = type == 0x16 ? 2 : type == 0x20 ? 4 : 16
                    guard body.count >= width, let uuid = try? BluetoothUUID(bytes: body.prefix(width).reversed())
                    else { throw .badUUIDList(type: type, length: body.count) }
                    advertisement.serviceData[uuid] = Data(body.dropFirst(width))
                case 0xFF: advertisement.manufacturerData = Data(body)
                default: break
                }
            } catch {
                return error
            }
        }
        if advertisement.localName == nil, let shortenedName { advertisement.localName = shortenedName }
        return nil
    }

    private static func uuids(_ body: [UInt8], width: Int, type: UInt8) throws(Problem) -> [BluetoothUUID] {
        guard body.count % width == 0 else { throw .badUUIDList(type: type, length: body.count) }
        return stride(from: 0, to: body.count, by: width).compactMap { start in
            try? BluetoothUUID(bytes: body[start..<start + width].reversed())
        }
    }

    private static func appendUnique(_ uuids: [BluetoothUUID], to list: inout [BluetoothUUID]) {
        for uuid in uuids where !list.contains(uuid) { list.append(uuid) }
    }
}
