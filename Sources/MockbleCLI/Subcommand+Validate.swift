import BLEMockKit
import Foundation

extension Subcommand {
    /// `mockble validate`: checks fixtures and scenarios without running them.
    public static let validate = Subcommand(
        name: "validate", summary: "Check peripheral profiles and scenarios without running them.",
        help: """
            Usage: mockble validate FILE...

            Reads each FILE as a scenario (a JSON object with "steps" or "peripheral") or a
            peripheral profile and checks it against the format: unknown fields and ops, bad
            UUIDs, durations and byte values, unknown characteristics, a missing profile file.
            Prints one line per file: "ok" with what it is, or the error with its file, line,
            column and fix.

            Options:
              -h, --help   Show this help.

            Exit status: 0 every file is valid, 2 one is not (or no file was named).
            """,
        perform: { arguments, console in
            let files: [String]
            do throws(ArgumentList.Problem) {
                files = try ArgumentList(arguments, options: [], flags: []).positionals
            } catch {
                console.printError("mockble validate: \(error.message)")
                return .badInput
            }
            guard !files.isEmpty else {
                console.printError(
                    "mockble validate: name at least one file, e.g. mockble validate Fixtures/scenarios/*.json")
                return .badInput
            }
            var status = CommandStatus.success
            for file in files {
                switch FileKind(path: file) {
                case .folder:
                    let folder = file.hasSuffix("/") && file.count > 1 ? String(file.dropLast()) : file
                    console.printError(
                        "mockble validate: `\(file)` is a folder; `validate` expects files (.json), "
                            + "e.g. mockble validate \(folder)/*.json")
                    status = .badInput
                    continue
                case .capture:
                    console.printError(
                        "mockble validate: `\(file)` is a Bluetooth capture; `validate` expects profiles and "
                            + "scenarios (.json) — `mockble import \(file)` makes them from it")
                    status = .badInput
                    continue
                case .recording:
                    console.printError(
                        "mockble validate: `\(file)` is a recording; `validate` expects profiles and scenarios "
                            + "(.json) — `mockble import \(file)` makes them from it")
                    status = .badInput
                    continue
                default:
                    break
                }
                switch FixtureValidation.check(URL(fileURLWithPath: file)) {
                case .success(let summary):
                    console.print("ok: \(file): \(summary)")
                case .failure(let error):
                    console.printError("invalid: \(error)")
                    status = .badInput
                }
            }
            return status
        })
}

/// Checks one fixture or scenario file.
enum FixtureValidation {
    /// A summary of the valid file (e.g. `scenario "x", realistic mode, 9 steps`), or its error.
    static func check(_ url: URL) -> Result<String, FixtureError> {
        do throws(FixtureError) {
            switch try FixtureDocument.load(contentsOf: url) {
            case .scenario(let scenario):
                let expectations = scenario.steps.filter { $0.expectation != nil }.count
                return .success(
                    "scenario \"\(scenario.name)\", \(scenario.mode.rawValue) mode, "
                        + "\(Plural.count(scenario.steps.count, "step")), \(Plural.count(expectations, "expectation"))")
            case .profile(let profile):
                let count = profile.services.reduce(0) { $0 + $1.characteristics.count }
                return .success(
                    "peripheral profile \"\(profile.name ?? "(unnamed)")\", "
                        + "\(Plural.count(profile.services.count, "service")), \(Plural.count(count, "characteristic"))"
                )
            }
        } catch {
            return .failure(error)
        }
    }
}
