import BLECore
import BLEMockKit

/// Builds the scenario that replays a connection: scan, connect, discover, then what the
/// central did and the peripheral sent, in order, with `advance` steps keeping the captured
/// times. Reads expect the values the peripheral gave, ATT errors are injected before the
/// operation that got them, and notifications expect their payloads.
///
/// The `advance` steps move time on *to* each operation's time counted from the connection
/// (`"to"`, `"from": "connect"`) rather than *by* the gap since the previous one, so a realistic
/// replay does not add the time its own steps take (a notification's connection event, a read's
/// round trip) to every gap; in fast mode, where nothing else takes time, the two are the same
/// and each step's trace time is its time in the capture. (After a gap longer than a scenario's
/// longest wait, cut to it, the steps go `by` the gaps.) And the notifications of one
/// characteristic that came in one connection event (each less than
/// `LinkFigures.connectionEventWindow` after the one before) become one `notify` step with
/// `values`, as the writes without response sent together become one `write` step with
/// `values`, so a realistic link carries them several per connection event, as it did.
///
/// A capture times each request when it was sent; a recording (`recordedTimes`) times each
/// operation when its answer came back, so its `discover` step, which starts the discovery,
/// follows the connection at once.
struct ScenarioBuilder {
    let connection: ConnectionLog
    let profile: ProfileBuilder
    private(set) var steps: [JSONValue] = []
    private(set) var warnings: [CaptureWarning] = []
    /// Whether an operation failed with 0x05 Insufficient Authentication or 0x0F Insufficient
    /// Encryption: the captured central did not pair and retry, so the replay's central must not
    /// either (a realistic run's central pairs on such a refusal by default).
    private(set) var keepsSecurityRefusals = false

    /// Microseconds since the connection that the steps so far account for.
    private var now: Int64 = 0
    /// The current value of each dynamic characteristic in the simulation, by value handle.
    private var current: [UInt16: [UInt8]] = [:]
    private var subscribed: Set<UInt16> = []
    private var subscribeAdded: Set<UInt16> = []
    /// The updates warned of for a kind their characteristic's properties do not declare.
    private var undeclaredUpdates: Set<UndeclaredUpdate> = []
    private var stackOperations = 0
    /// How many times the capture's clock went back between the records replayed.
    private var clockWentBack = 0
    /// The longest notification, indication or write without response the replayed link carries.
    private let updateLimit: Int
    /// Whether the times are when answers reached the app (a recording), not when requests were
    /// sent (a capture).
    private let recordedTimes: Bool
    /// Whether a gap longer than a scenario's longest wait was cut: times after it are replayed
    /// with `advance` `by` steps.
    private var gapWasCut = false
    /// The step the last notification or write without response went into, if it was the
    /// last step: its handle, kind, time and values.
    private var burst: (step: Int, handle: UInt16, notification: Bool, time: Int64, values: [[UInt8]])?
    /// The descriptors discovery described, by handle (looked up for each operation on a handle
    /// that is not a characteristic's value).
    private let descriptors: CapturedGATT.DescriptorIndex

