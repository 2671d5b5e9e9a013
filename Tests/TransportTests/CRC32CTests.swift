import Testing

@testable import Transport

@Suite("CRC-32C", .timeLimit(.minutes(10)))
struct CRC32CTests {
    /// A bit-at-a-time reference implementation to cross-check the sliced tables.
    static func bitwise(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
        }
        return ~crc
    }

    @Test("The checksum of \"123456789\" is the standard check value 0xE3069283")
    func checkValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checkValue == 0xE306_9283)
    }

    static let vectors: [([UInt8], UInt32)] = [
        ([], 0),
        (Array("a".utf8), 0xC1D0_4330),
        (Array("The quick brown fox jumps over the lazy dog".utf8), 0x2262_0404),
        ([UInt8](repeating: 0, count: 32), 0x8A91_36AA),
        ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        ((0..<32).map { UInt8($0) }, 0x46DD_794E),
        ((0..<32).reversed().map { UInt8($0) }, 0x113F_DB5C),
    ]

    @Test("Known vectors from RFC 3720 and common test suites match", arguments: vectors)
    func knownVectors(input: [UInt8], expected: UInt32) {
        #expect(CRC32C.checksum(input) == expected)
    }

    @Test("Sliced checksums equal the bitwise reference for every length up to 300")
    func matchesBitwiseReference() {
        var generator = SplitMix64(seed: 0)
        for length in 0...300 {
            let bytes = generator.bytes(length)
            #expect(CRC32C.checksum(bytes) == Self.bitwise(bytes), "length \(length)")
        }
    }

    @Test("Continuing a checksum over pieces equals the checksum of the whole")
    func continuing() {
        var generator = SplitMix64(seed: 7)
        let bytes = generator.bytes(1_000)
        for split in [0, 1, 15, 16, 17, 500, 999, 1_000] {
            let first = CRC32C.checksum(Array(bytes[..<split]))
            #expect(CRC32C.checksum(Array(bytes[split...]), continuing: first) == CRC32C.checksum(bytes))
        }
    }

    @Test("The table holds 16 slices of 256 entries and starts with the polynomial's entries")
    func table() {
        #expect(CRC32C.table.count == 4_096)
        #expect(CRC32C.table[0] == 0)
        #expect(CRC32C.table[128] == CRC32C.polynomial)
    }

    @Test("The hardware and software paths agree for every length up to 2,100 and every alignment")
    func hardwareMatchesSoftware() {
        var generator = SplitMix64(seed: 32)
        let bytes = generator.bytes(2_200)
        bytes.withUnsafeBytes { all in
            for offset in 0..<8 {
                for length in stride(from: 0, through: 2_100, by: offset == 0 ? 1 : 7) {
                    let slice = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                    let software = CRC32C.softwareChecksum(slice, continuing: 0x1234_5678)
                    #expect(CRC32C.checksum(slice, continuing: 0x1234_5678) == software)
                    if CRC32C.usesHardware {
                        #expect(CRC32C.hardwareChecksum(slice, continuing: 0x1234_5678) == software)
                    }
                }
            }
        }
    }

    @Test("Both paths agree over the long-block sizes (multiples of 3 × 8,192 bytes and around them)")
    func hardwareMatchesSoftwareOnLongInputs() {
        var generator = SplitMix64(seed: 33)
        let bytes = generator.bytes(3 * 8_192 * 4 + 800)
        for length in [24_575, 24_576, 24_577, 49_152, 3 * 8_192 * 4 + 768, bytes.count] {
            let input = Array(bytes[..<length])
            let expected = input.withUnsafeBytes { CRC32C.softwareChecksum($0) }
            #expect(CRC32C.checksum(input) == expected, "length \(length)")
            #expect(Self.bitwise(input) == expected, "length \(length)")
        }
    }

    @Test("On x86-64 (SSE 4.2) the hardware path is in use; elsewhere it reports itself absent and software runs")
    func hardwareIsUsedOnX86() {
        let bytes: [UInt8] = Array("123456789".utf8)
        let hardware = bytes.withUnsafeBytes { CRC32C.hardwareChecksum($0) }
        #if arch(x86_64)
            #expect(CRC32C.usesHardware)
            #expect(hardware == 0xE306_9283)
        #else
            #expect(!CRC32C.usesHardware)
            #expect(hardware == nil)
        #endif
        #expect(CRC32C.checksum(bytes) == 0xE306_9283)
    }
}
