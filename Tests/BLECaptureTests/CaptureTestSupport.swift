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

    /// A bundled capture's URL.
    static func url(_ name: String) -> URL { capturesFolder.appendingPathComponent("\(name).btsnoop") }

    /// A bundled capture's bytes.
    static func bytes(_ name: String) throws -> [UInt8] { Array(try Data(contentsOf: url(name))) }

    /// Imports a bundled capture.
    static func load(_ name: String, peer: String? = nil) throws -> CaptureImport {
        try CaptureImporter(peer: peer.flatMap(BluetoothAddress.init(string:))).importCapture(contentsOf: url(name))
    }
}
