import BLEMockKit
import Foundation
import Testing

@testable import MockbleCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where `run --out` and standard output can lead: links, pipes, devices, and streams that fail.
extension RunCommandTests {
    static var uart: String { scenarios.appendingPathComponent("nordic-uart.json").path }

    @Test("run --out through a symbolic link replaces the file it points at and leaves the link a link")
    func outThroughALink() async throws {
        let target = try temporaryFile("trace.jsonl", "old contents")
        let link = target.deletingLastPathComponent().appendingPathComponent("latest.jsonl")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let (status, output) = await run("run", Self.uart, "--format", "json", "--out", link.path)
        #expect(status == .success)
        #expect(output.error.isEmpty && output.output.isEmpty)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
        let (_, printed) = await run("run", Self.uart, "--format", "json")
        #expect(try String(contentsOf: target, encoding: .utf8) == printed.output)
    }

    @Test("run --out through a link to a file not made yet makes the file where the link points")
    func outThroughADanglingLink() async throws {
        let folder = try temporaryFile("placeholder", "").deletingLastPathComponent()
        let target = folder.appendingPathComponent("made.jsonl")
        let link = folder.appendingPathComponent("link.jsonl")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let (status, _) = await run("run", Self.uart, "--format", "json", "--out", link.path)
        #expect(status == .success)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
        let (_, printed) = await run("run", Self.uart, "--format", "json")
        #expect(try String(contentsOf: target, encoding: .utf8) == printed.output)
    }

    @Test("run --out to a named pipe writes the trace into the pipe, which stays a pipe")
    func outToANamedPipe() async throws {
        let fifo = try temporaryFile("placeholder", "").deletingLastPathComponent().appendingPathComponent("trace.fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        // The test holds both ends of the pipe while the run writes (so the run's open does not
        // wait for a reader, and the trace, a kilobyte, fits in the pipe's buffer); once the test
        // lets go of its writing end, the pipe reads to its end, whether or not the run wrote.
        let reader = open(fifo.path, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let writer = open(fifo.path, O_WRONLY | O_NONBLOCK)
        try #require(writer >= 0)
        let (status, output) = await run("run", Self.uart, "--format", "json", "--out", fifo.path)
        close(writer)
        #expect(status == .success)
        #expect(output.error.isEmpty)
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = read(reader, &buffer, buffer.count)
            guard count > 0 else { break }
            received.append(contentsOf: buffer[0..<count])
        }
        let (_, printed) = await run("run", Self.uart, "--format", "json")
        #expect(String(decoding: received, as: UTF8.self) == printed.output)
        var kind = stat()
        #expect(stat(fifo.path, &kind) == 0 && kind.st_mode & S_IFMT == S_IFIFO)
    }

    #if os(Linux)
        @Test("run --out to a device whose writes fail (/dev/full, by a link) exits two naming the system's reason")
        func outToAFullDevice() async throws {
            guard FileManager.default.fileExists(atPath: "/dev/full") else { return }
            // Through a link in a folder of the test's own: were the device replaced by a file,
            // it would be the link that is replaced, never /dev/full.
            let link = try temporaryFile("placeholder", "").deletingLastPathComponent().appendingPathComponent("full")
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/dev/full")
            let (status, output) = await run("run", Self.uart, "--format", "json", "--out", link.path)
            #expect(status == .badInput)
            #expect(output.error == "mockble run: cannot write \(link.path): \(String(cString: strerror(ENOSPC)))\n")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "/dev/full")
        }
    #endif

    @Test("A command whose standard output fails exits two and says why on standard error, writing nothing more to it")
    func failingStandardOutput() async {
        let attempts = CapturedOutput()
        let errors = CapturedOutput()
        struct DiskFull: Error, LocalizedError {
            var errorDescription: String? { "No space left on device" }
        }
        let console = Console(
            output: { text in
                attempts.append(output: text)
                throw DiskFull()
            }, error: { errors.append(error: $0) })
        let status = await Mockble.main(arguments: ["run", Self.uart, "--format", "json"], console: console)
        #expect(status == .badInput)
        #expect(errors.error == "mockble: cannot write standard output: No space left on device\n")
        #expect(console.outputFailure == "No space left on device")
        #expect(console.errorFailure == nil)
        // The run printed its trace in one write, which failed; nothing was tried after it.
        let (_, printed) = await run("run", Self.uart, "--format", "json")
        #expect(attempts.output == printed.output)
        console.print("more")
        #expect(attempts.output == printed.output)
    }

    @Test("A failing standard output turns even a successful --version into exit two")
    func failingStandardOutputOnVersion() async {
        let errors = CapturedOutput()
        let console = Console(
            output: { _ in throw CocoaError(.fileWriteOutOfSpace) }, error: { errors.append(error: $0) })
        #expect(await Mockble.main(arguments: ["--version"], console: console) == .badInput)
        #expect(errors.error.hasPrefix("mockble: cannot write standard output: "))
        #expect(console.outputFailure != nil)
    }

    @Test("A failing standard error leaves the status alone: a bad file is still exit two, and nothing more is tried")
    func failingStandardError() async {
        let attempts = CapturedOutput()
        let console = Console(
            output: { _ in },
            error: { text in
                attempts.append(error: text)
                throw CocoaError(.fileWriteOutOfSpace)
            })
        #expect(await Mockble.main(arguments: ["run", "/nonexistent/scenario.json"], console: console) == .badInput)
        #expect(console.errorFailure != nil)
        #expect(console.outputFailure == nil)
        let first = attempts.error
        #expect(first.hasPrefix("mockble run: "))
        console.printError("more")
        #expect(attempts.error == first)
    }
}