    init(
        connection: ConnectionLog, conversation: ATTConversation, profile: ProfileBuilder, linkMTU: Int,
        recordedTimes: Bool = false
    ) {
        self.connection = connection
        self.profile = profile
        self.recordedTimes = recordedTimes
        descriptors = CapturedGATT.DescriptorIndex(profile.gatt)
        // An update or a write command carries at most ATT_MTU − 3 bytes of a value, and a value
        // holds at most 512 (Vol 3, Part F, 3.2.9): at ATT_MTU 517, 512 rather than 514.
        updateLimit = min(linkMTU - 3, PeripheralProfile.maximumAttributeLength)
        for (handle, entry) in profile.entries where !entry.isStatic { current[handle] = entry.initialValue }
        steps.append(.object(["op": .string("scan"), "expect": .object(["ok": .bool(true)])]))
        steps.append(
            .object(["op": .string("connect"), "expect": .object(["ok": .bool(true), "mtu": .int(linkMTU)])]))
        let firstOperation = conversation.operations.first?.time
        if let time = conversation.discoveryTime ?? firstOperation {
            // A recording shows when discovery's answers reached the app, not when the app
            // asked: its replay discovers as soon as it connects, as apps do.
            if !recordedTimes { advance(to: min(time, firstOperation ?? time)) }
            steps.append(
                .object([
                    "op": .string("discover"),
                    "expect": .object(["ok": .bool(true), "discovered": profile.discovered]),
                ]))
        }
        for timed in conversation.operations { add(timed) }
        if stackOperations > 0 {
            warnings.append(
                CaptureWarning(
                    .notReplayed(
                        "\(stackOperations) operation(s) on the GAP and GATT services are not replayed (the simulated "
                            + "stack provides those services)")))
        }
        if let end = connection.end { disconnect(at: end) }
        if clockWentBack > 0 {
            warnings.append(
                CaptureWarning(
                    .notReplayed(
                        "the capture's clock went back \(clockWentBack) time(s) between operations: each operation "
                            + "after a step back is replayed with no wait before it")))
        }
    }

    /// The scenario's `central` settings: its preferred ATT_MTU and, when the session kept a
    /// security refusal (see ``keepsSecurityRefusals``), `"pairing": "never"`.
    static func centralSettings(preferredMTU: Int, keepsSecurityRefusals: Bool) -> JSONValue {
        var members: [JSONValue.Member] = [(key: "preferredMTU", value: .int(preferredMTU))]
        if keepsSecurityRefusals { members.append((key: "pairing", value: .string("never"))) }
        return .object(members)
    }

    /// Adds an `advance` step up to `time` (microseconds, capture clock), if time passed.
    private mutating func advance(to time: Int64) {
        // A damaged capture's clock can jump anywhere in Int64: saturate rather than overflow.
        let (difference, overflow) = time.subtractingReportingOverflow(connection.start)
        let offset = overflow ? (time < connection.start ? Int64.min : Int64.max) : difference
        if offset < now { clockWentBack += 1 }
        guard offset > now else { return }
        var gap = Duration.microseconds(offset - now)
        if gap > FixtureDuration.maximumScenarioWait {
            // A scenario waits at most an hour per step; a longer quiet stretch (or a damaged
            // clock's jump) changes nothing a replay checks, so it is replayed as an hour.
            warnings.append(
                CaptureWarning(
                    .notReplayed(
                        "a gap of \(FixtureDuration.string(gap)) in the \(recordedTimes ? "recording" : "capture") "
                            + "is replayed as "
                            + "\(FixtureDuration.string(FixtureDuration.maximumScenarioWait)) (a scenario waits at "
                            + "most an hour per step)")))
            gap = FixtureDuration.maximumScenarioWait
            gapWasCut = true
        }
        if !gapWasCut {
            steps.append(
                .object([
                    "op": .string("advance"), "to": .string(FixtureDuration.string(.microseconds(offset))),
                    "from": .string("connect"),
                ]))
        } else {
            steps.append(.object(["op": .string("advance"), "by": .string(FixtureDuration.string(gap))]))
        }
        now = offset
    }

    /// Whether `timed` is a notification or write without response of the same handle and kind
    /// as the burst in the last step, less than `LinkFigures.connectionEventWindow` after the
    /// burst's last one: of the same connection event (a recording's burst).
    private func continuesBurst(_ timed: TimedOperation, handle: UInt16) -> Bool {
        let notification: Bool
        switch timed.operation {
        case .update(_, _, false): notification = true
        case .write(_, _, false, nil): notification = false
        default: return false
        }
        return continuesBurst(handle: handle, notification: notification, time: timed.time)
    }

    private func continuesBurst(handle: UInt16, notification: Bool, time: Int64) -> Bool {
        guard let last = burst, last.step == steps.count - 1, last.handle == handle,
            last.notification == notification
        else { return false }
        let (gap, overflow) = time.subtractingReportingOverflow(last.time)
        return !overflow && gap >= 0 && .microseconds(gap) < LinkFigures.connectionEventWindow
    }

