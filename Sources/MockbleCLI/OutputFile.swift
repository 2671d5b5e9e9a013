import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a command's output to a path it was given (`--out PATH`), as a shell's `>` would: to
/// whatever the path names.
///
/// A regular file (or a new one) is replaced whole, through a temporary file renamed over it, so
/// a reader never sees half a trace; through a symbolic link, the file it points at is replaced
/// and the link stays. Anything else the path names (a device such as `/dev/null` or `/dev/stdout`,
/// a named pipe) is opened and written in place: renaming a file over it would put a regular file
/// where the device or pipe was, and a write that fails (`/dev/full`) would seem to succeed.
enum OutputFile {
    /// Why a write failed: the system's description of its error number.
    struct Failure: Error, LocalizedError, Equatable {
        /// The error number (`errno`).
        var code: Int32

        var errorDescription: String? { String(cString: strerror(code)) }
    }

    /// Writes `data` to `path` (see ``OutputFile``).
    ///
    /// - Throws: ``Failure`` when the path cannot be opened or written in place; whatever
    ///   `Data.write(to:options:)` throws for a regular file.
    static func write(_ data: Data, to path: String) throws {
        var status = stat()
        // `stat` follows links: a link to a device or a pipe is written in place too.
        if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG, status.st_mode & S_IFMT != S_IFDIR {
            return try writeInPlace(data, to: path, flags: O_WRONLY)
        }
        var linkStatus = stat()
        if lstat(path, &linkStatus) == 0, linkStatus.st_mode & S_IFMT == S_IFLNK {
            // The file the link points at, which is replaced; a link to nothing yet gets its file
            // made where it points.
            guard let resolved = realpath(path, nil) else {
                return try writeInPlace(data, to: path, flags: O_WRONLY | O_CREAT | O_TRUNC)
            }
            defer { free(resolved) }
            return try data.write(to: URL(fileURLWithPath: String(cString: resolved)), options: .atomic)
        }
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// Opens `path` with `flags` and writes all of `data` to it.
    private static func writeInPlace(_ data: Data, to path: String, flags: Int32) throws {
        let descriptor = open(path, flags | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw Failure(code: errno) }
        defer { close(descriptor) }
        try write(data, to: descriptor)
    }

    /// Writes all of `data` to the open `descriptor` (standard output, say).
    ///
    /// - Throws: ``Failure`` with the system's error when a write fails.
    static func write(_ data: Data, to descriptor: Int32) throws {
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Failure(code: errno)
                }
                offset += written
            }
        }
    }
}

/// The system's `write(2)` (the name is taken by ``OutputFile/write(_:to:)`` inside the enum).
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
    #elseif canImport(Musl)
        Musl.write(descriptor, bytes, count)
    #else
        Darwin.write(descriptor, bytes, count)
    #endif
}
