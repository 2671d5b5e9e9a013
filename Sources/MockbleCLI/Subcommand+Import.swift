import BLECapture
import BLEMockKit
import Foundation

extension Subcommand {
    /// `mockble import`: turns a btsnoop or PacketLogger capture, or a session an app recorded,
    /// into a peripheral profile and a scenario.
    public static let `import` = Subcommand(
        name: "import", summary: "Turn a btsnoop/PacketLogger capture or a recording into a profile and a scenario.",
        help: """
            Usage: mockble import CAPTURE [--peer ADDRESS] [--out DIR]
                   mockble import RECORDING [--peer UUID] [--placeholder NAME=HEX,...] [--out DIR]

            Reads a btsnoop capture (H4, H1 or Linux monitor datalink: Android's
            btsnoop_hci.log, btmon -w, bumble's snooper) or an Apple PacketLogger capture
            (.pklg: PacketLogger on a Mac, the Bluetooth log of an iOS sysdiagnose; the
            content tells the format), follows one LE connection — the only one, or the one
            to ADDRESS — and writes into DIR:

              NAME.peripheral.json  the peripheral: its GATT database rebuilt from the
                                    discovery the capture shows (with the handles it had),
                                    the values read, its advertisement and MTU
              NAME.scenario.json    a fast-mode scenario replaying the connection: reads with
                                    their values, writes, subscriptions, notifications and
                                    indications at their captured times, ATT errors injected
                                    where the peripheral answered with one

            NAME is the capture's file name without its extension. Check the outputs with
            mockble validate and replay them with mockble run NAME.scenario.json.

            A RECORDING is a session an app recorded through the kit's recorder
            (RecordingCentralManager, or CBMCentralManager.sessionRecorder): a JSON file,
            {"format": "mockble-recording", ...}, known by its name (....json) or its first
            character ({). It imports the same way, following the first peripheral the app
            connected to (or UUID), with every connection and reconnection; values the app
            marked private are written as the HEX given for their placeholder NAME. The link figures the session showed (ATT_MTU, connection
            interval, packets per connection event, throughput) are printed, to seed a
            realistic LinkTiming. NAME is the file's name without .json (and .recording).

            What the capture does not show for certain (lost or truncated packets, an
            encrypted link, other connections, operations a scenario cannot express) is left
            out and listed as warnings on standard error, as are the PacketLogger records
            that hold no HCI packet (Apple's notes and log lines), counted by kind.

            Options:
              --peer ADDRESS  Follow the connection to ADDRESS (e.g. F1:E2:D3:C4:B5:A6); for a
                              recording, the peripheral with identifier UUID.
              --placeholder NAME=HEX,...
                              For a recording: the bytes each private value's placeholder
                              stands for (e.g. token=0011aabb).
              --out DIR       Write the files into DIR (created if needed; default: the
                              current directory).
              -h, --help      Show this help.

            Exit status: 0 imported (perhaps with warnings), 2 bad input (unknown option,
            missing or unusable capture, no connection, no connection to ADDRESS).
            """,
        perform: { arguments, console in
            let list: ArgumentList
            let file: String
            do throws(ArgumentList.Problem) {
                list = try ArgumentList(arguments, options: ["peer", "out", "placeholder"], flags: [])
                file = try list.onlyPositional(
                    of: "import", naming: "capture", example: "Fixtures/captures/discovery-reads.btsnoop")
            } catch {
                console.printError("mockble import: \(error.message)")
                return .badInput
            }
            if Subcommand.isRecording(file) { return importRecording(file, list, console) }
            if list.option("placeholder") != nil {
                console.printError(
                    "mockble import: --placeholder is for a recording's private values; \(file) is a capture, "
                        + "which keeps every value as it crossed: leave out --placeholder")
                return .badInput
            }
            var importer = CaptureImporter()
            if let text = list.option("peer") {
                guard let address = BluetoothAddress(string: text) else {
                    console.printError("mockble import: \(CaptureImportError.invalidPeerAddress(text))")
                    return .badInput
                }
                importer.peer = address
            }
            let imported: CaptureImport
            do throws(CaptureImportError) {
                imported = try importer.importCapture(contentsOf: URL(fileURLWithPath: file))
            } catch {
                console.printError("mockble import: \(file): \(error)")
                return .badInput
            }
            for warning in imported.warnings {
                console.printError("warning: \(file): \(warning)")
            }
            let directory = URL(fileURLWithPath: list.option("out") ?? FileManager.default.currentDirectoryPath)
            let written: (profile: URL, scenario: URL)
            do throws(CaptureImportError) {
                written = try imported.write(to: directory)
            } catch {
                console.printError("mockble import: \(error)")
                return .badInput
            }
            let handle = String(imported.connectionHandle, radix: 16, uppercase: true)
            let padded = String(repeating: "0", count: max(0, 4 - handle.count)) + handle
            console.print("imported the connection to \(imported.peer) (handle 0x\(padded))")
            Subcommand.printWritten(written, profile: imported.profile, scenario: imported.scenario, console)
            if let summary = Subcommand.warningSummary(imported.warnings) { console.print(summary) }
            return .success
        })
}

