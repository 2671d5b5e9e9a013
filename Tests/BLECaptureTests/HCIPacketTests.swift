import Testing

@testable import BLECapture

@Suite("HCI packets and events", .timeLimit(.minutes(10)))
struct HCIPacketTests {
    static func record(_ data: [UInt8], flags: UInt32 = 0) -> BTSnoopRecord {
        BTSnoopRecord(index: 0, originalLength: data.count, flags: flags, cumulativeDrops: 0, timestamp: 0, data: data)
    }

    @Test func anH4CommandHasItsOpcodeAndParameters() throws {
        // HCI_Disconnect (OGF 0x01, OCF 0x0006): handle 0x0040, reason 0x13.
        let packet = try HCIPacket.decode(Self.record([0x01, 0x06, 0x04, 0x03, 0x40, 0x00, 0x13]), datalink: .h4)
        #expect(packet == .command(opcode: 0x0406, parameters: [0x40, 0x00, 0x13]))
    }

    @Test func anH4EventHasItsCodeAndParameters() throws {
        let packet = try HCIPacket.decode(
            Self.record([0x04, 0x05, 0x04, 0x00, 0x40, 0x00, 0x13], flags: 3), datalink: .h4)
        #expect(packet == .event(code: 0x05, parameters: [0x00, 0x40, 0x00, 0x13]))
    }

