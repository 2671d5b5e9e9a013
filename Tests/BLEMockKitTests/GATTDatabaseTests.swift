import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("GATT database: handles and validation", .timeLimit(.minutes(10)))
struct GATTDatabaseLayoutTests {
    static let peripheral = UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))

    static var heartRate: GATTService {
        GATTService(
            uuid: "180D",
            characteristics: [
                GATTCharacteristic(uuid: "2A37", properties: .notify, permissions: []),
                GATTCharacteristic(uuid: "2A38", properties: .read, permissions: .readable, value: Data([1])),
                GATTCharacteristic(
                    uuid: "2A39", properties: .write, permissions: .writeable,
                    descriptors: [.userDescription("Control Point")]),
            ])
    }

    @Test("Handles are assigned in declaration order with a CCCD for notifying characteristics")
    func handleLayout() throws {
        var database = GATTDatabase()
        let service = try database.add(Self.heartRate)
        #expect(service.handle == 1)
        // 1 service, 2A37: decl 2, value 3, CCCD 4; 2A38: decl 5, value 6; 2A39: decl 7, value 8, 2901 at 9.
        #expect(service.characteristics.map(\.handle) == [3, 6, 8])
        #expect(service.endHandle == 9)
        let records = database.services[0].characteristics
        #expect(records.map(\.declarationHandle) == [2, 5, 7])
        #expect(records.map(\.cccdHandle) == [4, nil, nil])
        #expect(records[2].descriptors.map(\.handle) == [9])
        #expect(service.characteristics.allSatisfy { $0.serviceHandle == 1 && $0.serviceUUID == "180D" })
    }

    @Test("A second service starts after the first and removed handles are not reused")
    func handlesAreNotReused() throws {
        var database = GATTDatabase()
        let first = try database.add(Self.heartRate)
        let battery = try database.add(
            GATTService(uuid: "180F", characteristics: [.init(uuid: "2A19", properties: .read, permissions: .readable)])
        )
        #expect(battery.handle == first.endHandle + 1)
        try database.remove(first)
        let again = try database.add(Self.heartRate)
        #expect(again.handle == battery.endHandle + 1)
        #expect(database.localServices.map(\.uuid) == ["180F", "180D"])
    }

    @Test("Two services with the same characteristic UUID get distinct handles")
    func duplicateUUIDsStayDistinct() throws {
        var database = GATTDatabase()
        let a = try database.add(Self.heartRate)
        let b = try database.add(Self.heartRate)
        #expect(a.characteristic("2A38")!.handle != b.characteristic("2A38")!.handle)
        let remote = database.characteristics(of: b.handle, matching: ["2A38"], peripheral: Self.peripheral)!
        #expect(remote.count == 1)
        #expect(remote[0].service.handle == b.handle)
    }

    @Test("Included services resolve to published services and unknown ones are rejected")
    func includedServices() throws {
        var database = GATTDatabase()
        let secondary = try database.add(GATTService(uuid: "180F", isPrimary: false))
        let including = try database.add(GATTService(uuid: "180D", includedServices: ["180F"]))
        #expect(including.includedServiceHandles == [secondary.handle])
        // Service declaration at 2, include declaration at 3: the service ends at 3.
        #expect(including.endHandle == including.handle + 1)
        let found = database.includedServices(of: including.handle, matching: nil, peripheral: Self.peripheral)
        #expect(found?.map(\.uuid) == ["180F"])
        #expect(found?.first?.isPrimary == false)
        #expect(database.includedServices(of: including.handle, matching: ["1234"], peripheral: Self.peripheral) == [])
        #expect(database.includedServices(of: 99, matching: nil, peripheral: Self.peripheral) == nil)
        #expect(throws: APIMisuseError.invalidService("1812", reason: .includedServiceNotPublished("1234"))) {
            try database.add(GATTService(uuid: "1812", includedServices: ["1234"]))
        }
    }

    @Test("Reserved GAP and GATT services are refused with uuidNotAllowed", arguments: ["1800", "1801"])
    func reservedServicesAreRefused(uuid: String) throws {
        var database = GATTDatabase()
        #expect(throws: CoreBluetoothError(.uuidNotAllowed)) {
            try database.add(GATTService(uuid: try BluetoothUUID(string: uuid)))
        }
        #expect(database.services.isEmpty)
    }

    @Test(
        "A static characteristic must be read-only",
        arguments: [
            CharacteristicProperties.write, .writeWithoutResponse, .notify, .indicate, .authenticatedSignedWrites,
        ])
    func staticCharacteristicMustBeReadOnly(property: CharacteristicProperties) {
        var database = GATTDatabase()
        let service = GATTService(
            uuid: "180D",
            characteristics: [
                .init(uuid: "2A38", properties: [.read, property], permissions: .readable, value: Data([1]))
            ])
        #expect(throws: APIMisuseError.invalidService("180D", reason: .staticValueNotReadOnly("2A38"))) {
            try database.add(service)
        }
        #expect(database.services.isEmpty)
    }

    @Test("Values of 512 bytes are accepted and 513 rejected")
    func valueLengthLimit() throws {
        var database = GATTDatabase()
        let ok = GATTService(
            uuid: "180D",
            characteristics: [.init(uuid: "2A38", properties: .read, permissions: .readable, value: Data(count: 512))])
        _ = try database.add(ok)
        let tooLong = GATTService(
            uuid: "180E",
            characteristics: [.init(uuid: "2A38", properties: .read, permissions: .readable, value: Data(count: 513))])
        #expect(throws: APIMisuseError.invalidService("180E", reason: .valueTooLong("2A38", length: 513))) {
            try database.add(tooLong)
        }
        let longDescriptor = GATTService(
            uuid: "180E",
            characteristics: [
                .init(
                    uuid: "2A38", properties: .read, permissions: .readable,
                    descriptors: [.init(uuid: "2901", value: Data(count: 600))])
            ])
        #expect(throws: APIMisuseError.invalidService("180E", reason: .valueTooLong("2901", length: 600))) {
            try database.add(longDescriptor)
        }
    }

    @Test("The stack-managed CCCD cannot be added by hand")
    func cccdIsManaged() {
        var database = GATTDatabase()
        let service = GATTService(
            uuid: "180D",
            characteristics: [
                .init(
                    uuid: "2A37", properties: .notify, permissions: [],
                    descriptors: [.init(uuid: "2902", value: Data([0, 0]))])
            ])
        #expect(throws: APIMisuseError.invalidService("180D", reason: .managedDescriptor("2A37"))) {
            try database.add(service)
        }
    }

    @Test("The database runs out of handles with a typed error")
    func outOfHandles() throws {
        var database = GATTDatabase()
        let characteristics = (0..<300).map {
            GATTCharacteristic(uuid: BluetoothUUID(UInt16(0x2000 + $0)), properties: .read, permissions: .readable)
        }
        // Each service takes 601 handles; 109 fit in 65,535.
        for index in 0..<109 {
            _ = try database.add(
                GATTService(uuid: BluetoothUUID(UInt16(0x3000 + index)), characteristics: characteristics))
        }
        #expect(throws: APIMisuseError.invalidService("4000", reason: .outOfHandles)) {
            try database.add(GATTService(uuid: "4000", characteristics: characteristics))
        }
        // A small service still fits in the remaining handles.
        let small = try database.add(GATTService(uuid: "4001"))
        #expect(small.handle == 109 * 601 + 1)
    }

    @Test("Removing an unknown service is an error and removing all empties the database")
    func removal() throws {
        var database = GATTDatabase()
        let service = try database.add(Self.heartRate)
        var stale = service
        stale.handle = 42
        #expect(throws: APIMisuseError.serviceNotPublished("180D", handle: 42)) { try database.remove(stale) }
        #expect(database.removeAll().count == 1)
        #expect(database.localServices.isEmpty)
        #expect(throws: APIMisuseError.serviceNotPublished("180D", handle: 1)) { try database.remove(service) }
    }
}

