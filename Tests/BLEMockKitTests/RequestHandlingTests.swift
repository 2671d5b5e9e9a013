import BLECore
import Foundation
import Testing

@testable import BLEMockKit

@Suite("Request handling: manual reads", .timeLimit(.minutes(10)))
struct RequestHandlingManualReadTests {
    @Test("A manual read waits for the peripheral's answer to a request at offset 0 from the central")
    func manualRead() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        let logStart = await rig.bridge.log.count

        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let request = try #require(await nextReadRequest(&events))

        #expect(request.offset == 0)
        #expect(request.value == nil)
        #expect(request.central == RemoteCentral(identifier: rig.central.identifier, maximumUpdateValueLength: 512))
        #expect(request.characteristic == rig.local(RigUUID.value))
        // The central is still waiting: no read has completed.
        #expect(await rig.logEntries(.read).isEmpty)

        try await rig.peripheral.respond(to: request, withResult: .success, value: Data("Hi".utf8))
        #expect(try await read.value == Data("Hi".utf8))

        let entries = Array(await rig.bridge.log.dropFirst(logStart))
        #expect(entries.map(\.kind) == [.readRequest, .response, .read])
        #expect(entries[0].detail == "offset=0 id=\(request.id)")
        #expect(entries[1].value == Data("Hi".utf8))
        #expect(entries[2].value == Data("Hi".utf8))
        #expect(
            entries.allSatisfy { $0.succeeded && $0.central == rig.central.identifier && $0.attribute == RigUUID.value }
        )
    }

    @Test("A long manual read at ATT_MTU 23 asks for parts of 22 bytes at offsets 0, 22 and 44")
    func longRead() async throws {
        let rig = try await Rig.make(requestHandling: .manual, centralMTU: 23)
        var events = rig.peripheral.events().makeAsyncIterator()
        let value = testBytes(50)

        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        var ids: [UInt64] = []
        for offset in [0, 22, 44] {
            let request = try #require(await nextReadRequest(&events))
            #expect(request.offset == offset)
            #expect(request.central.maximumUpdateValueLength == 20)
            ids.append(request.id)
            try await rig.peripheral.respond(
                to: request, withResult: .success, value: value.subdata(in: offset..<value.count))
        }
        #expect(try await read.value == value)
        #expect(Set(ids).count == 3)

        let requests = await rig.logEntries(.readRequest)
        #expect(requests.map(\.detail) == zip([0, 22, 44], ids).map { "offset=\($0) id=\($1)" })
        #expect(await rig.logEntries(.response).count == 3)
        #expect(await rig.logEntries(.read).map(\.value) == [value])
    }

    @Test("A part of exactly 22 bytes asks for another part, and an empty part ends the read")
    func exactPartThenEmpty() async throws {
        let rig = try await Rig.make(requestHandling: .manual, centralMTU: 23)
        var events = rig.peripheral.events().makeAsyncIterator()
        let value = testBytes(22)

        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let first = try #require(await nextReadRequest(&events))
        try await rig.peripheral.respond(to: first, withResult: .success, value: value)
        let second = try #require(await nextReadRequest(&events))
        #expect(second.offset == 22)
        try await rig.peripheral.respond(to: second, withResult: .success, value: Data())
        #expect(try await read.value == value)
    }

    static let errorCodes: [ATTError.Code] = [.insufficientAuthorization, .application(1)!, .unlikelyError]

    @Test("A manual read answered with an ATT error code throws that ATTError", arguments: errorCodes)
    func readAnsweredWithError(code: ATTError.Code) async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let request = try #require(await nextReadRequest(&events))
        try await rig.peripheral.respond(to: request, withResult: code)

        let error = await #expect(throws: ATTError(code)) { try await read.value }
        #expect(error?.code.rawValue == code.rawValue)
        let entry = await rig.lastLogEntry(.read)
        #expect(entry?.error == .att(ATTError(code)))
        #expect(await rig.lastLogEntry(.response)?.detail == "id=\(request.id) result=\(code.name)")
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
    }

    @Test("The application error code 1 is 0x81 and insufficientAuthorization is 0x08")
    func errorCodeValues() {
        #expect(ATTError.Code.application(1)?.rawValue == 0x81)
        #expect(ATTError.Code.application(1)?.isApplicationError == true)
        #expect(ATTError.Code.insufficientAuthorization.rawValue == 0x08)
    }

    @Test("An error answering the second part of a long read fails the whole read")
    func longReadFailsMidway() async throws {
        let rig = try await Rig.make(requestHandling: .manual, centralMTU: 23)
        var events = rig.peripheral.events().makeAsyncIterator()
        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let first = try #require(await nextReadRequest(&events))
        try await rig.peripheral.respond(to: first, withResult: .success, value: testBytes(40))
        let second = try #require(await nextReadRequest(&events))
        #expect(second.offset == 22)
        try await rig.peripheral.respond(to: second, withResult: .invalidOffset)
        await #expect(throws: ATTError(.invalidOffset)) { try await read.value }
    }

    @Test("Responding twice to the same read throws unknownRequest the second time")
    func respondTwice() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let request = try #require(await nextReadRequest(&events))
        try await rig.peripheral.respond(to: request, withResult: .success, value: Data([1]))
        await #expect(throws: APIMisuseError.unknownRequest(id: request.id)) {
            try await rig.peripheral.respond(to: request, withResult: .success, value: Data([2]))
        }
        #expect(try await read.value == Data([1]))
        #expect(await rig.logEntries(.response).count == 1)
    }
}

