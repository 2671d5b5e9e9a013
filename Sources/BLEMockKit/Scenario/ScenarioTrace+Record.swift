import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension ScenarioTrace {
    /// What one step did: the fields of one line of `--format json`.
    public struct Record: Sendable, Hashable {
        /// Every field a record can have, in the order they are printed.
        public static let fieldNames = [
            "step", "op", "ok", "time", "error", "attError", "value", "stored", "received", "mtu",
            "maxWriteWithoutResponse",
            "maxWriteWithResponse", "attPDUs", "rssi", "state", "discovered", "reason",
        ]

        /// The step's index.
        public var step: Int
        /// The step's op.
        public var op: String
        /// Whether the step succeeded.
        public var ok: Bool
        /// The virtual time when the step completed, since the scenario began.
        public var time: Duration
        /// How it failed, if it did.
        public var error: TraceError?
        /// The bytes read (`read`, `readRequest`).
        public var value: Data?
        /// The value the peripheral holds for the characteristic after a `write` (with or
        /// without response): what the peripheral's side saw arrive.
        public var stored: Data?
        /// The payloads the central received during the step (notifications, indications).
        public var received: [Data]?
        /// The negotiated ATT_MTU, while connected.
        public var mtu: Int?
        /// `maximumWriteValueLength(for:type: .withoutResponse)` (on `connect`).
        public var maxWriteWithoutResponse: Int?
        /// `maximumWriteValueLength(for:type: .withResponse)` (on `connect`).
        public var maxWriteWithResponse: Int?
        /// The ATT PDUs the step cost on the simulated link.
        public var attPDUs: Int?
        /// The RSSI read (`readRSSI`).
        public var rssi: Int?
        /// The manager's state after a `powerOn`, `setState` or power fault.
        public var state: ManagerState?
        /// What `scan` or `discover` found.
        public var discovered: TraceValue?
        /// The disconnection seen during the step: `central`, the error the central saw (null
        /// when it asked for it); `peripheral`, what the peripheral manager was told, which
        /// CoreBluetooth limits to the characteristics its central unsubscribed from.
        public var reason: TraceValue?
        /// The virtual time when the step began, since the scenario began (not printed in
        /// ``json``).
        public var started: Duration?
        /// The positions in ``ScenarioTrace/log`` of the entries the bridge logged while the
        /// step ran (not printed in ``json``).
        public var logRange: Range<Int>?

        /// Creates a record.
        public init(step: Int, op: String, ok: Bool = true, time: Duration = .zero) {
            self.step = step
            self.op = op
            self.ok = ok
            self.time = time
        }

        /// The fields present, in print order.
        public var fields: [(key: String, value: TraceValue)] {
            var fields: [(key: String, value: TraceValue)] = [
                ("step", .int(step)), ("op", .string(op)), ("ok", .bool(ok)),
                ("time", .string(FixtureDuration.string(time))),
            ]
            if let error {
                fields.append(("error", error.value))
                if error.domain == "att" { fields.append(("attError", .int(error.code))) }
            }
            if let value { fields.append(("value", .string(FixtureBytes.hexString(value)))) }
            if let stored { fields.append(("stored", .string(FixtureBytes.hexString(stored)))) }
            if let received {
                fields.append(("received", .array(received.map { .string(FixtureBytes.hexString($0)) })))
            }
            if let mtu { fields.append(("mtu", .int(mtu))) }
            if let maxWriteWithoutResponse { fields.append(("maxWriteWithoutResponse", .int(maxWriteWithoutResponse))) }
            if let maxWriteWithResponse { fields.append(("maxWriteWithResponse", .int(maxWriteWithResponse))) }
            if let attPDUs { fields.append(("attPDUs", .int(attPDUs))) }
            if let rssi { fields.append(("rssi", .int(rssi))) }
            if let state { fields.append(("state", .string(state.description))) }
            if let discovered { fields.append(("discovered", discovered)) }
            if let reason { fields.append(("reason", reason)) }
            return fields
        }

        /// The record as one line of compact JSON.
        public var json: String { TraceValue.object(fields).json }
    }
}
