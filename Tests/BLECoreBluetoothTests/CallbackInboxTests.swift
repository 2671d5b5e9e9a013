import Dispatch
import Testing

@testable import BLECoreBluetooth

/// Not Sendable, like a CoreBluetooth object.
private final class Payload {
    let number: Int
    init(_ number: Int) { self.number = number }
}

@Suite("CallbackInbox", .timeLimit(.minutes(10)))
struct CallbackInboxTests {
    @Test("Callbacks posted on a queue are handled one at a time in posting order")
    func callbacksKeepTheirOrder() async {
        let inbox = CallbackInbox<Payload>()
        let recorder = Recorder<Int>()
        let consumer = inbox.startConsuming { handoff in
            await recorder.record(handoff.callback.number)
            return true
        }
        let queue = DispatchQueue(label: "callbacks")
        queue.sync {
            for number in 0..<200 { inbox.post(Payload(number)) }
            inbox.finish()
        }
        await consumer.value
        #expect(await recorder.values == Array(0..<200))
    }

    @Test("Finishing stops the consumer after what was already posted, and later posts are dropped")
    func finishStopsConsumer() async {
        let inbox = CallbackInbox<Payload>()
        let recorder = Recorder<Int>()
        inbox.post(Payload(1))
        inbox.finish()
        inbox.post(Payload(2))
        await inbox.startConsuming { handoff in
            await recorder.record(handoff.callback.number)
            return true
        }.value
        #expect(await recorder.values == [1])
    }

    @Test("A handler that returns false (its actor is gone) stops the consumer")
    func handlerCanStopConsumer() async {
        let inbox = CallbackInbox<Payload>()
        let recorder = Recorder<Int>()
        for number in 1...3 { inbox.post(Payload(number)) }
        await inbox.startConsuming { handoff in
            await recorder.record(handoff.callback.number)
            return handoff.callback.number < 2
        }.value
        #expect(await recorder.values == [1, 2])
    }
}
