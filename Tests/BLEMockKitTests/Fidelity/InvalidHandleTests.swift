import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// A request that reaches the server after the attribute it names was removed: the server no
/// longer has the handle, so it answers with an Error Response whose code is 0x01 Invalid Handle
/// (Bluetooth Core Specification, Vol 3, Part F, 3.4.1.1, and 3.4.5.1 for a Write Request such
/// as a CCCD write). The central's stack reports that ATT error as it came (CoreBluetooth's
/// `CBATTError.invalidHandle`), whatever the request was.
@Suite("Invalid Handle: requests that reach a server after their attribute went", .timeLimit(.minutes(10)))
struct InvalidHandleTests {
    /// The requests the test sends, by name.
    enum Sent: String, CaseIterable, CustomTestStringConvertible {
        case read, write, subscribe, unsubscribe, readDescriptor

        var testDescription: String { rawValue }

        func request(on link: WorldLink, descriptors: [RemoteDescriptor]) -> World.Request {
            switch self {
            case .read: link.read(WorldUUID.value)
            case .write: link.write(WorldUUID.value, Data([1]))
            case .subscribe: link.subscribe(WorldUUID.notifying)
            case .unsubscribe: link.subscribe(WorldUUID.notifying, false)
            case .readDescriptor: link.request(.readDescriptor(descriptors[0]))
            }
        }
    }

    // bumble 0.0.236's server answers a Read, Read Blob, Write Request and Prepare Write Request
    // naming a handle it does not have with an Error Response, code 0x01 (a probe under /tmp,
    // not kept); a CCCD write is a Write Request like any other. The kit's CCCD write used to
    // fail with CoreBluetoothError(.invalidHandle), the client's refusal of a stale attribute,
    // which no server sends.
    @Test(
        "A request in flight when the peripheral removes its service is answered with ATT 0x01 Invalid Handle",
        arguments: Sent.allCases)
    func requestInFlightIsAnsweredInvalidHandle(_ sent: Sent) throws {
        var (harness, link) = try WorldLink.make()
        if sent == .unsubscribe { try harness.subscribe(WorldUUID.notifying, on: link) }
        let discovery = harness.perform(link.request(.discoverDescriptors(link.remote(WorldUUID.notifying))))
        let descriptors = try #require(harness.descriptors(of: discovery))
        let id = harness.start(sent.request(on: link, descriptors: descriptors))
        // Sent: the request is on its way (it crosses at the next connection event).
        #expect(harness.world.pending[id]?.stage == .sent)
        try harness.mutate { try $0.removeService(peripheral: link.peripheral, service: link.service) }
        harness.serve(id)
        let error = try #require(harness.error(of: id))
        #expect(error as? ATTError == ATTError(.invalidHandle))
    }

    // Core Vol 3, Part G, 7.1: the server tells a client its database changed with the Service
    // Changed indication, a PDU of the link like any other, so it reaches the central behind the
    // notifications queued before it. The kit told the central at once: an app heard
    // servicesModified, then values of the characteristic it had just been told was invalid (a
    // delegate app's were dropped, though the log had them as delivered). Probe of the
    // peripheral role.
    @Test(
        "Notifications queued before a service is removed reach the central before it hears the service changed",
        arguments: [false, true])
    func updatesQueuedBeforeARemovalArriveFirst(removeAll: Bool) throws {
        var (harness, link) = try WorldLink.make()
        try harness.subscribe(WorldUUID.notifying, on: link)
        for value in 0..<5 {
            let sent = try harness.mutate {
                try $0.updateValue(
                    peripheral: link.peripheral, value: Data([UInt8(value)]),
                    characteristic: link.local(WorldUUID.notifying), centrals: nil)
            }
            #expect(sent)
        }
        let before = harness.centralEvents(link.central).count
        if removeAll {
            harness.mutate { $0.removeAllServices(peripheral: link.peripheral) }
        } else {
            try harness.mutate { try $0.removeService(peripheral: link.peripheral, service: link.service) }
        }
        let idle = harness.runUntilIdle()
        #expect(idle)
        let heard = harness.centralEvents(link.central).dropFirst(before).compactMap { event -> String? in
            switch event {
            case .valueUpdated(_, let value): "value \(value.first!)"
            case .servicesModified(_, let invalidated):
                "modified " + invalidated.map { "\($0.uuid)" }.joined(separator: ", ")
            default: nil
            }
        }
        #expect(heard == ["value 0", "value 1", "value 2", "value 3", "value 4", "modified \(WorldUUID.service)"])
        // Nothing is sent for the removed characteristic once it is gone.
        #expect(harness.log(.notification).count == 5)
    }

    @Test("With nothing on its way, the central hears a service changed at once")
    func aRemovalWithNothingQueuedIsHeardAtOnce() throws {
        var (harness, link) = try WorldLink.make()
        try harness.mutate { try $0.removeService(peripheral: link.peripheral, service: link.service) }
        let last = harness.centralEvents(link.central).last
        #expect(last == .servicesModified(link.remotePeripheral, invalidated: [link.characteristics[0].service]))
    }
}
