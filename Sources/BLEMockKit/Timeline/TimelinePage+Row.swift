import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension TimelinePage {
    /// One row of the timeline: a log entry drawn between or on the lanes, or a step that
    /// logged nothing.
    struct Row: Hashable {
        /// How the row is drawn.
        enum Shape: Hashable {
            /// A request from one lane and its answer back (an ATT exchange, a connection).
            case exchange(from: Int, to: Int)
            /// A packet one way (a notification, a write command, an advertisement).
            case message(from: Int, to: Int, dashed: Bool)
            /// A packet or link that did not make it: the arrow ends in a cross.
            case lost(from: Int, to: Int)
            /// Something that happened on one lane.
            case note(Int)
            /// A step that logged nothing.
            case empty
        }

        /// The colour of what the row says.
        enum Tone: String, Hashable {
            case plain, muted, link, error, fault, warning, queue
        }

        /// What the row does to a lane's transmit queue.
        enum QueueMark: Hashable {
            /// A write without response was queued.
            case queued(lane: Int)
            /// The queue was full: a write was dropped, or `updateValue` returned false.
            case full(lane: Int)
            /// The manager was told its queue has room again.
            case ready(lane: Int)
        }

        var time: Duration
        /// The log entry's position, if the row is one.
        var entry: Int?
        /// The position in ``TimelinePage/steps`` of the step the row belongs to, if any.
        var step: Int?
        var shape: Shape
        /// What the arrow or note says (for an exchange, the request).
        var label: String
        /// An exchange's answer.
        var answer: String = ""
        /// The full text, shown when hovering.
        var tooltip: String = ""
        var tone: Tone = .plain
        var queue: QueueMark?
        /// The ATT PDUs the row's label says it cost, if it says.
        var pdus: Int?

        init(time: Duration, entry: Int? = nil, step: Int? = nil, shape: Shape, label: String) {
            self.time = time
            self.entry = entry
            self.step = step
            self.shape = shape
            self.label = label
        }

        /// The height the row takes, in pixels.
        var height: Int {
            switch shape {
            case .exchange: 40
            case .empty: 24
            default: 26
            }
        }
    }
}

extension TimelinePage.Row {
    /// The rows of `log`, in order, each in the step whose ``TimelinePage/Step/logRange``
    /// holds it; a step that logged nothing gets an empty row.
    static func rows(
        log: [BridgeLogEntry], steps: [TimelinePage.Step], lanes: TimelinePage.Lanes,
        names: [BluetoothUUID: String]
    ) -> [Self] {
        var describer = EntryDescriber(lanes: lanes, names: names)
        var rows: [Self] = []
        var cursor = 0
        func emit(_ index: Int, step: Int?) {
            var row = describer.row(for: log[index], at: index)
            row.step = step
            if let step, steps[step].op == "fault", row.tone != .error { row.tone = .fault }
            rows.append(row)
        }
        for (position, step) in steps.enumerated() {
            let range = step.logRange.map { $0.clamped(to: cursor..<max(cursor, log.count)) } ?? cursor..<cursor
            while cursor < range.lowerBound {
                emit(cursor, step: nil)
                cursor += 1
            }
            if range.isEmpty {
                var row = Self(time: step.ended, step: position, shape: .empty, label: "")
                row.tone = step.op == "inject" ? .fault : .muted
                rows.append(row)
            }
            for index in range { emit(index, step: position) }
            cursor = max(cursor, range.upperBound)
        }
        while cursor < log.count {
            emit(cursor, step: nil)
            cursor += 1
        }
        return rows
    }
}

/// Turns log entries into rows, in log order, keeping count of the ATT PDUs each cost.
struct EntryDescriber {
    let lanes: TimelinePage.Lanes
    /// Attribute names by UUID string.
    let names: [String: String]
    /// The PDU count of the entry before.
    private var lastCount = 0
    /// PDUs that crossed since the last row that counted some: an entry that is no ATT
    /// exchange (a pairing, a state change) passes them on to the exchange logged after it.
    private var pending = 0
    /// PDUs of earlier entries that had not crossed when those were logged (a write command
    /// is logged when queued; a subscription when the request arrives, before its answer):
    /// the next PDUs that cross are theirs.
    private var owed = 0

