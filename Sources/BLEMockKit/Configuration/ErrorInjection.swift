import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A failure to inject into operations of one kind: what fails, how, how often, and
/// optionally only for one peripheral or characteristic.
///
/// ```swift
/// var configuration = MockCentralManager.Configuration()
/// configuration.errorInjection = [
///     ErrorInjection(.read, failure: .att(.insufficientAuthentication), frequency: .once),
///     ErrorInjection(.connect, failure: .coreBluetooth(.connectionFailed), frequency: .probability(0.2)),
/// ]
/// ```
///
/// Probabilities are drawn from the bridge's seeded generator, so the same seed fails the same
/// operations. ``MockBLEBridge/finish()`` reports injections that never fired.
///
/// An injection that could never apply as written is refused, in a configuration's
/// `errorInjection` and from `inject(_:)` alike: an operation of the other role, `.times(n)`
/// with `n` below 1, a probability outside 0…1 (or NaN), an ``Failure/att(_:)`` failure with
/// `ATTError.Code.success` (0x00 is not an error) or of an operation that is not an ATT
/// request, an ``Failure/l2cap(_:)`` failure of an operation other than opening or publishing
/// an L2CAP channel (or of publishing, with a code other than no resources),
/// ``Failure/neverAnswers`` for a peripheral manager's operation, and a ``characteristic``
/// for an operation not made on one (only descriptor discovery, reads, writes, subscriptions
/// and the peripheral's updates are). The manager (or, for ``MockBLEBridge/inject(_:)``, every manager on
/// the bridge) then refuses every call with `APIMisuseError.invalidConfiguration(_:)` naming
/// the problem.
public struct ErrorInjection: Sendable, Hashable {
    /// The kinds of operation an injection can target.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        /// Central: connecting.
        case connect
        /// Central: discovering services or included services.
        case serviceDiscovery
        /// Central: discovering characteristics.
        case characteristicDiscovery
        /// Central: discovering descriptors.
        case descriptorDiscovery
        /// Central: reading a characteristic or descriptor.
        case read
        /// Central: writing a characteristic (with response) or a descriptor. A write without
        /// response is never affected: a Write Command has no response to fail or withhold.
        case write
        /// Central: enabling or disabling notifications.
        case subscribe
        /// Central: reading RSSI.
        case readRSSI
        /// Central: opening an L2CAP channel (`openL2CAPChannel(_:on:)`). The failure answers
        /// the LE credit-based connection request when it reaches the peripheral: an
        /// ``Failure/l2cap(_:)`` refusal, a ``Failure/coreBluetooth(_:)`` error, or
        /// ``Failure/neverAnswers`` (the open waits until the link drops, the caller cancels or
        /// the bridge finishes, as CoreBluetooth's open has no timeout of its own).
        case l2capOpen
        /// Peripheral: adding a service.
        case serviceAdd
        /// Peripheral: starting to advertise.
        case advertisingStart
        /// Peripheral: sending a notification or indication.
        case updateValue
        /// Peripheral: publishing an L2CAP channel (`publishL2CAPChannel(requiresEncryption:)`),
        /// with a ``Failure/coreBluetooth(_:)`` error or, as when every PSM is taken,
        /// ``Failure/l2cap(_:)`` with `L2CAPError.Code.noResourcesAvailable`.
        case l2capPublish
    }

    /// How the operation fails.
    public enum Failure: Sendable, Hashable {
        /// With this ATT error, as if the peripheral answered so: an error code (not
        /// `ATTError.Code.success`, which is refused), for an operation that is an
        /// ATT request (discovery, read, write, subscribe) only; an injection of an ATT error
        /// into `connect`, `readRSSI`, `l2capOpen` or a peripheral manager's operation is refused with
        /// `APIMisuseError.invalidConfiguration(_:)`, since no ATT response answers them. The
        /// central reacts as iOS
        /// does: an insufficient authentication or encryption (0x05, 0x0F) on a read, a write
        /// or a subscription makes a central that pairs (``PairingBehavior/automatic(duration:outcome:)``,
        /// the realistic preset's default) pair and send the request again, so the caller sees
        /// the pairing's outcome; a central that never pairs (the fast preset's default)
        /// reports the error.
        case att(ATTError.Code)
        /// With this CoreBluetooth error.
        case coreBluetooth(CoreBluetoothError.Code)
        /// With this L2CAP refusal (`L2CAPError`), for the L2CAP operations only: opening a
        /// channel (``Operation/l2capOpen``) with any result code, as if the peripheral refused
        /// the connection request; publishing one (``Operation/l2capPublish``) with
        /// `L2CAPError.Code.noResourcesAvailable` only (no PSM left), the one refusal a
        /// publication can meet. Another combination is refused with
        /// `APIMisuseError.invalidConfiguration(_:)`. The central reacts as iOS does to the
        /// peripheral's refusal: an insufficient authentication or encryption (0x0005, 0x0008)
        /// makes a central that pairs pair and send the request again, as for an ATT error.
        case l2cap(L2CAPError.Code)
        /// Never: the operation waits until the link drops or the bridge finishes — for
        /// testing the caller's own timeouts. A request on the air drops the link once ATT's
        /// transaction timeout (``LinkTiming/attTransactionTimeout``) has passed, as time moves:
        /// a run moves it; outside one the waiting call does not, and ``MockBLEBridge/advance(by:)``
        /// must. For a central manager's operations only: a
        /// peripheral manager's (adding a service, advertising, updating a value) waits for no
        /// peer, and such an injection is refused with `APIMisuseError.invalidConfiguration(_:)`.
        case neverAnswers

        /// The error thrown, if any.
        var error: (any Error)? {
            switch self {
            case .att(let code): ATTError(code)
            case .coreBluetooth(let code): CoreBluetoothError(code)
            case .l2cap(let code): L2CAPError(code)
            case .neverAnswers: nil
            }
        }
    }

    /// How often the injection fires among matching operations.
    public enum Frequency: Sendable, Hashable {
        /// The first matching operation fails.
        case once
        /// The first `n` matching operations fail.
        case times(Int)
        /// Every matching operation fails.
        case always
        /// Each matching operation fails with this probability (0…1), drawn from the seed.
        /// ``MockBLEBridge/finish()`` lists it only when no matching operation met it (drawing
        /// no failure on a seed is not a leftover).
        case probability(Double)
    }

    /// The kind of operation that fails.
    public var operation: Operation
    /// How it fails.
    public var failure: Failure
    /// How often.
    public var frequency: Frequency
    /// Only operations on this peripheral fail; `nil` for any. Defaults to `nil`.
    public var peripheral: UUID?
    /// Only operations on this characteristic (or its descriptors) fail; `nil` for any. Only
    /// an operation made on a characteristic can be aimed at one (see the type's discussion).
    /// Defaults to `nil`.
    public var characteristic: BluetoothUUID?
    /// The value handle of the one characteristic a scenario step named by its `id`: only
    /// operations on it fail, not those on another characteristic with its UUID. `nil` for any
    /// with the UUID.
    var characteristicHandle: UInt16?

    /// Creates an injection.
    public init(
        _ operation: Operation, failure: Failure, frequency: Frequency = .once, peripheral: UUID? = nil,
        characteristic: BluetoothUUID? = nil
    ) {
        self.operation = operation
        self.failure = failure
        self.frequency = frequency
        self.peripheral = peripheral
        self.characteristic = characteristic
    }
}

