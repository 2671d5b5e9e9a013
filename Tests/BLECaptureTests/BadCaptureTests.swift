import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECapture

/// Damaged, partial and ambiguous captures: each still imports what can be trusted and says
/// what it skipped, or fails with the error that says why nothing could be imported.
@Suite("Importing bad captures", .timeLimit(.minutes(10)))
struct BadCaptureTests {
    typealias S = CaptureTestSupport

    static func load(_ writer: SnoopWriter, peer: String? = nil) throws -> CaptureImport {
        try CaptureImporter(peer: peer.flatMap(BluetoothAddress.init(string:))).importCapture(
            bytes: writer.bytes, name: "test")
    }

    /// A connection (handle 0x0040, interval 30 ms) at ATT_MTU `mtu` (exchanged first when not
    /// 23) to a heart rate service: 180D at 1…4, 2A37 (`properties`: read and notify unless
    /// given) with its value at 3 and its CCCD at 4, discovered.
    static func discovered(properties: UInt8 = 0x12, mtu: UInt16 = 23) -> SnoopWriter {
        var writer = SnoopWriter()
        writer.connected()
        if mtu != 23 {
            writer.att([0x02] + le16(mtu), sent: true)
            writer.att([0x03] + le16(mtu), sent: false)
        }
        writer.att([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], sent: true)
        writer.att([0x11, 0x06, 0x01, 0x00, 0x04, 0x00, 0x0D, 0x18], sent: false)
        writer.att([0x08, 0x01, 0x00, 0x04, 0x00, 0x03, 0x28], sent: true)
        writer.att([0x09, 0x07, 0x02, 0x00, properties, 0x03, 0x00, 0x37, 0x2A], sent: false)
        writer.att([0x04, 0x04, 0x00, 0x04, 0x00], sent: true)
        writer.att([0x05, 0x01, 0x04, 0x00, 0x02, 0x29], sent: false)
        return writer
    }

    /// The bytes of a bundled capture without the record at `index` (0-based).
    static func dropping(_ index: Int, from name: String) throws -> [UInt8] {
        let bytes = try S.bytes(name)
        var offset = BTSnoopFile.headerLength
        var current = 0
        while offset < bytes.count {
            let included = bytes[offset + 4..<offset + 8].reduce(0) { $0 << 8 | Int($1) }
            let end = offset + BTSnoopFile.recordHeaderLength + included
            if current == index { return Array(bytes[..<offset] + bytes[end...]) }
            offset = end
            current += 1
        }
        return bytes
    }

    @Test func aTruncatedFileImportsWhatCameBeforeTheCut() throws {
        let bytes = Array(try S.bytes("discovery-reads").dropLast(3))
        let imported = try CaptureImporter().importCapture(bytes: bytes, name: "cut")
        let truncations = imported.warnings.compactMap { warning -> (Int, Int, Int)? in
            guard case .file(.truncatedRecord(let index, let included, let available)) = warning.kind else {
                return nil
            }
            return (index, included, available)
        }
        let (index, included, available) = try #require(truncations.first)
        #expect(truncations.count == 1)
        #expect(available == included - 3)
        // Numbered from 1 in words, as packets are in the other warnings.
        #expect(imported.warnings.contains { $0.message.hasPrefix("the file ends inside record \(index + 1) (") })
        #expect(imported.profile.services.count == 3)
        // The Disconnection Complete event was in the lost bytes: the scenario leaves the link up.
        #expect(!imported.scenario.steps.contains { $0.operation.name == "disconnect" })
    }

