import BLECore
import Testing

@testable import BLECapture

/// ATT PDUs built by hand from the formats of the Bluetooth Core Specification, Vol 3,
/// Part F, 3.4.
@Suite("ATT PDUs", .timeLimit(.minutes(10)))
struct ATTPDUTests {
    static let custom = BluetoothUUID(stringLiteral: "A0B40001-926D-4D61-98DF-8C5C62EE53B3")
    /// The 128-bit UUID above, least significant byte first, as ATT carries it.
    static let customBytes: [UInt8] = custom.bytes.reversed()

    /// Computed, not stored: a stored table of enum values whose payloads are arrays hides
    /// their pointers in spare bits, and LeakSanitizer then reports the table as leaked.
    static var cases: [([UInt8], ATTPDU)] {
        [
            ([0x01, 0x0A, 0x10, 0x00, 0x80], .errorResponse(request: 0x0A, handle: 0x0010, error: 0x80)),
            ([0x02, 0xF7, 0x00], .exchangeMTURequest(clientMTU: 247)),
            ([0x03, 0xB9, 0x00], .exchangeMTUResponse(serverMTU: 185)),
            ([0x04, 0x01, 0x00, 0xFF, 0xFF], .findInformationRequest(start: 1, end: 0xFFFF)),
            (
                [0x05, 0x01, 0x11, 0x00, 0x02, 0x29, 0x12, 0x00, 0x01, 0x29],
                .findInformationResponse([.init(handle: 0x11, uuid: "2902"), .init(handle: 0x12, uuid: "2901")])
            ),
            ([0x05, 0x02, 0x20, 0x00] + customBytes, .findInformationResponse([.init(handle: 0x20, uuid: custom)])),
            (
                [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0D, 0x18],
                .findByTypeValueRequest(start: 1, end: 0xFFFF, type: 0x2800, value: [0x0D, 0x18])
            ),
            ([0x07, 0x10, 0x00, 0x14, 0x00], .findByTypeValueResponse([.init(handle: 0x10, endHandle: 0x14)])),
            ([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28], .readByTypeRequest(start: 1, end: 0xFFFF, type: "2803")),
            (
                [0x09, 0x07, 0x02, 0x00, 0x12, 0x03, 0x00, 0x37, 0x2A],
                .readByTypeResponse([.init(handle: 2, value: [0x12, 0x03, 0x00, 0x37, 0x2A])])
            ),
            ([0x0A, 0x03, 0x00], .readRequest(handle: 3)),
            ([0x0B, 0x48, 0x69], .readResponse(value: [0x48, 0x69])),
            ([0x0C, 0x03, 0x00, 0x16, 0x00], .readBlobRequest(handle: 3, offset: 22)),
            ([0x0D], .readBlobResponse(value: [])),
            ([0x0E, 0x03, 0x00, 0x05, 0x00], .readMultipleRequest(handles: [3, 5])),
            ([0x0F, 0x01, 0x02], .readMultipleResponse(values: [0x01, 0x02])),
            ([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], .readByGroupTypeRequest(start: 1, end: 0xFFFF, type: "2800")),
            (
                [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18, 0x06, 0x00, 0x09, 0x00, 0x0F, 0x18],
                .readByGroupTypeResponse([
                    .init(handle: 1, endHandle: 5, value: [0x00, 0x18]),
                    .init(handle: 6, endHandle: 9, value: [0x0F, 0x18]),
                ])
            ),
            ([0x12, 0x11, 0x00, 0x01, 0x00], .writeRequest(handle: 0x11, value: [0x01, 0x00])),
            ([0x13], .writeResponse),
            ([0x16, 0x12, 0x00, 0x12, 0x00, 0xAA], .prepareWriteRequest(handle: 0x12, offset: 18, value: [0xAA])),
            ([0x17, 0x12, 0x00, 0x12, 0x00, 0xAA], .prepareWriteResponse(handle: 0x12, offset: 18, value: [0xAA])),
            ([0x18, 0x01], .executeWriteRequest(commit: true)),
            ([0x18, 0x00], .executeWriteRequest(commit: false)),
            ([0x19], .executeWriteResponse),
            ([0x1B, 0x10, 0x00, 0x06, 0x48], .notification(handle: 0x10, value: [0x06, 0x48])),
            ([0x1D, 0x16, 0x00, 0x02], .indication(handle: 0x16, value: [0x02])),
            ([0x1E], .confirmation),
            ([0x20, 0x03, 0x00, 0x05, 0x00], .readMultipleVariableRequest(handles: [3, 5])),
            ([0x21, 0x01, 0x00, 0xAA, 0x00, 0x00], .readMultipleVariableResponse(values: [[0xAA], []])),
            // Cut at ATT_MTU − 1 inside the last tuple's value, or inside its length.
            (
                [0x21, 0x01, 0x00, 0xAA, 0x05, 0x00, 0xBB],
                .readMultipleVariableResponse(values: [[0xAA], [0xBB]], lastIsPartial: true)
            ),
            (
                [0x21, 0x01, 0x00, 0xAA, 0x05],
                .readMultipleVariableResponse(values: [[0xAA], []], lastIsPartial: true)
            ),
            (
                [0x23, 0x10, 0x00, 0x01, 0x00, 0xAA, 0x12, 0x00, 0x00, 0x00],
                .multipleNotification([.init(handle: 0x10, value: [0xAA]), .init(handle: 0x12, value: [])])
            ),
            ([0x52, 0x1D, 0x00, 0x01], .writeCommand(handle: 0x1D, value: [0x01])),
            (
                [0xD2, 0x1D, 0x00, 0x01] + [UInt8](repeating: 0x5A, count: 12),
                .signedWriteCommand(handle: 0x1D, value: [0x01], signature: [UInt8](repeating: 0x5A, count: 12))
            ),
        ]
    }