extension ErrorInjection {
    /// Whether the operation is a peripheral manager's (adding a service, advertising,
    /// updating a value) rather than a central manager's.
    public var isPeripheralOperation: Bool {
        switch operation {
        case .serviceAdd, .advertisingStart, .updateValue, .l2capPublish: true
        default: false
        }
    }

    /// What is wrong with this injection for a central manager (`inCentral` true), a
    /// peripheral manager (false) or a whole bridge (`nil`: either role's operations), or
    /// `nil`: an operation of the other role (which would never apply), a characteristic for
    /// an operation not made on one (which would never match), a count below 1, a
    /// probability outside 0…1, ATT result 0x00 (success, not an error), an ATT error for an
    /// operation no ATT response answers, an L2CAP refusal for an operation no L2CAP
    /// connection response answers (or, for publishing, other than no resources), or
    /// `neverAnswers` for a peripheral manager's operation (which waits for no answer).
    func problem(inCentral: Bool?) -> String? {
        if let inCentral, isPeripheralOperation == inCentral {
            let (other, this) = inCentral ? ("peripheral", "central") : ("central", "peripheral")
            return ".\(operation.rawValue) is a \(other) manager's operation and never happens on a \(this) "
                + "manager; put it in a Mock\(other == "central" ? "Central" : "Peripheral")Manager's configuration"
        }
        if let characteristic, !operation.isMadeOnACharacteristic {
            return "characteristic \(characteristic) never matches .\(operation.rawValue): it is not made on a "
                + "characteristic (an injection aims at one for .descriptorDiscovery, .read, .write, .subscribe and "
                + ".updateValue); leave the characteristic out"
        }
        switch frequency {
        case .times(let count) where count < 1:
            return ".times(\(count)) must be at least 1"
        case .probability(let probability) where !(0...1).contains(probability):
            return ".probability(\(probability)) must be in 0…1"
        default:
            break
        }
        switch failure {
        case .att(let code) where code == .success:
            return ".att(\(code)) is not an error: ATT result 0x00 is the answer to a granted request, so "
                + ".\(operation.rawValue) could not fail with it; inject an ATT error code (0x01 or above)"
        case .att(let code) where !operation.isATTRequest:
            return ".att(\(code)) cannot fail .\(operation.rawValue): no ATT response answers it (ATT errors answer "
                + ".serviceDiscovery, .characteristicDiscovery, .descriptorDiscovery, .read, .write and .subscribe); "
                + "inject a .coreBluetooth(_:) failure"
        case .l2cap(let code) where operation != .l2capOpen && operation != .l2capPublish:
            return ".l2cap(.\(code)) cannot fail .\(operation.rawValue): no L2CAP connection response answers it "
                + "(L2CAP refusals answer .l2capOpen, and .l2capPublish with .noResourcesAvailable); inject a "
                + (operation.isATTRequest ? ".att(_:) or " : "") + ".coreBluetooth(_:) failure"
        case .l2cap(let code) where operation == .l2capPublish && code != .noResourcesAvailable:
            return ".l2cap(.\(code)) cannot fail .l2capPublish: publishing a channel asks no peer, and the one L2CAP "
                + "refusal it meets is .noResourcesAvailable (no PSM left); inject .l2cap(.noResourcesAvailable) or "
                + "a .coreBluetooth(_:) failure"
        case .neverAnswers where isPeripheralOperation:
            return ".neverAnswers cannot apply to .\(operation.rawValue): a peripheral manager's operation waits for "
                + "no answer from a peer (.neverAnswers applies to a central manager's operations); inject a "
                + ".coreBluetooth(_:) failure"
        default:
            return nil
        }
    }
}

