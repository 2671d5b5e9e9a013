import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A GATT procedure a central runs on a link: a sequence of ATT request/response exchanges,
/// one outstanding at a time (Bluetooth Core Specification, Vol 3, Part F, 3.3.2).
struct GATTProcedure: Sendable {
    /// What the procedure does.
    enum Kind: Sendable {
        case discoverServices([BluetoothUUID]?)
        case discoverIncludedServices(RemoteService, [BluetoothUUID]?)
        case discoverCharacteristics(RemoteService, [BluetoothUUID]?)
        case discoverDescriptors(RemoteCharacteristic)
        /// A read as the stack does it: Read, then Read Blobs while full parts come back.
        case read(RemoteCharacteristic)
        /// One Read Blob at an offset (a scenario's `readRequest`).
        case readBlob(RemoteCharacteristic, offset: Int)
        case readDescriptor(RemoteDescriptor)
        /// A write with response: one Write Request, or Prepare Writes and an Execute Write.
        case write(RemoteCharacteristic, Data)
        case writeDescriptor(RemoteDescriptor, Data)
        /// A write of the Client Characteristic Configuration descriptor.
        /// `indications` enables indications on a characteristic that has both kinds (a
        /// scenario's choice; CoreBluetooth's API enables notifications then).
        case setNotify(RemoteCharacteristic, enabled: Bool, indications: Bool = false)
    }

    let kind: Kind
    /// The exchanges the procedure takes (a read ends sooner, on a short part).
    var exchanges: Int
    /// The exchanges answered so far.
    var completed = 0
    /// A read's parts so far.
    var received = Data()
    /// An injected failure, answered to its first request.
    var injected: ErrorInjection.Failure?
    /// A write's requests as the peripheral's app receives them.
    var batch: [ATTRequest] = []
    /// The error a long write's Prepare Write was refused with, while the client's Execute Write
    /// (flags 0x00) has the server drop the parts it queued: the write ends with it once that
    /// is answered, or, a refusal the central pairs on, the link pairs and the write goes again
    /// from its first part.
    var cancelling: (any Error)?
    /// Whether the next exchange is a long write's Prepare Write (not its Execute Write): of a
    /// characteristic's value or of a descriptor, which take the same procedure (Vol 3, Part G,
    /// 4.9.4 and 4.12.4).
    var isPreparingWrite: Bool {
        switch kind {
        case .write, .writeDescriptor: exchanges > 1 && completed < exchanges - 1
        default: false
        }
    }

    /// The characteristic or descriptor's owning characteristic, for injection matching and logs.
    var characteristic: RemoteCharacteristic? {
        switch kind {
        case .discoverServices, .discoverIncludedServices, .discoverCharacteristics: nil
        case .discoverDescriptors(let characteristic), .read(let characteristic), .readBlob(let characteristic, _),
            .write(let characteristic, _), .setNotify(let characteristic, _, _):
            characteristic
        case .readDescriptor(let descriptor), .writeDescriptor(let descriptor, _): descriptor.characteristic
        }
    }

    /// The service a service-level procedure (characteristic or included-service discovery)
    /// works on.
    var serviceHandle: UInt16? {
        switch kind {
        case .discoverCharacteristics(let service, _), .discoverIncludedServices(let service, _): service.handle
        default: nil
        }
    }

    /// The offset of the read request outstanding (zero for anything else): what the
    /// peripheral's app is asked for.
    var requestOffset: Int {
        switch kind {
        case .read: received.count
        case .readBlob(_, let offset): offset
        default: 0
        }
    }

    /// Whether the exchange about to be answered is the last one.
    var isLastExchange: Bool { completed + 1 >= exchanges }

    /// The operation as an app calls it.
    var summary: String {
        switch kind {
        case .discoverServices: "discoverServices"
        case .discoverIncludedServices(let service, _): "discoverIncludedServices(\(service.uuid))"
        case .discoverCharacteristics(let service, _): "discoverCharacteristics(\(service.uuid))"
        case .discoverDescriptors(let characteristic): "discoverDescriptors(\(characteristic.uuid))"
        case .read(let characteristic): "read \(characteristic.uuid)@\(characteristic.handle)"
        case .readBlob(let characteristic, let offset):
            "read blob \(characteristic.uuid)@\(characteristic.handle) offset \(offset)"
        case .readDescriptor(let descriptor): "read descriptor \(descriptor.uuid)@\(descriptor.handle)"
        case .write(let characteristic, let value):
            "write \(characteristic.uuid)@\(characteristic.handle) (\(value.count) bytes)"
        case .writeDescriptor(let descriptor, _): "write descriptor \(descriptor.uuid)@\(descriptor.handle)"
        case .setNotify(let characteristic, let enabled, _):
            "setNotifyValue(\(enabled)) \(characteristic.uuid)@\(characteristic.handle)"
        }
    }

    // MARK: Exchange counts

    /// The bytes of the value one Prepare Write carries: ATT_MTU − 5 (after its opcode, the
    /// handle and the offset).
    static func preparedPartLength(mtu: Int) -> Int { mtu - 5 }

    /// Exchanges of a write with response: one Write Request when the value fits in
    /// ATT_MTU − 3 bytes, else Prepare Writes of ATT_MTU − 5 bytes and an Execute Write.
    static func writeExchanges(length: Int, mtu: Int) -> Int {
        let part = preparedPartLength(mtu: mtu)
        return length <= mtu - 3 ? 1 : (length + part - 1) / part + 1
    }

    /// The responses a discovery's server sends for the entries it lists, in order: each holds
    /// as many entries as fit in ATT_MTU − 2 bytes (after the opcode and the length or format
    /// byte), all of one size (a response's entries share one length: an entry of another size
    /// starts the next response).
    struct Responses {
        /// The bytes one response has for entries.
        private let room: Int
        /// The responses so far.
        private(set) var count = 0
        private var size = 0
        private var used = 0

        init(mtu: Int) { room = mtu - 2 }

        /// Lists the next entry, of `size` bytes.
        mutating func add(entryOf size: Int) {
            if count == 0 || size != self.size || used + size > room {
                count += 1
                self.size = size
                used = size
            } else {
                used += size
            }
        }
    }

    /// Appends one Read (Blob) response: at most ATT_MTU − 1 bytes count; the read is done
    /// when a part is shorter than that (Vol 3, Part G, 4.8.3). A full part that brings the
    /// value to 512 bytes is followed by one more Read Blob, at offset 512, which the server
    /// answers empty (Vol 3, Part F, 3.4.4.5), as bumble's client reads on; nothing past 512
    /// bytes is kept.
    static func appendReadPart(_ part: Data, to soFar: Data, mtu: Int) -> (total: Data, done: Bool) {
        let partLimit = mtu - 1
        let accepted = part.prefix(partLimit)
        var total = soFar + accepted
        if total.count > GATTDatabase.maximumValueLength {
            total = total.prefix(GATTDatabase.maximumValueLength)
            return (total, true)
        }
        return (total, accepted.count < partLimit)
    }
}
