import BLECore

extension ATTPDU {
    /// Decodes an ATT PDU from an L2CAP payload.
    ///
    /// - Throws: ``ATTDecodingError/empty`` for no bytes, ``ATTDecodingError/unknownOpcode(_:)``
    ///   for an opcode the specification does not define (or that this reader does not
    ///   follow), ``ATTDecodingError/truncated(opcode:needed:available:)`` when the PDU ends
    ///   inside a field, and ``ATTDecodingError/malformed(opcode:reason:)`` for lists whose
    ///   lengths do not add up or UUIDs of the wrong size.
    public init(bytes: [UInt8]) throws(ATTDecodingError) {
        guard let opcode = bytes.first else { throw .empty }
        var reader = ByteReader(bytes[1...])
        do {
            self = try Self.decode(opcode, &reader)
        } catch let shortfall as ByteReader.Shortfall {
            throw .truncated(opcode: opcode, needed: shortfall.needed, available: shortfall.available)
        } catch let error as ATTDecodingError {
            throw error
        } catch {
            throw .malformed(opcode: opcode, reason: "\(error)")
        }
    }

    /// Decodes the fields after the opcode; throws `ByteReader.Shortfall` or `ATTDecodingError`.
    private static func decode(_ opcode: UInt8, _ reader: inout ByteReader) throws -> ATTPDU {
        switch opcode {
        case 0x01:
            return .errorResponse(
                request: try reader.uint8(), handle: try reader.uint16(), error: try reader.uint8())
        case 0x02: return .exchangeMTURequest(clientMTU: try reader.uint16())
        case 0x03: return .exchangeMTUResponse(serverMTU: try reader.uint16())
        case 0x04: return .findInformationRequest(start: try reader.uint16(), end: try reader.uint16())
        case 0x05: return .findInformationResponse(try findInformation(&reader))
        case 0x06:
            return .findByTypeValueRequest(
                start: try reader.uint16(), end: try reader.uint16(), type: try reader.uint16(),
                value: Array(reader.rest()))
        case 0x07:
            var groups: [Group] = []
            guard reader.remaining % 4 == 0, !reader.isAtEnd else {
                throw ATTDecodingError.malformed(
                    opcode: opcode, reason: "its handle list is not a multiple of 4 bytes")
            }
            while !reader.isAtEnd {
                groups.append(Group(handle: try reader.uint16(), endHandle: try reader.uint16()))
            }
            return .findByTypeValueResponse(groups)
        case 0x08, 0x10:
            let start = try reader.uint16()
            let end = try reader.uint16()
            let type = try uuid(reader.rest(), opcode: opcode)
            return opcode == 0x08
                ? .readByTypeRequest(start: start, end: end, type: type)
                : .readByGroupTypeRequest(start: start, end: end, type: type)
        case 0x09: return .readByTypeResponse(try handleValueList(&reader, opcode: opcode))
        case 0x0A: return .readRequest(handle: try reader.uint16())
        case 0x0B: return .readResponse(value: Array(reader.rest()))
        case 0x0C: return .readBlobRequest(handle: try reader.uint16(), offset: try reader.uint16())
        case 0x0D: return .readBlobResponse(value: Array(reader.rest()))
        case 0x0E, 0x20:
            guard reader.remaining % 2 == 0, reader.remaining >= 4 else {
                throw ATTDecodingError.malformed(opcode: opcode, reason: "it needs two or more 2-byte handles")
            }
            var handles: [UInt16] = []
            while !reader.isAtEnd { handles.append(try reader.uint16()) }
            return opcode == 0x0E
                ? .readMultipleRequest(handles: handles) : .readMultipleVariableRequest(handles: handles)
        case 0x0F: return .readMultipleResponse(values: Array(reader.rest()))
        case 0x11: return .readByGroupTypeResponse(try groupList(&reader))
        case 0x12: return .writeRequest(handle: try reader.uint16(), value: Array(reader.rest()))
        case 0x13: return .writeResponse
        case 0x16, 0x17:
            let handle = try reader.uint16()
            let offset = try reader.uint16()
            let value = Array(reader.rest())
            return opcode == 0x16
                ? .prepareWriteRequest(handle: handle, offset: offset, value: value)
                : .prepareWriteResponse(handle: handle, offset: offset, value: value)
        case 0x18: return .executeWriteRequest(commit: try reader.uint8() == 0x01)
        case 0x19: return .executeWriteResponse
        case 0x1B: return .notification(handle: try reader.uint16(), value: Array(reader.rest()))
        case 0x1D: return .indication(handle: try reader.uint16(), value: Array(reader.rest()))
        case 0x1E: return .confirmation
        case 0x21:
            // The list may be cut at ATT_MTU − 1 octets, inside the last tuple.
            var values: [[UInt8]] = []
            while !reader.isAtEnd {
                guard reader.remaining >= 2 else {
                    _ = reader.rest()  // part of a length: none of the value came
                    return .readMultipleVariableResponse(values: values + [[]], lastIsPartial: true)
                }
                let length = Int(try reader.uint16())
                guard length <= reader.remaining else {
                    return .readMultipleVariableResponse(values: values + [Array(reader.rest())], lastIsPartial: true)
                }
                values.append(Array(try reader.bytes(length)))
            }
            return .readMultipleVariableResponse(values: values)
        case 0x23:
            var values: [HandleValue] = []
            while !reader.isAtEnd {
                let handle = try reader.uint16()
                values.append(HandleValue(handle: handle, value: Array(try reader.bytes(Int(try reader.uint16())))))
            }
            return .multipleNotification(values)
        case 0x52: return .writeCommand(handle: try reader.uint16(), value: Array(reader.rest()))
        case 0xD2:
            let handle = try reader.uint16()
            guard reader.remaining >= 12 else {
                throw ATTDecodingError.truncated(opcode: opcode, needed: 12, available: reader.remaining)
            }
            let value = Array(try reader.bytes(reader.remaining - 12))
            return .signedWriteCommand(handle: handle, value: value, signature: Array(reader.rest()))
        default:
            throw ATTDecodingError.unknownOpcode(opcode)
        }
    }