    /// Adds the notification or write without response at `time` to the last step when that
    /// step holds ones of the same handle and kind of the same connection event (see
    /// ``continuesBurst(_:handle:)``); returns whether it did.
    private mutating func joinBurst(handle: UInt16, notification: Bool, time: Int64, value: [UInt8]) -> Bool {
        if continuesBurst(handle: handle, notification: notification, time: time), var last = burst {
            last.time = time
            last.values.append(value)
            burst = last
            let char = steps[last.step].member("char") ?? .null
            let values = JSONValue.array(last.values.map { JSONValue.bytes($0) })
            if notification {
                let received = JSONValue.array(last.values.map { .string(FixtureBytes.hexString($0)) })
                steps[last.step] = .object([
                    "op": .string("notify"), "char": char, "values": values,
                    "expect": .object(["ok": .bool(true), "received": received]),
                ])
            } else {
                steps[last.step] = .object([
                    "op": .string("write"), "char": char, "values": values, "withResponse": .bool(false),
                    "expect": .object(["ok": .bool(true)]),
                ])
            }
            return true
        }
        burst = (steps.count, handle, notification, time, [value])
        return false
    }

    private mutating func add(_ timed: TimedOperation) {
        let handle: UInt16
        switch timed.operation {
        case .read(let h, _), .write(let h, _, _, _), .update(let h, _, _): handle = h
        }
        if profile.omittedRanges.contains(where: { $0.contains(handle) }) {
            stackOperations += 1
            return
        }
        if let entry = profile.entries[handle] {
            if let service = entry.secondaryService {
                return skip(
                    "\(timed.operation.phrase) of \(entry.id) in secondary service \(service) (which a scenario's "
                        + "discover step does not reach)", timed.packet)
            }
            // (A notification or write without response that joins the burst before it keeps the
            // burst's time: the replay queues the burst at once.)
            if !continuesBurst(timed, handle: handle) { advance(to: timed.time) }
            characteristic(timed, entry: entry, handle: handle)
            return
        }
        if let (characteristic, descriptor) = descriptors.descriptor(at: handle),
            let entry = profile.entries[characteristic.valueHandle], entry.secondaryService == nil
        {
            if case .write(_, let value, true, let error) = timed.operation,
                descriptor.uuid == .clientCharacteristicConfiguration
            {
                advance(to: timed.time)
                configure(
                    entry: entry, handle: characteristic.valueHandle, value: value, error: error, packet: timed.packet)
                return
            }
            if case .read(_, .success) = timed.operation { return }  // its value is in the profile
            skip("\(timed.operation.phrase) of descriptor \(descriptor.uuid) at 0x\(hex(handle))", timed.packet)
            return
        }
        if case .read(_, .success) = timed.operation,
            profile.gatt.includes.values.contains(where: { $0.serviceHandle == handle })
        {
            return  // the UUID of an included 128-bit service
        }
        skip(
            "\(timed.operation.phrase) of handle 0x\(hex(handle)), which the capture's discovery did not describe,",
            timed.packet)
    }

    private mutating func skip(_ what: String, _ packet: Int) {
        warnings.append(CaptureWarning(.notReplayed(what + " is not replayed"), packet: packet))
    }