@Suite("Request handling: manual writes", .timeLimit(.minutes(10)))
struct RequestHandlingManualWriteTests {
    @Test("A manual write with response delivers one request and returns after the peripheral's success")
    func writeWithResponse() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        let logStart = await rig.bridge.log.count

        let write = Task {
            try await rig.central.writeValue(Data([1, 2, 3]), for: rig.remote(RigUUID.value), type: .withResponse)
        }
        let requests = try #require(await nextWriteRequests(&events))
        #expect(requests.count == 1)
        #expect(requests[0].offset == 0)
        #expect(requests[0].value == Data([1, 2, 3]))
        #expect(requests[0].central.identifier == rig.central.identifier)
        #expect(requests[0].characteristic == rig.local(RigUUID.value))
        #expect(await rig.logEntries(.write).isEmpty)

        try await rig.peripheral.respond(to: requests[0], withResult: .success)
        try await write.value

        let entries = Array(await rig.bridge.log.dropFirst(logStart))
        #expect(entries.map(\.kind) == [.writeRequest, .response, .write])
        #expect(entries[2].value == Data([1, 2, 3]))
        #expect(entries[2].writeType == .withResponse)
        #expect(entries[2].succeeded)
    }

    @Test("A manual write answered with an ATT error throws it", arguments: RequestHandlingManualReadTests.errorCodes)
    func writeAnsweredWithError(code: ATTError.Code) async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        let write = Task {
            try await rig.central.writeValue(Data([1]), for: rig.remote(RigUUID.value), type: .withResponse)
        }
        let requests = try #require(await nextWriteRequests(&events))
        try await rig.peripheral.respond(to: requests[0], withResult: code)
        await #expect(throws: ATTError(code)) { try await write.value }
        #expect(await rig.lastLogEntry(.write)?.error == .att(ATTError(code)))
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
    }

    @Test("A 50-byte write at ATT_MTU 23 arrives as one batch of Prepare Write parts at offsets 0, 18 and 36")
    func longWrite() async throws {
        let rig = try await Rig.make(requestHandling: .manual, centralMTU: 23)
        var events = rig.peripheral.events().makeAsyncIterator()
        let value = testBytes(50)
        let write = Task {
            try await rig.central.writeValue(value, for: rig.remote(RigUUID.value), type: .withResponse)
        }

        let requests = try #require(await nextWriteRequests(&events))
        #expect(requests.map(\.offset) == [0, 18, 36])
        #expect(requests.map { $0.value?.count } == [18, 18, 14])
        #expect(requests.compactMap(\.value).reduce(Data(), +) == value)
        #expect(await rig.lastLogEntry(.writeRequest)?.detail == "requests=3 id=\(requests[0].id)")

        // Only the first request of a batch is answered.
        await #expect(throws: APIMisuseError.unknownRequest(id: requests[1].id)) {
            try await rig.peripheral.respond(to: requests[1], withResult: .success)
        }
        try await rig.peripheral.respond(to: requests[0], withResult: .success)
        try await write.value
        #expect(await rig.lastLogEntry(.write)?.value == value)
    }

    @Test("A long write past a manual peripheral's prepare queue throws 0x09 Prepare Queue Full, unheard by its app")
    func longWritePastThePrepareQueue() async throws {
        let rig = try await Rig.make(requestHandling: .manual, centralMTU: 23, preparedWriteCapacity: 36)
        let logStart = await rig.bridge.log.count
        // Parts of 18, 18 and 1 bytes: the third Prepare Write would hold 37.
        await #expect(throws: ATTError(.prepareQueueFull)) {
            try await rig.central.writeValue(testBytes(37), for: rig.remote(RigUUID.value), type: .withResponse)
        }
        let entries = Array(await rig.bridge.log.dropFirst(logStart))
        #expect(entries.map(\.kind) == [.write])
        #expect(entries.first?.error == .att(ATTError(.prepareQueueFull)))
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
        #expect(await rig.bridge.finish() == .clean)
    }

    @Test(
        "At ATT_MTU 23 a write of 20 bytes is one request and 21 bytes become a long write",
        arguments: [(20, [0]), (21, [0, 18]), (36, [0, 18]), (37, [0, 18, 36])])
    func longWriteBoundary(length: Int, offsets: [Int]) async throws {
        let rig = try await Rig.make(requestHandling: .manual, centralMTU: 23)
        var events = rig.peripheral.events().makeAsyncIterator()
        let value = testBytes(length)
        let write = Task {
            try await rig.central.writeValue(value, for: rig.remote(RigUUID.value), type: .withResponse)
        }
        let requests = try #require(await nextWriteRequests(&events))
        #expect(requests.map(\.offset) == offsets)
        #expect(requests.compactMap(\.value).reduce(Data(), +) == value)
        #expect(requests.allSatisfy { ($0.value?.count ?? 0) <= (offsets.count == 1 ? 20 : 18) })
        try await rig.peripheral.respond(to: requests[0], withResult: .success)
        try await write.value
    }

    @Test("A manual write without response is delivered, does not wait, and a success answer to it is ignored")
    func writeWithoutResponse() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        try await rig.central.writeValue(Data([4, 5]), for: rig.remote(RigUUID.value), type: .withoutResponse)

        let requests = try #require(await nextWriteRequests(&events))
        #expect(requests.count == 1)
        #expect(requests[0].value == Data([4, 5]))
        #expect(requests[0].isCommand)
        #expect(await rig.logEntries(.write).map(\.writeType) == [.withoutResponse])
        // CoreBluetooth ignores an answer to a write command: nothing crosses the link.
        try await rig.peripheral.respond(to: requests[0], withResult: .success)
        #expect(
            await rig.logEntries(.response).map(\.detail) == [
                "id=\(requests[0].id) result=success ignored: a write command gets no response"
            ])
        #expect(await rig.bridge.misuses.isEmpty)
        #expect(await rig.bridge.finish() == .clean)
    }

    @Test("A long write without response at ATT_MTU 23 is cut to 20 bytes and logged as truncated")
    func longWriteWithoutResponseIsTruncated() async throws {
        let rig = try await Rig.make(requestHandling: .manual, centralMTU: 23)
        var events = rig.peripheral.events().makeAsyncIterator()
        try await rig.central.writeValue(testBytes(50), for: rig.remote(RigUUID.value), type: .withoutResponse)
        let requests = try #require(await nextWriteRequests(&events))
        #expect(requests.count == 1)
        #expect(requests[0].value == testBytes(20))
        #expect(await rig.logEntries(.truncated).count == 1)
    }

    @Test("Responding twice to a write throws unknownRequest the second time")
    func respondTwice() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        let write = Task {
            try await rig.central.writeValue(Data([1]), for: rig.remote(RigUUID.value), type: .withResponse)
        }
        let requests = try #require(await nextWriteRequests(&events))
        try await rig.peripheral.respond(to: requests[0], withResult: .success)
        try await write.value
        await #expect(throws: APIMisuseError.unknownRequest(id: requests[0].id)) {
            try await rig.peripheral.respond(to: requests[0], withResult: .writeNotPermitted)
        }
        #expect(await rig.logEntries(.write).count == 1)
    }
}

