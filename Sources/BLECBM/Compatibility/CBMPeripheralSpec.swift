import BLECore
import BLEMockKit
import Foundation

/// A simulated peripheral, declared once (CoreBluetoothMock's `CBMPeripheralSpec`): what it
/// advertises, its services, and the delegate answering its requests.
///
/// Unlike CoreBluetoothMock, which keeps one simulation in statics, a spec is only a
/// description: ``CBMCentralManagerMock/simulatePeripherals(_:)`` puts it on the current
/// test's bridge (`MockBLEBridge.current`), and every `simulate…` call acts on that bridge's
/// copy. So a spec declared as a global `let` serves many tests at once, each with its own state.
public final class CBMPeripheralSpec: @unchecked Sendable, Hashable {
    // @unchecked Sendable: every property is set by the builder before `build()` returns and
    // never changed afterwards; per-test state lives on each bridge.

    /// The peripheral's identifier.
    public let identifier: UUID
    /// Its GAP name (connectable peripherals).
    public let name: String?
    /// Where it starts, relative to the central.
    public let proximity: CBMProximity
    /// Whether the system knows it from the start (``Builder/allowForRetrieval()``).
    public let isKnown: Bool
    /// Whether another app is connected to it from the start (``Builder/connected(name:services:delegate:connectionInterval:supervisionTimeout:mtu:)``).
    public let isInitiallyConnected: Bool
    /// Its advertising sets. The simulation advertises the first one.
    public let advertisement: [CBMAdvertisementConfig]?
    /// Its services, for connectable peripherals.
    public let services: [CBMServiceMock]?
    /// The connection interval asked for. The bridge's `LinkTiming` sets the interval of every
    /// link; this value is kept for reference.
    public let connectionInterval: TimeInterval?
    /// The supervision timeout asked for (kept for reference).
    public let supervisionTimeout: TimeInterval?
    /// The peripheral's ATT_MTU: the link uses the smaller of it and the central's.
    public let mtu: Int?
    /// Answers the peripheral's requests.
    public let connectionDelegate: (any CBMPeripheralSpecDelegate)?

    init(builder: Builder) {
        identifier = builder.identifier
        name = builder.name
        proximity = builder.proximity
        isKnown = builder.isKnown
        isInitiallyConnected = builder.isInitiallyConnected
        advertisement = builder.advertisement
        services = builder.services
        connectionInterval = builder.connectionInterval
        supervisionTimeout = builder.supervisionTimeout
        mtu = builder.mtu
        connectionDelegate = builder.delegate
    }

    /// Starts describing a simulated peripheral. Without an identifier, ``Builder/build()``
    /// derives one from what the spec describes (its names, advertised data and service UUIDs),
    /// so it is the same in every run, as the kit draws nothing at random.
    public static func simulatePeripheral(identifier: UUID? = nil, proximity: CBMProximity = .immediate) -> Builder {
        Builder(identifier: identifier, proximity: proximity)
    }

    public static func == (lhs: CBMPeripheralSpec, rhs: CBMPeripheralSpec) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// Describes a simulated peripheral step by step.
    public final class Builder {
        let givenIdentifier: UUID?
        let proximity: CBMProximity
        var name: String?
        var isKnown = false
        var isInitiallyConnected = false
        var advertisement: [CBMAdvertisementConfig]?
        var services: [CBMServiceMock]?
        var connectionInterval: TimeInterval?
        var supervisionTimeout: TimeInterval?
        var mtu: Int?
        var delegate: (any CBMPeripheralSpecDelegate)?

        init(identifier: UUID?, proximity: CBMProximity) {
            self.givenIdentifier = identifier
            self.proximity = proximity
        }

