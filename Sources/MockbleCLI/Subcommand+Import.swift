import BLECapture
import Foundation

extension Subcommand {
    /// `mockble import`: turns a btsnoop or PacketLogger capture into a peripheral profile and a scenario.
    public static let `import` = Subcommand(
        name: "import", summary: "Turn a btsnoop capture into a peripheral profile and a replay scenario.",
        help: """
            Usage: mockble import CAPTURE [--peer ADDRESS] [--out DIR]

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

            What the capture does not show for certain (lost or truncated packets, an
            encrypted link, other connections, operations a scenario cannot express) is left
            out and listed as warnings on standard error, as are the PacketLogger records
            that hold no HCI packet (Apple's notes and log lines), counted by kind.

            Options:
              --peer ADDRESS  Follow the connection to ADDRESS (e.g. F1:E2:D3:C4:B5:A6).
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
                list = try ArgumentList(arguments, options: ["peer", "out"], flags: [])
                file = try list.onlyPositional(
                    of: "import", naming: "capture", example: "Fixtures/captures/discovery-reads.btsnoop")
            } catch {
                console.printError("mockble import: \(error.message)")
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
            let profile = imported.profile
            let characteristics = profile.services.reduce(0) { $0 + $1.characteristics.count }
            let handle = String(imported.connectionHandle, radix: 16, uppercase: true)
            let padded = String(repeating: "0", count: max(0, 4 - handle.count)) + handle
            console.print("imported the connection to \(imported.peer) (handle 0x\(padded))")
            console.print(
                "wrote \(written.profile.path): \(Plural.count(profile.services.count, "service")), "
                    + Plural.count(characteristics, "characteristic"))
            console.print("wrote \(written.scenario.path): \(Plural.count(imported.scenario.steps.count, "step"))")
            if let summary = Subcommand.warningSummary(imported.warnings) { console.print(summary) }
            return .success
        })
}

extension Subcommand {
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
        case .otherConnection, .laterConnection, .unknownHandle: "other connections"
        case .unansweredRequest, .unexpectedResponse, .peripheralRequests, .notReplayed: "exchanges not replayed"
        case .profileAdjusted: "the profile"
        }
    }
}
