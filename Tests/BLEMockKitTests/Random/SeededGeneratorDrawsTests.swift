import Foundation
import Testing

@testable import BLEMockKit

/// The draw helpers: golden values for seed 42 (computed once, after checking the core
/// against an independent reference) and range, probability and uniformity properties.
@Suite("SeededGenerator draws", .timeLimit(.minutes(10)))
struct SeededGeneratorDrawsTests {
    @Test("The first bounded draws for seed 42 are pinned")
    func goldenBoundedDraws() {
        var dice = SeededGenerator(seed: 42)
        #expect((0..<10).map { _ in dice.int(in: 1...6) } == [1, 3, 5, 6, 6, 5, 5, 6, 5, 4])
        var signed = SeededGenerator(seed: 42)
        #expect((0..<8).map { _ in signed.int(in: -100...100) } == [-84, -24, 36, 85, 99, 54, 44, 70])
    }

    @Test("The first unit doubles for seed 42 are pinned")
    func goldenDoubles() {
        var generator = SeededGenerator(seed: 42)
        let doubles = (0..<4).map { _ in generator.unitDouble() }
        #expect(doubles == [0.08386297105988216, 0.3789802506626686, 0.6800434110281394, 0.9246929453253876])
    }

    @Test("The first uuids for seed 42 are pinned and version-4 shaped")
    func goldenUUIDs() {
        var generator = SeededGenerator(seed: 42)
        let uuids = (0..<3).map { _ in generator.uuid().uuidString }
        #expect(
            uuids == [
                "15780B2E-0C2E-4716-A104-D9866D113A7E",
                "AE175332-39E4-49A1-ACB8-AD4703B360A1",
                "FDE6DC7F-E2EC-4E64-850D-A53101795238",
            ])
        for _ in 0..<100 {
            let bytes = generator.uuid().uuid
            #expect(bytes.6 >> 4 == 4)
            #expect(bytes.8 >> 6 == 0b10)
        }
    }

    @Test("Bounded draws handle single-value, full and negative ranges")
    func edgeRanges() {
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<100 {
            let single = generator.int(in: 5...5)
            let halfOpen = generator.int(in: -5 ..< -4)
            let top = generator.uint64(in: .max ... .max)
            let negative = generator.int(in: -10 ... -1)
            let low = generator.int(in: Int.min...Int.min + 2)
            let high = generator.int(in: Int.max - 2...Int.max)
            let unit = generator.uniform(below: 1)
            let wide = generator.uniform(below: .max)
            #expect(single == 5 && halfOpen == -5 && top == .max && unit == 0)
            #expect((-10 ... -1).contains(negative))
            #expect((Int.min...Int.min + 2).contains(low))
            #expect((Int.max - 2...Int.max).contains(high))
            #expect(wide < .max)
        }
        var full = SeededGenerator(seed: 42)
        let fullDraw = full.uint64(in: 0 ... .max)
        #expect(fullDraw == 0x1578_0B2E_0C2E_C716)
        var fullSigned = SeededGenerator(seed: 42)
        let fullSignedDraw = fullSigned.int(in: Int.min...Int.max)
        #expect(fullSignedDraw == Int.min &+ Int(truncatingIfNeeded: 0x1578_0B2E_0C2E_C716 as UInt64))
    }

    @Test("Probability 0 is never true and probability 1 is always true, one draw each")
    func probabilityExtremes() {
        var generator = SeededGenerator(seed: 11)
        var reference = SeededGenerator(seed: 11)
        for _ in 0..<1000 {
            let never = generator.bool(probability: 0)
            let always = generator.bool(probability: 1)
            let notANumber = generator.bool(probability: .nan)
            #expect(!never && always && !notANumber)
            _ = reference.next()
            _ = reference.next()
            _ = reference.next()
        }
        #expect(generator == reference)
    }

    @Test("Doubles stay in [0, 1) and probabilities are roughly honoured")
    func doublesAndProbabilities() {
        var generator = SeededGenerator(seed: 5)
        var hits = 0
        for _ in 0..<10_000 {
            let value = generator.unitDouble()
            #expect(value >= 0 && value < 1)
            if generator.bool(probability: 0.25) { hits += 1 }
        }
        #expect((2300...2700).contains(hits))
    }

    @Test("Bounded draws are roughly uniform (chi-square over 10 buckets, fixed seed)")
    func roughUniformity() {
        var generator = SeededGenerator(seed: 2024)
        let draws = 100_000
        var counts = [Int](repeating: 0, count: 10)
        for _ in 0..<draws { counts[generator.int(in: 0..<10)] += 1 }
        let expected = Double(draws) / 10
        let chiSquare = counts.reduce(0.0) { $0 + (Double($1) - expected) * (Double($1) - expected) / expected }
        // 9 degrees of freedom: the 99.9th percentile is 27.9.
        #expect(chiSquare < 27.9, "chi-square \(chiSquare), counts \(counts), seed 2024")
    }

    @Test("Element choice covers every element and returns nil for an empty collection")
    func elementChoice() {
        var generator = SeededGenerator(seed: 8)
        let empty: [String] = []
        let before = generator
        let none = generator.element(from: empty)
        #expect(none == nil)
        #expect(generator == before)
        var seen = Set<String>()
        for _ in 0..<200 { seen.insert(generator.element(from: ["a", "b", "c", "d"])!) }
        #expect(seen == ["a", "b", "c", "d"])
    }

    @Test("Duration draws stay within their range, including degenerate and negative ranges")
    func durationDraws() {
        var generator = SeededGenerator(seed: 9)
        let range = Duration.milliseconds(5) ... .milliseconds(15)
        for _ in 0..<1000 {
            let jitter = generator.duration(in: range)
            let fixed = generator.duration(in: .seconds(1) ... .seconds(1))
            let negativeRange = Duration.milliseconds(-3) ... .milliseconds(-1)
            let negative = generator.duration(in: negativeRange)
            #expect(range.contains(jitter) && fixed == .seconds(1) && negativeRange.contains(negative))
        }
        let huge = Duration.seconds(-Int64.max / 2) ... .seconds(Int64.max / 2)
        let hugeDraw = generator.duration(in: huge)
        #expect(huge.contains(hugeDraw))
        var golden = SeededGenerator(seed: 42)
        let goldenDraw = golden.duration(in: range)
        #expect(goldenDraw == .nanoseconds(5_838_629))
    }
}
