import Foundation

/// A folder of one test's own under the temporary folder, removed with everything in it when
/// the test lets go of it: a suite keeps one as a stored property, so it goes with the suite's
/// instance at the end of each test (and of each argument of a parameterized test).
///
/// Its name joins a prefix, the process and the object's address, which no other live folder
/// of the process shares; a folder of that name left by a process that stopped mid-test is
/// removed first.
final class ScratchFolder {
    private let prefix: String
    private var root: URL?
    private var count = 0

    init(_ prefix: String) { self.prefix = prefix }

    deinit {
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    /// The folder, made when first asked for.
    var url: URL {
        if let root { return root }
        let address = UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque())
        let made = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(prefix)-\(ProcessInfo.processInfo.processIdentifier)-\(String(address, radix: 16))")
        try? FileManager.default.removeItem(at: made)
        try? FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        root = made
        return made
    }

    /// A new empty folder inside it, a different one on each call.
    func newFolder() throws -> URL {
        count += 1
        let folder = url.appendingPathComponent("\(count)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}
