import BLECore
import BLEMockKit
import Foundation

extension Benchmark {
    /// `memory.idle-peripheral`: resident bytes each idle, advertising heart-rate sensor adds,
    /// measured over 10,000 on one bridge (Linux only: it reads `/proc/self/statm`).
    func memoryFigures() async throws -> [BenchFigure] {
        var samples: [Double] = []
        for _ in 0..<sizes.memoryRepetitions {
            guard let bytes = try await Self.bytesPerIdlePeripheral(count: 10_000) else { return [] }
            samples.append(bytes)
        }
        return [
            BenchFigure(
                name: "memory.idle-peripheral", median: BenchClock.median(samples), unit: "bytes",
                target: .atMost(8_192), repetitions: samples.count)
        ]
    }

    /// The growth of the resident set per sensor while `count` sensors are kept alive, or `nil`
    /// where the resident set cannot be read.
    static func bytesPerIdlePeripheral(count: Int) async throws -> Double? {
        guard let before = ResidentMemory.bytes() else { return nil }
        let bridge = MockBLEBridge()
        var sensors: [MockPeripheralManager] = []
        sensors.reserveCapacity(count)
        for _ in 0..<count {
            let sensor = MockPeripheralManager(bridge: bridge)
            _ = try await sensor.add(BenchPeripheral.heartRate)
            try await sensor.startAdvertising(BenchPeripheral.advertisement)
            sensors.append(sensor)
        }
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