        /// The identifier given, or one derived from the description (FNV-1a over its text).
        var identifier: UUID {
            if let givenIdentifier { return givenIdentifier }
            var text = "\(name ?? "")|\(isKnown)|\(isInitiallyConnected)|\(mtu ?? 0)"
            for set in advertisement ?? [] {
                let keys = set.data.keys.sorted()
                text += "|" + keys.map { "\($0)=\(String(describing: set.data[$0]!))" }.joined(separator: ",")
                text += "@\(set.interval)+\(set.delay)"
            }
            for service in services ?? [] {
                text += "|" + service.uuid.uuidString
                text += (service.characteristics ?? []).map { ":" + $0.uuid.uuidString }.joined()
            }
            var high: UInt64 = 0xcbf2_9ce4_8422_2325
            var low: UInt64 = 0x8422_2325_cbf2_9ce4
            for byte in text.utf8 {
                high = (high ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                low = (low ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 &+ high
            }
            var bytes = [UInt8](repeating: 0, count: 16)
            for index in 0..<8 {
                bytes[index] = UInt8(truncatingIfNeeded: high >> (8 * index))
                bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (8 * index))
            }
            bytes[6] = (bytes[6] & 0x0F) | 0x80  // a version nibble no random UUID has
            bytes[8] = (bytes[8] & 0x3F) | 0x80
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                    bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        }

        /// Adds an advertising set: the data (CoreBluetooth's keys), every `interval` seconds
        /// (once if 0), starting after `delay`.
        public func advertising(
            advertisementData: [String: Any], withInterval interval: TimeInterval = 0.100, delay: TimeInterval = 0.0,
            alsoWhenConnected advertisingWhenConnected: Bool = false
        ) -> Builder {
            advertisement =
                (advertisement ?? []) + [
                    CBMAdvertisementConfig(
                        data: advertisementData, interval: interval, delay: delay,
                        isAdvertisingWhenConnected: advertisingWhenConnected)
                ]
            return self
        }

        /// Makes the peripheral connectable, with its services and the delegate answering them.
        public func connectable(
            name: String, services: [CBMServiceMock], delegate: (any CBMPeripheralSpecDelegate)?,
            connectionInterval: TimeInterval = 0.045, supervisionTimeout: TimeInterval = 4.0, mtu: Int = 23
        ) -> Builder {
            self.name = name
            self.services = services
            self.delegate = delegate
            self.connectionInterval = connectionInterval
            self.supervisionTimeout = supervisionTimeout
            self.mtu = mtu
            return self
        }

        /// As ``connectable(name:services:delegate:connectionInterval:supervisionTimeout:mtu:)``,
        /// with another app already connected to it (retrievable as connected, and known).
        public func connected(
            name: String, services: [CBMServiceMock], delegate: (any CBMPeripheralSpecDelegate)?,
            connectionInterval: TimeInterval = 0.045, supervisionTimeout: TimeInterval = 4.0, mtu: Int = 23
        ) -> Builder {
            isInitiallyConnected = true
            isKnown = true
            return connectable(
                name: name, services: services, delegate: delegate, connectionInterval: connectionInterval,
                supervisionTimeout: supervisionTimeout, mtu: mtu)
        }

        /// Makes the peripheral known to the system: retrievable by identifier without a scan.
        public func allowForRetrieval() -> Builder {
            isKnown = true
            return self
        }

        /// The spec.
        public func build() -> CBMPeripheralSpec { CBMPeripheralSpec(builder: self) }
    }
}

extension CBMPeripheralSpec {
    /// This spec's simulation on the current test's bridge: stops the program, saying how to
    /// set a bridge, when there is none; `nil` when the spec is not simulated there.
    func current(_ call: String) -> SpecSimulation? {
        guard let bridge = MockBLEBridge.current else {
            preconditionFailure(
                "CBMPeripheralSpec.\(call): no current MockBLEBridge. Call it inside `bridge.run { }` or "
                    + "`MockBLEBridge.$current.withValue(bridge) { }`, after CBMCentralManagerMock.simulatePeripherals(_:)."
            )
        }
        return SpecSimulation.existing(for: self, on: bridge)
    }

    /// Another app connects to the peripheral (it becomes retrievable as connected).
    public func simulateConnection() {
        current("simulateConnection()")?.command { $0.simulateConnectionBySystem(true) }
    }

    /// The peripheral drops every link with `error` (`peripheralDisconnected` by default).
    public func simulateDisconnection(withError error: any Error = CBMError(.peripheralDisconnected)) {
        let code = (error as? CBMError).flatMap { CoreBluetoothError.Code(rawValue: $0.code.rawValue) }
        let reason = CoreBluetoothError(code ?? .peripheralDisconnected)
        current("simulateDisconnection(withError:)")?.command { peripheral in
            for central in peripheral.connectedCentrals { peripheral.simulateDisconnection(of: central, error: reason) }
        }
    }

    /// The peripheral resets: the delegate's `reset()` is called, and centrals lose their links
    /// with `connectionTimeout` after the supervision timeout, as in CoreBluetoothMock.
    public func simulateReset() {
        guard let simulation = current("simulateReset()") else { return }
        connectionDelegate?.reset()
        simulation.command { $0.simulateReset() }
    }

    /// The peripheral changes its name and services (centrals see `didModifyServices`).
    public func simulateServiceChange(newName: String?, newServices: [CBMServiceMock]) {
        guard let simulation = current("simulateServiceChange(newName:newServices:)") else { return }
        simulation.replaceServices(newServices, name: newName)
    }

    /// The peripheral moves.
    public func simulateProximityChange(_ proximity: CBMProximity) {
        current("simulateProximityChange(_:)")?.command { $0.simulateProximityChange(proximity.proximity) }
    }

    /// The peripheral notifies (or indicates) a new value to its subscribed centrals.
    public func simulateValueUpdate(_ data: Data, for characteristic: CBMCharacteristicMock) {
        guard let simulation = current("simulateValueUpdate(_:for:)") else { return }
        characteristic.value = data
        simulation.update(data, for: characteristic)
    }

    /// The peripheral advertises something else (`nil`: it stops advertising).
    public func simulateAdvertisementChange(_ advertisement: [CBMAdvertisementConfig]?) {
        guard let simulation = current("simulateAdvertisementChange(_:)") else { return }
        guard let first = advertisement?.first else { return simulation.command { $0.stopAdvertising() } }
        let data = SpecSimulation.advertisementData(first.data, connectable: services != nil)
        simulation.command { $0.simulateAdvertisementChange(data) }
    }

    /// The peripheral changes its address (CoreBluetoothMock's `simulateMacChange(_:)`): on the
    /// current test's bridge it goes off the air, dropping its links, and comes back with
    /// `newIdentifier` (by default one derived from its current one), with the same services
    /// and advertising. Centrals see a new peripheral. ``identifier`` stays the spec's first
    /// identifier; the new one is what centrals discover.
    public func simulateMacChange(_ newIdentifier: UUID? = nil) {
        guard let simulation = current("simulateMacChange(_:)") else { return }
        let old = simulation.identifier
        var bytes = old.uuid
        bytes.15 = bytes.15 &+ 1
        bytes.14 = bytes.14 ^ 0x5A
        simulation.changeIdentifier(to: newIdentifier ?? UUID(uuid: bytes))
    }

    /// The system caches the peripheral: retrievable by identifier without a scan.
    public func simulateCaching() {
        current("simulateCaching()")?.command { $0.simulateCaching() }
    }
}
