import BLECore
import BLEMockKit

/// Builds a peripheral profile from what a capture showed: the discovered database (less
/// the GAP and GATT services, which the stack provides), the values read, the advertisement
/// and the MTU the peripheral offered.
struct ProfileBuilder {
    /// What the scenario builder needs to know about a characteristic of the profile.
    struct Entry: Sendable {
        var id: String
        var properties: CharacteristicProperties
        var isStatic: Bool
        var initialValue: [UInt8]
        var cccdHandle: UInt16?
        /// The service it is in, when a scenario's `discover` step cannot reach it (a
        /// secondary service: the step discovers the characteristics of primary services).
        var secondaryService: BluetoothUUID?
    }

    static let gapService = BluetoothUUID(UInt16(0x1800))
    static let gattService = BluetoothUUID(UInt16(0x1801))
    static let deviceName = BluetoothUUID(UInt16(0x2A00))
    static let staticProperties: CharacteristicProperties = [.broadcast, .read, .extendedProperties]
    /// The TX power levels an advertisement can carry (Core Specification Supplement, Part A,
    /// 1.5), which the profile format accepts; a byte of 0x80 (-128) is outside it.
    static let txPowerLevelRange = -127...127

    let gatt: CapturedGATT
    let operations: [TimedOperation]
    /// The profile, as JSON.
    private(set) var profile: JSONValue = .null
    /// The profile's characteristics by value handle.
    var entries: [UInt16: Entry] = [:]
    /// Handles of the services left out (GAP, GATT), first to last.
    private(set) var omittedRanges: [ClosedRange<UInt16>] = []
    /// The `discovered` a `discover` step of the profile reports.
    private(set) var discovered: JSONValue = .null
    var warnings: [CaptureWarning] = []
    /// What the conversation was read from, as warnings name it: "capture" or "recording".
    let source: String

    /// - Parameter source: what the conversation was read from, as warnings name it
    ///   ("capture", "recording").
    init(conversation: ATTConversation, advertising: AdvertisingLog?, source: String = "capture") {
        self.source = source
        gatt = conversation.gatt
        operations = conversation.operations
        var members: [JSONValue.Member] = []
        if let name = deviceName ?? advertising?.advertisement.localName {
            members.append((key: "name", value: .string(name)))
        }
        if let advertising {
            var advertisement = advertising.advertisement
            if let power = advertisement.txPowerLevel, !Self.txPowerLevelRange.contains(power) {
                warnings.append(
                    CaptureWarning(
                        .profileAdjusted(
                            "the advertised TX power level, \(power) dBm, is outside the -127…127 dBm the "
                                + "specification allows; it was left out")))
                advertisement.txPowerLevel = nil
            }
            members.append((key: "advertisement", value: Self.advertisement(advertisement)))
            for problem in advertising.problems {
                warnings.append(CaptureWarning(.profileAdjusted("the advertising data was cut short: \(problem)")))
            }
            if let rssi = advertising.rssi, PeripheralProfile.rssiRange.contains(rssi) {
                members.append((key: "rssi", value: .int(rssi)))
            }
        }
        if let server = conversation.serverMTU {
            let mtu = Self.clampMTU(Int(server), side: "peripheral", warnings: &warnings)
            members.append((key: "preferredMTU", value: .int(mtu)))
        }
        let services = orderedServices()
        var serviceValues: [JSONValue] = []
        var discoveredServices: [JSONValue] = []
        for (service, includes) in services {
            let (value, found) = describe(service, includes: includes)
            serviceValues.append(value)
            if service.isPrimary { discoveredServices.append(found) }
        }
        members.append((key: "services", value: .array(serviceValues)))
        profile = .object(members)
        discovered = .object(["services": .array(discoveredServices)])
    }

    /// Clamps an MTU to what the kit accepts (23…517), warning when that changed it.
    static func clampMTU(_ mtu: Int, side: String, warnings: inout [CaptureWarning]) -> Int {
        let range = PeripheralProfile.preferredMTURange
        let clamped = min(max(mtu, range.lowerBound), range.upperBound)
        if clamped != mtu {
            warnings.append(
                CaptureWarning(
                    .profileAdjusted("the \(side)'s MTU of \(mtu) is outside 23…517; it was written as \(clamped)")))
        }
        return clamped
    }

