extension ATTError.Code: CustomStringConvertible {
    /// The code's name, such as `"readNotPermitted"`, `"application(0x80)"` or `"reserved(0x20)"`.
    public var name: String {
        switch rawValue {
        case 0x00: "success"
        case 0x01: "invalidHandle"
        case 0x02: "readNotPermitted"
        case 0x03: "writeNotPermitted"
        case 0x04: "invalidPdu"
        case 0x05: "insufficientAuthentication"
        case 0x06: "requestNotSupported"
        case 0x07: "invalidOffset"
        case 0x08: "insufficientAuthorization"
        case 0x09: "prepareQueueFull"
        case 0x0A: "attributeNotFound"
        case 0x0B: "attributeNotLong"
        case 0x0C: "insufficientEncryptionKeySize"
        case 0x0D: "invalidAttributeValueLength"
        case 0x0E: "unlikelyError"
        case 0x0F: "insufficientEncryption"
        case 0x10: "unsupportedGroupType"
        case 0x11: "insufficientResources"
        case 0x12: "databaseOutOfSync"
        case 0x13: "valueNotAllowed"
        case 0xFC: "writeRequestRejected"
        case 0xFD: "cccdImproperlyConfigured"
        case 0xFE: "procedureAlreadyInProgress"
        case 0xFF: "outOfRange"
        case ATTError.Code.applicationRange: "application(\(Self.hex(rawValue)))"
        default: "reserved(\(Self.hex(rawValue)))"
        }
    }

    /// The raw value and name, e.g. `"0x02 readNotPermitted"`.
    public var description: String { "\(Self.hex(rawValue)) \(name)" }

    /// Creates a code from its name as ``name`` spells it; `nil` for unknown names.
    public init?(name: String) {
        guard let code = Self.allNamed.first(where: { $0.name == name }) else { return nil }
        self = code
    }

    static func hex(_ value: UInt8) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + (digits.count == 1 ? "0" + digits : digits)
    }
}

extension ATTError: CustomStringConvertible {
    /// What went wrong and how to fix it, starting with the code, e.g.
    /// `"ATT error 0x02 readNotPermitted: the characteristic cannot be read. …"`.
    public var description: String {
        "ATT error \(code.description): \(explanation)"
    }

    /// The explanation and suggested fix for this code, without the code itself.
    public var explanation: String {
        switch code {
        case .success:
            "not an error (success); a request was granted."
        case .invalidHandle:
            "the attribute handle does not exist on this server. Rediscover services: the database may have changed."
        case .readNotPermitted:
            "the attribute cannot be read. Check that the characteristic has the .read property and .readable permission."
        case .writeNotPermitted:
            "the attribute cannot be written. Check the .write/.writeWithoutResponse property and .writeable permission."
        case .invalidPdu:
            "the request was malformed. Check value lengths and offsets."
        case .insufficientAuthentication:
            "the attribute needs an authenticated link. Pair (bond) with the peripheral, then retry."
        case .requestNotSupported:
            "the server does not support this request."
        case .invalidOffset:
            "the offset is past the end of the value. Read from an offset no greater than the value's length."
        case .insufficientAuthorization:
            "the attribute needs authorization the client lacks."
        case .prepareQueueFull:
            "too many prepared writes are queued. Execute or cancel the pending long write first."
        case .attributeNotFound:
            "no attribute was found. Check the UUID and rediscover the peripheral's services."
        case .attributeNotLong:
            "the attribute cannot be read or written with long (blob) requests."
        case .insufficientEncryptionKeySize:
            "the link's encryption key is too short for this attribute."
        case .invalidAttributeValueLength:
            "the value has an invalid length; attribute values are at most 512 bytes. Split larger data into messages."
        case .unlikelyError:
            "the request failed for an unlikely reason; retry or check the peripheral."
        case .insufficientEncryption:
            "the attribute needs an encrypted link. Pair with the peripheral, then retry."
        case .unsupportedGroupType:
            "the attribute type is not a supported grouping type."
        case .insufficientResources:
            "the server lacks resources to complete the request; retry later or reduce concurrent requests."
        case .databaseOutOfSync:
            "the client's view of the database is stale. Rediscover services."
        case .valueNotAllowed:
            "the value is not allowed by the server."
        case .cccdImproperlyConfigured:
            "the Client Characteristic Configuration descriptor is improperly configured; subscribe again."
        case .procedureAlreadyInProgress:
            "a procedure is already in progress; wait for it to finish."
        case .outOfRange:
            "a value is out of range."
        case .writeRequestRejected:
            "the write request was rejected by the profile."
        default:
            code.isApplicationError
                ? "an application-defined error of the peripheral's profile; see the profile's documentation."
                : "a reserved error code; the peripheral may be misbehaving."
        }
    }
}
