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
            directory, or in DIR, with its name, what it advertises, and its services and
            characteristics (id, UUID, properties).

            Options:
              --dir DIR   List the profiles in DIR instead of the bundled ones.
              -h, --help  Show this help.

            Exit status: 0 listed, 2 when a profile cannot be loaded (the error is printed).
            """,
        perform: { arguments, console in
            let parsed: ArgumentList
            do throws(ArgumentList.Problem) {
                parsed = try ArgumentList(arguments, options: ["dir"], flags: [])
            } catch {
                console.printError("mockble fixtures: \(error.message)")
                return .badInput
            }
            guard parsed.positionals.isEmpty else {
                console.printError("mockble fixtures: unexpected argument \"\(parsed.positionals[0])\"")
                return .badInput
            }
            let directory = parsed.option("dir").map { URL(fileURLWithPath: $0) } ?? FixtureDirectory.peripherals
            let files: [URL]
            do {
                files = try FixtureDirectory.jsonFiles(in: directory)
            } catch {
                console.printError("mockble fixtures: cannot list \(directory.path): no such directory")
                return .badInput
            }
            var status = CommandStatus.success
            for file in files {
                do throws(FixtureError) {
                    let profile = try PeripheralProfile.load(contentsOf: file)
                    console.print(FixtureListing.describe(profile, file: file.lastPathComponent))
                } catch {
                    console.printError(error.description)
                    status = .badInput
                }
            }
            return status
        })
}

/// The text `mockble fixtures` prints for one profile.
enum FixtureListing {
    static func describe(_ profile: PeripheralProfile, file: String) -> String {
        var lines = ["\(file): \(profile.name ?? "(unnamed)")"]
        let advertisement = profile.advertisement ?? profile.defaultAdvertisement
        var advertised: [String] = []
        if let name = advertisement.localName { advertised.append("name \"\(name)\"") }
        if !advertisement.serviceUUIDs.isEmpty {
            advertised.append("services " + advertisement.serviceUUIDs.map(\.description).joined(separator: ", "))
        }
        if !advertised.isEmpty { lines.append("  advertises " + advertised.joined(separator: "; ")) }
        for service in profile.services {
            let kind = service.isPrimary ? "primary" : "secondary"
            lines.append("  service \(service.uuid) (\(kind), \(service.characteristics.count) characteristics)")
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
