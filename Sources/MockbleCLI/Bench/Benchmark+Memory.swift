import BLECore
import BLEMockKit
import Foundation

extension Benchmark {
    /// `memory.idle-peripheral`: resident bytes each idle, advertising heart-rate sensor adds,
    /// measured over 10,000 on one bridge (Linux only: it reads `/proc/self/statm`).
    ///
    /// Memory a process has freed stays resident, so every repetition runs in a fresh process
    /// (``memoryProbe``); a suite run without one measures once, in this process.
    func memoryFigures() async throws -> [BenchFigure] {
        var samples: [Double] = []
        let repetitions = memoryProbe == nil ? 1 : sizes.memoryRepetitions
        for _ in 0..<repetitions {
            let measured =
                if let memoryProbe { try await memoryProbe() } else {
                    try await Self.bytesPerIdlePeripheral(count: Self.idlePeripheralCount)
                }
            guard let bytes = measured else { return [] }
            samples.append(bytes)
        }
        return [
            BenchFigure(
                name: "memory.idle-peripheral", median: BenchClock.median(samples), unit: "bytes",
                target: .atMost(8_192), repetitions: samples.count)
        ]
    }

    /// How many idle sensors the memory suite keeps alive.
    static let idlePeripheralCount = 10_000

    /// The growth of the resident set per sensor while `count` sensors are kept alive, or `nil`
    /// where the resident set cannot be read.
    static func bytesPerIdlePeripheral(count: Int) async throws -> Double? {
        guard let before = ResidentMemory.bytes() else { return nil }
        let bridge = MockBLEBridge()
        let sensors = try await BenchPeripheral.advertisingSensors(count, on: bridge)
        guard let after = ResidentMemory.bytes() else { return nil }
        withExtendedLifetime(sensors) {}
        return Double(after - before) / Double(count)
    }
}

/// The process's resident set size.
enum ResidentMemory {
    /// Resident bytes now, from `/proc/self/statm`; `nil` where that file does not exist.
    static func bytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * pageSize
    }

    private static var pageSize: Int {
        #if os(Linux)
            Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
            Int(getpagesize())
        #endif
    }
}

extension Benchmark {
    /// A memory probe that runs `executable bench --memory-probe` (this tool) in a new process
    /// and reads the figure it prints.
    static func processMemoryProbe(executable: String) -> @Sendable () async throws -> Double? {
        {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["bench", "--memory-probe"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard process.terminationStatus == 0 else {
                throw BenchFailure(description: "the memory probe exited with \(process.terminationStatus)")
            }
            return text == "unavailable" ? nil : Double(text)
        }
    }
}
