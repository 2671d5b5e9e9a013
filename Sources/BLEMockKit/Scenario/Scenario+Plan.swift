import BLECore

/// A scenario's `plan`: the link conditions and timed faults of an exploration run, so that a
/// failure `mockble explore` found replays with `mockble run`.
///
/// ```json
/// "mode": "realistic", "seed": 17,
/// "plan": {
///   "conditions": {"mtu": 23, "connectionInterval": "30ms", "jitter": "0.001s",
///                  "packetsPerConnectionEvent": 2, "writeWithoutResponseQueue": 3, "updateQueue": 4,
///                  "centralProfile": "iPhoneiOS10"},
///   "faults": [{"at": "1.2s", "kind": "disconnect", "error": "connectionTimeout"},
///              {"at": "2s", "kind": "attError", "operation": "write", "characteristic": "2A39",
///               "attError": "unlikelyError"}]
/// }
/// ```
///
/// An injected-error fault's `characteristic` (a UUID) aims it at that characteristic's next
/// `operation`; without one it fails the next `operation` on any.
extension Scenario {
    static let planFields = ["conditions", "faults"]
    static let conditionFields = [
        "mtu", "connectionInterval", "jitter", "packetsPerConnectionEvent", "writeWithoutResponseQueue", "updateQueue",
        "centralProfile",
    ]
    static let faultFields = ["at", "kind", "for", "target", "operation", "characteristic", "attError", "error"]

