import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A run of the simulation drawn as one self-contained HTML page: a picture to look at when
/// a realistic test fails, rather than a log to read.
///
/// The page (``html``) has a header with the run's name, mode and seed, then a timeline with
/// time running down: a lane per central and per peripheral; the steps as marked regions
/// (ok, failed as expected, failed unexpectedly); each ATT exchange as arrows between the
/// lanes labelled with the operation, the bytes and the ATT PDUs it cost; notifications and
/// indications; connections, MTUs, disconnections, state changes, faults and refusals; and
/// beside each lane its transmit queue, marked full from a dropped write or an `updateValue`
/// that returned `false` until the manager was told it had room again. A table of the steps
/// follows.
///
/// Everything comes from the ``log`` (and the ``steps``, for a scenario): the page shows only
/// what the bridge recorded. It is built from CSS and SVG written inline — no scripts, no
/// fonts, images or style sheets fetched from anywhere — and it is deterministic: the same
/// page value gives the same bytes (no dates, no random identifiers). All text is escaped.
///
/// A scenario's trace makes one with ``ScenarioTrace/html(for:)`` (`mockble run FILE --format
/// html`); any test's bridge with ``MockBLEBridge/timelinePage(title:)``:
///
/// ```swift
/// let page = await bridge.timelinePage(title: "backpressure")
/// try page.html.write(to: url, atomically: true, encoding: .utf8)
/// ```
///
/// **Time.** The axis shows virtual time, but not to scale: every log entry has a row of its
/// own (entries at the same instant follow one another), the space between rows grows with
/// the time between them up to a limit, and a longer idle stretch is cut and labelled with
/// its length.
public struct TimelinePage: Sendable, Hashable {
    /// The page's title: the scenario's name, or what the test calls the run.
    public var title: String
    /// A sentence under the title (a scenario's `description`), if any.
    public var subtitle: String?
    /// The mode the run used (`fast` or `realistic`), if known.
    public var mode: String?
    /// The seed the run used, if known.
    public var seed: UInt64?
    /// The managers, in lane order (centrals, then peripherals, are drawn in this order).
    /// A manager the log names that is not listed gets a lane of its own, named by its role.
    public var participants: [Participant]
    /// The steps of a scenario, in order; empty for a plain bridge log.
    public var steps: [Step]
    /// What the bridge logged, in order.
    public var log: [BridgeLogEntry]
    /// Names to show instead of attribute UUIDs (a scenario's characteristic `id`s); the
    /// UUID stays in the tooltip.
    public var attributeNames: [BluetoothUUID: String]
    /// Lines summing the run up under the header, e.g. `all 5 expectations held` or one
    /// line per failed expectation, or why a test failed.
    public var verdict: [String]
    /// Whether the ``verdict`` reports a failure (drawn as such); `nil` decides from the
    /// ``steps``: a failure when one failed unexpectedly or missed its expectation.
    public var verdictIsFailure: Bool?

    /// Creates a page.
    public init(
        title: String, subtitle: String? = nil, mode: String? = nil, seed: UInt64? = nil,
        participants: [Participant] = [], steps: [Step] = [], log: [BridgeLogEntry],
        attributeNames: [BluetoothUUID: String] = [:], verdict: [String] = []
    ) {
        self.title = title
        self.subtitle = subtitle
        self.mode = mode
        self.seed = seed
        self.participants = participants
        self.steps = steps
        self.log = log
        self.attributeNames = attributeNames
        self.verdict = verdict
    }

    /// A central or peripheral manager: one lane of the timeline.
    public struct Participant: Sendable, Hashable {
        /// The manager's identifier, as the log names it.
        public var identifier: UUID
        /// Whether it is a central or a peripheral manager.
        public var role: ScenarioStep.Role
        /// What to call it (a peripheral's name, say); `nil` shows the role.
        public var name: String?

        /// Creates a participant.
        public init(_ identifier: UUID, role: ScenarioStep.Role, name: String? = nil) {
            self.identifier = identifier
            self.role = role
            self.name = name
        }

        /// The first eight hex digits of the identifier, as lanes are headed.
        public var shortIdentifier: String { String(identifier.uuidString.prefix(8)) }
    }

    /// One step of a scenario: a marked region of the timeline.
    public struct Step: Sendable, Hashable {
        /// The step's index in the scenario.
        public var index: Int
        /// The op and what it acts on, e.g. `read loc` (as the text timeline shows it).
        public var label: String
        /// The op alone, e.g. `read`; `fault` and `inject` steps are drawn as such.
        public var op: String
        /// When the step began.
        public var started: Duration
        /// When it completed.
        public var ended: Duration
        /// How it ended against its `expect`.
        public var outcome: ScenarioTrace.Outcome
        /// What it produced, briefly (error, value, received, MTU, ATT PDUs…).
        public var details: String
        /// Why its expectation did not hold, one message per field; empty when it held or
        /// there was none.
        public var mismatches: [String]
        /// The positions in ``TimelinePage/log`` of the entries logged while it ran; `nil`
        /// puts none in it.
        public var logRange: Range<Int>?

        /// Creates a step.
        public init(
            index: Int, label: String, op: String, started: Duration, ended: Duration,
            outcome: ScenarioTrace.Outcome, details: String = "", mismatches: [String] = [],
            logRange: Range<Int>? = nil
        ) {
            self.index = index
            self.label = label
            self.op = op
            self.started = started
            self.ended = ended
            self.outcome = outcome
            self.details = details
            self.mismatches = mismatches
            self.logRange = logRange
        }
    }

    /// The page: one HTML document with its CSS and SVG inline.
    public var html: String {
        let lanes = Lanes(participants: participants, log: log)
        let rows = Row.rows(log: log, steps: steps, lanes: lanes, names: attributeNames)
        let layout = Layout(rows: rows, laneCount: lanes.all.count)
        var page = HTMLWriter()
        page.document(title: "\(title) — timeline", style: Self.style) { page in
            header(into: &page, rows: rows)
            page.open("main")
            drawTimeline(into: &page, rows: rows, lanes: lanes, layout: layout)
            page.close("main")
            if !steps.isEmpty { stepTable(into: &page) }
        }
        return page.text
    }
}
