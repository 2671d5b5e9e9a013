import BLECore
import Foundation
import Testing

@testable import BLEMockKit

/// A ``World`` driven synchronously, the way ``MockBLEBridge`` drives it: effects are taken
/// after every step and sorted into typed lists, a handler peripheral's questions are answered
/// by the closure its configuration holds, and an operation is served by running the schedule
/// while it is pending and not parked.
///
/// The harness uses only the world's entry points and read-only queries, so tests written
/// against it survive changes to the world's storage.
struct WorldHarness {
    /// An effect, with the virtual time it was performed at.
    struct Happening {
        var time: VirtualClock.Instant
        var effect: Effect
    }

    /// Jitter-free realistic timing: every connection event is exactly 30 ms after the one
    /// before, a connection takes one interval, four packets cross each way per event.
    static let steadyTiming = LinkTiming(
        connectionInterval: .milliseconds(30), jitter: .zero, connectionLatency: .zero ... .zero,
        packetsPerConnectionEvent: 4, supervisionTimeout: .milliseconds(720))

    /// The simulation.
    private(set) var world: World
    /// The request handlers of peripherals configured with `.handler`.
    private var handlers: [UUID: @Sendable (ATTRequest) -> RequestResponse] = [:]
    /// How each operation ended, by id.
    private(set) var completions: [OperationID: Result<Reply, any Error>] = [:]
    /// When each operation ended, by id.
    private(set) var completionTimes: [OperationID: VirtualClock.Instant] = [:]
    /// The events each central received, in order.
    private(set) var centralEvents: [UUID: [CentralEvent]] = [:]
    /// The events each peripheral received, in order.
    private(set) var peripheralEvents: [UUID: [PeripheralEvent]] = [:]
    /// The requests each handler peripheral's closure was asked, in order.
    private(set) var handled: [UUID: [ATTRequest]] = [:]
    /// The requests handed to manual peripherals that need an answer (a read, or the first
    /// request of a write batch), in the order they arrived.
    private(set) var delivered: [UUID: [ATTRequest]] = [:]
    /// Every effect, in the order performed.
    private(set) var timeline: [Happening] = []
    /// The sleepers woken, in order, with the time each woke at.
    private(set) var woken: [(sleeper: SleeperID, time: VirtualClock.Instant)] = []
    private var createdManagers: UInt8 = 0

    /// Creates a world with a seed and timing.
    init(seed: UInt64 = 1, timing: LinkTiming = .instant) {
        world = World(seed: seed, timing: timing)
    }

    // MARK: Managers

    /// Puts a central on the air; returns its identifier.
    mutating func addCentral(_ configuration: MockCentralManager.Configuration = .init()) -> UUID {
        let identifier = makeIdentifier(role: 0xCE)
        mutate { $0.addCentral(identifier, configuration: configuration) }
        // A manager that starts settled reports its state once (`WorldStateTests` checks it);
        // the harness keeps the events after it.
        if centralEvents[identifier]?.first == .stateChanged(world.state(of: .central(identifier))) {
            centralEvents[identifier]!.removeFirst()
        }
        return identifier
    }

    /// Puts a peripheral on the air; returns its identifier. A `.handler` configuration's
    /// closure answers the questions the world asks it.
    mutating func addPeripheral(_ configuration: MockPeripheralManager.Configuration = .init()) -> UUID {
        let identifier = makeIdentifier(role: 0x9E)
        if case .handler(let handler) = configuration.requestHandling { handlers[identifier] = handler }
        mutate { $0.addPeripheral(identifier, configuration: configuration) }
        if peripheralEvents[identifier]?.first == .stateChanged(world.state(of: .peripheral(identifier))) {
            peripheralEvents[identifier]!.removeFirst()
        }
        return identifier
    }

    /// Identifiers that sort in the order managers are created.
    private mutating func makeIdentifier(role: UInt8) -> UUID {
        createdManagers += 1
        return UUID(uuid: (role, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, createdManagers))
    }

    /// Publishes a service.
    mutating func addService(_ service: GATTService, to peripheral: UUID) throws -> LocalService {
        try mutate { try $0.addService(peripheral: peripheral, service: service) }
    }

    mutating func startAdvertising(_ peripheral: UUID, _ advertisement: AdvertisementData) throws {
        try mutate { try $0.startAdvertising(peripheral: peripheral, advertisement: advertisement) }
    }

    mutating func startScan(
        _ central: UUID, services: [BluetoothUUID]? = nil, options: ScanOptions = ScanOptions()
    ) throws {
        try mutate { try $0.startScan(central: central, services: services, options: options) }
    }

