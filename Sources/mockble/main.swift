// mockble: the BLEMockKit command-line tool. The commands live in the MockbleCLI library,
// where the tests run them too.

import Foundation
import MockbleCLI

let status = await Mockble.main(arguments: Array(CommandLine.arguments.dropFirst()), console: .standard)
exit(status.rawValue)