    @Test func anH4ACLPacketHasItsHandleBoundaryAndDirection() throws {
        // Handle 0x0041, PB 10 (first flushable), BC 00, two bytes.
        let received = try HCIPacket.decode(
            Self.record([0x02, 0x41, 0x20, 0x02, 0x00, 0xAA, 0xBB], flags: 1), datalink: .h4)
        #expect(
            received
                == .acl(ACLFragment(handle: 0x0041, boundary: .firstFlushable, data: [0xAA, 0xBB]), .controllerToHost))
        let sent = try HCIPacket.decode(Self.record([0x02, 0x41, 0x10, 0x01, 0x00, 0xCC]), datalink: .h4)
        #expect(sent == .acl(ACLFragment(handle: 0x0041, boundary: .continuing, data: [0xCC]), .hostToController))
    }

    @Test func scoAndIsoDataCarryNoATT() throws {
        #expect(try HCIPacket.decode(Self.record([0x03, 0x01, 0x00, 0x00]), datalink: .h4) == .audio)
        #expect(try HCIPacket.decode(Self.record([0x05, 0x01, 0x00, 0x00, 0x00]), datalink: .h4) == .audio)
    }

    @Test func h1RecordsAreToldApartByTheirFlags() throws {
        #expect(
            try HCIPacket.decode(Self.record([0x03, 0x0C, 0x00], flags: 2), datalink: .h1)
                == .command(opcode: 0x0C03, parameters: []))
        #expect(
            try HCIPacket.decode(Self.record([0x0E, 0x00], flags: 3), datalink: .h1)
                == .event(code: 0x0E, parameters: []))
        let acl = try HCIPacket.decode(Self.record([0x40, 0x20, 0x00, 0x00], flags: 1), datalink: .h1)
        #expect(acl == .acl(ACLFragment(handle: 0x0040, boundary: .firstFlushable, data: []), .controllerToHost))
    }

    @Test func linuxMonitorRecordsCarryTheirTypeInTheFlags() throws {
        #expect(
            try HCIPacket.decode(Self.record([0x03, 0x0C, 0x00], flags: 2), datalink: .linuxMonitor)
                == .command(opcode: 0x0C03, parameters: []))
        #expect(
            try HCIPacket.decode(Self.record([0x0E, 0x00], flags: 3), datalink: .linuxMonitor)
                == .event(code: 0x0E, parameters: []))
        let received = try HCIPacket.decode(
            Self.record([0x40, 0x20, 0x00, 0x00], flags: 0x0001_0005), datalink: .linuxMonitor)
        #expect(received == .acl(ACLFragment(handle: 0x0040, boundary: .firstFlushable, data: []), .controllerToHost))
        let sent = try HCIPacket.decode(Self.record([0x40, 0x00, 0x00, 0x00], flags: 4), datalink: .linuxMonitor)
        #expect(sent == .acl(ACLFragment(handle: 0x0040, boundary: .firstNonFlushable, data: []), .hostToController))
        #expect(try HCIPacket.decode(Self.record([], flags: 12), datalink: .linuxMonitor) == .monitorNote(12))
    }

    @Test func badRecordsSayWhatIsWrong() {
        #expect(throws: HCIDecodingError.empty) { try HCIPacket.decode(Self.record([]), datalink: .h4) }
        #expect(throws: HCIDecodingError.unknownPacketType(0x07)) {
            try HCIPacket.decode(Self.record([0x07, 0x00]), datalink: .h4)
        }
        #expect(throws: HCIDecodingError.truncated(what: "acl header", needed: 4, available: 2)) {
            try HCIPacket.decode(Self.record([0x02, 0x40, 0x00]), datalink: .h4)
        }
        #expect(throws: HCIDecodingError.lengthMismatch(what: "event packet", declared: 4, actual: 1)) {
            try HCIPacket.decode(Self.record([0x04, 0x05, 0x04, 0x00]), datalink: .h4)
        }
        #expect(throws: HCIDecodingError.unsupportedDatalink(.h5)) {
            try HCIPacket.decode(Self.record([0x01]), datalink: .h5)
        }
        #expect(HCIDecodingError.unknownPacketType(0x07).description == "an unknown HCI packet type 0x07")
    }

    @Test func leConnectionCompleteGivesTheHandleRoleAndPeer() throws {
        // Status 0, handle 0x0040, role 1 (peripheral), random address F1:E2:D3:C4:B5:A6.
        let parameters: [UInt8] = [
            0x01, 0x00, 0x40, 0x00, 0x01, 0x01, 0xA6, 0xB5, 0xC4, 0xD3, 0xE2, 0xF1, 0x18, 0x00, 0x00, 0x00, 0x48, 0x00,
            0x00,
        ]
        guard case .leConnectionComplete(let connection) = try HCIEvent.decode(code: 0x3E, parameters: parameters)
        else {
            Issue.record("not a connection")
            return
        }
        #expect(connection.handle == 0x0040)
        #expect(!connection.isLocalCentral)
        #expect(connection.peerAddress.description == "F1:E2:D3:C4:B5:A6")
        #expect(connection.interval == 0x18)
    }

    @Test func enhancedConnectionCompleteSkipsTheResolvablePrivateAddresses() throws {
        let parameters: [UInt8] =
            [0x0A, 0x00, 0x41, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5, 6] + [UInt8](repeating: 0xEE, count: 12) + [
                0x28, 0x00, 0, 0, 0x48, 0, 0,
            ]
        guard case .leConnectionComplete(let connection) = try HCIEvent.decode(code: 0x3E, parameters: parameters)
        else {
            Issue.record("not a connection")
            return
        }
        #expect(connection.isLocalCentral)
        #expect(connection.peerAddress == BluetoothAddress(string: "06:05:04:03:02:01"))
        #expect(connection.interval == 0x28)
    }

    @Test func leConnectionUpdateCompleteGivesTheHandleAndTheNewInterval() throws {
        // Status 0, handle 0x0040 (with the flag bits above it set), interval 12 (15 ms), latency 0,
        // supervision timeout 0x48.
        #expect(
            try HCIEvent.decode(code: 0x3E, parameters: [0x03, 0x00, 0x40, 0xF0, 0x0C, 0x00, 0x00, 0x00, 0x48, 0x00])
                == .leConnectionUpdateComplete(status: 0, handle: 0x0040, interval: 12))
        #expect(
            try HCIEvent.decode(code: 0x3E, parameters: [0x03, 0x3B, 0x41, 0x00, 0x06, 0x00])
                == .leConnectionUpdateComplete(status: 0x3B, handle: 0x0041, interval: 6))
        #expect(
            throws: HCIDecodingError.truncated(what: "LE Connection Update Complete event", needed: 2, available: 1)
        ) {
            try HCIEvent.decode(code: 0x3E, parameters: [0x03, 0x00, 0x40, 0x00, 0x0C])
        }
    }

    @Test func legacyAndExtendedAdvertisingReportsAreRead() throws {
        let legacy: [UInt8] = [0x02, 0x01, 0x04, 0x01, 1, 2, 3, 4, 5, 6, 0x02, 0x0A, 0xF8, 0xC4]
        #expect(
            try HCIEvent.decode(code: 0x3E, parameters: legacy)
                == .leAdvertisingReports([
                    .init(
                        address: BluetoothAddress(string: "06:05:04:03:02:01")!, isConnectable: false,
                        isScanResponse: true,
                        data: [0x0A, 0xF8], rssi: -60)
                ]))
        let extended: [UInt8] =
            [0x0D, 0x01, 0x13, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 0x01, 0x00, 0xFF, 0x7F, 0x7F]
            + [UInt8](repeating: 0, count: 9) + [0x01, 0xAB]
        #expect(
            try HCIEvent.decode(code: 0x3E, parameters: extended)
                == .leAdvertisingReports([
                    .init(
                        address: BluetoothAddress(string: "06:05:04:03:02:01")!, isConnectable: true,
                        isScanResponse: false,
                        data: [0xAB], rssi: nil)
                ]))
    }

    @Test func disconnectionAndEncryptionEventsAreRead() throws {
        #expect(
            try HCIEvent.decode(code: 0x05, parameters: [0x00, 0x40, 0x00, 0x08])
                == .disconnectionComplete(status: 0, handle: 0x40, reason: 0x08))
        #expect(
            try HCIEvent.decode(code: 0x08, parameters: [0x00, 0x40, 0x00, 0x01])
                == .encryptionChange(status: 0, handle: 0x40, isEnabled: true))
        #expect(try HCIEvent.decode(code: 0x0E, parameters: [0x01]) == .other(code: 0x0E, subevent: nil))
        #expect(try HCIEvent.decode(code: 0x3E, parameters: [0x07]) == .other(code: 0x3E, subevent: 0x07))
    }

    @Test func aShortFollowedEventIsTruncated() {
        #expect(throws: HCIDecodingError.truncated(what: "Disconnection Complete event", needed: 1, available: 0)) {
            try HCIEvent.decode(code: 0x05, parameters: [0x00, 0x40, 0x00])
        }
        #expect(throws: HCIDecodingError.truncated(what: "LE Connection Complete event", needed: 6, available: 2)) {
            try HCIEvent.decode(code: 0x3E, parameters: [0x01, 0x00, 0x40, 0x00, 0x00, 0x00, 1, 2])
        }
    }

    @Test func bluetoothAddressesParseAndPrint() {
        #expect(BluetoothAddress(string: "f1-e2-d3-c4-b5-a6")?.description == "F1:E2:D3:C4:B5:A6")
        #expect(BluetoothAddress(string: "F1:E2:D3:C4:B5") == nil)
        #expect(BluetoothAddress(string: "F1:E2:D3:C4:B5:G6") == nil)
        #expect(BluetoothAddress(string: "F1:E2:D3:C4:B5:A66") == nil)
        #expect(BluetoothAddress(bytes: [1, 2, 3]) == nil)
        #expect(BluetoothAddress(hciBytes: [0xA6, 0xB5, 0xC4, 0xD3, 0xE2, 0xF1]).description == "F1:E2:D3:C4:B5:A6")
    }
}