@Suite("GATT database: discovery", .timeLimit(.minutes(10)))
struct GATTDatabaseDiscoveryTests {
    @Test("Primary services are discovered all or by UUID, secondary ones never")
    func primaryServiceDiscovery() throws {
        var database = GATTDatabase()
        _ = try database.add(GATTService(uuid: "180F", isPrimary: false))
        _ = try database.add(GATTDatabaseLayoutTests.heartRate)
        _ = try database.add(GATTService(uuid: "180A"))
        let peripheral = GATTDatabaseLayoutTests.peripheral
        #expect(database.primaryServices(matching: nil, peripheral: peripheral).map(\.uuid) == ["180D", "180A"])
        #expect(database.primaryServices(matching: ["180A", "180F"], peripheral: peripheral).map(\.uuid) == ["180A"])
        #expect(database.primaryServices(matching: [], peripheral: peripheral).isEmpty)
    }

    @Test("Characteristics and descriptors are discovered with handles, including the CCCD")
    func characteristicAndDescriptorDiscovery() throws {
        var database = GATTDatabase()
        let service = try database.add(GATTDatabaseLayoutTests.heartRate)
        let peripheral = GATTDatabaseLayoutTests.peripheral
        let all = try #require(database.characteristics(of: service.handle, matching: nil, peripheral: peripheral))
        #expect(all.map(\.uuid) == ["2A37", "2A38", "2A39"])
        #expect(all.map(\.properties) == [.notify, .read, .write])
        #expect(database.characteristics(of: service.handle, matching: ["2A39"], peripheral: peripheral)?.count == 1)
        #expect(database.characteristics(of: 77, matching: nil, peripheral: peripheral) == nil)
        #expect(database.descriptors(of: all[0])?.map(\.uuid) == [.clientCharacteristicConfiguration])
        #expect(database.descriptors(of: all[1])?.isEmpty == true)
        #expect(database.descriptors(of: all[2])?.map(\.handle) == [9])
        #expect(all.allSatisfy(database.isCurrent))
    }