extension ErrorInjection.Operation {
    /// Whether the operation opens or publishes an L2CAP channel (no scenario op does).
    var isL2CAP: Bool { self == .l2capOpen || self == .l2capPublish }

    /// Whether the operation is made on one characteristic (or its descriptors), so that an
    /// injection can aim at that characteristic: discovering its descriptors, reading, writing,
    /// subscribing, and the peripheral's updates. Connecting, discovering services or
    /// characteristics, reading RSSI, L2CAP and the peripheral's services and advertising are not.
    var isMadeOnACharacteristic: Bool {
        switch self {
        case .descriptorDiscovery, .read, .write, .subscribe, .updateValue: true
        case .connect, .serviceDiscovery, .characteristicDiscovery, .readRSSI, .l2capOpen, .serviceAdd,
            .advertisingStart, .l2capPublish:
            false
        }
    }

    /// Whether this is an ATT request the peripheral answers, so that an ATT error can
    /// answer it: discovery, reading, writing, subscribing. Connecting (the link layer), reading
    /// RSSI (the controller), opening an L2CAP channel (the L2CAP signalling channel) and the
    /// peripheral manager's own operations are not.
    var isATTRequest: Bool {
        switch self {
        case .serviceDiscovery, .characteristicDiscovery, .descriptorDiscovery, .read, .write, .subscribe: true
        case .connect, .readRSSI, .l2capOpen, .serviceAdd, .advertisingStart, .updateValue, .l2capPublish: false
        }
    }
}

extension ErrorInjection: CustomStringConvertible {
    /// A summary such as `"read fails with ATT 0x05 insufficientAuthentication once on 2A37"`.
    public var description: String {
        let how: String
        switch failure {
        case .att(let code): how = "fails with ATT \(code)"
        case .coreBluetooth(let code): how = "fails with CoreBluetooth \(code.rawValue) \(code)"
        case .l2cap(let code): how = "fails with L2CAP \(L2CAPChannelRecord.hex(code.rawValue)) \(code)"
        case .neverAnswers: how = "never answers"
        }
        let often: String
        switch frequency {
        case .once: often = "once"
        case .times(let count): often = "\(count) times"
        case .always: often = "always"
        case .probability(let probability): often = "with probability \(probability)"
        }
        var text = "\(operation.rawValue) \(how) \(often)"
        if let characteristic { text += " on \(characteristic)" }
        if let peripheral { text += " on peripheral \(peripheral.uuidString.prefix(8))" }
        return text
    }
}