    @Test func everyPDUFormatIsDecoded() throws {
        for (bytes, expected) in Self.cases {
            let pdu = try ATTPDU(bytes: bytes)
            #expect(pdu == expected)
            #expect(pdu.opcode == bytes[0])
        }
    }

    @Test func requestsResponsesAndServerPDUsAreClassified() throws {
        #expect(ATTPDU.readRequest(handle: 1).isRequest)
        #expect(!ATTPDU.writeCommand(handle: 1, value: []).isRequest)
        #expect(ATTPDU.errorResponse(request: 0x0A, handle: 1, error: 1).isResponse)
        #expect(ATTPDU.notification(handle: 1, value: []).isFromServer)
        #expect(!ATTPDU.confirmation.isFromServer)
        #expect(ATTConversation.answers(.readResponse(value: []), .readRequest(handle: 1)))
        #expect(ATTConversation.answers(.errorResponse(request: 0x0A, handle: 1, error: 2), .readRequest(handle: 1)))
        #expect(!ATTConversation.answers(.errorResponse(request: 0x12, handle: 1, error: 2), .readRequest(handle: 1)))
        #expect(!ATTConversation.answers(.writeResponse, .readRequest(handle: 1)))
    }

    @Test func badPDUsSayWhatIsWrong() {
        #expect(throws: ATTDecodingError.empty) { try ATTPDU(bytes: []) }
        #expect(throws: ATTDecodingError.unknownOpcode(0x3F)) { try ATTPDU(bytes: [0x3F]) }
        #expect(throws: ATTDecodingError.truncated(opcode: 0x0A, needed: 2, available: 1)) {
            try ATTPDU(bytes: [0x0A, 0x03])
        }
        #expect(throws: ATTDecodingError.truncated(opcode: 0x01, needed: 1, available: 0)) {
            try ATTPDU(bytes: [0x01, 0x0A, 0x10, 0x00])
        }
        #expect(throws: ATTDecodingError.truncated(opcode: 0xD2, needed: 12, available: 3)) {
            try ATTPDU(bytes: [0xD2, 0x01, 0x00, 1, 2, 3])
        }
        #expect(throws: ATTDecodingError.malformed(opcode: 0x05, reason: "format 3 (1 or 2 expected)")) {
            try ATTPDU(bytes: [0x05, 0x03, 0x01, 0x00, 0x00, 0x28])
        }
        #expect(throws: ATTDecodingError.malformed(opcode: 0x05, reason: "its list is not made of 4-byte entries")) {
            try ATTPDU(bytes: [0x05, 0x01, 0x01, 0x00, 0x00])
        }
        #expect(throws: ATTDecodingError.malformed(opcode: 0x09, reason: "its entries are not 7 bytes each")) {
            try ATTPDU(bytes: [0x09, 0x07, 0x02, 0x00, 0x12])
        }
        #expect(throws: ATTDecodingError.malformed(opcode: 0x11, reason: "its entries are not 6 bytes each")) {
            try ATTPDU(bytes: [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00])
        }
        #expect(
            throws: ATTDecodingError.malformed(opcode: 0x07, reason: "its handle list is not a multiple of 4 bytes")
        ) {
            try ATTPDU(bytes: [0x07, 0x10, 0x00])
        }
        #expect(throws: ATTDecodingError.malformed(opcode: 0x0E, reason: "it needs two or more 2-byte handles")) {
            try ATTPDU(bytes: [0x0E, 0x03, 0x00])
        }
        #expect(throws: ATTDecodingError.malformed(opcode: 0x08, reason: "a UUID of 4 bytes (2 or 16 expected)")) {
            try ATTPDU(bytes: [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x00, 0x00])
        }
        #expect(ATTDecodingError.unknownOpcode(0x3F).description == "an ATT PDU with unknown opcode 0x3F")
    }
}
