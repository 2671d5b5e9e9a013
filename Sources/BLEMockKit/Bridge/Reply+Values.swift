import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The typed values of replies, for the operation that asked for each. A reply of another
/// kind is a bug in the kit, reported loudly rather than turned into an empty value.
extension Reply {
    var data: Data {
        guard case .value(let data) = self else { Self.mismatch(self, "bytes") }
        return data
    }

    var services: [RemoteService] {
        guard case .services(let services) = self else { Self.mismatch(self, "services") }
        return services
    }

    var characteristics: [RemoteCharacteristic] {
        guard case .characteristics(let characteristics) = self else { Self.mismatch(self, "characteristics") }
        return characteristics
    }

    var descriptors: [RemoteDescriptor] {
        guard case .descriptors(let descriptors) = self else { Self.mismatch(self, "descriptors") }
        return descriptors
    }

    var rssi: Int {
        guard case .rssi(let rssi) = self else { Self.mismatch(self, "an RSSI") }
        return rssi
    }

    private static func mismatch(_ reply: Reply, _ expected: String) -> Never {
        preconditionFailure("BLEMockKit: an operation expecting \(expected) got \(reply)")
    }
}
