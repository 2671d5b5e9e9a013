import BLECore

/// What the central did to an attribute, or the peripheral sent, as one replayable step.
enum CapturedOperation: Sendable, Hashable {
    /// A read (Read plus the Read Blobs that continued it): the value, or the ATT error.
    case read(handle: UInt16, result: Result<[UInt8], ATTFailure>)
    /// A write: with response (a Write Request, or Prepare and Execute Writes) or without
    /// (a Write Command); `error` is the ATT error a request got.
    case write(handle: UInt16, value: [UInt8], withResponse: Bool, error: UInt8?)
    /// A notification or indication.
    case update(handle: UInt16, value: [UInt8], isIndication: Bool)
}

/// An ATT error code as a `Result` failure.
struct ATTFailure: Error, Sendable, Hashable {
    var code: UInt8
}

/// An operation with when it started (microseconds) and its packet number.
struct TimedOperation: Sendable, Hashable {
    var time: Int64
    var packet: Int
    var operation: CapturedOperation
}

/// Pairs a connection's ATT requests with their responses (ATT allows one outstanding
/// request per client) and turns each exchange into GATT knowledge — the discovered database
/// and the values read — and into operations to replay.
struct ATTConversation: Sendable {
    var gatt = CapturedGATT()
    var operations: [TimedOperation] = []
    var clientMTU: UInt16?
    var serverMTU: UInt16?
    /// When discovery began (microseconds), if the capture shows it.
    var discoveryTime: Int64?
    var warnings: [CaptureWarning] = []

    /// The index in `operations` of a read that Read Blobs may still continue.
    private var openRead: Int?
    /// Queued Prepare Writes: the first one's time and packet, and each part.
    private var prepared: [(time: Int64, packet: Int, handle: UInt16, offset: UInt16, value: [UInt8])] = []
    private var preparedError: UInt8?

    init(_ pdus: [TimedPDU]) {
        var outstanding: TimedPDU?
        var peripheralRequests = 0
        var peripheralMTU: UInt16?
        var centralUpdates = 0
        for item in pdus {
            if item.fromCentral {
                switch item.pdu {
                case _ where item.pdu.isRequest:
                    if let lost = outstanding { unanswered(lost) }
                    outstanding = item
                case .writeCommand(let handle, let value):
                    openRead = nil
                    append(item, .write(handle: handle, value: value, withResponse: false, error: nil))
                case .signedWriteCommand(let handle, _, _):
                    warnings.append(
                        CaptureWarning(
                            .notReplayed("a signed write to handle 0x\(hex(handle)) is not replayed"),
                            packet: item.packet))
                case .notification, .indication, .multipleNotification:
                    centralUpdates += 1
                case .exchangeMTUResponse(let central) where peripheralMTU != nil:
                    // The peripheral asked: the same exchange, the other way round.
                    clientMTU = central
                    serverMTU = peripheralMTU
                    peripheralMTU = nil
                default:
                    break  // confirmations, and responses to the peripheral's own requests
                }
                continue
            }
            switch item.pdu {
            case .exchangeMTURequest(let mtu):
                peripheralMTU = mtu
            case _ where item.pdu.isRequest:
                peripheralRequests += 1
            case .notification(let handle, let value):
                append(item, .update(handle: handle, value: value, isIndication: false))
            case .indication(let handle, let value):
                append(item, .update(handle: handle, value: value, isIndication: true))
            case .multipleNotification(let values):
                for entry in values {
                    append(item, .update(handle: entry.handle, value: entry.value, isIndication: false))
                }
            case _ where item.pdu.isResponse:
                guard let request = outstanding, Self.answers(item.pdu, request.pdu) else {
                    warnings.append(CaptureWarning(.unexpectedResponse(opcode: item.pdu.opcode), packet: item.packet))
                    continue
                }
                outstanding = nil
                exchange(request, item)
            default:
                break
            }
        }
        if let lost = outstanding { unanswered(lost) }
        if peripheralRequests > 0 { warnings.append(CaptureWarning(.peripheralRequests(count: peripheralRequests))) }
        if centralUpdates > 0 {
            warnings.append(
                CaptureWarning(
                    .notReplayed(
                        "the central sent \(centralUpdates) notification(s) or indication(s) as a GATT server; "
                            + "they are not replayed")))
        }
    }

    /// Whether `response` answers `request`: the next opcode, or an Error Response naming it.
    static func answers(_ response: ATTPDU, _ request: ATTPDU) -> Bool {
        if case .errorResponse(let opcode, _, _) = response { return opcode == request.opcode }
        return response.opcode == request.opcode + 1
    }

    /// Whether a service group's handles are in order (and not 0); warns when not.
    private mutating func wellFormed(_ group: ATTPDU.Group, opcode: UInt8, packet: Int) -> Bool {
        guard group.handle == 0 || group.endHandle < group.handle else { return true }
        warnings.append(
            CaptureWarning(
                .undecodableATT(
                    .malformed(
                        opcode: opcode,
                        reason: "the service group 0x\(hex(group.handle))…0x\(hex(group.endHandle)) does not run "
                            + "forwards from a valid handle; it was skipped")),
                packet: packet))
        return false
    }

