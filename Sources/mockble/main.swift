// mockble: the BLEMockKit command-line tool. Its scenario commands (run, validate, fixtures)
// arrive with the scenario engine; for now it answers --help and --version.

import Foundation

let version = "0.1.0-dev"

let usage = """
    mockble \(version): runs BLEMockKit scenarios against simulated Bluetooth LE peripherals.

    Usage: mockble [--help | --version]

    Options:
      -h, --help     Show this help.
      --version      Show the version.

    Scenario commands (run, validate, fixtures) are not available yet.
    """

func standardError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case nil, "-h", "--help", "help":
    print(usage)
case "--version":
    print("mockble \(version)")
case let other?:
    standardError("mockble: unknown command or option \"\(other)\". Run mockble --help for usage.")
    exit(2)
}