    /// A discovery of primary services by UUID is a Find By Type Value procedure per UUID: its
    /// responses list handle ranges of 4 bytes, as many as fit in ATT_MTU − 1 bytes (5 at
    /// ATT_MTU 23, 61 at 247), and it ends with a request answered "attribute not found"; as
    /// bumble's client and server count it.
    @Test func aDiscoveryOfServicesByUUIDIsAFindByTypeValueProcedurePerUUID() throws {
        var database = GATTDatabase()
        for _ in 0..<6 { _ = try database.add(GATTService(uuid: "180D")) }
        _ = try database.add(GATTService(uuid: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
        #expect(database.primaryServiceExchanges(matching: ["180D"], mtu: 23) == 3)
        #expect(database.primaryServiceExchanges(matching: ["180D"], mtu: 247) == 2)
        #expect(database.primaryServiceExchanges(matching: ["6E400001-B5A3-F393-E0A9-E50E24DCCA9E"], mtu: 23) == 2)
        #expect(
            database.primaryServiceExchanges(matching: ["180D", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"], mtu: 23) == 5)
        // All of them: Read By Group Type responses of one UUID size each (three 16-bit entries
        // fit in 21 bytes), then "attribute not found".
        #expect(database.primaryServiceExchanges(matching: nil, mtu: 23) == 4)
    }

    /// The exchanges each discovery takes, as a server packs its responses (entries of one
    /// size each, as many as fit in ATT_MTU − 2 bytes) and a client ends the procedure; the
    /// figures match Google's bumble, as client and server, for the same databases.
    @Test("A discovery's exchanges are counted as the server packs its responses and the client ends it")
    func discoveryExchangesAreCounted() throws {
        var database = GATTDatabase()
        let battery = try database.add(GATTService(uuid: "180F", isPrimary: false))
        let heartRate = try database.add(GATTDatabaseLayoutTests.heartRate)
        let custom = try database.add(
            GATTService(
                uuid: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E",
                characteristics: [
                    GATTCharacteristic(uuid: "2A19", properties: .read, permissions: .readable),
                    GATTCharacteristic(
                        uuid: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E", properties: .indicate, permissions: [],
                        descriptors: [GATTDescriptor(uuid: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E", value: Data([1]))]),
                ]))
        let includer = try database.add(
            GATTService(
                uuid: "1812", includedServices: ["180F", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"],
                characteristics: [GATTCharacteristic(uuid: "2A4D", properties: .read, permissions: .readable)]))
        let onlyIncludes = try database.add(GATTService(uuid: "1813", includedServices: ["180F"]))
        let empty = try database.add(GATTService(uuid: "1814"))
        // Primary services: 180D, the 128-bit one, 1812, 1813, 1814 (180F is secondary): one
        // response of a 16-bit entry, one of the 128-bit one (another size), one of the three
        // 16-bit ones (18 of 21 bytes), then "attribute not found".
        #expect(database.primaryServiceExchanges(matching: nil, mtu: 23) == 4)
        // By UUID: a Find By Type Value response and "attribute not found" for each UUID found,
        // "attribute not found" alone for one not found (180F is secondary), each UUID once.
        #expect(database.primaryServiceExchanges(matching: ["180D"], mtu: 23) == 2)
        #expect(database.primaryServiceExchanges(matching: [], mtu: 23) == 0)
        #expect(database.primaryServiceExchanges(matching: ["180D", "1812", "1813"], mtu: 23) == 6)
        #expect(database.primaryServiceExchanges(matching: ["180D", "180F", "1800", "180D"], mtu: 23) == 4)
        // Three 16-bit declarations fill a response at ATT_MTU 23 (21 bytes); a 128-bit one
        // after a 16-bit one starts its own.
        #expect(database.characteristicExchanges(of: heartRate.handle, mtu: 23) == 2)
        #expect(database.characteristicExchanges(of: custom.handle, mtu: 23) == 3)
        // A service of its declaration alone: one request, answered "not found".
        #expect(database.characteristicExchanges(of: empty.handle, mtu: 23) == 1)
        #expect(database.characteristicExchanges(of: 999, mtu: 23) == nil)
        // Includes: none (one request, answered "not found"); a 16-bit and a 128-bit one
        // (two responses, a read of the 128-bit UUID, the last request); a service that only
        // includes ends at its include, so the client stops there.
        #expect(database.includedServiceExchanges(of: heartRate.handle, mtu: 23) == 1)
        #expect(database.includedServiceExchanges(of: includer.handle, mtu: 23) == 4)
        #expect(database.includedServiceExchanges(of: onlyIncludes.handle, mtu: 23) == 1)
        #expect(database.includedServiceExchanges(of: empty.handle, mtu: 23) == 1)
        #expect(database.includedServiceExchanges(of: battery.handle, mtu: 23) == 1)
        // Descriptors: the CCCD and a user description, or none; no last request.
        let peripheral = GATTDatabaseLayoutTests.peripheral
        let characteristics = try #require(
            database.characteristics(of: heartRate.handle, matching: nil, peripheral: peripheral))
        #expect(characteristics.map { database.descriptorExchanges(of: $0, mtu: 23) } == [1, 0, 1])
        let indicating = try #require(
            database.characteristics(of: custom.handle, matching: nil, peripheral: peripheral))
        // The CCCD (16-bit) and a 128-bit descriptor: two responses.
        #expect(indicating.map { database.descriptorExchanges(of: $0, mtu: 23) } == [0, 2])
        var missing = characteristics[0]
        missing.handle = 200
        #expect(database.descriptorExchanges(of: missing, mtu: 23) == nil)
    }

    /// ATT widens a 32-bit UUID to 128 bits wherever a PDU carries it (Vol 3, Part F, 3.2.1), so
    /// a database of 32-bit UUIDs costs what the same database of vendor 128-bit UUIDs costs
    /// (bumble, as client and server, counts 14 PDUs for the first three figures' discovery).
    @Test("A 32-bit UUID is counted at the 128 bits ATT carries it in")
    func thirtyTwoBitUUIDsAreCountedAt128Bits() throws {
        func database(_ uuid: (String) throws -> BluetoothUUID) throws -> (GATTDatabase, LocalService, LocalService) {
            var database = GATTDatabase()
            let service = try database.add(
                GATTService(
                    uuid: try uuid("A000"),
                    characteristics: try ["A100", "A101"].map {
                        GATTCharacteristic(uuid: try uuid($0), properties: .read, permissions: .readable)
                    } + [
                        GATTCharacteristic(
                            uuid: try uuid("A102"), properties: .notify, permissions: [],
                            descriptors: [GATTDescriptor(uuid: try uuid("A200"), value: Data([1]))])
                    ]))
            let includer = try database.add(
                GATTService(
                    uuid: "1812", includedServices: [try uuid("A000")],
                    characteristics: [GATTCharacteristic(uuid: "2A4D", properties: .read, permissions: .readable)]))
            return (database, service, includer)
        }
        let thirtyTwo = try database { try BluetoothUUID(string: "F000\($0)") }
        let vendor = try database { try BluetoothUUID(string: "F000\($0)-0451-4000-B000-000000000000") }
        #expect(try BluetoothUUID(string: "F000A000").width == .bits32)
        for (database, service, includer) in [thirtyTwo, vendor] {
            // 1812 (16-bit), then the other service (20 bytes): two responses and the last request.
            #expect(database.primaryServiceExchanges(matching: nil, mtu: 23) == 3)
            // One 21-byte declaration a response at ATT_MTU 23, and the last request.
            #expect(database.characteristicExchanges(of: service.handle, mtu: 23) == 4)
            // The include's entry without the UUID, a Read of it, and the last request.
            #expect(database.includedServiceExchanges(of: includer.handle, mtu: 23) == 3)
            let characteristics = try #require(
                database.characteristics(
                    of: service.handle, matching: nil, peripheral: GATTDatabaseLayoutTests.peripheral))
            // The CCCD (4 bytes) and the descriptor (18): two responses.
            #expect(characteristics.map { database.descriptorExchanges(of: $0, mtu: 23) } == [0, 0, 2])
        }
    }

    /// A declaration's properties field is one byte (Vol 3, Part G, 3.3.1.1): a central sees
    /// CoreBluetooth's encryption-required properties as the notify and indicate bits.
    @Test("A central sees the properties a declaration carries")
    func aCentralSeesTheDeclaredProperties() throws {
        var database = GATTDatabase()
        let service = try database.add(
            GATTService(
                uuid: "FEE0",
                characteristics: [
                    GATTCharacteristic(
                        uuid: "FEE5", properties: [.read, .indicateEncryptionRequired], permissions: .readable),
                    GATTCharacteristic(
                        uuid: "FEE6", properties: [.notify, .notifyEncryptionRequired, .indicateEncryptionRequired],
                        permissions: []),
                    GATTCharacteristic(uuid: "FEE7", properties: [.read, .extendedProperties], permissions: .readable),
                ]))
        let seen = try #require(
            database.characteristics(of: service.handle, matching: nil, peripheral: GATTDatabaseLayoutTests.peripheral))
        #expect(
            seen.map(\.properties) == [[.read, .indicate], [.notify, .indicate], [.read, .extendedProperties]])
    }

    @Test("A response holds as many entries of one size as fit in ATT_MTU - 2 bytes")
    func responsesPackEntriesOfOneSize() {
        func count(_ sizes: [Int], mtu: Int) -> Int {
            var responses = GATTProcedure.Responses(mtu: mtu)
            for size in sizes { responses.add(entryOf: size) }
            return responses.count
        }
        #expect(count([], mtu: 23) == 0)
        #expect(count([6, 6, 6], mtu: 23) == 1)
        #expect(count([6, 6, 6, 6], mtu: 23) == 2)
        #expect(count([6, 20, 6], mtu: 23) == 3)
        #expect(count([20, 20], mtu: 23) == 2)
        #expect(count([20, 20], mtu: 42) == 1)
        #expect(count(Array(repeating: 7, count: 30), mtu: 185) == 2)
    }

    @Test("A reference stops being current when its service is removed or replaced")
    func staleReferences() throws {
        var database = GATTDatabase()
        let service = try database.add(GATTDatabaseLayoutTests.heartRate)
        let peripheral = GATTDatabaseLayoutTests.peripheral
        let characteristic = try #require(
            database.characteristics(of: service.handle, matching: nil, peripheral: peripheral)?.first)
        try database.remove(service)
        #expect(!database.isCurrent(characteristic))
        #expect(database.descriptors(of: characteristic) == nil)
    }
}

@Suite("GATT database: access rules", .timeLimit(.minutes(10)))
struct GATTDatabaseAccessTests {
    static func database() throws -> (GATTDatabase, LocalService) {
        var database = GATTDatabase()
        let service = try database.add(
            GATTService(
                uuid: "AAAA",
                characteristics: [
                    .init(uuid: "0001", properties: .read, permissions: .readable, value: Data([1, 2, 3, 4])),  // 3
                    .init(
                        uuid: "0002", properties: [.read, .write, .writeWithoutResponse],
                        permissions: [.readable, .writeable]),  // 5
                    .init(uuid: "0003", properties: .notify, permissions: []),  // 7 (+CCCD 8)
                    // value handle 10
                    .init(uuid: "0004", properties: .read, permissions: .readEncryptionRequired, value: Data([9])),
                    .init(uuid: "0005", properties: .write, permissions: .writeEncryptionRequired),  // 12
                    .init(uuid: "0006", properties: [.read, .write], permissions: []),  // 14
                    .init(uuid: "0007", properties: [.notify, .indicate], permissions: []),  // 16 (+17)
                    .init(uuid: "0008", properties: .indicate, permissions: []),  // 19 (+20)
                    .init(uuid: "0009", properties: .notifyEncryptionRequired, permissions: []),  // 22 (+23)
                    .init(
                        uuid: "000A", properties: .read, permissions: .readable,
                        descriptors: [.userDescription("abc")]),  // 25, 2901 at 26
                ]))
        return (database, service)
    }

    static let plain = LinkSecurity()
    static let encrypted = LinkSecurity(isEncrypted: true)
    static let bondedButPlain = LinkSecurity(serverHasKeys: true)

    @Test("Static values are answered by the stack from the offset; offset equal to length is empty")
    func staticReads() throws {
        let (database, _) = try Self.database()
        #expect(try database.planRead(handle: 3, offset: 0, security: Self.plain) == .answered(Data([1, 2, 3, 4])))
        #expect(try database.planRead(handle: 3, offset: 2, security: Self.plain) == .answered(Data([3, 4])))
        #expect(try database.planRead(handle: 3, offset: 4, security: Self.plain) == .answered(Data()))
        #expect(throws: ATTError(.invalidOffset)) { try database.planRead(handle: 3, offset: 5, security: Self.plain) }
        #expect(throws: ATTError(.invalidOffset)) { try database.planRead(handle: 3, offset: -1, security: Self.plain) }
    }

    @Test("Dynamic values are asked of the peripheral")
    func dynamicReads() throws {
        let (database, service) = try Self.database()
        #expect(
            try database.planRead(handle: 5, offset: 7, security: Self.plain)
                == .askPeripheral(service.characteristics[1]))
    }

    @Test("Reads fail with the right ATT error")
    func readErrors() throws {
        let (database, _) = try Self.database()
        #expect(throws: ATTError(.invalidHandle)) {
            try database.planRead(handle: 999, offset: 0, security: Self.plain)
        }
        #expect(throws: ATTError(.invalidHandle)) { try database.planRead(handle: 2, offset: 0, security: Self.plain) }
        #expect(throws: ATTError(.readNotPermitted)) {
            try database.planRead(handle: 7, offset: 0, security: Self.plain)
        }
        #expect(throws: ATTError(.readNotPermitted)) {
            try database.planRead(handle: 14, offset: 0, security: Self.plain)
        }
        #expect(throws: ATTError(.insufficientAuthentication)) {
            try database.planRead(handle: 10, offset: 0, security: Self.plain)
        }
        #expect(throws: ATTError(.insufficientEncryption)) {
            try database.planRead(handle: 10, offset: 0, security: Self.bondedButPlain)
        }
        #expect(try database.planRead(handle: 10, offset: 0, security: Self.encrypted) == .answered(Data([9])))
    }

    @Test("Writes need the property of their type and a write permission")
    func writeRules() throws {
        let (database, service) = try Self.database()
        #expect(
            try database.planWrite(handle: 5, length: 1, type: .withResponse, security: Self.plain)
                == service.characteristics[1])
        #expect(
            try database.planWrite(handle: 5, length: 1, type: .withoutResponse, security: Self.plain)
                == service.characteristics[1])
        #expect(throws: ATTError(.writeNotPermitted)) {
            try database.planWrite(handle: 3, length: 1, type: .withResponse, security: Self.plain)
        }
        #expect(throws: ATTError(.writeNotPermitted)) {
            try database.planWrite(handle: 12, length: 1, type: .withoutResponse, security: Self.encrypted)
        }
        #expect(throws: ATTError(.writeNotPermitted)) {
            try database.planWrite(handle: 14, length: 1, type: .withResponse, security: Self.plain)
        }
        #expect(throws: ATTError(.invalidHandle)) {
            try database.planWrite(handle: 0, length: 1, type: .withResponse, security: Self.plain)
        }
        #expect(throws: ATTError(.insufficientAuthentication)) {
            try database.planWrite(handle: 12, length: 1, type: .withResponse, security: Self.plain)
        }
        #expect(throws: ATTError(.insufficientEncryption)) {
            try database.planWrite(handle: 12, length: 1, type: .withResponse, security: Self.bondedButPlain)
        }
        #expect(
            try database.planWrite(handle: 12, length: 1, type: .withResponse, security: Self.encrypted).uuid == "0005")
    }

    @Test("A write of 512 bytes is accepted and 513 fails with invalid attribute value length")
    func writeLengthLimit() throws {
        let (database, _) = try Self.database()
        _ = try database.planWrite(handle: 5, length: 512, type: .withResponse, security: Self.plain)
        #expect(throws: ATTError(.invalidAttributeValueLength)) {
            try database.planWrite(handle: 5, length: 513, type: .withResponse, security: Self.plain)
        }
    }

    @Test("Subscribing picks notifications over indications and fails with the right ATT error")
    func subscribeRules() throws {
        let (database, _) = try Self.database()
        #expect(try database.planSubscribe(handle: 7, security: Self.plain) == .notify)
        #expect(try database.planSubscribe(handle: 16, security: Self.plain) == .notify)
        #expect(try database.planSubscribe(handle: 19, security: Self.plain) == .indicate)
        #expect(throws: ATTError(.requestNotSupported)) { try database.planSubscribe(handle: 3, security: Self.plain) }
        #expect(throws: ATTError(.invalidHandle)) { try database.planSubscribe(handle: 8, security: Self.plain) }
        #expect(throws: ATTError(.insufficientAuthentication)) {
            try database.planSubscribe(handle: 22, security: Self.plain)
        }
        #expect(throws: ATTError(.insufficientEncryption)) {
            try database.planSubscribe(handle: 22, security: Self.bondedButPlain)
        }
        #expect(try database.planSubscribe(handle: 22, security: Self.encrypted) == .notify)
    }

    /// A characteristic published with `notify` and `notifyEncryptionRequired` (as many are: the
    /// central sees `notify` either way) has one CCCD, which needs an encrypted link to write:
    /// subscribing on a plain link fails as for `notifyEncryptionRequired` alone. The plain
    /// property used to win, and anyone could subscribe.
    @Test func aCharacteristicWithAPlainAndATrustedNotifyNeedsEncryptionToSubscribe() throws {
        var database = GATTDatabase()
        let service = try database.add(
            GATTService(
                uuid: "FEE0",
                characteristics: [
                    GATTCharacteristic(
                        uuid: "FEE1", properties: [.notify, .notifyEncryptionRequired], permissions: []),
                    GATTCharacteristic(
                        uuid: "FEE2", properties: [.indicate, .indicateEncryptionRequired], permissions: []),
                    GATTCharacteristic(uuid: "FEE3", properties: [.notify, .indicate], permissions: []),
                ]))
        let handles = service.characteristics.map(\.handle)
        for handle in handles.prefix(2) {
            #expect(throws: ATTError(.insufficientAuthentication)) {
                try database.planSubscribe(handle: handle, security: Self.plain)
            }
            #expect(throws: ATTError(.insufficientEncryption)) {
                try database.planSubscribe(handle: handle, security: Self.bondedButPlain)
            }
        }
        #expect(try database.planSubscribe(handle: handles[0], security: Self.encrypted) == .notify)
        #expect(try database.planSubscribe(handle: handles[1], security: Self.encrypted) == .indicate)
        #expect(try database.planSubscribe(handle: handles[2], security: Self.plain) == .notify)
    }

    @Test("Descriptors are read by the stack, the CCCD per central, and never written directly")
    func descriptorRules() throws {
        let (database, service) = try Self.database()
        #expect(try database.planDescriptorRead(handle: 26, offset: 0) == .answered(Data("abc".utf8)))
        #expect(try database.planDescriptorRead(handle: 26, offset: 3) == .answered(Data()))
        #expect(throws: ATTError(.invalidOffset)) { try database.planDescriptorRead(handle: 26, offset: 4) }
        #expect(
            try database.planDescriptorRead(handle: 8, offset: 0) == .clientConfiguration(service.characteristics[2]))
        #expect(throws: ATTError(.invalidHandle)) { try database.planDescriptorRead(handle: 25, offset: 0) }
        #expect(throws: ATTError(.writeNotPermitted)) { try database.planDescriptorWrite(handle: 26) }
        #expect(throws: ATTError(.invalidHandle)) { try database.planDescriptorWrite(handle: 500) }
    }

    @Test("Setting a dynamic value changes what the database holds")
    func settingValues() throws {
        var (database, _) = try Self.database()
        database.setValue(Data([7, 7]), at: 5)
        #expect(database.characteristic(at: 5)?.value == Data([7, 7]))
        database.setValue(Data([1]), at: 999)  // unknown handles are ignored
        #expect(database.characteristic(at: 999) == nil)
    }
}
