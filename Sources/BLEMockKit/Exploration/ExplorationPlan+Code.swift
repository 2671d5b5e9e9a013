import BLECore

extension ExplorationPlan {
    /// Swift code that replays this plan: paste it into a test and put the explored body in
    /// the closure.
    ///
    /// ```swift
    /// let plan = ExplorationPlan(
    ///     seed: 17,
    ///     conditions: LinkConditions(mtu: 23, connectionInterval: .milliseconds(30)),
    ///     faults: [
    ///         PlannedFault(.disconnect, at: .milliseconds(1200), coreBluetoothError: .connectionTimeout),
    ///     ])
    /// let outcome = await Exploration.replay(plan) { run in
    ///     // the explored test body
    /// }
    /// ```
    public var swiftCode: String {
        var lines = ["let plan = ExplorationPlan(", "    seed: \(seed),", "    conditions: \(conditions.swiftCode),"]
        if faults.isEmpty {
            lines.append("    faults: [])")
        } else {
            lines.append("    faults: [")
            lines += faults.map { "        \($0.swiftCode)," }
            lines.append("    ])")
        }
        lines.append("let outcome = await Exploration.replay(plan) { run in")
        lines.append("    // the explored test body")
        lines.append("}")
        return lines.joined(separator: "\n")
    }
}

extension LinkConditions {
    /// The Swift expression that makes these conditions, leaving out default arguments.
    var swiftCode: String {
        var arguments = ["mtu: \(mtu)"]
        if connectionInterval != .milliseconds(30) {
            arguments.append("connectionInterval: \(Self.swiftCode(connectionInterval))")
        }
        if jitter != .zero { arguments.append("jitter: \(Self.swiftCode(jitter))") }
        if packetsPerConnectionEvent != 4 {
            arguments.append("packetsPerConnectionEvent: \(packetsPerConnectionEvent)")
        }
        if let writeWithoutResponseQueueCapacity {
            arguments.append("writeWithoutResponseQueueCapacity: \(writeWithoutResponseQueueCapacity)")
        }
        if let updateQueueCapacity { arguments.append("updateQueueCapacity: \(updateQueueCapacity)") }
        if let centralProfile { arguments.append("centralProfile: \(centralProfile.swiftCode)") }
        return "LinkConditions(\(arguments.joined(separator: ", ")))"
    }

    /// A duration as the shortest exact Swift expression: `.zero`, `.seconds(2)`,
    /// `.milliseconds(30)`, `.microseconds(7500)` or `.nanoseconds(…)`.
    static func swiftCode(_ duration: Duration) -> String {
        if duration == .zero { return ".zero" }
        let nanoseconds = SeededGenerator.wholeNanoseconds(in: duration)
        let sign = duration < .zero ? "-" : ""
        let magnitude = duration < .zero ? SeededGenerator.wholeNanoseconds(in: .zero - duration) : nanoseconds
        for (unit, name) in [(UInt64(1_000_000_000), "seconds"), (1_000_000, "milliseconds"), (1_000, "microseconds")]
        where magnitude % unit == 0 {
            return ".\(name)(\(sign)\(magnitude / unit))"
        }
        return ".nanoseconds(\(sign)\(magnitude))"
    }
}

extension LinkProfile {
    /// The Swift expression that makes this profile: a named one's name (`.iPhoneiOS18`),
    /// else the initializer with every field.
    var swiftCode: String {
        if let staticName { return ".\(staticName)" }
        let code = LinkConditions.swiftCode
        let phyList = LinkPHY.allCases.filter(phys.contains).map { ".\($0.rawValue)" }.joined(separator: ", ")
        var arguments = [
            // As a Swift string literal: quotes, backslashes and line breaks in the name escaped
            // (`debugDescription` writes a string as Swift source writes it).
            "name: \(name.debugDescription)",
            "connectionIntervals: \(code(connectionIntervals.lowerBound)) ... \(code(connectionIntervals.upperBound))",
            "connectionIntervalStep: \(code(connectionIntervalStep))",
            "defaultConnectionInterval: \(code(defaultConnectionInterval))",
        ]
        if intervalRequestRule != .firstFit { arguments.append("intervalRequestRule: .\(intervalRequestRule)") }
        if let preferred = preferredConnectionIntervals {
            arguments.append(
                "preferredConnectionIntervals: \(code(preferred.lowerBound)) ... \(code(preferred.upperBound))")
        }
        arguments.append("maximumDataLength: \(maximumDataLength)")
        arguments.append("phys: [\(phyList)]")
        if let packetsPerConnectionEvent { arguments.append("packetsPerConnectionEvent: \(packetsPerConnectionEvent)") }
        arguments.append("attMTU: \(attMTU)")
        return "LinkProfile(\(arguments.joined(separator: ", ")))"
    }
}

extension PlannedFault {
    /// The Swift expression that makes this fault, leaving out default arguments.
    var swiftCode: String {
        var arguments = [".\(kind.rawValue)", "at: \(LinkConditions.swiftCode(at))"]
        if duration != .zero { arguments.append("duration: \(LinkConditions.swiftCode(duration))") }
        if target != 0 { arguments.append("target: \(target)") }
        if let operation { arguments.append("operation: .\(operation.rawValue)") }
        if let characteristic { arguments.append("characteristic: \"\(characteristic)\"") }
        if let attError {
            arguments.append(
                "attError: ATTError.Code(rawValue: 0x\(String(attError.rawValue, radix: 16, uppercase: true)))")
        }
        if let coreBluetoothError { arguments.append("coreBluetoothError: .\(coreBluetoothError)") }
        return "PlannedFault(\(arguments.joined(separator: ", ")))"
    }
}
