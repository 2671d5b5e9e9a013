import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// A long read ends on a part shorter than ATT_MTU − 1 bytes, or on an error (Bluetooth Core
/// Specification, Vol 3, Part G, 4.8.3) — also when the parts so far add up to 512 bytes, the
/// longest attribute value: a full last part is followed by one more Read Blob at offset 512,
/// which the server answers with an empty part (Vol 3, Part F, 3.4.4.5: an offset equal to the
/// value's length reads zero bytes).
@Suite("Long reads: a 512-byte value ending on a full part", .timeLimit(.minutes(10)))
struct LongReadBoundaryTests {
    // bumble 0.0.236's client reads on after every full part whatever it has read so far
    // (gatt_client.read_value), and its server answers a Read Blob at the end of a value longer
    // than ATT_MTU − 1 with an empty part (scripts/bumble-att-checks.py, check 2: offset 30 of a
    // 30-byte value). A 512-byte value at ATT_MTU 257 is then a Read, a Read Blob at 256 and one
    // at 512. The kit used to stop at 512 bytes without the last Read Blob.
    @Test(
        "A 512-byte value read in full parts is followed by a Read Blob at offset 512, answered empty",
        arguments: [(257, [0, 256, 512]), (129, [0, 128, 256, 384, 512]), (513, [0, 512]), (247, [0, 246, 492])])
    func fullPartsUpTo512AreFollowedByAReadBlob(mtu: Int, offsets: [Int]) throws {
        var (harness, link) = try WorldLink.make(
            central: .init(mtu: .fixed(mtu)), peripheral: .init(name: "Sensor", requestHandling: .manual))
        let value = testBytes(512)
        var asked: [Int] = []
        let pdus = harness.world.attPDUCount
        let read = try harness.perform(link.read(WorldUUID.value), answering: link.peripheral) { request in
            asked.append(request.offset)
            return .success(Data(value.dropFirst(request.offset)))
        }
        #expect(harness.reply(of: read) == .value(value))
        #expect(asked == offsets)
        #expect(harness.world.attPDUCount - pdus == 2 * offsets.count)
        #expect(harness.world.misuses.isEmpty)
    }

    @Test("The stack answers the Read Blob at the end of a 512-byte static value with an empty part")
    func staticValueEndsWithAnEmptyPart() throws {
        var harness = WorldHarness(seed: 1, timing: WorldHarness.steadyTiming)
        let peripheral = harness.addPeripheral(.init(name: "Sensor"))
        let service = try harness.addService(
            GATTService(
                uuid: WorldUUID.service,
                characteristics: [
                    GATTCharacteristic(
                        uuid: WorldUUID.long, properties: .read, permissions: .readable, value: testBytes(512))
                ]), to: peripheral)
        try harness.startAdvertising(peripheral, AdvertisementData(localName: "Sensor"))
        let central = harness.addCentral(.init(mtu: .fixed(257)))
        let link = try WorldLink.connect(central, to: peripheral, service: service, in: &harness)
        let pdus = harness.world.attPDUCount
        let read = harness.perform(link.read(WorldUUID.long))
        #expect(harness.reply(of: read) == .value(testBytes(512)))
        #expect(harness.world.attPDUCount - pdus == 6)  // Read, Read Blob at 256, Read Blob at 512
    }
}
