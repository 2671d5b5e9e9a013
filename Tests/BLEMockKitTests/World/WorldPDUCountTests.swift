import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("World: ATT PDU costing", .timeLimit(.minutes(10)))
struct WorldPDUCountTests {
    /// A link of ATT_MTU `mtu` (the central's preference) with jitter-free realistic timing, to a
    /// peripheral whose prepare queue holds `preparedWriteCapacity` bytes.
    static func link(
        mtu: Int, handling: RequestHandling = .automatic, timing: LinkTiming = WorldHarness.steadyTiming,
        preparedWriteCapacity: Int? = nil
    ) throws -> (WorldHarness, WorldLink) {
        try WorldLink.make(
            timing: timing, central: .init(mtu: .fixed(mtu)),
            peripheral: .init(
                name: "Sensor", requestHandling: handling, preparedWriteCapacity: preparedWriteCapacity))
    }

    @Test("Connecting costs the two PDUs of the MTU exchange, and each further link two more")
    func mtuExchange() throws {
        var harness = WorldHarness()
        let peripheral = harness.addPeripheral()
        try harness.startAdvertising(peripheral, AdvertisementData(localName: "Sensor"))
        let first = harness.addCentral()
        let second = harness.addCentral()
        try harness.discover(peripheral, by: first)
        try harness.discover(peripheral, by: second)
        #expect(harness.world.attPDUCount == 0)
        harness.perform(.connect(central: first, peripheral: peripheral, timeout: nil))
        #expect(harness.world.attPDUCount == 2)
        harness.perform(.connect(central: second, peripheral: peripheral, timeout: nil))
        #expect(harness.world.attPDUCount == 4)
    }

    @Test(
        "A read of N bytes costs one Read and Read Blobs of ATT_MTU − 1 bytes until a short part, one event each",
        arguments: [
            (23, 0, 1), (23, 21, 1), (23, 22, 2), (23, 44, 3), (23, 300, 14), (23, 512, 24),
            (185, 183, 1), (185, 184, 2), (185, 300, 2), (185, 512, 3),
            // Where ATT_MTU − 1 divides 512, the last part is full: one more Read Blob, at offset
            // 512, is answered empty (Vol 3, Part G, 4.8.3; Fidelity/LongReadBoundaryTests).
            (257, 512, 3), (513, 512, 2),
        ])
    func readCost(mtu: Int, length: Int, exchanges: Int) throws {
        var (harness, link) = try Self.link(mtu: mtu)
        try harness.setValue(testBytes(length), of: WorldUUID.value, on: link)
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let read = harness.perform(link.read(WorldUUID.value))
        #expect(harness.reply(of: read) == .value(testBytes(length)))
        #expect(harness.world.attPDUCount - pdus == 2 * exchanges)
        #expect(harness.elapsed(read, since: start) == ms(30 * exchanges))
    }

    @Test(
        "A handler is asked once per Read and Read Blob, at offsets ATT_MTU − 1 apart",
        arguments: [(23, 300, 14), (185, 300, 2), (185, 368, 3), (257, 512, 3), (513, 512, 2)])
    func readBlobOffsets(mtu: Int, length: Int, exchanges: Int) throws {
        let value = testBytes(length)
        var (harness, link) = try Self.link(
            mtu: mtu, handling: .handler { request in .success(Data(value.dropFirst(request.offset))) })
        let read = harness.perform(link.read(WorldUUID.value))
        #expect(harness.reply(of: read) == .value(value))
        let offsets = (harness.handled[link.peripheral] ?? []).map(\.offset)
        #expect(offsets == Array(stride(from: 0, to: exchanges * (mtu - 1), by: mtu - 1)))
    }

    @Test(
        "A write costs one Write Request up to ATT_MTU − 3 bytes, else Prepare Writes of ATT_MTU − 5 and an Execute",
        arguments: [
            (23, 20, 1), (23, 21, 3), (23, 36, 3), (23, 37, 4), (23, 300, 18), (23, 512, 30),
            (185, 182, 1), (185, 183, 3), (185, 360, 3), (185, 361, 4), (185, 512, 4),
        ])
    func writeCost(mtu: Int, length: Int, exchanges: Int) throws {
        var (harness, link) = try Self.link(mtu: mtu)
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let write = harness.perform(link.write(WorldUUID.value, testBytes(length)))
        #expect(harness.reply(of: write) == .done)
        #expect(harness.world.attPDUCount - pdus == 2 * exchanges)
        #expect(harness.elapsed(write, since: start) == ms(30 * exchanges))
        let read = harness.perform(link.read(WorldUUID.value))
        #expect(harness.reply(of: read) == .value(testBytes(length)))
    }

    @Test(
        "A handler receives a long write as its Prepare Write parts, at offsets ATT_MTU − 5 apart",
        arguments: [(23, 40, [0, 18, 36]), (185, 400, [0, 180, 360]), (185, 182, [0])])
    func longWriteParts(mtu: Int, length: Int, offsets: [Int]) throws {
        var (harness, link) = try Self.link(mtu: mtu, handling: .handler { _ in .success() })
        let value = testBytes(length)
        let write = harness.perform(link.write(WorldUUID.value, value))
        #expect(harness.reply(of: write) == .done)
        let parts = harness.handled[link.peripheral] ?? []
        #expect(parts.map(\.offset) == offsets)
        #expect(parts.compactMap(\.value).reduce(Data(), +) == value)
    }

