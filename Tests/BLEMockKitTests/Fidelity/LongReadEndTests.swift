import BLECore
import BLEMockKit
import Foundation
import Testing

/// How a long read ends when the server says there is no more (Bluetooth Core Specification,
/// Vol 3, Part F, 3.4.4.5): a client that read a full part sends a Read Blob for the rest, and a
/// server may answer it with 0x0B Attribute Not Long when the value was exactly that part.
@Suite("Long reads: Attribute Not Long ends the value", .timeLimit(.minutes(10)))
struct LongReadEndTests {
    /// A manual peripheral at ATT_MTU 23 and a read of its dynamic value, started: the rig, the
    /// read, the first request the peripheral got, and the rest of its events.
    static func readStarted() async throws -> (
        Rig, Task<Data, any Error>, ATTRequest, AsyncStream<PeripheralEvent>.Iterator
    ) {
        let rig = try await Rig.make(requestHandling: .manual, centralMTU: 23)
        var events = rig.peripheral.events().makeAsyncIterator()
        let central = rig.central
        let characteristic = rig.remote(RigUUID.value)
        let read = Task { try await central.readValue(for: characteristic) }
        let first = try #require(await nextReadRequest(&events))
        return (rig, read, first, events)
    }

    // bumble 0.0.236 (scripts/bumble-att-checks.py, check 2): its client reads a 22-byte value at
    // ATT_MTU 23 with a Read and a Read Blob at offset 22, its server answers 0x0B, and the
    // client returns the 22 bytes.
    @Test("A Read Blob answered with attributeNotLong after a full part ends the read with the part")
    func attributeNotLongEndsTheRead() async throws {
        let (rig, read, first, events) = try await Self.readStarted()
        var rest = events
        #expect(first.offset == 0)
        try await rig.peripheral.respond(to: first, withResult: .success, value: testBytes(22))
        let second = try #require(await nextReadRequest(&rest))
        #expect(second.offset == 22)
        try await rig.peripheral.respond(to: second, withResult: .attributeNotLong, value: nil)
        #expect(try await read.value == testBytes(22))
        #expect(await rig.lastLogEntry(.read)?.error == nil)
    }

    @Test("attributeNotLong to the first Read of a value is an error, not an empty value")
    func attributeNotLongToTheFirstReadIsAnError() async throws {
        let (rig, read, first, _) = try await Self.readStarted()
        try await rig.peripheral.respond(to: first, withResult: .attributeNotLong, value: nil)
        await #expect(throws: ATTError(.attributeNotLong)) { try await read.value }
    }

    @Test("The stack answers a Read Blob inside a short static value with its bytes, not attributeNotLong")
    func shortStaticValueIsAnsweredWithBytes() async throws {
        let trace = await ScenarioRunner(
            try Scenario(
                json: Data(
                    """
                    {"peripheral": {"name": "Tag", "advertisement": {"localName": "Tag"},
                       "services": [{"uuid": "FFF0", "characteristics": [
                         {"id": "s", "uuid": "FFF1", "properties": ["read"], "permissions": ["readable"],
                          "value": {"hex": "0102030405"}}]}]},
                     "steps": [{"op": "scan"}, {"op": "connect"}, {"op": "discover"},
                       {"op": "readRequest", "char": "s", "offset": 1},
                       {"op": "readRequest", "char": "s", "offset": 5},
                       {"op": "readRequest", "char": "s", "offset": 6}]}
                    """.utf8))
        ).run()
        #expect(trace.records[3].value == Data([2, 3, 4, 5]))
        #expect(trace.records[4].value == Data())
        #expect(trace.records[5].error?.name == "invalidOffset")
    }
}
