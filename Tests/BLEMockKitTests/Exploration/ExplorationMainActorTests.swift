import BLECore
import BLEMockKit
import Foundation
import Testing

/// A body on the main actor, as app code with a view model is: a central finds a watch and
/// connects to it. It fails with the virtual time it connected at when that is after `limit`.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
@MainActor
func connectToWatch(_ run: ExplorationRun, failingAfter limit: Duration = .zero) async throws -> MockCentralManager {
    let watch = MockPeripheralManager()
    try await watch.startAdvertising(AdvertisementData(localName: "Watch"))
    let central = MockCentralManager()
    let events = central.events()
    try await central.scanForPeripherals(withServices: nil)
    for await event in events {
        if case .discovered = event { break }
    }
    await central.stopScan()
    try await central.connect(watch.identifier)
    let now = run.bridge.clock.now
    try Exploration.require(now.offset <= limit, "connected at \(now)")
    return central
}

/// A body on the main actor that sends over an L2CAP channel while a reader of the other end's
/// `incoming` (a `Task {}` on the main actor, or an `async let`) stamps each chunk with the
/// virtual time it read it at; it fails with those stamps, or, given a limit, only when the
/// last chunk was read after it.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
@MainActor
func sendOverL2CAP(_ run: ExplorationRun, readerInAsyncLet: Bool, failingAfter limit: Duration? = nil) async throws {
    let server = MockPeripheralManager()
    let psm = try await server.publishL2CAPChannel(requiresEncryption: false)
    let serverEvents = server.events()
    try await server.startAdvertising(AdvertisementData(localName: "Watch"))
    let central = MockCentralManager()
    let events = central.events()
    try await central.scanForPeripherals(withServices: nil)
    for await event in events {
        if case .discovered = event { break }
    }
    await central.stopScan()
    try await central.connect(server.identifier)
    let channel = try await central.openL2CAPChannel(psm, on: server.identifier)
    var opened: L2CAPChannel?
    for await case .l2capChannelOpened(let end) in serverEvents {
        opened = end
        break
    }
    let serverEnd = try #require(opened)
    let clock = run.bridge.clock
    let total = 4 * 600
    @Sendable func read() async -> [String] {
        var stamps: [String] = []
        var received = 0
        for await chunk in serverEnd.incoming {
            received += chunk.count
            stamps.append("\(chunk.count)@\(clock.now)")
            if received >= total { break }
        }
        return stamps
    }
    let stamps: [String]
    if readerInAsyncLet {
        async let reading = read()
        for _ in 0..<4 { try await channel.send(Data(count: 600)) }
        stamps = await reading
    } else {
        let reading = Task { await read() }
        for _ in 0..<4 { try await channel.send(Data(count: 600)) }
        stamps = await reading.value
    }
    if let limit, clock.now.offset <= limit { return }
    throw ExplorationFailure(stamps.joined(separator: ", "))
}

@Suite("Exploration: a body on the main actor", .timeLimit(.minutes(10)))
struct ExplorationMainActorTests {
    /// A probe's finding: exploring a body on the main actor gave different failing seeds from
    /// one exploration to the next. `Exploration` called it from a nonisolated closure, so each
    /// seed's run did not know its body was on the main actor and moved time without waiting
    /// for the main queue: replays of one plan read an L2CAP channel's last chunk at 0.36 s, or
    /// at 28 s or 39 s.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A run of a body on the main actor waits for the main queue: no replay reads its channel seconds late",
        arguments: [false, true])
    func aMainActorBodyIsWaitedFor(readerInAsyncLet: Bool) async throws {
        let plan = ExplorationPlan.draw(seed: 7, budget: .conditionsOnly, window: .zero ... .seconds(1))
        for _ in 0..<12 {
            // (A parallel test run keeps the main queue busy: patience for it, in wall-clock time.)
            let outcome = await Exploration.replay(plan, stallPatience: .seconds(30)) { @MainActor run in
                try await sendOverL2CAP(run, readerInAsyncLet: readerInAsyncLet, failingAfter: .seconds(5))
            }
            #expect(outcome.error == nil, "\(outcome.error.map { "\($0)" } ?? "")")
        }
    }

    /// Not solved: a body on the main actor still replays differently now and then, by about an
    /// advertising interval or a connection event (a connection at 0.194 s or 0.304 s; the first
    /// chunk of an L2CAP channel read in a `Task {}` or an `async let` at 0.259 s or 0.369 s),
    /// where the same bodies off the main actor replay the same. See the exploration article's
    /// limits.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A body on the main actor fails the same way on every replay of one plan",
        .disabled("open: a body on the main actor still varies from replay to replay by an event"),
        arguments: [nil, false, true])
    func aMainActorBodyReplaysTheSame(l2capReaderInAsyncLet: Bool?) async throws {
        let plan = ExplorationPlan.draw(seed: 7, budget: .conditionsOnly, window: .zero ... .seconds(1))
        var failures: Set<String> = []
        for _ in 0..<12 {
            let outcome = await Exploration.replay(plan) { @MainActor run in
                if let l2capReaderInAsyncLet {
                    try await sendOverL2CAP(run, readerInAsyncLet: l2capReaderInAsyncLet)
                } else {
                    _ = try await connectToWatch(run)
                }
            }
            failures.insert(outcome.error.map { "\($0)" } ?? "passed")
        }
        #expect(failures.count == 1, "\(failures.sorted().joined(separator: "\n"))")
    }
}