    private mutating func characteristic(_ timed: TimedOperation, entry: ProfileBuilder.Entry, handle: UInt16) {
        let char = JSONValue.string(entry.id)
        let limit = PeripheralProfile.maximumAttributeLength
        switch timed.operation {
        case .read(_, .success(let value)) where value.count > limit,
            .write(_, let value, true, _) where value.count > limit:
            return skip(
                "\(timed.operation.phrase) of \(value.count) bytes of \(entry.id) (attribute values hold at most "
                    + "\(limit))", timed.packet)
        case .write(_, let value, false, _) where value.count > updateLimit,
            .update(_, let value, _) where value.count > updateLimit:
            return skip(
                "\(timed.operation.phrase) of \(value.count) bytes of \(entry.id) (more than the \(updateLimit) "
                    + "bytes the replayed link carries: ATT_MTU − 3, and at most \(limit), the longest attribute "
                    + "value)", timed.packet)
        case .read(_, .success(let value)):
            guard entry.properties.contains(.read) else {
                return skip("a successful read of \(entry.id), which does not declare the read property,", timed.packet)
            }
            if !entry.isStatic, current[handle] != value {
                steps.append(.object(["op": .string("setValue"), "char": char, "value": .bytes(value)]))
                current[handle] = value
            }
            steps.append(
                .object([
                    "op": .string("read"), "char": char,
                    "expect": .object(["ok": .bool(true), "value": .string(FixtureBytes.hexString(value))]),
                ]))
        case .read(_, .failure(let failure)):
            injectAndRun(
                target: "read", op: .object(["op": .string("read"), "char": char]), code: failure.code, char: char,
                packet: timed.packet)
        case .write(_, let value, let withResponse, let error):
            let op: JSONValue = .object([
                "op": .string("write"), "char": char, "value": .bytes(value), "withResponse": .bool(withResponse),
            ])
            if let error {
                // A write command gets no response, so no ATT error: a recording that says one did
                // is replayed without it (an injection for it would fail the next write with
                // response instead).
                guard withResponse else {
                    return skip(
                        "a write without response to \(entry.id) failing with ATT error 0x\(hex(error)) (a write "
                            + "command gets no response)", timed.packet)
                }
                return injectAndRun(target: "write", op: op, code: error, char: char, packet: timed.packet)
            }
            let property: CharacteristicProperties = withResponse ? .write : .writeWithoutResponse
            guard entry.properties.contains(property) else {
                return skip(
                    "a successful write \(withResponse ? "with" : "without") response to \(entry.id), which does "
                        + "not declare \(property.names[0]),", timed.packet)
            }
            if withResponse || !joinBurst(handle: handle, notification: false, time: timed.time, value: value) {
                steps.append(op.adding("expect", .object(["ok": .bool(true)])))
            }
            current[handle] = Array(value.prefix(PeripheralProfile.maximumAttributeLength))
        case .update(_, let value, let isIndication):
            guard entry.properties.supportsSubscription else {
                return skip("an update of \(entry.id), which neither notifies nor indicates,", timed.packet)
            }
            let kind: CharacteristicProperties = isIndication ? .indicate : .notify
            if !entry.properties.contains(kind),
                undeclaredUpdates.insert(UndeclaredUpdate(handle: handle, isIndication: isIndication)).inserted
            {
                let (sent, declared, step) =
                    isIndication ? ("an indication", "notify", "indicates") : ("a notification", "indicate", "notifies")
                warnings.append(
                    CaptureWarning(
                        .notReplayed(
                            "\(entry.id) sent \(sent), which its properties do not declare (they declare \(declared) "
                                + "only); the scenario \(step) as captured"), packet: timed.packet))
            }
            if !subscribed.contains(handle) {
                var subscribe: JSONValue = .object(["op": .string("subscribe"), "char": char])
                if isIndication, entry.properties.contains(.notify) {
                    subscribe = subscribe.adding("indicate", .bool(true))
                }
                steps.append(subscribe.adding("expect", .object(["ok": .bool(true)])))
                subscribed.insert(handle)
                if subscribeAdded.insert(handle).inserted {
                    warnings.append(
                        CaptureWarning(
                            .notReplayed(
                                "\(entry.id) sent updates without a subscription the capture showed; the scenario "
                                    + "subscribes first"), packet: timed.packet))
                }
            }
            if isIndication || !joinBurst(handle: handle, notification: true, time: timed.time, value: value) {
                steps.append(
                    .object([
                        "op": .string(isIndication ? "indicate" : "notify"), "char": char, "value": .bytes(value),
                        "expect": .object([
                            "ok": .bool(true), "received": .array([.string(FixtureBytes.hexString(value))]),
                        ]),
                    ]))
            }
            current[handle] = Array(value.prefix(PeripheralProfile.maximumAttributeLength))
        }
    }