    init(lanes: TimelinePage.Lanes, names: [BluetoothUUID: String]) {
        self.lanes = lanes
        self.names = Dictionary(names.map { ($0.key.description, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    mutating func row(for entry: BridgeLogEntry, at index: Int) -> TimelinePage.Row {
        pending += max(0, entry.attPDUCount - lastCount)
        lastCount = entry.attPDUCount
        let paid = min(owed, pending)
        owed -= paid
        pending -= paid
        var crossed = pending
        let central = lanes.lane(entry.central)
        let peripheral = lanes.lane(entry.peripheral)
        let time: Duration = entry.time - VirtualClock.Instant.zero
        let on = central ?? peripheral ?? 0
        var row = TimelinePage.Row(time: time, entry: index, shape: .note(on), label: entry.kind.rawValue)
        row.tooltip = entry.description
        let failure = entry.error.map(Self.errorText)
        func link(_ shape: (Int, Int) -> TimelinePage.Row.Shape, from: Int?, to: Int?) {
            if let from, let to { row.shape = shape(from, to) }
        }
        func pdus(_ count: Int) -> String {
            row.pdus = count
            return count == 1 ? "1 ATT PDU" : "\(count) ATT PDUs"
        }
        /// An ATT exchange's answer; one that cost no PDU never went on the air, so it is a
        /// note on the central's lane instead of arrows.
        func answer(_ text: String) {
            if crossed == 0, let central {
                row.pdus = 0
                row.shape = .note(central)
                if failure == nil { row.tone = .muted }
                row.label += ": " + text + " (nothing sent)"
            } else {
                row.answer = text + " · " + pdus(crossed)
            }
        }
        let attribute = entry.attribute.map { name($0.description) } ?? ""
        switch entry.kind {
        case .connected:
            link({ .exchange(from: $0, to: $1) }, from: central, to: peripheral)
            row.label = "connect"
            let mtu = entry.detail.flatMap { $0.hasPrefix("mtu=") ? String($0.dropFirst(4)) : nil }
            row.answer = "connected" + (mtu.map { ", ATT_MTU \($0)" } ?? "") + " · " + pdus(crossed)
            row.tone = .link
        case .connectionFailed, .disconnected:
            link({ .lost(from: $0, to: $1) }, from: central, to: peripheral)
            let what = entry.kind == .disconnected ? "disconnected" : "connection failed"
            row.label = what + (failure.map { ": " + $0 } ?? entry.detail.map { ": " + $0 } ?? "")
            row.tone = failure == nil ? .link : .error
        case .discovered:
            link({ .message(from: $1, to: $0, dashed: true) }, from: central, to: peripheral)
            row.label =
                "advertisement" + (entry.detail.map { ", " + $0.replacingOccurrences(of: "=", with: " ") } ?? "")
            row.tone = .muted
        case .servicesDiscovered, .includedServicesDiscovered, .characteristicsDiscovered, .descriptorsDiscovered:
            link({ .exchange(from: $0, to: $1) }, from: central, to: peripheral)
            let noun: String =
                switch entry.kind {
                case .servicesDiscovered: "services"
                case .includedServicesDiscovered: "included services of \(attribute)"
                case .characteristicsDiscovered: "characteristics of \(attribute)"
                default: "descriptors of \(attribute)"
                }
            row.label = "discover " + noun
            let found = (entry.detail ?? "").split(separator: ",").map { name(String($0)) }
            answer(failure ?? (found.isEmpty ? "none" : found.joined(separator: ", ")))
        case .read, .readDescriptor,
            .response where entry.central != nil && entry.detail?.hasPrefix("offset=") == true:
            link({ .exchange(from: $0, to: $1) }, from: central, to: peripheral)
            let noun = entry.kind == .readDescriptor ? "read descriptor" : "read"
            let offset = entry.kind == .response ? " @" + String(entry.detail!.dropFirst(7)) : ""
            row.label = "\(noun) \(attribute)\(offset)"
            answer(failure ?? entry.value.map(Self.bytes) ?? "")
        case .write where entry.writeType == .withoutResponse:
            if entry.error == nil {
                link({ .message(from: $0, to: $1, dashed: false) }, from: central, to: peripheral)
                row.label = "write command \(attribute) " + Self.bytes(entry.value ?? Data()) + " · " + pdus(1)
                owed += 1
                row.queue = central.map { .queued(lane: $0) }
            } else {
                link({ .lost(from: $0, to: $1) }, from: central, to: peripheral)
                let bytes = Self.bytes(entry.value ?? Data())
                row.label =
                    entry.detail?.hasPrefix("dropped") == true
                    ? "write command \(attribute) \(bytes) dropped: queue full"
                    : "write command \(attribute) \(bytes): " + (entry.detail ?? failure ?? "not sent")
                row.tone = .error
                if entry.detail?.hasPrefix("dropped") == true { row.queue = central.map { .full(lane: $0) } }
            }
        case .write, .writeDescriptor:
            link({ .exchange(from: $0, to: $1) }, from: central, to: peripheral)
            let noun = entry.kind == .writeDescriptor ? "write descriptor" : "write"
            row.label = "\(noun) \(attribute) " + Self.bytes(entry.value ?? Data())
            answer(failure ?? "written")
        case .unsubscribe where entry.detail == "disconnected":
            row.shape = .note(peripheral ?? on)
            row.label = "unsubscribed \(attribute): the link went down"
            row.tone = .muted
        case .subscribe, .unsubscribe:
            link({ .exchange(from: $0, to: $1) }, from: central, to: peripheral)
            row.label = "\(entry.kind.rawValue) \(attribute)" + (entry.detail.map { " (\($0))" } ?? "")
            if failure == nil {
                // Logged when the request arrives: its answer crosses after.
                owed += 1
                crossed += 1
            }
            answer(failure ?? "CCCD written")
        case .notification, .indication:
            let noun = entry.kind == .notification ? "notify" : "indicate"
            if central != nil {
                link({ .message(from: $1, to: $0, dashed: false) }, from: central, to: peripheral)
                row.label = "\(noun) \(attribute) " + Self.bytes(entry.value ?? Data()) + " · " + pdus(crossed)
            } else {
                row.label = "updateValue \(attribute) failed" + (failure.map { ": " + $0 } ?? "")
                row.tone = .error
                if entry.detail?.contains("queue full") == true {
                    row.label = "updateValue \(attribute) returned false: transmit queue full"
                    row.queue = peripheral.map { .full(lane: $0) }
                }
            }
        case .rssiRead:
            link({ .exchange(from: $0, to: $1) }, from: central, to: peripheral)
            row.label = "readRSSI"
            row.answer = failure ?? (entry.detail ?? "").replacingOccurrences(of: "rssi=", with: "") + " dBm"
        case .paired:
            link({ .exchange(from: $0, to: $1) }, from: central, to: peripheral)
            row.label = "pairing"
            row.answer = failure ?? "paired"
            row.tone = .link
        case .readyToSendWriteWithoutResponse:
            row.label = "ready to send writes without response"
            row.tone = .queue
            row.queue = central.map { .ready(lane: $0) }
        case .readyToUpdateSubscribers:
            row.shape = .note(peripheral ?? on)
            row.label = "ready to update subscribers"
            row.tone = .queue
            row.queue = peripheral.map { .ready(lane: $0) }
        case .refused:
            row.label = "refused \(entry.detail ?? "")" + (failure.map { ": " + $0 } ?? "")
            row.tone = .error
        case .truncated:
            row.shape = .note(entry.writeType == nil ? (peripheral ?? on) : on)
            row.label = "truncated: " + (entry.detail ?? "")
            row.tone = .warning
        case .stateChanged:
            row.label = Self.state(entry.detail ?? "")
            row.tone = entry.detail.map { $0 == "reset" || $0.hasPrefix("proximity=") } == true ? .fault : .plain
        case .readRequest, .writeRequest, .response:
            row.shape = .note(peripheral ?? on)
            row.label = Self.words(entry.kind) + " \(attribute)" + (entry.detail.map { " " + $0 } ?? "")
            row.tone = .muted
        default:
            if [.advertisingStarted, .advertisingStopped, .serviceAdded, .serviceRemoved].contains(entry.kind) {
                row.shape = .note(peripheral ?? on)
            }
            row.label =
                Self.words(entry.kind) + (entry.attribute == nil ? "" : " \(attribute)")
                + (entry.detail.map { ": " + $0 } ?? "") + (failure.map { " failed: " + $0 } ?? "")
            row.tone = .muted
        }
        if let failure, row.tone != .fault {
            row.tone = .error
            if case .exchange = row.shape, row.answer.isEmpty { row.answer = failure }
        }
        if entry.detail == "injected" { row.label += " (injected)" }
        if row.pdus != nil { pending = 0 }
        return row
    }
}