    private mutating func unanswered(_ request: TimedPDU) {
        warnings.append(CaptureWarning(.unansweredRequest(opcode: request.pdu.opcode), packet: request.packet))
    }

    /// Adds an operation at the place of its packet in the capture: a request's operation is
    /// known only once its response came, and the notifications the peripheral sent meanwhile
    /// (already added) came after the request, so they go after it, as the app saw them.
    /// Returns its index in `operations`.
    @discardableResult
    private mutating func append(_ item: TimedPDU, _ operation: CapturedOperation) -> Int {
        add(TimedOperation(time: item.time, packet: item.packet, operation: operation))
    }

    @discardableResult
    private mutating func add(_ timed: TimedOperation) -> Int {
        var index = operations.endIndex
        while index > operations.startIndex, operations[index - 1].packet > timed.packet { index -= 1 }
        operations.insert(timed, at: index)
        return index
    }

    private mutating func noteDiscovery(_ item: TimedPDU) {
        if discoveryTime == nil { discoveryTime = item.time }
        openRead = nil
    }

    /// Learns from one request and its response.
    private mutating func exchange(_ request: TimedPDU, _ response: TimedPDU) {
        var error: UInt8?
        if case .errorResponse(_, _, let code) = response.pdu { error = code }
        if case .readBlobRequest = request.pdu {} else { openRead = nil }
        switch (request.pdu, response.pdu) {
        case (.exchangeMTURequest(let client), .exchangeMTUResponse(let server)):
            clientMTU = client
            serverMTU = server
        case (.readByGroupTypeRequest(_, _, let type), _):
            noteDiscovery(request)
            guard case .readByGroupTypeResponse(let groups) = response.pdu else { return }
            let isPrimary = type == CapturedGATT.primaryService
            guard isPrimary || type == CapturedGATT.secondaryService else { return }
            for group in groups {
                guard let uuid = try? ATTPDU.uuid(group.value[...], opcode: 0x11),
                    wellFormed(group, opcode: 0x11, packet: response.packet)
                else { continue }
                gatt.services[group.handle] = CapturedGATT.Service(
                    handle: group.handle, endHandle: group.endHandle, uuid: uuid, isPrimary: isPrimary)
            }
        case (.findByTypeValueRequest(_, _, let type, let value), _):
            noteDiscovery(request)
            guard type == 0x2800, case .findByTypeValueResponse(let groups) = response.pdu,
                let uuid = try? ATTPDU.uuid(value[...], opcode: 0x06)
            else { return }
            for group in groups where wellFormed(group, opcode: 0x07, packet: response.packet) {
                gatt.services[group.handle] = CapturedGATT.Service(
                    handle: group.handle, endHandle: group.endHandle, uuid: uuid, isPrimary: true)
            }
        case (.readByTypeRequest(_, _, let type), _):
            readByType(type, request: request, response: response)
        case (.findInformationRequest, _):
            noteDiscovery(request)
            guard case .findInformationResponse(let entries) = response.pdu else { return }
            for entry in entries { gatt.types[entry.handle] = entry.uuid }
        case (.readRequest(let handle), .readResponse(let value)):
            gatt.values[handle] = value
            openRead = append(request, .read(handle: handle, result: .success(value)))
        case (.readRequest(let handle), _):
            append(request, .read(handle: handle, result: .failure(ATTFailure(code: error ?? 0))))
        case (.readBlobRequest(let handle, let offset), _):
            continueRead(handle: handle, offset: offset, response: response.pdu, packet: request.packet)
        case (.readMultipleVariableRequest(let handles), .readMultipleVariableResponse(let values, let lastIsPartial)):
            for (position, (handle, value)) in zip(handles, values).enumerated() {
                if lastIsPartial, position == values.count - 1 {
                    warnings.append(
                        CaptureWarning(
                            .notReplayed(
                                "a Read Multiple Variable response was cut at ATT_MTU − 1 inside the value of handle "
                                    + "0x\(hex(handle)) (\(value.count) byte\(value.count == 1 ? "" : "s") of it came); "
                                    + "that read is not replayed"), packet: response.packet))
                    continue
                }
                gatt.values[handle] = value
                append(request, .read(handle: handle, result: .success(value)))
            }
            if handles.count > values.count {
                let missing = handles[values.count...]
                warnings.append(
                    CaptureWarning(
                        .notReplayed(
                            "a Read Multiple Variable response holds no value for handle\(missing.count == 1 ? "" : "s") "
                                + missing.map { "0x\(hex($0))" }.joined(separator: ", ")
                                + " (it was cut at ATT_MTU − 1); not replayed"), packet: response.packet))
            }
        case (.readMultipleRequest, _), (.readMultipleVariableRequest, _):
            warnings.append(
                CaptureWarning(
                    .notReplayed("a Read Multiple request is not replayed (its values cannot be told apart)"),
                    packet: request.packet))
        case (.writeRequest(let handle, let value), _):
            append(request, .write(handle: handle, value: value, withResponse: true, error: error))
        case (.prepareWriteRequest(let handle, let offset, let value), _):
            if prepared.isEmpty { preparedError = nil }
            prepared.append((request.time, request.packet, handle, offset, value))
            if let error, preparedError == nil { preparedError = error }
        case (.executeWriteRequest(let commit), _):
            executeWrite(commit: commit, error: error, packet: request.packet)
        default:
            break
        }
    }

