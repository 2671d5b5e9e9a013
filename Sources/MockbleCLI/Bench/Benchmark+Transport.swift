import BLEMockKit
import Foundation
import Transport

extension Benchmark {
    /// `transport.packet-N`: a 1 MiB message fragmented and reassembled at packet sizes 20,
    /// 182, 244 and 514 (at 20 the format's 16-bit sequence index caps a message at 1 MiB − 8
    /// bytes, so that size carries 8 bytes less); `transport.memory-copy`: a plain copy of the
    /// same bytes; and the ratio of the 244-byte rate to the copy.
    func transportFigures() throws -> [BenchFigure] {
        var generator = SeededGenerator(seed: 1_048_576)
        let message = (0..<1_048_576).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        var figures: [BenchFigure] = []
        var rates: [Int: Double] = [:]
        for packetLength in [20, 182, 244, 514] {
            let limit = Fragmenter.maximumMessageLength(forMaxPacketLength: packetLength)
            let sized = message.count <= limit ? message : Array(message[..<limit])
            try Self.fragmentAndReassemble(sized, packetLength: packetLength)  // warm-up
            var samples: [Double] = []
            for _ in 0..<sizes.transportRepetitions {
                var delivered: [UInt8]?
                let seconds = try BenchClock.seconds {
                    delivered = try Self.reassembled(sized, packetLength: packetLength)
                }
                // Checked outside the timed part: comparing 1 MiB would double what is timed.
                try Self.check(delivered, is: sized)
                samples.append(Double(sized.count) / seconds / 1e9)
            }
            rates[packetLength] = BenchClock.median(samples)
            figures.append(
                BenchFigure(
                    name: "transport.packet-\(packetLength)", median: rates[packetLength]!, unit: "GB/s",
                    target: packetLength == 244 ? .atLeast(2) : .reference, repetitions: samples.count))
        }
        var copy = [UInt8](repeating: 0, count: message.count)
        var copies: [Double] = []
        for _ in 0..<sizes.transportRepetitions {
            let seconds = BenchClock.seconds {
                message.withUnsafeBytes { source in
                    copy.withUnsafeMutableBytes { $0.copyMemory(from: source) }
                }
            }
            copies.append(Double(message.count) / seconds / 1e9)
        }
        guard copy == message else { throw BenchFailure(description: "the memory copy differs") }
        let copyRate = BenchClock.median(copies)
        figures.append(
            BenchFigure(
                name: "transport.memory-copy", median: copyRate, unit: "GB/s", target: .reference,
                repetitions: copies.count))
        figures.append(
            BenchFigure(
                name: "transport.packet-244-vs-copy", median: rates[244]! / copyRate, unit: "ratio",
                target: .reference, repetitions: copies.count))
        return figures
    }

    /// Fragments `message` and feeds every packet straight into a reassembler; returns what
    /// came out, and throws unless it is `message`, byte for byte.
    @discardableResult
    static func fragmentAndReassemble(_ message: [UInt8], packetLength: Int) throws -> [UInt8] {
        let delivered = try reassembled(message, packetLength: packetLength)
        try check(delivered, is: message)
        return delivered ?? []
    }

    /// What fragmenting `message` and feeding every packet into a reassembler gives back.
    static func reassembled(_ message: [UInt8], packetLength: Int) throws -> [UInt8]? {
        var reassembler = Reassembler<Int, ContinuousClock.Instant>()
        let now = ContinuousClock.Instant.now
        var delivered: [UInt8]?
        try Fragmenter.fragment(message, maxPacketLength: packetLength, id: 7) { packet in
            if let complete = try reassembler.receive(packet, from: 0, at: now) { delivered = complete }
        }
        return delivered
    }

    /// Throws unless `delivered` is `message`, byte for byte.
    static func check(_ delivered: [UInt8]?, is message: [UInt8]) throws {
        guard let delivered, delivered == message else {
            throw BenchFailure(description: "a \(message.count)-byte message did not come out whole")
        }
    }
}