    /// A write of a Client Characteristic Configuration descriptor: subscribe or unsubscribe.
    private mutating func configure(
        entry: ProfileBuilder.Entry, handle: UInt16, value: [UInt8], error: UInt8?, packet: Int
    ) {
        guard entry.properties.supportsSubscription else {
            return skip("a subscription to \(entry.id), which neither notifies nor indicates,", packet)
        }
        let enable = value.contains { $0 != 0 }
        var op: JSONValue = .object(["op": .string(enable ? "subscribe" : "unsubscribe"), "char": .string(entry.id)])
        // Bit 1 of the configuration alone asks for indications: on a characteristic that can do
        // both, a plain subscribe would enable notifications (Vol 3, Part G, 3.3.3.3).
        if enable, (value.first ?? 0) & 0x03 == 0x02, entry.properties.isSuperset(of: [.notify, .indicate]) {
            op = op.adding("indicate", .bool(true))
        }
        if let error {
            injectAndRun(target: "subscribe", op: op, code: error, char: .string(entry.id), packet: packet)
            return
        }
        steps.append(op.adding("expect", .object(["ok": .bool(true)])))
        if enable { subscribed.insert(handle) } else { subscribed.remove(handle) }
    }

    /// Injects ATT error `code` for the next `target` operation on `char`, then runs `op`
    /// expecting that error. Code 0x00 is reserved (no stack sends it; a damaged capture can
    /// hold it), so such a response is skipped with a warning.
    private mutating func injectAndRun(target: String, op: JSONValue, code: UInt8, char: JSONValue, packet: Int) {
        guard code != 0 else {
            return skip("\(target) failing with the reserved ATT error code 0x00", packet)
        }
        if ATTError.Code(rawValue: code).asksForEncryption { keepsSecurityRefusals = true }
        steps.append(
            .object(["op": .string("inject"), "target": .string(target), "char": char, "attError": .int(Int(code))]))
        steps.append(op.adding("expect", .object(["ok": .bool(false), "attError": .int(Int(code))])))
    }

    /// The end of the connection: asked for by one side, or lost (supervision timeout). The
    /// capturing side asked when the capture shows its HCI_Disconnect or, without one (a
    /// filtered capture), when the reason is 0x16, Connection Terminated by Local Host; else the
    /// other side did (0x13…0x15, the remote user, its low resources or its power off).
    private mutating func disconnect(at time: Int64) {
        advance(to: time)
        if connection.disconnectReason == 0x08 {
            steps.append(.object(["op": .string("fault"), "kind": .string("disconnect")]))
            return
        }
        if let error = connection.disconnectError {
            steps.append(
                .object(["op": .string("fault"), "kind": .string("disconnect"), "error": .string(error.description)]))
            return
        }
        let byLocalSide = connection.disconnectedLocally || connection.disconnectReason == 0x16
        let byCentral = byLocalSide == connection.isLocalCentral
        steps.append(
            .object([
                "op": .string("disconnect"), "by": .string(byCentral ? "central" : "peripheral"),
                "expect": .object(["ok": .bool(true)]),
            ]))
    }
}

extension CapturedOperation {
    /// `a read`, `a write` or `an update`, for messages.
    var phrase: String {
        switch self {
        case .read: "a read"
        case .write: "a write"
        case .update: "an update"
        }
    }
}

extension JSONValue {
    /// The value of an object's member `key`, if it has one.
    func member(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// An object with one more member at the end (other values are returned unchanged).
    func adding(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(let members) = self else { return self }
        return .object(members + [(key: key, value: value)])
    }
}

/// An update of a kind its characteristic does not declare (warned of once a handle and kind).
private struct UndeclaredUpdate: Hashable {
    var handle: UInt16
    var isIndication: Bool
}
