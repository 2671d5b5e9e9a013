import BLECBM
import BLECore
import BLEMockKit
import Foundation
import Testing

/// A peripheral app that answers its reads from another queue than its delegate's, as apps do
/// when the value must be fetched first: on a device it has ATT's 30 s, so in a run the answer
/// comes at the request's instant, whichever thread gets there first, and the same seed gives
/// the same log.
@Suite("Peripheral apps answering from other queues", .timeLimit(.minutes(10)))
struct AnswersFromOtherQueuesTests {
    /// How the app answers a read.
    enum Answer: Sendable, CustomStringConvertible {
        /// From a global queue at once.
        case elsewhere
        /// From a global queue after this much wall time.
        case elsewhereAfter(milliseconds: Int)
        /// Never.
        case never

        var description: String {
            switch self {
            case .elsewhere: "from a global queue"
            case .elsewhereAfter(let milliseconds): "from a global queue after \(milliseconds) ms"
            case .never: "never"
            }
        }
    }

    /// A run on a new bridge: the app on its own queue, a central of the async API that reads the
    /// app's characteristic; the read's outcome and the bridge's log.
    ///
    /// The default patience is long: it is the wall time the run holds the request's instant for
    /// an answer still owed, and the answer's queue, 50 ms off on a quiet machine, came over a
    /// second late in full parallel runs on a loaded two-core machine (the read then met ATT's
    /// timeout). It costs nothing when the answer comes.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func read(
        realistic: Bool, seed: UInt64, answer: Answer, stallPatience: Duration = .seconds(20)
    ) async throws -> (Result<Data, any Error>, [String]) {
        let bridge = MockBLEBridge(configuration: realistic ? .realistic(seed: seed) : .init(seed: seed))
        let central = MockCentralManager(configuration: realistic ? .realistic(seed: seed) : .fast, bridge: bridge)
        return try await bridge.run(stallPatience: stallPatience) { () -> (Result<Data, any Error>, [String]) in
            let app = FetchingPeripheral(answer: answer)
            app.start(on: bridge)
            try await bridge.waitForApp { app.isAdvertising }
            let peripheral = try await central.connectToFirst(advertising: FetchingPeripheral.service)
            let characteristic = try await central.characteristic("FFB1", of: peripheral)
            let result: Result<Data, any Error>
            do {
                result = .success(try await central.readValue(for: characteristic))
            } catch {
                result = .failure(error)
            }
            // (The log as the read left it: the app's manager leaves the air once released,
            // which the queue that answered may delay.)
            let log = await bridge.log.map(\.description)
            withExtendedLifetime(app) {}
            return (result, log)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test(
        "A read answered from another queue is answered at once, with the same log on every run",
        arguments: [false, true], [Answer.elsewhere, .elsewhereAfter(milliseconds: 50)])
    func answeredFromAnotherQueue(realistic: Bool, answer: Answer) async throws {
        let (first, log) = try await Self.read(realistic: realistic, seed: 3, answer: answer)
        #expect(try first.get() == Data([0x2A]))
        // No ATT transaction timeout: the read took what a read takes.
        #expect(!log.contains { $0.contains("timeout") })
        for _ in 0..<(realistic ? 12 : 20) {
            let (again, rerun) = try await Self.read(realistic: realistic, seed: 3, answer: answer)
            #expect(try again.get() == Data([0x2A]))
            #expect(rerun == log)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test("A read the app never answers still ends with ATT's transaction timeout", arguments: [false, true])
    func neverAnswered(realistic: Bool) async throws {
        let (outcome, log) = try await Self.read(
            realistic: realistic, seed: 4, answer: .never, stallPatience: .milliseconds(100))
        // The link ends 30 s after the request: the read fails with the disconnection.
        #expect(throws: CoreBluetoothError.self) { try outcome.get() }
        #expect(log.contains { $0.contains("ATT transaction timeout") })
    }
}

/// A peripheral app whose one readable characteristic is fetched before it is answered: the
/// answer comes from a global queue (or never).
private final class FetchingPeripheral: NSObject, CBMPeripheralManagerDelegate, @unchecked Sendable {
    // @unchecked Sendable: `manager` and `advertising` are only touched on `queue`, `answer`
    // is immutable; `isAdvertising` reads through the queue.
    static let service = CBMUUID(string: "FFB0")
    private let queue = DispatchQueue(label: "fetching-peripheral")
    private let answer: AnswersFromOtherQueuesTests.Answer
    private var manager: CBMPeripheralManager?
    private var advertising = false

    init(answer: AnswersFromOtherQueuesTests.Answer) {
        self.answer = answer
    }

    /// Creates the manager on the app's queue, on `bridge`.
    func start(on bridge: MockBLEBridge) {
        queue.async { self.manager = CBMPeripheralManager(bridge: bridge, delegate: self, queue: self.queue) }
    }

    var isAdvertising: Bool { queue.sync { advertising } }

    func peripheralManagerDidUpdateState(_ peripheral: CBMPeripheralManager) {
        guard peripheral.state == .poweredOn else { return }
        let characteristic = CBMMutableCharacteristic(
            type: CBMUUID(string: "FFB1"), properties: [.read], value: nil, permissions: [.readable])
        let service = CBMMutableService(type: Self.service, primary: true)
        service.characteristics = [characteristic]
        peripheral.add(service)
        peripheral.startAdvertising([CBMAdvertisementDataServiceUUIDsKey: [Self.service]])
    }

    func peripheralManagerDidStartAdvertising(_ peripheral: CBMPeripheralManager, error: (any Error)?) {
        advertising = error == nil
    }

    func peripheralManager(_ peripheral: CBMPeripheralManager, didReceiveRead request: CBMATTRequest) {
        let respond: @Sendable () -> Void = {
            request.value = Data([0x2A])
            peripheral.respond(to: request, withResult: .success)
        }
        switch answer {
        case .elsewhere: DispatchQueue.global().async(execute: respond)
        case .elsewhereAfter(let milliseconds):
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds), execute: respond)
        case .never: break
        }
    }
}
