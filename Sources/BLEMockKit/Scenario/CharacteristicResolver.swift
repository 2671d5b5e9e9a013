import BLECore

/// Resolves the characteristic names steps use (`"char"`): an `id` of the profile, or a UUID
/// only one of its characteristics has.
struct CharacteristicResolver {
    let profile: PeripheralProfile

    func resolve(_ node: FixtureJSON) throws(FixtureError) -> ScenarioStep.CharacteristicReference {
        guard let name = node.string else {
            throw FixtureError.wrongType(node, expected: "a characteristic id or UUID", example: "\"hrm\" or \"2A37\"")
        }
        var byID: ScenarioStep.CharacteristicReference?
        var byUUID: [ScenarioStep.CharacteristicReference] = []
        let uuid = try? BluetoothUUID(string: name)
        for (serviceIndex, service) in profile.services.enumerated() {
            for (index, characteristic) in service.characteristics.enumerated() {
                let reference = ScenarioStep.CharacteristicReference(
                    name: name, serviceIndex: serviceIndex, characteristicIndex: index)
                if characteristic.id == name { byID = reference }
                if let uuid, characteristic.uuid == uuid { byUUID.append(reference) }
            }
        }
        let ids = profile.characteristicIDs
        if let byID {
            // The name is one characteristic's id and, as a UUID, names another alone: it could
            // mean either.
            guard byUUID.count == 1, byUUID[0] != byID else { return byID }
            let (other, named) = (byUUID[0], byID)
            let otherUUID = profile.services[other.serviceIndex].characteristics[other.characteristicIndex].uuid
            let namedUUID = profile.services[named.serviceIndex].characteristics[named.characteristicIndex].uuid
            throw FixtureError(
                .ambiguousCharacteristic(name), at: node,
                message: "\"\(name)\" is the id of the characteristic \(namedUUID) and the UUID of the characteristic "
                    + "\(otherUUID)",
                fix: "give the characteristic \(namedUUID) an id that is not another characteristic's UUID")
        }
        if byUUID.count == 1 { return byUUID[0] }
        if byUUID.count > 1 {
            throw FixtureError(
                .ambiguousCharacteristic(name), at: node,
                message: "\(byUUID.count) characteristics have the UUID \(name)",
                fix: ids.isEmpty
                    ? "give the characteristics ids in the profile" : "name one by id: " + ids.joined(separator: ", "))
        }
        throw FixtureError(
            .unknownCharacteristic(name), at: node, message: "the peripheral has no characteristic \"\(name)\"",
            fix: ids.isEmpty ? "name a characteristic by its UUID" : FixtureError.choice(for: name, among: ids))
    }
}