    @Test(
        "A long write its peripheral's prepare queue cannot hold fails with 0x09 at the Prepare Write that overflows it",
        arguments: [
            // (ATT_MTU, length, capacity in bytes, exchanges until the write ends, written): a
            // refused write's exchanges end with the Execute Write (flags 0x00) that cancels it.
            (23, 50, 50, 4, true),  // parts of 18, 18 and 14 bytes fill it exactly
            (23, 50, 49, 4, false), (23, 50, 36, 4, false), (23, 50, 35, 3, false), (23, 50, 17, 2, false),
            (23, 20, 1, 1, true),  // one Write Request: no queue
            (185, 400, 360, 4, false), (185, 400, 400, 4, true), (185, 182, 1, 1, true),
        ])
    func prepareQueueCapacity(mtu: Int, length: Int, capacity: Int, exchanges: Int, written: Bool) throws {
        var (harness, link) = try Self.link(mtu: mtu, preparedWriteCapacity: capacity)
        try harness.setValue(Data([7]), of: WorldUUID.value, on: link)
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let write = harness.perform(link.write(WorldUUID.value, testBytes(length)))
        if written {
            #expect(harness.reply(of: write) == .done)
        } else {
            #expect(harness.error(of: write) as? ATTError == ATTError(.prepareQueueFull))
        }
        #expect(harness.world.attPDUCount - pdus == 2 * exchanges)
        #expect(harness.elapsed(write, since: start) == ms(30 * exchanges))
        // A refused write leaves the value as it was, and the link up.
        let read = harness.perform(link.read(WorldUUID.value))
        #expect(harness.reply(of: read) == .value(written ? testBytes(length) : Data([7])))
    }

    @Test(
        "A long write refused at its first Prepare Write costs that exchange and the Execute Write cancelling it",
        arguments: [(20, 1), (21, 2), (100, 2)])
    func refusedLongWriteIsCancelled(length: Int, exchanges: Int) throws {
        // The 300-byte characteristic can be read, not written: 0x03 Write Not Permitted.
        var (harness, link) = try Self.link(mtu: 23)
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let write = harness.perform(link.write(WorldUUID.long, testBytes(length)))
        #expect(harness.error(of: write) as? ATTError == ATTError(.writeNotPermitted))
        #expect(harness.world.attPDUCount - pdus == 2 * exchanges)
        #expect(harness.elapsed(write, since: start) == ms(30 * exchanges))
        let read = harness.perform(link.read(WorldUUID.long))
        #expect(harness.reply(of: read) == .value(testBytes(300)))
    }

