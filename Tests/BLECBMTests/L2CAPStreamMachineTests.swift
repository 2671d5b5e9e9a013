import Foundation
import Testing

@testable import BLECBM

/// The streams' state machines, driven synchronously.
@Suite(.timeLimit(.minutes(10)))
struct L2CAPStreamMachineTests {
    @Test func anInputStreamAnnouncesBytesOnceUntilTheyAreReadAndEndsAfterTheLastOne() {
        var machine = L2CAPInputMachine()
        machine.apply(.data(Data([1, 2, 3])))
        #expect(machine.dueEvent(excluding: []) == nil)
        machine.open()
        #expect(machine.dueEvent(excluding: []) == .openCompleted)
        machine.delivered(.openCompleted)
        #expect(machine.dueEvent(excluding: []) == .hasBytesAvailable)
        machine.delivered(.hasBytesAvailable)
        machine.apply(.data(Data([4])))
        machine.apply(.ended)
        // Not announced again before a read; the end waits for the last byte.
        #expect(machine.dueEvent(excluding: []) == nil)
        var buffer = [UInt8](repeating: 0, count: 2)
        #expect(machine.read(into: &buffer, maxLength: 2) == 2)
        #expect(buffer == [1, 2])
        #expect(machine.dueEvent(excluding: []) == .hasBytesAvailable)
        #expect(machine.dueEvent(excluding: .hasBytesAvailable) == nil)
        #expect(machine.read(into: &buffer, maxLength: 2) == 2)
        #expect(buffer == [3, 4])
        #expect(machine.status == .atEnd)
        #expect(machine.dueEvent(excluding: []) == .endEncountered)
        machine.delivered(.endEncountered)
        #expect(machine.dueEvent(excluding: []) == nil)
        #expect(machine.read(into: &buffer, maxLength: 2) == 0)
    }

    @Test func anOutputStreamTakesWhatFitsAndOffersSpaceAgainOnlyAfterAWrite() {
        var machine = L2CAPOutputMachine(capacity: 10)
        #expect(machine.accept(4) == -1)
        machine.open()
        machine.delivered(.openCompleted)
        #expect(machine.dueEvent(excluding: []) == .hasSpaceAvailable)
        machine.delivered(.hasSpaceAvailable)
        // A delegate that writes nothing hears no more.
        machine.apply(.sent(0))
        #expect(machine.dueEvent(excluding: []) == nil)
        #expect(machine.accept(7) == 7)
        #expect(machine.accept(7) == 3)
        #expect(machine.accept(7) == 0)
        #expect(!machine.hasSpaceAvailable)
        #expect(machine.dueEvent(excluding: []) == nil)
        machine.apply(.sent(7))
        #expect(machine.hasSpaceAvailable)
        #expect(machine.dueEvent(excluding: []) == .hasSpaceAvailable)
        machine.apply(.ended)
        #expect(machine.status == .atEnd)
        #expect(machine.dueEvent(excluding: []) == .endEncountered)
        #expect(machine.accept(1) == -1)
        machine.close()
        #expect(machine.status == .closed)
        #expect(machine.dueEvent(excluding: []) == nil)
    }

    /// A zero-length write or read moves no byte: it does not make the event due again (else a
    /// delegate that writes or reads nothing in its callback hears the event again at once,
    /// forever, and a run's virtual time never moves on).
    @Test func aZeroLengthWriteOrReadDoesNotAnnounceSpaceOrBytesAgain() {
        var output = L2CAPOutputMachine(capacity: 10)
        output.open()
        output.delivered(.openCompleted)
        output.delivered(.hasSpaceAvailable)
        #expect(output.accept(0) == 0)
        #expect(output.dueEvent(excluding: []) == nil)
        #expect(output.accept(1) == 1)
        #expect(output.dueEvent(excluding: []) == .hasSpaceAvailable)

        var input = L2CAPInputMachine()
        input.apply(.data(Data([1, 2, 3])))
        input.open()
        input.delivered(.openCompleted)
        input.delivered(.hasBytesAvailable)
        var byte: UInt8 = 0
        #expect(input.read(into: &byte, maxLength: 0) == 0)
        #expect(input.dueEvent(excluding: []) == nil)
        #expect(input.read(into: &byte, maxLength: 1) == 1)
        #expect(input.dueEvent(excluding: []) == .hasBytesAvailable)
    }
}