    /// The GAP Device Name, if it was read.
    private var deviceName: String? {
        for characteristic in gatt.characteristics.values where characteristic.uuid == Self.deviceName {
            if let value = gatt.values[characteristic.valueHandle] { return String(decoding: value, as: UTF8.self) }
        }
        return nil
    }

    static func advertisement(_ advertisement: AdvertisementData) -> JSONValue {
        PeripheralProfile.advertisementValue(advertisement)
    }

    /// The services to write, each with the UUIDs of the services it includes, ordered so an
    /// included service comes before the services that include it (as the format requires).
    private mutating func orderedServices() -> [(CapturedGATT.Service, [BluetoothUUID])] {
        var kept: [CapturedGATT.Service] = []
        for service in gatt.sortedServices {
            if service.uuid == Self.gapService || service.uuid == Self.gattService {
                omittedRanges.append(service.handle...max(service.handle, service.endHandle))
            } else {
                kept.append(service)
            }
        }
        if !omittedRanges.isEmpty {
            warnings.append(
                CaptureWarning(
                    .profileAdjusted(
                        "the GAP (1800) and GATT (1801) services are left out: the simulated stack provides them"
                            + (deviceName == nil ? "" : " (the device name read from it became the profile's name)"))))
        }
        var ordered: [(CapturedGATT.Service, [BluetoothUUID])] = []
        var placed: Set<UInt16> = []
        var visiting: Set<UInt16> = []
        func place(_ service: CapturedGATT.Service) {
            guard !placed.contains(service.handle), visiting.insert(service.handle).inserted else { return }
            var included: [BluetoothUUID] = []
            for include in gatt.includes(of: service) {
                guard let target = kept.first(where: { $0.handle == include.serviceHandle }) else {
                    warnings.append(
                        CaptureWarning(
                            .profileAdjusted(
                                "service \(service.uuid) includes a service at handle 0x\(hex(include.serviceHandle)) "
                                    + "the \(source) did not describe; the include was left out")))
                    continue
                }
                guard !visiting.contains(target.handle) else {
                    warnings.append(
                        CaptureWarning(
                            .profileAdjusted(
                                "service \(service.uuid) and service \(target.uuid) include each other; "
                                    + "the include of \(target.uuid) was left out")))
                    continue
                }
                place(target)
                included.append(target.uuid)
            }
            visiting.remove(service.handle)
            placed.insert(service.handle)
            ordered.append((service, included))
        }
        for service in kept { place(service) }
        return ordered
    }

    /// A service as profile JSON, and as a `discover` step reports it.
    private mutating func describe(_ service: CapturedGATT.Service, includes: [BluetoothUUID]) -> (JSONValue, JSONValue)
    {
        var characteristics: [JSONValue] = []
        var found: [JSONValue] = []
        for characteristic in gatt.characteristics(of: service) {
            guard let (value, report) = describe(characteristic) else { continue }
            if !service.isPrimary { entries[characteristic.valueHandle]?.secondaryService = service.uuid }
            characteristics.append(value)
            found.append(report)
        }
        var members: [JSONValue.Member] = [
            (key: "uuid", value: .string(service.uuid.description)),
            (key: "primary", value: .bool(service.isPrimary)),
        ]
        if !includes.isEmpty {
            members.append((key: "includedServices", value: .array(includes.map { .string($0.description) })))
        }
        members += [
            (key: "handle", value: .int(Int(service.handle))),
            (key: "endHandle", value: .int(Int(service.endHandle))),
            (key: "characteristics", value: .array(characteristics)),
        ]
        var report: [JSONValue.Member] = [
            (key: "uuid", value: .string(service.uuid.description)),
            (key: "primary", value: .bool(service.isPrimary)),
        ]
        if !includes.isEmpty {
            report.append((key: "includedServices", value: .array(includes.map { .string($0.description) })))
        }
        report.append((key: "characteristics", value: .array(found)))
        return (.object(members), .object(report))
    }
}
