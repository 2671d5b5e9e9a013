import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLEMockKit

/// What a PDU costs in link-layer packets: no packet carries more than 251 bytes (Core, Vol 6,
/// Part B, 4.5.10), with profiles or without, and an L2CAP K-frame is cut like an ATT PDU.
@Suite("Link-layer packets a PDU costs", .timeLimit(.minutes(10)))
struct PacketCostTests {
    static let service: BluetoothUUID = "FD20"
    static let stream: BluetoothUUID = "FD21"

    @Test(
        "Without profiles a PDU longer than 251 bytes takes the packets a link layer cuts it into",
        arguments: [
            // (L2CAP bytes, packets)
            (1, 1), (251, 1), (252, 2), (502, 2), (503, 3), (521, 3),
        ])
    func unprofiledPackets(bytes: Int, packets: Int) {
        let frame = PDU.frame(Frame(channel: 1, l2capBytes: bytes, sdu: nil, completes: nil))
        #expect(Link.packets(of: frame, on: nil) == packets)
        // A read response: a 1-byte opcode and the 4-byte L2CAP header around its value.
        let value = Data(count: max(0, bytes - 5))
        #expect(Link.packets(of: .response(OperationID(rawValue: 1), .value(value)), on: nil) == max(1, packets))
        // Requests and confirmations are short: one packet.
        #expect(Link.packets(of: .confirmation, on: nil) == 1)
        #expect(Link.packets(of: .request(OperationID(rawValue: 1)), on: nil) == 1)
    }

    @Test("Without profiles, 512-byte notifications at ATT_MTU 517 take three packets each out of an event's budget")
    func unprofiledLongNotificationsSpanTheBudget() async throws {
        // 3 packets an event, 30 ms apart: 244-byte notifications go three an event; 512-byte
        // ones (519 bytes with their headers: three 251-byte packets) one an event. Before,
        // each cost one packet whatever its size, and 3 × 512 bytes crossed every 30 ms.
        var timing = LinkTiming(jitter: .zero)
        timing.packetsPerConnectionEvent = 3
        let bridge = MockBLEBridge(configuration: .init(seed: 2, timing: timing))
        let sensor = MockPeripheralManager(
            configuration: .init(name: "Stream", mtu: .fixed(517), updateQueue: .realistic(capacity: 16)),
            bridge: bridge)
        let local = try await sensor.add(
            GATTService(
                uuid: Self.service,
                characteristics: [GATTCharacteristic(uuid: Self.stream, properties: .notify, permissions: [])]))
        try await sensor.startAdvertising(AdvertisementData(localName: "Stream", serviceUUIDs: [Self.service]))
        let (phone, characteristics) = try await Realistic.connectedCentral(
            to: sensor, on: bridge, configuration: .init(mtu: .fixed(517)))
        try await phone.setNotifyValue(true, for: try #require(characteristics.first { $0.uuid == Self.stream }))
        var arrivals: [[Duration]] = []
        for length in [244, 512] {
            let start = await bridge.now
            let before = await bridge.log.count
            for _ in 0..<3 {
                #expect(try await sensor.updateValue(Data(count: length), for: local.characteristics[0]))
            }
            await bridge.advance(by: .milliseconds(200))
            let times = await bridge.log.dropFirst(before)
                .filter { $0.kind == .notification && $0.central != nil }.map { start.duration(to: $0.time) }
            #expect(times.count == 3)
            arrivals.append(times.map { $0 - times[0] })
        }
        #expect(arrivals[0] == [.zero, .zero, .zero])
        #expect(arrivals[1] == [.zero, .milliseconds(30), .milliseconds(60)])
    }

    @Test("A K-frame is as long as its header, SDU length and part of the SDU", arguments: [1, 245, 246, 1_000, 2_048])
    func kFrameLengths(sdu: Int) {
        let count = L2CAPChannelRecord.frames(sduLength: sdu)
        let lengths = (0..<count).map { L2CAPChannelRecord.frameBytes($0, sduLength: sdu) }
        // Every frame carries its 4-byte header, the first the 2-byte SDU length too; together
        // they carry the SDU, each at most the MPS (247) bytes of payload.
        #expect(lengths.reduce(0, +) == sdu + 4 * count + 2)
        #expect(lengths.allSatisfy { $0 <= 4 + L2CAPChannelRecord.mps })
        #expect(lengths.dropLast().allSatisfy { $0 == 4 + L2CAPChannelRecord.mps })
    }

    @Test(
        "Over an L2CAP channel the slower phone is slower: K-frames are cut at the data length",
        arguments: [
            // (phone, the most a second can carry: 27-byte packets, 7 an event every 15 ms,
            // carry 12,600 bytes of L2CAP a second; 251-byte packets, 3 an event, 50,200)
            (LinkProfile.iPhoneiOS10, 12_600), (.iPhoneiOS18, 50_200),
        ])
    func l2capThroughputFollowsTheDataLength(phone: LinkProfile, bytesPerSecond: Int) async throws {
        var timing = LinkTiming.realistic(central: phone, peripheral: .watch)
        timing.jitter = .zero
        let bridge = MockBLEBridge(configuration: .init(seed: 1, timing: timing))
        let sensor = MockPeripheralManager(configuration: .init(name: "Watch"), bridge: bridge)
        try await sensor.startAdvertising(AdvertisementData(localName: "Watch"))
        let central = MockCentralManager(configuration: .init(), bridge: bridge)
        try await Realistic.discover(sensor, by: central, on: bridge)
        try await central.connect(sensor.identifier)
        let psm = try await sensor.publishL2CAPChannel(requiresEncryption: false)
        let sent = 20_000
        let elapsed = try await bridge.run {
            let channel = try await central.openL2CAPChannel(psm, on: sensor.identifier)
            let start = await bridge.now
            try await channel.send(Data(count: sent))
            return start.duration(to: await bridge.now)
        }
        // 20,000 bytes are 82 K-frames of at most 251 bytes: no faster than the link carries.
        let frames = L2CAPChannelRecord.segment(Data(count: sent)).frames
        let carried = Double(sent + 4 * frames + 2 * 10) / (elapsed / .seconds(1))
        #expect(carried <= Double(bytesPerSecond) * 1.02, "\(carried) B/s in \(elapsed)")
        #expect(carried >= Double(bytesPerSecond) * 0.8, "\(carried) B/s in \(elapsed)")
    }
}
