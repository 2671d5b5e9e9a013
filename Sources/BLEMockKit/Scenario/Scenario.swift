import BLECore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A scripted conversation between one central and one simulated peripheral (the
/// "Scenario" of `Fixtures/README.md`): which device, which mode and seed, and the steps to
/// run, each with an optional expectation.
///
/// Load one with ``load(contentsOf:overrides:)`` or ``init(json:file:baseDirectory:overrides:)``
/// (a bundled one with ``bundled(_:)``), run it with ``ScenarioRunner``, and print its
/// ``ScenarioTrace`` as text, JSON lines or a Mermaid diagram — which is what `mockble run`
/// does.
public struct Scenario: Sendable, Hashable {
    /// The fields a scenario object may have.
    public static let fields = [
        "name", "description", "seed", "mode", "central", "link", "peripheral", "plan", "steps",
    ]

    /// How the bridge simulates the air.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Nothing takes time; every draw is still seeded.
        case fast
        /// Realistic timing, MTU, queues and state transitions, all seeded.
        case realistic
    }

    /// The scenario's name (the file name without `.json` when absent).
    public var name: String
    /// What the scenario shows, if given.
    public var description: String?
    /// The seed of every random draw; required in realistic mode. `nil` runs fast mode with 0.
    public var seed: UInt64?
    /// The mode. Defaults to ``Mode/fast``.
    public var mode: Mode
    /// The central's preferred ATT_MTU (`central.preferredMTU`, clamped to 23…517 when read),
    /// fixing its side of the negotiation when given.
    public var centralPreferredMTU: Int?
    /// The connection interval realistic timing uses (`link.connectionInterval`), when given.
    public var connectionInterval: Duration?
    /// The central's link profile (`link.centralProfile`, a named profile such as
    /// `"iPhoneiOS10"`; realistic mode only), when given: ``LinkTiming/centralProfile``.
    public var centralProfile: LinkProfile?
    /// The peripheral's link profile (`link.peripheralProfile`, e.g. `"watch"`; realistic mode
    /// only), when given: ``LinkTiming/peripheralProfile``.
    public var peripheralProfile: LinkProfile?
    /// How the central pairs (`central.pairing`), when given; otherwise the mode's preset
    /// (never in fast mode, on first access in realistic mode).
    public var centralPairing: PairingBehavior?
    /// The simulated peripheral.
    public var peripheral: PeripheralProfile
    /// The profile's path as written in the scenario, when it named a file.
    public var peripheralPath: String?
    /// The steps, in order.
    public var steps: [ScenarioStep]
    /// The link conditions and timed faults of an exploration run (`plan`, realistic mode
    /// only), when given: what `mockble explore` prints to replay a failure it found.
    public var plan: ExplorationPlan?

    /// Creates a scenario.
    public init(
        name: String, description: String? = nil, seed: UInt64? = nil, mode: Mode = .fast,
        centralPreferredMTU: Int? = nil, connectionInterval: Duration? = nil, centralPairing: PairingBehavior? = nil,
        peripheral: PeripheralProfile, peripheralPath: String? = nil, steps: [ScenarioStep]
    ) {
        self.centralPairing = centralPairing
        self.name = name
        self.description = description
        self.seed = seed
        self.mode = mode
        self.centralPreferredMTU = centralPreferredMTU
        self.connectionInterval = connectionInterval
        self.peripheral = peripheral
        self.peripheralPath = peripheralPath
        self.steps = steps
    }

    /// The connection intervals a scenario may fix (Bluetooth Core Specification, Vol 6,
    /// Part B, 4.5.1: 7.5 ms to 4 s).
    public static let connectionIntervalRange = Duration.microseconds(7_500)...Duration.seconds(4)
}

extension Scenario {
    /// The step whose ``ScenarioStep/index`` is `index`: found where it usually is, at that
    /// position (the steps a file is read into are numbered in order), else by a search. (A
    /// trace's records name their steps by index; looking each up by a search made drawing a
    /// trace of many steps quadratic.)
    func step(indexed index: Int) -> ScenarioStep? {
        if steps.indices.contains(index), steps[index].index == index { return steps[index] }
        return steps.first { $0.index == index }
    }
}