    @Test(
        "A long descriptor write refused at its first Prepare Write is cancelled as a characteristic's is",
        arguments: [(20, 1), (21, 2), (100, 2)])
    func refusedLongDescriptorWriteIsCancelled(length: Int, exchanges: Int) throws {
        // A long descriptor write takes the characteristic's procedure (Vol 3, Part G, 4.12.4),
        // so its refused first Prepare Write is followed by the Execute Write (flags 0x00) that
        // cancels it, as bumble's client does; a user description is not writable: 0x03.
        var (harness, link) = try Self.link(mtu: 23)
        let discovery = harness.perform(link.request(.discoverDescriptors(link.remote(WorldUUID.notifying))))
        let description = try #require(
            harness.descriptors(of: discovery)?.first { $0.uuid == .characteristicUserDescription })
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let write = harness.perform(link.request(.writeDescriptor(description, testBytes(length))))
        #expect(harness.error(of: write) as? ATTError == ATTError(.writeNotPermitted))
        #expect(harness.world.attPDUCount - pdus == 2 * exchanges)
        #expect(harness.elapsed(write, since: start) == ms(30 * exchanges))
        let read = harness.perform(link.request(.readDescriptor(description)))
        #expect(harness.reply(of: read) != .value(testBytes(length)))
    }

    @Test("A handler never hears of a long write its peripheral's prepare queue refused")
    func prepareQueueFullReachesNoHandler() throws {
        var (harness, link) = try Self.link(mtu: 23, handling: .handler { _ in .success() }, preparedWriteCapacity: 36)
        let refused = harness.perform(link.write(WorldUUID.value, testBytes(37)))
        #expect(harness.error(of: refused) as? ATTError == ATTError(.prepareQueueFull))
        #expect(harness.handled[link.peripheral] == nil)
        // The next write that fits is queued afresh and reaches the handler whole.
        let accepted = harness.perform(link.write(WorldUUID.value, testBytes(36)))
        #expect(harness.reply(of: accepted) == .done)
        #expect((harness.handled[link.peripheral] ?? []).compactMap(\.value).reduce(Data(), +) == testBytes(36))
    }

    @Test(
        "Service discovery costs one exchange per response (entries of one size in ATT_MTU − 2 bytes) plus the final not-found",
        arguments: [
            (23, false, 3), (185, false, 2), (23, true, 3), (185, true, 3),
        ])
    func serviceDiscoveryCost(mtu: Int, withLongUUID: Bool, exchanges: Int) throws {
        var harness = WorldHarness(timing: WorldHarness.steadyTiming)
        let peripheral = harness.addPeripheral()
        // Four services: 6-byte entries (16-bit UUIDs); a 128-bit one last makes a 20-byte
        // entry, which a response of 6-byte entries cannot hold (bumble's server packs them so).
        var uuids: [BluetoothUUID] = ["180A", "180F", "1811", "1812"]
        if withLongUUID { uuids[3] = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E" }
        for uuid in uuids { _ = try harness.addService(GATTService(uuid: uuid), to: peripheral) }
        try harness.startAdvertising(peripheral, AdvertisementData(localName: "Sensor"))
        let central = harness.addCentral(.init(mtu: .fixed(mtu)))
        try harness.discover(peripheral, by: central)
        harness.perform(.connect(central: central, peripheral: peripheral, timeout: nil))
        harness.runUntilIdle()
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let discovery = harness.perform(.gatt(central: central, peripheral: peripheral, .discoverServices(nil)))
        #expect(harness.services(of: discovery)?.map(\.uuid) == uuids)
        #expect(harness.world.attPDUCount - pdus == 2 * exchanges)
        #expect(harness.elapsed(discovery, since: start) == ms(30 * exchanges))
    }

    @Test(
        "Characteristic discovery of five 7-byte entries: 3 exchanges at ATT_MTU 23, 2 at 185",
        arguments: [(23, 3), (185, 2)])
    func characteristicDiscoveryCost(mtu: Int, exchanges: Int) throws {
        var (harness, link) = try Self.link(mtu: mtu)
        let pdus = harness.world.attPDUCount
        let service = link.remote(WorldUUID.value).service
        let discovery = harness.perform(link.request(.discoverCharacteristics(service, nil)))
        #expect(harness.characteristics(of: discovery) == link.characteristics)
        #expect(harness.world.attPDUCount - pdus == 2 * exchanges)
    }

    @Test("Descriptor discovery of the CCCD and a user description costs one exchange: the last descriptor ends it")
    func descriptorDiscoveryCost() throws {
        var (harness, link) = try Self.link(mtu: 23)
        let pdus = harness.world.attPDUCount
        let discovery = harness.perform(link.request(.discoverDescriptors(link.remote(WorldUUID.notifying))))
        #expect(
            harness.descriptors(of: discovery)?.map(\.uuid) == [
                .clientCharacteristicConfiguration, .characteristicUserDescription,
            ])
        #expect(harness.world.attPDUCount - pdus == 2)
    }

    @Test(
        "A notification costs one PDU, an indication two (with its confirmation), a write command one",
        arguments: [LinkTiming.instant, WorldHarness.steadyTiming])
    func updateAndCommandCosts(timing: LinkTiming) throws {
        var (harness, link) = try Self.link(mtu: 23, timing: timing)
        try harness.subscribe(WorldUUID.notifying, on: link)
        try harness.subscribe(WorldUUID.indicating, on: link)
        var pdus = harness.world.attPDUCount
        let notified = try harness.updateValue(Data([1]), of: WorldUUID.notifying, on: link)
        #expect(notified)
        harness.runUntilIdle()
        #expect(harness.world.attPDUCount - pdus == 1)
        pdus = harness.world.attPDUCount
        let indicated = try harness.updateValue(Data([2]), of: WorldUUID.indicating, on: link)
        #expect(indicated)
        harness.runUntilIdle()
        #expect(harness.world.attPDUCount - pdus == 2)
        pdus = harness.world.attPDUCount
        try harness.writeWithoutResponse(Data([3]), to: WorldUUID.value, on: link)
        harness.runUntilIdle()
        #expect(harness.world.attPDUCount - pdus == 1)
        #expect(harness.centralEvents(link.central).updatedValues == [Data([1]), Data([2])])
    }

    @Test("A subscription costs one exchange (the CCCD write)")
    func subscriptionCost() throws {
        var (harness, link) = try Self.link(mtu: 23)
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let subscribe = harness.perform(link.subscribe(WorldUUID.notifying))
        #expect(harness.reply(of: subscribe) == .done)
        #expect(harness.world.attPDUCount - pdus == 2)
        #expect(harness.elapsed(subscribe, since: start) == ms(30))
    }

    @Test("An RSSI reading takes one connection event and no ATT PDU")
    func rssiCost() throws {
        var (harness, link) = try Self.link(mtu: 23)
        let (pdus, start) = (harness.world.attPDUCount, harness.world.now)
        let rssi = harness.perform(.readRSSI(central: link.central, peripheral: link.peripheral))
        #expect(harness.reply(of: rssi) == .rssi(-50))
        #expect(harness.world.attPDUCount == pdus)
        #expect(harness.elapsed(rssi, since: start) == ms(30))
    }
}