/// How a link with a pending manual request ends.
enum PendingLoss: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case peripheralDrops, peripheralDropsWithTimeout, centralCancels

    var testDescription: String { rawValue }

    /// The error the waiting operation fails with.
    var expectedError: CoreBluetoothError {
        switch self {
        case .peripheralDrops: CoreBluetoothError(.peripheralDisconnected)
        case .peripheralDropsWithTimeout: CoreBluetoothError(.connectionTimeout)
        case .centralCancels: CoreBluetoothError(.operationCancelled)
        }
    }

    func perform(on rig: Rig) async throws {
        switch self {
        case .peripheralDrops: await rig.peripheral.simulateDisconnection(of: rig.central.identifier)
        case .peripheralDropsWithTimeout:
            await rig.peripheral.simulateDisconnection(
                of: rig.central.identifier, error: CoreBluetoothError(.connectionTimeout))
        case .centralCancels: try await rig.central.cancelPeripheralConnection(rig.peripheral.identifier)
        }
    }
}

@Suite("Request handling: links lost while a request is pending", .timeLimit(.minutes(10)))
struct RequestHandlingDisconnectTests {
    @Test(
        "A disconnect fails the waiting read, and the request can no longer be answered",
        arguments: PendingLoss.allCases)
    func disconnectDuringRead(loss: PendingLoss) async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        let other = MockCentralManager(bridge: rig.bridge)
        try await other.connect(rig.peripheral.identifier)
        // Each central uses the characteristics it discovered itself.
        let otherValue = try await other.discoverAll(for: rig.peripheral.identifier).first { $0.uuid == RigUUID.value }!
        var events = rig.peripheral.events().makeAsyncIterator()

        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let request = try #require(await nextReadRequest(&events))
        let otherRead = Task { try await other.readValue(for: otherValue) }
        let otherRequest = try #require(await nextReadRequest(&events))
        #expect(otherRequest.central.identifier == other.identifier)

