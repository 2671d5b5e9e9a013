import Foundation
import Testing

@testable import BLEMockKit

@Suite("VirtualClock.Instant", .timeLimit(.minutes(10)))
struct VirtualClockInstantTests {
    typealias Instant = VirtualClock.Instant

    @Test("Instants add, subtract and compare like offsets")
    func arithmeticAndComparison() {
        let start = Instant.zero
        let later = start.advanced(by: .milliseconds(1500))
        #expect(later.offset == .milliseconds(1500))
        #expect(start.duration(to: later) == .milliseconds(1500))
        #expect(later.duration(to: start) == .milliseconds(-1500))
        #expect(start + .seconds(2) == Instant(offset: .seconds(2)))
        #expect(later - start == .milliseconds(1500))
        #expect(later - .milliseconds(500) == Instant(offset: .seconds(1)))
        #expect(start < later)
        #expect(max(start, later) == later)
        #expect([later, start, Instant(offset: .seconds(1))].sorted() == [start, Instant(offset: .seconds(1)), later])
        #expect(Set([later, Instant(offset: .milliseconds(1500))]).count == 1)
    }

    @Test(
        "Descriptions print seconds with up to nine fractional digits",
        arguments: [
            (Duration.zero, "0s"),
            (.seconds(1), "1s"),
            (.milliseconds(1500), "1.5s"),
            (.milliseconds(245), "0.245s"),
            (.microseconds(1), "0.000001s"),
            (.nanoseconds(1), "0.000000001s"),
            (.nanoseconds(1_000_000_001), "1.000000001s"),
            (.seconds(3600), "3600s"),
            (.milliseconds(-500), "-0.5s"),
            (.seconds(-2), "-2s"),
            (Duration(secondsComponent: 0, attosecondsComponent: 1), "0s"),
        ])
    func descriptionFormat(offset: Duration, expected: String) {
        #expect(Instant(offset: offset).description == expected)
    }

    @Test("Instants round-trip through JSON as seconds and attoseconds")
    func codableRoundTrip() throws {
        let instants = [
            Instant.zero, Instant(offset: .milliseconds(1500)),
            Instant(offset: Duration(secondsComponent: 7, attosecondsComponent: 3)),
            Instant(offset: .milliseconds(-250)),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(instants)
        #expect(try JSONDecoder().decode([Instant].self, from: data) == instants)
        let single = try encoder.encode(Instant(offset: .milliseconds(1500)))
        #expect(String(decoding: single, as: UTF8.self) == #"{"attoseconds":500000000000000000,"seconds":1}"#)
    }

    /// Time advanced by effectively infinite durations used to make instants whose text and
    /// encoding trapped (`Duration.components` past Int64.max seconds).
    @Test("Instants saturate at Int64.max seconds either way, and still print and encode")
    func instantsSaturate() throws {
        let far = Instant.zero.advanced(by: .seconds(Int64.max)).advanced(by: .seconds(Int64.max))
        #expect(far == Instant.latest)
        #expect(far.description == "\(Int64.max).999999999s")
        #expect(Instant.zero.advanced(by: .zero - .seconds(Int64.max)).advanced(by: .seconds(-5)).offset < .zero)
        let early = Instant.zero - .seconds(Int64.max) - .seconds(Int64.max)
        #expect(early == Instant(offset: .zero - Instant.latest.offset))
        #expect(early.description == "-\(Int64.max).999999999s")
        let data = try JSONEncoder().encode([far, early])
        #expect(try JSONDecoder().decode([Instant].self, from: data) == [far, early])
    }

    /// (Each of these trapped: the sum overflowed `Duration` before the clamp, and decoding
    /// did not clamp, so printing the instant trapped.)
    @Test("Durations near Duration's own limits, and decoded components past the range, saturate too")
    func extremeDurationsAndDecodedComponentsSaturate() throws {
        let huge = Duration.seconds(1.7e20)
        #expect(Instant.latest.advanced(by: huge) == .latest)
        #expect(Instant.zero.advanced(by: huge) == .latest)
        #expect((Instant.latest + huge).description == "\(Int64.max).999999999s")
        let earliest = Instant(offset: .zero - Instant.latest.offset)
        #expect(Instant.zero.advanced(by: .zero - huge) == earliest)
        #expect(Instant.zero - huge == earliest)
        #expect(Instant.latest - (.zero - huge) == .latest)
        #expect(earliest - huge == earliest)
        let decoded = try JSONDecoder().decode(
            [Instant].self,
            from: Data(
                (#"[{"seconds": 9223372036854775807, "attoseconds": 9223372036854775807},"#
                    + #" {"seconds": -9223372036854775808, "attoseconds": 0}]"#).utf8))
        #expect(decoded == [.latest, earliest])
        #expect(decoded.map(\.description) == ["\(Int64.max).999999999s", "-\(Int64.max).999999999s"])
    }

    @Test("A bridge whose time ran past Int64.max seconds still reports and logs its time")
    func aBridgeAtTheEndOfTimeStillReportsIt() async throws {
        let bridge = MockBLEBridge()
        await bridge.advance(by: .seconds(Int64.max))
        await bridge.advance(by: .seconds(Int64.max))
        #expect(await bridge.now == Instant.latest)
        #expect(await bridge.now.description == "\(Int64.max).999999999s")
        await bridge.advance(by: .seconds(30))
        #expect(await bridge.now == Instant.latest)
        await bridge.advance(by: .seconds(1.7e20))
        #expect(await bridge.now == Instant.latest)
    }
}
