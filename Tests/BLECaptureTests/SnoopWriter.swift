@testable import BLECapture

/// Builds btsnoop files byte by byte for tests, from the packet formats of the Bluetooth Core
/// Specification (HCI: Vol 4, Part E, 5.4 and 7.7; L2CAP: Vol 3, Part A, 3.1).
struct SnoopWriter {
    var datalink: UInt32 = 1002
    var littleEndian = false
    var records: [[UInt8]] = []
    /// The next record's timestamp, in microseconds; moves by 1 ms per record.
    var time: Int64 = BTSnoopRecord.epoch2000

    /// The file.
    var bytes: [UInt8] {
        Array("btsnoop".utf8) + [0] + word(1) + word(datalink) + records.flatMap { $0 }
    }

    func word(_ value: UInt32) -> [UInt8] {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * (3 - $0))) }
        return littleEndian ? bytes.reversed() : bytes
    }

    func long(_ value: Int64) -> [UInt8] {
        let bytes = (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: value) >> (8 * (7 - $0))) }
        return littleEndian ? bytes.reversed() : bytes
    }

    /// Appends a raw record.
    mutating func record(_ data: [UInt8], flags: UInt32, original: Int? = nil, drops: UInt32 = 0) {
        records.append(
            word(UInt32(original ?? data.count)) + word(UInt32(data.count)) + word(flags) + word(drops) + long(time)
                + data)
        time += 1_000
    }

    /// An H4 command from the host.
    mutating func command(_ opcode: UInt16, _ parameters: [UInt8]) {
        record([0x01] + le16(opcode) + [UInt8(parameters.count)] + parameters, flags: 0x02)
    }

    /// An H4 event from the controller.
    mutating func event(_ code: UInt8, _ parameters: [UInt8]) {
        record([0x04, code, UInt8(parameters.count)] + parameters, flags: 0x03)
    }

    /// An H4 ACL packet; `sent` when the host sends it.
    mutating func acl(
        handle: UInt16 = 0x0040, boundary: UInt8, _ data: [UInt8], sent: Bool, original: Int? = nil,
        drops: UInt32 = 0
    ) {
        let packet = [0x02] + le16(handle | UInt16(boundary) << 12) + le16(UInt16(data.count)) + data
        record(packet, flags: sent ? 0x00 : 0x01, original: original.map { $0 + 5 }, drops: drops)
    }

    /// An ATT PDU in one L2CAP frame on channel 4, in one ACL packet.
    mutating func att(_ pdu: [UInt8], handle: UInt16 = 0x0040, sent: Bool) {
        acl(handle: handle, boundary: sent ? 0 : 2, Self.l2cap(pdu), sent: sent)
    }

    /// An L2CAP basic frame.
    static func l2cap(_ payload: [UInt8], channel: UInt16 = 0x0004) -> [UInt8] {
        le16(UInt16(payload.count)) + le16(channel) + payload
    }

    /// LE Connection Complete: this host is the central unless `local` says peripheral; the
    /// interval in units of 1.25 ms (30 ms by default).
    mutating func connected(
        handle: UInt16 = 0x0040, peer: [UInt8] = [0xA6, 0xB5, 0xC4, 0xD3, 0xE2, 0xF1], central: Bool = true,
        interval: UInt16 = 0x0018
    ) {
        event(
            0x3E,
            [0x01, 0x00] + le16(handle) + [central ? 0 : 1, 0x01] + peer + le16(interval) + [
                0x00, 0x00, 0x48, 0x00, 0x00,
            ])
    }

    /// LE Connection Update Complete: the connection's new interval (units of 1.25 ms), latency 0,
    /// supervision timeout 720 ms.
    mutating func updated(handle: UInt16 = 0x0040, interval: UInt16, status: UInt8 = 0x00) {
        event(0x3E, [0x03, status] + le16(handle) + le16(interval) + [0x00, 0x00, 0x48, 0x00])
    }

    /// Disconnection Complete with `reason`.
    mutating func disconnected(handle: UInt16 = 0x0040, reason: UInt8 = 0x13) {
        event(0x05, [0x00] + le16(handle) + [reason])
    }
}

/// Two bytes, least significant first.
func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