        try await loss.perform(on: rig)

        await #expect(throws: loss.expectedError) { try await read.value }
        await #expect(throws: APIMisuseError.unknownRequest(id: request.id)) {
            try await rig.peripheral.respond(to: request, withResult: .success, value: Data([1]))
        }
        #expect(await !rig.central.isConnected(rig.peripheral.identifier))
        let disconnect = await rig.lastLogEntry(.disconnected)
        #expect(disconnect?.central == rig.central.identifier)
        #expect(disconnect?.error == (loss == .centralCancels ? nil : .coreBluetooth(loss.expectedError)))

        // The other central's request is still pending and still answerable.
        #expect(await other.isConnected(rig.peripheral.identifier))
        try await rig.peripheral.respond(to: otherRequest, withResult: .success, value: Data([2]))
        #expect(try await otherRead.value == Data([2]))
    }

    @Test(
        "A disconnect with a pending read also ends the central's subscriptions on the peripheral",
        arguments: PendingLoss.allCases)
    func disconnectEndsSubscriptions(loss: PendingLoss) async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        try await rig.central.setNotifyValue(true, for: rig.remote(RigUUID.value))
        let central = RemoteCentral(identifier: rig.central.identifier, maximumUpdateValueLength: 512)
        #expect(await events.next() == .subscribed(central, rig.local(RigUUID.value)))
        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        _ = try #require(await nextReadRequest(&events))

        try await loss.perform(on: rig)

        #expect(await events.next() == .unsubscribed(central, rig.local(RigUUID.value)))
        #expect(await rig.peripheral.subscribedCentrals(for: rig.local(RigUUID.value)).isEmpty)
        await #expect(throws: loss.expectedError) { try await read.value }
        // An update after the disconnect reaches nobody.
        _ = try await rig.peripheral.updateValue(Data([1]), for: rig.local(RigUUID.value))
        #expect(await rig.logEntries(.notification).isEmpty)
    }

    @Test("A disconnect fails the waiting write", arguments: PendingLoss.allCases)
    func disconnectDuringWrite(loss: PendingLoss) async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        let write = Task {
            try await rig.central.writeValue(Data([1]), for: rig.remote(RigUUID.value), type: .withResponse)
        }
        let requests = try #require(await nextWriteRequests(&events))
        try await loss.perform(on: rig)
        await #expect(throws: loss.expectedError) { try await write.value }
        await #expect(throws: APIMisuseError.unknownRequest(id: requests[0].id)) {
            try await rig.peripheral.respond(to: requests[0], withResult: .success)
        }
    }

    @Test("A disconnect in the middle of a long read fails it")
    func disconnectDuringLongRead() async throws {
        let rig = try await Rig.make(requestHandling: .manual, centralMTU: 23)
        var events = rig.peripheral.events().makeAsyncIterator()
        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let first = try #require(await nextReadRequest(&events))
        try await rig.peripheral.respond(to: first, withResult: .success, value: testBytes(30))
        let second = try #require(await nextReadRequest(&events))
        await rig.peripheral.simulateDisconnection(of: rig.central.identifier)
        await #expect(throws: CoreBluetoothError(.peripheralDisconnected)) { try await read.value }
        await #expect(throws: APIMisuseError.unknownRequest(id: second.id)) {
            try await rig.peripheral.respond(to: second, withResult: .success, value: Data())
        }
    }
}

