import BLECore
import BLEMockKit
import Foundation
import Testing

/// One rule for how much of a value one PDU carries: ATT_MTU − 3, never more than an attribute
/// value can be (512 bytes, Bluetooth Core Specification, Vol 3, Part F, 3.2.9).
@Suite("Value lengths: one rule for writes without response and updates", .timeLimit(.minutes(10)))
struct ValueLengthTests {
    @Test(
        "maximumWriteValueLength(.withoutResponse) is min(ATT_MTU − 3, 512), and a write that long is accepted",
        arguments: [(23, 20), (185, 182), (515, 512), (516, 512), (517, 512)])
    func reportedLengthIsWritable(mtu: Int, expected: Int) async throws {
        let rig = try await Rig.make(centralMTU: mtu)
        let peripheral = rig.peripheral.identifier
        #expect(try await rig.central.maximumWriteValueLength(for: peripheral, type: .withoutResponse) == expected)
        try await rig.central.writeValue(testBytes(expected), for: rig.remote(RigUUID.value), type: .withoutResponse)
        #expect(await rig.lastLogEntry(.write)?.error == nil)
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.value)) == testBytes(expected))
    }

    // bumble 0.0.236 (scripts/bumble-att-checks.py, check 5): its client sends a 514-byte Write
    // Command at ATT_MTU 517 and its server drops it silently (an attribute holds at most 512
    // bytes). CoreBluetooth reports 512 as the longest write without response and cuts
    // longer values, which the kit does (recording a misuse); nothing is ever answered.
    @Test("At ATT_MTU 517 a longer write without response is cut to 512 bytes, as the log says")
    func longWriteWithoutResponseIsCutTo512() async throws {
        let rig = try await Rig.make(centralMTU: 517)
        try await rig.central.writeValue(testBytes(514), for: rig.remote(RigUUID.value), type: .withoutResponse)
        #expect(
            await rig.lastLogEntry(.truncated)?.detail
                == "write without response of 514 bytes cut to 512 (the longest attribute value)")
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.value)) == testBytes(512))
    }

    // bumble 0.0.236 (check 5): its server cuts a notification at ATT_MTU − 3 (514 bytes at
    // 517), past the attribute limit; the kit keeps 512, which a CoreBluetooth peripheral
    // manager's value cannot exceed (the Fidelity article says why).
    @Test("At ATT_MTU 517 a notification carries at most 512 bytes and maximumUpdateValueLength says 512")
    func updatesAreCutTo512() async throws {
        let rig = try await Rig.make(centralMTU: 517)
        var events = rig.central.events().makeAsyncIterator()
        try await rig.central.setNotifyValue(true, for: rig.remote(RigUUID.value))
        #expect(await rig.peripheral.maximumUpdateValueLength(for: rig.central.identifier) == 512)
        #expect(
            await rig.peripheral.subscribedCentrals(for: rig.local(RigUUID.value))
                == [RemoteCentral(identifier: rig.central.identifier, maximumUpdateValueLength: 512)])
        #expect(try await rig.peripheral.updateValue(testBytes(514), for: rig.local(RigUUID.value)))
        let received = await nextCentralEvent(&events) {
            if case .valueUpdated = $0 { return true }
            return false
        }
        #expect(received == .valueUpdated(rig.remote(RigUUID.value), testBytes(512)))
        #expect(await rig.lastLogEntry(.truncated)?.detail == "notification of 514 bytes cut to 512")
    }
}
