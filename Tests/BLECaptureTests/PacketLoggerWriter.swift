@testable import BLECapture

/// Builds PacketLogger files byte by byte for tests: records of a 32-bit length, a timestamp of
/// two 32-bit fields, a type byte and the packet (HCI packets without their H4 type byte).
struct PacketLoggerWriter {
    var littleEndian = false
    /// Whether a timestamp's microseconds come first (a little-endian 64-bit value with the
    /// seconds in its upper half) rather than its seconds.
    var microsecondsFirst = false
    var records: [[UInt8]] = []
    /// The next record's time, in microseconds since 1970 (2024-01-01); moves by 1 ms per record.
    var time: Int64 = 1_704_067_200_000_000

    /// Microseconds from btsnoop's origin (year 0) to 1970.
    static let btsnoop1970 = BTSnoopRecord.epoch2000 - 946_684_800_000_000

    /// The file.
    var bytes: [UInt8] { records.flatMap { $0 } }

    func word(_ value: UInt32) -> [UInt8] {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * (3 - $0))) }
        return littleEndian ? bytes.reversed() : bytes
    }

    /// Appends a record of `type` holding `data`; `length` replaces the length field.
    mutating func record(_ type: UInt8, _ data: [UInt8], length: UInt32? = nil) {
        let seconds = word(UInt32(time / 1_000_000))
        let microseconds = word(UInt32(time % 1_000_000))
        let stamp = microsecondsFirst ? microseconds + seconds : seconds + microseconds
        records.append(word(length ?? UInt32(9 + data.count)) + stamp + [type] + data)
        time += 1_000
    }

    /// A note (0xFC), one of Apple's own records.
    mutating func note(_ text: String) {
        record(0xFC, Array(text.utf8) + [0])
    }

    /// The records of an H4 btsnoop file (a ``SnoopWriter``'s, or a bundled capture) as
    /// PacketLogger records, each at the time it had.
    init(converting snoop: [UInt8], littleEndian: Bool = false, microsecondsFirst: Bool = false) throws {
        self.littleEndian = littleEndian
        self.microsecondsFirst = microsecondsFirst
        for record in try BTSnoopFile(bytes: snoop).records {
            guard let first = record.data.first else { continue }
            let type: UInt8 =
                switch first {
                case 0x01: 0x00
                case 0x04: 0x01
                case 0x02: record.isReceived ? 0x03 : 0x02
                default: record.isReceived ? 0x09 : 0x08
                }
            time = record.timestamp - Self.btsnoop1970
            self.record(type, Array(record.data.dropFirst()))
        }
    }

    init(littleEndian: Bool = false) {
        self.littleEndian = littleEndian
    }
}
