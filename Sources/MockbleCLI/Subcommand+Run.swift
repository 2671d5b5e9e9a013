import BLEMockKit
import Foundation

extension Subcommand {
    /// `mockble run`: runs a scenario and prints its trace.
    public static let run = Subcommand(
        name: "run", summary: "Run a scenario and print its trace.",
        help: """
            Usage: mockble run FILE [--format text|json|mermaid|html] [--seed N]
                               [--mode fast|realistic] [--out PATH]

            Runs the scenario in FILE against its simulated peripheral and prints what each
            step did: a timeline (text, the default: each step ok, xfail when it failed as its
            "expect" said with "ok": false, or FAILED), one JSON object per step (json; the
            same scenario and seed always give the same bytes), a Mermaid sequence diagram,
            or one self-contained HTML page (html: a timeline with a lane for the central and
            the peripheral, every exchange with its bytes and ATT PDUs, connections, MTU,
            faults, errors and queue fill, the seed in its header; no external assets, so
            it opens in any browser, offline). FILE is a scenario (a JSON object with
            "steps"), not a peripheral profile: a scenario names its profile in
            "peripheral". Fixtures/README.md describes both.

            Options:
              --format F   text (default), json, mermaid or html.
              --seed N     Run with seed N instead of the file's (0 to 2^64-1).
              --mode M     Run in fast or realistic mode instead of the file's.
              --out PATH   Write the trace to PATH instead of standard output (a file
                           there is replaced; a device or a named pipe is written to).
              -h, --help   Show this help.

            Exit status: 0 every "expect" held, 1 one failed (the step is named on standard
            error; the trace is still written), 2 bad input (unknown option; a missing or
            invalid file, or not a scenario; PATH cannot be written).
            """,
        perform: { arguments, console in
            let options: RunOptions
            do throws(ArgumentList.Problem) {
                options = try RunOptions(arguments)
            } catch {
                console.printError("mockble run: \(error.message)")
                return .badInput
            }
            let file = options.file
            let url = URL(fileURLWithPath: file)
            if let mismatch = ScenarioArgument.mismatch(file, command: "run") {
                console.printError(mismatch)
                return .badInput
            }
            let scenario: Scenario
            do throws(FixtureError) {
                scenario = try Scenario.load(
                    contentsOf: url, overrides: Scenario.Overrides(seed: options.seed, mode: options.mode))
            } catch {
                console.printError(ScenarioArgument.loadFailure(file, error, command: "run"))
                return .badInput
            }
            let trace = await ScenarioRunner(scenario).run()
            let output: String =
                switch options.format {
                case "json": trace.json
                case "mermaid": trace.mermaid(for: scenario)
                case "html": trace.html(for: scenario)
                default: trace.text(for: scenario)
                }
            if let path = options.out {
                do {
                    try OutputFile.write(Data(output.utf8), to: path)
                } catch {
                    console.printError("mockble run: cannot write \(path): \(Self.whyUnwritable(path, error))")
                    return .badInput
                }
            } else {
                console.write(output)
            }
            guard trace.passed else {
                for failure in trace.failures {
                    console.printError("mockble run: \(file): \(failure)")
                }
                return .failure
            }
            return .success
        })
}

/// The arguments of `mockble run`.
struct RunOptions {
    var file: String
    var format: String
    var seed: UInt64?
    var mode: Scenario.Mode?
    /// Where to write the trace (`--out`); standard output when `nil`.
    var out: String?

    init(_ arguments: [String]) throws(ArgumentList.Problem) {
        let list = try ArgumentList(arguments, options: ["format", "seed", "mode", "out"], flags: [])
        file = try list.onlyPositional(
            of: "run", naming: "scenario file", example: "Fixtures/scenarios/heart-rate-basic.json")
        format = try list.choice("format", of: ["text", "json", "mermaid", "html"], default: "text")
        out = list.option("out")
        seed = try list.seed("seed")
        if list.option("mode") != nil {
            mode = Scenario.Mode(rawValue: try list.choice("mode", of: ["fast", "realistic"], default: "fast"))
        }
    }
}

extension Subcommand {
    /// Why an output file could not be written, in words (a folder at the path, or a folder
    /// missing on the way to it; else what the system said).
    static func whyUnwritable(_ path: String, _ error: any Error) -> String {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            return "it is a folder; give a file path, e.g. \(path)/trace.txt"
        }
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if !FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder) || !isFolder.boolValue {
            return "there is no folder \(parent); create it first"
        }
        return error.localizedDescription
    }
}