@Suite("Request handling: handler closures", .timeLimit(.minutes(10)))
struct RequestHandlingHandlerTests {
    @Test("Reads are answered by the handler, which sees the central and offset 0")
    func handlerRead() async throws {
        let seen = Recorder<ATTRequest>()
        let rig = try await Rig.make(
            requestHandling: .handler { request in
                seen.append(request)
                return .success(Data("handled".utf8))
            })
        var events = rig.peripheral.events().makeAsyncIterator()
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.value)) == Data("handled".utf8))
        #expect(seen.entries.map(\.offset) == [0])
        #expect(seen.entries.first?.central.identifier == rig.central.identifier)
        #expect(seen.entries.first?.characteristic == rig.local(RigUUID.value))
        #expect(await rig.logEntries(.readRequest).isEmpty)
        // No request events reach the peripheral manager.
        #expect(await rig.bridge.finish() == .clean)
        #expect(await events.next() == nil)
    }

    @Test("A long read through the handler asks for offsets 0, 22 and 44 at ATT_MTU 23")
    func handlerLongRead() async throws {
        let value = testBytes(50)
        let offsets = Recorder<Int>()
        let rig = try await Rig.make(
            requestHandling: .handler { request in
                offsets.append(request.offset)
                return .success(value.subdata(in: request.offset..<value.count))
            }, centralMTU: 23)
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.value)) == value)
        #expect(offsets.entries == [0, 22, 44])
    }

    @Test("A handler error answering a read is thrown to the central")
    func handlerReadError() async throws {
        let rig = try await Rig.make(requestHandling: .handler { _ in .error(.insufficientAuthorization) })
        await #expect(throws: ATTError(.insufficientAuthorization)) {
            try await rig.central.readValue(for: rig.remote(RigUUID.value))
        }
        #expect(await rig.lastLogEntry(.read)?.error == .att(ATTError(.insufficientAuthorization)))
    }

    @Test("Writes are passed to the handler; a long write as its Prepare Write parts in order")
    func handlerWrites() async throws {
        let seen = Recorder<ATTRequest>()
        let rig = try await Rig.make(
            requestHandling: .handler { request in
                seen.append(request)
                return .success()
            }, centralMTU: 23)
        try await rig.central.writeValue(Data([1, 2]), for: rig.remote(RigUUID.value), type: .withResponse)
        #expect(seen.entries.map(\.value) == [Data([1, 2])])

        let value = testBytes(50)
        try await rig.central.writeValue(value, for: rig.remote(RigUUID.value), type: .withResponse)
        let batch = Array(seen.entries.dropFirst())
        #expect(batch.map(\.offset) == [0, 18, 36])
        #expect(batch.compactMap(\.value).reduce(Data(), +) == value)
        #expect(Set(batch.map(\.id)).count == 3)

        try await rig.central.writeValue(Data([9]), for: rig.remote(RigUUID.value), type: .withoutResponse)
        #expect(seen.entries.last?.value == Data([9]))
        #expect(seen.entries.count == 5)
        #expect(await rig.logEntries(.write).allSatisfy(\.succeeded))
    }

    @Test("A handler error is thrown for a write with response and ignored for one without")
    func handlerWriteError() async throws {
        let code = ATTError.Code.application(2)!
        let calls = Recorder<Int>()
        let rig = try await Rig.make(
            requestHandling: .handler { request in
                calls.append(request.offset)
                return .error(code)
            }, centralMTU: 23)
        await #expect(throws: ATTError(code)) {
            try await rig.central.writeValue(Data([1]), for: rig.remote(RigUUID.value), type: .withResponse)
        }
        #expect(await rig.lastLogEntry(.write)?.error == .att(ATTError(code)))

        try await rig.central.writeValue(Data([1]), for: rig.remote(RigUUID.value), type: .withoutResponse)
        #expect(await rig.lastLogEntry(.write)?.succeeded == true)

        // A long write stops at the first failing part.
        await #expect(throws: ATTError(code)) {
            try await rig.central.writeValue(testBytes(50), for: rig.remote(RigUUID.value), type: .withResponse)
        }
        #expect(calls.entries == [0, 0, 0])
        #expect(await rig.central.isConnected(rig.peripheral.identifier))
    }
}

