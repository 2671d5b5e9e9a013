import Foundation

/// Finds the bundled `Fixtures/` directory of the kit's checkout.
enum FixtureDirectory {
    /// The checkout's `Fixtures` directory: found from this source file's path when the tool
    /// runs from a checkout (as `swift run mockble` does), else `Fixtures` in the current
    /// directory.
    static var root: URL {
        let fromSource = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // MockbleCLI
            .deletingLastPathComponent()  // Sources
            .deletingLastPathComponent()  // the checkout
            .appendingPathComponent("Fixtures", isDirectory: true)
        if FileManager.default.fileExists(atPath: fromSource.path) { return fromSource }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appendingPathComponent("Fixtures", isDirectory: true)
    }

    /// The bundled peripheral profiles' directory.
    static var peripherals: URL { root.appendingPathComponent("peripherals", isDirectory: true) }

    /// The checkout's `Fixtures/peripherals` (found from `source`, this file's path when the
    /// tool was built), else `Fixtures/peripherals` in `currentDirectory`, if either exists;
    /// `nil` outside a checkout (an installed `mockble`), where the profiles built into the
    /// kit stand in.
    static func existingPeripherals(
        source: String = #filePath, currentDirectory: String = FileManager.default.currentDirectoryPath
    ) -> URL? {
        let checkout = URL(fileURLWithPath: source)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [checkout, URL(fileURLWithPath: currentDirectory)].map {
            $0.appendingPathComponent("Fixtures/peripherals", isDirectory: true)
        }
        return candidates.first { FileKind(path: $0.path) == .folder }
    }

    /// The `.json` files directly in `directory`, sorted by name.
    static func jsonFiles(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "json" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}
