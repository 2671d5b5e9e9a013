import BLECore
import Foundation
import Testing

@Suite("Manager state and write type", .timeLimit(.minutes(10)))
struct ManagerStateTests {
    @Test("Manager states have CBManagerState's raw values")
    func rawValuesMatchCoreBluetooth() {
        #expect(ManagerState.allCases.map(\.rawValue) == [0, 1, 2, 3, 4, 5])
        #expect(
            ManagerState.allCases.map(\.description) == [
                "unknown", "resetting", "unsupported", "unauthorized", "poweredOff", "poweredOn",
            ])
    }

    @Test("States parse from their names and only unauthorized and unsupported are terminal")
    func namesAndTerminalStates() {
        for state in ManagerState.allCases { #expect(ManagerState(name: state.description) == state) }
        #expect(ManagerState(name: "on") == nil)
        #expect(ManagerState.allCases.filter(\.isTerminal) == [.unsupported, .unauthorized])
    }

    @Test("Write types have CBCharacteristicWriteType's raw values")
    func writeTypeRawValues() {
        #expect(WriteType.withResponse.rawValue == 0)
        #expect(WriteType.withoutResponse.rawValue == 1)
        #expect(WriteType.allCases.map(\.description) == ["withResponse", "withoutResponse"])
    }
}

@Suite("Properties and permissions", .timeLimit(.minutes(10)))
struct PropertiesTests {
    @Test("Characteristic property bits equal CoreBluetooth's")
    func propertyBits() {
        let expected: [(CharacteristicProperties, UInt)] = [
            (.broadcast, 0x01), (.read, 0x02), (.writeWithoutResponse, 0x04), (.write, 0x08), (.notify, 0x10),
            (.indicate, 0x20), (.authenticatedSignedWrites, 0x40), (.extendedProperties, 0x80),
            (.notifyEncryptionRequired, 0x100), (.indicateEncryptionRequired, 0x200),
        ]
        for (property, bits) in expected { #expect(property.rawValue == bits) }
        #expect(CharacteristicProperties.named.map(\.property.rawValue) == expected.map(\.1))
    }

    @Test("Attribute permission bits equal CoreBluetooth's")
    func permissionBits() {
        #expect(AttributePermissions.readable.rawValue == 0x01)
        #expect(AttributePermissions.writeable.rawValue == 0x02)
        #expect(AttributePermissions.readEncryptionRequired.rawValue == 0x04)
        #expect(AttributePermissions.writeEncryptionRequired.rawValue == 0x08)
    }

    @Test("Property names round-trip and unknown names are rejected")
    func propertyNames() {
        let properties: CharacteristicProperties = [.read, .notify, .indicateEncryptionRequired]
        #expect(properties.names == ["read", "notify", "indicateEncryptionRequired"])
        #expect(CharacteristicProperties(names: properties.names) == properties)
        #expect(CharacteristicProperties(names: ["read", "Notify"]) == nil)
        #expect(properties.description == "[read, notify, indicateEncryptionRequired]")
        #expect(CharacteristicProperties(names: []) == [])
    }

    @Test("Permission names round-trip and unknown names are rejected")
    func permissionNames() {
        let permissions: AttributePermissions = [.readable, .writeEncryptionRequired]
        #expect(permissions.names == ["readable", "writeEncryptionRequired"])
        #expect(AttributePermissions(names: permissions.names) == permissions)
        #expect(AttributePermissions(names: ["writable"]) == nil)
        #expect(permissions.description == "[readable, writeEncryptionRequired]")
    }

    @Test("Subscription support covers notify and indicate with or without encryption")
    func subscriptionSupport() {
        #expect(CharacteristicProperties.notify.supportsSubscription)
        #expect(CharacteristicProperties.indicate.supportsSubscription)
        #expect(CharacteristicProperties.notifyEncryptionRequired.supportsSubscription)
        #expect(CharacteristicProperties.indicateEncryptionRequired.supportsSubscription)
        #expect(!CharacteristicProperties([.read, .write]).supportsSubscription)
    }

    @Test("Read and write allowance includes the encryption-required permissions")
    func readWriteAllowance() {
        #expect(AttributePermissions.readEncryptionRequired.allowsRead)
        #expect(!AttributePermissions.readEncryptionRequired.allowsWrite)
        #expect(AttributePermissions.writeEncryptionRequired.allowsWrite)
        #expect(!AttributePermissions([]).allowsRead)
    }
}

@Suite("Advertisement data and GATT descriptions", .timeLimit(.minutes(10)))
struct AdvertisementAndGATTTests {
    @Test("A service filter matches advertised and overflow UUIDs, and an empty filter matches all")
    func serviceFilterMatching() {
        let data = AdvertisementData(serviceUUIDs: ["180D"], overflowServiceUUIDs: ["180F"])
        #expect(data.matches(services: []))
        #expect(data.matches(services: ["180D"]))
        #expect(data.matches(services: ["180F"]))
        #expect(data.matches(services: ["1234", "180F"]))
        #expect(!data.matches(services: ["180A"]))
    }

    @Test("Solicitation matches only solicited UUIDs")
    func solicitation() {
        let data = AdvertisementData(serviceUUIDs: ["180D"], solicitedServiceUUIDs: ["1812"])
        #expect(data.solicits(anyOf: ["1812"]))
        #expect(!data.solicits(anyOf: ["180D"]))
        #expect(!data.solicits(anyOf: []))
    }

    @Test("Advertisement data defaults every field to absent")
    func advertisementDefaults() {
        let data = AdvertisementData()
        #expect(data.localName == nil)
        #expect(data.serviceUUIDs.isEmpty && data.overflowServiceUUIDs.isEmpty && data.solicitedServiceUUIDs.isEmpty)
        #expect(data.manufacturerData == nil && data.serviceData.isEmpty)
        #expect(data.txPowerLevel == nil && data.isConnectable == nil)
    }

    @Test("A characteristic with a value is static and one without is dynamic")
    func staticAndDynamicCharacteristics() {
        let fixed = GATTCharacteristic(uuid: "2A38", properties: .read, permissions: .readable, value: Data([1]))
        let dynamic = GATTCharacteristic(uuid: "2A37", properties: .notify, permissions: [])
        #expect(fixed.isStatic)
        #expect(!dynamic.isStatic)
    }

    @Test("A service describes included services, characteristics and descriptors")
    func serviceDescription() {
        let service = GATTService(
            uuid: "180D", includedServices: ["180F"],
            characteristics: [
                GATTCharacteristic(
                    uuid: "2A39", properties: .write, permissions: .writeable,
                    descriptors: [.userDescription("Control Point")])
            ])
        #expect(service.isPrimary)
        #expect(service.includedServices == ["180F"])
        #expect(service.characteristics[0].descriptors[0].uuid == .characteristicUserDescription)
        #expect(service.characteristics[0].descriptors[0].value == Data("Control Point".utf8))
        #expect(GATTService(uuid: "180F", isPrimary: false).isPrimary == false)
    }
}