extension Subcommand {
    /// Whether a file holds a recording (JSON) rather than a capture: not a capture by its
    /// extension (`.pklg`, `.btsnoop`, `.cfa`) or its content (``CaptureFormat/init(detecting:)``:
    /// a PacketLogger file's first record length may start with the byte of `{`), and its first
    /// byte other than white space is `{`; or, whatever its content (an empty file, say, which
    /// is then reported as an empty recording rather than as a capture), named `….json`.
    static func isRecording(_ path: String) -> Bool {
        let pathExtension = URL(fileURLWithPath: path).pathExtension
        if pathExtension.lowercased() == "json" { return true }
        guard CaptureFormat(fileExtension: pathExtension) == nil,
            let handle = FileHandle(forReadingAtPath: path)
        else { return false }
        defer { try? handle.close() }
        // Enough for a PacketLogger file's longest first record.
        let head = Array((try? handle.read(upToCount: Int(PacketLoggerFile.maximumRecordLength) + 4)) ?? Data())
        guard CaptureFormat(detecting: head) == nil else { return false }
        return head.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) } == UInt8(ascii: "{")
    }

    /// `mockble import RECORDING`.
    static func importRecording(_ file: String, _ list: ArgumentList, _ console: Console) -> CommandStatus {
        var importer = RecordingImporter()
        if let text = list.option("peer") {
            guard let identifier = UUID(uuidString: text) else {
                console.printError(
                    "mockble import: \"\(text)\" is not a peripheral identifier; a recording names peripherals by "
                        + "UUID, e.g. E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
                return .badInput
            }
            importer.peripheral = identifier
        }
        for pair in (list.option("placeholder") ?? "").split(separator: ",") {
            // (`token=` gives an empty value.)
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, let bytes = try? FixtureBytes.bytes(hex: parts[1]) else {
                console.printError(
                    "mockble import: --placeholder takes NAME=HEX pairs separated by commas, e.g. token=0011aabb; "
                        + "not \"\(pair)\"")
                return .badInput
            }
            guard importer.placeholders[String(parts[0])] == nil else {
                console.printError(
                    "mockble import: --placeholder gives \(parts[0]) twice; give each placeholder one value")
                return .badInput
            }
            importer.placeholders[String(parts[0])] = bytes
        }
        let imported: RecordingImport
        let written: (profile: URL, scenario: URL)
        do throws(RecordingImportError) {
            imported = try importer.importRecording(contentsOf: URL(fileURLWithPath: file))
            for warning in imported.warnings { console.printError("warning: \(file): \(warning)") }
            let directory = URL(fileURLWithPath: list.option("out") ?? FileManager.default.currentDirectoryPath)
            written = try imported.write(to: directory)
        } catch {
            console.printError("mockble import: \(file): \(error)")
            return .badInput
        }
        console.print("imported the session with peripheral \(imported.peripheral.uuidString)")
        printWritten(written, profile: imported.profile, scenario: imported.scenario, console)
        console.print("link: " + Self.describe(imported.linkFigures))
        if !imported.warnings.isEmpty {
            console.print("\(Plural.count(imported.warnings.count, "warning")) (see above)")
        }
        return .success
    }

    /// What an import wrote: the profile with its services and characteristics, the scenario
    /// with its steps.
    static func printWritten(
        _ written: (profile: URL, scenario: URL), profile: PeripheralProfile, scenario: Scenario, _ console: Console
    ) {
        let characteristics = profile.services.reduce(0) { $0 + $1.characteristics.count }
        console.print(
            "wrote \(written.profile.path): \(Plural.count(profile.services.count, "service")), "
                + Plural.count(characteristics, "characteristic"))
        console.print("wrote \(written.scenario.path): \(Plural.count(scenario.steps.count, "step"))")
    }

    /// The link figures on one line, e.g. `ATT_MTU 185, 2 connections, 361 notifications in
    /// 91 connection events, interval 29.7ms, 4 packets per event, notifications 24159 B/s,
    /// writes without response queued at 34345 B/s` (the app's rate: see
    /// ``LinkFigures/writeWithoutResponseThroughput``).
    static func describe(_ figures: LinkFigures) -> String {
        var parts: [String] = []
        if let mtu = figures.mtu {
            parts.append(mtu == SessionRecording.lowerBoundMTU ? "ATT_MTU \(mtu) or more" : "ATT_MTU \(mtu)")
        }
        parts.append(Plural.count(figures.connections, "connection"))
        parts.append(
            Plural.count(figures.notifications, "notification") + " in "
                + Plural.count(figures.notificationEvents, "connection event"))
        if let interval = figures.connectionInterval {
            let milliseconds = interval.seconds * 1e3
            parts.append("interval \((milliseconds * 10).rounded() / 10)ms")
        } else {
            // No two connection events back to back: the session does not show the interval.
            parts.append("interval unknown")
        }
        if let packets = figures.packetsPerConnectionEvent { parts.append("\(packets) packets per event") }
        if let rate = figures.notificationThroughput { parts.append("notifications \(rate) B/s") }
        if let rate = figures.writeWithoutResponseThroughput {
            parts.append("writes without response queued at \(rate) B/s")
        }
        return parts.joined(separator: ", ")
    }

    /// The closing line of an import with warnings: how many, and how many of each kind, e.g.
    /// `3 warnings (see above): 2 about skipped PacketLogger records, 1 about the profile`.
    /// `nil` without warnings.
    static func warningSummary(_ warnings: [CaptureWarning]) -> String? {
        guard !warnings.isEmpty else { return nil }
        var counts: [(topic: String, count: Int)] = []
        for warning in warnings {
            let topic = Self.topic(of: warning.kind)
            if let index = counts.firstIndex(where: { $0.topic == topic }) {
                counts[index].count += 1
            } else {
                counts.append((topic, 1))
            }
        }
        let parts = counts.map { "\($0.count) about \($0.topic)" }.joined(separator: ", ")
        return "\(Plural.count(warnings.count, "warning")) (see above): \(parts)"
    }

    /// What a warning is about, as the summary groups them.
    static func topic(of kind: CaptureWarning.Kind) -> String {
        switch kind {
        case .file, .packetLoggerFile: "a damaged file"
        case .skippedRecords: "skipped PacketLogger records"
        case .undecodableRecord, .undecodableEvent, .undecodableATT, .truncatedPacket, .packetsDropped,
            .fragmentsLost:
            "packets that could not be read"
        case .encryptedTraffic: "encrypted traffic"
        case .otherConnection, .laterConnection, .unknownHandle, .dataAfterDisconnection: "other connections"
        case .unansweredRequest, .unexpectedResponse, .peripheralRequests, .notReplayed, .otherChannel:
            "exchanges not replayed"
        case .profileAdjusted: "the profile"
        }
    }
}
