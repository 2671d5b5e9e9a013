import BLECore

/// A scenario's `plan`: the link conditions and timed faults of an exploration run, so that a
/// failure `mockble explore` found replays with `mockble run`.
///
/// ```json
/// "mode": "realistic", "seed": 17,
/// "plan": {
///   "conditions": {"mtu": 23, "connectionInterval": "30ms", "jitter": "0.001s",
///                  "packetsPerConnectionEvent": 2, "writeWithoutResponseQueue": 3, "updateQueue": 4},
///   "faults": [{"at": "1.2s", "kind": "disconnect", "error": "connectionTimeout"},
///              {"at": "2s", "kind": "attError", "operation": "read", "attError": "unlikelyError"}]
/// }
/// ```
extension Scenario {
    static let planFields = ["conditions", "faults"]
    static let conditionFields = [
        "mtu", "connectionInterval", "jitter", "packetsPerConnectionEvent", "writeWithoutResponseQueue", "updateQueue",
    ]
    static let faultFields = ["at", "kind", "for", "target", "operation", "attError", "error"]

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
        let at = try FixtureDuration.parse(try object.required("at", example: "\"1.2s\""))
        let kind = try choice(
            try object.required("kind", example: "\"disconnect\""), among: PlannedFault.Kind.self, what: "fault kind")
        var fault = PlannedFault(kind, at: max(at, .zero))
        if let node = object["for"] { fault.duration = max(try FixtureDuration.parse(node), .zero) }
        fault.target = try object.integer("target", in: 0...1_000) ?? 0
        if let node = object["operation"] {
            fault.operation = try choice(node, among: ErrorInjection.Operation.self, what: "operation")
        }
        if let node = object["attError"] { fault.attError = try ScenarioStep.attCode(node) }
        if let node = object["error"] { fault.coreBluetoothError = try ScenarioStep.cbCode(node) }
        if kind.isInjection, fault.operation == nil {
            throw FixtureError(
                .missingField("operation"), at: node, message: "a \(kind.rawValue) fault needs an operation",
                fix: "add \"operation\": \"read\" (or another operation it fails)")
        }
        return fault
    }
}

extension ExplorationPlan {
    /// The plan as the part of a scenario that replays it: `mode`, `seed` and `plan`, to put
    /// in the scenario's top-level object (replacing those fields) and run with `mockble run`.
    public var scenarioFragment: String {
        var lines = [
            "\"mode\": \"realistic\",", "\"seed\": \(seed),", "\"plan\": {", "  \"conditions\": \(conditionsJSON),",
        ]
        if faults.isEmpty {
            lines.append("  \"faults\": []")
        } else {
            lines.append("  \"faults\": [")
            for (index, fault) in faults.enumerated() {
                lines.append("    \(fault.scenarioJSON)\(index == faults.count - 1 ? "" : ",")")
            }
            lines.append("  ]")
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    /// The scenario format's `plan` object on one line.
    public var scenarioPlanJSON: String {
        "{\"conditions\": \(conditionsJSON), \"faults\": [\(faults.map(\.scenarioJSON).joined(separator: ", "))]}"
    }

    /// The `conditions` object on one line.
    private var conditionsJSON: String {
        var fields = ["\"mtu\": \(conditions.mtu)"]
        fields.append("\"connectionInterval\": \"\(FixtureDuration.string(conditions.connectionInterval))\"")
        if conditions.jitter != .zero { fields.append("\"jitter\": \"\(FixtureDuration.string(conditions.jitter))\"") }
        fields.append("\"packetsPerConnectionEvent\": \(conditions.packetsPerConnectionEvent)")
        if let capacity = conditions.writeWithoutResponseQueueCapacity {
            fields.append("\"writeWithoutResponseQueue\": \(capacity)")
        }
        if let capacity = conditions.updateQueueCapacity { fields.append("\"updateQueue\": \(capacity)") }
        return "{\(fields.joined(separator: ", "))}"
    }
}

extension PlannedFault {
    /// The fault as a scenario plan's JSON object, on one line.
    var scenarioJSON: String {
        var fields = ["\"at\": \"\(FixtureDuration.string(at))\"", "\"kind\": \"\(kind.rawValue)\""]
        if duration != .zero { fields.append("\"for\": \"\(FixtureDuration.string(duration))\"") }
        if target != 0 { fields.append("\"target\": \(target)") }
        if let operation { fields.append("\"operation\": \"\(operation.rawValue)\"") }
        if let attError {
            fields.append(
                ATTError.Code(name: attError.name) == attError
                    ? "\"attError\": \"\(attError.name)\"" : "\"attError\": \(attError.rawValue)")
        }
        if let coreBluetoothError { fields.append("\"error\": \"\(coreBluetoothError)\"") }
        return "{\(fields.joined(separator: ", "))}"
    }
}
