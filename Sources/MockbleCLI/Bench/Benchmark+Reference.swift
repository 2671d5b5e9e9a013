import Foundation

extension Benchmark {
    /// `reference.actor-call` and `reference.stream-element`: what the machine and the Swift
    /// runtime take for the two things every kit call is made of, measured in the same process
    /// as the kit's figures, so the kit's figures can be read in their units whatever the
    /// machine's speed.
    func referenceFigures() async -> (actorCall: BenchFigure, streamElement: BenchFigure) {
        let counter = ReferenceCounter()
        let calls = sizes.operationsPerBatch
        var callSamples: [Double] = []
        var elementSamples: [Double] = []
        for _ in 0..<sizes.operationBatches {
            callSamples.append(
                await BenchClock.seconds {
                    for _ in 0..<calls { await counter.bump() }
                } / Double(calls) * 1e9)
            let (stream, continuation) = AsyncStream<Int>.makeStream()
            var iterator = stream.makeAsyncIterator()
            elementSamples.append(
                await BenchClock.seconds {
                    for value in 0..<calls {
                        continuation.yield(value)
                        _ = await iterator.next()
                    }
                } / Double(calls) * 1e9)
            continuation.finish()
        }
        return (
            BenchFigure(
                name: "reference.actor-call", median: BenchClock.median(callSamples), unit: "ns", target: .reference,
                repetitions: callSamples.count),
            BenchFigure(
                name: "reference.stream-element", median: BenchClock.median(elementSamples), unit: "ns",
                target: .reference, repetitions: elementSamples.count)
        )
    }
}

/// An actor with one method that does nothing but count: one call from outside it is one hop
/// onto its executor and one back.
actor ReferenceCounter {
    private var count = 0

    func bump() { count += 1 }
}