    private mutating func readByType(_ type: BluetoothUUID, request: TimedPDU, response: TimedPDU) {
        let entries: [ATTPDU.HandleValue]
        if case .readByTypeResponse(let list) = response.pdu { entries = list } else { entries = [] }
        switch type {
        case CapturedGATT.include:
            noteDiscovery(request)
            for entry in entries where entry.value.count == 4 || entry.value.count == 6 {
                let value = entry.value
                let uuid = value.count == 6 ? try? ATTPDU.uuid(value[4...], opcode: 0x09) : nil
                let group = ATTPDU.Group(
                    handle: UInt16(value[0]) | UInt16(value[1]) << 8,
                    endHandle: UInt16(value[2]) | UInt16(value[3]) << 8)
                guard wellFormed(group, opcode: 0x09, packet: response.packet) else { continue }
                gatt.includes[entry.handle] = CapturedGATT.Include(
                    declarationHandle: entry.handle, serviceHandle: group.handle, endHandle: group.endHandle, uuid: uuid
                )
            }
        case CapturedGATT.characteristic:
            noteDiscovery(request)
            for entry in entries where entry.value.count == 5 || entry.value.count == 19 {
                let value = entry.value
                guard let uuid = try? ATTPDU.uuid(value[3...], opcode: 0x09) else { continue }
                let valueHandle = UInt16(value[1]) | UInt16(value[2]) << 8
                guard entry.handle != 0, valueHandle > entry.handle else {
                    warnings.append(
                        CaptureWarning(
                            .undecodableATT(
                                .malformed(
                                    opcode: 0x09,
                                    reason: "the characteristic declared at 0x\(hex(entry.handle)) puts its value "
                                        + "at 0x\(hex(valueHandle)), not after it; it was skipped")),
                            packet: response.packet))
                    continue
                }
                gatt.characteristics[entry.handle] = CapturedGATT.Characteristic(
                    declarationHandle: entry.handle, valueHandle: valueHandle, properties: value[0], uuid: uuid)
            }
        default:
            // Read Using Characteristic UUID: each handle's value was read.
            openRead = nil
            for entry in entries {
                gatt.values[entry.handle] = entry.value
                append(request, .read(handle: entry.handle, result: .success(entry.value)))
            }
        }
    }

    /// A Read Blob continues the read just before it, at the offset it had reached.
    private mutating func continueRead(handle: UInt16, offset: UInt16, response: ATTPDU, packet: Int) {
        guard let index = openRead, case .read(let readHandle, .success(let soFar)) = operations[index].operation,
            readHandle == handle, soFar.count == Int(offset)
        else {
            warnings.append(
                CaptureWarning(
                    .notReplayed(
                        "a Read Blob of handle 0x\(hex(handle)) at offset \(offset) continues no read the capture "
                            + "showed; it was skipped"),
                    packet: packet))
            return
        }
        switch response {
        case .readBlobResponse(let part):
            let value = soFar + part
            gatt.values[handle] = value
            operations[index].operation = .read(handle: handle, result: .success(value))
        case .errorResponse(_, _, let code) where code == 0x0B || code == 0x07:
            openRead = nil  // attribute not long / invalid offset: the value was complete
        case .errorResponse(_, _, let code):
            operations[index].operation = .read(handle: handle, result: .failure(ATTFailure(code: code)))
            openRead = nil
        default:
            openRead = nil
        }
    }

    private mutating func executeWrite(commit: Bool, error: UInt8?, packet: Int) {
        defer {
            prepared = []
            preparedError = nil
        }
        guard let first = prepared.first else { return }
        let sameHandle = prepared.allSatisfy { $0.handle == first.handle }
        var value: [UInt8] = []
        var contiguous = true
        for part in prepared {
            if Int(part.offset) != value.count { contiguous = false }
            value += part.value
        }
        guard sameHandle, contiguous else {
            warnings.append(
                CaptureWarning(.notReplayed("a reliable write of several parts is not replayed"), packet: first.packet))
            return
        }
        guard commit || preparedError != nil else {
            warnings.append(
                CaptureWarning(
                    .notReplayed("a long write to handle 0x\(hex(first.handle)) was cancelled; it is not replayed"),
                    packet: packet))
            return
        }
        add(
            TimedOperation(
                time: first.time, packet: first.packet,
                operation: .write(handle: first.handle, value: value, withResponse: true, error: preparedError ?? error)
            ))
    }
}