@Suite("Request handling: automatic", .timeLimit(.minutes(10)))
struct RequestHandlingAutomaticTests {
    @Test("A dynamic characteristic starts empty, and a write then a read returns the written value")
    func writeThenRead() async throws {
        let rig = try await Rig.make()
        var events = rig.peripheral.events().makeAsyncIterator()
        let characteristic = rig.remote(RigUUID.value)
        #expect(try await rig.central.readValue(for: characteristic) == Data())
        try await rig.central.writeValue(Data([1, 2, 3]), for: characteristic, type: .withResponse)
        #expect(try await rig.central.readValue(for: characteristic) == Data([1, 2, 3]))
        try await rig.central.writeValue(Data([4]), for: characteristic, type: .withoutResponse)
        #expect(try await rig.central.readValue(for: characteristic) == Data([4]))

        let kinds = Set(await rig.bridge.log.map(\.kind))
        #expect(kinds.isDisjoint(with: [.readRequest, .writeRequest, .response]))
        // No request events reached the peripheral manager.
        #expect(await rig.bridge.finish() == .clean)
        #expect(await events.next() == nil)
    }

    @Test("setValue and updateValue change what reads return")
    func setValueAndUpdateValue() async throws {
        let rig = try await Rig.make()
        let characteristic = rig.remote(RigUUID.value)
        try await rig.peripheral.setValue(Data([0xAA]), for: rig.local(RigUUID.value))
        #expect(try await rig.central.readValue(for: characteristic) == Data([0xAA]))
        #expect(try await rig.peripheral.updateValue(Data([0xBB, 0xCC]), for: rig.local(RigUUID.value)))
        #expect(try await rig.central.readValue(for: characteristic) == Data([0xBB, 0xCC]))
        // A long value is read whole, in parts, as the stack does.
        try await rig.peripheral.setValue(testBytes(300), for: rig.local(RigUUID.value))
        #expect(try await rig.central.readValue(for: characteristic) == testBytes(300))
        #expect(await rig.bridge.finish() == .clean)
    }

    @Test("A static characteristic is answered by the stack even when requests are handled manually")
    func staticValueInManualMode() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        #expect(try await rig.central.readValue(for: rig.remote(RigUUID.readOnly)) == Data([1, 2, 3]))
        #expect(await rig.logEntries(.readRequest).isEmpty)
        #expect(await rig.bridge.finish() == .clean)
        #expect(await events.next() == nil)
    }
}

