import BLECore
import BLEMockKit

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns a `SessionRecording` — a session an app recorded through a
/// `RecordingCentralManager` or a recording `CBMCentralManager` — into a peripheral profile
/// and a scenario that replays it, as ``CaptureImporter`` does for a Bluetooth capture (the
/// same builders write both).
///
/// The profile is what the session discovered — services, characteristics with their
/// properties and handles, descriptors, the values read — with the advertisement heard and
/// the ATT_MTU the link negotiated. The scenario runs in fast mode (with the connection interval
/// the session showed, `link.connectionInterval`, for a realistic replay): scan, connect, discover,
/// then reads with the values they got, writes, subscriptions, notifications and indications
/// with their payloads, ATT errors injected where the peripheral answered with one, and each
/// disconnection and reconnection, with `advance` steps keeping the recorded times (counted
/// from the first connection).
///
/// ```swift
/// let imported = try RecordingImporter(placeholders: ["token": Data([1, 2, 3, 4])])
///     .importRecording(recorder.recording, name: "watch-sync")
/// let trace = await ScenarioRunner(imported.scenario).run()
/// ```
public struct RecordingImporter: Sendable {
    /// The peripheral whose session to follow; `nil` follows the first one connected.
    public var peripheral: UUID?
    /// The value each placeholder of a private value stands for in the outputs. Defaults to none.
    public var placeholders: [String: Data]

    /// Creates an importer.
    public init(peripheral: UUID? = nil, placeholders: [String: Data] = [:]) {
        self.peripheral = peripheral
        self.placeholders = placeholders
    }

    /// Imports a recording file; the outputs are named after it (without `.json` and a
    /// `.recording` before it).
    ///
    /// - Throws: ``RecordingImportError/missingFile(_:)``,
    ///   ``RecordingImportError/unreadableFile(_:)``,
    ///   ``RecordingImportError/invalidRecording(_:)``, or an error of
    ///   ``importRecording(_:name:)``.
    public func importRecording(contentsOf url: URL) throws(RecordingImportError) -> RecordingImport {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw FileManager.default.fileExists(atPath: url.path) ? .unreadableFile(url.path) : .missingFile(url.path)
        }
        let recording: SessionRecording
        do throws(FixtureError) {
            recording = try SessionRecording(json: data, file: url.lastPathComponent)
        } catch {
            throw .invalidRecording(error)
        }
        var name = url.deletingPathExtension().lastPathComponent
        if name.hasSuffix(".recording") { name.removeLast(".recording".count) }
        return try importRecording(recording, name: name)
    }

    /// Imports a recording.
    ///
    /// - Parameters:
    ///   - recording: the session, as a `SessionRecorder` kept it or a file held it.
    ///   - name: the scenario's name, and the stem of the output files' names (made safe as a
    ///     file name: see `profileFileName`).
    /// - Throws: ``RecordingImportError/noConnection(advertisers:)`` when the recording shows
    ///   no connection, ``RecordingImportError/peripheralNotFound(_:connected:)`` when none
    ///   goes to ``peripheral``, ``RecordingImportError/missingPlaceholder(_:supplied:)`` when
    ///   a private value has no value in ``placeholders``.
    public func importRecording(_ recording: SessionRecording, name: String) throws(RecordingImportError)
        -> RecordingImport
    {
        let connected = recording.connectedPeripherals
        let followed: UUID
        if let peripheral {
            guard connected.contains(peripheral) else { throw .peripheralNotFound(peripheral, connected: connected) }
            followed = peripheral
        } else {
            guard let first = connected.first else {
                var advertisers: [UUID] = []
                for entry in recording.entries {
                    if case .discovered(let advertiser, _, _, _) = entry.event, !advertisers.contains(advertiser) {
                        advertisers.append(advertiser)
                    }
                }
                throw .noConnection(advertisers: advertisers)
            }
            followed = first
        }
        let session = try RecordedConversation(
            recording, peripheral: followed, placeholders: placeholders.mapValues { Array($0) })
        let profile = ProfileBuilder(
            conversation: session.conversation(of: nil), advertising: session.advertising, source: "recording")
        var steps: [JSONValue] = []
        var warnings = session.warnings + profile.warnings
        var previousEnd: Int64?
        var negotiatedMTU = session.connections.first?.mtu
        var keepsSecurityRefusals = false
        for connection in session.connections {
            if let end = previousEnd, connection.log.start > end {
                let gap = min(Duration.microseconds(connection.log.start - end), FixtureDuration.maximumScenarioWait)
                steps.append(.object(["op": .string("advance"), "by": .string(FixtureDuration.string(gap))]))
            }
            // The header and the profile fix both sides at the first connection's ATT_MTU; a
            // reconnection that negotiated another one sets both sides to it before connecting.
            if connection.mtu != negotiatedMTU {
                for role in ["central", "peripheral"] {
                    steps.append(
                        .object(["op": .string("setMTU"), "mtu": .int(connection.mtu), "role": .string(role)]))
                }
                negotiatedMTU = connection.mtu
            }
            let builder = ScenarioBuilder(
                connection: connection.log, conversation: session.conversation(of: connection), profile: profile,
                linkMTU: connection.mtu, recordedTimes: true)
            steps += builder.steps
            warnings += builder.warnings
            keepsSecurityRefusals = keepsSecurityRefusals || builder.keepsSecurityRefusals
            previousEnd = connection.log.end ?? connection.operations.last?.time ?? connection.log.start
        }
        let ordered = warnings.enumerated().sorted { (first, second) -> Bool in
            let left = (first.element.packet ?? Int.max, first.offset)
            let right = (second.element.packet ?? Int.max, second.offset)
            return left < right
        }
        let description =
            "Imported from \(name) by mockble import: the session with peripheral \(followed.uuidString) as the app "
            + "recorded it (\(session.connections.count) connection(s)). Times count from the first connection."
        var header: [JSONValue.Member] = [
            (key: "name", value: .string(name)),
            (key: "description", value: .string(description)),
            (key: "mode", value: .string("fast")),
            (
                key: "central",
                value: ScenarioBuilder.centralSettings(
                    preferredMTU: session.connections.first?.mtu ?? 23, keepsSecurityRefusals: keepsSecurityRefusals)
            ),
        ]
        // The interval the session showed, for a realistic replay (`mockble run --mode realistic`),
        // as `LinkFigures.linkTiming` takes it.
        let figures = recording.linkFigures(of: followed)
        if figures.connectionInterval != nil {
            let interval = FixtureDuration.string(figures.linkTiming.connectionInterval)
            header.append((key: "link", value: .object(["connectionInterval": .string(interval)])))
        }
        let files: ImportedFiles
        do throws(FixtureError) {
            files = try ImportedFiles(name: name, profileValue: profile.profile, scenarioHeader: header, steps: steps)
        } catch {
            throw .invalidOutput(error)
        }
        return RecordingImport(
            files: files, peripheral: followed, warnings: ordered.map { RecordingImport.Warning($0.element) },
            linkFigures: figures)
    }
}
