import BLECore
import BLEMockKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns a capture of a real Bluetooth LE conversation — btsnoop, or Apple's PacketLogger —
/// into a peripheral profile and a scenario that replays it — what `mockble import` does.
///
/// The importer follows one LE connection (the only one, or the one to ``peer``): it rebuilds
/// the GATT database from the discovery the capture shows, keeps the values that were read,
/// the advertisement and the MTUs, and writes the peripheral's side of the conversation as
/// scenario steps — reads with the values they got, writes, subscriptions, notifications and
/// indications with their payloads and times, ATT errors injected where the peripheral
/// answered with one. Both formats go through the same decoding, so a PacketLogger capture
/// imports to the same profile and scenario as a btsnoop capture of the same session
/// (``CaptureFormat`` says how the format is told).
///
/// ```swift
/// let imported = try CaptureImporter().importCapture(contentsOf: captureURL)
/// let trace = await ScenarioRunner(imported.scenario).run()
/// #expect(trace.passed)
/// ```
///
/// A damaged or partial capture still imports what can be trusted; ``CaptureImport/warnings``
/// lists what was skipped. Only a capture with nothing to import fails, with a
/// ``CaptureImportError``.
public struct CaptureImporter: Sendable {
    /// The device whose connection to follow; `nil` follows the first LE connection.
    public var peer: BluetoothAddress?

    /// Creates an importer that follows the connection to `peer` (or the first one).
    public init(peer: BluetoothAddress? = nil) {
        self.peer = peer
    }

