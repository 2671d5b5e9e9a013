import Foundation
import Testing

@testable import BLECoreBluetooth

private func collect<Event>(_ stream: AsyncStream<Event>) async -> [Event] {
    var events: [Event] = []
    for await event in stream { events.append(event) }
    return events
}

@Suite("EventFanOut", .timeLimit(.minutes(10)))
struct EventFanOutTests {
    @Test("Every stream receives every event yielded after its creation, in order")
    func everyStreamReceivesEveryEvent() async {
        let fanOut = EventFanOut<Int>()
        let first = fanOut.stream()
        let second = fanOut.stream()
        for event in 1...5 { fanOut.yield(event) }
        fanOut.finish()
        #expect(await collect(first) == [1, 2, 3, 4, 5])
        #expect(await collect(second) == [1, 2, 3, 4, 5])
    }

    @Test("A stream created later does not see earlier events")
    func laterStreamMissesEarlierEvents() async {
        let fanOut = EventFanOut<Int>()
        let early = fanOut.stream()
        fanOut.yield(1)
        let late = fanOut.stream()
        fanOut.yield(2)
        fanOut.finish()
        #expect(await collect(early) == [1, 2])
        #expect(await collect(late) == [2])
    }

    @Test("Finishing ends every stream after its buffered events and refuses later events")
    func finishEndsStreams() async {
        let fanOut = EventFanOut<String>()
        let stream = fanOut.stream()
        fanOut.yield("before")
        fanOut.finish()
        fanOut.yield("after")
        #expect(await collect(stream) == ["before"])
        #expect(fanOut.finished)
        #expect(fanOut.streamCount == 0)
    }

    @Test("A stream created after finishing is already finished")
    func streamAfterFinishIsFinished() async {
        let fanOut = EventFanOut<Int>()
        fanOut.finish()
        let stream = fanOut.stream()
        fanOut.yield(1)
        #expect(await collect(stream).isEmpty)
    }

    @Test("A reader that stops listening is dropped from the fan-out")
    func cancelledReaderIsDropped() async {
        let fanOut = EventFanOut<Int>()
        let kept = fanOut.stream()
        let dropped = fanOut.stream()
        let reader = Task {
            for await _ in dropped {}
        }
        #expect(fanOut.streamCount == 2)
        reader.cancel()
        await reader.value
        #expect(fanOut.streamCount == 1)
        fanOut.yield(9)
        fanOut.finish()
        #expect(await collect(kept) == [9])
    }

    @Test("A waiting reader receives an event yielded from another thread")
    func waitingReaderWakesUp() async {
        let fanOut = EventFanOut<Int>()
        let stream = fanOut.stream()
        let reader = Task { await collect(stream) }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                fanOut.yield(1)
                fanOut.yield(2)
                fanOut.finish()
                done.resume()
            }
        }
        #expect(await reader.value == [1, 2])
    }
}