    /// Reads a `plan` object for a run with `seed`.
    static func plan(_ node: FixtureJSON, seed: UInt64) throws(FixtureError) -> ExplorationPlan {
        let object = try FixtureObject(node, fields: planFields, example: #"{"conditions": {"mtu": 23}, "faults": []}"#)
        var conditions = LinkConditions.roomy
        if let value = object["conditions"] {
            let fields = try FixtureObject(value, fields: conditionFields, example: #"{"mtu": 23}"#)
            conditions.mtu =
                try fields.integer("mtu", in: MTUMode.validRange, hint: "ATT_MTU is 23…517") ?? conditions.mtu
            if let node = fields["connectionInterval"] {
                let interval = try FixtureDuration.parse(node)
                guard connectionIntervalRange.contains(interval) else {
                    throw FixtureError.outOfRange(
                        node, what: "connectionInterval", value: FixtureDuration.string(interval), range: "7.5ms…4s",
                        hint: "the Bluetooth connection interval range")
                }
                conditions.connectionInterval = interval
            }
            if let node = fields["jitter"] {
                let jitter = try FixtureDuration.parse(node)
                guard jitter >= .zero, jitter <= conditions.connectionInterval else {
                    throw FixtureError.outOfRange(
                        node, what: "jitter", value: FixtureDuration.string(jitter),
                        range: "0s…\(FixtureDuration.string(conditions.connectionInterval))",
                        hint: "at most the connection interval")
                }
                conditions.jitter = jitter
            }
            conditions.packetsPerConnectionEvent =
                try fields.integer("packetsPerConnectionEvent", in: 1...1_000) ?? conditions.packetsPerConnectionEvent
            conditions.writeWithoutResponseQueueCapacity = try fields.integer(
                "writeWithoutResponseQueue", in: 1...100_000, hint: "the queue's capacity in packets")
            conditions.updateQueueCapacity = try fields.integer(
                "updateQueue", in: 1...100_000, hint: "the queue's capacity in packets")
            if let node = fields["centralProfile"] { conditions.centralProfile = try linkProfile(node) }
        }
        var faults: [PlannedFault] = []
        if let value = object["faults"] {
            guard let elements = value.elements else {
                throw FixtureError.wrongType(value, expected: "an array", example: #"[{"at": "1s", "kind": "reset"}]"#)
            }
            for element in elements { faults.append(try fault(element)) }
        }
        return ExplorationPlan(seed: seed, conditions: conditions, faults: faults)
    }

    /// One fault of a plan.
    static func fault(_ node: FixtureJSON) throws(FixtureError) -> PlannedFault {
        let object = try FixtureObject(node, fields: faultFields, example: #"{"at": "1s", "kind": "reset"}"#)
        let at = try FixtureDuration.parseWait(try object.required("at", example: "\"1.2s\""), field: "at")
        let kind = try choice(
            try object.required("kind", example: "\"disconnect\""), among: PlannedFault.Kind.self, what: "fault kind")
        var fault = PlannedFault(kind, at: max(at, .zero))
        if let node = object["for"] { fault.duration = max(try FixtureDuration.parseWait(node, field: "for"), .zero) }
        fault.target = try object.integer("target", in: 0...1_000) ?? 0
        if let node = object["characteristic"] { fault.characteristic = try FixtureObject.uuid(node) }
        if let node = object["operation"] {
            fault.operation = try choice(node, among: ErrorInjection.Operation.self, what: "operation")
        }
        if let node = object["attError"] { fault.attError = try ScenarioStep.attCode(node) }
        if let node = object["error"] { fault.coreBluetoothError = try ScenarioStep.cbCode(node) }
        if kind.isInjection, fault.operation == nil {
            throw FixtureError(
                .missingField("operation"), at: node, message: "\(kind.withArticle) fault needs an operation",
                fix: "add \"operation\": \"read\" (or another operation it fails)")
        }
        // A field the kind never reads is refused, as a fault step refuses one (`target` is
        // taken everywhere: an exploration writes the one it drew for every kind).
        let reads = kind.fieldsRead.map(\.scenarioName)
        for field in PlannedFault.Field.allCases.map(\.scenarioName) where !reads.contains(field) {
            guard let value = object[field] else { continue }
            throw FixtureError(
                .unknownField(field), at: value, message: "\(kind.withArticle) fault does not take \"\(field)\"",
                fix: "remove \"\(field)\""
                    + (reads.isEmpty ? "" : "; it takes \(reads.map { "\"\($0)\"" }.joined(separator: ", "))"))
        }
        // An injection that could never fire in a scenario, or that the bridge would refuse when
        // it fires (and fail every call after it), is refused here, where the file can say where.
        if let injection = fault.injection, let node = object["operation"] {
            let operation = injection.operation.rawValue
            // Aimed at a characteristic, an operation not made on one: the characteristic is what
            // to remove (or the operation to change), so the error points at it.
            if let characteristic = fault.characteristic, let aim = object["characteristic"],
                !injection.operation.isMadeOnACharacteristic, !injection.operation.isL2CAP
            {
                throw FixtureError(
                    .unknownValue(operation), at: aim,
                    message: "\(kind.withArticle) fault on \"\(operation)\" cannot aim at characteristic "
                        + "\(characteristic): \"\(operation)\" is not made on a characteristic, so it would never fire",
                    fix: "remove \"characteristic\", or aim the fault at an operation made on one (\"read\", "
                        + "\"write\", \"subscribe\", \"descriptorDiscovery\")")
            }
            let reason: String? =
                if injection.operation.isL2CAP {
                    "no scenario op opens or publishes an L2CAP channel, so it would never fire"
                } else if injection.problem(inCentral: nil) == nil {
                    nil
                } else if kind == .attError {
                    "no ATT response answers it"
                } else {
                    "a peripheral manager's operation waits for no answer from a peer"
                }
            if let reason {
                throw FixtureError(
                    .unknownValue(operation), at: node,
                    message: "\(kind.withArticle) fault cannot aim at \"\(operation)\": \(reason)",
                    fix: kind == .attError
                        ? "aim it at an ATT request (\"serviceDiscovery\", \"characteristicDiscovery\", "
                            + "\"descriptorDiscovery\", \"read\", \"write\", \"subscribe\")"
                        : "aim it at an operation a central makes in the scenario (\"connect\", \"read\", …)")
            }
        }
        return fault
    }
}

extension ExplorationPlan {
    /// The plan as the part of a scenario that replays it: `mode`, `seed` and `plan`, to put
    /// in the scenario's top-level object (replacing those fields) and run with `mockble run`.
    public var scenarioFragment: String {
        var lines = [
            #""mode": "realistic","#, "\"seed\": \(seed),", #""plan": {"#,
            "  \"conditions\": \(conditions.scenarioValue.json),",
        ]
        if faults.isEmpty {
            lines.append(#"  "faults": []"#)
        } else {
            lines.append(#"  "faults": ["#)
            for (index, fault) in faults.enumerated() {
                lines.append("    \(fault.scenarioValue.json)\(index == faults.count - 1 ? "" : ",")")
            }
            lines.append("  ]")
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    /// The scenario format's `plan` object.
    public var scenarioPlan: TraceValue {
        .object([("conditions", conditions.scenarioValue), ("faults", .array(faults.map(\.scenarioValue)))])
    }
}

extension LinkConditions {
    /// The conditions as a scenario plan's `conditions` object.
    var scenarioValue: TraceValue {
        var fields: [(key: String, value: TraceValue)] = [
            ("mtu", .int(mtu)), ("connectionInterval", .string(FixtureDuration.string(connectionInterval))),
        ]
        if jitter != .zero { fields.append(("jitter", .string(FixtureDuration.string(jitter)))) }
        fields.append(("packetsPerConnectionEvent", .int(packetsPerConnectionEvent)))
        if let writeWithoutResponseQueueCapacity {
            fields.append(("writeWithoutResponseQueue", .int(writeWithoutResponseQueueCapacity)))
        }
        if let updateQueueCapacity { fields.append(("updateQueue", .int(updateQueueCapacity))) }
        // A named phone by its name (a profile of the caller's own has none the format knows).
        if let name = centralProfile?.staticName {
            fields.append(("centralProfile", .string(name)))
        }
        return .object(fields)
    }
}

extension PlannedFault {
    /// The fault as a scenario plan's object.
    var scenarioValue: TraceValue {
        var fields: [(key: String, value: TraceValue)] = [
            ("at", .string(FixtureDuration.string(at))), ("kind", .string(kind.rawValue)),
        ]
        if duration != .zero { fields.append(("for", .string(FixtureDuration.string(duration)))) }
        if target != 0 { fields.append(("target", .int(target))) }
        if let operation { fields.append(("operation", .string(operation.rawValue))) }
        if let characteristic { fields.append(("characteristic", .string(characteristic.description))) }
        if let attError {
            // By name where the name reads back; an application error by its number.
            fields.append(
                (
                    "attError",
                    ATTError.Code(name: attError.name) == attError
                        ? .string(attError.name) : .int(Int(attError.rawValue))
                ))
        }
        if let coreBluetoothError { fields.append(("error", .string("\(coreBluetoothError)"))) }
        return .object(fields)
    }
}