    /// Imports a capture file, btsnoop or PacketLogger; the outputs are named after it
    /// (without its extension).
    ///
    /// The content tells the format; the extension (`.pklg`, `.btsnoop`) only decides which
    /// format's error a file that is neither gets.
    ///
    /// - Throws: ``CaptureImportError/missingFile(_:)`` or
    ///   ``CaptureImportError/unreadableFile(_:)``, or any error of
    ///   ``importCapture(bytes:name:format:)``.
    public func importCapture(contentsOf url: URL) throws(CaptureImportError) -> CaptureImport {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw FileManager.default.fileExists(atPath: url.path) ? .unreadableFile(url.path) : .missingFile(url.path)
        }
        return try importCapture(
            bytes: Array(data), name: url.deletingPathExtension().lastPathComponent,
            format: CaptureFormat(fileExtension: url.pathExtension))
    }

    /// Imports a capture from its bytes.
    ///
    /// - Parameters:
    ///   - bytes: the btsnoop or PacketLogger file.
    ///   - name: the scenario's name, and the stem of the output files' names (made safe as a
    ///     file name: see `profileFileName`).
    ///   - format: the format the bytes should have, if the caller knows (from a file name,
    ///     say). Bytes that start with `btsnoop\0` are read as btsnoop and bytes whose
    ///     records read as PacketLogger as PacketLogger, whatever this says; it decides which
    ///     error bytes of neither format get.
    /// - Throws: ``CaptureImportError/notACapture(_:)`` when the bytes are neither format (or
    ///   a damaged btsnoop file), ``CaptureImportError/unreadablePacketLogger(_:)`` when
    ///   `format` is ``CaptureFormat/packetLogger`` and they are not,
    ///   ``CaptureImportError/unsupportedDatalink(_:)`` for a btsnoop datalink other than H1,
    ///   H4 or the Linux monitor, ``CaptureImportError/noConnection(advertisers:)`` when no LE
    ///   connection was captured, ``CaptureImportError/peerNotFound(_:connected:)`` when
    ///   none goes to ``peer``.
    public func importCapture(
        bytes: [UInt8], name: String, format: CaptureFormat? = nil
    ) throws(CaptureImportError) -> CaptureImport {
        let (scan, readFormat) = try Self.scan(bytes, format: format)
        let connection: ConnectionLog
        do throws(CaptureImportError) {
            connection = try choose(from: scan)
        } catch {
            let damage = scan.warnings.filter(\.isDamage)
            throw damage.isEmpty ? error : .damagedCapture(error, damage: damage)
        }
        var warnings = scan.warnings + connection.warnings
        if connection.hiddenWhileEncrypted > 0 {
            warnings.append(CaptureWarning(.encryptedTraffic(hiddenPackets: connection.hiddenWhileEncrypted)))
        }
        for other in scan.connections
        where other.start != connection.start || other.handle != connection.handle
            || other.controller != connection.controller
        {
            warnings.append(
                CaptureWarning(
                    other.peer == connection.peer
                        ? .laterConnection(peer: other.peer, handle: other.handle)
                        : .otherConnection(peer: other.peer, handle: other.handle)))
        }
        let conversation = ATTConversation(connection.pdus)
        let profile = ProfileBuilder(conversation: conversation, advertising: scan.advertising[connection.peer])
        var mtuWarnings: [CaptureWarning] = []
        let centralMTU = conversation.clientMTU.map {
            ProfileBuilder.clampMTU(Int($0), side: "central", warnings: &mtuWarnings)
        }
        var unused: [CaptureWarning] = []  // the profile builder warned about the peripheral's
        let serverMTU = conversation.serverMTU.map {
            ProfileBuilder.clampMTU(Int($0), side: "peripheral", warnings: &unused)
        }
        let linkMTU = min(centralMTU ?? 23, serverMTU ?? 517)
        let steps = ScenarioBuilder(
            connection: connection, conversation: conversation, profile: profile, linkMTU: linkMTU)
        warnings += conversation.warnings + profile.warnings + mtuWarnings + steps.warnings
        // The interval the link carried its traffic at, for a realistic replay (a fast one takes
        // no time for it). The controller's figure, not an estimate: an interval a connection
        // cannot have (outside 7.5 ms…4 s) is left to the bridge's timing, with a warning.
        let interval = connection.busiestInterval.flatMap { units -> Duration? in
            let duration = Duration.microseconds(Int64(units) * 1_250)
            guard (6...3_200).contains(units) else {
                warnings.append(
                    CaptureWarning(
                        .notReplayed(
                            "the connection interval the capture reports, 0x\(hex(units)) (\(FixtureDuration.string(duration))), "
                                + "is outside 7.5ms…4s: a realistic replay takes the bridge's interval")))
                return nil
            }
            return duration
        }
        let ordered = warnings.enumerated().sorted {
            ($0.element.packet ?? .max, $0.offset) < ($1.element.packet ?? .max, $1.offset)
        }
        let role = connection.isLocalCentral ? "the central" : "the peripheral"
        let description =
            "Imported from \(name) by mockble import: the connection to \(connection.peer) (handle "
            + "0x\(hex(connection.handle)); the capturing device was \(role)). Times count from the connection."
        var header: [JSONValue.Member] = [
            (key: "name", value: .string(name)),
            (key: "description", value: .string(description)),
            (key: "mode", value: .string("fast")),
            (
                key: "central",
                value: ScenarioBuilder.centralSettings(
                    preferredMTU: centralMTU ?? 23, keepsSecurityRefusals: steps.keepsSecurityRefusals)
            ),
        ]
        if let interval {
            header.append(
                (key: "link", value: .object(["connectionInterval": .string(FixtureDuration.string(interval))])))
        }
        return try CaptureImport(
            name: name, format: readFormat, peer: connection.peer, connectionHandle: connection.handle,
            isLocalCentral: connection.isLocalCentral, profileValue: profile.profile, scenarioHeader: header,
            steps: steps.steps, warnings: ordered.map(\.element))
    }

    /// Reads the bytes in the format their content shows, and scans their records.
    private static func scan(
        _ bytes: [UInt8], format: CaptureFormat?
    ) throws(CaptureImportError) -> (CaptureScan, CaptureFormat) {
        if !bytes.starts(with: BTSnoopFile.identification) {
            do throws(PacketLoggerError) {
                return (CaptureScan(try PacketLoggerFile(bytes: bytes)), .packetLogger)
            } catch {
                if format == .packetLogger { throw .unreadablePacketLogger(error) }
            }
        }
        let file: BTSnoopFile
        do throws(BTSnoopError) {
            file = try BTSnoopFile(bytes: bytes)
        } catch {
            throw .notACapture(error)
        }
        guard file.datalink.isSupported else { throw .unsupportedDatalink(file.datalink) }
        return (CaptureScan(file), .btsnoop)
    }

    /// The connection to follow.
    private func choose(from scan: CaptureScan) throws(CaptureImportError) -> ConnectionLog {
        let connected = Array(Set(scan.connections.map(\.peer))).sorted()
        if let peer {
            guard let match = scan.connections.first(where: { $0.peer == peer }) else {
                throw .peerNotFound(peer, connected: connected)
            }
            return match
        }
        guard let first = scan.connections.first else {
            let handles = scan.handlesWithoutConnectionEvent
            if !handles.isEmpty { throw .connectionStartNotCaptured(handles: handles) }
            throw .noConnection(advertisers: scan.advertising.keys.sorted())
        }
        return first
    }
}
