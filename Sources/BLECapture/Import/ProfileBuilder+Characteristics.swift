import BLECore
import BLEMockKit

extension ProfileBuilder {
    /// The id a characteristic gets: `h` and its value handle in four hex digits.
    static func id(valueHandle: UInt16) -> String { "h" + hex(valueHandle) }

    /// A characteristic as profile JSON, and as a `discover` step reports it; records its entry.
    mutating func describe(_ characteristic: CapturedGATT.Characteristic) -> (JSONValue, JSONValue)? {
        guard entries[characteristic.valueHandle] == nil else {
            warnings.append(
                CaptureWarning(
                    .profileAdjusted(
                        "two characteristic declarations name value handle 0x\(hex(characteristic.valueHandle)); "
                            + "the one at 0x\(hex(characteristic.declarationHandle)) was left out")))
            return nil
        }
        let properties = CharacteristicProperties(rawValue: UInt(characteristic.properties))
        var permissions: AttributePermissions = []
        if properties.contains(.read) { permissions.insert(.readable) }
        if !properties.intersection([.write, .writeWithoutResponse, .authenticatedSignedWrites]).isEmpty {
            permissions.insert(.writeable)
        }
        let id = Self.id(valueHandle: characteristic.valueHandle)
        var members: [JSONValue.Member] = [
            (key: "id", value: .string(id)),
            (key: "uuid", value: .string(characteristic.uuid.description)),
            (key: "properties", value: .array(properties.names.map { .string($0) })),
            (key: "permissions", value: .array(permissions.names.map { .string($0) })),
        ]
        let (staticValue, initialValue) = values(of: characteristic, properties: properties)
        if let staticValue {
            members.append((key: "value", value: .bytes(staticValue)))
        } else if let initialValue {
            members.append((key: "initialValue", value: .bytes(initialValue)))
        }
        members.append((key: "handle", value: .int(Int(characteristic.declarationHandle))))
        members.append((key: "valueHandle", value: .int(Int(characteristic.valueHandle))))
        var descriptors: [JSONValue] = []
        var reported: [JSONValue] = properties.supportsSubscription ? [.string("2902")] : []
        var cccd: UInt16?
        for descriptor in gatt.descriptors(of: characteristic) {
            if descriptor.uuid == .clientCharacteristicConfiguration {
                cccd = descriptor.handle
                continue
            }
            var value = gatt.values[descriptor.handle]
            if value == nil {
                warnings.append(
                    CaptureWarning(
                        .profileAdjusted(
                            "descriptor \(descriptor.uuid) at handle 0x\(hex(descriptor.handle)) "
                                + (source == "recording"
                                    ? "has no value in the recording, which holds no descriptor reads"
                                    : "was not read in the capture")
                                + "; its value is written empty")))
            } else if let read = value, read.count > PeripheralProfile.maximumAttributeLength {
                value = Array(read.prefix(PeripheralProfile.maximumAttributeLength))
            }
            descriptors.append(
                .object([
                    "uuid": .string(descriptor.uuid.description), "value": .bytes(value ?? []),
                    "handle": .int(Int(descriptor.handle)),
                ]))
            reported.append(.string(descriptor.uuid.description))
        }
        if cccd != nil, !properties.supportsSubscription {
            warnings.append(
                CaptureWarning(
                    .profileAdjusted(
                        "characteristic \(characteristic.uuid) at 0x\(hex(characteristic.valueHandle)) has a Client "
                            + "Characteristic Configuration descriptor but neither notifies nor indicates; "
                            + "the descriptor was left out")))
        }
        if !descriptors.isEmpty { members.append((key: "descriptors", value: .array(descriptors))) }
        entries[characteristic.valueHandle] = Entry(
            id: id, properties: properties, isStatic: staticValue != nil, initialValue: initialValue ?? [],
            cccdHandle: cccd)
        let report: JSONValue = .object([
            "uuid": .string(characteristic.uuid.description), "properties": .int(Int(properties.rawValue)),
            "descriptors": .array(reported),
        ])
        return (.object(members), report)
    }

    /// The static value (a read-only characteristic whose reads all gave one value), or else
    /// the initial value of a dynamic one (its first read, when a read came before any write
    /// or update changed it).
    private func values(of characteristic: CapturedGATT.Characteristic, properties: CharacteristicProperties) -> (
        staticValue: [UInt8]?, initialValue: [UInt8]?
    ) {
        var reads: [[UInt8]] = []
        var first: [UInt8]?
        var changedFirst = false
        for timed in operations {
            switch timed.operation {
            case .read(let handle, .success(let value)) where handle == characteristic.valueHandle:
                reads.append(value)
                if first == nil, !changedFirst { first = value }
            case .write(let handle, _, _, nil) where handle == characteristic.valueHandle,
                .update(let handle, _, _) where handle == characteristic.valueHandle:
                changedFirst = changedFirst || first == nil
            default:
                break
            }
        }
        let limit = PeripheralProfile.maximumAttributeLength
        if properties.isSubset(of: Self.staticProperties), let value = reads.first,
            reads.allSatisfy({ $0 == value }), value.count <= limit
        {
            return (value, nil)
        }
        return (nil, first.map { Array($0.prefix(limit)) })
    }
}