    @Test func aDamagedRecordLengthIsNamedAsSuchNotAsATruncatedFile() throws {
        // Record 3 (index 2) of a bundled capture declares 0xFFFFFFF0 bytes: more than its packet
        // had and than the file holds. The file is whole; its length field is what is wrong.
        var bytes = try S.bytes("discovery-reads")
        var offset = BTSnoopFile.headerLength
        for _ in 0..<2 {
            offset += BTSnoopFile.recordHeaderLength + bytes[offset + 4..<offset + 8].reduce(0) { $0 << 8 | Int($1) }
        }
        let original = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        bytes.replaceSubrange(offset + 4..<offset + 8, with: [0xFF, 0xFF, 0xFF, 0xF0])
        let available = bytes.count - offset - BTSnoopFile.recordHeaderLength
        let file = try BTSnoopFile(bytes: bytes)
        #expect(file.records.count == 2)
        #expect(
            file.problems == [.damagedLength(index: 2, included: 0xFFFF_FFF0, original: original, available: available)]
        )
        #expect(
            file.problems.first?.description
                == "record 3's length field is damaged: it declares 4294967280 bytes, more than its packet had "
                + "(\(original)) and than the file holds after it (\(available)); the 2 records before it were read, "
                + "and none from it on")
        // A length past the file's end but within the packet's is a cut file, as before.
        let cut = Array(try S.bytes("discovery-reads").dropLast(3))
        #expect(
            try BTSnoopFile(bytes: cut).problems.allSatisfy {
                if case .truncatedRecord = $0 { return true }
                return false
            })
    }

    @Test func fragmentsLostMidPDUDropThatPDUOnly() async throws {
        // Record 111 is the second of the four ACL packets of the 100-byte notification.
        let bytes = try Self.dropping(111, from: "notifications-peripheral-side")
        let imported = try CaptureImporter().importCapture(bytes: bytes, name: "lossy")
        #expect(
            imported.warnings.map(\.kind).contains(
                .fragmentsLost(.interrupted(handle: 1, direction: .hostToController, expected: 103, received: 76))))
        let notified = imported.scenario.steps.compactMap { step -> Data? in
            if case .notify(_, let value) = step.operation { return value }
            return nil
        }
        #expect(notified == [Data([0x06, 0x48]), Data([0x06, 0x4A])])
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
    }

    @Test func anUnknownRecordTypeIsSkippedAndNamed() throws {
        var writer = Self.discovered()
        writer.record([0x07, 0x01, 0x02], flags: 0x01)
        let imported = try Self.load(writer)
        #expect(imported.warnings.first == CaptureWarning(.undecodableRecord(.unknownPacketType(0x07)), packet: 8))
        #expect(imported.warnings.first?.description == "packet 8: skipped an unknown HCI packet type 0x07")
        #expect(imported.profile.services.map(\.uuid) == ["180D"])
    }

    @Test func anEncryptedLinkWhoseDataWasNotKeptIsReported() throws {
        var writer = Self.discovered()
        writer.event(0x08, [0x00, 0x40, 0x00, 0x01])
        writer.acl(boundary: 2, [0x07, 0x00], sent: false, original: 11)
        writer.acl(boundary: 0, [0x05, 0x00], sent: true, original: 9)
        let imported = try Self.load(writer)
        #expect(imported.warnings.map(\.kind).contains(.encryptedTraffic(hiddenPackets: 2)))
        #expect(!imported.warnings.contains { if case .truncatedPacket = $0.kind { true } else { false } })
        #expect(imported.profile.characteristic(id: "h0003")?.properties == [.read, .notify])
    }

    @Test func aPacketCutShortOnAPlainLinkIsSkipped() throws {
        var writer = Self.discovered()
        writer.acl(boundary: 2, [0x07, 0x00], sent: false, original: 11)
        let imported = try Self.load(writer)
        #expect(imported.warnings.first == CaptureWarning(.truncatedPacket(kept: 7, original: 16), packet: 8))
    }

    @Test func droppedPacketsAbandonTheFrameInProgress() throws {
        var writer = Self.discovered()
        writer.acl(boundary: 2, Array(SnoopWriter.l2cap([0x1B, 0x03, 0x00, 1, 2, 3, 4]).prefix(6)), sent: false)
        writer.att([0x1B, 0x03, 0x00, 0x09], sent: false)
        var dropped = writer
        dropped.records.removeLast()
        dropped.acl(boundary: 2, SnoopWriter.l2cap([0x1B, 0x03, 0x00, 0x09]), sent: false, drops: 3)
        let imported = try Self.load(dropped)
        let kinds = imported.warnings.map(\.kind)
        #expect(kinds.contains(.packetsDropped(count: 3)))
        #expect(
            kinds.contains(
                .fragmentsLost(.abandoned(handle: 0x40, direction: .controllerToHost, expected: 7, received: 2))))
        let notified = imported.scenario.steps.compactMap { step -> Data? in
            if case .notify(_, let value) = step.operation { return value }
            return nil
        }
        #expect(notified == [Data([0x09])])
    }

    @Test func notificationsWithoutACapturedSubscriptionSubscribeFirst() async throws {
        var writer = Self.discovered()
        writer.att([0x1B, 0x03, 0x00, 0x01], sent: false)
        writer.att([0x1B, 0x03, 0x00, 0x02], sent: false)
        let imported = try Self.load(writer)
        let ops = imported.scenario.steps.map(\.operation.name).filter { $0 != "advance" }
        // The two came 1 ms apart, in one connection event: one step, as the link carried them.
        #expect(ops == ["scan", "connect", "discover", "subscribe", "notify"])
        #expect(
            imported.scenario.steps.contains {
                if case .notifyBurst(_, let values) = $0.operation { values == [Data([1]), Data([2])] } else { false }
            })
        #expect(
            imported.warnings.map(\.kind) == [
                .notReplayed(
                    "h0003 sent updates without a subscription the capture showed; the scenario subscribes first")
            ])
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
    }

    /// A capture whose clock goes back (a damaged file, or records merged out of order): the
    /// operations are all kept, with no wait before those after a step back, and the import
    /// says so (it said nothing, and the scenario's waits were silently fewer).
    @Test func aClockThatGoesBackIsNamedAndItsOperationsKept() async throws {
        var writer = Self.discovered()
        writer.time += 2_000_000
        writer.att([0x0A, 0x03, 0x00], sent: true)
        writer.att([0x0B, 0x48], sent: false)
        writer.time -= 10_000_000
        writer.att([0x0A, 0x03, 0x00], sent: true)
        writer.att([0x0B, 0x49], sent: false)
        let imported = try Self.load(writer)
        let reads = imported.scenario.steps.filter { $0.operation.name == "read" }
        #expect(reads.count == 2)
        #expect(
            imported.warnings.map(\.kind).contains(
                .notReplayed(
                    "the capture's clock went back 1 time(s) between operations: each operation after a step back "
                        + "is replayed with no wait before it")))
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
    }

    @Test func requestsWithoutResponsesAndResponsesWithoutRequestsAreSkipped() throws {
        var writer = Self.discovered()
        writer.att([0x0A, 0x03, 0x00], sent: true)
        writer.att([0x0A, 0x03, 0x00], sent: true)
        writer.att([0x0B, 0x01], sent: false)
        writer.att([0x13], sent: false)
        writer.att([0x0A, 0x03, 0x00], sent: true)
        let imported = try Self.load(writer)
        #expect(
            imported.warnings == [
                CaptureWarning(.unansweredRequest(opcode: 0x0A), packet: 8),
                CaptureWarning(.unexpectedResponse(opcode: 0x13), packet: 11),
                CaptureWarning(.unansweredRequest(opcode: 0x0A), packet: 12),
            ])
        #expect(imported.profile.characteristic(id: "h0003")?.initialValue == Data([0x01]))
    }

    @Test func thePeripheralsOwnRequestsAndUndecodablePDUsAreSkipped() throws {
        var writer = Self.discovered()
        writer.att([0x0A, 0x05, 0x00], sent: false)
        writer.att([0x0B, 0x00], sent: true)
        writer.att([0x3F, 0x00], sent: false)
        writer.att([0x0C, 0x03, 0x00, 0x16, 0x00], sent: true)
        writer.att([0x0D, 0x01], sent: false)
        writer.att([0x12, 0x04, 0x00, 0x01, 0x00], sent: true)
        writer.att([0x01, 0x12, 0x04, 0x00, 0x0D], sent: false)
        let imported = try Self.load(writer)
        #expect(
            imported.warnings.map(\.kind) == [
                .undecodableATT(.unknownOpcode(0x3F)),
                .notReplayed(
                    "a Read Blob of handle 0x0003 at offset 22 continues no read the capture showed; it was skipped"),
                .peripheralRequests(count: 1),
            ])
        let ops = imported.scenario.steps.map(\.operation.name).filter { $0 != "advance" }
        #expect(ops == ["scan", "connect", "discover", "inject", "subscribe"])
    }

    @Test func dataOnAHandleNoConnectionAnnouncedIsSkipped() throws {
        var writer = Self.discovered()
        writer.att([0x1B, 0x03, 0x00, 0x01], handle: 0x0050, sent: false)
        writer.att([0x1B, 0x03, 0x00, 0x02], handle: 0x0050, sent: false)
        let imported = try Self.load(writer)
        #expect(imported.warnings == [CaptureWarning(.unknownHandle(0x0050), packet: 8)])
    }

    @Test func dataAfterItsConnectionEndedIsCountedAndSaysSo() throws {
        var writer = Self.discovered()
        writer.disconnected()
        writer.att([0x1B, 0x03, 0x00, 0x01], sent: false)
        writer.att([0x1B, 0x03, 0x00, 0x02], sent: false)
        writer.connected(peer: [1, 2, 3, 4, 5, 6])  // a new connection takes the handle
        writer.att([0x1B, 0x03, 0x00, 0x03], sent: false)
        let imported = try Self.load(writer)
        #expect(
            imported.warnings.map(\.description) == [
                "packet 9: skipped 2 ACL data packets on handle 0x0040 that came after its connection ended "
                    + "(Disconnection Complete)",
                "skipped the connection to 06:05:04:03:02:01 (handle 0x0040); import it with --peer 06:05:04:03:02:01",
            ])
    }

    @Test(arguments: [
        (reason: UInt8(0x16), localCentral: true, by: "disconnect by central"),
        (0x16, false, "disconnect by peripheral"), (0x13, true, "disconnect by peripheral"),
        (0x15, false, "disconnect by central"),
    ])
    func theDisconnectionReasonSaysWhichSideEndedTheLinkWhenNoCommandWasCaptured(
        reason: UInt8, localCentral: Bool, by expected: String
    ) throws {
        // A filtered capture: no HCI_Disconnect, only the Disconnection Complete and its reason.
        var writer = SnoopWriter()
        writer.connected(central: localCentral)
        writer.att([0x0A, 0x03, 0x00], sent: localCentral)
        writer.att([0x01, 0x0A, 0x03, 0x00, 0x0A], sent: !localCentral)
        writer.disconnected(reason: reason)
        let imported = try Self.load(writer)
        #expect(CaptureImportTests.ops(imported.scenario).last == expected)
    }

    @Test func framesOnOtherL2CAPChannelsAreCountedAndNamedWithTheirSPSM() throws {
        var writer = Self.discovered()
        let mtuMPSCredits: [UInt8] = [0xF7, 0x00, 0xF7, 0x00, 0x0A, 0x00]
        func frame(_ payload: [UInt8], channel: UInt16, sent: Bool) {
            writer.acl(boundary: sent ? 0 : 2, SnoopWriter.l2cap(payload, channel: channel), sent: sent)
        }
        // EATT: a Credit Based Connection Request for SPSM 0x0027 (the central receives on
        // 0x0040), answered (the peripheral receives on 0x0041).
        frame([0x17, 0x01, 0x0A, 0x00, 0x27, 0x00] + mtuMPSCredits + [0x40, 0x00], channel: 5, sent: true)
        frame([0x18, 0x01, 0x0A, 0x00] + mtuMPSCredits + [0x00, 0x00, 0x41, 0x00], channel: 5, sent: false)
        for value: UInt8 in 1...3 { frame([0x04, 0x00, 0x1B, 0x03, 0x00, value], channel: 0x0040, sent: false) }
        frame([0x03, 0x00, 0x0A, 0x03, 0x00], channel: 0x0041, sent: true)
        frame([0x0B, 0x10], channel: 6, sent: true)  // the Security Manager's: not reported
        for _ in 1...2 { frame([0x00], channel: 0x0050, sent: false) }  // no channel seen opening
        // An LE Credit Based Connection Request from the peripheral for SPSM 0x0080.
        frame([0x14, 0x02, 0x0A, 0x00, 0x80, 0x00, 0x60, 0x00] + mtuMPSCredits, channel: 5, sent: false)
        frame([0x00, 0x00], channel: 0x0060, sent: true)
        let imported = try Self.load(writer)
        let eatt =
            "an Enhanced ATT (EATT) bearer (SPSM 0x0027): ATT over EATT is not imported, so operations on it "
            + "are missing from the scenario"
        #expect(
            imported.warnings.map(\.description) == [
                "packet 10: skipped 3 L2CAP frames received on channel 0x0040, " + eatt,
                "packet 13: skipped 1 L2CAP frame sent on channel 0x0041, " + eatt,
                "packet 15: skipped 2 L2CAP frames received on channel 0x0050; only ATT on its fixed channel (0x0004) "
                    + "is imported",
                "packet 18: skipped 1 L2CAP frame sent on channel 0x0060, an LE credit-based channel for SPSM 0x0080; "
                    + "only ATT on its fixed channel (0x0004) is imported",
            ])
    }

    @Test(arguments: [(properties: UInt8(0x12), opcode: UInt8(0x1D)), (0x22, 0x1B)])
    func anUpdateOfAKindTheCharacteristicDoesNotDeclareIsKeptAndNamed(properties: UInt8, opcode: UInt8) throws {
        // 2A37 at value handle 3 declares read and notify (0x12), or read and indicate (0x22); the
        // central subscribes to the kind it declares, then gets two updates of the other kind.
        var writer = Self.discovered(properties: properties)
        writer.att([0x12, 0x04, 0x00, properties == 0x12 ? 0x01 : 0x02, 0x00], sent: true)
        writer.att([0x13], sent: false)
        for value: UInt8 in 1...2 {
            writer.att([opcode, 0x03, 0x00, value], sent: false)
            if opcode == 0x1D { writer.att([0x1E], sent: true) }
        }
        let imported = try Self.load(writer)
        let expected =
            opcode == 0x1D
            ? "h0003 sent an indication, which its properties do not declare (they declare notify only); the "
                + "scenario indicates as captured"
            : "h0003 sent a notification, which its properties do not declare (they declare indicate only); the "
                + "scenario notifies as captured"
        #expect(imported.warnings.map(\.description) == ["packet 10: " + expected])
        // Two indications are two steps (each waits for its confirmation); two notifications
        // 1 ms apart came in one connection event and are one step.
        #expect(
            CaptureImportTests.ops(imported.scenario).suffix(2)
                == (opcode == 0x1D ? ["indicate h0003", "indicate h0003"] : ["subscribe h0003", "notify h0003"]))
    }

    @Test func aReadMultipleVariableResponseCutAtTheMTUKeepsTheWholeValues() throws {
        // The list may stop at ATT_MTU − 1 octets (Core Specification Vol 3, Part G, 4.8.5):
        // here inside the second value (1 of its 5 bytes), before any tuple for the third.
        var writer = Self.discovered()
        writer.att([0x20, 0x03, 0x00, 0x04, 0x00, 0x03, 0x00], sent: true)
        writer.att([0x21, 0x02, 0x00, 0x01, 0x02, 0x05, 0x00, 0x01], sent: false)
        writer.att([0x20, 0x03, 0x00, 0x04, 0x00], sent: true)
        writer.att([0x21, 0x02, 0x00, 0x03, 0x04], sent: false)
        let imported = try Self.load(writer)
        #expect(
            imported.warnings.map(\.description) == [
                "packet 9: a Read Multiple Variable response was cut at ATT_MTU − 1 inside the value of handle 0x0004 "
                    + "(1 byte of it came); that read is not replayed",
                "packet 9: a Read Multiple Variable response holds no value for handle 0x0003 (it was cut at "
                    + "ATT_MTU − 1); not replayed",
                "packet 11: a Read Multiple Variable response holds no value for handle 0x0004 (it was cut at "
                    + "ATT_MTU − 1); not replayed",
            ])
        #expect(imported.profile.characteristic(id: "h0003")?.initialValue == Data([0x01, 0x02]))
        let reads = CaptureImportTests.ops(imported.scenario).filter { $0.hasPrefix("read") }
        #expect(reads == ["read h0003", "read h0003"])
    }

    @Test func aSupervisionTimeoutBecomesADisconnectFault() async throws {
        var writer = Self.discovered()
        writer.disconnected(reason: 0x08)
        let imported = try Self.load(writer)
        let last = try #require(imported.scenario.steps.last)
        #expect(last.operation == .fault(.disconnect, role: .central, error: nil))
        let trace = await ScenarioRunner(imported.scenario).run()
        #expect(trace.passed, "\(trace.failures)")
    }

    @Test func aCaptureWithoutAConnectionNamesTheAdvertisersItHeard() {
        var writer = SnoopWriter()
        writer.event(0x3E, [0x02, 0x01, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 0x00, 0xC4])
        #expect(throws: CaptureImportError.noConnection(advertisers: [BluetoothAddress(string: "06:05:04:03:02:01")!]))
        {
            try Self.load(writer)
        }
        #expect(CaptureImportError.noConnection(advertisers: []).description.contains("no LE connection"))
    }

    @Test func aCaptureBegunMidConnectionSaysItsStartIsMissing() {
        // ATT on handle 0x0040 with no LE Connection Complete before it (a rolling snoop log).
        var writer = SnoopWriter()
        writer.att([0x0A, 0x03, 0x00], sent: true)
        writer.att([0x0B, 0x01], sent: false)
        #expect(throws: CaptureImportError.connectionStartNotCaptured(handles: [0x0040])) { try Self.load(writer) }
        #expect(
            CaptureImportError.connectionStartNotCaptured(handles: [0x0040]).description
                == "the capture has data on connection handle 0x0040 but no LE connection event for it: it began "
                + "after the connection came up; start capturing before connecting (on Android, turn the HCI snoop "
                + "log on, then toggle Bluetooth) so the connection's start is in it")
        #expect(
            CaptureImportError.connectionStartNotCaptured(handles: [0x0040, 0x0E01]).description.hasPrefix(
                "the capture has data on connection handles 0x0040, 0x0E01 but no LE connection event for them:"))
    }

    @Test func aPeerWithoutAConnectionListsThoseThatExist() {
        #expect(
            throws: CaptureImportError.peerNotFound(
                BluetoothAddress(string: "01:02:03:04:05:06")!,
                connected: [BluetoothAddress(string: "F1:E2:D3:C4:B5:A6")!])
        ) {
            try Self.load(Self.discovered(), peer: "01:02:03:04:05:06")
        }
    }

    @Test func bytesThatAreNoUsableCaptureAreRejected() {
        #expect(throws: CaptureImportError.notACapture(.notBTSnoop)) {
            try CaptureImporter().importCapture(bytes: Array("hello".utf8), name: "x")
        }
        var h5 = Self.discovered()
        h5.datalink = 1004
        #expect(throws: CaptureImportError.unsupportedDatalink(.h5)) { try Self.load(h5) }
        let missing = S.capturesFolder.appendingPathComponent("missing.btsnoop")
        #expect(throws: CaptureImportError.missingFile(missing.path)) {
            try CaptureImporter().importCapture(contentsOf: missing)
        }
        #expect(throws: CaptureImportError.unreadableFile(S.capturesFolder.path)) {
            try CaptureImporter().importCapture(contentsOf: S.capturesFolder)
        }
    }

    @Test func anH1CaptureImportsLikeAnH4One() throws {
        let h4 = Self.discovered()
        var h1 = SnoopWriter()
        h1.datalink = 1001
        for record in try BTSnoopFile(bytes: h4.bytes).records {
            h1.record(Array(record.data.dropFirst()), flags: record.flags)
        }
        #expect(try Self.load(h1).profile == (try Self.load(h4)).profile)
    }

    @Test func valuesTheReplayedLinkCannotCarryAreSkipped() throws {
        var writer = Self.discovered()
        writer.att([0x1B, 0x03, 0x00] + [UInt8](repeating: 7, count: 21), sent: false)
        writer.att([0x1B, 0x03, 0x00] + [UInt8](repeating: 7, count: 20), sent: false)
        let imported = try Self.load(writer)
        #expect(
            imported.warnings.first?.kind
                == .notReplayed(
                    "an update of 21 bytes of h0003 (more than the 20 bytes the replayed link carries: ATT_MTU − 3, "
                        + "and at most 512, the longest attribute value) is not replayed"))
        let notified = imported.scenario.steps.filter { $0.operation.name == "notify" }
        #expect(notified.count == 1)
    }

    @Test func aSecondDeclarationOfAValueHandleIsLeftOut() throws {
        var writer = SnoopWriter()
        writer.connected()
        writer.att([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], sent: true)
        writer.att([0x11, 0x06, 0x01, 0x00, 0x08, 0x00, 0x0D, 0x18], sent: false)
        writer.att([0x08, 0x01, 0x00, 0x08, 0x00, 0x03, 0x28], sent: true)
        writer.att(
            [0x09, 0x07, 0x02, 0x00, 0x02, 0x05, 0x00, 0x37, 0x2A, 0x04, 0x00, 0x02, 0x05, 0x00, 0x38, 0x2A],
            sent: false)
        let imported = try Self.load(writer)
        #expect(imported.profile.services[0].characteristics.map(\.uuid) == ["2A37"])
        #expect(
            imported.warnings.map(\.kind) == [
                .profileAdjusted(
                    "two characteristic declarations name value handle 0x0005; the one at 0x0004 was left out")
            ])
    }

    @Test func malformedDiscoveryResponsesAreSkipped() throws {
        var writer = Self.discovered()
        writer.att([0x08, 0x01, 0x00, 0x04, 0x00, 0x03, 0x28], sent: true)
        writer.att([0x09, 0x07, 0x04, 0x00, 0x02, 0x03, 0x00, 0x38, 0x2A], sent: false)
        writer.att([0x10, 0x05, 0x00, 0xFF, 0xFF, 0x00, 0x28], sent: true)
        writer.att([0x11, 0x06, 0x09, 0x00, 0x06, 0x00, 0x0F, 0x18], sent: false)
        let imported = try Self.load(writer)
        #expect(imported.profile.services.map(\.uuid) == ["180D"])
        #expect(
            imported.warnings == [
                CaptureWarning(
                    .undecodableATT(
                        .malformed(
                            opcode: 0x09,
                            reason: "the characteristic declared at 0x0004 puts its value at 0x0003, not after it; "
                                + "it was skipped")), packet: 9),
                CaptureWarning(
                    .undecodableATT(
                        .malformed(
                            opcode: 0x11,
                            reason: "the service group 0x0009…0x0006 does not run forwards from a valid handle; "
                                + "it was skipped")), packet: 11),
            ])
    }

    @Test func aShortEventIsSkippedAndNamed() throws {
        var writer = Self.discovered()
        writer.event(0x05, [0x00, 0x40])
        let imported = try Self.load(writer)
        #expect(
            imported.warnings == [
                CaptureWarning(
                    .undecodableEvent(.truncated(what: "Disconnection Complete event", needed: 2, available: 1)),
                    packet: 8)
            ])
    }

    @Test func aLaterConnectionToTheSameDeviceIsNamed() throws {
        var writer = Self.discovered()
        writer.disconnected()
        writer.connected(handle: 0x0041)
        let imported = try Self.load(writer)
        let peer = try #require(BluetoothAddress(string: "F1:E2:D3:C4:B5:A6"))
        #expect(imported.connectionHandle == 0x0040)
        #expect(imported.warnings.map(\.kind) == [.laterConnection(peer: peer, handle: 0x0041)])
        #expect(imported.warnings[0].message.contains("only the first connection to a device is imported"))
    }

    @Test func mtusOutsideTheKitsRangeAreClampedAndUnreadDescriptorsWrittenEmpty() throws {
        var writer = SnoopWriter()
        writer.connected()
        writer.att([0x02, 0x00, 0x04], sent: true)  // the central offers 1024
        writer.att([0x03, 0x00, 0x02], sent: false)  // the peripheral 512
        writer.att([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], sent: true)
        writer.att([0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x0D, 0x18], sent: false)
        writer.att([0x08, 0x01, 0x00, 0x05, 0x00, 0x03, 0x28], sent: true)
        writer.att([0x09, 0x07, 0x02, 0x00, 0x02, 0x03, 0x00, 0x38, 0x2A], sent: false)
        writer.att([0x04, 0x04, 0x00, 0x05, 0x00], sent: true)
        writer.att([0x05, 0x01, 0x04, 0x00, 0x01, 0x29, 0x05, 0x00, 0x04, 0x29], sent: false)
        writer.att([0x0A, 0x05, 0x00], sent: true)
        writer.att([0x01, 0x0A, 0x05, 0x00, 0x02], sent: false)
        let imported = try Self.load(writer)
        #expect(imported.profile.preferredMTU == 512)
        #expect(imported.scenario.centralPreferredMTU == 517)
        let characteristic = try #require(imported.profile.characteristic(id: "h0003"))
        #expect(characteristic.descriptors.map(\.value) == [Data(), Data()])
        #expect(characteristic.descriptorHandles == [4, 5])
        #expect(
            imported.warnings.map(\.kind) == [
                .notReplayed("a read of descriptor 2904 at 0x0005 is not replayed"),
                .profileAdjusted(
                    "descriptor 2901 at handle 0x0004 was not read in the capture; its value is written empty"),
                .profileAdjusted(
                    "descriptor 2904 at handle 0x0005 was not read in the capture; its value is written empty"),
                .profileAdjusted("the central's MTU of 1024 is outside 23…517; it was written as 517"),
            ])
    }

    @Test func cancelledAndReliableWritesAreNotReplayed() throws {
        var writer = Self.discovered()
        writer.att([0x16, 0x03, 0x00, 0x00, 0x00, 0x01], sent: true)
        writer.att([0x17, 0x03, 0x00, 0x00, 0x00, 0x01], sent: false)
        writer.att([0x18, 0x00], sent: true)
        writer.att([0x19], sent: false)
        writer.att([0x16, 0x03, 0x00, 0x00, 0x00, 0x01], sent: true)
        writer.att([0x17, 0x03, 0x00, 0x00, 0x00, 0x01], sent: false)
        writer.att([0x16, 0x04, 0x00, 0x00, 0x00, 0x01], sent: true)
        writer.att([0x17, 0x04, 0x00, 0x00, 0x00, 0x01], sent: false)
        writer.att([0x18, 0x01], sent: true)
        writer.att([0x19], sent: false)
        let imported = try Self.load(writer)
        #expect(
            imported.warnings.map(\.kind) == [
                .notReplayed("a long write to handle 0x0003 was cancelled; it is not replayed"),
                .notReplayed("a reliable write of several parts is not replayed"),
            ])
        #expect(!imported.scenario.steps.contains { $0.operation.name == "write" })
    }

    @Test func aLinuxMonitorCaptureImportsLikeAnH4One() throws {
        let h4 = Self.discovered()
        var monitor = SnoopWriter()
        monitor.datalink = 2001
        for record in try BTSnoopFile(bytes: h4.bytes).records {
            let opcode: UInt32 =
                switch record.data[0] {
                case 0x01: 2
                case 0x04: 3
                default: record.isReceived ? 5 : 4
                }
            monitor.record(Array(record.data.dropFirst()), flags: opcode)
        }
        #expect(try Self.load(monitor).profile == (try Self.load(h4)).profile)
    }

    @Test func aLinuxMonitorCaptureKeepsEachControllersConnectionsApart() throws {
        // btmon records every controller of the machine; both number their first link 0x0040.
        var monitor = SnoopWriter()
        monitor.datalink = 2001
        func event(controller: UInt32, _ code: UInt8, _ parameters: [UInt8]) {
            monitor.record([code, UInt8(parameters.count)] + parameters, flags: controller << 16 | 3)
        }
        func att(controller: UInt32, _ pdu: [UInt8], sent: Bool) {
            let frame = SnoopWriter.l2cap(pdu)
            monitor.record(
                le16(0x0040 | (sent ? 0 : 0x2000)) + le16(UInt16(frame.count)) + frame,
                flags: controller << 16 | (sent ? 4 : 5))
        }
        for (controller, peer) in [(UInt32(0), UInt8(1)), (1, 2)] {
            event(
                controller: controller, 0x3E,
                [0x01, 0x00, 0x40, 0x00, 0x00, 0x01] + [UInt8](repeating: peer, count: 6) + [0x18, 0, 0, 0, 0x48, 0, 0])
        }
        for controller: UInt32 in [0, 1] {
            att(controller: controller, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], sent: true)
        }
        att(controller: 1, [0x11, 0x06, 0x0C, 0x00, 0x0F, 0x00, 0x0D, 0x18], sent: false)
        // Controller 1's link ends (Disconnection Complete, reason 0x13); controller 0's goes on.
        event(controller: 1, 0x05, [0x00, 0x40, 0x00, 0x13])
        att(controller: 0, [0x11, 0x06, 0x0C, 0x00, 0x0F, 0x00, 0x0F, 0x18], sent: false)
        let first = try Self.load(monitor, peer: "01:01:01:01:01:01")
        let second = try Self.load(monitor, peer: "02:02:02:02:02:02")
        #expect(first.profile.services.map(\.uuid) == ["180F"])
        #expect(second.profile.services.map(\.uuid) == ["180D"])
        #expect(
            first.warnings.map(\.message) == [
                "skipped the connection to 02:02:02:02:02:02 (handle 0x0040); import it with --peer 02:02:02:02:02:02"
            ])
    }

    @Test func descriptorLookupsFindWhatDiscoveryDescribedUpToEachCharacteristicsEnd() {
        // 180D at 0x000C…0x0038: 2A37 declared at 0x000D (value 0x000E), 2A38 at 0x0020 (value
        // 0x0021); 180F at 0x0030…0x0034 inside it (as a damaged capture may have): 2A19 at
        // 0x0031 (value 0x0032); 2A00 at 0x0040, outside every service; 1810 at 0x0050…0xFFFF:
        // 2A35 at 0x0051 (value 0x0052).
        var gatt = CapturedGATT()
        for (handle, end, uuid): (UInt16, UInt16, BluetoothUUID) in [
            (0x000C, 0x0038, "180D"), (0x0030, 0x0034, "180F"), (0x0050, 0xFFFF, "1810"),
        ] {
            gatt.services[handle] = .init(handle: handle, endHandle: end, uuid: uuid, isPrimary: true)
        }
        for (declaration, uuid): (UInt16, BluetoothUUID) in [
            (0x000D, "2A37"), (0x0020, "2A38"), (0x0031, "2A19"), (0x0040, "2A00"), (0x0051, "2A35"),
        ] {
            gatt.characteristics[declaration] = .init(
                declarationHandle: declaration, valueHandle: declaration + 1, properties: 0x12, uuid: uuid)
        }
        for handle: UInt16 in [0x000F, 0x001F, 0x0022, 0x0030, 0x0033, 0x0035, 0x0042, 0x0053, 0xFFFF] {
            gatt.types[handle] = .clientCharacteristicConfiguration
        }
        gatt.types[0x0020] = CapturedGATT.characteristic
        gatt.types[0x000E] = "2A37"
        let index = CapturedGATT.DescriptorIndex(gatt)
        func found(_ handle: UInt16) -> BluetoothUUID? {
            guard let (characteristic, descriptor) = index.descriptor(at: handle) else { return nil }
            #expect(descriptor == .init(handle: handle, uuid: .clientCharacteristicConfiguration))
            return characteristic.uuid
        }
        #expect(found(0x000F) == "2A37")  // the first handle after the value
        #expect(found(0x001F) == "2A37")  // the last before the next declaration
        #expect(found(0x0020) == nil)  // the next declaration
        #expect(found(0x000E) == nil)  // a value, not a descriptor
        #expect(found(0x0010) == nil)  // no type reported
        #expect(found(0x0022) == "2A38")
        #expect(found(0x0030) == "2A38")  // before 2A19's declaration, in 180D
        #expect(found(0x0033) == "2A19")  // in the service that starts last
        #expect(found(0x0035) == nil)  // past 180F's end and past 2A38's
        #expect(found(0x0042) == nil)  // after a characteristic outside every service
        #expect(found(0x0053) == "2A35")
        #expect(found(0xFFFF) == "2A35")  // the last handle of a service running to the end
        // The index answers as walking each characteristic's descriptors does, for every handle.
        var walked: [UInt16: CapturedGATT.Characteristic] = [:]
        for characteristic in gatt.characteristics.values {
            for descriptor in gatt.descriptors(of: characteristic) { walked[descriptor.handle] = characteristic }
        }
        let mismatches = (UInt16(0)...UInt16.max).filter { index.descriptor(at: $0)?.0 != walked[$0] }
        #expect(mismatches.isEmpty)
    }

    @Test func aDocumentTheFormatRejectsIsAnInvalidOutputError() {
        #expect {
            try CaptureImport(
                name: "x", format: .btsnoop, peer: BluetoothAddress(string: "01:02:03:04:05:06")!, connectionHandle: 1,
                isLocalCentral: true, profileValue: .object(["rssi": .int(5)]), scenarioHeader: [], steps: [],
                warnings: [])
        } throws: { error in
            guard case CaptureImportError.invalidOutput(let fixtureError) = error else { return false }
            return fixtureError.kind == .valueOutOfRange && fixtureError.file == "x.peripheral.json"
        }
    }

    @Test func anMTUExchangeThePeripheralAskedForCounts() throws {
        var writer = Self.discovered()
        writer.att([0x02, 0x40, 0x00], sent: false)  // the peripheral offers 64
        writer.att([0x03, 0xB9, 0x00], sent: true)  // the central 185
        let imported = try Self.load(writer)
        #expect(imported.profile.preferredMTU == 64)
        #expect(imported.scenario.centralPreferredMTU == 185)
        #expect(imported.warnings.isEmpty)
    }
}
