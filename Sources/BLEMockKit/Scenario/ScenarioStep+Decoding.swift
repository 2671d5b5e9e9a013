import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ScenarioStep {
    /// The fields each op allows besides `op` and `expect`.
    public static let fields: [String: [String]] = [
        "powerOn": ["role"],
        "setState": ["state", "role"],
        "scan": ["services", "allowDuplicates", "solicited", "for"],
        "stopScan": [],
        "connect": ["timeout"],
        "discover": [],
        "read": ["char", "long"],
        "write": ["char", "value", "values", "withResponse"],
        "subscribe": ["char", "indicate"],
        "unsubscribe": ["char"],
        "notify": ["char", "value", "values"],
        "indicate": ["char", "value"],
        "readRequest": ["char", "offset"],
        "readRSSI": [],
        "advance": ["by", "to", "from"],
        "inject": ["target", "char", "attError", "cbError", "neverAnswers", "times"],
        "fault": ["kind", "error", "role"],
        "disconnect": ["by"],
        "setValue": ["char", "value"],
        "readDescriptor": ["char", "descriptor"],
        "writeDescriptor": ["char", "descriptor", "value"],
        "setMTU": ["mtu", "role"],
    ]

    /// The largest offset a Read Blob Request carries (its offset field is 16 bits).
    static let maximumReadOffset = Int(UInt16.max)

    /// Reads step `index` of a scenario.
    init(node: FixtureJSON, index: Int, resolver: CharacteristicResolver) throws(FixtureError) {
        let example = #"{"op": "read", "char": "loc"}"#
        guard node.members != nil else {
            throw FixtureError.wrongType(node, expected: "a step object", example: example)
        }
        let opNode = try FixtureObject(
            node, fields: Set(Self.fields.values.flatMap { $0 }).sorted() + ["op", "expect"],
            example: example
        )
        .required("op", example: "\"scan\"")
        guard let op = opNode.string else {
            throw FixtureError.wrongType(opNode, expected: "an op name", example: "\"scan\"")
        }
        guard let allowed = Self.fields[op] else {
            throw FixtureError(
                .unknownOp(op), at: opNode, message: "unknown op \"\(op)\"",
                fix: FixtureError.choice(for: op, among: ScenarioStep.Operation.names))
        }
        let object = try FixtureObject(node, fields: ["op", "expect"] + allowed, example: example)
        let operation = try Self.operation(op, object, resolver: resolver)
        let expectation = try object["expect"].map { node throws(FixtureError) in try ScenarioExpectation(node: node) }
        self.init(index: index, operation: operation, expectation: expectation, line: node.line, column: node.column)
    }

    private static func operation(_ op: String, _ object: FixtureObject, resolver: CharacteristicResolver)
        throws(FixtureError) -> Operation
    {
        func role() throws(FixtureError) -> Role {
            try object["role"].map { node throws(FixtureError) in
                try Scenario.choice(node, among: Role.self, what: "role")
            }
                ?? .central
        }
        func characteristic() throws(FixtureError) -> CharacteristicReference {
            try resolver.resolve(try object.required("char", example: "\"hrm\""))
        }
        func value() throws(FixtureError) -> Data {
            try FixtureBytes.parse(try object.required("value", example: #"{"hex": "01"}"#))
        }
        func values(_ node: FixtureJSON) throws(FixtureError) -> [Data] {
            let example = #"[{"hex": "01"}, {"hex": "02"}]"#
            guard let items = node.elements else {
                throw FixtureError.wrongType(node, expected: "an array of byte values", example: example)
            }
            guard !items.isEmpty else {
                throw FixtureError.wrongType(node, expected: "at least one byte value", example: example)
            }
            if let single = object["value"] {
                throw FixtureError(
                    .unknownField("value"), at: single, message: "a step takes \"value\" or \"values\", not both",
                    fix: "move \"value\" into \"values\"")
            }
            var result: [Data] = []
            for item in items { result.append(try FixtureBytes.parse(item)) }
            return result
        }
        func descriptor() throws(FixtureError) -> BluetoothUUID {
            try FixtureObject.uuid(try object.required("descriptor", example: "\"2901\""))
        }
        func duration(_ key: String) throws(FixtureError) -> Duration? {
            try object[key].map { node throws(FixtureError) in try FixtureDuration.parseWait(node, field: key) }
        }
        switch op {
        case "powerOn":
            return .powerOn(try role())
        case "setState":
            let node = try object.required("state", example: "\"poweredOff\"")
            return .setState(
                try Scenario.choice(node, among: ManagerState.allCases, named: \.description, what: "state"), try role()
            )
        case "scan":
            return .scan(
                services: try object.uuids("services"), allowDuplicates: try object.bool("allowDuplicates") ?? false,
                solicited: try object.uuids("solicited") ?? [], duration: try duration("for"))
        case "stopScan":
            return .stopScan
        case "connect":
            let timeout = try duration("timeout")
            if let timeout, timeout <= .zero, let node = object["timeout"] {
                throw FixtureError(
                    .valueOutOfRange, at: node, message: "a connect timeout must be above zero",
                    fix:
                        "give a timeout such as \"5s\", or leave it out to wait up to 30 s (a connect not done by then is "
                        + "cancelled)")
            }
            return .connect(timeout: timeout)
        case "discover":
            return .discover
        case "read":
            let reference = try characteristic()
            return try object.bool("long") == false ? .readOnce(reference) : .read(reference)
        case "readDescriptor":
            return .readDescriptor(try characteristic(), descriptor: try descriptor())
        case "writeDescriptor":
            return .writeDescriptor(try characteristic(), descriptor: try descriptor(), value: try value())
        case "setMTU":
            let mtu = try FixtureObject.integer(
                try object.required("mtu", example: "185"), what: "mtu", in: PeripheralProfile.preferredMTURange,
                hint: "ATT_MTU is 23…517")
            return .setMTU(mtu, try role())
        case "write":
            let reference = try characteristic()
            let withResponse = try object.bool("withResponse") ?? true
            if let node = object["values"] {
                guard !withResponse else {
                    throw FixtureError(
                        .unknownField("values"), at: node,
                        message: "a write with response sends one value: \"values\" is for writes without response",
                        fix: "add \"withResponse\": false, or write one \"value\" per step")
                }
                return .writeWithoutResponseBurst(reference, values: try values(node))
            }
            return .write(reference, value: try value(), withResponse: withResponse)
        case "subscribe":
            let reference = try characteristic()
            return try object.bool("indicate") == true ? .subscribeToIndications(reference) : .subscribe(reference)
        case "unsubscribe":
            return .unsubscribe(try characteristic())
        case "notify":
            let reference = try characteristic()
            if let node = object["values"] { return .notifyBurst(reference, values: try values(node)) }
            return .notify(reference, value: try value())
        case "indicate":
            return .indicate(try characteristic(), value: try value())
        case "readRequest":
            let reference = try characteristic()
            return .readRequest(reference, offset: try object["offset"].map(readOffset) ?? 0)
        case "readRSSI":
            return .readRSSI
        case "advance":
            if let node = object["to"] {
                if let by = object["by"] {
                    throw FixtureError(
                        .unknownField("by"), at: by, message: "an advance step takes \"by\" or \"to\", not both",
                        fix: "remove \"by\"")
                }
                let origin = try Scenario.choice(
                    try object.required("from", example: "\"connect\""), among: AdvanceOrigin.self, what: "origin")
                return .advanceTo(try FixtureDuration.parseWait(node, field: "to"), from: origin)
            }
            if let from = object["from"] {
                throw FixtureError(
                    .unknownField("from"), at: from, message: "\"from\" goes with \"to\"", fix: "remove \"from\"")
            }
            return .advance(try FixtureDuration.parseWait(try object.required("by", example: "\"1s\""), field: "by"))
        case "inject":
            return .inject(try injection(object, resolver: resolver))
        case "fault":
            let kind = try Scenario.choice(
                try object.required("kind", example: "\"disconnect\""), among: FaultKind.self, what: "fault kind")
            var error: CoreBluetoothError.Code?
            if let node = object["error"] {
                // The shared format allows `error` on each of its kinds; only a disconnect uses it
                // (a reset or going out of range ends the link with connectionTimeout after the
                // supervision timeout, as a device sees it; powering off ends no link with an
                // error). On the others it is checked and has no effect.
                guard kind != .inRange else {
                    throw FixtureError(
                        .unknownField("error"), at: node, message: "an inRange fault has no error",
                        fix: "remove \"error\"")
                }
                let code = try cbCode(node)
                if kind == .disconnect { error = code }
            }
            if let node = object["role"], kind != .powerOff {
                throw FixtureError(
                    .unknownField("role"), at: node, message: "a \(kind.rawValue) fault acts on the peripheral's link",
                    fix: "remove \"role\"; only a powerOff fault takes one")
            }
            return .fault(kind, role: try role(), error: error)
        case "disconnect":
            let side = try object["by"].map { node throws(FixtureError) in
                try Scenario.choice(node, among: Role.self, what: "side")
            }
            return .disconnect(by: side ?? .central)
        case "setValue":
            let reference = try characteristic()
            let node = try object.required("value", example: #"{"hex": "01"}"#)
            return .setValue(reference, value: try PeripheralProfile.attributeValue(node))
        default:
            throw FixtureError(.unknownOp(op), at: object.node, message: "unknown op \"\(op)\"", fix: "")
        }
    }

    private static func injection(_ object: FixtureObject, resolver: CharacteristicResolver) throws(FixtureError)
        -> Injection
    {
        let targetNode = try object.required("target", example: "\"read\"")
        // No op opens or publishes an L2CAP channel, so an injection into either could never fire.
        if let name = targetNode.string, ErrorInjection.Operation(rawValue: name)?.isL2CAP == true {
            throw FixtureError(
                .unknownValue(name), at: targetNode,
                message: "an inject step cannot target \"\(name)\": no scenario op opens or publishes an L2CAP "
                    + "channel, so it would never fire",
                fix: "inject L2CAP failures from Swift (ErrorInjection(.\(name), …)), or target an operation "
                    + "a scenario runs")
        }
        let target = try Scenario.choice(
            targetNode, among: ErrorInjection.Operation.allCases.filter { !$0.isL2CAP }, named: \.rawValue,
            what: "target")
        let characteristic = try object["char"].map { node throws(FixtureError) in try resolver.resolve(node) }
        if let node = object["char"], !target.isMadeOnACharacteristic {
            throw FixtureError(
                .unknownField("char"), at: node,
                message: "an inject step of target \"\(target.rawValue)\" cannot aim at a characteristic: the "
                    + "operation is not made on one, so it would never fire",
                fix: "remove \"char\" (a characteristic aims descriptorDiscovery, read, write, subscribe and "
                    + "updateValue)")
        }
        var failures: [(field: String, node: FixtureJSON, failure: ErrorInjection.Failure)] = []
        if let node = object["attError"] { failures.append(("attError", node, .att(try attCode(node)))) }
        if let node = object["cbError"] { failures.append(("cbError", node, .coreBluetooth(try cbCode(node)))) }
        if let node = object["neverAnswers"] {
            guard node.bool == true else {
                throw FixtureError.wrongType(node, expected: "true", example: "\"neverAnswers\": true")
            }
            failures.append(("neverAnswers", node, .neverAnswers))
        }
        guard failures.count == 1, let (field, node, failure) = failures.first else {
            throw FixtureError(
                failures.isEmpty ? .missingField("attError") : .unknownField("cbError"), at: object.node,
                message: failures.isEmpty ? "an inject step needs a failure" : "an inject step takes one failure",
                fix: "give exactly one of \"attError\": 3, \"cbError\": 7 or \"neverAnswers\": true")
        }
        // A failure the target can never have (the bridge would refuse the injection, and every
        // call after it) is refused here, where the file can say where.
        if case .att = failure, !target.isATTRequest {
            throw FixtureError(
                .unknownField(field), at: node,
                message: "an inject step of target \"\(target.rawValue)\" cannot fail with an ATT error: "
                    + "no ATT response answers it",
                fix: "use \"cbError\" for this target, or an ATT request target (\"serviceDiscovery\", "
                    + "\"characteristicDiscovery\", \"descriptorDiscovery\", \"read\", \"write\", \"subscribe\")")
        }
        if case .neverAnswers = failure, ErrorInjection(target, failure: failure).isPeripheralOperation {
            throw FixtureError(
                .unknownField(field), at: node,
                message: "an inject step of target \"\(target.rawValue)\" cannot use \"neverAnswers\": "
                    + "the peripheral's operation waits for no answer from a peer",
                fix: "use \"cbError\" for this target")
        }
        let times = try object.integer("times", in: 1...1_000_000) ?? 1
        return Injection(target: target, characteristic: characteristic, failure: failure, times: times)
    }

    /// A `readRequest` offset: any integer from 0, as the shared format allows (past the value's
    /// end the read is answered with ATT 0x07). It is sent as a Read Blob Request's 16-bit
    /// offset, so one above 65535 (past every value; even one too large for `Int`) goes as 65535.
    static func readOffset(_ node: FixtureJSON) throws(FixtureError) -> Int {
        let fix = "use an offset of 0 or more"
        if let offset = node.integer {
            guard offset >= 0 else {
                throw FixtureError(
                    .valueOutOfRange, at: node, message: "offset \(offset) is out of range", fix: fix)
            }
            return min(offset, maximumReadOffset)
        }
        guard case .number(let text) = node.value else {
            throw FixtureError.wrongType(node, expected: "an integer", example: "an offset of 0 or more")
        }
        guard let double = Double(text), double.rounded() == double else {
            throw FixtureError(
                .wrongType(expected: "an integer"), at: node, message: "expected an integer, found \(text)",
                fix: "write a whole number: " + fix)
        }
        guard double >= 0 else {
            throw FixtureError(.valueOutOfRange, at: node, message: "offset \(text) is out of range", fix: fix)
        }
        return maximumReadOffset
    }

    /// An ATT error code: a number 1…255 or a name such as `"writeNotPermitted"`.
    static func attCode(_ node: FixtureJSON) throws(FixtureError) -> ATTError.Code {
        if let name = node.string {
            guard let code = ATTError.Code(name: name), code != .success else {
                throw FixtureError(
                    .unknownValue(name), at: node, message: "unknown ATT error \"\(name)\"",
                    fix: "write a code 1…255 or a name such as \"writeNotPermitted\"")
            }
            return code
        }
        return ATTError.Code(rawValue: UInt8(try FixtureObject.integer(node, what: "attError", in: 1...255)))
    }

    /// A CoreBluetooth error code: a number 0…18 or a name such as `"connectionTimeout"`.
    static func cbCode(_ node: FixtureJSON) throws(FixtureError) -> CoreBluetoothError.Code {
        if let name = node.string {
            guard let code = CoreBluetoothError.Code(name: name) else {
                throw FixtureError(
                    .unknownValue(name), at: node, message: "unknown CoreBluetooth error \"\(name)\"",
                    fix: FixtureError.choice(for: name, among: CoreBluetoothError.Code.allCases.map(\.description)))
            }
            return code
        }
        let range = 0...(CoreBluetoothError.Code.allCases.map(\.rawValue).max() ?? 0)
        let raw = try FixtureObject.integer(node, what: "error", in: range)
        guard let code = CoreBluetoothError.Code(rawValue: raw) else {
            throw FixtureError.outOfRange(node, what: "error", value: "\(raw)", range: "\(range)")
        }
        return code
    }
}
