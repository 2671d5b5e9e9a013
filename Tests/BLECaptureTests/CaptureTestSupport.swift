import BLECore
import BLEMockKit
import Foundation
import Testing

@testable import BLECapture

/// The bundled captures (made by `Fixtures/captures/make-captures.py`) and helpers.
enum CaptureTestSupport {
    /// The repository's `Fixtures/captures` folder, found from this file's path.
    static var capturesFolder: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // BLECaptureTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository root
            .appendingPathComponent("Fixtures/captures")
    }

    /// A bundled capture's URL; `pklg` for its PacketLogger twin (made by `make-pklg.py`).
    static func url(_ name: String, _ fileExtension: String = "btsnoop") -> URL {
        capturesFolder.appendingPathComponent("\(name).\(fileExtension)")
    }

    /// A bundled capture's bytes; `pklg` for its PacketLogger twin.
    static func bytes(_ name: String, _ fileExtension: String = "btsnoop") throws -> [UInt8] {
        Array(try Data(contentsOf: url(name, fileExtension)))
    }

    /// Imports a bundled capture.
    static func load(_ name: String, peer: String? = nil) throws -> CaptureImport {
        try CaptureImporter(peer: peer.flatMap(BluetoothAddress.init(string:))).importCapture(contentsOf: url(name))
    }
}
