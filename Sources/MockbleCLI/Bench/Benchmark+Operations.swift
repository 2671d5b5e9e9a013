import BLECore
import BLEMockKit
import Foundation

extension Benchmark {
    /// `fast.read`, `fast.write-with-response`, `fast.write-without-response`,
    /// `fast.notification`: single operations on one connected pair, in batches.
    func operationFigures() async throws -> [BenchFigure] {
        let pair = try await BenchPeripheral.connectedPair()
        let characteristic = pair.remote[BenchPeripheral.throughput]!
        let local = pair.localCharacteristic(BenchPeripheral.throughput)
        let count = sizes.operationsPerBatch
        let payload = Data(repeating: 0xA5, count: 20)

        func rate(_ name: String, _ batch: () async throws -> Void) async throws -> BenchFigure {
            try await batch()  // warm-up
            var rates: [Double] = []
            for _ in 0..<sizes.operationBatches {
                rates.append(Double(count) / (try await BenchClock.seconds(batch)))
            }
            return BenchFigure(
                name: name, median: BenchClock.median(rates), unit: "ops/s", target: .atLeast(200_000),
                repetitions: rates.count)
        }

        var figures: [BenchFigure] = []
        figures.append(
            try await rate("fast.read") {
                for _ in 0..<count { _ = try await pair.central.readValue(for: characteristic) }
            })
        figures.append(
            try await rate("fast.write-with-response") {
                for _ in 0..<count {
                    try await pair.central.writeValue(payload, for: characteristic, type: .withResponse)
                }
            })
        figures.append(
            try await rate("fast.write-without-response") {
                for _ in 0..<count {
                    try await pair.central.writeValue(payload, for: characteristic, type: .withoutResponse)
                }
            })
        figures.append(
            try await rate("fast.notification") {
                // Sent by the peripheral and received from the central's event stream.
                var iterator = pair.central.events().makeAsyncIterator()
                for _ in 0..<count {
                    guard try await pair.sensor.updateValue(payload, for: local) else {
                        throw BenchFailure(description: "updateValue returned false in fast mode")
                    }
                }
                var received = 0
                while received < count, let event = await iterator.next() {
                    if case .valueUpdated = event { received += 1 }
                }
            })
        return figures
    }
}
