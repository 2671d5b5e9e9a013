import BLECore
import BLEMockKit
import Foundation
import Testing

/// Misuse CoreBluetooth lets pass quietly: the kit does what CoreBluetooth does (so app code
/// behaves as on a device), records each one in `MockBLEBridge.misuses`, and `finish()`
/// reports it; a manager with `strictMisuse` throws the misuse's error at the call instead.
@Suite(
    "Misuse CoreBluetooth lets pass: done as CoreBluetooth does, recorded, or thrown when strict",
    .timeLimit(.minutes(10)))
struct MisuseTests {
    // MARK: Writes without response

    @Test("A write without response to a characteristic without the property is not sent, and finish() reports it")
    func commandWithoutTheProperty() async throws {
        let rig = try await Rig.make()
        let characteristic = rig.remote(RigUUID.writeOnly)
        try await rig.central.writeValue(Data([1]), for: characteristic, type: .withoutResponse)
        let error = APIMisuseError.writeWithoutResponseNotSupported(RigUUID.writeOnly, handle: characteristic.handle)
        let expected = Misuse(
            kind: .writeWithoutResponseNotSupported, time: .zero, central: rig.central.identifier,
            peripheral: rig.peripheral.identifier, characteristic: RigUUID.writeOnly, handle: characteristic.handle,
            error: error)
        #expect(await rig.bridge.misuses == [expected])
        #expect(await rig.bridge.finish() == .leftovers([.misuse(expected), .seed(0)]))
    }