    mutating func stopScan(_ central: UUID) {
        mutate { $0.stopScan(central: central) }
    }

    /// Scans until `central` hears `peripheral` (running the schedule), then stops scanning.
    mutating func discover(_ peripheral: UUID, by central: UUID) throws {
        try startScan(central)
        while !hasDiscovered(peripheral, central), world.runNextEvent() { applyEffects() }
        stopScan(central)
    }

    /// Whether `central` received an advertisement of `peripheral`.
    func hasDiscovered(_ peripheral: UUID, _ central: UUID) -> Bool {
        centralEvents(central).contains {
            if case .discovered(let discovery) = $0 { return discovery.identifier == peripheral }
            return false
        }
    }

    // MARK: Operations

    /// Starts an operation and performs what the world decided, without running the schedule.
    @discardableResult
    mutating func start(_ request: World.Request) -> OperationID {
        let id = world.makeOperationID()
        world.start(request, id: id)
        applyEffects()
        return id
    }

    /// Runs the schedule while operation `id` is pending and not parked, as the bridge does.
    mutating func serve(_ id: OperationID) {
        while world.pending[id] != nil, !world.isParked(id), world.runNextEvent() { applyEffects() }
    }

    /// Starts an operation and serves it.
    @discardableResult
    mutating func perform(_ request: World.Request) -> OperationID {
        let id = start(request)
        serve(id)
        return id
    }

    /// Starts an operation and serves it, answering every request a manual `peripheral`
    /// receives at the instant it arrives, until the operation ends or waits for nothing
    /// the peripheral can answer.
    @discardableResult
    mutating func perform(
        _ request: World.Request, answering peripheral: UUID,
        with answer: (ATTRequest) -> RequestResponse = { _ in .success() }
    ) throws -> OperationID {
        let id = start(request)
        try serve(id, answering: peripheral, with: answer)
        return id
    }

    /// Serves an operation, answering every request a manual `peripheral` receives at the
    /// instant it arrives, until the operation ends or waits for nothing the peripheral can
    /// answer.
    mutating func serve(
        _ id: OperationID, answering peripheral: UUID,
        with answer: (ATTRequest) -> RequestResponse = { _ in .success() }
    ) throws {
        serve(id)
        while world.pending[id] != nil, let request = outstandingRequests(of: peripheral).first {
            let response = answer(request)
            try respond(peripheral, to: request, result: response.result, value: response.value)
        }
    }

    /// The requests handed to a manual peripheral that the world still waits for an answer to.
    func outstandingRequests(of peripheral: UUID) -> [ATTRequest] {
        (delivered[peripheral] ?? []).filter { request in
            world.pending.values.contains { $0.stage == .awaitingAnswer(request.id) }
        }
    }

    /// A manual peripheral answers a request (as `respond(to:withResult:value:)`), and the
    /// operations the answer lets go on are served.
    mutating func respond(_ peripheral: UUID, to request: ATTRequest, result: ATTError.Code, value: Data?) throws {
        try mutate { try $0.respond(peripheral: peripheral, to: request, result: result, value: value) }
    }

    /// The caller of an operation gives up.
    mutating func cancel(_ id: OperationID) {
        mutate { $0.cancel(id) }
    }

    /// Runs `body` on the world, performs what it decided, then serves the operations it
    /// unparked (as the bridge's `mutate`).
    @discardableResult
    mutating func mutate<T>(_ body: (inout World) throws -> T) rethrows -> T {
        let parked = world.parkedOperations
        defer {
            applyEffects()
            for id in parked where world.pending[id] != nil && !world.isParked(id) { serve(id) }
        }
        return try body(&world)
    }

    // MARK: Faults and time

    /// Applies a fault now.
    mutating func apply(_ fault: Fault) {
        mutate { $0.apply(fault) }
    }

    /// Schedules a fault at `instant` as given (the bridge clamps past instants to `now`
    /// before it schedules; the world itself never runs time backwards).
    mutating func schedule(_ fault: Fault, at instant: VirtualClock.Instant) {
        world.scheduleFault(fault, at: instant)
    }

    /// A task sleeps on the bridge's clock until `deadline`: its wake-up is scheduled (`nil`:
    /// the deadline has come, nothing is scheduled).
    mutating func sleep(until deadline: VirtualClock.Instant) -> SleeperID? {
        world.sleep(until: deadline)
    }

