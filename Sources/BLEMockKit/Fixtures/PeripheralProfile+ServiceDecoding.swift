import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension PeripheralProfile {
    /// Reads the `services` array, checking included services and characteristic ids
    /// across the whole profile.
    static func services(_ nodes: [FixtureJSON]) throws(FixtureError) -> [Service] {
        var services: [Service] = []
        var ids: [String: FixtureJSON] = [:]
        // Attribute handles the services take, counted as a database numbers them.
        var handles = 0
        for node in nodes {
            let object = try FixtureObject(node, fields: Service.fields, example: #"{"uuid": "180D"}"#)
            let uuidNode = try object.required("uuid", example: "\"180D\"")
            let uuid = try FixtureObject.uuid(uuidNode)
            // The system's own services: CoreBluetooth refuses to publish them (uuidNotAllowed),
            // so a device with one could never be set up.
            if GATTDatabase.isSystemService(uuid) {
                let name = uuid == BluetoothUUID(UInt16(0x1800)) ? "Generic Access" : "Generic Attribute"
                throw FixtureError(
                    .valueOutOfRange, at: uuidNode,
                    message: "service \(uuid) (\(name)) is the system's: a peripheral manager may not publish it",
                    fix: "leave it out; every simulated peripheral has it")
            }
            var service = Service(uuid: uuid, isPrimary: try object.bool("primary") ?? true)
            service.handle = try handle(object, "handle")
            service.endHandle = try handle(object, "endHandle")
            if let start = service.handle, let end = service.endHandle, end < start, let node = object["endHandle"] {
                throw FixtureError.outOfRange(
                    node, what: "endHandle", value: "\(end)", range: "\(start)…65535",
                    hint: "a service's group ends at or after its declaration's handle")
            }
            for element in try object.array("includedServices", example: "[\"180F\"]") ?? [] {
                let included = try FixtureObject.uuid(element)
                guard services.contains(where: { $0.uuid == included }) else {
                    throw FixtureError(
                        .unknownIncludedService(included), at: element,
                        message: "included service \(included) is not listed before this service",
                        fix: "add a service with uuid \"\(included.uuidString)\" earlier in \"services\" "
                            + "(usually with \"primary\": false)")
                }
                service.includedServices.append(included)
            }
            let example = #"[{"uuid": "2A37", "properties": ["read"], "permissions": ["readable"]}]"#
            for element in try object.array("characteristics", example: example) ?? [] {
                let characteristic = try Self.characteristic(element)
                if let id = characteristic.id, let idNode = element.member("id") {
                    if let first = ids[id] {
                        throw FixtureError(
                            .duplicateCharacteristicID(id), at: idNode,
                            message: "characteristic id \"\(id)\" is already used at line \(first.line), "
                                + "column \(first.column) (\(first.path))",
                            fix: "give each characteristic a unique id")
                    }
                    ids[id] = idNode
                }
                service.characteristics.append(characteristic)
            }
            handles +=
                1 + service.includedServices.count
                + service.characteristics.reduce(0) { total, characteristic in
                    total
                        + GATTDatabase.handles(
                            of: characteristic.properties, descriptors: characteristic.descriptors.count)
                }
            if handles > Int(UInt16.max) {
                throw FixtureError(
                    .valueOutOfRange, at: node,
                    message: "the services up to this one need \(handles) attribute handles; a GATT database has 65535",
                    fix: "use fewer services, characteristics or descriptors")
            }
            services.append(service)
        }
        return services
    }

    /// Reads one characteristic object.
    static func characteristic(_ node: FixtureJSON) throws(FixtureError) -> Characteristic {
        let object = try FixtureObject(node, fields: Characteristic.fields, example: #"{"uuid": "2A37"}"#)
        var id: String?
        if let idNode = object["id"] {
            guard let text = idNode.string, !text.isEmpty else {
                throw FixtureError.wrongType(idNode, expected: "a non-empty string", example: "\"hrm\"")
            }
            id = text
        }
        let uuid = try FixtureObject.uuid(object.required("uuid", example: "\"2A37\""))
        let properties = try Self.properties(object.required("properties", example: "[\"read\"]"))
        var permissions: AttributePermissions = []
        for element in try names(object.required("permissions", example: "[\"readable\"]")) {
            let name = element.string!
            guard let permission = AttributePermissions(names: [name]) else {
                throw FixtureError(
                    .unknownPermission(name), at: element, message: "unknown permission \"\(name)\"",
                    fix: FixtureError.choice(for: name, among: AttributePermissions.named.map(\.name)))
            }
            permissions.insert(permission)
        }
        var value: Data?
        if let valueNode = object["value"] {
            let bytes = try attributeValue(valueNode)
            let mutable = properties.intersection(Characteristic.mutableProperties)
            guard mutable.isEmpty else {
                throw FixtureError(
                    .staticValueNotReadOnly, at: valueNode,
                    message:
                        "a characteristic with a static value cannot have \(mutable.names.joined(separator: ", "))",
                    fix: "remove \"value\" to make it dynamic, or keep only read and broadcast properties")
            }
            value = bytes
        }
        var descriptors: [GATTDescriptor] = []
        var descriptorHandles: [UInt16?] = []
        for element in try object.array("descriptors", example: #"[{"uuid": "2901", "value": {"utf8": "Name"}}]"#)
            ?? []
        {
            let descriptor = try FixtureObject(element, fields: descriptorFields, example: #"{"uuid": "2901"}"#)
            let uuidNode = try descriptor.required("uuid", example: "\"2901\"")
            let descriptorUUID = try FixtureObject.uuid(uuidNode)
            guard descriptorUUID != .clientCharacteristicConfiguration else {
                throw FixtureError(
                    .managedDescriptor, at: uuidNode,
                    message: "the Client Characteristic Configuration descriptor (2902) is managed by the stack",
                    fix: "remove it; it is added for characteristics that notify or indicate")
            }
            let bytes = try attributeValue(descriptor.required("value", example: #"{"utf8": "Name"}"#))
            descriptors.append(GATTDescriptor(uuid: descriptorUUID, value: bytes))
            descriptorHandles.append(try handle(descriptor, "handle"))
        }
        var initialValue: Data?
        if let node = object["initialValue"] {
            guard value == nil else {
                throw FixtureError(
                    .unknownField("initialValue"), at: node,
                    message: "a characteristic with a static value has no initial value",
                    fix: "remove \"initialValue\", or remove \"value\" to make the characteristic dynamic")
            }
            initialValue = try attributeValue(node)
        }
        let declarationHandle = try handle(object, "handle")
        let valueHandle = try handle(object, "valueHandle")
        if let declarationHandle, let valueHandle, valueHandle <= declarationHandle, let node = object["valueHandle"] {
            throw FixtureError.outOfRange(
                node, what: "valueHandle", value: "\(valueHandle)", range: "\(Int(declarationHandle) + 1)…65535",
                hint: "the value follows its characteristic's declaration")
        }
        return Characteristic(
            id: id, uuid: uuid, properties: properties, permissions: permissions, value: value,
            descriptors: descriptors, initialValue: initialValue, handle: declarationHandle, valueHandle: valueHandle,
            descriptorHandles: descriptorHandles.allSatisfy { $0 == nil } ? [] : descriptorHandles)
    }

    /// An optional attribute handle field (1…65535).
    static func handle(_ object: FixtureObject, _ key: String) throws(FixtureError) -> UInt16? {
        try object.integer(key, in: handleRange, hint: "an attribute handle").map { UInt16($0) }
    }

    /// An array of characteristic property names, as a set.
    ///
    /// - Throws: ``FixtureError/Kind/unknownProperty(_:)`` at the first unknown name.
    static func properties(_ node: FixtureJSON) throws(FixtureError) -> CharacteristicProperties {
        var properties: CharacteristicProperties = []
        for element in try names(node) {
            let name = element.string!
            guard let property = CharacteristicProperties(names: [name]) else {
                throw FixtureError(
                    .unknownProperty(name), at: element, message: "unknown property \"\(name)\"",
                    fix: FixtureError.choice(for: name, among: CharacteristicProperties.named.map(\.name)))
            }
            properties.insert(property)
        }
        return properties
    }

    /// An array of name strings (properties or permissions).
    static func names(_ node: FixtureJSON) throws(FixtureError) -> [FixtureJSON] {
        guard let elements = node.elements else {
            throw FixtureError.wrongType(node, expected: "an array of names", example: "[\"read\", \"notify\"]")
        }
        for element in elements where element.string == nil {
            throw FixtureError.wrongType(element, expected: "a name string", example: "\"read\"")
        }
        return elements
    }

    /// A byte value that must fit an attribute (at most 512 bytes).
    static func attributeValue(_ node: FixtureJSON) throws(FixtureError) -> Data {
        let bytes = try FixtureBytes.parse(node)
        guard bytes.count <= maximumAttributeLength else {
            throw FixtureError.outOfRange(
                node, what: "attribute value length", value: "\(bytes.count)", range: "0…512",
                hint: "an attribute value holds at most 512 bytes")
        }
        return bytes
    }
}
