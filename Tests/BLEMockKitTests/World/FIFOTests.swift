import Testing

@testable import BLEMockKit

@Suite("FIFO: the link pipes' and event streams' queue", .timeLimit(.minutes(10)))
struct FIFOTests {
    /// A reference element, to see that the queue lets go of what it popped.
    final class Token: Sendable {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test("Elements come out in the order they went in, however appends and pops interleave")
    func order() {
        var fifo = FIFO<Int>()
        #expect(fifo.popFirst() == nil)
        var expected: [Int] = []
        var next = 0
        // Appends and pops interleaved, past the point where spent elements are compacted.
        for round in 0..<200 {
            for _ in 0..<(round % 3 + 1) {
                fifo.append(next)
                next += 1
            }
            for _ in 0..<(round % 2 + 1) {
                guard let popped = fifo.popFirst() else { break }
                expected.append(popped)
            }
            #expect(fifo.count == next - expected.count)
            #expect(fifo.first == (fifo.isEmpty ? nil : expected.count))
        }
        while let popped = fifo.popFirst() { expected.append(popped) }
        #expect(expected == Array(0..<next))
        #expect(fifo.isEmpty && fifo.count == 0 && fifo.first == nil)
    }

    @Test("The last element popped leaves the queue empty and holds nothing it popped")
    func lastPopReleases() {
        var fifo = FIFO<Token>()
        weak var first: Token?
        weak var last: Token?
        do {
            let a = Token(1)
            let b = Token(2)
            first = a
            last = b
            fifo.append(a)
            fifo.append(b)
        }
        #expect(fifo.popFirst()?.value == 1)
        #expect(fifo.popFirst()?.value == 2)
        #expect(first == nil && last == nil)
        #expect(fifo.isEmpty)
        fifo.append(Token(3))
        #expect(Array(fifo.waiting).map(\.value) == [3])
    }
}