@Suite("Request handling: finishing the bridge", .timeLimit(.minutes(10)))
struct RequestHandlingFinishTests {
    @Test("finish() reports an unanswered manual request and cancels the waiting read")
    func unansweredRequest() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        let read = Task { try await rig.central.readValue(for: rig.remote(RigUUID.value)) }
        let request = try #require(await nextReadRequest(&events))

        let report = await rig.bridge.finish()
        guard case .leftovers(let items) = report else {
            Issue.record("expected leftovers, got \(report)")
            return
        }
        #expect(items.count == 3)
        #expect(items.last == .seed(0))
        #expect(
            items.contains(
                .unansweredRequest(
                    id: request.id, peripheral: rig.peripheral.identifier, characteristic: RigUUID.value, offset: 0)))
        #expect(
            items.contains {
                $0.description.contains("request \(request.id) (\(RigUUID.value), offset 0) was never answered")
            })
        #expect(
            items.contains {
                guard
                    case .operation(let name, rig.central.identifier, rig.peripheral.identifier, RigUUID.value, _) = $0
                else { return false }
                return name == "read \(RigUUID.value)@\(request.characteristic.handle)"
            })
        #expect(!report.isClean)

        await #expect(throws: CoreBluetoothError(.operationCancelled)) { try await read.value }
        await #expect(throws: APIMisuseError.unknownRequest(id: request.id)) {
            try await rig.peripheral.respond(to: request, withResult: .success, value: Data())
        }
        #expect(await events.next() == nil)
    }

    @Test("finish() reports request events nobody read")
    func unreadRequestEvents() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        let events = rig.peripheral.events()
        try await rig.central.writeValue(Data([1]), for: rig.remote(RigUUID.value), type: .withoutResponse)
        let report = await rig.bridge.finish()
        guard case .leftovers(let items) = report else {
            Issue.record("expected leftovers, got \(report)")
            return
        }
        #expect(items.count == 2)
        #expect(items.first?.description.contains("1 unread events, first writeRequests") == true)
        withExtendedLifetime(events) {}
    }
}

@Suite("Request handling: write commands and write requests", .timeLimit(.minutes(10)))
struct RequestHandlingCommandTests {
    /// The requests a handler saw, in order.
    final class Seen: @unchecked Sendable {
        // @unchecked Sendable: `requests` is only read and written with `lock` held.
        private let lock = NSLock()
        private var requests: [ATTRequest] = []

        func add(_ request: ATTRequest) {
            lock.lock()
            requests.append(request)
            lock.unlock()
        }

        var all: [ATTRequest] {
            lock.lock()
            defer { lock.unlock() }
            return requests
        }
    }

    @Test("A handler tells a write command (isCommand) from a write request, and a read is neither")
    func handlerSeesWhichWritesAreCommands() async throws {
        let seen = Seen()
        let rig = try await Rig.make(
            requestHandling: .handler { request in
                seen.add(request)
                return .success(Data([7]))
            })
        let characteristic = rig.remote(RigUUID.value)
        try await rig.central.writeValue(Data([1]), for: characteristic, type: .withoutResponse)
        try await rig.central.writeValue(Data([2]), for: characteristic, type: .withResponse)
        _ = try await rig.central.readValue(for: characteristic)
        #expect(seen.all.map(\.isCommand) == [true, false, false])
        #expect(seen.all.map(\.value) == [Data([1]), Data([2]), nil])
    }

    @Test("A manual peripheral is handed a write command marked isCommand, and need not answer it")
    func manualPeripheralSeesCommands() async throws {
        let rig = try await Rig.make(requestHandling: .manual)
        var events = rig.peripheral.events().makeAsyncIterator()
        try await rig.central.writeValue(Data([9]), for: rig.remote(RigUUID.value), type: .withoutResponse)
        var command: ATTRequest?
        while let event = await events.next() {
            if case .writeRequests(let requests) = event {
                command = requests.first
                break
            }
        }
        #expect(command?.isCommand == true)
        #expect(command?.value == Data([9]))
    }
}