    /// A UUID in ATT's little-endian form: 2 or 16 bytes.
    static func uuid(_ bytes: ArraySlice<UInt8>, opcode: UInt8) throws(ATTDecodingError) -> BluetoothUUID {
        guard bytes.count == 2 || bytes.count == 16, let uuid = try? BluetoothUUID(bytes: bytes.reversed()) else {
            throw ATTDecodingError.malformed(
                opcode: opcode, reason: "a UUID of \(bytes.count) bytes (2 or 16 expected)")
        }
        return uuid
    }

    private static func findInformation(_ reader: inout ByteReader) throws -> [HandleUUID] {
        let opcode: UInt8 = 0x05
        let format = try reader.uint8()
        guard format == 1 || format == 2 else {
            throw ATTDecodingError.malformed(opcode: opcode, reason: "format \(format) (1 or 2 expected)")
        }
        let width = format == 1 ? 2 : 16
        guard !reader.isAtEnd, reader.remaining % (2 + width) == 0 else {
            throw ATTDecodingError.malformed(
                opcode: opcode, reason: "its list is not made of \(2 + width)-byte entries")
        }
        var entries: [HandleUUID] = []
        while !reader.isAtEnd {
            let handle = try reader.uint16()
            entries.append(HandleUUID(handle: handle, uuid: try uuid(try reader.bytes(width), opcode: opcode)))
        }
        return entries
    }

    private static func handleValueList(_ reader: inout ByteReader, opcode: UInt8) throws
        -> [HandleValue]
    {
        let length = Int(try reader.uint8())
        guard length >= 2, !reader.isAtEnd, reader.remaining % length == 0 else {
            throw ATTDecodingError.malformed(opcode: opcode, reason: "its entries are not \(length) bytes each")
        }
        var entries: [HandleValue] = []
        while !reader.isAtEnd {
            let handle = try reader.uint16()
            entries.append(HandleValue(handle: handle, value: Array(try reader.bytes(length - 2))))
        }
        return entries
    }

    private static func groupList(_ reader: inout ByteReader) throws -> [Group] {
        let opcode: UInt8 = 0x11
        let length = Int(try reader.uint8())
        guard length >= 4, !reader.isAtEnd, reader.remaining % length == 0 else {
            throw ATTDecodingError.malformed(opcode: opcode, reason: "its entries are not \(length) bytes each")
        }
        var groups: [Group] = []
        while !reader.isAtEnd {
            groups.append(
                Group(
                    handle: try reader.uint16(), endHandle: try reader.uint16(),
                    value: Array(try reader.bytes(length - 4))))
        }
        return groups
    }
}

/// Why an L2CAP payload on the ATT channel is not an ATT PDU this reader understands.
public enum ATTDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The payload is empty.
    case empty
    /// The opcode is not one the Attribute Protocol defines.
    case unknownOpcode(UInt8)
    /// The PDU ends inside a field.
    case truncated(opcode: UInt8, needed: Int, available: Int)
    /// The PDU's fields do not fit together.
    case malformed(opcode: UInt8, reason: String)

    public var description: String {
        switch self {
        case .empty: "an empty ATT PDU"
        case .unknownOpcode(let opcode): "an ATT PDU with unknown opcode 0x\(hex(opcode))"
        case .truncated(let opcode, let needed, let available):
            "an ATT PDU (opcode 0x\(hex(opcode))) cut short: a field needed \(needed) bytes, \(available) were left"
        case .malformed(let opcode, let reason): "a malformed ATT PDU (opcode 0x\(hex(opcode))): \(reason)"
        }
    }
}
