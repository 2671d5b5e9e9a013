import BLECore
import BLEMockKit
import Foundation

extension Subcommand {
    /// `mockble fixtures`: lists the bundled peripheral profiles with their services.
    public static let fixtures = Subcommand(
        name: "fixtures", summary: "List the bundled peripheral profiles and their services.",
        help: """
            Usage: mockble fixtures [--dir DIR]

            Lists every peripheral profile (*.json) in the bundled Fixtures/peripherals
            folder, or in DIR, with its name, what it advertises, and its services and
            characteristics (id, UUID, properties). Scenarios in the folder (JSON objects
            with "steps" or "peripheral") are skipped and counted on standard error. Outside a checkout of
            the kit (no Fixtures/peripherals here), it lists the profiles built into the kit,
            which a scenario names as {"bundled": "NAME"}.

            Options:
              --dir DIR   List the profiles in DIR instead of the bundled ones.
              -h, --help  Show this help.

            Exit status: 0 listed, 2 when DIR is not a folder of profiles or a profile cannot
            be loaded (the error is printed).
            """,
        perform: { arguments, console in
            let parsed: ArgumentList
            do throws(ArgumentList.Problem) {
                parsed = try ArgumentList(arguments, options: ["dir"], flags: [])
            } catch {
                console.printError("mockble fixtures: \(error.message)")
                return .badInput
            }
            if let word = parsed.positionals.first {
                let hint =
                    FileKind(path: word) == .folder ? "; to list the profiles in a folder, write --dir \(word)" : ""
                console.printError("mockble fixtures: unexpected argument \"\(word)\"\(hint)")
                return .badInput
            }
            let given = parsed.option("dir")
            if let given, let problem = FixtureListing.problem(withFolder: given) {
                console.printError("mockble fixtures: \(problem)")
                return .badInput
            }
            guard let directory = given.map({ URL(fileURLWithPath: $0) }) ?? FixtureDirectory.existingPeripherals()
            else {
                return FixtureListing.listBuiltIn(console: console)
            }
            let shown = given ?? directory.path
            let files: [URL]
            do {
                files = try FixtureDirectory.jsonFiles(in: directory)
            } catch {
                console.printError("mockble fixtures: cannot list `\(shown)`: \(error.localizedDescription)")
                return .badInput
            }
            guard !files.isEmpty else {
                console.printError("mockble fixtures: `\(shown)` has no .json files; \(FixtureListing.expected)")
                return .badInput
            }
            var status = CommandStatus.success
            var listed = 0
            var scenarios: [String] = []
            for file in files {
                if let data = try? Data(contentsOf: file), FileKind(contents: data) == .scenario {
                    scenarios.append(file.lastPathComponent)
                    continue
                }
                do throws(FixtureError) {
                    let profile = try PeripheralProfile.load(contentsOf: file)
                    console.print(FixtureListing.describe(profile, file: file.lastPathComponent))
                    listed += 1
                } catch {
                    console.printError(error.description)
                    status = .badInput
                }
            }
            guard !scenarios.isEmpty else { return status }
            if listed == 0, status == .success {
                console.printError(
                    "mockble fixtures: `\(shown)` holds \(Plural.count(scenarios.count, "scenario")) and no peripheral "
                        + "profiles; \(FixtureListing.expected) — `run` runs scenarios")
                return .badInput
            }
            console.printError(
                "mockble fixtures: skipped \(Plural.count(scenarios.count, "scenario")) "
                    + "(\(scenarios.joined(separator: ", "))): `fixtures` lists peripheral profiles; `run` runs scenarios"
            )
            return status
        })
}

/// The text `mockble fixtures` prints for one profile, and what it says about a `--dir` that
/// is no folder of profiles.
enum FixtureListing {
    /// What `--dir` expects, for messages about what it was given instead.
    static let expected = "`--dir` expects a folder of peripheral profiles (.json)"

    /// What is wrong with `--dir path` before its files are read: an empty value, nothing
    /// there, a file, or an empty folder; `nil` when it is a folder with something in it.
    static func problem(withFolder path: String) -> String? {
        guard !path.isEmpty else { return "--dir is empty; it expects a folder of peripheral profiles (.json)" }
        switch FileKind(path: path) {
        case .missing:
            return "no such folder: `\(path)`; \(expected)"
        case .folder:
            let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return contents.isEmpty ? "`\(path)` is an empty folder; \(expected)" : nil
        case .profile:
            return "`\(path)` is a peripheral profile; \(expected) — `validate` checks one profile"
        case .scenario:
            return "`\(path)` is a scenario; \(expected) — `run` runs scenarios"
        case .recording:
            return "`\(path)` is a recording; \(expected) — `import` turns a recording into one"
        case .capture, .other:
            return "`\(path)` is a file; \(expected)"
        }
    }

    /// Lists the profiles built into the kit (``BundledProfile``), as the bundled folder's
    /// files would be listed, saying on standard error where they come from.
    static func listBuiltIn(console: Console) -> CommandStatus {
        for bundled in BundledProfile.allCases {
            console.print(describe(PeripheralProfile.bundled(bundled), file: bundled.fileName))
        }
        console.printError(
            "mockble fixtures: no Fixtures/peripherals folder here, so these are the "
                + "\(BundledProfile.allCases.count) profiles built into the kit; a scenario names one as "
                + "{\"peripheral\": {\"bundled\": \"NAME\"}} (NAME: the file name without .json)")
        return .success
    }

    /// The lines for one profile: its file and name, what it advertises, its services and
    /// their characteristics.
    static func describe(_ profile: PeripheralProfile, file: String) -> String {
        var lines = ["\(file): \(profile.name ?? "(unnamed)")"]
        let advertisement = profile.advertisement ?? profile.defaultAdvertisement
        var advertised: [String] = []
        if let name = advertisement.localName { advertised.append("name \"\(name)\"") }
        if !advertisement.serviceUUIDs.isEmpty {
            let uuids = advertisement.serviceUUIDs
            advertised.append(
                Plural.noun(for: uuids.count, "service") + " " + uuids.map(\.description).joined(separator: ", "))
        }
        if !advertised.isEmpty { lines.append("  advertises " + advertised.joined(separator: "; ")) }
        for service in profile.services {
            let kind = service.isPrimary ? "primary" : "secondary"
            let characteristics = Plural.count(service.characteristics.count, "characteristic")
            lines.append("  service \(service.uuid) (\(kind), \(characteristics))")
            for characteristic in service.characteristics {
                let id = characteristic.id.map { "\($0) " } ?? ""
                let properties = characteristic.properties.names.joined(separator: ", ")
                let kind = characteristic.isStatic ? "static" : "dynamic"
                lines.append("    \(id)\(characteristic.uuid) [\(properties)] \(kind)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