    @Test("With strict misuse, a write without response to a characteristic without the property throws")
    func strictCommandWithoutTheProperty() async throws {
        let rig = try await Rig.make(strictMisuse: true)
        let characteristic = rig.remote(RigUUID.writeOnly)
        await #expect(
            throws: APIMisuseError.writeWithoutResponseNotSupported(RigUUID.writeOnly, handle: characteristic.handle)
        ) {
            try await rig.central.writeValue(Data([1]), for: characteristic, type: .withoutResponse)
        }
        #expect(await rig.bridge.misuses.isEmpty)
        #expect(await rig.bridge.finish() == .clean)
    }

    @Test("A write without response into a full queue is dropped and recorded; the ready event still follows")
    func commandIntoAFullQueue() async throws {
        let rig = try await Rig.make(writeQueue: .realistic(capacity: 2))
        let value = rig.remote(RigUUID.value)
        var events = rig.central.events().makeAsyncIterator()
        for byte in UInt8(1)...3 {
            try await rig.central.writeValue(Data([byte]), for: value, type: .withoutResponse)
        }
        #expect(!(await rig.central.canSendWriteWithoutResponse(to: rig.peripheral.identifier)))
        let misuses = await rig.bridge.misuses
        #expect(misuses.map(\.kind) == [.writeWithoutResponseDropped])
        #expect(misuses.map(\.error) == [.writeWithoutResponseQueueFull(RigUUID.value, handle: value.handle)])
        #expect(misuses.first?.central == rig.central.identifier)
        await rig.bridge.advance(by: .seconds(1))
        let ready = await nextCentralEvent(&events) {
            if case .readyToSendWriteWithoutResponse = $0 { true } else { false }
        }
        #expect(ready != nil)
        #expect(try await rig.peripheralValue() == Data([2]))
    }

    @Test("With strict misuse, a write without response into a full queue throws writeWithoutResponseQueueFull")
    func strictCommandIntoAFullQueue() async throws {
        let rig = try await Rig.make(strictMisuse: true, writeQueue: .realistic(capacity: 1))
        let value = rig.remote(RigUUID.value)
        try await rig.central.writeValue(Data([1]), for: value, type: .withoutResponse)
        await #expect(throws: APIMisuseError.writeWithoutResponseQueueFull(RigUUID.value, handle: value.handle)) {
            try await rig.central.writeValue(Data([2]), for: value, type: .withoutResponse)
        }
        #expect(await rig.bridge.misuses.isEmpty)
    }

    @Test("A write without response longer than ATT_MTU − 3 is cut and recorded as a misuse; strict throws")
    func longCommand() async throws {
        let rig = try await Rig.make(centralMTU: 23)
        let value = rig.remote(RigUUID.value)
        try await rig.central.writeValue(testBytes(25), for: value, type: .withoutResponse)
        let cut = APIMisuseError.valueTooLong(
            operation: "writeValue(_:for:type: .withoutResponse)", length: 25, maximum: 20)
        #expect(await rig.bridge.misuses.map(\.error) == [cut])
        #expect(await rig.bridge.misuses.map(\.kind) == [.valueTruncated])
        #expect(try await rig.peripheralValue() == testBytes(20))

        let strict = try await Rig.make(centralMTU: 23, strictMisuse: true)
        await #expect(throws: cut) {
            try await strict.central.writeValue(
                testBytes(25), for: strict.remote(RigUUID.value), type: .withoutResponse)
        }
        #expect(await strict.bridge.misuses.isEmpty)
        #expect(try await strict.peripheralValue() == Data())
    }

    // MARK: Notifications

    @Test("A notification longer than a central's maximum is cut and recorded per central; strict throws")
    func longNotification() async throws {
        let rig = try await Rig.make(centralMTU: 23)
        try await rig.central.setNotifyValue(true, for: rig.remote(RigUUID.value))
        #expect(try await rig.peripheral.updateValue(testBytes(30), for: rig.local(RigUUID.value)))
        let misuses = await rig.bridge.misuses
        #expect(misuses.map(\.kind) == [.valueTruncated])
        #expect(misuses.map(\.error) == [.valueTooLong(operation: "updateValue", length: 30, maximum: 20)])
        #expect(misuses.map(\.central) == [rig.central.identifier])

        let strict = try await Rig.make(centralMTU: 23, strictMisuse: true)
        try await strict.central.setNotifyValue(true, for: strict.remote(RigUUID.value))
        await #expect(throws: APIMisuseError.valueTooLong(operation: "updateValue", length: 30, maximum: 20)) {
            try await strict.peripheral.updateValue(testBytes(30), for: strict.local(RigUUID.value))
        }
        #expect(await strict.bridge.misuses.isEmpty)
    }

    // MARK: Answers to write commands

    @Test("An error answer to a write command is ignored, as CoreBluetooth does, and recorded as a misuse")
    func errorAnswerToACommand() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        try await rig.central.writeValue(Data([4]), for: rig.remote(RigUUID.value), type: .withoutResponse)
        let command = try #require(await nextWriteRequests(&events)?.first)
        try await rig.peripheral.respond(to: command, withResult: .writeNotPermitted)
        let misuses = await rig.bridge.misuses
        #expect(misuses.map(\.kind) == [.responseToCommand])
        #expect(misuses.map(\.error) == [.responseToCommand(id: command.id, result: .writeNotPermitted)])
        #expect(misuses.map(\.peripheral) == [rig.peripheral.identifier])
        // Nothing reached the central: its link and writes carry on.
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        #expect(await rig.bridge.log.filter { $0.kind == .write }.allSatisfy { $0.error == nil })
    }

    @Test("With strict misuse, an error answer to a write command throws responseToCommand")
    func strictErrorAnswerToACommand() async throws {
        let rig = try await Rig.make(requestHandling: .manual, strictMisuse: true)
        var events = rig.peripheral.events().makeAsyncIterator()
        try await rig.central.writeValue(Data([4]), for: rig.remote(RigUUID.value), type: .withoutResponse)
        let command = try #require(await nextWriteRequests(&events)?.first)
        await #expect(throws: APIMisuseError.responseToCommand(id: command.id, result: .unlikelyError)) {
            try await rig.peripheral.respond(to: command, withResult: .unlikelyError)
        }
        // A success answer is harmless, strict or not.
        try await rig.peripheral.respond(to: command, withResult: .success)
        #expect(await rig.bridge.misuses.isEmpty)
    }

    /// (A handler's error answer to a write command used to pass unrecorded.)
    @Test(
        "A request handler's error answer to a write command is recorded as a misuse as a manual one is, strict or not",
        arguments: [false, true])
    func handlersErrorAnswerToACommand(strict: Bool) async throws {
        let commands = Recorder<UInt64>()
        let handling = RequestHandling.handler { request in
            guard request.isCommand else { return .success(Data([7])) }
            commands.append(request.id)
            return .error(.writeNotPermitted)
        }
        let rig = try await Rig.make(requestHandling: handling, strictMisuse: strict)
        try await rig.central.writeValue(Data([4]), for: rig.remote(RigUUID.value), type: .withoutResponse)
        let id = try #require(commands.entries.first)
        let misuses = await rig.bridge.misuses
        #expect(misuses.map(\.kind) == [.responseToCommand])
        #expect(misuses.map(\.error) == [.responseToCommand(id: id, result: .writeNotPermitted)])
        #expect(misuses.map(\.peripheral) == [rig.peripheral.identifier])
        #expect(misuses.map(\.central) == [rig.central.identifier])
        // Nothing reached the central: its link and reads carry on.
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.value)) == Data([7]))
    }

    @Test("A peripheral that answers only requests (ATTRequest.isCommand) leaves nothing to report")
    func answeringOnlyRequests() async throws {
        let rig = try await Rig.make(requestHandling: .manual, strictMisuse: true)
        let value = rig.remote(RigUUID.value)
        let peripheral = rig.peripheral
        let events = peripheral.events()
        let answering = Task {
            var answered = 0
            for await event in events {
                guard case .writeRequests(let requests) = event else { continue }
                if !requests[0].isCommand {
                    try await peripheral.respond(to: requests[0], withResult: .success)
                }
                answered += 1
                if answered == 2 { return }
            }
        }
        try await rig.central.writeValue(Data([1]), for: value, type: .withoutResponse)
        try await rig.central.writeValue(Data([2]), for: value, type: .withResponse)
        try await answering.value
        #expect(await rig.bridge.misuses.isEmpty)
        #expect(await rig.bridge.finish() == .clean)
    }

    // MARK: Answers longer than an attribute holds

    /// (A 600-byte answer used to be cut to 512 bytes silently.)
    @Test("A manual answer to a read longer than an attribute holds is cut to 512 bytes and recorded as a misuse")
    func longAnswerToARead() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let request = try #require(await nextReadRequest(&events))
        try await rig.peripheral.respond(to: request, withResult: .success, value: testBytes(600))
        #expect(try await read.value == testBytes(512))
        let misuses = await rig.bridge.misuses
        #expect(misuses.map(\.kind) == [.valueTruncated])
        #expect(
            misuses.map(\.error) == [
                .valueTooLong(operation: "respond(to:withResult:value:)", length: 600, maximum: 512)
            ])
        #expect(misuses.map(\.peripheral) == [rig.peripheral.identifier])
        let cut = await rig.bridge.log.last { $0.kind == .truncated }
        #expect(
            cut?.detail
                == "answer to read request id=\(request.id) at offset 0 of 600 bytes cut to 512 (an attribute value "
                + "holds at most 512)")
    }

    @Test("With strict misuse, a manual answer to a read longer than an attribute holds throws; it stays unanswered")
    func strictLongAnswerToARead() async throws {
        let rig = try await Rig.make(requestHandling: .manual, strictMisuse: true)
        var events = rig.peripheral.events().makeAsyncIterator()
        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let request = try #require(await nextReadRequest(&events))
        await #expect(
            throws: APIMisuseError.valueTooLong(operation: "respond(to:withResult:value:)", length: 513, maximum: 512)
        ) {
            try await rig.peripheral.respond(to: request, withResult: .success, value: testBytes(513))
        }
        // The request is still the app's to answer.
        try await rig.peripheral.respond(to: request, withResult: .success, value: testBytes(512))
        #expect(try await read.value == testBytes(512))
        #expect(await rig.bridge.misuses.isEmpty)
    }

    @Test("An answer to a Read Blob may hold what the attribute holds from the request's offset on, and no more")
    func longAnswerFromAnOffset() async throws {
        let rig = try await Rig.make(requestHandling: .manual, centralMTU: 23, strictMisuse: true)
        var events = rig.peripheral.events().makeAsyncIterator()
        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let first = try #require(await nextReadRequest(&events))
        try await rig.peripheral.respond(to: first, withResult: .success, value: testBytes(512))
        let blob = try #require(await nextReadRequest(&events))
        #expect(blob.offset == 22)
        await #expect(
            throws: APIMisuseError.valueTooLong(operation: "respond(to:withResult:value:)", length: 491, maximum: 490)
        ) {
            try await rig.peripheral.respond(to: blob, withResult: .success, value: testBytes(491, startingAt: 22))
        }
        read.cancel()
    }

    /// (A handler's 2,000-byte answer used to be cut to 512 bytes silently.)
    @Test(
        "A request handler's answer to a read longer than an attribute holds is cut and recorded, strict or not",
        arguments: [false, true])
    func handlersLongAnswerToARead(strict: Bool) async throws {
        let rig = try await Rig.make(
            requestHandling: .handler { _ in .success(testBytes(2_000)) }, strictMisuse: strict)
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.value)) == testBytes(512))
        let misuses = await rig.bridge.misuses
        #expect(misuses.map(\.kind) == [.valueTruncated])
        #expect(
            misuses.map(\.error) == [
                .valueTooLong(operation: "respond(to:withResult:value:)", length: 2_000, maximum: 512)
            ])
    }

    @Test("A value given with the answer to a write is ignored, not a misuse: a Write Response carries none")
    func valueInAnAnswerToAWrite() async throws {
        let rig = try await Rig.make(requestHandling: .manual, strictMisuse: true)
        var events = rig.peripheral.events().makeAsyncIterator()
        let write = Task {
            try await rig.central.writeValue(Data([1]), for: rig.remote(RigUUID.value), type: .withResponse)
        }
        let request = try #require(await nextWriteRequests(&events)?.first)
        try await rig.peripheral.respond(to: request, withResult: .success, value: testBytes(600))
        try await write.value
        #expect(await rig.bridge.misuses.isEmpty)
    }

    @Test("Too long a value for an attribute says so, not that a link carries too little")
    func attributeLengthIsNotALinkLimit() async throws {
        let rig = try await Rig.make()
        let error = APIMisuseError.valueTooLong(operation: "setValue", length: 513, maximum: 512)
        await #expect(throws: error) {
            try await rig.peripheral.setValue(testBytes(513), for: rig.local(RigUUID.value))
        }
        // (It said "can carry at most 512 on this link" and pointed to maximumWriteValueLength.)
        #expect(
            error.description
                == "setValue was given 513 bytes, but the attribute takes at most 512 there: an attribute value holds "
                + "at most 512 bytes, whatever the link. Give at most 512 bytes; spread more data over several "
                + "characteristics, or frame it with the Transport module.")
        #expect(
            APIMisuseError.valueTooLong(operation: "updateValue", length: 30, maximum: 20).description
                == "updateValue was given 30 bytes but can carry at most 20 on this link. Split the data into parts "
                + "of at most 20 bytes (the central's maximumUpdateValueLength), or frame it with the Transport "
                + "module.")
        // Each role is pointed at its own length (a peripheral's app has no maximumWriteValueLength).
        #expect(
            APIMisuseError.valueTooLong(operation: "writeValue(_:for:type: .withoutResponse)", length: 30, maximum: 20)
                .description
                == "writeValue(_:for:type: .withoutResponse) was given 30 bytes but can carry at most 20 on this link. "
                + "Split the data into parts of at most 20 bytes (maximumWriteValueLength(for: .withoutResponse)), or "
                + "frame it with the Transport module.")
    }

    // MARK: The record

    @Test("A misuse describes itself with the time, the managers and the error's advice")
    func description() {
        let central = UUID(uuidString: "1A2B3C4D-0000-0000-0000-000000000001")!
        let peripheral = UUID(uuidString: "5E6F7A8B-0000-0000-0000-000000000002")!
        let misuse = Misuse(
            kind: .writeWithoutResponseDropped, time: .zero + .milliseconds(30), central: central,
            peripheral: peripheral, characteristic: "FFF1", handle: 3,
            error: .writeWithoutResponseQueueFull("FFF1", handle: 3))
        #expect(
            misuse.description
                == "0.03s central 1A2B3C4D peripheral 5E6F7A8B: writeWithoutResponseDropped: "
                + "A write without response to FFF1 (handle 3) was dropped: the queue was full "
                + "(canSendWriteWithoutResponse was false). Wait for "
                + "peripheralIsReady(toSendWriteWithoutResponse:) before writing again.")
        #expect(
            Leftover.misuse(misuse).description == "misuse CoreBluetooth would let pass: \(misuse.description)")
    }
}

extension Rig {
    /// The value the peripheral stores for the `value` characteristic, as the central reads it.
    func peripheralValue() async throws -> Data {
        try await central.readValue(for: remote(RigUUID.value))
    }
}