    /// A sleeper's task is cancelled.
    mutating func cancelSleep(_ id: SleeperID) {
        world.cancelSleep(id)
    }

    /// Runs the next scheduled event; returns whether there was one.
    @discardableResult
    mutating func runNextEvent() -> Bool {
        guard world.runNextEvent() else { return false }
        applyEffects()
        return true
    }

    /// Runs every event due by `instant`, then moves the time there.
    mutating func advance(to instant: VirtualClock.Instant) {
        while world.runNextEvent(dueBy: instant) { applyEffects() }
        world.moveTime(to: instant)
    }

    /// Runs events until none is left (or `maximumEvents` ran); returns whether none is left.
    @discardableResult
    mutating func runUntilIdle(maximumEvents: Int = 10_000) -> Bool {
        var count = 0
        while count < maximumEvents, runNextEvent() { count += 1 }
        return world.nextDeadline == nil
    }

    // MARK: Effects

    private mutating func applyEffects() {
        while !world.effects.isEmpty {
            for effect in world.takeEffects() { perform(effect) }
        }
    }

    private mutating func perform(_ effect: Effect) {
        timeline.append(Happening(time: world.now, effect: effect))
        switch effect {
        case .complete(let id, let result):
            if completions[id] != nil { Issue.record("operation \(id) completed twice") }
            completions[id] = result
            completionTimes[id] = world.now
        case .central(let central, let event):
            centralEvents[central, default: []].append(event)
        case .peripheral(let peripheral, let event):
            peripheralEvents[peripheral, default: []].append(event)
            switch event {
            case .readRequest(let request): delivered[peripheral, default: []].append(request)
            case .writeRequests(let requests): delivered[peripheral, default: []].append(requests[0])
            default: break
            }
        case .ask(let peripheral, let question):
            ask(peripheral, question)
        case .wake(let sleeper):
            woken.append((sleeper, world.now))
        case .channelOpened, .openingAbandoned, .channelData, .channelClosed, .finishEvents, .commandQueue,
            .updateQueue:
            break
        }
    }

    /// Calls a handler peripheral's closure and hands its answer to the world, as the bridge does.
    private mutating func ask(_ peripheral: UUID, _ question: HandlerQuestion) {
        guard let handler = handlers[peripheral] else { return }
        switch question {
        case .read(let request, let id):
            handled[peripheral, default: []].append(request)
            world.answer(id, with: handler(request))
        case .write(let requests, let id):
            // Each request in order until one fails, as CoreBluetooth's single answer to a batch.
            var answer = RequestResponse.success()
            for request in requests {
                handled[peripheral, default: []].append(request)
                let response = handler(request)
                if response.result != .success {
                    answer = response
                    break
                }
            }
            world.answer(id, with: answer)
        case .command(let request):
            handled[peripheral, default: []].append(request)
            _ = handler(request)
        }
    }

    // MARK: Results

    /// The reply of an operation that succeeded.
    func reply(of id: OperationID) -> Reply? {
        if case .success(let reply) = completions[id] { return reply }
        return nil
    }

    /// The services a discovery returned (`nil` for any other outcome).
    func services(of id: OperationID) -> [RemoteService]? {
        if case .success(.services(let services)) = completions[id] { return services }
        return nil
    }

    /// The characteristics a discovery returned (`nil` for any other outcome).
    func characteristics(of id: OperationID) -> [RemoteCharacteristic]? {
        if case .success(.characteristics(let characteristics)) = completions[id] { return characteristics }
        return nil
    }

    /// The descriptors a discovery returned (`nil` for any other outcome).
    func descriptors(of id: OperationID) -> [RemoteDescriptor]? {
        if case .success(.descriptors(let descriptors)) = completions[id] { return descriptors }
        return nil
    }

    /// The error of an operation that failed.
    func error(of id: OperationID) -> (any Error)? {
        if case .failure(let error) = completions[id] { return error }
        return nil
    }

    /// The time since `start` at which an operation ended.
    func elapsed(_ id: OperationID, since start: VirtualClock.Instant) -> Duration? {
        completionTimes[id].map { start.duration(to: $0) }
    }

    func centralEvents(_ central: UUID) -> [CentralEvent] { centralEvents[central] ?? [] }

    func peripheralEvents(_ peripheral: UUID) -> [PeripheralEvent] { peripheralEvents[peripheral] ?? [] }

    /// The log entries of a kind.
    func log(_ kind: BridgeLogEntry.Kind) -> [BridgeLogEntry] { world.log.filter { $0.kind == kind } }
}
